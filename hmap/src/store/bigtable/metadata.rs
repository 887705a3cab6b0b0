//! Table metadata on Bigtable, whose tables have no attributes: hmap keeps
//! each table's metadata (its key layout, `hmap.key`, and any other
//! key) in a table of its own, [`METADATA_TABLE`] (under the store's
//! prefix), one row per table (its name), family `m`, a column per key.
//! So `Table::check_schema` and the migrations see a table's key layout on
//! Bigtable as on HBase.
//!
//! The row is written after the table is made (a table whose metadata
//! cannot be written is deleted again, and the error returned), replaced
//! whole when a table of the same name is made again, and deleted after
//! the table (a failure there is logged: the table is gone, and the row
//! is replaced when a table of the name is made again). A table made or
//! deleted by another client (Java's HBase adapter, `cbt`) does not touch
//! it: such a table reads with no metadata, or with what an earlier table
//! of its name left (deleting a table through hmap clears it).

use bytes::Bytes;
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;
use v2::Mutation;
use v2::mutation::{DeleteFromRow, SetCell};

use super::BigtableStore;
use crate::schema::TableSchema;
use crate::store::{Result, StoreError};

/// The table hmap keeps table metadata in, under the store's prefix.
/// Not listed by `list_tables`; a table of this name cannot be made.
pub const METADATA_TABLE: &str = "_hmap_metadata";

/// Its one family.
const FAMILY: &str = "m";

impl BigtableStore {
    /// Records `schema`'s metadata as the table's (replacing what an
    /// earlier table of its name left). Nothing is written, nor the
    /// metadata table made, for a table without metadata unless one is
    /// there to clear.
    pub(super) async fn write_metadata(&self, schema: &TableSchema) -> Result<()> {
        let row = Bytes::copy_from_slice(schema.name.as_bytes());
        let mut mutations = vec![Mutation {
            mutation: Some(v2::mutation::Mutation::DeleteFromRow(DeleteFromRow {})),
        }];
        // One time for the row's cells, as a put's: the client's clock.
        let micros = super::data::now_ms().saturating_mul(1000);
        mutations.extend(schema.metadata.iter().map(|(key, value)| Mutation {
            mutation: Some(v2::mutation::Mutation::SetCell(SetCell {
                family_name: FAMILY.to_string(),
                column_qualifier: Bytes::copy_from_slice(key.as_bytes()),
                timestamp_micros: micros,
                value: Bytes::copy_from_slice(value.as_bytes()),
            })),
        }));
        if schema.metadata.is_empty() {
            // Clear a leftover row, if there is a metadata table at all.
            return match self.mutate_metadata_row(row, mutations).await {
                Err(StoreError::TableNotFound { .. }) => Ok(()),
                other => other,
            };
        }
        match self.mutate_metadata_row(row.clone(), mutations.clone()).await {
            Err(StoreError::TableNotFound { .. }) => {
                self.create_metadata_table().await?;
                self.mutate_metadata_row(row, mutations).await
            }
            other => other,
        }
    }

    /// Forgets the table's metadata (after the table is deleted).
    pub(super) async fn delete_metadata(&self, table: &str) -> Result<()> {
        let delete = vec![Mutation {
            mutation: Some(v2::mutation::Mutation::DeleteFromRow(DeleteFromRow {})),
        }];
        match self
            .mutate_metadata_row(Bytes::copy_from_slice(table.as_bytes()), delete)
            .await
        {
            Err(StoreError::TableNotFound { .. }) => Ok(()),
            other => other,
        }
    }

    /// The table's recorded metadata (none without a metadata table).
    pub(super) async fn read_metadata(&self, table: &str) -> Result<Vec<(String, String)>> {
        use futures_util::StreamExt;
        let request = v2::ReadRowsRequest {
            table_name: self.table_name(METADATA_TABLE),
            app_profile_id: self.inner.config.app_profile.clone(),
            rows: Some(v2::RowSet {
                row_keys: vec![Bytes::copy_from_slice(table.as_bytes())],
                row_ranges: Vec::new(),
            }),
            // The newest cell of each column.
            filter: Some(v2::RowFilter {
                filter: Some(v2::row_filter::Filter::CellsPerColumnLimitFilter(1)),
            }),
            ..Default::default()
        };
        let mut rows = match self.read_rows(METADATA_TABLE, request).await {
            Ok(rows) => rows,
            Err(StoreError::TableNotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(renamed(e, table)),
        };
        let mut metadata = Vec::new();
        while let Some(row) = rows.next().await {
            let row = row.map_err(|e| renamed(e, table))?;
            for cell in row.cells.iter().filter(|c| c.family == FAMILY.as_bytes()) {
                let text = |bytes: &Bytes, what: &str| {
                    String::from_utf8(bytes.to_vec()).map_err(|_| StoreError::InvalidSchema {
                        table: table.to_string(),
                        reason: format!("its recorded metadata (in {METADATA_TABLE}) has a {what} that is not UTF-8"),
                    })
                };
                metadata.push((text(&cell.qualifier, "key")?, text(&cell.value, "value")?));
            }
        }
        Ok(metadata)
    }

    /// One `MutateRow` on the metadata table's `row`.
    async fn mutate_metadata_row(&self, row: Bytes, mutations: Vec<Mutation>) -> Result<()> {
        let request = v2::MutateRowRequest {
            table_name: self.table_name(METADATA_TABLE),
            app_profile_id: self.inner.config.app_profile.clone(),
            row_key: row,
            mutations,
            ..Default::default()
        };
        let (headers, left) = self
            .data_headers(
                METADATA_TABLE,
                "MutateRow",
                crate::store::call_timeout(self.inner.config.call_timeout),
            )
            .await?;
        self.idempotent(METADATA_TABLE, "MutateRow", left, || {
            let mut client = self.data(&headers);
            let request = self.data_request(request.clone());
            async move { client.mutate_row(request).await }
        })
        .await
        .map(drop)
    }

    /// Makes the metadata table (one that another store made meanwhile
    /// is as good).
    async fn create_metadata_table(&self) -> Result<()> {
        let family = admin::ColumnFamily {
            gc_rule: Some(admin::GcRule {
                rule: Some(admin::gc_rule::Rule::MaxNumVersions(1)),
            }),
            ..Default::default()
        };
        let request = admin::CreateTableRequest {
            parent: self.inner.config.instance_name(),
            table_id: self.wire(METADATA_TABLE),
            table: Some(admin::Table {
                column_families: [(FAMILY.to_string(), family)].into(),
                granularity: admin::table::TimestampGranularity::Millis as i32,
                ..Default::default()
            }),
            initial_splits: Vec::new(),
        };
        match self
            .admin_call(METADATA_TABLE, "CreateTable", |mut admin| async move {
                admin.create_table(self.request(request)).await
            })
            .await
        {
            Ok(_) | Err(StoreError::TableExists { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// An error of the metadata table's, as one about `table`'s metadata.
fn renamed(error: StoreError, table: &str) -> StoreError {
    match error {
        StoreError::Server { operation, message, .. } => StoreError::Server {
            service: "Bigtable",
            table: table.to_string(),
            operation,
            message: format!("reading its metadata in {METADATA_TABLE}: {message}"),
        },
        other => other,
    }
}
