//! The Table Admin API: HBase's schemas as Bigtable's tables and column
//! families (VERSIONS and TTL as garbage-collection rules), and back.

use std::collections::HashMap;

use admin::bigtable_table_admin_client::BigtableTableAdminClient;
use admin::gc_rule::{Rule, Union};
use admin::modify_column_families_request::{Modification, modification::Mod};
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;

use super::auth::Headers;
use super::error::{refuse, unsupported};
use super::metadata::METADATA_TABLE;
use super::{AdminClient, BigtableStore};
use crate::schema::{BloomType, Compression, FamilySchema, TTL_FOREVER, TableSchema};
use crate::store::check::{check_family_change, check_schema, check_table_name};
use crate::store::{FamilyChange, Result, StoreError};

/// `Table.View`'s values we ask for.
const NAME_ONLY: i32 = admin::table::View::NameOnly as i32;
const SCHEMA_VIEW: i32 = admin::table::View::SchemaView as i32;

/// What of a family Bigtable cannot keep, refused by name before anything
/// is sent: every option but VERSIONS and TTL at HBase's defaults. With
/// `ignore_storage_options`, the storage options (compression, bloom
/// filter, block size, caching) are dropped instead, with a warning, as
/// Google's Java HBase adapter drops them (its `IGNORED_OPTION_KEYS`);
/// MIN_VERSIONS is refused either way.
pub(crate) fn check_family_options(table: &str, family: &FamilySchema, ignore_storage_options: bool) -> Result<()> {
    let default = FamilySchema::new(family.name.clone());
    if family.min_versions != 0 {
        return Err(refuse(table, unsupported::MIN_VERSIONS));
    }
    if ignore_storage_options {
        let dropped = family.compression != Compression::None
            || family.bloom != BloomType::Row
            || family.block_size != default.block_size
            || family.in_memory != default.in_memory
            || family.block_cache != default.block_cache;
        if dropped {
            tracing::warn!(
                table = %table,
                family = %family.name,
                "Bigtable keeps no COMPRESSION, BLOOMFILTER, BLOCKSIZE, IN_MEMORY or BLOCKCACHE; dropped (ignore_storage_options)"
            );
        }
        return Ok(());
    }
    if family.compression != Compression::None {
        return Err(refuse(table, unsupported::COMPRESSION));
    }
    if family.bloom != BloomType::Row {
        return Err(refuse(table, unsupported::BLOOM));
    }
    if family.block_size != default.block_size {
        return Err(refuse(table, unsupported::BLOCK_SIZE));
    }
    if family.in_memory != default.in_memory || family.block_cache != default.block_cache {
        return Err(refuse(table, unsupported::CACHING));
    }
    Ok(())
}

/// A family's VERSIONS and TTL as a garbage-collection rule: the newest
/// VERSIONS versions are kept, cells older than TTL are not; both at once
/// are their union (a cell goes when either says so), as the Java adapter
/// maps them.
pub(crate) fn gc_rule(family: &FamilySchema) -> admin::GcRule {
    let versions = admin::GcRule {
        rule: Some(Rule::MaxNumVersions(family.versions.min(i32::MAX as u32) as i32)),
    };
    match family.ttl() {
        None => versions,
        Some(ttl) => {
            let age = admin::GcRule {
                rule: Some(Rule::MaxAge(prost_types::Duration {
                    seconds: ttl.as_secs() as i64,
                    nanos: 0,
                })),
            };
            admin::GcRule {
                rule: Some(Rule::Union(Union {
                    rules: vec![versions, age],
                })),
            }
        }
    }
}

/// A Bigtable family as HBase's: its GC rule read back as VERSIONS and TTL
/// (no rule keeps every version forever: VERSIONS `i32::MAX`, HBase's
/// largest); the other options at HBase's defaults, as Bigtable has none.
pub(crate) fn family_schema(name: &str, family: &admin::ColumnFamily) -> FamilySchema {
    let mut versions = None;
    let mut ttl = None;
    fn walk(rule: &admin::GcRule, versions: &mut Option<u32>, ttl: &mut Option<u32>, name: &str) {
        match &rule.rule {
            Some(Rule::MaxNumVersions(n)) => *versions = Some((*n).max(1) as u32),
            Some(Rule::MaxAge(d)) => {
                let secs = d.seconds + i64::from(d.nanos > 0);
                *ttl = Some(secs.clamp(1, i64::from(TTL_FOREVER)) as u32);
            }
            Some(Rule::Union(u)) => u.rules.iter().for_each(|r| walk(r, versions, ttl, name)),
            Some(Rule::Intersection(_)) => tracing::warn!(
                family = name,
                "an intersection GC rule has no HBase equivalent; the family is described as keeping every version"
            ),
            None => {}
        }
    }
    if let Some(rule) = &family.gc_rule {
        walk(rule, &mut versions, &mut ttl, name);
    }
    FamilySchema::new(name)
        .versions(versions.unwrap_or(i32::MAX as u32))
        .ttl_secs(ttl.unwrap_or(TTL_FOREVER))
}

impl BigtableStore {
    /// A Table Admin API client on the admin channel, putting `headers`
    /// on each call.
    fn admin(&self, headers: &Headers) -> AdminClient {
        BigtableTableAdminClient::with_interceptor(
            super::framing::Checked(self.inner.channels.admin.clone()),
            headers.clone(),
        )
        .max_decoding_message_size(super::MAX_MESSAGE)
    }

    /// An admin call (what `call` makes of a client) within the admin
    /// deadline, access token included; its status as a typed error.
    pub(super) async fn admin_call<T, Fut>(
        &self,
        table: &str,
        operation: &'static str,
        call: impl FnOnce(AdminClient) -> Fut,
    ) -> Result<T>
    where
        Fut: Future<Output = std::result::Result<tonic::Response<T>, tonic::Status>>,
    {
        let (headers, left) = self.admin_headers(table, operation).await?;
        self.deadline(table, operation, left, call(self.admin(&headers))).await
    }

    /// An idempotent admin call (see [`BigtableStore::idempotent`]) within
    /// the admin deadline, access token included.
    async fn admin_read<M: Clone, T, Fut>(
        &self,
        table: &str,
        operation: &'static str,
        message: &M,
        call: impl Fn(AdminClient, tonic::Request<M>) -> Fut,
    ) -> Result<T>
    where
        Fut: Future<Output = std::result::Result<tonic::Response<T>, tonic::Status>>,
    {
        let (headers, left) = self.admin_headers(table, operation).await?;
        self.idempotent(table, operation, left, || {
            call(self.admin(&headers), self.request(message.clone()))
        })
        .await
    }

    pub(super) fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(crate::store::call_timeout(self.inner.config.admin_timeout));
        request
    }

    pub(super) async fn create_table_impl(&self, schema: &TableSchema) -> Result<()> {
        let table = &schema.name;
        check_schema(schema, &self.inner.config.table_prefix)?;
        for family in &schema.families {
            check_family_options(table, family, self.inner.config.ignore_storage_options)?;
        }
        if table == METADATA_TABLE {
            return Err(StoreError::InvalidSchema {
                table: table.clone(),
                reason: format!("`{METADATA_TABLE}` is where BigtableStore keeps table metadata"),
            });
        }
        let column_families: HashMap<String, admin::ColumnFamily> = schema
            .families
            .iter()
            .map(|f| {
                let family = admin::ColumnFamily {
                    gc_rule: Some(gc_rule(f)),
                    ..Default::default()
                };
                (f.name.clone(), family)
            })
            .collect();
        let request = admin::CreateTableRequest {
            parent: self.inner.config.instance_name(),
            table_id: self.wire(table),
            table: Some(admin::Table {
                column_families,
                granularity: admin::table::TimestampGranularity::Millis as i32,
                ..Default::default()
            }),
            initial_splits: schema
                .split_keys
                .iter()
                .map(|key| admin::create_table_request::Split { key: key.clone() })
                .collect(),
        };
        self.inner.schemas.forget(table);
        self.admin_call(table, "CreateTable", |mut admin| async move {
            admin.create_table(self.request(request)).await
        })
        .await?;
        // Bigtable keeps no table attributes: the metadata goes to a table
        // of hmap's. Without it the table is not what was asked for, so it
        // goes again.
        if let Err(e) = self.write_metadata(schema).await {
            tracing::warn!(table = %table, error = %e, "the table's metadata could not be written; deleting the table");
            let name = self.table_name(table);
            let _ = self
                .admin_call(table, "DeleteTable", |mut admin| async move {
                    admin
                        .delete_table(self.request(admin::DeleteTableRequest { name }))
                        .await
                })
                .await;
            return Err(e);
        }
        Ok(())
    }

    pub(super) async fn delete_table_impl(&self, table: &str) -> Result<()> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        self.inner.schemas.forget(table);
        let request = admin::DeleteTableRequest {
            name: self.table_name(table),
        };
        self.admin_call(table, "DeleteTable", |mut admin| async move {
            admin.delete_table(self.request(request)).await
        })
        .await?;
        // The table is gone: a metadata row left behind is replaced when a
        // table of the name is made again, so it is no error of this call.
        if let Err(e) = self.delete_metadata(table).await {
            tracing::warn!(table = %table, error = %e, "the deleted table's metadata row could not be deleted");
        }
        Ok(())
    }

    pub(super) async fn truncate_table_impl(&self, table: &str) -> Result<()> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        let request = admin::DropRowRangeRequest {
            name: self.table_name(table),
            target: Some(admin::drop_row_range_request::Target::DeleteAllDataFromTable(true)),
        };
        self.admin_call(table, "DropRowRange", |mut admin| async move {
            admin.drop_row_range(self.request(request)).await
        })
        .await?;
        Ok(())
    }

    pub(super) async fn alter_table_impl(&self, table: &str, change: &FamilyChange) -> Result<()> {
        self.inner.schemas.forget(table);
        let live = self.describe_table_impl(table).await?;
        check_family_change(&live, change)?;
        let (id, r#mod) = match change {
            FamilyChange::Add(family) | FamilyChange::Modify(family) => {
                check_family_options(table, family, self.inner.config.ignore_storage_options)?;
                let cf = admin::ColumnFamily {
                    gc_rule: Some(gc_rule(family)),
                    ..Default::default()
                };
                let r#mod = if matches!(change, FamilyChange::Add(_)) {
                    Mod::Create(cf)
                } else {
                    Mod::Update(cf)
                };
                (family.name.clone(), r#mod)
            }
            FamilyChange::Delete(name) => (name.clone(), Mod::Drop(true)),
        };
        let request = admin::ModifyColumnFamiliesRequest {
            name: self.table_name(table),
            modifications: vec![Modification {
                id,
                r#mod: Some(r#mod),
                ..Default::default()
            }],
            ..Default::default()
        };
        let result = self
            .admin_call(table, "ModifyColumnFamilies", |mut admin| async move {
                admin.modify_column_families(self.request(request)).await
            })
            .await;
        self.inner.schemas.forget(table);
        result.map(drop)
    }

    pub(super) async fn table_exists_impl(&self, table: &str) -> Result<bool> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        let request = admin::GetTableRequest {
            name: self.table_name(table),
            view: NAME_ONLY,
        };
        match self
            .admin_read(table, "GetTable", &request, |mut admin, request| async move {
                admin.get_table(request).await
            })
            .await
        {
            Ok(_) => Ok(true),
            Err(StoreError::TableNotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(super) async fn list_tables_impl(&self) -> Result<Vec<String>> {
        let mut names = Vec::new();
        let mut page_token = String::new();
        let parent = self.inner.config.instance_name();
        let tables = format!("{parent}/tables/{}", self.inner.config.table_prefix);
        loop {
            let request = admin::ListTablesRequest {
                parent: parent.clone(),
                view: NAME_ONLY,
                page_token: page_token.clone(),
                ..Default::default()
            };
            let reply = self
                .admin_read("", "ListTables", &request, |mut admin, request| async move {
                    admin.list_tables(request).await
                })
                .await?;
            names.extend(
                reply
                    .tables
                    .iter()
                    .filter_map(|t| t.name.strip_prefix(tables.as_str()))
                    .filter(|name| *name != METADATA_TABLE)
                    .map(str::to_string),
            );
            if reply.next_page_token.is_empty() {
                break;
            }
            page_token = reply.next_page_token;
        }
        names.sort();
        Ok(names)
    }

    /// The table's families and its metadata (kept in [`METADATA_TABLE`]).
    pub(super) async fn describe_table_impl(&self, table: &str) -> Result<TableSchema> {
        let mut schema = self.describe_families(table).await?;
        schema.metadata.extend(self.read_metadata(table).await?);
        Ok(schema)
    }

    /// The table's families (what a request is checked against), without
    /// its metadata.
    pub(super) async fn describe_families(&self, table: &str) -> Result<TableSchema> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        let request = admin::GetTableRequest {
            name: self.table_name(table),
            view: SCHEMA_VIEW,
        };
        let reply = self
            .admin_read(table, "GetTable", &request, |mut admin, request| async move {
                admin.get_table(request).await
            })
            .await?;
        let mut families: Vec<FamilySchema> = reply
            .column_families
            .iter()
            .map(|(name, family)| family_schema(name, family))
            .collect();
        families.sort_by(|a, b| a.name.cmp(&b.name));
        let mut schema = TableSchema::new(table);
        schema.families = families;
        Ok(schema)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_ttl_round_trip_as_gc_rules() {
        for family in [
            FamilySchema::new("a"),
            FamilySchema::new("b").versions(5),
            FamilySchema::new("c").versions(3).ttl_secs(3600),
            FamilySchema::new("d").ttl_secs(10),
        ] {
            let cf = admin::ColumnFamily {
                gc_rule: Some(gc_rule(&family)),
                ..Default::default()
            };
            assert_eq!(family_schema(&family.name, &cf), family);
        }
        let both = gc_rule(&FamilySchema::new("c").versions(3).ttl_secs(60));
        assert!(matches!(both.rule, Some(Rule::Union(ref u)) if u.rules.len() == 2));
        let none = admin::ColumnFamily::default();
        assert_eq!(family_schema("x", &none).versions, i32::MAX as u32);
    }

    #[test]
    fn options_bigtable_lacks_are_refused_by_name() {
        let refused = |f: FamilySchema| match check_family_options("t", &f, false) {
            Err(StoreError::Unsupported { feature, .. }) => feature,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refused(FamilySchema::new("f").versions(3).min_versions(1)),
            unsupported::MIN_VERSIONS
        );
        assert_eq!(
            refused(FamilySchema::new("f").compression(Compression::Snappy)),
            unsupported::COMPRESSION
        );
        assert_eq!(
            refused(FamilySchema::new("f").bloom(BloomType::RowCol)),
            unsupported::BLOOM
        );
        assert_eq!(
            refused(FamilySchema::new("f").block_size(4096)),
            unsupported::BLOCK_SIZE
        );
        assert_eq!(refused(FamilySchema::new("f").in_memory(true)), unsupported::CACHING);
        assert!(check_family_options("t", &FamilySchema::new("f").versions(9).ttl_secs(5), false).is_ok());
        // Dropped as the Java adapter drops them, when asked; MIN_VERSIONS never.
        let tuned = FamilySchema::new("f")
            .compression(Compression::Snappy)
            .bloom(BloomType::RowCol)
            .block_size(4096)
            .in_memory(true);
        assert!(check_family_options("t", &tuned, true).is_ok());
        assert!(check_family_options("t", &FamilySchema::new("f").versions(3).min_versions(1), true).is_err());
    }
}
