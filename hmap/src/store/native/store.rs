//! `impl Store for NativeStore`: a thin adapter over the client's and the
//! admin's async functions, with the checks every backend makes before a
//! request leaves (`store::check`), against the table's schema as the
//! master describes it (cached per table, forgotten when hmap changes it).

use std::sync::Arc;

use async_trait::async_trait;

use super::admin;
use super::client::NativeStore;
use crate::schema::TableSchema;
use crate::store::check::{
    check_append, check_conditional, check_family_change, check_gets, check_increment, check_mutation, check_read,
    check_rows, check_schema, check_table_name,
};
use crate::store::{
    Append, BatchOutcome, CheckAndMutate, FamilyChange, Get, Increment, Result, RowMutation, RowResult, RowStream,
    Scan, Store, StoreError, traced,
};

impl NativeStore {
    /// The table's schema and what `check` makes of a request against it
    /// (described again when the cached schema lacks a family it names).
    async fn checked<T>(
        &self,
        table: &str,
        check: impl Fn(&TableSchema) -> Result<T>,
    ) -> Result<(Arc<TableSchema>, T)> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        self.inner
            .schemas
            .checked(table, || self.descriptor(table), check)
            .await
    }

    /// Each row checked on its own against the table's schema (see
    /// [`SchemaCache::checked_each`](crate::store::check::SchemaCache::checked_each)).
    async fn checked_rows(&self, table: &str, rows: &[RowMutation]) -> Result<Vec<Result<()>>> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        let max = self.inner.config.max_value_size;
        self.inner
            .schemas
            .checked_each(
                table,
                || self.descriptor(table),
                rows,
                |schema, r| check_mutation(schema, &r.row, &r.mutations, max),
            )
            .await
    }

    /// What `call` gave; the table's cached schema is forgotten when the
    /// server says the table or a family is missing (another client
    /// changed it), so that the next request describes it again.
    async fn noted<T>(&self, table: &str, call: impl Future<Output = Result<T>>) -> Result<T> {
        let result = call.await;
        if let Err(StoreError::TableNotFound { .. } | StoreError::NoSuchFamily { .. }) = &result {
            self.forget_schema(table);
        }
        result
    }

    /// The table's families and metadata (no split points), or
    /// `TableNotFound`.
    async fn descriptor(&self, table: &str) -> Result<TableSchema> {
        match self.admin_descriptor(table).await? {
            Some(descriptor) => Ok(admin::table_from_proto(table, &descriptor)),
            None => Err(StoreError::TableNotFound { table: table.into() }),
        }
    }
}

#[async_trait]
impl Store for NativeStore {
    fn forget_schema(&self, table: &str) {
        self.inner.schemas.forget(table);
    }

    async fn create_table(&self, schema: &TableSchema) -> Result<()> {
        traced("native", "create_table", &schema.name, 0, async move {
            check_schema(schema, &self.inner.config.table_prefix)?;
            self.forget_schema(&schema.name);
            self.admin_create(schema).await
        })
        .await
    }

    /// Disables the table (unless it is disabled), then deletes it.
    async fn delete_table(&self, table: &str) -> Result<()> {
        traced("native", "delete_table", table, 0, async move {
            check_table_name(table, &self.inner.config.table_prefix)?;
            self.forget_schema(table);
            self.admin_delete(table).await
        })
        .await
    }

    /// Disables the table, then `truncateTable` with `preserveSplits`;
    /// HBase enables the table again.
    async fn truncate_table(&self, table: &str) -> Result<()> {
        traced("native", "truncate_table", table, 0, async move {
            check_table_name(table, &self.inner.config.table_prefix)?;
            self.admin_truncate(table).await
        })
        .await
    }

    /// Checked against the table as the master describes it now (not the
    /// cached schema), then `AddColumn`, `ModifyColumn` or `DeleteColumn`.
    /// A modified family keeps the options hmap does not model
    /// (`DATA_BLOCK_ENCODING`, `KEEP_DELETED_CELLS`, ...).
    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        traced("native", "alter_table", table, 0, async move {
            check_table_name(table, &self.inner.config.table_prefix)?;
            self.forget_schema(table);
            let Some(live) = self.admin_descriptor(table).await? else {
                return Err(StoreError::TableNotFound { table: table.into() });
            };
            check_family_change(&admin::table_from_proto(table, &live), change)?;
            let altered = self.admin_alter(table, &live, change).await;
            self.forget_schema(table);
            altered
        })
        .await
    }

    async fn table_exists(&self, table: &str) -> Result<bool> {
        traced("native", "table_exists", table, 0, async move {
            check_table_name(table, &self.inner.config.table_prefix)?;
            Ok(self.admin_descriptor(table).await?.is_some())
        })
        .await
    }

    async fn list_tables(&self) -> Result<Vec<String>> {
        traced("native", "list_tables", "", 0, self.admin_list()).await
    }

    async fn describe_table(&self, table: &str) -> Result<TableSchema> {
        traced("native", "describe_table", table, 0, async move {
            check_table_name(table, &self.inner.config.table_prefix)?;
            let mut schema = self.descriptor(table).await?;
            schema.split_keys = self
                .region_start_keys(table)
                .await?
                .into_iter()
                .filter(|k| !k.is_empty())
                .collect();
            Ok(schema)
        })
        .await
    }

    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        traced(
            "native",
            "get",
            table,
            1,
            self.noted(table, async move {
                self.checked(table, |schema| check_gets(schema, std::slice::from_ref(get)))
                    .await?;
                self.get_unchecked(table, get).await
            }),
        )
        .await
    }

    /// One `Multi` call per region server.
    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        traced(
            "native",
            "get_many",
            table,
            gets.len(),
            self.noted(table, async move {
                self.checked(table, |schema| check_gets(schema, gets)).await?;
                if gets.is_empty() {
                    return Ok(Vec::new());
                }
                self.get_many_unchecked(table, gets).await
            }),
        )
        .await
    }

    /// One `Multi` call per region server, each row answered on its own.
    async fn get_each(&self, table: &str, gets: &[Get]) -> Result<Vec<Result<Option<RowResult>>>> {
        traced(
            "native",
            "get_each",
            table,
            gets.len(),
            self.noted(table, async move {
                self.checked(table, |schema| check_gets(schema, gets)).await?;
                let rows = self.get_each_unchecked(table, gets).await?;
                if rows.iter().any(|r| matches!(r, Err(StoreError::NoSuchFamily { .. }))) {
                    self.forget_schema(table);
                }
                Ok(rows)
            }),
        )
        .await
    }

    /// One `Mutate` for a single row; several rows in one `Multi` call per
    /// region server, each row atomic on its own.
    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        traced(
            "native",
            "mutate",
            table,
            rows.len(),
            self.noted(table, async move {
                self.checked(table, |schema| {
                    check_rows(schema, rows, self.inner.config.max_value_size)
                })
                .await?;
                self.mutate_unchecked(table, rows).await
            }),
        )
        .await
    }

    /// One `Multi` call per region server (a row named again in a later
    /// one), each row answered on its own.
    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome> {
        traced(
            "native",
            "mutate_each",
            table,
            rows.len(),
            self.noted(table, async move {
                let checked = self.checked_rows(table, rows).await?;
                let outcome = self.mutate_each_unchecked(table, rows, checked).await?;
                if outcome
                    .iter()
                    .any(|o| matches!(o.error(), Some(StoreError::NoSuchFamily { .. })))
                {
                    self.forget_schema(table);
                }
                Ok(outcome)
            }),
        )
        .await
    }

    /// Opens a scanner on the first region at once (the scan reads that
    /// region as it is now), then reads region by region; the stream ends
    /// for good after its last row or an error, and closes the server's
    /// scanner when it is dropped early.
    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
        traced(
            "native",
            "scan",
            table,
            0,
            self.noted(table, async move {
                self.checked(table, |schema| {
                    check_read(schema, &scan.columns, scan.max_versions, scan.time_range)
                        .and_then(|()| crate::store::check::check_filter(&schema.name, scan.filter.as_ref()))
                })
                .await?;
                let mut scanner = self.scanner(table, scan);
                scanner.open().await?;
                let rows: RowStream<'a> = crate::store::prefetch::prefetched(table, scanner);
                Ok(rows)
            }),
        )
        .await
    }

    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        traced(
            "native",
            "check_and_mutate",
            table,
            1,
            self.noted(table, async move {
                self.checked(table, |schema| {
                    check_conditional(schema, op, self.inner.config.max_value_size)
                })
                .await?;
                self.check_and_mutate_unchecked(table, op).await
            }),
        )
        .await
    }

    /// HBase's `Append`, with a nonce (see [`Store::append`]).
    async fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        traced(
            "native",
            "append",
            table,
            1,
            self.noted(table, async move {
                self.checked(table, |schema| {
                    check_append(schema, op, self.inner.config.max_value_size)
                })
                .await?;
                if op.columns.is_empty() {
                    return Ok(RowResult::new(op.row.clone(), Vec::new()));
                }
                self.append_unchecked(table, op).await
            }),
        )
        .await
    }

    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        traced(
            "native",
            "increment",
            table,
            1,
            self.noted(table, async move {
                self.checked(table, |schema| check_increment(schema, &op.row, &op.columns))
                    .await?;
                self.increment_unchecked(table, op).await
            }),
        )
        .await
    }
}
