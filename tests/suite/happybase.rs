//! Another HBase client reads what hmap wrote, and hmap reads what it wrote:
//! Python's happybase, through HBase's Thrift1 gateway.
//!
//! `#[ignore]`d; `cargo test -- --include-ignored` runs it with
//! `HMAP_THRIFT` (the Thrift2 gateway hmap writes through) and `HMAP_THRIFT1`
//! (the Thrift1 gateway happybase reads through) set, as `.ci/run` sets them
//! after `scripts/hbase/hbase start`, and fails without them; happybase is
//! installed by `scripts/hbase/python-env`.

use std::path::Path;
use std::process::Command;

use hmap::HTable;
use hmap::blocking::Table;
use hmap::store::{Scan, ThriftConfig, ThriftStore};
use serde_json::Value;

#[derive(HTable, Debug, PartialEq, Clone)]
#[hmap(
    table = "member",
    text_key,
    family(
        name = "i",
        versions = 3,
        ttl = "30d",
        compression = "gz",
        bloom = "rowcol",
        in_memory = true
    )
)]
struct Member {
    #[hmap(key)]
    id: String,
    #[hmap(column = "n")]
    name: String,
    age: i32,
    score: f64,
    vip: bool,
    visits: i64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn script(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hbase").join(name)
}

#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT and HMAP_THRIFT1"]
fn happybase_reads_hmap_rows_and_hmap_reads_happybase_rows() {
    let thrift2 = hmap_suite::required_env("HMAP_THRIFT");
    let thrift1 = hmap_suite::required_env("HMAP_THRIFT1");
    let prefix = &hmap_suite::test_table_prefix("hmap_happybase__");
    let mut config = ThriftConfig::new(thrift2);
    config.table_prefix = prefix.into();
    let store = hmap::blocking::Store::new(ThriftStore::with_config(config));
    let members = Table::<Member, _>::new(&store);
    if store.table_exists("member").expect("table_exists") {
        store.delete_table("member").expect("delete a leftover table");
    }
    members.create().expect("create");
    let written = [
        Member {
            id: "m-1".into(),
            name: "李四".into(),
            age: -7,
            score: 99.25,
            vip: true,
            visits: 1 << 40,
        },
        Member {
            id: "m-2".into(),
            name: "Ann".into(),
            age: 30,
            score: -0.5,
            vip: false,
            visits: 0,
        },
    ];
    members.put_many(&written).expect("put");

    let python = Command::new("bash")
        .arg(script("python-env"))
        .output()
        .expect("run python-env");
    assert!(python.status.success(), "{}", String::from_utf8_lossy(&python.stderr));
    let python = String::from_utf8(python.stdout).expect("a path").trim().to_string();
    let (host, port) = thrift1.rsplit_once(':').expect("HMAP_THRIFT1 is host:port");
    let run = Command::new(&python)
        .arg(script("happybase_check.py"))
        .args([host, port, &format!("{prefix}member")])
        .output()
        .expect("run happybase_check.py");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let seen: Value = serde_json::from_slice(&run.stdout).expect("JSON from happybase_check.py");

    // The family options hmap declared, as happybase describes them.
    let family = &seen["families"]["i"];
    assert_eq!(family["max_versions"], 3, "{family}");
    assert_eq!(family["time_to_live"], 30 * 24 * 3600, "{family}");
    assert_eq!(family["compression"], "GZ", "{family}");
    assert_eq!(family["bloom_filter_type"], "ROWCOL", "{family}");
    assert_eq!(family["in_memory"], true, "{family}");

    // Every row hmap wrote, byte for byte: keys as hmap encoded them, values
    // as Java's Bytes.toBytes encodes them.
    let keys: Vec<String> = store
        .scan("member", &Scan::all())
        .expect("scan")
        .map(|r| hex(&r.expect("row").row))
        .collect();
    let rows = seen["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), written.len());
    for ((row, key), member) in rows.iter().zip(&keys).zip(&written) {
        assert_eq!(row["key"], key.as_str());
        // A text key is the id itself, readable by any client.
        assert_eq!(row["key"], hex(member.id.as_bytes()));
        let cells = &row["cells"];
        assert_eq!(cells["i:n"], hex(member.name.as_bytes()));
        assert_eq!(cells["i:age"], hex(&member.age.to_be_bytes()));
        assert_eq!(cells["i:score"], hex(&member.score.to_bits().to_be_bytes()));
        assert_eq!(cells["i:vip"], if member.vip { "ff" } else { "00" });
        assert_eq!(cells["i:visits"], hex(&member.visits.to_be_bytes()));
    }

    // The row happybase wrote as Java would, read back typed.
    let from_python = members.get("py-1").expect("get").expect("the row happybase wrote");
    assert_eq!(
        from_python,
        Member {
            id: "py-1".into(),
            name: "Zhang San".into(),
            age: 41,
            score: 2.5,
            vip: true,
            visits: 123_456_789_012,
        }
    );
    store.delete_table("member").expect("delete");
}
