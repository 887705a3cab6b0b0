//! The tree's algorithm over raw rows, shared by [`Tree`](super::Tree)
//! (hmap's own layout) and [`TreeOf`](super::TreeOf) (a layout derived from
//! the user's type): nodes are known by their ids' bytes (the qualifiers of
//! the child lists), and a [`Shape`] says where everything is.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use futures_util::StreamExt;

use super::DeleteMode;
use super::lock::{Held, Lock};
use crate::error::{Error, Result};
use crate::key::Printable;
use crate::relation::Report;
use crate::store::{Get, Mutation, RowMutation, RowResult, Scan, Store, prefix_end};

/// How a tree finds a node's label in its row.
pub(super) type LabelOf = Box<dyn Fn(&RowResult) -> Result<Bytes> + Send + Sync>;

/// Where a tree keeps its structure in its table.
pub(super) struct Shape {
    pub table: &'static str,
    /// The parent pointer's column.
    pub parent: (&'static str, &'static str),
    /// The child lists' family: child id -> the child's label.
    pub children: &'static str,
    /// The families of a node's own cells: a row with none of them holds
    /// only a child list, no node.
    pub node_families: Vec<&'static str>,
    /// Whether the pointer holds the parent's rowkey (the seed's
    /// `cf1:pid=0_001`), else its id.
    pub pointer_is_key: bool,
    /// A node's rowkey, from its id and whether it is at the top level.
    pub key_of: fn(&'static str, &[u8], bool) -> Result<Bytes>,
    /// A node's id, from its rowkey.
    pub id_of: fn(&'static str, &[u8]) -> Result<Bytes>,
    /// For a key that starts with the level (0 top, 1 below): the key prefix
    /// of a level. Such a tree reads its top level with one prefix scan, and
    /// a node changing level changes rowkey.
    pub level_prefix: Option<fn(&'static str, u8) -> Result<Bytes>>,
    /// A node's label in its parent's list.
    pub label_of: LabelOf,
    /// A row of the table that is not a node (the lock's).
    pub skip_row: Option<&'static [u8]>,
    /// The rowkey layout, to show a row's key parts in errors.
    pub key_schema: &'static crate::key::KeySchema,
}

/// A node as stored.
#[derive(Debug, Clone)]
pub(super) struct RawNode {
    pub id: Bytes,
    pub key: Bytes,
    /// The parent's id.
    pub parent: Option<Bytes>,
    /// The pointer as stored (the parent's rowkey or id).
    pub pointer: Option<Bytes>,
    pub children: BTreeMap<Bytes, Bytes>,
    /// The whole row; the node's label is read from it only where a write
    /// needs it ([`Engine::label`]), so that reads decode a user's row once.
    pub row: RowResult,
}

/// The engine: a store, a shape, a lock.
pub(super) struct Engine<S> {
    /// Shared with the task that releases the lock of a cancelled write.
    pub store: std::sync::Arc<S>,
    pub shape: Shape,
    pub lock: Lock,
}

/// Makes a node's row of its own cells, from its rowkey and the write's
/// timestamp.
pub(super) trait Cells: FnOnce(Bytes, i64) -> Result<RowMutation> + Send {}

impl<F: FnOnce(Bytes, i64) -> Result<RowMutation> + Send> Cells for F {}

/// An id as errors and reports show it.
pub(super) fn show(id: &[u8]) -> String {
    Printable(id).to_string()
}

/// An older row of a node, by id and rowkey, left by a move cut off half-way.
type StaleCopy = (Bytes, Bytes);

/// What [`Engine::all_nodes`] reads: the nodes by id, the stale copies, and
/// the keys of rows holding only a child list.
type AllNodes = (BTreeMap<Bytes, RawNode>, Vec<StaleCopy>, Vec<Bytes>);

fn delete_row(key: Bytes, ts: i64) -> RowMutation {
    RowMutation::new(key).push(Mutation::DeleteRow { up_to: Some(ts) })
}

impl<S: Store + 'static> Engine<S> {
    fn table(&self) -> &'static str {
        self.shape.table
    }

    pub fn key(&self, id: &[u8], top: bool) -> Result<Bytes> {
        (self.shape.key_of)(self.table(), id, top)
    }

    fn leveled(&self) -> bool {
        self.shape.level_prefix.is_some()
    }

    /// The rowkeys a node may have: both levels' for a leveled key.
    fn keys(&self, id: &[u8]) -> Result<Vec<Bytes>> {
        if self.leveled() {
            Ok(vec![self.key(id, true)?, self.key(id, false)?])
        } else {
            Ok(vec![self.key(id, true)?])
        }
    }

    /// Whether a row holds a node (a cell of its own), not only a child list.
    fn is_node(&self, row: &RowResult) -> bool {
        self.shape
            .node_families
            .iter()
            .any(|f| row.family(f.as_bytes()).next().is_some())
    }

    /// When a node's row was written: its newest own cell, which every write
    /// of the node stamps.
    fn written_at(&self, row: &RowResult) -> i64 {
        row.cells
            .iter()
            .filter(|c| self.shape.node_families.iter().any(|f| c.family == f.as_bytes()))
            .map(|c| c.timestamp)
            .max()
            .unwrap_or(i64::MIN)
    }

    fn node_of(&self, row: &RowResult) -> Result<RawNode> {
        let (family, qualifier) = self.shape.parent;
        let pointer = row.value(family, qualifier);
        let parent = match &pointer {
            Some(p) if self.shape.pointer_is_key => Some((self.shape.id_of)(self.table(), p)?),
            other => other.clone(),
        };
        Ok(RawNode {
            id: (self.shape.id_of)(self.table(), &row.row)?,
            key: row.row.clone(),
            parent,
            pointer,
            children: row
                .family(self.shape.children.as_bytes())
                .map(|c| (c.qualifier.clone(), c.value.clone()))
                .collect(),
            row: row.clone(),
        })
    }

    /// The node's label, as its parent's list holds it.
    fn label(&self, node: &RawNode) -> Result<Bytes> {
        (self.shape.label_of)(&node.row)
    }

    /// What a child's pointer holds for this parent.
    fn pointer_to(&self, parent: &RawNode) -> Bytes {
        if self.shape.pointer_is_key {
            parent.key.clone()
        } else {
            parent.id.clone()
        }
    }

    /// Nodes by id, in one batched get.
    pub async fn get_many(&self, ids: &[Bytes]) -> Result<Vec<Option<RawNode>>> {
        let per_id = if self.leveled() { 2 } else { 1 };
        let mut gets = Vec::with_capacity(ids.len() * per_id);
        for id in ids {
            gets.extend(self.keys(id)?.into_iter().map(Get::new));
        }
        let rows = self.store.get_many(self.table(), &gets).await?;
        rows.chunks(per_id)
            .map(|keys| {
                // A move cut off half-way leaves a node under both keys: the
                // later write is the node.
                keys.iter()
                    .flatten()
                    .filter(|r| self.is_node(r))
                    .max_by_key(|r| self.written_at(r))
                    .map(|r| self.node_of(r))
                    .transpose()
            })
            .collect()
    }

    pub async fn get(&self, id: &[u8]) -> Result<Option<RawNode>> {
        Ok(self.get_many(&[Bytes::copy_from_slice(id)]).await?.pop().flatten())
    }

    pub async fn require(&self, id: &[u8]) -> Result<RawNode> {
        self.get(id).await?.ok_or_else(|| Error::NoSuchEntity {
            table: self.table(),
            key: show(id),
        })
    }

    /// Puts `child` with `label` on `parent`'s list.
    async fn list_child(&self, parent: &RawNode, child: &[u8], label: &Bytes, ts: i64) -> Result<()> {
        let m = RowMutation::new(parent.key.clone()).put_at(
            self.shape.children,
            Bytes::copy_from_slice(child),
            ts,
            label.clone(),
        );
        self.store.mutate(self.table(), &[m]).await?;
        Ok(())
    }

    async fn unlist_child(&self, parent: &[u8], child: &[u8], ts: i64) -> Result<()> {
        let Some(parent) = self.get(parent).await? else {
            return Ok(());
        };
        let m =
            RowMutation::new(parent.key).delete_column_up_to(self.shape.children, Bytes::copy_from_slice(child), ts);
        self.store.mutate(self.table(), &[m]).await?;
        Ok(())
    }

    /// Sets or clears a node's pointer in `m`.
    fn with_pointer(&self, m: RowMutation, pointer: Option<Bytes>, ts: i64) -> RowMutation {
        let (family, qualifier) = self.shape.parent;
        match pointer {
            Some(p) => m.put_at(family, qualifier, ts, p),
            None => m.delete_column_up_to(family, qualifier, ts),
        }
    }

    /// Adds a node under an existing parent or at the top level: `cells`
    /// makes its row (its own cells) from its key and the write's
    /// timestamp, and `label` names it on its parent's list. Writes the
    /// node, then the parent's list.
    pub async fn insert(&self, id: Bytes, cells: impl Cells, label: Bytes, parent: Option<Bytes>) -> Result<()> {
        let writing = self.lock.for_write(&self.store).await?;
        let result = self.insert_locked(id, cells, label, parent, writing.ts()).await;
        self.lock.release(writing, result).await
    }

    async fn insert_locked(
        &self,
        id: Bytes,
        cells: impl Cells,
        label: Bytes,
        parent: Option<Bytes>,
        ts: i64,
    ) -> Result<()> {
        let parent = match parent {
            Some(p) => Some(self.require(&p).await?),
            None => None,
        };
        if let Some(node) = self.get(&id).await? {
            return Err(Error::Exists {
                table: self.table(),
                row: crate::table::show_typed_row(Some(self.shape.key_schema), &node.key),
            });
        }
        let m = cells(self.key(&id, parent.is_none())?, ts)?;
        let m = self.with_pointer(m, parent.as_ref().map(|p| self.pointer_to(p)), ts);
        self.store.mutate(self.table(), &[m]).await?;
        if let Some(p) = &parent {
            self.list_child(p, &id, &label, ts).await?;
        }
        Ok(())
    }

    /// Rewrites a node's own cells (`cells`, as for
    /// [`insert`](Self::insert)) and its label on its parent's list.
    pub async fn rewrite(&self, id: Bytes, cells: impl Cells, label: Bytes) -> Result<()> {
        let writing = self.lock.for_write(&self.store).await?;
        let result = self.rewrite_locked(id, cells, label, writing.ts()).await;
        self.lock.release(writing, result).await
    }

    async fn rewrite_locked(&self, id: Bytes, cells: impl Cells, label: Bytes, ts: i64) -> Result<()> {
        let node = self.require(&id).await?;
        let m = cells(node.key.clone(), ts)?;
        self.store.mutate(self.table(), &[m]).await?;
        if let Some(parent) = &node.parent
            && let Some(parent) = self.get(parent).await?
        {
            self.list_child(&parent, &id, &label, ts).await?;
        }
        Ok(())
    }

    /// The top-level nodes, in key order: one prefix scan for a leveled
    /// key, else a scan of every node.
    pub async fn top_level(&self) -> Result<Vec<RawNode>> {
        let scan = match self.shape.level_prefix {
            Some(prefix) => Scan::prefix(prefix(self.table(), 0)?),
            None => Scan::all(),
        };
        let mut scanned = self.store.scan(self.table(), &scan).await?;
        let mut nodes = Vec::new();
        while let Some(row) = scanned.next().await {
            let row = row?;
            if Some(&row.row[..]) == self.shape.skip_row || !self.is_node(&row) {
                continue;
            }
            let node = self.node_of(&row)?;
            if self.leveled() || node.parent.is_none() {
                nodes.push(node);
            }
        }
        Ok(nodes)
    }

    /// A node's children, as its list names them, read in one batched get.
    pub async fn children(&self, id: &[u8]) -> Result<Vec<RawNode>> {
        let node = self.require(id).await?;
        let ids: Vec<Bytes> = node.children.keys().cloned().collect();
        Ok(self.get_many(&ids).await?.into_iter().flatten().collect())
    }

    /// The node and its ancestors, up to its top-level node.
    pub async fn path_to_root(&self, id: &[u8]) -> Result<Vec<RawNode>> {
        let mut path = vec![self.require(id).await?];
        let mut seen = BTreeSet::from([Bytes::copy_from_slice(id)]);
        while let Some(parent) = path.last().and_then(|n| n.parent.clone()) {
            if !seen.insert(parent.clone()) {
                return Err(Error::Query {
                    table: self.table(),
                    reason: format!("the parents of {} form a cycle at {}", show(id), show(&parent)),
                });
            }
            path.push(self.require(&parent).await?);
        }
        Ok(path)
    }

    /// Moves a node (and its subtree) under a new parent, or to the top
    /// level.
    pub async fn move_node(&self, id: &[u8], new_parent: Option<&[u8]>) -> Result<()> {
        let writing = self.lock.for_write(&self.store).await?;
        let result = self.move_locked(id, new_parent, writing.ts()).await;
        self.lock.release(writing, result).await
    }

    async fn move_locked(&self, id: &[u8], new_parent: Option<&[u8]>, ts: i64) -> Result<()> {
        let node = self.require(id).await?;
        let parent = match new_parent {
            Some(p) => {
                let path = self.path_to_root(p).await?;
                if path.iter().any(|n| n.id == id) {
                    return Err(Error::Query {
                        table: self.table(),
                        reason: format!("cannot move {} under its own descendant {}", show(id), show(p)),
                    });
                }
                path.into_iter().next()
            }
            None => None,
        };
        let new_key = self.key(id, parent.is_none())?;
        let pointer = parent.as_ref().map(|p| self.pointer_to(p));
        let m = if new_key == node.key {
            RowMutation::new(new_key.clone())
        } else {
            // Under its new key: a copy of the newest version of each cell
            // (but the pointer), stamped `ts`, so that it is the later row.
            let (family, qualifier) = self.shape.parent;
            let mut m = RowMutation::new(new_key.clone());
            for cell in &node.row.cells {
                if cell.family != family.as_bytes() || cell.qualifier != qualifier.as_bytes() {
                    m = m.put_at(cell.family.clone(), cell.qualifier.clone(), ts, cell.value.clone());
                }
            }
            m
        };
        self.store
            .mutate(self.table(), &[self.with_pointer(m, pointer, ts)])
            .await?;
        if new_key != node.key {
            self.store
                .mutate(self.table(), &[delete_row(node.key.clone(), ts)])
                .await?;
            if self.shape.pointer_is_key {
                self.repoint_children(&node, &new_key, ts).await?;
            }
        }
        if let Some(p) = &parent {
            self.list_child(p, id, &self.label(&node)?, ts).await?;
        }
        if let Some(old) = node.parent.filter(|p| Some(&p[..]) != new_parent) {
            self.unlist_child(&old, id, ts).await?;
        }
        Ok(())
    }

    /// Points the children of a node that changed rowkey at its new key.
    async fn repoint_children(&self, node: &RawNode, new_key: &Bytes, ts: i64) -> Result<()> {
        let ids: Vec<Bytes> = node.children.keys().cloned().collect();
        let writes: Vec<RowMutation> = self
            .get_many(&ids)
            .await?
            .into_iter()
            .flatten()
            .filter(|c| c.parent.as_ref() == Some(&node.id))
            .map(|c| self.with_pointer(RowMutation::new(c.key), Some(new_key.clone()), ts))
            .collect();
        if !writes.is_empty() {
            self.store.mutate(self.table(), &writes).await?;
        }
        Ok(())
    }

    /// Deletes a node; with children, [`DeleteMode::Refuse`] fails and
    /// [`DeleteMode::Subtree`] deletes them first, deepest first.
    pub async fn delete(&self, id: &[u8], mode: DeleteMode) -> Result<()> {
        let mut writing = self.lock.for_write(&self.store).await?;
        let ts = writing.ts();
        let result = match writing.held_mut() {
            Some(held) => self.delete_locked(id, mode, held, ts).await,
            None => Ok(()),
        };
        self.lock.release(writing, result).await
    }

    async fn delete_locked(&self, id: &[u8], mode: DeleteMode, held: &mut Held, ts: i64) -> Result<()> {
        let node = self.require(id).await?;
        if mode == DeleteMode::Refuse && !node.children.is_empty() {
            return Err(Error::Query {
                table: self.table(),
                reason: match node.children.len() {
                    1 => format!("node {} has a child; delete it or the subtree", show(id)),
                    n => format!("node {} has {n} children; delete them or the subtree", show(id)),
                },
            });
        }
        // The subtree, parents before children, walked iteratively: a list
        // that names an ancestor (a cycle in damaged data) is met once.
        let mut order = Vec::new();
        let mut seen = BTreeSet::from([node.id.clone()]);
        let mut next = vec![node];
        while let Some(node) = next.pop() {
            let ids: Vec<Bytes> = node.children.keys().filter(|c| !seen.contains(*c)).cloned().collect();
            // A listed child whose own pointer names another parent is not
            // in the subtree: the child is authoritative.
            for child in self.get_many(&ids).await?.into_iter().flatten() {
                if child.parent.as_ref() == Some(&node.id) && seen.insert(child.id.clone()) {
                    next.push(child);
                }
            }
            order.push(node);
        }
        let root = order.first().map(|n| n.id.clone());
        for node in order.iter().rev() {
            self.lock.renew(&self.store, held).await?;
            let deletes: Vec<RowMutation> = self.keys(&node.id)?.into_iter().map(|k| delete_row(k, ts)).collect();
            self.store.mutate(self.table(), &deletes).await?;
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

    /// Every node row: from the top level's keys to past the others' for a
    /// leveled key, else the whole table.
    fn nodes_scan(&self) -> Result<Scan> {
        match self.shape.level_prefix {
            Some(prefix) => Ok(Scan::range(
                prefix(self.table(), 0)?,
                prefix_end(&prefix(self.table(), 1)?),
            )),
            None => Ok(Scan::all()),
        }
    }

    /// Every node, the older copies of nodes a cut-off move left under two
    /// keys (with the key of the copy), and the rows that hold only a child
    /// list (no node).
    async fn all_nodes(&self) -> Result<AllNodes> {
        let mut nodes: BTreeMap<Bytes, (RawNode, i64)> = BTreeMap::new();
        let mut stale = Vec::new();
        let mut list_only = Vec::new();
        let mut scanned = self.store.scan(self.table(), &self.nodes_scan()?).await?;
        while let Some(row) = scanned.next().await {
            let row = row?;
            if Some(&row.row[..]) == self.shape.skip_row {
                continue;
            }
            if !self.is_node(&row) {
                list_only.push(row.row);
                continue;
            }
            let node = self.node_of(&row)?;
            let at = self.written_at(&row);
            match nodes.remove(&node.id) {
                Some((other, other_at)) if other_at > at => {
                    stale.push((node.id.clone(), node.key));
                    nodes.insert(other.id.clone(), (other, other_at));
                }
                Some((other, _)) => {
                    stale.push((other.id, other.key));
                    nodes.insert(node.id.clone(), (node, at));
                }
                None => {
                    nodes.insert(node.id.clone(), (node, at));
                }
            }
        }
        Ok((
            nodes.into_iter().map(|(id, (n, _))| (id, n)).collect(),
            stale,
            list_only,
        ))
    }

    /// Verifies; with a timestamp (holding the lock), repairs.
    pub async fn check(&self, fix: Option<i64>) -> Result<Report> {
        let (nodes, copies, list_only) = self.all_nodes().await?;
        let mut report = Report::default();
        let mut writes = Vec::new();
        let ts = fix.unwrap_or_default();
        for key in list_only {
            report
                .absent
                .push(format!("row {} holds only a child list, no node", Printable(&key)));
            writes.push(delete_row(key, ts));
        }
        // Orphans move to the top level. A node's list is on its top-level
        // row if it has no parent or its parent is gone.
        let is_top = |node: &RawNode| node.parent.as_ref().is_none_or(|p| !nodes.contains_key(p));
        let key_now = |node: &RawNode| -> Result<Bytes> {
            if self.leveled() {
                self.key(&node.id, is_top(node))
            } else {
                Ok(node.key.clone())
            }
        };
        let mut moved = BTreeSet::new();
        for node in nodes.values() {
            let Some(pid) = &node.parent else { continue };
            if nodes.contains_key(pid) {
                continue;
            }
            report.absent.push(format!(
                "{} names parent {}, which is gone: repair moves it to the top level",
                show(&node.id),
                show(pid)
            ));
            let top = key_now(node)?;
            let (family, qualifier) = self.shape.parent;
            let mut m = RowMutation::new(top.clone()).delete_column_up_to(family, qualifier, ts);
            if top != node.key {
                m = m.delete_family_up_to(self.shape.children, ts - 1);
                for cell in &node.row.cells {
                    if cell.family != family.as_bytes() || cell.qualifier != qualifier.as_bytes() {
                        m = m.put_at(cell.family.clone(), cell.qualifier.clone(), ts, cell.value.clone());
                    }
                }
                writes.push(m);
                writes.push(delete_row(node.key.clone(), ts));
            } else {
                writes.push(m);
            }
            moved.insert(top);
        }
        for (id, key) in copies {
            report.dangling.push(format!(
                "{} also has an older row {}, left by a move",
                show(&id),
                Printable(&key)
            ));
            // An orphan moved to the top level rewrote this row already.
            if !moved.contains(&key) {
                writes.push(delete_row(key, ts));
            }
        }
        for node in nodes.values() {
            let Some(pid) = &node.parent else { continue };
            let Some(parent) = nodes.get(pid) else { continue };
            let parent_key = key_now(parent)?;
            // A pointer holding a rowkey the parent no longer has (a move of
            // the parent between levels cut off half-way).
            if self.shape.pointer_is_key && node.pointer.as_ref() != Some(&parent_key) {
                report.stale.push(format!(
                    "{}'s parent pointer names {}, not {}'s row {}",
                    show(&node.id),
                    node.pointer.as_deref().map(show).unwrap_or_default(),
                    show(pid),
                    Printable(&parent_key)
                ));
                writes.push(self.with_pointer(RowMutation::new(key_now(node)?), Some(parent_key.clone()), ts));
            }
            let label = match self.label(node) {
                Ok(label) => label,
                Err(e) if crate::relation::is_unreadable(&e) => {
                    // Its label cannot be known: its entry is left as it is.
                    report.unreadable.push(e.to_string());
                    continue;
                }
                Err(e) => return Err(e),
            };
            match parent.children.get(&node.id) {
                None => report
                    .missing
                    .push(format!("{} does not list its child {}", show(pid), show(&node.id))),
                Some(listed) if *listed != label => report.stale.push(format!(
                    "{} lists {} as {}, not {}",
                    show(pid),
                    show(&node.id),
                    Printable(listed),
                    Printable(&label)
                )),
                Some(_) => continue,
            }
            writes.push(RowMutation::new(parent_key).put_at(self.shape.children, node.id.clone(), ts, label));
        }
        for parent in nodes.values() {
            for child in parent.children.keys() {
                match nodes.get(child) {
                    Some(c) if c.parent.as_ref() == Some(&parent.id) => continue,
                    Some(_) => report.dangling.push(format!(
                        "{} lists {}, which has another parent",
                        show(&parent.id),
                        show(child)
                    )),
                    None => report
                        .absent
                        .push(format!("{} lists {}, which is gone", show(&parent.id), show(child))),
                }
                writes.push(RowMutation::new(key_now(parent)?).delete_column_up_to(
                    self.shape.children,
                    child.clone(),
                    ts,
                ));
            }
        }
        if fix.is_some() && !writes.is_empty() {
            self.store.mutate(self.table(), &writes).await?;
        }
        Ok(report)
    }

    /// Rebuilds what [`check`](Self::check) finds, under the lock.
    pub async fn repair(&self) -> Result<Report> {
        let writing = self.lock.for_write(&self.store).await?;
        let result = self.check(Some(writing.ts())).await;
        self.lock.release(writing, result).await
    }
}
