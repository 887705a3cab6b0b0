//! HTTP transport (`ThriftConfig::http`, plain HTTP) against a fake HTTP
//! gateway: each call is a `POST` with a Content-Length, replies are read by
//! their Content-Length or their chunks (as HBase's Jetty sends them), and a
//! status other than 200, a body that is not delimited, a Content-Length
//! beyond a reply's limit, or a body holding more than one message is a
//! typed error within the call's deadline. Needs no HBase (the HBase run,
//! over HTTPS, is suite-extra/tests/conformance_thrift_https.rs).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use crate::fake::{BOOL, Msg};
use hmap::store::{Store, StoreError, ThriftConfig, ThriftHttp, ThriftStore};

/// An HTTP gateway that answers each `POST` with `respond(seq)`, after
/// checking the request's head; it serves several requests a connection.
fn http_gateway(respond: fn(i32) -> Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    assert_eq!(line, "POST / HTTP/1.1\r\n");
                    let mut length = None;
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).expect("a header");
                        if header == "\r\n" {
                            break;
                        }
                        let (name, value) = header.split_once(':').expect("name: value");
                        if name.eq_ignore_ascii_case("content-length") {
                            length = Some(value.trim().parse::<usize>().expect("a length"));
                        }
                        if name.eq_ignore_ascii_case("content-type") {
                            assert_eq!(value.trim(), "application/x-thrift");
                        }
                    }
                    let mut call = vec![0u8; length.expect("a Content-Length")];
                    reader.read_exact(&mut call).expect("the body");
                    assert_eq!(call.get(..4), Some(&[0x80, 0x01, 0x00, 0x01][..]), "a binary call");
                    let name_len = u32::from_be_bytes(call[4..8].try_into().unwrap()) as usize;
                    let seq = i32::from_be_bytes(call[8 + name_len..12 + name_len].try_into().unwrap());
                    if stream.write_all(&respond(seq)).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn exists(seq: i32) -> Vec<u8> {
    Msg::reply("tableExists", seq).field(BOOL, 0).byte(1).stop().done()
}

fn with_length(body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/x-thrift\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// `body` in chunks of 3 bytes, as Jetty's chunked responses (smaller).
fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-thrift\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for chunk in body.chunks(3) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

fn store(addr: SocketAddr) -> ThriftStore {
    let mut config = ThriftConfig::new(addr.to_string());
    config.http = Some(ThriftHttp::plain());
    config.call_timeout = Duration::from_secs(3);
    ThriftStore::with_config(config)
}

#[tokio::test]
async fn replies_by_content_length_or_chunks_on_one_connection() {
    for respond in [|seq| with_length(&exists(seq)), |seq| chunked(&exists(seq))] {
        let store = store(http_gateway(respond));
        for _ in 0..3 {
            assert!(store.table_exists("t").await.expect("a reply over HTTP"));
        }
    }
}

#[tokio::test]
async fn unexpected_responses_are_typed_errors_within_the_deadline() {
    /// What the gateway sends for call #seq.
    type Respond = fn(i32) -> Vec<u8>;
    let cases: [(Respond, &str); 6] = [
        (
            |_| b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".to_vec(),
            "403 Forbidden",
        ),
        (
            |seq| {
                let mut out = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
                out.extend(exists(seq));
                out
            },
            "cannot delimit",
        ),
        (
            |_| b"HTTP/1.1 200 OK\r\nContent-Length: 4294967296\r\n\r\n".to_vec(),
            "more than",
        ),
        (
            |_| b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec(),
            "chunk",
        ),
        (
            |seq| with_length(&[exists(seq), exists(seq)].concat()),
            "after the end of the message",
        ),
        (
            |seq| {
                let mut out = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n".to_vec();
                out.extend(with_length(&exists(seq)).split_off(17));
                out
            },
            "text/html",
        ),
    ];
    for (respond, says) in cases {
        let store = store(http_gateway(respond));
        let started = Instant::now();
        let err = store.table_exists("t").await.expect_err("refused");
        assert!(
            matches!(err, StoreError::Protocol { .. } | StoreError::Connection { .. }),
            "{says}: {err:?}"
        );
        assert!(err.to_string().contains(says), "{says}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{says}: {:?}",
            started.elapsed()
        );
    }
}

/// A body announced longer than sent: the call ends at its deadline, not
/// when the gateway gives up.
#[tokio::test]
async fn a_body_shorter_than_announced_times_out_at_the_deadline() {
    let store = store(http_gateway(|seq| {
        let body = exists(seq);
        let mut out = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len() + 10).into_bytes();
        out.extend(body);
        out
    }));
    let started = Instant::now();
    let err = store.table_exists("t").await.expect_err("no whole body");
    assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_millis(3500),
        "{:?}",
        started.elapsed()
    );
}
