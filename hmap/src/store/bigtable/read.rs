//! Reads: HBase's column selection, versions and time ranges as Bigtable
//! row filters, and the merger that assembles `ReadRows`' cell chunks into
//! rows.

use std::cmp::Reverse;

use bytes::{Bytes, BytesMut};
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;
use v2::read_rows_response::CellChunk;
use v2::read_rows_response::cell_chunk::RowStatus;
use v2::row_filter::{Chain, Filter, Interleave};

use super::convert::{from_micros, time_range};
use crate::schema::TableSchema;
use crate::store::{Cell, Column, Result, RowResult, StoreError, TimeRange, selected_columns};

/// The filter of a read of `columns` (every family when empty), up to
/// `max_versions` per column, in `range`, at `now_ms`, through the
/// user's filter `user` (see [`super::filter`]).
///
/// Each column is a chain of its selection, its time range (narrowed to
/// what its family's TTL has not yet expired: Bigtable's garbage collection
/// is lazy, HBase hides an expired cell at once) and a per-column limit of
/// `min(max_versions, VERSIONS)` (lazy GC again: versions beyond the
/// family's VERSIONS stay readable for a while); the columns interleaved.
pub(crate) fn read_filter(
    schema: &TableSchema,
    columns: &[Column],
    max_versions: u32,
    range: TimeRange,
    now_ms: i64,
    user: Option<&crate::store::Filter>,
) -> Result<v2::RowFilter> {
    let refuse = |feature| StoreError::Unsupported {
        backend: "BigtableStore",
        feature,
        table: schema.name.clone(),
    };
    if let Some(f) = user {
        super::filter::check(f).map_err(refuse)?;
    }
    let all: Vec<Column>;
    let columns = if columns.is_empty() {
        all = schema
            .families
            .iter()
            .map(|f| Column::Family(Bytes::from(f.name.clone())))
            .collect();
        std::borrow::Cow::Borrowed(&all[..])
    } else {
        selected_columns(columns)
    };
    let mut branches = Vec::with_capacity(columns.len());
    for column in columns.iter() {
        let family = schema
            .find_family(column.family())
            .ok_or_else(|| StoreError::NoSuchFamily {
                table: schema.name.clone(),
                family: crate::key::Printable(column.family()).to_string(),
            })?;
        let (start, end) = match column {
            Column::Family(_) => (None, None),
            Column::Qualifier(_, q) => (
                Some(v2::column_range::StartQualifier::StartQualifierClosed(q.clone())),
                Some(v2::column_range::EndQualifier::EndQualifierClosed(q.clone())),
            ),
        };
        let mut chain = vec![filter(Filter::ColumnRangeFilter(v2::ColumnRange {
            family_name: family.name.clone(),
            start_qualifier: start,
            end_qualifier: end,
        }))];
        chain.extend(family_window(family, range, now_ms));
        // The filter runs before versions are counted, as on HBase (see
        // `super::filter`).
        if let Some(f) = user
            && let Some(cells) = super::filter::family_cells(f, &family.name, true).map_err(refuse)?
        {
            chain.push(cells);
        }
        let limit = max_versions.min(family.versions).clamp(1, i32::MAX as u32) as i32;
        chain.push(filter(Filter::CellsPerColumnLimitFilter(limit)));
        if user.is_some_and(super::filter::strips_values) {
            chain.push(filter(Filter::StripValueTransformer(true)));
        }
        branches.push(filter(Filter::Chain(Chain { filters: chain })));
    }
    let selection = match branches.len() {
        1 => branches.pop().unwrap_or_default(),
        _ => filter(Filter::Interleave(Interleave { filters: branches })),
    };
    // Row-level tests first, each on what HBase's filter would see of the
    // row; then the cells the read selects.
    let view = super::filter::ReadView {
        schema,
        columns: &columns,
        window: &|family| family_window(family, range, now_ms),
        max_versions,
    };
    let mut conditions = match user {
        Some(f) => super::filter::row_conditions(f, &view).map_err(refuse)?,
        None => Vec::new(),
    };
    if conditions.is_empty() {
        return Ok(selection);
    }
    conditions.push(selection);
    Ok(filter(Filter::Chain(Chain { filters: conditions })))
}

/// The cells of `family` a read in `range` sees: a timestamp range within
/// the family's TTL, a filter that blocks all for an empty one, `None` for
/// every cell.
fn family_window(family: &crate::schema::FamilySchema, range: TimeRange, now_ms: i64) -> Option<v2::RowFilter> {
    let mut min = range.min;
    if let Some(ttl) = family.ttl() {
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        min = min.max(now_ms.saturating_sub(ttl_ms).saturating_add(1));
    }
    if min <= 0 && range.max == i64::MAX {
        return None;
    }
    Some(if min >= range.max {
        // Nothing can match: an empty range reads nothing.
        filter(Filter::BlockAllFilter(true))
    } else {
        filter(Filter::TimestampRangeFilter(time_range(min, range.max)))
    })
}

pub(crate) fn filter(f: Filter) -> v2::RowFilter {
    v2::RowFilter { filter: Some(f) }
}

/// Assembles rows from `ReadRows` chunks, as Bigtable's protocol defines
/// them: a row's first chunk carries its key, family and qualifier; later
/// ones carry a new family (with a qualifier) or a new qualifier, or
/// neither (the same column, another version); a cell's value may be split
/// over chunks (and responses), `value_size` set on every piece but the
/// last; `reset_row` drops the row in progress, `commit_row` ends it. Rows
/// come in key order (descending on a reversed read). Any other sequence is
/// a typed error, never a panic.
/// For the fuzz target only (`fuzz/fuzz_targets/decode_bigtable_rows.rs`):
/// decodes each of `messages` as a `ReadRowsResponse` and merges their
/// chunks, as a read does; returns the rows completed, and the first error
/// (an undecodable message, a wrong sequence, or a stream ending inside a
/// row), if any.
#[doc(hidden)]
pub fn fuzz_read_rows(messages: &[&[u8]], reversed: bool) -> (Vec<RowResult>, Option<String>) {
    use prost::Message;
    let mut merger = ChunkMerger::new(reversed);
    let mut rows = Vec::new();
    for message in messages {
        let response = match v2::ReadRowsResponse::decode(*message) {
            Ok(response) => response,
            Err(e) => return (rows, Some(format!("undecodable: {e}"))),
        };
        for chunk in response.chunks {
            match merger.push(chunk) {
                Ok(row) => rows.extend(row),
                Err(e) => return (rows, Some(e)),
            }
        }
    }
    let end = merger.finish().err();
    (rows, end)
}

/// The most a split cell's buffer reserves beyond the bytes of its first
/// chunk, whatever size the chunk announces.
const MAX_PREALLOCATED: usize = 64 * 1024;

#[derive(Debug, Default)]
pub(crate) struct ChunkMerger {
    reversed: bool,
    /// The key of the last row committed.
    last_row: Option<Bytes>,
    /// The row in progress.
    row: Option<Bytes>,
    cells: Vec<Cell>,
    family: Option<Bytes>,
    qualifier: Option<Bytes>,
    /// A cell whose value is still arriving: its timestamp, and its value
    /// so far.
    partial: Option<(i64, BytesMut)>,
}

impl ChunkMerger {
    pub(crate) fn new(reversed: bool) -> Self {
        ChunkMerger {
            reversed,
            ..ChunkMerger::default()
        }
    }

    /// Takes one chunk; returns the row it completes, if any. The error is
    /// what is wrong with the sequence.
    pub(crate) fn push(&mut self, chunk: CellChunk) -> Result<Option<RowResult>, String> {
        if let Some(RowStatus::ResetRow(true)) = chunk.row_status {
            if self.row.is_none() {
                return Err("reset_row with no row in progress".into());
            }
            if !chunk.row_key.is_empty()
                || chunk.family_name.is_some()
                || chunk.qualifier.is_some()
                || chunk.timestamp_micros != 0
                || !chunk.value.is_empty()
                || chunk.value_size != 0
            {
                return Err("reset_row chunk carries cell data".into());
            }
            self.reset();
            return Ok(None);
        }
        let commit = matches!(chunk.row_status, Some(RowStatus::CommitRow(true)));
        if chunk.value_size < 0 {
            return Err(format!("negative value_size {}", chunk.value_size));
        }
        if let Some((_, value)) = &mut self.partial {
            // The rest of a split cell: value only.
            if !chunk.row_key.is_empty()
                || chunk.family_name.is_some()
                || chunk.qualifier.is_some()
                || chunk.timestamp_micros != 0
            {
                return Err("a split cell's later chunk carries a key, column or timestamp".into());
            }
            value.extend_from_slice(&chunk.value);
            if chunk.value_size == 0 {
                let (timestamp, value) = self.partial.take().unwrap_or_default();
                self.finish_cell(timestamp, value.freeze())?;
            }
        } else {
            self.start_cell(&chunk)?;
            if chunk.value_size > 0 {
                // `value_size` is the server's word: room for it is made as
                // the bytes arrive, beyond a start bounded by what came.
                let claimed = usize::try_from(chunk.value_size).unwrap_or(usize::MAX);
                let mut value =
                    BytesMut::with_capacity(claimed.min(chunk.value.len().saturating_add(MAX_PREALLOCATED)));
                value.extend_from_slice(&chunk.value);
                self.partial = Some((chunk.timestamp_micros, value));
            } else {
                self.finish_cell(chunk.timestamp_micros, chunk.value)?;
            }
        }
        if !commit {
            return Ok(None);
        }
        if self.partial.is_some() {
            return Err("commit_row in the middle of a split cell".into());
        }
        let row = self.row.take().ok_or("commit_row with no row in progress")?;
        let mut cells = std::mem::take(&mut self.cells);
        // HBase's order: family, qualifier, newest first (Bigtable sends a
        // row's families in creation order).
        cells.sort_by(|a, b| {
            (&a.family, &a.qualifier, Reverse(a.timestamp)).cmp(&(&b.family, &b.qualifier, Reverse(b.timestamp)))
        });
        self.reset();
        self.last_row = Some(row.clone());
        Ok(Some(RowResult::new(row, cells)))
    }

    /// Whether the stream may end here: no row in progress.
    pub(crate) fn finish(&self) -> Result<(), String> {
        match &self.row {
            None => Ok(()),
            Some(row) => Err(format!(
                "the stream ended inside row {} (no commit_row)",
                crate::store::show_row(row)
            )),
        }
    }

    /// Whether a row is in progress (begun, not committed).
    pub(crate) fn in_row(&self) -> bool {
        self.row.is_some()
    }

    /// Drops the row in progress, for a stream opened again after the
    /// last row committed: it comes again whole. Rows must still come
    /// after the last one committed.
    pub(crate) fn drop_row(&mut self) {
        self.reset();
    }

    fn reset(&mut self) {
        self.row = None;
        self.cells.clear();
        self.family = None;
        self.qualifier = None;
        self.partial = None;
    }

    /// The first chunk of a cell: sets the row, family and qualifier.
    fn start_cell(&mut self, chunk: &CellChunk) -> Result<(), String> {
        match &self.row {
            None => {
                if chunk.row_key.is_empty() {
                    return Err("a row's first chunk has no row key".into());
                }
                if chunk.family_name.is_none() || chunk.qualifier.is_none() {
                    return Err("a row's first chunk has no family or qualifier".into());
                }
                if let Some(last) = &self.last_row {
                    let in_order = if self.reversed {
                        chunk.row_key < *last
                    } else {
                        chunk.row_key > *last
                    };
                    if !in_order {
                        return Err(format!(
                            "row {} out of order after {}",
                            crate::store::show_row(&chunk.row_key),
                            crate::store::show_row(last)
                        ));
                    }
                }
                self.row = Some(chunk.row_key.clone());
            }
            Some(row) => {
                if !chunk.row_key.is_empty() && chunk.row_key != *row {
                    return Err(format!(
                        "row {} starts before row {} was committed",
                        crate::store::show_row(&chunk.row_key),
                        crate::store::show_row(row)
                    ));
                }
            }
        }
        match (&chunk.family_name, &chunk.qualifier) {
            (Some(family), Some(qualifier)) => {
                self.family = Some(Bytes::from(family.clone()));
                self.qualifier = Some(Bytes::from(qualifier.clone()));
            }
            (Some(_), None) => return Err("a new family without a qualifier".into()),
            (None, Some(qualifier)) => self.qualifier = Some(Bytes::from(qualifier.clone())),
            (None, None) => {}
        }
        Ok(())
    }

    fn finish_cell(&mut self, micros: i64, value: Bytes) -> Result<(), String> {
        let (Some(family), Some(qualifier)) = (&self.family, &self.qualifier) else {
            return Err("a cell without a family or qualifier".into());
        };
        self.cells
            .push(Cell::new(family.clone(), qualifier.clone(), from_micros(micros), value));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(row: &str, family: Option<&str>, qualifier: Option<&str>, ts: i64, value: &str) -> CellChunk {
        CellChunk {
            row_key: Bytes::copy_from_slice(row.as_bytes()),
            family_name: family.map(str::to_string),
            qualifier: qualifier.map(|q| q.as_bytes().to_vec()),
            timestamp_micros: ts,
            value: Bytes::copy_from_slice(value.as_bytes()),
            ..CellChunk::default()
        }
    }

    fn commit(mut c: CellChunk) -> CellChunk {
        c.row_status = Some(RowStatus::CommitRow(true));
        c
    }

    fn split(mut c: CellChunk, size: i32) -> CellChunk {
        c.value_size = size;
        c
    }

    fn reset() -> CellChunk {
        CellChunk {
            row_status: Some(RowStatus::ResetRow(true)),
            ..CellChunk::default()
        }
    }

    /// The emulator's replies to a read of three rows, encoded again by
    /// Google's Python client (`golden/record.py` says what was written):
    /// merged into the rows written, in HBase's order, milliseconds.
    #[test]
    fn the_emulators_replies_merge_into_the_rows_written() {
        let golden: [&[u8]; 3] = [
            include_bytes!("golden/read_rows_0.bin"),
            include_bytes!("golden/read_rows_1.bin"),
            include_bytes!("golden/read_rows_2.bin"),
        ];
        let (rows, error) = super::fuzz_read_rows(&golden, false);
        assert_eq!(error, None);
        let cell = |f: &str, q: &str, ts: i64, v: &[u8]| {
            Cell::new(
                Bytes::copy_from_slice(f.as_bytes()),
                Bytes::copy_from_slice(q.as_bytes()),
                ts,
                Bytes::copy_from_slice(v),
            )
        };
        let big = vec![b'z'; 20_000];
        assert_eq!(
            rows,
            [
                RowResult::new(
                    Bytes::from_static(b"a"),
                    vec![
                        cell("f", "q1", 2000, b"v2"),
                        cell("f", "q1", 1000, b"v1"),
                        cell("f", "q2", 1000, b"x"),
                        cell("g", "q", 3000, &big),
                    ]
                ),
                RowResult::new(Bytes::from_static(b"b"), vec![cell("f", "q1", 1000, b"")]),
                RowResult::new(Bytes::from_static(b"c\x00\xff"), vec![cell("g", "q", 5000, b"last")]),
            ]
        );
        // Cut anywhere, the stream is an error, never a panic or a row
        // made up.
        let whole = golden[0];
        for cut in 0..whole.len().min(200) {
            let (rows, error) = super::fuzz_read_rows(&[&whole[..cut]], false);
            assert!(rows.is_empty() || error.is_some() || cut == whole.len(), "cut at {cut}");
        }
    }

    /// Pushes every chunk; the rows completed, or the first error.
    fn merge(chunks: Vec<CellChunk>) -> Result<Vec<RowResult>, String> {
        let mut merger = ChunkMerger::new(false);
        let mut rows = Vec::new();
        for c in chunks {
            rows.extend(merger.push(c)?);
        }
        merger.finish()?;
        Ok(rows)
    }

    #[test]
    fn cells_of_a_row_in_hbase_order() {
        let rows = merge(vec![
            chunk("r", Some("g"), Some("a"), 1000, "g1"),
            chunk("", Some("f"), Some("b"), 5000, "new"),
            chunk("", None, None, 2000, "old"),
            commit(chunk("", None, Some("a"), 3000, "fa")),
        ])
        .unwrap();
        assert_eq!(rows.len(), 1);
        let got: Vec<_> = rows[0]
            .cells
            .iter()
            .map(|c| (&c.family[..], &c.qualifier[..], c.timestamp, &c.value[..]))
            .collect();
        assert_eq!(
            got,
            [
                (&b"f"[..], &b"a"[..], 3, &b"fa"[..]),
                (b"f", b"b", 5, b"new"),
                (b"f", b"b", 2, b"old"),
                (b"g", b"a", 1, b"g1"),
            ]
        );
    }

    /// A chunk announcing a 2 GiB value with 3 bytes of it reserves room
    /// in proportion to what came, not what it claims.
    #[test]
    fn an_announced_size_does_not_reserve_memory() {
        let mut merger = ChunkMerger::default();
        assert_eq!(
            merger.push(split(chunk("r", Some("f"), Some("q"), 7000, "hel"), i32::MAX)),
            Ok(None)
        );
        let (_, value) = merger.partial.as_ref().expect("a split cell in progress");
        assert!(value.capacity() <= 3 + MAX_PREALLOCATED, "{}", value.capacity());
    }

    #[test]
    fn a_split_cell_is_joined_across_chunks() {
        let rows = merge(vec![
            split(chunk("r", Some("f"), Some("q"), 7000, "hel"), 11),
            split(chunk("", None, None, 0, "lo w"), 11),
            chunk("", None, None, 0, "orld"),
            commit(chunk("", None, Some("z"), 1000, "x")),
            commit(chunk("s", Some("f"), Some("q"), 1000, "y")),
        ])
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].value("f", "q").as_deref(), Some(&b"hello world"[..]));
        assert_eq!(rows[0].latest("f", "q").map(|c| c.timestamp), Some(7));
        assert_eq!(rows[0].value("f", "z").as_deref(), Some(&b"x"[..]));
        assert_eq!(&rows[1].row[..], b"s");
    }

    #[test]
    fn a_split_cell_may_end_its_row() {
        let rows = merge(vec![
            split(chunk("r", Some("f"), Some("q"), 0, "a"), 2),
            commit(chunk("", None, None, 0, "b")),
        ])
        .unwrap();
        assert_eq!(rows[0].value("f", "q").as_deref(), Some(&b"ab"[..]));
    }

    #[test]
    fn reset_row_drops_the_row_in_progress() {
        let rows = merge(vec![
            chunk("r", Some("f"), Some("q"), 1000, "stale"),
            split(chunk("", None, Some("p"), 1000, "x"), 5),
            reset(),
            commit(chunk("r", Some("f"), Some("q"), 2000, "fresh")),
        ])
        .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].cells.len(), 1);
        assert_eq!(rows[0].value("f", "q").as_deref(), Some(&b"fresh"[..]));
    }

    #[test]
    fn timestamps_come_back_in_milliseconds() {
        let rows = merge(vec![commit(chunk(
            "r",
            Some("f"),
            Some("q"),
            super::super::convert::MAX_MICROS,
            "v",
        ))])
        .unwrap();
        assert_eq!(rows[0].cells[0].timestamp, i64::MAX);
    }

    #[test]
    fn bad_sequences_are_errors_not_panics() {
        let bad: Vec<(&str, Vec<CellChunk>)> = vec![
            ("reset with no row", vec![reset()]),
            (
                "first chunk without a key",
                vec![commit(chunk("", Some("f"), Some("q"), 0, "v"))],
            ),
            (
                "first chunk without a family",
                vec![commit(chunk("r", None, Some("q"), 0, "v"))],
            ),
            (
                "family without qualifier",
                vec![
                    chunk("r", Some("f"), Some("q"), 0, "v"),
                    commit(chunk("", Some("g"), None, 0, "v")),
                ],
            ),
            (
                "rows out of order",
                vec![
                    commit(chunk("b", Some("f"), Some("q"), 0, "v")),
                    commit(chunk("a", Some("f"), Some("q"), 0, "v")),
                ],
            ),
            (
                "a row twice",
                vec![
                    commit(chunk("a", Some("f"), Some("q"), 0, "v")),
                    commit(chunk("a", Some("f"), Some("q"), 0, "v")),
                ],
            ),
            (
                "another row before commit",
                vec![
                    chunk("a", Some("f"), Some("q"), 0, "v"),
                    commit(chunk("b", Some("f"), Some("q"), 0, "v")),
                ],
            ),
            (
                "commit inside a split cell",
                vec![commit(split(chunk("r", Some("f"), Some("q"), 0, "v"), 3))],
            ),
            (
                "key inside a split cell",
                vec![
                    split(chunk("r", Some("f"), Some("q"), 0, "v"), 3),
                    chunk("r", None, None, 0, "w"),
                ],
            ),
            (
                "reset with data",
                vec![chunk("r", Some("f"), Some("q"), 0, "v"), {
                    let mut r = reset();
                    r.value = Bytes::from_static(b"x");
                    r
                }],
            ),
            (
                "negative value size",
                vec![split(chunk("r", Some("f"), Some("q"), 0, "v"), -1)],
            ),
            (
                "stream ends inside a row",
                vec![chunk("r", Some("f"), Some("q"), 0, "v")],
            ),
            (
                "stream ends inside a split cell",
                vec![split(chunk("r", Some("f"), Some("q"), 0, "v"), 9)],
            ),
        ];
        for (what, chunks) in bad {
            assert!(merge(chunks).is_err(), "{what} was accepted");
        }
    }

    #[test]
    fn reversed_reads_expect_descending_rows() {
        let mut merger = ChunkMerger::new(true);
        assert!(
            merger
                .push(commit(chunk("b", Some("f"), Some("q"), 0, "v")))
                .unwrap()
                .is_some()
        );
        assert!(
            merger
                .push(commit(chunk("a", Some("f"), Some("q"), 0, "v")))
                .unwrap()
                .is_some()
        );
        assert!(merger.push(commit(chunk("c", Some("f"), Some("q"), 0, "v"))).is_err());
    }

    #[test]
    fn the_filter_limits_versions_by_family_and_hides_expired_cells() {
        use crate::schema::FamilySchema;
        let schema = TableSchema::new("t")
            .family(FamilySchema::new("a").versions(3))
            .family(FamilySchema::new("b").ttl_secs(10));
        let f = read_filter(&schema, &[], 5, TimeRange::ALL, 100_000, None).unwrap();
        let Some(Filter::Interleave(Interleave { filters })) = f.filter else {
            panic!("{f:?}")
        };
        let chain = |i: usize| match &filters[i].filter {
            Some(Filter::Chain(c)) => c.filters.iter().map(|f| f.filter.clone().unwrap()).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert!(matches!(chain(0).last(), Some(Filter::CellsPerColumnLimitFilter(3))));
        let b = chain(1);
        assert!(matches!(b.last(), Some(Filter::CellsPerColumnLimitFilter(1))));
        assert!(
            b.iter().any(|f| matches!(f, Filter::TimestampRangeFilter(r) if r.start_timestamp_micros == 90_001_000 && r.end_timestamp_micros == 0))
        );
        let one = read_filter(
            &schema,
            &[Column::Qualifier("a".into(), "q".into())],
            2,
            TimeRange::new(1, 5),
            0,
            None,
        )
        .unwrap();
        let Some(Filter::Chain(Chain { filters })) = one.filter else {
            panic!()
        };
        assert_eq!(filters.len(), 3);
        assert!(read_filter(&schema, &[Column::Family("zz".into())], 1, TimeRange::ALL, 0, None).is_err());
    }
}
