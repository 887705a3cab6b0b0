//! What became of each row of a batch write: [`RowOutcome`] and
//! [`BatchOutcome`], the answers of [`Store::mutate_each`](super::Store::mutate_each)
//! and of the typed calls built on it.

use std::ops::Deref;

use super::StoreError;

/// What became of one row of a batch write.
///
/// The three answers HBase's Java client can give a row of a batch
/// (`Table.batch`'s results, `RetriesExhaustedWithDetailsException`, a
/// `BufferedMutator`'s listener): written, not written and why, or not
/// known.
#[derive(Debug)]
#[non_exhaustive]
pub enum RowOutcome<E = StoreError> {
    /// The row's changes were applied, all of them (a row is atomic).
    Applied,
    /// The row was not written, and the error says why: a family the table
    /// lacks, a cell too large, a version conflict, a region the deadline
    /// did not let it reach. Nothing of the row was applied.
    Refused(E),
    /// The row was sent, and the call failed before its answer came (a
    /// timeout, a lost connection): it may or may not have been applied.
    /// Read the row to know. Writing a put again is safe (the same cells
    /// at the same timestamps are one version); an increment or append is
    /// not.
    Unknown(E),
}

impl<E> RowOutcome<E> {
    /// Whether the row was applied.
    pub fn is_applied(&self) -> bool {
        matches!(self, RowOutcome::Applied)
    }

    /// Why the row was not applied, or may not have been; `None` if it was.
    pub fn error(&self) -> Option<&E> {
        match self {
            RowOutcome::Applied => None,
            RowOutcome::Refused(e) | RowOutcome::Unknown(e) => Some(e),
        }
    }

    /// `Ok` if the row was applied, else its error.
    pub fn into_result(self) -> Result<(), E> {
        match self {
            RowOutcome::Applied => Ok(()),
            RowOutcome::Refused(e) | RowOutcome::Unknown(e) => Err(e),
        }
    }

    /// The same outcome with its error mapped.
    pub fn map_err<F>(self, f: impl FnOnce(E) -> F) -> RowOutcome<F> {
        match self {
            RowOutcome::Applied => RowOutcome::Applied,
            RowOutcome::Refused(e) => RowOutcome::Refused(f(e)),
            RowOutcome::Unknown(e) => RowOutcome::Unknown(f(e)),
        }
    }
}

/// What became of each row of a batch write, in the order the rows were
/// given: `outcome[i]` is the `i`-th row's [`RowOutcome`] (the outcome
/// dereferences to a slice of them).
///
/// ```
/// use hmap::schema::{FamilySchema, TableSchema};
/// use hmap::store::{MemoryStore, RowMutation, RowOutcome, Store, StoreError};
///
/// # #[tokio::main] async fn main() -> Result<(), StoreError> {
/// let store = MemoryStore::new();
/// store.create_table(&TableSchema::new("t").family(FamilySchema::new("f"))).await?;
/// let outcome = store
///     .mutate_each(
///         "t",
///         &[
///             RowMutation::new("a").put("f", "q", "1"),
///             RowMutation::new("b").put("nope", "q", "2"), // no such family
///             RowMutation::new("c").put("f", "q", "3"),
///         ],
///     )
///     .await?;
/// assert!(outcome[0].is_applied() && outcome[2].is_applied());
/// assert!(matches!(outcome[1], RowOutcome::Refused(StoreError::NoSuchFamily { .. })));
/// assert_eq!(outcome.failed().map(|(i, _)| i).collect::<Vec<_>>(), [1]);
/// // The all-or-first-error form:
/// assert!(matches!(outcome.into_result(), Err(StoreError::NoSuchFamily { .. })));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct BatchOutcome<E = StoreError> {
    rows: Vec<RowOutcome<E>>,
}

impl<E> BatchOutcome<E> {
    /// The outcome of rows whose outcomes these are, in order.
    pub fn new(rows: Vec<RowOutcome<E>>) -> Self {
        BatchOutcome { rows }
    }

    /// Every row applied: the outcome of a batch of `rows` rows that all were.
    pub fn applied(rows: usize) -> Self {
        BatchOutcome::new((0..rows).map(|_| RowOutcome::Applied).collect())
    }

    /// Whether every row was applied.
    pub fn all_applied(&self) -> bool {
        self.rows.iter().all(RowOutcome::is_applied)
    }

    /// The rows not applied (refused or unknown), with their positions.
    pub fn failed(&self) -> impl Iterator<Item = (usize, &RowOutcome<E>)> {
        self.rows.iter().enumerate().filter(|(_, r)| !r.is_applied())
    }

    /// `Ok` if every row was applied, else the first failed row's error:
    /// the all-or-first-error form of the batch.
    pub fn into_result(self) -> Result<(), E> {
        self.rows.into_iter().try_for_each(RowOutcome::into_result)
    }

    /// The outcomes, in the order of the rows.
    pub fn into_vec(self) -> Vec<RowOutcome<E>> {
        self.rows
    }

    /// The same outcomes with their errors mapped.
    pub fn map_err<F>(self, mut f: impl FnMut(E) -> F) -> BatchOutcome<F> {
        BatchOutcome::new(self.rows.into_iter().map(|r| r.map_err(&mut f)).collect())
    }
}

impl<E> Deref for BatchOutcome<E> {
    type Target = [RowOutcome<E>];

    fn deref(&self) -> &[RowOutcome<E>] {
        &self.rows
    }
}

impl<E> IntoIterator for BatchOutcome<E> {
    type Item = RowOutcome<E>;
    type IntoIter = std::vec::IntoIter<RowOutcome<E>>;

    fn into_iter(self) -> Self::IntoIter {
        self.rows.into_iter()
    }
}

impl<E> FromIterator<RowOutcome<E>> for BatchOutcome<E> {
    fn from_iter<I: IntoIterator<Item = RowOutcome<E>>>(iter: I) -> Self {
        BatchOutcome::new(iter.into_iter().collect())
    }
}

impl StoreError {
    /// A copy of the error, for each row of a request that failed with it
    /// (a connection error's cause is in its message already, and is not
    /// copied).
    pub(crate) fn duplicate(&self) -> StoreError {
        use StoreError::*;
        match self {
            TableNotFound { table } => TableNotFound { table: table.clone() },
            TableExists { table } => TableExists { table: table.clone() },
            NoSuchFamily { table, family } => NoSuchFamily {
                table: table.clone(),
                family: family.clone(),
            },
            InvalidSchema { table, reason } => InvalidSchema {
                table: table.clone(),
                reason: reason.clone(),
            },
            InvalidRow { table, row, reason } => InvalidRow {
                table: table.clone(),
                row: row.clone(),
                reason: reason.clone(),
            },
            CellTooLarge {
                table,
                row,
                column,
                size,
                limit,
            } => CellTooLarge {
                table: table.clone(),
                row: row.clone(),
                column: column.clone(),
                size: *size,
                limit: *limit,
            },
            NegativeTimestamp {
                table,
                row,
                column,
                timestamp,
            } => NegativeTimestamp {
                table: table.clone(),
                row: row.clone(),
                column: column.clone(),
                timestamp: *timestamp,
            },
            NotACounter {
                table,
                row,
                column,
                len,
            } => NotACounter {
                table: table.clone(),
                row: row.clone(),
                column: column.clone(),
                len: *len,
            },
            InvalidRequest { table, reason } => InvalidRequest {
                table: table.clone(),
                reason: reason.clone(),
            },
            Unsupported {
                backend,
                feature,
                table,
            } => Unsupported {
                backend,
                feature,
                table: table.clone(),
            },
            Connection { endpoint, message, .. } => Connection {
                endpoint: endpoint.clone(),
                message: message.clone(),
                cause: None,
            },
            Unavailable {
                table,
                operation,
                elapsed,
                endpoint,
                message,
            } => Unavailable {
                table: table.clone(),
                operation,
                elapsed: *elapsed,
                endpoint: endpoint.clone(),
                message: message.clone(),
            },
            Timeout {
                table,
                operation,
                elapsed,
                detail,
            } => Timeout {
                table: table.clone(),
                operation,
                elapsed: *elapsed,
                detail: detail.clone(),
            },
            Server {
                service,
                table,
                operation,
                message,
            } => Server {
                service,
                table: table.clone(),
                operation,
                message: message.clone(),
            },
            Protocol {
                endpoint,
                table,
                operation,
                message,
            } => Protocol {
                endpoint: endpoint.clone(),
                table: table.clone(),
                operation,
                message: message.clone(),
            },
            Interrupted {
                table,
                operation,
                message,
            } => Interrupted {
                table: table.clone(),
                operation,
                message: message.clone(),
            },
            BlockingInRuntime => BlockingInRuntime,
        }
    }
}

/// The outcome of a batch write whose rows were checked one by one
/// (`checked`: each row's verdict) and whose valid rows were then sent
/// together by `send`, which answers for all of them at once: the refused
/// rows refused, the others applied, or, when `send` fails, refused if its
/// error says nothing was written and unknown if not. For a backend whose
/// requests do not answer row by row.
#[cfg(any(feature = "thrift", feature = "bigtable"))]
pub(crate) async fn send_checked<'r, F, Fut>(
    rows: &'r [super::RowMutation],
    checked: Vec<Result<(), StoreError>>,
    send: F,
) -> BatchOutcome
where
    F: FnOnce(std::borrow::Cow<'r, [super::RowMutation]>) -> Fut,
    Fut: std::future::Future<Output = Result<(), StoreError>>,
{
    // The rows themselves when every one is valid (no copy); else the
    // valid ones.
    let all_valid = checked.iter().all(Result::is_ok);
    let mut outcome: Vec<Option<RowOutcome>> = Vec::with_capacity(rows.len());
    let mut valid = Vec::new();
    for (row, checked) in rows.iter().zip(checked) {
        match checked {
            Ok(()) => {
                if !all_valid {
                    valid.push(row.clone());
                }
                outcome.push(None);
            }
            Err(e) => outcome.push(Some(RowOutcome::Refused(e))),
        }
    }
    let valid = if all_valid {
        std::borrow::Cow::Borrowed(rows)
    } else {
        std::borrow::Cow::Owned(valid)
    };
    let several = valid.len() > 1;
    let sent = if valid.is_empty() { Ok(()) } else { send(valid).await };
    outcome
        .into_iter()
        .map(|o| {
            o.unwrap_or_else(|| match &sent {
                Ok(()) => RowOutcome::Applied,
                // A server's refusal of one row of several (a family
                // deleted since the check) leaves the others unknown.
                Err(e) if several && !refused_before_sending(e) => RowOutcome::Unknown(e.duplicate()),
                Err(e) => failed(e.duplicate()),
            })
        })
        .collect()
}

/// Whether the error is one a backend gives before it sends anything (a
/// request it cannot express, a row it refuses, a table that is not there).
#[cfg(any(feature = "thrift", feature = "bigtable"))]
fn refused_before_sending(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::InvalidRequest { .. }
            | StoreError::Unsupported { .. }
            | StoreError::InvalidRow { .. }
            | StoreError::CellTooLarge { .. }
            | StoreError::NegativeTimestamp { .. }
            | StoreError::TableNotFound { .. }
            | StoreError::BlockingInRuntime
    )
}

/// A row's outcome after a write of it alone failed with `error`: unknown
/// if the write may have been applied ([`StoreError::maybe_applied`]),
/// else refused.
pub(crate) fn failed(error: StoreError) -> RowOutcome {
    if error.maybe_applied() {
        RowOutcome::Unknown(error)
    } else {
        RowOutcome::Refused(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failed_row_is_the_batch_error() {
        let outcome: BatchOutcome<&str> = BatchOutcome::new(vec![
            RowOutcome::Applied,
            RowOutcome::Unknown("lost"),
            RowOutcome::Refused("family"),
        ]);
        assert!(!outcome.all_applied());
        assert_eq!(outcome.failed().map(|(i, _)| i).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(outcome[2].error(), Some(&"family"));
        assert_eq!(outcome.into_result(), Err("lost"));
        assert!(BatchOutcome::<&str>::applied(3).all_applied());
        assert_eq!(BatchOutcome::<&str>::applied(0).into_result(), Ok(()));
    }

    #[test]
    fn only_refusals_before_writing_say_nothing_was_written() {
        let family = StoreError::NoSuchFamily {
            table: "t".into(),
            family: "x".into(),
        };
        assert!(matches!(failed(family), RowOutcome::Refused(_)));
        let timeout = StoreError::Timeout {
            table: "t".into(),
            operation: "mutate",
            elapsed: std::time::Duration::from_secs(1),
            detail: String::new(),
        };
        assert!(matches!(failed(timeout), RowOutcome::Unknown(_)));
    }
}
