//! Bigtable's gRPC statuses as [`StoreError`]s, and the features
//! BigtableStore refuses with [`StoreError::Unsupported`].

use std::time::Duration;

use tonic::{Code, Status};

use crate::store::StoreError;

/// The backend name in [`StoreError::Unsupported`].
pub(crate) const BACKEND: &str = "BigtableStore";

/// What BigtableStore refuses with [`StoreError::Unsupported`] (its
/// `feature`), before anything is sent: what Bigtable cannot store or do as
/// HBase does. `docs/bigtable.md` says why for each.
pub mod unsupported {
    /// A family's `MIN_VERSIONS`: the Java adapter writes it as an
    /// intersection GC rule, but reads would have to hide expired versions
    /// beyond the minimum themselves (GC is lazy), which BigtableStore does
    /// not do yet.
    pub const MIN_VERSIONS: &str = "MIN_VERSIONS";
    /// A family's `COMPRESSION`: Bigtable compresses as it sees fit. This
    /// and the next three are dropped instead with
    /// `BigtableConfig::ignore_storage_options`.
    pub const COMPRESSION: &str = "COMPRESSION";
    /// A family's `BLOOMFILTER` other than HBase's default (`ROW`).
    pub const BLOOM: &str = "BLOOMFILTER";
    /// A family's `BLOCKSIZE` other than HBase's default (64 KiB).
    pub const BLOCK_SIZE: &str = "BLOCKSIZE";
    /// A family's `IN_MEMORY` or `BLOCKCACHE` other than HBase's default.
    pub const CACHING: &str = "IN_MEMORY or BLOCKCACHE";
    /// A delete of a column's newest version (no timestamp): Bigtable deletes
    /// by time range only (Google's HBase adapter refuses it too: "Cannot
    /// delete single latest cell").
    pub const DELETE_LATEST: &str = "a delete of the newest version of a column";
}

/// A gRPC status as the store's error; `operation` is the RPC, `table` the
/// table it was about (empty for none), `endpoint` the server, `elapsed`
/// how long the call waited (a `Timeout`'s).
pub(crate) fn from_status(
    status: &Status,
    operation: &'static str,
    table: &str,
    endpoint: &str,
    elapsed: Duration,
) -> StoreError {
    let message = status.message().to_string();
    if deadline_expired(status) {
        // tonic's own deadline (the request's `grpc-timeout`), which races
        // the store's timer around the call: the same timeout either way.
        return StoreError::Timeout {
            table: table.into(),
            operation,
            elapsed,
            detail: String::new(),
        };
    }
    if from_transport(status) {
        // tonic's own message says little ("transport error", "h2
        // protocol error: error reading a body from connection"): the
        // causes say what broke.
        let mut causes = String::new();
        let mut source = std::error::Error::source(status);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !message.ends_with(&text) && !causes.ends_with(&text) {
                causes.push_str(": ");
                causes.push_str(&text);
            }
            source = cause.source();
        }
        return StoreError::Connection {
            endpoint: endpoint.into(),
            message: format!(
                "{operation}: {message}{causes} (the connection could not be made or broke: is the server up, \
                 and does it speak TLS as BigtableConfig::tls says? Cloud Bigtable does, the emulator does not)"
            ),
            cause: Some(Box::new(status.clone())),
        };
    }
    match status.code() {
        Code::NotFound if !table.is_empty() => StoreError::TableNotFound { table: table.into() },
        Code::AlreadyExists if !table.is_empty() => StoreError::TableExists { table: table.into() },
        // The emulator answers a write to a family the table lacks with
        // UNKNOWN "unknown family \"x\"".
        _ if message.contains("unknown family") => StoreError::NoSuchFamily {
            table: table.into(),
            family: quoted(&message).unwrap_or("?").to_string(),
        },
        Code::DeadlineExceeded => StoreError::Timeout {
            table: table.into(),
            operation,
            elapsed,
            detail: format!("Bigtable answered DEADLINE_EXCEEDED: {message}"),
        },
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => StoreError::InvalidRequest {
            table: table.into(),
            reason: format!("{operation}: {message}"),
        },
        // A reply tonic could not decode (its own INTERNAL statuses): the
        // server broke gRPC's framing or sent another message.
        Code::Internal if tonic_decode_failure(&message) => StoreError::Protocol {
            endpoint: endpoint.into(),
            table: table.into(),
            operation,
            message,
        },
        Code::Unauthenticated => StoreError::Connection {
            endpoint: endpoint.into(),
            message: format!(
                "{operation}: the server refused the call's credentials (UNAUTHENTICATED: {message}); \
                 Cloud Bigtable needs an access token: see BigtableConfig::credentials"
            ),
            cause: Some(Box::new(status.clone())),
        },
        Code::PermissionDenied => StoreError::Server {
            service: "Bigtable",
            table: table.into(),
            operation,
            message: format!(
                "PermissionDenied: {message} (the credentials' account needs an IAM role on the instance: \
                 roles/bigtable.user to read and write, roles/bigtable.admin for tables)"
            ),
        },
        Code::Unavailable | Code::Cancelled => StoreError::Connection {
            endpoint: endpoint.into(),
            message: format!("{operation}: {message}"),
            cause: Some(Box::new(status.clone())),
        },
        // tonic reports a reply it cannot decode as INTERNAL with its own
        // message; the server's INTERNAL is a server error like the rest.
        code => StoreError::Server {
            service: "Bigtable",
            table: table.into(),
            operation,
            message: format!("{code:?}: {message}"),
        },
    }
}

/// Whether the status is the client's own transport failing: tonic wraps
/// a connection that could not be made, or that broke under the call
/// (before the reply, or in the middle of a streamed one: an HTTP/2 reset
/// or GOAWAY, a closed socket), as a status with the transport's error as
/// its source (`tonic::transport::Error`, hyper's or h2's); a status the
/// server sent has none, and neither has one tonic made of a reply it
/// could not decode. tonic's own deadline is not one: the call was not
/// cut off by the connection, and is not retried.
pub(crate) fn from_transport(status: &Status) -> bool {
    std::error::Error::source(status).is_some() && !deadline_expired(status)
}

/// Whether the status is tonic's own deadline expiring on the client
/// (CANCELLED "Timeout expired", with [`tonic::TimeoutExpired`] as its
/// source), not a status the server sent.
fn deadline_expired(status: &Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(cause) = source {
        if cause.is::<tonic::TimeoutExpired>() {
            return true;
        }
        source = cause.source();
    }
    false
}

/// Whether an INTERNAL status's message is one tonic makes of a reply it
/// cannot decode (a message prost refuses, a stream that ends inside a
/// frame, a frame gRPC does not allow), or [`super::framing`]'s of a
/// message cut short.
fn tonic_decode_failure(message: &str) -> bool {
    message.starts_with("failed to decode Protobuf message")
        || message.starts_with("Unexpected EOF decoding stream")
        || message.starts_with("protocol error: received message with")
        || message.starts_with(super::framing::CUT_SHORT)
}

/// The first double-quoted word of a message.
fn quoted(message: &str) -> Option<&str> {
    let rest = message.split_once('"')?.1;
    Some(rest.split_once('"')?.0)
}

/// The reply broke Bigtable's protocol (a bad chunk sequence, a response
/// without what it must carry).
pub(crate) fn protocol(endpoint: &str, table: &str, operation: &'static str, message: impl Into<String>) -> StoreError {
    StoreError::Protocol {
        endpoint: endpoint.into(),
        table: table.into(),
        operation,
        message: message.into(),
    }
}

/// Refused before anything was sent.
pub(crate) fn refuse(table: &str, feature: &'static str) -> StoreError {
    StoreError::Unsupported {
        backend: BACKEND,
        feature,
        table: table.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tonic's own deadline is the store's timeout, not a broken
    /// connection, and is not retried as one.
    #[test]
    fn tonics_deadline_is_a_timeout() {
        let status = Status::from_error(Box::new(tonic::TimeoutExpired(())));
        assert!(!from_transport(&status));
        let e = from_status(&status, "ReadRows", "t", "127.0.0.1:1", Duration::from_millis(300));
        assert!(
            matches!(&e, StoreError::Timeout { table, operation: "ReadRows", elapsed, .. } if table == "t" && *elapsed == Duration::from_millis(300)),
            "{e:?}"
        );
    }

    #[test]
    fn statuses_map_to_typed_errors() {
        let e = |code, msg: &str| {
            from_status(
                &Status::new(code, msg),
                "ReadRows",
                "t",
                "127.0.0.1:1",
                Duration::from_millis(1500),
            )
        };
        assert!(
            matches!(e(Code::NotFound, "table \"x\" not found"), StoreError::TableNotFound { table } if table == "t")
        );
        assert!(matches!(
            e(Code::AlreadyExists, "exists"),
            StoreError::TableExists { .. }
        ));
        assert!(
            matches!(e(Code::Unknown, "unknown family \"zz\""), StoreError::NoSuchFamily { family, .. } if family == "zz")
        );
        assert!(matches!(
            e(Code::InvalidArgument, "row key empty"),
            StoreError::InvalidRequest { .. }
        ));
        assert!(matches!(e(Code::Unavailable, "down"), StoreError::Connection { .. }));
        assert!(matches!(
            e(Code::Internal, "failed to decode Protobuf message: invalid wire type"),
            StoreError::Protocol { .. }
        ));
        assert!(matches!(
            e(Code::Internal, "Unexpected EOF decoding stream."),
            StoreError::Protocol { .. }
        ));
        assert!(matches!(
            e(Code::Internal, "the server broke"),
            StoreError::Server { .. }
        ));
        assert!(
            matches!(e(Code::Unauthenticated, "no token"), StoreError::Connection { message, .. } if message.contains("BigtableConfig::credentials"))
        );
        assert!(
            matches!(e(Code::PermissionDenied, "denied"), StoreError::Server { message, .. } if message.contains("roles/bigtable.user"))
        );
        assert!(
            matches!(e(Code::DeadlineExceeded, "late"), StoreError::Timeout { elapsed, .. } if elapsed == Duration::from_millis(1500))
        );
        // A stream broken under the call (its status carries the
        // transport's error) is a broken connection, whatever its code.
        let broken = Status::from_error(Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "connection reset by peer",
        )));
        assert!(std::error::Error::source(&broken).is_some());
        assert!(matches!(
            from_status(&broken, "ReadRows", "t", "127.0.0.1:1", Duration::ZERO),
            StoreError::Connection { .. }
        ));
        let unknown = e(Code::Unknown, "invalid timestamp 1");
        assert!(matches!(unknown, StoreError::Server { .. }));
        // Bigtable failed, not HBase.
        assert!(unknown.to_string().starts_with("Bigtable failed "), "{unknown}");
    }
}
