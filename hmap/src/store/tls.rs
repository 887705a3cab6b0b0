//! The rustls pieces every TLS transport of hmap shares (feature `tls`):
//! ThriftStore's HTTPS and NativeStore's RPC. ring is the crypto provider,
//! not the process-wide default, which depends on what else the program
//! links; the protocol versions are rustls' safe defaults (TLS 1.3 and 1.2).

use std::io;
use std::sync::Arc;

use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

/// The platform's root certificates (those `rustls-native-certs` finds);
/// fails if none can be read. `instead` names what to use then.
pub(crate) fn platform_roots(instead: &str) -> io::Result<RootCertStore> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found.errors.first().map(ToString::to_string).unwrap_or_default();
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no root certificate of the platform could be read ({why}); give a CA with {instead}"),
        ));
    }
    Ok(roots)
}

/// The CA certificates in `pem` (one or more `BEGIN CERTIFICATE` blocks);
/// fails if it holds none.
pub(crate) fn roots_from_pem(pem: &[u8]) -> io::Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| invalid(format!("the CA's PEM cannot be read: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| invalid(format!("the CA certificate is refused: {e}")))?;
    }
    if roots.is_empty() {
        return Err(invalid("the CA's PEM holds no certificate".into()));
    }
    Ok(roots)
}

/// A client's certificate chain (`BEGIN CERTIFICATE` blocks, its own first)
/// and private key (PKCS#8, PKCS#1 or SEC1 PEM): NativeStore's mutual TLS.
#[cfg(feature = "native")]
pub(crate) fn client_identity(
    chain: &[u8],
    key: &[u8],
) -> io::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = CertificateDer::pem_slice_iter(chain)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("the client certificate's PEM cannot be read: {e}")))?;
    if chain.is_empty() {
        return Err(invalid("the client certificate's PEM holds no certificate".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| {
        invalid(format!(
            "the client key's PEM holds no private key that can be read: {e}"
        ))
    })?;
    Ok((chain, key))
}

/// A client configuration trusting `roots`, presenting `identity` (a
/// certificate chain and its key) if the server asks for one.
pub(crate) fn client_config(
    roots: RootCertStore,
    identity: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
) -> io::Result<ClientConfig> {
    let builder = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_root_certificates(roots);
    match identity {
        None => Ok(builder.with_no_client_auth()),
        Some((chain, key)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| invalid(format!("the client certificate and key do not make an identity: {e}"))),
    }
}
