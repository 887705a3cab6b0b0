//! Batches over `ClientService.Multi`: many gets or row mutations (a batch
//! of more than 250 sent as several batches at once), grouped
//! by region server (one `Multi` call per server, all servers at once) and
//! by region (one `RegionAction` per region; a row whose changes need
//! several mutations gets an atomic `RegionAction` of its own). Actions that
//! fail because a region moved, or a server is busy, are sent again after
//! a lookup or a pause, within the batch's one deadline.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::client::NativeStore;
use super::codec::WireCell;
use super::convert;
use super::error::{NativeError, RemoteError};
use super::locate::{RegionLocation, Target};
use super::proto;
use super::retry::{Idempotence, Retry, retry_kind};
use crate::store::{RowResult, StoreError};

/// The most operations in one `Multi` call; a larger batch is sent as
/// several calls at once.
const MULTI_CHUNK: usize = 250;

/// The most bytes of operations in one `Multi` call, about: HBase's own
/// client sends at most 4 MiB a request
/// (`hbase.client.max.perrequest.heapsize`), and a region server refuses a
/// request over `hbase.ipc.max.request.size` (256 MiB), which 250 rows of
/// valid cells can pass.
const MULTI_CHUNK_BYTES: usize = 4 * 1024 * 1024;

/// One operation of a batch.
#[derive(Clone, Debug)]
pub(super) enum Op {
    /// Read a row.
    Get(proto::Get),
    /// Change a row: one mutation, or several applied atomically; and
    /// whether they may be applied twice (see [`Idempotence`]).
    Mutate(Vec<proto::MutationProto>, Idempotence),
}

/// The region actions of one server's `Multi`, and for each action the
/// batch operation it belongs to.
#[derive(Default)]
struct ServerBatch {
    request: proto::MultiRequest,
    /// Per region action, per action: the operation's position in the batch.
    ops: Vec<Vec<usize>>,
    regions: Vec<RegionLocation>,
}

/// What became of one server's `Multi`.
struct Outcome {
    /// Results by operation.
    done: Vec<(usize, Option<RowResult>)>,
    /// Operations to send again, with the error that sent them back.
    retry: Vec<(usize, NativeError, Option<RegionLocation>)>,
}

/// `ops` cut, in order, into chunks of at most `most` operations and about
/// `bytes` (their encoded size; an operation larger than that is a chunk of
/// its own).
fn chunks(ops: &[(Bytes, Op)], most: usize, bytes: usize) -> Vec<std::ops::Range<usize>> {
    use prost::Message;
    let mut out = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (i, (_, op)) in ops.iter().enumerate() {
        let op_size = match op {
            Op::Get(get) => get.encoded_len(),
            Op::Mutate(mutations, _) => mutations.iter().map(Message::encoded_len).sum(),
        };
        if i > start && (i - start == most || size + op_size > bytes) {
            out.push(start..i);
            (start, size) = (i, 0);
        }
        size += op_size;
    }
    if start < ops.len() {
        out.push(start..ops.len());
    }
    out
}

/// `ops` cut into waves to send one after the other, each with a row at
/// most once: a row's first operation in the first wave, its second in
/// the second, and so on, each wave in the order of `ops`. One wave, `ops`
/// itself, when no row repeats.
pub(super) fn waves<T>(ops: Vec<(Bytes, T)>) -> Vec<Vec<(Bytes, T)>> {
    let mut seen: std::collections::HashMap<&Bytes, usize> = std::collections::HashMap::with_capacity(ops.len());
    let mut wave_of = Vec::with_capacity(ops.len());
    for (row, _) in &ops {
        let times = seen.entry(row).or_insert(0);
        wave_of.push(*times);
        *times += 1;
    }
    let count = seen.into_values().max().unwrap_or(0);
    if count <= 1 {
        return vec![ops];
    }
    let mut out: Vec<Vec<(Bytes, T)>> = (0..count).map(|_| Vec::new()).collect();
    for (op, wave) in ops.into_iter().zip(wave_of) {
        out[wave].push(op);
    }
    out
}

/// Why one operation of a batch did not succeed, and whether it may have
/// been applied all the same (a request carrying it got no answer).
#[derive(Debug)]
pub(super) struct OpFailure {
    pub(super) error: StoreError,
    pub(super) maybe_applied: bool,
}

impl OpFailure {
    /// The operation's outcome as a row of a batch write.
    pub(super) fn into_outcome(self) -> crate::store::RowOutcome {
        if self.maybe_applied {
            crate::store::RowOutcome::Unknown(self.error)
        } else {
            crate::store::RowOutcome::Refused(self.error)
        }
    }
}

/// What became of each operation of a batch, in order.
pub(super) type OpResults = Vec<Result<Option<RowResult>, OpFailure>>;

impl NativeStore {
    /// Runs a batch: results in the order of `ops` (`None` for mutations and
    /// rows not found), or the first failed operation's error.
    pub(super) async fn multi(
        &self,
        table: &str,
        ops: &[(Bytes, Op)],
        operation: &'static str,
    ) -> Result<Vec<Option<RowResult>>, StoreError> {
        self.multi_each(table, ops, operation)
            .await?
            .into_iter()
            .map(|r| r.map_err(|failure| failure.error))
            .collect()
    }

    /// Runs a batch, each operation on its own: what became of each, in the
    /// order of `ops`. `Err` only for the whole batch (the table does not
    /// exist).
    pub(super) async fn multi_each(
        &self,
        table: &str,
        ops: &[(Bytes, Op)],
        operation: &'static str,
    ) -> Result<OpResults, StoreError> {
        let chunks = chunks(ops, MULTI_CHUNK, MULTI_CHUNK_BYTES);
        if let [only] = &chunks[..] {
            return self.multi_chunk(table, &ops[only.clone()], operation).await;
        }
        // A large batch goes as several Multi calls at once, so that the
        // region server applies them on several handlers.
        let chunks = chunks
            .into_iter()
            .map(|chunk| self.multi_chunk(table, &ops[chunk], operation));
        let results = futures_util::future::try_join_all(chunks).await?;
        Ok(results.into_iter().flatten().collect())
    }

    async fn multi_chunk(
        &self,
        table: &str,
        ops: &[(Bytes, Op)],
        operation: &'static str,
    ) -> Result<OpResults, StoreError> {
        let mut results: Vec<Option<Result<Option<RowResult>, OpFailure>>> = (0..ops.len()).map(|_| None).collect();
        // Whether a request carrying the operation went unanswered.
        let mut maybe_applied = vec![false; ops.len()];
        let fail = |error: StoreError, maybe_applied: bool| Some(Err(OpFailure { error, maybe_applied }));
        let mut pending: Vec<usize> = (0..ops.len()).collect();
        let mut attempts = self.attempts(crate::store::call_timeout(self.config().call_timeout));
        while !pending.is_empty() {
            // Group by server, then region.
            let mut servers: BTreeMap<String, ServerBatch> = BTreeMap::new();
            for &i in &pending {
                let (row, op) = &ops[i];
                let region = match self.locate_within(table, Target::Row(row), &mut attempts).await {
                    Ok(region) => region,
                    Err((e, endpoint)) => match e.into_store(table, Some(row), operation, &endpoint) {
                        e @ StoreError::TableNotFound { .. } => return Err(e),
                        e => {
                            results[i] = fail(e, maybe_applied[i]);
                            continue;
                        }
                    },
                };
                let batch = servers.entry(region.server.clone()).or_default();
                let action =
                    |index: u32, mutation: Option<proto::MutationProto>, get: Option<proto::Get>| proto::Action {
                        index: Some(index),
                        mutation,
                        get,
                    };
                let shared = match op {
                    Op::Mutate(several, _) if several.len() > 1 => None,
                    _ => batch
                        .request
                        .region_action
                        .iter()
                        .position(|a| a.region.value == region.name && a.atomic != Some(true)),
                };
                let at = match shared {
                    Some(at) => at,
                    None => {
                        batch.request.region_action.push(proto::RegionAction {
                            region: region.specifier(),
                            atomic: matches!(op, Op::Mutate(several, _) if several.len() > 1).then_some(true),
                            action: Vec::new(),
                            condition: None,
                        });
                        batch.ops.push(Vec::new());
                        batch.regions.push(region.clone());
                        batch.ops.len() - 1
                    }
                };
                let actions = &mut batch.request.region_action[at].action;
                match op {
                    Op::Get(get) => {
                        actions.push(action(actions.len() as u32, None, Some(get.clone())));
                        batch.ops[at].push(i);
                    }
                    Op::Mutate(mutations, _) => {
                        for m in mutations {
                            actions.push(action(actions.len() as u32, Some(m.clone()), None));
                            batch.ops[at].push(i);
                        }
                    }
                }
            }
            // One Multi per server, all at once.
            let mut calls = tokio::task::JoinSet::new();
            // The operations of each call's task, to answer for them if it
            // fails.
            let mut in_flight: std::collections::HashMap<tokio::task::Id, Vec<usize>> =
                std::collections::HashMap::new();
            for (server, batch) in servers {
                let left = match attempts.remaining(&server, "Multi") {
                    Ok(left) => left,
                    Err(e) => {
                        for &i in batch.ops.iter().flatten() {
                            let error = clone_error(&e).into_store(table, Some(&ops[i].0), operation, &server);
                            results[i] = fail(error, maybe_applied[i]);
                        }
                        continue;
                    }
                };
                let carried: Vec<usize> = batch.ops.iter().flatten().copied().collect();
                let store = self.clone();
                let task = calls.spawn(async move {
                    let reply = store
                        .call_server::<proto::MultiResponse>(&server, "Multi", &batch.request, left)
                        .await;
                    (server, batch, reply)
                });
                in_flight.insert(task.id(), carried);
            }
            pending.clear();
            // The pause before the next round: the first retry's that
            // pauses (a round whose retries all go at once does not).
            let mut next_round: Option<(NativeError, Retry, String)> = None;
            let mut noted = std::collections::HashSet::new();
            while let Some(joined) = calls.join_next_with_id().await {
                let (server, batch, reply) = match joined {
                    Ok((_, joined)) => joined,
                    Err(e) => {
                        // A task that panicked or was cancelled: what its
                        // call carried may or may not have been applied.
                        for &i in in_flight.get(&e.id()).into_iter().flatten() {
                            let error = StoreError::Interrupted {
                                table: table.to_string(),
                                operation,
                                message: format!("the task that sent the batch's Multi call failed: {e}"),
                            };
                            results[i] = fail(error, true);
                        }
                        continue;
                    }
                };
                let outcome = match reply {
                    Ok(reply) => match read_multi(&batch, &reply.message, reply.cells) {
                        Ok(outcome) => outcome,
                        Err((_, e)) => {
                            // An answer that cannot be read: the server did
                            // what it did with every operation it carried.
                            for &i in batch.ops.iter().flatten() {
                                let error = clone_error(&e).into_store(table, Some(&ops[i].0), operation, &server);
                                results[i] = fail(error, true);
                            }
                            continue;
                        }
                    },
                    Err(e) => Outcome {
                        done: Vec::new(),
                        retry: batch
                            .ops
                            .iter()
                            .zip(&batch.regions)
                            .flat_map(|(ops, region)| ops.iter().map(move |&i| (i, region.clone())))
                            .map(|(i, region)| (i, clone_error(&e), Some(region)))
                            .collect(),
                    },
                };
                for (i, row) in outcome.done {
                    results[i] = Some(Ok(row));
                }
                for (i, error, region) in outcome.retry {
                    maybe_applied[i] |= super::retry::maybe_applied(&error);
                    let idempotence = match &ops[i].1 {
                        Op::Get(_) => Idempotence::Safe,
                        Op::Mutate(_, idempotence) => *idempotence,
                    };
                    let retry = retry_kind(&error, idempotence);
                    if let Retry::No = retry {
                        results[i] = fail(
                            error.into_store(table, Some(&ops[i].0), operation, &server),
                            maybe_applied[i],
                        );
                        continue;
                    }
                    // Once per region: a dead server's batch fails every
                    // row of it, and forgetting the server once will do.
                    if let Some(region) = region.filter(|r| noted.insert(r.name.clone())) {
                        self.note_failure(&retry, &region);
                    }
                    tracing::debug!(table, operation, server = %server, error = %error, "hmap native: batch action retried");
                    if !pending.contains(&i) {
                        pending.push(i);
                    }
                    let first_to_pause = next_round
                        .as_ref()
                        .is_none_or(|(_, r, _)| !r.pauses() && retry.pauses());
                    if first_to_pause {
                        next_round = Some((error, retry, server.clone()));
                    }
                }
            }
            pending.sort_unstable();
            if let Some((error, retry, server)) = next_round {
                let row = pending.first().map(|&i| ops[i].0.clone());
                if let Some(row) = &row {
                    attempts.waiting_for(|| {
                        format!(
                            "the region of row {} in table `{table}` to be served (last on {server})",
                            crate::store::show_row(row)
                        )
                    });
                }
                if let Err(e) = attempts.back_off(error, &retry, &server, "Multi").await {
                    for i in pending.drain(..) {
                        let error = clone_error(&e).into_store(table, Some(&ops[i].0), operation, &server);
                        results[i] = fail(error, maybe_applied[i]);
                    }
                }
            }
        }
        Ok(results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(OpFailure {
                        error: StoreError::Protocol {
                            endpoint: String::new(),
                            table: table.to_string(),
                            operation,
                            message: "an operation of the batch got no answer".into(),
                        },
                        maybe_applied: true,
                    })
                })
            })
            .collect())
    }
}

/// A copy of an error for each operation it sends back, of the same kind
/// (the errors that do are plain data, or a socket error kept by its kind
/// and text).
fn clone_error(e: &NativeError) -> NativeError {
    match e {
        NativeError::Remote(r) => NativeError::Remote(r.clone()),
        NativeError::Closed { endpoint, reason, sent } => NativeError::Closed {
            endpoint: endpoint.clone(),
            reason: reason.clone(),
            sent: *sent,
        },
        NativeError::Connect {
            endpoint,
            cause: source,
        } => NativeError::Connect {
            endpoint: endpoint.clone(),
            cause: std::io::Error::new(source.kind(), source.to_string()),
        },
        NativeError::Timeout {
            endpoint,
            method,
            elapsed,
            waiting_for,
        } => NativeError::Timeout {
            endpoint: endpoint.clone(),
            method,
            elapsed: *elapsed,
            waiting_for: waiting_for.clone(),
        },
        NativeError::Unavailable {
            endpoint,
            method,
            elapsed,
            tries,
            waiting_for,
            last,
        } => NativeError::Unavailable {
            endpoint: endpoint.clone(),
            method,
            elapsed: *elapsed,
            tries: *tries,
            waiting_for: waiting_for.clone(),
            last: last.clone(),
        },
        other => NativeError::InvalidReply {
            reason: other.to_string(),
        },
    }
}

/// Reads a `Multi` reply: the rows read, the operations to retry, or the
/// error of an operation that cannot be retried (with its position).
fn read_multi(
    batch: &ServerBatch,
    reply: &proto::MultiResponse,
    cells: Vec<WireCell>,
) -> Result<Outcome, (usize, NativeError)> {
    let mut cells = cells.into_iter();
    let mut outcome = Outcome {
        done: Vec::new(),
        retry: Vec::new(),
    };
    let first = |ops: &[usize]| ops.first().copied().unwrap_or(0);
    if reply.region_action_result.len() != batch.ops.len() {
        return Err((
            first(batch.ops.first().map_or(&[][..], |o| &o[..])),
            NativeError::InvalidReply {
                reason: format!(
                    "{} region actions sent, {} answered",
                    batch.ops.len(),
                    reply.region_action_result.len()
                ),
            },
        ));
    }
    for ((result, ops), region) in reply.region_action_result.iter().zip(&batch.ops).zip(&batch.regions) {
        if let Some(e) = &result.exception {
            // The whole region action failed (e.g. the region moved).
            let mut seen = Vec::new();
            for &i in ops {
                if !seen.contains(&i) {
                    seen.push(i);
                    outcome
                        .retry
                        .push((i, NativeError::Remote(RemoteError::from_pair(e)), Some(region.clone())));
                }
            }
            continue;
        }
        for r in &result.result_or_exception {
            let action = r.index.unwrap_or(0) as usize;
            let Some(&i) = ops.get(action) else {
                return Err((
                    first(ops),
                    NativeError::InvalidReply {
                        reason: format!("a result for action {action} of {}", ops.len()),
                    },
                ));
            };
            if let Some(e) = &r.exception {
                if !outcome.retry.iter().any(|(j, _, _)| *j == i) {
                    outcome
                        .retry
                        .push((i, NativeError::Remote(RemoteError::from_pair(e)), Some(region.clone())));
                }
                continue;
            }
            let row = match &r.result {
                Some(result) => {
                    let n = convert::associated_cells(result).map_err(|e| (i, e))?;
                    convert::row_result(result, n, &mut cells).map_err(|e| (i, e))?
                }
                None => None,
            };
            outcome.done.push((i, row));
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(value: usize) -> (Bytes, Op) {
        let row = crate::store::RowMutation::new("r").put("f", "q", vec![0u8; value]);
        let mutations = convert::mutations(&row).expect("a put converts");
        (row.row, Op::Mutate(mutations, Idempotence::Safe))
    }

    #[test]
    fn a_repeated_row_waits_for_the_wave_before() {
        let op = |row: &'static str, value: usize| (Bytes::from(row), put(value).1);
        let rows = |waves: &[Vec<(Bytes, Op)>]| -> Vec<Vec<Bytes>> {
            waves
                .iter()
                .map(|w| w.iter().map(|(r, _)| r.clone()).collect())
                .collect()
        };
        let distinct = waves(vec![op("a", 1), op("b", 1), op("c", 1)]);
        assert_eq!(rows(&distinct), [["a", "b", "c"]]);
        let repeated = waves(vec![
            op("a", 1),
            op("b", 1),
            op("a", 2),
            op("c", 1),
            op("a", 3),
            op("b", 2),
        ]);
        assert_eq!(rows(&repeated), [vec!["a", "b", "c"], vec!["a", "b"], vec!["a"]]);
        // Each wave keeps the order of the row's operations.
        let sizes: Vec<usize> = repeated
            .iter()
            .flat_map(|w| w.iter().filter(|(r, _)| r == "a"))
            .map(|(_, op)| match op {
                Op::Mutate(m, _) => m[0].column_value[0].qualifier_value[0]
                    .value
                    .as_ref()
                    .map_or(0, |v| v.len()),
                Op::Get(_) => 0,
            })
            .collect();
        assert_eq!(sizes, [1, 2, 3]);
        assert!(waves::<Op>(Vec::new()).iter().all(Vec::is_empty));
    }

    #[test]
    fn chunks_keep_to_the_count_and_the_bytes() {
        let small: Vec<_> = (0..7).map(|_| put(10)).collect();
        assert_eq!(chunks(&small, 3, usize::MAX), [0..3, 3..6, 6..7]);
        assert_eq!(
            chunks(&small, 250, usize::MAX),
            vec![std::ops::Range { start: 0, end: 7 }]
        );
        assert_eq!(chunks(&[], 250, usize::MAX), []);
        // 1,000-byte values: three fit in 3,500 bytes, not four; a put
        // larger than the budget goes alone.
        let big = vec![put(1000), put(1000), put(1000), put(1000), put(5000), put(1000)];
        assert_eq!(chunks(&big, 250, 3500), [0..3, 3..4, 4..5, 5..6]);
    }
}
