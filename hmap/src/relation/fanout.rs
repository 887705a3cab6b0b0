//! Fan-out on write: a post's reference appended to every follower's inbox
//! by a background worker (the seeds' weibo inbox).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::store::{Get, RowMutation, RowResult, Store, StoreError, TimeRange};
use crate::table::{HTable, Table};

/// Where a [`FanOut`] writes, and how hard it tries: [`FanOutConfig::new`],
/// then set the public fields (`#[non_exhaustive]`: settings will be added).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FanOutConfig {
    /// The inbox table.
    pub table: &'static str,
    /// The inbox column's family (kept at many `VERSIONS`: 1000 in the seeds).
    pub family: &'static str,
    /// The inbox column: each delivery is a version of it.
    pub qualifier: &'static str,
    /// Deliveries queued at most; `deliver` waits while the queue is full.
    pub queue: usize,
    /// Inbox rows written per store call.
    pub batch: usize,
    /// Attempts per batch before it is set aside as failed (transient
    /// errors only: a permanent one sets it aside at once).
    pub attempts: u32,
    /// The wait before the first retry; it doubles with each attempt, up to
    /// [`MAX_BACKOFF`](Self::MAX_BACKOFF).
    pub backoff: Duration,
    /// How long [`flush`](FanOut::flush) and [`shutdown`](FanOut::shutdown)
    /// wait for the worker to make progress (finish a store call) before
    /// they give up: a worker on a runtime that nobody drives any more
    /// never finishes. Each store call has a deadline of its own, and the
    /// backoff is at most 5 s, so a live worker makes progress well within
    /// it.
    pub stall_timeout: Duration,
}

impl FanOutConfig {
    /// The longest wait between two attempts of a batch.
    pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

    /// The inbox column `family:qualifier` of `table`, with a queue of 1024
    /// deliveries, batches of 100 rows and 3 attempts, the first retry after
    /// 20 ms, and a stall timeout of 2 minutes.
    pub fn new(table: &'static str, family: &'static str, qualifier: &'static str) -> Self {
        FanOutConfig {
            table,
            family,
            qualifier,
            queue: 1024,
            batch: 100,
            attempts: 3,
            backoff: Duration::from_millis(20),
            stall_timeout: Duration::from_secs(120),
        }
    }
}

/// One post to deliver: a value written as a version at `timestamp` of the
/// inbox column of each recipient row.
///
/// `#[non_exhaustive]`: built with [`Delivery::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delivery {
    /// The inbox rows.
    pub recipients: Vec<Bytes>,
    /// The post's reference (its rowkey).
    pub value: Bytes,
    /// The version: the post's time. Two deliveries to one inbox at one
    /// timestamp are one version, so give each post its own for its
    /// recipients ([`next_timestamp`](crate::clock::next_timestamp) of a
    /// [`RowSet`](crate::clock::RowSet) of the inbox rows does).
    pub timestamp: i64,
}

impl Delivery {
    /// `value` for each of `recipients`, at `timestamp`.
    pub fn new(recipients: Vec<Bytes>, value: impl Into<Bytes>, timestamp: i64) -> Self {
        Delivery {
            recipients,
            value: value.into(),
            timestamp,
        }
    }
}

/// The queue and what became of the deliveries, shared by the handle and
/// the worker under one lock, so that nothing accepted can be lost between
/// them: what the worker did not write stays queued, or is set aside.
#[derive(Debug, Default)]
struct State {
    /// Deliveries accepted and not yet taken by the worker.
    queue: VecDeque<Delivery>,
    /// The delivery the worker is writing. Kept here, not by the worker
    /// alone, so that whoever finds the worker gone sets it aside.
    in_flight: Option<Delivery>,
    /// Deliveries accepted and not yet written or set aside (queued, and the
    /// one being written).
    pending: usize,
    /// Deliveries whose writes failed: kept to retry, with the last error.
    failed: Vec<(Delivery, String)>,
    /// No more deliveries are accepted; the worker writes the queue and stops.
    closed: bool,
    /// Why the worker is not running (it panicked, was dropped with its
    /// runtime, or stalled): `deliver` fails with it.
    stopped: Option<String>,
    /// The worker is gone: it finished, or was dropped.
    done: bool,
    /// Store calls the worker finished, to tell a slow worker from a stalled one.
    progress: u64,
}

impl State {
    /// Sets aside the delivery being written and the queue, with `reason`,
    /// and stops accepting deliveries: the worker will not write them.
    fn abandon(&mut self, reason: &str, stopped: String) {
        let queued: Vec<Delivery> = self.queue.drain(..).collect();
        let left = self.in_flight.take().into_iter().chain(queued);
        self.failed.extend(left.map(|d| (d, reason.to_string())));
        self.pending = 0;
        self.stopped.get_or_insert(stopped);
    }
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled whenever the state changes.
    changed: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes everyone waiting for a change.
    fn notify(&self) {
        self.changed.notify_waiters();
    }

    /// Waits until `check` returns `Some` (it sees the state under the
    /// lock, after every change).
    async fn wait_until<R>(&self, mut check: impl FnMut(&mut State) -> Option<R>) -> R {
        loop {
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            // Registered before the check: a change after it wakes us.
            changed.as_mut().enable();
            if let Some(r) = check(&mut self.lock()) {
                return r;
            }
            changed.await;
        }
    }
}

/// Delivers posts to followers' inboxes on a background task (tokio).
///
/// [`deliver`](Self::deliver) queues a post and returns at once (waiting
/// only while the queue is full); [`flush`](Self::flush) waits until every
/// queued post is written or set aside; [`shutdown`](Self::shutdown) writes
/// what is queued and stops. Dropping the handle closes the queue without
/// waiting: the worker writes what is queued in the background, then stops.
///
/// Each inbox row's write has its own outcome ([`Store::mutate_each`]):
/// rows that fail with a transient error (the connection, a timeout) are
/// retried alone with exponential backoff; a row refused for good (a key
/// too long, a missing table) or failing at the last attempt is set aside,
/// not dropped, while the delivery's other recipients get the post:
/// [`failed`](Self::failed) lists the delivery with the recipients not
/// written, and [`retry_failed`](Self::retry_failed) queues it again. Should the worker
/// die (a store that panics, or the tokio runtime it runs on shuts down,
/// dropping it), what it had not written is set aside too, and `deliver`
/// fails from then on with [`StoreError::Interrupted`]: start a new
/// `FanOut` on a live runtime and deliver [`failed`](Self::failed) there.
/// `flush` and `shutdown` wait at most
/// [`stall_timeout`](FanOutConfig::stall_timeout) for the worker to make
/// progress. Nothing accepted is lost while the process runs; a process
/// that dies loses what was queued and not yet written, which a rebuild
/// from the post table can restore.
pub struct FanOut {
    shared: Arc<Shared>,
    config: FanOutConfig,
}

impl std::fmt::Debug for FanOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FanOut").field("config", &self.config).finish()
    }
}

impl FanOut {
    /// Starts the worker, a task on the current tokio runtime. Fails
    /// without one. The worker lives as long as that runtime: a fan-out
    /// used across runtimes (one per `#[tokio::test]`) is best started on
    /// each.
    pub fn start<S: Store + 'static>(store: S, config: FanOutConfig) -> Result<Self> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
            Error::Store(StoreError::InvalidRequest {
                table: config.table.into(),
                reason: format!("the fan-out worker needs a tokio runtime: {e}"),
            })
        })?;
        let shared = Arc::new(Shared::default());
        // Made before the task, and moved into it: dropped with the task
        // even if the task never ran.
        let worker = Worker {
            shared: Arc::clone(&shared),
            finished: false,
        };
        let config_of_worker = config.clone();
        // Detached: the worker's guard reports how it ended.
        drop(runtime.spawn(async move {
            let mut worker = worker;
            run(&store, &config_of_worker, &worker.shared).await;
            worker.finished = true;
        }));
        Ok(FanOut { shared, config })
    }

    fn shut_down(&self) -> Error {
        Error::Store(StoreError::InvalidRequest {
            table: self.config.table.into(),
            reason: "the fan-out is shut down".into(),
        })
    }

    fn not_running(&self, reason: String) -> Error {
        Error::Store(StoreError::Interrupted {
            table: self.config.table.into(),
            operation: "fan-out delivery",
            message: reason,
        })
    }

    /// Waits until `done` says so, as long as the worker makes progress:
    /// at most the stall timeout after its last store call. `Err` (with
    /// the state locked) if it stalled.
    async fn wait_for(&self, mut done: impl FnMut(&mut State) -> bool) -> std::result::Result<(), Duration> {
        let stall = self.config.stall_timeout;
        let mut seen = self.shared.lock().progress;
        loop {
            let waited = tokio::time::timeout(
                stall,
                self.shared
                    .wait_until(|state| (done(state) || state.progress != seen).then_some(())),
            )
            .await;
            let mut state = self.shared.lock();
            if done(&mut state) {
                return Ok(());
            }
            if waited.is_err() && state.progress == seen {
                return Err(stall);
            }
            seen = state.progress;
        }
    }

    /// Queues a post for its recipients; waits while the queue is full.
    /// Fails if the worker is not running.
    pub async fn deliver(&self, delivery: Delivery) -> Result<()> {
        if delivery.recipients.is_empty() {
            return Ok(());
        }
        let mut delivery = Some(delivery);
        let capacity = self.config.queue.max(1);
        self.shared
            .wait_until(|state| {
                if let Some(reason) = &state.stopped {
                    return Some(Err(self.not_running(reason.clone())));
                }
                if state.closed {
                    return Some(Err(self.shut_down()));
                }
                if state.queue.len() >= capacity {
                    return None;
                }
                state.queue.extend(delivery.take());
                state.pending += 1;
                Some(Ok(()))
            })
            .await?;
        self.shared.notify();
        Ok(())
    }

    /// Waits until every queued post is written or set aside as failed (at
    /// once if the worker is gone: what it left is set aside); returns how
    /// many are set aside. Fails with [`StoreError::Timeout`] if the worker
    /// makes no progress for [`stall_timeout`](FanOutConfig::stall_timeout)
    /// (its runtime is not driven); the deliveries stay queued.
    pub async fn flush(&self) -> Result<usize> {
        let started = std::time::Instant::now();
        match self
            .wait_for(|state| state.pending == 0 || state.stopped.is_some())
            .await
        {
            Ok(()) => Ok(self.shared.lock().failed.len()),
            Err(_) => Err(self.stalled(started)),
        }
    }

    fn stalled(&self, started: std::time::Instant) -> Error {
        Error::Store(StoreError::Timeout {
            table: self.config.table.into(),
            operation: "fan-out flush (the worker made no progress: is its runtime still driven?)",
            elapsed: started.elapsed(),
            detail: String::new(),
        })
    }

    /// The deliveries that failed, each with only the recipients whose
    /// inbox was not written (the others have the post), and the first
    /// error.
    pub fn failed(&self) -> Vec<(Delivery, String)> {
        self.shared.lock().failed.clone()
    }

    /// Queues the failed deliveries again.
    pub async fn retry_failed(&self) -> Result<()> {
        let failed = std::mem::take(&mut self.shared.lock().failed);
        let mut failed = failed.into_iter();
        while let Some((delivery, error)) = failed.next() {
            if let Err(e) = self.deliver(delivery.clone()).await {
                // Keep what could not be queued.
                let mut state = self.shared.lock();
                state.failed.push((delivery, error));
                state.failed.extend(failed);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Writes everything queued, then stops the worker. Returns the
    /// deliveries that failed. Should the worker make no progress for
    /// [`stall_timeout`](FanOutConfig::stall_timeout), what it has not
    /// written is set aside as failed (the one it was writing may have
    /// been written too: writing it again rewrites the same version).
    pub async fn shutdown(self) -> Vec<(Delivery, String)> {
        self.close();
        if let Err(stall) = self.wait_for(|state| state.done).await {
            let reason = format!("not written: the fan-out worker made no progress for {stall:?} at shutdown");
            let mut state = self.shared.lock();
            state.abandon(&reason, "the fan-out worker stalled and was abandoned".into());
            drop(state);
            self.shared.notify();
        }
        self.failed()
    }

    /// Accepts no more deliveries; the worker writes the queue and stops.
    fn close(&self) {
        self.shared.lock().closed = true;
        self.shared.notify();
    }

    /// A page of an inbox, newest first: up to `limit` versions older than
    /// `before` (a previous page's last timestamp), as `(timestamp, value)`.
    pub async fn read_inbox<S: Store + ?Sized>(
        store: &S,
        config: &FanOutConfig,
        inbox: Bytes,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<(i64, Bytes)>> {
        let get = Get::new(inbox)
            .column(config.family, config.qualifier)
            .max_versions(limit.max(1))
            .time_range(TimeRange::new(0, before.unwrap_or(i64::MAX)));
        let row: Option<RowResult> = store.get(config.table, &get).await?;
        Ok(row
            .map(|r| r.cells.into_iter().map(|c| (c.timestamp, c.value)).collect())
            .unwrap_or_default())
    }

    /// A page of a timeline: the rows of `posts` that an inbox names (each
    /// delivery's value being a post's rowkey), newest first, as
    /// `(timestamp, post)`: one get of the inbox page and one batched get
    /// of the posts. Up to `limit` deliveries older than `before` (the last
    /// page's last timestamp); those whose post is gone are left out, so a
    /// page may be shorter than `limit` before the end.
    pub async fn read_timeline<T: HTable, S: Store>(
        posts: &Table<T, S>,
        config: &FanOutConfig,
        inbox: Bytes,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<(i64, T)>> {
        let refs = Self::read_inbox(posts.store(), config, inbox, limit, before).await?;
        let rows = posts.get_many_rows(refs.iter().map(|(_, key)| key.clone())).await?;
        let mut timeline = Vec::with_capacity(rows.len());
        for ((at, _), row) in refs.into_iter().zip(rows) {
            if let Some(post) = row? {
                timeline.push((at, post));
            }
        }
        Ok(timeline)
    }

    /// Removes from an inbox every delivery whose value `remove` picks (the
    /// posts of a user just unfollowed): one get of all its versions, then
    /// one call deleting each picked version. Returns how many it removed.
    /// A delivery still queued for the inbox is not seen: flush first.
    ///
    /// On HBase a removed version leaves a delete marker for its timestamp
    /// until the next major compaction, and a delivery made again at that
    /// timestamp (the same post, re-posted with its old time) stays hidden
    /// behind it, as with any HBase client: deliver at a new timestamp.
    pub async fn remove_from_inbox<S: Store + ?Sized>(
        store: &S,
        config: &FanOutConfig,
        inbox: Bytes,
        remove: impl Fn(&[u8]) -> bool,
    ) -> Result<usize> {
        // HBase's largest `maxVersions` (a Java int).
        const ALL_VERSIONS: u32 = 0x7fff_ffff;
        let get = Get::new(inbox.clone())
            .column(config.family, config.qualifier)
            .max_versions(ALL_VERSIONS);
        let Some(row) = store.get(config.table, &get).await? else {
            return Ok(0);
        };
        let mut m = RowMutation::new(inbox);
        let mut removed = 0;
        for cell in row.cells.iter().filter(|c| remove(&c.value)) {
            m = m.delete_version(config.family, config.qualifier, cell.timestamp);
            removed += 1;
        }
        if removed > 0 {
            store.mutate(config.table, &[m]).await?;
        }
        Ok(removed)
    }
}

impl Drop for FanOut {
    /// Closes the queue without waiting: the worker writes what is queued
    /// in the background, then stops. Call [`shutdown`](FanOut::shutdown) to
    /// wait for it.
    fn drop(&mut self) {
        self.close();
    }
}

/// The worker task's guard, made before the task and dropped with it: if
/// the task ends any other way than by finishing (it panics, or its
/// runtime shuts down and drops it, run or not), the guard sets aside the
/// delivery being written and the queue, and marks the worker stopped, so
/// that nothing accepted is lost unlisted and `flush` does not wait for it.
struct Worker {
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        if !self.finished {
            let (reason, stopped) = if std::thread::panicking() {
                (
                    "not written: the fan-out worker panicked while writing",
                    "the fan-out worker panicked",
                )
            } else {
                (
                    "not written: the fan-out worker was dropped (the tokio runtime it ran on shut down)",
                    "the fan-out worker is gone: the tokio runtime it ran on shut down; start a new fan-out",
                )
            };
            state.abandon(reason, stopped.into());
        }
        state.done = true;
        drop(state);
        self.shared.notify();
    }
}

async fn run<S: Store>(store: &S, config: &FanOutConfig, shared: &Shared) {
    loop {
        let next = shared
            .wait_until(|state| {
                if state.stopped.is_some() {
                    return Some(None);
                }
                match state.queue.pop_front() {
                    Some(next) => {
                        state.in_flight = Some(next.clone());
                        Some(Some(next))
                    }
                    None if state.closed => Some(None),
                    None => None,
                }
            })
            .await;
        let Some(delivery) = next else { return };
        // Room in the queue for a waiting `deliver`.
        shared.notify();
        let outcome = write(store, config, &delivery, shared).await;
        {
            let mut state = shared.lock();
            // Gone if it was set aside meanwhile (a stalled shutdown).
            if state.in_flight.take().is_some() {
                if let Err((recipients, e)) = outcome {
                    // Only the recipients whose inbox was not written.
                    let left = Delivery { recipients, ..delivery };
                    state.failed.push((left, e.to_string()));
                }
                state.pending = state.pending.saturating_sub(1);
            }
        }
        shared.notify();
    }
}

/// Writes one delivery in batches, each row's outcome on its own
/// ([`Store::mutate_each`]). The rows of a batch that failed with a
/// transient error (the connection, a timeout: [`RowOutcome::Unknown`], or
/// a refusal that may pass later) are sent again, alone, up to `attempts`
/// times in all, after a backoff that doubles from `config.backoff` (up to
/// `MAX_BACKOFF`); a row refused for good fails at once, and the others are
/// written. A rewritten row writes the same version: writes are idempotent.
/// On failure: the recipients not written (the others have their post),
/// with the first error. A call that fails as a whole for good (a missing
/// table) fails every recipient not yet written, without trying the rest.
async fn write<S: Store>(
    store: &S,
    config: &FanOutConfig,
    delivery: &Delivery,
    shared: &Shared,
) -> std::result::Result<(), (Vec<Bytes>, StoreError)> {
    let mut unwritten: Vec<Bytes> = Vec::new();
    let mut first_error: Option<StoreError> = None;
    let batch = config.batch.max(1);
    for (n, chunk) in delivery.recipients.chunks(batch).enumerate() {
        let mut rows: Vec<RowMutation> = chunk
            .iter()
            .map(|inbox| {
                RowMutation::new(inbox.clone()).put_at(
                    config.family,
                    config.qualifier,
                    delivery.timestamp,
                    delivery.value.clone(),
                )
            })
            .collect();
        let mut attempt = 1;
        let mut backoff = config.backoff;
        loop {
            let written = store.mutate_each(config.table, &rows).await;
            shared.lock().progress += 1;
            shared.notify();
            let last = attempt >= config.attempts.max(1);
            let mut again = Vec::new();
            match written {
                Ok(outcome) => {
                    for (row, outcome) in rows.into_iter().zip(outcome.into_vec()) {
                        match outcome.into_result() {
                            Ok(()) => {}
                            Err(e) if e.is_transient() && !last => again.push(row),
                            Err(e) => {
                                unwritten.push(row.row);
                                first_error.get_or_insert(e);
                            }
                        }
                    }
                }
                // The whole batch again.
                Err(e) if e.is_transient() && !last => again = rows,
                Err(e) if e.is_transient() => {
                    unwritten.extend(rows.into_iter().map(|r| r.row));
                    first_error.get_or_insert(e);
                }
                Err(e) => {
                    // For good (a missing table): nor this batch nor the
                    // next is written.
                    unwritten.extend(rows.into_iter().map(|r| r.row));
                    unwritten.extend(delivery.recipients.iter().skip((n + 1) * batch).cloned());
                    return Err((unwritten, first_error.unwrap_or(e)));
                }
            }
            if again.is_empty() {
                break;
            }
            rows = again;
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(FanOutConfig::MAX_BACKOFF);
            attempt += 1;
        }
    }
    match first_error {
        None => Ok(()),
        Some(e) => Err((unwritten, e)),
    }
}
