//! The errors of a security handshake, whichever backend ran it: a
//! [`SecurityError`] is what NativeStore's RPC connections, its ZooKeeper
//! sessions' logins and the Thrift backends' SASL and SPNEGO report alike.
//! NativeStore wraps it as [`NativeError::Security`](crate::store::native::NativeError::Security);
//! every backend hands it on as the `cause` of a
//! [`StoreError::Connection`](crate::store::StoreError::Connection), where
//! [`StoreError::is_transient`](crate::store::StoreError::is_transient)
//! reads it.

/// A security handshake with a server failed. Each kind says what to
/// change; see [`is_refusal`](Self::is_refusal) for which may pass by
/// themselves.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecurityError {
    /// Kerberos with the server failed (feature `kerberos`), or the server
    /// demands Kerberos of a client without it: see [`KerberosFailure`]
    /// for what to change.
    #[error("Kerberos with {endpoint} failed: {reason}")]
    Kerberos {
        /// The server's address.
        endpoint: String,
        /// What kind of failure.
        failure: KerberosFailure,
        /// What failed, and what to change.
        reason: String,
    },
}

impl SecurityError {
    /// A Kerberos failure of kind `failure` with `endpoint`.
    pub fn kerberos(endpoint: impl Into<String>, failure: KerberosFailure, reason: impl Into<String>) -> Self {
        SecurityError::Kerberos {
            endpoint: endpoint.into(),
            failure,
            reason: reason.into(),
        }
    }

    /// The server's address.
    pub fn endpoint(&self) -> &str {
        match self {
            SecurityError::Kerberos { endpoint, .. } => endpoint,
        }
    }

    /// The kind of Kerberos failure.
    pub fn kerberos_failure(&self) -> Option<KerberosFailure> {
        match self {
            SecurityError::Kerberos { failure, .. } => Some(*failure),
        }
    }

    /// Whether the server (or the KDC) refused the client's settings, so
    /// that trying again fails the same way until they change: every
    /// Kerberos failure but an unreachable KDC.
    pub fn is_refusal(&self) -> bool {
        match self {
            SecurityError::Kerberos { failure, .. } => !failure.is_transient(),
        }
    }
}

/// What went wrong with Kerberos ([`SecurityError::Kerberos`]), each kind
/// with a setting to change. Only [`KdcUnreachable`](Self::KdcUnreachable)
/// may pass by itself ([`is_transient`](Self::is_transient)); every other
/// kind fails the same way until the settings change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KerberosFailure {
    /// The KDC does not know the servers' principal: set the cluster's
    /// `hbase.regionserver.kerberos.principal` (a Thrift gateway's
    /// `hbase.thrift.kerberos.principal`, or `hbase.thrift.spnego.principal`
    /// over HTTP) with `Kerberos::server_principal`, and the host
    /// `_HOST` stands for with `Kerberos::hostname`.
    ServerPrincipalUnknown,
    /// The KDC does not know the client's principal (or, for the ticket
    /// cache's principal, refused its pre-authentication).
    ClientPrincipalUnknown,
    /// The keytab holds a key of the principal that the KDC no longer
    /// accepts (MIT Kerberos: "Decrypt integrity check failed", or
    /// "Preauthentication failed" from a KDC that demands it): the
    /// principal's key changed, a new key version, after the keytab was
    /// exported. Export the keytab again.
    StaleKeytab,
    /// No usable credentials: no ticket in the ticket cache (run `kinit`),
    /// or an expired one.
    NoCredentials,
    /// The keytab file cannot be read (it does not exist, or this process
    /// may not read it).
    KeytabUnreadable,
    /// The file is no keytab: empty, another format, or cut short. Export
    /// the principal's keys into it again.
    KeytabInvalid,
    /// The keytab holds no key of the principal logged in as
    /// (`Kerberos::keytab`'s first argument): the message lists the
    /// principals it holds.
    PrincipalNotInKeytab,
    /// MIT Kerberos' configuration does not serve the realm: `KRB5_CONFIG`
    /// names no file that exists, or the krb5.conf read (`KRB5_CONFIG`'s,
    /// else `/etc/krb5.conf`) names no KDC for the realm ("Cannot find KDC
    /// for realm"). Set `KRB5_CONFIG` to the cluster's krb5.conf.
    Krb5Config,
    /// The KDC the krb5.conf names cannot be reached (it is down, or the
    /// address is wrong): the one kind that may pass by itself.
    KdcUnreachable,
    /// No protection level in common: the server's `hbase.rpc.protection`
    /// against the levels the client accepts (`Kerberos::protection`).
    ProtectionRefused,
    /// The server demands Kerberos (`hbase.security.authentication=kerberos`)
    /// and this client connected without it: use `NativeConfig::kerberos` or
    /// `ThriftConfig::kerberos` (feature `kerberos`).
    AuthenticationRequired,
    /// The server does not use Kerberos (`hbase.security.authentication`
    /// simple): connect without `NativeConfig::kerberos`.
    ServerNotKerberos,
    /// The server refused the SASL handshake (its exception in the
    /// reason), after the retries HBase's Java client makes too.
    Refused,
    /// Another GSSAPI failure, or SASL bytes that are not HBase's.
    Gssapi,
}

impl KerberosFailure {
    /// Whether trying again later, with the same settings, may succeed: an
    /// unreachable KDC may come back. Every other kind is a setting to
    /// change (a keytab, a principal, a protection level, krb5.conf), and
    /// trying again fails the same way.
    pub fn is_transient(self) -> bool {
        matches!(self, KerberosFailure::KdcUnreachable)
    }
}
