//! hmap's clock: one stamped call on a fresh row (no earlier call on its
//! stripe in this millisecond, in the common case) against one on the same
//! row as the call before (which waits for the next millisecond: one row
//! takes at most one stamped call per millisecond). Single thread. Run with
//! `cargo bench -p hmap-bench --bench clock`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hmap::clock::{RowSet, next_timestamp};

fn clock(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock");
    let mut n = 0u64;
    group.bench_function("fresh row", |b| {
        b.iter(|| {
            n += 1;
            // A 17-byte key, like the store benchmarks' (`p0123/row00123456`).
            let key = format!("p{:04}/row{n:08}", n % 10_000);
            black_box(next_timestamp(&RowSet::of("bench", key.as_bytes())))
        });
    });
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    group.bench_function("random row", |b| {
        b.iter(|| {
            // xorshift64: keys with no structure, like UUIDs or hashed ids.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let key = format!("{state:016x}/row0");
            black_box(next_timestamp(&RowSet::of("bench", key.as_bytes())))
        });
    });
    group.bench_function("same row", |b| {
        let rows = RowSet::of("bench", b"p0000/row00000000");
        b.iter(|| black_box(next_timestamp(&rows)));
    });
    group.bench_function("key and row set, no stamp", |b| {
        b.iter(|| {
            n += 1;
            let key = format!("p{:04}/row{n:08}", n % 10_000);
            black_box(RowSet::of("bench", key.as_bytes()))
        });
    });
    group.bench_function("key only (baseline)", |b| {
        b.iter(|| {
            n += 1;
            black_box(format!("p{:04}/row{n:08}", n % 10_000))
        });
    });
    group.finish();
}

criterion_group!(benches, clock);
criterion_main!(benches);
