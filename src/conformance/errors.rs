//! Conformance cases of requests HBase refuses, each with its typed error
//! and nothing written: a family the table lacks, an empty or too long row
//! key, a value or cell over the size limit, a negative timestamp.

use bytes::Bytes;
use hmap::store::{Get, MAX_ROW_LENGTH, RowMutation, Scan, StoreError, max_row_length};

use super::{Target, ab_table, cell, get_cells, put};

/// Naming a family the table does not have is an error, for reads and writes.
/// (HBase: `NoSuchColumnFamilyException` from `HRegion.checkFamily`.)
pub async fn unknown_family_fails(t: &dyn Target) {
    let tt = ab_table(t, "unknown_family_fails").await;
    let s = t.store();
    assert!(matches!(
        s.get(&tt.name, &Get::new("r").family("zz")).await,
        Err(StoreError::NoSuchFamily { ref family, .. }) if family == "zz"
    ));
    assert!(matches!(
        s.mutate(&tt.name, &[RowMutation::new("r").put("zz", "q", "v")]).await,
        Err(StoreError::NoSuchFamily { .. })
    ));
    assert!(matches!(
        s.scan(&tt.name, &Scan::all().family("zz")).await.map(|_| ()),
        Err(StoreError::NoSuchFamily { .. })
    ));
}

/// An empty row key is refused. (HBase: `Mutation.checkRow`, "Row length is 0".)
pub async fn empty_row_rejected(t: &dyn Target) {
    let tt = ab_table(t, "empty_row_rejected").await;
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("").put("a", "q", "v")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidRow { .. }), "{err}");
}

/// The longest row key a table can hold is accepted, one byte longer is
/// refused: 32767 less the table name and 16. (HBase:
/// `HConstants.MAX_ROW_LENGTH = Short.MAX_VALUE`, `Mutation.checkRow`; the
/// client's region lookup builds the `hbase:meta` key
/// `<table>,<row>,99999999999999` in `ConnectionImplementation.locateRegionInMeta`
/// and refuses it past 32767 bytes.)
pub async fn row_length_limit(t: &dyn Target) {
    let tt = ab_table(t, "row_length_limit").await;
    let limit = max_row_length(&tt.name);
    assert_eq!(limit, MAX_ROW_LENGTH - tt.name.len() - 16);
    let longest = Bytes::from(vec![b'k'; limit]);
    put(&tt, vec![RowMutation::new(longest.clone()).put_at("a", "q", 1, "v")]).await;
    assert_eq!(get_cells(&tt, Get::new(longest)).await, vec![cell("a", "q", 1, "v")]);
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new(vec![b'k'; limit + 1]).put("a", "q", "v")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidRow { .. }), "{err}");
}

/// A value over the cell size limit is refused and nothing is written.
/// (HBase: `hbase.client.keyvalue.maxsize`, 10 MiB, checked in
/// `ConnectionUtils.validatePut`.)
pub async fn oversized_value_rejected(t: &dyn Target) {
    let tt = ab_table(t, "oversized_value_rejected").await;
    let limit = t.max_value_size();
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("r").put("a", "q", vec![0u8; limit + 1])])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::CellTooLarge { size, limit: l, .. } if size > limit && l == limit),
        "{err}"
    );
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![]);
}

/// Timestamps are non-negative. (HBase: `Put.addColumn`, "Timestamp cannot
/// be negative".)
pub async fn negative_timestamp_rejected(t: &dyn Target) {
    let tt = ab_table(t, "negative_timestamp_rejected").await;
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("r").put_at("a", "q", -1, "v")])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NegativeTimestamp { timestamp: -1, .. }),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// The cell size limit counts what HBase counts: row, family, qualifier and
/// value, plus 24 bytes (a `KeyValue`'s 20 bytes of framing and the 4 that
/// `PrivateCellUtil.estimatedSerializedSizeOf` adds); the error names the
/// row and column. (HBase: `RSRpcServices.checkCellSizeLimit` against
/// `hbase.server.keyvalue.maxsize`, 10 MiB: "Cell[r/a:q/...] with size
/// 10485761 exceeds limit of 10485760 bytes" for a 10485734-byte value.)
pub async fn cell_size_counts_row_and_column(t: &dyn Target) {
    let tt = ab_table(t, "cell_size_counts_row_and_column").await;
    let limit = t.max_value_size();
    let largest = limit - 24 - "row".len() - "a".len() - "qq".len();
    put(
        &tt,
        vec![RowMutation::new("row").put_at("a", "qq", 1, vec![b'x'; largest])],
    )
    .await;
    let cells = get_cells(&tt, Get::new("row")).await;
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value.len(), largest);
    let err = t
        .store()
        .mutate(
            &tt.name,
            &[RowMutation::new("row").put_at("a", "qq", 2, vec![b'x'; largest + 1])],
        )
        .await
        .unwrap_err();
    match &err {
        StoreError::CellTooLarge {
            table,
            row,
            column,
            size,
            limit: l,
        } => {
            assert_eq!((table, row.as_str(), column.as_str()), (&tt.name, "row", "a:qq"));
            assert_eq!((*size, *l), (limit + 1, limit));
        }
        _ => panic!("expected a cell too large, got {err}"),
    }
    assert_eq!(get_cells(&tt, Get::new("row")).await[0].timestamp, 1);
}
