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
//! | `HMAP_NATIVE_TLS_CA=ca.pem` (with `HMAP_NATIVE` or `HMAP_ZOOKEEPER`) | `NativeStore` over TLS, the servers' certificates checked against that CA (`NativeConfig::tls`); feature `tls` |
//! | `HMAP_NATIVE_TLS_CERT=client.pem`, `HMAP_NATIVE_TLS_KEY=client-key.pem` | and a client certificate, for servers that demand one (mutual TLS) |
//! | `HMAP_PRINCIPAL=app@REALM`, `HMAP_KEYTAB=app.keytab` (with any of the variables above but `HMAP_BIGTABLE`) | Kerberos, logged in from the keytab: `NativeStore` by HBase's SASL handshake (`NativeConfig::kerberos`), a Thrift client by its gateway's SASL transport (`ThriftConfig::kerberos`, for an unframed gateway with `hbase.thrift.security.qop`) or, in HTTP mode, by SPNEGO; `HMAP_KERBEROS=ticket-cache` instead uses the ticket cache (`kinit`); `HMAP_SERVER_PRINCIPAL` (`hbase/_HOST@REALM` by default, in the default realm) and `HMAP_KRB_PROTECTION` (`privacy`, `integrity`, `authentication`, several separated by commas, the first preferred) as HBase's `hbase.regionserver.kerberos.principal` and `hbase.rpc.protection`; `HMAP_ZOOKEEPER_PRINCIPAL` (`zookeeper/_HOST@REALM`) for a ZooKeeper quorum that demands SASL; feature `kerberos` |
//! | `HMAP_THRIFT1=host:port` | [`Thrift1Store`] on a Thrift1 gateway |
//! | `HMAP_THRIFT1_COMPACT=host:port` | `Thrift1Store`, compact protocol over framed transport (`hbase thrift start -c -f`) |
//! | `HMAP_BIGTABLE=host:port` | `BigtableStore` on the Bigtable emulator, project and instance `hmap` (`Backend::bigtable`, [`BIGTABLE_VARIABLE`]; `scripts/bigtable/emulator start` prints it); `host:port/projects/P/instances/I` for instance `I` of project `P` there; feature `bigtable` |
//! | `HMAP_BIGTABLE=projects/P/instances/I` | `BigtableStore` on Cloud Bigtable's instance `I` of project `P`, over TLS, with Google's application-default credentials (`GOOGLE_APPLICATION_CREDENTIALS`, ...: `BigtableConfig::cloud`); on the emulator `BIGTABLE_EMULATOR_HOST` names instead when it is set, as Google's clients do |
//!
//! `scripts/hbase/hbase start` prints each of them for the gateways it
//! runs. What to do when several are set is the caller's choice: the
//! examples and tests take the first of `HMAP_THRIFT`, `HMAP_NATIVE`,
//! `HMAP_ZOOKEEPER`, `HMAP_BIGTABLE`; the CLI insists on exactly one.
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
use std::path::{Path, PathBuf};
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
pub const ENV_VARIABLES: [&str; 9] = [
    "HMAP_THRIFT",
    "HMAP_NATIVE",
    "HMAP_ZOOKEEPER",
    "HMAP_THRIFT_FRAMED",
    "HMAP_THRIFT_COMPACT",
    "HMAP_THRIFT_HTTPS",
    "HMAP_THRIFT1",
    "HMAP_THRIFT1_COMPACT",
    BIGTABLE_VARIABLE,
];

/// The variable naming the Bigtable emulator, `host:port`, or a Cloud
/// Bigtable instance, `projects/P/instances/I`, for `BigtableStore`
/// (feature `bigtable`).
pub const BIGTABLE_VARIABLE: &str = "HMAP_BIGTABLE";

/// The variable naming the CA of `HMAP_THRIFT_HTTPS`'s gateway (a PEM file).
pub const CA_VARIABLE: &str = "HMAP_THRIFT_CA";

/// The variable naming the CA (a PEM file) that a `NativeStore`'s TLS checks
/// the servers' certificates against; set, `HMAP_NATIVE` and
/// `HMAP_ZOOKEEPER` connect over TLS.
pub const NATIVE_TLS_CA_VARIABLE: &str = "HMAP_NATIVE_TLS_CA";
/// The variables naming a `NativeStore`'s client certificate chain and its
/// key (PEM files), for mutual TLS.
pub const NATIVE_TLS_CLIENT_VARIABLES: [&str; 2] = ["HMAP_NATIVE_TLS_CERT", "HMAP_NATIVE_TLS_KEY"];

/// The variables of a `NativeStore`'s Kerberos login: the client's
/// principal and keytab, `HMAP_KERBEROS=ticket-cache` for the ticket cache
/// instead, the servers' principal, the protection levels accepted, and
/// the ZooKeeper quorum's principal when it demands SASL.
pub const KERBEROS_VARIABLES: [&str; 6] = [
    "HMAP_PRINCIPAL",
    "HMAP_KEYTAB",
    "HMAP_KERBEROS",
    "HMAP_SERVER_PRINCIPAL",
    "HMAP_KRB_PROTECTION",
    "HMAP_ZOOKEEPER_PRINCIPAL",
];

/// How a `NativeStore` logs in with Kerberos: the client's credentials,
/// the servers' principal, the protection levels accepted, as the
/// environment ([`KERBEROS_VARIABLES`]) and the CLI's flags give them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KerberosSettings {
    /// The client's principal and keytab file; `None`: the ticket cache.
    pub keytab: Option<(String, PathBuf)>,
    /// The servers' principal (`hbase/_HOST@REALM`); `None`: `hbase/_HOST`
    /// in the default realm.
    pub server_principal: Option<String>,
    /// The levels accepted, `privacy,integrity,authentication` (the first
    /// preferred); `None`: all three, privacy first.
    pub protection: Option<String>,
    /// The ZooKeeper quorum's principal (`zookeeper/_HOST@REALM`), to
    /// authenticate there by SASL; `None`: ZooKeeper is read without.
    pub zookeeper_principal: Option<String>,
}

impl KerberosSettings {
    /// A login as `principal` from the keytab file `keytab`.
    pub fn keytab(principal: impl Into<String>, keytab: impl Into<PathBuf>) -> Self {
        KerberosSettings {
            keytab: Some((principal.into(), keytab.into())),
            ..KerberosSettings::default()
        }
    }

    /// A login from the ticket cache (`kinit`).
    pub fn ticket_cache() -> Self {
        KerberosSettings::default()
    }

    /// The servers' principal (`hbase/_HOST@REALM`).
    pub fn server_principal(mut self, principal: impl Into<String>) -> Self {
        self.server_principal = Some(principal.into());
        self
    }

    /// The protection levels accepted (`privacy,integrity`), as
    /// `hbase.rpc.protection` names them.
    pub fn protection(mut self, levels: impl Into<String>) -> Self {
        self.protection = Some(levels.into());
        self
    }

    /// The ZooKeeper quorum's principal, for a quorum that demands SASL
    /// (`Kerberos::zookeeper_principal`).
    pub fn zookeeper_principal(mut self, principal: impl Into<String>) -> Self {
        self.zookeeper_principal = Some(principal.into());
        self
    }

    /// The settings the environment gives, `None` when it names no
    /// Kerberos login (neither `HMAP_PRINCIPAL` nor `HMAP_KERBEROS`).
    pub fn from_env() -> Result<Option<Self>, BackendError> {
        let [
            principal,
            keytab,
            kerberos,
            server_principal,
            protection,
            zookeeper_principal,
        ] = KERBEROS_VARIABLES.map(env_value);
        let keytab = match (principal, keytab, kerberos.as_deref()) {
            (Some(principal), Some(keytab), None) => Some((principal, PathBuf::from(keytab))),
            (None, None, Some("ticket-cache")) => None,
            (None, None, None) => return Ok(None),
            (_, _, Some(other)) if other != "ticket-cache" => {
                return Err(BackendError::Incomplete {
                    named_by: format!("HMAP_KERBEROS={other}"),
                    reason: "the one value it takes is `ticket-cache` (HMAP_PRINCIPAL and HMAP_KEYTAB name a keytab login)",
                });
            }
            _ => {
                return Err(BackendError::Incomplete {
                    named_by: "HMAP_PRINCIPAL, HMAP_KEYTAB and HMAP_KERBEROS".into(),
                    reason: "a keytab login needs HMAP_PRINCIPAL and HMAP_KEYTAB, the ticket cache HMAP_KERBEROS=ticket-cache alone",
                });
            }
        };
        Ok(Some(KerberosSettings {
            keytab,
            server_principal,
            protection,
            zookeeper_principal,
        }))
    }
}

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
    #[error("{named_by}: the CA certificate {}: {cause}", path.display())]
    Ca {
        /// The variable or flag.
        named_by: String,
        /// The file.
        path: PathBuf,
        /// What went wrong. Already part of this error's message, so not
        /// its [`source`](std::error::Error::source): a chain printer shows
        /// it once.
        cause: std::io::Error,
    },
    /// Settings that go together were given in part.
    #[error("{named_by}: {reason}")]
    Incomplete {
        /// The variables or flags.
        named_by: String,
        /// What is missing.
        reason: &'static str,
    },
    /// A NativeStore setting (its TLS, Kerberos) given for a Thrift gateway.
    #[error(
        "{named_by} applies to NativeStore (HMAP_NATIVE, HMAP_ZOOKEEPER, --native, --zookeeper), not to a Thrift gateway"
    )]
    NotNative {
        /// The variable or flag.
        named_by: String,
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
// A Backend is made once, to connect, and its configs are kept by value so
// that callers change them in place (`match &mut backend`): boxing the
// largest (NativeConfig with TLS and Kerberos) would save a few hundred
// bytes once and make one variant unlike the others.
#[allow(clippy::large_enum_variant)]
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
    /// (`host:port`, project and instance `hmap`; `host:port/projects/P/instances/I`
    /// for another); or, for an instance's resource name
    /// `projects/P/instances/I`, on the emulator `BIGTABLE_EMULATOR_HOST`
    /// names when it is set, else on Cloud Bigtable with
    /// application-default credentials ([`BigtableConfig::from_address`]).
    #[cfg(feature = "bigtable")]
    pub fn bigtable(address: &str) -> Self {
        Backend::Bigtable(BigtableConfig::from_address(address))
    }

    /// The backend the environment variable `variable` (one of
    /// [`ENV_VARIABLES`]) names, as the
    /// [module docs](self) list them; `None` when it is unset or blank.
    pub fn from_env_var(variable: &str) -> Result<Option<Self>, BackendError> {
        if !ENV_VARIABLES.contains(&variable) {
            return Err(BackendError::UnknownVariable(variable.to_string()));
        }
        let Some(address) = env_value(variable) else {
            return Ok(None);
        };
        let mut backend = Self::named(variable, &address, env_value(CA_VARIABLE).as_deref())?;
        if matches!(variable, "HMAP_NATIVE" | "HMAP_ZOOKEEPER")
            && let Some(ca) = env_value(NATIVE_TLS_CA_VARIABLE)
        {
            let [cert, key] = NATIVE_TLS_CLIENT_VARIABLES.map(env_value);
            let client = match (cert, key) {
                (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
                (None, None) => None,
                _ => {
                    return Err(BackendError::Incomplete {
                        named_by: NATIVE_TLS_CLIENT_VARIABLES.join(" and "),
                        reason: "a client certificate needs both the chain and its key",
                    });
                }
            };
            let client = client.as_ref().map(|(c, k)| (c.as_path(), k.as_path()));
            backend.set_native_tls(Some(Path::new(&ca)), client, &format!("{NATIVE_TLS_CA_VARIABLE}={ca}"))?;
        }
        if variable != BIGTABLE_VARIABLE
            && let Some(kerberos) = KerberosSettings::from_env()?
        {
            backend.set_kerberos(&kerberos, "HMAP_PRINCIPAL/HMAP_KERBEROS")?;
        }
        Ok(Some(backend))
    }

    /// Makes the store log in with Kerberos as `settings` say (see
    /// `Kerberos`, feature `kerberos`): a `NativeStore` by HBase's
    /// SASL handshake, a Thrift client by its gateway's SASL transport
    /// (`ThriftConfig::kerberos`; an unframed gateway, which the first call
    /// says) or, in HTTP mode, by SPNEGO. Needs hmap's `kerberos` feature
    /// ([`BackendError::Feature`] without it); a Bigtable backend is
    /// [`BackendError::NotNative`]; a protection level that is none of the
    /// three is [`BackendError::Incomplete`].
    pub fn set_kerberos(&mut self, settings: &KerberosSettings, named_by: &str) -> Result<(), BackendError> {
        #[cfg(feature = "kerberos")]
        {
            use crate::security::{Kerberos, Protection};
            let mut kerberos = match &settings.keytab {
                Some((principal, keytab)) => Kerberos::keytab(principal, keytab),
                None => Kerberos::ticket_cache(),
            };
            if let Some(principal) = &settings.server_principal {
                kerberos = kerberos.server_principal(principal);
            }
            if let Some(principal) = &settings.zookeeper_principal {
                kerberos = kerberos.zookeeper_principal(principal);
            }
            if let Some(levels) = &settings.protection {
                let levels = levels
                    .split(',')
                    .map(|level| match level.trim() {
                        "privacy" | "auth-conf" => Ok(Protection::Privacy),
                        "integrity" | "auth-int" => Ok(Protection::Integrity),
                        "authentication" | "auth" => Ok(Protection::Authentication),
                        _ => Err(BackendError::Incomplete {
                            named_by: format!("{named_by}: protection {levels}"),
                            reason: "each level is privacy, integrity or authentication (hbase.rpc.protection's values)",
                        }),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                kerberos = kerberos.protection(levels);
            }
            #[cfg(feature = "thrift")]
            if let Some(config) = self.thrift_config_mut() {
                config.kerberos = Some(kerberos);
                return Ok(());
            }
            self.native_config(named_by)?.connection.kerberos = Some(kerberos);
            Ok(())
        }
        #[cfg(not(feature = "kerberos"))]
        {
            let _ = settings;
            Err(BackendError::Feature {
                named_by: named_by.to_string(),
                what: "Kerberos",
                feature: "kerberos",
            })
        }
    }

    /// The NativeStore's settings, or [`BackendError::NotNative`] naming
    /// `named_by` for a Thrift backend.
    #[cfg(feature = "native")]
    fn native_config(&mut self, named_by: &str) -> Result<&mut NativeConfig, BackendError> {
        match self {
            Backend::Native(config) => Ok(config),
            // Unreachable in a build without the Thrift backends.
            #[allow(unreachable_patterns)]
            _ => Err(BackendError::NotNative {
                named_by: named_by.to_string(),
            }),
        }
    }

    /// Makes a `NativeStore` connect over TLS (HBase 2.6's RPC TLS), the
    /// servers' certificates checked against the CA certificates in the PEM
    /// file `ca` (the platform's roots without one), with a client
    /// certificate (`(chain, key)` PEM files) for servers that demand one.
    /// Needs hmap's `tls` feature ([`BackendError::Feature`] without it);
    /// a Thrift backend is [`BackendError::NotNative`]. `named_by` is the
    /// variable or flag that asked, for the errors.
    pub fn set_native_tls(
        &mut self,
        ca: Option<&Path>,
        client: Option<(&Path, &Path)>,
        named_by: &str,
    ) -> Result<(), BackendError> {
        #[cfg(not(feature = "native"))]
        {
            let _ = (ca, client);
            Err(BackendError::NotNative {
                named_by: named_by.to_string(),
            })
        }
        #[cfg(feature = "native")]
        {
            let config = self.native_config(named_by)?;
            #[cfg(feature = "tls")]
            {
                let fail = |path: &Path, source| BackendError::Ca {
                    named_by: named_by.to_string(),
                    path: path.to_path_buf(),
                    cause: source,
                };
                let mut tls = match ca {
                    Some(path) => crate::security::Tls::with_ca_file(path).map_err(|e| fail(path, e))?,
                    None => crate::security::Tls::with_platform_roots()
                        .map_err(|e| fail(Path::new("(the platform's roots)"), e))?,
                };
                if let Some((chain, key)) = client {
                    tls = tls.client_auth_files(chain, key).map_err(|e| fail(chain, e))?;
                }
                config.connection.tls = Some(tls);
                Ok(())
            }
            #[cfg(not(feature = "tls"))]
            {
                let _ = (config, ca, client);
                Err(BackendError::Feature {
                    named_by: named_by.to_string(),
                    what: "NativeStore over TLS",
                    feature: "tls",
                })
            }
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
            Backend::Bigtable(config) if config.tls.is_some() => write!(
                f,
                "Cloud Bigtable's instance projects/{}/instances/{} at {} (BigtableStore)",
                config.project, config.instance, config.address
            ),
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(config) if (config.project.as_str(), config.instance.as_str()) == ("hmap", "hmap") => {
                write!(f, "the Bigtable emulator at {} (BigtableStore)", config.address)
            }
            #[cfg(feature = "bigtable")]
            Backend::Bigtable(config) => write!(
                f,
                "the Bigtable emulator at {}, instance projects/{}/instances/{} (BigtableStore)",
                config.address, config.project, config.instance
            ),
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
            cause: source,
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

    /// NativeStore's TLS applies to NativeStore only; a CA that cannot be
    /// read, or a build without TLS, is the error naming what asked.
    #[cfg(all(feature = "thrift", feature = "native"))]
    #[test]
    fn native_tls_is_refused_where_it_cannot_apply() {
        let ca = Path::new("/nonexistent/ca.pem");
        let err = Backend::thrift("10.0.0.1:9")
            .set_native_tls(Some(ca), None, "--ca")
            .unwrap_err();
        assert!(matches!(err, BackendError::NotNative { .. }), "{err}");
        let err = Backend::native("10.0.0.1:9")
            .set_native_tls(Some(ca), None, "--ca")
            .unwrap_err();
        #[cfg(feature = "tls")]
        assert!(
            matches!(&err, BackendError::Ca { named_by, path, .. } if named_by == "--ca" && path == ca),
            "{err}"
        );
        #[cfg(not(feature = "tls"))]
        assert!(matches!(&err, BackendError::Feature { feature: "tls", .. }), "{err}");
        assert!(err.to_string().starts_with("--ca: "), "{err}");
    }

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
        // An instance's resource name: Cloud Bigtable.
        let cloud = Backend::named(BIGTABLE_VARIABLE, "projects/p1/instances/i1", None).unwrap();
        assert_eq!(
            cloud.to_string(),
            "Cloud Bigtable's instance projects/p1/instances/i1 at bigtable.googleapis.com:443 (BigtableStore)"
        );
        let Backend::Bigtable(config) = cloud else {
            panic!("{cloud:?}")
        };
        assert_eq!(config, BigtableConfig::cloud("p1", "i1"));
        // The emulator, with an instance of its own.
        let named = Backend::named(BIGTABLE_VARIABLE, "127.0.0.1:8086/projects/p1/instances/i1", None).unwrap();
        assert_eq!(
            named.to_string(),
            "the Bigtable emulator at 127.0.0.1:8086, instance projects/p1/instances/i1 (BigtableStore)"
        );
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
