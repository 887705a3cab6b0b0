//! The connection registry: where `hbase:meta` is, the cluster's id, and
//! how `NativeStore::connect` bootstraps, from `ClientMetaService` on the
//! bootstrap servers (HBase 2.5 and later) or from ZooKeeper
//! ([`zookeeper`]). The answers are cached; `hbase:meta`'s
//! location is asked for again once it went stale.

use std::time::{Duration, Instant};

use bytes::Bytes;

use super::client::{NativeConfig, NativeStore};
use super::connection::{Connection, Service};
use super::error::NativeError;
use super::locate::{self, RegionLocation};
use super::proto;
use super::retry::{Attempts, Retry};
use super::zookeeper;
use crate::store::StoreError;

/// The error of a registry with no server to ask.
pub(super) fn no_bootstrap() -> NativeError {
    NativeError::InvalidReply {
        reason: "no bootstrap server configured".to_string(),
    }
}

/// `hbase:meta`'s location on `server`, as a ZooKeeper registry names it:
/// its one region, `hbase:meta,,1` (`RegionInfoBuilder.FIRST_META_REGIONINFO`,
/// region id 1, in the old name format without an encoded suffix).
fn meta_at(server: String) -> RegionLocation {
    RegionLocation {
        table: locate::META_TABLE.to_string(),
        name: Bytes::from(format!("{},,1", locate::META_TABLE)),
        start: Bytes::new(),
        end: Bytes::new(),
        server,
    }
}

impl NativeStore {
    /// Connects: asks the bootstrap servers where `hbase:meta` is; with a
    /// [ZooKeeper registry](NativeConfig::zookeeper), reads the cluster id,
    /// `hbase:meta`'s server and the active master from ZooKeeper instead.
    /// One deadline, [`NativeConfig::call_timeout`], covers the whole
    /// connect: the servers (or quorum members) are tried in order, each
    /// given an equal share of the time left. When none answers, the error
    /// is a [`StoreError::Connection`] that says how long the connect took
    /// (`connect timed out after ...` once the deadline passed) and what
    /// each server did.
    pub async fn connect(config: NativeConfig) -> Result<Self, StoreError> {
        #[cfg(feature = "kerberos")]
        let config = {
            let mut config = config;
            if let Some(registry) = config.zookeeper.as_mut() {
                registry.sasl = config.connection.kerberos.as_ref().and_then(|k| k.for_zookeeper());
            }
            config
        };
        let store = NativeStore::new(config);
        if let Some(registry) = &store.inner.config.zookeeper {
            let deadline = Instant::now() + crate::store::call_timeout(store.inner.config.call_timeout);
            let registered = zookeeper::bootstrap(registry, deadline).await.map_err(|e| {
                let endpoint = e.server().to_string();
                NativeError::from(e).into_store("", None, "connect", &endpoint)
            })?;
            *store.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(meta_at(registered.meta_server));
            *store.inner.master.lock().unwrap_or_else(|e| e.into_inner()) = registered.master;
            *store.inner.cluster_id.lock().unwrap_or_else(|e| e.into_inner()) = Some(registered.cluster_id);
            return Ok(store);
        }
        store
            .meta_region(crate::store::call_timeout(store.inner.config.call_timeout))
            .await
            .map_err(|(e, endpoint)| e.into_store(locate::META_TABLE, None, "connect", &endpoint))?;
        Ok(store)
    }

    /// The cluster's id (a UUID), from the cache or the registry:
    /// `ClientMetaService.GetClusterId`, or the `hbaseid` znode.
    pub async fn cluster_id(&self) -> Result<String, StoreError> {
        if let Some(id) = self.inner.cluster_id.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok(id);
        }
        let timeout = crate::store::call_timeout(self.inner.config.call_timeout);
        let id = match &self.inner.config.zookeeper {
            Some(registry) => zookeeper::cluster_id(registry, Instant::now() + timeout)
                .await
                .map_err(|e| (NativeError::from(e), String::new())),
            None => self
                .ask_bootstrap("GetClusterId", timeout, |connection, left| async move {
                    connection
                        .call::<proto::GetClusterIdResponse>("GetClusterId", &proto::GetClusterIdRequest {}, left)
                        .await
                        .and_then(|r| {
                            r.message.cluster_id.ok_or(NativeError::MissingField {
                                message: "GetClusterIdResponse",
                                field: "cluster_id",
                            })
                        })
                })
                .await
                .map_err(|e| (e, String::new())),
        };
        let id = id.map_err(|(e, endpoint)| {
            let endpoint = match &e {
                NativeError::ZooKeeper(z) => z.server().to_string(),
                _ => endpoint,
            };
            e.into_store("", None, "cluster_id", &endpoint)
        })?;
        *self.inner.cluster_id.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
        Ok(id)
    }

    /// Asks the bootstrap servers in turn until one answers, all within
    /// `timeout`: each server is given an equal share of the time left to
    /// the servers still to try (as the ZooKeeper quorum's are), so that a
    /// silent first server leaves time for the others. When none answers,
    /// [`NativeError::Bootstrap`] says what each one did.
    pub(super) async fn ask_bootstrap<T, F>(
        &self,
        method: &'static str,
        timeout: Duration,
        ask: impl Fn(Connection, Duration) -> F,
    ) -> Result<T, NativeError>
    where
        F: std::future::Future<Output = Result<T, NativeError>>,
    {
        let servers = &self.inner.config.bootstrap;
        if servers.is_empty() {
            return Err(no_bootstrap());
        }
        let started = Instant::now();
        let deadline = started + timeout;
        let mut tried = Vec::with_capacity(servers.len());
        for (i, server) in servers.iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tried.push((server.clone(), "not tried: no time left".to_string()));
                continue;
            }
            let share = left / u32::try_from(servers.len() - i).unwrap_or(u32::MAX);
            match ask(self.connection(server, Service::ClientMeta), share).await {
                Ok(found) => return Ok(found),
                Err(NativeError::Timeout { elapsed, .. }) => tried.push((
                    server.clone(),
                    format!(
                        "no answer within {:?} (its share of the deadline)",
                        super::error::whole_ms(elapsed)
                    ),
                )),
                Err(NativeError::Connect { cause: source, .. }) => {
                    tried.push((server.clone(), format!("cannot connect: {source}")))
                }
                // Settings that every server refuses alike: said at once, typed.
                Err(e @ (NativeError::Security(_) | NativeError::Tls { .. })) => return Err(e),
                Err(e) => tried.push((server.clone(), e.to_string())),
            }
        }
        Err(NativeError::Bootstrap {
            method,
            elapsed: started.elapsed(),
            timed_out: Instant::now() >= deadline,
            tried,
        })
    }

    /// Where `hbase:meta` is, from the cache or the registry (within one
    /// `timeout` for every bootstrap server).
    pub(super) async fn meta_region(&self, timeout: Duration) -> Result<RegionLocation, (NativeError, String)> {
        if let Some(meta) = self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok(meta);
        }
        if let Some(registry) = &self.inner.config.zookeeper {
            let server = zookeeper::meta_location(registry, Instant::now() + timeout)
                .await
                .map_err(|e| {
                    let endpoint = e.server().to_string();
                    (NativeError::from(e), endpoint)
                })?;
            let meta = meta_at(server);
            *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(meta.clone());
            return Ok(meta);
        }
        let meta = self
            .ask_bootstrap("GetMetaRegionLocations", timeout, |connection, left| async move {
                connection
                    .call::<proto::GetMetaRegionLocationsResponse>(
                        "GetMetaRegionLocations",
                        &proto::GetMetaRegionLocationsRequest {},
                        left,
                    )
                    .await
                    .and_then(|r| locate::meta_location(&r.message))
            })
            .await
            .map_err(|e| (e, String::new()))?;
        *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(meta.clone());
        Ok(meta)
    }

    /// Where `hbase:meta` is ([`meta_region`](Self::meta_region)), asking
    /// the registry again after a pause while no registry server answers
    /// (a master failing over, or restarting), within `attempts`.
    pub(super) async fn meta_region_within(
        &self,
        attempts: &mut Attempts,
    ) -> Result<RegionLocation, (NativeError, String)> {
        loop {
            let left = attempts
                .remaining("the registry", "GetMetaRegionLocations")
                .map_err(|e| (e, String::new()))?;
            match self.meta_region(left).await {
                Err((e @ (NativeError::Bootstrap { .. } | NativeError::ZooKeeper(_)), endpoint)) => {
                    attempts.waiting_for(|| "a registry server to say where hbase:meta is".to_string());
                    attempts
                        .back_off(e, &Retry::ServerGone, &endpoint, "GetMetaRegionLocations")
                        .await
                        .map_err(|e| (e, endpoint))?;
                }
                found => return found,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::net::TcpListener;

    use super::*;
    use crate::store::native::NativeConfig;

    /// A server that accepts connections and never says a word.
    async fn silent_server() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        address
    }

    #[tokio::test]
    async fn connect_has_one_deadline_for_every_bootstrap_server() {
        // One server refuses, three say nothing.
        let refused = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let refused_address = refused.local_addr().expect("address").to_string();
        drop(refused);
        let mut servers = vec![refused_address];
        for _ in 0..3 {
            servers.push(silent_server().await);
        }
        let config = NativeConfig::new(servers.clone())
            .call_timeout(Duration::from_secs(1))
            .admin_timeout(Duration::from_secs(1));
        let started = Instant::now();
        let err = NativeStore::connect(config.clone())
            .await
            .expect_err("no server answers");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(950) && elapsed < Duration::from_millis(1500),
            "{elapsed:?}"
        );
        let message = err.to_string();
        assert!(
            matches!(err, StoreError::Connection { .. }) && err.is_transient(),
            "{err:?}"
        );
        assert!(message.contains("connect timed out after 1"), "{message}");
        assert!(
            message.contains(&format!("{}: cannot connect", servers[0])),
            "{message}"
        );
        for server in &servers[1..] {
            assert!(message.contains(&format!("{server}: no answer within")), "{message}");
        }
        // The registry's other call shares one deadline the same way.
        let store = NativeStore::new(config);
        let started = Instant::now();
        let err = store.cluster_id().await.expect_err("no server answers");
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{:?}",
            started.elapsed()
        );
        assert!(err.to_string().contains("cluster_id timed out after 1"), "{err}");
        // And the one that names the active master, within the admin
        // deadline: asked again while time is left (a master failing
        // over), then said to be unavailable, nothing applied.
        let started = Instant::now();
        let err = store.admin_list().await.expect_err("no server answers");
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{:?}",
            started.elapsed()
        );
        assert!(
            matches!(err, StoreError::Unavailable { .. }) && !err.maybe_applied(),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("list_tables was not served within 1"), "{message}");
        assert!(message.contains("the registry to name an active master"), "{message}");
        assert!(message.contains("GetActiveMaster timed out after 1"), "{message}");
    }
}
