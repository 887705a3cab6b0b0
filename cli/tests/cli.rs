//! hmap-cli driven end to end: in process on the store from the
//! environment (`MemoryStore`, or a real HBase when `HMAP_THRIFT` is set),
//! and as a binary (its exit codes and messages; on a real HBase, the
//! commands that need one).

use std::collections::BTreeMap;
use std::sync::Arc;

use apps::{shop_item, weibo};
use assert_cmd::Command;
use hmap::blocking::Table;
use hmap::store::Store;
use hmap_cli::CliError;

#[path = "../src/apps.rs"]
mod apps;

/// Runs the CLI in process on `store`; its output, or its error.
fn run(store: &Arc<dyn Store>, args: &[&str]) -> Result<String, CliError> {
    let mut out = Vec::new();
    apps::cli()
        .store(Arc::clone(store))
        .run_with(std::iter::once("hmap-cli").chain(args.iter().copied()), &mut out)?;
    Ok(String::from_utf8(out).expect("UTF-8 output"))
}

fn ok(store: &Arc<dyn Store>, args: &[&str]) -> String {
    run(store, args).unwrap_or_else(|e| panic!("hmap-cli {}: {e}", args.join(" ")))
}

fn user(uid: &str, name: &str) -> weibo::User {
    weibo::User {
        uid: uid.into(),
        name: name.into(),
        posts: 0,
        follows: BTreeMap::new(),
        fans: BTreeMap::new(),
    }
}

#[test]
fn plan_migrate_and_tables() {
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_migrate")).expect("outside a runtime");
    let plan = ok(&store, &["plan"]);
    assert!(
        plan.contains("# wb_user\ncreate 'wb_user', {NAME => 'i', VERSIONS => 1}, "),
        "{plan}"
    );
    assert!(plan.contains("# item\ncreate 'item'"), "{plan}");
    let tables = ok(&store, &["tables"]);
    assert!(
        tables.contains("wb_user   missing: `plan` shows how to create it"),
        "{tables}"
    );

    let migrated = ok(&store, &["migrate", "wb_user", "wb_post"]);
    assert!(migrated.contains("# wb_user: applied 1 step(s)"), "{migrated}");
    assert!(migrated.contains("# wb_post: applied 1 step(s)"), "{migrated}");
    let tables = ok(&store, &["tables"]);
    assert!(tables.contains("wb_user   ok"), "{tables}");
    assert!(tables.contains("wb_inbox  missing"), "{tables}");
    assert_eq!(ok(&store, &["plan", "wb_user"]), "# wb_user: up to date\n");

    // A family the struct does not declare: drift is reported, dropping it
    // only when asked.
    hmap::blocking::block_on(store.alter_table(
        "wb_user",
        &hmap::store::FamilyChange::Add(hmap::schema::FamilySchema::new("old")),
    ))
    .unwrap();
    let described = ok(&store, &["describe", "wb_user"]);
    assert!(described.starts_with("create 'wb_user', "), "{described}");
    assert!(
        described.contains("# the table has family `old`, which the struct does not declare"),
        "{described}"
    );
    let kept = ok(&store, &["migrate", "wb_user"]);
    assert!(kept.contains("# family `old` is in the table only"), "{kept}");
    let dropped = ok(&store, &["migrate", "wb_user", "--drop-families"]);
    assert!(dropped.contains("alter 'wb_user', 'delete' => 'old'"), "{dropped}");
    assert_eq!(
        ok(&store, &["plan", "wb_user", "--drop-families"]),
        "# wb_user: up to date\n"
    );
}

#[test]
fn get_and_scan_print_typed_rows() {
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_read")).expect("outside a runtime");
    let users: Table<weibo::User, _> = Table::new(Arc::clone(&store));
    users.create().unwrap();
    users
        .put_many(&[user("u1", "Ann"), user("u2", "Bob"), user("v1", "Cy")])
        .unwrap();

    assert_eq!(
        ok(&store, &["get", "wb_user", "u2"]),
        "uid  name  posts  follows  fans\nu2   Bob   0      {}       {}\n"
    );
    assert_eq!(
        ok(&store, &["get", "wb_user", "u2", "--format", "json"]),
        "{\"fans\":{},\"follows\":{},\"name\":\"Bob\",\"posts\":0,\"uid\":\"u2\"}\n"
    );
    assert_eq!(ok(&store, &["get", "wb_user", "zz"]), "no row\n");
    let scanned = ok(&store, &["scan", "wb_user", "--prefix", "u", "--format", "json"]);
    assert_eq!(scanned, "");
    let all = ok(&store, &["scan", "wb_user", "--limit", "2"]);
    assert_eq!(all.lines().count(), 3, "{all}");

    // A composite, reverse-timestamp key, given part by part.
    let posts: Table<weibo::Post, _> = Table::new(Arc::clone(&store));
    posts.create().unwrap();
    for at in [1_000, 2_000, 3_000] {
        posts
            .put(&weibo::Post {
                uid: "u1".into(),
                at,
                content: format!("post at {at}"),
            })
            .unwrap();
    }
    let newest = ok(&store, &["scan", "wb_post", "--prefix", "u1", "--limit", "2"]);
    assert_eq!(
        newest,
        "uid  at    content\nu1   3000  post at 3000\nu1   2000  post at 2000\n"
    );
    assert!(ok(&store, &["get", "wb_post", "u1", "1000"]).contains("post at 1000"));
}

#[test]
fn relations_verify_and_repair() {
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_relations")).expect("outside a runtime");
    let shops: Table<shop_item::Shop, _> = Table::new(Arc::clone(&store));
    let items: Table<shop_item::Item, _> = Table::new(Arc::clone(&store));
    shops.create().unwrap();
    items.create().unwrap();
    assert_eq!(
        ok(&store, &["verify", "shop_items"]),
        "shop_items: verified: consistent\n"
    );
    // A half-written link: only the shop's side.
    hmap::blocking::block_on(store.mutate(
        "shop",
        &[hmap::store::RowMutation::new(shops.row_key("s1".to_string()).unwrap()).put("item", "i1", "")],
    ))
    .unwrap();
    let found = ok(&store, &["verify", "shop_items"]);
    assert!(found.starts_with("shop_items: verified: "), "{found}");
    assert!(!found.contains("consistent"), "{found}");
    ok(&store, &["repair", "shop_items"]);
    assert_eq!(
        ok(&store, &["verify", "shop_items"]),
        "shop_items: verified: consistent\n"
    );
    assert!(matches!(
        run(&store, &["rebuild-index", "shop_items"]),
        Err(CliError::NotAnIndex(name)) if name == "shop_items"
    ));
    assert!(matches!(
        run(&store, &["verify", "nothing"]),
        Err(CliError::Unknown { what: "relation", .. })
    ));

    // In batches, and resumed from a checkpoint an earlier run printed:
    // three shops whose link to an item was only half written.
    items
        .put(&shop_item::Item {
            id: "i1".into(),
            name: "tea".into(),
            price: 1.0,
            details: None,
            title: "tea".into(),
            shops: Default::default(),
        })
        .unwrap();
    for s in ["s2", "s3", "s4"] {
        shops
            .put(&shop_item::Shop {
                id: s.into(),
                name: s.into(),
                address: "here".into(),
                regdate: chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(),
                items: Default::default(),
            })
            .unwrap();
        hmap::blocking::block_on(store.mutate(
            "shop",
            &[hmap::store::RowMutation::new(shops.row_key(s.to_string()).unwrap()).put("item", "i1", "")],
        ))
        .unwrap();
    }
    let found = ok(&store, &["verify", "shop_items", "--batch", "1"]);
    assert!(found.contains("missing: s2 -> i1"), "{found}");
    assert!(found.contains("missing: s4 -> i1"), "{found}");
    // Resuming after the second shop row checks only the rows after it.
    let s2 = shops.row_key("s2".to_string()).unwrap();
    let checkpoint = format!("1:{}", s2.iter().map(|b| format!("{b:02x}")).collect::<String>());
    let rest = ok(&store, &["repair", "shop_items", "--batch", "1", "--from", &checkpoint]);
    assert!(!rest.contains("s2 -> i1"), "{rest}");
    assert!(rest.contains("missing: s3 -> i1"), "{rest}");
    let left = ok(&store, &["verify", "shop_items"]);
    assert!(
        left.contains("missing: s2 -> i1") && !left.contains("s3 -> i1"),
        "{left}"
    );
    ok(&store, &["repair", "shop_items"]);
    assert!(matches!(
        run(&store, &["verify", "shop_items", "--from", "later"]),
        Err(CliError::Checkpoint(message)) if message.contains("not a checkpoint")
    ));
}

#[test]
fn bad_input_is_a_typed_error() {
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_errors")).expect("outside a runtime");
    let err = run(&store, &["get", "wb_post", "u1", "yesterday"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "table `wb_post`: key part `at` (I64): cannot read \"yesterday\": invalid digit found in string"
    );
    let err = run(&store, &["get", "wb_post", "u1"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "table `wb_post`: the key has 2 part(s) (uid, at), 1 given"
    );
    let err = run(&store, &["scan", "nope"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no table `nope` is registered (registered: wb_user, wb_post, wb_inbox, shop, item)"
    );
    let err = run(&store, &["inspect", "wb_user", "--hex", "0g"]).unwrap_err();
    assert!(matches!(err, CliError::Hex(_)), "{err}");
}

/// Issue 26, item 16: a helper that checks in one pass refuses `--from`
/// with an error naming its table, not a placeholder.
#[test]
fn a_one_pass_check_refusing_a_checkpoint_names_its_table() {
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_one_pass")).expect("outside a runtime");
    let tree = hmap::relation::Tree::new(Arc::clone(&store), "cli_org");
    hmap::blocking::block_on(tree.create()).unwrap();
    let cli = || {
        apps::cli()
            .relation("org", |store: Arc<dyn Store>| {
                hmap::relation::Tree::new(store, "cli_org")
            })
            .store(Arc::clone(&store))
    };
    for args in [
        ["hmap-cli", "repair", "org", "--from", "1:00"],
        ["hmap-cli", "rebuild-index", "shop_items", "--from", "1:00"],
    ] {
        let err = cli().run_with(args, &mut Vec::new()).unwrap_err();
        let text = err.to_string();
        assert!(!text.contains("`relation`"), "{text}");
        if args[1] == "repair" {
            assert_eq!(
                text,
                "table `cli_org`: invalid query: this helper checks in one pass: it cannot resume from 1:00"
            );
        } else {
            // A relation with nothing to rebuild says so, checkpoint or not.
            assert!(
                matches!(err, CliError::NotAnIndex(name) if name == "shop_items"),
                "{text}"
            );
        }
    }
    let mut out = Vec::new();
    cli().run_with(["hmap-cli", "verify", "org"], &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "org: verified: consistent\n");
}

/// The binary, without a store.
fn binary() -> Command {
    let mut cmd = Command::cargo_bin("hmap-cli").expect("the hmap-cli binary");
    cmd.env_remove("HMAP_THRIFT").env_remove("HMAP_TABLE_PREFIX");
    cmd
}

#[test]
fn the_binary_without_a_store() {
    let out = binary().args(["create", "wb_post", "--dry-run"]).assert().success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "create 'wb_post', {NAME => 'p', VERSIONS => 1}, METADATA => {'hmap.key' => 'text \\'_\\': uid: string + at: i64 reverse_ts'}\n"
    );
    let out = binary()
        .args(["inspect", "wb_post", "u0001_9223370273074375807"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "uid=\"u0001\"\nat=1763780400000\n"
    );
    // A key that does not decode, an unknown table, no store, a bad address:
    // exit status 1 and one line on stderr.
    for (args, message) in [
        (
            &["inspect", "wb_user", "abc"][..],
            "error: table `wb_user`: the key does not decode: rowkey abc does not decode",
        ),
        (
            &["describe", "nope"][..],
            "error: no store: pass --thrift host:port or set HMAP_THRIFT",
        ),
        (
            &["create", "nope", "--dry-run"][..],
            "error: no table `nope` is registered (registered: wb_user, wb_post, wb_inbox, shop, item)",
        ),
        (
            &["--thrift", "127.0.0.1:1", "--timeout", "2", "tables"][..],
            "error: cannot reach the Thrift2 gateway at 127.0.0.1:1: ",
        ),
    ] {
        let out = binary().args(args).assert().code(1);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.starts_with(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // A command line that does not parse: status 2, with the usage.
    let out = binary().arg("frob").assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("Usage: hmap-cli"));
}

#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
fn the_binary_on_hbase() {
    let address = hmap_suite::required_env("HMAP_THRIFT");
    let prefix = hmap_suite::test_table_prefix("hmap_test_cli_binary__");
    let on_hbase = |args: &[&str]| {
        let mut cmd = binary();
        cmd.args(["--thrift", &address, "--table-prefix", &prefix]).args(args);
        cmd
    };
    // Start clean: the tables a previous run left.
    let store = hmap::blocking::try_block_on(hmap_suite::store_for(Some(&address), &prefix))
        .expect("outside a runtime")
        .unwrap();
    for table in hmap::blocking::block_on(store.list_tables()).unwrap() {
        hmap::blocking::block_on(store.delete_table(&table)).unwrap();
    }
    on_hbase(&["migrate"]).assert().success();
    let out = on_hbase(&["tables"]).assert().success();
    let tables = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for table in ["wb_user", "wb_post", "wb_inbox", "shop", "item"] {
        assert!(
            tables.lines().any(|l| l.starts_with(table) && l.ends_with("  ok")),
            "{tables}"
        );
    }
    let users: Table<weibo::User, _> = Table::new(Arc::clone(&store));
    users.put(&user("u7", "Dee")).unwrap();
    let out = on_hbase(&["get", "wb_user", "u7", "--format", "json"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "{\"fans\":{},\"follows\":{},\"name\":\"Dee\",\"posts\":0,\"uid\":\"u7\"}\n"
    );
    let out = on_hbase(&["describe", "wb_user"]).assert().success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("# fits its struct"));
    // A check in batches prints, on stderr (not a terminal here), where to
    // resume from after each batch; `--from` takes it back.
    users.put(&user("u8", "Eve")).unwrap();
    let out = on_hbase(&["verify", "follows", "--batch", "1"]).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let checkpoint = stderr
        .lines()
        .find_map(|l| l.split("resume with --from ").nth(1))
        .unwrap_or_else(|| panic!("no checkpoint in {stderr:?}"))
        .to_string();
    assert!(checkpoint.starts_with("1:"), "{checkpoint}");
    let out = on_hbase(&["verify", "follows", "--from", &checkpoint])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("consistent"));
    for table in hmap::blocking::block_on(store.list_tables()).unwrap() {
        hmap::blocking::block_on(store.delete_table(&table)).unwrap();
    }
}
