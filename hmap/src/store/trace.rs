//! One `tracing` span per store call: `hmap.store`, with the backend, the
//! operation, the table, the rows asked for, the cells returned, the time it
//! took and its outcome; and the same call's metrics (see
//! [`metrics`](super::metrics)), so that every backend reports them from
//! this one place. Free when no subscriber listens and the `metrics`
//! feature is off: the span is disabled and the call runs as it is.

use std::future::Future;
use std::sync::Arc;

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
impl Counted for super::BatchOutcome {}
impl Counted for Vec<Result<Option<RowResult>, super::StoreError>> {}

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

impl Counted for RowResult {
    fn cells(&self) -> usize {
        self.cells.len()
    }
}

impl Counted for Vec<Option<RowResult>> {
    fn cells(&self) -> usize {
        self.iter().map(Counted::cells).sum()
    }
}

/// A W3C Trace Context (`traceparent`, and `tracestate` if any) that
/// [`NativeStore`](crate::store::native::NativeStore) sends in each
/// request's header (`RequestHeader.trace_info`), so that a service's
/// trace continues into HBase's: HBase 2.5 and later, with OpenTelemetry
/// tracing on, record their spans of the call under it. The other
/// backends have no place for it in their protocols and send nothing.
///
/// It reaches NativeStore in one of two ways, neither of which ties hmap
/// to an OpenTelemetry version:
/// - [`TraceContext::scope`]: the calls made inside a future carry the
///   context (a service that took a `traceparent` from its own request
///   hands it on as it is);
/// - [`NativeConfig::trace_context`](crate::store::native::NativeConfig::trace_context):
///   a function asked at each request, which can read the current
///   `tracing` span's OpenTelemetry context (see `docs/observability.md`).
///
/// A scope wins over the function.
///
/// ```
/// use hmap::store::TraceContext;
///
/// let context = TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
///     .expect("a valid traceparent")
///     .with_tracestate("congo=t61rcWkgMzE");
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let seen = context
///     .clone()
///     .scope(async { TraceContext::current() })
///     .await;
/// assert_eq!(seen, Some(context));
/// assert_eq!(TraceContext::current(), None);
/// # });
/// assert_eq!(TraceContext::from_traceparent("not a traceparent"), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

tokio::task_local! {
    static CURRENT: TraceContext;
}

impl TraceContext {
    /// The context a `traceparent` header names
    /// (`{version}-{trace-id}-{parent-id}-{flags}`, lowercase hex, as the
    /// W3C Trace Context spec writes it), or `None` if it is not one: a
    /// trace or parent id of zeros, version `ff`, or another shape.
    pub fn from_traceparent(traceparent: &str) -> Option<Self> {
        let parts: Vec<&str> = traceparent.splitn(5, '-').collect();
        let hex = |part: &str, len: usize| {
            part.len() == len && part.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        let zeros = |part: &str| part.bytes().all(|b| b == b'0');
        let valid = match parts.as_slice() {
            [version, trace, parent, flags, rest @ ..] => {
                hex(version, 2)
                    && *version != "ff"
                    && hex(trace, 32)
                    && !zeros(trace)
                    && hex(parent, 16)
                    && !zeros(parent)
                    && hex(flags, 2)
                    // Version 00 has exactly four parts; later versions may
                    // add more, which a reader of 00 ignores.
                    && (rest.is_empty() || *version != "00")
            }
            _ => false,
        };
        valid.then(|| TraceContext {
            traceparent: traceparent.to_string(),
            tracestate: None,
        })
    }

    /// Adds a `tracestate` (vendors' entries, sent as given); an empty one
    /// is not sent.
    pub fn with_tracestate(mut self, tracestate: impl Into<String>) -> Self {
        let tracestate = tracestate.into();
        self.tracestate = (!tracestate.is_empty()).then_some(tracestate);
        self
    }

    /// The `traceparent` header's value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` header's value, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// Runs `future` with this context as the current one: the NativeStore
    /// requests it makes, and those of the scans it starts, carry it.
    pub async fn scope<F: Future>(self, future: F) -> F::Output {
        CURRENT.scope(self, future).await
    }

    /// The context of the [`scope`](Self::scope) the caller runs in, if any.
    pub fn current() -> Option<TraceContext> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Calls `f` on the current scope's context, if any, without a copy.
    #[cfg(feature = "native")]
    pub(crate) fn with_current<R>(f: impl FnOnce(&TraceContext) -> R) -> Option<R> {
        CURRENT.try_with(f).ok()
    }
}

/// Runs `future` in `context`'s scope, if there is one: a task spawned for
/// a call (a scan's prefetch) keeps its caller's context.
#[cfg(any(feature = "thrift", feature = "native"))]
pub(crate) async fn in_scope<F: Future>(context: Option<TraceContext>, future: F) -> F::Output {
    match context {
        Some(context) => context.scope(future).await,
        None => future.await,
    }
}

/// A function that gives the trace context of the request about to be
/// sent (see [`NativeConfig::trace_context`](crate::store::native::NativeConfig::trace_context));
/// cheap to clone.
#[derive(Clone)]
pub struct TraceContextSource(Arc<dyn Fn() -> Option<TraceContext> + Send + Sync>);

impl TraceContextSource {
    /// A source that asks `source` at each request.
    pub fn new(source: impl Fn() -> Option<TraceContext> + Send + Sync + 'static) -> Self {
        TraceContextSource(Arc::new(source))
    }

    /// The context for the request about to be sent.
    pub fn get(&self) -> Option<TraceContext> {
        (self.0)()
    }
}

impl std::fmt::Debug for TraceContextSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceContextSource(..)")
    }
}
