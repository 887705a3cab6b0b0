//! NativeStore against a fake cluster of one server (registry, `hbase:meta`
//! and one region of table `t`): region calls, rows, batches and scans,
//! each ridden through the failures HBase answers with, within their
//! deadlines.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::codec::{self, WireCell};
use super::convert;
use super::locate::{RegionLocation, Target};
use super::proto::{self, RequestHeader, ResponseHeader};
use super::retry::Idempotence;
use super::{NativeConfig, NativeStore, RetryPolicy};
use crate::store::{Append, CheckAndMutate, Get, Increment, RowMutation, RowOutcome, RowResult, Scan, StoreError};

/// How the fake region server answers `Get`: the exception class of
/// each try (`Class message` for a message of its own, `{port}` in it
/// standing for the fake's port), then the row (or, with
/// `fail_always`, the last exception for ever).
#[derive(Default)]
struct Script {
    get_failures: Vec<&'static str>,
    fail_always: bool,
    scanner_closes: AtomicUsize,
    /// The next row the fake scanner returns.
    next_row: AtomicUsize,
    /// Scanner calls (not opens) to fail with this exception class.
    scan_failures: Mutex<Vec<&'static str>>,
    meta_scans: AtomicUsize,
    gets: AtomicUsize,
    /// `Mutate` and `Multi` requests to read and then answer by closing
    /// the connection (a server that died with the reply unsent).
    drop_writes: AtomicUsize,
    /// The nonce group and nonce of each `Mutate` received.
    mutates: Mutex<Vec<(Option<u64>, Option<u64>)>>,
    multis: AtomicUsize,
    /// `Mutate` requests to answer with no result (applied, no values).
    empty_answers: AtomicUsize,
    /// Exceptions each `Multi` answers its region actions with, the
    /// last first, before answering them.
    multi_failures: Mutex<Vec<&'static str>>,
    /// How long the fake waits before it answers a `Get` (`None`: at
    /// once).
    get_delay: Mutex<Option<Duration>>,
    /// How long the fake waits before it answers a scanner's next
    /// batch (not its open or close; `None`: at once).
    scan_delay: Mutex<Option<Duration>>,
    /// Rows whose `Multi` actions are answered, each on its own, with
    /// a `NoSuchColumnFamilyException` (the others are applied).
    refused_rows: Vec<&'static str>,
    /// `hbase:meta` lookups to answer with `NotServingRegionException`
    /// (hbase:meta moved).
    meta_failures: AtomicUsize,
    registry_calls: AtomicUsize,
    /// `hbase:meta` lookups answered with this server instead of the
    /// fake's own (a dead server's address), while the count lasts.
    dead_server: Mutex<Option<(String, usize)>>,
}

/// A fake cluster of one server: registry, `hbase:meta` and one region
/// of table `t` holding row `r`.
async fn fake_cluster(script: Arc<Script>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let endpoint = listener.local_addr().expect("addr").to_string();
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let script = script.clone();
            tokio::spawn(serve(stream, script, port));
        }
    });
    endpoint
}

fn cell(row: &str, family: &str, qualifier: &str, value: Vec<u8>) -> WireCell {
    WireCell {
        row: Bytes::copy_from_slice(row.as_bytes()),
        family: Bytes::copy_from_slice(family.as_bytes()),
        qualifier: Bytes::copy_from_slice(qualifier.as_bytes()),
        timestamp: 9,
        cell_type: 4,
        value: value.into(),
    }
}

async fn serve(mut stream: tokio::net::TcpStream, script: Arc<Script>, port: u16) {
    let mut head = [0; 10];
    if stream.read_exact(&mut head).await.is_err() {
        return;
    }
    let mut header = vec![0; u32::from_be_bytes([head[6], head[7], head[8], head[9]]) as usize];
    if stream.read_exact(&mut header).await.is_err() {
        return;
    }
    let mut buf = BytesMut::new();
    loop {
        let mut frame = loop {
            if let Some(frame) = codec::split_frame(&mut buf, 1 << 20).expect("frame") {
                break frame;
            }
            if stream.read_buf(&mut buf).await.unwrap_or(0) == 0 {
                return;
            }
        };
        let len = prost::encoding::decode_varint(&mut frame).expect("varint") as usize;
        let request = RequestHeader::decode(frame.split_to(len)).expect("header");
        let len = prost::encoding::decode_varint(&mut frame).expect("varint") as usize;
        let body = frame.split_to(len);
        let id = request.call_id;
        let ok = |message: Vec<u8>, cells: &[WireCell]| {
            let mut block = BytesMut::new();
            codec::encode_cell_block(cells, &mut block);
            let header = ResponseHeader {
                call_id: id,
                ..Default::default()
            };
            codec::encode_response(&header, Some(&message), &block)
        };
        let reply = match request.method_name.as_deref() {
            Some("GetMetaRegionLocations") => {
                script.registry_calls.fetch_add(1, Ordering::SeqCst);
                ok(
                    proto::GetMetaRegionLocationsResponse {
                        meta_locations: vec![proto::RegionLocation {
                            region_info: region_info("hbase", "meta"),
                            server_name: Some(proto::ServerName {
                                host_name: "127.0.0.1".into(),
                                port: Some(u32::from(port)),
                                start_code: Some(1),
                            }),
                            seq_num: 0,
                        }],
                    }
                    .encode_to_vec(),
                    &[],
                )
            }
            Some("Scan")
                if is_meta_scan(&body)
                    && script
                        .meta_failures
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok() =>
            {
                script.meta_scans.fetch_add(1, Ordering::SeqCst);
                let class = "org.apache.hadoop.hbase.NotServingRegionException";
                codec::encode_exception(id, class, "hbase:meta,,1 is not online on this server")
            }
            Some("Scan") if !is_meta_scan(&body) => {
                // Table t: endless rows r0, r1, ... through scanner 7.
                let scan = proto::ScanRequest::decode(body).expect("scan request");
                if scan.close_scanner == Some(true) {
                    assert_eq!(scan.scanner_id, Some(7));
                    script.scanner_closes.fetch_add(1, Ordering::SeqCst);
                    ok(proto::ScanResponse::default().encode_to_vec(), &[])
                } else {
                    let delay = *script.scan_delay.lock().expect("lock");
                    if let (None, Some(delay)) = (&scan.scan, delay) {
                        tokio::time::sleep(delay).await;
                    }
                    let failure = match scan.scan {
                        Some(_) => None,
                        None => script.scan_failures.lock().expect("lock").pop(),
                    };
                    if let Some(open) = &scan.scan {
                        // Resumed after row rN: start = "rN\0".
                        let start = open.start_row.clone().unwrap_or_default();
                        let resumed = std::str::from_utf8(&start[..start.len().saturating_sub(1)])
                            .ok()
                            .and_then(|s| s.strip_prefix('r'))
                            .and_then(|n| n.parse::<usize>().ok());
                        script.next_row.store(resumed.map_or(0, |n| n + 1), Ordering::SeqCst);
                    } else if let Some(class) = failure {
                        if stream
                            .write_all(&codec::encode_exception(id, class, "scripted"))
                            .await
                            .is_err()
                        {
                            return;
                        }
                        continue;
                    }
                    let n = scan.number_of_rows.unwrap_or(1) as usize;
                    let first = script.next_row.fetch_add(n, Ordering::SeqCst);
                    let cells: Vec<_> = (first..first + n)
                        .map(|i| cell(&format!("r{i}"), "f", "q", b"v".to_vec()))
                        .collect();
                    let message = proto::ScanResponse {
                        cells_per_result: vec![1; cells.len()],
                        scanner_id: Some(7),
                        more_results: Some(true),
                        more_results_in_region: Some(true),
                        ..Default::default()
                    };
                    ok(message.encode_to_vec(), &cells)
                }
            }
            Some("Scan") => {
                script.meta_scans.fetch_add(1, Ordering::SeqCst);
                let name = "t,,1.abc.";
                let mut info = b"PBUF".to_vec();
                info.extend(region_info("default", "t").encode_to_vec());
                let server = {
                    let mut dead = script.dead_server.lock().expect("lock");
                    match dead.as_mut() {
                        Some((server, left)) if *left > 0 => {
                            *left -= 1;
                            server.clone()
                        }
                        _ => format!("127.0.0.1:{port}"),
                    }
                };
                let cells = [
                    cell(name, "info", "regioninfo", info),
                    cell(name, "info", "server", server.into_bytes()),
                ];
                let message = proto::ScanResponse {
                    cells_per_result: vec![2],
                    more_results: Some(false),
                    ..Default::default()
                };
                ok(message.encode_to_vec(), &cells)
            }
            Some("Get") => {
                let delay = *script.get_delay.lock().expect("lock");
                if let Some(delay) = delay {
                    tokio::time::sleep(delay).await;
                }
                let n = script.gets.fetch_add(1, Ordering::SeqCst);
                let failure = match script.get_failures.get(n) {
                    None if script.fail_always => script.get_failures.last(),
                    failure => failure,
                };
                match failure {
                    Some(failure) => {
                        let failure = failure.replace("{port}", &port.to_string());
                        let (class, message) = failure.split_once(' ').unwrap_or((&failure, "scripted"));
                        codec::encode_exception(id, class, message)
                    }
                    _ => {
                        let message = proto::GetResponse {
                            result: Some(proto::Result {
                                associated_cell_count: Some(2),
                                ..Default::default()
                            }),
                        };
                        let cells = [
                            cell("r", "f", "c", 7i64.to_be_bytes().to_vec()),
                            cell("r", "f", "q", b"v".to_vec()),
                        ];
                        ok(message.encode_to_vec(), &cells)
                    }
                }
            }
            Some(method @ ("Mutate" | "Multi")) => {
                if method == "Mutate" {
                    let request = proto::MutateRequest::decode(body.clone()).expect("mutate request");
                    let nonces = (request.nonce_group, request.mutation.nonce);
                    script.mutates.lock().expect("lock").push(nonces);
                } else {
                    script.multis.fetch_add(1, Ordering::SeqCst);
                }
                let dropped = script
                    .drop_writes
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                if dropped {
                    return;
                }
                let empty = script
                    .empty_answers
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                if method == "Mutate" && empty {
                    // Applied, answered without the values.
                    let message = proto::MutateResponse {
                        result: None,
                        processed: Some(true),
                    };
                    ok(message.encode_to_vec(), &[])
                } else if method == "Mutate" {
                    // An increment's (or a condition's) answer: counter c at 1.
                    let message = proto::MutateResponse {
                        result: Some(proto::Result {
                            associated_cell_count: Some(1),
                            ..Default::default()
                        }),
                        processed: Some(true),
                    };
                    ok(
                        message.encode_to_vec(),
                        &[cell("r", "f", "c", 1i64.to_be_bytes().to_vec())],
                    )
                } else {
                    let request = proto::MultiRequest::decode(body).expect("multi request");
                    let failure = script.multi_failures.lock().expect("lock").pop();
                    let message = proto::MultiResponse {
                        region_action_result: request
                            .region_action
                            .iter()
                            .map(|action| match failure {
                                Some(class) => proto::RegionActionResult {
                                    exception: Some(proto::NameBytesPair {
                                        name: class.to_string(),
                                        value: Some(Bytes::from(format!("{class}: scripted"))),
                                    }),
                                    ..Default::default()
                                },
                                None => proto::RegionActionResult {
                                    result_or_exception: (action.action.iter().enumerate())
                                        .map(|(i, a)| {
                                            let row = a
                                                .mutation
                                                .as_ref()
                                                .and_then(|m| m.row.clone())
                                                .or_else(|| a.get.as_ref().map(|g| g.row.clone()));
                                            let refused = row
                                                .is_some_and(|r| script.refused_rows.iter().any(|x| x.as_bytes() == r));
                                            let class =
                                                "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException";
                                            proto::ResultOrException {
                                                index: Some(i as u32),
                                                result: (!refused).then(proto::Result::default),
                                                exception: refused.then(|| proto::NameBytesPair {
                                                    name: class.to_string(),
                                                    value: Some(Bytes::from(format!(
                                                        "{class}: Column family g does not exist in region t,,1.abc."
                                                    ))),
                                                }),
                                            }
                                        })
                                        .collect(),
                                    ..Default::default()
                                },
                            })
                            .collect(),
                    };
                    ok(message.encode_to_vec(), &[])
                }
            }
            other => panic!("unexpected call {other:?}"),
        };
        if stream.write_all(&reply).await.is_err() {
            return;
        }
    }
}

fn is_meta_scan(body: &[u8]) -> bool {
    let request = proto::ScanRequest::decode(body).expect("scan request");
    request.region.is_some_and(|r| r.value.starts_with(b"hbase:meta,"))
}

fn region_info(namespace: &str, table: &str) -> proto::RegionInfo {
    proto::RegionInfo {
        region_id: 1,
        table_name: proto::TableName {
            namespace: Bytes::copy_from_slice(namespace.as_bytes()),
            qualifier: Bytes::copy_from_slice(table.as_bytes()),
        },
        start_key: Some(Bytes::new()),
        end_key: Some(Bytes::new()),
        ..Default::default()
    }
}

async fn store(script: &Arc<Script>, timeout: Duration) -> NativeStore {
    paced_store(script, timeout, RetryPolicy::default()).await
}

/// A store on a fake cluster that `script` runs, pausing as `policy` says.
async fn paced_store(script: &Arc<Script>, timeout: Duration, policy: RetryPolicy) -> NativeStore {
    let endpoint = fake_cluster(script.clone()).await;
    NativeStore::connect(NativeConfig::new([endpoint]).call_timeout(timeout).retry(policy))
        .await
        .expect("connect")
}

/// Pauses of 20 ms: the tests that count tries, not time.
fn quick() -> RetryPolicy {
    RetryPolicy::default().pause(Duration::from_millis(20))
}

fn script(failures: Vec<&'static str>) -> Arc<Script> {
    Arc::new(Script {
        get_failures: failures,
        ..Default::default()
    })
}

#[tokio::test]
async fn a_moved_region_is_looked_up_again() {
    let script = script(vec![
        "org.apache.hadoop.hbase.NotServingRegionException",
        "org.apache.hadoop.hbase.exceptions.RegionOpeningException",
    ]);
    let store = store(&script, Duration::from_secs(10)).await;
    let row = store
        .get_unchecked("t", &Get::new("r"))
        .await
        .expect("answered in the end");
    assert_eq!(row.and_then(|r| r.value("f", "q")), Some(Bytes::from("v")));
    assert_eq!(script.gets.load(Ordering::SeqCst), 3);
    // NotServingRegion: looked up again; RegionOpening: the region is
    // opening where it is, waited for there (as HBase's client does).
    assert_eq!(script.meta_scans.load(Ordering::SeqCst), 2, "a lookup after the move");
}

#[tokio::test]
async fn each_not_here_not_yet_exception_is_ridden_out_for_what_it_means() {
    // Each class once, then the row: the lookups of hbase:meta it took
    // in all (1: the cached location was kept), and whether the retry
    // paused.
    let cases: [(&'static str, usize, bool); 14] = [
        ("org.apache.hadoop.hbase.NotServingRegionException", 2, true),
        (
            "org.apache.hadoop.hbase.exceptions.RegionMovedException Region moved to: hostname=127.0.0.1 port={port} startCode=1. As of locationSeqNum=9.",
            1,
            false,
        ),
        ("org.apache.hadoop.hbase.exceptions.RegionOpeningException", 1, true),
        (
            "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
            2,
            true,
        ),
        (
            "org.apache.hadoop.hbase.regionserver.RegionServerAbortedException",
            2,
            true,
        ),
        ("org.apache.hadoop.hbase.ipc.ServerNotRunningYetException", 2, true),
        ("org.apache.hadoop.hbase.RegionTooBusyException", 1, true),
        ("org.apache.hadoop.hbase.CallQueueTooBigException", 1, true),
        ("org.apache.hadoop.hbase.CallDroppedException", 1, true),
        ("org.apache.hadoop.hbase.PleaseHoldException", 1, true),
        ("org.apache.hadoop.hbase.quotas.RpcThrottlingException", 1, true),
        ("org.apache.hadoop.hbase.RetryImmediatelyException", 1, false),
        ("org.apache.hadoop.hbase.MultiActionResultTooLarge", 1, false),
        // A region moved to a server the message does not name well:
        // looked up again.
        ("org.apache.hadoop.hbase.exceptions.RegionMovedException moved", 2, true),
    ];
    for (failure, lookups, pauses) in cases {
        let script = script(vec![failure]);
        let pause = Duration::from_millis(300);
        let policy = RetryPolicy::default().pause(pause).pause_overloaded(pause);
        let store = paced_store(&script, Duration::from_secs(10), policy).await;
        let started = Instant::now();
        let row = store.get_unchecked("t", &Get::new("r")).await.expect(failure);
        let took = started.elapsed();
        assert_eq!(row.and_then(|r| r.value("f", "q")), Some(Bytes::from("v")), "{failure}");
        assert_eq!(script.gets.load(Ordering::SeqCst), 2, "{failure}");
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), lookups, "{failure}");
        assert_eq!(took >= Duration::from_millis(300), pauses, "{failure}: {took:?}");
    }
}

#[tokio::test]
async fn hbase_meta_not_served_where_it_was_is_found_again_through_the_registry() {
    let script = Arc::new(Script {
        meta_failures: AtomicUsize::new(2),
        ..Default::default()
    });
    let store = paced_store(&script, Duration::from_secs(10), quick()).await;
    assert_eq!(script.registry_calls.load(Ordering::SeqCst), 1, "connect asks once");
    store.get_unchecked("t", &Get::new("r")).await.expect("served");
    assert_eq!(
        script.meta_scans.load(Ordering::SeqCst),
        3,
        "two refusals, then the lookup"
    );
    assert_eq!(
        script.registry_calls.load(Ordering::SeqCst),
        3,
        "the registry asked again after each refusal"
    );
}

/// Adds 1 to counter `f:c` of row `r` in table `t`.
async fn increment_c(store: &NativeStore) -> Result<Vec<i64>, StoreError> {
    store
        .increment_unchecked("t", &Increment::new("r").add("f", "c", 1))
        .await
}

#[tokio::test]
async fn an_increment_whose_reply_was_lost_is_sent_again_with_its_nonce() {
    let script = Arc::new(Script {
        drop_writes: AtomicUsize::new(1),
        ..Default::default()
    });
    let store = store(&script, Duration::from_secs(10)).await;
    let values = increment_c(&store).await.expect("sent again");
    assert_eq!(values, [1]);
    let mutates = script.mutates.lock().expect("lock").clone();
    assert_eq!(mutates.len(), 2, "{mutates:?}");
    let (group, nonce) = mutates[0];
    assert!(group.is_some() && nonce.is_some_and(|n| n != 0), "{mutates:?}");
    assert_eq!(mutates[1], mutates[0], "the same nonce on the repeat");
    // Another increment gets a nonce of its own.
    increment_c(&store).await.expect("answered");
    let mutates = script.mutates.lock().expect("lock").clone();
    assert_eq!(mutates[2].0, group);
    assert_ne!(mutates[2].1, nonce);
}

#[tokio::test]
async fn an_increment_answered_without_its_values_reads_them_back() {
    let script = Arc::new(Script {
        empty_answers: AtomicUsize::new(1),
        ..Default::default()
    });
    let store = store(&script, Duration::from_secs(10)).await;
    let values = increment_c(&store).await.expect("read back");
    assert_eq!(values, [7], "the value the get read");
    assert_eq!(script.mutates.lock().expect("lock").len(), 1, "not sent again");
    assert_eq!(script.gets.load(Ordering::SeqCst), 1);
}

/// Appends to column `f:c` of row `r` in table `t`.
async fn append_c(store: &NativeStore) -> Result<RowResult, StoreError> {
    store.append_unchecked("t", &Append::new("r").add("f", "c", "x")).await
}

#[tokio::test]
async fn an_append_whose_reply_was_lost_is_sent_again_with_its_nonce() {
    let script = Arc::new(Script {
        drop_writes: AtomicUsize::new(1),
        ..Default::default()
    });
    let store = store(&script, Duration::from_secs(10)).await;
    let row = append_c(&store).await.expect("sent again");
    assert_eq!(
        row.value("f", "c").as_deref(),
        Some(&1i64.to_be_bytes()[..]),
        "the answer's cell"
    );
    let mutates = script.mutates.lock().expect("lock").clone();
    assert_eq!(mutates.len(), 2, "{mutates:?}");
    let (group, nonce) = mutates[0];
    assert!(group.is_some() && nonce.is_some_and(|n| n != 0), "{mutates:?}");
    assert_eq!(mutates[1], mutates[0], "the same nonce on the repeat");
    append_c(&store).await.expect("answered");
    let mutates = script.mutates.lock().expect("lock").clone();
    assert_eq!(mutates[2].0, group);
    assert_ne!(mutates[2].1, nonce, "another append, another nonce");
}

#[tokio::test]
async fn an_append_answered_without_its_values_reads_them_back() {
    let script = Arc::new(Script {
        empty_answers: AtomicUsize::new(1),
        ..Default::default()
    });
    let store = store(&script, Duration::from_secs(10)).await;
    let row = append_c(&store).await.expect("read back");
    assert_eq!(
        row.value("f", "c").as_deref(),
        Some(&7i64.to_be_bytes()[..]),
        "the value the get read"
    );
    assert_eq!(row.cells.len(), 1, "only the appended column: {row:?}");
    assert_eq!(script.mutates.lock().expect("lock").len(), 1, "not sent again");
    assert_eq!(script.gets.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_check_and_mutate_whose_reply_was_lost_says_it_may_have_been_applied() {
    let script = Arc::new(Script {
        drop_writes: AtomicUsize::new(1),
        ..Default::default()
    });
    let store = store(&script, Duration::from_secs(10)).await;
    let op = CheckAndMutate::new(RowMutation::new("r").put("f", "q", "v"), "f", "q", None);
    let err = store
        .check_and_mutate_unchecked("t", &op)
        .await
        .expect_err("not sent again");
    assert!(err.maybe_applied() && err.is_transient(), "{err:?}");
    assert_eq!(script.mutates.lock().expect("lock").len(), 1, "sent once");
}

#[tokio::test]
async fn a_batch_whose_connection_broke_is_sent_again() {
    let script = Arc::new(Script {
        drop_writes: AtomicUsize::new(1),
        ..Default::default()
    });
    let store = store(&script, Duration::from_secs(10)).await;
    let rows = [
        RowMutation::new("a").put("f", "q", "1"),
        RowMutation::new("b").put("f", "q", "2"),
    ];
    store.mutate_unchecked("t", &rows).await.expect("sent again");
    assert_eq!(script.multis.load(Ordering::SeqCst), 2);
    // A delete of a column's newest version is not sent twice.
    script.drop_writes.store(1, Ordering::SeqCst);
    let rows = [
        RowMutation::new("a").delete_latest("f", "q"),
        RowMutation::new("b").put("f", "q", "2"),
    ];
    let err = store.mutate_unchecked("t", &rows).await.expect_err("not sent again");
    assert!(err.maybe_applied(), "{err:?}");
    // The error names the server whose connection broke (it named none).
    let message = err.to_string();
    assert!(message.contains("the connection to 127.0.0.1:"), "{message}");
    // Row b, which may be sent twice, was sent again on its own (rows
    // are independent), and row a was not.
    assert_eq!(script.multis.load(Ordering::SeqCst), 4);
}

/// A call's options replace the store's timeout, shorter or longer.
#[tokio::test]
async fn a_call_timeout_replaces_the_stores() {
    use crate::store::CallOptions;
    let script = Arc::new(Script::default());
    let get = crate::store::Get::new("r");
    // A server that takes 800 ms; the store gives a call 300 ms.
    let store = store(&script, Duration::from_millis(300)).await;
    *script.get_delay.lock().expect("lock") = Some(Duration::from_millis(800));
    let err = store.get_unchecked("t", &get).await.expect_err("300 ms are too few");
    assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
    let patient = CallOptions::new().timeout(Duration::from_secs(5));
    let row = patient
        .clone()
        .scope(store.get_unchecked("t", &get))
        .await
        .expect("5 s are enough");
    assert!(row.is_some());

    // A server that takes 60 s; the store gives a call 30 s, the call
    // asks for 300 ms and fails at about that.
    let store = self::store(&script, Duration::from_secs(30)).await;
    *script.get_delay.lock().expect("lock") = Some(Duration::from_secs(60));
    let started = std::time::Instant::now();
    let err = CallOptions::new()
        .timeout(Duration::from_millis(300))
        .scope(store.get_unchecked("t", &get))
        .await
        .expect_err("the call's 300 ms");
    assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

/// A scanner keeps the timeout of the scope it was opened in for its
/// later fetches, read outside that scope: longer than the store's
/// (a fetch that takes 800 ms on a store that gives a call 300 ms),
/// or shorter (a fetch that never comes on a store that gives 30 s).
#[tokio::test]
async fn a_scanner_keeps_the_timeout_it_was_opened_with() {
    use crate::store::CallOptions;
    let script = Arc::new(Script::default());
    let scan = Scan::all().batch_size(2);
    let opened = async |store: &NativeStore, timeout: Duration| {
        CallOptions::new()
            .timeout(timeout)
            .scope(async {
                let mut scanner = store.scanner("t", &scan);
                scanner.open().await.map(|()| scanner)
            })
            .await
            .expect("opened at once")
    };
    let store = store(&script, Duration::from_millis(300)).await;
    *script.scan_delay.lock().expect("lock") = Some(Duration::from_millis(800));
    let mut scanner = opened(&store, Duration::from_secs(5)).await;
    // The rows of the open, then one fetch that takes 800 ms.
    let first = scanner.next_batch().await.expect("buffered").expect("a batch");
    assert_eq!(first.len(), 2);
    let second = scanner.next_batch().await.expect("5 s are enough").expect("a batch");
    let keys: Vec<_> = second.iter().map(|r| r.row.clone()).collect();
    assert_eq!(keys, ["r2", "r3"]);
    // The same through the stream `Store::scan` hands out, read by
    // another task.
    let rows = crate::store::prefetch::prefetched("t", opened(&store, Duration::from_secs(5)).await);
    let rows: Vec<_> = futures_util::StreamExt::collect::<Vec<_>>(futures_util::StreamExt::take(rows, 4)).await;
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(Result::is_ok), "{rows:?}");
    drop(scanner);

    let store = self::store(&script, Duration::from_secs(30)).await;
    *script.scan_delay.lock().expect("lock") = Some(Duration::from_secs(60));
    let mut scanner = opened(&store, Duration::from_millis(300)).await;
    scanner.next_batch().await.expect("buffered").expect("a batch");
    let started = std::time::Instant::now();
    let err = scanner.next_batch().await.expect_err("the scan's 300 ms");
    assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_batch_answers_for_each_row() {
    let script = Arc::new(Script {
        refused_rows: vec!["b"],
        ..Default::default()
    });
    let store = store(&script, Duration::from_secs(10)).await;
    let rows = [
        RowMutation::new("a").put("f", "q", "1"),
        RowMutation::new("b").put("g", "q", "2"),
        RowMutation::new("c").put("f", "q", "3"),
        RowMutation::new("d").put("f", "q", "4"),
    ];
    let invalid = || StoreError::InvalidRow {
        table: "t".into(),
        row: "d".into(),
        reason: "checked before sending".into(),
    };
    let checked = vec![Ok(()), Ok(()), Ok(()), Err(invalid())];
    let outcome = store
        .mutate_each_unchecked("t", &rows, checked)
        .await
        .expect("answered");
    assert!(outcome[0].is_applied() && outcome[2].is_applied(), "{outcome:?}");
    assert!(
        matches!(&outcome[1], RowOutcome::Refused(StoreError::NoSuchFamily { family, .. }) if family == "g"),
        "{outcome:?}"
    );
    assert!(
        matches!(outcome[3], RowOutcome::Refused(StoreError::InvalidRow { .. })),
        "{outcome:?}"
    );
    assert_eq!(
        script.multis.load(Ordering::SeqCst),
        1,
        "one Multi, the refused row not sent again"
    );
    // The all-or-first-error form reports the first failed row.
    let err = store
        .mutate_unchecked("t", &rows[..3])
        .await
        .expect_err("row b refused");
    assert!(matches!(err, StoreError::NoSuchFamily { .. }), "{err:?}");
    // Reads too: row b's error in its place, the others read.
    let gets = [
        crate::store::Get::new("a"),
        crate::store::Get::new("b"),
        crate::store::Get::new("c"),
    ];
    let read = store.get_each_unchecked("t", &gets).await.expect("answered");
    assert!(
        matches!(read[..], [Ok(_), Err(StoreError::NoSuchFamily { .. }), Ok(_)]),
        "{read:?}"
    );
    let err = store.get_many_unchecked("t", &gets).await.expect_err("row b failed");
    assert!(matches!(err, StoreError::NoSuchFamily { .. }), "{err:?}");

    // A reply lost: the row that may not be sent twice (a delete of the
    // newest version) is unknown, the put sent again is applied.
    script.drop_writes.store(1, Ordering::SeqCst);
    let rows = [
        RowMutation::new("a").delete_latest("f", "q"),
        RowMutation::new("c").put("f", "q", "3"),
    ];
    let outcome = store
        .mutate_each_unchecked("t", &rows, vec![Ok(()), Ok(())])
        .await
        .expect("answered");
    assert!(
        matches!(&outcome[0], RowOutcome::Unknown(e) if e.maybe_applied()),
        "{outcome:?}"
    );
    assert!(outcome[1].is_applied(), "{outcome:?}");
}

#[tokio::test]
async fn a_batchs_region_exceptions_are_ridden_out_for_what_they_mean() {
    let script = Arc::new(Script::default());
    // Popped from the end: the server is stopping, the region moved,
    // the server is busy, then the rows are applied.
    script.multi_failures.lock().expect("lock").extend([
        "org.apache.hadoop.hbase.RegionTooBusyException",
        "org.apache.hadoop.hbase.NotServingRegionException",
        "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
    ]);
    let store = paced_store(&script, Duration::from_secs(10), quick()).await;
    let rows = [
        RowMutation::new("a").put("f", "q", "1"),
        RowMutation::new("b").put("f", "q", "2"),
    ];
    store.mutate_unchecked("t", &rows).await.expect("applied in the end");
    assert_eq!(script.multis.load(Ordering::SeqCst), 4);
    // The first lookup, one after the stopped server and one after the
    // move; the busy server kept its region.
    assert_eq!(script.meta_scans.load(Ordering::SeqCst), 3);
    // A request the server refuses is not sent again.
    script
        .multi_failures
        .lock()
        .expect("lock")
        .push("org.apache.hadoop.hbase.DoNotRetryIOException");
    let err = store.mutate_unchecked("t", &rows).await.expect_err("refused");
    assert!(!err.maybe_applied(), "{err:?}");
    assert_eq!(script.multis.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn a_batch_to_a_dead_server_waits_for_its_region_to_be_served_elsewhere() {
    // hbase:meta names a server that refuses connections for the first
    // three lookups, then the fake itself (the region reassigned).
    let dead = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let dead_address = dead.local_addr().expect("addr").to_string();
    drop(dead);
    let script = Arc::new(Script {
        dead_server: Mutex::new(Some((dead_address.clone(), 3))),
        ..Default::default()
    });
    let store = paced_store(&script, Duration::from_secs(10), quick()).await;
    let rows = [
        RowMutation::new("a").put("f", "q", "1"),
        RowMutation::new("b").put("f", "q", "2"),
    ];
    store.mutate_unchecked("t", &rows).await.expect("served elsewhere");
    assert_eq!(script.multis.load(Ordering::SeqCst), 1, "sent once, where it is served");
    assert_eq!(script.meta_scans.load(Ordering::SeqCst), 4, "a lookup per pause");
    assert!(store.locate("t", b"a").await.expect("cached").server != dead_address);

    // Never served again: the deadline says what was waited for, and
    // that nothing was applied.
    let script = Arc::new(Script {
        dead_server: Mutex::new(Some((dead_address.clone(), usize::MAX))),
        ..Default::default()
    });
    let store = paced_store(&script, Duration::from_millis(800), quick()).await;
    let started = Instant::now();
    let err = store.mutate_unchecked("t", &rows).await.expect_err("never served");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(
        matches!(err, StoreError::Unavailable { .. }) && !err.maybe_applied(),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&dead_address) && message.contains("row a"),
        "{message}"
    );
    assert!(message.contains("nothing of it was applied"), "{message}");
}

/// A region on a server that serves TLS only, found through hbase:meta
/// (as a store bootstrapped through ZooKeeper finds every server): the
/// plaintext call fails at once, saying so, where it waited out its
/// deadline as for a server that is stopping.
#[tokio::test]
async fn a_region_server_that_serves_tls_only_fails_a_plaintext_call_at_once() {
    let tls_only = crate::security::probe::tls_only_server().await;
    let script = Arc::new(Script {
        dead_server: Mutex::new(Some((tls_only.clone(), usize::MAX))),
        ..Default::default()
    });
    let store = paced_store(&script, Duration::from_secs(10), quick()).await;
    let started = Instant::now();
    let err = store.get_unchecked("t", &Get::new("r")).await.expect_err("TLS only");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}: {err}",
        started.elapsed()
    );
    let StoreError::Connection { endpoint, message, .. } = &err else {
        panic!("not a connection error: {err:?}");
    };
    assert_eq!(*endpoint, tls_only, "{err}");
    assert!(
        message.contains("serves TLS only") && message.contains("NativeConfig::tls"),
        "{message}"
    );
    assert_eq!(script.meta_scans.load(Ordering::SeqCst), 1, "not retried: {err}");
}

/// What HBase does with an increment sent twice under one nonce (a
/// retry after a lost reply): applies it once, and answers the repeat
/// with the counter's value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_NATIVE from scripts/hbase/hbase address"]
async fn hbase_applies_an_increment_sent_twice_with_one_nonce_once() {
    use crate::schema::{FamilySchema, TableSchema};
    use crate::store::Store;
    let address = std::env::var("HMAP_NATIVE").expect("HMAP_NATIVE");
    let store = NativeStore::connect(NativeConfig::new(address.split(',')))
        .await
        .expect("connect");
    let table = "hmap_nonce_check";
    if store.table_exists(table).await.expect("listed") {
        store.delete_table(table).await.expect("deleted");
    }
    store
        .create_table(&TableSchema::new(table).family(FamilySchema::new("f")))
        .await
        .expect("created");
    let op = Increment::new("r").add("f", "c", 5);
    let mutation = proto::MutationProto {
        nonce: Some(super::random::random_u64()),
        ..convert::increment(&op)
    };
    let request = |region: &RegionLocation| proto::MutateRequest {
        region: region.specifier(),
        mutation: mutation.clone(),
        condition: None,
        nonce_group: Some(store.inner.nonce_group),
    };
    let mut answers = Vec::new();
    for _ in 0..2 {
        let (_, reply) = store
            .region_call::<_, proto::MutateResponse>(table, Target::Row(b"r"), "Mutate", Idempotence::Safe, request)
            .await
            .expect("answered");
        let result = reply.message.result.unwrap_or_default();
        let row = convert::associated_cells(&result)
            .and_then(|n| convert::row_result(&result, n, &mut reply.cells.into_iter()))
            .expect("decoded");
        answers.push(convert::counters(&op, row.as_ref()).map_err(|e| e.to_string()));
    }
    let stored = store.get(table, &Get::new("r")).await.expect("read").expect("a row");
    let value = stored.value("f", "c").expect("a counter");
    assert_eq!(&value[..], &5i64.to_be_bytes(), "applied once");
    assert_eq!(answers[0], Ok(vec![5]), "{answers:?}");
    assert_eq!(
        answers[1],
        Ok(vec![5]),
        "the repeat answered with the value: {answers:?}"
    );
    store.delete_table(table).await.expect("deleted");
}

#[tokio::test]
async fn a_busy_server_is_waited_for_without_a_lookup() {
    let script = script(vec!["org.apache.hadoop.hbase.CallQueueTooBigException"]);
    let store = store(&script, Duration::from_secs(10)).await;
    store.get_unchecked("t", &Get::new("r")).await.expect("answered");
    assert_eq!(script.gets.load(Ordering::SeqCst), 2);
    assert_eq!(script.meta_scans.load(Ordering::SeqCst), 1, "the cached location kept");
}

#[tokio::test]
async fn retries_stop_at_the_deadline() {
    let script = Arc::new(Script {
        fail_always: true,
        get_failures: vec!["org.apache.hadoop.hbase.NotServingRegionException"],
        ..Default::default()
    });
    let store = store(&script, Duration::from_millis(300)).await;
    let started = Instant::now();
    let err = store
        .get_unchecked("t", &Get::new("r"))
        .await
        .expect_err("never served");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(script.gets.load(Ordering::SeqCst) >= 2, "retried");
    let message = err.to_string();
    assert!(
        message.contains("table `t`") && message.contains("NotServingRegionException"),
        "{message}"
    );
}

#[tokio::test]
async fn other_exceptions_are_not_retried() {
    let script = script(vec!["org.apache.hadoop.hbase.DoNotRetryIOException"]);
    let store = store(&script, Duration::from_secs(10)).await;
    let err = store.get_unchecked("t", &Get::new("r")).await.expect_err("refused");
    assert_eq!(script.gets.load(Ordering::SeqCst), 1);
    assert!(
        matches!(&err, StoreError::Server { table, message, .. } if table == "t" && message.starts_with("row r:")),
        "{err}"
    );
}

#[tokio::test]
async fn scanners_close_when_they_stop_early_or_are_dropped() {
    let script = script(vec![]);
    let store = store(&script, Duration::from_secs(10)).await;
    // A limit inside the second batch: the scanner is closed at once.
    let rows = store
        .scan_unchecked("t", &Scan::all().batch_size(2).limit(3))
        .await
        .expect("scan");
    let keys: Vec<_> = rows.iter().map(|r| r.row.clone()).collect();
    assert_eq!(keys, ["r0", "r1", "r2"]);
    assert_eq!(script.scanner_closes.load(Ordering::SeqCst), 1);
    // Dropped half-way: closed in the background.
    let mut scanner = store.scanner("t", &Scan::all().batch_size(2));
    let first = scanner.next_batch().await.expect("rows").expect("a batch");
    let keys: Vec<_> = first.iter().map(|r| r.row.clone()).collect();
    assert_eq!(keys, ["r0", "r1"]);
    drop(scanner);
    for _ in 0..100 {
        if script.scanner_closes.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(script.scanner_closes.load(Ordering::SeqCst), 2);
    // Never opened: nothing to close.
    drop(store.scanner("t", &Scan::all()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(script.scanner_closes.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_scan_resumes_after_its_last_row_when_the_scanner_is_lost() {
    let script = script(vec![]);
    // Popped from the end: the lease expires, the scanner is reset
    // (its region reopened), the server forgets it, the region moves.
    script.scan_failures.lock().expect("lock").extend([
        "org.apache.hadoop.hbase.UnknownScannerException",
        "org.apache.hadoop.hbase.NotServingRegionException",
        "org.apache.hadoop.hbase.exceptions.ScannerResetException",
        "org.apache.hadoop.hbase.regionserver.LeaseException",
    ]);
    let store = store(&script, Duration::from_secs(10)).await;
    let rows = store
        .scan_unchecked("t", &Scan::all().batch_size(2).limit(11))
        .await
        .expect("scan");
    let keys: Vec<_> = rows
        .iter()
        .map(|r| String::from_utf8_lossy(&r.row).into_owned())
        .collect();
    assert_eq!(
        keys,
        ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"],
        "no row lost or repeated"
    );
    assert!(
        script.scan_failures.lock().expect("lock").is_empty(),
        "both failures met"
    );
    assert_eq!(
        script.meta_scans.load(Ordering::SeqCst),
        2,
        "looked up again after the region moved"
    );
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn a_store_outlives_the_runtime_it_was_first_used_on() {
    // The fake cluster runs on a runtime of its own, which outlives the
    // client's.
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("server runtime");
    let script = script(vec![]);
    let endpoint = server.block_on(fake_cluster(script.clone()));
    let first = current_thread();
    let config = NativeConfig::new([endpoint]).call_timeout(Duration::from_secs(5));
    let store = first.block_on(NativeStore::connect(config)).expect("connect");
    let row = first.block_on(store.get_unchecked("t", &Get::new("r"))).expect("get");
    assert!(row.is_some());
    // Its connections' tasks go with it.
    drop(first);
    let second = current_thread();
    let started = Instant::now();
    let row = second
        .block_on(store.get_unchecked("t", &Get::new("r")))
        .expect("a get on the second runtime");
    assert_eq!(row.and_then(|r| r.value("f", "q")), Some(Bytes::from("v")));
    let rows = second
        .block_on(store.scan_unchecked("t", &Scan::all().batch_size(2).limit(3)))
        .expect("a scan on the second runtime");
    assert_eq!(rows.len(), 3);
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(script.meta_scans.load(Ordering::SeqCst), 1, "the region cache kept");
}

/// The metrics a NativeStore reports on its own (the per-call ones
/// come from `traced`, as on every backend): retries by reason, region
/// cache misses and relocations, bytes each way.
#[cfg(feature = "metrics")]
#[tokio::test]
async fn retries_region_lookups_and_bytes_are_reported() {
    use crate::store::metrics::{self, testing::Captured};

    let captured = Captured::default();
    // This test's thread; the current-thread runtime runs the fake
    // server's and the connections' tasks here too.
    let _recorder = ::metrics::set_default_local_recorder(&captured);
    let script = script(vec![
        "org.apache.hadoop.hbase.NotServingRegionException",
        "org.apache.hadoop.hbase.exceptions.RegionOpeningException",
        "org.apache.hadoop.hbase.CallQueueTooBigException",
    ]);
    let store = store(&script, Duration::from_secs(10)).await;
    store
        .get_unchecked("t", &Get::new("r"))
        .await
        .expect("answered in the end");
    assert_eq!(script.gets.load(Ordering::SeqCst), 4);

    let native = [("backend", "native")];
    let retries = |reason| captured.counter(metrics::RETRIES, &[("backend", "native"), ("reason", reason)]);
    assert_eq!(retries("region_moved"), 2);
    assert_eq!(retries("server_busy"), 1);
    // The first lookup, and one after the move; the opening region and
    // the busy server kept their cached location.
    assert_eq!(captured.counter(metrics::REGION_CACHE_MISSES, &[]), 2);
    assert_eq!(script.meta_scans.load(Ordering::SeqCst), 2);
    assert_eq!(captured.counter(metrics::REGION_RELOCATIONS, &[]), 1);
    // Every request and reply, the registry's included: more than the
    // four gets' headers alone.
    let sent = captured.counter(metrics::BYTES_SENT, &native);
    let received = captured.counter(metrics::BYTES_RECEIVED, &native);
    assert!(sent > 4 * 20, "{sent} bytes sent");
    assert!(received > 4 * 20, "{received} bytes received");
}
