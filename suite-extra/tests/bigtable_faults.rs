//! `BigtableStore` against a fake Bigtable server (tonic's server, the
//! services written by hand): the entries of a `MutateRows` that fail with
//! a status worth another try are sent again, alone, within the call's
//! deadline; any other failure, or a retried entry that keeps failing, is
//! the call's error naming its row. A `ReadRows` stream that stalls, breaks
//! or breaks the chunk protocol ends a scan with a typed error, never as
//! if the rows ran out.
//!
//! Built with `--features bigtable` only (see Cargo.toml).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;
use googleapis_tonic_google_bigtable_v2::google::rpc;
use hmap::store::bigtable::{BigtableConfig, BigtableCredentials, BigtableStore, BigtableTls};
use hmap::store::{RowMutation, Store, StoreError};

/// How the fake answers the `n`th `MutateRows` call (from 0): a status
/// code for each entry, by row key (0 is OK).
type Answer = fn(usize, &[u8]) -> i32;

/// The fake's record of the calls: each call's row keys.
type Calls = Arc<Mutex<Vec<Vec<Vec<u8>>>>>;

#[derive(Clone)]
struct Fake {
    calls: Calls,
    answer: Answer,
    /// What every `ReadRows` streams.
    reads: Reads,
    /// The `ReadRows` requests.
    requests: Requests,
    /// The headers of every call.
    seen: Seen,
    /// The raw reply to a data call, by its method, if any: the response
    /// body's bytes (gRPC frames as they go on the wire), then an OK
    /// status in the trailers.
    raw: Option<Raw>,
}

/// See [`Fake::raw`].
type Raw = fn(&str) -> Option<Vec<u8>>;

/// What the fake saw of each call: its path, `authorization` and
/// `x-goog-request-params` (empty when absent), and the client's address.
type Seen = Arc<Mutex<Vec<[String; 4]>>>;

/// A `ReadRows` reply to the `n`th call (from 0) and its request: its
/// messages, then how the stream ends.
type Reads = fn(usize, &v2::ReadRowsRequest) -> (Vec<v2::ReadRowsResponse>, End);

/// The `ReadRows` requests the fake received.
type Requests = Arc<Mutex<Vec<v2::ReadRowsRequest>>>;

/// How a fake `ReadRows` stream ends.
#[derive(Clone, Copy)]
enum End {
    /// With OK.
    Ok,
    /// It never does: the server stalls, the stream open.
    Stall,
    /// With this status.
    Status(tonic::Code),
}

type Rows = Pin<Box<dyn futures_util::Stream<Item = Result<v2::ReadRowsResponse, tonic::Status>> + Send>>;

/// The `ReadRows` side of [`Fake`].
struct Reader(Reads, Requests);

impl tonic::server::ServerStreamingService<v2::ReadRowsRequest> for Reader {
    type Response = v2::ReadRowsResponse;
    type ResponseStream = Rows;
    type Future = Pin<Box<dyn Future<Output = Result<tonic::Response<Rows>, tonic::Status>> + Send>>;

    fn call(&mut self, request: tonic::Request<v2::ReadRowsRequest>) -> Self::Future {
        use futures_util::StreamExt;
        let request = request.into_inner();
        let n = {
            let mut requests = self.1.lock().unwrap();
            requests.push(request.clone());
            requests.len() - 1
        };
        let (messages, end) = (self.0)(n, &request);
        // Each message on its own, as the emulator sends them (tonic's
        // encoder packs the messages it finds ready into one DATA frame).
        let head = futures_util::stream::iter(messages).then(|m| async move {
            tokio::task::yield_now().await;
            Ok(m)
        });
        let rows: Rows = match end {
            End::Ok => Box::pin(head),
            End::Stall => Box::pin(head.chain(futures_util::stream::pending())),
            End::Status(code) => Box::pin(head.chain(futures_util::stream::iter([Err(tonic::Status::new(
                code,
                "the fake's stream broke",
            ))]))),
        };
        Box::pin(async move { Ok(tonic::Response::new(rows)) })
    }
}

type Entries = futures_util::stream::Iter<std::vec::IntoIter<Result<v2::MutateRowsResponse, tonic::Status>>>;

impl tonic::server::ServerStreamingService<v2::MutateRowsRequest> for Fake {
    type Response = v2::MutateRowsResponse;
    type ResponseStream = Entries;
    type Future = Pin<Box<dyn Future<Output = Result<tonic::Response<Entries>, tonic::Status>> + Send>>;

    fn call(&mut self, request: tonic::Request<v2::MutateRowsRequest>) -> Self::Future {
        let request = request.into_inner();
        let keys: Vec<Vec<u8>> = request.entries.iter().map(|e| e.row_key.to_vec()).collect();
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(keys.clone());
            calls.len() - 1
        };
        let entries = keys
            .iter()
            .enumerate()
            .map(|(index, key)| v2::mutate_rows_response::Entry {
                index: index as i64,
                status: Some(rpc::Status {
                    code: (self.answer)(n, key),
                    message: format!("fake status for call {n}"),
                    details: Vec::new(),
                }),
            })
            .collect();
        let reply = v2::MutateRowsResponse {
            entries,
            ..Default::default()
        };
        Box::pin(async move { Ok(tonic::Response::new(futures_util::stream::iter(vec![Ok(reply)]))) })
    }
}

impl tower_service::Service<http::Request<tonic::body::Body>> for Fake {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let fake = self.clone();
        let header = |name: &str| {
            request
                .headers()
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default()
        };
        use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};
        let extensions = request.extensions();
        let peer = extensions
            .get::<TcpConnectInfo>()
            .or_else(|| {
                extensions
                    .get::<TlsConnectInfo<TcpConnectInfo>>()
                    .map(|tls| tls.get_ref())
            })
            .and_then(TcpConnectInfo::remote_addr)
            .map(|a| a.to_string())
            .unwrap_or_default();
        let seen = [
            request.uri().path().to_string(),
            header("authorization"),
            header("x-goog-request-params"),
            peer,
        ];
        fake.seen.lock().unwrap().push(seen);
        let method = request.uri().path().rsplit('/').next().unwrap_or_default().to_string();
        if let Some(body) = fake.raw.and_then(|raw| raw(&method)) {
            return Box::pin(async move { Ok(raw_reply(body)) });
        }
        Box::pin(async move {
            use tonic::server::Grpc;
            use tonic_prost::ProstCodec;
            match request.uri().path() {
                "/google.bigtable.v2.Bigtable/ReadRows" => {
                    let mut grpc = Grpc::new(ProstCodec::<v2::ReadRowsResponse, v2::ReadRowsRequest>::default());
                    Ok(grpc.server_streaming(Reader(fake.reads, fake.requests), request).await)
                }
                "/google.bigtable.v2.Bigtable/MutateRows" => {
                    let mut grpc = Grpc::new(ProstCodec::<v2::MutateRowsResponse, v2::MutateRowsRequest>::default());
                    Ok(grpc.server_streaming(fake, request).await)
                }
                // The store reads the table's families first.
                "/google.bigtable.admin.v2.BigtableTableAdmin/GetTable" => {
                    let mut grpc = Grpc::new(ProstCodec::<admin::Table, admin::GetTableRequest>::default());
                    Ok(grpc.unary(Admin, request).await)
                }
                other => panic!("the fake serves no {other}"),
            }
        })
    }
}

/// The admin side: every table has one family, `f`.
struct Admin;

impl tonic::server::UnaryService<admin::GetTableRequest> for Admin {
    type Response = admin::Table;
    type Future = Pin<Box<dyn Future<Output = Result<tonic::Response<admin::Table>, tonic::Status>> + Send>>;

    fn call(&mut self, request: tonic::Request<admin::GetTableRequest>) -> Self::Future {
        let table = admin::Table {
            name: request.into_inner().name,
            column_families: [("f".to_string(), admin::ColumnFamily::default())].into(),
            ..Default::default()
        };
        Box::pin(async move { Ok(tonic::Response::new(table)) })
    }
}

/// A store on a fake server answering `answer`, and the calls it records.
async fn store(answer: Answer, timeout: Duration) -> (BigtableStore, Calls) {
    store_reading(answer, |_, _| (Vec::new(), End::Ok), timeout).await
}

/// [`store`], its server streaming `reads` for every `ReadRows`.
async fn store_reading(answer: Answer, reads: Reads, timeout: Duration) -> (BigtableStore, Calls) {
    let (address, calls, _) = serve(answer, reads, None, None).await;
    let config = BigtableConfig::emulator(address.clone()).call_timeout(timeout);
    (BigtableStore::connect(config).await.unwrap(), calls)
}

/// Starts a fake server (over TLS with the test certificate for
/// 127.0.0.1 and localhost, when `tls`): its address, the calls and
/// headers it records.
async fn serve(answer: Answer, reads: Reads, tls: Option<()>, raw: Option<Raw>) -> (String, Calls, Seen) {
    serve_recording(answer, reads, tls, raw, Requests::default()).await
}

/// [`serve`], recording the `ReadRows` requests in `requests`.
async fn serve_recording(
    answer: Answer,
    reads: Reads,
    tls: Option<()>,
    raw: Option<Raw>,
    requests: Requests,
) -> (String, Calls, Seen) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let calls = Calls::default();
    let seen = Seen::default();
    let fake = Fake {
        calls: calls.clone(),
        answer,
        reads,
        requests,
        seen: seen.clone(),
        raw,
    };
    let mut server = tonic::transport::Server::builder();
    if tls.is_some() {
        let identity = tonic::transport::Identity::from_pem(SERVER_PEM, SERVER_KEY);
        server = server
            .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
            .unwrap();
    }
    tokio::spawn(async move {
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        server.serve_with_incoming(fake, incoming).await.unwrap();
    });
    (address.to_string(), calls, seen)
}

fn rows() -> Vec<RowMutation> {
    ["a", "b", "c"]
        .into_iter()
        .map(|key| RowMutation::new(key).put_at("f", "q", 1, "v"))
        .collect()
}

const UNAVAILABLE: i32 = 14;
const PERMISSION_DENIED: i32 = 7;

#[tokio::test]
async fn entries_that_failed_for_a_while_are_sent_again_alone() {
    // Row b is unavailable twice, then written.
    let (store, calls) = store(
        |n, key| if key == b"b" && n < 2 { UNAVAILABLE } else { 0 },
        Duration::from_secs(10),
    )
    .await;
    store.mutate("t", &rows()).await.expect("written, b on its third try");
    let calls = calls.lock().unwrap().clone();
    assert_eq!(
        calls,
        [
            vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()],
            vec![b"b".to_vec()],
            vec![b"b".to_vec()]
        ]
    );
}

#[tokio::test]
async fn an_entry_that_stays_unavailable_fails_the_call_at_its_deadline_naming_its_row() {
    let (store, calls) = store(
        |_, key| if key == b"c" { UNAVAILABLE } else { 0 },
        Duration::from_millis(600),
    )
    .await;
    let started = Instant::now();
    let err = store.mutate("t", &rows()).await.expect_err("c is never written");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert!(err.to_string().contains("row c"), "{err}");
    let calls = calls.lock().unwrap().clone();
    assert!(calls.len() >= 3, "retried: {calls:?}");
    assert!(calls[1..].iter().all(|keys| keys == &[b"c".to_vec()]), "{calls:?}");
}

#[tokio::test]
async fn an_entry_refused_for_good_is_not_sent_again() {
    let (store, calls) = store(
        |_, key| if key == b"a" { PERMISSION_DENIED } else { 0 },
        Duration::from_secs(10),
    )
    .await;
    let err = store.mutate("t", &rows()).await.expect_err("a is refused");
    assert!(err.to_string().contains("row a"), "{err}");
    assert!(!matches!(err, StoreError::Timeout { .. }), "{err:?}");
    assert_eq!(calls.lock().unwrap().len(), 1);
}

/// One cell's chunk, committing its row.
fn row(key: &str) -> v2::read_rows_response::CellChunk {
    use v2::read_rows_response::cell_chunk::RowStatus;
    v2::read_rows_response::CellChunk {
        row_key: key.as_bytes().to_vec().into(),
        family_name: Some("f".into()),
        qualifier: Some(b"q".to_vec()),
        timestamp_micros: 1000,
        value: b"v".to_vec().into(),
        row_status: Some(RowStatus::CommitRow(true)),
        ..Default::default()
    }
}

fn message(chunks: Vec<v2::read_rows_response::CellChunk>) -> v2::ReadRowsResponse {
    v2::ReadRowsResponse {
        chunks,
        ..Default::default()
    }
}

/// Every row of a scan, or the first error with the rows before it.
async fn scan_all(store: &BigtableStore) -> (Vec<String>, Option<StoreError>) {
    use futures_util::StreamExt;
    let mut rows = Vec::new();
    let mut stream = store
        .scan("t", &hmap::store::Scan::all())
        .await
        .expect("the scan opens");
    while let Some(row) = stream.next().await {
        match row {
            Ok(row) => rows.push(String::from_utf8_lossy(&row.row).into_owned()),
            Err(e) => return (rows, Some(e)),
        }
    }
    (rows, None)
}

#[tokio::test]
async fn a_stream_that_stalls_after_a_row_ends_the_scan_with_a_timeout_not_an_end() {
    let (store, _) = store_reading(
        |_, _| 0,
        |_, _| (vec![message(vec![row("a")])], End::Stall),
        Duration::from_millis(300),
    )
    .await;
    let started = Instant::now();
    let (rows, error) = scan_all(&store).await;
    assert_eq!(rows, ["a"]);
    assert!(matches!(error, Some(StoreError::Timeout { .. })), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_stream_broken_with_a_status_is_an_error_not_an_end() {
    let (store, _) = store_reading(
        |_, _| 0,
        |_, _| (vec![message(vec![row("a")])], End::Status(tonic::Code::Internal)),
        Duration::from_secs(10),
    )
    .await;
    let (rows, error) = scan_all(&store).await;
    assert_eq!(rows, ["a"]);
    assert!(matches!(error, Some(StoreError::Server { .. })), "{error:?}");
}

#[tokio::test]
async fn chunks_that_break_the_protocol_are_a_typed_error() {
    // Row b before row a (rows come in key order), then a row committed
    // with no cell in progress.
    let (store, _) = store_reading(
        |_, _| 0,
        |_, _| (vec![message(vec![row("b"), row("a")])], End::Ok),
        Duration::from_secs(10),
    )
    .await;
    let (rows, error) = scan_all(&store).await;
    assert!(rows.is_empty(), "{rows:?}: the response's rows are dropped with it");
    match error {
        Some(e @ StoreError::Protocol { .. }) => assert!(e.to_string().contains("out of order"), "{e}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    // A stream that ends inside a row.
    let (store, _) = store_reading(
        |_, _| 0,
        |_, _| {
            let mut open = row("a");
            open.row_status = None;
            (vec![message(vec![open])], End::Ok)
        },
        Duration::from_secs(10),
    )
    .await;
    let (rows, error) = scan_all(&store).await;
    assert!(rows.is_empty());
    assert!(matches!(error, Some(StoreError::Protocol { .. })), "{error:?}");
}

// Cloud Bigtable's path: TLS, OAuth2 access tokens from a service
// account's key (a fake token endpoint), the routing header.

const CA_PEM: &[u8] = include_bytes!("../../hmap/src/store/native/testdata/tls/ca.pem");
const OTHER_CA_PEM: &[u8] = include_bytes!("../../hmap/src/store/native/testdata/tls/other-ca.pem");
const SERVER_PEM: &[u8] = include_bytes!("../../hmap/src/store/native/testdata/tls/server.pem");
const SERVER_KEY: &[u8] = include_bytes!("../../hmap/src/store/native/testdata/tls/server-key.pem");
/// A throwaway RSA key (PKCS #8), made for these tests with `openssl
/// genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`.
const SERVICE_ACCOUNT_KEY: &str = include_str!("testdata/service-account-key.pem");

/// How the fake token endpoint answers.
#[derive(Clone, Copy)]
enum Tokens {
    /// `token-N` for the Nth request, valid `expires_in` seconds.
    Grant { expires_in: u64 },
    /// 401 with an OAuth2 error.
    Refuse,
    /// Never.
    Stall,
}

/// The bodies the fake token endpoint received.
type Grants = Arc<Mutex<Vec<String>>>;

/// A fake OAuth2 token endpoint (HTTP/1.1): its URL and what it received.
async fn token_endpoint(tokens: Tokens) -> (String, Grants) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/token", listener.local_addr().unwrap());
    let grants = Grants::default();
    let record = grants.clone();
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let record = record.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0; 4096];
                // The head, then as much body as it announces.
                let body = loop {
                    let n = stream.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).into_owned();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().to_string())
                            })
                            .and_then(|v| v.parse::<usize>().ok())
                            .unwrap_or(0);
                        if body.len() >= length {
                            break body.to_string();
                        }
                    }
                };
                let n = {
                    let mut grants = record.lock().unwrap();
                    grants.push(body);
                    grants.len()
                };
                let (status, json) = match tokens {
                    Tokens::Grant { expires_in } => (
                        "200 OK",
                        format!(r#"{{"access_token":"token-{n}","expires_in":{expires_in},"token_type":"Bearer"}}"#),
                    ),
                    Tokens::Refuse => (
                        "401 Unauthorized",
                        r#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.to_string(),
                    ),
                    Tokens::Stall => {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    }
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
                    json.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    (url, grants)
}

/// A service account key file whose tokens come from `token_uri`.
fn key_file(token_uri: &str) -> std::path::PathBuf {
    let key = serde_json::json!({
        "type": "service_account",
        "project_id": "p",
        "private_key_id": "k1",
        "private_key": SERVICE_ACCOUNT_KEY,
        "client_email": "hmap-test@p.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    });
    let path = std::env::temp_dir().join(format!(
        "hmap-bigtable-key-{}-{}.json",
        std::process::id(),
        token_uri.rsplit(':').next().unwrap_or("0").replace('/', "_")
    ));
    std::fs::write(&path, key.to_string()).unwrap();
    path
}

/// Cloud Bigtable's settings, pointed at the fake on `address`.
fn cloud(address: &str, credentials: BigtableCredentials, timeout: Duration) -> BigtableConfig {
    BigtableConfig::cloud("p", "i")
        .data_endpoint(address)
        .admin_endpoint(address)
        .tls(Some(BigtableTls::with_ca_pem(CA_PEM)))
        .credentials(credentials)
        .channels(3)
        .call_timeout(timeout)
        .admin_timeout(timeout)
        .connect_timeout(timeout)
}

/// The JSON claims of the JWT a service account's grant asserts.
fn claims(grant: &str) -> serde_json::Value {
    let jwt = grant
        .split('&')
        .find_map(|pair| pair.strip_prefix("assertion="))
        .expect("an assertion");
    let payload = jwt.split('.').nth(1).expect("a JWT's payload");
    serde_json::from_slice(&base64url(payload)).expect("JSON claims")
}

/// RFC 4648's base64url, unpadded, decoded.
fn base64url(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        other => panic!("not base64url: {other}"),
    };
    let mut out = Vec::new();
    let (mut bits, mut held) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        bits = (bits << 6) | u32::from(value(c));
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
        }
    }
    out
}

#[tokio::test]
async fn cloud_calls_go_over_tls_with_a_fresh_access_token_and_the_routing_header() {
    // Tokens valid 21 s: gcp_auth takes one as expired 20 s before its
    // end, so the second call, a second later, needs a new one.
    let (token_uri, grants) = token_endpoint(Tokens::Grant { expires_in: 21 }).await;
    let (address, calls, seen) = serve(|_, _| 0, |_, _| (Vec::new(), End::Ok), Some(()), None).await;
    let key = key_file(&token_uri);
    let credentials = BigtableCredentials::ServiceAccountKeyFile(key.clone());
    let config = cloud(
        &address.replace("127.0.0.1", "localhost"),
        credentials,
        Duration::from_secs(10),
    );
    let store = BigtableStore::connect(config).await.expect("connected over TLS");
    store.mutate("t", &rows()).await.expect("written");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    store.mutate("t", &rows()).await.expect("written again");
    let _ = std::fs::remove_file(key);
    assert_eq!(calls.lock().unwrap().len(), 2);
    // The first token at connect, then one per scope (admin for GetTable,
    // data for MutateRows), then a fresh one once it was near its end.
    let grants = grants.lock().unwrap().clone();
    assert!(grants.len() >= 3, "{grants:?}");
    let claims = claims(&grants[0]);
    assert_eq!(claims["iss"], "hmap-test@p.iam.gserviceaccount.com");
    assert_eq!(claims["aud"], token_uri.as_str());
    assert_eq!(claims["scope"], "https://www.googleapis.com/auth/bigtable.data");
    let seen = seen.lock().unwrap().clone();
    let writes: Vec<&[String; 4]> = seen.iter().filter(|s| s[0].ends_with("/MutateRows")).collect();
    assert_eq!(writes.len(), 2, "{seen:?}");
    assert!(
        writes
            .iter()
            .all(|s| s[2] == "table_name=projects%2Fp%2Finstances%2Fi%2Ftables%2Ft"),
        "{seen:?}"
    );
    assert_ne!(
        writes[0][1], writes[1][1],
        "the second write has a fresh token: {seen:?}"
    );
    assert!(writes.iter().all(|s| s[1].starts_with("Bearer token-")), "{seen:?}");
    let admin = seen.iter().find(|s| s[0].ends_with("/GetTable")).expect("GetTable");
    assert!(admin[1].starts_with("Bearer token-"), "{admin:?}");
}

#[tokio::test]
async fn cloud_refusals_are_typed_errors_within_the_deadline() {
    let (address, _, _) = serve(|_, _| 0, |_, _| (Vec::new(), End::Ok), Some(()), None).await;
    let timeout = Duration::from_secs(2);
    let connect = |config: BigtableConfig| async move {
        let started = Instant::now();
        let err = BigtableStore::connect(config).await.expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}: {err}",
            started.elapsed()
        );
        err.to_string()
    };
    // A token endpoint that refuses the key, and one that never answers.
    for (tokens, says) in [(Tokens::Refuse, "no access token"), (Tokens::Stall, "timed out after")] {
        let (token_uri, _) = token_endpoint(tokens).await;
        let key = key_file(&token_uri);
        let err = connect(cloud(
            &address,
            BigtableCredentials::ServiceAccountKeyFile(key.clone()),
            timeout,
        ))
        .await;
        let _ = std::fs::remove_file(key);
        assert!(err.contains(says) && err.contains("access token"), "{err}");
    }
    // A key file that is not there.
    let err = connect(cloud(
        &address,
        BigtableCredentials::ServiceAccountKeyFile("/nonexistent/key.json".into()),
        timeout,
    ))
    .await;
    assert!(err.contains("/nonexistent/key.json"), "{err}");
    // A certificate of another CA.
    let other = cloud(&address, BigtableCredentials::None, timeout).tls(Some(BigtableTls::with_ca_pem(OTHER_CA_PEM)));
    let err = connect(other).await;
    assert!(err.contains("certificate"), "{err}");
    // Plain HTTP/2 to a TLS server (the server's answer to HTTP/2's
    // preface is TLS's: the connect fails, saying so), and TLS to a plain
    // one.
    let plain = cloud(&address, BigtableCredentials::None, timeout).tls(None);
    let err = connect(plain).await;
    assert!(err.contains("a TLS server answered"), "{err}");
    let (plain_address, _, _) = serve(|_, _| 0, |_, _| (Vec::new(), End::Ok), None, None).await;
    let err = connect(cloud(&plain_address, BigtableCredentials::None, timeout)).await;
    assert!(err.contains("TLS"), "{err}");
}

#[tokio::test]
async fn the_channel_pool_spreads_calls_round_robin() {
    let (address, _, seen) = serve(|_, _| 0, |_, _| (Vec::new(), End::Ok), Some(()), None).await;
    let config = cloud(&address, BigtableCredentials::None, Duration::from_secs(10));
    let store = BigtableStore::connect(config).await.expect("connected");
    for _ in 0..6 {
        store.mutate("t", &rows()).await.expect("written");
    }
    // Without credentials, no authorization header.
    let seen = seen.lock().unwrap().clone();
    assert!(seen.iter().all(|s| s[1].is_empty()), "{seen:?}");
    let peers: Vec<&str> = seen
        .iter()
        .filter(|s| s[0].ends_with("/MutateRows"))
        .map(|s| s[3].as_str())
        .collect();
    assert_eq!(peers.len(), 6, "{seen:?}");
    assert!(peers.iter().all(|p| !p.is_empty()), "{seen:?}");
    // Three connections, taken in turn.
    let distinct: std::collections::BTreeSet<&str> = peers.iter().copied().collect();
    assert_eq!(distinct.len(), 3, "{peers:?}");
    assert_eq!(peers[..3], peers[3..], "{peers:?}");
}

/// An HTTP/2 reply of gRPC's: `body` as it is, then the trailers of an OK
/// status.
fn raw_reply(body: Vec<u8>) -> http::Response<tonic::body::Body> {
    use http_body::Frame;
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    let frames = futures_util::stream::iter([
        Ok::<_, std::convert::Infallible>(Frame::data(bytes::Bytes::from(body))),
        Ok(Frame::trailers(trailers)),
    ]);
    http::Response::builder()
        .header("content-type", "application/grpc")
        .body(tonic::body::Body::new(http_body_util::StreamBody::new(frames)))
        .unwrap()
}

/// A gRPC frame of `message`: uncompressed, its length, the bytes.
fn frame(message: &[u8]) -> Vec<u8> {
    let mut frame = vec![0];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(message);
    frame
}

/// A store on a fake whose data calls get `raw`'s replies.
async fn store_answering_raw(raw: Raw) -> BigtableStore {
    let (address, _, _) = serve(|_, _| 0, |_, _| (Vec::new(), End::Ok), None, Some(raw)).await;
    let config = BigtableConfig::emulator(address).call_timeout(Duration::from_secs(5));
    BigtableStore::connect(config).await.unwrap()
}

/// `error` is a `Protocol` error of `operation` saying `says`.
fn assert_protocol(error: StoreError, operation: &str, says: &str) {
    match &error {
        StoreError::Protocol {
            operation: op, message, ..
        } => {
            assert_eq!(*op, operation, "{error}");
            assert!(message.contains(says), "{error}");
        }
        other => panic!("expected a protocol error of {operation}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_truncated_frame_is_a_protocol_error() {
    // The length says 100 bytes; 3 come, and the stream ends.
    let store = store_answering_raw(|method| {
        (method == "ReadRows" || method == "MutateRow").then(|| {
            let mut cut = frame(&[0; 100]);
            cut.truncate(8);
            cut
        })
    })
    .await;
    let started = Instant::now();
    let (rows, error) = scan_all(&store).await;
    assert!(rows.is_empty(), "{rows:?}");
    assert_protocol(error.expect("an error, not an end"), "ReadRows", "cut short");
    let error = store
        .mutate("t", &[RowMutation::new("a").put_at("f", "q", 1, "v")])
        .await
        .expect_err("no reply");
    assert_protocol(error, "MutateRow", "cut short");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_message_of_another_type_is_a_protocol_error() {
    // Field 1 of ReadRowsResponse (its chunks) is a message; here it comes
    // as a varint. MutateRowResponse has no field 1: a string there is
    // skipped, as protobuf skips unknown fields, but one cut short is not.
    let store = store_answering_raw(|method| match method {
        "ReadRows" => Some(frame(&[0x08, 0x01])),
        "MutateRow" => Some(frame(&[0x0a, 0x05, b'a'])),
        _ => None,
    })
    .await;
    let (rows, error) = scan_all(&store).await;
    assert!(rows.is_empty(), "{rows:?}");
    assert_protocol(error.expect("an error, not an end"), "ReadRows", "decode");
    let error = store
        .mutate("t", &[RowMutation::new("a").put_at("f", "q", 1, "v")])
        .await
        .expect_err("undecodable");
    assert_protocol(error, "MutateRow", "decode");
}

// Scans that outlive their stream: opened again after the last row.

/// The fake table's rows, `r000` to `r199`, that `request` selects (its
/// row set, forward only, and its limit).
fn selected(request: &v2::ReadRowsRequest) -> Vec<String> {
    use v2::row_range::{EndKey, StartKey};
    let all = (0..200).map(|i| format!("r{i:03}"));
    let rows = request.rows.clone().unwrap_or_default();
    let in_set = |key: &String| {
        let key = key.as_bytes();
        if rows.row_keys.is_empty() && rows.row_ranges.is_empty() {
            return true;
        }
        rows.row_keys.iter().any(|k| &k[..] == key)
            || rows.row_ranges.iter().any(|r| {
                let after_start = match &r.start_key {
                    None => true,
                    Some(StartKey::StartKeyClosed(k)) => key >= &k[..],
                    Some(StartKey::StartKeyOpen(k)) => key > &k[..],
                };
                let before_end = match &r.end_key {
                    None => true,
                    Some(EndKey::EndKeyOpen(k)) => key < &k[..],
                    Some(EndKey::EndKeyClosed(k)) => key <= &k[..],
                };
                after_start && before_end
            })
    };
    let limit = usize::try_from(request.rows_limit)
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or(usize::MAX);
    all.filter(in_set).take(limit).collect()
}

/// Each row in a response of its own, as the emulator sends them.
fn each_alone(keys: &[String]) -> Vec<v2::ReadRowsResponse> {
    keys.iter().map(|k| message(vec![row(k)])).collect()
}

/// The first stream ends with DEADLINE_EXCEEDED after 30 rows; the second
/// sends 20 rows, says it scanned 5 more (filtered out), and ends with
/// UNAVAILABLE; the third sends the rest.
fn cut_twice(n: usize, request: &v2::ReadRowsRequest) -> (Vec<v2::ReadRowsResponse>, End) {
    let keys = selected(request);
    match n {
        0 => (each_alone(&keys[..30]), End::Status(tonic::Code::DeadlineExceeded)),
        1 => {
            let mut replies = each_alone(&keys[..20]);
            replies.push(v2::ReadRowsResponse {
                last_scanned_row_key: keys[24].as_bytes().to_vec().into(),
                ..Default::default()
            });
            (replies, End::Status(tonic::Code::Unavailable))
        }
        _ => (each_alone(&keys), End::Ok),
    }
}

/// Where a resumed request starts: its one range's open start key.
fn resumed_after(request: &v2::ReadRowsRequest) -> String {
    let rows = request.rows.clone().unwrap_or_default();
    assert!(rows.row_keys.is_empty(), "{request:?}");
    match &rows.row_ranges[..] {
        [
            v2::RowRange {
                start_key: Some(v2::row_range::StartKey::StartKeyOpen(k)),
                end_key: None,
            },
        ] => String::from_utf8_lossy(k).into_owned(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_stream_that_breaks_midway_is_opened_again_after_its_last_row() {
    let requests = Requests::default();
    let (address, _, _) = serve_recording(|_, _| 0, cut_twice, None, None, requests.clone()).await;
    let config = BigtableConfig::emulator(address).call_timeout(Duration::from_secs(5));
    let store = BigtableStore::connect(config).await.unwrap();
    let (rows, error) = scan_all(&store).await;
    assert!(error.is_none(), "{error:?}");
    // Every row once, in order, but the five the server said it scanned
    // past (as if its filter dropped them).
    let expected: Vec<String> = (0..200)
        .filter(|i| !(50..55).contains(i))
        .map(|i| format!("r{i:03}"))
        .collect();
    assert_eq!(rows, expected);
    let sent = requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(resumed_after(&sent[1]), "r029");
    assert_eq!(resumed_after(&sent[2]), "r054");
    // None carries a deadline for the server to end the stream at (the
    // fake sees none either way: the client bounds each wait itself).
    assert!(sent.iter().all(|r| r.rows_limit == 0), "{sent:?}");

    // With a limit: what is left of it.
    requests.lock().unwrap().clear();
    let mut stream = store.scan("t", &hmap::store::Scan::all().limit(100)).await.unwrap();
    let mut rows = Vec::new();
    while let Some(row) = futures_util::StreamExt::next(&mut stream).await {
        rows.push(String::from_utf8_lossy(&row.unwrap().row).into_owned());
    }
    assert_eq!(rows.len(), 100, "{rows:?}");
    assert_eq!(rows.last().map(String::as_str), Some("r104"));
    let limits: Vec<i64> = requests.lock().unwrap().iter().map(|r| r.rows_limit).collect();
    assert_eq!(limits, [100, 70, 50]);
}

/// Every stream ends with DEADLINE_EXCEEDED at once: no row comes, so the
/// scan fails when the wait for a response has lasted the call deadline,
/// with the time it waited.
#[tokio::test]
async fn a_stream_that_never_gets_anywhere_fails_at_the_call_deadline() {
    let (store, _) = store_reading(
        |_, _| 0,
        |_, _| (Vec::new(), End::Status(tonic::Code::DeadlineExceeded)),
        Duration::from_millis(800),
    )
    .await;
    let started = Instant::now();
    let (rows, error) = scan_all(&store).await;
    assert!(rows.is_empty());
    match error {
        Some(StoreError::Timeout { elapsed, .. }) => {
            assert!(elapsed >= Duration::from_millis(400), "{elapsed:?}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}

/// A TCP proxy to `target`: forwards the first `forward` connections, each
/// closed both ways once `cut_after` bytes came from the server; closes
/// later ones at once.
async fn cutting_proxy(target: String, forward: usize, cut_after: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut accepted = 0;
        while let Ok((inbound, _)) = listener.accept().await {
            accepted += 1;
            if accepted > forward {
                drop(inbound);
                continue;
            }
            let Ok(outbound) = tokio::net::TcpStream::connect(&target).await else {
                continue;
            };
            tokio::spawn(async move {
                let (mut client_read, mut client_write) = inbound.into_split();
                let (mut server_read, mut server_write) = outbound.into_split();
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                });
                let mut left = cut_after;
                let mut buf = [0u8; 1024];
                while left > 0 {
                    let n = match server_read.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n.min(left),
                    };
                    if client_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    left -= n;
                }
                up.abort();
            });
        }
    });
    address
}

#[tokio::test]
async fn a_connection_broken_midway_is_opened_again_after_the_last_row() {
    let requests = Requests::default();
    let (address, _, _) = serve_recording(
        |_, _| 0,
        |_, request| (each_alone(&selected(request)), End::Ok),
        None,
        None,
        requests.clone(),
    )
    .await;
    // Each connection is cut after 2,500 bytes from the server: its
    // settings, the table's families, then some 60 rows.
    let proxy = cutting_proxy(address, usize::MAX, 2_500).await;
    let config = BigtableConfig::emulator(proxy).call_timeout(Duration::from_secs(5));
    let store = BigtableStore::connect(config).await.unwrap();
    let (rows, error) = scan_all(&store).await;
    assert!(error.is_none(), "{error:?}");
    let expected: Vec<String> = (0..200).map(|i| format!("r{i:03}")).collect();
    assert_eq!(rows, expected);
    let sent = requests.lock().unwrap().clone();
    assert!(sent.len() >= 3, "{}", sent.len());
}

/// A connection broken in the middle of a scan that cannot be made again
/// is a `Connection` error (it was a `Server` error, "HBase failed
/// ReadRows").
#[tokio::test]
async fn a_connection_broken_midway_for_good_is_a_connection_error() {
    let (address, _, _) = serve(
        |_, _| 0,
        |_, request| (each_alone(&selected(request)), End::Ok),
        None,
        None,
    )
    .await;
    // The probe's connection and the store's; later ones are closed.
    let proxy = cutting_proxy(address, 2, 2_500).await;
    let config = BigtableConfig::emulator(proxy).call_timeout(Duration::from_secs(1));
    let store = BigtableStore::connect(config).await.unwrap();
    let started = Instant::now();
    let (rows, error) = scan_all(&store).await;
    assert!(!rows.is_empty() && rows.len() < 200, "{}", rows.len());
    match &error {
        Some(StoreError::Connection { message, .. }) => assert!(message.contains("ReadRows"), "{message}"),
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
}

/// A store pointed at a port where something else than Bigtable answers
/// fails at connect, at once, saying what answered and what to do, in
/// words a user of the library can follow (it waited out the 30 s call
/// deadline on "broken pipe", and named a script of hmap's repository).
#[tokio::test]
async fn a_port_that_is_not_bigtable_fails_at_once_saying_what_answers() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    /// A server answering each connection with `reply` (after reading
    /// what came, when `read_first`), then closing it.
    async fn answering(reply: &'static [u8], read_first: bool) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    if read_first {
                        let mut buf = [0u8; 64];
                        let _ = socket.read(&mut buf).await;
                    }
                    let _ = socket.write_all(reply).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        address
    }
    let cases = [
        (
            answering(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", true).await,
            "an HTTP/1 server answered (`HTTP/1.1 400 Bad Request`)",
        ),
        (answering(b"", false).await, "closed the connection"),
        (answering(b"SSH-2.0-OpenSSH_9.6\r\n", false).await, "not HTTP/2"),
        (
            answering(b"+OK", true).await,
            "answered `+OK` and closed the connection",
        ),
    ];
    for (address, says) in cases {
        let started = Instant::now();
        let error = BigtableStore::connect(BigtableConfig::emulator(address.clone()))
            .await
            .expect_err("not Bigtable");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}: {error}",
            started.elapsed()
        );
        let text = error.to_string();
        assert!(matches!(error, StoreError::Connection { .. }), "{error:?}");
        assert!(text.contains(says), "{text}");
        assert!(text.contains("not a Bigtable server"), "{text}");
        assert!(
            text.contains(&format!("gcloud beta emulators bigtable start --host-port={address}")),
            "{text}"
        );
        assert!(!text.contains("scripts/"), "{text}");
    }
    // Nobody there: the hint says the same.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    drop(listener);
    let error = BigtableStore::connect(BigtableConfig::emulator(address))
        .await
        .expect_err("nobody");
    let text = error.to_string();
    assert!(
        text.contains("gcloud beta emulators bigtable start") && !text.contains("scripts/"),
        "{text}"
    );
}

/// A row key over Bigtable's 4 KiB is refused naming that limit, however
/// long (past HBase's 32,767 bytes, HBase's rule spoke first).
#[tokio::test]
async fn a_row_key_over_four_kib_is_refused_with_bigtables_limit() {
    let (store, calls) = store(|_, _| 0, Duration::from_secs(5)).await;
    for len in [4_097, 40_000] {
        let row = RowMutation::new(vec![b'k'; len]).put_at("f", "q", 1, "v");
        let error = store.mutate("t", &[row]).await.expect_err("too long");
        let text = error.to_string();
        assert!(matches!(error, StoreError::InvalidRow { .. }), "{error:?}");
        assert!(
            text.contains("Bigtable's limit on row keys, 4 KiB (4096 bytes)"),
            "{text}"
        );
        assert!(!text.contains("32767"), "{text}");
        let error = store
            .get("t", &hmap::store::Get::new(vec![b'k'; len]))
            .await
            .expect_err("too long");
        assert!(error.to_string().contains("4 KiB (4096 bytes)"), "{error}");
    }
    assert!(calls.lock().unwrap().is_empty());
}
