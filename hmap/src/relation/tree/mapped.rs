//! [`TreeOf`]: a tree over a type of yours, in the layout its
//! `#[derive(HTable)]` declares.

use std::time::Duration;

use bytes::Bytes;

use super::engine::{Engine, RawNode, Shape, show};
use super::lock::Lock;
use super::{DEFAULT_LEASE, DeleteMode};
use crate::error::{Error, Result};
use crate::relation::Report;
use crate::schema::SchemaDiff;
use crate::store::{RowResult, Store};
use crate::table::{HTable, KeyCall, RowReader, Table};
use crate::value::ValueError;

/// The table holding the writers' locks of [`TreeOf`] trees (one row per
/// tree's table), created by the first write of a tree: a lock row in the
/// tree's own table would be a row its type cannot read.
pub const TREE_LOCKS_TABLE: &str = "hmap_locks";

/// A type `#[derive(HTable)]` maps as a tree node: it has a parent pointer
/// (`#[hmap(parent)]`) and a child list (`#[hmap(dynamic, children)]`), and
/// its key is the node's id, or a `level` part (`#[hmap(key, level)]`, a
/// `u8`: 0 for top-level nodes, 1 below) then the id. The derive implements
/// it; [`TreeOf`] reads and writes such a type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not mapped as a tree node",
    note = "mark its parent pointer `#[hmap(parent)]` (an `Option<String>` cell) and its child list `#[hmap(dynamic, children)]`"
)]
pub trait TreeMapped: HTable + 'static {
    /// A node's id: its key, or its key but the level. The calls that take
    /// an id take any [`KeyArg`](crate::key::KeyArg) of it: a `&str` for a
    /// `String` id.
    type Id: crate::key::KeyArg<Self::Id> + Clone + Ord + std::fmt::Debug + Send + Sync + 'static;
    /// The parent pointer's family and qualifier: the parent's rowkey.
    const PARENT: (&'static str, &'static str);
    /// The child list's family: child id -> the child's label.
    const CHILDREN: &'static str;
    /// Whether the key starts with the level.
    const LEVELED: bool;
    /// The key of the node `id`, at the top level or below. The derive's
    /// plumbing.
    #[doc(hidden)]
    fn node_key(id: &Self::Id, top: bool) -> Self::Key;
    /// The id in a node's key. The derive's plumbing.
    #[doc(hidden)]
    fn node_id(key: Self::Key) -> Self::Id;
    /// An id as a child list's qualifier. The derive's plumbing.
    #[doc(hidden)]
    fn id_qualifier(id: &Self::Id) -> std::result::Result<Bytes, ValueError>;
    /// A child list's qualifier as an id. The derive's plumbing.
    #[doc(hidden)]
    fn qualifier_id(qualifier: &[u8]) -> std::result::Result<Self::Id, ValueError>;
}

/// A tree over your own type, in your table's layout: the seeds' org chart
/// as the seed defines it, or a table that exists already. The type says
/// which of its fields is the parent pointer and which family lists the
/// children; every other field is the node's own.
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use hmap::HTable;
/// use hmap::relation::TreeOf;
/// use hmap::store::MemoryStore;
///
/// /// The seed's org chart: rowkeys `0_001` (top level) and `1_002`,
/// /// `cf1:name`, `cf1:pid=0_001`, `cf2:<child id>=<child name>`.
/// #[derive(HTable, Debug)]
/// #[hmap(table = "dept", text_key, family(name = "cf1"), family(name = "cf2"))]
/// struct Dept {
///     #[hmap(key, level)]
///     level: u8,
///     #[hmap(key)]
///     id: String,
///     #[hmap(family = "cf1")]
///     name: String,
///     #[hmap(family = "cf1", parent)]
///     pid: Option<String>,
///     #[hmap(family = "cf2", dynamic, children)]
///     children: BTreeMap<String, String>,
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> hmap::Result<()> {
/// let dept = |id: &str, name: &str| Dept {
///     level: 0, // the tree sets it
///     id: id.into(),
///     name: name.into(),
///     pid: None, // the tree sets it
///     children: BTreeMap::new(),
/// };
/// let org = TreeOf::new(Arc::new(MemoryStore::new()), |d: &Dept| d.name.clone());
/// org.create().await?;
/// org.insert(&dept("001", "CEO"), None).await?;
/// org.insert(&dept("002", "Development"), Some(&"001".to_string())).await?;
///
/// let dev = org.get("002").await?.unwrap();
/// assert_eq!(dev.pid.as_deref(), Some("0_001"));
/// let ceo = org.get("001").await?.unwrap();
/// assert_eq!(ceo.children["002"], "Development");
/// # Ok(()) }
/// ```
///
/// Everything [`Tree`](super::Tree) says holds here too: the child is
/// authoritative, writes take a lock, [`repair`](Self::repair) rebuilds
/// the lists. The lock lives in the table [`TREE_LOCKS_TABLE`] (a row per
/// tree), which the first write creates. A put of a node through
/// [`Table`] leaves its parent pointer and child list alone; to rename a
/// node so that its parent's list follows, use [`update`](Self::update).
/// A node moving between levels changes rowkey: its newest cells are copied
/// to the new key, and its children's pointers rewritten.
pub struct TreeOf<T: TreeMapped, S> {
    engine: Engine<S>,
    table: Table<T, S>,
    label: fn(&T) -> String,
}

impl<T: TreeMapped, S> std::fmt::Debug for TreeOf<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeOf").field("table", &T::TABLE).finish()
    }
}

fn qualifier_error<T: TreeMapped>(row: String, source: ValueError) -> Error {
    Error::Decode {
        table: T::TABLE,
        row,
        column: format!("{}:<child id>", T::CHILDREN),
        cause: source,
    }
}

fn node_key<T: TreeMapped>(table: &'static str, id: &[u8], top: bool) -> Result<Bytes> {
    let id = T::qualifier_id(id).map_err(|e| qualifier_error::<T>(show(id), e))?;
    T::key_schema()
        .encode(&T::node_key(&id, top))
        .map(Bytes::from)
        .map_err(|source| Error::Key { table, cause: source })
}

fn node_id<T: TreeMapped>(table: &'static str, row: &[u8]) -> Result<Bytes> {
    let key: T::Key = T::key_schema()
        .decode(row)
        .map_err(|source| Error::Key { table, cause: source })?;
    T::id_qualifier(&T::node_id(key)).map_err(|source| Error::Encode {
        table,
        row: show(row),
        column: format!("{}:<child id>", T::CHILDREN),
        cause: source,
    })
}

fn level_prefix<T: TreeMapped>(table: &'static str, level: u8) -> Result<Bytes> {
    T::key_schema()
        .encode_prefix(&(level,))
        .map(Bytes::from)
        .map_err(|source| Error::Key { table, cause: source })
}

/// A node read from its row.
fn decode<T: HTable>(row: &RowResult) -> Result<T> {
    let key = T::key_schema().decode(&row.row).map_err(|source| Error::Key {
        table: T::TABLE,
        cause: source,
    })?;
    // With the key layout, so that errors show the row's key parts.
    let reader = RowReader {
        key: Some(T::key_schema()),
        ..RowReader::new(T::TABLE, row)
    };
    T::read_row(key, &reader)
}

impl<T, S> TreeOf<T, S>
where
    T: TreeMapped,
    S: Store + Clone + 'static,
{
    /// The tree of `T` nodes; `label` names a node on its parent's list
    /// (the seed lists each child's name).
    pub fn new(store: S, label: fn(&T) -> String) -> Self {
        let shape = Shape {
            table: T::TABLE,
            parent: T::PARENT,
            children: T::CHILDREN,
            node_families: Table::<T, S>::entity_families(),
            pointer_is_key: true,
            key_of: node_key::<T>,
            id_of: node_id::<T>,
            level_prefix: T::LEVELED.then_some(level_prefix::<T> as fn(&'static str, u8) -> Result<Bytes>),
            label_of: Box::new(move |row| Ok(Bytes::from(label(&decode::<T>(row)?)))),
            skip_row: None,
            key_schema: T::key_schema(),
        };
        let lock = Lock {
            tree: T::TABLE,
            table: TREE_LOCKS_TABLE,
            row: T::TABLE,
            family: "l",
            qualifier: "tree",
            own_table: true,
            lease: DEFAULT_LEASE,
            wait: DEFAULT_LEASE,
        };
        TreeOf {
            engine: Engine {
                store: std::sync::Arc::new(store.clone()),
                shape,
                lock,
            },
            table: Table::new(store),
            label,
        }
    }

    /// How long a writer may hold the lock before others may take it over,
    /// and how long a writer waits for it (30 s each by default), as
    /// [`Tree::with_lock`](super::Tree::with_lock).
    pub fn with_lock(mut self, lease: Duration, wait: Duration) -> Self {
        self.engine.lock.lease = lease;
        self.engine.lock.wait = wait;
        self
    }

    /// The nodes' table, for reads of your own (a put through it leaves the
    /// tree's pointer and lists alone).
    pub fn table(&self) -> &Table<T, S> {
        &self.table
    }

    /// Creates the table, as `T` declares it.
    pub async fn create(&self) -> Result<()> {
        self.table.create().await
    }

    /// Creates the table unless it exists, as
    /// [`Table::create_if_missing`] does.
    pub async fn create_if_missing(&self) -> Result<bool> {
        self.table.create_if_missing().await
    }

    /// Checks the table against `T`, as [`Table::check_schema`] does.
    pub async fn check_schema(&self) -> Result<SchemaDiff> {
        self.table.check_schema().await
    }

    fn qualifier(id: &T::Id) -> Result<Bytes> {
        T::id_qualifier(id).map_err(|source| Error::Encode {
            table: T::TABLE,
            row: format!("{id:?}"),
            column: format!("{}:<child id>", T::CHILDREN),
            cause: source,
        })
    }

    /// A node's id: its key, but the level.
    pub fn id_of(&self, node: &T) -> Result<T::Id> {
        let mut key = Vec::new();
        node.encode_key(&mut key).map_err(|source| Error::Key {
            table: T::TABLE,
            cause: source,
        })?;
        let key: T::Key = T::key_schema().decode(&key).map_err(|source| Error::Key {
            table: T::TABLE,
            cause: source,
        })?;
        Ok(T::node_id(key))
    }

    fn nodes(raw: Vec<RawNode>) -> Result<Vec<T>> {
        raw.iter().map(|n| decode::<T>(&n.row)).collect()
    }

    /// A node by id (one batched get of its possible keys).
    pub fn get<'a>(&'a self, id: impl crate::key::KeyArg<T::Id>) -> KeyCall<'a, Option<T>> {
        let id = id.into_key();
        Box::pin(async move {
            let id = &id;
            self.engine
                .get(&Self::qualifier(id)?)
                .await?
                .map(|n| decode::<T>(&n.row))
                .transpose()
        })
    }

    /// The cells of `node`, at a key and timestamp the tree chooses.
    fn cells<'a>(&'a self, node: &'a T) -> impl FnOnce(Bytes, i64) -> Result<crate::store::RowMutation> + Send + 'a {
        move |key, ts| self.table.mutation_of(node, key, None, ts)
    }

    /// Adds a node: top-level without a parent, else under an existing
    /// parent. Its key's level (if it has one) and its parent pointer are
    /// the tree's to set; its child list starts empty. Writes the node,
    /// then the parent's list.
    pub async fn insert(&self, node: &T, parent: Option<&T::Id>) -> Result<()> {
        let id = Self::qualifier(&self.id_of(node)?)?;
        let parent = parent.map(Self::qualifier).transpose()?;
        let label = Bytes::from((self.label)(node));
        self.engine.insert(id, self.cells(node), label, parent).await
    }

    /// Rewrites a node's own fields (not its pointer or list) and its label
    /// on its parent's list.
    pub async fn update(&self, node: &T) -> Result<()> {
        let id = Self::qualifier(&self.id_of(node)?)?;
        let label = Bytes::from((self.label)(node));
        self.engine.rewrite(id, self.cells(node), label).await
    }

    /// The top-level nodes, in key order: one prefix scan for a key with a
    /// level, else a scan of the table.
    pub async fn top_level(&self) -> Result<Vec<T>> {
        Self::nodes(self.engine.top_level().await?)
    }

    /// A node's children, as its list names them, read in one batched get.
    pub fn children<'a>(&'a self, id: impl crate::key::KeyArg<T::Id>) -> KeyCall<'a, Vec<T>> {
        let id = id.into_key();
        Box::pin(async move {
            let id = &id;
            Self::nodes(self.engine.children(&Self::qualifier(id)?).await?)
        })
    }

    /// The node and its ancestors, up to its top-level node.
    pub fn path_to_root<'a>(&'a self, id: impl crate::key::KeyArg<T::Id>) -> KeyCall<'a, Vec<T>> {
        let id = id.into_key();
        Box::pin(async move {
            let id = &id;
            Self::nodes(self.engine.path_to_root(&Self::qualifier(id)?).await?)
        })
    }

    /// Moves a node (and its subtree) under a new parent, or to the top
    /// level.
    pub fn move_node<'a>(
        &'a self,
        id: impl crate::key::KeyArg<T::Id>,
        new_parent: Option<&'a T::Id>,
    ) -> KeyCall<'a, ()> {
        let id = id.into_key();
        Box::pin(async move {
            let id = &id;
            let new_parent = new_parent.map(Self::qualifier).transpose()?;
            self.engine
                .move_node(&Self::qualifier(id)?, new_parent.as_deref())
                .await
        })
    }

    /// Deletes a node, or refuses to if it has children
    /// ([`DeleteMode::Refuse`]), or deletes its subtree, deepest first.
    pub fn delete<'a>(&'a self, id: impl crate::key::KeyArg<T::Id>, mode: DeleteMode) -> KeyCall<'a, ()> {
        let id = id.into_key();
        Box::pin(async move {
            let id = &id;
            self.engine.delete(&Self::qualifier(id)?, mode).await
        })
    }

    /// Checks the pointers against the lists, as
    /// [`Tree::verify`](super::Tree::verify); also reports a pointer that
    /// holds a rowkey its parent no longer has (`stale`).
    pub async fn verify(&self) -> Result<Report> {
        self.engine.check(None).await
    }

    /// Rebuilds the lists from the pointers, as
    /// [`Tree::repair`](super::Tree::repair), and points stale pointers at
    /// their parent's current row.
    pub async fn repair(&self) -> Result<Report> {
        self.engine.repair().await
    }
}

#[async_trait::async_trait]
impl<T, S> crate::relation::Checked for TreeOf<T, S>
where
    T: TreeMapped,
    S: Store + Clone + 'static,
{
    fn table(&self) -> &'static str {
        T::TABLE
    }
    async fn verify(&self) -> Result<Report> {
        TreeOf::verify(self).await
    }
    async fn repair(&self) -> Result<Report> {
        TreeOf::repair(self).await
    }
}
