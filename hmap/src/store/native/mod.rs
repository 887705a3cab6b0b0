//! NativeStore's layers: HBase's own RPC protocol, spoken directly to the
//! masters and region servers, with no gateway in between (feature `native`).
//!
//! From the bottom up, each file one job, and each uses only files listed
//! before it (`import_check.rs`, a test, keeps them free of circles):
//! - [`proto`]: the protobuf messages of the protocol (prost, written by hand,
//!   checked field by field against HBase's `.proto` files);
//! - [`error`]: typed errors, HBase's exceptions by kind, the ZooKeeper
//!   registry's errors;
//! - [`codec`]: the wire format without IO: preamble, frames, cell blocks;
//! - [`bound`]: how much memory a reply may take decoded, checked before
//!   it is decoded;
//! - `filter`: hmap's filters as HBase's filter messages;
//! - `random`: numbers that differ from call to call (nonces, jitter);
//! - `io`: what the connection and the SASL handshakes do alike on a socket;
//! - `retry`: the retry policy every call shares: what each of HBase's
//!   "not here, not yet" answers means, the pauses between tries
//!   ([`RetryPolicy`]), which writes may be sent again, and the deadline's
//!   error;
//! - `tls` (feature `tls`): HBase 2.6's RPC over TLS and mutual TLS: the
//!   TLS socket, and what a refused handshake means for HBase's settings
//!   ([`NativeConfig::tls`](client::NativeConfig), configured by
//!   `security::Tls`);
//! - `rpc_sasl` (feature `kerberos`): HBase's SASL GSSAPI handshake on the
//!   RPC wire: the Kerberos preamble and HBase's framing of the tokens
//!   (`NativeConfig::kerberos`, see [Kerberos](#kerberos)); the GSSAPI
//!   steps, the credentials and the protection levels are
//!   [`crate::security`]'s, shared with the Thrift backends;
//! - [`connection`]: one multiplexed tokio connection per server and service,
//!   over TCP or TLS;
//! - [`zookeeper`]: the ZooKeeper registry, for clusters before HBase 2.5
//!   (where `hbase:meta` and the master are, from HBase's znodes);
//! - [`locate`]: where `hbase:meta` and a row's region are, read from the
//!   registry's and `hbase:meta`'s answers;
//! - [`convert`]: hmap's types to and from the protobuf messages, and a
//!   scan reply's cells by row;
//! - [`client`]: [`NativeStore`] and [`NativeConfig`]: the handle, what its
//!   clones share (connections, the region cache), and a call to one server;
//! - `registry`: `NativeStore::connect`, the cluster's id and where
//!   `hbase:meta` is, asked of the bootstrap servers or ZooKeeper;
//! - `regions`: the region cache, its `hbase:meta` lookups, and what a
//!   failed try means for it;
//! - `call`: a call to a row's region, with retries inside its deadline;
//! - `batch`: many gets or row mutations in one `Multi` call per region server;
//! - `rows`: get, mutate, check-and-mutate, increment and append on hmap's
//!   own types, as region calls and batches;
//! - `scan`: scanners, region by region, resumed where a region moved;
//! - `admin`: tables created, deleted, truncated, altered and described
//!   through the master (`MasterService`), waiting for its procedures;
//! - `store`: `impl Store for NativeStore`, with the checks every backend
//!   makes before a request leaves.
//!
//! [`NativeStore`] implements [`Store`](crate::store::Store): the typed
//! layer, the relations and the blocking API run on it as on any backend.
//!
//! # Deadlines and connections
//! - `connect` has one deadline, [`NativeConfig::call_timeout`], for the
//!   whole bootstrap: the servers (or the ZooKeeper quorum's members) are
//!   tried in order, each given an equal share of the time left. When none
//!   answers, the error says how long the connect took (`connect timed out
//!   after ...`) and what each server did.
//! - Every later call has one deadline too, covering the region lookup,
//!   the dial and every retry.
//! - A connection is retired, and the next call dials a fresh one, when it
//!   breaks (the server closes it, a socket error, a reply that does not
//!   decode), when its reader or writer task stops (cancelled, panicked,
//!   or dropped with the tokio runtime it was dialled on: one store can
//!   serve several runtimes in turn, as one store shared by several
//!   `#[tokio::test]` functions does), and when a call times out while a
//!   reply is stalled half read. The calls waiting on a retired connection
//!   fail with a typed connection error at once, never hang; a call is
//!   tried again within its deadline if applying it twice does no harm
//!   (reads, puts, deletes up to a time, increments, which carry nonces),
//!   not otherwise (a check-and-mutate, a delete of the newest version:
//!   their error says they may have been applied). NativeStore keeps no
//!   other long-lived task: the region cache is plain data, and a
//!   ZooKeeper session lives for one lookup.
//! - A server that dies, stops, restarts or no longer serves a region,
//!   and a master failing over, are waited for within the deadline as
//!   HBase's Java client waits for them (the `retry` room,
//!   [`RetryPolicy`], and `docs/reliability.md`).
//!
//! # Bounds on what a server sends
//! A server's reply is read and decoded within bounds, so that a broken
//! or hostile server cannot make NativeStore hold memory out of
//! proportion to what it sent:
//! - a reply frame is at most [`ConnectionConfig::max_frame`](connection::ConnectionConfig::max_frame)
//!   bytes (256 MiB by default); room for it is made as its bytes arrive
//!   (1 MiB at a time), not when its length is announced;
//! - a reply's message takes at most 10 times its bytes plus 256 KiB
//!   decoded, or is refused undecoded with [`NativeError::InvalidReply`]
//!   ([`bound`] walks it first: an empty `RegionLocation` is 2 bytes on the
//!   wire and 208 decoded); its counts must make sense for the call (at
//!   most 256 `hbase:meta` locations, no empty table name in
//!   `list_tables`, at most one descriptor for one table);
//! - a cell block is decoded only for the replies that carry cells (get,
//!   mutate, scan, multi), into a vector of its size (144 bytes a cell for
//!   at least 24 on the wire); one attached to an admin reply is refused
//!   undecoded;
//! - a server's exception text is cut to a readable length (message 1 KiB,
//!   class and stack trace 64 KiB, saying how much was cut);
//! - a connection lets go of a large reply's buffer once the reply is
//!   taken off (even a late reply to a call that timed out), and a broken
//!   connection of all of its buffers.
//!
//! Cells are slices of the reply they came in (no copy): a row kept from
//! a reply keeps that reply's bytes.
//!
//! ```no_run
//! use hmap::schema::{FamilySchema, TableSchema};
//! use hmap::store::native::{NativeConfig, NativeStore};
//! use hmap::store::{Get, RowMutation, Store};
//!
//! # async fn run() -> Result<(), hmap::store::StoreError> {
//! // A master or region server of HBase 2.5 or later (`scripts/hbase/hbase
//! // address` prints the local one's).
//! let store = NativeStore::connect(NativeConfig::new(["127.0.0.1:16000"])).await?;
//! store.create_table(&TableSchema::new("user").family(FamilySchema::new("i"))).await?;
//! store.mutate("user", &[RowMutation::new("u1").put("i", "name", "Ann")]).await?;
//! let row = store.get("user", &Get::new("u1")).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Kerberos
//! With the feature `kerberos`, [`NativeConfig::kerberos`](client::NativeConfig)
//! authenticates every connection as HBase's Java client does on a cluster
//! with `hbase.security.authentication=kerberos`: the preamble asks for
//! Kerberos (auth code 81), GSSAPI tokens are exchanged (`sasl` has the
//! bytes), then the security layer the server's `hbase.rpc.protection` and
//! `Kerberos::protection` agree on: `authentication` leaves messages
//! as they are, `integrity` and `privacy` wrap every message in both
//! directions (signed, and encrypted for privacy), the connection header
//! included. Inside TLS too. The handshake counts against the call's
//! deadline like the dial; credentials come from a keytab (re-acquired
//! before the ticket ends) or the ticket cache; every refusal is a
//! [`NativeError::Security`] holding a
//! [`SecurityError`](crate::security::SecurityError) with a
//! `KerberosFailure` that names what to
//! change (and the `SecurityError` is the cause of the `StoreError`, as
//! with the Thrift backends). `Kerberos`,
//! `Protection` and the GSSAPI calls live in
//! [`crate::security`]: GSSAPI is MIT Kerberos' `libgssapi_krb5`, called
//! through hmap's own declarations: why, and what it costs to build, is in
//! the docs of `security/kerberos.rs`. MIT Kerberos reads `krb5.conf` from `KRB5_CONFIG`.
//!
//! ```no_run
//! # #[cfg(feature = "kerberos")]
//! # async fn run() -> Result<(), hmap::store::StoreError> {
//! use hmap::security::{Kerberos, Protection};
//! use hmap::store::native::{NativeConfig, NativeStore};
//!
//! let kerberos = Kerberos::keytab("app@EXAMPLE.COM", "/etc/security/keytabs/app.keytab")
//!     .server_principal("hbase/_HOST@EXAMPLE.COM")
//!     .protection([Protection::Privacy, Protection::Integrity]);
//! let store = NativeStore::connect(NativeConfig::new(["master.example.com:16000"]).kerberos(kerberos)).await?;
//! # Ok(())
//! # }
//! ```
//!
//! A cluster older than HBase 2.5 (no `ClientMetaService`) is found
//! through its ZooKeeper quorum instead, as the Java client's
//! `ZKConnectionRegistry` finds it:
//!
//! ```no_run
//! use hmap::store::native::{NativeConfig, NativeStore};
//!
//! # async fn run() -> Result<(), hmap::store::StoreError> {
//! let config = NativeConfig::zookeeper("zk1:2181,zk2:2181,zk3:2181").znode_parent("/hbase");
//! let store = NativeStore::connect(config).await?;
//! # Ok(())
//! # }
//! ```

mod admin;
mod batch;
pub mod bound;
mod call;
pub mod client;
pub mod codec;
pub mod connection;
pub mod convert;
pub mod error;
pub(crate) mod filter;
pub(crate) mod io;
pub mod locate;
pub mod proto;
mod random;
mod regions;
mod registry;
mod retry;
mod rows;
#[cfg(feature = "kerberos")]
mod rpc_sasl;
mod scan;
mod store;
#[cfg(feature = "tls")]
mod tls;
pub mod zookeeper;

#[cfg(test)]
mod cluster_tests;
#[cfg(test)]
mod import_check;
#[cfg(test)]
mod proto_check;
#[cfg(test)]
mod trace_tests;

pub use client::{NativeConfig, NativeStore};
pub use error::{ExceptionKind, NativeError, RemoteError, ZooKeeperError};
pub use retry::{RETRY_BACKOFF, RetryPolicy};
pub use zookeeper::ZooKeeperRegistry;

// The names security had while it lived here, kept for one release.
#[doc(hidden)]
pub use crate::security::KerberosFailure;
#[cfg(feature = "kerberos")]
#[doc(hidden)]
pub use crate::security::Protection;
/// Renamed [`hmap::security::Kerberos`](crate::security::Kerberos): one
/// Kerberos for every backend.
#[cfg(feature = "kerberos")]
#[deprecated(note = "renamed hmap::security::Kerberos")]
pub type NativeKerberos = crate::security::Kerberos;
/// Renamed [`hmap::security::Tls`](crate::security::Tls): one TLS
/// configuration for every backend.
#[cfg(feature = "tls")]
#[deprecated(note = "renamed hmap::security::Tls")]
pub type NativeTls = crate::security::Tls;
/// Moved: the carrier-neutral bytes are [`hmap::security::sasl`](crate::security::sasl)'s,
/// HBase's RPC framing of the tokens NativeStore's own.
#[cfg(feature = "kerberos")]
#[deprecated(note = "moved to hmap::security::sasl")]
pub mod sasl {
    pub use super::rpc_sasl::{KERBEROS_PREAMBLE, SWITCH_TO_SIMPLE_AUTH, ServerReply, encode_token, parse_reply};
    pub use crate::security::sasl::*;
}
