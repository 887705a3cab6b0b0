//! The chaos test: NativeStore under a cluster whose servers die, on the
//! model of HBase's `IntegrationTestBigLinkedList` under its `ChaosMonkey`.
//!
//! A generator writes linked lists through hmap's typed API while a monkey
//! breaks the cluster: each of four workers writes nodes in batches (by
//! `Table::put_many`, by `Table::loader`, in turn), each node naming the
//! node before it, counts its batches with `Table::increment`, and links
//! its list to tags through a `ManyToMany` relation; a reader scans a
//! table written beforehand, slowly, again and again. The monkey splits,
//! moves and merges the table's regions, kills (`kill -9`) the region
//! server holding `hbase:meta` and the table's first region and starts it
//! again, fails the master over to the backup, moves `hbase:meta`, and
//! restarts every region server in turn (`rolling-restart`, gracefully;
//! the long run also with `kill -9`).
//!
//! Then the verifier checks that no acknowledged node is missing, no node
//! names a node that is not there, every node but each list's last is
//! named by exactly one other, every counter equals its acknowledged
//! increments, the relation verifies clean, every pass of the slow scan
//! returned every row exactly once and in order, no call failed (calls
//! have a deadline of 90 s, what a rolling `kill -9` costs HBase's Java
//! client here with room to spare), and no call returned after its
//! deadline. It prints the longest stall of the writers during each fault,
//! the figures `docs/reliability.md` records.
//!
//! It needs the cluster of `scripts/hbase/cluster` (ZooKeeper, two masters,
//! three region servers, each its own process), started afresh:
//!
//! ```sh
//! export $(scripts/hbase/cluster start)
//! cargo test --release --test chaos -- --include-ignored --nocapture
//! HMAP_CHAOS=long cargo test --release --test chaos -- --include-ignored --nocapture
//! ```
//!
//! `HMAP_CHAOS=long` runs every fault three times over, with rolling
//! `kill -9` restarts besides the graceful ones.

mod chaos_monkey {
    use std::collections::{BTreeMap, BTreeSet};
    use std::process::Command;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use futures_util::StreamExt;
    use hmap::relation::ManyToMany;
    use hmap::schema::{FamilySchema, TableSchema};
    use hmap::store::native::{NativeConfig, NativeStore};
    use hmap::store::{Loader, Scan, Store};
    use hmap::{HTable, Query, Table};

    /// Each call's deadline.
    const CALL_TIMEOUT: Duration = Duration::from_secs(90);
    /// How much later than its deadline a call may return (the runtime's
    /// scheduling on a busy 2-core machine).
    const LATE: Duration = Duration::from_secs(2);
    /// The load at its pace between two faults (each fault's command
    /// returns once the cluster is stable again), so that their stalls do
    /// not run together; short, as every CI run pays it.
    const BETWEEN_FAULTS: Duration = Duration::from_secs(1);
    const WORKERS: u32 = 4;
    const BATCH: u64 = 50;
    /// Rows of the table the slow reader scans.
    const STATIC_ROWS: usize = 20_000;
    const STATIC: &str = "chaos_static";

    #[derive(HTable, Debug, Clone, PartialEq)]
    #[hmap(table = "chaos_node", family(name = "n"))]
    struct Node {
        #[hmap(key)]
        id: String,
        /// The node before this one in its worker's list (empty: the first).
        #[hmap(family = "n")]
        prev: String,
        #[hmap(family = "n")]
        worker: u32,
        #[hmap(family = "n")]
        seq: u64,
    }

    #[derive(HTable, Debug, Clone, PartialEq)]
    #[hmap(table = "chaos_count", family(name = "c"))]
    struct Count {
        #[hmap(key)]
        worker: String,
        #[hmap(family = "c", counter)]
        batches: i64,
    }

    #[derive(HTable, Debug, Clone, PartialEq)]
    #[hmap(table = "chaos_list", family(name = "i"), family(name = "t"))]
    struct List {
        #[hmap(key)]
        id: String,
        #[hmap(family = "i")]
        name: String,
        /// t:<tag>=tag name
        #[hmap(family = "t", dynamic, relation)]
        tags: BTreeMap<String, String>,
    }

    #[derive(HTable, Debug, Clone, PartialEq)]
    #[hmap(table = "chaos_tag", family(name = "i"), family(name = "l"))]
    struct Tag {
        #[hmap(key)]
        id: String,
        #[hmap(family = "i")]
        name: String,
        /// l:<list>=list name
        #[hmap(family = "l", dynamic, relation)]
        lists: BTreeMap<String, String>,
    }

    /// A node's key: its worker and place, mixed (splitmix64) so that the
    /// nodes spread over the whole key space, and so over every region.
    fn node_id(worker: u32, seq: u64) -> String {
        let mut z = (u64::from(worker) << 40 | seq).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        format!("{:016x}", z ^ (z >> 31))
    }

    fn static_row(i: usize) -> String {
        format!("s{i:06}")
    }

    /// Runs a command of `scripts/hbase/cluster`; its standard output, or a
    /// panic with what it said.
    fn cluster(args: &[&str]) -> String {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/hbase/cluster");
        let output = Command::new(script)
            .args(args)
            .output()
            .expect("scripts/hbase/cluster runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "cluster {}: {}\n{stdout}{}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    async fn cluster_async(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            cluster(&args)
        })
        .await
        .expect("the cluster command's thread")
    }

    /// The part (`rsK`) a `where` or `meta-server` line names.
    fn part_of(line: &str) -> String {
        line.split_whitespace().next().expect("a part").to_string()
    }

    /// What the run saw.
    #[derive(Default)]
    struct Record {
        /// Per worker: the nodes acknowledged (by seq), and when each
        /// write was acknowledged.
        acked: Mutex<BTreeMap<u32, Vec<u64>>>,
        ack_times: Mutex<Vec<(u32, Instant)>>,
        increments: Mutex<BTreeMap<u32, i64>>,
        /// Increments that failed and may have been applied.
        maybe_incremented: Mutex<BTreeMap<u32, i64>>,
        links: Mutex<BTreeSet<(String, String)>>,
        failures: Mutex<Vec<String>>,
        late: Mutex<Vec<String>>,
        calls: AtomicU64,
        scan_passes: AtomicU64,
    }

    impl Record {
        /// Notes a call's outcome and duration; `Ok` passes through.
        fn call<T>(&self, what: &str, started: Instant, result: hmap::Result<T>) -> Option<T> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let took = started.elapsed();
            if took > CALL_TIMEOUT + LATE {
                self.late.lock().expect("lock").push(format!("{what} took {took:?}"));
            }
            match result {
                Ok(value) => Some(value),
                Err(e) => {
                    self.failures
                        .lock()
                        .expect("lock")
                        .push(format!("{what} after {took:?}: {e} ({e:?})"));
                    None
                }
            }
        }

        fn acked(&self, worker: u32, seqs: impl IntoIterator<Item = u64>) {
            self.acked.lock().expect("lock").entry(worker).or_default().extend(seqs);
            self.ack_times.lock().expect("lock").push((worker, Instant::now()));
        }

        /// The longest time a worker went without an acknowledgement,
        /// of the waits under way during `window` (a wait that began in it
        /// counts whole, however long after it it ended).
        fn longest_stall(&self, window: (Instant, Instant)) -> Duration {
            let times = self.ack_times.lock().expect("lock");
            let mut longest = Duration::ZERO;
            for worker in 0..WORKERS {
                let acks: Vec<Instant> = times.iter().filter(|(w, _)| *w == worker).map(|(_, at)| *at).collect();
                for pair in acks.windows(2) {
                    let (from, to) = (pair[0], pair[1]);
                    if from <= window.1 && to >= window.0 {
                        longest = longest.max(to - from);
                    }
                }
            }
            longest
        }
    }

    /// One worker: batches of linked nodes until `stop`, each batch sent
    /// again until acknowledged (a failure is recorded, and fails the test).
    async fn worker(
        worker: u32,
        store: NativeStore,
        record: Arc<Record>,
        stop: Arc<AtomicBool>,
        relation: Arc<ManyToMany<List, Tag, NativeStore>>,
    ) {
        let nodes = Table::<Node, _>::new(store.clone());
        let counts = Table::<Count, _>::new(store.clone());
        let mut seq = 0u64;
        let mut round = 0u64;
        while !stop.load(Ordering::SeqCst) {
            let batch: Vec<Node> = (seq..seq + BATCH)
                .map(|s| Node {
                    id: node_id(worker, s),
                    prev: if s == 0 { String::new() } else { node_id(worker, s - 1) },
                    worker,
                    seq: s,
                })
                .collect();
            loop {
                let started = Instant::now();
                let written = if round.is_multiple_of(2) {
                    nodes.put_many(&batch).await
                } else {
                    let mut loader = nodes.loader();
                    let mut added = Ok(());
                    for node in &batch {
                        added = loader.add(node).await;
                        if added.is_err() {
                            break;
                        }
                    }
                    match added {
                        Ok(()) => loader
                            .finish()
                            .await
                            .map(|_| ())
                            .map_err(|e| hmap::Error::Store(e.into())),
                        Err(e) => Err(e),
                    }
                };
                if record.call("a batch of nodes", started, written).is_some() {
                    break;
                }
                if stop.load(Ordering::SeqCst) {
                    return;
                }
            }
            record.acked(worker, seq..seq + BATCH);
            seq += BATCH;
            let started = Instant::now();
            let incremented = counts.increment(format!("w{worker}"), Count::BATCHES, 1).await;
            let failed_maybe = matches!(&incremented, Err(hmap::Error::Store(e)) if e.maybe_applied());
            match record.call("an increment", started, incremented) {
                Some(_) => *record.increments.lock().expect("lock").entry(worker).or_default() += 1,
                None if failed_maybe => {
                    *record
                        .maybe_incremented
                        .lock()
                        .expect("lock")
                        .entry(worker)
                        .or_default() += 1
                }
                None => {}
            }
            if round.is_multiple_of(5) {
                let (list, tag) = (format!("l{worker}"), format!("t{}", round % 7));
                let started = Instant::now();
                let linked = relation.link(list.as_str(), tag.as_str()).await;
                if record.call("a relation link", started, linked).is_some() {
                    record.links.lock().expect("lock").insert((list, tag));
                }
            }
            round += 1;
            // A steady load, not a flood: the cluster's JVMs share the
            // machine's cores with the test.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Scans the static table again and again, slowly, until `stop`: each
    /// pass must return every row exactly once, in order.
    async fn slow_reader(store: NativeStore, record: Arc<Record>, stop: Arc<AtomicBool>) {
        while !stop.load(Ordering::SeqCst) {
            let started = Instant::now();
            let mut rows = match store.scan(STATIC, &Scan::all().batch_size(100)).await {
                Ok(rows) => rows,
                Err(e) => {
                    record.call::<()>("a scan's start", started, Err(e.into()));
                    continue;
                }
            };
            let mut expected = 0;
            let mut failed = None;
            while let Some(row) = rows.next().await {
                match row {
                    Ok(row) => {
                        let want = static_row(expected);
                        if row.row != want.as_bytes() {
                            failed = Some(format!(
                                "the scan's row {expected} is {}, not {want} (a row repeated or skipped)",
                                String::from_utf8_lossy(&row.row)
                            ));
                            break;
                        }
                        expected += 1;
                        if expected % 100 == 0 {
                            tokio::time::sleep(Duration::from_millis(25)).await;
                        }
                    }
                    Err(e) => {
                        failed = Some(format!("the scan after {expected} rows: {e} ({e:?})"));
                        break;
                    }
                }
            }
            if failed.is_none() && expected != STATIC_ROWS {
                failed = Some(format!("the scan ended after {expected} of {STATIC_ROWS} rows"));
            }
            record.calls.fetch_add(1, Ordering::Relaxed);
            match failed {
                Some(failure) => record.failures.lock().expect("lock").push(failure),
                None => {
                    record.scan_passes.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// The monkey's faults, in order.
    async fn monkey(long: bool) -> Vec<(String, Instant, Instant)> {
        let mut faults = Vec::new();
        let rounds = if long { 3 } else { 1 };
        for round in 0..rounds {
            let mut fault = |name: String, started: Instant| faults.push((name, started, Instant::now()));

            let started = Instant::now();
            cluster_async(&["split", "chaos_node", &format!("{:x}", 8 + round)]).await;
            fault("split".into(), started);
            tokio::time::sleep(BETWEEN_FAULTS).await;

            let started = Instant::now();
            cluster_async(&["move", "chaos_node", "4"]).await;
            fault("move".into(), started);
            tokio::time::sleep(BETWEEN_FAULTS).await;

            // The server of hbase:meta gets the node table's first region
            // and the scanned table too, then dies.
            let meta = part_of(&cluster_async(&["meta-server"]).await);
            for (table, row) in [("chaos_node", "0"), (STATIC, "s0")] {
                let at = part_of(&cluster_async(&["where", table, row]).await);
                if at != meta {
                    cluster_async(&["move", table, row, "--to", &meta]).await;
                }
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
            let started = Instant::now();
            cluster_async(&["kill", &meta]).await;
            cluster_async(&["wait-stable", "180"]).await;
            fault(
                format!("kill -9 of {meta}, holding hbase:meta and a region of each table"),
                started,
            );
            cluster_async(&["start-part", &meta]).await;
            tokio::time::sleep(BETWEEN_FAULTS).await;

            let started = Instant::now();
            cluster_async(&["merge", "chaos_node"]).await;
            fault("merge".into(), started);
            tokio::time::sleep(BETWEEN_FAULTS).await;

            // The active master dies; the backup takes over; the dead one
            // comes back as the backup.
            let status = cluster_async(&["status"]).await;
            let active = status
                .lines()
                .find_map(|l| l.strip_prefix("active-master "))
                .map(part_of)
                .unwrap_or_else(|| "master".to_string());
            let started = Instant::now();
            cluster_async(&["kill", &active]).await;
            cluster_async(&["start-part", &active]).await;
            cluster_async(&["wait-stable", "180"]).await;
            fault(
                format!("kill -9 of the active master ({active}), failover to the backup"),
                started,
            );
            tokio::time::sleep(BETWEEN_FAULTS).await;

            let started = Instant::now();
            cluster_async(&["move-meta"]).await;
            fault("hbase:meta moved".into(), started);
            tokio::time::sleep(BETWEEN_FAULTS).await;

            let started = Instant::now();
            cluster_async(&["rolling-restart"]).await;
            cluster_async(&["wait-stable", "180"]).await;
            fault("rolling graceful restart of every region server".into(), started);
            tokio::time::sleep(BETWEEN_FAULTS).await;

            if long {
                let started = Instant::now();
                cluster_async(&["rolling-restart", "--kill"]).await;
                cluster_async(&["wait-stable", "180"]).await;
                fault("rolling kill -9 and restart of every region server".into(), started);
                tokio::time::sleep(BETWEEN_FAULTS).await;
            }
        }
        faults
    }

    async fn store() -> NativeStore {
        let masters = std::env::var("HMAP_NATIVE")
            .expect("HMAP_NATIVE names the masters of scripts/hbase/cluster: export $(scripts/hbase/cluster start)");
        assert!(
            std::env::var("HMAP_CLUSTER_DIR").is_ok(),
            "the chaos test runs on scripts/hbase/cluster's cluster, which it breaks: export $(scripts/hbase/cluster start)"
        );
        let config = NativeConfig::new(masters.split(',')).call_timeout(CALL_TIMEOUT);
        NativeStore::connect(config).await.expect("the cluster answers")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs a real HBase: scripts/hbase/cluster's cluster of separate processes, which it breaks"]
    async fn nothing_acknowledged_is_lost_while_the_cluster_breaks() {
        let long = std::env::var("HMAP_CHAOS").is_ok_and(|v| v == "long");
        let store = store().await;
        let nodes = Table::<Node, _>::new(store.clone());
        let counts = Table::<Count, _>::new(store.clone());
        for table in ["chaos_node", "chaos_count", "chaos_list", "chaos_tag", STATIC] {
            if store.table_exists(table).await.expect("listed") {
                store.delete_table(table).await.expect("an old run's table deleted");
            }
        }
        nodes.create().await.expect("created");
        counts.create().await.expect("created");
        let relation = Arc::new(
            ManyToMany::new(store.clone(), "t", "l").with_labels(|l: &List| l.name.clone(), |t: &Tag| t.name.clone()),
        );
        relation.left().create().await.expect("created");
        relation.right().create().await.expect("created");
        let lists: Vec<List> = (0..WORKERS)
            .map(|w| List {
                id: format!("l{w}"),
                name: format!("list {w}"),
                tags: BTreeMap::new(),
            })
            .collect();
        relation.left().put_many(&lists).await.expect("lists");
        let tags: Vec<Tag> = (0..7)
            .map(|t| Tag {
                id: format!("t{t}"),
                name: format!("tag {t}"),
                lists: BTreeMap::new(),
            })
            .collect();
        relation.right().put_many(&tags).await.expect("tags");
        store
            .create_table(&TableSchema::new(STATIC).family(FamilySchema::new("f")))
            .await
            .expect("created");
        let mut loader = Loader::new(&store, STATIC);
        for i in 0..STATIC_ROWS {
            loader
                .row(static_row(i))
                .put("f", "q", i.to_be_bytes())
                .end()
                .await
                .expect("loaded");
        }
        loader.finish().await.expect("loaded");

        let record = Arc::new(Record::default());
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = tokio::task::JoinSet::new();
        for w in 0..WORKERS {
            tasks.spawn(worker(w, store.clone(), record.clone(), stop.clone(), relation.clone()));
        }
        tasks.spawn(slow_reader(store.clone(), record.clone(), stop.clone()));
        let run_started = Instant::now();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let quiet = record.longest_stall((run_started, Instant::now()));
        let faults = monkey(long).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        stop.store(true, Ordering::SeqCst);
        while let Some(done) = tasks.join_next().await {
            done.expect("a worker or the reader panicked");
        }
        let run = run_started.elapsed();

        // The verifier.
        let mut stored: BTreeMap<String, Node> = BTreeMap::new();
        let mut rows = nodes.scan(Query::all()).await.expect("the nodes scanned");
        while let Some(node) = rows.next().await {
            let node = node.expect("a node reads");
            assert!(stored.insert(node.id.clone(), node).is_none(), "a node scanned twice");
        }
        let acked = record.acked.lock().expect("lock").clone();
        let mut lost = Vec::new();
        for (worker, seqs) in &acked {
            for &seq in seqs {
                if !stored.contains_key(&node_id(*worker, seq)) {
                    lost.push((*worker, seq));
                }
            }
        }
        let undefined: Vec<&Node> = stored
            .values()
            .filter(|n| !n.prev.is_empty() && !stored.contains_key(&n.prev))
            .collect();
        let mut referenced: BTreeMap<&str, usize> = BTreeMap::new();
        for node in stored.values().filter(|n| !n.prev.is_empty()) {
            *referenced.entry(node.prev.as_str()).or_default() += 1;
        }
        let twice: Vec<_> = referenced.iter().filter(|(_, n)| **n > 1).collect();
        let unreferenced: Vec<&Node> = stored
            .values()
            .filter(|n| !referenced.contains_key(n.id.as_str()))
            .filter(|n| stored.contains_key(&node_id(n.worker, n.seq + 1)))
            .collect();
        let increments = record.increments.lock().expect("lock").clone();
        let maybe = record.maybe_incremented.lock().expect("lock").clone();
        let mut counters_off = Vec::new();
        for worker in 0..WORKERS {
            let stored = counts
                .get(format!("w{worker}"))
                .await
                .expect("a counter reads")
                .map_or(0, |c| c.batches);
            let acked = increments.get(&worker).copied().unwrap_or(0);
            let extra = maybe.get(&worker).copied().unwrap_or(0);
            if stored < acked || stored > acked + extra {
                counters_off.push(format!(
                    "worker {worker}: {stored} stored, {acked} acknowledged (+{extra} unknown)"
                ));
            }
        }
        let report = relation.verify().await.expect("the relation verifies");
        let links = record.links.lock().expect("lock").clone();
        for (list, tag) in &links {
            let rights = relation.rights_of(list.as_str()).await.expect("rights");
            assert!(
                rights.iter().any(|(t, _)| t == tag),
                "link {list} -> {tag} acknowledged, not stored"
            );
        }

        println!(
            "chaos: {run:?} in all, {} calls, {} nodes acknowledged, {} stored, {} links, {} scan passes",
            record.calls.load(Ordering::Relaxed),
            acked.values().map(Vec::len).sum::<usize>(),
            stored.len(),
            links.len(),
            record.scan_passes.load(Ordering::Relaxed)
        );
        println!(
            "chaos: the writers' longest stall with no fault: {:.1} s",
            quiet.as_secs_f64()
        );
        for (name, started, ended) in &faults {
            println!(
                "chaos: {name}: took {:.1} s, the writers' longest stall {:.1} s",
                (*ended - *started).as_secs_f64(),
                record.longest_stall((*started, *ended)).as_secs_f64()
            );
        }
        let failures = record.failures.lock().expect("lock").clone();
        let late = record.late.lock().expect("lock").clone();
        assert!(failures.is_empty(), "{} calls failed: {failures:#?}", failures.len());
        assert!(late.is_empty(), "calls returned after their deadline: {late:#?}");
        assert!(
            lost.is_empty(),
            "{} acknowledged nodes lost: {:?}",
            lost.len(),
            &lost[..lost.len().min(20)]
        );
        assert!(undefined.is_empty(), "{} nodes name a node not stored", undefined.len());
        assert!(twice.is_empty(), "nodes named by two: {twice:?}");
        assert!(unreferenced.is_empty(), "{} nodes no node names", unreferenced.len());
        assert!(counters_off.is_empty(), "counters: {counters_off:?}");
        assert!(report.is_empty(), "the relation: {report:?}");
        assert!(record.scan_passes.load(Ordering::Relaxed) > 0, "no scan pass finished");
    }
}
