//! No reply makes `ThriftStore` allocate more than a small multiple of the
//! bytes it received. A counting allocator measures the peak of one call
//! against a fake gateway on 127.0.0.1; the cases run one at a time, since
//! the count is the whole process's. Needs no HBase.

#[path = "support/fake_gateway.rs"]
mod fake;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fake::{Act, LIST, Msg, STRING, STRUCT};
use hmap::store::{Get, ThriftConfig, ThriftStore};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The most memory `get` held above what was held before it, against a
/// gateway that answers the get with `reply` (built before measuring).
fn peak_of_get(reply: Vec<u8>) -> (usize, Result<Option<hmap::store::RowResult>, hmap::store::StoreError>) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let reply = std::sync::Arc::new(reply);
    let addr = fake::start(move |method, seq| match method {
        "getTableDescriptor" => Act::Send(fake::descriptor(seq, &["f"])),
        "getAllRegionLocations" => Act::Send(fake::no_regions(seq)),
        _ => {
            // The reply was written for call #1: give it this call's number.
            let mut bytes = reply.to_vec();
            if let Some(at) = bytes.get_mut(11..15) {
                at.copy_from_slice(&seq.to_be_bytes());
            }
            Act::Send(bytes)
        }
    });
    let mut config = ThriftConfig::new(addr.to_string());
    config.call_timeout = Duration::from_secs(20);
    let store = hmap::blocking::Store::new(ThriftStore::with_config(config));
    store.describe_table("t").expect("describe");
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let result = store.get("t", &Get::new("r"));
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    println!("peak {peak} bytes");
    (peak, result)
}

/// A `get` reply (to call #1) whose TResult lists
/// `cells` cells, each written by `cell`.
fn get_reply(cells: usize, cell: impl Fn(&mut Msg)) -> Vec<u8> {
    let mut m = Msg::reply("get", 1);
    m.field(STRUCT, 0)
        .field(STRING, 1)
        .string(b"r")
        .field(LIST, 2)
        .list(STRUCT, cells as i32);
    for _ in 0..cells {
        cell(&mut m);
    }
    m.stop().stop().done()
}

#[test]
fn four_megabytes_of_empty_cells() {
    // One STOP byte per cell: 4 MB that held 412 MB.
    let reply = get_reply(4_000_000, |m| {
        m.stop();
    });
    let size = reply.len();
    // Copying the reply out of the fake's `Arc` counts too: one more `size`.
    let (peak, result) = peak_of_get(reply);
    let cells = result.map(|row| row.map_or(0, |r| r.cells.len()));
    assert!(
        cells.is_err(),
        "cells without their required fields were read: {cells:?}"
    );
    assert!(peak < 5 * size, "{peak} bytes held for a {size}-byte reply");
}

#[test]
fn many_valid_empty_cells() {
    // Valid cells of empty family, qualifier and value: 22 bytes each.
    let reply = get_reply(200_000, |m| fake::column_value(m, "", "", b""));
    let size = reply.len();
    let (peak, result) = peak_of_get(reply);
    assert_eq!(result.expect("a valid reply").expect("a row").cells.len(), 200_000);
    assert!(peak < 12 * size, "{peak} bytes held for a {size}-byte reply");
}
