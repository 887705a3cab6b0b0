//! A tree's writers' lock: a lease in one cell, taken and released by
//! check-and-mutate, for every thread and process alike.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::clock::{RowSet, next_timestamp_after, wall_clock};
use crate::error::{Error, Result};
use crate::schema::{FamilySchema, TableSchema};
use crate::store::{CheckAndMutate, Get, RowMutation, Store, StoreError};

/// Where a tree's lock lives and how long it is held and waited for.
#[derive(Debug, Clone)]
pub(super) struct Lock {
    /// The tree's table, for errors.
    pub tree: &'static str,
    /// The table, row and column of the lock's cell.
    pub table: &'static str,
    pub row: &'static str,
    pub family: &'static str,
    pub qualifier: &'static str,
    /// Whether `table` is a table of locks that the first lock creates,
    /// not the tree's own table.
    pub own_table: bool,
    pub lease: Duration,
    pub wait: Duration,
}

/// The lock as stored: `until` (ms, big-endian i64), `last` (the timestamp
/// of the last operation, likewise), then the holder's token. A free lock
/// has an `until` in the past; a released one names its releaser after
/// [`RELEASED_BY`] (earlier releases wrote an empty holder), so that no
/// released value repeats an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LockState {
    until: i64,
    last: i64,
    holder: Bytes,
}

/// What a released lock's holder starts with, before the releaser's token.
const RELEASED_BY: &[u8] = b"released by ";

impl LockState {
    /// The lock released by the writer `token`.
    fn released(last: i64, token: &Bytes) -> LockState {
        let mut holder = Vec::with_capacity(RELEASED_BY.len() + token.len());
        holder.extend_from_slice(RELEASED_BY);
        holder.extend_from_slice(token);
        LockState {
            until: 0,
            last,
            holder: Bytes::from(holder),
        }
    }

    /// Whether a writer may take the lock: released, or its lease over.
    fn is_free(&self) -> bool {
        self.holder.is_empty() || self.until < wall_clock()
    }

    fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(16 + self.holder.len());
        out.extend_from_slice(&self.until.to_be_bytes());
        out.extend_from_slice(&self.last.to_be_bytes());
        out.extend_from_slice(&self.holder);
        Bytes::from(out)
    }

    /// The stored lock; a value it cannot read is a free lock.
    fn decode(value: &[u8]) -> LockState {
        let field = |at: usize| {
            value
                .get(at..at + 8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map_or(0, i64::from_be_bytes)
        };
        LockState {
            until: field(0),
            last: field(8),
            holder: Bytes::copy_from_slice(value.get(16..).unwrap_or_default()),
        }
    }
}

/// The lock, held: what the holder wrote, to release or renew it.
#[derive(Debug)]
pub(super) struct Held {
    stored: Bytes,
    state: LockState,
    taken: Instant,
}

/// A token no other holder of a tree lock has: the process, a counter, and
/// the time (for processes on other hosts with the same id).
fn lock_token() -> Bytes {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Bytes::from(format!("{}-{n}-{nanos}", std::process::id()))
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Lock {
    async fn read(&self, store: &impl Store) -> std::result::Result<Option<Bytes>, StoreError> {
        let get = Get::new(self.row).column(self.family, self.qualifier);
        match store.get(self.table, &get).await {
            Err(StoreError::TableNotFound { .. }) if self.own_table => {
                self.create_table(store).await?;
                Ok(None)
            }
            read => Ok(read?.and_then(|r| r.value(self.family, self.qualifier))),
        }
    }

    /// Creates the table of locks (another writer may just have).
    async fn create_table(&self, store: &impl Store) -> std::result::Result<(), StoreError> {
        let schema = TableSchema::new(self.table).family(FamilySchema::new(self.family));
        match store.create_table(&schema).await {
            Ok(()) | Err(StoreError::TableExists { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Replaces the lock's value if it is still `expected`. Stamped by the
    /// server, so that it needs no clock agreement: two writes in one
    /// millisecond are ordered by the server, the later one wins.
    async fn swap(
        &self,
        store: &impl Store,
        expected: Option<Bytes>,
        value: Bytes,
    ) -> std::result::Result<bool, StoreError> {
        store
            .check_and_mutate(
                self.table,
                &CheckAndMutate::new(
                    RowMutation::new(self.row).put(self.family, self.qualifier, value),
                    self.family,
                    self.qualifier,
                    expected,
                ),
            )
            .await
    }

    fn timeout(&self, started: Instant) -> Error {
        Error::Store(StoreError::Timeout {
            table: self.tree.into(),
            operation: "waiting for the tree's writer lock",
            elapsed: started.elapsed(),
            detail: String::new(),
        })
    }

    /// One attempt at the lock: `Some` once held (also when an earlier
    /// attempt took it though its answer was lost), `None` while another
    /// writer holds it.
    async fn try_take(
        &self,
        store: &impl Store,
        token: &Bytes,
        started: Instant,
    ) -> std::result::Result<Option<Held>, StoreError> {
        let stored = self.read(store).await?;
        let current = stored.as_deref().map(LockState::decode);
        if let Some(state) = current.as_ref().filter(|s| s.holder == *token) {
            return Ok(Some(Held {
                stored: stored.clone().unwrap_or_default(),
                state: state.clone(),
                taken: started,
            }));
        }
        let last = current.as_ref().map_or(0, |s| s.last);
        if !current.as_ref().is_none_or(LockState::is_free) {
            return Ok(None);
        }
        let state = LockState {
            until: wall_clock().saturating_add(millis(self.lease)),
            last,
            holder: token.clone(),
        };
        let value = state.encode();
        Ok(self.swap(store, stored, value.clone()).await?.then(|| Held {
            stored: value,
            state,
            taken: Instant::now(),
        }))
    }

    /// Takes the lock: waits while another writer holds an unexpired lease,
    /// up to the lock wait. Transient store errors are retried: a take that
    /// was applied though its answer was lost is found on the next read, by
    /// the token.
    async fn take(&self, store: &impl Store, token: &Bytes) -> Result<Held> {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(1);
        loop {
            match self.try_take(store, token, started).await {
                Ok(Some(held)) => return Ok(held),
                Ok(None) => {}
                Err(e) if e.is_transient() => {}
                Err(e) => return Err(e.into()),
            }
            if started.elapsed() >= self.wait {
                return Err(self.timeout(started));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(50));
        }
    }

    /// Extends the lease when half of it has passed; fails if another
    /// writer took the lock over meanwhile.
    pub async fn renew(&self, store: &impl Store, held: &mut Held) -> Result<()> {
        if held.taken.elapsed() < self.lease / 2 {
            return Ok(());
        }
        let state = LockState {
            until: wall_clock().saturating_add(millis(self.lease)),
            ..held.state.clone()
        };
        let value = state.encode();
        let taken = Instant::now();
        if self.swap(store, Some(held.stored.clone()), value.clone()).await? {
            *held = Held {
                stored: value,
                state,
                taken,
            };
            return Ok(());
        }
        Err(Error::Query {
            table: self.tree,
            reason: "the writer lock's lease ran out and another writer took it; run verify".into(),
        })
    }

    /// Frees the lock on behalf of `token`, recording `ts` as the last
    /// operation's timestamp when it is later than the stored one. `held`,
    /// when known, saves the first read.
    ///
    /// A free lock is written over as well, with a value no writer has
    /// seen: a take of `token`'s still on its way to the server (its call
    /// cancelled after it was sent) expected the value it read, and fails
    /// when it arrives. Every released value names its releaser, so none
    /// repeats an earlier one. A lock another writer holds is left alone:
    /// a take of ours in flight expected an older value and fails too.
    /// Transient errors are retried (a release applied though its answer
    /// was lost finds the lock released on the next read).
    async fn free(&self, store: &impl Store, token: &Bytes, held: Option<&Held>, ts: i64) -> Result<()> {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(1);
        let mut known = held.map(|h| h.stored.clone());
        loop {
            let attempt = async {
                let stored = match known.take() {
                    Some(stored) => Some(stored),
                    None => self.read(store).await?,
                };
                let state = stored.as_deref().map(LockState::decode);
                let ours = state.as_ref().is_some_and(|s| s.holder == *token);
                if !ours && !state.as_ref().is_none_or(LockState::is_free) {
                    return Ok(true);
                }
                let released = LockState::released(state.map_or(0, |s| s.last).max(ts), token);
                self.swap(store, stored, released.encode()).await
            };
            match attempt.await {
                Ok(true) => return Ok(()),
                // Changed since it was read: read it again.
                Ok(false) => {}
                Err(e) if e.is_transient() => {}
                Err(e) => return Err(e.into()),
            }
            if started.elapsed() >= self.wait {
                return Err(Error::Store(StoreError::Timeout {
                    table: self.tree.into(),
                    operation: "releasing the tree's writer lock",
                    elapsed: started.elapsed(),
                    detail: String::new(),
                }));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(50));
        }
    }

    /// Takes the lock for a write, and the write's timestamp: later than
    /// the last one. The write ends with [`release`](Self::release); should
    /// it be dropped before (cancelled: `tokio::time::timeout`, a
    /// `select!`, a runtime that shuts down), the returned guard, and the
    /// one that covers the taking, release the lock in a task of their own,
    /// so that the next writer need not wait for the lease.
    ///
    /// (In the process, an operation is stamped as a write of the lock's
    /// row: the rows it writes are known only once it holds the lock, and
    /// every write of the tree holds it, so the lock row and the recorded
    /// floor order them all.)
    pub async fn for_write<S: Store + 'static>(&self, store: &Arc<S>) -> Result<Writing<S>> {
        let mut taking = Writing {
            lock: self.clone(),
            store: Arc::clone(store),
            token: lock_token(),
            held: None,
            ts: 0,
        };
        let held = self.take(store, &taking.token).await?;
        taking.ts = next_timestamp_after(&RowSet::of(self.table, self.row.as_bytes()), held.state.last);
        taking.held = Some(held);
        Ok(taking)
    }

    /// Releases the lock after a write, whatever its outcome; the write's
    /// error comes first.
    pub async fn release<S: Store + 'static, T>(&self, mut writing: Writing<S>, result: Result<T>) -> Result<T> {
        let released = match &writing.held {
            Some(held) => self.free(&writing.store, &writing.token, Some(held), writing.ts).await,
            None => Ok(()),
        };
        // Released (or refused for good): nothing left for the guard.
        writing.held = None;
        writing.token = Bytes::new();
        let value = result?;
        released?;
        Ok(value)
    }
}

/// A write of the tree, from the moment it starts taking the lock until
/// [`Lock::release`] has released it. Dropped before that (the write's
/// future cancelled), it releases the lock in a task of its own: on the
/// current tokio runtime, or on the blocking API's runtime when the drop
/// happens outside one. A writer that panics keeps the lock until its
/// lease runs out, as a writer whose process died does: what it wrote is
/// there for `repair`.
pub(super) struct Writing<S: Store + 'static> {
    lock: Lock,
    store: Arc<S>,
    /// The token the lock is taken with; empty once released.
    token: Bytes,
    /// The lock, once held.
    held: Option<Held>,
    /// The write's timestamp, once held.
    ts: i64,
}

impl<S: Store + 'static> Writing<S> {
    /// The write's timestamp.
    pub fn ts(&self) -> i64 {
        self.ts
    }

    /// The lock held, to renew it.
    pub fn held_mut(&mut self) -> Option<&mut Held> {
        self.held.as_mut()
    }
}

impl<S: Store + 'static> Drop for Writing<S> {
    fn drop(&mut self) {
        if self.token.is_empty() || std::thread::panicking() {
            return;
        }
        let lock = self.lock.clone();
        let store = Arc::clone(&self.store);
        let token = std::mem::take(&mut self.token);
        let held = self.held.take();
        let ts = self.ts;
        let release = async move {
            let released = lock.free(&store, &token, held.as_ref(), ts).await;
            if let Err(e) = released {
                tracing::warn!(tree = lock.tree, error = %e, "hmap: a cancelled tree write could not release the writer lock; it expires with its lease");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(release)),
            Err(_) => drop(crate::blocking::runtime().spawn(release)),
        }
    }
}
