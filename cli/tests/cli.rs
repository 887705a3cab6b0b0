//! hmap-cli driven end to end: in process on the store from the
//! environment (`MemoryStore`, or a real HBase when `HMAP_THRIFT` is set),
//! and as a binary (its exit codes and messages; on a real HBase, the
//! commands that need one, through NativeStore, Thrift1 and each Thrift
//! wire mode).

use std::collections::BTreeMap;
use std::sync::Arc;

use apps::{shop_item, weibo};
use assert_cmd::Command;
use hmap::blocking::Table;
use hmap::store::Store;
use hmap_cli::{CliError, Status};

#[path = "../src/apps.rs"]
mod apps;

/// The examples whose tables `src/apps.rs` copies.
#[allow(dead_code)]
#[path = "../../examples/shop_item.rs"]
mod shop_item_example;
#[allow(dead_code)]
#[path = "../../examples/weibo.rs"]
mod weibo_example;

/// Runs the CLI in process on `store`; its output, or its error.
fn run(store: &Arc<dyn Store>, args: &[&str]) -> Result<String, CliError> {
    run_status(store, args).map(|(out, _)| out)
}

/// Runs the CLI in process on `store`; its output and status, or its error.
fn run_status(store: &Arc<dyn Store>, args: &[&str]) -> Result<(String, Status), CliError> {
    let mut out = Vec::new();
    let status = apps::cli()
        .store(Arc::clone(store))
        .run_with(std::iter::once("hmap-cli").chain(args.iter().copied()), &mut out)?;
    Ok((String::from_utf8(out).expect("UTF-8 output"), status))
}

/// `src/apps.rs` copies the examples' table structs (so that the package
/// depends on hmap alone): each copy is its example's table.
#[test]
fn the_copied_tables_are_the_examples() {
    use hmap::HTable;
    fn same<A: HTable, B: HTable>() {
        assert_eq!(A::table_schema(), B::table_schema(), "{}", A::TABLE);
        assert_eq!(A::key_schema(), B::key_schema(), "{}", A::TABLE);
        assert_eq!(A::fields(), B::fields(), "{}", A::TABLE);
    }
    same::<weibo::User, weibo_example::User>();
    same::<weibo::Post, weibo_example::Post>();
    same::<weibo::Inbox, weibo_example::Inbox>();
    same::<shop_item::Shop, shop_item_example::Shop>();
    same::<shop_item::Item, shop_item_example::Item>();
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

/// What `tables` says of `table`, its columns checked aligned: every line
/// has its status at the same column.
fn status_in(tables: &str, table: &str) -> String {
    let column = |line: &str| {
        line.find(char::is_whitespace)
            .map(|end| end + line[end..].len() - line[end..].trim_start().len())
    };
    let columns: std::collections::BTreeSet<_> = tables.lines().map(column).collect();
    assert_eq!(columns.len(), 1, "the statuses are not aligned:\n{tables}");
    tables
        .lines()
        .find_map(|line| line.strip_prefix(table).filter(|rest| rest.starts_with(' ')))
        .unwrap_or_else(|| panic!("no `{table}` in:\n{tables}"))
        .trim()
        .to_string()
}

/// A registered index's table is listed (it is not "not registered"),
/// planned and created with the rest, and `verify` names its findings by
/// the value and the row's key parts.
#[test]
fn an_index_table_is_listed_planned_and_verified() {
    use hmap::relation::Index;
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_index")).expect("outside a runtime");
    let cli = || {
        hmap_cli::Cli::new("hmap-cli")
            .table::<weibo::User>()
            .relation("users_by_name", |store: Arc<dyn Store>| {
                Index::new(store, "wb_user_by_name", |u: &weibo::User| u.name.clone())
            })
            .store(Arc::clone(&store))
    };
    let run = |args: &[&str]| {
        let mut out = Vec::new();
        cli()
            .run_with(std::iter::once("hmap-cli").chain(args.iter().copied()), &mut out)
            .unwrap_or_else(|e| panic!("hmap-cli {}: {e}", args.join(" ")));
        String::from_utf8(out).expect("UTF-8 output")
    };
    let tables = run(&["tables"]);
    assert_eq!(
        status_in(&tables, "wb_user_by_name"),
        "missing: `plan` shows how to create it (kept by `users_by_name`)",
        "{tables}"
    );
    let plan = run(&["plan"]);
    assert!(
        plan.contains("# wb_user_by_name\ncreate 'wb_user_by_name', {NAME => 'x'"),
        "{plan}"
    );
    assert_eq!(
        run(&["plan", "wb_user_by_name"]).lines().next(),
        Some("# wb_user_by_name")
    );
    run(&["migrate"]);
    let tables = run(&["tables"]);
    assert_eq!(
        status_in(&tables, "wb_user_by_name"),
        "ok (kept by `users_by_name`)",
        "{tables}"
    );
    assert!(run(&["describe", "wb_user_by_name"]).contains("# fits its struct"));

    // A user written behind the index's back: its entry is missing, named
    // by its value and its row's key.
    let users = Table::<weibo::User, _>::new(Arc::clone(&store));
    let refused = users.put(&user("u7", "Ann")).expect_err("the table is indexed");
    assert!(matches!(refused, hmap::Error::Indexed { .. }), "{refused}");
    users.around_indexes().put(&user("u7", "Ann")).expect("put");
    let mut out = Vec::new();
    let status = cli()
        .run_with(["hmap-cli", "verify", "users_by_name"], &mut out)
        .expect("verify runs");
    let report = String::from_utf8(out).expect("UTF-8 output");
    assert_eq!(status, Status::Problems, "{report}");
    assert!(report.contains(r#"no entry value="Ann" of row uid="u7""#), "{report}");
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
    assert_eq!(
        status_in(&tables, "wb_user"),
        "missing: `plan` shows how to create it",
        "{tables}"
    );

    let migrated = ok(&store, &["migrate", "wb_user", "wb_post"]);
    assert!(migrated.contains("# wb_user: applied 1 step(s)"), "{migrated}");
    assert!(migrated.contains("# wb_post: applied 1 step(s)"), "{migrated}");
    let tables = ok(&store, &["tables"]);
    assert_eq!(status_in(&tables, "wb_user"), "ok", "{tables}");
    assert!(status_in(&tables, "wb_inbox").starts_with("missing"), "{tables}");
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
    // JSON: the struct's fields in declaration order, as docs/cli.md says.
    assert_eq!(
        ok(&store, &["get", "wb_user", "u2", "--format", "json"]),
        "{\"uid\":\"u2\",\"name\":\"Bob\",\"posts\":0,\"follows\":{},\"fans\":{}}\n"
    );
    assert_eq!(
        run_status(&store, &["get", "wb_user", "zz"]).expect("runs"),
        ("no row\n".to_string(), Status::NotFound)
    );
    assert_eq!(
        run_status(&store, &["get", "wb_user", "u2"]).expect("runs").1,
        Status::Clean
    );
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

/// A field stored as JSON prints its keys in the struct's order in both
/// formats, as the row's JSON holds them (a map of `serde_json::Value`
/// would sort them in the table).
#[test]
fn a_json_cell_prints_its_keys_in_one_order_in_both_formats() {
    #[derive(hmap::HTable, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
    #[hmap(table = "cli_json_cell", family(name = "f"))]
    struct Order {
        #[hmap(key)]
        id: String,
        #[hmap(family = "f", json)]
        ship_to: Address,
    }
    #[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
    struct Address {
        street: String,
        city: String,
    }
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_json_cell")).expect("outside a runtime");
    let orders: Table<Order, _> = Table::new(Arc::clone(&store));
    orders.create().unwrap();
    orders
        .put(&Order {
            id: "o1".into(),
            ship_to: Address {
                street: "1 Main St".into(),
                city: "Zug".into(),
            },
        })
        .unwrap();
    let cli = || {
        hmap_cli::Cli::new("hmap-cli")
            .table::<Order>()
            .store(Arc::clone(&store))
    };
    let run = |args: &[&str]| {
        let mut out = Vec::new();
        cli()
            .run_with(std::iter::once("hmap-cli").chain(args.iter().copied()), &mut out)
            .expect("runs");
        String::from_utf8(out).expect("UTF-8 output")
    };
    let cell = r#"{"street":"1 Main St","city":"Zug"}"#;
    assert_eq!(
        run(&["get", "cli_json_cell", "o1", "--format", "json"]),
        format!("{{\"id\":\"o1\",\"ship_to\":{cell}}}\n")
    );
    let table = run(&["get", "cli_json_cell", "o1"]);
    assert!(table.lines().nth(1).is_some_and(|line| line.ends_with(cell)), "{table}");
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

/// What `verify` and `repair` return, and `--format json`'s report: in
/// process, on the store from the environment.
#[test]
fn verify_and_repair_report_problems_in_their_status_and_json() {
    let store = hmap::blocking::try_block_on(hmap_suite::test_store("cli_status")).expect("outside a runtime");
    let shops: Table<shop_item::Shop, _> = Table::new(Arc::clone(&store));
    let items: Table<shop_item::Item, _> = Table::new(Arc::clone(&store));
    shops.create().unwrap();
    items.create().unwrap();
    let (out, status) = run_status(&store, &["verify", "shop_items", "--format", "json"]).unwrap();
    assert_eq!(status, Status::Clean);
    assert_eq!(
        out,
        "{\"relation\":\"shop_items\",\"check\":\"verify\",\"consistent\":true,\"found\":0,\"missing\":[],\
         \"dangling\":[],\"stale\":[],\"absent\":[],\"held\":[],\"unreadable\":[]}\n"
    );
    half_link(&store, &shops, "s1", "i1");
    let (out, status) = run_status(&store, &["verify", "shop_items", "--format", "json"]).unwrap();
    assert_eq!(status, Status::Problems);
    assert_eq!(
        out,
        "{\"relation\":\"shop_items\",\"check\":\"verify\",\"consistent\":false,\"found\":1,\"missing\":[],\
         \"dangling\":[],\"stale\":[],\"absent\":[\"s1 -> i1: no left entity s1 (left side)\"],\"held\":[],\"unreadable\":[]}\n"
    );
    let (_, status) = run_status(&store, &["repair", "shop_items"]).unwrap();
    assert_eq!(status, Status::Problems, "a repair that found problems says so");
    let (out, status) = run_status(&store, &["verify", "shop_items"]).unwrap();
    assert_eq!(
        (out.as_str(), status),
        ("shop_items: verified: consistent\n", Status::Clean)
    );
    assert_eq!(Status::Clean.exit_code(), std::process::ExitCode::SUCCESS);
    assert_eq!(Status::Problems.exit_code(), std::process::ExitCode::from(1));
    let err = run(&store, &["verify", "nothing"]).unwrap_err();
    assert_eq!(err.exit_code(), std::process::ExitCode::from(2));
}

/// Writes only `shop`'s side of a link to `item`.
fn half_link(store: &Arc<dyn Store>, shops: &Table<shop_item::Shop, Arc<dyn Store>>, shop: &str, item: &'static str) {
    hmap::blocking::block_on(store.mutate(
        "shop",
        &[hmap::store::RowMutation::new(shops.row_key(shop.to_string()).unwrap()).put("item", item, "")],
    ))
    .unwrap();
}

/// The variables that name a store (and the CA's), which `.ci/run` sets.
const STORE_VARIABLES: [&str; 19] = [
    "HMAP_THRIFT",
    "HMAP_NATIVE",
    "HMAP_ZOOKEEPER",
    "HMAP_THRIFT_FRAMED",
    "HMAP_THRIFT_COMPACT",
    "HMAP_THRIFT_HTTPS",
    "HMAP_THRIFT_CA",
    "HMAP_THRIFT1",
    "HMAP_THRIFT1_COMPACT",
    "HMAP_NATIVE_TLS_CA",
    "HMAP_NATIVE_TLS_CERT",
    "HMAP_NATIVE_TLS_KEY",
    "HMAP_PRINCIPAL",
    "HMAP_KEYTAB",
    "HMAP_KERBEROS",
    "HMAP_SERVER_PRINCIPAL",
    "HMAP_KRB_PROTECTION",
    "HMAP_TABLE_PREFIX",
    "HMAP_BIGTABLE",
];

/// The binary, without a store: none of the variables set.
fn binary() -> Command {
    let mut cmd = Command::cargo_bin("hmap-cli").expect("the hmap-cli binary");
    for variable in STORE_VARIABLES {
        cmd.env_remove(variable);
    }
    cmd
}

/// Runs the binary; its exit status and its stdout and stderr.
fn status_of(cmd: &mut Command) -> (Option<i32>, String, String) {
    let out = cmd.output().expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
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
    // exit status 2 ("could not run") and one line on stderr.
    for (args, message) in [
        (
            &["inspect", "wb_user", "abc"][..],
            "error: table `wb_user`: the key does not decode: rowkey abc does not decode",
        ),
        (
            &["describe", "nope"][..],
            "error: no store: pass one of --native, --zookeeper, --thrift, --thrift1, --bigtable (or set one of \
             HMAP_THRIFT, HMAP_NATIVE, HMAP_ZOOKEEPER, HMAP_THRIFT_FRAMED, HMAP_THRIFT_COMPACT, HMAP_THRIFT_HTTPS, \
             HMAP_THRIFT1, HMAP_THRIFT1_COMPACT, HMAP_BIGTABLE)",
        ),
        (
            &["verify", "follows"][..],
            "error: no store: pass one of --native, --zookeeper, --thrift, --thrift1, --bigtable",
        ),
        (
            &["create", "nope", "--dry-run"][..],
            "error: no table `nope` is registered (registered: wb_user, wb_post, wb_inbox, shop, item)",
        ),
        (
            &["--thrift", "127.0.0.1:1", "--timeout", "2", "tables"][..],
            "error: --thrift: cannot connect to the Thrift2 gateway at 127.0.0.1:1: ",
        ),
        (
            &[
                "--thrift1",
                "127.0.0.1:1",
                "--compact",
                "--timeout",
                "2",
                "verify",
                "follows",
            ][..],
            "error: --thrift1: cannot connect to the Thrift1 gateway at 127.0.0.1:1 (compact): ",
        ),
        (
            &["--native", "127.0.0.1:1", "--timeout", "2", "tables"][..],
            "error: --native: cannot connect to HBase at 127.0.0.1:1 (NativeStore): ",
        ),
        (
            &["--zookeeper", "127.0.0.1:1", "--timeout", "2", "tables"][..],
            "error: --zookeeper: cannot connect to HBase through ZooKeeper 127.0.0.1:1 (NativeStore): ",
        ),
        (
            &["--thrift", "127.0.0.1:1", "--native", "127.0.0.1:2", "tables"][..],
            "error: the flags name several stores (--native, --thrift): pass exactly one of --native, \
             --zookeeper, --thrift, --thrift1",
        ),
        (
            &["--framed", "tables"][..],
            "error: --framed applies to a Thrift gateway: give it with --thrift or --thrift1",
        ),
        (
            &["--native", "127.0.0.1:1", "--compact", "tables"][..],
            "error: --compact applies to a Thrift gateway: give it with --thrift or --thrift1",
        ),
        // Without the `tls` feature, HTTPS is refused; with it, the CA is
        // read: either way the error names the flag.
        (
            &["--thrift", "127.0.0.1:1", "--ca", "/nonexistent/ca.pem", "tables"][..],
            "error: --ca: ",
        ),
        (
            &["--native", "127.0.0.1:1", "--ca", "/nonexistent/ca.pem", "tables"][..],
            "error: --ca: ",
        ),
        (
            &["--thrift", "127.0.0.1:1", "--tls", "tables"][..],
            "error: --tls applies to NativeStore: give it with --native or --zookeeper",
        ),
        (
            &["--tls", "tables"][..],
            "error: --tls applies to NativeStore: give it with --native or --zookeeper",
        ),
        (
            &["--ca", "/nonexistent/ca.pem", "tables"][..],
            "error: --ca sets up the store named by --native, --zookeeper, --thrift or --thrift1",
        ),
        // Kerberos applies to a Thrift gateway too (its SASL transport):
        // refused without the `kerberos` feature, a bad level with it.
        (
            &[
                "--thrift",
                "127.0.0.1:1",
                "--principal",
                "app@R",
                "--keytab",
                "/k",
                "--protection",
                "secret",
                "tables",
            ][..],
            "error: --principal",
        ),
        (
            &["--native", "127.0.0.1:1", "--protection", "privacy", "tables"][..],
            "error: --protection sets up a Kerberos login: give it with --principal and --keytab, or --kerberos",
        ),
        // Without the `kerberos` feature, Kerberos is refused; with it, a
        // level that is none of the three is: either way the error names
        // the flag.
        (
            &[
                "--native",
                "127.0.0.1:1",
                "--kerberos",
                "--protection",
                "secret",
                "tables",
            ][..],
            "error: --kerberos",
        ),
    ] {
        let (code, stdout, stderr) = status_of(binary().args(args));
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert_eq!(stdout, "", "{args:?}");
    }
    // A command line that does not parse: status 2, with the usage.
    let out = binary().arg("frob").assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("Usage: hmap-cli"));
    // `--help` documents the store flags, the variables and the exit status.
    let out = binary().arg("--help").assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for text in [
        "--native <ADDRS>",
        "--zookeeper <QUORUM>",
        "--thrift1 <ADDR>",
        "--framed",
        "--compact",
        "--https",
        "--ca <PEM>",
        "HMAP_THRIFT1_COMPACT",
        "Exit status: 0 done, nothing wrong found; 1 problems found (verify, repair);\n2 the command could not run",
    ] {
        assert!(help.contains(text), "{text:?} not in {help}");
    }
}

/// Without a flag, the store comes from the one variable set; several set
/// is an error that names them; a flag overrides them.
/// The library's hints reach the operator as flags: a server that closes
/// the connection without a byte (a ZooKeeper's port given for a master's,
/// say) is told to be passed with `--zookeeper`, not
/// `NativeConfig::zookeeper`.
#[test]
fn the_binarys_hints_name_flags() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let _ = std::io::Read::read(&mut stream, &mut [0u8; 64]);
        }
    });
    let (code, _, stderr) = status_of(binary().args(["--native", &address, "--timeout", "3", "tables"]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`--zookeeper`") && stderr.contains("`--thrift`"),
        "{stderr}"
    );
    for api in ["NativeConfig::", "ThriftStore", "hmap's feature"] {
        assert!(!stderr.contains(api), "`{api}` in: {stderr}");
    }
}

#[test]
fn the_binary_takes_exactly_one_store_from_the_environment() {
    let (code, _, stderr) = status_of(
        binary()
            .env("HMAP_NATIVE", "127.0.0.1:1")
            .args(["--timeout", "2", "tables"]),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: HMAP_NATIVE: cannot connect to HBase at 127.0.0.1:1 (NativeStore): "),
        "{stderr}"
    );
    let (code, _, stderr) =
        status_of(
            binary()
                .env("HMAP_THRIFT1_COMPACT", "127.0.0.1:1")
                .args(["--timeout", "2", "tables"]),
        );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: HMAP_THRIFT1_COMPACT: cannot connect to the Thrift1 gateway at 127.0.0.1:1 (framed, compact): "
        ),
        "{stderr}"
    );
    let (code, _, stderr) = status_of(
        binary()
            .env("HMAP_THRIFT", "127.0.0.1:1")
            .env("HMAP_THRIFT1", "127.0.0.1:2")
            .args(["tables"]),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "error: the environment's variables name several stores (HMAP_THRIFT, HMAP_THRIFT1): pass one of \
         --native, --zookeeper, --thrift, --thrift1, --bigtable (a flag overrides the environment), or leave one \
         variable set\n"
    );
    let (code, _, stderr) = status_of(
        binary()
            .env("HMAP_THRIFT", "127.0.0.1:1")
            .env("HMAP_THRIFT1", "127.0.0.1:2")
            .args(["--native", "127.0.0.1:3", "--timeout", "2", "tables"]),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: --native: cannot connect to HBase at 127.0.0.1:3 (NativeStore): "),
        "{stderr}"
    );
}

/// Checks that `tables`' output lists every registered table as fitting.
fn every_table_fits(tables: &str) {
    for table in ["wb_user", "wb_post", "wb_inbox", "shop", "item"] {
        assert!(
            tables.lines().any(|l| l.starts_with(table) && l.ends_with("  ok")),
            "{tables}"
        );
    }
}

/// The tables under `prefix` on the HBase of `HMAP_NATIVE`, deleted: a
/// clean start, and a clean end.
fn drop_tables(prefix: &str) -> Arc<dyn Store> {
    let native = hmap_suite::required_env("HMAP_NATIVE");
    let store = hmap::blocking::try_block_on(hmap_suite::native_store_for(&native, prefix))
        .expect("outside a runtime")
        .unwrap_or_else(|e| panic!("{e}"));
    for table in hmap::blocking::block_on(store.list_tables()).unwrap() {
        hmap::blocking::block_on(store.delete_table(&table)).unwrap();
    }
    store
}

#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port and HMAP_NATIVE"]
fn the_binary_on_hbase() {
    let address = hmap_suite::required_env("HMAP_THRIFT");
    let prefix = hmap_suite::test_table_prefix("hmap_test_cli_binary__");
    let on_hbase = |args: &[&str]| {
        let mut cmd = binary();
        cmd.args(["--thrift", &address, "--table-prefix", &prefix]).args(args);
        cmd
    };
    let store = drop_tables(&prefix);
    on_hbase(&["migrate"]).assert().success();
    let out = on_hbase(&["tables"]).assert().success();
    every_table_fits(&String::from_utf8_lossy(&out.get_output().stdout));
    let users: Table<weibo::User, _> = Table::new(Arc::clone(&store));
    users.put(&user("u7", "Dee")).unwrap();
    let out = on_hbase(&["get", "wb_user", "u7", "--format", "json"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "{\"uid\":\"u7\",\"name\":\"Dee\",\"posts\":0,\"follows\":{},\"fans\":{}}\n"
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
    // Problems found: status 1, for a verify and for the repair that fixes
    // them; then 0.
    let shops: Table<shop_item::Shop, _> = Table::new(Arc::clone(&store));
    half_link(&store, &shops, "s1", "i1");
    on_hbase(&["verify", "shop_items"]).assert().code(1);
    on_hbase(&["repair", "shop_items"]).assert().code(1);
    on_hbase(&["verify", "shop_items"]).assert().code(0);
    drop_tables(&prefix);
}

/// The binary through NativeStore (masters and ZooKeeper) and Thrift1:
/// rows read, relations verified (status 0 and 1) and repaired; then each
/// Thrift wire mode reads a row.
#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_NATIVE, HMAP_ZOOKEEPER, HMAP_THRIFT1, \
            HMAP_THRIFT_FRAMED, HMAP_THRIFT_COMPACT and HMAP_THRIFT1_COMPACT"]
fn the_binary_on_native_and_thrift1() {
    let prefix = hmap_suite::test_table_prefix("hmap_test_cli_backends__");
    let store = drop_tables(&prefix);
    let users: Table<weibo::User, _> = Table::new(Arc::clone(&store));
    let shops: Table<shop_item::Shop, _> = Table::new(Arc::clone(&store));
    let items: Table<shop_item::Item, _> = Table::new(Arc::clone(&store));
    users.create().unwrap();
    shops.create().unwrap();
    items.create().unwrap();
    users.put_many(&[user("u1", "Ann"), user("u2", "Bob")]).unwrap();
    // As `src/apps.rs` registers it: each side's entry labelled with the
    // other's name.
    let follows =
        hmap::blocking::relation::ManyToMany::<weibo::User, weibo::User, _>::new(Arc::clone(&store), "follow", "fans")
            .with_labels(|u: &weibo::User| u.name.clone(), |u: &weibo::User| u.name.clone());
    follows.link("u1", "u2").unwrap();

    for flag in ["--native", "--zookeeper", "--thrift1"] {
        let variable = match flag {
            "--native" => "HMAP_NATIVE",
            "--zookeeper" => "HMAP_ZOOKEEPER",
            _ => "HMAP_THRIFT1",
        };
        let address = hmap_suite::required_env(variable);
        let on = |args: &[&str]| {
            let mut cmd = binary();
            cmd.args([flag, &address, "--table-prefix", &prefix]).args(args);
            cmd
        };
        let (code, stdout, stderr) = status_of(&mut on(&["get", "wb_user", "u2", "--format", "json"]));
        assert_eq!(code, Some(0), "{flag}: {stderr}");
        assert_eq!(
            stdout, "{\"uid\":\"u2\",\"name\":\"Bob\",\"posts\":0,\"follows\":{},\"fans\":{\"u1\":\"Ann\"}}\n",
            "{flag}"
        );
        let (code, stdout, stderr) = status_of(&mut on(&["scan", "wb_user"]));
        assert_eq!(code, Some(0), "{flag}: {stderr}");
        assert_eq!(
            stdout,
            "uid  name  posts  follows       fans\n\
             u1   Ann   0      {\"u2\":\"Bob\"}  {}\n\
             u2   Bob   0      {}            {\"u1\":\"Ann\"}\n",
            "{flag}"
        );
        let (code, stdout, stderr) = status_of(&mut on(&["verify", "follows"]));
        assert_eq!(
            (code, stdout.as_str()),
            (Some(0), "follows: verified: consistent\n"),
            "{flag}: {stderr}"
        );
        half_link(&store, &shops, "s1", "i1");
        let (code, stdout, stderr) = status_of(&mut on(&["verify", "shop_items", "--format", "json"]));
        assert_eq!(code, Some(1), "{flag}: {stderr}");
        assert!(stdout.contains("\"found\":1,"), "{flag}: {stdout}");
        let (code, _, stderr) = status_of(&mut on(&["repair", "shop_items"]));
        assert_eq!(code, Some(1), "{flag}: {stderr}");
        let (code, stdout, stderr) = status_of(&mut on(&["verify", "shop_items"]));
        assert_eq!(
            (code, stdout.as_str()),
            (Some(0), "shop_items: verified: consistent\n"),
            "{flag}: {stderr}"
        );
    }

    // Each Thrift2 and Thrift1 wire mode, by its flags and by its variable
    // alone.
    let mut modes = vec![
        ("HMAP_THRIFT_FRAMED", vec!["--thrift", "--framed"]),
        ("HMAP_THRIFT_COMPACT", vec!["--thrift", "--compact"]),
        ("HMAP_THRIFT1_COMPACT", vec!["--thrift1", "--compact", "--framed"]),
    ];
    if cfg!(feature = "tls") {
        modes.push(("HMAP_THRIFT_HTTPS", vec!["--thrift", "--https"]));
    }
    for (variable, flags) in modes {
        let address = hmap_suite::required_env(variable);
        let mut by_flags = binary();
        by_flags.args([flags[0], &address]).args(&flags[1..]);
        if variable == "HMAP_THRIFT_HTTPS" {
            by_flags.args(["--ca", &hmap_suite::required_env("HMAP_THRIFT_CA")]);
        }
        let mut by_variable = binary();
        by_variable.env(variable, &address);
        if variable == "HMAP_THRIFT_HTTPS" {
            by_variable.env("HMAP_THRIFT_CA", hmap_suite::required_env("HMAP_THRIFT_CA"));
        }
        for cmd in [&mut by_flags, &mut by_variable] {
            let (code, stdout, stderr) = status_of(cmd.args(["--table-prefix", &prefix, "get", "wb_user", "u1"]));
            assert_eq!(code, Some(0), "{variable}: {stderr}");
            assert!(stdout.contains("u1   Ann"), "{variable}: {stdout}");
        }
    }
    drop_tables(&prefix);
}

/// The binary on an HBase whose RPC demands TLS (and, after `start --mtls`,
/// a client certificate): by flags (`--native`, `--ca`, `--tls-cert`,
/// `--tls-key`) and by the environment (`HMAP_NATIVE_TLS_*`); a plain
/// client is refused with status 2.
#[cfg(feature = "tls")]
#[test]
#[ignore = "needs a real HBase over TLS: scripts/hbase/hbase start --tls (or --mtls), then HMAP_NATIVE and \
            HMAP_NATIVE_TLS_CA (and HMAP_NATIVE_TLS_CERT, HMAP_NATIVE_TLS_KEY)"]
fn the_binary_over_tls() {
    let address = hmap_suite::required_env("HMAP_NATIVE");
    let ca = hmap_suite::required_env("HMAP_NATIVE_TLS_CA");
    let client = std::env::var("HMAP_NATIVE_TLS_CERT")
        .ok()
        .zip(std::env::var("HMAP_NATIVE_TLS_KEY").ok());
    let mut by_flags = binary();
    by_flags.args(["--native", &address, "--ca", &ca, "--timeout", "20"]);
    if let Some((cert, key)) = &client {
        by_flags.args(["--tls-cert", cert, "--tls-key", key]);
    }
    let (code, stdout, stderr) = status_of(by_flags.arg("tables"));
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let mut by_env = binary();
    by_env
        .env("HMAP_NATIVE", &address)
        .env("HMAP_NATIVE_TLS_CA", &ca)
        .args(["--timeout", "20"]);
    if let Some((cert, key)) = &client {
        by_env.env("HMAP_NATIVE_TLS_CERT", cert).env("HMAP_NATIVE_TLS_KEY", key);
    }
    let (code, stdout, stderr) = status_of(by_env.arg("tables"));
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (code, _, stderr) = status_of(binary().args(["--native", &address, "--timeout", "5", "tables"]));
    assert_eq!(code, Some(2), "a plain client: {stderr}");
}

/// The binary on a Kerberos HBase: logged in from a keytab by flags
/// (`--principal`, `--keytab`, `--server-principal`, `--protection`) and by
/// the environment (`HMAP_PRINCIPAL` ...); without a login, refused with
/// status 2.
#[cfg(feature = "kerberos")]
#[test]
#[ignore = "needs a real HBase with Kerberos: scripts/hbase/hbase start --kerberos, then HMAP_NATIVE, \
            HMAP_PRINCIPAL, HMAP_KEYTAB, HMAP_SERVER_PRINCIPAL, HMAP_KRB_PROTECTION and KRB5_CONFIG"]
fn the_binary_with_kerberos() {
    let address = hmap_suite::required_env("HMAP_NATIVE");
    let login = kerberos_login();
    lists_tables_with_login("--native", &address, &login);
    let mut by_env = binary();
    by_env.env("HMAP_NATIVE", &address).args(["--timeout", "20", "tables"]);
    for (variable, value) in [
        "HMAP_PRINCIPAL",
        "HMAP_KEYTAB",
        "HMAP_SERVER_PRINCIPAL",
        "HMAP_KRB_PROTECTION",
    ]
    .into_iter()
    .zip(&login)
    {
        by_env.env(variable, value);
    }
    let (code, stdout, stderr) = status_of(&mut by_env);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (code, _, stderr) = status_of(binary().args(["--native", &address, "--timeout", "10", "tables"]));
    assert_eq!(code, Some(2), "no login: {stderr}");
    assert!(stderr.contains("Kerberos"), "{stderr}");
}

/// The client's Kerberos login from the environment: principal, keytab,
/// servers' principal, protection level.
#[cfg(feature = "kerberos")]
fn kerberos_login() -> [String; 4] {
    [
        "HMAP_PRINCIPAL",
        "HMAP_KEYTAB",
        "HMAP_SERVER_PRINCIPAL",
        "HMAP_KRB_PROTECTION",
    ]
    .map(hmap_suite::required_env)
}

/// `hmap-cli <store_flag> <address> --principal ... tables` succeeds.
#[cfg(feature = "kerberos")]
fn lists_tables_with_login(store_flag: &str, address: &str, login: &[String; 4]) {
    let [principal, keytab, server, protection] = login;
    let (code, stdout, stderr) = status_of(binary().args([
        store_flag,
        address,
        "--principal",
        principal,
        "--keytab",
        keytab,
        "--server-principal",
        server,
        "--protection",
        protection,
        "--timeout",
        "20",
        "tables",
    ]));
    assert_eq!(code, Some(0), "{store_flag} {address}: {stdout}\n{stderr}");
}

/// The binary through the Thrift gateways of a Kerberos cluster (SASL,
/// `hbase.thrift.security.qop`), with the same login flags as NativeStore;
/// without a login, the Thrift2 gateway is found to demand SASL within
/// seconds, an error that names the login flags, status 2.
#[cfg(feature = "kerberos")]
#[test]
#[ignore = "needs a real HBase with Kerberos: scripts/hbase/hbase start --kerberos, then HMAP_THRIFT, HMAP_THRIFT1, \
            HMAP_PRINCIPAL, HMAP_KEYTAB, HMAP_SERVER_PRINCIPAL, HMAP_KRB_PROTECTION and KRB5_CONFIG"]
fn the_binary_through_kerberos_gateways() {
    let login = kerberos_login();
    for (flag, variable) in [("--thrift", "HMAP_THRIFT"), ("--thrift1", "HMAP_THRIFT1")] {
        lists_tables_with_login(flag, &hmap_suite::required_env(variable), &login);
    }
    let address = hmap_suite::required_env("HMAP_THRIFT");
    let (code, _, stderr) = status_of(binary().args(["--thrift", &address, "--timeout", "30", "tables"]));
    assert_eq!(code, Some(2), "no login: {stderr}");
    assert!(
        stderr.contains("demands SASL") && stderr.contains("`--principal` and `--keytab`"),
        "{stderr}"
    );
}

/// The binary through a ZooKeeper that demands SASL (`--zk-sasl`):
/// `--zookeeper-principal` authenticates there, and without it the refusal
/// names that flag's setting, status 2.
#[cfg(feature = "kerberos")]
#[test]
#[ignore = "needs a real HBase with Kerberos and a SASL ZooKeeper: scripts/hbase/hbase start --kerberos --zk-sasl, \
            then HMAP_ZOOKEEPER, HMAP_ZOOKEEPER_PRINCIPAL, HMAP_PRINCIPAL, HMAP_KEYTAB, HMAP_SERVER_PRINCIPAL, \
            HMAP_KRB_PROTECTION and KRB5_CONFIG"]
fn the_binary_through_a_sasl_zookeeper() {
    let quorum = hmap_suite::required_env("HMAP_ZOOKEEPER");
    let zookeeper = hmap_suite::required_env("HMAP_ZOOKEEPER_PRINCIPAL");
    let [principal, keytab, server, protection] = kerberos_login();
    let login = [
        "--principal",
        principal.as_str(),
        "--keytab",
        keytab.as_str(),
        "--server-principal",
        server.as_str(),
        "--protection",
        protection.as_str(),
        "--timeout",
        "20",
    ];
    let (code, stdout, stderr) = status_of(
        binary()
            .args(["--zookeeper", &quorum, "--zookeeper-principal", &zookeeper])
            .args(login)
            .arg("tables"),
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (code, _, stderr) = status_of(binary().args(["--zookeeper", &quorum]).args(login).arg("tables"));
    assert_eq!(code, Some(2), "no SASL: {stderr}");
    assert!(stderr.contains("`--zookeeper-principal`"), "{stderr}");
}

/// The binary on the Bigtable emulator, by `--bigtable` and by
/// `HMAP_BIGTABLE`: the tables created and listed as fitting, a row read,
/// a relation verified (status 0, then 1 with a link cut in half),
/// repaired, and verified again.
#[cfg(feature = "bigtable")]
#[test]
#[ignore = "needs the Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
fn the_binary_on_bigtable() {
    let address = hmap_suite::required_env("HMAP_BIGTABLE");
    let prefix = hmap_suite::test_table_prefix("hmap_test_cli_bigtable__");
    let mut backend = hmap::store::Backend::bigtable(&address);
    backend.set_table_prefix(&prefix);
    let store = hmap::blocking::block_on(backend.connect()).expect("the emulator answers");
    for table in hmap::blocking::block_on(store.list_tables()).unwrap() {
        hmap::blocking::block_on(store.delete_table(&table)).unwrap();
    }
    let by_flag = |args: &[&str]| {
        let mut cmd = binary();
        cmd.args(["--bigtable", &address, "--table-prefix", &prefix]).args(args);
        status_of(&mut cmd)
    };
    let (code, _, stderr) = by_flag(&["migrate"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, tables, stderr) = by_flag(&["tables"]);
    assert_eq!(code, Some(0), "{stderr}");
    every_table_fits(&tables);
    let users: Table<weibo::User, _> = Table::new(Arc::clone(&store));
    users.put(&user("u7", "Dee")).unwrap();
    let mut by_env = binary();
    by_env
        .env("HMAP_BIGTABLE", &address)
        .args(["--table-prefix", &prefix, "get", "wb_user", "u7", "--format", "json"]);
    let (code, stdout, stderr) = status_of(&mut by_env);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "{\"uid\":\"u7\",\"name\":\"Dee\",\"posts\":0,\"follows\":{},\"fans\":{}}\n"
    );
    let shops: Table<shop_item::Shop, _> = Table::new(Arc::clone(&store));
    assert_eq!(by_flag(&["verify", "shop_items"]).0, Some(0));
    half_link(&store, &shops, "s1", "i1");
    assert_eq!(by_flag(&["verify", "shop_items"]).0, Some(1));
    assert_eq!(by_flag(&["repair", "shop_items"]).0, Some(1));
    let (code, stdout, stderr) = by_flag(&["verify", "shop_items"]);
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "shop_items: verified: consistent\n"),
        "{stderr}"
    );
    for table in hmap::blocking::block_on(store.list_tables()).unwrap() {
        hmap::blocking::block_on(store.delete_table(&table)).unwrap();
    }
}
