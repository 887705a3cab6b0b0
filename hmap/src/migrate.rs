//! Schema migrations: bring a live table in line with the schema its struct
//! declares.
//!
//! [`Migration::plan`] compares a declared [`TableSchema`] (a struct's
//! [`HTable::table_schema`](crate::HTable::table_schema)) with the live table
//! as the store describes it, and lists the [`Step`]s that close the gap:
//! create the table, add a family, change a family's options, and, only when
//! asked with [`MigrateOptions::drop_families`], drop a family the struct no
//! longer declares (that deletes its data). Each step prints as the HBase
//! shell statement that does the same, and [`Migration::apply`] runs them
//! through the store ([`Store::alter_table`]). What a migration cannot fix
//! (another key layout, metadata, split points that miss the salt buckets)
//! is reported in [`Migration::notes`]; another key layout blocks it.
//!
//! Planning again after applying finds nothing to do, so migrating twice is
//! a no-op. [`Table::migrate`](crate::Table::migrate) plans and applies in
//! one call.
//!
//! ```
//! use hmap::migrate::{MigrateOptions, Migration};
//! use hmap::schema::{FamilySchema, TableSchema};
//! use hmap::store::{MemoryStore, Store};
//!
//! # #[tokio::main] async fn main() -> Result<(), hmap::Error> {
//! let store = MemoryStore::new();
//! store.create_table(&TableSchema::new("wb_inbox").family(FamilySchema::new("cf")).family(FamilySchema::new("old"))).await?;
//! let declared = TableSchema::new("wb_inbox")
//!     .family(FamilySchema::new("cf").versions(1000))
//!     .family(FamilySchema::new("meta"));
//! let live = store.describe_table("wb_inbox").await?;
//!
//! let plan = Migration::plan(&declared, Some(&live), &MigrateOptions::new());
//! assert_eq!(
//!     plan.shell_statements(),
//!     [
//!         "alter 'wb_inbox', {NAME => 'cf', VERSIONS => 1000}",
//!         "alter 'wb_inbox', {NAME => 'meta', VERSIONS => 1}",
//!     ]
//! );
//! // What it leaves alone, printed after the statements as `#` comments.
//! assert_eq!(
//!     plan.notes()[0].to_string(),
//!     "family `old` is in the table only; dropping it deletes its cells: plan with drop_families to drop it"
//! );
//! plan.apply(&store).await?;
//! let again = Migration::plan(&declared, Some(&store.describe_table("wb_inbox").await?), &MigrateOptions::new());
//! assert!(again.is_empty());
//!
//! let dropping = Migration::plan(&declared, Some(&store.describe_table("wb_inbox").await?), &MigrateOptions::new().drop_families(true));
//! assert_eq!(dropping.to_string(), "alter 'wb_inbox', 'delete' => 'old'\n");
//! # Ok(()) }
//! ```

use std::fmt;

use crate::error::{Error, Result};
use crate::schema::{FamilyOption, FamilySchema, RubyQuoted, SchemaDiff, SchemaDifference, ShellFamily, TableSchema};
use crate::store::{FamilyChange, Store};

/// How [`Migration::plan`] plans.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MigrateOptions {
    drop_families: bool,
}

impl MigrateOptions {
    /// The defaults: families only the table has are reported, not dropped.
    pub fn new() -> Self {
        MigrateOptions::default()
    }

    /// Whether to drop the families the table has and the schema does not
    /// declare. Dropping deletes every cell they hold, so it happens only
    /// when asked.
    pub fn drop_families(mut self, drop: bool) -> Self {
        self.drop_families = drop;
        self
    }
}

/// One change a [`Migration`] makes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Step {
    /// Creates the table, which does not exist.
    CreateTable(TableSchema),
    /// Adds a family the schema declares.
    AddFamily(FamilySchema),
    /// Sets a family's options to the declared ones.
    ModifyFamily {
        /// The family as declared.
        family: FamilySchema,
        /// The options that change.
        changes: Vec<OptionChange>,
    },
    /// Drops a family the schema does not declare, with its cells (only
    /// with [`MigrateOptions::drop_families`]).
    DropFamily(String),
}

/// A family option a [`Step::ModifyFamily`] changes, its values as the
/// HBase shell writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OptionChange {
    /// The option.
    pub option: FamilyOption,
    /// Its value in the live table.
    pub live: String,
    /// The declared value it takes.
    pub declared: String,
}

/// What a migration reports and does not change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Note {
    /// A difference no step fixes: another key layout (which blocks the
    /// migration), a key layout or metadata not recorded, a family kept
    /// because dropping was not asked for.
    Difference(SchemaDifference),
    /// The schema splits the table at points (its salt buckets) that are
    /// not region boundaries of the live table: writes to those buckets
    /// share a region. Splitting a live table is an operator's decision
    /// (the shell's `split`), not a migration step.
    MissingSplits {
        /// The declared split points the table lacks.
        missing: Vec<bytes::Bytes>,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Difference(SchemaDifference::ExtraFamily { family }) => write!(
                f,
                "family `{family}` is in the table only; dropping it deletes its cells: plan with drop_families to drop it"
            ),
            Note::Difference(d) => write!(f, "{d}"),
            Note::MissingSplits { missing } => {
                write!(
                    f,
                    "the table is not split at {} of the schema's split points (",
                    missing.len()
                )?;
                for (i, key) in missing.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", crate::key::Printable(key))?;
                }
                f.write_str("): those salt buckets share regions; split them with the shell's `split`")
            }
        }
    }
}

/// The steps that bring a live table in line with a declared schema, and
/// what they leave alone. See the [module docs](self).
///
/// `Display` prints one HBase shell statement per step, then each note as a
/// `#` comment.
#[derive(Debug, Clone, PartialEq)]
pub struct Migration {
    table: String,
    steps: Vec<Step>,
    notes: Vec<Note>,
    blocked: Option<SchemaDiff>,
}

impl Migration {
    /// Plans the migration of `live` (`None`: the table does not exist) to
    /// `declared`.
    pub fn plan(declared: &TableSchema, live: Option<&TableSchema>, options: &MigrateOptions) -> Migration {
        Self::plan_kept(declared, live, options, &crate::schema::FamilyOption::ALL)
    }

    /// [`plan`](Self::plan), bringing only the family options in `kept`
    /// in line: those the store keeps (`Store::kept_family_options`).
    pub fn plan_kept(
        declared: &TableSchema,
        live: Option<&TableSchema>,
        options: &MigrateOptions,
        kept: &[crate::schema::FamilyOption],
    ) -> Migration {
        let mut migration = Migration {
            table: declared.name.clone(),
            steps: Vec::new(),
            notes: Vec::new(),
            blocked: None,
        };
        let Some(live) = live else {
            migration.steps.push(Step::CreateTable(declared.clone()));
            return migration;
        };
        let diff = SchemaDiff::between_kept(declared, live, kept);
        let mut modified: Vec<(FamilySchema, Vec<OptionChange>)> = Vec::new();
        let mut blockers = Vec::new();
        for difference in diff.differences {
            match difference {
                SchemaDifference::MissingFamily(family) => migration.steps.push(Step::AddFamily(family)),
                SchemaDifference::FamilyOption {
                    family,
                    option,
                    declared: want,
                    live: have,
                } => {
                    let Some(declared_family) = declared.find_family(family.as_bytes()) else {
                        continue;
                    };
                    let change = OptionChange {
                        option,
                        live: have,
                        declared: want,
                    };
                    match modified.iter_mut().find(|(f, _)| f.name == family) {
                        Some((_, changes)) => changes.push(change),
                        None => modified.push((declared_family.clone(), vec![change])),
                    }
                }
                SchemaDifference::ExtraFamily { family } if options.drop_families => {
                    migration.steps.push(Step::DropFamily(family))
                }
                d @ SchemaDifference::KeyLayout { .. } => {
                    blockers.push(d.clone());
                    migration.notes.push(Note::Difference(d));
                }
                other => migration.notes.push(Note::Difference(other)),
            }
        }
        // Changed families first, in declaration order, then additions and
        // drops as the diff lists them.
        let changed = modified
            .into_iter()
            .map(|(family, changes)| Step::ModifyFamily { family, changes });
        migration.steps.splice(0..0, changed);
        let missing: Vec<bytes::Bytes> = declared
            .split_keys
            .iter()
            .filter(|k| !live.split_keys.contains(k))
            .cloned()
            .collect();
        if !missing.is_empty() {
            migration.notes.push(Note::MissingSplits { missing });
        }
        if !blockers.is_empty() {
            migration.blocked = Some(SchemaDiff {
                table: declared.name.clone(),
                differences: blockers,
            });
        }
        migration
    }

    /// The table.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The steps, in the order [`apply`](Self::apply) runs them.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// What the migration reports and leaves alone.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// Whether there is nothing to do (notes aside).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether the table cannot be migrated: it was created for another key
    /// layout, so its rows cannot be read through the declared schema.
    pub fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }

    /// The HBase shell statement of each step.
    pub fn shell_statements(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|s| ShellStep(&self.table, s).to_string())
            .collect()
    }

    /// Runs the steps in order through `store`. A blocked migration is
    /// [`Error::MigrationBlocked`] and runs nothing. A step that fails stops
    /// the migration with the steps before it applied; planning again shows
    /// what is left.
    pub async fn apply(&self, store: &(impl Store + ?Sized)) -> Result<()> {
        if let Some(diff) = &self.blocked {
            return Err(Error::MigrationBlocked {
                table: self.table.clone(),
                diff: Box::new(diff.clone()),
            });
        }
        for step in &self.steps {
            match step {
                Step::CreateTable(schema) => store.create_table(schema).await?,
                Step::AddFamily(family) => {
                    store
                        .alter_table(&self.table, &FamilyChange::Add(family.clone()))
                        .await?
                }
                Step::ModifyFamily { family, .. } => {
                    store
                        .alter_table(&self.table, &FamilyChange::Modify(family.clone()))
                        .await?
                }
                Step::DropFamily(family) => {
                    store
                        .alter_table(&self.table, &FamilyChange::Delete(family.clone()))
                        .await?
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for Migration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.steps {
            writeln!(f, "{}", ShellStep(&self.table, step))?;
        }
        for note in &self.notes {
            writeln!(f, "# {note}")?;
        }
        Ok(())
    }
}

/// A step as the HBase shell statement that does the same.
struct ShellStep<'a>(&'a str, &'a Step);

impl fmt::Display for ShellStep<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = RubyQuoted(self.0);
        match self.1 {
            Step::CreateTable(schema) => write!(f, "{schema}"),
            Step::AddFamily(family) => write!(f, "alter {table}, {}", ShellFamily(family)),
            // The shell's `alter` keeps the options it is not given: name
            // each one that changes.
            Step::ModifyFamily { family, changes } => {
                write!(f, "alter {table}, {{NAME => {}", RubyQuoted(&family.name))?;
                for change in changes {
                    write!(f, ", {} => {}", change.option, change.declared)?;
                }
                f.write_str("}")
            }
            Step::DropFamily(family) => write!(f, "alter {table}, 'delete' => {}", RubyQuoted(family)),
        }
    }
}
