//! The region cache: where each table's regions were last seen, looked up
//! in `hbase:meta` when a row's region is not cached ([`locate`]
//! reads the answer), and what a failed try means for the cache before the
//! call tries again ([`retry_on`](NativeStore::retry_on)).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::client::NativeStore;
use super::convert;
use super::error::NativeError;
use super::locate::{self, RegionLocation, Target};
use super::proto;
use super::retry::{Attempts, Idempotence, Retry, retry_kind};
use crate::store::{StoreError, metrics};

impl NativeStore {
    /// Forgets every cached region of a table (by its name on the wire):
    /// after it is deleted, created or truncated, its regions are new.
    pub(super) fn forget_table(&self, wire: &str) {
        self.inner
            .regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(wire);
    }

    fn cached(&self, table: &str, target: Target<'_>) -> Option<RegionLocation> {
        let regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        let regions = regions.get(table)?;
        let (_, region) = match target {
            Target::Row(row) => regions.range(..=Bytes::copy_from_slice(row)).next_back()?,
            Target::Last => regions.iter().next_back()?,
        };
        target.is_in(region).then(|| region.clone())
    }

    /// Forgets every cached region of `server` (and `hbase:meta`'s
    /// location, if it was there): the server is gone, stopping or starting.
    pub(super) fn forget_server(&self, server: &str) {
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        for table in regions.values_mut() {
            let before = table.len();
            table.retain(|_, region| region.server != server);
            for _ in table.len()..before {
                metrics::region_relocation();
            }
        }
        drop(regions);
        let mut meta = self.inner.meta.lock().unwrap_or_else(|e| e.into_inner());
        if meta.as_ref().is_some_and(|m| m.server == server) {
            *meta = None;
        }
    }

    /// Caches `region` on `server`, where a `RegionMovedException` said it is now.
    fn moved(&self, region: &RegionLocation, server: &str) {
        let moved = RegionLocation {
            server: server.to_string(),
            ..region.clone()
        };
        if region.table == locate::META_TABLE {
            *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(moved);
            return;
        }
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        cache_region(regions.entry(region.table.clone()).or_default(), moved);
        metrics::region_relocation();
    }

    /// Acts on what a failed try on `region` meant for the cache.
    pub(super) fn note_failure(&self, retry: &Retry, region: &RegionLocation) {
        match retry {
            Retry::Relocate => self.forget(region),
            Retry::ServerGone => self.forget_server(&region.server),
            Retry::MovedTo(server) => self.moved(region, server),
            Retry::Wait { .. } | Retry::Now | Retry::No => {}
        }
    }

    /// After a failed try on `region`, what `retry` says: give up with
    /// the error, or note what the failure means for the cache, log
    /// `event`, and pause within `attempts` (whose deadline's error ends
    /// the call once it has passed). `waiting_for` says what the call
    /// waits for, for that error.
    pub(super) async fn retry_on(
        &self,
        error: NativeError,
        retry: Retry,
        region: &RegionLocation,
        (method, event): (&'static str, &'static str),
        attempts: &mut Attempts,
        waiting_for: impl FnOnce() -> String,
    ) -> Result<(), (NativeError, String)> {
        if let Retry::No = retry {
            return Err((error, region.server.clone()));
        }
        tracing::debug!(table = %region.table, method, server = %region.server, error = %error, "hmap native: {event}");
        attempts.waiting_for(waiting_for);
        self.note_failure(&retry, region);
        attempts
            .back_off(error, &retry, &region.server, method)
            .await
            .map_err(|e| (e, region.server.clone()))
    }

    pub(super) fn forget(&self, region: &RegionLocation) {
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(table) = regions.get_mut(&region.table)
            && table.remove(&region.start).is_some()
        {
            metrics::region_relocation();
        }
        if region.table == locate::META_TABLE {
            *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// The region that holds `row` in `table` (cached, or looked up in `hbase:meta`).
    pub async fn locate(&self, table: &str, row: &[u8]) -> Result<RegionLocation, StoreError> {
        let mut attempts = self.attempts(crate::store::call_timeout(self.inner.config.call_timeout));
        self.locate_within(table, Target::Row(row), &mut attempts)
            .await
            .map_err(|(e, endpoint)| e.into_store(table, Some(row), "locate", &endpoint))
    }

    pub(super) async fn locate_within(
        &self,
        table: &str,
        target: Target<'_>,
        attempts: &mut Attempts,
    ) -> Result<RegionLocation, (NativeError, String)> {
        let wire = self.wire(table);
        let table = wire.as_ref();
        if let Some(region) = self.cached(table, target) {
            return Ok(region);
        }
        metrics::region_cache_miss();
        let region = self
            .meta_lookup(table, target, attempts, |cells| {
                locate::region_from_meta(table, target, cells)
            })
            .await?;
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        cache_region(regions.entry(table.to_string()).or_default(), region.clone());
        Ok(region)
    }

    /// Reads the `hbase:meta` row of `target`'s region in `table` (its
    /// name on the wire), bypassing the cache, and gives its cells to
    /// `read`; a lookup that fails because `hbase:meta` moved, or because
    /// the row names no region yet (a split under way), is tried again
    /// within `attempts`' deadline.
    pub(super) async fn meta_lookup<T>(
        &self,
        table: &str,
        target: Target<'_>,
        attempts: &mut Attempts,
        read: impl Fn(&[super::codec::WireCell]) -> Result<T, NativeError>,
    ) -> Result<T, (NativeError, String)> {
        loop {
            let meta = self.meta_region_within(attempts).await?;
            let request = proto::ScanRequest {
                region: Some(meta.specifier()),
                scan: Some(proto::Scan {
                    column: vec![proto::Column {
                        family: Bytes::from_static(locate::META_FAMILY),
                        qualifier: Vec::new(),
                    }],
                    start_row: Some(target.meta_key(table).into()),
                    stop_row: Some(locate::meta_stop_key(table).into()),
                    include_stop_row: Some(true),
                    reversed: Some(true),
                    caching: Some(1),
                    ..Default::default()
                }),
                number_of_rows: Some(1),
                close_scanner: Some(true),
                ..Default::default()
            };
            let result = async {
                let left = attempts.remaining(&meta.server, "Scan")?;
                let reply = self
                    .call_server::<proto::ScanResponse>(&meta.server, "Scan", &request, left)
                    .await?;
                let rows = convert::scan_rows(&reply)?;
                let cells: Vec<_> = rows.into_iter().next().unwrap_or_default();
                read(&cells)
            }
            .await;
            let e = match result {
                Ok(found) => return Ok(found),
                Err(e) => e,
            };
            let event = ("Scan", "meta lookup retried");
            if let NativeError::NoRegion { .. } = e {
                // A row that names no region yet is a split under way, or
                // a region being assigned: hbase:meta is where it was.
                let retry = Retry::Wait { overloaded: false };
                let waiting_for = || format!("{} of table `{table}` to be assigned", target.show());
                self.retry_on(e, retry, &meta, event, attempts, waiting_for).await?;
            } else {
                let retry = retry_kind(&e, Idempotence::Safe);
                let waiting_for = || format!("hbase:meta (last on {}) to be served", meta.server);
                self.retry_on(e, retry, &meta, event, attempts, waiting_for).await?;
            }
        }
    }
}

/// Caches a region, evicting the cached regions it overlaps (a parent
/// after a split, daughters after a merge): they are stale.
fn cache_region(regions: &mut BTreeMap<Bytes, RegionLocation>, region: RegionLocation) {
    let overlaps = |other: &RegionLocation| {
        (region.end.is_empty() || other.start < region.end) && (other.end.is_empty() || region.start < other.end)
    };
    regions.retain(|_, other| !overlaps(other));
    regions.insert(region.start.clone(), region);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_region_evicts_the_stale_ones_it_overlaps() {
        let region = |start: &'static str, end: &'static str| RegionLocation {
            table: "t".into(),
            name: format!("t,{start},1.x.").into(),
            start: start.into(),
            end: end.into(),
            server: "h:1".into(),
        };
        let mut cache = BTreeMap::new();
        cache_region(&mut cache, region("", "m"));
        cache_region(&mut cache, region("m", ""));
        // A merge: one region over both.
        cache_region(&mut cache, region("", ""));
        assert_eq!(cache.len(), 1);
        // A split: the daughters replace the parent, and keep each other.
        cache_region(&mut cache, region("", "g"));
        cache_region(&mut cache, region("g", ""));
        assert_eq!(cache.keys().collect::<Vec<_>>(), [&Bytes::from(""), &Bytes::from("g")]);
        cache_region(&mut cache, region("c", "e"));
        assert_eq!(cache.keys().collect::<Vec<_>>(), [&Bytes::from("c"), &Bytes::from("g")]);
    }
}
