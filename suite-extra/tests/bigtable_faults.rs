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
use hmap::store::bigtable::{BigtableConfig, BigtableStore};
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
}

/// A `ReadRows` reply: its messages, then how the stream ends.
type Reads = fn() -> (Vec<v2::ReadRowsResponse>, End);

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
struct Reader(Reads);

impl tonic::server::ServerStreamingService<v2::ReadRowsRequest> for Reader {
    type Response = v2::ReadRowsResponse;
    type ResponseStream = Rows;
    type Future = Pin<Box<dyn Future<Output = Result<tonic::Response<Rows>, tonic::Status>> + Send>>;

    fn call(&mut self, _: tonic::Request<v2::ReadRowsRequest>) -> Self::Future {
        use futures_util::StreamExt;
        let (messages, end) = (self.0)();
        let head = futures_util::stream::iter(messages.into_iter().map(Ok));
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
        Box::pin(async move {
            use tonic::server::Grpc;
            use tonic_prost::ProstCodec;
            match request.uri().path() {
                "/google.bigtable.v2.Bigtable/ReadRows" => {
                    let mut grpc = Grpc::new(ProstCodec::<v2::ReadRowsResponse, v2::ReadRowsRequest>::default());
                    Ok(grpc.server_streaming(Reader(fake.reads), request).await)
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
    store_reading(answer, || (Vec::new(), End::Ok), timeout).await
}

/// [`store`], its server streaming `reads` for every `ReadRows`.
async fn store_reading(answer: Answer, reads: Reads, timeout: Duration) -> (BigtableStore, Calls) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let calls = Calls::default();
    let fake = Fake {
        calls: calls.clone(),
        answer,
        reads,
    };
    tokio::spawn(async move {
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        tonic::transport::Server::builder()
            .serve_with_incoming(fake, incoming)
            .await
            .unwrap();
    });
    let config = BigtableConfig::emulator(address.to_string()).call_timeout(timeout);
    (BigtableStore::connect(config).await.unwrap(), calls)
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
        || (vec![message(vec![row("a")])], End::Stall),
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
        || (vec![message(vec![row("a")])], End::Status(tonic::Code::Internal)),
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
        || (vec![message(vec![row("b"), row("a")])], End::Ok),
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
        || {
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
