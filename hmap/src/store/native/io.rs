//! What the connection and HBase's SASL handshake before it do alike on
//! a socket.

use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Writes `bytes` and flushes them out: TLS may hold back part of what
/// a write took until it is flushed.
pub(crate) async fn write_and_flush(writer: &mut (impl AsyncWrite + Unpin), bytes: &[u8]) -> std::io::Result<()> {
    writer.write_all(bytes).await?;
    writer.flush().await
}
