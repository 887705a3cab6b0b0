//! The seeds' relation designs through the helpers of `hmap::relation`, on
//! `MemoryStore` (or a real HBase when `HMAP_THRIFT` is set): person/role,
//! shop/item, the org chart, weibo follows and inboxes, and a secondary index.

use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use hmap::clock::{RowSet, next_timestamp};
use hmap::relation::{DeleteMode, Delivery, Emptied, FanOut, FanOutConfig, Index, ManyToMany, Tree};
use hmap::store::{FaultPlan, FaultyStore, Get, RowMutation, Store};
use hmap::{Error, HTable, Table, Versioned};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "person", family(name = "cf1"), family(name = "cf2"))]
struct Person {
    #[hmap(key)]
    pid: String,
    #[hmap(family = "cf1")]
    name: String,
    #[hmap(family = "cf1")]
    age: u32,
    /// cf2:<rid>=role name
    #[hmap(family = "cf2", dynamic, relation)]
    roles: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "role", family(name = "cf1"), family(name = "cf2"))]
struct Role {
    #[hmap(key)]
    rid: String,
    #[hmap(family = "cf1")]
    name: String,
    /// cf2:<pid>=person name
    #[hmap(family = "cf2", dynamic, relation)]
    persons: BTreeMap<String, String>,
}

fn person(pid: &str, name: &str) -> Person {
    Person {
        pid: pid.into(),
        name: name.into(),
        age: 18,
        roles: BTreeMap::new(),
    }
}

fn role(rid: &str, name: &str) -> Role {
    Role {
        rid: rid.into(),
        name: name.into(),
        persons: BTreeMap::new(),
    }
}

type PersonRole<S> = ManyToMany<Person, Role, S>;

/// The person table with its roles as a plain dynamic field, which a put
/// replaces.
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "person", family(name = "cf1"), family(name = "cf2"))]
struct PlainPerson {
    #[hmap(key)]
    pid: String,
    #[hmap(family = "cf1")]
    name: String,
    #[hmap(family = "cf2", dynamic)]
    roles: BTreeMap<String, String>,
}

async fn person_role(store: &Arc<dyn Store>) -> PersonRole<Arc<dyn Store>> {
    let rel = ManyToMany::new(Arc::clone(store), "cf2", "cf2")
        .with_labels(|p: &Person| p.name.clone(), |r: &Role| r.name.clone());
    rel.left().create().await.unwrap();
    rel.right().create().await.unwrap();
    rel
}

fn names<T>(items: &[(String, T)]) -> Vec<&str> {
    items.iter().map(|(k, _)| k.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn person_and_role() {
    let store = hmap_suite::test_store("person_and_role").await;
    let rel = person_role(&store).await;
    rel.left()
        .put_many(&[person("001", "Xiaohei"), person("002", "Xiaohuang")])
        .await
        .unwrap();
    rel.right()
        .put_many(&[role("100", "monitor"), role("200", "soldier")])
        .await
        .unwrap();

    rel.link("001", "100").await.unwrap();
    rel.link("001", "200").await.unwrap();
    rel.link("002", "200").await.unwrap();
    // Linking twice is harmless.
    rel.link("002", "200").await.unwrap();

    // The seed's layout: cf2:100=monitor on person 001, cf2:001=Xiaohei on role 100.
    let p1 = rel.left().get("001").await.unwrap().unwrap();
    assert_eq!(
        p1.roles,
        BTreeMap::from([("100".into(), "monitor".into()), ("200".into(), "soldier".into())])
    );
    let r200 = rel.right().get("200").await.unwrap().unwrap();
    assert_eq!(
        r200.persons,
        BTreeMap::from([("001".into(), "Xiaohei".into()), ("002".into(), "Xiaohuang".into())])
    );
    assert_eq!(names(&rel.lefts_of("200").await.unwrap()), ["001", "002"]);
    let loaded: Vec<String> = rel
        .load_rights("001")
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(loaded, ["monitor", "soldier"]);

    // Unlinking, twice, and a link that never was.
    rel.unlink("001", "200").await.unwrap();
    rel.unlink("001", "200").await.unwrap();
    rel.unlink("002", "100").await.unwrap();
    assert_eq!(names(&rel.rights_of("001").await.unwrap()), ["100"]);
    assert_eq!(names(&rel.lefts_of("200").await.unwrap()), ["002"]);

    // A rename reaches every copy.
    let mut r200 = rel.right().get("200").await.unwrap().unwrap();
    r200.name = "private".into();
    rel.right().update(&r200, [Role::NAME]).await.unwrap();
    rel.relabel_right("200").await.unwrap();
    assert_eq!(
        rel.rights_of("002").await.unwrap(),
        [("200".to_string(), "private".to_string())]
    );

    // Deleting an entity removes it from every list.
    rel.delete_left("002").await.unwrap();
    assert_eq!(rel.left().get("002").await.unwrap(), None);
    assert!(rel.lefts_of("200").await.unwrap().is_empty());
    rel.delete_right("100").await.unwrap();
    assert!(rel.rights_of("001").await.unwrap().is_empty());
    assert!(
        rel.verify().await.unwrap().is_consistent(),
        "{}",
        rel.verify().await.unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_needs_both_entities() {
    let store = hmap_suite::test_store("link_needs_both_entities").await;
    let rel = person_role(&store).await;
    rel.left().put(&person("001", "Xiaohei")).await.unwrap();
    let err = rel.link("001", "999").await.unwrap_err();
    assert_eq!(err.to_string(), "table `role`: no entity with key 999");
    assert!(rel.rights_of("001").await.unwrap().is_empty());
}

/// The stored rowkey of a single-part string key.
fn row(key: &str) -> Bytes {
    Table::<Person, Arc<dyn Store>>::new(Arc::new(hmap::store::MemoryStore::new()))
        .row_key(key)
        .unwrap()
}

/// Whether a raw row has any cell at all.
async fn raw_row_exists(store: &Arc<dyn Store>, table: &str, key: &str) -> bool {
    store.get(table, &Get::new(row(key))).await.unwrap().is_some()
}

fn assert_no_such_entity(err: Error, want_table: &str, want_row: &str) {
    match err {
        Error::NoSuchEntity { table, key } => assert_eq!((table, key.as_str()), (want_table, want_row)),
        other => panic!("expected NoSuchEntity for {want_table} {want_row}, got {other}"),
    }
}

/// Issue 11: every link form, with or without labels, refuses an entity
/// that does not exist on either side, and writes nothing: no row holding
/// only the relation family is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_link_form_refuses_a_missing_entity() {
    let store = hmap_suite::test_store("every_link_form_refuses_a_missing_entity").await;
    let labelled = person_role(&store).await;
    let plain: PersonRole<_> = ManyToMany::new(Arc::clone(&store), "cf2", "cf2");
    labelled.left().put(&person("001", "Xiaohei")).await.unwrap();
    labelled.right().put(&role("100", "monitor")).await.unwrap();
    for rel in [&labelled, &plain] {
        assert_no_such_entity(rel.link("001", "999").await.unwrap_err(), "role", "999");
        assert_no_such_entity(rel.link("998", "100").await.unwrap_err(), "person", "998");
        assert_no_such_entity(rel.link_with("001", "999", "x").await.unwrap_err(), "role", "999");
        assert_no_such_entity(rel.link_with("998", "100", "x").await.unwrap_err(), "person", "998");
        // One missing entity among many pairs: nothing is written.
        let pairs = [("001".to_string(), "100".to_string()), ("001".into(), "999".into())];
        assert_no_such_entity(rel.link_many(&pairs).await.unwrap_err(), "role", "999");
    }
    assert!(!raw_row_exists(&store, "role", "999").await);
    assert!(!raw_row_exists(&store, "person", "998").await);
    assert!(labelled.rights_of("001").await.unwrap().is_empty());
    assert!(labelled.lefts_of("100").await.unwrap().is_empty());
    // A row holding only a relation's list is no entity either.
    store
        .mutate("role", &[RowMutation::new(row("997")).put("cf2", "005", "someone")])
        .await
        .unwrap();
    assert_no_such_entity(plain.link("001", "997").await.unwrap_err(), "role", "997");
}

/// `link_many` writes every pair, with the labels, one call per side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_many_links_every_pair() {
    let store = hmap_suite::test_store("link_many_links_every_pair").await;
    let rel = person_role(&store).await;
    rel.left()
        .put_many(&[person("001", "Xiaohei"), person("002", "Xiaohuang")])
        .await
        .unwrap();
    rel.right()
        .put_many(&[role("100", "monitor"), role("200", "soldier")])
        .await
        .unwrap();
    let pairs: Vec<(String, String)> = [("001", "100"), ("001", "200"), ("002", "200")]
        .iter()
        .map(|(l, r)| (l.to_string(), r.to_string()))
        .collect();
    rel.link_many(&pairs).await.unwrap();
    assert_eq!(
        rel.rights_of("001").await.unwrap(),
        [("100".into(), "monitor".into()), ("200".into(), "soldier".into())]
    );
    assert_eq!(
        rel.lefts_of("200").await.unwrap(),
        [("001".into(), "Xiaohei".into()), ("002".into(), "Xiaohuang".into())]
    );
    assert!(
        rel.verify().await.unwrap().is_consistent(),
        "{}",
        rel.verify().await.unwrap()
    );
}

/// Issue 17: a put of a freshly built entity (its lists empty) keeps the
/// links a relation owns; so do put_many and save; an update of the list
/// is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_of_an_entity_keeps_its_links() {
    let store = hmap_suite::test_store("a_put_of_an_entity_keeps_its_links").await;
    let rel = person_role(&store).await;
    rel.left().put(&person("001", "Xiaohei")).await.unwrap();
    rel.right().put(&role("100", "monitor")).await.unwrap();
    rel.link("001", "100").await.unwrap();

    rel.left().put(&person("001", "Xiaohei the second")).await.unwrap();
    rel.left()
        .put_many(&[person("001", "Xiaohei the third")])
        .await
        .unwrap();
    rel.right().put(&role("100", "captain")).await.unwrap();
    let p = rel.left().get("001").await.unwrap().unwrap();
    assert_eq!(p.name, "Xiaohei the third");
    assert_eq!(p.roles, BTreeMap::from([("100".into(), "monitor".into())]));
    assert_eq!(names(&rel.lefts_of("100").await.unwrap()), ["001"]);
    let err = rel.left().update(&p, [Person::ROLES]).await.unwrap_err();
    assert!(matches!(err, Error::Field { table: "person", .. }), "{err}");
    // The labels are stale (renames), not lost.
    let report = rel.verify().await.unwrap();
    assert!(
        report.missing.is_empty() && report.dangling.is_empty() && report.held.is_empty(),
        "{report:?}"
    );
}

/// A relation over a family that is a plain dynamic field (which a put
/// replaces) is a typed error at its first link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relation_over_a_plain_dynamic_family_is_refused() {
    let store = hmap_suite::test_store("a_relation_over_a_plain_dynamic_family_is_refused").await;
    let rel: ManyToMany<PlainPerson, Role, _> = ManyToMany::new(Arc::clone(&store), "cf2", "cf2");
    rel.left().create().await.unwrap();
    rel.right().create().await.unwrap();
    let err = rel.link("001", "100").await.unwrap_err();
    assert!(
        matches!(&err, Error::Field { table: "person", field, .. } if field == "roles"),
        "{err}"
    );
}

/// A check in batches finds what a whole one finds; a repair cut off after
/// a few batches (its future dropped) and resumed from its last checkpoint
/// leaves both sides agreeing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batched_repair_resumes_from_its_checkpoint() {
    use hmap::relation::{CheckOptions, Checkpoint};
    use std::sync::Mutex;
    let store = hmap_suite::test_store("a_batched_repair_resumes_from_its_checkpoint").await;
    let rel = person_role(&store).await;
    for p in 0..12 {
        rel.left()
            .put(&person(&format!("{p:03}"), &format!("p{p}")))
            .await
            .unwrap();
    }
    for r in 0..6 {
        rel.right()
            .put(&role(&format!("{}", 100 + r), &format!("r{r}")))
            .await
            .unwrap();
    }
    for p in 0..12 {
        rel.link(format!("{p:03}"), format!("{}", 100 + p % 6)).await.unwrap();
    }
    // Damage: half the right side's entries gone, and two it should not have.
    for r in 0..3 {
        store
            .mutate(
                "role",
                &[RowMutation::new(row(&format!("{}", 100 + r))).delete_family("cf2")],
            )
            .await
            .unwrap();
    }
    store
        .mutate(
            "role",
            &[
                RowMutation::new(row("104")).put("cf2", "000", "p0"),
                RowMutation::new(row("105")).put("cf2", "001", "p1"),
            ],
        )
        .await
        .unwrap();
    let whole = rel.verify().await.unwrap();
    assert_eq!((whole.missing.len(), whole.dangling.len()), (6, 2), "{whole:?}");
    let batched = rel
        .check(Emptied::Hold, false, &CheckOptions::new().batch(1))
        .await
        .unwrap();
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(sorted(batched.missing.clone()), sorted(whole.missing.clone()));
    assert_eq!(sorted(batched.dangling.clone()), sorted(whole.dangling.clone()));

    // A repair in batches of 2, cut off after its third batch.
    let checkpoints: Arc<Mutex<Vec<Checkpoint>>> = Arc::default();
    let stop = Arc::new(tokio::sync::Notify::new());
    let options = {
        let checkpoints = Arc::clone(&checkpoints);
        let stop = Arc::clone(&stop);
        CheckOptions::new().batch(2).progress(move |p| {
            let mut seen = checkpoints.lock().unwrap();
            seen.push(p.checkpoint.clone());
            if seen.len() == 3 {
                stop.notify_one();
            }
        })
    };
    tokio::select! {
        done = rel.check(Emptied::Hold, true, &options) => panic!("the repair was to be cut off: {done:?}"),
        () = stop.notified() => {}
    }
    let resume_from = checkpoints.lock().unwrap()[2].clone();
    assert_eq!(resume_from.pass(), 1);
    let text = resume_from.to_string();
    assert_eq!(text.parse::<Checkpoint>().unwrap(), resume_from);
    // Three batches of two left rows were repaired: not yet consistent.
    assert!(!rel.verify().await.unwrap().is_consistent());
    rel.check(Emptied::Hold, true, &CheckOptions::new().batch(2).from(resume_from))
        .await
        .unwrap();
    let after = rel.verify().await.unwrap();
    assert!(after.is_consistent(), "{after}");
}

/// Issue 17: a wiped authoritative list (as an old plain put left it) is
/// not copied to the other side by `repair`: it is held, and restored or
/// dropped only when asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repair_holds_an_emptied_authoritative_list() {
    let store = hmap_suite::test_store("repair_holds_an_emptied_authoritative_list").await;
    let rel = person_role(&store).await;
    rel.left().put(&person("001", "Xiaohei")).await.unwrap();
    rel.right()
        .put_many(&[role("100", "monitor"), role("200", "soldier")])
        .await
        .unwrap();
    rel.link("001", "100").await.unwrap();
    rel.link("001", "200").await.unwrap();
    let wipe = async || {
        store
            .mutate("person", &[RowMutation::new(row("001")).delete_family("cf2")])
            .await
            .unwrap()
    };
    wipe().await;
    let report = rel.verify().await.unwrap();
    assert_eq!(report.held.len(), 2, "{report:?}");
    assert!(report.dangling.is_empty(), "{report:?}");
    let report = rel.repair().await.unwrap();
    assert_eq!(report.held.len(), 2, "{report:?}");
    assert!(report.held[0].contains("Emptied::Restore"), "{}", report.held[0]);
    assert_eq!(names(&rel.lefts_of("100").await.unwrap()), ["001"]);

    let report = rel.repair_with(Emptied::Restore).await.unwrap();
    assert_eq!(report.missing.len(), 2, "{report:?}");
    assert_eq!(
        rel.rights_of("001").await.unwrap(),
        [("100".into(), "monitor".into()), ("200".into(), "soldier".into())]
    );
    assert!(
        rel.verify().await.unwrap().is_consistent(),
        "{}",
        rel.verify().await.unwrap()
    );

    wipe().await;
    let report = rel.repair_with(Emptied::Drop).await.unwrap();
    assert_eq!(report.dangling.len(), 2, "{report:?}");
    assert!(rel.lefts_of("100").await.unwrap().is_empty());
    assert!(
        rel.verify().await.unwrap().is_consistent(),
        "{}",
        rel.verify().await.unwrap()
    );

    // One entry left on the right is what an unlink cut off after its
    // first write leaves: repaired as dangling, not held.
    rel.link("001", "100").await.unwrap();
    store
        .mutate("person", &[RowMutation::new(row("001")).delete_column("cf2", "100")])
        .await
        .unwrap();
    let report = rel.repair().await.unwrap();
    assert_eq!((report.dangling.len(), report.held.len()), (1, 0), "{report:?}");
    assert!(rel.lefts_of("100").await.unwrap().is_empty());
    assert!(
        rel.verify().await.unwrap().is_consistent(),
        "{}",
        rel.verify().await.unwrap()
    );
}

/// Issue 17: a plain delete of a linked entity is refused with an error
/// naming the relation's delete; once unlinked, it deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_delete_of_a_linked_entity_is_refused() {
    let store = hmap_suite::test_store("a_plain_delete_of_a_linked_entity_is_refused").await;
    let rel = person_role(&store).await;
    rel.left().put(&person("001", "Xiaohei")).await.unwrap();
    rel.right().put(&role("100", "monitor")).await.unwrap();
    rel.link("001", "100").await.unwrap();
    for err in [
        rel.left().delete("001").await.unwrap_err(),
        rel.left()
            .delete_rows([rel.left().row_key("001").unwrap()])
            .await
            .unwrap_err(),
    ] {
        assert!(
            matches!(&err, Error::Linked { table: "person", row, family: "cf2" } if row.starts_with("001")),
            "{err}"
        );
        assert!(err.to_string().contains("delete_left"), "{err}");
    }
    let err = rel.right().delete("100").await.unwrap_err();
    assert!(matches!(&err, Error::Linked { table: "role", .. }), "{err}");
    // So is a delete through a secondary index of the table.
    let by_name = Index::new(Arc::clone(&store), "person_by_name", |p: &Person| p.name.clone());
    by_name.create().await.unwrap();
    let err = by_name.delete("001").await.unwrap_err();
    assert!(matches!(&err, Error::Linked { table: "person", .. }), "{err}");
    assert!(rel.left().get("001").await.unwrap().is_some());
    assert!(rel.verify().await.unwrap().is_consistent());
    rel.unlink("001", "100").await.unwrap();
    // The table is indexed now: a plain delete would leave the entry.
    let err = rel.left().delete("001").await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Indexed {
                table: "person",
                index: "person_by_name"
            }
        ),
        "{err}"
    );
    by_name.delete("001").await.unwrap();
    assert_eq!(rel.left().get("001").await.unwrap(), None);
}

/// An entity both indexed and linked is deleted in one call that leaves
/// the relation, both partners' lists and every index consistent, on
/// either side; a missing entity deletes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indexed_and_linked_entity_is_deleted_in_one_call() {
    let store = hmap_suite::test_store("an_indexed_and_linked_entity_is_deleted_in_one_call").await;
    let rel = person_role(&store).await;
    let by_name = Index::new(Arc::clone(&store), "person_by_name", |p: &Person| p.name.clone());
    let by_age = Index::new(Arc::clone(&store), "person_by_age", |p: &Person| p.age);
    let role_by_name = Index::new(Arc::clone(&store), "role_by_name", |r: &Role| r.name.clone());
    assert!(by_name.create_if_missing().await.unwrap());
    assert!(by_age.create_if_missing().await.unwrap());
    assert!(role_by_name.create_if_missing().await.unwrap());
    by_name.put(&person("001", "Xiaohei")).await.unwrap();
    by_age.put(&person("001", "Xiaohei")).await.unwrap();
    by_name.put(&person("002", "Xiaobai")).await.unwrap();
    by_age.put(&person("002", "Xiaobai")).await.unwrap();
    role_by_name.put(&role("100", "monitor")).await.unwrap();
    role_by_name.put(&role("200", "cook")).await.unwrap();
    rel.link("001", "100").await.unwrap();
    rel.link("002", "100").await.unwrap();
    rel.link("001", "200").await.unwrap();

    let err = by_name.delete("001").await.unwrap_err();
    assert!(err.to_string().contains("delete_left_indexed"), "{err}");
    rel.delete_left_indexed("001", &[&by_name, &by_age]).await.unwrap();
    rel.delete_right_indexed("200", &[&role_by_name]).await.unwrap();
    // Nothing to delete: no error, nothing written.
    rel.delete_left_indexed("999", &[&by_name, &by_age]).await.unwrap();

    assert_eq!(rel.left().get("001").await.unwrap(), None);
    assert_eq!(rel.right().get("200").await.unwrap(), None);
    assert_eq!(names(&rel.lefts_of("100").await.unwrap()), ["002"]);
    assert!(by_name.lookup("Xiaohei").await.unwrap().is_empty());
    assert_eq!(by_name.lookup("Xiaobai").await.unwrap().len(), 1);
    assert_eq!(by_age.lookup(18u32).await.unwrap().len(), 1);
    assert!(role_by_name.lookup("cook").await.unwrap().is_empty());
    let relation = rel.verify().await.unwrap();
    assert!(relation.is_consistent(), "{relation}");
    for report in [
        by_name.verify().await.unwrap(),
        by_age.verify().await.unwrap(),
        role_by_name.verify().await.unwrap(),
    ] {
        assert!(report.is_consistent(), "{report}");
    }
}

/// Every helper has the tables' lifecycle of `Table`: `create_if_missing`
/// creates once, then checks; `check_schema` refuses a table without the
/// helper's families, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_helper_creates_if_missing_and_checks_its_tables() {
    use hmap::relation::TreeOf;
    use hmap::schema::{FamilySchema, TableSchema};
    let store = hmap_suite::test_store("every_helper_creates_if_missing_and_checks_its_tables").await;
    let rel: PersonRole<_> = ManyToMany::new(Arc::clone(&store), "cf2", "cf2");
    assert!(rel.create_if_missing().await.unwrap());
    assert!(!rel.create_if_missing().await.unwrap());
    rel.check_schema().await.unwrap();
    let by_name = Index::new(Arc::clone(&store), "person_by_name", |p: &Person| p.name.clone());
    assert!(by_name.create_if_missing().await.unwrap());
    assert!(!by_name.create_if_missing().await.unwrap());
    by_name.check_schema().await.unwrap();
    let tree = Tree::new(Arc::clone(&store), "org");
    assert!(tree.create_if_missing().await.unwrap());
    assert!(!tree.create_if_missing().await.unwrap());
    tree.check_schema().await.unwrap();
    let depts = TreeOf::new(Arc::clone(&store), crate::tree_of::dept_label);
    assert!(depts.create_if_missing().await.unwrap());
    assert!(!depts.create_if_missing().await.unwrap());
    depts.check_schema().await.unwrap();

    // Tables made by hand without the helpers' families.
    for table in ["wrong_index", "wrong_tree"] {
        store
            .create_table(&TableSchema::new(table).family(FamilySchema::new("other")))
            .await
            .unwrap();
    }
    let wrong_index = Index::new(Arc::clone(&store), "wrong_index", |p: &Person| p.name.clone());
    let wrong_tree = Tree::new(Arc::clone(&store), "wrong_tree");
    for err in [
        wrong_index.check_schema().await.unwrap_err(),
        wrong_index.create_if_missing().await.unwrap_err(),
        wrong_tree.check_schema().await.unwrap_err(),
        wrong_tree.create_if_missing().await.unwrap_err(),
    ] {
        assert!(
            matches!(
                &err,
                Error::SchemaMismatch {
                    table: "wrong_index" | "wrong_tree",
                    ..
                }
            ),
            "{err}"
        );
    }
}

/// Issue 11: links naming an entity that does not exist (either side) and
/// rows holding only a list are reported by `verify` and removed by
/// `repair`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repair_removes_links_to_missing_entities() {
    let store = hmap_suite::test_store("repair_removes_links_to_missing_entities").await;
    let rel = person_role(&store).await;
    rel.left().put(&person("001", "Xiaohei")).await.unwrap();
    rel.right().put(&role("100", "monitor")).await.unwrap();
    rel.link("001", "100").await.unwrap();
    // What the old `link_with` left: 001 -> 999 where role 999 never
    // existed (its row holds only the list), and 777 -> 100 where person
    // 777 never existed; and a role deleted behind the relation's back.
    rel.right().put(&role("300", "cook")).await.unwrap();
    rel.link("001", "300").await.unwrap();
    store
        .mutate(
            "person",
            &[
                RowMutation::new(row("001")).put("cf2", "999", ""),
                RowMutation::new(row("777")).put("cf2", "100", ""),
            ],
        )
        .await
        .unwrap();
    store
        .mutate(
            "role",
            &[
                RowMutation::new(row("999")).put("cf2", "001", "Xiaohei"),
                RowMutation::new(row("100")).put("cf2", "777", ""),
                RowMutation::new(row("300")).delete_family("cf1"),
            ],
        )
        .await
        .unwrap();
    let report = rel.verify().await.unwrap();
    // 001->999 on both sides, 777->100 on both sides, 001->300 on both.
    assert_eq!(report.absent.len(), 6, "{report:?}");
    assert!(report.missing.is_empty() && report.dangling.is_empty(), "{report:?}");
    assert!(
        report.absent.iter().any(|a| a.contains("no right entity 999")),
        "{report:?}"
    );
    assert!(
        report.absent.iter().any(|a| a.contains("no left entity 777")),
        "{report:?}"
    );
    let repaired = rel.repair().await.unwrap();
    assert_eq!(repaired.absent, report.absent);
    assert!(
        rel.verify().await.unwrap().is_consistent(),
        "{}",
        rel.verify().await.unwrap()
    );
    assert!(!raw_row_exists(&store, "role", "999").await);
    assert!(!raw_row_exists(&store, "person", "777").await);
    assert!(!raw_row_exists(&store, "role", "300").await);
    assert_eq!(names(&rel.rights_of("001").await.unwrap()), ["100"]);
    assert_eq!(names(&rel.lefts_of("100").await.unwrap()), ["001"]);
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "shop", family(name = "info"), family(name = "item"))]
struct Shop {
    #[hmap(key)]
    id: String,
    #[hmap(family = "info")]
    name: String,
    #[hmap(family = "item", dynamic, relation)]
    items: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "item", family(name = "info"), family(name = "shop"))]
struct Item {
    #[hmap(key)]
    id: String,
    #[hmap(family = "info")]
    title: String,
    #[hmap(family = "shop", dynamic, relation)]
    shops: BTreeMap<String, String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shop_and_item_links_carry_a_type() {
    let store = hmap_suite::test_store("shop_and_item_links_carry_a_type").await;
    let rel: ManyToMany<Shop, Item, _> = ManyToMany::new(Arc::clone(&store), "item", "shop");
    rel.left().create().await.unwrap();
    rel.right().create().await.unwrap();
    rel.left()
        .put_many(&[
            Shop {
                id: "s1".into(),
                name: "Tea house".into(),
                items: BTreeMap::new(),
            },
            Shop {
                id: "s2".into(),
                name: "Corner shop".into(),
                items: BTreeMap::new(),
            },
        ])
        .await
        .unwrap();
    rel.right()
        .put(&Item {
            id: "i1".into(),
            title: "Tea".into(),
            shops: BTreeMap::new(),
        })
        .await
        .unwrap();
    // item:<item_id>=type on the shop, shop:<shop_id>=type on the item.
    rel.link_with("s1", "i1", "consign").await.unwrap();
    rel.link_with("s2", "i1", "own").await.unwrap();
    let item = rel.right().get("i1").await.unwrap().unwrap();
    assert_eq!(
        item.shops,
        BTreeMap::from([("s1".into(), "consign".into()), ("s2".into(), "own".into())])
    );
    assert_eq!(
        rel.left().get("s2").await.unwrap().unwrap().items,
        BTreeMap::from([("i1".into(), "own".into())])
    );
    // Deleting the item removes it from every shop.
    rel.delete_right("i1").await.unwrap();
    assert!(rel.left().get("s1").await.unwrap().unwrap().items.is_empty());
    assert!(rel.verify().await.unwrap().is_consistent());
}

// ---------------------------------------------------------------------------
// Weibo: follows and fans in one table, both sides of one relation.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "wb_user", family(name = "cf1"), family(name = "cf2"), family(name = "cf3"))]
struct User {
    #[hmap(key)]
    uid: String,
    #[hmap(family = "cf1")]
    name: String,
    /// cf2:<uid>=name: whom this user follows
    #[hmap(family = "cf2", dynamic, relation)]
    follows: BTreeMap<String, String>,
    /// cf3:<uid>=name: who follows this user
    #[hmap(family = "cf3", dynamic, relation)]
    fans: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "wb_inbox", family(name = "cf", versions = 1000))]
struct Inbox {
    #[hmap(key)]
    uid: String,
    #[hmap(versions)]
    sq: Vec<Versioned<String>>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weibo_follows_and_inbox_fan_out() {
    let store = hmap_suite::test_store("weibo_follows_and_inbox_fan_out").await;
    let follows: ManyToMany<User, User, _> = ManyToMany::new(Arc::clone(&store), "cf2", "cf3")
        .with_labels(|u: &User| u.name.clone(), |u: &User| u.name.clone());
    follows.left().create().await.unwrap();
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&store));
    inboxes.create().await.unwrap();
    for (uid, name) in [("001", "Xiaohong"), ("002", "Xiaohei"), ("003", "Xiaobai")] {
        follows
            .left()
            .put(&User {
                uid: uid.into(),
                name: name.into(),
                follows: BTreeMap::new(),
                fans: BTreeMap::new(),
            })
            .await
            .unwrap();
    }
    // The seed: 001 follows 002; 002 follows 001 and 003; 003 follows 001 and 002.
    for (a, b) in [
        ("001", "002"),
        ("002", "001"),
        ("002", "003"),
        ("003", "001"),
        ("003", "002"),
    ] {
        follows.link(a, b).await.unwrap();
    }
    let u2 = follows.left().get("002").await.unwrap().unwrap();
    assert_eq!(u2.fans.keys().collect::<Vec<_>>(), ["001", "003"]);
    assert_eq!(u2.follows.keys().collect::<Vec<_>>(), ["001", "003"]);

    let config = FanOutConfig::new("wb_inbox", "cf", "sq");
    let fanout = FanOut::start(Arc::clone(&store), config.clone()).unwrap();
    let mut posted = Vec::new();
    for (author, text) in [("002", "hello"), ("001", "hi"), ("002", "again")] {
        let fans = follows.lefts_of(author).await.unwrap();
        let recipients: Vec<Bytes> = fans.iter().map(|(f, _)| inboxes.row_key(f.as_str()).unwrap()).collect();
        let ts = next_timestamp(&RowSet::of_rows("wb_inbox", recipients.iter().map(|r| &r[..])));
        posted.push((author, text, ts));
        fanout
            .deliver(Delivery::new(recipients, Bytes::from(format!("{author}:{text}")), ts))
            .await
            .unwrap();
    }
    assert_eq!(fanout.flush().await.unwrap(), 0);
    // 003 follows 001 and 002: their three posts, newest first.
    let inbox = inboxes.get("003").await.unwrap().unwrap();
    let refs: Vec<&str> = inbox.sq.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(refs, ["002:again", "001:hi", "002:hello"]);
    // Pages of two, by time.
    let row = inboxes.row_key("003").unwrap();
    let first = FanOut::read_inbox(&*store, &config, row.clone(), 2, None)
        .await
        .unwrap();
    assert_eq!(first.len(), 2);
    let next = FanOut::read_inbox(&*store, &config, row, 2, Some(first[1].0))
        .await
        .unwrap();
    assert_eq!(
        next.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>(),
        [Bytes::from("002:hello")]
    );
    // 001 follows only 002.
    assert_eq!(inboxes.get("001").await.unwrap().unwrap().sq.len(), 2);
    // 003 unfollows 002: 002's posts leave 003's inbox.
    follows.unlink("003", "002").await.unwrap();
    let removed = FanOut::remove_from_inbox(&*store, &config, inboxes.row_key("003").unwrap(), |v| {
        v.starts_with(b"002:")
    })
    .await
    .unwrap();
    assert_eq!(removed, 2);
    let inbox = inboxes.get("003").await.unwrap().unwrap();
    let refs: Vec<&str> = inbox.sq.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(refs, ["001:hi"]);
    assert!(fanout.shutdown().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_retries_and_keeps_what_fails() {
    let memory = hmap_suite::test_store("fan_out_retries_and_keeps_what_fails").await;
    Table::<Inbox, _>::new(Arc::clone(&memory)).create().await.unwrap();
    // Every other write fails once: retries get through.
    let flaky = Arc::new(FaultyStore::new(Arc::clone(&memory), FaultPlan::Every(2)));
    let mut config = FanOutConfig::new("wb_inbox", "cf", "sq");
    config.batch = 3;
    let fanout = FanOut::start(Arc::clone(&flaky), config.clone()).unwrap();
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&memory));
    let recipients: Vec<Bytes> = (0..10).map(|i| inboxes.row_key(format!("u{i}")).unwrap()).collect();
    for n in 0..20 {
        fanout
            .deliver(Delivery::new(
                recipients.clone(),
                Bytes::from(format!("post{n}")),
                1_000 + n,
            ))
            .await
            .unwrap();
    }
    assert_eq!(fanout.flush().await.unwrap(), 0);
    assert!(flaky.faults() > 0);
    for i in 0..10 {
        assert_eq!(inboxes.get(format!("u{i}")).await.unwrap().unwrap().sq.len(), 20);
    }
    // A store that fails every call: deliveries are kept, then retried.
    flaky.set_plan(FaultPlan::Every(1));
    fanout
        .deliver(Delivery::new(recipients.clone(), Bytes::from("late"), 5_000))
        .await
        .unwrap();
    assert_eq!(fanout.flush().await.unwrap(), 1);
    flaky.set_plan(FaultPlan::Never);
    fanout.retry_failed().await.unwrap();
    assert_eq!(fanout.flush().await.unwrap(), 0);
    assert_eq!(inboxes.get("u3").await.unwrap().unwrap().sq[0].value, "late");
    // Shutting down writes what is still queued.
    for n in 0..50 {
        fanout
            .deliver(Delivery::new(
                recipients[..1].to_vec(),
                Bytes::from(format!("final{n}")),
                10_000 + n,
            ))
            .await
            .unwrap();
    }
    assert!(fanout.shutdown().await.is_empty());
    assert_eq!(inboxes.get("u0").await.unwrap().unwrap().sq.len(), 71);
}

/// A recipient whose inbox row the store refuses (a key longer than
/// HBase's 32,767 bytes) is the only one set aside: the other inboxes of
/// the delivery, in its batch and after it, get the post.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_sets_aside_only_the_recipients_not_written() {
    let store = hmap_suite::test_store("fan_out_sets_aside_only_the_recipients_not_written").await;
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&store));
    inboxes.create().await.unwrap();
    let mut config = FanOutConfig::new("wb_inbox", "cf", "sq");
    config.batch = 3;
    let fanout = FanOut::start(Arc::clone(&store), config).unwrap();
    let mut recipients: Vec<Bytes> = (0..7).map(|i| inboxes.row_key(format!("u{i}")).unwrap()).collect();
    let too_long = Bytes::from(vec![b'x'; 40_000]);
    recipients.insert(1, too_long.clone());
    fanout
        .deliver(Delivery::new(recipients, Bytes::from("post"), 1_000))
        .await
        .unwrap();
    assert_eq!(fanout.flush().await.unwrap(), 1);
    let failed = fanout.failed();
    assert_eq!(failed[0].0.recipients, [too_long], "{:?}", failed[0].1);
    assert!(
        failed[0].1.contains("invalid row key") && failed[0].1.contains("40000 bytes"),
        "{}",
        failed[0].1
    );
    for i in 0..7 {
        let inbox = inboxes.get(format!("u{i}")).await.unwrap().unwrap();
        assert_eq!(inbox.sq.len(), 1, "u{i}");
    }
}

// ---------------------------------------------------------------------------
// The org chart.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn org_chart() {
    let store = hmap_suite::test_store("org_chart").await;
    let org = Tree::new(Arc::clone(&store), "org");
    org.create().await.unwrap();
    org.insert("001", "CEO", None).await.unwrap();
    org.insert("002", "Development", Some("001")).await.unwrap();
    org.insert("003", "Dev 1", Some("002")).await.unwrap();
    org.insert("004", "Dev 2", Some("002")).await.unwrap();
    org.insert("005", "Marketing", Some("001")).await.unwrap();
    org.insert("006", "Market 1", Some("005")).await.unwrap();
    org.insert("009", "Subsidiary", None).await.unwrap();
    // An id taken: a typed error naming the node's row, nothing written.
    let err = org.insert("009", "Again", Some("001")).await.unwrap_err();
    assert!(
        matches!(&err, Error::Exists { table: "org", row } if row == "0_009 (level=0, id=\"009\")"),
        "{err:?}"
    );

    // The seed's keys: 0_ for top-level departments, 1_ for the others.
    assert!(
        store
            .get("org", &hmap::store::Get::new("0_001"))
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        store
            .get("org", &hmap::store::Get::new("1_002"))
            .await
            .unwrap()
            .is_some()
    );
    let top: Vec<String> = org.top_level().await.unwrap().into_iter().map(|n| n.id).collect();
    assert_eq!(top, ["001", "009"]);
    let kids: Vec<String> = org.children("002").await.unwrap().into_iter().map(|n| n.name).collect();
    assert_eq!(kids, ["Dev 1", "Dev 2"]);
    let path: Vec<String> = org
        .path_to_root("003")
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(path, ["003", "002", "001"]);

    // A parent that does not exist is a typed error naming it.
    let err = org.insert("010", "Nowhere", Some("999")).await.unwrap_err();
    assert!(
        matches!(&err, hmap::Error::NoSuchEntity { table: "org", key } if key == "999"),
        "{err}"
    );
    // Moves: within a level, to the top (a new rowkey), and refused cycles.
    org.move_node("004", Some("005")).await.unwrap();
    assert_eq!(org.get("002").await.unwrap().unwrap().children.len(), 1);
    assert_eq!(org.get("004").await.unwrap().unwrap().parent.as_deref(), Some("005"));
    org.move_node("005", None).await.unwrap();
    assert!(
        store
            .get("org", &hmap::store::Get::new("1_005"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(org.path_to_root("006").await.unwrap().len(), 2);
    assert!(org.move_node("001", Some("003")).await.is_err());

    // Deletes: refused with children, or the whole subtree.
    assert!(org.delete("002", DeleteMode::Refuse).await.is_err());
    org.delete("002", DeleteMode::Subtree).await.unwrap();
    assert!(org.get("003").await.unwrap().is_none());
    assert!(org.get("001").await.unwrap().unwrap().children.is_empty());
    assert!(
        org.verify().await.unwrap().is_consistent(),
        "{}",
        org.verify().await.unwrap()
    );
}

/// Issue 11: a node whose parent row is gone, a child list naming a node
/// that is gone, and a row holding only a child list are found by `verify`
/// and fixed by `repair` (the orphan, with its subtree, moves to the top
/// level).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_repair_handles_missing_nodes() {
    let store = hmap_suite::test_store("tree_repair_handles_missing_nodes").await;
    let org = Tree::new(Arc::clone(&store), "org");
    org.create().await.unwrap();
    org.insert("001", "CEO", None).await.unwrap();
    org.insert("002", "Development", Some("001")).await.unwrap();
    org.insert("003", "Dev 1", Some("002")).await.unwrap();
    org.insert("005", "Team 5", Some("003")).await.unwrap();
    org.insert("004", "Sales", Some("001")).await.unwrap();
    // Behind the tree's back: 002's row deleted, and a row holding only a
    // child list.
    store
        .mutate(
            "org",
            &[
                RowMutation::new("1_002").delete_row(),
                RowMutation::new("1_777").put("c", "888", "ghost"),
            ],
        )
        .await
        .unwrap();
    let report = org.verify().await.unwrap();
    let mut absent = report.absent.clone();
    absent.sort();
    assert_eq!(
        absent,
        [
            "001 lists 002, which is gone",
            "003 names parent 002, which is gone: repair moves it to the top level",
            "row 1_777 holds only a child list, no node",
        ],
        "{report:?}"
    );
    assert!(org.get("777").await.unwrap().is_none());
    let repaired = org.repair().await.unwrap();
    assert_eq!(repaired.absent.len(), 3, "{repaired:?}");
    assert!(
        org.verify().await.unwrap().is_consistent(),
        "{}",
        org.verify().await.unwrap()
    );
    let top: Vec<String> = org.top_level().await.unwrap().into_iter().map(|n| n.id).collect();
    assert_eq!(top, ["001", "003"]);
    let path: Vec<String> = org
        .path_to_root("005")
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(path, ["005", "003"]);
    assert_eq!(org.get("001").await.unwrap().unwrap().children.len(), 1);
    assert!(store.get("org", &Get::new("1_003")).await.unwrap().is_none());
    assert!(store.get("org", &Get::new("1_777")).await.unwrap().is_none());
}

// ---------------------------------------------------------------------------
// A secondary index.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "account", family(name = "a"))]
struct Account {
    #[hmap(key)]
    id: u64,
    email: String,
    city: String,
}

fn account(id: u64, email: &str, city: &str) -> Account {
    Account {
        id,
        email: email.into(),
        city: city.into(),
    }
}

/// The account table, writing behind its indexes' back (to damage them).
fn around_indexes(store: &Arc<dyn Store>) -> Table<Account, Arc<dyn Store>> {
    Table::new(Arc::clone(store)).around_indexes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secondary_index_by_city() {
    let store = hmap_suite::test_store("secondary_index_by_city").await;
    let by_city = Index::new(Arc::clone(&store), "account_by_city", |a: &Account| a.city.clone());
    by_city.table().create().await.unwrap();
    by_city.create().await.unwrap();
    by_city.put(&account(1, "a@x", "Hangzhou")).await.unwrap();
    by_city.put(&account(2, "b@x", "Beijing")).await.unwrap();
    by_city.put(&account(3, "c@x", "Hangzhou")).await.unwrap();
    let ids = async |city: &str| -> Vec<u64> {
        by_city
            .lookup(&city.to_string())
            .await
            .unwrap()
            .into_iter()
            .map(|a| a.id)
            .collect()
    };
    assert_eq!(ids("Hangzhou").await, [1, 3]);
    // Moving city moves the entry.
    by_city.put(&account(3, "c@x", "Beijing")).await.unwrap();
    assert_eq!(ids("Hangzhou").await, [1]);
    assert_eq!(ids("Beijing").await, [2, 3]);
    // An update of the indexed field, and of another field.
    by_city
        .update(&account(1, "ignored", "Shanghai"), [Account::CITY])
        .await
        .unwrap();
    by_city
        .update(&account(2, "new@x", "ignored"), [Account::EMAIL])
        .await
        .unwrap();
    assert_eq!(ids("Shanghai").await, [1]);
    assert_eq!(ids("Beijing").await, [2, 3]);
    by_city.delete(2u64).await.unwrap();
    assert_eq!(ids("Beijing").await, [3]);
    assert!(
        by_city.verify().await.unwrap().is_consistent(),
        "{}",
        by_city.verify().await.unwrap()
    );

    // A write of the table would go behind the index's back: refused.
    let err = by_city.table().put(&account(9, "z@x", "Xian")).await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Indexed {
                table: "account",
                index: "account_by_city"
            }
        ),
        "{err}"
    );
    // Entries written behind the index's back are found and repaired.
    around_indexes(&store).put(&account(9, "z@x", "Xian")).await.unwrap();
    let report = by_city.verify().await.unwrap();
    // Named by its value and its row's key parts, not as escaped bytes.
    assert_eq!(report.missing, ["no entry value=\"Xian\" of row id=9"], "{report:?}");
    by_city.repair().await.unwrap();
    assert_eq!(ids("Xian").await, [9]);
    by_city.rebuild().await.unwrap();
    assert!(by_city.verify().await.unwrap().is_consistent());
}

/// Issue 11: an index entry whose row was deleted behind the index's back
/// is reported as `absent` by `verify` and removed by `repair`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_repair_removes_entries_of_deleted_rows() {
    let store = hmap_suite::test_store("index_repair_removes_entries_of_deleted_rows").await;
    let by_city = Index::new(Arc::clone(&store), "account_by_city", |a: &Account| a.city.clone());
    by_city.table().create().await.unwrap();
    by_city.create().await.unwrap();
    by_city.put(&account(1, "a@x", "Hangzhou")).await.unwrap();
    by_city.put(&account(2, "b@x", "Hangzhou")).await.unwrap();
    around_indexes(&store).delete(1u64).await.unwrap();
    let report = by_city.verify().await.unwrap();
    assert_eq!(report.absent.len(), 1, "{report:?}");
    assert_eq!(
        report.absent,
        ["entry value=\"Hangzhou\" of row id=1: the row is gone"],
        "{report:?}"
    );
    assert!(report.missing.is_empty() && report.dangling.is_empty(), "{report:?}");
    assert_eq!(by_city.repair().await.unwrap().absent.len(), 1);
    assert!(
        by_city.verify().await.unwrap().is_consistent(),
        "{}",
        by_city.verify().await.unwrap()
    );
    let entries = store
        .scan("account_by_city", &hmap::store::Scan::all())
        .await
        .unwrap()
        .count()
        .await;
    assert_eq!(entries, 1);
}

/// An index checked in batches finds what a whole check finds, and a
/// repair resumed from a checkpoint in its second pass (the entries) ends
/// consistent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_checks_in_batches_and_resumes() {
    use hmap::relation::{CheckOptions, Checkpoint};
    use std::sync::Mutex;
    let store = hmap_suite::test_store("an_index_checks_in_batches_and_resumes").await;
    let by_city = Index::new(Arc::clone(&store), "account_by_city", |a: &Account| a.city.clone());
    by_city.table().create().await.unwrap();
    by_city.create().await.unwrap();
    for id in 0..8u64 {
        by_city
            .put(&account(id, "x@y", if id % 2 == 0 { "Hangzhou" } else { "Beijing" }))
            .await
            .unwrap();
    }
    // Damage: two rows written behind the index's back (moved city: one
    // missing entry and one dangling each), one row deleted (absent).
    let around = around_indexes(&store);
    around.put(&account(1, "x@y", "Shanghai")).await.unwrap();
    around.put(&account(2, "x@y", "Shanghai")).await.unwrap();
    around.delete(5u64).await.unwrap();
    let whole = by_city.verify().await.unwrap();
    assert_eq!(
        (whole.missing.len(), whole.dangling.len(), whole.absent.len()),
        (2, 2, 1),
        "{whole:?}"
    );
    let checkpoints: Arc<Mutex<Vec<Checkpoint>>> = Arc::default();
    let seen = Arc::clone(&checkpoints);
    let batched = by_city
        .check(
            false,
            &CheckOptions::new()
                .batch(1)
                .progress(move |p| seen.lock().unwrap().push(p.checkpoint.clone())),
        )
        .await
        .unwrap();
    assert_eq!(batched, whole);
    let checkpoints = checkpoints.lock().unwrap().clone();
    assert_eq!(
        checkpoints.iter().filter(|c| c.pass() == 1).count(),
        7,
        "{checkpoints:?}"
    );
    // Resume a repair from the first checkpoint of the second pass: the
    // missing entries (pass 1) are left, the rest repaired.
    let second = checkpoints.iter().find(|c| c.pass() == 2).unwrap().clone();
    by_city
        .check(true, &CheckOptions::new().batch(2).from(second))
        .await
        .unwrap();
    let after = by_city.verify().await.unwrap();
    assert_eq!(after.missing.len(), 2, "{after:?}");
    by_city.repair().await.unwrap();
    assert!(by_city.verify().await.unwrap().is_consistent());

    // A rebuild in batches, cut short after its first pass (the stale
    // entries deleted) and resumed into its second (the rows indexed).
    let passes: Arc<Mutex<Vec<Checkpoint>>> = Arc::default();
    let seen = Arc::clone(&passes);
    by_city
        .rebuild_with(
            &CheckOptions::new()
                .batch(3)
                .progress(move |p| seen.lock().unwrap().push(p.checkpoint.clone())),
        )
        .await
        .unwrap();
    assert!(by_city.verify().await.unwrap().is_consistent());
    let passes = passes.lock().unwrap().clone();
    let last_delete = passes.iter().rfind(|c| c.pass() == 1).unwrap().clone();
    // Resuming from the end of the first pass redoes only the second.
    by_city
        .rebuild_with(&CheckOptions::new().from(last_delete))
        .await
        .unwrap();
    assert!(by_city.verify().await.unwrap().is_consistent());
    assert!(
        hmap::relation::Checked::rebuild_with(&OrgTreeProbe, &CheckOptions::new())
            .await
            .is_none()
    );
}

/// A helper with nothing to rebuild.
struct OrgTreeProbe;

#[async_trait::async_trait]
impl hmap::relation::Checked for OrgTreeProbe {
    async fn verify(&self) -> hmap::Result<hmap::relation::Report> {
        Ok(hmap::relation::Report::default())
    }
    async fn repair(&self) -> hmap::Result<hmap::relation::Report> {
        Ok(hmap::relation::Report::default())
    }
}

// ---------------------------------------------------------------------------
// The clock: hmap's own timestamps stay at the wall clock.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "bulk", family(name = "d"))]
struct Bulk {
    #[hmap(key)]
    id: u64,
    #[hmap(family = "d")]
    n: u64,
}

fn wall_clock_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970");
    i64::try_from(since.as_millis()).expect("milliseconds fit in i64")
}

/// A bulk write stamps its rows at the wall clock, not one millisecond per
/// row ahead of it: a delete the server stamps afterwards (another client,
/// the HBase shell, a raw store call) removes what it wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_write_then_server_stamped_delete_removes_the_row() {
    const ROWS: u64 = 200_000;
    let store = hmap_suite::test_store("bulk_write_then_server_stamped_delete").await;
    let bulk = Table::<Bulk, _>::new(Arc::clone(&store));
    bulk.create().await.unwrap();
    let rows: Vec<Bulk> = (0..ROWS).map(|id| Bulk { id, n: id * 2 }).collect();
    bulk.put_many(&rows).await.unwrap();
    let after = wall_clock_ms();
    let key = bulk.row_key(ROWS - 1).unwrap();
    let stored = store
        .get("bulk", &hmap::store::Get::new(key.clone()))
        .await
        .unwrap()
        .expect("the last row was written");
    let stamp = stored.cells.iter().map(|c| c.timestamp).max().unwrap();
    println!(
        "after a {ROWS}-row put_many the last row is stamped {} ms ahead of the wall clock",
        stamp - after
    );
    assert!(
        stamp <= after + 1,
        "stamped {} ms ahead of the wall clock",
        stamp - after
    );
    // A delete stamped by the store, as the HBase shell's `deleteall` is.
    store
        .mutate("bulk", &[hmap::store::RowMutation::new(key).delete_row()])
        .await
        .unwrap();
    assert_eq!(
        bulk.get(ROWS - 1).await.unwrap(),
        None,
        "the server-stamped delete removed the row"
    );
    assert_eq!(bulk.get(0u64).await.unwrap(), Some(Bulk { id: 0, n: 0 }));
}

/// Calls made back to back, many within one millisecond, still take effect
/// in order: a put after a delete of its row shows, and a dynamic family
/// replaced twice holds the second map only (each replacement deletes up to
/// the millisecond before its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_to_back_calls_keep_their_order() {
    let store = hmap_suite::test_store("back_to_back_calls_keep_their_order").await;
    let people = Table::<PlainPerson, _>::new(Arc::clone(&store));
    people.create().await.unwrap();
    for n in 0..50u32 {
        let mut p = PlainPerson {
            pid: "001".into(),
            name: format!("name{n}"),
            roles: BTreeMap::new(),
        };
        p.roles = BTreeMap::from([(format!("r{n}"), "x".into())]);
        people.delete("001").await.unwrap();
        people.put(&p).await.unwrap();
        assert_eq!(people.get("001").await.unwrap(), Some(p.clone()), "round {n}");
        p.roles = BTreeMap::from([(format!("s{n}"), "y".into())]);
        people.put(&p).await.unwrap();
        assert_eq!(people.get("001").await.unwrap().unwrap().roles, p.roles, "round {n}");
    }
}

/// The clock orders calls per row: threads deleting then writing their own
/// rows in a tight loop (one row each, and a batch of rows each through
/// `delete_rows` and `put_many`), while the others do the same on other
/// rows, never lose a put, though calls on different rows share
/// milliseconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_then_put_in_a_tight_loop_never_loses_the_put() {
    const THREADS: u64 = 4;
    const ROUNDS: u64 = 100;
    const BATCH: u64 = 20;
    let store = hmap_suite::test_store("delete_then_put_in_a_tight_loop").await;
    let bulk = Table::<Bulk, _>::new(Arc::clone(&store));
    bulk.create().await.unwrap();
    // Real threads, each waiting on the test's runtime.
    let runtime = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let bulk = &bulk;
                let runtime = &runtime;
                s.spawn(move || {
                    runtime.block_on(async move {
                        let own = t * 1_000;
                        let batch: Vec<u64> = (1..=BATCH).map(|i| own + i).collect();
                        let batch_keys: Vec<Bytes> = batch.iter().map(|id| bulk.row_key(*id).unwrap()).collect();
                        for round in 0..ROUNDS {
                            bulk.delete(own).await.unwrap();
                            let row = Bulk { id: own, n: round };
                            bulk.put(&row).await.unwrap();
                            assert_eq!(bulk.get(own).await.unwrap(), Some(row), "thread {t}, round {round}");

                            bulk.delete_rows(batch_keys.clone()).await.unwrap();
                            let rows: Vec<Bulk> = batch.iter().map(|&id| Bulk { id, n: round }).collect();
                            bulk.put_many(&rows).await.unwrap();
                            let stored: Vec<Option<Bulk>> = bulk
                                .get_many(batch.iter().copied())
                                .await
                                .unwrap()
                                .into_iter()
                                .map(Result::unwrap)
                                .collect();
                            assert_eq!(
                                stored,
                                rows.into_iter().map(Some).collect::<Vec<_>>(),
                                "thread {t}, round {round}"
                            );
                        }
                    })
                });
            }
        })
    });
}

// ---------------------------------------------------------------------------
// Salted scans merge every bucket, or fail.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "reading", salt(buckets = 4, by = [sensor]), family(name = "r"))]
struct Reading {
    #[hmap(key)]
    sensor: u32,
    #[hmap(key)]
    seq: u32,
    value: u32,
}

/// A bucket's scanner that fails, whether while the merge takes the first
/// row of each bucket or later, fails the scan: the error is the last item,
/// never followed by a merge of the other buckets alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_bucket_fails_the_salted_scan() {
    let store = hmap_suite::test_store("a_failed_bucket_fails_the_salted_scan").await;
    Table::<Reading, _>::new(Arc::clone(&store)).create().await.unwrap();
    let rows: Vec<Reading> = (0..8u32)
        .flat_map(|sensor| {
            (0..3u32).map(move |seq| Reading {
                sensor,
                seq,
                value: sensor * 10 + seq,
            })
        })
        .collect();
    Table::<Reading, _>::new(Arc::clone(&store))
        .put_many(&rows)
        .await
        .unwrap();
    let faulty = Arc::new(FaultyStore::new(Arc::clone(&store), FaultPlan::Never).in_scanners());
    let readings = Table::<Reading, _>::new(Arc::clone(&faulty));
    // Without faults: every bucket, merged.
    let all: Vec<Reading> = readings
        .scan(hmap::Query::all())
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(all, rows);
    // Four calls open the bucket scanners, then one per row fetched: the
    // merge takes bucket 0's first row, then 1's, then 2's (which fails), ...
    for (fault, description) in [(7, "while taking each bucket's first row"), (13, "later")] {
        let calls = faulty.calls();
        faulty.set_plan(FaultPlan::Call(calls + fault));
        let items: Vec<hmap::Result<Reading>> = readings.scan(hmap::Query::all()).await.unwrap().collect().await;
        faulty.set_plan(FaultPlan::Never);
        let errors = items.iter().filter(|r| r.is_err()).count();
        assert_eq!(errors, 1, "a fault {description}: one error");
        assert!(
            items.last().is_some_and(Result::is_err),
            "a fault {description}: the scan ends with its error, not with {} rows of the other buckets",
            items.iter().skip_while(|r| r.is_ok()).skip(1).count()
        );
        // The rows before the error are in order, as the full merge has them.
        let before: Vec<&Reading> = items.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(before, rows.iter().take(before.len()).collect::<Vec<_>>());
    }
}

// ---------------------------------------------------------------------------
// FanOut when its store fails, hangs or panics.

/// A store that runs a hook before each write, and is otherwise `inner`.
struct Hooked<F> {
    inner: Arc<dyn Store>,
    before_write: F,
}

#[async_trait::async_trait]
impl<F: Fn() + Send + Sync> Store for Hooked<F> {
    async fn create_table(&self, schema: &hmap::schema::TableSchema) -> hmap::store::Result<()> {
        self.inner.create_table(schema).await
    }
    async fn delete_table(&self, table: &str) -> hmap::store::Result<()> {
        self.inner.delete_table(table).await
    }
    async fn alter_table(&self, table: &str, change: &hmap::store::FamilyChange) -> hmap::store::Result<()> {
        self.inner.alter_table(table, change).await
    }
    async fn table_exists(&self, table: &str) -> hmap::store::Result<bool> {
        self.inner.table_exists(table).await
    }
    async fn list_tables(&self) -> hmap::store::Result<Vec<String>> {
        self.inner.list_tables().await
    }
    async fn describe_table(&self, table: &str) -> hmap::store::Result<hmap::schema::TableSchema> {
        self.inner.describe_table(table).await
    }
    async fn get(&self, table: &str, get: &hmap::store::Get) -> hmap::store::Result<Option<hmap::store::RowResult>> {
        self.inner.get(table, get).await
    }
    async fn mutate(&self, table: &str, rows: &[hmap::store::RowMutation]) -> hmap::store::Result<()> {
        tokio::task::block_in_place(|| (self.before_write)());
        self.inner.mutate(table, rows).await
    }
    async fn scan<'a>(
        &'a self,
        table: &str,
        scan: &hmap::store::Scan,
    ) -> hmap::store::Result<hmap::store::RowStream<'a>> {
        self.inner.scan(table, scan).await
    }
    async fn check_and_mutate(&self, table: &str, op: &hmap::store::CheckAndMutate) -> hmap::store::Result<bool> {
        self.inner.check_and_mutate(table, op).await
    }
    async fn increment(&self, table: &str, op: &hmap::store::Increment) -> hmap::store::Result<Vec<i64>> {
        self.inner.increment(table, op).await
    }
    async fn append(&self, table: &str, op: &hmap::store::Append) -> hmap::store::Result<hmap::store::RowResult> {
        self.inner.append(table, op).await
    }
}

fn post(recipients: &[Bytes], n: i64) -> Delivery {
    Delivery::new(recipients.to_vec(), Bytes::from(format!("post{n}")), 1_000 + n)
}

/// Waits at most `limit` for `f`.
async fn within<T>(limit: std::time::Duration, f: impl std::future::Future<Output = T>) -> Option<T> {
    tokio::time::timeout(limit, f).await.ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_flush_returns_when_the_worker_dies() {
    let store = hmap_suite::test_store("fan_out_flush_returns_when_the_worker_dies").await;
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&store));
    inboxes.create().await.unwrap();
    // The worker's first write waits until all three are queued, then dies.
    let queued = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let panicking = Hooked {
        inner: Arc::clone(&store),
        before_write: {
            let queued = Arc::clone(&queued);
            move || {
                while !queued.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                panic!("a store bug")
            }
        },
    };
    let fanout = Arc::new(FanOut::start(panicking, FanOutConfig::new("wb_inbox", "cf", "sq")).unwrap());
    let recipients = [inboxes.row_key("u1").unwrap()];
    for n in 0..3 {
        fanout.deliver(post(&recipients, n)).await.unwrap();
    }
    queued.store(true, std::sync::atomic::Ordering::SeqCst);
    let flushing = Arc::clone(&fanout);
    let failed = within(std::time::Duration::from_secs(10), flushing.flush())
        .await
        .expect("flush returns although the worker died")
        .unwrap();
    // Nothing accepted is lost: what the worker did not write is set aside.
    assert_eq!(failed, 3);
    assert!(
        fanout.failed().iter().all(|(_, why)| why.contains("panicked")),
        "{:?}",
        fanout.failed()
    );
    let err = fanout.deliver(post(&recipients, 9)).await.unwrap_err();
    assert!(err.to_string().contains("the fan-out worker panicked"), "{err}");
}

fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The fan-out started on runtime A, 40 deliveries queued, A shut down
/// (the worker dropped with it): on runtime B, `flush` returns, every
/// delivery is written or listed by `failed`, and `deliver` fails.
#[test]
fn a_fan_out_whose_runtime_shut_down_loses_no_delivery() {
    let b = current_thread_runtime();
    let store = b.block_on(hmap_suite::test_store("a_fan_out_whose_runtime_shut_down"));
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&store));
    b.block_on(inboxes.create()).unwrap();
    let recipients: Vec<Bytes> = (0..3).map(|i| inboxes.row_key(format!("u{i}")).unwrap()).collect();

    let a = current_thread_runtime();
    let fanout = {
        let _in_a = a.enter();
        FanOut::start(Arc::clone(&store), FanOutConfig::new("wb_inbox", "cf", "sq")).unwrap()
    };
    a.block_on(async {
        for n in 0..40 {
            fanout.deliver(post(&recipients, n)).await.unwrap();
            if n % 10 == 0 {
                // The worker writes a few.
                tokio::task::yield_now().await;
            }
        }
    });
    drop(a);

    let failed = b
        .block_on(within(std::time::Duration::from_secs(5), fanout.flush()))
        .expect("flush returns although the worker is gone")
        .unwrap();
    let written = b.block_on(inboxes.get("u0")).unwrap().map_or(0, |i| i.sq.len());
    assert_eq!(written + failed, 40, "{written} written, {failed} set aside");
    assert_eq!(fanout.failed().len(), failed);
    assert!(
        fanout.failed().iter().all(|(_, why)| why.contains("runtime")),
        "{:?}",
        fanout.failed()
    );
    let err = b.block_on(fanout.deliver(post(&recipients, 99))).unwrap_err();
    assert!(
        matches!(err, Error::Store(hmap::store::StoreError::Interrupted { ref table, .. }) if table == "wb_inbox"),
        "{err}"
    );
    // What was set aside is the caller's to deliver again, through a new
    // fan-out on a live runtime.
    let again = {
        let _in_b = b.enter();
        FanOut::start(Arc::clone(&store), FanOutConfig::new("wb_inbox", "cf", "sq")).unwrap()
    };
    b.block_on(async {
        for (delivery, _) in fanout.failed() {
            again.deliver(delivery).await.unwrap();
        }
        assert_eq!(again.flush().await.unwrap(), 0);
    });
    let written = b.block_on(inboxes.get("u0")).unwrap().map_or(0, |i| i.sq.len());
    assert_eq!(written, 40);
}

/// A worker whose runtime lives but is never driven makes no progress:
/// `flush` gives up after the stall timeout, and `shutdown` lists what
/// was not written.
#[test]
fn a_fan_out_flush_has_a_deadline() {
    let b = current_thread_runtime();
    let store = b.block_on(hmap_suite::test_store("a_fan_out_flush_has_a_deadline"));
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&store));
    b.block_on(inboxes.create()).unwrap();
    let recipients = [inboxes.row_key("u1").unwrap()];
    // Runtime A is never driven: its worker never runs.
    let a = current_thread_runtime();
    let mut config = FanOutConfig::new("wb_inbox", "cf", "sq");
    config.stall_timeout = std::time::Duration::from_millis(200);
    let fanout = {
        let _in_a = a.enter();
        FanOut::start(Arc::clone(&store), config).unwrap()
    };
    b.block_on(async {
        for n in 0..5 {
            fanout.deliver(post(&recipients, n)).await.unwrap();
        }
        let started = std::time::Instant::now();
        let err = within(std::time::Duration::from_secs(5), fanout.flush())
            .await
            .expect("flush has a deadline")
            .unwrap_err();
        assert!(
            matches!(err, Error::Store(hmap::store::StoreError::Timeout { .. })),
            "{err}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        let failed = within(std::time::Duration::from_secs(5), fanout.shutdown())
            .await
            .expect("shutdown has a deadline");
        assert_eq!(failed.len(), 5, "{failed:?}");
    });
    drop(a);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_fan_out_does_not_wait_for_its_queue() {
    let store = hmap_suite::test_store("dropping_a_fan_out_does_not_wait_for_its_queue").await;
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&store));
    inboxes.create().await.unwrap();
    // Writes wait until the gate opens.
    let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let held = Arc::clone(&gate);
    let gated = Hooked {
        inner: Arc::clone(&store),
        before_write: move || {
            let (open, changed) = &*held;
            let mut open = open.lock().unwrap();
            while !*open {
                open = changed.wait(open).unwrap();
            }
        },
    };
    let mut config = FanOutConfig::new("wb_inbox", "cf", "sq");
    config.queue = 2;
    let fanout = FanOut::start(gated, config).unwrap();
    let recipients = [inboxes.row_key("u1").unwrap()];
    // One being written (held at the gate), two filling the queue.
    for n in 0..3 {
        fanout.deliver(post(&recipients, n)).await.unwrap();
    }
    within(std::time::Duration::from_secs(5), async move { drop(fanout) })
        .await
        .expect("drop returns while writes are held");
    // The worker goes on in the background and writes the whole queue.
    let (open, changed) = &*gate;
    *open.lock().unwrap() = true;
    changed.notify_all();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let written = inboxes.get("u1").await.unwrap().map_or(0, |i| i.sq.len());
        if written == 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{written} of 3 deliveries written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_retries_transient_errors_with_backoff_and_not_permanent_ones() {
    let store = hmap_suite::test_store("fan_out_retries_transient_errors_with_backoff").await;
    let inboxes = Table::<Inbox, _>::new(Arc::clone(&store));
    inboxes.create().await.unwrap();
    let counted = Arc::new(FaultyStore::new(Arc::clone(&store), FaultPlan::Never));
    let recipients = [inboxes.row_key("u1").unwrap()];

    // A permanent error (the table does not exist): one attempt, set aside.
    let mut config = FanOutConfig::new("no_such_inbox", "cf", "sq");
    config.attempts = 5;
    config.backoff = std::time::Duration::from_millis(1);
    let fanout = FanOut::start(Arc::clone(&counted), config).unwrap();
    fanout.deliver(post(&recipients, 0)).await.unwrap();
    assert_eq!(fanout.flush().await.unwrap(), 1);
    assert_eq!(counted.calls(), 1, "a permanent error is not retried");
    drop(fanout);

    // Transient errors: every attempt, each after twice the previous wait.
    counted.set_plan(FaultPlan::Every(1));
    let mut config = FanOutConfig::new("wb_inbox", "cf", "sq");
    config.attempts = 4;
    config.backoff = std::time::Duration::from_millis(40);
    let fanout = FanOut::start(Arc::clone(&counted), config).unwrap();
    let calls = counted.calls();
    let started = std::time::Instant::now();
    fanout.deliver(post(&recipients, 1)).await.unwrap();
    assert_eq!(fanout.flush().await.unwrap(), 1);
    let waited = started.elapsed();
    assert_eq!(counted.calls() - calls, 4, "four attempts");
    assert!(
        waited >= std::time::Duration::from_millis(40 + 80 + 160),
        "backoff 40, 80, 160 ms; waited {waited:?}"
    );
    // Once the store is back, the kept delivery goes through.
    counted.set_plan(FaultPlan::Never);
    fanout.retry_failed().await.unwrap();
    assert_eq!(fanout.flush().await.unwrap(), 0);
    assert_eq!(inboxes.get("u1").await.unwrap().unwrap().sq.len(), 1);
}

// ---------------------------------------------------------------------------
// A tree moved about from several threads at once.

/// Eight threads move twelve nodes of one tree about for a few seconds.
/// Afterwards, without repair, every node is stored once, its parent lists
/// it, no list names a node elsewhere, and no parents form a cycle; the
/// only refusals are moves under a node's own descendant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_moves_leave_the_tree_consistent() {
    const NODES: u64 = 12;
    let store = hmap_suite::test_store("concurrent_moves_leave_the_tree_consistent").await;
    let org = Tree::new(Arc::clone(&store), "org");
    org.create().await.unwrap();
    let id = |n: u64| format!("{n:03}");
    for n in 0..NODES {
        // Four top-level nodes, each with two children.
        let parent = (n >= 4).then(|| id(n % 4));
        org.insert(&id(n), &format!("dept {n}"), parent.as_deref())
            .await
            .unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    // Real threads, each waiting on the test's runtime.
    let runtime = tokio::runtime::Handle::current();
    let (moved, refused) = tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8u64)
                .map(|t| {
                    let org = &org;
                    let runtime = &runtime;
                    scope.spawn(move || {
                        runtime.block_on(async move {
                            let mut rng = hmap_suite::Rng::new(t);
                            let (mut moved, mut refused) = (0, 0);
                            while std::time::Instant::now() < deadline {
                                let node = id(rng.below(NODES));
                                let parent = match rng.below(NODES + 2) {
                                    p if p < NODES => Some(id(p)),
                                    _ => None,
                                };
                                match org.move_node(&node, parent.as_deref()).await {
                                    Ok(()) => moved += 1,
                                    Err(e) if e.to_string().contains("under its own descendant") => refused += 1,
                                    Err(e) => panic!("moving {node} under {parent:?}: {e}"),
                                }
                            }
                            (moved, refused)
                        })
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().unwrap())
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
    });
    println!("{moved} moves, {refused} refused");
    assert!(moved > 0);
    let report = org.verify().await.unwrap();
    assert!(report.is_consistent(), "{report}: {report:?}");
    // Every node once, under one key, and a path to the top from each.
    let rows = store
        .scan("org", &hmap::store::Scan::range("0", "2"))
        .await
        .unwrap()
        .count()
        .await;
    assert_eq!(rows, NODES as usize, "each node stored under one key");
    for n in 0..NODES {
        let path = org.path_to_root(&id(n)).await.unwrap();
        assert!(path.last().unwrap().parent.is_none());
    }
}

/// Deleting a subtree whose parents form a cycle (damaged data, written
/// here behind the tree's back) deletes each node once and ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_subtree_with_a_cycle_ends() {
    use hmap::store::RowMutation;
    let store = hmap_suite::test_store("deleting_a_subtree_with_a_cycle_ends").await;
    let org = Tree::new(Arc::clone(&store), "org");
    org.create().await.unwrap();
    org.insert("000", "Board", None).await.unwrap();
    org.insert("001", "CEO", Some("000")).await.unwrap();
    org.insert("002", "Development", Some("001")).await.unwrap();
    org.insert("003", "Dev 1", Some("002")).await.unwrap();
    // 001 now names 003 as its parent, and 003 lists it: 001 -> 002 -> 003 -> 001.
    store
        .mutate(
            "org",
            &[
                RowMutation::new("1_001").put("i", "p", "003"),
                RowMutation::new("1_003").put("c", "001", "CEO"),
            ],
        )
        .await
        .unwrap();
    within(
        std::time::Duration::from_secs(20),
        org.delete("001", DeleteMode::Subtree),
    )
    .await
    .expect("the delete ends")
    .unwrap();
    for gone in ["001", "002", "003"] {
        assert_eq!(org.get(gone).await.unwrap(), None, "{gone}");
    }
    assert!(org.get("000").await.unwrap().is_some());
}

/// A store whose every call first waits `delay`: a write cut off by a
/// timeout is cut off in the middle. With `late`, a check-and-mutate
/// waits that long instead, and is applied even when its caller gave up
/// waiting, as a request already sent reaches the server after its call
/// was cancelled.
struct Delayed {
    inner: Arc<dyn Store>,
    delay: std::time::Duration,
    late: Option<std::time::Duration>,
}

#[async_trait::async_trait]
impl Store for Delayed {
    async fn create_table(&self, schema: &hmap::schema::TableSchema) -> hmap::store::Result<()> {
        tokio::time::sleep(self.delay).await;
        self.inner.create_table(schema).await
    }
    async fn delete_table(&self, table: &str) -> hmap::store::Result<()> {
        tokio::time::sleep(self.delay).await;
        self.inner.delete_table(table).await
    }
    async fn alter_table(&self, table: &str, change: &hmap::store::FamilyChange) -> hmap::store::Result<()> {
        tokio::time::sleep(self.delay).await;
        self.inner.alter_table(table, change).await
    }
    async fn table_exists(&self, table: &str) -> hmap::store::Result<bool> {
        tokio::time::sleep(self.delay).await;
        self.inner.table_exists(table).await
    }
    async fn list_tables(&self) -> hmap::store::Result<Vec<String>> {
        tokio::time::sleep(self.delay).await;
        self.inner.list_tables().await
    }
    async fn describe_table(&self, table: &str) -> hmap::store::Result<hmap::schema::TableSchema> {
        tokio::time::sleep(self.delay).await;
        self.inner.describe_table(table).await
    }
    async fn get(&self, table: &str, get: &hmap::store::Get) -> hmap::store::Result<Option<hmap::store::RowResult>> {
        tokio::time::sleep(self.delay).await;
        self.inner.get(table, get).await
    }
    async fn get_many(
        &self,
        table: &str,
        gets: &[hmap::store::Get],
    ) -> hmap::store::Result<Vec<Option<hmap::store::RowResult>>> {
        tokio::time::sleep(self.delay).await;
        self.inner.get_many(table, gets).await
    }
    async fn mutate(&self, table: &str, rows: &[hmap::store::RowMutation]) -> hmap::store::Result<()> {
        tokio::time::sleep(self.delay).await;
        self.inner.mutate(table, rows).await
    }
    async fn scan<'a>(
        &'a self,
        table: &str,
        scan: &hmap::store::Scan,
    ) -> hmap::store::Result<hmap::store::RowStream<'a>> {
        tokio::time::sleep(self.delay).await;
        self.inner.scan(table, scan).await
    }
    async fn check_and_mutate(&self, table: &str, op: &hmap::store::CheckAndMutate) -> hmap::store::Result<bool> {
        if let Some(delay) = self.late {
            let (inner, table, op) = (Arc::clone(&self.inner), table.to_owned(), op.clone());
            return tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                inner.check_and_mutate(&table, &op).await
            })
            .await
            .expect("the late write ran");
        }
        tokio::time::sleep(self.delay).await;
        self.inner.check_and_mutate(table, op).await
    }
    async fn increment(&self, table: &str, op: &hmap::store::Increment) -> hmap::store::Result<Vec<i64>> {
        tokio::time::sleep(self.delay).await;
        self.inner.increment(table, op).await
    }
    async fn append(&self, table: &str, op: &hmap::store::Append) -> hmap::store::Result<hmap::store::RowResult> {
        tokio::time::sleep(self.delay).await;
        self.inner.append(table, op).await
    }
}

/// A tree write cut off by a timeout, while it takes the lock, writes, or
/// releases it, releases the lock: the next writer, which waits 3 s at
/// most, gets it, not after the 30 s lease. On the store as it is, through one
/// that delays every call, so that each cut lands mid-write, and through
/// one whose lock swaps land after their call was cut (a take the cut
/// writer's release must not miss).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_tree_write_releases_the_lock() {
    use std::time::Duration;
    let store = hmap_suite::test_store("a_cancelled_tree_write_releases_the_lock").await;
    Tree::new(Arc::clone(&store), "org").create().await.unwrap();
    let plain = Tree::new(Arc::clone(&store), "org");
    plain.insert("a", "A", None).await.unwrap();
    plain.insert("b", "B", None).await.unwrap();
    for (delay, late) in [
        (Duration::ZERO, None),
        (Duration::from_millis(4), None),
        (Duration::ZERO, Some(Duration::from_millis(20))),
    ] {
        let slow: Arc<dyn Store> = Arc::new(Delayed {
            inner: Arc::clone(&store),
            delay,
            late,
        });
        // The lease is the default (30 s); the next writer waits 3 s at
        // most, so a lock the cut write left behind fails it (a timeout),
        // however slow the store is.
        let cut = Tree::new(Arc::clone(&slow), "org");
        let next = Tree::new(Arc::clone(&slow), "org").with_lock(Duration::from_secs(30), Duration::from_secs(3));
        for (i, after) in [1u64, 2, 3, 5, 7, 9, 11, 14, 18, 22, 27, 33].into_iter().enumerate() {
            let parent = if i % 2 == 0 { Some("a") } else { None };
            let _ = tokio::time::timeout(Duration::from_millis(after), cut.move_node("b", parent)).await;
            next.move_node("b", parent)
                .await
                .unwrap_or_else(|e| panic!("delay {delay:?} (late {late:?}), cut after {after} ms: {e}"));
        }
    }
}

/// A writer that dies holding the tree's lock delays the others by its
/// lease, no longer; a writer that cannot wait that long fails with a
/// timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_writers_lock_expires_with_its_lease() {
    use std::time::{Duration, Instant};
    let store = hmap_suite::test_store("a_dead_writers_lock_expires_with_its_lease").await;
    // Long enough that the dying writer's panic (a backtrace printed under
    // RUST_BACKTRACE, on a loaded machine) ends well within it.
    let lease = Duration::from_secs(3);
    Tree::new(Arc::clone(&store), "org").create().await.unwrap();
    // A writer whose store panics on writing, after it took the lock.
    let dying = Tree::new(
        Hooked {
            inner: Arc::clone(&store),
            before_write: || panic!("the writer dies"),
        },
        "org",
    )
    .with_lock(lease, Duration::from_secs(10));
    let died = Instant::now();
    assert!(
        tokio::spawn(async move { dying.insert("001", "CEO", None).await })
            .await
            .is_err()
    );
    let impatient = Tree::new(Arc::clone(&store), "org").with_lock(lease, Duration::from_millis(50));
    let err = impatient.insert("001", "CEO", None).await.unwrap_err();
    assert!(matches!(err, hmap::Error::Store(ref e) if e.is_transient()), "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
    let patient = Tree::new(Arc::clone(&store), "org").with_lock(lease, Duration::from_secs(10));
    patient.insert("001", "CEO", None).await.unwrap();
    assert!(died.elapsed() >= lease, "the lease was respected");
    assert_eq!(patient.get("001").await.unwrap().unwrap().name, "CEO");
}

/// A student with a login counter, linked to courses (labels both ways:
/// the course's title on the student, the student's name on the course).
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "student", family(name = "i"), family(name = "c"))]
struct Student {
    #[hmap(key)]
    sid: String,
    #[hmap(family = "i")]
    name: String,
    #[hmap(family = "i", counter)]
    logins: i64,
    #[hmap(family = "c", dynamic, relation)]
    courses: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "course", family(name = "i"), family(name = "s"))]
struct Course {
    #[hmap(key)]
    cid: String,
    #[hmap(family = "i")]
    title: String,
    #[hmap(family = "i", version)]
    version: u64,
    #[hmap(family = "s", dynamic, relation)]
    students: BTreeMap<String, String>,
}

fn student(sid: &str, name: &str) -> Student {
    Student {
        sid: sid.into(),
        name: name.into(),
        logins: 0,
        courses: BTreeMap::new(),
    }
}

fn course(cid: &str, title: &str) -> Course {
    Course {
        cid: cid.into(),
        title: title.into(),
        version: 0,
        students: BTreeMap::new(),
    }
}

async fn enrolment(store: &Arc<dyn Store>) -> ManyToMany<Student, Course, Arc<dyn Store>> {
    let rel = ManyToMany::new(Arc::clone(store), "c", "s")
        .with_labels(|s: &Student| s.name.clone(), |c: &Course| c.title.clone());
    rel.left().create().await.unwrap();
    rel.right().create().await.unwrap();
    rel
}

/// Issue 26, item 10: a renamed course leaves its old title on the
/// students' lists (the left side); `verify` reports it as stale on the left
/// side, beside the renamed student's stale name on the right side, and
/// `repair` rewrites both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repair_rewrites_stale_labels_on_both_sides() {
    let store = hmap_suite::test_store("repair_rewrites_stale_labels_on_both_sides").await;
    let rel = enrolment(&store).await;
    rel.left().put(&student("s1", "Ann")).await.unwrap();
    let mut c1 = course("c1", "Algebra");
    rel.right().save(&mut c1).await.unwrap();
    rel.link("s1", "c1").await.unwrap();
    c1.title = "Linear algebra".into();
    rel.right().save(&mut c1).await.unwrap();
    rel.left().put(&student("s1", "Ann Lee")).await.unwrap();

    let report = rel.verify().await.unwrap();
    assert_eq!(
        report.stale,
        ["s1 -> c1 (right side)", "s1 -> c1 (left side)"],
        "{report:?}"
    );
    assert_eq!(report.len(), 2, "{report:?}");
    let repaired = rel.repair().await.unwrap();
    assert_eq!(repaired.stale.len(), 2, "{repaired:?}");
    assert_eq!(
        rel.rights_of("s1").await.unwrap(),
        [("c1".to_string(), "Linear algebra".to_string())]
    );
    assert_eq!(
        rel.lefts_of("c1").await.unwrap(),
        [("s1".to_string(), "Ann Lee".to_string())]
    );
    let after = rel.verify().await.unwrap();
    assert!(after.is_consistent(), "{after:?}");
}

/// Issue 26, item 15: the typed increment of a counter refuses a row that
/// holds no entity when the type has required fields (the row would not read
/// back), naming the table and the row; it creates the row (as HBase's
/// Increment does) for a type whose fields are all optional.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_increment_refuses_a_missing_entity() {
    let store = hmap_suite::test_store("a_typed_increment_refuses_a_missing_entity").await;
    let rel = enrolment(&store).await;
    let err = rel.left().increment("ghost", Student::LOGINS, 1).await.unwrap_err();
    assert!(
        matches!(&err, Error::NoSuchEntity { table: "student", key } if key.contains("ghost")),
        "{err}"
    );
    assert!(!raw_row_exists(&store, "student", "ghost").await, "nothing was written");
    rel.left().put(&student("s1", "Ann")).await.unwrap();
    assert_eq!(rel.left().increment("s1", Student::LOGINS, 2).await.unwrap(), 2);
    assert_eq!(rel.left().get("s1").await.unwrap().unwrap().logins, 2);

    // Every field optional: a counter-only row reads back, so it is made.
    let visits = Table::<Visits, _>::new(Arc::clone(&store));
    visits.create().await.unwrap();
    assert_eq!(visits.increment("p1", Visits::HITS, 3).await.unwrap(), 3);
    assert_eq!(
        visits.get("p1").await.unwrap(),
        Some(Visits {
            page: "p1".into(),
            title: None,
            hits: 3
        })
    );
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "visits", family(name = "i"))]
struct Visits {
    #[hmap(key)]
    page: String,
    title: Option<String>,
    #[hmap(counter)]
    hits: i64,
}

/// A counter-only row (an increment before the fix, or another client's):
/// the student row `ghost`, listing course c1.
async fn write_ghost(store: &Arc<dyn Store>, rel: &ManyToMany<Student, Course, Arc<dyn Store>>) {
    let ghost = rel.left().row_key("ghost").unwrap();
    store
        .mutate(
            "student",
            &[RowMutation::new(ghost)
                .put("i", "logins", 1i64.to_be_bytes().to_vec())
                .put("c", "c1", "Algebra")],
        )
        .await
        .unwrap();
}

/// Issue 26, item 15: one row that does not decode (a required cell
/// missing) is reported by `verify` in `unreadable` and the check goes on;
/// `repair` leaves it; `get_many` answers it as an error of its own and
/// the other rows as usual, as a scan does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_row_is_reported_and_the_check_goes_on() {
    let store = hmap_suite::test_store("an_unreadable_row_is_reported_and_the_check_goes_on").await;
    let rel = enrolment(&store).await;
    rel.left().put(&student("s1", "Ann")).await.unwrap();
    rel.right().put(&course("c1", "Algebra")).await.unwrap();
    rel.link("s1", "c1").await.unwrap();
    write_ghost(&store, &rel).await;
    // Something else to find: a half-written link.
    rel.left().put(&student("s2", "Bo")).await.unwrap();
    let s2 = rel.left().row_key("s2").unwrap();
    store
        .mutate("student", &[RowMutation::new(s2).put("c", "c1", "Algebra")])
        .await
        .unwrap();

    let report = rel.verify().await.unwrap();
    assert_eq!(report.unreadable.len(), 1, "{report:?}");
    assert!(report.unreadable[0].contains("ghost"), "{report:?}");
    assert!(report.unreadable[0].contains("missing"), "{report:?}");
    assert_eq!(report.missing, ["s2 -> c1 (right side)"], "{report:?}");
    assert!(!report.is_consistent());
    assert!(report.to_string().contains("1 unreadable"), "{report}");
    let repaired = rel.repair().await.unwrap();
    assert_eq!(repaired.unreadable.len(), 1, "{repaired:?}");
    let after = rel.verify().await.unwrap();
    assert_eq!((after.len(), after.unreadable.len()), (1, 1), "{after:?}");

    // get_many: the ghost is an error of its own, the others read.
    let rows = rel.left().get_many(["s1", "ghost", "nobody", "s2"]).await.unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].as_ref().unwrap().as_ref().unwrap().name, "Ann");
    assert!(
        matches!(&rows[1], Err(Error::MissingCell { table: "student", row, .. }) if row.contains("ghost")),
        "{:?}",
        rows[1]
    );
    assert!(matches!(rows[2], Ok(None)), "{:?}", rows[2]);
    assert_eq!(rows[3].as_ref().unwrap().as_ref().unwrap().name, "Bo");
    // As a scan reports it: that row an error, the scan going on.
    let scanned: Vec<hmap::Result<Student>> = rel.left().scan(hmap::Query::all()).await.unwrap().collect().await;
    assert_eq!(scanned.len(), 3);
    assert!(scanned[0].is_err() && scanned[1].is_ok() && scanned[2].is_ok());
}

/// Issue 26, item 16: `Error::Linked` shows the row's key parts, as the
/// guide promises of every error naming a row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_error_shows_the_key_parts() {
    let store = hmap_suite::test_store("a_linked_error_shows_the_key_parts").await;
    let rel = enrolment(&store).await;
    rel.left().put(&student("s1", "Ann")).await.unwrap();
    rel.right().put(&course("c1", "Algebra")).await.unwrap();
    rel.link("s1", "c1").await.unwrap();
    let err = rel.left().delete("s1").await.unwrap_err();
    assert!(
        matches!(&err, Error::Linked { table: "student", row, family: "c" } if row.ends_with("(sid=\"s1\")")),
        "{err}"
    );
}

/// Issue 26, item 15, in an index: a row that does not read (its required
/// email deleted behind the index's back) is reported in `unreadable` and
/// the check goes on; its entry stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_reports_an_unreadable_row_and_goes_on() {
    let store = hmap_suite::test_store("an_index_reports_an_unreadable_row_and_goes_on").await;
    let by_city = Index::new(Arc::clone(&store), "account_by_city", |a: &Account| a.city.clone());
    by_city.table().create().await.unwrap();
    by_city.create().await.unwrap();
    for (id, city) in [(1, "Hangzhou"), (2, "Beijing"), (3, "Hangzhou")] {
        by_city.put(&account(id, "a@x", city)).await.unwrap();
    }
    let two = by_city.table().row_key(2u64).unwrap();
    let one = by_city.table().row_key(1u64).unwrap();
    store
        .mutate(
            "account",
            &[
                RowMutation::new(two).delete_column("a", "email"),
                // And a row gone behind its back: an absent entry.
                RowMutation::new(one).delete_row(),
            ],
        )
        .await
        .unwrap();
    let report = by_city.verify().await.unwrap();
    assert_eq!(report.unreadable.len(), 1, "{report:?}");
    assert!(report.unreadable[0].contains("email"), "{report:?}");
    assert_eq!(report.absent.len(), 1, "{report:?}");
    let repaired = by_city.repair().await.unwrap();
    assert_eq!(
        (repaired.absent.len(), repaired.unreadable.len()),
        (1, 1),
        "{repaired:?}"
    );
    let after = by_city.verify().await.unwrap();
    assert_eq!((after.len(), after.unreadable.len()), (1, 1), "{after:?}");
}

/// `link_each`: the pairs whose entities exist are linked, with their
/// labels, each of the others refused naming its missing entity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_each_links_every_pair_it_can_and_names_the_others() {
    let store = hmap_suite::test_store("link_each_links_every_pair_it_can").await;
    let rel = person_role(&store).await;
    rel.left().put(&person("001", "Xiaohei")).await.unwrap();
    rel.left().put(&person("002", "Xiaobai")).await.unwrap();
    rel.right().put(&role("100", "monitor")).await.unwrap();
    let pairs = [
        ("001".to_string(), "100".to_string()),
        ("001".into(), "999".into()),
        ("002".into(), "100".into()),
        ("998".into(), "100".into()),
    ];
    let outcome = rel.link_each(&pairs).await.unwrap();
    assert!(outcome[0].is_applied() && outcome[2].is_applied(), "{outcome:?}");
    match &outcome[1] {
        hmap::store::RowOutcome::Refused(e) => assert_no_such_entity_ref(e, "role", "999"),
        other => panic!("{other:?}"),
    }
    match &outcome[3] {
        hmap::store::RowOutcome::Refused(e) => assert_no_such_entity_ref(e, "person", "998"),
        other => panic!("{other:?}"),
    }
    let p1 = rel.left().get("001").await.unwrap().unwrap();
    assert_eq!(p1.roles, BTreeMap::from([("100".to_string(), "monitor".to_string())]));
    let r = rel.right().get("100").await.unwrap().unwrap();
    assert_eq!(r.persons.keys().collect::<Vec<_>>(), ["001", "002"]);
    assert!(
        rel.right().get("999").await.unwrap().is_none(),
        "no row holding only the relation"
    );
    let report = rel.verify().await.unwrap();
    assert!(report.missing.is_empty() && report.dangling.is_empty(), "{report:?}");
}

fn assert_no_such_entity_ref(err: &Error, want_table: &str, want_row: &str) {
    match err {
        Error::NoSuchEntity { table, key } => {
            assert_eq!(*table, want_table);
            assert!(key.contains(want_row), "{key}");
        }
        other => panic!("expected NoSuchEntity for {want_table} {want_row}, got {other}"),
    }
}
