//! Decodes arbitrary bytes as the ZooKeeper registry reads them
//! (`hmap::store::native::zookeeper`): a `ConnectResponse`, a reply to
//! `getData`, and a znode's data as each of the three znodes HBase writes
//! (`master`, `meta-region-server`, `hbaseid`). Nothing may panic, and a
//! reply's data is then read as each znode too.
#![no_main]

use hmap::store::native::zookeeper::{
    Reply, decode_cluster_id, decode_connect, decode_get_data, decode_master, decode_meta, strip_metadata,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_connect(data);
    let _ = strip_metadata(data);
    let _ = decode_master(data);
    let _ = decode_meta(data);
    let _ = decode_cluster_id(data);
    if let Ok(Reply::Data(znode)) = decode_get_data(data, 1) {
        assert!(znode.len() <= data.len(), "more data than bytes");
        let _ = decode_master(&znode);
        let _ = decode_meta(&znode);
        let _ = decode_cluster_id(&znode);
    }
});
