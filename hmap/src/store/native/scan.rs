//! Scans: a scanner that reads a scan's rows region by region, a batch per
//! round trip, resumes after its last row when its region moves or its
//! server-side scanner is lost, and closes what it left open.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;

use super::client::NativeStore;
use super::connection::{CallReply, Connection, Service};
use super::convert;
use super::error::NativeError;
use super::locate::{RegionLocation, Target};
use super::proto;
use super::retry::{Attempts, Idempotence, Retry, retry_kind};
use crate::store::{RowResult, Scan, StoreError};

/// One scanner open on a region server, counted while it lives.
#[derive(Debug)]
struct Lease(Arc<AtomicUsize>);

impl Lease {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Lease(count.clone())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl NativeStore {
    /// How many scanners this store holds open on region servers: opened
    /// by a scan and not yet closed (by the server at a region's end, or by
    /// the scanner when it stops early or is dropped).
    pub fn open_scanners(&self) -> usize {
        self.inner.open_scanners.load(Ordering::SeqCst)
    }

    /// Reads the rows of a scan, region by region, all of them (up to the
    /// scan's limit).
    #[cfg(test)]
    pub(super) async fn scan_unchecked(&self, table: &str, scan: &Scan) -> Result<Vec<RowResult>, StoreError> {
        let mut scanner = self.scanner(table, scan);
        let mut rows = Vec::new();
        while let Some(batch) = scanner.next_batch().await? {
            rows.extend(batch);
        }
        Ok(rows)
    }

    /// A scanner over the rows of a scan: it fetches `batch_size` rows per
    /// round trip, region by region, and closes its server-side scanner when
    /// it stops early or is dropped.
    ///
    /// It keeps the call timeout of the scope it is made in
    /// ([`CallOptions`](crate::store::CallOptions)) for every later call.
    pub(super) fn scanner(&self, table: &str, scan: &Scan) -> NativeScanner {
        let timeout = crate::store::call_timeout(self.inner.config.call_timeout);
        NativeScanner {
            store: self.clone(),
            options: crate::store::CallOptions::current()
                .unwrap_or_default()
                .timeout(timeout),
            timeout,
            table: table.to_string(),
            finished: scan.is_empty_range() || scan.limit == Some(0),
            scan: scan.clone(),
            open: None,
            buffer: std::collections::VecDeque::new(),
            returned: 0,
            last_row: None,
            retry: None,
        }
    }
}

/// The rows of a scan, fetched a batch at a time (see
/// `NativeStore::scanner`); [`Store::scan`](crate::store::Store::scan)
/// hands them out as a stream.
#[derive(Debug)]
pub(super) struct NativeScanner {
    store: NativeStore,
    /// The call options of the scope the scanner was made in, its timeout
    /// resolved: each call of the scanner runs with them, wherever it is
    /// polled (outside that scope, in a prefetch task, dropped).
    options: crate::store::CallOptions,
    /// `options`' timeout.
    timeout: Duration,
    table: String,
    /// The part of the range not read yet (its bounds move region by region).
    scan: Scan,
    open: Option<OpenScanner>,
    buffer: std::collections::VecDeque<RowResult>,
    returned: usize,
    /// The last row returned, where a scanner reopened resumes.
    last_row: Option<Bytes>,
    /// The deadline of consecutive failed scanner calls.
    retry: Option<Attempts>,
    finished: bool,
}

/// A scanner open on a region server.
#[derive(Debug)]
struct OpenScanner {
    region: RegionLocation,
    id: Option<u64>,
    /// `next_call_seq` of the next call.
    seq: u64,
    /// The server keeps the scanner open: the region has more rows.
    more: bool,
    /// Counts the scanner while the server keeps it open.
    lease: Option<Lease>,
}

impl NativeScanner {
    /// The rows fetched and not yet returned, fetching more when there are
    /// none; `None` at the end. Never an empty batch.
    pub async fn next_batch(&mut self) -> Result<Option<Vec<RowResult>>, StoreError> {
        // In the options the scanner was made with: the region lookups of
        // `open_region` read their timeout from the scope.
        self.options.clone().scope(self.next_batch_here()).await
    }

    async fn next_batch_here(&mut self) -> Result<Option<Vec<RowResult>>, StoreError> {
        loop {
            let allowed = self.scan.limit.map_or(usize::MAX, |l| l.saturating_sub(self.returned));
            if allowed > 0 && !self.buffer.is_empty() {
                let n = self.buffer.len().min(allowed);
                let batch: Vec<RowResult> = self.buffer.drain(..n).collect();
                self.returned += batch.len();
                self.last_row = batch.last().map(|row| row.row.clone());
                return Ok(Some(batch));
            }
            if self.finished || allowed == 0 {
                self.finished = true;
                self.buffer.clear();
                self.close().await;
                return Ok(None);
            }
            match self.open.take() {
                Some(open) if open.more => self.fetch(open).await?,
                Some(open) => self.advance(&open.region),
                None => self.open_region().await?,
            }
        }
    }

    /// Opens the scanner on its first region now, so that it reads the
    /// region as it is at this moment (and a refused scan fails here).
    pub(super) async fn open(&mut self) -> Result<(), StoreError> {
        if self.finished || self.open.is_some() || !self.buffer.is_empty() {
            return Ok(());
        }
        self.options.clone().scope(self.open_region()).await
    }

    fn remaining(&self) -> Option<usize> {
        self.scan
            .limit
            .map(|l| l.saturating_sub(self.returned + self.buffer.len()))
    }

    fn batch(&self) -> u32 {
        // Sized by bytes: the region server stops at the scan's
        // max_result_size; the rows only bound it.
        let batch = self
            .scan
            .batch_size
            .unwrap_or(crate::store::MAX_SIZED_BATCH_ROWS)
            .clamp(1, u32::MAX as usize);
        self.remaining().map_or(batch, |r| batch.min(r.max(1))) as u32
    }

    fn error(&self, e: NativeError, endpoint: &str) -> StoreError {
        e.into_store(&self.table, None, "scan", endpoint)
    }

    /// Opens a scanner on the region where the unread range begins (ends,
    /// when reversed).
    async fn open_region(&mut self) -> Result<(), StoreError> {
        // A reversed scan starts in the region of the row just below its
        // stop, or in the last region when it has none.
        let below = (self.scan.reversed && !self.scan.stop.is_empty()).then(|| reversed_locate_row(&self.scan.stop));
        let target = match (&below, self.scan.reversed) {
            (Some(row), _) => Target::Row(row),
            (None, true) => Target::Last,
            (None, false) => Target::Row(&self.scan.start),
        };
        let (scan, batch) = (convert::scan(&self.scan), self.batch());
        let limit = self.remaining().map(|l| l.min(u32::MAX as usize) as u32);
        let open = |region: &RegionLocation| proto::ScanRequest {
            region: Some(region.specifier()),
            scan: Some(scan.clone()),
            number_of_rows: Some(batch),
            limit_of_rows: limit,
            ..Default::default()
        };
        let (region, reply) = self
            .store
            .region_call::<_, proto::ScanResponse>(&self.table, target, "Scan", Idempotence::Safe, open)
            .await
            .map_err(|(e, endpoint)| self.error(e, &endpoint))?;
        self.take_rows(region, 0, reply, None)
    }

    /// The next batch of an open scanner.
    async fn fetch(&mut self, open: OpenScanner) -> Result<(), StoreError> {
        let Some(id) = open.id else {
            let missing = NativeError::MissingField {
                message: "scan response",
                field: "scanner id",
            };
            return Err(self.error(missing, &open.region.server));
        };
        let next = proto::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(self.batch()),
            next_call_seq: Some(open.seq),
            ..Default::default()
        };
        let reply = match self
            .store
            .call_server::<proto::ScanResponse>(&open.region.server, "Scan", &next, self.timeout)
            .await
        {
            Ok(reply) => reply,
            Err(e) => return self.resume_after(e, open.region).await,
        };
        self.retry = None;
        self.take_rows(open.region, open.seq + 1, reply, open.lease)
    }

    /// After a scanner call failed: if the region moved, the scanner
    /// expired, or the connection broke, opens a new scanner after the last
    /// row read (a scan is a read: nothing is applied twice), within one
    /// deadline for the consecutive failures; otherwise fails.
    async fn resume_after(&mut self, e: NativeError, region: RegionLocation) -> Result<(), StoreError> {
        // A scanner the server dropped is opened again where it was.
        let scanner_lost = e.remote().is_some_and(|r| r.kind.is_scanner_lost());
        let retry = match retry_kind(&e, Idempotence::Safe) {
            _ if scanner_lost => Retry::Now,
            retry => retry,
        };
        let timeout = self.timeout;
        let attempts = self.retry.get_or_insert_with(|| self.store.attempts(timeout));
        let table = &self.table;
        let waiting_for = || {
            format!(
                "a region of table `{table}` to be served again (last on {})",
                region.server
            )
        };
        let event = ("Scan", "scan resumed");
        if let Err((e, endpoint)) = self
            .store
            .retry_on(e, retry, &region, event, attempts, waiting_for)
            .await
        {
            return Err(self.error(e, &endpoint));
        }
        // Resume past the last row read: the buffered rows stay.
        if let Some(last) = self.buffer.back().map(|r| r.row.clone()).or(self.last_row.clone()) {
            if self.scan.reversed {
                self.scan.stop = last;
            } else {
                let mut after = last.to_vec();
                after.push(0);
                self.scan.start = after.into();
            }
        }
        self.open = None;
        Ok(())
    }

    fn take_rows(
        &mut self,
        region: RegionLocation,
        seq: u64,
        reply: CallReply<proto::ScanResponse>,
        lease: Option<Lease>,
    ) -> Result<(), StoreError> {
        let rows = convert::scan_rows(&reply).map_err(|e| self.error(e, &region.server))?;
        self.buffer.extend(rows.into_iter().filter_map(rows_from_cells));
        let message = &reply.message;
        let more = message.more_results_in_region.unwrap_or(true) && message.more_results.unwrap_or(true);
        let more = more && message.scanner_id.is_some();
        // The server closes a scanner at the region's end by itself.
        let lease = more.then(|| lease.unwrap_or_else(|| Lease::new(&self.store.inner.open_scanners)));
        self.open = Some(OpenScanner {
            region,
            id: message.scanner_id,
            seq,
            more,
            lease,
        });
        Ok(())
    }

    /// Moves the unread range past a region read to its end.
    fn advance(&mut self, region: &RegionLocation) {
        let scan = &mut self.scan;
        if scan.reversed {
            if region.start.is_empty() || region.start <= scan.start {
                self.finished = true;
            } else {
                scan.stop = region.start.clone();
            }
        } else if region.end.is_empty() || (!scan.stop.is_empty() && region.end >= scan.stop) {
            self.finished = true;
        } else {
            scan.start = region.end.clone();
        }
    }

    /// The request that closes an open scanner, if one is open.
    fn close_request(&mut self) -> Option<(Connection, proto::ScanRequest, Option<Lease>)> {
        let open = self.open.take()?;
        let id = open.id.filter(|_| open.more)?;
        let request = proto::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(0),
            close_scanner: Some(true),
            ..Default::default()
        };
        Some((
            self.store.connection(&open.region.server, Service::Client),
            request,
            open.lease,
        ))
    }

    async fn close(&mut self) {
        if let Some((connection, request, lease)) = self.close_request() {
            // Best effort: the server expires a forgotten scanner anyway.
            let _ = connection
                .call::<proto::ScanResponse>("Scan", &request, self.timeout)
                .await;
            drop(lease);
        }
    }
}

impl crate::store::prefetch::BatchSource for NativeScanner {
    async fn next_batch(&mut self) -> Result<Option<Vec<RowResult>>, StoreError> {
        NativeScanner::next_batch(self).await
    }

    async fn close(mut self) {
        NativeScanner::close(&mut self).await;
    }
}

impl Drop for NativeScanner {
    /// Closes the server's scanner in the background, if one is open and a
    /// tokio runtime is there to run the call.
    fn drop(&mut self) {
        let Some((connection, request, lease)) = self.close_request() else {
            return;
        };
        let timeout = self.timeout;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = connection.call::<proto::ScanResponse>("Scan", &request, timeout).await;
                drop(lease);
            });
        }
    }
}

/// The row to locate a reversed scan's region by, for a scan that stops
/// (exclusive) at `stop`, not empty: a row below the stop and above every
/// real row below it.
fn reversed_locate_row(stop: &[u8]) -> Vec<u8> {
    // The row just below `stop`: drop a trailing 0, or decrement the last
    // byte and pad with 0xFF (enough to sort after every real row below it).
    let mut row = stop.to_vec();
    match row.pop() {
        Some(0) => {}
        Some(b) => {
            row.push(b - 1);
            row.extend(std::iter::repeat_n(0xFF, 8));
        }
        None => {}
    }
    row
}

fn rows_from_cells(cells: Vec<super::codec::WireCell>) -> Option<RowResult> {
    let n = cells.len();
    convert::row_result(&proto::Result::default(), n, &mut cells.into_iter())
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_lookups_start_below_the_stop() {
        assert_eq!(reversed_locate_row(b"m\x00"), b"m");
        assert_eq!(reversed_locate_row(b"m"), b"l\xff\xff\xff\xff\xff\xff\xff\xff");
    }
}
