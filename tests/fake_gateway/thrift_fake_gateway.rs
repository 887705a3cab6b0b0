//! `ThriftStore` (and, at the end, `Thrift1Store`) against a fake gateway on 127.0.0.1 that sends what a real
//! one never does: bytes one at a time, structs nested 40,000 deep, lists of
//! 2^31-1 STOP elements, results of the wrong type, truncated replies,
//! garbage, exceptions. Each call must end with a typed error within its
//! deadline: no panic, no hang, no stack overflow. Needs no HBase.

use crate::fake;

use std::time::{Duration, Instant};

use crate::fake::{Act, BOOL, I32, I64, LIST, MAP, Msg, STRING, STRUCT};
use futures_util::StreamExt;
use hmap::store::{
    CheckAndMutate, Get, Increment, RowMutation, Scan, Store, StoreError, Thrift1Store, ThriftConfig, ThriftStore,
};

/// The settings of a store on `addr` whose calls may take `call_timeout`
/// each.
fn config(addr: std::net::SocketAddr, call_timeout: Duration) -> ThriftConfig {
    let mut config = ThriftConfig::new(addr.to_string());
    config.pool_size = 2;
    config.connect_timeout = Duration::from_secs(1);
    config.call_timeout = call_timeout;
    config
}

/// A store on `addr` whose calls may take `call_timeout` each.
fn store(addr: std::net::SocketAddr, call_timeout: Duration) -> ThriftStore {
    ThriftStore::with_config(config(addr, call_timeout))
}

/// Runs `f`, checking it ends within `limit`.
async fn within<T>(limit: Duration, f: impl std::future::Future<Output = T>) -> T {
    let start = Instant::now();
    let out = f.await;
    let took = start.elapsed();
    assert!(took < limit, "took {took:?}, more than {limit:?}");
    out
}

/// A valid `tableExists` reply.
fn exists_reply(seq: i32, exists: bool) -> Vec<u8> {
    Msg::reply("tableExists", seq)
        .field(BOOL, 0)
        .byte(u8::from(exists))
        .stop()
        .done()
}

fn expect_protocol_error(result: Result<impl std::fmt::Debug, StoreError>) -> String {
    match result {
        Err(e @ StoreError::Protocol { .. }) => e.to_string(),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_dribbling_gateway_times_out_at_the_call_deadline() {
    // One byte every 200 ms: each read is quick, the reply takes seconds.
    let addr = fake::start(|_, seq| Act::Dribble(exists_reply(seq, true), Duration::from_millis(200)));
    let store = store(addr, Duration::from_secs(1));
    let err = within(Duration::from_millis(1600), store.table_exists("t"))
        .await
        .unwrap_err();
    match &err {
        StoreError::Timeout { operation, elapsed, .. } => {
            assert_eq!(*operation, "tableExists");
            assert!(*elapsed >= Duration::from_secs(1), "{elapsed:?}");
            assert!(*elapsed < Duration::from_millis(1500), "{elapsed:?}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(err.is_transient());
    assert!(err.to_string().contains("timed out after 1."), "{err}");
}

#[tokio::test]
async fn waiting_for_a_pooled_connection_counts_against_the_deadline() {
    let addr = fake::start(|_, _| Act::Silent(Duration::from_secs(10)));
    let mut config = ThriftConfig::new(addr.to_string());
    config.pool_size = 1;
    config.call_timeout = Duration::from_secs(1);
    let store = ThriftStore::with_config(config);
    let holder = {
        let store = store.clone();
        tokio::spawn(async move { store.table_exists("a").await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let waiter = within(Duration::from_millis(1500), store.table_exists("b")).await;
    assert!(matches!(waiter, Err(StoreError::Timeout { .. })), "{waiter:?}");
    let held = holder.await.expect("no panic");
    assert!(matches!(held, Err(StoreError::Timeout { .. })), "{held:?}");
}

#[tokio::test]
async fn structs_nested_40000_deep_are_a_protocol_error_not_a_stack_overflow() {
    let addr = fake::start(|method, seq| {
        let mut m = Msg::reply(method, seq);
        for _ in 0..40_000 {
            m.field(STRUCT, 0);
        }
        Act::Send(m.done())
    });
    let store = store(addr, Duration::from_secs(5));
    let message = expect_protocol_error(within(Duration::from_secs(5), store.table_exists("t")).await);
    assert!(message.contains("deeper than 64"), "{message}");
}

#[tokio::test]
async fn containers_of_stop_elements_declared_huge_are_refused_at_once() {
    for elems in [vec![0u8], vec![0, 0], vec![0x7f], vec![STRING, 0x55]] {
        let kind = if elems.len() == 2 { MAP } else { LIST };
        let addr = fake::start(move |method, seq| {
            let mut m = Msg::reply(method, seq);
            m.field(kind, 0);
            for &e in &elems {
                m.byte(e);
            }
            m.i32(i32::MAX);
            Act::Send(m.done())
        });
        let store = store(addr, Duration::from_secs(5));
        expect_protocol_error(within(Duration::from_millis(500), store.table_exists("t")).await);
    }
}

#[tokio::test]
async fn results_of_the_wrong_type_are_protocol_errors() {
    // tableExists answering an i32: not `false`.
    let addr = fake::start(|method, seq| Act::Send(Msg::reply(method, seq).field(I32, 0).i32(1).stop().done()));
    let message = expect_protocol_error(store(addr, Duration::from_secs(5)).table_exists("t").await);
    assert!(message.contains("I32"), "{message}");

    // checkAndMutate answering an i32: not a failed check.
    let addr = fake::start(|method, seq| match method {
        "getTableDescriptor" => Act::Send(fake::descriptor(seq, &["f"])),
        _ => Act::Send(Msg::reply(method, seq).field(I32, 0).i32(0).stop().done()),
    });
    let op = CheckAndMutate::new(RowMutation::new("r").put("f", "q", "v"), "f", "q", Some("old".into()));
    expect_protocol_error(store(addr, Duration::from_secs(5)).check_and_mutate("t", &op).await);
}

#[tokio::test]
async fn a_truncated_reply_is_a_connection_error() {
    let addr = fake::start(|_, seq| {
        let mut reply = exists_reply(seq, true);
        reply.truncate(reply.len() - 3);
        Act::SendAndClose(reply)
    });
    let store = store(addr, Duration::from_secs(5));
    let err = within(Duration::from_secs(5), store.table_exists("t"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Connection { .. }), "{err:?}");
}

#[tokio::test]
async fn garbage_says_the_gateway_may_speak_another_protocol() {
    let addr = fake::start(|_, _| Act::Send(b"\x01\x02 not thrift at all".to_vec()));
    let message = expect_protocol_error(store(addr, Duration::from_secs(5)).table_exists("t").await);
    assert!(message.contains("framed transport"), "{message}");
    assert!(message.contains("compact"), "{message}");
    // What the first bytes look like, when they look like something.
    let cases: [(&[u8], &str); 3] = [
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "HTTP mode"),
        (&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50], "TLS"),
        (
            &[0x82, 0x41, 0x01, 0x0b],
            "set `ThriftConfig::protocol` to `ThriftProtocol::Compact`",
        ),
    ];
    for (start, says) in cases {
        let addr = fake::start(move |_, _| Act::Send(start.to_vec()));
        let message = expect_protocol_error(store(addr, Duration::from_secs(5)).table_exists("t").await);
        assert!(message.contains(says), "{message}");
    }
}

#[tokio::test]
async fn a_gateway_that_hangs_up_on_the_first_call_may_be_framed() {
    // A framed or compact gateway reads hmap's call as garbage and closes.
    let addr = fake::start(|_, _| Act::Close);
    let store = store(addr, Duration::from_secs(5));
    let err = within(Duration::from_secs(5), store.table_exists("t"))
        .await
        .unwrap_err();
    match &err {
        StoreError::Connection { message, .. } => {
            assert!(message.contains("framed transport"), "{message}");
            assert!(!message.contains("failed to fill whole buffer"), "{message}");
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_reply_to_another_call_is_a_protocol_error() {
    let addr = fake::start(|_, seq| Act::Send(exists_reply(seq + 1, true)));
    let message = expect_protocol_error(store(addr, Duration::from_secs(5)).table_exists("t").await);
    assert!(message.contains("reply to"), "{message}");
}

/// A reply to `method` #`seq` carrying a TIOError with `message`.
fn io_error(method: &str, seq: i32, message: &str) -> Vec<u8> {
    Msg::reply(method, seq)
        .field(STRUCT, 1)
        .field(STRING, 1)
        .string(message.as_bytes())
        .field(BOOL, 2)
        .byte(0)
        .stop()
        .stop()
        .done()
}

#[tokio::test]
async fn exceptions_are_mapped_from_their_fields() {
    // A TIOError whose Java exception is TableExistsException.
    let addr = fake::start(|method, seq| {
        Act::Send(io_error(
            method,
            seq,
            "org.apache.hadoop.hbase.TableExistsException: t\n\tat Somewhere(X.java:1)",
        ))
    });
    let schema = hmap::schema::TableSchema::new("t").family(hmap::schema::FamilySchema::new("f"));
    let err = store(addr, Duration::from_secs(5))
        .create_table(&schema)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::TableExists { .. }), "{err:?}");

    // A message that only mentions an exception's name is not that exception.
    let addr = fake::start(|method, seq| {
        Act::Send(io_error(
            method,
            seq,
            "java.io.IOException: a value mentions TableNotFoundException",
        ))
    });
    let err = store(addr, Duration::from_secs(5)).table_exists("t").await.unwrap_err();
    assert!(matches!(err, StoreError::Server { .. }), "{err:?}");

    // TIllegalArgument (field 2 of getScannerRows' result): a refused request.
    let addr = fake::start(|method, seq| match method {
        "getTableDescriptor" => Act::Send(fake::descriptor(seq, &["f"])),
        "openScanner" => Act::Send(Msg::reply(method, seq).field(I32, 0).i32(7).stop().done()),
        "getScannerRows" => Act::Send(
            Msg::reply(method, seq)
                .field(STRUCT, 2)
                .field(STRING, 1)
                .string(b"Invalid scanner Id")
                .stop()
                .stop()
                .done(),
        ),
        _ => Act::Send(Msg::reply(method, seq).stop().done()),
    });
    let store = store(addr, Duration::from_secs(5));
    let first = store
        .scan("t", &Scan::all())
        .await
        .expect("scanner")
        .next()
        .await
        .expect("an item");
    match first {
        Err(StoreError::InvalidRequest { reason, .. }) => assert!(reason.contains("Invalid scanner Id"), "{reason}"),
        other => panic!("expected an invalid request, got {other:?}"),
    }
}

#[tokio::test]
async fn increment_reply_cells_are_matched_by_column() {
    // The reply lists cells sorted by column, not in the order asked.
    let addr = fake::start(|method, seq| match method {
        "getTableDescriptor" => Act::Send(fake::descriptor(seq, &["c"])),
        _ => {
            let mut m = Msg::reply(method, seq);
            m.field(STRUCT, 0)
                .field(STRING, 1)
                .string(b"r")
                .field(LIST, 2)
                .list(STRUCT, 2);
            fake::column_value(&mut m, "c", "x", &12i64.to_be_bytes());
            fake::column_value(&mut m, "c", "y", &11i64.to_be_bytes());
            Act::Send(m.stop().stop().done())
        }
    });
    let store = store(addr, Duration::from_secs(5));
    let values = store
        .increment("t", &Increment::new("r").add("c", "y", 1).add("c", "x", 2))
        .await
        .expect("increment");
    assert_eq!(values, vec![11, 12]);
    // A column the reply lacks is read back; still missing, an error naming it.
    let err = store
        .increment("t", &Increment::new("r").add("c", "z", 1))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("c:z"), "{err}");
}

#[tokio::test]
async fn an_increment_applied_and_answered_without_its_values_reads_them_back() {
    // The gateway's client answers an increment it sent twice (its reply
    // lost, the repeat recognised by the nonce) with an empty result.
    let methods = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = methods.clone();
    let addr = fake::start(move |method, seq| {
        seen.lock().unwrap().push(method.to_string());
        match method {
            "getTableDescriptor" => Act::Send(fake::descriptor(seq, &["c"])),
            "increment" => Act::Send(
                Msg::reply(method, seq)
                    .field(STRUCT, 0)
                    .field(LIST, 2)
                    .list(STRUCT, 0)
                    .stop()
                    .stop()
                    .done(),
            ),
            _ => {
                let mut m = Msg::reply(method, seq);
                m.field(STRUCT, 0)
                    .field(STRING, 1)
                    .string(b"r")
                    .field(LIST, 2)
                    .list(STRUCT, 1);
                fake::column_value(&mut m, "c", "x", &42i64.to_be_bytes());
                Act::Send(m.stop().stop().done())
            }
        }
    });
    let values = store(addr, Duration::from_secs(5))
        .increment("t", &Increment::new("r").add("c", "x", 1))
        .await
        .expect("read back");
    assert_eq!(values, vec![42]);
    let methods = methods.lock().unwrap().clone();
    assert_eq!(
        methods.iter().filter(|m| *m == "increment").count(),
        1,
        "not sent again: {methods:?}"
    );
    assert!(methods.iter().any(|m| m == "get"), "{methods:?}");
}

// ---------------------------------------------------------------------------
// Thrift1Store: the same fake, answering Thrift1's calls.

/// A `Thrift1Store` on `addr` whose calls may take `call_timeout` each.
fn thrift1(addr: std::net::SocketAddr, call_timeout: Duration) -> Thrift1Store {
    Thrift1Store::with_config(config(addr, call_timeout))
}

/// A `getColumnDescriptors` reply: `map<Text, ColumnDescriptor>` with one
/// family `f` named as the gateway names it, `f:`.
fn thrift1_families(seq: i32) -> Vec<u8> {
    Msg::reply("getColumnDescriptors", seq)
        .field(MAP, 0)
        .byte(STRING)
        .byte(STRUCT)
        .i32(1)
        .string(b"f:")
        .field(STRING, 1)
        .string(b"f:")
        .field(I32, 2)
        .i32(1)
        .stop()
        .stop()
        .done()
}

#[tokio::test]
async fn thrift1_rows_declaring_huge_maps_are_refused_at_once() {
    // A row whose map of cells claims 2^31-1 entries in a few bytes.
    let addr = fake::start(|method, seq| match method {
        "getColumnDescriptors" => Act::Send(thrift1_families(seq)),
        _ => Act::Send(
            Msg::reply(method, seq)
                .field(LIST, 0)
                .list(STRUCT, 1)
                .field(STRING, 1)
                .string(b"r")
                .field(MAP, 2)
                .byte(STRING)
                .byte(STRUCT)
                .i32(i32::MAX)
                .stop()
                .stop()
                .done(),
        ),
    });
    let store = thrift1(addr, Duration::from_secs(5));
    let message = expect_protocol_error(within(Duration::from_millis(500), store.get("t", &Get::new("r"))).await);
    assert!(message.contains("a map of 2147483647"), "{message}");
}

#[tokio::test]
async fn thrift1_scan_batches_that_break_the_idl_end_the_stream_with_a_typed_error() {
    // A scanner batch whose cell is named without `family:`, then one that
    // dribbles past the deadline.
    let addr = fake::start(|method, seq| match method {
        "getColumnDescriptors" => Act::Send(thrift1_families(seq)),
        "scannerOpenWithScan" => Act::Send(Msg::reply(method, seq).field(I32, 0).i32(3).stop().done()),
        "scannerGetList" => Act::Send(
            Msg::reply(method, seq)
                .field(LIST, 0)
                .list(STRUCT, 1)
                .field(STRING, 1)
                .string(b"r")
                .field(LIST, 3)
                .list(STRUCT, 1)
                .field(STRING, 1)
                .string(b"nocolon")
                .field(STRUCT, 2)
                .field(STRING, 1)
                .string(b"v")
                .field(I64, 2)
                .i64(1)
                .stop()
                .stop()
                .stop()
                .stop()
                .done(),
        ),
        _ => Act::Send(Msg::reply(method, seq).stop().done()),
    });
    let store = thrift1(addr, Duration::from_secs(5));
    let first = store.scan("t", &Scan::all()).await.expect("scanner").next().await;
    match first {
        Some(Err(e @ StoreError::Protocol { .. })) => assert!(e.to_string().contains("malformed"), "{e}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }

    let addr = fake::start(|method, seq| match method {
        "getColumnDescriptors" => Act::Send(thrift1_families(seq)),
        "scannerOpenWithScan" => Act::Send(Msg::reply(method, seq).field(I32, 0).i32(3).stop().done()),
        "scannerGetList" => Act::Dribble(
            Msg::reply(method, seq).field(LIST, 0).list(STRUCT, 0).stop().done(),
            Duration::from_millis(200),
        ),
        _ => Act::Send(Msg::reply(method, seq).stop().done()),
    });
    let store = thrift1(addr, Duration::from_secs(1));
    let mut rows = store.scan("t", &Scan::all()).await.expect("scanner");
    match within(Duration::from_millis(1600), rows.next()).await {
        Some(Err(StoreError::Timeout { operation, .. })) => assert_eq!(operation, "scannerGetList"),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn thrift1_exceptions_are_mapped() {
    // IOError carries the gateway's whole stack trace; AlreadyExists is the
    // third exception of createTable.
    let addr = fake::start(|method, seq| match method {
        "createTable" => Act::Send(
            Msg::reply(method, seq)
                .field(STRUCT, 3)
                .field(STRING, 1)
                .string(b"table name already in use")
                .stop()
                .stop()
                .done(),
        ),
        _ => Act::Send(io_error(
            method,
            seq,
            "org.apache.hadoop.hbase.TableNotFoundException: t\n\tat org.apache.hadoop.hbase.client.HBaseAdmin.x(HBaseAdmin.java:665)",
        )),
    });
    let store = thrift1(addr, Duration::from_secs(5));
    let schema = hmap::schema::TableSchema::new("t").family(hmap::schema::FamilySchema::new("f"));
    let err = store.create_table(&schema).await.unwrap_err();
    assert!(matches!(err, StoreError::TableExists { .. }), "{err:?}");
    let err = store.get("t", &Get::new("r")).await.unwrap_err();
    assert!(matches!(err, StoreError::TableNotFound { .. }), "{err:?}");
}
