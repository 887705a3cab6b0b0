//! One-to-many trees in one table: the seeds' org chart.

use futures_util::StreamExt;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::Report;
use crate::clock::{RowSet, next_timestamp_after, wall_clock};
use crate::error::{Error, Result};
use crate::key::{KeyFormat, KeySchema, PartKind, PartSpec, Segment, Width};
use crate::schema::{FamilySchema, TableSchema};
use crate::store::{CheckAndMutate, Get, Mutation, RowMutation, RowResult, Scan, Store, StoreError, prefix_end};

const INFO: &str = "i";
const NAME: &str = "n";
const PARENT: &str = "p";
const CHILDREN: &str = "c";
/// The row of the writers' lock: not a node key (those are `<0|1>_<id>`).
const LOCK_ROW: &str = "lock";
/// The lock's cell, in family `i`.
const LOCK: &str = "l";

/// A node of a [`Tree`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TreeNode {
    /// The node's id (no `_`: it is part of a text key).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its parent's id; `None` for a top-level node.
    pub parent: Option<String>,
    /// Its children: id -> name, as the node lists them.
    pub children: BTreeMap<String, String>,
}

/// What [`Tree::delete`] does with a node's children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteMode {
    /// Refuse to delete a node that has children.
    Refuse,
    /// Delete the node and everything below it, deepest first.
    Subtree,
}

/// A tree in one table, laid out as the seeds' org chart:
///
/// | rowkey | `i:n` | `i:p` | `c:<id>` |
/// |---|---|---|---|
/// | `0_001` (top level) | name | | child name |
/// | `1_002` (below) | name | parent id | child name |
///
/// Top-level nodes are one prefix scan (`0_`); a node's children are listed
/// on it, its parent is named on it.
///
/// **The child is authoritative**: a node's row and its parent pointer are
/// the truth, the parents' child lists mirror them. Writes go to the node
/// first, then to the parents' lists, all at one timestamp, so
/// [`repair`](Tree::repair) can rebuild the lists from the nodes.
///
/// **One writer at a time.** A move reads the ancestry it must not create
/// a cycle in, and rewrites rows that another move may be rewriting; two at
/// once could form a cycle, or leave a node under two keys. So every write
/// ([`insert`](Tree::insert), [`move_node`](Tree::move_node),
/// [`delete`](Tree::delete), [`repair`](Tree::repair)) holds the tree's
/// lock, a lease in the table's `lock` row taken and released by
/// check-and-mutate, for every thread and process alike. A writer that dies
/// holding it delays the others by the lease (30 s by default, see
/// [`with_lock`](Tree::with_lock)). The lock also records the timestamp of
/// the last operation, and the next one is stamped later (waiting, if its
/// clock is behind), so operations apply in the order they held the lock.
/// (In the process, an operation is stamped as a write of the `lock` row:
/// the rows it writes are known only once it holds the lock, and every
/// write of the tree holds it, so the lock row and the recorded floor order
/// them all.)
/// Reads take no lock.
pub struct Tree<S> {
    store: S,
    table: &'static str,
    key: &'static KeySchema,
    lease: Duration,
    lock_wait: Duration,
}

/// The writers' lock as stored: `until` (ms, big-endian i64), `last` (the
/// timestamp of the last operation, likewise), then the holder's token
/// (empty when free).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LockState {
    until: i64,
    last: i64,
    holder: Bytes,
}

impl LockState {
    fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(16 + self.holder.len());
        out.extend_from_slice(&self.until.to_be_bytes());
        out.extend_from_slice(&self.last.to_be_bytes());
        out.extend_from_slice(&self.holder);
        Bytes::from(out)
    }

    /// The stored lock; a value it cannot read is a free lock.
    fn decode(value: &[u8]) -> LockState {
        let field = |at: usize| {
            value
                .get(at..at + 8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map_or(0, i64::from_be_bytes)
        };
        LockState {
            until: field(0),
            last: field(8),
            holder: Bytes::copy_from_slice(value.get(16..).unwrap_or_default()),
        }
    }
}

/// The lock, held: what the holder wrote, to release or renew it.
#[derive(Debug)]
struct Held {
    stored: Bytes,
    state: LockState,
    taken: Instant,
}

/// A token no other holder of a tree lock has: the process, a counter, and
/// the time (for processes on other hosts with the same id).
fn lock_token() -> Bytes {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Bytes::from(format!("{}-{n}-{nanos}", std::process::id()))
}

impl<S> std::fmt::Debug for Tree<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tree").field("table", &self.table).finish()
    }
}

/// An older row of a node, by id and rowkey, left by a move cut off half-way.
type StaleCopy = (String, Bytes);

/// What [`Tree::all_nodes`] reads: the nodes by id, the stale copies, and the
/// keys of rows holding only a child list.
type AllNodes = (BTreeMap<String, TreeNode>, Vec<StaleCopy>, Vec<Bytes>);

/// `<0|1>_<id>`: the level (0 for top-level nodes), then the id.
static TREE_SEGMENTS: [Segment; 2] = [
    Segment::Part(PartSpec::new("level", PartKind::U8).width(Width::Fixed(1))),
    Segment::Part(PartSpec::new("id", PartKind::Str)),
];
static TREE_KEY: KeySchema = KeySchema::from_static(KeyFormat::text(), &TREE_SEGMENTS);

impl<S: Store> Tree<S> {
    /// The tree stored in `table`.
    pub fn new(store: S, table: &'static str) -> Self {
        Tree {
            store,
            table,
            key: &TREE_KEY,
            lease: Duration::from_secs(30),
            lock_wait: Duration::from_secs(30),
        }
    }

    /// How long a writer may hold the lock before others may take it over
    /// (30 s by default; long operations renew it), and how long a writer
    /// waits for it before failing with a timeout (30 s by default).
    pub fn with_lock(mut self, lease: Duration, wait: Duration) -> Self {
        self.lease = lease;
        self.lock_wait = wait;
        self
    }

    async fn read_lock(&self) -> std::result::Result<Option<Bytes>, StoreError> {
        Ok(self
            .store
            .get(self.table, &Get::new(LOCK_ROW).column(INFO, LOCK))
            .await?
            .and_then(|r| r.value(INFO, LOCK)))
    }

    /// Replaces the lock's value if it is still `expected`. Stamped by the
    /// server, so that it needs no clock agreement: two writes in one
    /// millisecond are ordered by the server, the later one wins.
    async fn swap_lock(&self, expected: Option<Bytes>, value: Bytes) -> std::result::Result<bool, StoreError> {
        self.store
            .check_and_mutate(
                self.table,
                &CheckAndMutate::new(RowMutation::new(LOCK_ROW).put(INFO, LOCK, value), INFO, LOCK, expected),
            )
            .await
    }

    fn lock_timeout(&self, started: Instant) -> Error {
        Error::Store(StoreError::Timeout {
            table: self.table.into(),
            operation: "waiting for the tree's writer lock",
            elapsed: started.elapsed(),
        })
    }

    /// One attempt at the lock: `Some` once held (also when an earlier
    /// attempt took it though its answer was lost), `None` while another
    /// writer holds it.
    async fn try_lock(&self, token: &Bytes, started: Instant) -> std::result::Result<Option<Held>, StoreError> {
        let stored = self.read_lock().await?;
        let current = stored.as_deref().map(LockState::decode);
        if let Some(state) = current.as_ref().filter(|s| s.holder == *token) {
            return Ok(Some(Held {
                stored: stored.clone().unwrap_or_default(),
                state: state.clone(),
                taken: started,
            }));
        }
        let last = current.as_ref().map_or(0, |s| s.last);
        let free = current
            .as_ref()
            .is_none_or(|s| s.holder.is_empty() || s.until < wall_clock());
        if !free {
            return Ok(None);
        }
        let state = LockState {
            until: wall_clock().saturating_add(millis(self.lease)),
            last,
            holder: token.clone(),
        };
        let value = state.encode();
        Ok(self.swap_lock(stored, value.clone()).await?.then(|| Held {
            stored: value,
            state,
            taken: Instant::now(),
        }))
    }

    /// Takes the writers' lock: waits while another writer holds an
    /// unexpired lease, up to the lock wait. Transient store errors are
    /// retried: a take that was applied though its answer was lost is found
    /// on the next read, by the token.
    async fn lock(&self) -> Result<Held> {
        let token = lock_token();
        let started = Instant::now();
        let mut backoff = Duration::from_millis(1);
        loop {
            let outcome = self.try_lock(&token, started).await;
            match outcome {
                Ok(Some(held)) => return Ok(held),
                Ok(None) => {}
                Err(e) if e.is_transient() => {}
                Err(e) => return Err(e.into()),
            }
            if started.elapsed() >= self.lock_wait {
                return Err(self.lock_timeout(started));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(50));
        }
    }

    /// Extends the lease when half of it has passed; fails if another
    /// writer took the lock over meanwhile.
    async fn renew(&self, held: &mut Held) -> Result<()> {
        if held.taken.elapsed() < self.lease / 2 {
            return Ok(());
        }
        let state = LockState {
            until: wall_clock().saturating_add(millis(self.lease)),
            ..held.state.clone()
        };
        let value = state.encode();
        let taken = Instant::now();
        if self.swap_lock(Some(held.stored.clone()), value.clone()).await? {
            *held = Held {
                stored: value,
                state,
                taken,
            };
            return Ok(());
        }
        Err(Error::Query {
            table: self.table,
            reason: "the writer lock's lease ran out and another writer took it; run verify".into(),
        })
    }

    /// Releases the lock, recording `ts` as the last operation's timestamp.
    /// Transient errors are retried (a release that was applied though its
    /// answer was lost finds the lock no longer held).
    async fn unlock(&self, held: &Held, ts: i64) -> Result<()> {
        let free = LockState {
            until: 0,
            last: ts.max(held.state.last),
            holder: Bytes::new(),
        }
        .encode();
        let started = Instant::now();
        let mut backoff = Duration::from_millis(1);
        loop {
            match self.swap_lock(Some(held.stored.clone()), free.clone()).await {
                // Not ours any more: released by an attempt whose answer was
                // lost, or taken over after the lease.
                Ok(_) => return Ok(()),
                Err(e) if e.is_transient() && started.elapsed() < self.lock_wait => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(50));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Takes the lock for a write, and the write's timestamp: later than
    /// the last one. The write ends with [`release`](Self::release).
    async fn lock_for_write(&self) -> Result<(Held, i64)> {
        let held = self.lock().await?;
        let ts = next_timestamp_after(&RowSet::of(self.table, LOCK_ROW.as_bytes()), held.state.last);
        Ok((held, ts))
    }

    /// Releases the lock after a write, whatever its outcome; the write's
    /// error comes first.
    async fn release<T>(&self, held: &Held, ts: i64, result: Result<T>) -> Result<T> {
        let released = self.unlock(held, ts).await;
        let value = result?;
        released?;
        Ok(value)
    }

    /// Creates the table: family `i` for names and parents, `c` for children.
    pub async fn create(&self) -> Result<()> {
        self.store
            .create_table(
                &TableSchema::new(self.table)
                    .family(FamilySchema::new(INFO))
                    .family(FamilySchema::new(CHILDREN)),
            )
            .await?;
        Ok(())
    }

    fn row_key(&self, top: bool, id: &str) -> Result<Bytes> {
        self.key
            .encode(&(u8::from(!top), id))
            .map(Bytes::from)
            .map_err(|source| Error::Key {
                table: self.table,
                source,
            })
    }

    fn node_of(&self, row: &RowResult) -> Result<TreeNode> {
        let (_, id): (u8, String) = self.key.decode(&row.row).map_err(|source| Error::Key {
            table: self.table,
            source,
        })?;
        let reader = crate::table::RowReader::new(self.table, row);
        Ok(TreeNode {
            id,
            name: reader.cell::<crate::value::Native, String>(INFO, NAME)?,
            parent: reader.optional::<crate::value::Native, String>(INFO, PARENT)?,
            children: reader.dynamic::<crate::value::Native, crate::value::Native, String, String, _>(CHILDREN)?,
        })
    }

    /// A node by id (one batched get of its two possible keys).
    pub async fn get(&self, id: &str) -> Result<Option<TreeNode>> {
        Ok(self.get_many(&[id]).await?.pop().flatten())
    }

    async fn get_many(&self, ids: &[&str]) -> Result<Vec<Option<TreeNode>>> {
        let mut gets = Vec::with_capacity(ids.len() * 2);
        for id in ids {
            gets.push(Get::new(self.row_key(true, id)?));
            gets.push(Get::new(self.row_key(false, id)?));
        }
        let rows = self.store.get_many(self.table, &gets).await?;
        rows.chunks(2)
            .map(|pair| {
                // A move cut off half-way leaves a node under both keys: the
                // later write is the node.
                pair.iter()
                    .flatten()
                    .filter(|r| is_node(r))
                    .max_by_key(|r| written_at(r))
                    .map(|r| self.node_of(r))
                    .transpose()
            })
            .collect()
    }

    async fn require(&self, id: &str) -> Result<TreeNode> {
        self.get(id).await?.ok_or_else(|| Error::NoSuchEntity {
            table: self.table,
            key: id.to_string(),
        })
    }

    async fn write_node(&self, node: &TreeNode, ts: i64) -> Result<()> {
        let mut m =
            RowMutation::new(self.row_key(node.parent.is_none(), &node.id)?).put_at(INFO, NAME, ts, node.name.clone());
        m = match &node.parent {
            Some(p) => m.put_at(INFO, PARENT, ts, p.clone()),
            None => m.delete_column_up_to(INFO, PARENT, ts),
        };
        for (child, name) in &node.children {
            m = m.put_at(CHILDREN, child.clone(), ts, name.clone());
        }
        self.store.mutate(self.table, &[m]).await?;
        Ok(())
    }

    async fn list_child(&self, parent: &str, child: &str, name: &str, ts: i64) -> Result<()> {
        let parent = self.require(parent).await?;
        let row = self.row_key(parent.parent.is_none(), &parent.id)?;
        self.store
            .mutate(
                self.table,
                &[RowMutation::new(row).put_at(CHILDREN, child.to_string(), ts, name.to_string())],
            )
            .await?;
        Ok(())
    }

    async fn unlist_child(&self, parent: &str, child: &str, ts: i64) -> Result<()> {
        let Some(parent) = self.get(parent).await? else {
            return Ok(());
        };
        let row = self.row_key(parent.parent.is_none(), &parent.id)?;
        self.store
            .mutate(
                self.table,
                &[RowMutation::new(row).delete_column_up_to(CHILDREN, child.to_string(), ts)],
            )
            .await?;
        Ok(())
    }

    /// Adds a node: top-level without a parent, else under an existing
    /// parent. Writes the node, then the parent's list.
    pub async fn insert(&self, id: &str, name: &str, parent: Option<&str>) -> Result<()> {
        let (held, ts) = self.lock_for_write().await?;
        let result = self.insert_locked(id, name, parent, ts).await;
        self.release(&held, ts, result).await
    }

    async fn insert_locked(&self, id: &str, name: &str, parent: Option<&str>, ts: i64) -> Result<()> {
        if let Some(p) = parent {
            self.require(p).await?;
        }
        if self.get(id).await?.is_some() {
            return Err(Error::Query {
                table: self.table,
                reason: format!("node {id:?} exists already"),
            });
        }
        let node = TreeNode {
            id: id.into(),
            name: name.into(),
            parent: parent.map(str::to_string),
            children: BTreeMap::new(),
        };
        self.write_node(&node, ts).await?;
        if let Some(p) = parent {
            self.list_child(p, id, name, ts).await?;
        }
        Ok(())
    }

    /// The top-level nodes, in id order: one prefix scan.
    pub async fn top_level(&self) -> Result<Vec<TreeNode>> {
        let prefix = self.key.encode_prefix(&(0u8,)).map_err(|source| Error::Key {
            table: self.table,
            source,
        })?;
        let mut scanned = self.store.scan(self.table, &Scan::prefix(prefix)).await?;
        let mut nodes = Vec::new();
        while let Some(row) = scanned.next().await {
            nodes.push(self.node_of(&row?)?);
        }
        Ok(nodes)
    }

    /// A node's children, as its list names them, read in one batched get.
    pub async fn children(&self, id: &str) -> Result<Vec<TreeNode>> {
        let node = self.require(id).await?;
        let ids: Vec<&str> = node.children.keys().map(String::as_str).collect();
        Ok(self.get_many(&ids).await?.into_iter().flatten().collect())
    }

    /// The node and its ancestors, up to its top-level node.
    pub async fn path_to_root(&self, id: &str) -> Result<Vec<TreeNode>> {
        let mut path = vec![self.require(id).await?];
        let mut seen = BTreeSet::from([id.to_string()]);
        while let Some(parent) = path.last().and_then(|n| n.parent.clone()) {
            if !seen.insert(parent.clone()) {
                return Err(Error::Query {
                    table: self.table,
                    reason: format!("the parents of {id:?} form a cycle at {parent:?}"),
                });
            }
            path.push(self.require(&parent).await?);
        }
        Ok(path)
    }

    /// Moves a node (and its subtree) under a new parent, or to the top
    /// level. A node moving between levels changes rowkey: it is written
    /// under the new key, then the old row is deleted; then the new parent
    /// lists it, then the old parent stops listing it.
    pub async fn move_node(&self, id: &str, new_parent: Option<&str>) -> Result<()> {
        let (held, ts) = self.lock_for_write().await?;
        let result = self.move_locked(id, new_parent, ts).await;
        self.release(&held, ts, result).await
    }

    async fn move_locked(&self, id: &str, new_parent: Option<&str>, ts: i64) -> Result<()> {
        let mut node = self.require(id).await?;
        if let Some(p) = new_parent
            && self.path_to_root(p).await?.iter().any(|n| n.id == id)
        {
            return Err(Error::Query {
                table: self.table,
                reason: format!("cannot move {id:?} under its own descendant {p:?}"),
            });
        }
        let old_parent = node.parent.clone();
        let old_key = self.row_key(old_parent.is_none(), id)?;
        node.parent = new_parent.map(str::to_string);
        self.write_node(&node, ts).await?;
        let new_key = self.row_key(node.parent.is_none(), id)?;
        if new_key != old_key {
            self.store
                .mutate(
                    self.table,
                    &[RowMutation::new(old_key).push(Mutation::DeleteRow { up_to: Some(ts) })],
                )
                .await?;
        }
        if let Some(p) = new_parent {
            self.list_child(p, id, &node.name, ts).await?;
        }
        if let Some(p) = old_parent.filter(|p| Some(p.as_str()) != new_parent) {
            self.unlist_child(&p, id, ts).await?;
        }
        Ok(())
    }

    /// Deletes a node. With children, [`DeleteMode::Refuse`] fails and
    /// [`DeleteMode::Subtree`] deletes them first, deepest first. Each node:
    /// its row (under both keys a cut-off move may have left), then its
    /// parent's list entry.
    pub async fn delete(&self, id: &str, mode: DeleteMode) -> Result<()> {
        let (mut held, ts) = self.lock_for_write().await?;
        let result = self.delete_locked(id, mode, &mut held, ts).await;
        self.release(&held, ts, result).await
    }

    async fn delete_locked(&self, id: &str, mode: DeleteMode, held: &mut Held, ts: i64) -> Result<()> {
        let node = self.require(id).await?;
        if mode == DeleteMode::Refuse && !node.children.is_empty() {
            return Err(Error::Query {
                table: self.table,
                reason: format!(
                    "node {id:?} has {} children; delete them or the subtree",
                    node.children.len()
                ),
            });
        }
        // The subtree, parents before children, walked iteratively: a list
        // that names an ancestor (a cycle in damaged data) is met once.
        let mut order = Vec::new();
        let mut seen = BTreeSet::from([node.id.clone()]);
        let mut next = vec![node];
        while let Some(node) = next.pop() {
            let ids: Vec<&str> = node
                .children
                .keys()
                .map(String::as_str)
                .filter(|c| !seen.contains(*c))
                .collect();
            // A listed child whose own pointer names another parent is not
            // in the subtree: the child is authoritative.
            for child in self.get_many(&ids).await?.into_iter().flatten() {
                if child.parent.as_deref() == Some(node.id.as_str()) && seen.insert(child.id.clone()) {
                    next.push(child);
                }
            }
            order.push(node);
        }
        let root = order.first().map(|n| n.id.clone());
        for node in order.iter().rev() {
            self.renew(held).await?;
            let rows = [self.row_key(true, &node.id)?, self.row_key(false, &node.id)?];
            let deletes: Vec<RowMutation> = rows
                .into_iter()
                .map(|row| RowMutation::new(row).push(Mutation::DeleteRow { up_to: Some(ts) }))
                .collect();
            self.store.mutate(self.table, &deletes).await?;
            // Parents inside the subtree are deleted next; only the root's
            // parent stays to be unlisted from.
            if let Some(p) = &node.parent
                && (root.as_ref() == Some(&node.id) || !seen.contains(p))
            {
                self.unlist_child(p, &node.id, ts).await?;
            }
        }
        Ok(())
    }

    /// Every node, the older copies of nodes a cut-off move left under two
    /// keys (with the key of the copy), and the rows that hold only a child
    /// list (no node).
    async fn all_nodes(&self) -> Result<AllNodes> {
        let mut nodes: BTreeMap<String, (TreeNode, i64, Bytes)> = BTreeMap::new();
        let mut stale = Vec::new();
        let mut list_only = Vec::new();
        let mut scanned = self.store.scan(self.table, &self.nodes_scan()?).await?;
        while let Some(row) = scanned.next().await {
            let row = row?;
            if !is_node(&row) {
                list_only.push(row.row);
                continue;
            }
            let node = self.node_of(&row)?;
            let at = written_at(&row);
            match nodes.remove(&node.id) {
                Some((other, other_at, other_key)) if other_at > at => {
                    stale.push((node.id.clone(), row.row.clone()));
                    nodes.insert(other.id.clone(), (other, other_at, other_key));
                }
                Some((other, _, other_key)) => {
                    stale.push((other.id, other_key));
                    nodes.insert(node.id.clone(), (node, at, row.row));
                }
                None => {
                    nodes.insert(node.id.clone(), (node, at, row.row));
                }
            }
        }
        Ok((
            nodes.into_iter().map(|(id, (n, _, _))| (id, n)).collect(),
            stale,
            list_only,
        ))
    }

    /// Every node row: from the top level's keys to past the others', so
    /// not the lock's row.
    fn nodes_scan(&self) -> Result<Scan> {
        let prefix = |level: u8| {
            self.key.encode_prefix(&(level,)).map_err(|source| Error::Key {
                table: self.table,
                source,
            })
        };
        Ok(Scan::range(prefix(0)?, prefix_end(&prefix(1)?)))
    }

    /// Checks every parent pointer against the parents' lists: children a
    /// parent does not list (`missing`), entries naming a node that points
    /// elsewhere and older copies of moved nodes (`dangling`), entries with
    /// an old name (`stale`), and (`absent`) nodes whose parent is gone,
    /// entries naming a node that is gone, and rows holding only a child
    /// list.
    pub async fn verify(&self) -> Result<Report> {
        self.check(None).await
    }

    /// Rebuilds the child lists from the nodes' parent pointers, removes
    /// entries naming a node that is gone and rows holding only a list,
    /// and moves a node whose parent is gone (with its subtree) to the top
    /// level, where [`top_level`](Self::top_level) shows it: place it with
    /// [`move_node`](Self::move_node), or delete it. Returns what it found
    /// (and fixed).
    pub async fn repair(&self) -> Result<Report> {
        let (held, ts) = self.lock_for_write().await?;
        let result = self.check(Some(ts)).await;
        self.release(&held, ts, result).await
    }

    /// Verifies, and with a timestamp (holding the lock), repairs.
    async fn check(&self, fix: Option<i64>) -> Result<Report> {
        let (nodes, copies, list_only) = self.all_nodes().await?;
        let mut report = Report::default();
        let mut writes = Vec::new();
        let ts = fix.unwrap_or_default();
        let delete_row = |key: Bytes| RowMutation::new(key).push(Mutation::DeleteRow { up_to: Some(ts) });
        for key in list_only {
            report.absent.push(format!(
                "row {} holds only a child list, no node",
                crate::key::Printable(&key)
            ));
            writes.push(delete_row(key));
        }
        // Orphans move to the top level: their new rows. A node's list is
        // on its top-level row if it has no parent or its parent is gone.
        let is_top = |node: &TreeNode| node.parent.as_ref().is_none_or(|p| !nodes.contains_key(p));
        let mut moved = BTreeSet::new();
        for node in nodes.values() {
            let Some(pid) = &node.parent else { continue };
            if nodes.contains_key(pid) {
                continue;
            }
            report.absent.push(format!(
                "{} names parent {pid}, which is gone: repair moves it to the top level",
                node.id
            ));
            let top = self.row_key(true, &node.id)?;
            let mut m = RowMutation::new(top.clone())
                .delete_family_up_to(CHILDREN, ts - 1)
                .delete_column_up_to(INFO, PARENT, ts)
                .put_at(INFO, NAME, ts, node.name.clone());
            for (child, name) in &node.children {
                m = m.put_at(CHILDREN, child.clone(), ts, name.clone());
            }
            writes.push(m);
            writes.push(delete_row(self.row_key(false, &node.id)?));
            moved.insert(top);
        }
        for (id, key) in copies {
            report.dangling.push(format!(
                "{id} also has an older row {}, left by a move",
                crate::key::Printable(&key)
            ));
            // An orphan moved to the top level rewrote this row already.
            if !moved.contains(&key) {
                writes.push(delete_row(key));
            }
        }
        for node in nodes.values() {
            let Some(pid) = &node.parent else { continue };
            let Some(parent) = nodes.get(pid) else { continue };
            match parent.children.get(&node.id) {
                None => report
                    .missing
                    .push(format!("{pid} does not list its child {}", node.id)),
                Some(name) if *name != node.name => report
                    .stale
                    .push(format!("{pid} lists {} as {name:?}, not {:?}", node.id, node.name)),
                Some(_) => continue,
            }
            writes.push(RowMutation::new(self.row_key(is_top(parent), pid)?).put_at(
                CHILDREN,
                node.id.clone(),
                ts,
                node.name.clone(),
            ));
        }
        for parent in nodes.values() {
            for child in parent.children.keys() {
                match nodes.get(child) {
                    Some(c) if c.parent.as_deref() == Some(&parent.id) => continue,
                    Some(_) => report
                        .dangling
                        .push(format!("{} lists {child}, which has another parent", parent.id)),
                    None => report
                        .absent
                        .push(format!("{} lists {child}, which is gone", parent.id)),
                }
                writes.push(
                    RowMutation::new(self.row_key(is_top(parent), &parent.id)?).delete_column_up_to(
                        CHILDREN,
                        child.clone(),
                        ts,
                    ),
                );
            }
        }
        if fix.is_some() && !writes.is_empty() {
            self.store.mutate(self.table, &writes).await?;
        }
        Ok(report)
    }
}

/// Whether a row holds a node (its `i` family), not only a child list.
fn is_node(row: &RowResult) -> bool {
    row.family(INFO.as_bytes()).next().is_some()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// When a node's row was written: the timestamp of its name, which every
/// write of the node rewrites.
fn written_at(row: &RowResult) -> i64 {
    row.latest(INFO, NAME).map_or(i64::MIN, |c| c.timestamp)
}

#[async_trait::async_trait]
impl<S: Store> super::Checked for Tree<S> {
    async fn verify(&self) -> Result<Report> {
        Tree::verify(self).await
    }
    async fn repair(&self) -> Result<Report> {
        Tree::repair(self).await
    }
}
