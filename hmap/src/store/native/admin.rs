//! Admin through the master (`MasterService`): tables created, deleted,
//! truncated, altered, described and listed.
//!
//! The master runs each change as a procedure: the call answers with the
//! procedure's id at once, and the client asks `getProcedureResult` until
//! the procedure has finished, as HBase's Java client does.
//! (`IsProcedureDone` is for procedures named by a `ProcedureDescription`,
//! snapshots and flushes, not for these.) The call, its retries and the
//! wait share one deadline, [`NativeConfig::admin_timeout`](super::NativeConfig::admin_timeout)
//! (or the timeout of the caller's [`CallOptions`](crate::store::CallOptions)).
//!
//! The active master is the one the registry names
//! (`ClientMetaService.GetActiveMaster` on the bootstrap servers, or the
//! `master` znode with a ZooKeeper registry); it is
//! asked for again when the master's connection fails. Every change carries
//! a nonce, so that a call sent again after a broken connection is
//! recognised by the master and answered with the first call's procedure.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;

use super::client::NativeStore;
use super::connection::Service;
use super::error::{ExceptionKind, NativeError, RemoteError};
use super::locate;
use super::proto::{self, get_procedure_result_response::State};
use super::random::random_u64;
use super::retry::{Attempts, Idempotence, Retry, retry_kind};
use super::zookeeper;
use crate::schema::{BloomType, Compression, FamilyOption, FamilySchema, TableSchema};
use crate::store::{FamilyChange, StoreError};

/// The master's default RPC port, for a registry answer without one.
const MASTER_PORT: u32 = 16000;

/// Rows of `hbase:meta` read per call when listing a table's regions.
const META_PAGE: u32 = 1000;

/// A table's name as the protocol carries it.
fn table_name(wire: &str) -> proto::TableName {
    let (namespace, qualifier) = locate::split_table(wire);
    proto::TableName {
        namespace: Bytes::copy_from_slice(namespace.as_bytes()),
        qualifier: Bytes::copy_from_slice(qualifier.as_bytes()),
    }
}

/// A table's name as hmap writes it: `ns:name`, or `name` in the default
/// namespace.
fn show_table_name(name: &proto::TableName) -> String {
    let qualifier = String::from_utf8_lossy(&name.qualifier);
    match &name.namespace[..] {
        b"" | b"default" => qualifier.into_owned(),
        namespace => format!("{}:{qualifier}", String::from_utf8_lossy(namespace)),
    }
}

fn pair(key: &str, value: impl ToString) -> proto::BytesBytesPair {
    proto::BytesBytesPair {
        first: Bytes::copy_from_slice(key.as_bytes()),
        second: Bytes::from(value.to_string()),
    }
}

/// A family's options as the attributes HBase's `ColumnFamilyDescriptor`
/// keeps them in (`VERSIONS` => `"3"`, `BLOOMFILTER` => `"ROW"`, ...), every
/// option hmap models, sent explicitly.
fn family_attributes(f: &FamilySchema) -> Vec<proto::BytesBytesPair> {
    FamilyOption::ALL
        .into_iter()
        .map(|option| {
            let value = match option {
                FamilyOption::Versions => f.versions.to_string(),
                FamilyOption::MinVersions => f.min_versions.to_string(),
                FamilyOption::Ttl => f.ttl_secs.to_string(),
                FamilyOption::BlockSize => f.block_size.to_string(),
                FamilyOption::BlockCache => f.block_cache.to_string(),
                FamilyOption::InMemory => f.in_memory.to_string(),
                FamilyOption::Bloom => f.bloom.as_str().to_string(),
                FamilyOption::Compression => f.compression.as_str().to_string(),
            };
            pair(option.as_str(), value)
        })
        .collect()
}

/// A family's descriptor.
pub(super) fn family_proto(f: &FamilySchema) -> proto::ColumnFamilySchema {
    proto::ColumnFamilySchema {
        name: Bytes::copy_from_slice(f.name.as_bytes()),
        attributes: family_attributes(f),
        configuration: Vec::new(),
    }
}

/// A live family's descriptor with hmap's options replaced by `f`'s; the
/// options hmap does not model (`DATA_BLOCK_ENCODING`, `KEEP_DELETED_CELLS`,
/// ...) and the family's configuration are kept.
pub(super) fn overlay_family(live: &proto::ColumnFamilySchema, f: &FamilySchema) -> proto::ColumnFamilySchema {
    let modelled = |key: &[u8]| FamilyOption::ALL.iter().any(|o| o.as_str().as_bytes() == key);
    let mut attributes: Vec<_> = live
        .attributes
        .iter()
        .filter(|a| !modelled(&a.first))
        .cloned()
        .collect();
    attributes.extend(family_attributes(f));
    proto::ColumnFamilySchema {
        name: live.name.clone(),
        attributes,
        configuration: live.configuration.clone(),
    }
}

/// A table's descriptor, named `wire` on the server.
pub(super) fn table_proto(wire: &str, schema: &TableSchema) -> proto::TableSchema {
    proto::TableSchema {
        table_name: Some(table_name(wire)),
        attributes: schema.metadata.iter().map(|(k, v)| pair(k, v)).collect(),
        column_families: schema.families.iter().map(family_proto).collect(),
        configuration: Vec::new(),
    }
}

/// A family from its descriptor: hmap's options, each from its attribute
/// or HBase's default where there is none. A value that does not parse
/// (none HBase writes) reads as the default; a compression hmap has no
/// name for (`BROTLI`, `LZMA`) reads as `None`, as through Thrift.
pub(super) fn family_from_proto(c: &proto::ColumnFamilySchema) -> FamilySchema {
    let mut f = FamilySchema::new(String::from_utf8_lossy(&c.name).into_owned());
    for attribute in &c.attributes {
        let value = String::from_utf8_lossy(&attribute.second);
        let value = value.trim();
        let number = |default: u32| value.parse::<u32>().unwrap_or(default);
        let flag = |default: bool| match value.to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => default,
        };
        let Some(option) = FamilyOption::ALL
            .into_iter()
            .find(|o| o.as_str().as_bytes() == &attribute.first[..])
        else {
            continue;
        };
        match option {
            FamilyOption::Versions => f.versions = number(f.versions),
            FamilyOption::MinVersions => f.min_versions = number(f.min_versions),
            FamilyOption::Ttl => f.ttl_secs = number(f.ttl_secs),
            FamilyOption::BlockSize => f.block_size = number(f.block_size),
            FamilyOption::BlockCache => f.block_cache = flag(f.block_cache),
            FamilyOption::InMemory => f.in_memory = flag(f.in_memory),
            FamilyOption::Bloom => {
                f.bloom = match value.to_ascii_uppercase().as_str() {
                    "NONE" => BloomType::None,
                    "ROWCOL" => BloomType::RowCol,
                    _ => BloomType::Row,
                }
            }
            FamilyOption::Compression => {
                f.compression = match value.to_ascii_uppercase().as_str() {
                    "GZ" => Compression::Gz,
                    "SNAPPY" => Compression::Snappy,
                    "LZ4" => Compression::Lz4,
                    "LZO" => Compression::Lzo,
                    "ZSTD" => Compression::Zstd,
                    "BZIP2" => Compression::Bzip2,
                    _ => Compression::None,
                }
            }
        }
    }
    f
}

/// A table's schema from its descriptor, named `table` (the caller's
/// name): families sorted by name, every attribute as metadata (HBase's
/// own too, as `ThriftStore` reports them). No split keys: they are the
/// regions'.
pub(super) fn table_from_proto(table: &str, t: &proto::TableSchema) -> TableSchema {
    let mut schema = TableSchema::new(table);
    schema.families = t.column_families.iter().map(family_from_proto).collect();
    schema.families.sort_by(|a, b| a.name.cmp(&b.name));
    schema.metadata = t
        .attributes
        .iter()
        .map(|a| {
            (
                String::from_utf8_lossy(&a.first).into_owned(),
                String::from_utf8_lossy(&a.second).into_owned(),
            )
        })
        .collect::<BTreeMap<_, _>>();
    schema
}

/// The error a failed procedure reports, as the exception it carries.
fn procedure_error(e: &proto::ForeignExceptionMessage) -> NativeError {
    let generic = e.generic_exception.clone().unwrap_or_default();
    let class = generic.class_name.unwrap_or_default();
    let message = generic.message.unwrap_or_default();
    NativeError::Remote(RemoteError::new(class.clone(), format!("{class}: {message}")))
}

/// Whether a master call failed because the table is disabled already.
fn not_enabled(e: &NativeError) -> bool {
    e.remote().is_some_and(|r| r.kind == ExceptionKind::TableNotEnabled)
}

/// A region's encoded name, as `MoveRegion` names it: the MD5 of its full
/// name (table, start key and id), in hex, which names in HBase's newer
/// format carry at their end (`RegionInfo.encodeRegionName`).
fn encoded_region_name(info: &proto::RegionInfo) -> String {
    use md5::Digest;
    let name = full_region_name(info);
    md5::Md5::digest(&name).iter().map(|b| format!("{b:02x}")).collect()
}

/// `<table>,<start key>,<region id>` (a replica adds `_<id in hex>`), the
/// part of a region's name its encoded name is the MD5 of
/// (`RegionInfo.createRegionName`).
fn full_region_name(info: &proto::RegionInfo) -> Vec<u8> {
    let table = show_table_name(&info.table_name);
    let mut name = table.into_bytes();
    name.push(b',');
    name.extend_from_slice(info.start_key.as_deref().unwrap_or_default());
    name.push(b',');
    name.extend_from_slice(info.region_id.to_string().as_bytes());
    if let Some(replica) = info.replica_id.filter(|&r| r > 0) {
        name.extend_from_slice(format!("_{replica:04X}").as_bytes());
    }
    name
}

/// The error of a failed admin call, with the endpoint it failed on.
type Failed = (NativeError, String);

impl NativeStore {
    /// The active master's address, from the cache or the registry.
    async fn active_master(&self, attempts: &Attempts) -> Result<String, Failed> {
        if let Some(master) = self.inner.master.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok(master);
        }
        if let Some(registry) = &self.inner.config.zookeeper {
            let master = zookeeper::active_master(registry, attempts.deadline())
                .await
                .map_err(|e| {
                    let endpoint = e.server().to_string();
                    (NativeError::from(e), endpoint)
                })?;
            *self.inner.master.lock().unwrap_or_else(|e| e.into_inner()) = Some(master.clone());
            return Ok(master);
        }
        let left = attempts
            .remaining("the registry", "GetActiveMaster")
            .map_err(|e| (e, String::new()))?;
        let server = self
            .ask_bootstrap("GetActiveMaster", left, |connection, left| async move {
                connection
                    .call::<proto::GetActiveMasterResponse>("GetActiveMaster", &proto::GetActiveMasterRequest {}, left)
                    .await
                    .and_then(|r| {
                        r.message.server_name.ok_or_else(|| NativeError::InvalidReply {
                            reason: "the registry knows no active master".to_string(),
                        })
                    })
            })
            .await
            .map_err(|e| (e, String::new()))?;
        let master = format!("{}:{}", server.host_name, server.port.unwrap_or(MASTER_PORT));
        *self.inner.master.lock().unwrap_or_else(|e| e.into_inner()) = Some(master.clone());
        Ok(master)
    }

    fn forget_master(&self) {
        *self.inner.master.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Calls `method` on the active master, within `attempts`' deadline:
    /// a master that cannot be reached or is no longer active is looked up
    /// again, one that is initialising is backed off from.
    async fn master_call<Resp: super::bound::Reply>(
        &self,
        method: &'static str,
        request: &impl Message,
        attempts: &mut Attempts,
    ) -> Result<Resp, Failed> {
        loop {
            let master = match self.active_master(attempts).await {
                Ok(master) => master,
                // No registry server answered, or none knows an active
                // master yet (a failover under way): ask again after a pause.
                Err((
                    e @ (NativeError::Bootstrap { .. } | NativeError::ZooKeeper(_) | NativeError::InvalidReply { .. }),
                    endpoint,
                )) => {
                    attempts.waiting_for(|| "the registry to name an active master".to_string());
                    attempts
                        .back_off(e, &Retry::ServerGone, &endpoint, method)
                        .await
                        .map_err(|e| (e, endpoint))?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let left = attempts.remaining(&master, method).map_err(|e| (e, master.clone()))?;
            let error = match self
                .connection(&master, Service::Master)
                .call::<Resp>(method, request, left)
                .await
            {
                Ok(reply) => return Ok(reply.message),
                Err(e) => e,
            };
            // A master gone, or not (or no longer) the active one: ask the
            // registry again. A backup master answers its calls with
            // `PleaseHoldException` (it never finishes initialising while it
            // waits), so the registry is asked again on that too. Admin
            // calls carry nonces: a repeat is recognised.
            let retry = match retry_kind(&error, Idempotence::Safe) {
                _ if error
                    .remote()
                    .is_some_and(|r| r.kind == ExceptionKind::MasterNotRunning) =>
                {
                    Retry::ServerGone
                }
                Retry::Relocate | Retry::MovedTo(_) => Retry::No,
                retry => retry,
            };
            match retry {
                Retry::No => return Err((error, master)),
                Retry::ServerGone | Retry::Wait { .. } => self.forget_master(),
                Retry::Now | Retry::Relocate | Retry::MovedTo(_) => {}
            }
            attempts.waiting_for(|| format!("the active master (last asked {master})"));
            attempts
                .back_off(error, &retry, &master, method)
                .await
                .map_err(|e| (e, master.clone()))?;
        }
    }

    /// Waits until the master's procedure `proc_id` has finished; its
    /// failure is the call's. A master that answers without a procedure id
    /// has done the work already.
    async fn wait_procedure(&self, proc_id: Option<u64>, attempts: &mut Attempts) -> Result<(), Failed> {
        let Some(proc_id) = proc_id else {
            return Ok(());
        };
        let mut pause = Duration::from_millis(10);
        loop {
            let reply: proto::GetProcedureResultResponse = self
                .master_call(
                    "getProcedureResult",
                    &proto::GetProcedureResultRequest { proc_id },
                    attempts,
                )
                .await?;
            // NOT_FOUND: finished long enough ago that the master forgot
            // it (the Java client reads it as done too).
            if reply.state != State::Running as i32 {
                return match &reply.exception {
                    Some(e) => Err((procedure_error(e), String::new())),
                    None => Ok(()),
                };
            }
            let left = attempts
                .remaining("the master", "getProcedureResult")
                .map_err(|e| (e, String::new()))?;
            tokio::time::sleep(pause.min(left)).await;
            pause = (pause * 2).min(Duration::from_millis(250));
        }
    }

    fn admin_attempts(&self) -> Attempts {
        // A scope's call timeout replaces this one too (CallOptions).
        self.attempts(crate::store::call_timeout(self.inner.config.admin_timeout))
    }

    /// Creates a table (checked already), waiting until it is online.
    pub(super) async fn admin_create(&self, schema: &TableSchema) -> Result<(), StoreError> {
        let wire = self.wire(&schema.name);
        let request = proto::CreateTableRequest {
            table_schema: table_proto(&wire, schema),
            split_keys: schema.split_keys.clone(),
            nonce_group: Some(self.inner.nonce_group),
            nonce: Some(random_u64()),
        };
        let mut attempts = self.admin_attempts();
        let created = async {
            let reply: proto::CreateTableResponse = self.master_call("CreateTable", &request, &mut attempts).await?;
            self.wait_procedure(reply.proc_id, &mut attempts).await
        }
        .await;
        // Regions of an earlier table of that name are gone.
        self.forget_table(&wire);
        created.map_err(|(e, endpoint)| e.into_store(&schema.name, None, "create_table", &endpoint))
    }

    /// Disables a table, unless it is disabled already.
    async fn disable(&self, wire: &str, attempts: &mut Attempts) -> Result<(), Failed> {
        let request = proto::DisableTableRequest {
            table_name: table_name(wire),
            nonce_group: Some(self.inner.nonce_group),
            nonce: Some(random_u64()),
        };
        let disabled = async {
            let reply: proto::DisableTableResponse = self.master_call("DisableTable", &request, attempts).await?;
            self.wait_procedure(reply.proc_id, attempts).await
        }
        .await;
        match disabled {
            Err((e, _)) if not_enabled(&e) => Ok(()),
            other => other,
        }
    }

    /// Disables, then deletes a table.
    pub(super) async fn admin_delete(&self, table: &str) -> Result<(), StoreError> {
        let wire = self.wire(table);
        let mut attempts = self.admin_attempts();
        let deleted = async {
            self.disable(&wire, &mut attempts).await?;
            let request = proto::DeleteTableRequest {
                table_name: table_name(&wire),
                nonce_group: Some(self.inner.nonce_group),
                nonce: Some(random_u64()),
            };
            let reply: proto::DeleteTableResponse = self.master_call("DeleteTable", &request, &mut attempts).await?;
            self.wait_procedure(reply.proc_id, &mut attempts).await
        }
        .await;
        self.forget_table(&wire);
        deleted.map_err(|(e, endpoint)| e.into_store(table, None, "delete_table", &endpoint))
    }

    /// Disables a table, then truncates it keeping its split points; the
    /// master enables it again.
    pub(super) async fn admin_truncate(&self, table: &str) -> Result<(), StoreError> {
        let wire = self.wire(table);
        let mut attempts = self.admin_attempts();
        let truncated = async {
            self.disable(&wire, &mut attempts).await?;
            let request = proto::TruncateTableRequest {
                table_name: table_name(&wire),
                preserve_splits: Some(true),
                nonce_group: Some(self.inner.nonce_group),
                nonce: Some(random_u64()),
            };
            let reply: proto::TruncateTableResponse =
                self.master_call("truncateTable", &request, &mut attempts).await?;
            self.wait_procedure(reply.proc_id, &mut attempts).await
        }
        .await;
        self.forget_table(&wire);
        truncated.map_err(|(e, endpoint)| e.into_store(table, None, "truncate_table", &endpoint))
    }

    /// Applies a family change (checked already against `live`, the
    /// table's descriptor), waiting until the table's regions reopened.
    pub(super) async fn admin_alter(
        &self,
        table: &str,
        live: &proto::TableSchema,
        change: &FamilyChange,
    ) -> Result<(), StoreError> {
        let wire = self.wire(table);
        let name = table_name(&wire);
        let (nonce_group, nonce) = (Some(self.inner.nonce_group), Some(random_u64()));
        let mut attempts = self.admin_attempts();
        let altered = async {
            let proc_id = match change {
                FamilyChange::Add(f) => {
                    let request = proto::AddColumnRequest {
                        table_name: name,
                        column_families: family_proto(f),
                        nonce_group,
                        nonce,
                    };
                    let reply: proto::AddColumnResponse =
                        self.master_call("AddColumn", &request, &mut attempts).await?;
                    reply.proc_id
                }
                FamilyChange::Modify(f) => {
                    let family = live
                        .column_families
                        .iter()
                        .find(|c| c.name == f.name.as_bytes())
                        .map_or_else(|| family_proto(f), |c| overlay_family(c, f));
                    let request = proto::ModifyColumnRequest {
                        table_name: name,
                        column_families: family,
                        nonce_group,
                        nonce,
                    };
                    let reply: proto::ModifyColumnResponse =
                        self.master_call("ModifyColumn", &request, &mut attempts).await?;
                    reply.proc_id
                }
                FamilyChange::Delete(family) => {
                    let request = proto::DeleteColumnRequest {
                        table_name: name,
                        column_name: Bytes::copy_from_slice(family.as_bytes()),
                        nonce_group,
                        nonce,
                    };
                    let reply: proto::DeleteColumnResponse =
                        self.master_call("DeleteColumn", &request, &mut attempts).await?;
                    reply.proc_id
                }
            };
            self.wait_procedure(proc_id, &mut attempts).await
        }
        .await;
        altered.map_err(|(e, endpoint)| e.into_store(table, None, "alter_table", &endpoint))
    }

    /// The table's descriptor, `None` if there is no such table.
    pub(super) async fn admin_descriptor(&self, table: &str) -> Result<Option<proto::TableSchema>, StoreError> {
        let request = proto::GetTableDescriptorsRequest {
            table_names: vec![table_name(&self.wire(table))],
            ..Default::default()
        };
        let mut attempts = self.attempts(crate::store::call_timeout(self.inner.config.call_timeout));
        let reply: proto::GetTableDescriptorsResponse = self
            .master_call("GetTableDescriptors", &request, &mut attempts)
            .await
            .map_err(|(e, endpoint)| e.into_store(table, None, "describe_table", &endpoint))?;
        // One table asked, at most one answered.
        if reply.table_schema.len() > 1 {
            let e = NativeError::InvalidReply {
                reason: format!("{} descriptors for one table", reply.table_schema.len()),
            };
            return Err(e.into_store(table, None, "describe_table", ""));
        }
        Ok(reply.table_schema.into_iter().next())
    }

    /// The names of the user tables under the table prefix, without it,
    /// sorted.
    pub(super) async fn admin_list(&self) -> Result<Vec<String>, StoreError> {
        let mut attempts = self.attempts(crate::store::call_timeout(self.inner.config.call_timeout));
        let reply: proto::GetTableNamesResponse = self
            .master_call("GetTableNames", &proto::GetTableNamesRequest::default(), &mut attempts)
            .await
            .map_err(|(e, endpoint)| e.into_store("", None, "list_tables", &endpoint))?;
        // HBase never names a table with an empty qualifier
        // (`TableName.isLegalTableQualifierName`); an empty namespace is
        // the default one (`TableName.valueOf`).
        if let Some(i) = reply.table_names.iter().position(|n| n.qualifier.is_empty()) {
            let e = NativeError::InvalidReply {
                reason: format!(
                    "table name {i} of {} is empty: HBase never names a table \"\"",
                    reply.table_names.len()
                ),
            };
            return Err(e.into_store("", None, "list_tables", ""));
        }
        let prefix = &self.inner.config.table_prefix;
        let mut names: Vec<String> = reply
            .table_names
            .iter()
            .map(show_table_name)
            .filter_map(|n| n.strip_prefix(prefix.as_str()).map(str::to_string))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Moves the region of `table` that holds `row` to another region
    /// server, one the master picks, and returns once the region is open
    /// there (HBase's `Admin.move(encodedRegionName)`). NativeStore's own
    /// calls in flight meet the move as a moved region and retry; this is
    /// for operators and for tests of exactly that.
    pub async fn move_region(&self, table: &str, row: &[u8]) -> Result<(), StoreError> {
        let wire = self.wire(table);
        let mut attempts = self.admin_attempts();
        let moved = async {
            let info = self.region_info_at(&wire, row, &mut attempts).await?;
            let request = proto::MoveRegionRequest {
                region: proto::RegionSpecifier {
                    r#type: proto::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
                    value: Bytes::from(encoded_region_name(&info)),
                },
                dest_server_name: None,
            };
            let _: proto::MoveRegionResponse = self.master_call("MoveRegion", &request, &mut attempts).await?;
            Ok(())
        }
        .await;
        moved.map_err(|(e, endpoint): Failed| e.into_store(table, Some(row), "move_region", &endpoint))
    }

    /// Splits the region of `table` that holds `row`, at `split_at` (the
    /// first row of the upper daughter), or where HBase chooses (the
    /// midpoint of the region's largest store) when `None`, and returns
    /// once both daughters are open (HBase's `Admin.splitRegionAsync`, then
    /// a wait for its procedure). A region split a moment ago cannot be
    /// split again until its daughters are compacted: the master refuses.
    pub async fn split_region(&self, table: &str, row: &[u8], split_at: Option<&[u8]>) -> Result<(), StoreError> {
        let wire = self.wire(table);
        let mut attempts = self.admin_attempts();
        let split = async {
            let info = self.region_info_at(&wire, row, &mut attempts).await?;
            let request = proto::SplitTableRegionRequest {
                region_info: info,
                split_row: split_at.map(Bytes::copy_from_slice),
                nonce_group: Some(self.inner.nonce_group),
                nonce: Some(random_u64()),
            };
            let reply: proto::SplitTableRegionResponse =
                self.master_call("SplitRegion", &request, &mut attempts).await?;
            self.wait_procedure(reply.proc_id, &mut attempts).await
        }
        .await;
        split.map_err(|(e, endpoint)| e.into_store(table, Some(row), "split_region", &endpoint))
    }

    /// The `RegionInfo` of the region that holds `row`, read from
    /// `hbase:meta` (not the cache: the master wants the region as it is).
    async fn region_info_at(
        &self,
        wire: &str,
        row: &[u8],
        attempts: &mut Attempts,
    ) -> Result<proto::RegionInfo, Failed> {
        let target = locate::Target::Row(row);
        self.meta_lookup(wire, target, attempts, |cells| {
            // The checks of a lookup (the row inside, the region online),
            // then the whole RegionInfo.
            locate::region_from_meta(wire, target, cells)?;
            locate::region_info_from_meta(wire, cells)
        })
        .await
    }

    /// The start key of each of the table's regions, sorted (the first
    /// region's is empty), from `hbase:meta`: how the table is split now,
    /// as HBase's `RegionLocator.getStartKeys` reports it. Split parents
    /// and regions offline are left out.
    pub async fn region_start_keys(&self, table: &str) -> Result<Vec<Bytes>, StoreError> {
        let wire = self.wire(table);
        let mut attempts = self.attempts(crate::store::call_timeout(self.inner.config.call_timeout));
        self.meta_start_keys(&wire, &mut attempts)
            .await
            .map_err(|(e, endpoint)| e.into_store(table, None, "region_start_keys", &endpoint))
    }

    async fn meta_start_keys(&self, wire: &str, attempts: &mut Attempts) -> Result<Vec<Bytes>, Failed> {
        // `<table>,,` to `<table> ,,`: every region row of the table, as
        // HBase's `MetaTableAccessor.getTableStartRowForMeta` and
        // `getTableStopRowForMeta` bound them.
        let mut start = locate::meta_stop_key(wire);
        let mut stop = start[..start.len() - 2].to_vec();
        stop.extend_from_slice(b" ,,");
        let mut keys = Vec::new();
        loop {
            let meta = self.meta_region_within(attempts).await?;
            let request = proto::ScanRequest {
                region: Some(meta.specifier()),
                scan: Some(proto::Scan {
                    column: vec![proto::Column {
                        family: Bytes::from_static(locate::META_FAMILY),
                        qualifier: vec![Bytes::from_static(b"regioninfo")],
                    }],
                    start_row: Some(Bytes::from(start.clone())),
                    stop_row: Some(Bytes::from(stop.clone())),
                    caching: Some(META_PAGE),
                    ..Default::default()
                }),
                number_of_rows: Some(META_PAGE),
                close_scanner: Some(true),
                ..Default::default()
            };
            let left = attempts
                .remaining(&meta.server, "Scan")
                .map_err(|e| (e, meta.server.clone()))?;
            let reply = self
                .call_server::<proto::ScanResponse>(&meta.server, "Scan", &request, left)
                .await
                .and_then(|reply| super::convert::scan_rows(&reply));
            let rows = match reply {
                Ok(rows) => rows,
                Err(e) => {
                    let retry = retry_kind(&e, Idempotence::Safe);
                    let waiting_for = || format!("hbase:meta (last on {}) to be served", meta.server);
                    let event = ("Scan", "meta scan retried");
                    self.retry_on(e, retry, &meta, event, attempts, waiting_for).await?;
                    continue;
                }
            };
            let full = rows.len() >= META_PAGE as usize;
            for cells in &rows {
                let Some(cell) = cells.iter().find(|c| &c.qualifier[..] == b"regioninfo") else {
                    continue;
                };
                start = cell.row.to_vec();
                start.push(0);
                let Some(bytes) = cell.value.strip_prefix(b"PBUF") else {
                    continue;
                };
                let info = proto::RegionInfo::decode(bytes).map_err(|source| {
                    (
                        NativeError::Decode {
                            what: "info:regioninfo",
                            cause: source,
                        },
                        meta.server.clone(),
                    )
                })?;
                let skipped = info.offline.unwrap_or(false) || info.split.unwrap_or(false);
                if !skipped && info.replica_id.unwrap_or(0) == 0 {
                    keys.push(info.start_key.unwrap_or_default());
                }
            }
            if !full {
                break;
            }
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }
}

#[cfg(test)]
mod fake_master_tests {
    //! The admin calls against a fake master: procedures waited for, their
    //! failures typed, and the wait bounded by the admin deadline.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bytes::BytesMut;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::store::native::NativeConfig;
    use crate::store::native::codec;
    use crate::store::native::proto::{RequestHeader, ResponseHeader};

    /// How the fake master answers `getProcedureResult`.
    #[derive(Clone, Copy)]
    enum Outcome {
        /// Running twice, then finished.
        Done,
        /// Running twice, then finished with `TableExistsException`.
        Exists,
        /// Running for ever.
        Never,
    }

    struct Fake {
        outcome: Outcome,
        polls: AtomicUsize,
        /// Exceptions `CreateTable` answers first, the last first (a master
        /// failing over).
        create_refusals: std::sync::Mutex<Vec<&'static str>>,
        /// The nonce of each `CreateTable` received.
        create_nonces: std::sync::Mutex<Vec<Option<u64>>>,
        active_asks: AtomicUsize,
        /// What `GetTableNames` answers (message, cell block), and a
        /// `GetMetaRegionLocations` answer instead of the real one.
        hostile: Hostile,
    }

    /// The fake master's answers to `GetTableNames` and
    /// `GetMetaRegionLocations`, when not the usual ones.
    #[derive(Clone, Default)]
    struct Hostile {
        table_names: Option<(Vec<u8>, Vec<u8>)>,
        meta_locations: Option<Vec<u8>>,
    }

    /// One server that is registry, master and nothing else; it names
    /// itself as `hbase:meta`'s server, which these calls never use.
    async fn fake(outcome: Outcome) -> (String, Arc<Fake>) {
        hostile_fake(outcome, Hostile::default()).await
    }

    async fn hostile_fake(outcome: Outcome, hostile: Hostile) -> (String, Arc<Fake>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let fake = Arc::new(Fake {
            outcome,
            polls: AtomicUsize::new(0),
            create_refusals: Default::default(),
            create_nonces: Default::default(),
            active_asks: AtomicUsize::new(0),
            hostile,
        });
        let shared = fake.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone(), port));
            }
        });
        (format!("127.0.0.1:{port}"), fake)
    }

    async fn serve(mut stream: tokio::net::TcpStream, fake: Arc<Fake>, port: u16) {
        let mut head = [0; 10];
        if stream.read_exact(&mut head).await.is_err() {
            return;
        }
        let mut header = vec![0; u32::from_be_bytes([head[6], head[7], head[8], head[9]]) as usize];
        if stream.read_exact(&mut header).await.is_err() {
            return;
        }
        let mut buf = BytesMut::new();
        loop {
            let mut frame = loop {
                match codec::split_frame(&mut buf, 1 << 20) {
                    Ok(Some(frame)) => break frame,
                    Ok(None) => {}
                    Err(_) => return,
                }
                if stream.read_buf(&mut buf).await.unwrap_or(0) == 0 {
                    return;
                }
            };
            let Ok(request) = RequestHeader::decode_length_delimited(&mut frame) else {
                return;
            };
            let reply = |message: Vec<u8>| {
                let header = ResponseHeader {
                    call_id: request.call_id,
                    ..Default::default()
                };
                codec::encode_response(&header, Some(&message), &[])
            };
            let server = proto::ServerName {
                host_name: "127.0.0.1".into(),
                port: Some(u32::from(port)),
                start_code: Some(1),
            };
            let answer = match request.method_name.as_deref() {
                Some("GetMetaRegionLocations") if fake.hostile.meta_locations.is_some() => {
                    reply(fake.hostile.meta_locations.clone().unwrap_or_default())
                }
                Some("GetTableNames") => {
                    let (message, cell_block) = fake.hostile.table_names.clone().unwrap_or_default();
                    let header = ResponseHeader {
                        call_id: request.call_id,
                        ..Default::default()
                    };
                    codec::encode_response(&header, Some(&message), &cell_block)
                }
                Some("GetMetaRegionLocations") => reply(
                    proto::GetMetaRegionLocationsResponse {
                        meta_locations: vec![proto::RegionLocation {
                            region_info: proto::RegionInfo {
                                region_id: 1,
                                table_name: table_name("hbase:meta"),
                                ..Default::default()
                            },
                            server_name: Some(server),
                            seq_num: 0,
                        }],
                    }
                    .encode_to_vec(),
                ),
                Some("CreateTable") if !fake.create_refusals.lock().expect("lock").is_empty() => {
                    let body = proto::CreateTableRequest::decode_length_delimited(&mut frame).expect("a request");
                    fake.create_nonces.lock().expect("lock").push(body.nonce);
                    let class = fake.create_refusals.lock().expect("lock").pop().unwrap_or_default();
                    codec::encode_exception(request.call_id, class, "not the active master")
                }
                Some("GetActiveMaster") => {
                    fake.active_asks.fetch_add(1, Ordering::SeqCst);
                    reply(
                        proto::GetActiveMasterResponse {
                            server_name: Some(server),
                        }
                        .encode_to_vec(),
                    )
                }
                Some("CreateTable") => {
                    let body = proto::CreateTableRequest::decode_length_delimited(&mut frame).expect("a request");
                    fake.create_nonces.lock().expect("lock").push(body.nonce);
                    reply(proto::CreateTableResponse { proc_id: Some(5) }.encode_to_vec())
                }
                Some("getProcedureResult") => {
                    let polls = fake.polls.fetch_add(1, Ordering::SeqCst) + 1;
                    let running = polls <= 2 || matches!(fake.outcome, Outcome::Never);
                    let exception = matches!(fake.outcome, Outcome::Exists).then(|| proto::ForeignExceptionMessage {
                        source: Some("master".into()),
                        generic_exception: Some(proto::GenericExceptionMessage {
                            class_name: Some("org.apache.hadoop.hbase.TableExistsException".into()),
                            message: Some("t".into()),
                            error_info: None,
                        }),
                    });
                    let state = if running { State::Running } else { State::Finished };
                    reply(
                        proto::GetProcedureResultResponse {
                            state: state as i32,
                            exception: if running { None } else { exception },
                            ..Default::default()
                        }
                        .encode_to_vec(),
                    )
                }
                other => codec::encode_exception(
                    request.call_id,
                    "org.apache.hadoop.hbase.DoNotRetryIOException",
                    &format!("unexpected call {other:?}"),
                ),
            };
            if stream.write_all(&answer).await.is_err() {
                return;
            }
        }
    }

    async fn store(endpoint: &str, admin_timeout: Duration) -> NativeStore {
        NativeStore::connect(NativeConfig::new([endpoint]).admin_timeout(admin_timeout))
            .await
            .expect("connect")
    }

    fn schema() -> TableSchema {
        TableSchema::new("t").family(FamilySchema::new("f"))
    }

    /// `names` as a `GetTableNamesResponse` (in the default namespace).
    fn table_names(names: &[&str]) -> Vec<u8> {
        proto::GetTableNamesResponse {
            table_names: names.iter().map(|n| table_name(n)).collect(),
        }
        .encode_to_vec()
    }

    /// `count` copies of an empty message as field 1: 2 bytes each.
    fn empty_elements(count: usize) -> Vec<u8> {
        [0x0a, 0].repeat(count)
    }

    #[tokio::test]
    async fn table_names_list_as_tables() {
        let hostile = Hostile {
            table_names: Some((table_names(&["b", "a", "ns:c"]), Vec::new())),
            ..Default::default()
        };
        let (endpoint, _) = hostile_fake(Outcome::Done, hostile).await;
        let store = store(&endpoint, Duration::from_secs(10)).await;
        assert_eq!(store.admin_list().await.expect("listed"), ["a", "b", "ns:c"]);
    }

    #[tokio::test]
    async fn empty_table_names_are_refused_not_listed() {
        // A quarter of a million empty names (512 KiB): refused before
        // decoding (64 bytes each decoded, 32 times the reply).
        for (message, why) in [
            (empty_elements(1 << 18), "refused undecoded"),
            // A few, within the bound: refused by what they say.
            (table_names(&["a", "", "b"]), "never names a table"),
        ] {
            let hostile = Hostile {
                table_names: Some((message, Vec::new())),
                ..Default::default()
            };
            let (endpoint, _) = hostile_fake(Outcome::Done, hostile).await;
            let store = store(&endpoint, Duration::from_secs(10)).await;
            let err = match store.admin_list().await {
                Ok(names) => panic!("{why}: {} names listed", names.len()),
                Err(e) => e,
            };
            assert!(err.to_string().contains(why), "{why}: {err}");
        }
    }

    #[tokio::test]
    async fn a_cell_block_on_an_admin_reply_is_refused_undecoded() {
        let cells = [codec::WireCell {
            row: "r".into(),
            family: "f".into(),
            qualifier: "q".into(),
            timestamp: 1,
            cell_type: 4,
            value: "v".into(),
        }];
        let mut block = BytesMut::new();
        codec::encode_cell_block(&cells, &mut block);
        // Garbage after a cell: a decoder would fail on it; the refusal
        // says no cells belong there, before any decoding.
        block.extend_from_slice(&[0xFF; 7]);
        let hostile = Hostile {
            table_names: Some((table_names(&["a"]), block.to_vec())),
            ..Default::default()
        };
        let (endpoint, _) = hostile_fake(Outcome::Done, hostile).await;
        let store = store(&endpoint, Duration::from_secs(10)).await;
        let err = store.admin_list().await.expect_err("refused");
        assert!(
            err.to_string().contains("carries no cells, yet came with a cell block"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn thousands_of_meta_locations_are_refused() {
        // 100,000 empty locations (200 KB): 20 MB decoded, for a registry
        // that knows a handful of `hbase:meta` replicas.
        let hostile = Hostile {
            meta_locations: Some(empty_elements(100_000)),
            ..Default::default()
        };
        let (endpoint, _) = hostile_fake(Outcome::Done, hostile).await;
        let config = NativeConfig::new([endpoint.as_str()]).call_timeout(Duration::from_secs(10));
        let err = NativeStore::connect(config).await.expect_err("refused");
        assert!(err.to_string().contains("100000 meta_locations"), "{err}");
    }

    #[tokio::test]
    async fn a_create_waits_for_its_procedure() {
        let (endpoint, fake) = fake(Outcome::Done).await;
        let store = store(&endpoint, Duration::from_secs(10)).await;
        store.admin_create(&schema()).await.expect("created");
        assert_eq!(fake.polls.load(Ordering::SeqCst), 3, "polled until finished");
    }

    #[tokio::test]
    async fn a_master_failing_over_is_waited_for_and_asked_again() {
        let (endpoint, fake) = fake(Outcome::Done).await;
        // Popped from the end: a backup master's PleaseHold, then a master
        // no longer active.
        fake.create_refusals.lock().expect("lock").extend([
            "org.apache.hadoop.hbase.MasterNotRunningException",
            "org.apache.hadoop.hbase.PleaseHoldException",
        ]);
        let config = NativeConfig::new([endpoint])
            .admin_timeout(Duration::from_secs(10))
            .retry(crate::store::native::RetryPolicy::default().pause(Duration::from_millis(20)));
        let store = NativeStore::connect(config).await.expect("connect");
        store.admin_create(&schema()).await.expect("created in the end");
        assert_eq!(
            fake.active_asks.load(Ordering::SeqCst),
            3,
            "the registry asked again after each refusal"
        );
        let nonces = fake.create_nonces.lock().expect("lock").clone();
        assert_eq!(nonces.len(), 3, "{nonces:?}");
        assert!(
            nonces[0].is_some() && nonces.iter().all(|n| *n == nonces[0]),
            "one nonce: {nonces:?}"
        );
    }

    #[tokio::test]
    async fn a_failed_procedure_is_a_typed_error() {
        let (endpoint, _) = fake(Outcome::Exists).await;
        let store = store(&endpoint, Duration::from_secs(10)).await;
        let err = store.admin_create(&schema()).await.expect_err("exists");
        assert!(
            matches!(&err, StoreError::TableExists { table } if table == "t"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_procedure_that_never_ends_times_out_at_the_deadline() {
        let (endpoint, fake) = fake(Outcome::Never).await;
        let store = store(&endpoint, Duration::from_millis(400)).await;
        let started = std::time::Instant::now();
        let err = store.admin_create(&schema()).await.expect_err("never finished");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        assert!(
            matches!(&err, StoreError::Timeout { table, operation, .. } if table == "t" && *operation == "create_table"),
            "{err}"
        );
        assert!(fake.polls.load(Ordering::SeqCst) >= 3, "polled meanwhile");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_options_round_trip_through_attributes() {
        let tuned = FamilySchema::new("t")
            .versions(1000)
            .min_versions(2)
            .ttl_secs(18_000)
            .block_size(16_384)
            .block_cache(false)
            .in_memory(true)
            .bloom(BloomType::RowCol)
            .compression(Compression::Gz);
        for f in [tuned, FamilySchema::new("d")] {
            assert_eq!(family_from_proto(&family_proto(&f)), f);
        }
        let versions = family_proto(&FamilySchema::new("v").versions(3));
        let value = |key: &str| {
            versions
                .attributes
                .iter()
                .find(|a| a.first == key.as_bytes())
                .map(|a| a.second.clone())
        };
        assert_eq!(value("VERSIONS"), Some(Bytes::from("3")));
        assert_eq!(value("BLOOMFILTER"), Some(Bytes::from("ROW")));
        assert_eq!(value("BLOCKCACHE"), Some(Bytes::from("true")));
    }

    #[test]
    fn absent_or_odd_attributes_read_as_defaults() {
        let family = proto::ColumnFamilySchema {
            name: Bytes::from("f"),
            attributes: vec![pair("TTL", "soon"), pair("COMPRESSION", "BROTLI"), pair("OTHER", "x")],
            configuration: Vec::new(),
        };
        assert_eq!(family_from_proto(&family), FamilySchema::new("f"));
    }

    #[test]
    fn a_modified_family_keeps_what_hmap_does_not_model() {
        let live = proto::ColumnFamilySchema {
            name: Bytes::from("f"),
            attributes: vec![pair("VERSIONS", "1"), pair("KEEP_DELETED_CELLS", "TRUE")],
            configuration: vec![proto::NameStringPair {
                name: "k".into(),
                value: "v".into(),
            }],
        };
        let modified = overlay_family(&live, &FamilySchema::new("f").versions(5));
        assert_eq!(family_from_proto(&modified).versions, 5);
        let keep = modified
            .attributes
            .iter()
            .filter(|a| a.first == "KEEP_DELETED_CELLS".as_bytes())
            .count();
        assert_eq!(keep, 1);
        assert_eq!(
            modified
                .attributes
                .iter()
                .filter(|a| a.first == "VERSIONS".as_bytes())
                .count(),
            1
        );
        assert_eq!(modified.configuration, live.configuration);
    }

    #[test]
    fn encoded_region_names_match_hbases() {
        // Region names HBase 2.6.1 gave two regions of a test table (the
        // rows of hbase:meta): `<table>,<start>,<id>.<encoded>.`.
        let info = |start: &str, id: u64| proto::RegionInfo {
            region_id: id,
            table_name: table_name("nat2_hmap_native_regions_t"),
            start_key: Some(Bytes::copy_from_slice(start.as_bytes())),
            ..Default::default()
        };
        assert_eq!(
            encoded_region_name(&info("", 1795426003095)),
            "bdac6df3c7d5fa84307d71a625359f9f"
        );
        assert_eq!(
            encoded_region_name(&info("s/03000", 1795426005822)),
            "952f8c8d9f12931af2e01c2339d86e14"
        );
    }

    #[test]
    fn table_names_keep_their_namespace() {
        assert_eq!(show_table_name(&table_name("t")), "t");
        assert_eq!(show_table_name(&table_name("ns:t")), "ns:t");
        let schema = TableSchema::new("t")
            .family(FamilySchema::new("b"))
            .family(FamilySchema::new("a"))
            .metadata("hmap.key", "k");
        let read = table_from_proto("t", &table_proto("p_t", &schema));
        assert_eq!(
            read.families.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(read.key_layout(), Some("k"));
        assert_eq!(table_proto("p_t", &schema).table_name, Some(table_name("p_t")));
    }
}
