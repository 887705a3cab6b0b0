//! One `tracing` span per store call: `hmap.store`, with the backend, the
//! operation, the table, the rows asked for, the cells returned, the time it
//! took and its outcome; and the same call's metrics (see
//! [`metrics`](super::metrics)), so that every backend reports them from
//! this one place. Free when no subscriber listens and the `metrics`
//! feature is off: the span is disabled and the call runs as it is.

use std::future::Future;

use tracing::Instrument;
use tracing::field::Empty;

use super::{Result, RowResult, RowStream, metrics};
use crate::schema::TableSchema;

/// Runs `call` in its span, and records how it went.
pub(crate) async fn traced<T: Counted>(
    backend: &'static str,
    operation: &'static str,
    table: &str,
    rows: usize,
    call: impl Future<Output = Result<T>>,
) -> Result<T> {
    let span = tracing::debug_span!(
        "hmap.store",
        backend,
        operation,
        table,
        rows,
        cells = Empty,
        elapsed_us = Empty,
        outcome = Empty
    );
    let spanned = !span.is_disabled();
    if !spanned && !metrics::ENABLED {
        return call.await;
    }
    let started = std::time::Instant::now();
    let result = if spanned {
        call.instrument(span.clone()).await
    } else {
        call.await
    };
    let elapsed = started.elapsed();
    metrics::call(backend, operation, elapsed, result.as_ref().err());
    if !spanned {
        return result;
    }
    span.record("elapsed_us", u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX));
    match &result {
        Ok(value) => {
            span.record("cells", value.cells());
            span.record("outcome", "ok");
        }
        Err(e) => {
            span.record("outcome", tracing::field::display(e));
        }
    }
    result
}

/// How many cells a call's answer holds, for its span.
pub(crate) trait Counted {
    fn cells(&self) -> usize {
        0
    }
}

impl Counted for () {}
impl Counted for bool {}
impl Counted for Vec<String> {}
impl Counted for TableSchema {}
impl Counted for RowStream<'_> {}

impl Counted for Vec<i64> {
    fn cells(&self) -> usize {
        self.len()
    }
}

impl Counted for Option<RowResult> {
    fn cells(&self) -> usize {
        self.as_ref().map_or(0, |r| r.cells.len())
    }
}

impl Counted for Vec<Option<RowResult>> {
    fn cells(&self) -> usize {
        self.iter().map(Counted::cells).sum()
    }
}
