//! Decodes arbitrary bytes as a reply frame of HBase's RPC protocol
//! (NativeStore's sans-IO codec, `hmap::store::native::codec`): whole, and
//! streamed through `split_frame` in pieces of 1 to 8 bytes. Nothing may
//! panic or allocate beyond the frame limit, and both ways must agree. The
//! reply's message is then read as each response hmap decodes, through
//! the bounds of `hmap::store::native::bound`: what they accept decodes as
//! prost decodes it, and the heap the walk counts is at least what the
//! decoded vectors hold. The cell block is decoded into a vector of its
//! size.
#![no_main]

use bytes::{Bytes, BytesMut};
use hmap::store::native::bound::{self, Reply};
use hmap::store::native::codec::{decode_cell_block, decode_frame, decode_response, split_frame};
use hmap::store::native::proto::{
    GetMetaRegionLocationsResponse, GetResponse, GetTableNamesResponse, MultiResponse, MutateResponse, ScanResponse,
};
use libfuzzer_sys::fuzz_target;

const MAX: usize = 1 << 16;

/// Decodes `message` as `M` through the bounds; returns it with the heap
/// the walk counted.
fn bounded<M: Reply + PartialEq + std::fmt::Debug>(message: &Bytes) -> Option<(M, usize)> {
    let decoded = bound::decode::<M>(message.clone()).ok()?;
    assert_eq!(
        Some(&decoded),
        M::decode(message.clone()).ok().as_ref(),
        "the bounds changed the decoding"
    );
    let heap = bound::heap_size(message, M::SHAPE).expect("the walk accepted it");
    Some((decoded, heap))
}

fn vec_heap<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

fn check_message(message: &Bytes) {
    if let Some((scan, heap)) = bounded::<ScanResponse>(message) {
        let held = vec_heap(&scan.cells_per_result)
            + vec_heap(&scan.partial_flag_per_result)
            + vec_heap(&scan.results)
            + scan.results.iter().map(|r| vec_heap(&r.cell)).sum::<usize>();
        assert!(held <= heap, "scan: {held} held, {heap} counted");
    }
    if let Some((meta, heap)) = bounded::<GetMetaRegionLocationsResponse>(message) {
        let held = vec_heap(&meta.meta_locations);
        assert!(held <= heap, "meta: {held} held, {heap} counted");
    }
    if let Some((names, heap)) = bounded::<GetTableNamesResponse>(message) {
        let held = vec_heap(&names.table_names);
        assert!(held <= heap, "names: {held} held, {heap} counted");
    }
    if let Some((multi, heap)) = bounded::<MultiResponse>(message) {
        let held = vec_heap(&multi.region_action_result)
            + multi
                .region_action_result
                .iter()
                .map(|r| vec_heap(&r.result_or_exception))
                .sum::<usize>();
        assert!(held <= heap, "multi: {held} held, {heap} counted");
    }
    let _ = bounded::<GetResponse>(message);
    let _ = bounded::<MutateResponse>(message);
}

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
        assert!(
            streamed.is_some(),
            "decode_frame accepted a frame split_frame did not find"
        );
        if let Ok(reply) = response.result {
            check_message(&reply.message);
            if let Ok(cells) = decode_cell_block(reply.cell_block) {
                assert_eq!(cells.len(), cells.capacity(), "a cell block's vector is sized once");
            }
        }
    }
    // The bytes themselves, as a message.
    check_message(&Bytes::copy_from_slice(data));
});
