//! A scan read one batch ahead of its caller, by a task of its own: what
//! the remote backends' scans share.

use std::future::Future;

use tokio::sync::mpsc;

use super::{Result, RowResult, RowStream};

/// Where a prefetched scan's rows come from: a server-side scanner.
pub(crate) trait BatchSource: Send + 'static {
    /// The next rows, never an empty batch; `None` at the end. After an
    /// error it is not called again.
    fn next_batch(&mut self) -> impl Future<Output = Result<Option<Vec<RowResult>>>> + Send;

    /// Closes the server-side scanner, if it is still open.
    fn close(self) -> impl Future<Output = ()> + Send;
}

/// The rows of `source` as a stream, read by a task of its own one batch
/// ahead of the caller (a channel of one batch between them), so that the
/// server works on the next batch while the caller works through the
/// current one. The task stops, and closes the scanner, when the rows run
/// out, a call fails, or the caller drops the stream (noticed when the next
/// batch is ready).
pub(crate) fn prefetched<S: BatchSource>(mut source: S) -> RowStream<'static> {
    let (batches, received) = mpsc::channel::<Result<Vec<RowResult>>>(1);
    tokio::spawn(async move {
        loop {
            let sent = match source.next_batch().await {
                Ok(Some(rows)) => batches.send(Ok(rows)).await,
                Ok(None) => break,
                Err(e) => {
                    let _ = batches.send(Err(e)).await;
                    break;
                }
            };
            if sent.is_err() {
                break; // the stream was dropped
            }
        }
        drop(batches);
        source.close().await;
    });
    let rows = futures_util::stream::unfold(
        (received, std::vec::IntoIter::default()),
        |(mut received, mut batch)| async move {
            loop {
                if let Some(row) = batch.next() {
                    return Some((Ok(row), (received, batch)));
                }
                match received.recv().await? {
                    Ok(rows) => batch = rows.into_iter(),
                    Err(e) => return Some((Err(e), (received, Vec::new().into_iter()))),
                }
            }
        },
    );
    Box::pin(futures_util::StreamExt::fuse(rows))
}
