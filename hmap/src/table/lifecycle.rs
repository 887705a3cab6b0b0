//! A table's lifecycle against its declared schema, for [`Table`](super::Table)
//! and the relation helpers alike: create it unless it exists, compare it
//! with what is declared, refuse one that does not fit.

use crate::error::{Error, Result};
use crate::schema::{SchemaDiff, SchemaDifference, TableSchema};
use crate::store::{Store, StoreError};

/// Every difference between `declared` and the live table `table`,
/// reading only. Fails only if the table cannot be described.
pub(crate) async fn schema_diff<S: Store + ?Sized>(
    store: &S,
    table: &'static str,
    declared: &TableSchema,
) -> Result<SchemaDiff> {
    let live = store.describe_table(table).await?;
    Ok(SchemaDiff::between_kept(declared, &live, store.kept_family_options()))
}

/// [`Error::SchemaMismatch`] listing every difference if any is an error;
/// otherwise the diff, holding the informational ones. A table whose key
/// layout hmap did not record is logged through `tracing`.
pub(crate) async fn check_schema<S: Store + ?Sized>(
    store: &S,
    table: &'static str,
    declared: &TableSchema,
) -> Result<SchemaDiff> {
    let diff = schema_diff(store, table, declared).await?;
    if !diff.is_compatible() {
        return Err(Error::SchemaMismatch {
            table,
            diff: Box::new(diff),
        });
    }
    for d in &diff.differences {
        if let SchemaDifference::KeyLayoutNotRecorded { declared } = d {
            tracing::warn!(
                table,
                "table `{table}` records no key layout (hmap did not create it); rows are read as `{declared}`"
            );
        }
    }
    Ok(diff)
}

/// Creates `table` as declared unless it exists; returns whether it did. A
/// table that exists (made by someone else in between, too) is checked as
/// [`check_schema`] does.
pub(crate) async fn create_if_missing<S: Store + ?Sized>(
    store: &S,
    table: &'static str,
    declared: &TableSchema,
) -> Result<bool> {
    if !store.table_exists(table).await? {
        match store.create_table(declared).await {
            Ok(()) => return Ok(true),
            Err(StoreError::TableExists { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    check_schema(store, table, declared).await?;
    Ok(false)
}
