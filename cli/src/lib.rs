//! hmap's operator CLI: a library that an application mounts in a binary of
//! its own, with its tables and relations registered.
//!
//! A crate of its own (on clap), so that hmap itself never builds a command
//! line parser. This package also ships `hmap-cli`, the CLI with the
//! example apps' tables registered (`src/main.rs`).
//!
//! Schemas are Rust types, so the CLI is a library: the binary registers the
//! structs it knows, and the CLI reads, plans, migrates and checks them on a
//! live HBase (its Thrift2 gateway) or on a store the binary provides.
//!
//! ```no_run
//! use hmap_cli::Cli;
//! use hmap::HTable;
//!
//! #[derive(HTable, Debug, serde::Serialize)]
//! #[hmap(table = "user", family(name = "i"))]
//! struct User {
//!     #[hmap(key)]
//!     uid: String,
//!     #[hmap(family = "i")]
//!     name: String,
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Cli::new("myapp-admin").table::<User>().run()
//! }
//! ```
//!
//! The commands (`--help` shows each one's options):
//!
//! | command | what it does |
//! |---|---|
//! | `tables` | every registered table, whether it exists and fits its struct; live tables no struct names |
//! | `describe TABLE` | the live table as the shell's `create` statement, and how it differs from its struct |
//! | `plan [TABLE...]` | the migration each table needs, as HBase shell statements ([`hmap::migrate`]) |
//! | `migrate [TABLE...]` | applies those migrations |
//! | `create TABLE [--dry-run]` | creates a table (`--dry-run`: prints the shell statement) |
//! | `inspect TABLE KEY` | decodes a rowkey, as the shell prints it (`\x00\x03u1...`) or in hex, into named parts |
//! | `get TABLE PART...` | reads one row by its key parts, typed, as a table or a JSON line |
//! | `scan TABLE [--prefix PART]... [--limit N]` | reads rows by a key prefix, typed |
//! | `verify NAME` / `repair NAME` | checks or repairs a registered relation ([`Checked`]) |
//! | `rebuild-index NAME` | rebuilds a registered index from its table |
//!
//! The store: `--thrift host:port` (or `HMAP_THRIFT`), with
//! `--table-prefix` (or `HMAP_TABLE_PREFIX`); or the one given to
//! [`Cli::store`]. Commands that need no store (`create --dry-run`,
//! `inspect`) run without one.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::marker::PhantomData;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, NaiveDate, Utc};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;

use hmap::blocking::relation::BlockingChecked;
use hmap::blocking::{Table, block_on};
use hmap::key::{KeyError, KeySchema, PartKind, PartValue, parse_printable};
use hmap::migrate::{MigrateOptions, Migration};
use hmap::relation::{CheckOptions, Checked, Progress, Report};
use hmap::schema::{SchemaDiff, TableSchema};
use hmap::store::{Store, StoreError, ThriftConfig, ThriftStore};
use hmap::{Error, HTable, Query};

/// What went wrong in a command. Each names what it is about; `Display` is
/// the line the CLI prints after `error: `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The command line does not parse (clap's message, with usage).
    #[error("{0}")]
    Usage(#[from] clap::Error),
    /// The command needs a store and none was named.
    #[error("no store: pass --thrift host:port or set HMAP_THRIFT")]
    NoStore,
    /// The gateway does not answer, or is not a Thrift2 gateway.
    #[error("cannot reach the Thrift2 gateway at {address}: {source}")]
    Connect {
        /// The address given.
        address: String,
        /// What the store said.
        source: Box<StoreError>,
    },
    /// No table or relation of that name is registered.
    #[error("no {what} `{name}` is registered (registered: {})", .known.join(", "))]
    Unknown {
        /// `table` or `relation`.
        what: &'static str,
        /// The name given.
        name: String,
        /// The names registered.
        known: Vec<String>,
    },
    /// A key part given on the command line does not parse as its type.
    #[error("table `{table}`: key part `{part}` ({kind:?}): cannot read {text:?}: {reason}")]
    KeyPart {
        /// The table.
        table: &'static str,
        /// The part's name.
        part: String,
        /// Its kind.
        kind: PartKind,
        /// The text given.
        text: String,
        /// Why it does not parse.
        reason: String,
    },
    /// Too many key parts, or too few for a whole key.
    #[error("table `{table}`: {reason}")]
    KeyParts {
        /// The table.
        table: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A key that does not decode with the table's key layout.
    #[error("table `{table}`: the key does not decode: {source}")]
    Key {
        /// The table.
        table: &'static str,
        /// Why.
        source: KeyError,
    },
    /// A key given in hex that is not hex.
    #[error("{0:?} is not hex")]
    Hex(String),
    /// The relation has nothing to rebuild.
    /// A `--from` that is not a checkpoint.
    #[error("{0}")]
    Checkpoint(String),
    #[error("`{0}` has nothing to rebuild: rebuild-index takes an index")]
    NotAnIndex(String),
    /// What hmap answered.
    #[error(transparent)]
    Hmap(Box<Error>),
    /// Writing the output failed.
    #[error("writing the output: {0}")]
    Io(#[from] io::Error),
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Hmap(Box::new(e))
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        CliError::Hmap(Box::new(Error::Store(e)))
    }
}

type Outcome = std::result::Result<(), CliError>;

/// The CLI: a name, the tables and relations it knows, and a store (see the
/// [module docs](self)).
pub struct Cli {
    name: String,
    tables: Vec<Box<dyn Registered>>,
    relations: Vec<(String, RelationFactory)>,
    store: Option<Arc<dyn Store>>,
}

type RelationFactory = Box<dyn Fn(Arc<dyn Store>) -> Box<dyn Checked>>;

impl std::fmt::Debug for Cli {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cli")
            .field("name", &self.name)
            .field("tables", &self.tables.iter().map(|t| t.name()).collect::<Vec<_>>())
            .field("relations", &self.relations.iter().map(|(n, _)| n).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Cli {
    /// A CLI named `name` (the binary's name in its usage lines), knowing
    /// no tables yet.
    pub fn new(name: impl Into<String>) -> Self {
        Cli {
            name: name.into(),
            tables: Vec::new(),
            relations: Vec::new(),
            store: None,
        }
    }

    /// Registers a table by its struct. Rows print through `Serialize`.
    pub fn table<T>(mut self) -> Self
    where
        T: HTable + Serialize + 'static,
    {
        self.tables.push(Box::new(Typed::<T>(PhantomData)));
        self
    }

    /// Registers a relation (or an index) under `name`, built on the store
    /// when a command needs it: `verify NAME`, `repair NAME`,
    /// `rebuild-index NAME`.
    pub fn relation<C>(mut self, name: impl Into<String>, build: impl Fn(Arc<dyn Store>) -> C + 'static) -> Self
    where
        C: Checked + 'static,
    {
        self.relations.push((
            name.into(),
            Box::new(move |store| Box::new(build(store)) as Box<dyn Checked>),
        ));
        self
    }

    /// Uses this store rather than one named on the command line.
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// Runs the command line of this process: output on stdout, errors on
    /// stderr. Exit status 0 on success, 2 for a command line that does not
    /// parse, 1 for any other error.
    pub fn run(self) -> ExitCode {
        let stdout = io::stdout();
        let mut out = stdout.lock();
        match self.run_with(std::env::args_os(), &mut out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(CliError::Usage(e)) => {
                // Help and version are "errors" that print to stdout.
                let _ = e.print();
                if e.use_stderr() {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(e) => {
                let _ = out.flush();
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    }

    /// Runs `args` (the first being the binary's name), writing the output
    /// to `out`.
    pub fn run_with<I, A>(self, args: I, out: &mut dyn Write) -> Outcome
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString> + Clone,
    {
        let command = <Command as clap::CommandFactory>::command().name(self.name.clone());
        let matches = command.try_get_matches_from(args)?;
        let parsed = <Command as clap::FromArgMatches>::from_arg_matches(&matches)?;
        Session {
            cli: &self,
            connection: parsed.connection,
            store: None,
        }
        .run(parsed.action, out)
    }

    fn table_named(&self, name: &str) -> std::result::Result<&dyn Registered, CliError> {
        self.tables
            .iter()
            .find(|t| t.name() == name)
            .map(|t| &**t)
            .ok_or_else(|| CliError::Unknown {
                what: "table",
                name: name.to_string(),
                known: self.tables.iter().map(|t| t.name().to_string()).collect(),
            })
    }
}

#[derive(Parser, Debug)]
#[command(about = "Reads, migrates and checks hmap tables on HBase", version)]
struct Command {
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    action: Action,
}

#[derive(Args, Debug, Clone)]
struct Connection {
    /// The Thrift2 gateway, host:port.
    #[arg(long, env = "HMAP_THRIFT", global = true)]
    thrift: Option<String>,
    /// Put before every table name in HBase.
    #[arg(long, env = "HMAP_TABLE_PREFIX", global = true, default_value = "")]
    table_prefix: String,
    /// How long one call to HBase may take, in seconds.
    #[arg(long, global = true, default_value_t = 30)]
    timeout: u64,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Every registered table: whether it exists and fits its struct.
    Tables,
    /// A live table as the shell's create statement, and its differences.
    Describe {
        /// The table.
        table: String,
    },
    /// The migration each table needs, as HBase shell statements.
    Plan(MigrateArgs),
    /// Applies the migrations.
    Migrate(MigrateArgs),
    /// Creates a table from its struct.
    Create {
        /// The table.
        table: String,
        /// Print the shell statement; create nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Decodes a rowkey into its named parts.
    Inspect {
        /// The table whose key layout decodes it.
        table: String,
        /// The key as the HBase shell prints it (`\x00\x03u1`), or hex with --hex.
        key: String,
        /// The key is hex.
        #[arg(long)]
        hex: bool,
    },
    /// Reads one row by its key parts.
    Get {
        /// The table.
        table: String,
        /// The key's parts, in key order.
        parts: Vec<String>,
        /// How to print the row.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Reads rows whose key starts with the given parts.
    Scan {
        /// The table.
        table: String,
        /// The leading key parts, in key order (repeat the flag).
        #[arg(long = "prefix")]
        prefix: Vec<String>,
        /// At most this many rows.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// How to print the rows.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Reports what is out of sync in a relation, writing nothing.
    Verify(CheckArgs),
    /// Repairs a relation from its authoritative side.
    Repair(CheckArgs),
    /// Rebuilds an index from its table.
    RebuildIndex(CheckArgs),
}

/// A check of a relation (or an index's rebuild): read in batches, with a
/// progress bar, resumable.
#[derive(Args, Debug)]
struct CheckArgs {
    /// The relation (or index), as registered.
    #[arg(value_name = "NAME")]
    relation: String,
    /// Rows read per batch; a repair writes each batch's fixes before the next.
    #[arg(long, default_value_t = 1000)]
    batch: usize,
    /// Resume after this checkpoint, as an earlier run printed it
    /// (`pass:hex`): a run cut off (Ctrl-C, a crash) goes on from there.
    #[arg(long)]
    from: Option<String>,
}

#[derive(Args, Debug)]
struct MigrateArgs {
    /// The tables (every registered table if none).
    tables: Vec<String>,
    /// Also drop the families the struct does not declare, with their cells.
    #[arg(long)]
    drop_families: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Aligned columns, one per field.
    Table,
    /// One JSON object per row.
    Json,
}

/// One command's run: the CLI, and the store once connected.
struct Session<'c> {
    cli: &'c Cli,
    connection: Connection,
    store: Option<Arc<dyn Store>>,
}

impl Session<'_> {
    fn store(&mut self) -> std::result::Result<Arc<dyn Store>, CliError> {
        if let Some(store) = self.store.as_ref().or(self.cli.store.as_ref()) {
            return Ok(Arc::clone(store));
        }
        let address = self.connection.thrift.clone().ok_or(CliError::NoStore)?;
        let mut config = ThriftConfig::new(address.clone());
        config.table_prefix = self.connection.table_prefix.clone();
        let timeout = Duration::from_secs(self.connection.timeout.max(1));
        config.call_timeout = timeout;
        config.connect_timeout = timeout.min(config.connect_timeout);
        config.read_timeout = timeout;
        let store = ThriftStore::with_config(config);
        block_on(store.ping()).map_err(|source| CliError::Connect {
            address,
            source: Box::new(source),
        })?;
        let store: Arc<dyn Store> = Arc::new(store);
        self.store = Some(Arc::clone(&store));
        Ok(store)
    }

    fn run(mut self, action: Action, out: &mut dyn Write) -> Outcome {
        match action {
            Action::Tables => self.tables(out),
            Action::Describe { table } => self.describe(&table, out),
            Action::Plan(args) => self.migrate(&args, false, out),
            Action::Migrate(args) => self.migrate(&args, true, out),
            Action::Create { table, dry_run } => {
                let table = self.cli.table_named(&table)?;
                if dry_run {
                    writeln!(out, "{}", table.schema())?;
                    return Ok(());
                }
                let store = self.store()?;
                table.create(store)?;
                writeln!(out, "created {}", table.name())?;
                Ok(())
            }
            Action::Inspect { table, key, hex } => {
                let table = self.cli.table_named(&table)?;
                let bytes = if hex { from_hex(&key)? } else { parse_printable(&key) };
                let inspected = table.key_schema().inspect(&bytes).map_err(|source| CliError::Key {
                    table: table.name(),
                    source,
                })?;
                writeln!(out, "{inspected:#}")?;
                Ok(())
            }
            Action::Get { table, parts, format } => {
                let table = self.cli.table_named(&table)?;
                let key = key_parts(table, &parts, true)?;
                let store = self.store()?;
                match table.get(store, key)? {
                    Some(row) => print_rows(table, vec![row], format, out),
                    None => {
                        writeln!(out, "no row")?;
                        Ok(())
                    }
                }
            }
            Action::Scan {
                table,
                prefix,
                limit,
                format,
            } => {
                let table = self.cli.table_named(&table)?;
                let prefix = key_parts(table, &prefix, false)?;
                let store = self.store()?;
                let rows = table.scan(store, prefix, limit)?;
                print_rows(table, rows, format, out)
            }
            Action::Verify(args) => self.check(&args.relation, Check::Verify, Some(&args), out),
            Action::Repair(args) => self.check(&args.relation, Check::Repair, Some(&args), out),
            Action::RebuildIndex(args) => self.check(&args.relation, Check::Rebuild, Some(&args), out),
        }
    }

    fn tables(&mut self, out: &mut dyn Write) -> Outcome {
        let store = self.store()?;
        let live = block_on(store.list_tables())?;
        let width = self.cli.tables.iter().map(|t| t.name().len()).max().unwrap_or(0);
        for table in &self.cli.tables {
            let status = if !live.iter().any(|l| l == table.name()) {
                "missing: `plan` shows how to create it".to_string()
            } else {
                let diff = table.diff(Arc::clone(&store))?;
                match diff.errors().count() {
                    0 => "ok".to_string(),
                    n => format!(
                        "drift: {n} difference{} (`describe` lists them)",
                        if n == 1 { "" } else { "s" }
                    ),
                }
            };
            writeln!(out, "{:width$}  {status}", table.name())?;
        }
        for name in live.iter().filter(|l| !self.cli.tables.iter().any(|t| t.name() == *l)) {
            writeln!(out, "{name:width$}  not registered")?;
        }
        Ok(())
    }

    fn describe(&mut self, name: &str, out: &mut dyn Write) -> Outcome {
        let store = self.store()?;
        let registered = self.cli.table_named(name).ok();
        let live = block_on(store.describe_table(name))?;
        writeln!(out, "{live}")?;
        if let Some(table) = registered {
            let diff = SchemaDiff::between(&table.schema(), &live);
            if diff.is_empty() {
                writeln!(out, "# fits its struct")?;
            }
            for d in &diff.differences {
                writeln!(out, "# {d}")?;
            }
        }
        Ok(())
    }

    fn migrate(&mut self, args: &MigrateArgs, apply: bool, out: &mut dyn Write) -> Outcome {
        let store = self.store()?;
        let tables: Vec<&dyn Registered> = if args.tables.is_empty() {
            self.cli.tables.iter().map(|t| &**t).collect()
        } else {
            args.tables
                .iter()
                .map(|n| self.cli.table_named(n))
                .collect::<std::result::Result<_, _>>()?
        };
        let options = MigrateOptions::new().drop_families(args.drop_families);
        for table in tables {
            let migration = table.migration(Arc::clone(&store), &options)?;
            if migration.is_empty() && migration.notes().is_empty() {
                writeln!(out, "# {}: up to date", table.name())?;
                continue;
            }
            writeln!(out, "# {}", table.name())?;
            write!(out, "{migration}")?;
            if apply && !migration.is_empty() {
                block_on(migration.apply(&*store))?;
                writeln!(out, "# {}: applied {} step(s)", table.name(), migration.steps().len())?;
            }
        }
        Ok(())
    }

    fn check(&mut self, name: &str, check: Check, args: Option<&CheckArgs>, out: &mut dyn Write) -> Outcome {
        let (_, build) = self
            .cli
            .relations
            .iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| CliError::Unknown {
                what: "relation",
                name: name.to_string(),
                known: self.cli.relations.iter().map(|(n, _)| n.clone()).collect(),
            })?;
        let relation = build(self.store()?);
        let mut options = CheckOptions::new();
        if let Some(args) = args {
            options = options.batch(args.batch);
            if let Some(from) = &args.from {
                options = options.from(from.parse().map_err(CliError::Checkpoint)?);
            }
        }
        let progress = CheckProgress::new(name);
        let options = options.progress(progress.reporter());
        let report = match check {
            Check::Verify | Check::Repair => relation.check_blocking(check == Check::Repair, &options),
            Check::Rebuild => {
                let rebuilt = relation.rebuild_with_blocking(&options);
                progress.finish();
                rebuilt.ok_or_else(|| CliError::NotAnIndex(name.to_string()))??;
                writeln!(out, "{name}: rebuilt")?;
                return Ok(());
            }
        };
        progress.finish();
        let report = report?;
        print_report(name, check, &report, out)
    }
}

/// The progress of a long check: a spinner on a terminal, saying where to
/// resume from; elsewhere (a log, a pipe), a line per batch on stderr with
/// the checkpoint, so that a run cut off can be resumed with `--from`.
struct CheckProgress {
    bar: indicatif::ProgressBar,
    name: String,
}

impl CheckProgress {
    fn new(name: &str) -> Self {
        let bar = if io::IsTerminal::is_terminal(&io::stderr()) {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        CheckProgress {
            bar,
            name: name.to_string(),
        }
    }

    fn reporter(&self) -> impl Fn(&Progress) + Send + Sync + 'static {
        let bar = self.bar.clone();
        let name = self.name.clone();
        move |p: &Progress| {
            let line = format!(
                "{name}: {} rows read ({}), {} found; resume with --from {}",
                p.rows, p.pass, p.found, p.checkpoint
            );
            if bar.is_hidden() {
                eprintln!("{line}");
            } else {
                bar.set_message(line);
            }
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Verify,
    Repair,
    Rebuild,
}

fn print_report(name: &str, check: Check, report: &Report, out: &mut dyn Write) -> Outcome {
    let verb = if check == Check::Repair { "repaired" } else { "verified" };
    writeln!(out, "{name}: {verb}: {report}")?;
    for (kind, entries) in [
        ("missing", &report.missing),
        ("dangling", &report.dangling),
        ("stale", &report.stale),
        ("absent", &report.absent),
        ("held", &report.held),
        ("unreadable", &report.unreadable),
    ] {
        for entry in entries {
            writeln!(out, "  {kind}: {entry}")?;
        }
    }
    Ok(())
}

/// A row as printed: its fields as JSON values, in declaration order.
type PrintedRow = serde_json::Value;

/// A registered table, its struct erased.
trait Registered {
    fn name(&self) -> &'static str;
    fn schema(&self) -> TableSchema;
    fn key_schema(&self) -> &'static KeySchema;
    fn fields(&self) -> Vec<&'static str>;
    fn create(&self, store: Arc<dyn Store>) -> hmap::Result<()>;
    fn diff(&self, store: Arc<dyn Store>) -> hmap::Result<SchemaDiff>;
    fn migration(&self, store: Arc<dyn Store>, options: &MigrateOptions) -> hmap::Result<Migration>;
    fn get(&self, store: Arc<dyn Store>, key: Vec<PartValue>) -> hmap::Result<Option<PrintedRow>>;
    fn scan(&self, store: Arc<dyn Store>, prefix: Vec<PartValue>, limit: usize) -> hmap::Result<Vec<PrintedRow>>;
}

struct Typed<T>(PhantomData<fn() -> T>);

impl<T: HTable + Serialize> Typed<T> {
    fn printed(row: &T) -> hmap::Result<PrintedRow> {
        serde_json::to_value(row).map_err(|e| Error::Query {
            table: T::TABLE,
            reason: format!("the row does not serialize: {e}"),
        })
    }
}

impl<T: HTable + Serialize> Registered for Typed<T> {
    fn name(&self) -> &'static str {
        T::TABLE
    }
    fn schema(&self) -> TableSchema {
        T::table_schema()
    }
    fn key_schema(&self) -> &'static KeySchema {
        T::key_schema()
    }
    fn fields(&self) -> Vec<&'static str> {
        T::fields().iter().map(|f| f.name).collect()
    }
    fn create(&self, store: Arc<dyn Store>) -> hmap::Result<()> {
        Table::<T, _>::new(store).create()
    }
    fn diff(&self, store: Arc<dyn Store>) -> hmap::Result<SchemaDiff> {
        Table::<T, _>::new(store).schema_diff()
    }
    fn migration(&self, store: Arc<dyn Store>, options: &MigrateOptions) -> hmap::Result<Migration> {
        Table::<T, _>::new(store).migration(options)
    }
    fn get(&self, store: Arc<dyn Store>, key: Vec<PartValue>) -> hmap::Result<Option<PrintedRow>> {
        Table::<T, _>::new(store)
            .get(key)?
            .map(|row| Self::printed(&row))
            .transpose()
    }
    fn scan(&self, store: Arc<dyn Store>, prefix: Vec<PartValue>, limit: usize) -> hmap::Result<Vec<PrintedRow>> {
        let table = Table::<T, _>::new(store);
        let query = if prefix.is_empty() {
            Query::all()
        } else {
            Query::prefix(prefix)
        };
        table
            .scan(query.limit(limit))?
            .map(|row| Self::printed(&row?))
            .collect()
    }
}

/// The key parts given on the command line, read as the table's part types:
/// all of them for a whole key (`whole`), else a leading prefix.
fn key_parts(table: &dyn Registered, texts: &[String], whole: bool) -> std::result::Result<Vec<PartValue>, CliError> {
    let specs: Vec<_> = table.key_schema().parts().collect();
    if texts.len() > specs.len() || (whole && texts.len() < specs.len()) {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_ref()).collect();
        return Err(CliError::KeyParts {
            table: table.name(),
            reason: format!(
                "the key has {} part(s) ({}), {} given",
                specs.len(),
                names.join(", "),
                texts.len()
            ),
        });
    }
    specs
        .iter()
        .zip(texts)
        .map(|(spec, text)| {
            parse_part(spec.kind, text).map_err(|reason| CliError::KeyPart {
                table: table.name(),
                part: spec.name.to_string(),
                kind: spec.kind,
                text: text.clone(),
                reason,
            })
        })
        .collect()
}

/// A key part's value from its text: numbers and booleans as Rust reads
/// them, times as RFC 3339 (`2026-11-22T10:00:00Z`) or milliseconds since
/// the epoch, dates as `2026-11-22`, bytes as the HBase shell prints them.
fn parse_part(kind: PartKind, text: &str) -> std::result::Result<PartValue, String> {
    fn number<T: std::str::FromStr>(text: &str) -> std::result::Result<T, String>
    where
        T::Err: std::fmt::Display,
    {
        text.parse::<T>().map_err(|e| e.to_string())
    }
    Ok(match kind {
        PartKind::U8 => PartValue::U8(number(text)?),
        PartKind::U16 => PartValue::U16(number(text)?),
        PartKind::U32 => PartValue::U32(number(text)?),
        PartKind::U64 => PartValue::U64(number(text)?),
        PartKind::U128 => PartValue::U128(number(text)?),
        PartKind::I8 => PartValue::I8(number(text)?),
        PartKind::I16 => PartValue::I16(number(text)?),
        PartKind::I32 => PartValue::I32(number(text)?),
        PartKind::I64 => PartValue::I64(number(text)?),
        PartKind::I128 => PartValue::I128(number(text)?),
        PartKind::F32 => PartValue::F32(number(text)?),
        PartKind::F64 => PartValue::F64(number(text)?),
        PartKind::Bool => PartValue::Bool(number(text)?),
        PartKind::Str => PartValue::Str(text.to_string()),
        PartKind::Bytes => PartValue::Bytes(Bytes::from(parse_printable(text))),
        PartKind::FixedBytes(len) => {
            let bytes = parse_printable(text);
            if bytes.len() != len {
                return Err(format!("{} bytes, the part holds {len}", bytes.len()));
            }
            PartValue::FixedBytes(bytes)
        }
        PartKind::Uuid => PartValue::Uuid(number(text)?),
        PartKind::DateTime => PartValue::DateTime(match text.parse::<i64>() {
            Ok(millis) => DateTime::<Utc>::from_timestamp_millis(millis).ok_or("milliseconds out of range")?,
            Err(_) => DateTime::parse_from_rfc3339(text)
                .map_err(|e| format!("{e} (give RFC 3339, 2026-11-22T10:00:00Z, or milliseconds)"))?
                .with_timezone(&Utc),
        }),
        PartKind::Date => PartValue::Date(NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|e| e.to_string())?),
        other => return Err(format!("parts of kind {other:?} cannot be given on the command line")),
    })
}

fn from_hex(text: &str) -> std::result::Result<Vec<u8>, CliError> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err(CliError::Hex(text.to_string()));
    }
    digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| CliError::Hex(text.to_string()))
        })
        .collect()
}

fn print_rows(table: &dyn Registered, rows: Vec<PrintedRow>, format: Format, out: &mut dyn Write) -> Outcome {
    match format {
        Format::Json => {
            for row in rows {
                writeln!(out, "{row}")?;
            }
        }
        Format::Table => {
            let fields = table.fields();
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|row| fields.iter().map(|f| shown(row.get(*f))).collect())
                .collect();
            let widths: Vec<usize> = fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    cells
                        .iter()
                        .map(|r| r[i].chars().count())
                        .chain([f.len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |values: &mut dyn Iterator<Item = &str>| {
                let mut text = String::new();
                for (value, width) in values.zip(&widths) {
                    let _ = write!(text, "{value:width$}  ");
                }
                text.trim_end().to_string()
            };
            writeln!(out, "{}", line(&mut fields.iter().copied()))?;
            for row in &cells {
                writeln!(out, "{}", line(&mut row.iter().map(String::as_str)))?;
            }
        }
    }
    Ok(())
}

/// A field's value in a table cell: strings bare, everything else as JSON.
fn shown(value: Option<&serde_json::Value>) -> String {
    match value {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}
