//! A synchronous API over hmap's async core, for programs without an async
//! runtime: each call waits for the async one on a runtime that hmap owns,
//! as the `postgres` crate wraps `tokio-postgres`.
//!
//! The types mirror the async ones: [`Table`] for
//! [`crate::Table`], [`Store`] for any [`crate::store::Store`], and
//! [`relation`]'s helpers for [`crate::relation`]'s.
//!
//! ```
//! use hmap::blocking::Table;
//! use hmap::store::MemoryStore;
//! use hmap::HTable;
//!
//! #[derive(HTable, Debug, PartialEq)]
//! #[hmap(table = "user", family(name = "i"))]
//! struct User {
//!     #[hmap(key)]
//!     id: String,
//!     #[hmap(family = "i")]
//!     name: String,
//! }
//!
//! let users = Table::<User, _>::new(MemoryStore::new());
//! users.create()?;
//! users.put(&User { id: "u1".into(), name: "Ann".into() })?;
//! assert_eq!(users.get("u1")?.map(|u| u.name).as_deref(), Some("Ann"));
//! # Ok::<(), hmap::Error>(())
//! ```
//!
//! The runtime is one multi-threaded tokio runtime per process (two worker
//! threads named `hmap-blocking`), started on first use; scanners and the
//! fan-out worker run their background tasks on it.
//!
//! Inside a tokio runtime, use the async API. The blocking API still
//! answers there, the same on every store (MemoryStore included, so that
//! tests on it see what a remote store does): on a multi-thread runtime a
//! call waits in [`tokio::task::block_in_place`] and works; on a
//! current-thread runtime (a plain `#[tokio::test]`) it does nothing and
//! fails with [`StoreError::BlockingInRuntime`], since waiting would stop
//! that runtime.

mod load;
pub mod relation;
mod store;
mod table;

use std::future::Future;
use std::sync::OnceLock;

use crate::store::StoreError;

pub use load::{Loader, LoaderRow, TableLoader};
pub use store::{RowIter, Store};

pub use table::{Rows, Table};

/// Waits for `future` on the blocking API's runtime: any of hmap's async
/// calls, from synchronous code. A store's connections belong to the
/// runtime they were opened on, so a store used through the blocking API is
/// best used only through it (or through this function).
///
/// Inside a tokio runtime: on a multi-thread runtime the wait is done in
/// [`tokio::task::block_in_place`], so the runtime's other threads go on;
/// on a current-thread runtime nothing is done and the answer is
/// [`StoreError::BlockingInRuntime`] (waiting would stop the runtime), on
/// every store alike. The output is a `Result` (or an `Option` of one) for
/// that error to have a place; [`try_block_on`] takes any future.
pub fn block_on<F: Future>(future: F) -> F::Output
where
    F::Output: BlockingOutput,
{
    try_block_on(future).unwrap_or_else(F::Output::refused)
}

/// [`block_on`] for a future of any output: `Err` with
/// [`StoreError::BlockingInRuntime`] where it cannot wait.
pub fn try_block_on<F: Future>(future: F) -> Result<F::Output, StoreError> {
    match cannot_wait() {
        Some(refused) => Err(refused),
        None => Ok(wait_allowed(future)),
    }
}

/// Waits for `future`, where [`cannot_wait`] says this thread may.
pub(crate) fn wait_allowed<F: Future>(future: F) -> F::Output {
    if tokio::runtime::Handle::try_current().is_ok() {
        // A multi-thread runtime's thread: its tasks go to the others
        // while this one waits.
        return tokio::task::block_in_place(|| wait(future));
    }
    wait(future)
}

/// Why this thread cannot wait for a blocking call, if it cannot: it runs
/// a current-thread runtime (or a flavor tokio may add).
pub(crate) fn cannot_wait() -> Option<StoreError> {
    let current = tokio::runtime::Handle::try_current().ok()?;
    match current.runtime_flavor() {
        tokio::runtime::RuntimeFlavor::MultiThread => None,
        _ => Some(StoreError::BlockingInRuntime),
    }
}

/// What a blocking call can return: a `Result` whose error type takes a
/// [`StoreError`] (a `StoreError`, an [`Error`](crate::Error)), or an
/// `Option` of one, so that a call that cannot wait answers
/// [`StoreError::BlockingInRuntime`] rather than panicking.
pub trait BlockingOutput {
    /// The answer of a call that could not wait.
    fn refused(error: StoreError) -> Self;
}

impl<T, E: From<StoreError>> BlockingOutput for Result<T, E> {
    fn refused(error: StoreError) -> Self {
        Err(error.into())
    }
}

impl<R: BlockingOutput> BlockingOutput for Option<R> {
    fn refused(error: StoreError) -> Self {
        Some(R::refused(error))
    }
}

/// Waits for `future` on the blocking API's runtime, from a thread that
/// does not drive a runtime (or is in `block_in_place`).
fn wait<F: Future>(future: F) -> F::Output {
    let runtime = runtime();
    // A call that needs no waiting (an in-memory store, rows already
    // fetched) is done on its first poll: try that before parking this
    // thread on the runtime, in the runtime's context (a scan may spawn its
    // fetching task on that poll).
    let _context = runtime.enter();
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
        return output;
    }
    runtime.block_on(future)
}

/// Fills `items` (empty) with the items of `stream` that are ready: at
/// least one (waiting for it), then as many as are ready at once, up to
/// `max`; none when the stream ended. One wait for a batch of rows rather
/// than one per row; `items` keeps its room from one batch to the next.
///
/// Returns whether this thread could not wait
/// ([`StoreError::BlockingInRuntime`], then the one item in `items`): the
/// iterator ends after that error rather than answering it for ever.
#[must_use = "an iterator ends after a refused wait"]
pub(crate) fn ready_items<S: futures_core::Stream + Unpin>(
    stream: &mut S,
    max: usize,
    items: &mut std::collections::VecDeque<S::Item>,
) -> bool
where
    S::Item: BlockingOutput,
{
    use futures_util::{FutureExt, StreamExt};
    let first = match try_block_on(stream.next()) {
        Ok(Some(first)) => first,
        Ok(None) => return false,
        Err(refused) => {
            items.push_back(S::Item::refused(refused));
            return true;
        }
    };
    // The rows the stream says it holds ready, so that `items` grows once.
    items.reserve(stream.size_hint().0.min(max).saturating_add(1));
    items.push_back(first);
    let _context = runtime().enter();
    while items.len() < max {
        match stream.next().now_or_never() {
            Some(Some(item)) => items.push_back(item),
            _ => break,
        }
    }
    false
}

/// The process's runtime for the blocking API.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("hmap-blocking")
            .enable_all()
            .build()
            // Without threads or timers nothing in hmap can run.
            .expect("hmap could not start its tokio runtime")
    })
}

/// Blocking versions of the async methods of `self.inner`, same names and
/// arguments.
macro_rules! blocking_methods {
    ($path:literal; $( fn $name:ident (&self $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty $(where $($w:tt)*)?; )*) => {$(
        #[doc = concat!("[`", stringify!($name), "`](", $path, "::", stringify!($name), "), waiting for it.")]
        pub fn $name (&self $(, $arg: $ty)*) -> $ret $(where $($w)*)? {
            $crate::blocking::block_on(self.inner.$name($($arg),*))
        }
    )*};
}
pub(crate) use blocking_methods;
