//! The Data API: reads (`ReadRows`, streamed through the chunk merger),
//! writes (`MutateRow`, `MutateRows` with each entry's status),
//! `CheckAndMutateRow` and `ReadModifyWriteRow`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;
use v2::bigtable_client::BigtableClient;
use v2::row_filter::{Chain, Filter};

use super::auth::Headers;
use super::convert::{family_name, mutations};
use super::error::{from_status, protocol};
use super::read::{ChunkMerger, filter, read_filter};
use super::{BigtableStore, DataClient, MAX_MESSAGE, MAX_ROW_KEY};

use crate::store::check::{
    check_append, check_conditional, check_gets, check_increment, check_mutation, check_rows, check_table_name,
};
use crate::store::error::{show_column, show_row};
use crate::store::filter::CompareOp;
use crate::store::outcome::send_checked;
use crate::store::{
    Append, Cell, CheckAndMutate, Get, Increment, Mutation, Result, RowMutation, RowResult, RowStream, Scan, StoreError,
};

/// A row key `SampleRowKeys` answers with
/// ([`BigtableStore::sample_row_keys`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RowKeySample {
    /// A key the table splits at; the last sample's is empty (the end).
    pub row_key: Bytes,
    /// About how many bytes of the table come before `row_key`.
    pub offset_bytes: i64,
}

/// The most mutations Bigtable takes in one `MutateRows` request.
const MAX_MUTATIONS: usize = 100_000;

/// The client's clock in milliseconds: the timestamp of puts that name
/// none (the Java adapter stamps them on the client, too).
pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// [`now_ms`], for the tests' bounds.
#[cfg(test)]
pub(super) fn now_ms_for_tests() -> i64 {
    now_ms()
}

/// Bigtable's 4 KiB limit on row keys, checked before a request is sent.
fn check_key_length(table: &str, row: &[u8]) -> Result<()> {
    if row.len() > MAX_ROW_KEY {
        return Err(StoreError::InvalidRow {
            table: table.into(),
            row: show_row(row),
            reason: format!(
                "{} bytes is longer than Bigtable's limit on row keys, 4 KiB ({MAX_ROW_KEY} bytes)",
                row.len()
            ),
        });
    }
    Ok(())
}

impl BigtableStore {
    /// A Data API client on the pool's next channel, putting `headers` on
    /// each call.
    pub(super) fn data(&self, headers: &Headers) -> DataClient {
        BigtableClient::with_interceptor(super::framing::Checked(self.data_channel()), headers.clone())
            .max_decoding_message_size(MAX_MESSAGE)
    }

    pub(super) fn data_request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(crate::store::call_timeout(self.inner.config.call_timeout));
        request
    }

    /// Starts `ReadRows`; its rows as a stream. Each wait for a response
    /// is bounded by the call deadline, the stream as a whole is not (the
    /// request carries no deadline for the server to end it at); a stream
    /// that breaks in a way worth another try is opened again after the
    /// last row received ([`RowsState::next`]).
    pub(super) async fn read_rows(&self, table: &str, request: v2::ReadRowsRequest) -> Result<RowStream<'static>> {
        let reversed = request.reversed;
        let streaming = self
            .open_read(
                table,
                &request,
                crate::store::call_timeout(self.inner.config.call_timeout),
            )
            .await?;
        let state = RowsState {
            streaming: Some(streaming),
            request,
            merger: ChunkMerger::new(reversed),
            ready: VecDeque::new(),
            committed: 0,
            resume_after: None,
            done: false,
            table: table.to_string(),
            endpoint: self.inner.config.address.clone(),
            timeout: crate::store::call_timeout(self.inner.config.call_timeout),
            store: self.clone(),
        };
        // Fused: a scanner polled again after its end keeps answering None
        // (`unfold` would panic).
        Ok(Box::pin(futures_util::StreamExt::fuse(futures_util::stream::unfold(
            state,
            RowsState::next,
        ))))
    }

    /// Opens a `ReadRows` stream of `request` within `left`: its headers
    /// (a fresh access token, should a long scan outlive one), then the
    /// call until the server's reply headers, retried while the server
    /// cannot be reached.
    async fn open_read(
        &self,
        table: &str,
        request: &v2::ReadRowsRequest,
        left: Duration,
    ) -> Result<tonic::Streaming<v2::ReadRowsResponse>> {
        let (headers, left) = self.data_headers(table, "ReadRows", left).await?;
        self.idempotent(table, "ReadRows", left, || {
            let mut client = self.data(&headers);
            // No grpc-timeout: a deadline the server knows would end the
            // whole stream at it, however fast the rows keep coming.
            let request = tonic::Request::new(request.clone());
            async move { client.read_rows(request).await }
        })
        .await
    }

    fn read_request(&self, table: &str, rows: v2::RowSet, filter: v2::RowFilter) -> v2::ReadRowsRequest {
        v2::ReadRowsRequest {
            table_name: self.table_name(table),
            app_profile_id: self.inner.config.app_profile.clone(),
            rows: Some(rows),
            filter: Some(filter),
            ..Default::default()
        }
    }

    pub(super) async fn get_many_impl(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        // Bigtable's limit before HBase's (32 KiB), whose message would
        // mislead here.
        for get in gets {
            check_key_length(table, &get.row)?;
        }
        let (schema, ()) = self.checked(table, |schema| check_gets(schema, gets)).await?;
        let now = now_ms();
        // Gets that read alike share one ReadRows over their rows.
        let mut groups: Vec<(&Get, Vec<Bytes>)> = Vec::new();
        for get in gets {
            let same = |g: &Get| {
                g.columns == get.columns && g.max_versions == get.max_versions && g.time_range == get.time_range
            };
            match groups.iter_mut().find(|(g, _)| same(g)) {
                Some((_, rows)) => rows.push(get.row.clone()),
                None => groups.push((get, vec![get.row.clone()])),
            }
        }
        let mut results: Vec<HashMap<Bytes, RowResult>> = Vec::with_capacity(groups.len());
        for (get, mut rows) in groups.iter().cloned() {
            rows.sort();
            rows.dedup();
            let filter = read_filter(
                &schema,
                &get.columns,
                get.max_versions,
                get.time_range,
                now,
                get.filter.as_ref(),
            )?;
            let set = v2::RowSet {
                row_keys: rows,
                row_ranges: Vec::new(),
            };
            let mut stream = self.read_rows(table, self.read_request(table, set, filter)).await?;
            let mut found = HashMap::new();
            while let Some(row) = futures_util::StreamExt::next(&mut stream).await {
                let row = row?;
                found.insert(row.row.clone(), row);
            }
            results.push(found);
        }
        Ok(gets
            .iter()
            .map(|get| {
                let group = groups.iter().position(|(g, _)| {
                    g.columns == get.columns && g.max_versions == get.max_versions && g.time_range == get.time_range
                })?;
                results[group].get(&get.row).cloned()
            })
            .collect())
    }

    pub(super) async fn scan_impl(&self, table: &str, scan: &Scan) -> Result<RowStream<'static>> {
        let (schema, ()) = self
            .checked(table, |schema| {
                crate::store::check::check_read(schema, &scan.columns, scan.max_versions, scan.time_range)
                    .and_then(|()| crate::store::check::check_filter(&schema.name, scan.filter.as_ref()))
            })
            .await?;
        if scan.is_empty_range() || scan.limit == Some(0) {
            return Ok(Box::pin(futures_util::stream::empty()));
        }
        let range = v2::RowRange {
            start_key: (!scan.start.is_empty()).then(|| v2::row_range::StartKey::StartKeyClosed(scan.start.clone())),
            end_key: (!scan.stop.is_empty()).then(|| v2::row_range::EndKey::EndKeyOpen(scan.stop.clone())),
        };
        let filter = read_filter(
            &schema,
            &scan.columns,
            scan.max_versions,
            scan.time_range,
            now_ms(),
            scan.filter.as_ref(),
        )?;
        let mut request = self.read_request(
            table,
            v2::RowSet {
                row_keys: Vec::new(),
                row_ranges: vec![range],
            },
            filter,
        );
        request.rows_limit = scan.limit.map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX));
        request.reversed = scan.reversed;
        self.read_rows(table, request).await
    }

    /// Checks every row (HBase's checks, Bigtable's key limit, and what
    /// Bigtable cannot express) before anything is sent, then writes: one
    /// `MutateRow` for one row, else `MutateRows`, a row named again going
    /// in a later call so that its changes apply in order.
    pub(super) async fn mutate_impl(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let max = self.inner.config.max_value_size;
        for row in rows {
            check_key_length(table, &row.row)?;
        }
        self.checked(table, |schema| check_rows(schema, rows, max)).await?;
        for row in rows {
            refuse_unexpressible(table, &row.mutations)?;
        }
        let now = now_ms();
        let rows = self.expand_up_to_deletes(table, rows, now).await?;
        let mut entries = Vec::with_capacity(rows.len());
        for row in rows.iter() {
            if row.mutations.is_empty() {
                continue;
            }
            entries.push(v2::mutate_rows_request::Entry {
                row_key: row.row.clone(),
                mutations: mutations(table, &row.mutations, now)?,
                ..Default::default()
            });
        }
        // Waves of distinct rows: a row's second entry waits for its first.
        let mut waves: Vec<Vec<v2::mutate_rows_request::Entry>> = Vec::new();
        let mut last_wave: HashMap<Bytes, usize> = HashMap::new();
        for entry in entries {
            let wave = last_wave.get(&entry.row_key).map_or(0, |w| w + 1);
            last_wave.insert(entry.row_key.clone(), wave);
            if wave == waves.len() {
                waves.push(Vec::new());
            }
            waves[wave].push(entry);
        }
        for wave in waves {
            // Bigtable takes at most 100,000 mutations in one request.
            let mut request = Vec::new();
            let mut count = 0;
            for entry in wave {
                if count + entry.mutations.len() > MAX_MUTATIONS && !request.is_empty() {
                    self.write_wave(table, std::mem::take(&mut request)).await?;
                    count = 0;
                }
                count += entry.mutations.len();
                request.push(entry);
            }
            if !request.is_empty() {
                self.write_wave(table, request).await?;
            }
        }
        Ok(())
    }

    /// Each row checked as [`mutate_impl`](Self::mutate_impl) checks them
    /// all, the valid ones then written together.
    pub(super) async fn mutate_each_impl(
        &self,
        table: &str,
        rows: &[RowMutation],
    ) -> Result<crate::store::BatchOutcome> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        let max = self.inner.config.max_value_size;
        let checked = self
            .inner
            .schemas
            .checked_each(
                table,
                || self.describe_families(table),
                rows,
                |schema, row| {
                    check_key_length(table, &row.row)?;
                    check_mutation(schema, &row.row, &row.mutations, max)?;
                    refuse_unexpressible(table, &row.mutations)
                },
            )
            .await?;
        Ok(send_checked(
            rows,
            checked,
            |valid| async move { self.mutate_impl(table, &valid).await },
        )
        .await)
    }

    async fn write_wave(&self, table: &str, mut entries: Vec<v2::mutate_rows_request::Entry>) -> Result<()> {
        if entries.len() == 1 {
            let entry = entries.pop().unwrap_or_default();
            let row = entry.row_key.clone();
            let request = v2::MutateRowRequest {
                table_name: self.table_name(table),
                app_profile_id: self.inner.config.app_profile.clone(),
                row_key: entry.row_key,
                mutations: entry.mutations,
                ..Default::default()
            };
            let (headers, left) = self
                .data_headers(
                    table,
                    "MutateRow",
                    crate::store::call_timeout(self.inner.config.call_timeout),
                )
                .await
                .map_err(|e| with_row(e, &row))?;
            return self
                .idempotent(table, "MutateRow", left, || {
                    let mut client = self.data(&headers);
                    let request = self.data_request(request.clone());
                    async move { client.mutate_row(request).await }
                })
                .await
                .map(drop)
                .map_err(|e| with_row(e, &row));
        }
        self.mutate_rows(table, entries).await
    }

    /// `MutateRows` of `entries` (rows all distinct), each entry's status
    /// read from the reply stream. Entries that failed with a status worth
    /// another try (`UNAVAILABLE`, `DEADLINE_EXCEEDED`, as Google's clients
    /// retry them; every write here is idempotent: its cells carry their
    /// timestamps), or that the stream never reported because it broke
    /// with such a status, are sent again, alone, after a backoff from
    /// 10 ms doubling to 1 s, while the call's deadline leaves room. Any
    /// other failure is the call's error, naming its row; so is a retried
    /// entry's last failure when the time runs out.
    async fn mutate_rows(&self, table: &str, entries: Vec<v2::mutate_rows_request::Entry>) -> Result<()> {
        let started = Instant::now();
        let timeout = crate::store::call_timeout(self.inner.config.call_timeout);
        let mut request = v2::MutateRowsRequest {
            table_name: self.table_name(table),
            app_profile_id: self.inner.config.app_profile.clone(),
            entries,
            ..Default::default()
        };
        let mut backoff = Duration::from_millis(10);
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            let Some(retry) = self.mutate_rows_once(table, &request, left).await? else {
                return Ok(());
            };
            if started.elapsed() + backoff >= timeout {
                return Err(retry.error);
            }
            tracing::debug!(
                table,
                rows = retry.entries.len(),
                ?backoff,
                "MutateRows: entries retried"
            );
            crate::store::metrics::retry("bigtable", "entry");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(1));
            // The entries to send again, moved out of the request.
            let mut again = vec![false; request.entries.len()];
            for i in retry.entries {
                again[i] = true;
            }
            let sent = std::mem::take(&mut request.entries);
            request.entries = sent
                .into_iter()
                .zip(again)
                .filter_map(|(e, again)| again.then_some(e))
                .collect();
        }
    }

    /// One `MutateRows` call of `request`, within `left`: which of its
    /// entries to try again, if any; any other failure is the error.
    async fn mutate_rows_once(
        &self,
        table: &str,
        request: &v2::MutateRowsRequest,
        left: Duration,
    ) -> Result<Option<Retry>> {
        let keys: Vec<&Bytes> = request.entries.iter().map(|e| &e.row_key).collect();
        let started = Instant::now();
        let (headers, _) = self.data_headers(table, "MutateRows", left).await?;
        let mut stream = self
            .idempotent(table, "MutateRows", left.saturating_sub(started.elapsed()), || {
                let mut client = self.data(&headers);
                let request = self.data_request(request.clone());
                async move { client.mutate_rows(request).await }
            })
            .await?;
        let failed = |status: &tonic::Status| {
            from_status(
                status,
                "MutateRows",
                table,
                &self.inner.config.address,
                started.elapsed(),
            )
        };
        let mut reported = vec![false; keys.len()];
        let mut retry = Vec::new();
        let mut retry_error = None;
        let mut broke_retryably = false;
        loop {
            let message = match tokio::time::timeout(left.saturating_sub(started.elapsed()), stream.message()).await {
                Err(_) => {
                    return Err(StoreError::Timeout {
                        table: table.into(),
                        operation: "MutateRows",
                        elapsed: started.elapsed(),
                        detail: String::new(),
                    });
                }
                Ok(Err(status)) if retryable(status.code()) => {
                    // The entries it did not report are tried again.
                    retry_error.get_or_insert_with(|| failed(&status));
                    broke_retryably = true;
                    break;
                }
                Ok(Err(status)) => return Err(self.noted(table, failed(&status))),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(message))) => message,
            };
            for entry in message.entries {
                let index = usize::try_from(entry.index)
                    .ok()
                    .filter(|i| *i < keys.len())
                    .ok_or_else(|| {
                        protocol(
                            &self.inner.config.address,
                            table,
                            "MutateRows",
                            format!("an entry index {} of {} entries", entry.index, keys.len()),
                        )
                    })?;
                reported[index] = true;
                let Some(status) = entry.status.filter(|s| s.code != 0) else {
                    continue;
                };
                let code = tonic::Code::from_i32(status.code);
                let status = tonic::Status::new(code, status.message);
                let error = with_row(
                    self.noted(
                        table,
                        from_status(
                            &status,
                            "MutateRows",
                            table,
                            &self.inner.config.address,
                            started.elapsed(),
                        ),
                    ),
                    keys[index],
                );
                if !retryable(code) {
                    return Err(error);
                }
                retry.push(index);
                retry_error.get_or_insert(error);
            }
        }
        for (index, reported) in reported.iter().enumerate() {
            if *reported {
                continue;
            }
            if !broke_retryably {
                return Err(protocol(
                    &self.inner.config.address,
                    table,
                    "MutateRows",
                    format!("no status for row {} (entry {index})", show_row(keys[index])),
                ));
            }
            retry.push(index);
        }
        Ok(retry_error.map(|error| Retry { entries: retry, error }))
    }

    /// `CheckAndMutateRow`. Bigtable applies `true_mutations` when its
    /// predicate filter yields a cell, as Google's HBase adapter builds it
    /// (`CheckAndMutateUtil`): the column's newest cell in the time range,
    /// whose value is in the range the comparison allows (`stored op
    /// expected`: `Less` is `[-inf, expected)`, `NotEqual` the interleave of
    /// below and above). For "absent or empty" (HBase's reading of `None`
    /// and of an empty value) the predicate is "the newest cell holds a
    /// non-empty value": `NotEqual` applies the changes when it matches,
    /// every other operator when it does not (`false_mutations`). A filter
    /// condition is the read of the row with that filter (see `read_filter`).
    pub(super) async fn check_and_mutate_impl(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        let max = self.inner.config.max_value_size;
        check_key_length(table, &op.row)?;
        let (schema, ()) = self.checked(table, |schema| check_conditional(schema, op, max)).await?;
        refuse_unexpressible(table, &op.mutations)?;
        let now = now_ms();
        // A filter as the condition: the row as HBase's region reads it for
        // the check (a get of every family, one version, in the time range,
        // the filter applied) as a read of the row here builds it; the
        // check passes when it yields a cell. What the read cannot express
        // is refused there, before anything is sent.
        let filter_condition = match &op.filter {
            Some(f) => Some(read_filter(&schema, &[], 1, op.time_range, now, Some(f))?),
            None => None,
        };
        let row = [RowMutation::with(op.row.clone(), op.mutations.clone())];
        let expanded = self.expand_up_to_deletes(table, &row, now).await?;
        let changes = mutations(table, &expanded[0].mutations, now)?;
        let family = family_name(table, &op.family)?;
        // The newest cell HBase would see: one in the time range that the
        // family's TTL has not expired (Bigtable's GC is lazy).
        let live = schema.find_family(&op.family).and_then(|f| f.ttl()).map(|ttl| {
            now.saturating_sub(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
                .saturating_add(1)
        });
        let (min, max_ts) = (live.unwrap_or(0).max(op.time_range.min), op.time_range.max);
        let expected = op.expected.clone().filter(|v| !v.is_empty());
        let (value, when_matched) = condition_values(op.compare, expected.as_ref());
        let when_matched = when_matched || filter_condition.is_some();
        let predicate = filter_condition.unwrap_or_else(|| {
            filter(Filter::Chain(Chain {
                filters: vec![
                    filter(Filter::ColumnRangeFilter(v2::ColumnRange {
                        family_name: family,
                        start_qualifier: Some(v2::column_range::StartQualifier::StartQualifierClosed(
                            op.qualifier.clone(),
                        )),
                        end_qualifier: Some(v2::column_range::EndQualifier::EndQualifierClosed(op.qualifier.clone())),
                    })),
                    filter(if min > 0 || max_ts < i64::MAX {
                        Filter::TimestampRangeFilter(super::convert::time_range(min, max_ts))
                    } else {
                        Filter::PassAllFilter(true)
                    }),
                    filter(Filter::CellsPerColumnLimitFilter(1)),
                    value,
                ],
            }))
        });
        if changes.is_empty() {
            // Bigtable wants a mutation on one side: read the check instead.
            let mut stream = self
                .read_rows(
                    table,
                    self.read_request(
                        table,
                        v2::RowSet {
                            row_keys: vec![op.row.clone()],
                            row_ranges: Vec::new(),
                        },
                        predicate,
                    ),
                )
                .await?;
            let matched = futures_util::StreamExt::next(&mut stream).await.transpose()?.is_some();
            return Ok(matched == when_matched);
        }
        let (true_mutations, false_mutations) = match when_matched {
            true => (changes, Vec::new()),
            false => (Vec::new(), changes),
        };
        let absent = false_mutations.len();
        let request = v2::CheckAndMutateRowRequest {
            table_name: self.table_name(table),
            app_profile_id: self.inner.config.app_profile.clone(),
            row_key: op.row.clone(),
            predicate_filter: Some(predicate),
            true_mutations,
            false_mutations,
            ..Default::default()
        };
        let (headers, left) = self
            .data_headers(
                table,
                "CheckAndMutateRow",
                crate::store::call_timeout(self.inner.config.call_timeout),
            )
            .await
            .map_err(|e| with_row(e, &op.row))?;
        let mut client = self.data(&headers);
        let reply = self
            .deadline(
                table,
                "CheckAndMutateRow",
                left,
                client.check_and_mutate_row(self.data_request(request)),
            )
            .await
            .map_err(|e| with_row(e, &op.row))?;
        Ok(if absent > 0 {
            !reply.predicate_matched
        } else {
            reply.predicate_matched
        })
    }

    /// `SampleRowKeys`: keys that split the table into pieces of about
    /// equal size, each with the bytes of the table before it, in key
    /// order; the last has the empty key (the table's end). Cloud
    /// Bigtable answers with its tablets' boundaries, as the Java HBase
    /// adapter reads a table's regions from them; the emulator samples
    /// its rows. For splitting a scan over workers.
    pub async fn sample_row_keys(&self, table: &str) -> Result<Vec<RowKeySample>> {
        check_table_name(table, &self.inner.config.table_prefix)?;
        let started = Instant::now();
        let (headers, left) = self
            .data_headers(
                table,
                "SampleRowKeys",
                crate::store::call_timeout(self.inner.config.call_timeout),
            )
            .await?;
        let request = v2::SampleRowKeysRequest {
            table_name: self.table_name(table),
            app_profile_id: self.inner.config.app_profile.clone(),
            ..Default::default()
        };
        let mut stream = self
            .idempotent(table, "SampleRowKeys", left, || {
                let mut client = self.data(&headers);
                let request = self.data_request(request.clone());
                async move { client.sample_row_keys(request).await }
            })
            .await?;
        let timeout = crate::store::call_timeout(self.inner.config.call_timeout);
        let mut samples = Vec::new();
        loop {
            let message = match tokio::time::timeout(timeout.saturating_sub(started.elapsed()), stream.message()).await
            {
                Ok(Ok(Some(message))) => message,
                Ok(Ok(None)) => return Ok(samples),
                Ok(Err(status)) => {
                    return Err(from_status(
                        &status,
                        "SampleRowKeys",
                        table,
                        &self.inner.config.address,
                        started.elapsed(),
                    ));
                }
                Err(_) => {
                    return Err(StoreError::Timeout {
                        table: table.into(),
                        operation: "SampleRowKeys",
                        elapsed: started.elapsed(),
                        detail: format!("{} samples read", samples.len()),
                    });
                }
            };
            samples.push(RowKeySample {
                row_key: message.row_key,
                offset_bytes: message.offset_bytes,
            });
        }
    }

    /// `ReadModifyWriteRow` with an `increment_amount` rule per column: a
    /// counter is an 8-byte big-endian integer, as HBase's.
    pub(super) async fn increment_impl(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        check_key_length(table, &op.row)?;
        self.checked(table, |schema| check_increment(schema, &op.row, &op.columns))
            .await?;
        if op.columns.is_empty() {
            return Ok(Vec::new());
        }
        let rules = op.columns.iter().map(|(family, qualifier, amount)| {
            (
                family,
                qualifier,
                v2::read_modify_write_rule::Rule::IncrementAmount(*amount),
            )
        });
        let row = match self.read_modify_write(table, &op.row, rules).await {
            Ok(row) => row,
            // The emulator: UNKNOWN "increment on non-64-bit value".
            Err(StoreError::Server { message, .. }) if message.contains("non-64-bit") => {
                return Err(self.not_a_counter(table, op).await);
            }
            Err(e) => return Err(with_row(e, &op.row)),
        };
        op.columns
            .iter()
            .map(|(family, qualifier, _)| {
                let bad = |message: String| protocol(&self.inner.config.address, table, "ReadModifyWriteRow", message);
                let cell = self.reply_cell(table, &row, &op.row, family, qualifier)?;
                let bytes: [u8; 8] = cell.value[..].try_into().map_err(|_| {
                    bad(format!(
                        "a {}-byte counter in {} of row {}",
                        cell.value.len(),
                        show_column(family, qualifier),
                        show_row(&op.row)
                    ))
                })?;
                Ok(i64::from_be_bytes(bytes))
            })
            .collect()
    }

    /// `ReadModifyWriteRow` with an `append_value` rule per column (Google's
    /// HBase adapter's `AppendAdapter`). Bigtable has no nonce: a call whose
    /// reply was lost is not sent again.
    pub(super) async fn append_impl(&self, table: &str, op: &Append) -> Result<RowResult> {
        check_key_length(table, &op.row)?;
        let max = self.inner.config.max_value_size;
        self.checked(table, |schema| check_append(schema, op, max)).await?;
        if op.columns.is_empty() {
            return Ok(RowResult::new(op.row.clone(), Vec::new()));
        }
        let rules = op.columns.iter().map(|(family, qualifier, value)| {
            (
                family,
                qualifier,
                v2::read_modify_write_rule::Rule::AppendValue(value.clone()),
            )
        });
        let row = self
            .read_modify_write(table, &op.row, rules)
            .await
            .map_err(|e| with_row(e, &op.row))?;
        let mut cells = Vec::with_capacity(op.columns.len());
        for (family, qualifier, _) in &op.columns {
            let cell = self.reply_cell(table, &row, &op.row, family, qualifier)?;
            cells.push(Cell::new(
                family.clone(),
                qualifier.clone(),
                super::convert::from_micros(cell.timestamp_micros),
                cell.value.clone(),
            ));
        }
        cells.sort_by(|a, b| (&a.family, &a.qualifier).cmp(&(&b.family, &b.qualifier)));
        Ok(RowResult::new(op.row.clone(), cells))
    }

    /// One `ReadModifyWriteRow` of `row` with a rule per column (an
    /// increment's or an append's); returns the row the reply holds.
    async fn read_modify_write<'a>(
        &self,
        table: &str,
        row: &Bytes,
        rules: impl Iterator<Item = (&'a Bytes, &'a Bytes, v2::read_modify_write_rule::Rule)>,
    ) -> Result<v2::Row> {
        let rules = rules
            .map(|(family, qualifier, rule)| {
                Ok(v2::ReadModifyWriteRule {
                    family_name: family_name(table, family)?,
                    column_qualifier: qualifier.clone(),
                    rule: Some(rule),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let request = v2::ReadModifyWriteRowRequest {
            table_name: self.table_name(table),
            app_profile_id: self.inner.config.app_profile.clone(),
            row_key: row.clone(),
            rules,
            ..Default::default()
        };
        let (headers, left) = self
            .data_headers(
                table,
                "ReadModifyWriteRow",
                crate::store::call_timeout(self.inner.config.call_timeout),
            )
            .await?;
        let mut client = self.data(&headers);
        let reply = self
            .deadline(
                table,
                "ReadModifyWriteRow",
                left,
                client.read_modify_write_row(self.data_request(request)),
            )
            .await?;
        Ok(reply.row.unwrap_or_default())
    }

    /// The newest cell of a column in a `ReadModifyWriteRow` reply; a reply
    /// without it is a protocol error.
    fn reply_cell<'r>(
        &self,
        table: &str,
        reply: &'r v2::Row,
        row: &Bytes,
        family: &Bytes,
        qualifier: &Bytes,
    ) -> Result<&'r v2::Cell> {
        reply
            .families
            .iter()
            .filter(|f| f.name.as_bytes() == &family[..])
            .flat_map(|f| &f.columns)
            .find(|c| c.qualifier == *qualifier)
            .and_then(|c| c.cells.iter().max_by_key(|c| c.timestamp_micros))
            .ok_or_else(|| {
                protocol(
                    &self.inner.config.address,
                    table,
                    "ReadModifyWriteRow",
                    format!(
                        "no cell of {} in the reply for row {}",
                        show_column(family, qualifier),
                        show_row(row)
                    ),
                )
            })
    }

    /// The error of an increment of a cell that is not a counter, naming
    /// the first such column as the store reads it now.
    async fn not_a_counter(&self, table: &str, op: &Increment) -> StoreError {
        let get = op
            .columns
            .iter()
            .fold(Get::new(op.row.clone()), |g, (f, q, _)| g.column(f.clone(), q.clone()));
        let fallback = StoreError::InvalidRequest {
            table: table.into(),
            reason: format!(
                "row {}: an incremented cell is not an 8-byte counter",
                show_row(&op.row)
            ),
        };
        let Ok(Some(row)) = self
            .get_many_impl(table, std::slice::from_ref(&get))
            .await
            .map(|mut r| r.pop().flatten())
        else {
            return fallback;
        };
        for (family, qualifier, _) in &op.columns {
            if let Some(cell) = row.latest(family, qualifier).filter(|c| c.value.len() != 8) {
                return StoreError::NotACounter {
                    table: table.into(),
                    row: show_row(&op.row),
                    column: show_column(family, qualifier),
                    len: cell.value.len(),
                };
            }
        }
        fallback
    }
}

/// The value part of a check-and-mutate's predicate (on the column's
/// newest cell), and whether the check passes when the predicate matches
/// (else when it does not). `stored op expected`, with HBase's reading of
/// nothing expected (`HRegion.checkAndMutateInternal`: `valueIsNull`):
/// `NotEqual` passes on a non-empty value, every other operator on an
/// absent or empty one. With a value, an absent column fails every
/// operator, `NotEqual` included: the predicate matches no cell.
fn condition_values(op: CompareOp, expected: Option<&Bytes>) -> (v2::RowFilter, bool) {
    use v2::value_range::{EndValue, StartValue};
    let range = |start: Option<StartValue>, end: Option<EndValue>| {
        filter(Filter::ValueRangeFilter(v2::ValueRange {
            start_value: start,
            end_value: end,
        }))
    };
    let Some(v) = expected else {
        let non_empty = range(Some(StartValue::StartValueOpen(Bytes::new())), None);
        return (non_empty, op == CompareOp::NotEqual);
    };
    let below = || range(None, Some(EndValue::EndValueOpen(v.clone())));
    let above = || range(Some(StartValue::StartValueOpen(v.clone())), None);
    let value = match op {
        CompareOp::Less => below(),
        CompareOp::LessOrEqual => range(None, Some(EndValue::EndValueClosed(v.clone()))),
        CompareOp::GreaterOrEqual => range(Some(StartValue::StartValueClosed(v.clone())), None),
        CompareOp::Greater => above(),
        CompareOp::NotEqual => filter(Filter::Interleave(v2::row_filter::Interleave {
            filters: vec![below(), above()],
        })),
        // Equal; NoOp was refused by the check.
        _ => range(
            Some(StartValue::StartValueClosed(v.clone())),
            Some(EndValue::EndValueClosed(v.clone())),
        ),
    };
    (value, true)
}

/// What no expansion can express, refused before anything is sent: a
/// delete of a column's newest version.
fn refuse_unexpressible(table: &str, list: &[Mutation]) -> Result<()> {
    match list
        .iter()
        .any(|m| matches!(m, Mutation::DeleteCell { timestamp: None, .. }))
    {
        true => Err(super::error::refuse(table, super::error::unsupported::DELETE_LATEST)),
        false => Ok(()),
    }
}

/// Whether Bigtable needs the row read to send this delete: a row's or a
/// family's cells up to a timestamp.
fn up_to_delete(m: &Mutation) -> bool {
    matches!(
        m,
        Mutation::DeleteRow { up_to: Some(_) } | Mutation::DeleteFamily { up_to: Some(_), .. }
    )
}

impl BigtableStore {
    /// The rows with every delete of a row's or a family's cells up to `T`
    /// (which `DeleteFromRow` and `DeleteFromFamily` cannot bound) replaced
    /// by a `DeleteFromColumn [0, T]` of each column that holds a cell at
    /// `T` or before: the columns stored (one `ReadRows` over those rows,
    /// values stripped) and those that puts before the delete in the same
    /// call write. The typed API deletes rows this way (up to the time of
    /// the write, so that a later put survives).
    ///
    /// Not atomic with the read: a cell at `T` or before written by another
    /// client to a column this read did not see, between the read and the
    /// write, survives (HBase's delete marker would hide it).
    async fn expand_up_to_deletes<'r>(
        &self,
        table: &str,
        rows: &'r [RowMutation],
        now: i64,
    ) -> Result<std::borrow::Cow<'r, [RowMutation]>> {
        let mut keys: Vec<Bytes> = rows
            .iter()
            .filter(|r| r.mutations.iter().any(up_to_delete))
            .map(|r| r.row.clone())
            .collect();
        if keys.is_empty() {
            return Ok(std::borrow::Cow::Borrowed(rows));
        }
        keys.sort();
        keys.dedup();
        // Each stored column's oldest timestamp, per row.
        let mut oldest: HashMap<Bytes, BTreeMap<(Bytes, Bytes), i64>> = HashMap::new();
        let set = v2::RowSet {
            row_keys: keys,
            row_ranges: Vec::new(),
        };
        let strip = filter(Filter::StripValueTransformer(true));
        let mut stream = self.read_rows(table, self.read_request(table, set, strip)).await?;
        while let Some(row) = futures_util::StreamExt::next(&mut stream).await {
            let row = row?;
            let columns = oldest.entry(row.row.clone()).or_default();
            for cell in row.cells {
                let at = columns.entry((cell.family, cell.qualifier)).or_insert(cell.timestamp);
                *at = (*at).min(cell.timestamp);
            }
        }
        let mut expanded = Vec::with_capacity(rows.len());
        for row in rows {
            let columns = oldest.entry(row.row.clone()).or_default();
            let mut list = Vec::with_capacity(row.mutations.len());
            for m in &row.mutations {
                let (family, up_to) = match m {
                    Mutation::DeleteRow { up_to: Some(t) } => (None, *t),
                    Mutation::DeleteFamily { family, up_to: Some(t) } => (Some(family), *t),
                    Mutation::Put {
                        family,
                        qualifier,
                        timestamp,
                        ..
                    } => {
                        let ts = timestamp.unwrap_or(now);
                        let at = columns.entry((family.clone(), qualifier.clone())).or_insert(ts);
                        *at = (*at).min(ts);
                        list.push(m.clone());
                        continue;
                    }
                    other => {
                        list.push(other.clone());
                        continue;
                    }
                };
                for ((f, q), at) in columns.iter() {
                    if *at <= up_to && family.is_none_or(|family| family == f) {
                        list.push(Mutation::DeleteColumn {
                            family: f.clone(),
                            qualifier: q.clone(),
                            up_to: Some(up_to),
                        });
                    }
                }
            }
            expanded.push(RowMutation::with(row.row.clone(), list));
        }
        Ok(std::borrow::Cow::Owned(expanded))
    }
}

/// An error of a write of one row, naming it where the error has room.
/// What one `MutateRows` call left to do: the entries to send again, and
/// the error to give if they cannot be.
struct Retry {
    /// Indexes into the call's entries.
    entries: Vec<usize>,
    /// The first of their failures.
    error: StoreError,
}

/// Whether an entry that failed with `code` is sent again: the codes
/// Google's clients retry a mutation on.
fn retryable(code: tonic::Code) -> bool {
    matches!(code, tonic::Code::Unavailable | tonic::Code::DeadlineExceeded)
}

fn with_row(error: StoreError, row: &[u8]) -> StoreError {
    match error {
        StoreError::Server {
            service,
            table,
            operation,
            message,
        } => StoreError::Server {
            service,
            table,
            operation,
            message: format!("row {}: {message}", show_row(row)),
        },
        StoreError::InvalidRequest { table, reason } => StoreError::InvalidRequest {
            table,
            reason: format!("row {}: {reason}", show_row(row)),
        },
        // An entry of a batch that stayed unavailable, or out of time.
        StoreError::Connection {
            endpoint,
            message,
            cause: source,
        } => StoreError::Connection {
            endpoint,
            message: format!("row {}: {message}", show_row(row)),
            cause: source,
        },
        StoreError::Timeout {
            table,
            operation,
            elapsed,
            detail,
        } => StoreError::Timeout {
            table,
            operation,
            elapsed,
            detail: match detail.as_str() {
                "" => format!("row {}", show_row(row)),
                _ => format!("row {}: {detail}", show_row(row)),
            },
        },
        other => other,
    }
}

/// A `ReadRows` stream being merged into rows.
struct RowsState {
    /// The stream; `None` while it is being opened again.
    streaming: Option<tonic::Streaming<v2::ReadRowsResponse>>,
    /// The request as the caller made it (its rows and limit narrowed to
    /// what is left when the stream is opened again).
    request: v2::ReadRowsRequest,
    merger: ChunkMerger,
    ready: VecDeque<RowResult>,
    /// Rows completed so far, for the request's `rows_limit`.
    committed: i64,
    /// The key the server is known to have read up to: the last row
    /// completed, or a `last_scanned_row_key` beyond it.
    resume_after: Option<Bytes>,
    done: bool,
    table: String,
    endpoint: String,
    timeout: Duration,
    store: BigtableStore,
}

/// The first pause before a broken `ReadRows` stream is opened again; it
/// doubles up to a second.
const FIRST_PAUSE: Duration = Duration::from_millis(10);

impl RowsState {
    /// The next row. Waiting for a response is bounded by the call
    /// deadline, counted from when the wait began; a stream that breaks
    /// with a status worth another try ([`resumable`]) is opened again
    /// after the last row the server sent, within that deadline, after a
    /// pause from 10 ms doubling to 1 s (each response received starts
    /// both afresh). Rows already received are not asked for again and
    /// none is skipped: the rows of a row set after that key, the
    /// request's limit less the rows received.
    async fn next(mut self) -> Option<(Result<RowResult>, Self)> {
        let mut waiting = Instant::now();
        let mut pause = FIRST_PAUSE;
        loop {
            if let Some(row) = self.ready.pop_front() {
                return Some((Ok(row), self));
            }
            if self.done {
                return None;
            }
            let left = self.timeout.saturating_sub(waiting.elapsed());
            let status = match &mut self.streaming {
                None => match self.reopen(left).await {
                    Ok(()) => continue,
                    Err(e) => return Some(self.failed(e)),
                },
                Some(streaming) => match tokio::time::timeout(left, streaming.message()).await {
                    Ok(Ok(Some(response))) => {
                        waiting = Instant::now();
                        pause = FIRST_PAUSE;
                        match self.take(response) {
                            Ok(()) => continue,
                            Err(e) => return Some(self.failed(e)),
                        }
                    }
                    Ok(Ok(None)) => match self.merger.finish() {
                        Ok(()) => {
                            self.done = true;
                            continue;
                        }
                        Err(e) => {
                            let e = protocol(&self.endpoint, &self.table, "ReadRows", e);
                            return Some(self.failed(e));
                        }
                    },
                    Ok(Err(status)) => status,
                    Err(_) => {
                        let e = StoreError::Timeout {
                            table: self.table.clone(),
                            operation: "ReadRows",
                            elapsed: waiting.elapsed(),
                            detail: format!("{} rows read", self.committed),
                        };
                        return Some(self.failed(e));
                    }
                },
            };
            if resumable(&status) && waiting.elapsed() + pause < self.timeout {
                tracing::debug!(
                    table = self.table,
                    rows = self.committed,
                    ?pause,
                    message = status.message(),
                    "ReadRows: the stream broke, opened again after the last row"
                );
                crate::store::metrics::retry("bigtable", "stream");
                self.store
                    .inner
                    .resumed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.streaming = None;
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
                continue;
            }
            let e = from_status(&status, "ReadRows", &self.table, &self.endpoint, waiting.elapsed());
            let e = self.store.noted(&self.table, e);
            return Some(self.failed(e));
        }
    }

    /// Merges a response's chunks; the rows it completes are ready.
    fn take(&mut self, response: v2::ReadRowsResponse) -> Result<()> {
        for chunk in response.chunks {
            match self.merger.push(chunk) {
                Ok(Some(row)) => {
                    self.committed += 1;
                    self.resume_after = Some(row.row.clone());
                    self.ready.push_back(row);
                }
                Ok(None) => {}
                Err(e) => return Err(protocol(&self.endpoint, &self.table, "ReadRows", e)),
            }
        }
        // Rows up to this key were read and filtered out: a stream opened
        // again starts after it.
        let scanned = response.last_scanned_row_key;
        if !scanned.is_empty() && !self.merger.in_row() {
            let beyond = self
                .resume_after
                .as_ref()
                .is_none_or(|last| match self.request.reversed {
                    false => scanned > *last,
                    true => scanned < *last,
                });
            if beyond {
                self.resume_after = Some(scanned);
            }
        }
        Ok(())
    }

    /// Opens the stream again for what is left of the request, within
    /// `left`; with nothing left, the stream is done.
    async fn reopen(&mut self, left: Duration) -> Result<()> {
        // A row in progress is sent again whole.
        self.merger.drop_row();
        let Some(request) = remaining(&self.request, self.resume_after.as_ref(), self.committed) else {
            self.done = true;
            return Ok(());
        };
        self.streaming = Some(self.store.open_read(&self.table, &request, left).await?);
        Ok(())
    }

    /// Ends the stream with `error`: the rows of a response that broke the
    /// protocol are dropped with it.
    fn failed(mut self, error: StoreError) -> (Result<RowResult>, Self) {
        self.done = true;
        self.streaming = None;
        self.ready.clear();
        (Err(error), self)
    }
}

/// Whether a `ReadRows` stream that ended with `status` is opened again
/// after its last row: the codes Google's clients resume a read on
/// (`UNAVAILABLE`, `DEADLINE_EXCEEDED` (the server's own, as the request
/// carries none), `ABORTED`), and the client's connection or stream
/// broken under it (an HTTP/2 reset or GOAWAY, a closed socket).
fn resumable(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(
        status.code(),
        Code::Unavailable | Code::DeadlineExceeded | Code::Aborted
    ) || super::error::from_transport(status)
}

/// What is left of `request` after the rows up to `after` (`committed`
/// of them), or `None` when nothing is: its row keys after `after`, its
/// ranges cut to start after it (end before it, reversed), its limit less
/// the rows received.
fn remaining(request: &v2::ReadRowsRequest, after: Option<&Bytes>, committed: i64) -> Option<v2::ReadRowsRequest> {
    use v2::row_range::{EndKey, StartKey};
    let mut request = request.clone();
    if request.rows_limit > 0 {
        request.rows_limit -= committed;
        if request.rows_limit <= 0 {
            return None;
        }
    }
    let Some(after) = after else {
        return Some(request);
    };
    let reversed = request.reversed;
    let mut rows = request.rows.take().unwrap_or_default();
    if rows.row_keys.is_empty() && rows.row_ranges.is_empty() {
        // The whole table.
        rows.row_ranges.push(v2::RowRange::default());
    }
    let left = |key: &Bytes| if reversed { key < after } else { key > after };
    let keys: Vec<Bytes> = rows.row_keys.into_iter().filter(|k| left(k)).collect();
    let ranges: Vec<v2::RowRange> = rows
        .row_ranges
        .into_iter()
        .filter_map(|mut range| {
            if reversed {
                // Keep what lies before `after`.
                let starts_before = match &range.start_key {
                    None => true,
                    Some(StartKey::StartKeyClosed(k)) | Some(StartKey::StartKeyOpen(k)) => k < after,
                };
                if !starts_before {
                    return None;
                }
                let ends_after = match &range.end_key {
                    None => true,
                    Some(EndKey::EndKeyOpen(k)) => k > after,
                    Some(EndKey::EndKeyClosed(k)) => k >= after,
                };
                if ends_after {
                    range.end_key = Some(EndKey::EndKeyOpen(after.clone()));
                }
            } else {
                // Keep what lies after `after`.
                let ends_after = match &range.end_key {
                    None => true,
                    Some(EndKey::EndKeyOpen(k)) | Some(EndKey::EndKeyClosed(k)) => k > after,
                };
                if !ends_after {
                    return None;
                }
                let starts_before = match &range.start_key {
                    None => true,
                    Some(StartKey::StartKeyClosed(k)) => k <= after,
                    Some(StartKey::StartKeyOpen(k)) => k < after,
                };
                if starts_before {
                    range.start_key = Some(StartKey::StartKeyOpen(after.clone()));
                }
            }
            Some(range)
        })
        .collect();
    if keys.is_empty() && ranges.is_empty() {
        return None;
    }
    request.rows = Some(v2::RowSet {
        row_keys: keys,
        row_ranges: ranges,
    });
    Some(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use v2::row_range::{EndKey, StartKey};

    fn range(start: Option<StartKey>, end: Option<EndKey>) -> v2::RowRange {
        v2::RowRange {
            start_key: start,
            end_key: end,
        }
    }

    fn key(k: &str) -> Bytes {
        Bytes::copy_from_slice(k.as_bytes())
    }

    fn request(keys: &[&str], ranges: Vec<v2::RowRange>, limit: i64, reversed: bool) -> v2::ReadRowsRequest {
        v2::ReadRowsRequest {
            rows: Some(v2::RowSet {
                row_keys: keys.iter().map(|k| key(k)).collect(),
                row_ranges: ranges,
            }),
            rows_limit: limit,
            reversed,
            ..Default::default()
        }
    }

    #[test]
    fn a_read_opened_again_asks_for_what_is_left() {
        // Nothing received yet: the request as it was.
        let whole = request(&[], vec![], 0, false);
        assert_eq!(remaining(&whole, None, 0), Some(whole.clone()));
        // The whole table, after row m.
        let left = remaining(&whole, Some(&key("m")), 3).unwrap();
        assert_eq!(
            left.rows.unwrap().row_ranges,
            [range(Some(StartKey::StartKeyOpen(key("m"))), None)]
        );
        // Keys and ranges: those after m, cut to start after it.
        let mixed = request(
            &["a", "m", "n"],
            vec![
                range(
                    Some(StartKey::StartKeyClosed(key("b"))),
                    Some(EndKey::EndKeyClosed(key("m"))),
                ),
                range(
                    Some(StartKey::StartKeyClosed(key("k"))),
                    Some(EndKey::EndKeyOpen(key("p"))),
                ),
                range(Some(StartKey::StartKeyOpen(key("q"))), None),
            ],
            10,
            false,
        );
        let left = remaining(&mixed, Some(&key("m")), 4).unwrap();
        assert_eq!(left.rows_limit, 6);
        let rows = left.rows.unwrap();
        assert_eq!(rows.row_keys, [key("n")]);
        assert_eq!(
            rows.row_ranges,
            [
                range(
                    Some(StartKey::StartKeyOpen(key("m"))),
                    Some(EndKey::EndKeyOpen(key("p")))
                ),
                range(Some(StartKey::StartKeyOpen(key("q"))), None),
            ]
        );
        // The limit reached, or nothing after the last row: done.
        assert_eq!(remaining(&mixed, Some(&key("m")), 10), None);
        assert_eq!(
            remaining(&mixed, Some(&key("z")), 1).unwrap().rows.unwrap().row_ranges,
            [range(Some(StartKey::StartKeyOpen(key("z"))), None)]
        );
        assert_eq!(
            remaining(&request(&["a", "b"], vec![], 0, false), Some(&key("b")), 2),
            None
        );
        // Reversed: what lies before the last row.
        let reversed = request(
            &["a", "m", "z"],
            vec![
                range(
                    Some(StartKey::StartKeyClosed(key("c"))),
                    Some(EndKey::EndKeyClosed(key("x"))),
                ),
                range(Some(StartKey::StartKeyClosed(key("m"))), None),
            ],
            0,
            true,
        );
        let rows = remaining(&reversed, Some(&key("m")), 2).unwrap().rows.unwrap();
        assert_eq!(rows.row_keys, [key("a")]);
        assert_eq!(
            rows.row_ranges,
            [range(
                Some(StartKey::StartKeyClosed(key("c"))),
                Some(EndKey::EndKeyOpen(key("m")))
            )]
        );
    }
}
