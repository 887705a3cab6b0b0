//! Merges arbitrary bytes as the `ReadRows` stream of `BigtableStore`
//! (`hmap::store::bigtable`): the first byte's low bit says whether the
//! read is reversed; the rest is a sequence of messages, each after a
//! 2-byte big-endian length, decoded as `ReadRowsResponse`s whose cell
//! chunks go through the chunk merger. Nothing may panic; the rows it
//! completes come in key order (descending when reversed), no key twice,
//! their cells in HBase's order (family, qualifier, newest first); and the
//! keys and values it holds are no more bytes than the input (a split
//! cell's announced `value_size` reserves nothing beyond what came).
#![no_main]

use hmap::store::bigtable::__fuzz_read_rows;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, mut rest)) = data.split_first() else {
        return;
    };
    let reversed = flags & 1 == 1;
    let mut messages = Vec::new();
    while let [a, b, tail @ ..] = rest {
        let len = usize::from(u16::from_be_bytes([*a, *b])).min(tail.len());
        messages.push(&tail[..len]);
        rest = &tail[len..];
    }
    let (rows, _error) = __fuzz_read_rows(&messages, reversed);
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0].row, &pair[1].row);
        assert!(if reversed { a > b } else { a < b }, "rows out of order: {a:?} then {b:?}");
    }
    let mut held = 0;
    for row in &rows {
        assert!(!row.row.is_empty(), "a row without a key");
        held += row.row.len();
        for pair in row.cells.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(
                (&a.family, &a.qualifier, std::cmp::Reverse(a.timestamp))
                    <= (&b.family, &b.qualifier, std::cmp::Reverse(b.timestamp)),
                "cells out of HBase's order in row {:?}",
                row.row
            );
        }
        held += row.cells.iter().map(|c| c.value.len()).sum::<usize>();
    }
    assert!(held <= data.len(), "{held} bytes of keys and values from {} of input", data.len());
});
