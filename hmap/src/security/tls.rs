//! TLS configuration every TLS transport of hmap shares (feature `tls`):
//! [`Tls`], given to NativeStore's RPC and ThriftStore's HTTPS alike, and
//! the rustls pieces it is built of (the CA or the platform's roots, a
//! client certificate and key read from PEM). Each backend keeps its own
//! socket and what a refused handshake means for its server's settings.
//! ring is the crypto provider,
//! not the process-wide default, which depends on what else the program
//! links; the protocol versions are rustls' safe defaults (TLS 1.3 and 1.2).

use std::io;
use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

/// TLS settings of a store: NativeStore's RPC (`NativeConfig::tls`) or a
/// Thrift gateway's HTTPS (`ThriftHttp::https_with`): whom to trust, the
/// client certificate for mutual TLS, the name to check. Cheap to clone.
///
/// ```no_run
/// # #[cfg(feature = "native")]
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use hmap::security::Tls;
/// use hmap::store::native::{NativeConfig, NativeStore};
///
/// // The cluster's CA; for mutual TLS (`hbase.server.netty.tls.client.auth.mode`
/// // NEED), a client certificate and key it signed.
/// let tls = Tls::with_ca_file("/etc/hbase/tls/ca.pem")?
///     .client_auth_files("/etc/hbase/tls/client.pem", "/etc/hbase/tls/client-key.pem")?;
/// let store = NativeStore::connect(NativeConfig::new(["hbase-master.example.com:16000"]).tls(tls)).await?;
/// # Ok(())
/// # }
/// ```
///
/// The same settings serve a Thrift gateway in HTTPS mode
/// (`hbase.thrift.ssl.enabled`), through `ThriftHttp::https_with`.
#[derive(Clone)]
pub struct Tls {
    roots: Arc<RootCertStore>,
    config: Arc<ClientConfig>,
    client_auth: bool,
    server_name: Option<String>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("roots", &self.roots.len())
            .field("client_auth", &self.client_auth)
            .field("server_name", &self.server_name)
            .finish()
    }
}

impl Tls {
    /// Trusts the CA certificates in `pem` (one or more `BEGIN
    /// CERTIFICATE` blocks) and no others: the CA that signed the servers'
    /// certificates (`hbase.rpc.tls.keystore.location`'s). Fails if `pem`
    /// holds no certificate.
    pub fn with_ca_pem(pem: &[u8]) -> io::Result<Self> {
        Self::with_roots(roots_from_pem(pem)?)
    }

    /// [`with_ca_pem`](Self::with_ca_pem) with the PEM read from `path`;
    /// an error names the file.
    pub fn with_ca_file(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        Self::with_ca_pem(&read(path, "CA")?).map_err(|e| in_file(e, path))
    }

    /// Trusts the platform's root certificates (those `rustls-native-certs`
    /// finds), for servers whose certificates a public CA signed. Fails if
    /// none can be read.
    pub fn with_platform_roots() -> io::Result<Self> {
        Self::with_roots(platform_roots("`Tls::with_ca_file`")?)
    }

    fn with_roots(roots: RootCertStore) -> io::Result<Self> {
        let config = client_config(roots.clone(), None)?;
        Ok(Tls {
            roots: Arc::new(roots),
            config: Arc::new(config),
            client_auth: false,
            server_name: None,
        })
    }

    /// Presents a client certificate to servers that ask for one (mutual
    /// TLS: `hbase.server.netty.tls.client.auth.mode` `WANT` or `NEED`):
    /// `chain` holds the certificate first, then any intermediates (`BEGIN
    /// CERTIFICATE` blocks), `key` its private key, unencrypted PEM as
    /// Java's keytool (through a PKCS12 keystore) and OpenSSL's tools write
    /// them: PKCS#8 (`BEGIN PRIVATE KEY`: EC, RSA, Ed25519), SEC1 (`BEGIN
    /// EC PRIVATE KEY`) or PKCS#1 (`BEGIN RSA PRIVATE KEY`). An EC key
    /// without its optional public key (the JDK's encoding) is completed
    /// from the certificate. Fails if either cannot be read or they do not
    /// belong together. HBase checks the certificate against the client's address
    /// too (`hbase.server.netty.tls.verify.client.hostname`, true by
    /// default): it must name the client's host, as an IP SAN or its
    /// reverse-DNS name.
    pub fn client_auth_pem(self, chain: &[u8], key: &[u8]) -> io::Result<Self> {
        let config = client_config((*self.roots).clone(), Some(client_identity(chain, key)?))?;
        Ok(Tls {
            config: Arc::new(config),
            client_auth: true,
            ..self
        })
    }

    /// [`client_auth_pem`](Self::client_auth_pem) with the PEMs read from
    /// files; an error names them.
    pub fn client_auth_files(self, chain: impl AsRef<Path>, key: impl AsRef<Path>) -> io::Result<Self> {
        let (chain, key) = (chain.as_ref(), key.as_ref());
        let (chain_pem, key_pem) = (read(chain, "client certificate")?, read(key, "client key")?);
        self.client_auth_pem(&chain_pem, &key_pem).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{e} (certificate {}, key {})", chain.display(), key.display()),
            )
        })
    }

    /// The name every server's certificate must carry (a DNS name, or an
    /// IP address checked against the IP SANs), instead of the host each
    /// connection dials: for servers registered under addresses their
    /// certificates do not name. Checks stay on; there is no way to turn
    /// them off.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self
    }

    /// Whether a client certificate is presented.
    pub fn has_client_auth(&self) -> bool {
        self.client_auth
    }

    /// The name set with [`server_name`](Self::server_name), if any.
    pub(crate) fn server_name_checked(&self) -> Option<&str> {
        self.server_name.as_deref()
    }

    /// The rustls configuration a connector takes.
    pub(crate) fn client_config(&self) -> Arc<ClientConfig> {
        Arc::clone(&self.config)
    }
}

fn read(path: &Path, what: &str) -> io::Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("the {what} file {} cannot be read: {e}", path.display()),
        )
    })
}

fn in_file(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{e} ({})", path.display()))
}

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
/// and private key (PKCS#8, PKCS#1 or SEC1 PEM; an EC key with or without
/// its public key): mutual TLS.
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
        let encrypted = memchr::memmem::find(key, b"-----BEGIN ENCRYPTED PRIVATE KEY-----").is_some();
        invalid(if encrypted {
            "the client key's PEM holds an encrypted key (BEGIN ENCRYPTED PRIVATE KEY): write it out \
             unencrypted (`openssl pkcs8 -in KEY -out PLAIN`)"
                .to_string()
        } else {
            format!(
                "the client key's PEM holds no private key that can be read ({e}): expected BEGIN PRIVATE KEY \
                 (PKCS#8), BEGIN EC PRIVATE KEY (SEC1) or BEGIN RSA PRIVATE KEY (PKCS#1)"
            )
        })
    })?;
    let key = with_public_key(key, &chain[0]);
    Ok((chain, key))
}

/// `key` with its public key added when it is an EC key without one,
/// taken from `certificate` (the key's own: rustls checks that they
/// match).
///
/// RFC 5915 makes the public key inside an EC private key optional, and
/// common tools leave it out: the JDK's PKCS#8 encoding of every EC key
/// (so every key taken out of a Java keystore, by `openssl pkcs12 -nodes`
/// or otherwise), `openssl ec -no_public`. ring, rustls' crypto provider
/// here, refuses such a key ("failed to parse private key as RSA, ECDSA,
/// or EdDSA") and offers no way to compute the public key; the
/// certificate carries it. Any other key, or a key or certificate that
/// does not parse as expected, is returned as it is, for rustls to judge.
fn with_public_key(key: PrivateKeyDer<'static>, certificate: &CertificateDer<'_>) -> PrivateKeyDer<'static> {
    use tokio_rustls::rustls::pki_types::{PrivatePkcs8KeyDer, PrivateSec1KeyDer};

    let Some(point) = der::ec_public_key(certificate) else {
        return key;
    };
    match &key {
        PrivateKeyDer::Pkcs8(pkcs8) => match der::pkcs8_with_ec_public_key(pkcs8.secret_pkcs8_der(), point) {
            Some(fixed) => PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(fixed)),
            None => key,
        },
        PrivateKeyDer::Sec1(sec1) => match der::sec1_with_public_key(sec1.secret_sec1_der(), point) {
            Some(fixed) => PrivateKeyDer::Sec1(PrivateSec1KeyDer::from(fixed)),
            None => key,
        },
        _ => key,
    }
}

/// Just enough DER (X.690) to add an EC public key to a private key:
/// reading a certificate's SubjectPublicKeyInfo, PKCS#8's PrivateKeyInfo
/// (RFC 5208) and SEC1's ECPrivateKey (RFC 5915), and writing the last two.
mod der {
    use tokio_rustls::rustls::pki_types::CertificateDer;

    const SEQUENCE: u8 = 0x30;
    const INTEGER: u8 = 0x02;
    const BIT_STRING: u8 = 0x03;
    const OCTET_STRING: u8 = 0x04;
    const OID: u8 = 0x06;
    /// `[0]` constructed: a certificate's version, ECPrivateKey's parameters.
    const CONTEXT_0: u8 = 0xa0;
    /// `[1]` constructed: ECPrivateKey's public key.
    const CONTEXT_1: u8 = 0xa1;
    /// `1.2.840.10045.2.1`, id-ecPublicKey.
    const ID_EC_PUBLIC_KEY: &[u8] = b"\x2a\x86\x48\xce\x3d\x02\x01";

    /// One element off the front of `input`: its tag, its contents, and
    /// the rest of `input`. Single-byte tags and lengths of up to 4 bytes,
    /// which is all these structures use.
    fn next(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, rest) = input.split_first()?;
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let len = rest[..n].iter().fold(0usize, |len, &b| len << 8 | usize::from(b));
            (len, &rest[n..])
        };
        (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
    }

    /// The contents of the element `tag` at the front of `input`, and the rest.
    fn expect(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (got, contents, rest) = next(input)?;
        (got == tag).then_some((contents, rest))
    }

    fn write(tag: u8, contents: &[u8], out: &mut Vec<u8>) {
        out.push(tag);
        let len = contents.len();
        if len < 0x80 {
            out.push(len as u8);
        } else {
            let bytes = len.to_be_bytes();
            let skip = bytes.iter().take_while(|&&b| b == 0).count();
            out.push(0x80 | (bytes.len() - skip) as u8);
            out.extend_from_slice(&bytes[skip..]);
        }
        out.extend_from_slice(contents);
    }

    /// An EC public key in `certificate`: the curve's OID and the point's
    /// BIT STRING contents (a leading 0 for no unused bits, then the
    /// point); `None` for another kind of key.
    pub(super) fn ec_public_key<'a>(certificate: &'a CertificateDer<'_>) -> Option<EcPoint<'a>> {
        let (certificate, _) = expect(certificate.as_ref(), SEQUENCE)?;
        let (mut tbs, _) = expect(certificate, SEQUENCE)?;
        if tbs.first() == Some(&CONTEXT_0) {
            tbs = expect(tbs, CONTEXT_0)?.1;
        }
        // serialNumber, signature, issuer, validity, subject.
        tbs = expect(tbs, INTEGER)?.1;
        for _ in 0..4 {
            tbs = expect(tbs, SEQUENCE)?.1;
        }
        let (spki, _) = expect(tbs, SEQUENCE)?;
        let (algorithm, spki) = expect(spki, SEQUENCE)?;
        let (oid, algorithm) = expect(algorithm, OID)?;
        let (curve, _) = expect(algorithm, OID)?;
        let (bits, _) = expect(spki, BIT_STRING)?;
        (oid == ID_EC_PUBLIC_KEY).then_some(EcPoint { curve, bits })
    }

    /// A certificate's EC public key.
    #[derive(Clone, Copy)]
    pub(super) struct EcPoint<'a> {
        curve: &'a [u8],
        bits: &'a [u8],
    }

    /// `sec1` (an ECPrivateKey) with `point` as its public key if it has
    /// none and its curve (when it names one) is the point's; `None` when
    /// it needs no change or is not such a key.
    fn ec_private_key_with(sec1: &[u8], point: EcPoint<'_>, curve: Option<&[u8]>) -> Option<Vec<u8>> {
        let (key, rest) = expect(sec1, SEQUENCE)?;
        if !rest.is_empty() {
            return None;
        }
        let (version, fields) = expect(key, INTEGER)?;
        let (_, mut after) = expect(fields, OCTET_STRING)?;
        let mut curve = curve;
        if after.first() == Some(&CONTEXT_0) {
            let (parameters, more) = expect(after, CONTEXT_0)?;
            curve = Some(expect(parameters, OID)?.0);
            after = more;
        }
        if version != [1] || !after.is_empty() || curve != Some(point.curve) {
            return None;
        }
        let mut public = Vec::new();
        write(BIT_STRING, point.bits, &mut public);
        let mut contents = key.to_vec();
        write(CONTEXT_1, &public, &mut contents);
        let mut out = Vec::new();
        write(SEQUENCE, &contents, &mut out);
        Some(out)
    }

    /// A SEC1 key (`BEGIN EC PRIVATE KEY`) with its public key added.
    pub(super) fn sec1_with_public_key(sec1: &[u8], point: EcPoint<'_>) -> Option<Vec<u8>> {
        ec_private_key_with(sec1, point, None)
    }

    /// A PKCS#8 EC key (`BEGIN PRIVATE KEY`) with the public key added to
    /// its ECPrivateKey.
    pub(super) fn pkcs8_with_ec_public_key(pkcs8: &[u8], point: EcPoint<'_>) -> Option<Vec<u8>> {
        let (info, rest) = expect(pkcs8, SEQUENCE)?;
        if !rest.is_empty() {
            return None;
        }
        let (version, fields) = expect(info, INTEGER)?;
        let (algorithm, fields) = expect(fields, SEQUENCE)?;
        let (private_key, attributes) = expect(fields, OCTET_STRING)?;
        let (oid, parameters) = expect(algorithm, OID)?;
        let (curve, _) = expect(parameters, OID)?;
        if oid != ID_EC_PUBLIC_KEY {
            return None;
        }
        let private_key = ec_private_key_with(private_key, point, Some(curve))?;
        let mut contents = Vec::new();
        write(INTEGER, version, &mut contents);
        write(SEQUENCE, algorithm, &mut contents);
        write(OCTET_STRING, &private_key, &mut contents);
        contents.extend_from_slice(attributes);
        let mut out = Vec::new();
        write(SEQUENCE, &contents, &mut out);
        Some(out)
    }
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
