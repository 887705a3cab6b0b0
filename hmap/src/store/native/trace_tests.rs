//! The trace context in a request's header, read as bytes by a fake
//! server: `RequestHeader.trace_info` (field 2), an `RPCTInfo` whose
//! `headers` map (field 3) holds `traceparent` and `tracestate`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::codec::{self, encode_response};
use super::connection::{Connection, ConnectionConfig, Service};
use super::proto::{GetClusterIdRequest, GetClusterIdResponse, RequestHeader, ResponseHeader};
use crate::store::{TraceContext, TraceContextSource};

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const OTHER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";

/// Serves `calls` calls of one connection, answering each, and hands back
/// each request header's bytes as they came.
async fn capture(listener: TcpListener, calls: usize) -> Vec<Bytes> {
    let (mut stream, _) = listener.accept().await.expect("accept");
    let mut preamble = [0; 6];
    stream.read_exact(&mut preamble).await.expect("preamble");
    let len = stream.read_u32().await.expect("connection header length");
    let mut header = vec![0; len as usize];
    stream.read_exact(&mut header).await.expect("connection header");
    let mut buf = BytesMut::new();
    let mut headers = Vec::new();
    while headers.len() < calls {
        let Some(mut frame) = codec::split_frame(&mut buf, 1 << 20).expect("frame") else {
            assert!(read_more(&mut stream, &mut buf).await, "client hung up");
            continue;
        };
        let len = usize::try_from(prost::encoding::decode_varint(&mut frame).expect("varint")).expect("len");
        let bytes = frame.split_to(len);
        let call_id = RequestHeader::decode(bytes.clone()).expect("request header").call_id;
        headers.push(bytes);
        let reply = GetClusterIdResponse {
            cluster_id: Some("c".to_string()),
        }
        .encode_to_vec();
        let header = ResponseHeader {
            call_id,
            ..Default::default()
        };
        stream
            .write_all(&encode_response(&header, Some(&reply), &[]))
            .await
            .expect("reply");
    }
    headers
}

async fn read_more(stream: &mut TcpStream, buf: &mut BytesMut) -> bool {
    stream.read_buf(buf).await.expect("read") > 0
}

async fn call(connection: &Connection) {
    let reply = connection
        .call::<GetClusterIdResponse>("GetClusterId", &GetClusterIdRequest {}, Duration::from_secs(10))
        .await
        .expect("answered");
    assert_eq!(reply.message.cluster_id.as_deref(), Some("c"));
}

/// A protobuf length-delimited field: its key, its length, its bytes.
fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2, u8::try_from(bytes.len()).expect("short")];
    out.extend_from_slice(bytes);
    out
}

/// `RequestHeader.trace_info` as HBase's `Tracing.proto` lays it out,
/// written by hand: field 2 holding, per header, a map entry (field 3 of
/// `RPCTInfo`) of key (1) and value (2), the keys in order.
fn trace_info_bytes(headers: &[(&str, &str)]) -> Vec<u8> {
    let entries: Vec<u8> = headers
        .iter()
        .flat_map(|(key, value)| field(3, &[field(1, key.as_bytes()), field(2, value.as_bytes())].concat()))
        .collect();
    field(2, &entries)
}

#[tokio::test]
async fn the_request_header_carries_the_trace_context() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let endpoint = listener.local_addr().expect("addr").to_string();
    let server = tokio::spawn(capture(listener, 3));
    // The source gives a context while one is set.
    let given: Arc<Mutex<Option<TraceContext>>> = Arc::default();
    let config = ConnectionConfig {
        trace_context: Some(TraceContextSource::new({
            let given = given.clone();
            move || given.lock().unwrap_or_else(PoisonError::into_inner).clone()
        })),
        ..ConnectionConfig::default()
    };
    let connection = Connection::new(endpoint, Service::ClientMeta, config);

    // 1: the config's source, with a tracestate.
    *given.lock().unwrap_or_else(PoisonError::into_inner) = Some(
        TraceContext::from_traceparent(PARENT)
            .expect("valid")
            .with_tracestate("congo=t61rcWkgMzE"),
    );
    call(&connection).await;
    // 2: a scope wins over the source.
    TraceContext::from_traceparent(OTHER)
        .expect("valid")
        .scope(call(&connection))
        .await;
    // 3: neither: no field 2 at all.
    *given.lock().unwrap_or_else(PoisonError::into_inner) = None;
    call(&connection).await;

    let headers = server.await.expect("server");
    // Each header starts with the call id (field 1, a varint: ids 0, 1, 2
    // are one byte), then the trace info, then the method name (field 3).
    let after_call_id = |h: &Bytes, id: u8| {
        assert_eq!(&h[..2], &[0x08, id], "call id {id}");
        h[2..].to_vec()
    };
    let method = field(3, b"GetClusterId");
    let first = after_call_id(&headers[0], 0);
    let want = trace_info_bytes(&[("traceparent", PARENT), ("tracestate", "congo=t61rcWkgMzE")]);
    assert_eq!(&first[..want.len()], &want[..], "the source's context");
    assert_eq!(&first[want.len()..want.len() + method.len()], &method[..]);
    let second = after_call_id(&headers[1], 1);
    let want = trace_info_bytes(&[("traceparent", OTHER)]);
    assert_eq!(&second[..want.len()], &want[..], "the scope's context");
    let third = after_call_id(&headers[2], 2);
    assert_eq!(&third[..method.len()], &method[..], "no trace info");
    // And prost reads back what HBase would.
    let decoded = RequestHeader::decode(headers[0].clone()).expect("decodes");
    let info = decoded.trace_info.expect("trace info");
    assert_eq!(info.headers.get("traceparent").map(String::as_str), Some(PARENT));
}

#[test]
fn only_a_well_formed_traceparent_is_taken() {
    for bad in [
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    ] {
        assert_eq!(TraceContext::from_traceparent(bad), None, "{bad:?}");
    }
    // A later version may add parts; a reader of 00 keeps the first four.
    assert!(TraceContext::from_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra").is_some());
    let context = TraceContext::from_traceparent(PARENT).expect("valid");
    assert_eq!(context.tracestate(), None);
    assert_eq!(
        context.clone().with_tracestate("").tracestate(),
        None,
        "an empty tracestate is not sent"
    );
    assert_eq!(context.traceparent(), PARENT);
}
