//! The rows of a query, decoded as they are fetched; salted buckets merged
//! in key order.

use std::fmt;
use std::marker::PhantomData;

use super::{HTable, Table};
use crate::error::{Error, Result};
use crate::store::{RowResult, RowScanner, Store};

/// The rows of a query, decoded as they are fetched.
///
/// A scan that meets an error (a bucket's scanner failing, on a salted
/// table) returns it and ends: rows after it would be a partial merge.
pub struct Rows<'a, T> {
    pub(super) scanners: Vec<RowScanner<'a>>,
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
    pub(super) row: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Rows<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rows")
            .field("scanners", &self.scanners.len())
            .field("reversed", &self.reversed)
            .field("remaining", &self.remaining)
            .finish()
    }
}

impl<T: HTable> Rows<'_, T> {
    /// The next stored row, not yet decoded.
    pub(super) fn next_raw(&mut self) -> Option<Result<RowResult>> {
        loop {
            if self.remaining == Some(0) {
                return None;
            }
            let row = self.next_merged()?;
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
    fn next_merged(&mut self) -> Option<Result<RowResult>> {
        if self.failed {
            return None;
        }
        let next = self.merge_step();
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

    fn merge_step(&mut self) -> Option<Result<RowResult>> {
        if self.scanners.len() == 1 {
            return self.scanners[0].next().map(|r| r.map_err(Error::from));
        }
        if let Some(e) = self.pending_error.take() {
            return Some(Err(e));
        }
        if self.heads.is_empty() {
            for scanner in &mut self.scanners {
                match scanner.next() {
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
        let row = self.heads[best].take()?;
        match self.scanners[best].next() {
            Some(Err(e)) => self.pending_error = Some(e.into()),
            head => self.heads[best] = head.and_then(std::result::Result::ok),
        }
        Some(Ok(row))
    }
}

impl<T: HTable> Iterator for Rows<'_, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        self.next_raw()
            .map(|r| r.and_then(|row| Table::<T, &dyn Store>::decode(&row)))
    }
}
