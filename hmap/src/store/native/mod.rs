//! NativeStore's layers: HBase's own RPC protocol, spoken directly to the
//! masters and region servers, with no gateway in between (feature `native`).
//!
//! From the bottom up, each file one job:
//! - [`proto`]: the protobuf messages of the protocol (prost, written by hand);
//! - [`codec`]: the wire format without IO: preamble, frames, cell blocks;
//! - [`error`]: typed errors, HBase's exceptions by kind;
//! - [`connection`]: one multiplexed tokio connection per server and service;
//! - [`locate`]: the connection registry (`ClientMetaService`) and region
//!   lookups in `hbase:meta`;
//! - [`client`]: [`NativeClient`], async get, mutate and scan on hmap's own types.

pub mod client;
pub mod codec;
pub mod connection;
pub mod convert;
pub mod error;
pub mod locate;
pub mod proto;

#[cfg(test)]
mod proto_check;

pub use client::{NativeConfig, NativeStore};
pub use error::{ExceptionKind, NativeError, RemoteError};
