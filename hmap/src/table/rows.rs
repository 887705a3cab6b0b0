//! The rows of a query, decoded as they are fetched; salted buckets merged
//! in key order.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::StreamExt;

use super::{HTable, Table};
use crate::error::{Error, Result};
use crate::store::{RowResult, RowStream, Scan, Store};

/// The rows of a query, decoded as they are fetched: a [`Stream`] of
/// `Result<T>` (use it with [`futures_util::StreamExt`] or
/// `tokio_stream::StreamExt`), or read with [`next`](Self::next) and
/// [`into_vec`](Self::into_vec). On a server, each bucket's next batch is
/// fetched while the caller works through the current one.
///
/// A scan that meets an error (a bucket's scanner failing, on a salted
/// table) returns it and ends: rows after it would be a partial merge.
pub struct Rows<'a, T> {
    rows: Pin<Box<dyn Stream<Item = Result<T>> + Send + 'a>>,
    scanners: usize,
}

impl<T> fmt::Debug for Rows<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rows")
            .field("scanners", &self.scanners)
            .finish_non_exhaustive()
    }
}

impl<'a, T: HTable + 'a> Rows<'a, T> {
    pub(super) fn new(merge: Merge<'a>) -> Self {
        let scanners = merge.scanners.len();
        let rows = futures_util::stream::unfold(merge, |mut merge| async move {
            let row = merge.next_raw().await?;
            Some((row.and_then(|row| Table::<T, &dyn Store>::decode(&row)), merge))
        });
        Rows {
            rows: Box::pin(rows.fuse()),
            scanners,
        }
    }
}

impl<T> Rows<'_, T> {
    /// The next row; `None` after the last.
    pub async fn next(&mut self) -> Option<Result<T>> {
        self.rows.next().await
    }

    /// Every remaining row, or the first error.
    pub async fn into_vec(mut self) -> Result<Vec<T>> {
        let mut rows = Vec::new();
        while let Some(row) = self.rows.next().await {
            rows.push(row?);
        }
        Ok(rows)
    }
}

impl<T> Stream for Rows<'_, T> {
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<T>>> {
        self.rows.as_mut().poll_next(cx)
    }
}

/// The state of a scan: its bucket scanners, each one's next row, and the
/// offset and limit still to apply.
pub(super) struct Merge<'a> {
    /// The scans, before their scanners are open.
    pub(super) scans: Vec<Scan>,
    pub(super) scanners: Vec<RowStream<'a>>,
    /// The next row of each bucket's scanner, when merging buckets.
    pub(super) heads: Vec<Option<RowResult>>,
    /// An error met while refilling a head, returned on the next call.
    pub(super) pending_error: Option<Error>,
    /// An error was returned: the scan is over.
    pub(super) failed: bool,
    pub(super) reversed: bool,
    /// Bytes of salt at the start of each key, ignored when merging buckets.
    pub(super) skip_salt: usize,
    pub(super) offset: usize,
    pub(super) remaining: Option<usize>,
}

impl Merge<'_> {
    /// The next stored row, not yet decoded.
    pub(super) async fn next_raw(&mut self) -> Option<Result<RowResult>> {
        loop {
            if self.remaining == Some(0) {
                return None;
            }
            let row = self.next_merged().await?;
            if self.offset > 0 {
                self.offset -= 1;
                if row.is_ok() {
                    continue;
                }
            }
            if let Some(r) = &mut self.remaining {
                *r -= 1;
            }
            return Some(row);
        }
    }

    /// The next row across the bucket scanners, in key order ignoring the
    /// salt; after an error, none.
    async fn next_merged(&mut self) -> Option<Result<RowResult>> {
        if self.failed {
            return None;
        }
        let next = self.merge_step().await;
        if matches!(next, Some(Err(_))) {
            // Every bucket is part of the answer: without the failed one,
            // the rest would be a partial merge. Drop the scanners (closing
            // them on a server) and end.
            self.failed = true;
            self.scanners.clear();
            self.heads.clear();
        }
        next
    }

    async fn merge_step(&mut self) -> Option<Result<RowResult>> {
        if let [only] = self.scanners.as_mut_slice() {
            return only.next().await.map(|r| r.map_err(Error::from));
        }
        if let Some(e) = self.pending_error.take() {
            return Some(Err(e));
        }
        if self.heads.is_empty() {
            for scanner in &mut self.scanners {
                match scanner.next().await {
                    Some(Err(e)) => return Some(Err(e.into())),
                    Some(Ok(row)) => self.heads.push(Some(row)),
                    None => self.heads.push(None),
                }
            }
        }
        let skip = self.skip_salt;
        let candidates = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.as_ref().map(|r| (i, r.row.get(skip..).unwrap_or_default())));
        let best = if self.reversed {
            candidates.max_by(|a, b| a.1.cmp(b.1))
        } else {
            candidates.min_by(|a, b| a.1.cmp(b.1))
        }?
        .0;
        let row = self.heads.get_mut(best)?.take()?;
        let scanner = self.scanners.get_mut(best)?;
        match scanner.next().await {
            Some(Err(e)) => self.pending_error = Some(e.into()),
            head => {
                if let Some(slot) = self.heads.get_mut(best) {
                    *slot = head.and_then(std::result::Result::ok);
                }
            }
        }
        Some(Ok(row))
    }
}
