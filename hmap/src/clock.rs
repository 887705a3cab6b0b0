//! The timestamps hmap chooses itself.

use std::sync::atomic::{AtomicI64, Ordering};

/// A timestamp for a write hmap stamps itself: the clock in milliseconds,
/// but always later than the previous one this process handed out.
///
/// Relation helpers write both rows of a link with one such timestamp (puts
/// at it, deletes up to it), so that whatever order concurrent operations
/// reach each row in, both rows end with the operation that took the later
/// timestamp. Dynamic-family replacements delete up to the millisecond
/// before theirs, so two in one millisecond need distinct ones. Across
/// processes, timestamps are as good as the clocks are synchronised.
pub fn next_timestamp() -> i64 {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = clock.max(last.saturating_add(1));
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}
