//! Numbers that differ from call to call: nonces, and the jitter of
//! pauses.

/// A number that differs from call to call and from process to process
/// (nonces; no random-number crate for this).
pub(super) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(now);
    hasher.finish()
}
