//! The timestamps hmap chooses itself.
//!
//! hmap stamps its own writes (rather than letting the server stamp them) so
//! that, within a process, a later call always wins over an earlier one: a
//! put after a delete of the same row, a dynamic-family replacement after
//! another. HBase orders the versions of a cell by timestamp alone, so two
//! calls in one millisecond need distinct timestamps.
//!
//! The model: **one timestamp per call, never ahead of the wall clock.**
//! [`next_timestamp`] returns the wall clock in milliseconds, strictly later
//! than anything it returned before in this process; when a call comes in
//! the millisecond the previous one took, it waits for the next millisecond
//! instead of running ahead. A call that writes many rows (`put_many`, a
//! relation operation) takes one timestamp for all of them. So a write's
//! timestamp is never later than the wall clock at the time it was made,
//! and a delete the server stamps afterwards (another client, the HBase
//! shell) covers it, as does a write made after a restart.
//!
//! The cost: at most one stamped call per millisecond per process, whatever
//! the number of threads; bulk writes belong in one `put_many`.
//!
//! Across processes, timestamps are as good as the clocks are synchronised:
//! see the multi-writer model in the relations chapter of the guide.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// The last timestamp handed out in this process.
static LAST: AtomicI64 = AtomicI64::new(0);

/// The wall clock, in milliseconds since the epoch.
pub fn wall_clock() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A timestamp for a write hmap stamps itself: the wall clock in
/// milliseconds, strictly later than every one this process handed out
/// before. When the previous one took the current millisecond, waits for
/// the next (well under a millisecond on average) rather than run ahead of
/// the wall clock.
///
/// Take one per call, not one per row: every row of a call shares it.
/// Relation helpers write all rows of an operation with one such timestamp
/// (puts at it, deletes up to it), so that whatever order concurrent
/// operations reach each row in, every row ends with the operation that
/// took the later timestamp. Dynamic-family replacements delete up to the
/// millisecond before theirs, which the previous call's timestamp is at
/// most.
///
/// If the wall clock steps back, this waits until it is past the last
/// timestamp again: a write is never stamped before one made earlier.
pub fn next_timestamp() -> i64 {
    next_timestamp_after(i64::MIN)
}

/// [`next_timestamp`], and later than `floor` too: waits until the wall
/// clock is past `floor`.
///
/// For writers that share data with other processes: a [`Tree`] stamps an
/// operation later than the last one any process made on it (recorded in
/// its lock), so that a writer whose clock is a little behind waits for its
/// clock to catch up instead of writing in the past.
///
/// [`Tree`]: crate::relation::Tree
pub fn next_timestamp_after(floor: i64) -> i64 {
    loop {
        let now = wall_clock();
        let last = LAST.load(Ordering::Acquire);
        let earliest = last.max(floor).saturating_add(1);
        if now < earliest {
            wait_until(earliest);
            continue;
        }
        if LAST
            .compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return now;
        }
    }
}

/// Sleeps until the wall clock reads `at` (milliseconds), in short steps so
/// that a clock that is adjusted meanwhile is followed.
fn wait_until(at: i64) {
    let ahead = at.saturating_sub(wall_clock());
    if ahead <= 0 {
        return;
    }
    // Within the millisecond: a short sleep, as the clock is read again.
    let step = if ahead <= 1 {
        Duration::from_micros(100)
    } else {
        Duration::from_millis(u64::try_from(ahead.min(10)).unwrap_or(10))
    };
    std::thread::sleep(step);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_increase_and_stay_at_the_wall_clock() {
        let mut previous = next_timestamp();
        for _ in 0..50 {
            let ts = next_timestamp();
            let now = wall_clock();
            assert!(ts > previous, "{ts} after {previous}");
            assert!(ts <= now, "{ts} is ahead of the wall clock {now}");
            previous = ts;
        }
    }

    #[test]
    fn distinct_across_threads() {
        let stamps: Vec<i64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..20).map(|_| next_timestamp()).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut sorted = stamps.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), stamps.len(), "every call took its own millisecond");
    }

    #[test]
    fn a_floor_ahead_is_waited_for() {
        let floor = wall_clock() + 5;
        let ts = next_timestamp_after(floor);
        assert!(ts > floor);
        assert!(ts <= wall_clock());
    }
}
