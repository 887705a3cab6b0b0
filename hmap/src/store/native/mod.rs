//! NativeStore's layers: HBase's own RPC protocol, spoken directly to the
//! masters and region servers, with no gateway in between (feature `native`).
//!
//! From the bottom up, each file one job:
//! - [`proto`]: the protobuf messages of the protocol (prost, written by hand,
//!   checked field by field against HBase's `.proto` files);
//! - [`codec`]: the wire format without IO: preamble, frames, cell blocks;
//! - [`error`]: typed errors, HBase's exceptions by kind;
//! - [`connection`]: one multiplexed tokio connection per server and service;
//! - [`locate`]: where `hbase:meta` and a row's region are;
//! - [`convert`]: hmap's types to and from the protobuf messages;
//! - [`client`]: [`NativeStore`], async get, mutate and scan on hmap's own types;
//! - `batch`: many gets or row mutations in one `Multi` call per region server.
//!
//! `NativeStore` does not implement [`Store`](crate::store::Store) yet: its
//! `async fn`s take and return the types `Store` uses, so that the
//! implementation will be a thin adapter once `Store` is async.
//!
//! ```no_run
//! use hmap::store::Get;
//! use hmap::store::native::{NativeConfig, NativeStore};
//!
//! # async fn run() -> Result<(), hmap::store::StoreError> {
//! // The active master's address (`scripts/hbase/hbase address` prints it).
//! let store = NativeStore::connect(NativeConfig::new(["127.0.0.1:16000"])).await?;
//! let row = store.get("user", &Get::new("u1")).await?;
//! # Ok(())
//! # }
//! ```

mod batch;
pub mod client;
pub mod codec;
pub mod connection;
pub mod convert;
pub mod error;
pub mod locate;
pub mod proto;

#[cfg(test)]
mod proto_check;

pub use client::{NativeConfig, NativeScanner, NativeStore};
pub use error::{ExceptionKind, NativeError, RemoteError};
