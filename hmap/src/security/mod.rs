//! Security shared by every backend: TLS configuration, Kerberos and SASL
//! GSSAPI, and the errors of a failed handshake. Each backend keeps only
//! its own wire: NativeStore's RPC preamble, its SASL framing and its TLS
//! socket (`store::native`), the Thrift gateways' SASL transport and
//! SPNEGO header (`store::thrift`); everything they share is here, and
//! this module imports no backend.
//!
//! - `Kerberos` (feature `kerberos`): whose credentials (a keytab,
//!   logged in again before the ticket ends, or the ticket cache), the
//!   servers' principal, the `Protection` levels accepted; the GSSAPI
//!   steps of a SASL GSSAPI handshake (RFC 4752), through MIT Kerberos'
//!   `libgssapi_krb5` called through hmap's own declarations
//!   (`kerberos/gssapi.rs`, the crate's only `unsafe` code), and the
//!   keytab checks that name a wrong file before MIT Kerberos reads it.
//!   Given to `NativeConfig::kerberos` and `ThriftConfig::kerberos`.
//! - `sasl` (feature `kerberos`): the bytes of SASL GSSAPI that do not
//!   depend on the carrier, sans IO: the security layer offer, the
//!   protection level chosen, wrapped messages.
//! - `Tls` (feature `tls`): whom to trust (a CA of yours or the
//!   platform's roots), a client certificate for mutual TLS, the name to
//!   check; rustls with ring. Given to `NativeConfig::tls` and
//!   `ThriftHttp::https_with`.
//! - [`SecurityError`] and [`KerberosFailure`]: what failed and what to
//!   change, the same for every backend.
//!
//! ```no_run
//! # #[cfg(all(feature = "kerberos", feature = "tls"))]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use hmap::security::{Kerberos, Protection, Tls};
//! use hmap::store::native::{NativeConfig, NativeStore};
//!
//! let kerberos = Kerberos::keytab("app@EXAMPLE.COM", "/etc/security/keytabs/app.keytab")
//!     .server_principal("hbase/_HOST@EXAMPLE.COM")
//!     .protection([Protection::Privacy]);
//! let tls = Tls::with_ca_file("/etc/hbase/tls/ca.pem")?;
//! let config = NativeConfig::new(["master.example.com:16000"]).kerberos(kerberos).tls(tls);
//! let store = NativeStore::connect(config).await?;
//! # Ok(())
//! # }
//! ```

mod error;
#[cfg(feature = "kerberos")]
pub(crate) mod kerberos;
// Whether a server that closed a plaintext connection speaks TLS only:
// asked by NativeStore and by the Thrift backends' SASL, with or without
// the `tls` feature.
#[cfg(feature = "native")]
pub(crate) mod probe;
#[cfg(feature = "kerberos")]
pub mod sasl;
#[cfg(all(feature = "tls", any(feature = "thrift", feature = "native")))]
pub(crate) mod tls;

pub use error::{KerberosFailure, SecurityError};
#[cfg(feature = "kerberos")]
pub use kerberos::Kerberos;
#[cfg(feature = "kerberos")]
pub use sasl::Protection;
#[cfg(all(feature = "tls", any(feature = "thrift", feature = "native")))]
pub use tls::Tls;

#[cfg(all(test, feature = "kerberos", feature = "tls"))]
mod tests {
    /// The names security had in `store::native` name the same types, for
    /// one release.
    #[test]
    #[allow(deprecated)] // the old names, on purpose
    fn the_old_names_still_name_the_same_types() {
        let _: super::Kerberos = crate::store::native::NativeKerberos::ticket_cache();
        let _: fn(&[u8]) -> std::io::Result<super::Tls> = crate::store::native::NativeTls::with_ca_pem;
        let _: super::KerberosFailure = crate::store::native::KerberosFailure::Gssapi;
        let _: super::Protection = crate::store::native::Protection::Privacy;
        assert_eq!(crate::store::native::sasl::KERBEROS_PREAMBLE, *b"HBas\x00\x51");
        assert_eq!(crate::store::native::sasl::MAX_TOKEN, super::sasl::MAX_TOKEN);
    }
}
