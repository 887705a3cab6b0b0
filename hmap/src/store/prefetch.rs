//! A scan read one batch ahead of its caller, by a task of its own: what
//! the remote backends' scans share.

use std::future::Future;

use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Result, RowResult, RowStream, StoreError};

/// Where a prefetched scan's rows come from: a server-side scanner.
pub(crate) trait BatchSource: Send + 'static {
    /// The next rows, never an empty batch; `None` at the end. After an
    /// error it is not called again.
    fn next_batch(&mut self) -> impl Future<Output = Result<Option<Vec<RowResult>>>> + Send;

    /// Closes the server-side scanner, if it is still open.
    fn close(self) -> impl Future<Output = ()> + Send;
}

/// What the fetching task sends: a batch, or the end of the rows. The end
/// is said, not inferred from the channel closing: a channel also closes
/// when the task is dropped unfinished (its runtime shut down) or panics,
/// and that must not read as a scan that ended.
enum Fetched {
    Rows(Result<Vec<RowResult>>),
    End,
}

/// The rows of `source` (a scan of `table`) as a stream, read by a task of
/// its own one batch ahead of the caller (a channel of one batch between
/// them), so that the server works on the next batch while the caller
/// works through the current one. The task stops, and closes the scanner,
/// when the rows run out, a call fails, or the caller drops the stream
/// (noticed when the next batch is ready).
///
/// The stream hands out every row and ends, or ends with an error: should
/// the task be gone before it sent the end (the tokio runtime it was
/// spawned on shut down, or it panicked), the stream's last item is
/// [`StoreError::Interrupted`] naming `table`, never an early end.
pub(crate) fn prefetched<S: BatchSource>(table: &str, mut source: S) -> RowStream<'static> {
    let (batches, received) = mpsc::channel::<Fetched>(1);
    // The task's requests carry the caller's trace context and belong to
    // its span (the `hmap.store` span of the scan).
    let context = super::TraceContext::current();
    // And its call options (their timeout) for each fetch.
    let options = super::CallOptions::current();
    let task = async move {
        loop {
            let sent = match source.next_batch().await {
                Ok(Some(rows)) => batches.send(Fetched::Rows(Ok(rows))).await,
                Ok(None) => {
                    let _ = batches.send(Fetched::End).await;
                    break;
                }
                Err(e) => {
                    let _ = batches.send(Fetched::Rows(Err(e))).await;
                    break;
                }
            };
            if sent.is_err() {
                break; // the stream was dropped
            }
        }
        drop(batches);
        source.close().await;
    };
    let task = super::options::in_scope(options, task);
    tokio::spawn(super::trace::in_scope(context, task).in_current_span());
    let table = table.to_string();
    let rows = futures_util::stream::unfold(Some((received, std::vec::IntoIter::default())), move |state| {
        let table = table.clone();
        async move {
            let (mut received, mut batch) = state?;
            loop {
                if let Some(row) = batch.next() {
                    return Some((Ok(row), Some((received, batch))));
                }
                match received.recv().await {
                    Some(Fetched::Rows(Ok(rows))) => batch = rows.into_iter(),
                    Some(Fetched::Rows(Err(e))) => return Some((Err(e), None)),
                    Some(Fetched::End) => return None,
                    None => return Some((Err(gone(table)), None)),
                }
            }
        }
    });
    // Fused: an ended stream may be asked again.
    Box::pin(futures_util::StreamExt::fuse(rows))
}

/// The error of a scan whose fetching task is gone before its end.
fn gone(table: String) -> StoreError {
    StoreError::Interrupted {
        table,
        operation: "scan",
        message: "the task fetching the scan's rows is gone before the end of the rows (the tokio runtime it ran on \
                  shut down, or it panicked); the rows after those returned were not read: scan again from the \
                  last row returned, on a runtime that outlives the scan"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    /// `batches` batches of `rows` rows each, one fetch at a time with a
    /// yield in between, as a server-side scanner answers.
    struct Fake {
        table: &'static str,
        next: usize,
        batches: usize,
        rows: usize,
        fail_at: Option<usize>,
    }

    impl BatchSource for Fake {
        async fn next_batch(&mut self) -> Result<Option<Vec<RowResult>>> {
            tokio::task::yield_now().await;
            if self.fail_at == Some(self.next) {
                return Err(StoreError::Server {
                    service: "HBase",
                    table: self.table.into(),
                    operation: "scan",
                    message: "boom".into(),
                });
            }
            if self.next == self.batches {
                return Ok(None);
            }
            let first = self.next * self.rows;
            self.next += 1;
            Ok(Some(
                (first..first + self.rows)
                    .map(|i| RowResult::new(format!("r{i:05}"), Vec::new()))
                    .collect(),
            ))
        }

        async fn close(self) {}
    }

    fn fake(fail_at: Option<usize>) -> Fake {
        Fake {
            table: "orders",
            next: 0,
            batches: 50,
            rows: 100,
            fail_at,
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Every row, then the end: the fetching task's end is told apart from
    /// its loss.
    #[tokio::test]
    async fn a_scan_that_runs_to_its_end_ends() {
        let rows: Vec<_> = prefetched("orders", fake(None)).collect().await;
        assert_eq!(rows.len(), 5000);
        assert!(rows.iter().all(Result::is_ok));
    }

    /// A fetch's error is the stream's last item.
    #[tokio::test]
    async fn a_failed_fetch_ends_the_scan_with_its_error() {
        let rows: Vec<_> = prefetched("orders", fake(Some(3))).collect().await;
        assert_eq!(rows.len(), 301);
        assert!(matches!(rows.last(), Some(Err(StoreError::Server { .. }))));
    }

    /// The scan opened on runtime A, one row read, A shut down (its
    /// fetching task dropped with it), the rest read on runtime B: every
    /// row or an error naming the table, never a prefix that ends as if it
    /// were the whole scan.
    #[test]
    fn a_scan_whose_fetching_task_is_gone_fails_rather_than_ends() {
        let a = runtime();
        let mut rows = a.block_on(async { prefetched("orders", fake(None)) });
        let first = a.block_on(rows.next());
        assert!(matches!(first, Some(Ok(_))));
        drop(a);
        let b = runtime();
        let rest: Vec<_> = b.block_on(rows.collect());
        let read = 1 + rest.iter().filter(|r| r.is_ok()).count();
        match rest.last() {
            Some(Err(StoreError::Interrupted { table, .. })) => {
                assert_eq!(table, "orders");
                assert!(read < 5000, "{read} rows and an error");
            }
            other => panic!("{read} of 5000 rows, then {other:?}"),
        }
    }
}
