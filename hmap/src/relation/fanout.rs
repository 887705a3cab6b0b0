//! Fan-out on write: a post's reference appended to every follower's inbox
//! by a background worker (the seeds' weibo inbox).

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::store::{Get, RowMutation, RowResult, Store, StoreError, TimeRange};

/// Where a [`FanOut`] writes, and how hard it tries.
#[derive(Debug, Clone)]
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
    /// Attempts per batch before it is set aside as failed.
    pub attempts: u32,
}

impl FanOutConfig {
    /// The inbox column `family:qualifier` of `table`, with a queue of 1024
    /// deliveries, batches of 100 rows and 3 attempts.
    pub fn new(table: &'static str, family: &'static str, qualifier: &'static str) -> Self {
        FanOutConfig {
            table,
            family,
            qualifier,
            queue: 1024,
            batch: 100,
            attempts: 3,
        }
    }
}

/// One post to deliver: a value written as a version at `timestamp` of the
/// inbox column of each recipient row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The inbox rows.
    pub recipients: Vec<Bytes>,
    /// The post's reference (its rowkey).
    pub value: Bytes,
    /// The version: the post's time. Two deliveries to one inbox at one
    /// timestamp are one version, so give each post its own
    /// ([`next_timestamp`](crate::clock::next_timestamp) does).
    pub timestamp: i64,
}

#[derive(Debug, Default)]
struct Progress {
    /// Deliveries accepted and not yet written or set aside.
    pending: usize,
    /// Deliveries whose writes failed every attempt: kept to retry.
    failed: Vec<(Delivery, String)>,
}

type Shared = Arc<(Mutex<Progress>, Condvar)>;

/// Delivers posts to followers' inboxes on a background thread.
///
/// [`deliver`](Self::deliver) queues a post and returns at once (waiting
/// only while the queue is full); [`flush`](Self::flush) waits until every
/// queued post is written; [`shutdown`](Self::shutdown) writes what is
/// queued and stops. A batch that fails every attempt is kept, not dropped:
/// [`failed`](Self::failed) lists it and [`retry_failed`](Self::retry_failed)
/// queues it again. Nothing accepted is lost while the process runs; a
/// process that dies loses what was queued and not yet written, which a
/// rebuild from the post table can restore.
pub struct FanOut {
    sender: Option<SyncSender<Delivery>>,
    shared: Shared,
    worker: Option<JoinHandle<()>>,
    config: FanOutConfig,
}

impl std::fmt::Debug for FanOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FanOut").field("config", &self.config).finish()
    }
}

impl FanOut {
    /// Starts the worker.
    pub fn start<S: Store + 'static>(store: S, config: FanOutConfig) -> Self {
        let (sender, receiver) = sync_channel(config.queue.max(1));
        let shared: Shared = Arc::default();
        let worker = {
            let shared = Arc::clone(&shared);
            let config = config.clone();
            std::thread::Builder::new()
                .name(format!("hmap-fanout-{}", config.table))
                .spawn(move || run(store, config, receiver, shared))
                .ok()
        };
        FanOut {
            sender: Some(sender),
            shared,
            worker,
            config,
        }
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.shared.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a post for its recipients; waits while the queue is full.
    pub fn deliver(&self, delivery: Delivery) -> Result<()> {
        if delivery.recipients.is_empty() {
            return Ok(());
        }
        self.progress().pending += 1;
        let sent = match (&self.sender, &self.worker) {
            (Some(sender), Some(_)) => sender.send(delivery).is_ok(),
            _ => false,
        };
        if !sent {
            self.progress().pending -= 1;
            return Err(Error::Store(StoreError::InvalidRequest {
                table: self.config.table.into(),
                reason: "the fan-out worker is not running".into(),
            }));
        }
        Ok(())
    }

    /// Waits until every queued post is written or set aside as failed;
    /// returns how many failed.
    pub fn flush(&self) -> usize {
        let (lock, done) = &*self.shared;
        let mut progress = lock.lock().unwrap_or_else(PoisonError::into_inner);
        while progress.pending > 0 {
            progress = done.wait(progress).unwrap_or_else(PoisonError::into_inner);
        }
        progress.failed.len()
    }

    /// The deliveries that failed every attempt, with the last error.
    pub fn failed(&self) -> Vec<(Delivery, String)> {
        self.progress().failed.clone()
    }

    /// Queues the failed deliveries again.
    pub fn retry_failed(&self) -> Result<()> {
        let failed = std::mem::take(&mut self.progress().failed);
        failed.into_iter().try_for_each(|(d, _)| self.deliver(d))
    }

    /// Writes everything queued, then stops the worker. Returns the
    /// deliveries that failed.
    pub fn shutdown(mut self) -> Vec<(Delivery, String)> {
        self.stop();
        self.failed()
    }

    fn stop(&mut self) {
        // Closing the channel lets the worker finish the queue and return.
        self.sender = None;
        if let Some(worker) = self.worker.take() {
            // The worker catches no panics of its own: a store that panics
            // has already reported more than a join error could add.
            let _ = worker.join();
        }
    }

    /// A page of an inbox, newest first: up to `limit` versions older than
    /// `before` (a previous page's last timestamp), as `(timestamp, value)`.
    pub fn read_inbox<S: Store + ?Sized>(
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
        let row: Option<RowResult> = store.get(config.table, &get)?;
        Ok(row
            .map(|r| r.cells.into_iter().map(|c| (c.timestamp, c.value)).collect())
            .unwrap_or_default())
    }
}

impl Drop for FanOut {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run<S: Store>(store: S, config: FanOutConfig, receiver: Receiver<Delivery>, shared: Shared) {
    let (lock, done) = &*shared;
    for delivery in receiver {
        let outcome = write(&store, &config, &delivery);
        let mut progress = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = outcome {
            progress.failed.push((delivery, e.to_string()));
        }
        progress.pending -= 1;
        done.notify_all();
    }
}

/// Writes one delivery in batches, each tried `attempts` times. A retried
/// batch rewrites the same versions: writes are idempotent.
fn write<S: Store>(store: &S, config: &FanOutConfig, delivery: &Delivery) -> std::result::Result<(), StoreError> {
    for chunk in delivery.recipients.chunks(config.batch.max(1)) {
        let rows: Vec<RowMutation> = chunk
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
        let mut attempt = 0;
        loop {
            attempt += 1;
            match store.mutate(config.table, &rows) {
                Ok(()) => break,
                Err(e) if attempt >= config.attempts.max(1) => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(10 * u64::from(attempt))),
            }
        }
    }
    Ok(())
}
