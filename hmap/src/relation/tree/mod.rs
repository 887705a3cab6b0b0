//! One-to-many trees in one table: the seeds' org chart and animal
//! taxonomy. [`Tree`] keeps hmap's own layout; [`TreeOf`] keeps the layout
//! of a type of yours (`#[hmap(parent)]`, `#[hmap(dynamic, children)]`).

mod engine;
mod lock;
mod mapped;

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;

use self::engine::{Engine, RawNode, Shape};
use self::lock::Lock;
use super::Report;
use crate::error::{Error, Result};
use crate::key::{KeyFormat, KeySchema, PartKind, PartSpec, Segment, Width};
use crate::schema::{FamilySchema, SchemaDiff, TableSchema};
use crate::store::{RowMutation, Store};
use crate::table::{RowReader, lifecycle};
use crate::value::Native;

pub use self::mapped::{TREE_LOCKS_TABLE, TreeMapped, TreeOf};

const INFO: &str = "i";
const NAME: &str = "n";
const PARENT: &str = "p";
const CHILDREN: &str = "c";
/// The row of the writers' lock: not a node key (those are `<0|1>_<id>`).
const LOCK_ROW: &str = "lock";
/// The lock's cell, in family `i`.
const LOCK: &str = "l";

/// How long a writer may hold a tree's lock, and wait for it, by default.
const DEFAULT_LEASE: Duration = Duration::from_secs(30);

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

/// A tree in one table, in hmap's own layout, that of the seeds' org chart
/// (to map a table of your own, or to give nodes fields of their own, use
/// [`TreeOf`]):
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
/// [`with_lock`](Tree::with_lock)); a write that is cancelled (its future
/// dropped) releases it in a task of its own, at once. The store is kept
/// in an `Arc`, shared with that task: hence `S: 'static`. The lock also records the timestamp of
/// the last operation, and the next one is stamped later (waiting, if its
/// clock is behind), so operations apply in the order they held the lock.
/// Reads take no lock.
pub struct Tree<S> {
    engine: Engine<S>,
}

impl<S> std::fmt::Debug for Tree<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tree").field("table", &self.engine.shape.table).finish()
    }
}

/// `<0|1>_<id>`: the level (0 for top-level nodes), then the id.
static TREE_SEGMENTS: [Segment; 2] = [
    Segment::Part(PartSpec::new("level", PartKind::U8).width(Width::Fixed(1))),
    Segment::Part(PartSpec::new("id", PartKind::Str)),
];
static TREE_KEY: KeySchema = KeySchema::from_static(KeyFormat::text(), &TREE_SEGMENTS);

fn key_error(table: &'static str) -> impl FnOnce(crate::key::KeyError) -> Error {
    move |source| Error::Key { table, cause: source }
}

/// An id given as `&str` and kept as its bytes.
fn id_str<'a>(table: &'static str, id: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(id).map_err(|_| Error::Query {
        table,
        reason: format!("tree node id {} is not UTF-8", engine::show(id)),
    })
}

fn own_key(table: &'static str, id: &[u8], top: bool) -> Result<Bytes> {
    TREE_KEY
        .encode(&(u8::from(!top), id_str(table, id)?))
        .map(Bytes::from)
        .map_err(key_error(table))
}

fn own_id(table: &'static str, key: &[u8]) -> Result<Bytes> {
    let (_, id): (u8, String) = TREE_KEY.decode(key).map_err(key_error(table))?;
    Ok(Bytes::from(id))
}

fn own_level_prefix(table: &'static str, level: u8) -> Result<Bytes> {
    TREE_KEY
        .encode_prefix(&(level,))
        .map(Bytes::from)
        .map_err(key_error(table))
}

impl<S: Store + 'static> Tree<S> {
    /// The tree stored in `table`.
    pub fn new(store: S, table: &'static str) -> Self {
        let shape = Shape {
            table,
            parent: (INFO, PARENT),
            children: CHILDREN,
            node_families: vec![INFO],
            pointer_is_key: false,
            key_of: own_key,
            id_of: own_id,
            level_prefix: Some(own_level_prefix),
            label_of: Box::new(|row| Ok(row.value(INFO, NAME).unwrap_or_default())),
            skip_row: Some(LOCK_ROW.as_bytes()),
            key_schema: &TREE_KEY,
        };
        let lock = Lock {
            tree: table,
            table,
            row: LOCK_ROW,
            family: INFO,
            qualifier: LOCK,
            own_table: false,
            lease: DEFAULT_LEASE,
            wait: DEFAULT_LEASE,
        };
        Tree {
            engine: Engine {
                store: std::sync::Arc::new(store),
                shape,
                lock,
            },
        }
    }

    /// How long a writer may hold the lock before others may take it over
    /// (30 s by default; long operations renew it), and how long a writer
    /// waits for it before failing with a timeout (30 s by default).
    pub fn with_lock(mut self, lease: Duration, wait: Duration) -> Self {
        self.engine.lock.lease = lease;
        self.engine.lock.wait = wait;
        self
    }

    fn table(&self) -> &'static str {
        self.engine.shape.table
    }

    /// The tree's table: family `i` for names and parents, `c` for children.
    fn schema(&self) -> TableSchema {
        TableSchema::new(self.table())
            .family(FamilySchema::new(INFO))
            .family(FamilySchema::new(CHILDREN))
    }

    /// Creates the table: family `i` for names and parents, `c` for children.
    pub async fn create(&self) -> Result<()> {
        self.engine.store.create_table(&self.schema()).await?;
        Ok(())
    }

    /// Creates the table unless it exists, and returns whether it did; one
    /// that exists is checked as [`check_schema`](Self::check_schema) checks it.
    pub async fn create_if_missing(&self) -> Result<bool> {
        lifecycle::create_if_missing(&*self.engine.store, self.table(), &self.schema()).await
    }

    /// Checks that the table has the tree's families, reading only, as
    /// [`Table::check_schema`](crate::Table::check_schema) checks a table.
    pub async fn check_schema(&self) -> Result<SchemaDiff> {
        lifecycle::check_schema(&*self.engine.store, self.table(), &self.schema()).await
    }

    fn node(&self, raw: RawNode) -> Result<TreeNode> {
        let reader = RowReader::new(self.table(), &raw.row);
        Ok(TreeNode {
            id: id_str(self.table(), &raw.id)?.to_string(),
            name: reader.cell::<Native, String>(INFO, NAME)?,
            parent: reader.optional::<Native, String>(INFO, PARENT)?,
            children: reader.dynamic::<Native, Native, String, String, _>(CHILDREN)?,
        })
    }

    fn nodes(&self, raw: Vec<RawNode>) -> Result<Vec<TreeNode>> {
        raw.into_iter().map(|n| self.node(n)).collect()
    }

    /// A node by id (one batched get of its two possible keys).
    pub async fn get(&self, id: &str) -> Result<Option<TreeNode>> {
        self.engine.get(id.as_bytes()).await?.map(|n| self.node(n)).transpose()
    }

    /// Adds a node: top-level without a parent, else under an existing
    /// parent. Writes the node, then the parent's list.
    pub async fn insert(&self, id: &str, name: &str, parent: Option<&str>) -> Result<()> {
        let label = Bytes::copy_from_slice(name.as_bytes());
        let cell = label.clone();
        let cells = move |key: Bytes, ts: i64| Ok(RowMutation::new(key).put_at(INFO, NAME, ts, cell));
        let parent = parent.map(|p| Bytes::copy_from_slice(p.as_bytes()));
        self.engine
            .insert(Bytes::copy_from_slice(id.as_bytes()), cells, label, parent)
            .await
    }

    /// The top-level nodes, in id order: one prefix scan.
    pub async fn top_level(&self) -> Result<Vec<TreeNode>> {
        self.nodes(self.engine.top_level().await?)
    }

    /// A node's children, as its list names them, read in one batched get.
    pub async fn children(&self, id: &str) -> Result<Vec<TreeNode>> {
        self.nodes(self.engine.children(id.as_bytes()).await?)
    }

    /// The node and its ancestors, up to its top-level node.
    pub async fn path_to_root(&self, id: &str) -> Result<Vec<TreeNode>> {
        self.nodes(self.engine.path_to_root(id.as_bytes()).await?)
    }

    /// Moves a node (and its subtree) under a new parent, or to the top
    /// level. A node moving between levels changes rowkey: it is written
    /// under the new key, then the old row is deleted; then the new parent
    /// lists it, then the old parent stops listing it.
    pub async fn move_node(&self, id: &str, new_parent: Option<&str>) -> Result<()> {
        self.engine
            .move_node(id.as_bytes(), new_parent.map(str::as_bytes))
            .await
    }

    /// Deletes a node. With children, [`DeleteMode::Refuse`] fails and
    /// [`DeleteMode::Subtree`] deletes them first, deepest first. Each node:
    /// its row (under both keys a cut-off move may have left), then its
    /// parent's list entry.
    pub async fn delete(&self, id: &str, mode: DeleteMode) -> Result<()> {
        self.engine.delete(id.as_bytes(), mode).await
    }

    /// Checks every parent pointer against the parents' lists: children a
    /// parent does not list (`missing`), entries naming a node that points
    /// elsewhere and older copies of moved nodes (`dangling`), entries with
    /// an old name (`stale`), and (`absent`) nodes whose parent is gone,
    /// entries naming a node that is gone, and rows holding only a child
    /// list.
    pub async fn verify(&self) -> Result<Report> {
        self.engine.check(None).await
    }

    /// Rebuilds the child lists from the nodes' parent pointers, removes
    /// entries naming a node that is gone and rows holding only a list,
    /// and moves a node whose parent is gone (with its subtree) to the top
    /// level, where [`top_level`](Self::top_level) shows it: place it with
    /// [`move_node`](Self::move_node), or delete it. Returns what it found
    /// (and fixed).
    pub async fn repair(&self) -> Result<Report> {
        self.engine.repair().await
    }
}

#[async_trait::async_trait]
impl<S: Store + 'static> super::Checked for Tree<S> {
    fn table(&self) -> &'static str {
        self.engine.shape.table
    }
    async fn verify(&self) -> Result<Report> {
        Tree::verify(self).await
    }
    async fn repair(&self) -> Result<Report> {
        Tree::repair(self).await
    }
}
