//! The relation helpers of [`crate::relation`], blocking: each method waits
//! for the async one.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;

use super::{Table, block_on, blocking_methods};
use crate::error::Result;
use crate::key::{FromKeyPart, KeyArg, KeyPart, KeyTuple, PartArg};
use crate::relation::{
    CheckOptions, Checked, DeleteMode, Delivery, Emptied, FanOutConfig, IndexOf, Report, TreeMapped, TreeNode,
};
use crate::schema::SchemaDiff;
use crate::store::Store;
use crate::table::HTable;
use crate::value::CellValue;

/// [`crate::relation::ManyToMany`], blocking.
pub struct ManyToMany<L: HTable, R: HTable, S> {
    inner: crate::relation::ManyToMany<L, R, S>,
}

impl<L: HTable, R: HTable, S> fmt::Debug for ManyToMany<L, R, S>
where
    crate::relation::ManyToMany<L, R, S>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<L, R, S> ManyToMany<L, R, S>
where
    L: HTable,
    R: HTable,
    L::Key: CellValue + KeyTuple + Clone + Ord,
    R::Key: CellValue + KeyTuple + Clone + Ord,
    S: Store + Clone,
{
    /// [`ManyToMany::new`](crate::relation::ManyToMany::new).
    pub fn new(store: S, left_family: &'static str, right_family: &'static str) -> Self {
        ManyToMany {
            inner: crate::relation::ManyToMany::new(store, left_family, right_family),
        }
    }

    /// [`with_labels`](crate::relation::ManyToMany::with_labels).
    pub fn with_labels(self, left: fn(&L) -> String, right: fn(&R) -> String) -> Self {
        ManyToMany {
            inner: self.inner.with_labels(left, right),
        }
    }

    /// The async helper underneath.
    pub fn as_async(&self) -> &crate::relation::ManyToMany<L, R, S> {
        &self.inner
    }

    /// The left table, blocking.
    pub fn left(&self) -> Table<L, S> {
        Table::new(self.inner.left().store().clone())
    }

    /// The right table, blocking.
    pub fn right(&self) -> Table<R, S> {
        Table::new(self.inner.right().store().clone())
    }

    blocking_methods! { "crate::relation::ManyToMany";
        fn create(&self) -> Result<()>;
        fn create_if_missing(&self) -> Result<bool>;
        fn check_schema(&self) -> Result<(SchemaDiff, SchemaDiff)>;
        fn link(&self, left: impl KeyArg<L::Key>, right: impl KeyArg<R::Key>) -> Result<()>;
        fn link_with(&self, left: impl KeyArg<L::Key>, right: impl KeyArg<R::Key>, value: &str) -> Result<()>;
        fn link_many(&self, pairs: &[(L::Key, R::Key)]) -> Result<()>;
        fn link_each(&self, pairs: &[(L::Key, R::Key)]) -> Result<crate::store::BatchOutcome<crate::Error>>;
        fn unlink(&self, left: impl KeyArg<L::Key>, right: impl KeyArg<R::Key>) -> Result<()>;
        fn rights_of(&self, left: impl KeyArg<L::Key>) -> Result<Vec<(R::Key, String)>>;
        fn lefts_of(&self, right: impl KeyArg<R::Key>) -> Result<Vec<(L::Key, String)>>;
        fn load_rights(&self, left: impl KeyArg<L::Key>) -> Result<Vec<R>>;
        fn load_lefts(&self, right: impl KeyArg<R::Key>) -> Result<Vec<L>>;
        fn delete_left(&self, left: impl KeyArg<L::Key>) -> Result<()>;
        fn delete_right(&self, right: impl KeyArg<R::Key>) -> Result<()>;
        fn delete_left_indexed(&self, left: impl KeyArg<L::Key>, indexes: &[&dyn IndexOf<L>]) -> Result<()>;
        fn delete_right_indexed(&self, right: impl KeyArg<R::Key>, indexes: &[&dyn IndexOf<R>]) -> Result<()>;
        fn relabel_left(&self, left: impl KeyArg<L::Key>) -> Result<()>;
        fn relabel_right(&self, right: impl KeyArg<R::Key>) -> Result<()>;
        fn verify(&self) -> Result<Report>;
        fn repair(&self) -> Result<Report>;
        fn repair_with(&self, emptied: Emptied) -> Result<Report>;
    }

    /// [`check`](crate::relation::ManyToMany::check): verify or repair in
    /// batches, resumable; waiting for it.
    pub fn check(&self, emptied: Emptied, fix: bool, options: &CheckOptions) -> Result<Report> {
        block_on(self.inner.check(emptied, fix, options))
    }
}

/// [`crate::relation::Tree`], blocking.
#[derive(Debug)]
pub struct Tree<S> {
    inner: crate::relation::Tree<S>,
}

impl<S: Store + 'static> Tree<S> {
    /// [`Tree::new`](crate::relation::Tree::new).
    pub fn new(store: S, table: &'static str) -> Self {
        Tree {
            inner: crate::relation::Tree::new(store, table),
        }
    }

    /// [`with_lock`](crate::relation::Tree::with_lock).
    pub fn with_lock(self, lease: Duration, wait: Duration) -> Self {
        Tree {
            inner: self.inner.with_lock(lease, wait),
        }
    }

    /// The async helper underneath.
    pub fn as_async(&self) -> &crate::relation::Tree<S> {
        &self.inner
    }

    blocking_methods! { "crate::relation::Tree";
        fn create(&self) -> Result<()>;
        fn create_if_missing(&self) -> Result<bool>;
        fn check_schema(&self) -> Result<SchemaDiff>;
        fn get(&self, id: &str) -> Result<Option<TreeNode>>;
        fn insert(&self, id: &str, name: &str, parent: Option<&str>) -> Result<()>;
        fn top_level(&self) -> Result<Vec<TreeNode>>;
        fn children(&self, id: &str) -> Result<Vec<TreeNode>>;
        fn path_to_root(&self, id: &str) -> Result<Vec<TreeNode>>;
        fn move_node(&self, id: &str, new_parent: Option<&str>) -> Result<()>;
        fn delete(&self, id: &str, mode: DeleteMode) -> Result<()>;
        fn verify(&self) -> Result<Report>;
        fn repair(&self) -> Result<Report>;
    }
}

/// [`crate::relation::TreeOf`], blocking.
pub struct TreeOf<T: TreeMapped, S> {
    inner: crate::relation::TreeOf<T, S>,
}

impl<T: TreeMapped, S> fmt::Debug for TreeOf<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<T: TreeMapped, S: Store + Clone + 'static> TreeOf<T, S> {
    /// [`TreeOf::new`](crate::relation::TreeOf::new).
    pub fn new(store: S, label: fn(&T) -> String) -> Self {
        TreeOf {
            inner: crate::relation::TreeOf::new(store, label),
        }
    }

    /// [`with_lock`](crate::relation::TreeOf::with_lock).
    pub fn with_lock(self, lease: Duration, wait: Duration) -> Self {
        TreeOf {
            inner: self.inner.with_lock(lease, wait),
        }
    }

    /// The async helper underneath.
    pub fn as_async(&self) -> &crate::relation::TreeOf<T, S> {
        &self.inner
    }

    /// [`id_of`](crate::relation::TreeOf::id_of).
    pub fn id_of(&self, node: &T) -> Result<T::Id> {
        self.inner.id_of(node)
    }

    blocking_methods! { "crate::relation::TreeOf";
        fn create(&self) -> Result<()>;
        fn create_if_missing(&self) -> Result<bool>;
        fn check_schema(&self) -> Result<SchemaDiff>;
        fn get(&self, id: impl KeyArg<T::Id>) -> Result<Option<T>>;
        fn insert(&self, node: &T, parent: Option<&T::Id>) -> Result<()>;
        fn update(&self, node: &T) -> Result<()>;
        fn top_level(&self) -> Result<Vec<T>>;
        fn children(&self, id: impl KeyArg<T::Id>) -> Result<Vec<T>>;
        fn path_to_root(&self, id: impl KeyArg<T::Id>) -> Result<Vec<T>>;
        fn move_node(&self, id: impl KeyArg<T::Id>, new_parent: Option<&T::Id>) -> Result<()>;
        fn delete(&self, id: impl KeyArg<T::Id>, mode: DeleteMode) -> Result<()>;
        fn verify(&self) -> Result<Report>;
        fn repair(&self) -> Result<Report>;
    }
}

/// [`crate::relation::Index`], blocking.
pub struct Index<T: HTable, V, S> {
    inner: crate::relation::Index<T, V, S>,
}

impl<T: HTable, V, S> fmt::Debug for Index<T, V, S>
where
    crate::relation::Index<T, V, S>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<T, V, S> Index<T, V, S>
where
    T: HTable,
    V: KeyPart + FromKeyPart + PartialEq + Send + Sync,
    S: Store + Clone,
{
    /// [`Index::new`](crate::relation::Index::new).
    pub fn new(store: S, index_table: &'static str, value_of: fn(&T) -> V) -> Self {
        Index {
            inner: crate::relation::Index::new(store, index_table, value_of),
        }
    }

    /// The async helper underneath.
    pub fn as_async(&self) -> &crate::relation::Index<T, V, S> {
        &self.inner
    }

    /// The indexed table, blocking.
    pub fn table(&self) -> Table<T, S> {
        Table::new(self.inner.table().store().clone())
    }

    blocking_methods! { "crate::relation::Index";
        fn create(&self) -> Result<()>;
        fn create_if_missing(&self) -> Result<bool>;
        fn check_schema(&self) -> Result<SchemaDiff>;
        fn put(&self, row: &T) -> Result<()>;
        fn save(&self, row: &mut T) -> Result<()>;
        fn update(&self, row: &T, fields: impl crate::table::Fields<T>) -> Result<()>;
        fn delete(&self, key: impl KeyArg<T::Key>) -> Result<()>;
        fn lookup(&self, value: impl PartArg<V>) -> Result<Vec<T>>;
        fn verify(&self) -> Result<Report>;
        fn repair(&self) -> Result<Report>;
        fn rebuild(&self) -> Result<()>;
    }

    /// [`check`](crate::relation::Index::check): verify or repair in
    /// batches, resumable; waiting for it.
    pub fn check(&self, fix: bool, options: &CheckOptions) -> Result<Report> {
        block_on(self.inner.check(fix, options))
    }

    /// [`rebuild_with`](crate::relation::Index::rebuild_with), waiting for it.
    pub fn rebuild_with(&self, options: &CheckOptions) -> Result<()> {
        block_on(self.inner.rebuild_with(options))
    }
}

/// [`crate::relation::FanOut`], blocking: the worker is a task on the
/// blocking API's runtime.
#[derive(Debug)]
pub struct FanOut {
    inner: Option<crate::relation::FanOut>,
}

impl FanOut {
    /// Starts the worker.
    pub fn start<S: Store + 'static>(store: S, config: FanOutConfig) -> Result<Self> {
        let _entered = super::runtime().enter();
        Ok(FanOut {
            inner: Some(crate::relation::FanOut::start(store, config)?),
        })
    }

    fn inner(&self) -> &crate::relation::FanOut {
        // Only `shutdown`, which consumes `self`, takes it out.
        self.inner.as_ref().expect("the fan-out is running until shutdown")
    }

    /// [`deliver`](crate::relation::FanOut::deliver), waiting for it.
    pub fn deliver(&self, delivery: Delivery) -> Result<()> {
        block_on(self.inner().deliver(delivery))
    }

    /// [`flush`](crate::relation::FanOut::flush), waiting for it.
    pub fn flush(&self) -> Result<usize> {
        block_on(self.inner().flush())
    }

    /// [`failed`](crate::relation::FanOut::failed).
    pub fn failed(&self) -> Vec<(Delivery, String)> {
        self.inner().failed()
    }

    /// [`retry_failed`](crate::relation::FanOut::retry_failed), waiting for it.
    pub fn retry_failed(&self) -> Result<()> {
        block_on(self.inner().retry_failed())
    }

    /// [`shutdown`](crate::relation::FanOut::shutdown), waiting for it.
    /// Where it cannot wait ([`StoreError::BlockingInRuntime`](crate::store::StoreError::BlockingInRuntime)),
    /// the worker writes the queue in the background, as when the fan-out
    /// is dropped.
    pub fn shutdown(mut self) -> Result<Vec<(Delivery, String)>> {
        match self.inner.take() {
            Some(inner) => Ok(super::try_block_on(inner.shutdown())?),
            None => Ok(Vec::new()),
        }
    }

    /// [`read_inbox`](crate::relation::FanOut::read_inbox), waiting for it.
    pub fn read_inbox<S: Store + ?Sized>(
        store: &S,
        config: &FanOutConfig,
        inbox: Bytes,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<(i64, Bytes)>> {
        block_on(crate::relation::FanOut::read_inbox(store, config, inbox, limit, before))
    }

    /// [`read_timeline`](crate::relation::FanOut::read_timeline), waiting for it.
    pub fn read_timeline<T: HTable, S: Store>(
        posts: &Table<T, S>,
        config: &FanOutConfig,
        inbox: Bytes,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<(i64, T)>> {
        block_on(crate::relation::FanOut::read_timeline(
            posts.as_async(),
            config,
            inbox,
            limit,
            before,
        ))
    }

    /// [`remove_from_inbox`](crate::relation::FanOut::remove_from_inbox), waiting for it.
    pub fn remove_from_inbox<S: Store + ?Sized>(
        store: &S,
        config: &FanOutConfig,
        inbox: Bytes,
        remove: impl Fn(&[u8]) -> bool,
    ) -> Result<usize> {
        block_on(crate::relation::FanOut::remove_from_inbox(store, config, inbox, remove))
    }
}

/// Any relation helper that checks itself, blocking: what the operator CLI
/// runs.
pub trait BlockingChecked {
    /// [`Checked::verify`], waiting for it.
    fn verify_blocking(&self) -> Result<Report>;
    /// [`Checked::repair`], waiting for it.
    fn repair_blocking(&self) -> Result<Report>;
    /// [`Checked::rebuild`], waiting for it.
    fn rebuild_blocking(&self) -> Option<Result<()>>;
    /// [`Checked::check`], waiting for it.
    fn check_blocking(&self, fix: bool, options: &CheckOptions) -> Result<Report>;
    /// [`Checked::rebuild_with`], waiting for it.
    fn rebuild_with_blocking(&self, options: &CheckOptions) -> Option<Result<()>>;
}

impl<C: Checked + ?Sized> BlockingChecked for C {
    fn verify_blocking(&self) -> Result<Report> {
        block_on(self.verify())
    }
    fn repair_blocking(&self) -> Result<Report> {
        block_on(self.repair())
    }
    fn rebuild_blocking(&self) -> Option<Result<()>> {
        block_on(self.rebuild())
    }
    fn check_blocking(&self, fix: bool, options: &CheckOptions) -> Result<Report> {
        block_on(self.check(fix, options))
    }
    fn rebuild_with_blocking(&self, options: &CheckOptions) -> Option<Result<()>> {
        block_on(self.rebuild_with(options))
    }
}

impl<T, V, S> IndexOf<T> for Index<T, V, S>
where
    T: HTable,
    V: KeyPart + FromKeyPart + PartialEq + Send + Sync,
    S: Store,
{
    fn index_table(&self) -> &'static str {
        self.inner.index_table()
    }

    fn entry_of(&self, row: &T, primary: &[u8]) -> Result<Bytes> {
        self.inner.entry_of(row, primary)
    }
}
