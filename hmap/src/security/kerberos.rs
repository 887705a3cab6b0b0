//! Kerberos for every backend (feature `kerberos`): the credentials, the
//! GSSAPI steps of SASL GSSAPI (RFC 4752) and the security layer after
//! them, at the three protection levels (HBase's `hbase.rpc.protection`,
//! a gateway's `hbase.thrift.security.qop`), as HBase's Java clients
//! speak them, and SPNEGO's token for HTTP. The carrier-neutral bytes are
//! [`super::sasl`]'s; each backend frames the tokens on its own wire
//! (NativeStore's RPC preamble, a Thrift gateway's SASL transport, a
//! ZooKeeper request). This file holds the credentials and the GSSAPI
//! calls.
//!
//! # Why MIT Kerberos, through declarations of hmap's own
//! GSSAPI is what HBase's Java client uses (through the JDK), and MIT
//! Kerberos' `libgssapi_krb5` is what Linux machines that talk to a
//! Kerberized cluster already have: it reads the machine's `krb5.conf`,
//! its ticket caches (`kinit`) and keytabs, and refreshes credentials from
//! a client keytab on its own. A pure-Rust Kerberos (such as the `sspi`
//! crate) would avoid the C library, but would not be the implementation
//! the cluster's own tooling (`kinit`, `krb5.conf`, keytabs, ticket caches)
//! is tested with, and it is a larger crate to audit than a binding.
//!
//! The binding is hmap's own: [`gssapi`] declares the twelve functions,
//! two OIDs and the few types and constants hmap uses (`gssapi/sys.rs`) and
//! wraps them in types that release what the library allocates (names,
//! credentials, contexts, buffers); it holds the crate's only `unsafe`
//! code. `scripts/gssapi-check` compiles the declarations, restated in C
//! (`gssapi/check.c`), against MIT's headers, and a unit test checks that
//! the restatement says what `sys.rs` says. The `libgssapi` crates used
//! before generated their bindings with bindgen at build time: 17 crates
//! (bindgen, clang-sys, regex, nom, ...) and libclang on the build machine.
//! Now the feature brings one crate (`base64`, for the gateways' SPNEGO
//! header) and no build script; it needs `libgssapi_krb5.so` to link against (Debian: `libkrb5-dev`;
//! `scripts/krb5-deps` installs it) and the library at run time, which is
//! why Kerberos is still a feature of its own, off by default. Linked
//! rather than opened with `dlopen`: a program built with the feature
//! uses the library anyway, a missing one is then said by the loader when
//! the program starts rather than at its first handshake, and `dlopen`
//! would mean more declarations (or the `libc` crate) and a function
//! pointer type per call, checked by nothing.
//!
//! # Credentials and relogin
//! From a keytab ([`Kerberos::keytab`]): `gss_acquire_cred_from`
//! with the credential store `client_keytab=<keytab>` and a fresh
//! `MEMORY:` ccache, so nothing is written to disk and no other program's
//! ticket cache is touched; MIT Kerberos gets the ticket-granting ticket
//! from the keytab at the first handshake. Before that ticket expires
//! (once less than a fifth of its lifetime is left) the next connection
//! re-acquires credentials from the keytab, so a long-running store never
//! meets the ticket's end; a connection already established keeps its
//! context (HBase does not re-authenticate an open connection). From the
//! ticket cache ([`Kerberos::ticket_cache`]): the default cache
//! (`KRB5CCNAME`), renewed by whoever filled it (`kinit`, `k5start`).
//!
//! `KRB5_CONFIG` (the `krb5.conf` to read) is MIT Kerberos' own setting,
//! read from the process environment.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use self::gssapi::sys::{
    GSS_C_CONF_FLAG, GSS_C_INTEG_FLAG, GSS_C_MUTUAL_FLAG, GSS_S_BAD_NAME, GSS_S_CREDENTIALS_EXPIRED, GSS_S_NO_CRED,
    KRB5_CC_NOTFOUND, KRB5_CONFIG_CANTOPEN, KRB5_CONFIG_NODEFREALM, KRB5_FCC_NOFILE, KRB5_KDC_UNREACH,
    KRB5_KT_NOTFOUND, KRB5_REALM_UNKNOWN, KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN, KRB5KDC_ERR_PREAUTH_FAILED,
    KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN, KRB5KRB_AP_ERR_BAD_INTEGRITY, KRB5KRB_AP_ERR_TKT_EXPIRED,
};
use self::gssapi::{ClientCtx, Cred, GssError, Name};
use super::error::{KerberosFailure, SecurityError};
use super::sasl::{self, Protection};

mod gssapi;
mod keytab;

/// Kerberos settings of a store: NativeStore's
/// (`NativeConfig::kerberos`), a Thrift backend's (`ThriftConfig::kerberos`):
/// whose credentials, the servers' principal, the protection levels
/// accepted.
/// Cheap to clone; clones share the credentials (and their relogin).
///
/// ```no_run
/// use hmap::security::{Kerberos, Protection};
/// use hmap::store::native::{NativeConfig, NativeStore};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // HBase's hbase.regionserver.kerberos.principal, and a keytab of the client's.
/// let kerberos = Kerberos::keytab("app@EXAMPLE.COM", "/etc/security/keytabs/app.keytab")
///     .server_principal("hbase/_HOST@EXAMPLE.COM")
///     .protection([Protection::Privacy]);
/// let store = NativeStore::connect(NativeConfig::new(["hbase-master.example.com:16000"]).kerberos(kerberos)).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Kerberos {
    source: Source,
    server_principal: String,
    hostname: Option<String>,
    protection: Vec<Protection>,
    zookeeper_principal: Option<String>,
    login: Arc<Mutex<Option<Login>>>,
}

impl std::fmt::Debug for Kerberos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kerberos")
            .field("source", &self.source)
            .field("server_principal", &self.server_principal)
            .field("hostname", &self.hostname)
            .field("protection", &self.protection)
            .field("zookeeper_principal", &self.zookeeper_principal)
            .finish()
    }
}

#[derive(Clone, Debug)]
enum Source {
    Keytab {
        principal: String,
        keytab: PathBuf,
    },
    /// The default ticket cache (`KRB5CCNAME`), or the one named.
    TicketCache {
        ccache: Option<String>,
    },
}

/// Credentials acquired, and what is known of their lifetime.
struct Login {
    cred: Cred,
    /// When they were acquired.
    acquired: Instant,
    /// When the ticket-granting ticket ends, once a handshake has used
    /// them (MIT Kerberos gets it from the keytab at the first one).
    expires: Option<Instant>,
}

/// Whether credentials acquired at `acquired`, whose ticket ends at
/// `expires`, should be acquired afresh at `now`: once less than a fifth
/// of their lifetime is left (at least 10 s before the end).
fn relogin_due(acquired: Instant, expires: Option<Instant>, now: Instant) -> bool {
    let Some(expires) = expires else {
        return false;
    };
    let lifetime = expires.saturating_duration_since(acquired);
    let margin = (lifetime / 5).max(Duration::from_secs(10));
    expires.saturating_duration_since(now) <= margin
}

/// A distinct `MEMORY:` ccache for each keytab login in this process.
static NEXT_CCACHE: AtomicU64 = AtomicU64::new(0);

impl Kerberos {
    /// Logs in as `principal` (`app@EXAMPLE.COM`) from the keytab file
    /// `keytab`, as HBase's `hbase.client.keytab.principal` and
    /// `hbase.client.keytab.file` do, and logs in again before the ticket
    /// expires. The servers' principal is `hbase/_HOST` in the default
    /// realm unless [`server_principal`](Self::server_principal) says
    /// otherwise; every protection level is accepted, privacy first.
    pub fn keytab(principal: impl Into<String>, keytab: impl Into<PathBuf>) -> Self {
        Self::with_source(Source::Keytab {
            principal: principal.into(),
            keytab: keytab.into(),
        })
    }

    /// Uses the tickets in the default ticket cache (`KRB5CCNAME`, filled
    /// by `kinit`), as the Java client does without a keytab. Whoever
    /// fills the cache renews it.
    pub fn ticket_cache() -> Self {
        Self::with_source(Source::TicketCache { ccache: None })
    }

    /// Uses the tickets in the ticket cache `ccache` (`FILE:/tmp/krb5cc_app`,
    /// `KEYRING:persistent:1000`, ... as `KRB5CCNAME` would name it),
    /// whatever the process's `KRB5CCNAME` says.
    pub fn ticket_cache_at(ccache: impl Into<String>) -> Self {
        Self::with_source(Source::TicketCache {
            ccache: Some(ccache.into()),
        })
    }

    /// When the ticket of the current login ends, once a handshake has
    /// used it (`None` before): a relogin moves it on.
    pub fn ticket_ends(&self) -> Option<Instant> {
        self.login
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .and_then(|login| login.expires)
    }

    fn with_source(source: Source) -> Self {
        Kerberos {
            source,
            server_principal: "hbase/_HOST".to_string(),
            hostname: None,
            protection: Protection::ALL.to_vec(),
            zookeeper_principal: None,
            login: Arc::default(),
        }
    }

    /// The servers' principal: HBase's `hbase.regionserver.kerberos.principal`
    /// (and `hbase.master.kerberos.principal`), `hbase/_HOST@EXAMPLE.COM`
    /// or a fixed one (`hbase/node1.example.com@EXAMPLE.COM`). `_HOST`
    /// becomes [`hostname`](Self::hostname) if set, else the host each
    /// connection dials, lower-cased. (The Java client asks reverse DNS
    /// for the name of the server's address; hmap does not: servers
    /// registered by IP address need `hostname` or a fixed principal.)
    pub fn server_principal(mut self, principal: impl Into<String>) -> Self {
        self.server_principal = principal.into();
        self
    }

    /// What `_HOST` in the servers' principal becomes, for every server.
    pub fn hostname(mut self, hostname: impl Into<String>) -> Self {
        self.hostname = Some(hostname.into());
        self
    }

    /// The protection levels accepted, most wanted first (all three,
    /// privacy first, by default): the first one the server's
    /// `hbase.rpc.protection` offers is chosen; none in common fails the
    /// connection with [`KerberosFailure::ProtectionRefused`].
    pub fn protection(mut self, levels: impl IntoIterator<Item = Protection>) -> Self {
        self.protection = levels.into_iter().collect();
        self
    }

    /// Authenticates to the ZooKeeper quorum too, by SASL, as a secured
    /// cluster's ZooKeeper may demand of every client
    /// (`zookeeper.sessionRequireClientSASLAuth`), with `principal` the
    /// quorum's (`zookeeper/_HOST@EXAMPLE.COM`, `_HOST` as for
    /// [`server_principal`](Self::server_principal); the Java client's
    /// `zookeeper.sasl.client.username` and the server's host name). Only
    /// when the store bootstraps through ZooKeeper
    /// (`NativeConfig::zookeeper`); without it, ZooKeeper is read without
    /// authentication, which HBase's world-readable znodes allow unless the
    /// quorum demands SASL. The login is this one's.
    pub fn zookeeper_principal(mut self, principal: impl Into<String>) -> Self {
        self.zookeeper_principal = Some(principal.into());
        self
    }

    /// The login for the ZooKeeper quorum, if it is to authenticate there:
    /// this one with the quorum's principal, choosing authentication (the
    /// level ZooKeeper offers; it wraps nothing) when offered.
    pub(crate) fn for_zookeeper(&self) -> Option<Kerberos> {
        let principal = self.zookeeper_principal.clone()?;
        let mut login = self.clone().server_principal(principal);
        login.protection = vec![Protection::Authentication, Protection::Integrity, Protection::Privacy];
        Some(login)
    }

    /// The servers' principal for a connection to `endpoint`.
    pub fn server_principal_for(&self, endpoint: &str) -> String {
        let host = match &self.hostname {
            Some(host) => host.clone(),
            None => {
                let host = endpoint.rsplit_once(':').map_or(endpoint, |(host, _)| host);
                host.trim_start_matches('[').trim_end_matches(']').to_lowercase()
            }
        };
        self.server_principal.replace("_HOST", &host)
    }

    /// The credentials for the next handshake: the ones held, or fresh
    /// ones when none are held or their relogin is due. Acquiring reads
    /// the keytab (blocking), so it runs off the runtime's threads.
    async fn credentials(&self, endpoint: &str) -> Result<Cred, SecurityError> {
        {
            let login = self.login.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(login) = login.as_ref()
                && !relogin_due(login.acquired, login.expires, Instant::now())
            {
                return Ok(login.cred.clone());
            }
        }
        let source = self.source.clone();
        let cred = tokio::task::spawn_blocking(move || acquire(&source))
            .await
            .map_err(|e| {
                failure(
                    endpoint,
                    KerberosFailure::Gssapi,
                    format!("acquiring credentials failed: {e}"),
                )
            })?
            .map_err(|(kind, reason)| failure(endpoint, kind, reason))?;
        tracing::debug!(endpoint, "hmap native: Kerberos credentials acquired");
        *self.login.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Login {
            cred: cred.clone(),
            acquired: Instant::now(),
            expires: None,
        });
        Ok(cred)
    }

    /// After a handshake with `cred` (which got the ticket-granting ticket
    /// if there was none): when that ticket ends.
    fn note_lifetime(&self, cred: &Cred) {
        let Ok(left) = cred.lifetime() else {
            return;
        };
        let mut login = self.login.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // A relogin between this handshake and now would get the older
        // ticket's end: an earlier relogin, never a later one.
        if let Some(login) = login.as_mut()
            && login.expires.is_none()
        {
            login.expires = Some(Instant::now() + left);
        }
    }
}

fn failure(endpoint: &str, kind: KerberosFailure, reason: String) -> SecurityError {
    SecurityError::Kerberos {
        endpoint: endpoint.to_string(),
        failure: kind,
        reason,
    }
}

/// Acquires credentials (blocking: reads the keytab or the ticket cache).
fn acquire(source: &Source) -> Result<Cred, (KerberosFailure, String)> {
    check_krb5_config(std::env::var_os("KRB5_CONFIG").as_deref())?;
    match source {
        Source::TicketCache { ccache } => {
            let acquired = match ccache {
                None => Cred::acquire_default(),
                Some(ccache) => match CString::new(ccache.as_str()) {
                    Ok(name) => Cred::acquire_from(None, &[(c"ccache", &name)]),
                    Err(_) => Err(GssError {
                        major: GSS_S_BAD_NAME,
                        minor: 0,
                    }),
                },
            };
            acquired.map_err(|e| {
                let (kind, text) = classify(&e);
                let kind = if kind == KerberosFailure::Gssapi {
                    KerberosFailure::NoCredentials
                } else {
                    kind
                };
                let cache = ccache.as_deref().unwrap_or("the default one, KRB5CCNAME");
                (
                    kind,
                    format!(
                        "no usable ticket in the ticket cache ({cache}): run kinit, or log in from a keytab \
                         with `Kerberos::keytab` ({text})"
                    ),
                )
            })
        }
        Source::Keytab { principal, keytab } => {
            check_keytab(principal, keytab)?;
            // MIT Kerberos gets the ticket-granting ticket here: a stale
            // key or a realm krb5.conf does not know fail now.
            acquire_from_keytab(principal, keytab).map_err(|e| {
                let (kind, reason) = explain(&e, None, source, "hbase.rpc.protection");
                (kind, format!("logging in as {principal} failed: {reason}"))
            })
        }
    }
}

/// Reads the keytab and checks that it is one and holds a key of
/// `principal`, so that each of those mistakes is told as itself (MIT
/// Kerberos says "No credentials cache found" to all of them, and only at
/// the first handshake).
fn check_keytab(principal: &str, path: &Path) -> Result<(), (KerberosFailure, String)> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| {
        (
            KerberosFailure::KeytabUnreadable,
            format!(
                "the keytab {shown} cannot be read: {e} (`Kerberos::keytab`'s file must exist and be \
                 readable by this process)"
            ),
        )
    })?;
    keytab::check(&bytes, principal).map_err(|problem| match problem {
        keytab::Problem::Invalid(why) => (
            KerberosFailure::KeytabInvalid,
            format!(
                "the file {shown} is not a keytab ({why}, {} bytes): export the principal's keys into it again \
                 (kadmin's ktadd, ktutil, or the KDC's export)",
                bytes.len()
            ),
        ),
        keytab::Problem::NoKeyFor(held) => {
            const SHOWN: usize = 8;
            let more = held.len().saturating_sub(SHOWN);
            let mut list = held.into_iter().take(SHOWN).collect::<Vec<_>>().join(", ");
            if more > 0 {
                list.push_str(&format!(" and {more} more"));
            }
            (
                KerberosFailure::PrincipalNotInKeytab,
                format!(
                    "the keytab {shown} holds no key of {principal} (it holds keys of {list}): log in as a \
                     principal it holds, or export {principal}'s key into it (kadmin: ktadd -k {shown} {principal})"
                ),
            )
        }
    })
}

/// Checks that the krb5.conf `KRB5_CONFIG` names (`value`; a `:`-separated
/// list) exists: MIT Kerberos skips files that do not, and then knows no
/// realm at all ("Cannot find KDC for realm"), which names neither the
/// variable nor the file.
fn check_krb5_config(value: Option<&std::ffi::OsStr>) -> Result<(), (KerberosFailure, String)> {
    use std::os::unix::ffi::OsStrExt;

    let Some(value) = value else {
        return Ok(());
    };
    let files: Vec<&Path> = value
        .as_bytes()
        .split(|&b| b == b':')
        .filter(|file| !file.is_empty())
        .map(|file| Path::new(std::ffi::OsStr::from_bytes(file)))
        .collect();
    if files.iter().any(|file| file.is_file()) {
        return Ok(());
    }
    Err((
        KerberosFailure::Krb5Config,
        format!(
            "KRB5_CONFIG={} names no krb5.conf that exists: set KRB5_CONFIG to the cluster's krb5.conf (its \
             [realms] section names the realm's kdc)",
            value.to_string_lossy()
        ),
    ))
}

/// The realm of a principal (`app@EXAMPLE.COM`), if it names one.
fn realm_of(principal: &str) -> Option<&str> {
    principal
        .rsplit_once('@')
        .map(|(_, realm)| realm)
        .filter(|realm| !realm.is_empty())
}

/// Where MIT Kerberos read its configuration from, for messages.
fn krb5_config_source() -> String {
    match std::env::var("KRB5_CONFIG") {
        Ok(file) => format!("KRB5_CONFIG={file}"),
        Err(_) => "/etc/krb5.conf: KRB5_CONFIG is not set".to_string(),
    }
}

/// `gss_acquire_cred_from` with `client_keytab` and a fresh `MEMORY:`
/// ccache.
fn acquire_from_keytab(principal: &str, keytab: &Path) -> Result<Cred, GssError> {
    use std::os::unix::ffi::OsStrExt;

    let bad_name = || GssError {
        major: GSS_S_BAD_NAME,
        minor: 0,
    };
    let keytab = CString::new(keytab.as_os_str().as_bytes()).map_err(|_| bad_name())?;
    // Each login its own cache: a new login must not find the old ticket.
    // (An in-memory cache lives as long as the process: a few KiB a
    // relogin, once per ticket lifetime.)
    let ccache = CString::new(format!(
        "MEMORY:hmap-{}-{}",
        std::process::id(),
        NEXT_CCACHE.fetch_add(1, Ordering::Relaxed)
    ))
    .map_err(|_| bad_name())?;
    let name = Name::principal(principal.as_bytes())?;
    Cred::acquire_from(Some(&name), &[(c"client_keytab", &keytab), (c"ccache", &ccache)])
}

/// What a GSSAPI error means for the user, and its text.
fn classify(e: &GssError) -> (KerberosFailure, String) {
    let text = e.to_string();
    let kind = match e.minor as i32 {
        KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN => KerberosFailure::ServerPrincipalUnknown,
        KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN | KRB5KDC_ERR_PREAUTH_FAILED => KerberosFailure::ClientPrincipalUnknown,
        KRB5_KDC_UNREACH => KerberosFailure::KdcUnreachable,
        KRB5_REALM_UNKNOWN | KRB5_CONFIG_CANTOPEN | KRB5_CONFIG_NODEFREALM => KerberosFailure::Krb5Config,
        KRB5_KT_NOTFOUND | KRB5_FCC_NOFILE | KRB5_CC_NOTFOUND | KRB5KRB_AP_ERR_TKT_EXPIRED => {
            KerberosFailure::NoCredentials
        }
        _ if [GSS_S_NO_CRED, GSS_S_CREDENTIALS_EXPIRED].contains(&e.routine_error()) => KerberosFailure::NoCredentials,
        _ => KerberosFailure::Gssapi,
    };
    (kind, text)
}

/// The reason to give for a failed context step, with what to change.
/// `service` is the server's setting of its protection levels, which says
/// what kind of server it is (see [`principal_setting`]).
fn step_failure(e: &GssError, server: &str, source: &Source, service: &str) -> (KerberosFailure, String) {
    explain(e, Some(server), source, service)
}

/// What a failed GSSAPI call means, and what to change: a context step
/// towards `server`, or (`None`) the login itself.
fn explain(e: &GssError, server: Option<&str>, source: &Source, service: &str) -> (KerberosFailure, String) {
    let (mut kind, text) = classify(e);
    let client = match source {
        Source::Keytab { principal, keytab } => format!("{principal} (keytab {})", keytab.display()),
        Source::TicketCache { .. } => "the ticket cache's principal".to_string(),
    };
    // With a keytab, a reply that does not decrypt (or, from a KDC that
    // demands pre-authentication, a refused one) is a key the KDC no
    // longer holds: the principal's key changed after the export.
    if let Source::Keytab { .. } = source
        && matches!(
            e.minor as i32,
            KRB5KRB_AP_ERR_BAD_INTEGRITY | KRB5KDC_ERR_PREAUTH_FAILED
        )
    {
        kind = KerberosFailure::StaleKeytab;
    }
    let reason = match kind {
        KerberosFailure::ServerPrincipalUnknown => format!(
            "the KDC does not know the server principal {} ({text}): set {} with \
             `Kerberos::server_principal`, and the host `_HOST` stands for with `Kerberos::hostname`",
            server.unwrap_or("asked for"),
            principal_setting(service)
        ),
        KerberosFailure::ClientPrincipalUnknown => {
            format!("the KDC does not know the client {client} ({text}): the principal must exist in the KDC's realm")
        }
        KerberosFailure::StaleKeytab => match source {
            Source::Keytab { principal, keytab } => format!(
                "the keytab {} holds a key of {principal} that the KDC no longer accepts ({text}): the \
                 principal's key changed (a new key version) after the keytab was exported; export the keytab \
                 again (kadmin: ktadd -k {} {principal}; note that ktadd itself makes a new key)",
                keytab.display(),
                keytab.display()
            ),
            Source::TicketCache { .. } => format!("the KDC refused the client's key ({text})"),
        },
        KerberosFailure::NoCredentials => format!(
            "no usable credentials for {client} ({text}): for a keytab, it must hold the principal's key; for \
             the ticket cache, run kinit (the ticket may have expired)"
        ),
        KerberosFailure::KdcUnreachable => format!(
            "the KDC cannot be reached ({text}): check the realm's kdc in the krb5.conf MIT Kerberos read ({})",
            krb5_config_source()
        ),
        KerberosFailure::Krb5Config => {
            let mut realms: Vec<&str> = match source {
                Source::Keytab { principal, .. } => [realm_of(principal), server.and_then(realm_of)],
                Source::TicketCache { .. } => [None, server.and_then(realm_of)],
            }
            .into_iter()
            .flatten()
            .collect();
            realms.dedup();
            let realm = match realms.as_slice() {
                [] => "the realm".to_string(),
                [one] => format!("the realm {one}"),
                many => format!("the realms {}", many.join(" and ")),
            };
            format!(
                "MIT Kerberos finds no KDC for {realm} ({text}) in the krb5.conf it read ({}): set KRB5_CONFIG \
                 to the cluster's krb5.conf, whose [realms] section names the realm's kdc",
                krb5_config_source()
            )
        }
        _ => match server {
            Some(server) => format!("the GSSAPI context for {server} failed: {text}"),
            None => text,
        },
    };
    (kind, reason)
}

/// The server's setting that names its principal, from the setting of its
/// protection levels (which each caller of [`GssapiSasl::start`] names):
/// HBase's RPC, a Thrift gateway over SASL or over HTTP (SPNEGO), a
/// ZooKeeper quorum.
fn principal_setting(service: &str) -> &'static str {
    match service {
        "hbase.thrift.security.qop" => "the gateway's hbase.thrift.kerberos.principal",
        "hbase.thrift.spnego.principal" => "the gateway's hbase.thrift.spnego.principal",
        s if s.starts_with("ZooKeeper") => "the ZooKeeper quorum's principal (`Kerberos::zookeeper_principal`)",
        _ => "the cluster's hbase.regionserver.kerberos.principal",
    }
}

/// The security layer of an established connection, for integrity or
/// privacy: every message is `gss_wrap`ped (and encrypted for privacy)
/// and sent as `[u32 length][wrapped]`; every reply unwrapped.
pub(crate) struct SaslWrap {
    context: Mutex<ClientCtx>,
    encrypt: bool,
}

impl std::fmt::Debug for SaslWrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslWrap").field("encrypt", &self.encrypt).finish()
    }
}

impl SaslWrap {
    /// Wraps `plain` and appends it to `out`, length first.
    pub(crate) fn wrap(&self, plain: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let wrapped = self
            .context
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .wrap(self.encrypt, plain)
            .map_err(|e| format!("gss_wrap failed: {e}"))?;
        sasl::encode_wrapped(&wrapped, out)
    }

    /// Unwraps one wrapped message (without its length).
    pub(crate) fn unwrap(&self, wrapped: &[u8]) -> Result<Vec<u8>, String> {
        self.context
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .unwrap(wrapped)
            .map_err(|e| format!("gss_unwrap failed: {e}"))
    }
}

/// The most rounds of tokens a handshake may take (Kerberos takes two).
pub(crate) const MAX_ROUNDS: usize = 8;

/// The client's side of SASL GSSAPI (RFC 4752) on one new connection, token
/// by token, whatever carries the tokens: HBase's RPC (its own framing,
/// NativeStore's `rpc_sasl` module), a ZooKeeper quorum's SASL requests,
/// or a Thrift gateway's `TSaslClientTransport` (the Thrift backends'
/// `sasl` module). [`start`](Self::start) gives the first token;
/// each server token goes to [`step`](Self::step), which answers with the
/// next token to send, then, once the GSSAPI context is complete and the
/// server's security layer offer came, with the answer that ends the
/// exchange and the layer chosen.
pub(crate) struct GssapiSasl<'a> {
    kerberos: &'a Kerberos,
    /// The server's setting of its protection levels, for the error when
    /// none is accepted.
    setting: &'static str,
    endpoint: &'a str,
    server: String,
    cred: Cred,
    /// `None` once the layer took it.
    context: Option<ClientCtx>,
}

/// What to send after a server token.
pub(crate) enum SaslStep {
    /// A GSSAPI token (empty once the context is complete: it asks for the
    /// server's security layer offer).
    Token(Vec<u8>),
    /// The answer to the security layer offer (`gss_wrap`ped), the last
    /// message of the exchange, and the layer every later message goes
    /// through.
    Done {
        answer: Vec<u8>,
        /// `None` for authentication: messages travel as they are.
        wrap: Option<Arc<SaslWrap>>,
    },
}

impl<'a> GssapiSasl<'a> {
    /// Credentials (a relogin if due), the servers' principal for
    /// `endpoint`, and the first GSSAPI token, which asks the KDC for the
    /// server's ticket (blocking network calls, run off the runtime's
    /// threads). `setting` is the server's setting of its protection levels
    /// (`hbase.rpc.protection`), for the error when none is accepted.
    pub(crate) async fn start(
        kerberos: &'a Kerberos,
        endpoint: &'a str,
        setting: &'static str,
    ) -> Result<(Self, Vec<u8>), SecurityError> {
        let fail = |kind, reason| failure(endpoint, kind, reason);
        let cred = kerberos.credentials(endpoint).await?;
        let server = kerberos.server_principal_for(endpoint);
        let target = Name::principal(server.as_bytes()).map_err(|e| {
            fail(
                KerberosFailure::ServerPrincipalUnknown,
                format!("`{server}` is not a Kerberos principal name ({e}): see `Kerberos::server_principal`"),
            )
        })?;
        let flags = GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG;
        let mut context = ClientCtx::new(cred.clone(), target, flags);
        // The first step asks the KDC for the server's ticket (and, the
        // first time, the keytab's ticket-granting ticket).
        let (context, first) = tokio::task::spawn_blocking(move || {
            let token = context.step(None);
            (context, token)
        })
        .await
        .map_err(|e| fail(KerberosFailure::Gssapi, format!("the GSSAPI step failed: {e}")))?;
        let first = first.map_err(|e| {
            let (kind, reason) = step_failure(&e, &server, &kerberos.source, setting);
            fail(kind, reason)
        })?;
        let sasl = GssapiSasl {
            kerberos,
            setting,
            endpoint,
            server,
            cred,
            context: Some(context),
        };
        Ok((sasl, first))
    }

    /// The server principal asked for, for error messages.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// What to send after the server's `token`.
    pub(crate) fn step(&mut self, token: &[u8]) -> Result<SaslStep, SecurityError> {
        let endpoint = self.endpoint;
        let fail = |kind, reason| failure(endpoint, kind, reason);
        let Some(context) = self.context.as_mut() else {
            return Err(fail(
                KerberosFailure::Gssapi,
                "a server token after the security layer was chosen".to_string(),
            ));
        };
        if !context.is_complete() {
            let next = context.step(Some(token)).map_err(|e| {
                let (kind, reason) = step_failure(&e, &self.server, &self.kerberos.source, self.setting);
                fail(kind, reason)
            })?;
            return Ok(SaslStep::Token(next));
        }
        let offer = context.unwrap(token).map_err(|e| {
            fail(
                KerberosFailure::Gssapi,
                format!("the security layer offer does not unwrap: {e}"),
            )
        })?;
        let offer = sasl::parse_offer(&offer).map_err(|reason| fail(KerberosFailure::Gssapi, reason))?;
        let chosen = sasl::choose(offer, &self.kerberos.protection, self.setting)
            .map_err(|refused| fail(KerberosFailure::ProtectionRefused, refused.to_string()))?;
        let answer = context
            .wrap(false, &sasl::encode_answer(chosen))
            .map_err(|e| fail(KerberosFailure::Gssapi, format!("gss_wrap failed: {e}")))?;
        self.kerberos.note_lifetime(&self.cred);
        tracing::debug!(endpoint, protection = %chosen, "hmap: Kerberos handshake done");
        let wrap = match self.context.take() {
            Some(context) if chosen.wraps() => Some(Arc::new(SaslWrap {
                context: Mutex::new(context),
                encrypt: chosen == Protection::Privacy,
            })),
            _ => None,
        };
        Ok(SaslStep::Done { answer, wrap })
    }
}

/// The token of one HTTP request to `endpoint` by SPNEGO (RFC 4559's
/// `Authorization: Negotiate`, as HBase's Thrift gateway in HTTP mode
/// checks it on every request): a fresh Kerberos initial context token
/// for the servers' principal (the gateway's `hbase.thrift.spnego.principal`,
/// `HTTP/_HOST@REALM`), which the gateway accepts in one step.
#[cfg(feature = "thrift")]
pub(crate) async fn negotiate_token(kerberos: &Kerberos, endpoint: &str) -> Result<Vec<u8>, SecurityError> {
    let (_, token) = GssapiSasl::start(kerberos, endpoint, "hbase.thrift.spnego.principal").await?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::gssapi::sys::GSS_S_FAILURE;
    use super::*;

    #[test]
    fn host_is_substituted_lower_cased() {
        let k = Kerberos::keytab("a@R", "/k").server_principal("hbase/_HOST@R");
        assert_eq!(
            k.server_principal_for("Node1.Example.com:16020"),
            "hbase/node1.example.com@R"
        );
        assert_eq!(k.server_principal_for("[::1]:16020"), "hbase/::1@R");
        let k = k.hostname("localhost");
        assert_eq!(k.server_principal_for("127.0.0.1:16020"), "hbase/localhost@R");
        let fixed = Kerberos::ticket_cache().server_principal("hbase/fixed@R");
        assert_eq!(fixed.server_principal_for("127.0.0.1:1"), "hbase/fixed@R");
        // The default: hbase/_HOST in the default realm.
        assert_eq!(Kerberos::ticket_cache().server_principal_for("h:1"), "hbase/h");
    }

    #[test]
    fn relogin_is_due_in_the_last_fifth_of_the_lifetime() {
        let t0 = Instant::now();
        let hour = Duration::from_secs(3600);
        assert!(!relogin_due(t0, None, t0 + 10 * hour), "unknown lifetime: keep");
        assert!(!relogin_due(t0, Some(t0 + hour), t0));
        assert!(!relogin_due(t0, Some(t0 + hour), t0 + hour * 3 / 4));
        assert!(relogin_due(t0, Some(t0 + hour), t0 + hour * 81 / 100));
        assert!(relogin_due(t0, Some(t0 + hour), t0 + 2 * hour), "expired");
        // A short ticket is renewed at least 10 s before its end.
        let short = Duration::from_secs(30);
        assert!(!relogin_due(t0, Some(t0 + short), t0 + Duration::from_secs(19)));
        assert!(relogin_due(t0, Some(t0 + short), t0 + Duration::from_secs(21)));
    }

    #[test]
    fn an_unreadable_keytab_is_named() {
        let source = Source::Keytab {
            principal: "app@R".to_string(),
            keytab: PathBuf::from("/nonexistent/app.keytab"),
        };
        let (kind, reason) = acquire(&source).expect_err("no keytab");
        assert_eq!(kind, KerberosFailure::KeytabUnreadable);
        assert!(reason.contains("/nonexistent/app.keytab"), "{reason}");
    }

    #[test]
    fn a_ticket_cache_that_does_not_exist_has_no_credentials() {
        // MIT Kerberos itself answers (gss_acquire_cred_from with a ccache).
        let source = Source::TicketCache {
            ccache: Some("FILE:/nonexistent/hmap-krb5cc".to_string()),
        };
        let (kind, reason) = acquire(&source).expect_err("no ticket cache");
        assert_eq!(kind, KerberosFailure::NoCredentials, "{reason}");
        assert!(reason.contains("FILE:/nonexistent/hmap-krb5cc"), "{reason}");
        assert!(reason.contains("No credentials were supplied"), "{reason}");
        // A name GSSAPI cannot take is refused before it is asked.
        let source = Source::TicketCache {
            ccache: Some("FILE:/tmp/a\0b".to_string()),
        };
        assert_eq!(acquire(&source).expect_err("a NUL").0, KerberosFailure::NoCredentials);
    }

    const RPC: &str = "hbase.rpc.protection";

    /// A file of `bytes` in the temporary directory, removed on drop.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, bytes: &[u8]) -> TempFile {
            let path = std::env::temp_dir().join(format!("hmap-{}-{name}", std::process::id()));
            std::fs::write(&path, bytes).expect("a temporary file");
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn keytab_login(principal: &str, file: &TempFile) -> Source {
        Source::Keytab {
            principal: principal.to_string(),
            keytab: file.0.clone(),
        }
    }

    #[test]
    fn a_file_that_is_no_keytab_is_named_before_gssapi_reads_it() {
        let whole = keytab::tests::keytab(&[(&["app"], "R")]);
        for (name, bytes, says) in [
            (
                "garbage.keytab",
                &b"not a keytab at all"[..],
                "does not start as a keytab",
            ),
            ("empty.keytab", &b""[..], "empty"),
            ("truncated.keytab", &whole[..whole.len() - 5], "cut short"),
        ] {
            let file = TempFile::new(name, bytes);
            let (kind, reason) = acquire(&keytab_login("app@R", &file)).expect_err(name);
            assert_eq!(kind, KerberosFailure::KeytabInvalid, "{name}: {reason}");
            assert!(reason.contains(says), "{name}: {reason}");
            assert!(reason.contains(&file.0.display().to_string()), "{reason}");
            assert!(reason.contains("export"), "{reason}");
        }
    }

    #[test]
    fn a_principal_the_keytab_does_not_hold_is_named_with_those_it_holds() {
        let file = TempFile::new(
            "other.keytab",
            &keytab::tests::keytab(&[(&["hbase", "localhost"], "R"), (&["svc"], "R")]),
        );
        let (kind, reason) = acquire(&keytab_login("app@R", &file)).expect_err("not held");
        assert_eq!(kind, KerberosFailure::PrincipalNotInKeytab, "{reason}");
        assert!(reason.contains("holds no key of app@R"), "{reason}");
        assert!(reason.contains("hbase/localhost@R, svc@R"), "{reason}");
        assert!(reason.contains("ktadd"), "{reason}");
        assert!(!kind.is_transient());
    }

    #[test]
    fn a_keytab_with_a_stale_key_is_told_to_be_exported_again() {
        let e = |minor: i32| GssError {
            major: GSS_S_FAILURE,
            minor: minor as u32,
        };
        let file = TempFile::new("stale.keytab", &keytab::tests::keytab(&[(&["app"], "R")]));
        let login = keytab_login("app@R", &file);
        // What MIT Kerberos says of a key version the KDC moved past
        // ("Decrypt integrity check failed"), and what a KDC demanding
        // pre-authentication says of it.
        for minor in [KRB5KRB_AP_ERR_BAD_INTEGRITY, KRB5KDC_ERR_PREAUTH_FAILED] {
            let (kind, reason) = step_failure(&e(minor), "hbase/h@R", &login, RPC);
            assert_eq!(kind, KerberosFailure::StaleKeytab, "{reason}");
            assert!(reason.contains("export the keytab again"), "{reason}");
            assert!(!kind.is_transient());
            // MIT Kerberos fails so at the login already (gss_acquire_cred_from
            // with a client keytab gets the ticket-granting ticket), with
            // GSS_S_NO_CRED.
            let at_login = GssError {
                major: GSS_S_NO_CRED,
                minor: minor as u32,
            };
            let (kind, reason) = explain(&at_login, None, &login, RPC);
            assert_eq!(kind, KerberosFailure::StaleKeytab, "{reason}");
            assert!(reason.contains("export the keytab again"), "{reason}");
        }
        // From the ticket cache it is no keytab's fault.
        let cache = Source::TicketCache { ccache: None };
        assert_eq!(
            step_failure(&e(KRB5KDC_ERR_PREAUTH_FAILED), "hbase/h@R", &cache, RPC).0,
            KerberosFailure::ClientPrincipalUnknown
        );
    }

    #[test]
    fn a_realm_krb5_conf_does_not_know_names_krb5_config() {
        let e = GssError {
            major: GSS_S_FAILURE,
            minor: KRB5_REALM_UNKNOWN as u32,
        };
        let login = Source::Keytab {
            principal: "app@HMAP.TEST".to_string(),
            keytab: PathBuf::from("/k"),
        };
        let (kind, reason) = step_failure(&e, "hbase/localhost@HMAP.TEST", &login, RPC);
        assert_eq!(kind, KerberosFailure::Krb5Config);
        for says in ["KRB5_CONFIG", "krb5.conf", "the realm HMAP.TEST"] {
            assert!(reason.contains(says), "no `{says}` in {reason}");
        }
        for minor in [KRB5_CONFIG_CANTOPEN, KRB5_CONFIG_NODEFREALM] {
            let e = GssError {
                major: GSS_S_FAILURE,
                minor: minor as u32,
            };
            assert_eq!(classify(&e).0, KerberosFailure::Krb5Config);
        }
        // At the login (the keytab's ticket-granting ticket): the client's realm.
        let (kind, reason) = explain(&e, None, &login, RPC);
        assert_eq!(kind, KerberosFailure::Krb5Config);
        assert!(reason.contains("no KDC for the realm HMAP.TEST"), "{reason}");
        assert!(!kind.is_transient());
        // KRB5_CONFIG naming no file that exists is said before GSSAPI runs.
        let (kind, reason) =
            check_krb5_config(Some(std::ffi::OsStr::new("/nonexistent/krb5.conf"))).expect_err("no file");
        assert_eq!(kind, KerberosFailure::Krb5Config);
        assert!(reason.contains("KRB5_CONFIG=/nonexistent/krb5.conf"), "{reason}");
        let file = TempFile::new("krb5.conf", b"[libdefaults]\n");
        let list = format!("/nonexistent/krb5.conf:{}", file.0.display());
        assert!(check_krb5_config(Some(std::ffi::OsStr::new(&list))).is_ok());
        assert!(check_krb5_config(None).is_ok());
    }

    #[test]
    fn the_server_principal_hint_names_the_servers_own_setting() {
        let e = GssError {
            major: GSS_S_FAILURE,
            minor: KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN as u32,
        };
        let source = Source::TicketCache { ccache: None };
        let hint = |service| step_failure(&e, "x/h@R", &source, service).1;
        assert!(hint(RPC).contains("hbase.regionserver.kerberos.principal"));
        let thrift = hint("hbase.thrift.security.qop");
        assert!(thrift.contains("hbase.thrift.kerberos.principal"), "{thrift}");
        assert!(!thrift.contains("regionserver"), "{thrift}");
        assert!(hint("hbase.thrift.spnego.principal").contains("the gateway's hbase.thrift.spnego.principal"));
        assert!(hint("ZooKeeper's SASL quality of protection").contains("zookeeper_principal"));
    }

    #[test]
    fn errors_are_classified_by_mit_codes() {
        let e = |minor: i32| GssError {
            major: GSS_S_FAILURE,
            minor: minor as u32,
        };
        let server = "hbase/x@R";
        let source = Source::TicketCache { ccache: None };
        let (kind, reason) = step_failure(&e(KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN), server, &source, RPC);
        assert_eq!(kind, KerberosFailure::ServerPrincipalUnknown);
        assert!(reason.contains("Kerberos::server_principal"), "{reason}");
        assert_eq!(
            step_failure(&e(KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN), server, &source, RPC).0,
            KerberosFailure::ClientPrincipalUnknown
        );
        assert_eq!(
            step_failure(&e(KRB5_FCC_NOFILE), server, &source, RPC).0,
            KerberosFailure::NoCredentials
        );
        assert_eq!(
            step_failure(&e(KRB5_KDC_UNREACH), server, &source, RPC).0,
            KerberosFailure::KdcUnreachable
        );
        assert_eq!(step_failure(&e(0), server, &source, RPC).0, KerberosFailure::Gssapi);
        let no_cred = GssError {
            major: GSS_S_NO_CRED,
            minor: 0,
        };
        assert_eq!(classify(&no_cred).0, KerberosFailure::NoCredentials);
        // GSS_S_FAILURE (13) shares bits with GSS_S_NO_CRED (7), and is not it.
        assert_eq!(classify(&e(0)).0, KerberosFailure::Gssapi);
    }
}
