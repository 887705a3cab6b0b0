//! Framed transport (`ThriftConfig::framed`) against a fake framed gateway:
//! each call goes out after its length, each reply is read as one frame, and
//! a frame that is too large or does not hold exactly one message is a
//! typed protocol error. Needs no HBase (the HBase run is
//! tests/conformance/thrift_framed.rs).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use crate::fake::{BOOL, Msg};
use hmap::store::{Store, StoreError, ThriftConfig, ThriftStore};

/// A framed gateway that answers each `tableExists` with `reply(seq)`,
/// after checking that the call came framed.
fn framed_gateway(reply: fn(i32) -> Vec<u8>) -> SocketAddr {
    serve(move |mut stream| {
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
            // header first, the sequence number after the name;
            // or, for the probe that goes first on a connection,
            // an old-style one (the name's length, the name, the
            // type, the sequence number).
            let seq = if call.starts_with(&[0x80, 0x01, 0x00, 0x01]) {
                let name_len = u32::from_be_bytes(call[4..8].try_into().unwrap()) as usize;
                i32::from_be_bytes(call[8 + name_len..12 + name_len].try_into().unwrap())
            } else {
                let name_len = u32::from_be_bytes(call[..4].try_into().unwrap()) as usize;
                assert_eq!(&call[4..4 + name_len], b"getThriftServerType", "the probe");
                i32::from_be_bytes(call[5 + name_len..9 + name_len].try_into().unwrap())
            };
            if stream.write_all(&reply(seq)).is_err() {
                return;
            }
        }
    })
}

/// A gateway on a free port that runs `each` on every connection, on a
/// thread of its own.
fn serve(each: impl Fn(TcpStream) + Clone + Send + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let each = each.clone();
            std::thread::spawn(move || each(stream));
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

/// An unframed gateway as HBase runs one (`TBinaryProtocol`, not strict):
/// a message whose first four bytes are not the strict header is an
/// old-style one, those bytes the length of its name. It reads a whole
/// call (skipping its arguments by their types) and answers an unknown
/// method with Thrift's "Invalid method name" exception, unframed.
fn unframed_gateway() -> SocketAddr {
    fn read<const N: usize>(stream: &mut impl Read) -> Option<[u8; N]> {
        let mut bytes = [0u8; N];
        stream.read_exact(&mut bytes).ok().map(|()| bytes)
    }
    fn skip(stream: &mut impl Read, kind: u8) -> Option<()> {
        let size = |bytes: [u8; 4]| i32::from_be_bytes(bytes).max(0) as usize;
        match kind {
            2 | 3 => drop(read::<1>(stream)?),
            6 => drop(read::<2>(stream)?),
            8 => drop(read::<4>(stream)?),
            4 | 10 => drop(read::<8>(stream)?),
            11 => {
                let len = size(read::<4>(stream)?);
                std::io::copy(&mut stream.take(len as u64), &mut std::io::sink()).ok()?;
            }
            12 => loop {
                let [field] = read::<1>(stream)?;
                if field == 0 {
                    break;
                }
                read::<2>(stream)?;
                skip(stream, field)?;
            },
            13 => {
                let [k, v] = read::<2>(stream)?;
                for _ in 0..size(read::<4>(stream)?) {
                    skip(stream, k)?;
                    skip(stream, v)?;
                }
            }
            14 | 15 => {
                let [e] = read::<1>(stream)?;
                for _ in 0..size(read::<4>(stream)?) {
                    skip(stream, e)?;
                }
            }
            _ => return None,
        }
        Some(())
    }
    serve(|mut stream| {
        while let Some(first) = read::<4>(&mut stream) {
            let size = i32::from_be_bytes(first);
            let name = if size < 0 {
                let len = u32::from_be_bytes(read::<4>(&mut stream).unwrap_or_default()) as usize;
                let mut name = vec![0; len];
                let _ = stream.read_exact(&mut name);
                name
            } else {
                let mut name = vec![0; size as usize];
                let _ = stream.read_exact(&mut name);
                let _type = read::<1>(&mut stream);
                name
            };
            let Some(seq) = read::<4>(&mut stream) else { return };
            if skip(&mut stream, 12).is_none() {
                return;
            }
            let name = String::from_utf8_lossy(&name).into_owned();
            let text = format!("Invalid method name: '{name}'");
            let mut reply = vec![0x80, 0x01, 0x00, 0x03];
            reply.extend((name.len() as u32).to_be_bytes());
            reply.extend(name.as_bytes());
            reply.extend(seq);
            reply.extend([11, 0, 1]);
            reply.extend((text.len() as u32).to_be_bytes());
            reply.extend(text.as_bytes());
            reply.extend([8, 0, 2, 0, 0, 0, 1, 0]);
            if stream.write_all(&reply).is_err() {
                return;
            }
        }
    })
}

/// A framed client on an unframed gateway fails on its first call, within
/// a round trip, with an error that names the gateway's transport. (Read
/// as an old-style message's name, a lone frame leaves the gateway waiting
/// for five bytes more until the call's deadline: the probe that goes
/// ahead of a new connection's first call fills them.)
#[tokio::test]
async fn a_framed_client_on_an_unframed_gateway_fails_at_once() {
    let address = unframed_gateway();
    let mut config = ThriftConfig::new(address.to_string());
    config.framed = true;
    config.call_timeout = Duration::from_secs(20);
    let store = ThriftStore::with_config(config);
    let started = std::time::Instant::now();
    let err = store.table_exists("t").await.expect_err("an unframed gateway");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}: {err}",
        started.elapsed()
    );
    let text = err.to_string();
    assert!(matches!(err, StoreError::Protocol { .. }), "{text}");
    assert!(
        text.contains("unframed transport") && text.contains("unset `ThriftConfig::framed`"),
        "{text}"
    );
    // The unframed client is answered by the same gateway (its calls are
    // unknown to this fake, and refused by name).
    let unframed = ThriftStore::new(address.to_string());
    let err = unframed.table_exists("t").await.expect_err("not a method of the fake");
    assert!(err.to_string().contains("Invalid method name: 'tableExists'"), "{err}");
}
