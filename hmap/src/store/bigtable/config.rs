//! [`BigtableConfig`]: where the store connects (the emulator, or Cloud
//! Bigtable over TLS with OAuth2 credentials), its channels and deadlines;
//! opening the connections.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use crate::store::{Result, StoreError};

/// The environment variable Google's clients read the emulator's address
/// from (`host:port`).
pub const EMULATOR_HOST_VARIABLE: &str = "BIGTABLE_EMULATOR_HOST";

/// Cloud Bigtable's Data API endpoint.
pub const DATA_ENDPOINT: &str = "bigtable.googleapis.com:443";

/// Cloud Bigtable's Table Admin API endpoint (another host than the data
/// API's, as Google's clients have it).
pub const ADMIN_ENDPOINT: &str = "bigtableadmin.googleapis.com:443";

/// Each HTTP/2 stream's flow-control window: how much of a reply the
/// server may send ahead of what the caller has read (hyper's default is
/// 2 MiB; grpc-java's 1 MiB). A scan whose caller reads slowly holds at
/// most this much in the client; the server waits for the rest.
pub(crate) const STREAM_WINDOW: u32 = 512 * 1024;

/// The connection's flow-control window (hyper's default is 5 MiB): large,
/// so that the stream windows, not it, bound what the client holds, and
/// because h2 (0.4.16 and later) lets the DATA frames of under 256 bytes
/// that the client has received and not yet read cost at most half of it
/// (256 bytes less each frame's size, per frame) before it closes the
/// connection with GOAWAY `ENHANCE_YOUR_CALM` ("too_many_data_frames").
/// The emulator sends each row in a frame of its own (75 bytes for a
/// 42-byte value), so with hyper's windows a reader 15,000 rows behind
/// (2.5 MiB of that cost, while the 2 MiB stream window let 28,000 rows
/// come) lost the connection and every call on it. With these windows a
/// stream whose window is full of 75-byte frames costs 1.2 MiB of the
/// 512 MiB, and one of the smallest rows (about 25 bytes a frame) 4.6 MiB:
/// a hundred stalled scans (Google's front ends' limit of streams on a
/// connection) fit.
pub(crate) const CONNECTION_WINDOW: u32 = 1 << 30;

/// Where the access tokens of a [`BigtableStore`](super::BigtableStore)
/// come from (OAuth2, through the `gcp_auth` crate). Tokens are cached
/// and fetched again before they expire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BigtableCredentials {
    /// No token: the emulator, which takes none.
    #[default]
    None,
    /// Google's application-default credentials, looked for in Google's
    /// order: the key file `GOOGLE_APPLICATION_CREDENTIALS` names, then
    /// gcloud's `application_default_credentials.json` (`gcloud auth
    /// application-default login`), then the metadata server of the GCE,
    /// GKE or Cloud Run machine the program runs on, then `gcloud auth
    /// print-access-token`.
    ApplicationDefault,
    /// A service account's JSON key file (the tokens come from its
    /// `token_uri`).
    ServiceAccountKeyFile(PathBuf),
}

/// TLS to Cloud Bigtable: the platform's roots, or a CA of the user's, and
/// the name the server's certificate is checked against (the endpoint's
/// host by default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BigtableTls {
    ca_pem: Option<Vec<u8>>,
    server_name: Option<String>,
}

impl BigtableTls {
    /// The platform's root certificates (what Cloud Bigtable needs).
    pub fn platform_roots() -> Self {
        BigtableTls::default()
    }

    /// Trusts only the CA certificates in `pem` (a proxy's, or a test's).
    pub fn with_ca_pem(pem: impl Into<Vec<u8>>) -> Self {
        BigtableTls {
            ca_pem: Some(pem.into()),
            server_name: None,
        }
    }

    /// [`with_ca_pem`](Self::with_ca_pem) from a file.
    pub fn with_ca_file(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let path = path.as_ref();
        std::fs::read(path)
            .map(Self::with_ca_pem)
            .map_err(|e| std::io::Error::new(e.kind(), format!("the CA file {}: {e}", path.display())))
    }

    /// Checks the server's certificate against `name` rather than the
    /// endpoint's host.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self
    }
}

/// How [`BigtableStore`](super::BigtableStore) reaches Bigtable, and each
/// call's deadline. Built with [`BigtableConfig::emulator`] or
/// [`BigtableConfig::cloud`] and the builder methods (`#[non_exhaustive]`:
/// options will be added).
///
/// ```
/// use hmap::store::bigtable::{BigtableConfig, BigtableCredentials};
///
/// // Cloud Bigtable, application-default credentials.
/// let cloud = BigtableConfig::cloud("my-project", "my-instance").app_profile("batch");
/// assert_eq!(cloud.address, "bigtable.googleapis.com:443");
/// // With a service account's key file instead.
/// let keyed = cloud.credentials(BigtableCredentials::ServiceAccountKeyFile("key.json".into()));
/// // The emulator: plain HTTP/2, no credentials.
/// let local = BigtableConfig::emulator("127.0.0.1:8086").channels(2);
/// # let _ = (keyed, local);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BigtableConfig {
    /// The Data API's `host:port`.
    pub address: String,
    /// The Table Admin API's `host:port` (the emulator serves both APIs
    /// on one port; Cloud Bigtable on two hosts).
    pub admin_address: String,
    /// TLS, or `None` for plain HTTP/2 (the emulator).
    pub tls: Option<BigtableTls>,
    /// Where access tokens come from.
    pub credentials: BigtableCredentials,
    /// The Google Cloud project id (any id on the emulator).
    pub project: String,
    /// The Bigtable instance id (any id on the emulator).
    pub instance: String,
    /// The app profile of data calls; empty for the instance's default.
    pub app_profile: String,
    /// How many HTTP/2 connections data calls are spread over, round
    /// robin (one connection carries at most the server's limit of
    /// concurrent streams: 100 on Google's front ends). Admin calls share
    /// one more.
    pub channels: usize,
    /// Each data call's deadline; for a scan, the deadline of each response
    /// of its stream. A call made with
    /// [`CallOptions`](crate::store::CallOptions) has theirs instead.
    pub call_timeout: Duration,
    /// Each admin call's deadline (create, delete, truncate, alter). A call
    /// made with [`CallOptions`](crate::store::CallOptions) has theirs
    /// instead.
    pub admin_timeout: Duration,
    /// The deadline of opening the connections (and of the first access
    /// token).
    pub connect_timeout: Duration,
    /// Put before every table id on the wire, as NativeStore's
    /// `table_prefix`: callers and errors see names without it, and
    /// `list_tables` lists only the tables under it.
    pub table_prefix: String,
    /// The largest cell accepted, as HBase counts it (10 MiB, HBase's
    /// default `hbase.server.keyvalue.maxsize`; Bigtable's own limit is
    /// 100 MiB), so that an application gets the limits it has on HBase.
    pub max_value_size: usize,
    /// Drop a family's COMPRESSION, BLOOMFILTER, BLOCKSIZE, IN_MEMORY and
    /// BLOCKCACHE (Bigtable manages storage itself) with a warning, as
    /// Google's Java HBase adapter does, instead of refusing them with
    /// [`StoreError::Unsupported`] (the default: a schema tuned for HBase
    /// is not silently created as something else). `describe_table` then
    /// reports HBase's defaults for them.
    pub ignore_storage_options: bool,
}

impl BigtableConfig {
    /// The emulator at `address` (`host:port`, as `scripts/bigtable/emulator
    /// start` prints it in `HMAP_BIGTABLE`), project and instance `hmap`,
    /// 30 s per call, one channel.
    pub fn emulator(address: impl Into<String>) -> Self {
        let address = address.into();
        BigtableConfig {
            admin_address: address.clone(),
            address,
            tls: None,
            credentials: BigtableCredentials::None,
            project: "hmap".into(),
            instance: "hmap".into(),
            app_profile: String::new(),
            channels: 1,
            call_timeout: Duration::from_secs(30),
            admin_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            table_prefix: String::new(),
            max_value_size: 10 * 1024 * 1024,
            ignore_storage_options: false,
        }
    }

    /// Cloud Bigtable's instance `instance` of `project`: TLS to
    /// [`DATA_ENDPOINT`] and [`ADMIN_ENDPOINT`] with the platform's roots,
    /// [application-default credentials](BigtableCredentials::ApplicationDefault),
    /// four data channels.
    pub fn cloud(project: impl Into<String>, instance: impl Into<String>) -> Self {
        BigtableConfig {
            tls: Some(BigtableTls::platform_roots()),
            credentials: BigtableCredentials::ApplicationDefault,
            channels: 4,
            ..BigtableConfig::emulator(DATA_ENDPOINT)
        }
        .admin_endpoint(ADMIN_ENDPOINT)
        .project(project)
        .instance(instance)
    }

    /// Sets the Data API's `host:port`.
    pub fn data_endpoint(mut self, address: impl Into<String>) -> Self {
        self.address = address.into();
        self
    }

    /// Sets the Table Admin API's `host:port`.
    pub fn admin_endpoint(mut self, address: impl Into<String>) -> Self {
        self.admin_address = address.into();
        self
    }

    /// Speaks TLS (`Some`) or plain HTTP/2 (`None`).
    pub fn tls(mut self, tls: Option<BigtableTls>) -> Self {
        self.tls = tls;
        self
    }

    /// Sets where access tokens come from.
    pub fn credentials(mut self, credentials: BigtableCredentials) -> Self {
        self.credentials = credentials;
        self
    }

    /// Sets how many connections data calls are spread over (at least 1).
    pub fn channels(mut self, channels: usize) -> Self {
        self.channels = channels.max(1);
        self
    }

    /// The emulator `BIGTABLE_EMULATOR_HOST` names, as Google's clients
    /// read it; `None` when it is unset or empty.
    pub fn from_emulator_env() -> Option<Self> {
        emulator_host().map(BigtableConfig::emulator)
    }

    /// The Bigtable `address` names, as `HMAP_BIGTABLE` and the CLI's
    /// `--bigtable` take it:
    ///
    /// - `host:port`: the emulator there, project and instance `hmap`;
    /// - `host:port/projects/P/instances/I`: the emulator there, project
    ///   `P`, instance `I` (tables another client made in them);
    /// - `projects/P/instances/I`: instance `I` of project `P`, on the
    ///   emulator `BIGTABLE_EMULATOR_HOST` names when it is set (plain
    ///   HTTP/2, no credentials, as Google's clients do), else on Cloud
    ///   Bigtable ([`cloud`](Self::cloud)).
    ///
    /// ```
    /// use hmap::store::bigtable::BigtableConfig;
    ///
    /// let local = BigtableConfig::from_address("127.0.0.1:8086/projects/p/instances/i");
    /// assert_eq!((local.address.as_str(), local.project.as_str(), local.instance.as_str()), ("127.0.0.1:8086", "p", "i"));
    /// assert!(local.tls.is_none());
    /// ```
    pub fn from_address(address: &str) -> Self {
        Self::from_address_with(address, emulator_host())
    }

    /// [`from_address`](Self::from_address), `emulator` in place of
    /// `BIGTABLE_EMULATOR_HOST`.
    fn from_address_with(address: &str, emulator: Option<String>) -> Self {
        let address = address.trim();
        let (host, name) = match address.split_once('/') {
            _ if address.starts_with("projects/") => ("", address),
            Some((host, name)) => (host, name),
            None => (address, ""),
        };
        let Some((project, instance)) = instance_name(name) else {
            // No instance named: the emulator with hmap's; an address
            // that is not a host:port fails at connect, saying so.
            return BigtableConfig::emulator(address);
        };
        let config = match (host, emulator) {
            ("", None) => return BigtableConfig::cloud(project, instance),
            ("", Some(emulator)) => BigtableConfig::emulator(emulator),
            (host, _) => BigtableConfig::emulator(host),
        };
        config.project(project).instance(instance)
    }

    /// Sets the project id.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = project.into();
        self
    }

    /// Sets the instance id.
    pub fn instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = instance.into();
        self
    }

    /// Sets the app profile of data calls.
    pub fn app_profile(mut self, app_profile: impl Into<String>) -> Self {
        self.app_profile = app_profile.into();
        self
    }

    /// Sets each data call's deadline.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets each admin call's deadline.
    pub fn admin_timeout(mut self, timeout: Duration) -> Self {
        self.admin_timeout = timeout;
        self
    }

    /// Sets the deadline of opening the connection.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Drops the storage options Bigtable has no place for instead of
    /// refusing them (see [`ignore_storage_options`](Self::ignore_storage_options)).
    pub fn ignore_storage_options(mut self, ignore: bool) -> Self {
        self.ignore_storage_options = ignore;
        self
    }

    /// Sets the prefix of every table id on the wire.
    pub fn table_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.table_prefix = prefix.into();
        self
    }

    /// The instance's resource name, `projects/P/instances/I`.
    pub(crate) fn instance_name(&self) -> String {
        format!("projects/{}/instances/{}", self.project, self.instance)
    }

    /// Opens the data channels and the admin channel, together within
    /// [`connect_timeout`](Self::connect_timeout).
    pub(crate) async fn connect(&self) -> Result<Channels> {
        let data = (0..self.channels.max(1)).map(|_| self.open(&self.address));
        let opened = async {
            let data = futures_util::future::try_join_all(data).await?;
            let admin = if self.admin_address == self.address {
                data[0].clone()
            } else {
                self.open(&self.admin_address).await?
            };
            Ok(Channels { data, admin })
        };
        match tokio::time::timeout(self.connect_timeout, opened).await {
            Ok(opened) => opened,
            Err(_) => Err(StoreError::Connection {
                endpoint: self.address.clone(),
                message: format!("no connection within {:?}", self.connect_timeout),
                cause: None,
            }),
        }
    }

    /// One HTTP/2 connection to `address`.
    async fn open(&self, address: &str) -> Result<Channel> {
        let connection =
            |message: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| StoreError::Connection {
                endpoint: address.to_string(),
                message,
                cause: source,
            };
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{address}"))
            .map_err(|e| connection(format!("`{address}` is not a host:port"), Some(Box::new(e))))?
            .connect_timeout(self.connect_timeout)
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .http2_adaptive_window(false)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_while_idle(true);
        if let Some(tls) = &self.tls {
            let mut config = ClientTlsConfig::new();
            config = match &tls.ca_pem {
                Some(pem) => config.ca_certificate(Certificate::from_pem(pem)),
                None => config.with_native_roots(),
            };
            if let Some(name) = &tls.server_name {
                config = config.domain_name(name.clone());
            }
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| connection(format!("TLS settings refused: {e}"), Some(Box::new(e))))?;
        }
        let emulator_hint = format!(
            " (is the Bigtable emulator running at {address}? Start it with `gcloud beta emulators bigtable \
             start --host-port={address}`, or check the address)"
        );
        if self.tls.is_none()
            && let Err(what) = probe(address).await
        {
            let hint = match self.credentials {
                BigtableCredentials::None => emulator_hint,
                _ => " (Cloud Bigtable speaks TLS only: set BigtableConfig::tls)".to_string(),
            };
            return Err(connection(format!("not a Bigtable server: {what}{hint}"), None));
        }
        endpoint.connect().await.map_err(|e| {
            let hint = match (&self.tls, self.credentials == BigtableCredentials::None) {
                (None, true) => emulator_hint.as_str(),
                (None, false) => " (Cloud Bigtable speaks TLS only: set BigtableConfig::tls)",
                (Some(_), _) => {
                    " (with TLS: is the server's certificate signed by a trusted CA, for this host? \
                     A plain HTTP/2 server such as the emulator takes no TLS: BigtableConfig::tls(None))"
                }
            };
            connection(format!("cannot connect: {}{hint}", error_chain(&e)), Some(Box::new(e)))
        })
    }
}

/// What answers at `address`, looked at before tonic opens its
/// connection (tonic sends HTTP/2's preface and returns without waiting
/// for the server's, so a server of another protocol would fail only the
/// calls, each as a broken connection, retried until its deadline). The
/// preface and an empty SETTINGS frame are sent; an HTTP/2 server answers
/// with a SETTINGS frame. `Err` says what answered instead. A connection
/// that cannot be made is left to tonic to report.
async fn probe(address: &str) -> std::result::Result<(), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut socket) = tokio::net::TcpStream::connect(address).await else {
        return Ok(());
    };
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    if let Err(e) = socket.write_all(&hello).await {
        return Err(format!(
            "the server closed the connection at once ({e}): it does not speak HTTP/2 (gRPC)"
        ));
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let n = match socket.read(&mut buf).await {
            Ok(n) => n,
            Err(e) => {
                return Err(format!(
                    "the server broke the connection ({e}) without answering HTTP/2's preface: it does not \
                     speak HTTP/2 (gRPC)"
                ));
            }
        };
        got.extend_from_slice(&buf[..n]);
        if let Some(verdict) = look_at_preface(&got, n == 0) {
            return verdict;
        }
    }
}

/// What the first bytes of a server's answer to HTTP/2's preface say:
/// `None` while more are needed (`ended`: no more come).
fn look_at_preface(got: &[u8], ended: bool) -> Option<std::result::Result<(), String>> {
    if got.starts_with(b"HTTP/") {
        let line = got.split(|&b| b == b'\r' || b == b'\n').next().unwrap_or_default();
        return Some(Err(format!(
            "an HTTP/1 server answered (`{}`), where Bigtable speaks gRPC over HTTP/2",
            String::from_utf8_lossy(line)
        )));
    }
    if matches!(got, [0x15 | 0x16, 0x03, ..]) {
        return Some(Err(
            "a TLS server answered: it takes TLS (BigtableConfig::tls; BigtableConfig::cloud sets it)".into(),
        ));
    }
    // A frame header: length (3 bytes), type, flags, stream (4 bytes);
    // the server's first frame is a SETTINGS frame (type 4) on stream 0.
    if got.len() >= 9 {
        return Some(match got[3] == 4 && got[5..9] == [0, 0, 0, 0] {
            true => Ok(()),
            false => Err(format!(
                "the server answered bytes that are not HTTP/2 (`{}`)",
                crate::store::show_row(&got[..got.len().min(24)])
            )),
        });
    }
    if ended {
        return Some(Err(match got.is_empty() {
            true => "the server closed the connection without a word: it does not speak HTTP/2 (gRPC)".into(),
            false => format!(
                "the server answered `{}` and closed the connection: it does not speak HTTP/2 (gRPC)",
                crate::store::show_row(got)
            ),
        }));
    }
    None
}

/// `BIGTABLE_EMULATOR_HOST`, trimmed; `None` when unset or blank.
fn emulator_host() -> Option<String> {
    std::env::var(EMULATOR_HOST_VARIABLE)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The project and instance of `projects/P/instances/I`.
fn instance_name(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("projects/")
        .and_then(|rest| rest.split_once("/instances/"))
        .filter(|(project, instance)| {
            !project.is_empty() && !project.contains('/') && !instance.is_empty() && !instance.contains('/')
        })
}

/// An error and its sources, as one line (tonic's own message says only
/// "transport error").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // rustls' errors repeat their source's text.
        if !line.ends_with(&cause_text) {
            line.push_str(": ");
            line.push_str(&cause_text);
        }
        source = cause.source();
    }
    line
}

/// The open connections of a store.
#[derive(Debug)]
pub(crate) struct Channels {
    /// The data calls', used round robin.
    pub(crate) data: Vec<Channel>,
    /// The admin calls'.
    pub(crate) admin: Channel,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_the_emulator_or_an_instance() {
        let parts = |c: &BigtableConfig| {
            (
                c.address.clone(),
                c.project.clone(),
                c.instance.clone(),
                c.tls.is_some(),
                c.credentials.clone(),
            )
        };
        let none = BigtableCredentials::None;
        let at = |address: &str| parts(&BigtableConfig::from_address_with(address, None));
        assert_eq!(at("127.0.0.1:8086"), parts(&BigtableConfig::emulator("127.0.0.1:8086")));
        assert_eq!(
            at(" 127.0.0.1:8086/projects/p-1/instances/i-1 "),
            ("127.0.0.1:8086".into(), "p-1".into(), "i-1".into(), false, none.clone())
        );
        assert_eq!(
            parts(&BigtableConfig::from_address_with("projects/p/instances/i", None)),
            parts(&BigtableConfig::cloud("p", "i"))
        );
        // BIGTABLE_EMULATOR_HOST sends an instance's name to the emulator,
        // plain and without credentials, as Google's clients do.
        let emulator = Some("localhost:9000".to_string());
        assert_eq!(
            parts(&BigtableConfig::from_address_with(
                "projects/p/instances/i",
                emulator.clone()
            )),
            ("localhost:9000".into(), "p".into(), "i".into(), false, none)
        );
        // A host named beside the instance wins.
        assert_eq!(
            BigtableConfig::from_address_with("h:1/projects/p/instances/i", emulator).address,
            "h:1"
        );
        // Not an instance's name: left for connect to refuse.
        assert_eq!(at("h:1/projects/p").0, "h:1/projects/p");
    }

    #[test]
    fn the_first_bytes_of_an_answer_say_what_answers() {
        let settings = [0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100];
        assert_eq!(look_at_preface(&settings, false), Some(Ok(())));
        assert_eq!(look_at_preface(&settings[..5], false), None);
        let verdict = |got: &[u8]| look_at_preface(got, true).unwrap().unwrap_err();
        assert!(verdict(b"HTTP/1.1 505 HTTP Version Not Supported\r\n").contains("`HTTP/1.1 505"));
        assert!(verdict(&[0x15, 0x03, 0x03, 0, 2, 2, 80]).contains("TLS"));
        assert!(verdict(b"").contains("without a word"));
        assert!(verdict(b"\0\0\x12\x07\0\0\0\0\0").contains("not HTTP/2"));
    }
}
