//! The timestamps hmap chooses itself.
//!
//! hmap stamps its own writes (rather than letting the server stamp them) so
//! that, within a process, a later call always wins over an earlier one that
//! touched the same row: a put after a delete of the row, a dynamic-family
//! replacement after another. HBase orders the versions of a cell by
//! timestamp alone (a delete marker at `ts` masks a put at `ts`), so two
//! calls on one row in one millisecond need distinct timestamps.
//!
//! The model: **one timestamp per call, per row, never ahead of the wall
//! clock.** A call names the rows it writes (a [`RowSet`]) and
//! [`next_timestamp`] returns the wall clock in milliseconds, strictly later
//! than every timestamp this process handed out before to a call that
//! touched one of those rows. When such a call took the current
//! millisecond, it waits for the next one instead of running ahead. Calls on
//! different rows may share a millisecond, so a process is not limited to
//! one stamped call per millisecond: only calls on one row are.
//!
//! How: a fixed table of 16,384 stripes, each holding the last timestamp
//! handed out to a call on any row that hashes to it (CRC-32 of the table
//! name and the row key). A call reads the latest of its rows' stripes
//! (and of its floor), waits until the wall clock is past it, then claims
//! each stripe for the current millisecond with an atomic `fetch_max`; if
//! another call claimed that millisecond on a shared stripe meanwhile, it
//! tries again at a later one. Unrelated rows that share a stripe only cost
//! an occasional wait. The table name is part of the hash because tables
//! commonly share key spaces (an entity table and its index or relation
//! tables keyed by the same ids), whose rows are unrelated cells: without
//! it they would always share stripes (safe, but slower).
//!
//! So a write's timestamp is never later than the wall clock at the time it
//! was made, and a delete the server stamps afterwards (another client, the
//! HBase shell) covers it, as does a write made after a restart. If the
//! wall clock steps back, a call waits until it is past its rows' last
//! timestamps again.
//!
//! Across processes, timestamps are as good as the clocks are synchronised:
//! see the multi-writer model in the relations chapter of the guide.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use smallvec::SmallVec;

/// The number of stripes (128 KiB of slots): few enough to stay in cache,
/// enough that a thread stamping distinct rows back to back rarely lands on
/// a stripe it used in the same millisecond.
const STRIPES: usize = 1 << 14;

/// The last timestamp handed out in this process to a call on a row of
/// each stripe.
static SLOTS: [AtomicI64; STRIPES] = [const { AtomicI64::new(0) }; STRIPES];

/// The rows a write touches, reduced to the clock's stripes (a sorted set
/// of stripe numbers, inline up to eight, so adding a row twice, or two
/// rows of one stripe, costs nothing).
///
/// ```
/// use hmap::clock::{RowSet, next_timestamp};
/// let mut rows = RowSet::of("person", b"p1");
/// rows.insert("role", b"admin");
/// let ts = next_timestamp(&rows);
/// assert!(ts <= hmap::clock::wall_clock());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RowSet {
    /// Sorted, without duplicates.
    stripes: SmallVec<[u16; 8]>,
}

impl Default for RowSet {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for RowSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowSet").field("stripes", &self.stripes.len()).finish()
    }
}

impl RowSet {
    /// No rows.
    pub fn new() -> Self {
        RowSet {
            stripes: SmallVec::new(),
        }
    }

    /// One row of `table`.
    pub fn of(table: &str, row: &[u8]) -> Self {
        let mut rows = Self::new();
        rows.insert(table, row);
        rows
    }

    /// The rows `keys` of `table`.
    pub fn of_rows<'k>(table: &str, keys: impl IntoIterator<Item = &'k [u8]>) -> Self {
        let mut stripes: SmallVec<[u16; 8]> = keys.into_iter().map(|key| stripe_of(table, key)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        RowSet { stripes }
    }

    /// These rows and a row of `table`.
    #[must_use]
    pub fn with(mut self, table: &str, row: &[u8]) -> Self {
        self.insert(table, row);
        self
    }

    /// Adds a row of `table`.
    pub fn insert(&mut self, table: &str, row: &[u8]) {
        let stripe = stripe_of(table, row);
        if let Err(at) = self.stripes.binary_search(&stripe) {
            self.stripes.insert(at, stripe);
        }
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.stripes.is_empty()
    }

    /// The stripes, in increasing order.
    fn stripes(&self) -> impl Iterator<Item = usize> + '_ {
        self.stripes.iter().map(|&s| usize::from(s))
    }
}

/// The stripe of a row: the low bits of the CRC-32 (fast,
/// hardware-assisted, already a dependency) of the table name and the row
/// key. CRC is linear, so keys that differ only in their last 14 bits
/// (sequential ids) fall on distinct stripes; mixing the bits further (a
/// multiplication, top bits) made the benchmark's sequential keys collide
/// like random ones, and seven times slower.
fn stripe_of(table: &str, row: &[u8]) -> u16 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(table.as_bytes());
    hasher.update(row);
    // STRIPES is a power of two below 2^16: the low bits of the CRC.
    u16::try_from(hasher.finalize() % (STRIPES as u32)).unwrap_or(0)
}

/// The wall clock, in milliseconds since the epoch.
pub fn wall_clock() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A timestamp for a write hmap stamps itself that touches `rows`: the
/// wall clock in milliseconds, strictly later than every one this process
/// handed out before to a call touching any of `rows`. When such a call
/// took the current millisecond, waits for the next (well under a
/// millisecond on average) rather than run ahead of the wall clock.
///
/// Name every row the call writes, before taking the timestamp, and take
/// one per call, not one per row: every row of a call shares it. Relation
/// helpers write all rows of an operation with one such timestamp (puts at
/// it, deletes up to it), so that whatever order concurrent operations
/// reach each row in, every row ends with the operation that took the
/// later timestamp. Dynamic-family replacements delete up to the
/// millisecond before theirs, which the previous call on the row took at
/// most.
///
/// If the wall clock steps back, this waits until it is past the rows'
/// last timestamps again: a write is never stamped before one made earlier
/// on the same row.
pub fn next_timestamp(rows: &RowSet) -> i64 {
    next_timestamp_after(rows, i64::MIN)
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
pub fn next_timestamp_after(rows: &RowSet, floor: i64) -> i64 {
    stamp(&SLOTS, rows, floor, &WallClock)
}

/// Where [`stamp`] reads the time and how it waits: the wall clock, or a
/// test's clock.
trait Time {
    /// The time, in milliseconds.
    fn now(&self) -> i64;
    /// Waits a little towards `at`.
    fn wait_until(&self, at: i64);
}

/// The system's wall clock.
struct WallClock;

impl Time for WallClock {
    fn now(&self) -> i64 {
        wall_clock()
    }

    /// Sleeps until the wall clock reads `at`, at most 10 ms at a time so
    /// that a clock that is adjusted meanwhile is followed.
    fn wait_until(&self, at: i64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let target = Duration::from_millis(u64::try_from(at).unwrap_or(0));
        if let Some(ahead) = target.checked_sub(now) {
            std::thread::sleep(ahead.min(Duration::from_millis(10)));
        }
    }
}

/// The clock itself, over a stripe table and a time source.
fn stamp(slots: &[AtomicI64; STRIPES], rows: &RowSet, floor: i64, time: &impl Time) -> i64 {
    let slot = |stripe: usize| slots.get(stripe);
    loop {
        let last = rows
            .stripes()
            .filter_map(slot)
            .map(|s| s.load(Ordering::Acquire))
            .fold(floor, i64::max);
        let earliest = last.saturating_add(1);
        let now = time.now();
        if now < earliest {
            time.wait_until(earliest);
            continue;
        }
        // Claim the millisecond on every stripe, in increasing order (so
        // that of calls racing for stripes, one always gets through). A
        // stripe already at `now` was claimed by another call: try a later
        // millisecond. Stripes raised to `now` meanwhile stay raised, which
        // only makes their next calls wait a millisecond more.
        if rows
            .stripes()
            .filter_map(slot)
            .all(|s| s.fetch_max(now, Ordering::AcqRel) < now)
        {
            return now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test clock that stands still until a call waits, which moves it to
    /// the time waited for: which calls share a millisecond depends only on
    /// the calls, not on the machine's speed.
    struct StillClock(AtomicI64);

    impl Time for StillClock {
        fn now(&self) -> i64 {
            self.0.load(Ordering::Acquire)
        }

        fn wait_until(&self, at: i64) {
            self.0.fetch_max(at, Ordering::AcqRel);
        }
    }

    fn fresh_slots() -> Box<[AtomicI64; STRIPES]> {
        Box::new([const { AtomicI64::new(0) }; STRIPES])
    }

    /// Row keys of `table` in pairwise distinct stripes.
    fn rows_in_distinct_stripes(table: &str, n: usize) -> Vec<Vec<u8>> {
        let mut seen = std::collections::BTreeSet::new();
        (0u32..)
            .map(|i| format!("row{i}").into_bytes())
            .filter(|k| seen.insert(stripe_of(table, k)))
            .take(n)
            .collect()
    }

    #[test]
    fn timestamps_of_one_row_increase_and_stay_at_the_wall_clock() {
        let rows = RowSet::of("t", b"one row");
        let mut previous = next_timestamp(&rows);
        for _ in 0..50 {
            let ts = next_timestamp(&rows);
            let now = wall_clock();
            assert!(ts > previous, "{ts} after {previous}");
            assert!(ts <= now, "{ts} is ahead of the wall clock {now}");
            previous = ts;
        }
    }

    #[test]
    fn threads_on_one_row_get_distinct_increasing_timestamps() {
        let rows = RowSet::of("t", b"shared row");
        let stamps: Vec<Vec<i64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..20).map(|_| next_timestamp(&rows)).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for thread in &stamps {
            assert!(thread.windows(2).all(|w| w[0] < w[1]), "{thread:?}");
        }
        let mut all: Vec<i64> = stamps.concat();
        let calls = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), calls, "every call on the row took its own millisecond");
    }

    #[test]
    fn a_call_touching_a_row_is_later_than_every_call_before_on_it() {
        // Three rows (distinct stripes); calls on overlapping sets.
        let keys = rows_in_distinct_stripes("t", 3);
        let (a, b, c) = (&keys[0][..], &keys[1][..], &keys[2][..]);
        let slots = fresh_slots();
        let clock = StillClock(AtomicI64::new(1_000));
        let at = |rows: &RowSet| stamp(&slots, rows, i64::MIN, &clock);
        let on_a = at(&RowSet::of("t", a));
        let on_b = at(&RowSet::of("t", b));
        assert_eq!(on_a, on_b, "different rows share the millisecond");
        let on_bc = at(&RowSet::of_rows("t", [b, c]));
        assert!(on_bc > on_b);
        let on_ac = at(&RowSet::of_rows("t", [a, c]));
        assert!(on_ac > on_a && on_ac > on_bc);
        // The same key in another table is another row.
        let other_table = keys
            .iter()
            .find(|k| stripe_of("u", k) != stripe_of("t", a) && stripe_of("u", k) != stripe_of("t", c))
            .map(|k| at(&RowSet::of("u", k)));
        assert!(other_table.is_some_and(|ts| ts <= on_ac));
    }

    #[test]
    fn calls_on_different_rows_share_milliseconds_calls_on_one_row_never_do() {
        const THREADS: usize = 8;
        const ROUNDS: usize = 50;
        let keys = rows_in_distinct_stripes("t", THREADS);
        let slots = fresh_slots();
        let clock = StillClock(AtomicI64::new(1_000));
        let barrier = std::sync::Barrier::new(THREADS);
        let stamps: Vec<Vec<i64>> = std::thread::scope(|s| {
            let handles: Vec<_> = keys
                .iter()
                .map(|key| {
                    let (slots, clock, barrier) = (&slots, &clock, &barrier);
                    s.spawn(move || {
                        let rows = RowSet::of("t", key);
                        (0..ROUNDS)
                            .map(|_| {
                                barrier.wait();
                                stamp(slots, &rows, i64::MIN, clock)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for thread in &stamps {
            assert!(
                thread.windows(2).all(|w| w[0] < w[1]),
                "one row, increasing: {thread:?}"
            );
        }
        let mut all: Vec<i64> = stamps.concat();
        all.sort_unstable();
        all.dedup();
        // Each round's calls all fall in at most two milliseconds (the
        // clock moves only when a call waits, by one), whatever the
        // scheduling: far fewer than one millisecond per call.
        assert!(
            all.len() <= 2 * ROUNDS,
            "{} distinct timestamps for {} calls",
            all.len(),
            THREADS * ROUNDS
        );
    }

    #[test]
    fn a_clock_stepping_back_is_waited_for() {
        let slots = fresh_slots();
        let clock = StillClock(AtomicI64::new(5_000));
        let rows = RowSet::of("t", b"r");
        let first = stamp(&slots, &rows, i64::MIN, &clock);
        clock.0.store(4_000, Ordering::Release);
        let second = stamp(&slots, &rows, i64::MIN, &clock);
        assert!(second > first, "{second} after {first}");
        // Another row is not held back.
        let other = rows_in_distinct_stripes("t", 2)
            .into_iter()
            .find(|k| stripe_of("t", k) != stripe_of("t", b"r"))
            .map(|k| {
                stamp(
                    &slots,
                    &RowSet::of("t", &k),
                    i64::MIN,
                    &StillClock(AtomicI64::new(4_000)),
                )
            });
        assert_eq!(other, Some(4_000));
    }

    #[test]
    fn a_floor_ahead_is_waited_for() {
        let floor = wall_clock() + 5;
        let ts = next_timestamp_after(&RowSet::of("t", b"floored"), floor);
        assert!(ts > floor);
        assert!(ts <= wall_clock());
    }

    #[test]
    fn no_rows_is_the_wall_clock() {
        let before = wall_clock();
        let ts = next_timestamp(&RowSet::new());
        assert!(before <= ts && ts <= wall_clock());
    }
}
