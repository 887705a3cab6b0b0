//! Asking a server once, on a connection of its own, what it speaks: the
//! first bytes it answers a hello with. NativeStore asks a server that
//! closed a plaintext connection whether it answers TLS
//! (`native/probe.rs`); ThriftStore asks a silent gateway whether it
//! answers SASL (`thrift/probe.rs`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The first `N` bytes `endpoint` answers `hello` with, on a new
/// connection, all within `timeout`: `None` when it refuses the
/// connection, resets or closes it, says fewer bytes, or stays silent.
pub(crate) async fn first_answer<const N: usize>(endpoint: &str, hello: &[u8], timeout: Duration) -> Option<[u8; N]> {
    let ask = async {
        let mut stream = TcpStream::connect(endpoint).await.ok()?;
        stream.write_all(hello).await.ok()?;
        let mut first = [0u8; N];
        stream.read_exact(&mut first).await.ok()?;
        Some(first)
    };
    tokio::time::timeout(timeout, ask).await.ok().flatten()
}
