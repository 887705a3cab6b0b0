//! [`Backend`]: a real HBase store named at run time, by its kind and
//! address, as a command line or the environment names it.
//!
//! hmap's operator CLI (the `hmap-cli` crate), the examples and the tests
//! pick their store this way, so that one variable means the same to each:
//!
//! | variable | backend |
//! |---|---|
//! | `HMAP_THRIFT=host:port` | [`ThriftStore`] on a Thrift2 gateway (binary protocol, unframed) |
//! | `HMAP_NATIVE=host:port[,host:port]` | [`NativeStore`] bootstrapped from masters ([`NativeConfig::new`]) |
//! | `HMAP_ZOOKEEPER=host:port[,host:port]` | `NativeStore` bootstrapped from a ZooKeeper quorum ([`NativeConfig::zookeeper`]) |
//! | `HMAP_THRIFT_FRAMED=host:port` | `ThriftStore`, framed transport ([`ThriftConfig::framed`]) |
//! | `HMAP_THRIFT_COMPACT=host:port` | `ThriftStore`, compact protocol ([`ThriftProtocol::Compact`]) |
//! | `HMAP_THRIFT_HTTPS=host:port` (and `HMAP_THRIFT_CA=ca.pem`) | `ThriftStore` over HTTPS, the gateway's certificate checked against that CA (the platform's roots without one); feature `tls` |
//! | `HMAP_THRIFT1=host:port` | [`Thrift1Store`] on a Thrift1 gateway |
//! | `HMAP_THRIFT1_COMPACT=host:port` | `Thrift1Store`, compact protocol over framed transport (`hbase thrift start -c -f`) |
//!
//! With the `bigtable` feature, `HMAP_BIGTABLE=host:port` names
//! `BigtableStore` on the Bigtable emulator (`Backend::bigtable`,
//! [`BIGTABLE_VARIABLE`]; `scripts/bigtable/emulator start` prints it). It is
//! not yet one of [`ENV_VARIABLES`], which the CLI insists on exactly one
//! of: [`Backend::from_env_var`] takes it all the same.
//!
//! `scripts/hbase/hbase start` prints each of them for the gateways it
//! runs. What to do when several are set is the caller's choice: the
//! examples and tests take the first of `HMAP_THRIFT`, `HMAP_NATIVE`,
//! `HMAP_ZOOKEEPER`; the CLI insists on exactly one.
//!
//! ```no_run
//! use hmap::store::Backend;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut backend = Backend::from_env_var("HMAP_NATIVE")?.unwrap_or_else(|| Backend::thrift("127.0.0.1:9091"));
//! backend.set_table_prefix("staging_");
//! let store = backend.connect().await?; // an Arc<dyn Store>, once HBase answered
//! # let _ = store; Ok(()) }
//! ```

use std::fmt;
#[cfg(feature = "thrift")]
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "bigtable")]
use crate::store::bigtable::{BigtableConfig, BigtableStore};
#[cfg(feature = "native")]
use crate::store::native::{NativeConfig, NativeStore};
use crate::store::{Store, StoreError};
#[cfg(feature = "thrift")]
use crate::store::{Thrift1Store, ThriftConfig, ThriftHttp, ThriftProtocol, ThriftStore};

/// The variables that name a backend, in the order the module docs list
/// them (the order [`Backend::env_variables_set`] reports them in).
pub const ENV_VARIABLES: [&str; 8] = [
    "HMAP_THRIFT",
    "HMAP_NATIVE",
    "HMAP_ZOOKEEPER",
    "HMAP_THRIFT_FRAMED",
    "HMAP_THRIFT_COMPACT",
    "HMAP_THRIFT_HTTPS",
    "HMAP_THRIFT1",
    "HMAP_THRIFT1_COMPACT",
];

/// The variable naming the Bigtable emulator, `host:port`, for
/// `BigtableStore` (feature `bigtable`).
pub const BIGTABLE_VARIABLE: &str = "HMAP_BIGTABLE";

/// The variable naming the CA of `HMAP_THRIFT_HTTPS`'s gateway (a PEM file).
pub const CA_VARIABLE: &str = "HMAP_THRIFT_CA";

/// Why a backend cannot be set up from what names it. Each names the
/// variable or flag that named it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The backend needs a feature of hmap this build lacks.
    #[error("{named_by}: {what} needs hmap's `{feature}` feature, which this build lacks")]
    Feature {
        /// The variable or flag.
        named_by: String,
        /// What was asked for.
        what: &'static str,
        /// The feature.
        feature: &'static str,
    },
    /// The CA certificate file cannot be read or holds no certificate.
    #[error("{named_by}: the CA certificate {}: {source}", path.display())]
    Ca {
        /// The variable or flag.
        named_by: String,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The variable is not one of [`ENV_VARIABLES`].
    #[error("{0} names no backend (the variables that do: {vars})", vars = ENV_VARIABLES.join(", "))]
    UnknownVariable(String),
}

/// A store to connect to: which client, and its settings (see the
/// [module docs](self)). The settings are the clients' own configs, open to
/// change before [`connect`](Self::connect).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Backend {
    /// A [`NativeStore`], bootstrapped from masters or a ZooKeeper quorum.
    #[cfg(feature = "native")]
    Native(NativeConfig),
    /// A [`ThriftStore`] on a Thrift2 gateway (`hbase thrift2`).
    #[cfg(feature = "thrift")]
    Thrift(ThriftConfig),
    /// A [`Thrift1Store`] on a Thrift1 gateway (`hbase thrift`).
    #[cfg(feature = "thrift")]
    Thrift1(ThriftConfig),
    /// A `BigtableStore` on the Bigtable emulator.
    #[cfg(feature = "bigtable")]
    Bigtable(BigtableConfig),
}

impl Backend {
    /// A `NativeStore` bootstrapped from `addresses`, `host:port`, several
    /// separated by commas.
    #[cfg(feature = "native")]
    pub fn native(addresses: &str) -> Self {
        Backend::Native(NativeConfig::new(
            addresses.split(',').map(str::trim).filter(|a| !a.is_empty()),
        ))
    }

    /// A `NativeStore` that finds HBase through the ZooKeeper `quorum`,
    /// `host:port`, several separated by commas (parent znode `/hbase`).
    #[cfg(feature = "native")]
    pub fn zookeeper(quorum: &str) -> Self {
        Backend::Native(NativeConfig::zookeeper(quorum))
    }

    /// A `ThriftStore` on the Thrift2 gateway at `address`, in the
    /// gateway's default mode (binary protocol, unframed).
    #[cfg(feature = "thrift")]
    pub fn thrift(address: &str) -> Self {
        Backend::Thrift(ThriftConfig::new(address.trim()))
    }

    /// A `Thrift1Store` on the Thrift1 gateway at `address`, in the
    /// gateway's default mode (binary protocol, unframed).
    #[cfg(feature = "thrift")]
    pub fn thrift1(address: &str) -> Self {
        Backend::Thrift1(ThriftConfig::new(address.trim()))
    }

    /// A `BigtableStore` on the Bigtable emulator at `address`
    /// (`host:port`), project and instance `hmap`.
    #[cfg(feature = "bigtable")]
    pub fn bigtable(address: &str) -> Self {
        Backend::Bigtable(BigtableConfig::emulator(address.trim()))
    }

    /// The backend the environment variable `variable` (one of
    /// [`ENV_VARIABLES`], or [`BIGTABLE_VARIABLE`]) names, as the
    /// [module docs](self) list them; `None` when it is unset or blank.
    pub fn from_env_var(variable: &str) -> Result<Option<Self>, BackendError> {
        if !ENV_VARIABLES.contains(&variable) && variable != BIGTABLE_VARIABLE {
            return Err(BackendError::UnknownVariable(variable.to_string()));
        }
        match env_value(variable) {
            Some(address) => Self::named(variable, &address, env_value(CA_VARIABLE).as_deref()).map(Some),
            None => Ok(None),
        }
    }

    /// The backend `variable` names when its value is `address` (and
    /// `HMAP_THRIFT_CA`'s is `ca`).
    fn named(variable: &str, address: &str, ca: Option<&str>) -> Result<Self, BackendError> {
        let named_by = format!("{variable}={address}");
        #[cfg(not(feature = "thrift"))]
        let _ = ca;
        Ok(match variable {
            #[cfg(feature = "native")]
            "HMAP_NATIVE" => Self::native(address),
            #[cfg(feature = "native")]
            "HMAP_ZOOKEEPER" => Self::zookeeper(address),
            #[cfg(not(feature = "native"))]
            "HMAP_NATIVE" | "HMAP_ZOOKEEPER" => {
                return Err(BackendError::Feature {
                    named_by,
                    what: "NativeStore",
                    feature: "native",
                });
            }
            #[cfg(feature = "thrift")]
            "HMAP_THRIFT" | "HMAP_THRIFT_FRAMED" | "HMAP_THRIFT_COMPACT" | "HMAP_THRIFT_HTTPS" => {
                let mut config = ThriftConfig::new(address);
                match variable {
                    "HMAP_THRIFT_FRAMED" => config.framed = true,
                    "HMAP_THRIFT_COMPACT" => config.protocol = ThriftProtocol::Compact,
                    "HMAP_THRIFT_HTTPS" => {
                        let named_by = match ca {
                            Some(ca) => format!("{named_by} {CA_VARIABLE}={ca}"),
                            None => named_by,
                        };
                        config.http = Some(https(ca.map(Path::new), &named_by)?);
                    }
                    _ => {}
                }
                Backend::Thrift(config)
            }
            #[cfg(feature = "thrift")]
            "HMAP_THRIFT1" | "HMAP_THRIFT1_COMPACT" => {
                let mut config = ThriftConfig::new(address);
                if variable == "HMAP_THRIFT1_COMPACT" {
                    config.protocol = ThriftProtocol::Compact;
                    config.framed = true;
                }
                Backend::Thrift1(config)
            }
            #[cfg(not(feature = "thrift"))]
            "HMAP_THRIFT"
            | "HMAP_THRIFT_FRAMED"
            | "HMAP_THRIFT_COMPACT"
            | "HMAP_THRIFT_HTTPS"
            | "HMAP_THRIFT1"
            | "HMAP_THRIFT1_COMPACT" => {
                return Err(BackendError::Feature {
                    named_by,
                    what: "a Thrift gateway",
                    feature: "thrift",
                });
            }
            #[cfg(feature = "bigtable")]
            BIGTABLE_VARIABLE => Self::bigtable(address),
            #[cfg(not(feature = "bigtable"))]
            BIGTABLE_VARIABLE => {
                return Err(BackendError::Feature {
                    named_by,
                    what: "BigtableStore",
                    feature: "bigtable",
                });
            }
            other => return Err(BackendError::UnknownVariable(other.to_string())),
        })
    }

    /// Which of [`ENV_VARIABLES`] are set (and not blank), in that order.
    pub fn env_variables_set() -> Vec<&'static str> {
        ENV_VARIABLES
            .iter()
            .copied()
            .filter(|v| env_value(v).is_some())
            .collect()
    }

    /// Where it connects: the gateway's `host:port`, or a `NativeStore`'s
    /// bootstrap servers or ZooKeeper quorum, comma-separated.
    pub fn address(&self) -> String {
        match self {
            #[cfg(feature = "native")]
            Backend::Native(config) => match &config.zookeeper {
                Some(zk) => zk.quorum.join(","),
                None => config.bootstrap.join(","),
            },
            #[cfg(feature = "thrift")]
            Backend::Thrift(config) | Backend::Thrift1(config) => config.address.clone(),
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(config) => config.address.clone(),
        }
    }

    /// Puts `prefix` before every table name on the wire (the clients'
    /// `table_prefix`).
    pub fn set_table_prefix(&mut self, prefix: &str) {
        match self {
            #[cfg(feature = "native")]
            Backend::Native(config) => config.table_prefix = prefix.to_string(),
            #[cfg(feature = "thrift")]
            Backend::Thrift(config) | Backend::Thrift1(config) => config.table_prefix = prefix.to_string(),
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(config) => config.table_prefix = prefix.to_string(),
        }
    }

    /// Bounds each call at `timeout`: a Thrift client's whole call (its
    /// connect and each read within it), a `NativeStore`'s call and admin
    /// call (retries included).
    pub fn set_timeout(&mut self, timeout: Duration) {
        match self {
            #[cfg(feature = "native")]
            Backend::Native(config) => {
                config.call_timeout = timeout;
                config.admin_timeout = timeout;
            }
            #[cfg(feature = "thrift")]
            Backend::Thrift(config) | Backend::Thrift1(config) => {
                config.call_timeout = timeout;
                config.read_timeout = timeout;
                config.connect_timeout = config.connect_timeout.min(timeout);
            }
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(config) => {
                config.call_timeout = timeout;
                config.admin_timeout = timeout;
                config.connect_timeout = config.connect_timeout.min(timeout);
            }
        }
    }

    /// The Thrift client's settings (its wire mode among them); `None` for
    /// a `NativeStore`.
    #[cfg(feature = "thrift")]
    pub fn thrift_config_mut(&mut self) -> Option<&mut ThriftConfig> {
        match self {
            Backend::Thrift(config) | Backend::Thrift1(config) => Some(config),
            #[cfg(feature = "native")]
            Backend::Native(_) => None,
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(_) => None,
        }
    }

    /// Connects: a `NativeStore` bootstraps (reaching its masters or its
    /// ZooKeeper); a Thrift client pings its gateway, so that an address
    /// with no gateway, or a gateway of another kind or mode, fails here
    /// and not at the first call.
    pub async fn connect(self) -> Result<Arc<dyn Store>, StoreError> {
        match self {
            #[cfg(feature = "native")]
            Backend::Native(config) => Ok(Arc::new(NativeStore::connect(config).await?)),
            #[cfg(feature = "thrift")]
            Backend::Thrift(config) => {
                let store = ThriftStore::with_config(config);
                store.ping().await?;
                Ok(Arc::new(store))
            }
            #[cfg(feature = "thrift")]
            Backend::Thrift1(config) => {
                let store = Thrift1Store::with_config(config);
                store.ping().await?;
                Ok(Arc::new(store))
            }
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(config) => Ok(Arc::new(BigtableStore::connect(config).await?)),
        }
    }
}

/// What the backend is and where, to follow "connect to": `HBase at
/// 10.0.0.1:16000 (NativeStore)`, `HBase through ZooKeeper zk1:2181
/// (NativeStore)`, `the Thrift2 gateway at 10.0.0.1:9091 (framed, compact)`,
/// `the Thrift1 gateway at ...`.
impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "native")]
            Backend::Native(config) => match &config.zookeeper {
                Some(_) => write!(f, "HBase through ZooKeeper {} (NativeStore)", self.address()),
                None => write!(f, "HBase at {} (NativeStore)", self.address()),
            },
            #[cfg(feature = "thrift")]
            Backend::Thrift(config) | Backend::Thrift1(config) => {
                let kind = if matches!(self, Backend::Thrift(_)) {
                    "Thrift2"
                } else {
                    "Thrift1"
                };
                write!(f, "the {kind} gateway at {}", config.address)?;
                let mut modes = Vec::new();
                if config.framed {
                    modes.push("framed");
                }
                if config.protocol == ThriftProtocol::Compact {
                    modes.push("compact");
                }
                match &config.http {
                    Some(http) if http.is_https() => modes.push("HTTPS"),
                    Some(_) => modes.push("HTTP"),
                    None => {}
                }
                if !modes.is_empty() {
                    write!(f, " ({})", modes.join(", "))?;
                }
                Ok(())
            }
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(config) => write!(f, "the Bigtable emulator at {} (BigtableStore)", config.address),
        }
    }
}

/// HTTPS for a Thrift gateway: its certificate checked against the CA
/// certificates in the PEM file `ca`, or against the platform's roots
/// without one (`ThriftHttp::https_with_ca`, `ThriftHttp::https`).
/// Needs hmap's `tls` feature: without it, [`BackendError::Feature`].
/// `named_by` is the variable or flag that asked, for the errors.
#[cfg(feature = "thrift")]
pub fn https(ca: Option<&Path>, named_by: &str) -> Result<ThriftHttp, BackendError> {
    #[cfg(feature = "tls")]
    {
        let fail = |path: &Path, source| BackendError::Ca {
            named_by: named_by.to_string(),
            path: path.to_path_buf(),
            source,
        };
        match ca {
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| fail(path, e))?;
                ThriftHttp::https_with_ca(&pem).map_err(|e| fail(path, e))
            }
            None => ThriftHttp::https().map_err(|e| fail(Path::new("(the platform's roots)"), e)),
        }
    }
    #[cfg(not(feature = "tls"))]
    {
        let _ = ca;
        Err(BackendError::Feature {
            named_by: named_by.to_string(),
            what: "HTTPS",
            feature: "tls",
        })
    }
}

/// A variable's value, trimmed; `None` when it is unset or blank.
fn env_value(variable: &str) -> Option<String> {
    std::env::var(variable)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "bigtable")]
    #[test]
    fn hmap_bigtable_names_the_emulator() {
        let mut backend = Backend::named(BIGTABLE_VARIABLE, "127.0.0.1:8086", None).unwrap();
        assert_eq!(
            backend.to_string(),
            "the Bigtable emulator at 127.0.0.1:8086 (BigtableStore)"
        );
        backend.set_table_prefix("p_");
        backend.set_timeout(Duration::from_secs(2));
        let Backend::Bigtable(config) = backend else {
            panic!("{backend:?}")
        };
        assert_eq!(
            (config.address.as_str(), config.table_prefix.as_str()),
            ("127.0.0.1:8086", "p_")
        );
        assert_eq!(config.call_timeout, Duration::from_secs(2));
    }

    #[cfg(not(feature = "bigtable"))]
    #[test]
    fn hmap_bigtable_without_the_feature_says_so() {
        let err = Backend::named(BIGTABLE_VARIABLE, "127.0.0.1:8086", None).unwrap_err();
        assert!(err.to_string().contains("`bigtable` feature"), "{err}");
    }

    #[cfg(all(feature = "thrift", feature = "native"))]
    #[test]
    fn each_variable_names_its_backend_and_wire() {
        let named = |variable: &str| Backend::named(variable, "10.0.0.1:9", None).unwrap().to_string();
        assert_eq!(named("HMAP_THRIFT"), "the Thrift2 gateway at 10.0.0.1:9");
        assert_eq!(
            named("HMAP_THRIFT_FRAMED"),
            "the Thrift2 gateway at 10.0.0.1:9 (framed)"
        );
        assert_eq!(
            named("HMAP_THRIFT_COMPACT"),
            "the Thrift2 gateway at 10.0.0.1:9 (compact)"
        );
        assert_eq!(named("HMAP_THRIFT1"), "the Thrift1 gateway at 10.0.0.1:9");
        assert_eq!(
            named("HMAP_THRIFT1_COMPACT"),
            "the Thrift1 gateway at 10.0.0.1:9 (framed, compact)"
        );
        assert_eq!(named("HMAP_NATIVE"), "HBase at 10.0.0.1:9 (NativeStore)");
        assert_eq!(
            Backend::named("HMAP_NATIVE", "m1:1, m2:2,", None).unwrap().to_string(),
            "HBase at m1:1,m2:2 (NativeStore)"
        );
        assert_eq!(
            named("HMAP_ZOOKEEPER"),
            "HBase through ZooKeeper 10.0.0.1:9 (NativeStore)"
        );
        assert!(matches!(
            Backend::named("HMAP_OTHER", "a:1", None),
            Err(BackendError::UnknownVariable(v)) if v == "HMAP_OTHER"
        ));
        assert!(matches!(
            Backend::from_env_var("PATH"),
            Err(BackendError::UnknownVariable(v)) if v == "PATH"
        ));
    }

    #[cfg(all(feature = "thrift", not(feature = "tls")))]
    #[test]
    fn https_without_the_tls_feature_says_so() {
        let err = Backend::named("HMAP_THRIFT_HTTPS", "h:1", Some("/ca.pem")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "HMAP_THRIFT_HTTPS=h:1 HMAP_THRIFT_CA=/ca.pem: HTTPS needs hmap's `tls` feature, which this build lacks"
        );
    }

    #[cfg(feature = "tls")]
    #[test]
    fn https_with_a_ca_file_that_cannot_be_read_names_it() {
        let err = Backend::named("HMAP_THRIFT_HTTPS", "h:1", Some("/nonexistent/ca.pem")).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "HMAP_THRIFT_HTTPS=h:1 HMAP_THRIFT_CA=/nonexistent/ca.pem: the CA certificate /nonexistent/ca.pem: "
            ),
            "{err}"
        );
    }

    #[cfg(feature = "thrift")]
    #[test]
    fn prefix_and_timeout_reach_the_config() {
        let mut backend = Backend::thrift1(" h:1 ");
        backend.set_table_prefix("p_");
        backend.set_timeout(Duration::from_secs(2));
        let config = backend.thrift_config_mut().unwrap();
        assert_eq!(config.address, "h:1");
        assert_eq!(config.table_prefix, "p_");
        assert_eq!(config.call_timeout, Duration::from_secs(2));
        assert_eq!(config.connect_timeout, Duration::from_secs(2));
    }
}
