//! A [`Store`] over HBase's Thrift2 gateway (`THBaseService`).
//!
//! Thrift2 is the gateway that carries what hmap needs: time ranges and
//! versions on gets and scans, every family option, split keys at table
//! creation, atomic row mutations and check-and-mutate. Start one with
//! `hbase thrift2 -p 9091` (or this repository's `scripts/hbase/hbase start`).
//!
//! The protocol is Thrift's binary protocol on an unframed socket, the
//! gateway's default, written by hand for the subset hmap uses: no code
//! generator or Thrift library is needed.

mod hbase;
mod protocol;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;

use self::protocol::{Connection, Decoder, Encoder, TType};
use super::check::{check_family, check_mutation, check_read, check_row};
use super::{
    CheckAndMutate, Get, Increment, Mutation, Result, RowMutation, RowResult, RowScanner, Scan, Store, StoreError,
};
use crate::schema::TableSchema;

/// Settings of a [`ThriftStore`].
#[derive(Debug, Clone)]
pub struct ThriftConfig {
    /// The gateway, `host:port`.
    pub address: String,
    /// Connections kept at most; calls beyond wait for one.
    pub pool_size: usize,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long a call may wait for its reply.
    pub read_timeout: Duration,
    /// A pooled connection idle this long is checked with a cheap call
    /// before use: gateways drop idle connections (after 60 s by default).
    pub idle_check: Duration,
    /// The largest value accepted, as HBase's client checks it
    /// (`hbase.client.keyvalue.maxsize`, 10 MiB).
    pub max_value_size: usize,
    /// Put before every table name on the wire, so that several
    /// applications or test runs share one cluster: with `staging_`, table
    /// `user` is `staging_user` in HBase. A prefix ending in `:` names an
    /// HBase namespace (which must exist). The store's callers and errors
    /// see names without it; [`Store::list_tables`] lists only the tables
    /// under it.
    pub table_prefix: String,
}

impl ThriftConfig {
    /// A gateway at `address`, 8 connections, 5 s to connect, 60 s per call.
    pub fn new(address: impl Into<String>) -> Self {
        ThriftConfig {
            address: address.into(),
            pool_size: 8,
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(60),
            idle_check: Duration::from_secs(20),
            max_value_size: 10 * 1024 * 1024,
            table_prefix: String::new(),
        }
    }
}

#[derive(Default)]
struct Pool {
    idle: Vec<Connection>,
    open: usize,
}

/// A store on a real HBase, through its Thrift2 gateway (`THBaseService`).
///
/// Thrift2 is the gateway that carries what hmap needs: time ranges and
/// versions on gets and scans, every family option, split keys at table
/// creation, atomic row mutations and check-and-mutate. Start one with
/// `hbase thrift2 -p 9091` (or this repository's `scripts/hbase/hbase start`).
/// The binary protocol on an unframed socket, the gateway's default, is
/// written by hand for the calls hmap makes: no Thrift library is needed.
///
/// ```no_run
/// use hmap::store::{Get, Store, ThriftConfig, ThriftStore};
///
/// let mut config = ThriftConfig::new("127.0.0.1:9091");
/// config.pool_size = 16;
/// config.table_prefix = "staging_".into(); // tables `staging_<name>` in HBase
/// let store = ThriftStore::with_config(config);
/// store.ping()?; // a Thrift2 gateway answers
/// let row = store.get("user", &Get::new("u1"))?;
/// # Ok::<(), hmap::store::StoreError>(())
/// ```
///
/// Puts go to the gateway in `putMultiple` batches, single deletes in
/// `deleteMultiple` ones, and a row mixing both in `mutateRow`; each row is
/// applied atomically, rows in order. A failed batch may have applied some of
/// its rows: writes are idempotent at a fixed timestamp, which hmap's typed
/// layer always sets, so retrying is safe.
///
/// Connections are pooled; one that broke (the gateway restarted, or dropped
/// it while idle) is replaced. Reads that fail on a broken connection are
/// retried once on a new one; writes are not, since whether they were
/// applied is unknown: they fail with [`StoreError::Connection`].
pub struct ThriftStore {
    config: ThriftConfig,
    pool: Mutex<Pool>,
    returned: Condvar,
    schemas: Mutex<HashMap<String, Arc<TableSchema>>>,
}

impl std::fmt::Debug for ThriftStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThriftStore")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What one call produced: a reply, or a failure of the connection.
enum CallError {
    Io(io::Error),
    Server(String),
}

impl ThriftStore {
    /// A store on the gateway at `address` (`host:port`), with default
    /// settings. Connects lazily; [`ping`](Self::ping) checks the gateway.
    pub fn new(address: impl Into<String>) -> Self {
        Self::with_config(ThriftConfig::new(address))
    }

    /// A store with chosen settings.
    pub fn with_config(config: ThriftConfig) -> Self {
        ThriftStore {
            config,
            pool: Mutex::new(Pool::default()),
            returned: Condvar::new(),
            schemas: Mutex::new(HashMap::new()),
        }
    }

    /// Checks that the gateway answers, and that it is a Thrift2 one.
    pub fn ping(&self) -> Result<()> {
        let kind = self.call("", "getThriftServerType", true, |_| {}, hbase::read_i32)?;
        match kind {
            Some(2) => Ok(()),
            other => Err(StoreError::Connection {
                endpoint: self.config.address.clone(),
                message: format!("not a Thrift2 gateway (server type {other:?}); hmap needs `hbase thrift2`"),
                source: None,
            }),
        }
    }

    fn connect(&self) -> io::Result<Connection> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the address resolves to nothing");
        for addr in self.config.address.to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, self.config.connect_timeout) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(self.config.read_timeout))?;
                    stream.set_write_timeout(Some(self.config.read_timeout))?;
                    return Connection::open(stream);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// A connection: an idle pooled one (checked if it idled long), a new
    /// one while the pool has room, else the next one returned.
    fn checkout(&self) -> io::Result<Connection> {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(mut conn) = pool.idle.pop() {
                drop(pool);
                let usable = !conn.peer_closed()
                    && (conn.last_used.elapsed() < self.config.idle_check || Self::probe(&mut conn).is_ok());
                if usable {
                    return Ok(conn);
                }
                // A dead connection: replace it.
                pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
                pool.open = pool.open.saturating_sub(1);
                continue;
            }
            if pool.open < self.config.pool_size.max(1) {
                pool.open += 1;
                drop(pool);
                return self.connect().inspect_err(|_| self.forget());
            }
            pool = self.returned.wait(pool).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn probe(conn: &mut Connection) -> io::Result<()> {
        match conn.call(
            "getThriftServerType",
            |_| {},
            |d| hbase::read_reply(d, |d, k| d.skip(k)),
        )? {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(message)) | Err(message) => Err(io::Error::other(message)),
        }
    }

    fn checkin(&self, conn: Connection) {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        pool.idle.push(conn);
        self.returned.notify_one();
    }

    /// Closes every idle connection; new ones are opened as needed.
    fn drop_idle(&self) {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        let dropped = std::mem::take(&mut pool.idle).len();
        pool.open = pool.open.saturating_sub(dropped);
        self.returned.notify_all();
    }

    /// A connection that broke is not returned: count it out.
    fn forget(&self) {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        pool.open = pool.open.saturating_sub(1);
        self.returned.notify_one();
    }

    /// One call; `retry` (for reads) tries once more on a new connection
    /// when the connection, not the server, failed.
    fn call<T>(
        &self,
        table: &str,
        name: &'static str,
        retry: bool,
        args: impl Fn(&mut Encoder),
        result: impl Fn(&mut Decoder<'_>, TType) -> io::Result<T>,
    ) -> Result<Option<T>> {
        let attempts = if retry { 2 } else { 1 };
        let mut last = None;
        for _ in 0..attempts {
            let outcome = self.checkout().map_err(CallError::Io).and_then(|mut conn| {
                match conn.call(name, &args, |d| hbase::read_reply(d, &result)) {
                    Ok(reply) => {
                        self.checkin(conn);
                        reply.and_then(|r| r).map_err(CallError::Server)
                    }
                    Err(e) => {
                        // The gateway went away or broke the stream: the
                        // other idle connections are suspect too.
                        self.forget();
                        self.drop_idle();
                        Err(CallError::Io(e))
                    }
                }
            });
            match outcome {
                Ok(value) => return Ok(value),
                Err(CallError::Server(message)) => return Err(self.server_error(table, name, message)),
                Err(CallError::Io(e)) => last = Some(e),
            }
        }
        Err(self.io_error(table, name, last.unwrap_or_else(|| io::Error::other("no attempt made"))))
    }

    fn io_error(&self, table: &str, operation: &'static str, e: io::Error) -> StoreError {
        if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) {
            return StoreError::Timeout {
                table: table.into(),
                operation,
                elapsed: self.config.read_timeout,
            };
        }
        StoreError::Connection {
            endpoint: self.config.address.clone(),
            message: format!("{operation} on table `{table}`: {e}"),
            source: Some(Box::new(e)),
        }
    }

    /// Maps the Java exception a `TIOError` carries to a typed error.
    fn server_error(&self, table: &str, operation: &'static str, message: String) -> StoreError {
        let table = table.to_string();
        if message.contains("TableNotFoundException") {
            return StoreError::TableNotFound { table };
        }
        if message.contains("TableExistsException") {
            return StoreError::TableExists { table };
        }
        if message.contains("NoSuchColumnFamilyException") {
            let family = message
                .split("Column family ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("?")
                .to_string();
            return StoreError::NoSuchFamily { table, family };
        }
        StoreError::Server {
            table,
            operation,
            message,
        }
    }

    /// The table's schema, from a cache filled by `describe`: requests are
    /// checked against it before they are sent.
    fn schema(&self, table: &str) -> Result<Arc<TableSchema>> {
        if let Some(s) = self.schemas.lock().unwrap_or_else(PoisonError::into_inner).get(table) {
            return Ok(Arc::clone(s));
        }
        let schema = Arc::new(self.describe_table(table)?);
        self.schemas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(table.to_string(), Arc::clone(&schema));
        Ok(schema)
    }

    fn forget_schema(&self, table: &str) {
        self.schemas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(table);
    }

    /// Rows of puts in one `putMultiple`: each row's puts one TPut, applied
    /// atomically.
    fn put_multiple(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.call(
            table,
            "putMultiple",
            false,
            |e| {
                e.binary_field(1, self.wire(table).as_bytes());
                hbase::struct_list(e, 2, rows, |e, r| hbase::put_fields(e, &r.row, &r.mutations));
            },
            |d, k| d.skip(k),
        )?;
        Ok(())
    }

    /// Rows of one delete each in one `deleteMultiple`; the gateway returns
    /// the deletes it could not apply.
    fn delete_multiple(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let failed = self.call(
            table,
            "deleteMultiple",
            false,
            |e| {
                e.binary_field(1, self.wire(table).as_bytes());
                hbase::struct_list(e, 2, rows, |e, r| {
                    if let Some(spec) = r.mutations.first().and_then(hbase::DeleteSpec::of) {
                        hbase::delete_fields(e, &r.row, &spec);
                    }
                });
            },
            |d, _| hbase::read_delete_rows(d),
        )?;
        match failed.unwrap_or_default().first() {
            None => Ok(()),
            Some(row) => Err(StoreError::Server {
                table: table.into(),
                operation: "deleteMultiple",
                message: format!("the delete of row {} was not applied", super::error::show_row(row)),
            }),
        }
    }

    /// The start key of each of the table's regions, sorted (the first
    /// region's is empty): how a table is split, as in HBase's
    /// `RegionLocator.getStartKeys`. A table created from a salted key's
    /// schema has one region per bucket.
    pub fn region_start_keys(&self, table: &str) -> Result<Vec<Bytes>> {
        let mut starts = self
            .call(
                table,
                "getAllRegionLocations",
                true,
                |e| e.binary_field(1, self.wire(table).as_bytes()),
                |d, _| hbase::read_region_starts(d),
            )?
            .unwrap_or_default();
        starts.sort();
        Ok(starts)
    }

    /// A table's name in HBase: the configured prefix, then `table`.
    fn wire<'a>(&self, table: &'a str) -> Cow<'a, str> {
        match self.config.table_prefix.as_str() {
            "" => Cow::Borrowed(table),
            prefix => Cow::Owned(format!("{prefix}{table}")),
        }
    }

    fn mutate_row(&self, table: &str, m: &RowMutation) -> Result<()> {
        self.call(
            table,
            "mutateRow",
            false,
            |e| {
                e.binary_field(1, self.wire(table).as_bytes());
                hbase::row_mutations(e, 2, &m.row, &m.mutations);
            },
            |d, k| d.skip(k),
        )?;
        Ok(())
    }
}

impl Store for ThriftStore {
    fn create_table(&self, schema: &TableSchema) -> Result<()> {
        schema.validate().map_err(|reason| StoreError::InvalidSchema {
            table: schema.name.clone(),
            reason,
        })?;
        self.forget_schema(&schema.name);
        self.call(
            &schema.name,
            "createTable",
            false,
            |e| {
                hbase::table_descriptor(e, 1, &self.wire(&schema.name), schema);
                if !schema.split_keys.is_empty() {
                    e.field(TType::List, 2);
                    e.list(TType::String, schema.split_keys.len());
                    for k in &schema.split_keys {
                        e.string(k);
                    }
                }
            },
            |d, k| d.skip(k),
        )?;
        Ok(())
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        self.forget_schema(table);
        if !self.table_exists(table)? {
            return Err(StoreError::TableNotFound { table: table.into() });
        }
        let by_name = |e: &mut Encoder| hbase::table_name(e, 1, &self.wire(table));
        match self.call(table, "disableTable", false, by_name, |d, k| d.skip(k)) {
            // Disabled already: deleting is what is left.
            Ok(_) | Err(StoreError::Server { .. }) => {}
            Err(e) => return Err(e),
        }
        self.call(table, "deleteTable", false, by_name, |d, k| d.skip(k))?;
        Ok(())
    }

    /// `disableTable`, then `truncateTable` with `preserveSplits`; HBase
    /// enables the table again.
    fn truncate_table(&self, table: &str) -> Result<()> {
        if !self.table_exists(table)? {
            return Err(StoreError::TableNotFound { table: table.into() });
        }
        let by_name = |e: &mut Encoder| hbase::table_name(e, 1, &self.wire(table));
        match self.call(table, "disableTable", false, by_name, |d, k| d.skip(k)) {
            // Disabled already: truncating is what is left.
            Ok(_) | Err(StoreError::Server { .. }) => {}
            Err(e) => return Err(e),
        }
        self.call(
            table,
            "truncateTable",
            false,
            |e| {
                hbase::table_name(e, 1, &self.wire(table));
                e.bool_field(2, true);
            },
            |d, k| d.skip(k),
        )?;
        Ok(())
    }

    fn table_exists(&self, table: &str) -> Result<bool> {
        let exists = self.call(
            table,
            "tableExists",
            true,
            |e| hbase::table_name(e, 1, &self.wire(table)),
            hbase::read_bool,
        )?;
        Ok(exists.unwrap_or(false))
    }

    fn list_tables(&self) -> Result<Vec<String>> {
        let names = self.call(
            "",
            "getTableNamesByPattern",
            true,
            |e| e.bool_field(2, false),
            |d, _| hbase::read_table_names(d),
        )?;
        let prefix = &self.config.table_prefix;
        let mut names: Vec<String> = names
            .unwrap_or_default()
            .into_iter()
            .filter_map(|n| n.strip_prefix(prefix.as_str()).map(str::to_string))
            .collect();
        names.sort();
        Ok(names)
    }

    fn describe_table(&self, table: &str) -> Result<TableSchema> {
        let described = self.call(
            table,
            "getTableDescriptor",
            true,
            |e| hbase::table_name(e, 1, &self.wire(table)),
            |d, _| hbase::read_table_descriptor(d),
        );
        match described {
            Ok(Some(mut schema)) => {
                schema.name = table.to_string();
                Ok(schema)
            }
            Ok(None) => Err(StoreError::TableNotFound { table: table.into() }),
            // The gateway passes on only the exception's message, which for
            // a missing table is its bare name: ask whether it exists.
            Err(StoreError::Server { .. }) if !self.table_exists(table)? => {
                Err(StoreError::TableNotFound { table: table.into() })
            }
            Err(e) => Err(e),
        }
    }

    fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        let schema = self.schema(table)?;
        check_row(table, &get.row)?;
        check_read(&schema, &get.columns, get.max_versions, get.time_range)?;
        let result = self.call(
            table,
            "get",
            true,
            |e| {
                e.binary_field(1, self.wire(table).as_bytes());
                e.field(TType::Struct, 2);
                hbase::get(e, get);
            },
            |d, _| hbase::result(d),
        )?;
        Ok(result.flatten().map(|mut r| {
            if r.row.is_empty() {
                r.row = get.row.clone();
            }
            r
        }))
    }

    fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        let schema = self.schema(table)?;
        for g in gets {
            check_row(table, &g.row)?;
            check_read(&schema, &g.columns, g.max_versions, g.time_range)?;
        }
        if gets.is_empty() {
            return Ok(Vec::new());
        }
        let results = self
            .call(
                table,
                "getMultiple",
                true,
                |e| {
                    e.binary_field(1, self.wire(table).as_bytes());
                    hbase::struct_list(e, 2, gets, hbase::get);
                },
                |d, _| hbase::results(d),
            )?
            .unwrap_or_default();
        if results.len() != gets.len() {
            return Err(StoreError::Server {
                table: table.into(),
                operation: "getMultiple",
                message: format!("{} results for {} gets", results.len(), gets.len()),
            });
        }
        Ok(results)
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let schema = self.schema(table)?;
        for r in rows {
            check_mutation(&schema, &r.row, &r.mutations, self.config.max_value_size)?;
        }
        for batch in batches(rows) {
            match batch {
                Batch::Puts(rows) => self.put_multiple(table, rows)?,
                Batch::Deletes(rows) => self.delete_multiple(table, rows)?,
                Batch::Mixed(row) => self.mutate_row(table, row)?,
            }
        }
        Ok(())
    }

    fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowScanner<'a>> {
        let schema = self.schema(table)?;
        check_read(&schema, &scan.columns, scan.max_versions, scan.time_range)?;
        // HBase reads a reversed scan from its start row (inclusive, the
        // high end) down to its stop row (exclusive). hmap's range is low to
        // high with the low end inclusive: start from the high end, skip a
        // row equal to it, and stop below the low end here.
        let (start, stop) = if scan.reversed {
            (scan.stop.clone(), Bytes::new())
        } else {
            (scan.start.clone(), scan.stop.clone())
        };
        let id = self
            .call(
                table,
                "openScanner",
                false,
                |e| {
                    e.binary_field(1, self.wire(table).as_bytes());
                    e.field(TType::Struct, 2);
                    hbase::scan(e, scan, &start, &stop);
                },
                hbase::read_i32,
            )?
            .ok_or_else(|| StoreError::Server {
                table: table.into(),
                operation: "openScanner",
                message: "no scanner id".into(),
            })?;
        Ok(Box::new(ThriftScanner {
            store: self,
            table: table.to_string(),
            id,
            buffer: VecDeque::new(),
            done: false,
            reversed: scan.reversed,
            low: scan.start.clone(),
            high: scan.stop.clone(),
            remaining: scan.limit,
            batch: i32::try_from(scan.batch_size.max(1)).unwrap_or(i32::MAX),
        }))
    }

    fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        let schema = self.schema(table)?;
        check_family(&schema, &op.family)?;
        check_mutation(&schema, &op.row, &op.mutations, self.config.max_value_size)?;
        let puts_only = op.mutations.iter().all(|m| matches!(m, Mutation::Put { .. }));
        // Fields 1-4 of both calls: table, row, family, qualifier.
        let wire = self.wire(table);
        let checked_cell = |e: &mut Encoder| {
            e.binary_field(1, wire.as_bytes());
            e.binary_field(2, &op.row);
            e.binary_field(3, &op.family);
            e.binary_field(4, &op.qualifier);
        };
        let applied = match (&op.expected, puts_only) {
            (Some(value), _) => self.call(
                table,
                "checkAndMutate",
                false,
                |e| {
                    checked_cell(e);
                    e.i32_field(5, 2); // TCompareOp.EQUAL
                    e.binary_field(6, value);
                    hbase::row_mutations(e, 7, &op.row, &op.mutations);
                },
                hbase::read_bool,
            )?,
            // "Absent" cannot go through checkAndMutate (a missing value
            // fails on the gateway); checkAndPut with no value means absent.
            (None, true) => self.call(
                table,
                "checkAndPut",
                false,
                |e| {
                    checked_cell(e);
                    e.field(TType::Struct, 6);
                    hbase::put_fields(e, &op.row, &op.mutations);
                },
                hbase::read_bool,
            )?,
            (None, false) => {
                return Err(StoreError::InvalidRequest {
                    table: table.into(),
                    reason: "a check for an absent column can guard puts only over Thrift2".into(),
                });
            }
        };
        Ok(applied.unwrap_or(false))
    }

    fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        let schema = self.schema(table)?;
        check_row(table, &op.row)?;
        for (family, _, _) in &op.columns {
            check_family(&schema, family)?;
        }
        let result = self.call(
            table,
            "increment",
            false,
            |e| {
                e.binary_field(1, self.wire(table).as_bytes());
                e.field(TType::Struct, 2);
                hbase::increment(e, &op.row, &op.columns);
            },
            |d, _| hbase::result(d),
        );
        let row = match result {
            Ok(row) => row.flatten(),
            Err(StoreError::Server { message, .. }) if message.contains("not a long") => {
                return Err(StoreError::NotACounter {
                    table: table.into(),
                    row: super::error::show_row(&op.row),
                    column: op
                        .columns
                        .first()
                        .map(|(f, q, _)| super::error::show_column(f, q))
                        .unwrap_or_default(),
                    len: message
                        .split("it's ")
                        .nth(1)
                        .and_then(|r| r.split_whitespace().next())
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0),
                });
            }
            Err(e) => return Err(e),
        };
        let row = row.unwrap_or_default();
        op.columns
            .iter()
            .map(|(f, q, _)| {
                row.value(f, q)
                    .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
                    .map(i64::from_be_bytes)
                    .ok_or_else(|| StoreError::Server {
                        table: table.into(),
                        operation: "increment",
                        message: "the increment returned no value".into(),
                    })
            })
            .collect()
    }
}

/// A run of rows sent in one call.
enum Batch<'a> {
    /// Rows of puts only: `putMultiple`.
    Puts(&'a [RowMutation]),
    /// Rows of a single delete each: `deleteMultiple`.
    Deletes(&'a [RowMutation]),
    /// A row mixing puts and deletes, or of several deletes: `mutateRow`,
    /// which applies them atomically and in order.
    Mixed(&'a RowMutation),
}

/// Splits rows into batches, in order, leaving out rows with nothing to do.
/// A run ends where the kind of row changes or a row repeats, since HBase
/// does not order two mutations of one row within a batch.
fn batches(rows: &[RowMutation]) -> Vec<Batch<'_>> {
    let is_run = |r: &RowMutation, puts: bool| {
        let deletes = r
            .mutations
            .iter()
            .filter(|m| hbase::DeleteSpec::of(m).is_some())
            .count();
        !r.mutations.is_empty()
            && if puts {
                deletes == 0
            } else {
                deletes == 1 && r.mutations.len() == 1
            }
    };
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let row = &rows[start];
        let puts = is_run(row, true);
        if !puts && !is_run(row, false) {
            if !row.mutations.is_empty() {
                out.push(Batch::Mixed(row));
            }
            start += 1;
            continue;
        }
        let mut seen = HashSet::from([&row.row]);
        let mut end = start + 1;
        while end < rows.len() && is_run(&rows[end], puts) && seen.insert(&rows[end].row) {
            end += 1;
        }
        let run = &rows[start..end];
        out.push(if puts { Batch::Puts(run) } else { Batch::Deletes(run) });
        start = end;
    }
    out
}

/// A server-side scanner: `batch` rows per `getScannerRows`, closed on drop.
struct ThriftScanner<'a> {
    store: &'a ThriftStore,
    table: String,
    id: i32,
    buffer: VecDeque<RowResult>,
    done: bool,
    reversed: bool,
    /// hmap's range: `low` inclusive, `high` exclusive (empty: unbounded).
    low: Bytes,
    high: Bytes,
    remaining: Option<usize>,
    batch: i32,
}

impl ThriftScanner<'_> {
    fn fetch(&mut self) -> Result<()> {
        // No more rows than the limit still wants (at least one).
        let wanted = self.remaining.map_or(self.batch, |r| {
            self.batch.min(i32::try_from(r.max(1)).unwrap_or(i32::MAX))
        });
        let rows = self
            .store
            .call(
                &self.table,
                "getScannerRows",
                false,
                |e| {
                    e.i32_field(1, self.id);
                    e.i32_field(2, wanted);
                },
                |d, _| hbase::results(d),
            )?
            .unwrap_or_default();
        if rows.is_empty() {
            self.done = true;
        }
        for row in rows.into_iter().flatten() {
            if self.reversed {
                if !self.high.is_empty() && row.row >= self.high {
                    continue;
                }
                if row.row < self.low {
                    self.done = true;
                    break;
                }
            }
            self.buffer.push_back(row);
        }
        Ok(())
    }
}

impl Iterator for ThriftScanner<'_> {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == Some(0) {
            return None;
        }
        while self.buffer.is_empty() && !self.done {
            if let Err(e) = self.fetch() {
                self.done = true;
                return Some(Err(e));
            }
        }
        let row = self.buffer.pop_front()?;
        if let Some(r) = &mut self.remaining {
            *r -= 1;
        }
        Some(Ok(row))
    }
}

impl Drop for ThriftScanner<'_> {
    fn drop(&mut self) {
        // Best effort: the gateway expires scanners it does not hear from.
        let _ = self.store.call(
            &self.table,
            "closeScanner",
            false,
            |e| e.i32_field(1, self.id),
            |d, k| d.skip(k),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (kind, rows) of each batch, for comparison.
    fn shape(rows: &[RowMutation]) -> Vec<(&'static str, Vec<&str>)> {
        fn names(rows: &[RowMutation]) -> Vec<&str> {
            rows.iter()
                .map(|r| std::str::from_utf8(&r.row).unwrap_or("?"))
                .collect()
        }
        batches(rows)
            .into_iter()
            .map(|b| match b {
                Batch::Puts(rows) => ("puts", names(rows)),
                Batch::Deletes(rows) => ("deletes", names(rows)),
                Batch::Mixed(row) => ("mixed", names(std::slice::from_ref(row))),
            })
            .collect()
    }

    #[test]
    fn batches_group_runs_and_split_on_repeated_rows() {
        let rows = [
            RowMutation::new("a").put("f", "q", "1"),
            RowMutation::new("b").put("f", "q", "1").put("f", "p", "2"),
            RowMutation::new("a").put("f", "q", "2"),
            RowMutation::new("c"),
            RowMutation::new("c").delete_row(),
            RowMutation::new("d").delete_column("f", "q"),
            RowMutation::new("e").delete_row().delete_family("f"),
            RowMutation::new("e").put("f", "q", "3").delete_latest("f", "p"),
            RowMutation::new("f").put("f", "q", "4"),
        ];
        assert_eq!(
            shape(&rows),
            vec![
                ("puts", vec!["a", "b"]),
                ("puts", vec!["a"]),
                ("deletes", vec!["c", "d"]),
                ("mixed", vec!["e"]),
                ("mixed", vec!["e"]),
                ("puts", vec!["f"]),
            ]
        );
    }

    #[test]
    fn batches_of_nothing() {
        assert!(shape(&[]).is_empty());
        assert!(shape(&[RowMutation::new("a"), RowMutation::new("b")]).is_empty());
    }
}
