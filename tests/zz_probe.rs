use bytes::Bytes;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{CheckAndMutate, Increment, RowMutation, Store, ThriftConfig, ThriftStore};

#[test]
fn probe() {
    let mut c = ThriftConfig::new("127.0.0.1:9091");
    c.table_prefix = "thrift_probe_".into();
    let s = ThriftStore::with_config(c.clone());
    let _ = s.delete_table("t");
    println!("describe missing: {:?}", s.describe_table("t"));
    println!("get missing: {:?}", s.get("t", &hmap::store::Get::new("r")));
    s.create_table(
        &TableSchema::new("t")
            .family(FamilySchema::new("f"))
            .family(FamilySchema::new("g")),
    )
    .unwrap();
    println!(
        "create again: {:?}",
        s.create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
    );
    s.mutate("t", &[RowMutation::new("r").put("f", "s", "abc").put("f", "e", "")])
        .unwrap();
    println!(
        "incr non-counter: {:?}",
        s.increment("t", &Increment::new("r").add("f", "s", 1))
    );
    // empty value vs absent
    println!(
        "absent check on empty-valued cell: {:?}",
        s.check_and_mutate(
            "t",
            &CheckAndMutate::new(RowMutation::new("r").put("f", "x", "1"), "f", "e", None)
        )
    );
    println!(
        "empty check on absent cell: {:?}",
        s.check_and_mutate(
            "t",
            &CheckAndMutate::new(
                RowMutation::new("r").put("f", "y", "1"),
                "f",
                "nope",
                Some(Bytes::new())
            )
        )
    );
    println!(
        "absent check with delete on absent cell: {:?}",
        s.check_and_mutate(
            "t",
            &CheckAndMutate::new(
                RowMutation::new("r2").put("f", "v", "1").delete_column("f", "o"),
                "f",
                "ver",
                None
            )
        )
    );
    println!("row r2: {:?}", s.get("t", &hmap::store::Get::new("r2")));
    println!(
        "absent check on present: {:?}",
        s.check_and_mutate(
            "t",
            &CheckAndMutate::new(RowMutation::new("r").delete_column("f", "s"), "f", "s", None)
        )
    );
    let s2 = ThriftStore::with_config(c.clone());
    s2.get("t", &hmap::store::Get::new("r")).unwrap();
    s.delete_table("t").unwrap();
    s.create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .unwrap();
    println!(
        "put unknown family (stale cache): {:?}",
        s2.mutate("t", &[RowMutation::new("r").put("g", "q", "v")])
    );
    println!(
        "incr unknown family (stale cache): {:?}",
        s2.increment("t", &Increment::new("r").add("g", "q", 1))
    );
    s.delete_table("t").unwrap();
}
