//! Conformance cases of writes that change a stored value in place:
//! increments of 8-byte counters, and appends of bytes.

use bytes::Bytes;
use hmap::schema::FamilySchema;
use hmap::store::{Append, Get, Increment, RowMutation, StoreError};

use super::{Target, ab_table, cell, get_cells, now_millis, put, table};

/// A missing counter starts at 0; the new value is returned and stored as an
/// 8-byte big-endian long. (HBase: `Table.incrementColumnValue`; values are
/// `Bytes.toBytes(long)`.)
pub async fn increment_creates_counter(t: &dyn Target) {
    let tt = ab_table(t, "increment_creates_counter").await;
    let values = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "hits", 5))
        .await
        .unwrap();
    assert_eq!(values, vec![5]);
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value, Bytes::copy_from_slice(&5i64.to_be_bytes()));
}

/// Increments accumulate, negative amounts subtract.
pub async fn increment_accumulates(t: &dyn Target) {
    let tt = ab_table(t, "increment_accumulates").await;
    let s = t.store();
    for (amount, expected) in [(1, 1), (10, 11), (-4, 7), (0, 7)] {
        assert_eq!(
            s.increment(&tt.name, &Increment::new("r").add("b", "n", amount))
                .await
                .unwrap(),
            vec![expected]
        );
    }
    assert_eq!(
        get_cells(&tt, Get::new("r")).await[0].value,
        Bytes::copy_from_slice(&7i64.to_be_bytes())
    );
}

/// One increment updates several counters of a row.
/// (Thrift2 IDL: `TIncrement.columns`.)
pub async fn increment_several_columns(t: &dyn Target) {
    let tt = ab_table(t, "increment_several_columns").await;
    let s = t.store();
    s.increment(&tt.name, &Increment::new("r").add("b", "x", 2))
        .await
        .unwrap();
    let values = s
        .increment(&tt.name, &Increment::new("r").add("b", "x", 3).add("b", "y", 4))
        .await
        .unwrap();
    assert_eq!(values, vec![5, 4]);
}

/// Incrementing a value that is not 8 bytes fails and changes nothing.
/// (HBase: `DoNotRetryIOException`, "Field is not a long, it's N bytes wide".)
pub async fn increment_non_counter_fails(t: &dyn Target) {
    let tt = ab_table(t, "increment_non_counter_fails").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "name", 1, "Ann")]).await;
    let err = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "name", 1))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotACounter { len: 3, .. }), "{err}");
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "name", 1, "Ann")]);
}

/// An increment's version is newer than the counter's current one, even
/// when that one carries a future timestamp. (HBase: `HRegion.reckonDelta`,
/// `max(now, current.getTimestamp() + 1)`.)
pub async fn increment_timestamp_after_current(t: &dyn Target) {
    let tt = ab_table(t, "increment_timestamp_after_current").await;
    let future = now_millis() + 3_600_000;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("b", "n", future, 1i64.to_be_bytes().to_vec())],
    )
    .await;
    assert_eq!(
        t.store()
            .increment(&tt.name, &Increment::new("r").add("b", "n", 1))
            .await
            .unwrap(),
        vec![2]
    );
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells[0].timestamp, future + 1);
}

// ---------------------------------------------------------------------------
// Appends

/// Append: a missing column starts empty, an existing one gets the bytes
/// after its value, several columns of several families in one call, and
/// the answer holds each column's new cell (sorted by column), as a read
/// finds it. (HBase: `Table.append`, `Result` of the new cells.)
pub async fn append_to_columns(t: &dyn Target) {
    let tt = ab_table(t, "append_to_columns").await;
    let s = t.store();
    put(&tt, vec![RowMutation::new("r").put_at("a", "log", 1, "x")]).await;
    let answer = s
        .append(
            &tt.name,
            &Append::new("r")
                .add("b", "new", "first")
                .add("a", "log", "yz")
                .add("a", "fresh", "1"),
        )
        .await
        .unwrap();
    assert_eq!(answer.row, Bytes::from_static(b"r"));
    let values: Vec<(&[u8], &[u8], &[u8])> = answer
        .cells
        .iter()
        .map(|c| (&c.family[..], &c.qualifier[..], &c.value[..]))
        .collect();
    assert_eq!(
        values,
        [
            (&b"a"[..], &b"fresh"[..], &b"1"[..]),
            (b"a", b"log", b"xyz"),
            (b"b", b"new", b"first"),
        ]
    );
    // The answer is what is stored now.
    let stored = get_cells(&tt, Get::new("r")).await;
    assert_eq!(stored, answer.cells);
    // Again: appended after the appended value, a moment later (a store
    // whose versions are milliseconds must not put both in one).
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let again = s
        .append(&tt.name, &Append::new("r").add("a", "log", "!"))
        .await
        .unwrap();
    assert_eq!(again.cells.len(), 1);
    assert_eq!(again.cells[0].value, Bytes::from_static(b"xyz!"));
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "log")).await[0].value,
        Bytes::from_static(b"xyz!")
    );
    // The old versions stay, as after a put (family `a` keeps 3).
    let versions = get_cells(&tt, Get::new("r").column("a", "log").max_versions(3)).await;
    let values: Vec<&[u8]> = versions.iter().map(|c| &c.value[..]).collect();
    assert_eq!(values, [&b"xyz!"[..], b"xyz", b"x"]);
    // Binary bytes, appended as they are.
    let binary = s
        .append(
            &tt.name,
            &Append::new("bin").add("b", "q", Bytes::from_static(&[0, 0xff, b':'])),
        )
        .await
        .unwrap();
    assert_eq!(binary.cells[0].value, Bytes::from_static(&[0, 0xff, b':']));
}

/// An append naming a family the table lacks fails with the error every
/// write gives, and one naming a column twice is refused (HBase appends
/// each value to the same old one, keeps the last, and answers with a cell
/// per value; checked on HBase 2.6.1), as an increment naming one twice is:
/// neither writes anything.
pub async fn append_refusals(t: &dyn Target) {
    let tt = table(t, "append_refusals", vec![FamilySchema::new("b")]).await;
    let s = t.store();
    put(&tt, vec![RowMutation::new("r").put_at("b", "q", 1, "v")]).await;
    match s
        .append(&tt.name, &Append::new("r").add("b", "q", "x").add("nope", "q", "x"))
        .await
    {
        Err(StoreError::NoSuchFamily { family, .. }) => assert_eq!(family, "nope"),
        other => panic!("an append to a missing family: {other:?}"),
    }
    match s
        .append(&tt.name, &Append::new("r").add("b", "q", "x").add("b", "q", "y"))
        .await
    {
        Err(StoreError::InvalidRequest { reason, .. }) => assert!(reason.contains("twice"), "{reason}"),
        other => panic!("an append naming a column twice: {other:?}"),
    }
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "q", 1, "v")]);
    // No columns: nothing to do, nothing written.
    let nothing = s.append(&tt.name, &Append::new("r")).await.unwrap();
    assert!(nothing.cells.is_empty());
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// An increment naming one column twice is refused, naming the table, row
/// and column, and writes nothing. (hmap's rule. HBase adds each amount to
/// the same old value, keeps the last sum and answers with a cell per
/// amount: `HRegion.reckonDeltas` reads every delta's column before any is
/// written.)
pub async fn increment_repeated_column_refused(t: &dyn Target) {
    let tt = ab_table(t, "increment_repeated_column_refused").await;
    let err = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "q", 2).add("b", "q", 5))
        .await
        .unwrap_err();
    match &err {
        StoreError::InvalidRequest { table, reason } => {
            assert_eq!(*table, tt.name);
            assert!(reason.contains("row r") && reason.contains("b:q"), "{err}");
        }
        _ => panic!("expected an invalid request, got {err}"),
    }
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).await.unwrap(), None);
}
