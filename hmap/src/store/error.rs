use std::time::Duration;

/// An error from a [`Store`](super::Store).
///
/// Rows and columns are shown in HBase's printable form (`\xHH` for bytes that
/// are not printable ASCII); columns as `family:qualifier`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The table does not exist.
    #[error("table `{table}` does not exist")]
    TableNotFound {
        /// The table.
        table: String,
    },
    /// A table with that name exists already.
    #[error("table `{table}` already exists")]
    TableExists {
        /// The table.
        table: String,
    },
    /// A request names a column family the table does not have.
    #[error("table `{table}` has no column family `{family}`")]
    NoSuchFamily {
        /// The table.
        table: String,
        /// The family, printable.
        family: String,
    },
    /// A table schema the backend refuses.
    #[error("invalid schema for table `{table}`: {reason}")]
    InvalidSchema {
        /// The table.
        table: String,
        /// The rule broken.
        reason: String,
    },
    /// An empty row key, or one longer than 32767 bytes.
    #[error("table `{table}`: invalid row key {row}: {reason}")]
    InvalidRow {
        /// The table.
        table: String,
        /// The row, printable (cut after 64 bytes).
        row: String,
        /// What is wrong.
        reason: String,
    },
    /// A cell larger than the backend's cell size limit. HBase counts a
    /// cell's row, family, qualifier and value, and 24 bytes of framing.
    #[error(
        "table `{table}`, row {row}, column {column}: the cell's {size} bytes (row, column, value and 24 bytes of framing) exceed the {limit}-byte cell limit"
    )]
    CellTooLarge {
        /// The table.
        table: String,
        /// The row, printable.
        row: String,
        /// The column, printable.
        column: String,
        /// The cell's size as HBase counts it.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A negative timestamp: HBase timestamps are at least 0.
    #[error("table `{table}`, row {row}, column {column}: timestamp {timestamp} is negative")]
    NegativeTimestamp {
        /// The table.
        table: String,
        /// The row, printable.
        row: String,
        /// The column, printable.
        column: String,
        /// The timestamp.
        timestamp: i64,
    },
    /// An increment of a cell that does not hold an 8-byte counter.
    #[error(
        "table `{table}`, row {row}, column {column}: the {len}-byte value is not a counter (8-byte big-endian i64)"
    )]
    NotACounter {
        /// The table.
        table: String,
        /// The row, printable.
        row: String,
        /// The column, printable.
        column: String,
        /// The value's length.
        len: usize,
    },
    /// A request that cannot be carried out as asked.
    #[error("table `{table}`: invalid request: {reason}")]
    InvalidRequest {
        /// The table.
        table: String,
        /// What is wrong.
        reason: String,
    },
    /// A request the backend cannot carry out as HBase would: its protocol
    /// has no way to express it (Thrift1 has no time range with a lower
    /// bound on some calls, no delete of one exact version, ...). Nothing
    /// was sent; use a backend that can (ThriftStore or NativeStore).
    #[error("table `{table}`: {backend} cannot express {feature}; nothing was sent")]
    Unsupported {
        /// The backend, as its type is named (`Thrift1Store`).
        backend: &'static str,
        /// What it cannot express, as the backend's docs list it.
        feature: &'static str,
        /// The table.
        table: String,
    },
    /// The backend cannot be reached, or the connection broke. Whether a
    /// write was applied is unknown: retry only idempotent writes.
    #[error("cannot talk to {endpoint}: {message}")]
    Connection {
        /// The server address.
        endpoint: String,
        /// What happened.
        message: String,
        /// The underlying error.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The cluster did not serve the call within its deadline, and nothing
    /// of it was applied: every try was refused before it ran, or failed
    /// before it was sent (a region moving or being reassigned after its
    /// server died, a server stopping or starting, a busy server). Safe to
    /// try again, a write included. NativeStore's; the message says what
    /// the call waited for and what its last try met.
    #[error(
        "{operation}{} was not served within {:?}, and nothing of it was applied: {message}",
        on_table(table),
        whole_ms(*.elapsed)
    )]
    Unavailable {
        /// The table.
        table: String,
        /// The call.
        operation: &'static str,
        /// How long it waited, its tries together.
        elapsed: Duration,
        /// The server of its last try, `host:port` (empty if none was reached).
        endpoint: String,
        /// What it waited for, and what its last try met.
        message: String,
    },
    /// A call took longer than its timeout.
    #[error(
        "{operation}{} timed out after {elapsed:?}{}",
        on_table(table),
        in_parentheses(detail)
    )]
    Timeout {
        /// The table.
        table: String,
        /// The call.
        operation: &'static str,
        /// How long it waited.
        elapsed: Duration,
        /// What the call was waiting for when its time ran out, where the
        /// backend knows (NativeStore: the server, the RPC, and whether
        /// it was connecting, writing, or waiting for a reply or the rest
        /// of one); empty otherwise.
        detail: String,
    },
    /// The server reported an error.
    #[error("{service} failed {operation}{}: {message}", on_table(table))]
    Server {
        /// Who failed: `"HBase"` (through its RPC or a Thrift gateway) or
        /// `"Bigtable"`.
        service: &'static str,
        /// The table.
        table: String,
        /// The call.
        operation: &'static str,
        /// The server's message.
        message: String,
    },
    /// The server's reply breaks the wire protocol or the service's
    /// definition: a value of another type than declared, nesting or a length
    /// beyond limits, bytes that are not a message at all (another protocol
    /// or transport). Whether a write was applied is unknown.
    #[error("{operation}{}: the reply of {endpoint} is invalid: {message}", on_table(table))]
    Protocol {
        /// The server address.
        endpoint: String,
        /// The table.
        table: String,
        /// The call.
        operation: &'static str,
        /// What is wrong with the reply.
        message: String,
    },
    /// A task that carried out part of a call in the background (the task
    /// that fetches a scan's next batch, the fan-out worker) is gone before
    /// it finished: the tokio runtime it ran on shut down, or it panicked.
    /// What it had not handed over is not lost silently: this error says
    /// so. Start the call again, on a runtime that outlives it (one store
    /// shared across `#[tokio::test]` functions runs each test's tasks on
    /// that test's runtime, which ends with the test).
    #[error("{operation}{}: {message}", on_table(table))]
    Interrupted {
        /// The table.
        table: String,
        /// The call.
        operation: &'static str,
        /// What was cut off, and why.
        message: String,
    },
    /// A call of [`hmap::blocking`](crate::blocking) made on a thread that
    /// runs a current-thread tokio runtime (a plain `#[tokio::test]`):
    /// waiting there would stop that runtime, and with it the tasks the
    /// call may need, so nothing was done. The same on every store.
    #[error(
        "hmap::blocking cannot wait on a thread that runs a current-thread tokio runtime (a plain #[tokio::test]): \
         use the async API with .await there, or a multi-thread runtime (#[tokio::test(flavor = \"multi_thread\")]), \
         where a blocking call works"
    )]
    BlockingInRuntime,
}

impl StoreError {
    /// The table the error is about, if any.
    pub fn table(&self) -> Option<&str> {
        match self {
            StoreError::TableNotFound { table }
            | StoreError::TableExists { table }
            | StoreError::NoSuchFamily { table, .. }
            | StoreError::InvalidSchema { table, .. }
            | StoreError::InvalidRow { table, .. }
            | StoreError::CellTooLarge { table, .. }
            | StoreError::NegativeTimestamp { table, .. }
            | StoreError::NotACounter { table, .. }
            | StoreError::InvalidRequest { table, .. }
            | StoreError::Timeout { table, .. }
            | StoreError::Unavailable { table, .. }
            | StoreError::Server { table, .. }
            | StoreError::Protocol { table, .. }
            | StoreError::Interrupted { table, .. }
            | StoreError::Unsupported { table, .. } => Some(table),
            StoreError::Connection { .. } | StoreError::BlockingInRuntime => None,
        }
    }

    /// Whether the error is about reaching the backend (the request may or may
    /// not have been applied), rather than about the request itself, so
    /// that trying again later may succeed. Not a [`Connection`](Self::Connection)
    /// error that refused the client's settings, which fails the same way
    /// until they change: Kerberos (a keytab, a principal, a protection
    /// level, krb5.conf; an unreachable KDC is transient: see
    /// [`SecurityError::is_refusal`](crate::security::SecurityError::is_refusal))
    /// and NativeStore's TLS (see `NativeError::is_refusal`).
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Connection { cause, .. } => !cause.as_deref().is_some_and(refuses_settings),
            StoreError::Timeout { .. } | StoreError::Unavailable { .. } => true,
            _ => false,
        }
    }

    /// Whether the failed call may have changed what is stored: its
    /// request may have reached the server before the connection broke,
    /// the time ran out or the reply turned out unreadable
    /// ([`Connection`](Self::Connection), [`Timeout`](Self::Timeout),
    /// [`Protocol`](Self::Protocol), [`Interrupted`](Self::Interrupted)).
    /// `false` when it certainly did not: refused before it ran (a bad
    /// request, a missing table, a failed condition's server error), or
    /// never served ([`Unavailable`](Self::Unavailable)). A write that
    /// fails with `true` is safe to send again only if sending it twice
    /// does no harm: a put of the same cells, a delete up to a time; not
    /// a delete of the newest version or a check-and-mutate (NativeStore
    /// already retried increments, which carry nonces, within the
    /// deadline; see `docs/reliability.md`). For a call of several rows,
    /// this is about the call as a whole: rows are applied independently.
    pub fn maybe_applied(&self) -> bool {
        matches!(
            self,
            StoreError::Connection { .. }
                | StoreError::Timeout { .. }
                | StoreError::Protocol { .. }
                | StoreError::Interrupted { .. }
        )
    }
}

/// Whether a connection error's underlying error says the client's
/// settings were refused (NativeStore's and ThriftStore's Kerberos,
/// NativeStore's TLS).
fn refuses_settings(cause: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    if let Some(security) = cause.downcast_ref::<crate::security::SecurityError>() {
        return security.is_refusal();
    }
    #[cfg(feature = "native")]
    if let Some(native) = cause.downcast_ref::<crate::store::native::NativeError>() {
        return native.is_refusal();
    }
    let _ = cause;
    false
}

/// The family a `NoSuchColumnFamilyException`'s message names (HBase's
/// region: `Column family g does not exist in region ...`), `?` when the
/// message does not say.
#[cfg(any(feature = "thrift", feature = "native"))]
pub(crate) fn missing_family(message: &str) -> String {
    message
        .split_once("Column family ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("?")
        .to_string()
}

/// A duration in whole milliseconds, to print: `1.001s`, not `1.000934217s`.
pub(crate) fn whole_ms(duration: Duration) -> Duration {
    Duration::from_millis(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// A row key for an error message: printable, cut after 64 bytes.
pub(crate) fn show_row(row: &[u8]) -> String {
    const MAX: usize = 64;
    if row.len() <= MAX {
        crate::key::Printable(row).to_string()
    } else {
        format!("{}... ({} bytes)", crate::key::Printable(&row[..MAX]), row.len())
    }
}

/// `family:qualifier`, printable.
pub(crate) fn show_column(family: &[u8], qualifier: &[u8]) -> String {
    format!("{}:{}", crate::key::Printable(family), crate::key::Printable(qualifier))
}

/// ` on table `t``, for a call's message; nothing for a call that names no
/// table (a ping, a listing).
/// ` (detail)`, or nothing for no detail.
fn in_parentheses(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    }
}

pub(crate) fn on_table(table: &str) -> String {
    if table.is_empty() {
        String::new()
    } else {
        format!(" on table `{table}`")
    }
}

#[cfg(test)]
mod on_table_tests {
    use super::*;

    #[test]
    fn a_call_without_a_table_names_none() {
        let timeout = |table: &str| {
            StoreError::Timeout {
                table: table.into(),
                operation: "getThriftServerType",
                elapsed: Duration::from_secs(1),
                detail: String::new(),
            }
            .to_string()
        };
        assert_eq!(timeout(""), "getThriftServerType timed out after 1s");
        assert_eq!(timeout("t"), "getThriftServerType on table `t` timed out after 1s");
        let detailed = StoreError::Timeout {
            table: "t".into(),
            operation: "mutate",
            elapsed: Duration::from_secs(1),
            detail: "Multi on rs:16020, connecting".into(),
        };
        assert_eq!(
            detailed.to_string(),
            "mutate on table `t` timed out after 1s (Multi on rs:16020, connecting)"
        );
    }
}
