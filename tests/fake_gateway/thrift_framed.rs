//! Framed transport (`ThriftConfig::framed`) against a fake framed gateway:
//! each call goes out after its length, each reply is read as one frame, and
//! a frame that is too large or does not hold exactly one message is a
//! typed protocol error. Needs no HBase (the HBase run is
//! tests/conformance/thrift_framed.rs).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use crate::fake::{BOOL, Msg};
use hmap::store::{Store, StoreError, ThriftConfig, ThriftStore};

/// A framed gateway that answers each `tableExists` with `reply(seq)`,
/// after checking that the call came framed.
fn framed_gateway(reply: fn(i32) -> Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                loop {
                    let mut len = [0u8; 4];
                    if stream.read_exact(&mut len).is_err() {
                        return;
                    }
                    let mut call = vec![0u8; u32::from_be_bytes(len) as usize];
                    if stream.read_exact(&mut call).is_err() {
                        return;
                    }
                    // A framed call is a whole message: the strict binary
                    // header first, the sequence number after the name.
                    assert_eq!(call.get(..4), Some(&[0x80, 0x01, 0x00, 0x01][..]), "a framed call");
                    let name_len = u32::from_be_bytes(call[4..8].try_into().unwrap()) as usize;
                    let seq = i32::from_be_bytes(call[8 + name_len..12 + name_len].try_into().unwrap());
                    if stream.write_all(&reply(seq)).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn framed(message: Vec<u8>) -> Vec<u8> {
    let mut out = (message.len() as u32).to_be_bytes().to_vec();
    out.extend(message);
    out
}

fn exists(seq: i32) -> Vec<u8> {
    Msg::reply("tableExists", seq).field(BOOL, 0).byte(1).stop().done()
}

fn store(addr: SocketAddr) -> ThriftStore {
    let mut config = ThriftConfig::new(addr.to_string());
    config.framed = true;
    config.call_timeout = Duration::from_secs(5);
    ThriftStore::with_config(config)
}

#[tokio::test]
async fn calls_and_replies_go_framed() {
    let store = store(framed_gateway(|seq| framed(exists(seq))));
    for _ in 0..3 {
        assert!(store.table_exists("t").await.expect("a framed reply"));
    }
}

#[tokio::test]
async fn a_frame_too_large_is_refused_before_it_is_read() {
    let store = store(framed_gateway(|_| (u32::MAX).to_be_bytes().to_vec()));
    match store.table_exists("t").await {
        Err(e @ StoreError::Protocol { .. }) => assert!(e.to_string().contains("frame"), "{e}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_frame_must_hold_exactly_one_message() {
    // The message, then two bytes more inside the frame.
    let store = store(framed_gateway(|seq| {
        let mut message = exists(seq);
        message.extend([0, 0]);
        framed(message)
    }));
    match store.table_exists("t").await {
        Err(e @ StoreError::Protocol { .. }) => assert!(e.to_string().contains("after the end"), "{e}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}
