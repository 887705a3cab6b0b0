//! The errors of NativeStore's wire layers, and HBase's exceptions as types.
//!
//! [`NativeError`] is what the codec and the connection report: nothing they
//! see in a server's bytes panics. [`RemoteError`] is an `ExceptionResponse`
//! (or a `Multi` action's exception) with its class mapped to an
//! [`ExceptionKind`]. [`NativeError::into_store`] turns them into hmap's
//! [`StoreError`] once the table and row are known. [`ZooKeeperError`] is
//! what the ZooKeeper registry reports, wrapped as [`NativeError::ZooKeeper`].

use std::time::Duration;

use crate::security::{KerberosFailure, SecurityError};
use crate::store::StoreError;

/// An error of the native RPC layers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NativeError {
    /// A frame's length prefix is beyond the configured maximum.
    #[error("a frame of {length} bytes exceeds the {max}-byte limit")]
    FrameTooLarge {
        /// The length the prefix announced.
        length: u64,
        /// The maximum.
        max: usize,
    },
    /// A request too large to frame (its length does not fit the 4-byte prefix).
    #[error("a request of {length} bytes is too large to send")]
    RequestTooLarge {
        /// The request's length.
        length: usize,
    },
    /// Fewer bytes than a length said.
    #[error("truncated {what}: {needed} bytes announced, {available} there")]
    Truncated {
        /// The part being read.
        what: &'static str,
        /// The bytes it needs.
        needed: u64,
        /// The bytes there are.
        available: usize,
    },
    /// Bytes left over after the last part of a frame.
    #[error("{extra} unexpected bytes after the {what}")]
    TrailingBytes {
        /// The last part read.
        what: &'static str,
        /// How many bytes remain.
        extra: usize,
    },
    /// A protobuf message, or its varint length, that does not decode.
    #[error("invalid {what}: {cause}")]
    Decode {
        /// The message being read.
        what: &'static str,
        /// prost's error.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: prost::DecodeError,
    },
    /// A field the protocol requires is missing.
    #[error("the {message} has no {field}")]
    MissingField {
        /// The message.
        message: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A cell of a cell block that breaks the KeyValue encoding.
    #[error("cell {index} of the cell block is invalid: {reason}")]
    InvalidCell {
        /// The cell's position in the block, from 0.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A reply that decodes but does not say what the protocol requires (a
    /// `hbase:meta` row without a region, a result with too few cells, ...).
    #[error("invalid reply: {reason}")]
    InvalidReply {
        /// What is wrong.
        reason: String,
    },
    /// The table has no region in `hbase:meta` (it does not exist).
    #[error("table `{table}` does not exist")]
    TableNotFound {
        /// The table.
        table: String,
    },
    /// `hbase:meta` has no usable region for a row: a hole, a region being
    /// split, or one not assigned. Worth looking up again after a while.
    #[error("table `{table}` has no region for {at}: {reason}")]
    NoRegion {
        /// The table.
        table: String,
        /// What was looked up: a row (printable) or the table's end.
        at: String,
        /// Why.
        reason: String,
    },
    /// A request NativeStore cannot send yet.
    #[error("NativeStore cannot send {what} yet")]
    Unsupported {
        /// What it cannot send.
        what: String,
    },
    /// The server answered the call with an exception.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The server could not be reached.
    #[error("cannot connect to {endpoint}: {cause}")]
    Connect {
        /// The server's address.
        endpoint: String,
        /// The socket error.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: std::io::Error,
    },
    /// TLS with the server failed (feature `tls`): the server's
    /// certificate refused, no TLS spoken, or the server refused this
    /// client (no client certificate, or one it does not trust). Not
    /// retried: the same settings fail the same way. The reason names the
    /// setting to change.
    #[error("TLS with {endpoint} failed: {reason}")]
    Tls {
        /// The server's address.
        endpoint: String,
        /// What failed, and what to change.
        reason: String,
    },
    /// A security handshake with the server failed: Kerberos (feature
    /// `kerberos`), or the server demands Kerberos of a client without it.
    /// The error every backend reports so, see [`SecurityError`]. Not
    /// retried: the same settings fail the same way (but for an
    /// unreachable KDC).
    #[error(transparent)]
    Security(#[from] SecurityError),
    /// The connection broke (or the server closed it) before the reply came.
    /// Whether the call was applied is unknown when `sent`; a request not
    /// sent was not applied.
    #[error(
        "the connection to {endpoint} broke{}: {reason}",
        if *.sent { "" } else { " before the request was sent" }
    )]
    Closed {
        /// The server's address.
        endpoint: String,
        /// What broke it.
        reason: String,
        /// The request had been handed to the socket (it may have reached
        /// the server).
        sent: bool,
    },
    /// The call's deadline passed while it waited for the cluster to serve
    /// it (a region moving or reassigned after its server died, a server
    /// stopping or starting, a busy server), and no try of it can have
    /// been applied: every one was refused, or failed before it was sent.
    #[error(
        "{method} was not served within {:?} ({tries} tries), waiting for {waiting_for}; the last try: {last}",
        whole_ms(*.elapsed)
    )]
    Unavailable {
        /// The server of the last try (empty: none was reached).
        endpoint: String,
        /// The RPC method.
        method: &'static str,
        /// How long the call waited, all its tries together.
        elapsed: Duration,
        /// How many tries failed.
        tries: u32,
        /// What it waited for: the region (table, row, its last server), or the server.
        waiting_for: String,
        /// What the last try met.
        last: String,
    },
    /// No bootstrap server answered a registry call (`ClientMetaService`)
    /// within the one deadline they shared.
    #[error(
        "{method} {} after {elapsed:?} on every bootstrap server: {}",
        if *.timed_out { "timed out" } else { "failed" },
        show_tried(.tried)
    )]
    Bootstrap {
        /// The registry call.
        method: &'static str,
        /// How long the servers were tried for, all together.
        elapsed: Duration,
        /// The deadline passed (rather than every server failing before it).
        timed_out: bool,
        /// Each server, `host:port`, in the order tried, and what it did.
        tried: Vec<(String, String)>,
    },
    /// The ZooKeeper registry failed (it names the znode it was reading).
    #[error(transparent)]
    ZooKeeper(#[from] ZooKeeperError),
    /// The call's deadline passed (connecting, writing, or waiting for the reply).
    #[error("{method} on {endpoint} timed out after {elapsed:?}, {waiting_for}")]
    Timeout {
        /// The server's address.
        endpoint: String,
        /// The RPC method.
        method: &'static str,
        /// How long the call waited.
        elapsed: Duration,
        /// What it was waiting for when the time ran out: "connecting",
        /// "writing 6291456 bytes of requests", "the reply, nothing of it
        /// read", ...
        waiting_for: String,
    },
}

/// An error of the ZooKeeper registry; each names the znode being read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZooKeeperError {
    /// No quorum member is configured.
    #[error("no ZooKeeper server configured to read {znode} from")]
    NoQuorum {
        /// The znode that was to be read.
        znode: String,
    },
    /// The server could not be reached, or the connection broke.
    #[error("cannot read {znode} from ZooKeeper {server}: {reason}")]
    Unreachable {
        /// The ZooKeeper server, `host:port`.
        server: String,
        /// The znode being read.
        znode: String,
        /// What happened.
        reason: String,
    },
    /// The deadline passed before the server answered.
    #[error("ZooKeeper {server} did not answer within {elapsed:?} while {znode} was read")]
    Timeout {
        /// The ZooKeeper server, `host:port`.
        server: String,
        /// The znode being read.
        znode: String,
        /// How long the lookup had taken.
        elapsed: Duration,
    },
    /// No server of a quorum of several answered, within the one deadline
    /// they shared.
    #[error(
        "no ZooKeeper server answered while {znode} was read ({} after {elapsed:?}): {}",
        if *.timed_out { "timed out" } else { "failed" },
        show_tried(.tried)
    )]
    Quorum {
        /// The quorum's servers, `host:port`, separated by commas.
        servers: String,
        /// The znode being read.
        znode: String,
        /// How long the servers were tried for, all together.
        elapsed: Duration,
        /// The deadline passed (rather than every server failing before it).
        timed_out: bool,
        /// Each server, in the order tried, and what it did.
        tried: Vec<(String, String)>,
    },
    /// The znode does not exist.
    #[error(
        "znode {znode} does not exist on ZooKeeper {server}: HBase is not running there, \
         or its zookeeper.znode.parent is not the parent configured"
    )]
    NoNode {
        /// The ZooKeeper server, `host:port`.
        server: String,
        /// The znode.
        znode: String,
    },
    /// ZooKeeper answered the read with an error code (`KeeperException.Code`).
    #[error("ZooKeeper {server} refused to read {znode}: error code {code}{}", refusal_hint(*code))]
    Refused {
        /// The ZooKeeper server, `host:port`.
        server: String,
        /// The znode.
        znode: String,
        /// ZooKeeper's error code (`-102`: no authorisation, ...).
        code: i32,
    },
    /// The server's bytes break ZooKeeper's protocol.
    #[error("ZooKeeper {server} broke the protocol while {znode} was read: {reason}")]
    Protocol {
        /// The ZooKeeper server, `host:port`.
        server: String,
        /// The znode being read.
        znode: String,
        /// What is wrong.
        reason: String,
    },
    /// Kerberos with a ZooKeeper that demands SASL failed (feature
    /// `kerberos`): `failure` says what kind, `reason` what to change.
    #[error("Kerberos with ZooKeeper {server} failed while {znode} was read: {reason}")]
    Kerberos {
        /// The ZooKeeper server, `host:port`.
        server: String,
        /// The znode being read.
        znode: String,
        /// What kind of failure.
        failure: KerberosFailure,
        /// What failed, and what to change.
        reason: String,
    },
    /// The znode's data is not what HBase writes there.
    #[error("znode {znode} on ZooKeeper {server} does not hold what HBase writes there: {reason}")]
    InvalidZnode {
        /// The ZooKeeper server, `host:port`.
        server: String,
        /// The znode.
        znode: String,
        /// What is wrong.
        reason: String,
    },
}

impl ZooKeeperError {
    /// The ZooKeeper server the error came from (empty without one).
    pub fn server(&self) -> &str {
        match self {
            ZooKeeperError::NoQuorum { .. } => "",
            ZooKeeperError::Quorum { servers, .. } => servers,
            ZooKeeperError::Unreachable { server, .. }
            | ZooKeeperError::Timeout { server, .. }
            | ZooKeeperError::NoNode { server, .. }
            | ZooKeeperError::Refused { server, .. }
            | ZooKeeperError::Protocol { server, .. }
            | ZooKeeperError::Kerberos { server, .. }
            | ZooKeeperError::InvalidZnode { server, .. } => server,
        }
    }

    /// The znode being read.
    pub fn znode(&self) -> &str {
        match self {
            ZooKeeperError::NoQuorum { znode }
            | ZooKeeperError::Unreachable { znode, .. }
            | ZooKeeperError::Timeout { znode, .. }
            | ZooKeeperError::Quorum { znode, .. }
            | ZooKeeperError::NoNode { znode, .. }
            | ZooKeeperError::Refused { znode, .. }
            | ZooKeeperError::Kerberos { znode, .. }
            | ZooKeeperError::Protocol { znode, .. }
            | ZooKeeperError::InvalidZnode { znode, .. } => znode,
        }
    }
}

/// ` (what to do)` after a refusal that says the ZooKeeper demands SASL:
/// `-102` no authorisation, `-115` authentication failed, `-124` a session
/// closed for want of SASL (`KeeperException.Code`).
fn refusal_hint(code: i32) -> &'static str {
    match code {
        -102 | -115 | -124 => {
            " (the ZooKeeper demands SASL of its clients: set `Kerberos::zookeeper_principal`, hmap's feature \
             `kerberos`, or bootstrap from the masters with `NativeConfig::new`)"
        }
        _ => "",
    }
}

/// What kind of exception a server answered with, from its Java class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExceptionKind {
    /// `NotServingRegionException`: the region is not (or no longer) on that server.
    NotServingRegion,
    /// `RegionMovedException`: the region moved to another server.
    RegionMoved,
    /// `RegionOpeningException`: the region is being opened there.
    RegionOpening,
    /// `RegionTooBusyException`: the region refuses writes for now.
    RegionTooBusy,
    /// `CallQueueTooBigException`: the server's call queue is full.
    CallQueueTooBig,
    /// `CallDroppedException`: the server dropped the call (overloaded).
    CallDropped,
    /// `ServerNotRunningYetException`: the server is starting.
    ServerNotRunningYet,
    /// `PleaseHoldException`: the master is initialising (or is a backup
    /// master, which never finishes initialising while it waits).
    PleaseHold,
    /// `RegionServerStoppedException`: the server is stopping; its regions
    /// will be served elsewhere.
    RegionServerStopped,
    /// `RegionServerAbortedException`: the server is aborting; its regions
    /// will be served elsewhere.
    RegionServerAborted,
    /// `RetryImmediatelyException`: try again at once, without a pause.
    RetryImmediately,
    /// `MultiActionResultTooLarge`: a `Multi`'s results reached the
    /// server's size limit; the actions not run are sent again at once.
    MultiActionResultTooLarge,
    /// `MasterNotRunningException`: the master asked is not (or no longer)
    /// the active one.
    MasterNotRunning,
    /// `RpcThrottlingException`: a quota throttled the call; wait and try again.
    RpcThrottling,
    /// `ScannerResetException` or `LeaseException`: the server dropped the
    /// scanner (a region reopened, a lease expired); open it again.
    ScannerReset,
    /// `TableNotFoundException`.
    TableNotFound,
    /// `NoSuchColumnFamilyException`.
    NoSuchColumnFamily,
    /// `TableExistsException`: a table of that name exists already.
    TableExists,
    /// `TableNotEnabledException`: the table is disabled (or disabling).
    TableNotEnabled,
    /// `TableNotDisabledException`: the table must be disabled first.
    TableNotDisabled,
    /// `InvalidFamilyOperationException`: a family added twice, or one
    /// changed or deleted that the table does not have.
    InvalidFamilyOperation,
    /// `UnknownScannerException`: the scanner expired or was closed.
    UnknownScanner,
    /// `OutOfOrderScannerNextException`: a scanner call was repeated or lost.
    OutOfOrderScannerNext,
    /// `FailedSanityCheckException` and other invalid requests.
    FailedSanityCheck,
    /// `DoNotRetryIOException`, or another class the server flagged not to retry.
    DoNotRetry,
    /// Any other class.
    Other,
}

impl ExceptionKind {
    /// The kind of a Java exception class (by its simple name, so a class
    /// that moves between packages keeps its kind).
    pub fn of_class(class: &str) -> ExceptionKind {
        let simple = class.rsplit('.').next().unwrap_or(class);
        match simple {
            "NotServingRegionException" => ExceptionKind::NotServingRegion,
            "RegionMovedException" => ExceptionKind::RegionMoved,
            "RegionOpeningException" => ExceptionKind::RegionOpening,
            "RegionTooBusyException" => ExceptionKind::RegionTooBusy,
            "CallQueueTooBigException" => ExceptionKind::CallQueueTooBig,
            "CallDroppedException" => ExceptionKind::CallDropped,
            "ServerNotRunningYetException" => ExceptionKind::ServerNotRunningYet,
            "PleaseHoldException" => ExceptionKind::PleaseHold,
            "RegionServerStoppedException" => ExceptionKind::RegionServerStopped,
            "RegionServerAbortedException" => ExceptionKind::RegionServerAborted,
            "RetryImmediatelyException" => ExceptionKind::RetryImmediately,
            "MultiActionResultTooLarge" => ExceptionKind::MultiActionResultTooLarge,
            "MasterNotRunningException" => ExceptionKind::MasterNotRunning,
            "RpcThrottlingException" => ExceptionKind::RpcThrottling,
            "ScannerResetException" | "LeaseException" => ExceptionKind::ScannerReset,
            "TableNotFoundException" => ExceptionKind::TableNotFound,
            "NoSuchColumnFamilyException" => ExceptionKind::NoSuchColumnFamily,
            "TableExistsException" => ExceptionKind::TableExists,
            "TableNotEnabledException" => ExceptionKind::TableNotEnabled,
            "TableNotDisabledException" => ExceptionKind::TableNotDisabled,
            "InvalidFamilyOperationException" => ExceptionKind::InvalidFamilyOperation,
            "UnknownScannerException" => ExceptionKind::UnknownScanner,
            "OutOfOrderScannerNextException" => ExceptionKind::OutOfOrderScannerNext,
            "FailedSanityCheckException" => ExceptionKind::FailedSanityCheck,
            "DoNotRetryIOException" => ExceptionKind::DoNotRetry,
            _ => ExceptionKind::Other,
        }
    }

    /// The region's location is stale: look it up again and retry.
    pub fn is_region_moved(self) -> bool {
        matches!(
            self,
            ExceptionKind::NotServingRegion | ExceptionKind::RegionMoved | ExceptionKind::RegionOpening
        )
    }

    /// The server is stopping, aborting or starting: none of the regions
    /// cached on it can be trusted, and its regions are (or will be)
    /// served elsewhere.
    pub fn is_server_gone(self) -> bool {
        matches!(
            self,
            ExceptionKind::RegionServerStopped
                | ExceptionKind::RegionServerAborted
                | ExceptionKind::ServerNotRunningYet
        )
    }

    /// The server is busy or not ready: back off and retry.
    pub fn is_busy(self) -> bool {
        matches!(
            self,
            ExceptionKind::RegionTooBusy
                | ExceptionKind::CallQueueTooBig
                | ExceptionKind::CallDropped
                | ExceptionKind::ServerNotRunningYet
                | ExceptionKind::PleaseHold
                | ExceptionKind::RpcThrottling
        )
    }

    /// The server said to try again at once.
    pub fn is_retry_now(self) -> bool {
        matches!(
            self,
            ExceptionKind::RetryImmediately | ExceptionKind::MultiActionResultTooLarge
        )
    }

    /// The server dropped the scanner: open a new one after the last row read.
    pub fn is_scanner_lost(self) -> bool {
        matches!(
            self,
            ExceptionKind::UnknownScanner | ExceptionKind::OutOfOrderScannerNext | ExceptionKind::ScannerReset
        )
    }
}

/// An exception a server answered a call with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{class}: {message}")]
#[non_exhaustive]
pub struct RemoteError {
    /// What kind of exception.
    pub kind: ExceptionKind,
    /// The Java class name.
    pub class: String,
    /// The server's message (the first line of its stack trace, without the class).
    pub message: String,
    /// The whole stack trace the server sent.
    pub stack_trace: String,
    /// The server flagged the call as not worth retrying.
    pub do_not_retry: bool,
    /// The server flagged itself as overloaded.
    pub server_overloaded: bool,
}

/// The longest server message kept in a [`RemoteError`] (the first line
/// of its stack trace); a longer one is cut, saying how much was.
pub const MAX_REMOTE_MESSAGE: usize = 1024;

/// The longest stack trace kept in a [`RemoteError`], and the longest
/// exception class name; longer ones are cut, saying how much was.
pub const MAX_REMOTE_TRACE: usize = 64 * 1024;

/// `text`, or its first `max` bytes (at a character boundary) and how many
/// were cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} more bytes cut)", &text[..end], text.len() - end)
}

impl RemoteError {
    /// An exception from its class name and stack trace (HBase's
    /// `ExceptionResponse`, or a `NameBytesPair` of a `Multi` result).
    /// A server's text is kept up to a readable length: the message up to
    /// [`MAX_REMOTE_MESSAGE`] bytes, the class and the stack trace up to
    /// [`MAX_REMOTE_TRACE`] (a hostile or broken server can send megabytes).
    pub fn new(class: impl AsRef<str>, stack_trace: impl AsRef<str>) -> Self {
        let class = cut(class.as_ref(), MAX_REMOTE_TRACE);
        let stack_trace = stack_trace.as_ref();
        let first = stack_trace.lines().next().unwrap_or("");
        let message = first
            .strip_prefix(class.as_str())
            .map(|m| m.trim_start_matches(':').trim())
            .unwrap_or(first);
        RemoteError {
            kind: ExceptionKind::of_class(&class),
            message: cut(message, MAX_REMOTE_MESSAGE),
            stack_trace: cut(stack_trace, MAX_REMOTE_TRACE),
            class,
            do_not_retry: false,
            server_overloaded: false,
        }
    }

    /// From a `Multi` result's exception: its class, and its stack trace
    /// as bytes.
    pub(crate) fn from_pair(pair: &super::proto::NameBytesPair) -> Self {
        let trace = String::from_utf8_lossy(pair.value.as_deref().unwrap_or_default());
        RemoteError::new(&pair.name, trace)
    }

    /// From the `ExceptionResponse` of a reply.
    pub(crate) fn from_proto(e: &super::proto::ExceptionResponse) -> Self {
        let mut error = RemoteError::new(
            e.exception_class_name.as_deref().unwrap_or_default(),
            e.stack_trace.as_deref().unwrap_or_default(),
        );
        error.do_not_retry = e.do_not_retry.unwrap_or(false);
        error.server_overloaded = e.server_overloaded.unwrap_or(false);
        if error.kind == ExceptionKind::Other && error.do_not_retry {
            error.kind = ExceptionKind::DoNotRetry;
        }
        error
    }
}

pub(super) use crate::store::error::whole_ms;

/// `a: what a did; b: what b did`.
fn show_tried(tried: &[(String, String)]) -> String {
    let each: Vec<String> = tried.iter().map(|(server, what)| format!("{server}: {what}")).collect();
    each.join("; ")
}

impl NativeError {
    /// Whether the server or the KDC refused this client's settings, so
    /// that trying again with them fails the same way: TLS refused (a
    /// certificate, a CA, TLS itself) and every Kerberos failure but an
    /// unreachable KDC ([`KerberosFailure::is_transient`]).
    /// [`StoreError::is_transient`] is `false` for them.
    pub fn is_refusal(&self) -> bool {
        match self {
            NativeError::Tls { .. } => true,
            NativeError::Security(e) => e.is_refusal(),
            NativeError::ZooKeeper(ZooKeeperError::Kerberos { failure, .. }) => !failure.is_transient(),
            _ => false,
        }
    }

    /// The exception, if the server answered with one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            NativeError::Remote(e) => Some(e),
            _ => None,
        }
    }

    /// hmap's error for a failed `operation` on `table` (and `row`, when one
    /// is involved) against `endpoint`.
    pub fn into_store(self, table: &str, row: Option<&[u8]>, operation: &'static str, endpoint: &str) -> StoreError {
        let at_row = |message: String| match row {
            Some(row) => format!("row {}: {message}", crate::store::show_row(row)),
            None => message,
        };
        match self {
            NativeError::Remote(RemoteError {
                kind: ExceptionKind::TableNotFound,
                ..
            })
            | NativeError::TableNotFound { .. } => StoreError::TableNotFound {
                table: table.to_string(),
            },
            NativeError::Remote(RemoteError {
                kind: ExceptionKind::NoSuchColumnFamily,
                message,
                ..
            }) => StoreError::NoSuchFamily {
                table: table.to_string(),
                family: crate::store::error::missing_family(&message),
            },
            NativeError::Remote(RemoteError {
                kind: ExceptionKind::TableExists,
                ..
            }) => StoreError::TableExists {
                table: table.to_string(),
            },
            NativeError::Remote(RemoteError {
                kind: ExceptionKind::InvalidFamilyOperation,
                message,
                ..
            }) => StoreError::InvalidSchema {
                table: table.to_string(),
                reason: message,
            },
            e @ NativeError::Unsupported { .. } => StoreError::InvalidRequest {
                table: table.to_string(),
                reason: at_row(e.to_string()),
            },
            e @ NativeError::NoRegion { .. } => StoreError::Server {
                service: "HBase",
                table: table.to_string(),
                operation,
                message: e.to_string(),
            },
            NativeError::Remote(e) => StoreError::Server {
                service: "HBase",
                table: table.to_string(),
                operation,
                message: at_row(e.to_string()),
            },
            NativeError::Timeout {
                elapsed,
                ref endpoint,
                method,
                ref waiting_for,
            } => StoreError::Timeout {
                table: table.to_string(),
                operation,
                elapsed,
                detail: format!("{method} on {endpoint}, {waiting_for}"),
            },
            NativeError::Bootstrap {
                elapsed,
                timed_out,
                ref tried,
                ..
            } => {
                let servers: Vec<&str> = tried.iter().map(|(server, _)| server.as_str()).collect();
                let elapsed = whole_ms(elapsed);
                let outcome = if timed_out { "timed out" } else { "failed" };
                StoreError::Connection {
                    endpoint: servers.join(", "),
                    message: format!("{operation} {outcome} after {elapsed:?} ({})", show_tried(tried)),
                    cause: Some(Box::new(self)),
                }
            }
            // The security module's error itself is the cause, as every
            // backend gives it.
            NativeError::Security(e) => StoreError::Connection {
                endpoint: if endpoint.is_empty() {
                    e.endpoint().to_string()
                } else {
                    endpoint.to_string()
                },
                message: e.to_string(),
                cause: Some(Box::new(e)),
            },
            NativeError::Connect { endpoint: ref own, .. } | NativeError::Tls { endpoint: ref own, .. } => {
                StoreError::Connection {
                    // A failure while bootstrapping has no call's endpoint: the
                    // server's own.
                    endpoint: if endpoint.is_empty() {
                        own.clone()
                    } else {
                        endpoint.to_string()
                    },
                    message: self.to_string(),
                    cause: Some(Box::new(self)),
                }
            }
            NativeError::ZooKeeper(ZooKeeperError::Quorum {
                ref servers,
                ref znode,
                elapsed,
                timed_out,
                ref tried,
            }) => {
                let elapsed = whole_ms(elapsed);
                let outcome = if timed_out { "timed out" } else { "failed" };
                let message = format!(
                    "{operation} {outcome} after {elapsed:?} reading {znode} ({})",
                    show_tried(tried)
                );
                let endpoint = format!("ZooKeeper {servers}");
                StoreError::Connection {
                    endpoint,
                    message,
                    cause: Some(Box::new(self)),
                }
            }
            // The registry cannot be reached, or does not name the
            // cluster's servers (yet): the cluster cannot be reached.
            NativeError::ZooKeeper(
                e @ (ZooKeeperError::NoQuorum { .. }
                | ZooKeeperError::Unreachable { .. }
                | ZooKeeperError::Timeout { .. }
                | ZooKeeperError::NoNode { .. }),
            ) => StoreError::Connection {
                endpoint: format!("ZooKeeper {}", e.server()),
                message: e.to_string(),
                cause: Some(Box::new(e)),
            },
            NativeError::ZooKeeper(e) => StoreError::Protocol {
                endpoint: format!("ZooKeeper {}", e.server()),
                table: table.to_string(),
                operation,
                message: e.to_string(),
            },
            NativeError::Unavailable {
                elapsed, ref endpoint, ..
            } => StoreError::Unavailable {
                table: table.to_string(),
                operation,
                elapsed,
                endpoint: endpoint.clone(),
                message: at_row(self.to_string()),
            },
            e @ NativeError::Closed { .. } => StoreError::Connection {
                endpoint: endpoint.to_string(),
                message: e.to_string(),
                cause: None,
            },
            e => StoreError::Protocol {
                endpoint: endpoint.to_string(),
                table: table.to_string(),
                operation,
                message: at_row(e.to_string()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::native::proto::ExceptionResponse;

    #[test]
    fn classes_map_to_kinds() {
        for (class, kind) in [
            (
                "org.apache.hadoop.hbase.NotServingRegionException",
                ExceptionKind::NotServingRegion,
            ),
            (
                "org.apache.hadoop.hbase.exceptions.RegionMovedException",
                ExceptionKind::RegionMoved,
            ),
            (
                "org.apache.hadoop.hbase.exceptions.RegionOpeningException",
                ExceptionKind::RegionOpening,
            ),
            (
                "org.apache.hadoop.hbase.CallQueueTooBigException",
                ExceptionKind::CallQueueTooBig,
            ),
            (
                "org.apache.hadoop.hbase.TableNotFoundException",
                ExceptionKind::TableNotFound,
            ),
            (
                "org.apache.hadoop.hbase.DoNotRetryIOException",
                ExceptionKind::DoNotRetry,
            ),
            (
                "org.apache.hadoop.hbase.TableExistsException",
                ExceptionKind::TableExists,
            ),
            (
                "org.apache.hadoop.hbase.TableNotEnabledException",
                ExceptionKind::TableNotEnabled,
            ),
            ("java.io.IOException", ExceptionKind::Other),
            ("", ExceptionKind::Other),
        ] {
            assert_eq!(ExceptionKind::of_class(class), kind, "{class}");
        }
        assert!(ExceptionKind::RegionMoved.is_region_moved());
        assert!(ExceptionKind::CallQueueTooBig.is_busy());
        assert!(!ExceptionKind::TableNotFound.is_busy());
    }

    #[test]
    fn the_servers_message_is_kept() {
        let e = RemoteError::from_proto(&ExceptionResponse {
            exception_class_name: Some("org.apache.hadoop.hbase.NotServingRegionException".into()),
            stack_trace: Some(
                "org.apache.hadoop.hbase.NotServingRegionException: t,,1.abc. is not online on rs1\n\tat x.y(Z.java:1)"
                    .into(),
            ),
            do_not_retry: Some(false),
            ..Default::default()
        });
        assert_eq!(e.kind, ExceptionKind::NotServingRegion);
        assert_eq!(e.message, "t,,1.abc. is not online on rs1");
        assert!(e.stack_trace.contains("Z.java"));
        // An unknown class the server says not to retry.
        let e = RemoteError::from_proto(&ExceptionResponse {
            exception_class_name: Some("com.example.Custom".into()),
            do_not_retry: Some(true),
            ..Default::default()
        });
        assert_eq!(e.kind, ExceptionKind::DoNotRetry);
        assert_eq!(e.message, "");
    }

    #[test]
    fn a_servers_huge_exception_text_is_cut_to_a_readable_length() {
        let class = "org.apache.hadoop.hbase.DoNotRetryIOException";
        let trace = format!(
            "{class}: {}\n\tat x.y(Z.java:1)\n{}",
            "é".repeat(4 << 20),
            "z".repeat(8 << 20)
        );
        let e = RemoteError::from_proto(&ExceptionResponse {
            exception_class_name: Some(class.into()),
            stack_trace: Some(trace),
            ..Default::default()
        });
        assert_eq!(e.kind, ExceptionKind::DoNotRetry);
        assert!(e.message.len() < MAX_REMOTE_MESSAGE + 64, "{}", e.message.len());
        assert!(
            e.message.starts_with("éé") && e.message.ends_with("more bytes cut)"),
            "{}",
            &e.message[e.message.len() - 40..]
        );
        assert!(e.stack_trace.len() < MAX_REMOTE_TRACE + 64, "{}", e.stack_trace.len());
        let shown = NativeError::Remote(e)
            .into_store("t", Some(b"r"), "get", "h:1")
            .to_string();
        assert!(shown.len() < 2 * MAX_REMOTE_MESSAGE, "{}", shown.len());
        // A class name of megabytes is cut too.
        let e = RemoteError::new("C".repeat(1 << 20), "");
        assert!(e.class.len() < MAX_REMOTE_TRACE + 64);
    }

    #[test]
    fn store_errors_name_table_and_row() {
        let remote = RemoteError::new("org.apache.hadoop.hbase.TableNotFoundException", "t");
        let e = NativeError::Remote(remote).into_store("t", Some(b"r1"), "get", "h:1");
        assert!(
            matches!(e, StoreError::TableNotFound { ref table } if table == "t"),
            "{e}"
        );
        let remote = RemoteError::new("java.io.IOException", "java.io.IOException: boom");
        let e = NativeError::Remote(remote).into_store("t", Some(b"r1"), "get", "h:1");
        assert_eq!(
            e.to_string(),
            "HBase failed get on table `t`: row r1: java.io.IOException: boom"
        );
        let e = NativeError::Timeout {
            endpoint: "h:1".into(),
            method: "Get",
            elapsed: Duration::from_millis(5),
            waiting_for: "the reply, nothing of it read".into(),
        }
        .into_store("t", None, "get", "h:1");
        assert!(matches!(e, StoreError::Timeout { .. }) && e.is_transient());
        assert_eq!(
            e.to_string(),
            "get on table `t` timed out after 5ms (Get on h:1, the reply, nothing of it read)"
        );
    }

    /// A misconfiguration is not transient: a retry loop keyed on
    /// `is_transient` must not try a bad keytab, a wrong principal or a
    /// refused protection level for ever. A KDC that cannot be reached, and
    /// a connection that broke, may pass.
    #[test]
    fn refused_settings_are_not_transient() {
        let kerberos = |failure| NativeError::from(SecurityError::kerberos("h:1", failure, "why"));
        for failure in [
            KerberosFailure::ServerPrincipalUnknown,
            KerberosFailure::ClientPrincipalUnknown,
            KerberosFailure::StaleKeytab,
            KerberosFailure::NoCredentials,
            KerberosFailure::KeytabUnreadable,
            KerberosFailure::KeytabInvalid,
            KerberosFailure::PrincipalNotInKeytab,
            KerberosFailure::Krb5Config,
            KerberosFailure::ProtectionRefused,
            KerberosFailure::AuthenticationRequired,
            KerberosFailure::ServerNotKerberos,
            KerberosFailure::Refused,
            KerberosFailure::Gssapi,
        ] {
            let e = kerberos(failure).into_store("", None, "connect", "");
            assert!(matches!(e, StoreError::Connection { .. }), "{e:?}");
            assert!(!e.is_transient(), "{failure:?}");
        }
        let e = kerberos(KerberosFailure::KdcUnreachable).into_store("", None, "connect", "");
        assert!(e.is_transient());
        let tls = NativeError::Tls {
            endpoint: "h:1".into(),
            reason: "the server's certificate is refused".into(),
        };
        assert!(!tls.into_store("t", None, "get", "h:1").is_transient());
        let zookeeper = NativeError::ZooKeeper(ZooKeeperError::Kerberos {
            server: "zk:2181".into(),
            znode: "/hbase/meta-region-server".into(),
            failure: KerberosFailure::ServerPrincipalUnknown,
            reason: "why".into(),
        });
        assert!(!zookeeper.into_store("", None, "connect", "").is_transient());
        let closed = NativeError::Closed {
            endpoint: "h:1".into(),
            reason: "reset".into(),
            sent: true,
        };
        assert!(closed.into_store("t", None, "get", "h:1").is_transient());
        let refused = NativeError::Connect {
            endpoint: "h:1".into(),
            cause: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert!(refused.into_store("t", None, "get", "h:1").is_transient());
    }
}
