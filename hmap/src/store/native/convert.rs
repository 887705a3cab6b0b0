//! hmap's request and result types to and from HBase's protobuf messages.

use bytes::Bytes;

use super::codec::WireCell;
use super::connection::CallReply;
use super::error::NativeError;
use super::proto::{self, mutation_proto};
use prost::Message;

use crate::store::{
    Append, Cell, CheckAndMutate, Column, Get, Increment, Mutation, RowMutation, RowResult, Scan, TimeRange,
    selected_columns,
};

/// The KeyValue type byte of a put.
const PUT: u8 = 4;

/// A read's columns, grouped by family as HBase wants them (a family with
/// no qualifiers reads all of it).
fn columns(columns: &[Column]) -> Vec<proto::Column> {
    let mut out: Vec<proto::Column> = Vec::new();
    for column in selected_columns(columns).iter() {
        let family = column.family();
        let at = match out.iter().position(|c| c.family == *family) {
            Some(at) => at,
            None => {
                out.push(proto::Column {
                    family: family.clone(),
                    qualifier: Vec::new(),
                });
                out.len() - 1
            }
        };
        if let Column::Qualifier(_, qualifier) = column {
            out[at].qualifier.push(qualifier.clone());
        }
    }
    out
}

fn time_range(range: TimeRange) -> Option<proto::TimeRange> {
    (!range.is_all()).then(|| proto::TimeRange {
        from: Some(range.min.max(0) as u64),
        to: Some(range.max.max(0) as u64),
    })
}

/// A [`Get`] as HBase's `Get`.
pub fn get(get: &Get) -> proto::Get {
    proto::Get {
        row: get.row.clone(),
        column: columns(&get.columns),
        time_range: time_range(get.time_range),
        max_versions: Some(get.max_versions.max(1)),
        filter: get.filter.as_ref().map(super::filter::filter_to_proto),
        ..Default::default()
    }
}

/// A [`Scan`] as HBase's `Scan`, from `start` (the region's part of the
/// range may begin later than the scan's).
///
/// hmap gives ranges low to high also when reversed; HBase's reversed scan
/// starts at its high end: the stop (exclusive) becomes the start, not
/// included, and the start the stop, included.
pub fn scan(scan: &Scan) -> proto::Scan {
    let mut out = proto::Scan {
        column: columns(&scan.columns),
        time_range: time_range(scan.time_range),
        max_versions: Some(scan.max_versions.max(1)),
        // A scan sized by bytes leaves the rows to the region server, up to
        // its byte budget, as HBase's own client does.
        caching: scan.batch_size.map(|n| n.clamp(1, u32::MAX as usize) as u32),
        max_result_size: scan
            .batch_size
            .is_none()
            .then(|| scan.batch_bytes.unwrap_or(crate::store::DEFAULT_BATCH_BYTES) as u64),
        filter: scan.filter.as_ref().map(super::filter::filter_to_proto),
        ..Default::default()
    };
    if scan.reversed {
        out.reversed = Some(true);
        out.start_row = Some(scan.stop.clone());
        out.include_start_row = Some(false);
        out.stop_row = Some(scan.start.clone());
        out.include_stop_row = Some(true);
    } else {
        out.start_row = Some(scan.start.clone());
        out.stop_row = Some(scan.stop.clone());
    }
    out
}

fn timestamp(ts: Option<i64>) -> Option<u64> {
    ts.map(|t| t.max(0) as u64)
}

/// One cell change of a row, and whether it is a put.
fn qualifier_value(m: &Mutation) -> Option<(bool, Bytes, mutation_proto::column_value::QualifierValue)> {
    use mutation_proto::DeleteType;
    let qv = |qualifier: Option<&Bytes>, value: Option<&Bytes>, ts: Option<i64>, delete: Option<DeleteType>| {
        mutation_proto::column_value::QualifierValue {
            qualifier: qualifier.cloned(),
            value: value.cloned(),
            timestamp: timestamp(ts),
            delete_type: delete.map(|d| d as i32),
            tags: None,
        }
    };
    Some(match m {
        Mutation::Put {
            family,
            qualifier,
            value,
            timestamp,
        } => (true, family.clone(), qv(Some(qualifier), Some(value), *timestamp, None)),
        Mutation::DeleteCell {
            family,
            qualifier,
            timestamp,
        } => (
            false,
            family.clone(),
            qv(Some(qualifier), None, *timestamp, Some(DeleteType::DeleteOneVersion)),
        ),
        Mutation::DeleteColumn {
            family,
            qualifier,
            up_to,
        } => (
            false,
            family.clone(),
            qv(Some(qualifier), None, *up_to, Some(DeleteType::DeleteMultipleVersions)),
        ),
        Mutation::DeleteFamily { family, up_to } => (
            false,
            family.clone(),
            qv(None, None, *up_to, Some(DeleteType::DeleteFamily)),
        ),
        _ => return None,
    })
}

/// A row's changes as HBase's mutations: one `PUT` or `DELETE` per run of
/// changes of one kind, in order (a row delete is a `DELETE` without
/// columns). Several mutations must be applied together
/// (`RegionAction` with `atomic`) to keep the row's changes atomic.
pub fn mutations(row: &RowMutation) -> Result<Vec<proto::MutationProto>, NativeError> {
    let mut out: Vec<proto::MutationProto> = Vec::new();
    let new = |kind: mutation_proto::MutationType, timestamp: Option<u64>| proto::MutationProto {
        row: Some(row.row.clone()),
        mutate_type: Some(kind as i32),
        timestamp,
        ..Default::default()
    };
    for m in &row.mutations {
        if let Mutation::DeleteRow { up_to } = m {
            out.push(new(mutation_proto::MutationType::Delete, timestamp(*up_to)));
            continue;
        }
        let Some((is_put, family, qv)) = qualifier_value(m) else {
            return Err(NativeError::Unsupported {
                what: format!("the mutation {m:?}"),
            });
        };
        let kind = if is_put {
            mutation_proto::MutationType::Put
        } else {
            mutation_proto::MutationType::Delete
        };
        // A row delete does not take columns: start a new mutation after it.
        // Nor does a `Delete` take a second delete of a column's latest
        // version: HBase would count them and delete that many versions
        // (`HRegion.prepareDeleteTimestamps`), where each of hmap's deletes
        // resolves against the row as it was, as separate `Delete`s do.
        let latest = |q: &mutation_proto::column_value::QualifierValue| {
            q.timestamp.is_none() && q.delete_type == Some(mutation_proto::DeleteType::DeleteOneVersion as i32)
        };
        let repeats_latest = |last: &proto::MutationProto| {
            latest(&qv)
                && last.column_value.iter().any(|c| {
                    c.family == family
                        && c.qualifier_value
                            .iter()
                            .any(|q| latest(q) && q.qualifier == qv.qualifier)
                })
        };
        // Nor does a `Delete` take a family delete after other deletes of
        // that family: HBase's `Delete.addFamily` clears the family's
        // earlier deletes of the same `Delete` (`ProtobufUtil.toDelete`
        // builds it with `addFamily`), where each of hmap's deletes counts.
        let clears_family = |last: &proto::MutationProto| {
            matches!(m, Mutation::DeleteFamily { .. })
                && last
                    .column_value
                    .iter()
                    .any(|c| c.family == family && !c.qualifier_value.is_empty())
        };
        let reusable = out.last().is_some_and(|last| {
            last.mutate_type == Some(kind as i32)
                && !last.column_value.is_empty()
                && !repeats_latest(last)
                && !clears_family(last)
        });
        if !reusable {
            out.push(new(kind, None));
        }
        let last = out.last_mut().expect("pushed above");
        match last.column_value.iter_mut().find(|c| c.family == family) {
            Some(column) => column.qualifier_value.push(qv),
            None => last.column_value.push(mutation_proto::ColumnValue {
                family,
                qualifier_value: vec![qv],
            }),
        }
    }
    Ok(out)
}

/// The check of a check-and-mutate, as HBase's `Condition`: a filter, or
/// the column's newest value (in the time range) compared with the expected
/// one. HBase reads its operator as `given op stored`
/// (`HRegion.checkAndMutateInternal`: `compareResult` is the comparator's
/// value compared with the cell's), hmap's as `stored op given`: the
/// operator is sent mirrored. An absent expected value is the empty one:
/// HBase's region reads an empty comparator value as "absent or empty"
/// (`valueIsNull`), as its client's `ifNotExists()` relies on.
pub fn condition(op: &CheckAndMutate) -> proto::Condition {
    let time_range = time_range(op.time_range);
    if let Some(filter) = &op.filter {
        return proto::Condition {
            row: op.row.clone(),
            family: None,
            qualifier: None,
            compare_type: None,
            comparator: None,
            time_range,
            filter: Some(super::filter::filter_to_proto(filter)),
        };
    }
    let comparable = proto::BinaryComparator {
        comparable: proto::ByteArrayComparable {
            value: Some(op.expected.clone().unwrap_or_default()),
        },
    };
    proto::Condition {
        row: op.row.clone(),
        family: Some(op.family.clone()),
        qualifier: Some(op.qualifier.clone()),
        compare_type: Some(super::filter::compare_type(op.compare.mirrored()) as i32),
        comparator: Some(proto::Comparator {
            name: "org.apache.hadoop.hbase.filter.BinaryComparator".to_string(),
            serialized_comparator: Some(comparable.encode_to_vec().into()),
        }),
        time_range,
        filter: None,
    }
}

/// An append as HBase's `APPEND` mutation: each column's bytes to append.
pub fn append(op: &Append) -> proto::MutationProto {
    column_values(
        &op.row,
        mutation_proto::MutationType::Append,
        op.columns.iter().map(|(f, q, v)| (f, q, v.clone())),
    )
}

/// An increment as HBase's `INCREMENT` mutation: each amount as an 8-byte
/// big-endian value.
pub fn increment(op: &Increment) -> proto::MutationProto {
    column_values(
        &op.row,
        mutation_proto::MutationType::Increment,
        op.columns
            .iter()
            .map(|(f, q, amount)| (f, q, Bytes::copy_from_slice(&amount.to_be_bytes()))),
    )
}

/// A mutation of `kind` with a value per column, grouped by family as
/// HBase's client groups them.
fn column_values<'a>(
    row: &Bytes,
    kind: mutation_proto::MutationType,
    columns: impl Iterator<Item = (&'a Bytes, &'a Bytes, Bytes)>,
) -> proto::MutationProto {
    let mut mutation = proto::MutationProto {
        row: Some(row.clone()),
        mutate_type: Some(kind as i32),
        ..Default::default()
    };
    for (family, qualifier, value) in columns {
        let qv = mutation_proto::column_value::QualifierValue {
            qualifier: Some(qualifier.clone()),
            value: Some(value),
            timestamp: None,
            delete_type: None,
            tags: None,
        };
        match mutation.column_value.iter_mut().find(|c| c.family == *family) {
            Some(column) => column.qualifier_value.push(qv),
            None => mutation.column_value.push(mutation_proto::ColumnValue {
                family: family.clone(),
                qualifier_value: vec![qv],
            }),
        }
    }
    mutation
}

/// The new value of each counter of `op`, in its order, from the row HBase
/// answered an increment with (its cells sorted by column, one per counter).
pub fn counters(op: &Increment, row: Option<&RowResult>) -> Result<Vec<i64>, NativeError> {
    op.columns
        .iter()
        .map(|(family, qualifier, _)| {
            let cell = row
                .and_then(|r| r.latest(family, qualifier))
                .ok_or_else(|| NativeError::InvalidReply {
                    reason: format!(
                        "the increment's reply has no cell for {}",
                        crate::store::error::show_column(family, qualifier)
                    ),
                })?;
            let bytes: [u8; 8] = cell.value[..].try_into().map_err(|_| NativeError::InvalidReply {
                reason: format!("a counter of {} bytes", cell.value.len()),
            })?;
            Ok(i64::from_be_bytes(bytes))
        })
        .collect()
}

/// A row's cells: those of a cell block (`cells`, taking `count`) and
/// those inside the `Result` message. `None` for a row without cells.
pub fn row_result(
    result: &proto::Result,
    count: usize,
    cells: &mut impl Iterator<Item = WireCell>,
) -> Result<Option<RowResult>, NativeError> {
    let mut row = None;
    let mut out = Vec::with_capacity(count + result.cell.len());
    for i in 0..count {
        let cell = cells.next().ok_or_else(|| NativeError::InvalidReply {
            reason: format!("a result announces {count} cells, the cell block has {i} left"),
        })?;
        if cell.cell_type != PUT {
            continue;
        }
        row.get_or_insert_with(|| cell.row.clone());
        out.push(Cell::new(cell.family, cell.qualifier, cell.timestamp, cell.value));
    }
    for cell in &result.cell {
        if cell.cell_type.unwrap_or(proto::CellType::Put as i32) != proto::CellType::Put as i32 {
            continue;
        }
        if let Some(r) = &cell.row {
            row.get_or_insert_with(|| r.clone());
        }
        out.push(Cell::new(
            cell.family.clone().unwrap_or_default(),
            cell.qualifier.clone().unwrap_or_default(),
            cell.timestamp.unwrap_or(0) as i64,
            cell.value.clone().unwrap_or_default(),
        ));
    }
    Ok(row.map(|row| RowResult::new(row, out)))
}

/// The number of cell-block cells a `Result` announces.
pub fn associated_cells(result: &proto::Result) -> Result<usize, NativeError> {
    usize::try_from(result.associated_cell_count.unwrap_or(0)).map_err(|_| NativeError::InvalidReply {
        reason: format!("a negative cell count {:?}", result.associated_cell_count),
    })
}

/// The cells of each row of a scan reply: from the cell block, split by
/// `cells_per_result`, or from the `Result` messages.
pub(super) fn scan_rows(
    reply: &CallReply<proto::ScanResponse>,
) -> Result<Vec<Vec<super::codec::WireCell>>, NativeError> {
    let message = &reply.message;
    if !message.cells_per_result.is_empty() {
        let mut cells = reply.cells.iter().cloned();
        let mut rows = Vec::with_capacity(message.cells_per_result.len());
        for (i, &n) in message.cells_per_result.iter().enumerate() {
            let row: Vec<_> = cells.by_ref().take(n as usize).collect();
            if row.len() != n as usize {
                return Err(NativeError::InvalidReply {
                    reason: format!("scan result {i} announces {n} cells, the cell block has {}", row.len()),
                });
            }
            rows.push(row);
        }
        return Ok(rows);
    }
    Ok(message
        .results
        .iter()
        .map(|r| {
            r.cell
                .iter()
                .map(|c| super::codec::WireCell {
                    row: c.row.clone().unwrap_or_default(),
                    family: c.family.clone().unwrap_or_default(),
                    qualifier: c.qualifier.clone().unwrap_or_default(),
                    timestamp: c.timestamp.unwrap_or(0) as i64,
                    cell_type: c.cell_type.unwrap_or(4) as u8,
                    value: c.value.clone().unwrap_or_default(),
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_group_by_family() {
        let g = Get::new("r")
            .column("a", "x")
            .family("b")
            .column("a", "y")
            .column("b", "z");
        let p = get(&g);
        assert_eq!(p.column.len(), 2);
        assert_eq!(p.column[0].family, "a");
        assert_eq!(p.column[0].qualifier, vec![Bytes::from("x"), Bytes::from("y")]);
        assert!(p.column[1].qualifier.is_empty(), "b read whole");
        assert_eq!(p.time_range, None);
        let p = get(&Get::new("r").time_range(TimeRange::new(5, 9)).max_versions(3));
        assert_eq!(p.time_range.map(|t| (t.from, t.to)), Some((Some(5), Some(9))));
        assert_eq!(p.max_versions, Some(3));
    }

    #[test]
    fn reversed_scans_start_at_the_high_end() {
        let s = scan(&Scan::range("b", "d").reversed());
        assert_eq!(s.start_row.as_deref(), Some(&b"d"[..]));
        assert_eq!((s.include_start_row, s.include_stop_row), (Some(false), Some(true)));
        assert_eq!(s.stop_row.as_deref(), Some(&b"b"[..]));
        let s = scan(&Scan::range("b", "d"));
        assert_eq!((s.start_row.as_deref(), s.reversed), (Some(&b"b"[..]), None));
    }

    #[test]
    fn mixed_changes_split_by_kind_in_order() {
        let row = RowMutation::new("r")
            .put("f", "a", "1")
            .put_at("g", "b", 7, "2")
            .delete_column("f", "c")
            .delete_row()
            .put("f", "d", "3");
        let m = mutations(&row).expect("converts");
        let kinds: Vec<_> = m.iter().map(|m| m.mutate_type).collect();
        use mutation_proto::MutationType::{Delete, Put};
        assert_eq!(
            kinds,
            [
                Some(Put as i32),
                Some(Delete as i32),
                Some(Delete as i32),
                Some(Put as i32)
            ]
        );
        assert_eq!(m[0].column_value.len(), 2);
        assert_eq!(m[0].column_value[1].qualifier_value[0].timestamp, Some(7));
        assert!(m[2].column_value.is_empty(), "a row delete");
    }

    #[test]
    fn a_second_delete_of_the_latest_version_is_a_delete_of_its_own() {
        let row = RowMutation::new("r")
            .delete_latest("f", "q")
            .delete_latest("f", "other")
            .delete_latest("f", "q")
            .delete_version("f", "q", 5);
        let m = mutations(&row).expect("converts");
        let qualifiers: Vec<usize> = m.iter().map(|m| m.column_value[0].qualifier_value.len()).collect();
        assert_eq!(qualifiers, [2, 2], "{m:?}");
    }

    #[test]
    fn a_family_delete_after_deletes_of_its_family_is_a_delete_of_its_own() {
        // HBase's `Delete.addFamily` clears the family's earlier deletes in
        // the same `Delete`: each must survive in a message of its own.
        let families = |row: RowMutation| -> Vec<Vec<(Vec<u8>, usize)>> {
            mutations(&row)
                .expect("converts")
                .iter()
                .map(|m| {
                    m.column_value
                        .iter()
                        .map(|c| (c.family.to_vec(), c.qualifier_value.len()))
                        .collect()
                })
                .collect()
        };
        let a = || b"a".to_vec();
        let b = || b"b".to_vec();
        assert_eq!(
            families(
                RowMutation::new("r")
                    .delete_family_up_to("a", 2000)
                    .delete_family_up_to("a", 300)
            ),
            [vec![(a(), 1)], vec![(a(), 1)]]
        );
        assert_eq!(
            families(
                RowMutation::new("r")
                    .delete_version("a", "q", 5)
                    .delete_column_up_to("b", "q", 5)
                    .delete_family_up_to("a", 3)
                    .delete_column("a", "z")
            ),
            [vec![(a(), 1), (b(), 1)], vec![(a(), 2)]]
        );
        // A family delete first, or of another family, shares the message.
        assert_eq!(
            families(
                RowMutation::new("r")
                    .delete_family_up_to("a", 3)
                    .delete_version("a", "q", 5)
                    .delete_family("b")
            ),
            [vec![(a(), 2), (b(), 1)]]
        );
    }

    #[test]
    fn results_take_their_cells_from_the_block() {
        let cell = |q: &'static str, t: u8| WireCell {
            row: "r".into(),
            family: "f".into(),
            qualifier: q.into(),
            timestamp: 3,
            cell_type: t,
            value: "v".into(),
        };
        let mut cells = vec![cell("a", 4), cell("b", 4), cell("c", 4)].into_iter();
        let result = proto::Result {
            associated_cell_count: Some(2),
            ..Default::default()
        };
        let row = row_result(&result, 2, &mut cells).expect("ok").expect("a row");
        assert_eq!(row.row, "r");
        assert_eq!(row.cells.len(), 2);
        assert_eq!(cells.next().map(|c| c.qualifier), Some(Bytes::from("c")));
        let err = row_result(&result, 2, &mut cells).expect_err("too few");
        assert!(matches!(err, NativeError::InvalidReply { .. }));
        assert_eq!(row_result(&result, 0, &mut cells).expect("ok"), None);
    }
}
