//! The checks every backend makes before a request reaches storage, so that
//! bad input gets the same typed error from each (HBase's client makes the
//! same checks before it sends).

#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex, PoisonError},
};

use bytes::Bytes;

use super::error::{show_column, show_row};
use super::{Column, FamilyChange, MAX_ROW_LENGTH, Mutation, Result, StoreError, TimeRange, max_row_length};
use crate::key::Printable;
use crate::schema::{TableSchema, validate_table_name};

/// What HBase adds to a cell's row, family, qualifier and value when it
/// checks the cell size limit: a `KeyValue`'s framing (4 bytes of key
/// length, 4 of value length, 2 of row length, 1 of family length, 8 of
/// timestamp, 1 of type: `KeyValue.getSerializedSize`) and the 4 bytes
/// `PrivateCellUtil.estimatedSerializedSizeOf` adds on the region server
/// (`RSRpcServices.checkCellSizeLimit`, against
/// `hbase.server.keyvalue.maxsize`).
pub(crate) const CELL_OVERHEAD: usize = 24;

/// The size of a cell as HBase's region server counts it against the cell
/// size limit: row, family, qualifier and value, plus [`CELL_OVERHEAD`].
pub(crate) fn cell_size(row: &[u8], family: &[u8], qualifier: &[u8], value: &[u8]) -> usize {
    CELL_OVERHEAD + row.len() + family.len() + qualifier.len() + value.len()
}

/// The table's name, after `prefix` (a backend's name prefix, `""` for
/// none), is one HBase accepts (see [`validate_table_name`]); the error
/// names `table`. Checked before any call, so that an illegal name gets the
/// same typed error from every backend and never reaches HBase's master (a
/// name too long for its file system leaves the master retrying the table's
/// creation forever).
pub(crate) fn check_table_name(table: &str, prefix: &str) -> Result<()> {
    let full = if prefix.is_empty() {
        std::borrow::Cow::Borrowed(table)
    } else {
        std::borrow::Cow::Owned(format!("{prefix}{table}"))
    };
    validate_table_name(&full).map_err(|reason| StoreError::InvalidRequest {
        table: table.into(),
        reason,
    })
}

/// A schema a table can be created with ([`TableSchema::validate`]), whose
/// name is legal also after `prefix` (a backend's name prefix, `""` for
/// none).
pub(crate) fn check_schema(schema: &TableSchema, prefix: &str) -> Result<()> {
    schema
        .validate()
        .and_then(|()| match prefix {
            "" => Ok(()),
            _ => validate_table_name(&format!("{prefix}{}", schema.name)),
        })
        .map_err(|reason| StoreError::InvalidSchema {
            table: schema.name.clone(),
            reason,
        })
}

/// The table's schema after `change`, checked as HBase's master checks an
/// alteration (`ModifyTableProcedure`, `TableDescriptorChecker`): the family
/// to add must not exist, the one to change or delete must, a table keeps at
/// least one family, and the new family's options are valid.
pub(crate) fn check_family_change(live: &TableSchema, change: &FamilyChange) -> Result<TableSchema> {
    let invalid = |reason: String| StoreError::InvalidSchema {
        table: live.name.clone(),
        reason,
    };
    let name = change.family();
    let position = live.families.iter().position(|f| f.name == name);
    let mut altered = live.clone();
    match (change, position) {
        (FamilyChange::Add(_), Some(_)) => {
            return Err(invalid(format!(
                "family `{name}` exists already, so it cannot be added"
            )));
        }
        (FamilyChange::Modify(_) | FamilyChange::Delete(_), None) => {
            return Err(invalid(format!("the table has no family `{name}` to change")));
        }
        (FamilyChange::Add(f), None) => altered.families.push(f.clone()),
        (FamilyChange::Modify(f), Some(i)) => altered.families[i] = f.clone(),
        (FamilyChange::Delete(_), Some(_)) if live.families.len() == 1 => {
            return Err(invalid(format!(
                "family `{name}` is the table's only family, so it cannot be deleted"
            )));
        }
        (FamilyChange::Delete(_), Some(i)) => {
            altered.families.remove(i);
        }
    }
    if let FamilyChange::Add(f) | FamilyChange::Modify(f) = change {
        f.validate().map_err(invalid)?;
    }
    altered.families.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(altered)
}

/// A row key is 1 to [`max_row_length`] bytes (HBase: `Mutation.checkRow`,
/// and the region lookup's `hbase:meta` key).
pub(crate) fn check_row(table: &str, row: &[u8]) -> Result<()> {
    let longest = max_row_length(table);
    let reason = if row.is_empty() {
        "a row key cannot be empty".to_string()
    } else if row.len() > longest {
        format!(
            "{} bytes is longer than the {longest} this table can hold \
             ({MAX_ROW_LENGTH} less the table name and 16 bytes of region lookup key)",
            row.len()
        )
    } else {
        return Ok(());
    };
    Err(StoreError::InvalidRow {
        table: table.into(),
        row: show_row(row),
        reason,
    })
}

/// The family is one of the table's.
pub(crate) fn check_family(schema: &TableSchema, family: &[u8]) -> Result<()> {
    match schema.find_family(family) {
        Some(_) => Ok(()),
        None => Err(StoreError::NoSuchFamily {
            table: schema.name.clone(),
            family: Printable(family).to_string(),
        }),
    }
}

/// A read's columns name the table's families, it asks for at least one
/// version, and its time range is `[min, max)` with `0 <= min <= max`.
pub(crate) fn check_read(schema: &TableSchema, columns: &[Column], max_versions: u32, range: TimeRange) -> Result<()> {
    if max_versions == 0 {
        return Err(StoreError::InvalidRequest {
            table: schema.name.clone(),
            reason: "max_versions must be at least 1".into(),
        });
    }
    if range.min < 0 || range.max < range.min {
        return Err(StoreError::InvalidRequest {
            table: schema.name.clone(),
            reason: format!("invalid time range [{}, {})", range.min, range.max),
        });
    }
    columns.iter().try_for_each(|c| check_family(schema, c.family()))
}

/// The gets of a read ([`Store::get`](super::Store::get) or
/// [`get_many`](super::Store::get_many)): each a valid row and a read of
/// the table's families.
#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
pub(crate) fn check_gets(schema: &TableSchema, gets: &[super::Get]) -> Result<()> {
    gets.iter().try_for_each(|g| {
        check_row(&schema.name, &g.row)?;
        check_read(schema, &g.columns, g.max_versions, g.time_range)?;
        check_filter(&schema.name, g.filter.as_ref())
    })
}

/// A read's filter is one HBase would build ([`Filter::check`](super::Filter::check)).
// Every backend's reads call it; a build with no remote backend may not.
#[cfg_attr(
    not(any(feature = "thrift", feature = "native", feature = "bigtable")),
    allow(dead_code)
)]
pub(crate) fn check_filter(table: &str, filter: Option<&super::Filter>) -> Result<()> {
    match filter.map(super::Filter::check) {
        Some(Err(reason)) => Err(StoreError::InvalidRequest {
            table: table.to_owned(),
            reason,
        }),
        _ => Ok(()),
    }
}

/// The rows of a [`Store::mutate`](super::Store::mutate), each checked as
/// [`check_mutation`] checks one.
#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
pub(crate) fn check_rows(schema: &TableSchema, rows: &[super::RowMutation], max_cell_size: usize) -> Result<()> {
    rows.iter()
        .try_for_each(|r| check_mutation(schema, &r.row, &r.mutations, max_cell_size))
}

/// A check-and-mutate: the checked column's family (or a valid filter),
/// a comparison other than [`CompareOp::NoOp`](super::filter::CompareOp::NoOp)
/// (HBase's region fails on it with a `RuntimeException`, "Unknown Compare
/// op", once a value is compared), a valid time range, and the row's changes.
#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
pub(crate) fn check_conditional(schema: &TableSchema, op: &super::CheckAndMutate, max_cell_size: usize) -> Result<()> {
    let invalid = |reason: String| StoreError::InvalidRequest {
        table: schema.name.clone(),
        reason: format!("row {}: {reason}", show_row(&op.row)),
    };
    match &op.filter {
        Some(filter) => filter.check().map_err(invalid)?,
        None => check_family(schema, &op.family)?,
    }
    if op.filter.is_none() && op.compare == super::filter::CompareOp::NoOp {
        return Err(invalid("a check-and-mutate cannot compare with NO_OP".into()));
    }
    let range = op.time_range;
    if range.min < 0 || range.max < range.min {
        return Err(invalid(format!("invalid time range [{}, {})", range.min, range.max)));
    }
    check_mutation(schema, &op.row, &op.mutations, max_cell_size)
}

/// An append: a valid row, known families, no column twice (HBase appends
/// each value to the same old one, keeps the last, and answers with a cell
/// per value, as it does for an increment: see [`check_increment`]).
#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
pub(crate) fn check_append(schema: &TableSchema, op: &super::Append, max_cell_size: usize) -> Result<()> {
    check_row(&schema.name, &op.row)?;
    for (i, (family, qualifier, value)) in op.columns.iter().enumerate() {
        check_family(schema, family)?;
        if op.columns[..i].iter().any(|(f, q, _)| f == family && q == qualifier) {
            return Err(StoreError::InvalidRequest {
                table: schema.name.clone(),
                reason: format!(
                    "row {}: column {} appears twice in one append; append the values joined into one",
                    show_row(&op.row),
                    show_column(family, qualifier)
                ),
            });
        }
        // The appended bytes alone: the cell they make may be longer, which
        // only the server knows.
        let size = cell_size(&op.row, family, qualifier, value);
        if size > max_cell_size {
            return Err(StoreError::CellTooLarge {
                table: schema.name.clone(),
                row: show_row(&op.row),
                column: show_column(family, qualifier),
                size,
                limit: max_cell_size,
            });
        }
    }
    Ok(())
}

/// An increment: a valid row, known families, and no column twice (HBase
/// would add every amount to the same old value and keep only the last).
pub(crate) fn check_increment(schema: &TableSchema, row: &[u8], columns: &[(Bytes, Bytes, i64)]) -> Result<()> {
    check_row(&schema.name, row)?;
    for (i, (family, qualifier, _)) in columns.iter().enumerate() {
        check_family(schema, family)?;
        if columns[..i].iter().any(|(f, q, _)| f == family && q == qualifier) {
            return Err(StoreError::InvalidRequest {
                table: schema.name.clone(),
                reason: format!(
                    "row {}: column {} appears twice in one increment; add the amounts into one",
                    show_row(row),
                    show_column(family, qualifier)
                ),
            });
        }
    }
    Ok(())
}

/// A row mutation: a valid row, known families, cells within the cell
/// size limit (counted as [`cell_size`]), no negative timestamp.
pub(crate) fn check_mutation(
    schema: &TableSchema,
    row: &[u8],
    mutations: &[Mutation],
    max_cell_size: usize,
) -> Result<()> {
    check_changes(schema, row, mutations.iter().map(Change::of), max_cell_size)
}

/// A row of a [`LoadBatch`](super::LoadBatch), checked as
/// [`check_mutation`] checks the same row of puts.
#[cfg(feature = "thrift")]
pub(crate) fn check_load_row(schema: &TableSchema, row: &super::LoadRow<'_>, max_cell_size: usize) -> Result<()> {
    let changes = row.cells().map(|c| Change {
        family: Some(c.family()),
        qualifier: c.qualifier(),
        value: Some(c.value()),
        timestamp: c.timestamp(),
    });
    check_changes(schema, row.key(), changes, max_cell_size)
}

/// One change to a row, as the checks see it.
struct Change<'a> {
    /// None for a row delete.
    family: Option<&'a [u8]>,
    qualifier: &'a [u8],
    /// A put's value; none for a delete.
    value: Option<&'a [u8]>,
    timestamp: Option<i64>,
}

impl<'a> Change<'a> {
    fn of(m: &'a Mutation) -> Self {
        let (qualifier, value, timestamp) = match m {
            Mutation::Put {
                qualifier,
                value,
                timestamp,
                ..
            } => (&qualifier[..], Some(&value[..]), *timestamp),
            Mutation::DeleteCell {
                qualifier, timestamp, ..
            } => (&qualifier[..], None, *timestamp),
            Mutation::DeleteColumn { qualifier, up_to, .. } => (&qualifier[..], None, *up_to),
            Mutation::DeleteFamily { up_to, .. } | Mutation::DeleteRow { up_to } => (&[][..], None, *up_to),
        };
        Change {
            family: m.family().map(|f| &f[..]),
            qualifier,
            value,
            timestamp,
        }
    }
}

fn check_changes<'a>(
    schema: &TableSchema,
    row: &[u8],
    changes: impl Iterator<Item = Change<'a>>,
    max_cell_size: usize,
) -> Result<()> {
    check_row(&schema.name, row)?;
    // A row's cells are mostly of one family: look each up once in a run.
    let mut known: &[u8] = &[];
    for c in changes {
        let family = c.family.unwrap_or_default();
        if c.family.is_some() && (known.is_empty() || family != known) {
            check_family(schema, family)?;
            known = family;
        }
        if let Some(value) = c.value {
            let size = cell_size(row, family, c.qualifier, value);
            if size > max_cell_size {
                return Err(StoreError::CellTooLarge {
                    table: schema.name.clone(),
                    row: show_row(row),
                    column: show_column(family, c.qualifier),
                    size,
                    limit: max_cell_size,
                });
            }
        }
        if let Some(ts) = c.timestamp.filter(|ts| *ts < 0) {
            return Err(StoreError::NegativeTimestamp {
                table: schema.name.clone(),
                row: show_row(row),
                column: show_column(family, c.qualifier),
                timestamp: ts,
            });
        }
    }
    Ok(())
}

/// Table schemas as the server describes them, kept per table so that
/// requests are checked against a table's families without a round trip
/// each time: a remote backend fills it on first use and forgets a table
/// when hmap creates, alters or deletes it.
#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
#[derive(Debug, Default)]
pub(crate) struct SchemaCache {
    schemas: Mutex<HashMap<String, Arc<TableSchema>>>,
}

#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
impl SchemaCache {
    /// The table's schema from the cache, or from `fetch` (kept for next
    /// time when it succeeds; an error is not cached).
    pub(crate) async fn get_or_fetch<F>(&self, table: &str, fetch: F) -> Result<Arc<TableSchema>>
    where
        F: Future<Output = Result<TableSchema>>,
    {
        if let Some(schema) = self.lock().get(table) {
            return Ok(Arc::clone(schema));
        }
        let schema = Arc::new(fetch.await?);
        self.lock().insert(table.to_string(), Arc::clone(&schema));
        Ok(schema)
    }

    /// The table's schema, from the cache or from `fetch`, with what
    /// `check` makes of the request against it. A cached schema may be
    /// stale (another client may have added a family since it was read): a
    /// request it refuses with [`StoreError::NoSuchFamily`] is checked
    /// again against the table as `fetch` describes it now, which is kept.
    pub(crate) async fn checked<T, F>(
        &self,
        table: &str,
        fetch: impl Fn() -> F,
        check: impl Fn(&TableSchema) -> Result<T>,
    ) -> Result<(Arc<TableSchema>, T)>
    where
        F: Future<Output = Result<TableSchema>>,
    {
        let (schema, cached) = self.cached_or_fetched(table, &fetch).await?;
        match check(&schema) {
            Err(StoreError::NoSuchFamily { .. }) if cached => {
                let fresh = self.fetched_again(table, &fetch).await?;
                let checked = check(&fresh)?;
                Ok((fresh, checked))
            }
            checked => checked.map(|checked| (schema, checked)),
        }
    }

    /// The table's schema, and whether it came from the cache (else from
    /// `fetch`, and kept).
    async fn cached_or_fetched<F>(&self, table: &str, fetch: &impl Fn() -> F) -> Result<(Arc<TableSchema>, bool)>
    where
        F: Future<Output = Result<TableSchema>>,
    {
        let cached = self.lock().get(table).cloned();
        Ok(match cached {
            Some(schema) => (schema, true),
            None => (self.get_or_fetch(table, fetch()).await?, false),
        })
    }

    /// The table's schema as `fetch` describes it now, kept.
    async fn fetched_again<F>(&self, table: &str, fetch: &impl Fn() -> F) -> Result<Arc<TableSchema>>
    where
        F: Future<Output = Result<TableSchema>>,
    {
        let fresh = Arc::new(fetch().await?);
        self.lock().insert(table.to_string(), Arc::clone(&fresh));
        Ok(fresh)
    }

    /// Each of `items` checked on its own against the table's schema, from
    /// the cache or from `fetch`: one verdict per item, in order (`Err`
    /// only when the schema cannot be read). As in
    /// [`checked`](Self::checked), an item a cached schema refuses with
    /// [`StoreError::NoSuchFamily`] has every item checked again against
    /// the table as `fetch` describes it now.
    pub(crate) async fn checked_each<R, F>(
        &self,
        table: &str,
        fetch: impl Fn() -> F,
        items: &[R],
        check: impl Fn(&TableSchema, &R) -> Result<()>,
    ) -> Result<Vec<Result<()>>>
    where
        F: Future<Output = Result<TableSchema>>,
    {
        let (schema, cached) = self.cached_or_fetched(table, &fetch).await?;
        let verdicts: Vec<Result<()>> = items.iter().map(|item| check(&schema, item)).collect();
        let stale = cached
            && verdicts
                .iter()
                .any(|v| matches!(v, Err(StoreError::NoSuchFamily { .. })));
        if !stale {
            return Ok(verdicts);
        }
        let fresh = self.fetched_again(table, &fetch).await?;
        Ok(items.iter().map(|item| check(&fresh, item)).collect())
    }

    /// Forgets the table's schema: the next request describes it again.
    pub(crate) fn forget(&self, table: &str) {
        self.lock().remove(table);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<TableSchema>>> {
        self.schemas.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(all(test, any(feature = "thrift", feature = "native", feature = "bigtable")))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn the_schema_cache_fetches_once_until_told_to_forget() {
        let cache = SchemaCache::default();
        let fetches = AtomicUsize::new(0);
        let fetch = || async {
            fetches.fetch_add(1, Ordering::SeqCst);
            Ok(TableSchema::new("t").family(crate::schema::FamilySchema::new("f")))
        };
        assert_eq!(cache.get_or_fetch("t", fetch()).await.unwrap().name, "t");
        assert_eq!(cache.get_or_fetch("t", fetch()).await.unwrap().families.len(), 1);
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        cache.forget("t");
        cache.get_or_fetch("t", fetch()).await.unwrap();
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
        // An error is passed on and not kept.
        let missing = cache
            .get_or_fetch("u", async { Err(StoreError::TableNotFound { table: "u".into() }) })
            .await;
        assert!(matches!(missing, Err(StoreError::TableNotFound { .. })));
        assert_eq!(cache.get_or_fetch("u", fetch()).await.unwrap().name, "t");
    }

    #[tokio::test]
    async fn a_family_missing_from_the_cached_schema_is_looked_up_again() {
        use crate::schema::FamilySchema;
        let cache = SchemaCache::default();
        let fetches = AtomicUsize::new(0);
        // The table as described: family `f` first, then `f` and `m` (added
        // by another client).
        let fetch = || async {
            let table = TableSchema::new("t").family(FamilySchema::new("f"));
            Ok(match fetches.fetch_add(1, Ordering::SeqCst) {
                0 => table,
                _ => table.family(FamilySchema::new("m")),
            })
        };
        let family = |name: &'static str| move |schema: &TableSchema| check_family(schema, name.as_bytes());
        cache.checked("t", fetch, family("f")).await.unwrap();
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        let (schema, ()) = cache.checked("t", fetch, family("m")).await.unwrap();
        assert_eq!(schema.families.len(), 2);
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
        // Kept: no more fetches for `m`; a family missing now too is an
        // error after one fetch more.
        cache.checked("t", fetch, family("m")).await.unwrap();
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
        let missing = cache.checked("t", fetch, family("x")).await;
        assert!(matches!(missing, Err(StoreError::NoSuchFamily { ref family, .. }) if family == "x"));
        assert_eq!(fetches.load(Ordering::SeqCst), 3);
        // A schema fetched for this very request is not fetched twice.
        let cache = SchemaCache::default();
        assert!(cache.checked("t", fetch, family("x")).await.is_err());
        assert_eq!(fetches.load(Ordering::SeqCst), 4);
    }
}
