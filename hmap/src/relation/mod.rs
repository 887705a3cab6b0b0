//! Relations HBase has no joins for, kept as redundant lists in rows.
//!
//! HBase has no cross-row transactions, so a relation written to two rows
//! can be cut off half-way. Each helper here:
//! - documents the order of its writes, and which side is authoritative;
//! - stamps every operation's writes with one timestamp from
//!   [`next_timestamp`](crate::clock::next_timestamp) for all the rows it
//!   writes, so that concurrent operations converge to the later one on every row ([`Tree`], whose
//!   moves read before they write, also lets one writer at a time in, by a
//!   lock stored in its table);
//! - offers `verify`, which reports each half-written link or dangling
//!   pointer, and `repair`, which restores agreement from the authoritative
//!   side.
//!
//! The helpers: [`ManyToMany`] (person/role, shop/item), [`Tree`] (an org
//! chart), [`FanOut`] (a weibo inbox) and [`Index`] (a secondary index table).

mod fanout;
mod index;
mod many;
mod pass;
mod tree;

use std::fmt;

pub use fanout::{Delivery, FanOut, FanOutConfig};
pub use index::{Index, IndexOf};
pub use many::{Emptied, ManyToMany};
pub use pass::{CheckOptions, Checkpoint, Progress};
pub use tree::{DeleteMode, TREE_LOCKS_TABLE, Tree, TreeMapped, TreeNode, TreeOf};

/// What `verify` found or `repair` fixed: each entry describes one link.
/// (`#[non_exhaustive]`: the kinds of findings grow, as `absent`, `held` and
/// `unreadable` did.)
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Entries the authoritative side has and the other lacks.
    pub missing: Vec<String>,
    /// Entries on the dependent side that the authoritative side does not have.
    pub dangling: Vec<String>,
    /// Copied values that differ from their source.
    pub stale: Vec<String>,
    /// Entries that name an entity that does not exist, and rows holding
    /// only a relation's list (no entity): `repair` removes them.
    pub absent: Vec<String>,
    /// What `repair` left as it is until told what to do: each entry says
    /// how to choose (for [`ManyToMany`], an emptied authoritative list; see
    /// [`Emptied`]).
    pub held: Vec<String>,
    /// Rows a check needed to read as their entity and could not (a
    /// required cell missing, a cell that does not decode), each with the
    /// error that names its table, row and column. The check goes on
    /// without them; `repair` leaves them as they are, for you to fix (put
    /// the entity whole, or delete the row).
    pub unreadable: Vec<String>,
}

impl Report {
    /// How many findings it holds, of every kind.
    pub fn len(&self) -> usize {
        self.missing.len()
            + self.dangling.len()
            + self.stale.len()
            + self.absent.len()
            + self.held.len()
            + self.unreadable.len()
    }

    /// Whether it holds no finding (both sides agree).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether both sides agree.
    pub fn is_consistent(&self) -> bool {
        self.missing.is_empty()
            && self.dangling.is_empty()
            && self.stale.is_empty()
            && self.absent.is_empty()
            && self.held.is_empty()
            && self.unreadable.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_consistent() {
            return f.write_str("consistent");
        }
        write!(
            f,
            "{} missing, {} dangling, {} stale, {} absent, {} held",
            self.missing.len(),
            self.dangling.len(),
            self.stale.len(),
            self.absent.len(),
            self.held.len()
        )?;
        if !self.unreadable.is_empty() {
            write!(f, ", {} unreadable", self.unreadable.len())?;
        }
        Ok(())
    }
}

/// A relation helper that can check itself: what the operator CLI
/// (the `hmap-cli` crate) runs for `verify` and
/// `repair`, whatever the helper.
#[async_trait::async_trait]
pub trait Checked: Send + Sync {
    /// Reports what is out of sync, writing nothing.
    async fn verify(&self) -> crate::Result<Report>;
    /// Fixes what is out of sync from the authoritative side; reports what
    /// it found.
    async fn repair(&self) -> crate::Result<Report>;
    /// The table errors about the check itself name (a checkpoint it cannot
    /// resume from): the helper's own table (a tree's, an index's) or
    /// its authoritative one (a [`ManyToMany`]'s left table). hmap's
    /// helpers give it; the default, for a helper of yours that does not,
    /// is the helper's Rust type name.
    fn table(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
    /// The tables the helper keeps of its own, beside its entities' (an
    /// index's table), with the schemas it creates them with: for tools
    /// that list, plan and create every table (`hmap-cli tables`, `plan`,
    /// `migrate`). None by default.
    fn own_tables(&self) -> Vec<crate::schema::TableSchema> {
        Vec::new()
    }
    /// Rebuilds derived data from scratch (an index's entries), if the
    /// helper has any; `None` if it has nothing to rebuild.
    async fn rebuild(&self) -> Option<crate::Result<()>> {
        None
    }
    /// [`rebuild`](Self::rebuild) in batches with [`Progress`] reports,
    /// resumable from a [`Checkpoint`]; by default, [`rebuild`](Self::rebuild)
    /// whole (refusing a checkpoint).
    async fn rebuild_with(&self, options: &CheckOptions) -> Option<crate::Result<()>> {
        if let Some(from) = &options.from {
            return Some(Err(crate::Error::Query {
                table: self.table(),
                reason: format!("this helper rebuilds in one pass: it cannot resume from {from}"),
            }));
        }
        self.rebuild().await
    }
    /// [`verify`](Self::verify), or with `fix` [`repair`](Self::repair), in
    /// batches with [`Progress`] reports, resumable from a [`Checkpoint`].
    /// Helpers that check in one pass (a tree, read under its lock; an
    /// index) do it whole and refuse a checkpoint.
    async fn check(&self, fix: bool, options: &CheckOptions) -> crate::Result<Report> {
        if let Some(from) = &options.from {
            return Err(crate::Error::Query {
                table: self.table(),
                reason: format!("this helper checks in one pass: it cannot resume from {from}"),
            });
        }
        if fix { self.repair().await } else { self.verify().await }
    }
}

/// Whether an error reading an entity is about its stored row (a required
/// cell missing, a cell or key that does not decode), which a check reports
/// in [`Report::unreadable`] and goes on, rather than a failure of the
/// store.
pub(crate) fn is_unreadable(e: &crate::Error) -> bool {
    matches!(
        e,
        crate::Error::MissingCell { .. } | crate::Error::Decode { .. } | crate::Error::Key { .. }
    )
}

/// One side of a two-sided relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The authoritative side.
    Left,
    /// The side that mirrors it.
    Right,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Left => "left",
            Side::Right => "right",
        })
    }
}
