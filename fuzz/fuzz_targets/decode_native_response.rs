//! Decodes arbitrary bytes as a reply frame of HBase's RPC protocol
//! (NativeStore's sans-IO codec, `hmap::store::native::codec`): whole, and
//! streamed through `split_frame` in pieces of 1 to 8 bytes. Nothing may
//! panic or allocate beyond the frame limit, and both ways must agree. The
//! reply's message is then read as each response hmap decodes.
#![no_main]

use bytes::BytesMut;
use hmap::store::native::codec::{decode_frame, decode_response, split_frame};
use hmap::store::native::proto::{GetResponse, MultiResponse, MutateResponse, ScanResponse};
use libfuzzer_sys::fuzz_target;
use prost::Message;

const MAX: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let whole = decode_frame(data, MAX);
    // Streamed: the first frame, if the bytes hold one.
    let step = 1 + data.first().map_or(0, |b| (b % 8) as usize);
    let mut buf = BytesMut::new();
    let mut streamed = None;
    for chunk in data.chunks(step) {
        buf.extend_from_slice(chunk);
        match split_frame(&mut buf, MAX) {
            Ok(Some(frame)) => {
                streamed = Some(decode_response(frame));
                break;
            }
            Ok(None) => {}
            Err(_) => {
                assert!(whole.is_err(), "split_frame refused what decode_frame accepted");
                return;
            }
        }
    }
    if let (Ok(response), Some(Ok(first))) = (&whole, &streamed) {
        // A frame that decodes whole is the first and only frame of the stream.
        assert_eq!(response, first);
    }
    if let Ok(response) = whole {
        assert!(streamed.is_some(), "decode_frame accepted a frame split_frame did not find");
        if let Ok(reply) = response.result {
            let _ = GetResponse::decode(reply.message.clone());
            let _ = MutateResponse::decode(reply.message.clone());
            let _ = ScanResponse::decode(reply.message.clone());
            let _ = MultiResponse::decode(reply.message);
        }
    }
});
