//! hmap's reads and writes of rows over HBase's RPC: a get, a row's
//! mutations, a check-and-mutate, an increment or an append as one region
//! call ([`call`](super::call)); many rows as batches ([`batch`](super::batch)).

use bytes::Bytes;

use super::batch::{Op, waves};
use super::client::NativeStore;
use super::convert;
use super::error::NativeError;
use super::locate::{RegionLocation, Target};
use super::proto;
use super::retry::Idempotence;
use crate::store::{
    Append, BatchOutcome, CheckAndMutate, Get, Increment, RowMutation, RowOutcome, RowResult, StoreError,
};

impl NativeStore {
    /// Reads one row; `None` if it has no cell the get selects.
    pub(super) async fn get_unchecked(
        &self,
        table: &str,
        get: &crate::store::Get,
    ) -> Result<Option<RowResult>, StoreError> {
        let request = |region: &RegionLocation| proto::GetRequest {
            region: region.specifier(),
            get: convert::get(get),
        };
        let (_, reply) = self
            .region_call::<_, proto::GetResponse>(table, Target::Row(&get.row), "Get", Idempotence::Safe, request)
            .await
            .map_err(|(e, endpoint)| e.into_store(table, Some(&get.row), "get", &endpoint))?;
        let result = reply.message.result.unwrap_or_default();
        let read = convert::associated_cells(&result)
            .and_then(|n| convert::row_result(&result, n, &mut reply.cells.into_iter()));
        read.map_err(|e| e.into_store(table, Some(&get.row), "get", ""))
    }

    /// Reads many rows in one `Multi` call per region server; results in
    /// the order of `gets`.
    pub(super) async fn get_many_unchecked(
        &self,
        table: &str,
        gets: &[Get],
    ) -> Result<Vec<Option<RowResult>>, StoreError> {
        let ops: Vec<_> = gets.iter().map(|g| (g.row.clone(), Op::Get(convert::get(g)))).collect();
        self.multi(table, &ops, "get_many").await
    }

    /// Reads many rows as [`get_many_unchecked`](Self::get_many_unchecked)
    /// does, each on its own: its row or its error, in the order of `gets`.
    pub(super) async fn get_each_unchecked(
        &self,
        table: &str,
        gets: &[Get],
    ) -> Result<Vec<Result<Option<RowResult>, StoreError>>, StoreError> {
        let ops: Vec<_> = gets.iter().map(|g| (g.row.clone(), Op::Get(convert::get(g)))).collect();
        Ok(self
            .multi_each(table, &ops, "get_many")
            .await?
            .into_iter()
            .map(|r| r.map_err(|failure| failure.error))
            .collect())
    }

    /// Applies each row's changes (atomically per row, rows independently,
    /// a row named several times in the order given).
    pub(super) async fn mutate_unchecked(&self, table: &str, rows: &[RowMutation]) -> Result<(), StoreError> {
        if rows.len() > 1 {
            // One Multi per region server; each row atomic on its own. A
            // row named again waits for the wave before: HBase applies a
            // region's actions of one `Multi` with no order between two of
            // one row (the atomic ones after the others, and a delete of the
            // latest version resolved before the batch's puts).
            let mut ops = Vec::with_capacity(rows.len());
            for row in rows {
                let mutations =
                    convert::mutations(row).map_err(|e| e.into_store(table, Some(&row.row), "mutate", ""))?;
                if !mutations.is_empty() {
                    ops.push((
                        row.row.clone(),
                        Op::Mutate(mutations, super::retry::row_idempotence(row)),
                    ));
                }
            }
            for wave in waves(ops) {
                self.multi(table, &wave, "mutate").await?;
            }
            return Ok(());
        }
        for row in rows {
            let mutations = convert::mutations(row).map_err(|e| e.into_store(table, Some(&row.row), "mutate", ""))?;
            match &mutations[..] {
                [] => {}
                [one] => {
                    let request = |region: &RegionLocation| proto::MutateRequest {
                        region: region.specifier(),
                        mutation: one.clone(),
                        condition: None,
                        nonce_group: None,
                    };
                    self.region_call::<_, proto::MutateResponse>(
                        table,
                        Target::Row(&row.row),
                        "Mutate",
                        super::retry::row_idempotence(row),
                        request,
                    )
                    .await
                    .map_err(|(e, endpoint)| e.into_store(table, Some(&row.row), "mutate", &endpoint))?;
                }
                several => {
                    // Kinds mixed in one row: one atomic region action.
                    let request = |region: &RegionLocation| atomic_multi(region, several, None);
                    self.region_call::<_, proto::MultiResponse>(
                        table,
                        Target::Row(&row.row),
                        "Multi",
                        super::retry::row_idempotence(row),
                        request,
                    )
                    .await
                    .map_err(|(e, endpoint)| e.into_store(table, Some(&row.row), "mutate", &endpoint))?;
                }
            }
        }
        Ok(())
    }

    /// Applies each row's changes as [`mutate_unchecked`](Self::mutate_unchecked)
    /// does, a row's failure not stopping the others: what became of each
    /// row, in order. `checked` holds each row's verdict of the checks
    /// before sending: a row that failed them is refused and not sent.
    pub(super) async fn mutate_each_unchecked(
        &self,
        table: &str,
        rows: &[RowMutation],
        checked: Vec<Result<(), StoreError>>,
    ) -> Result<BatchOutcome, StoreError> {
        let mut outcome: Vec<Option<RowOutcome>> = (0..rows.len()).map(|_| None).collect();
        let mut ops = Vec::with_capacity(rows.len());
        for (i, (row, checked)) in rows.iter().zip(checked).enumerate() {
            let mutations = checked
                .and_then(|()| convert::mutations(row).map_err(|e| e.into_store(table, Some(&row.row), "mutate", "")));
            match mutations {
                Err(e) => outcome[i] = Some(RowOutcome::Refused(e)),
                Ok(mutations) if mutations.is_empty() => outcome[i] = Some(RowOutcome::Applied),
                Ok(mutations) => ops.push((
                    row.row.clone(),
                    (i, Op::Mutate(mutations, super::retry::row_idempotence(row))),
                )),
            }
        }
        // A row named again waits for the wave before, as in `mutate`.
        for wave in waves(ops) {
            let (at, wave): (Vec<usize>, Vec<(Bytes, Op)>) =
                wave.into_iter().map(|(row, (i, op))| (i, (row, op))).unzip();
            let results = self.multi_each(table, &wave, "mutate").await?;
            for (i, result) in at.into_iter().zip(results) {
                outcome[i] = Some(match result {
                    Ok(_) => RowOutcome::Applied,
                    Err(failure) => failure.into_outcome(),
                });
            }
        }
        Ok(outcome
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    RowOutcome::Unknown(StoreError::Protocol {
                        endpoint: String::new(),
                        table: table.to_string(),
                        operation: "mutate",
                        message: "a row of the batch got no answer".into(),
                    })
                })
            })
            .collect())
    }

    /// Applies the changes if the column's newest value is `op.expected`
    /// (absent or empty for `None`); returns whether it did.
    pub(super) async fn check_and_mutate_unchecked(
        &self,
        table: &str,
        op: &CheckAndMutate,
    ) -> Result<bool, StoreError> {
        let row = RowMutation::with(op.row.clone(), op.mutations.clone());
        let store_error =
            |(e, endpoint): (NativeError, String)| e.into_store(table, Some(&op.row), "check_and_mutate", &endpoint);
        let mutations = convert::mutations(&row).map_err(|e| store_error((e, String::new())))?;
        let condition = convert::condition(op);
        match &mutations[..] {
            [one] => {
                let request = |region: &RegionLocation| proto::MutateRequest {
                    region: region.specifier(),
                    mutation: one.clone(),
                    condition: Some(condition.clone()),
                    nonce_group: None,
                };
                let (_, reply) = self
                    .region_call::<_, proto::MutateResponse>(
                        table,
                        Target::Row(&op.row),
                        "Mutate",
                        Idempotence::Unsafe,
                        request,
                    )
                    .await
                    .map_err(store_error)?;
                Ok(reply.message.processed.unwrap_or(false))
            }
            several => {
                // Several kinds: one atomic region action under the condition.
                let request = |region: &RegionLocation| atomic_multi(region, several, Some(condition.clone()));
                let (_, reply) = self
                    .region_call::<_, proto::MultiResponse>(
                        table,
                        Target::Row(&op.row),
                        "Multi",
                        Idempotence::Unsafe,
                        request,
                    )
                    .await
                    .map_err(store_error)?;
                Ok(reply
                    .message
                    .region_action_result
                    .first()
                    .and_then(|r| r.processed)
                    .unwrap_or(false))
            }
        }
    }

    /// Adds to counters; returns their new values, in the order of `op`.
    pub(super) async fn increment_unchecked(&self, table: &str, op: &Increment) -> Result<Vec<i64>, StoreError> {
        let store_error = |(e, endpoint): (NativeError, String)| {
            // `DoNotRetryIOException: Field is not a long, it's N bytes wide`
            // (`HRegion.MutationBatchOperation.getLongValue`).
            let not_a_counter = e.remote().and_then(|r| {
                r.message
                    .strip_prefix("Field is not a long, it's ")?
                    .strip_suffix(" bytes wide")?
                    .parse::<usize>()
                    .ok()
            });
            match (not_a_counter, op.columns.first()) {
                (Some(len), Some((family, qualifier, _))) => StoreError::NotACounter {
                    table: table.to_string(),
                    row: crate::store::show_row(&op.row),
                    column: crate::store::error::show_column(family, qualifier),
                    len,
                },
                _ => e.into_store(table, Some(&op.row), "increment", &endpoint),
            }
        };
        let row = self
            .nonced_mutate(table, &op.row, convert::increment(op), &store_error)
            .await?;
        if !op.answered_by(row.as_ref()) {
            // Applied, without the values (see `Increment::read_back`):
            // read them, other increments since included.
            let read = self.get_unchecked(table, &op.read_back()).await?;
            return convert::counters(op, read.as_ref()).map_err(|e| store_error((e, String::new())));
        }
        convert::counters(op, row.as_ref()).map_err(|e| store_error((e, String::new())))
    }

    /// Sends an increment or an append of `row` with a nonce, the same on
    /// every try: a try whose reply was lost and that is sent again is
    /// recognised by the region server (even after the region moved: nonces
    /// are in its write-ahead log), which answers it with the values
    /// instead of applying it again, as for HBase's Java client. Returns the
    /// row the server answered with (`None`, or without some columns, when
    /// it answered without them).
    async fn nonced_mutate(
        &self,
        table: &str,
        row: &Bytes,
        mutation: proto::MutationProto,
        store_error: &impl Fn((NativeError, String)) -> StoreError,
    ) -> Result<Option<RowResult>, StoreError> {
        let mutation = proto::MutationProto {
            nonce: Some(super::random::random_u64()),
            ..mutation
        };
        let request = |region: &RegionLocation| proto::MutateRequest {
            region: region.specifier(),
            mutation: mutation.clone(),
            condition: None,
            nonce_group: Some(self.inner.nonce_group),
        };
        let (_, reply) = self
            .region_call::<_, proto::MutateResponse>(table, Target::Row(row), "Mutate", Idempotence::Safe, request)
            .await
            .map_err(store_error)?;
        let result = reply.message.result.unwrap_or_default();
        convert::associated_cells(&result)
            .and_then(|n| convert::row_result(&result, n, &mut reply.cells.into_iter()))
            .map_err(|e| store_error((e, String::new())))
    }

    /// Appends to columns; returns the row's new values of those columns.
    pub(super) async fn append_unchecked(&self, table: &str, op: &Append) -> Result<RowResult, StoreError> {
        let store_error =
            |(e, endpoint): (NativeError, String)| e.into_store(table, Some(&op.row), "append", &endpoint);
        let row = self
            .nonced_mutate(table, &op.row, convert::append(op), &store_error)
            .await?;
        if !op.answered_by(row.as_ref()) {
            // Applied, without the values (a retry recognised by its nonce):
            // read them, other appends since included.
            let read = self.get_unchecked(table, &op.read_back()).await?;
            return Ok(op.answer(read));
        }
        Ok(op.answer(row))
    }
}

/// A `Multi` of one atomic region action: `mutations` applied together in
/// `region`, under `condition` when there is one.
fn atomic_multi(
    region: &RegionLocation,
    mutations: &[proto::MutationProto],
    condition: Option<proto::Condition>,
) -> proto::MultiRequest {
    proto::MultiRequest {
        region_action: vec![proto::RegionAction {
            region: region.specifier(),
            atomic: Some(true),
            action: mutations
                .iter()
                .enumerate()
                .map(|(i, m)| proto::Action {
                    index: Some(i as u32),
                    mutation: Some(m.clone()),
                    get: None,
                })
                .collect(),
            condition,
        }],
        nonce_group: None,
    }
}
