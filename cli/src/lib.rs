//! hmap's operator CLI: a library that an application mounts in a binary of
//! its own, with its tables and relations registered.
//!
//! A crate of its own (on clap), so that hmap itself never builds a command
//! line parser; it depends on hmap alone. This package also ships
//! `hmap-cli`, the CLI with the example apps' tables registered
//! (`src/main.rs`; `cargo install --path cli`).
//!
//! Schemas are Rust types, so the CLI is a library: the binary registers the
//! structs it knows, and the CLI reads, plans, migrates and checks them on a
//! live HBase (through `NativeStore`, a Thrift2 or a Thrift1 gateway) or on
//! a store the binary provides.
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
//! The store: exactly one of `--native host:port`, `--zookeeper quorum`,
//! `--thrift host:port` or `--thrift1 host:port` (with `--framed`,
//! `--compact`, `--http`, `--https`, `--ca` for the gateway's wire mode;
//! `--tls`, `--ca`, `--tls-cert` and `--tls-key` for NativeStore over TLS
//! and mutual TLS: built with the `tls` feature);
//! without one, the one variable set among those
//! [`hmap::store::backend`] reads (`HMAP_NATIVE`, `HMAP_THRIFT`, ...,
//! with `HMAP_NATIVE_TLS_CA`, `HMAP_NATIVE_TLS_CERT`, `HMAP_NATIVE_TLS_KEY`
//! for TLS); or the
//! one given to [`Cli::store`]. `--table-prefix` (or `HMAP_TABLE_PREFIX`)
//! prefixes the tables. Commands that need no store (`create --dry-run`,
//! `inspect`) run without one.
//!
//! The exit status ([`Cli::run`], [`Status`]), as fsck and diff use theirs:
//! 0 done and nothing wrong found, 1 problems found (`verify`, `repair`),
//! 2 the command could not run. `--format json` prints rows in their
//! struct's field order, and a check's report as one line with its fields
//! in a fixed order (docs/cli.md).

mod hints;

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
use hmap::store::backend::{ENV_VARIABLES, KerberosSettings, https};
use hmap::store::{Backend, BackendError, Store, StoreError, ThriftHttp, ThriftProtocol};
use hmap::{Error, HTable, Query};

/// What went wrong in a command. Each names what it is about; `Display` is
/// the line the CLI prints after `error: `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The command line does not parse (clap's message, with usage).
    #[error("{0}")]
    Usage(clap::Error),
    /// The command needs a store and neither a flag nor the environment
    /// names one.
    #[error(
        "no store: pass one of {flags} (or set one of {vars})",
        flags = STORE_FLAGS.join(", "),
        vars = ENV_VARIABLES.join(", ")
    )]
    NoStore,
    /// More than one store is named, by flags or (without a flag) by the
    /// environment.
    #[error(
        "{} name several stores ({}): {}",
        if *.from_env { "the environment's variables" } else { "the flags" },
        .named.join(", "),
        if *.from_env {
            format!("pass one of {} (a flag overrides the environment), or leave one variable set", STORE_FLAGS.join(", "))
        } else {
            format!("pass exactly one of {}", STORE_FLAGS.join(", "))
        }
    )]
    SeveralStores {
        /// The flags, or the variables, that name a store.
        named: Vec<String>,
        /// Whether they are environment variables.
        from_env: bool,
    },
    /// A wire flag (`--framed`, `--compact`, `--http`, `--https`, `--ca`)
    /// without a Thrift gateway to apply to.
    #[error("{flag} applies to a Thrift gateway: give it with --thrift or --thrift1")]
    WireFlag {
        /// The flag.
        flag: &'static str,
    },
    /// A Kerberos setting (`--server-principal`, `--protection`) given with
    /// no Kerberos login (`--principal` and `--keytab`, or `--kerberos`).
    #[error("{flag} sets up a Kerberos login: give it with --principal and --keytab, or --kerberos")]
    KerberosFlag {
        /// The flag.
        flag: &'static str,
    },
    /// A NativeStore flag (`--tls`, `--tls-cert`) given with a Thrift gateway.
    #[error("{flag} applies to NativeStore: give it with --native or --zookeeper")]
    NativeFlag {
        /// The flag.
        flag: &'static str,
    },
    /// A flag that sets up a store's connection given with no store named
    /// by a flag (the environment's store takes its settings from the
    /// environment).
    #[error(
        "{flag} sets up the store named by --native, --zookeeper, --thrift or --thrift1; with the store in the environment, use its variables (HMAP_THRIFT_CA, HMAP_NATIVE_TLS_CA ...)"
    )]
    StoreFlag {
        /// The flag.
        flag: &'static str,
    },
    /// The store named cannot be set up (a CA that cannot be read, a
    /// feature this build lacks).
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// HBase does not answer there, or not as that kind of store.
    #[error("{named_by}: cannot connect to {backend}: {source}")]
    Connect {
        /// The store, as [`Backend`] prints it.
        backend: String,
        /// The flag or variable that named it.
        named_by: String,
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
    /// A `--from` that is not a checkpoint.
    #[error("{0}")]
    Checkpoint(String),
    /// The relation has nothing to rebuild.
    #[error("`{0}` has nothing to rebuild: rebuild-index takes an index")]
    NotAnIndex(String),
    /// What hmap answered.
    #[error(transparent)]
    Hmap(Box<Error>),
    /// Writing the output failed.
    #[error("writing the output: {0}")]
    Io(io::Error),
}

// Written out rather than `#[from]`, which would also make the wrapped error
// the `source()`: its text is already in the message, and a chain printer
// would show it twice.
impl From<clap::Error> for CliError {
    fn from(error: clap::Error) -> Self {
        CliError::Usage(error)
    }
}

impl From<io::Error> for CliError {
    fn from(error: io::Error) -> Self {
        CliError::Io(error)
    }
}

impl CliError {
    /// The exit status for this error: 2, "the command could not run" (see
    /// [`Status`]); 0 for `--help` and `--version`, which clap returns as
    /// errors.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(e) if !e.use_stderr() => ExitCode::SUCCESS,
            _ => ExitCode::from(2),
        }
    }
}

/// How a command that ran went, as its exit status says it, the way fsck
/// and diff use theirs: [`Clean`](Status::Clean) 0, [`Problems`](Status::Problems)
/// 1, [`NotFound`](Status::NotFound) 3; a command that could not run is a
/// [`CliError`], status 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// Done, and nothing wrong found: exit status 0.
    Clean,
    /// `verify` or `repair` found problems (each listed in its report):
    /// exit status 1, after a `repair` too, which fixed what it could
    /// (those it could not are `held` and `unreadable` entries).
    Problems,
    /// `get` found no row under the key (it printed `no row`): exit status
    /// 3, distinct from a command that could not run (2), so that a script
    /// can tell "absent" from "HBase unreachable".
    NotFound,
}

impl Status {
    /// 0, 1 or 3.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Status::Clean => ExitCode::SUCCESS,
            Status::Problems => ExitCode::from(1),
            Status::NotFound => ExitCode::from(3),
        }
    }
}

/// The flags that name a store: exactly one is given, or none and one of
/// [`ENV_VARIABLES`] is set.
pub const STORE_FLAGS: [&str; 5] = ["--native", "--zookeeper", "--thrift", "--thrift1", "--bigtable"];

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
    /// stderr. The exit status, as fsck and diff use theirs: 0 done and
    /// nothing wrong found, 1 problems found (`verify`, `repair`), 2 the
    /// command could not run (a command line that does not parse, no
    /// store, HBase unreachable, any error); see [`Status`].
    pub fn run(self) -> ExitCode {
        let stdout = io::stdout();
        let mut out = stdout.lock();
        match self.run_with(std::env::args_os(), &mut out) {
            Ok(status) => status.exit_code(),
            Err(CliError::Usage(e)) => {
                // Help and version are "errors" that print to stdout.
                let _ = e.print();
                CliError::Usage(e).exit_code()
            }
            Err(e) => {
                let _ = out.flush();
                eprintln!("error: {}", hints::in_flags(&e.to_string()));
                e.exit_code()
            }
        }
    }

    /// Runs `args` (the first being the binary's name), writing the output
    /// to `out`: how it went, or why it could not run.
    pub fn run_with<I, A>(self, args: I, out: &mut dyn Write) -> std::result::Result<Status, CliError>
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

/// What `--help` says after the options: where the store comes from, and
/// the exit status.
const AFTER_HELP: &str = "\
The store: exactly one of --native, --zookeeper, --thrift, --thrift1, --bigtable;
without one, the one environment variable set among HMAP_THRIFT, HMAP_NATIVE,
HMAP_ZOOKEEPER, HMAP_THRIFT_FRAMED, HMAP_THRIFT_COMPACT, HMAP_THRIFT_HTTPS (with
HMAP_THRIFT_CA), HMAP_THRIFT1, HMAP_THRIFT1_COMPACT (as `scripts/hbase/hbase
start` prints them), HMAP_BIGTABLE (as `scripts/bigtable/emulator start` does).

Exit status: 0 done, nothing wrong found; 1 problems found (verify, repair);
2 the command could not run (a bad command line, no store, HBase unreachable, an error);
3 not found (get: no row under the key).";

#[derive(Parser, Debug)]
#[command(about = "Reads, migrates and checks hmap tables on HBase", version, after_help = AFTER_HELP)]
struct Command {
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    action: Action,
}

/// Where the store is: one backend flag (else the environment), the Thrift
/// wire flags, and what applies to every store.
#[derive(Args, Debug, Clone)]
struct Connection {
    /// HBase through its own RPC (NativeStore), bootstrapped from masters: host:port[,host:port] [env: HMAP_NATIVE]
    #[arg(long, value_name = "ADDRS", global = true, help_heading = "Store")]
    native: Option<String>,
    /// HBase through its own RPC (NativeStore), found through a ZooKeeper quorum: host:port[,host:port] [env: HMAP_ZOOKEEPER]
    #[arg(long, value_name = "QUORUM", global = true, help_heading = "Store")]
    zookeeper: Option<String>,
    /// A Thrift2 gateway (`hbase thrift2`), host:port [env: HMAP_THRIFT, HMAP_THRIFT_FRAMED, HMAP_THRIFT_COMPACT, HMAP_THRIFT_HTTPS]
    #[arg(long, value_name = "ADDR", global = true, help_heading = "Store")]
    thrift: Option<String>,
    /// A Thrift1 gateway (`hbase thrift`), host:port [env: HMAP_THRIFT1, HMAP_THRIFT1_COMPACT]
    #[arg(long, value_name = "ADDR", global = true, help_heading = "Store")]
    thrift1: Option<String>,
    /// Bigtable (BigtableStore; the CLI's feature `bigtable`): the emulator's host:port (project and instance `hmap`),
    /// host:port/projects/P/instances/I, or projects/P/instances/I (Cloud Bigtable with application-default
    /// credentials; the emulator at BIGTABLE_EMULATOR_HOST when that is set) [env: HMAP_BIGTABLE]
    #[arg(long, value_name = "ADDR", global = true, help_heading = "Store")]
    bigtable: Option<String>,
    /// The gateway's transport is framed (`-f`, `-hsha`, `-nonblocking`, `-threadedselector`)
    #[arg(long, global = true, help_heading = "Store")]
    framed: bool,
    /// The gateway speaks the compact protocol (`-c`)
    #[arg(long, global = true, help_heading = "Store")]
    compact: bool,
    /// The gateway runs in HTTP mode (`hbase.regionserver.thrift.http`)
    #[arg(long, global = true, help_heading = "Store")]
    http: bool,
    /// HTTPS: HTTP mode with `hbase.thrift.ssl.enabled`; needs the `tls` feature
    #[arg(long, global = true, help_heading = "Store")]
    https: bool,
    /// HTTPS (a Thrift gateway) or TLS (NativeStore), the server's certificate checked against this CA (PEM) rather than the platform's roots [env: HMAP_THRIFT_CA, HMAP_NATIVE_TLS_CA]
    #[arg(long, value_name = "PEM", global = true, help_heading = "Store")]
    ca: Option<std::path::PathBuf>,
    /// NativeStore over TLS (HBase 2.6's RPC TLS), the servers' certificates checked against the platform's roots, or --ca's; needs the `tls` feature
    #[arg(long, global = true, help_heading = "Store")]
    tls: bool,
    /// NativeStore over mutual TLS: the client's certificate chain (PEM), with --tls-key [env: HMAP_NATIVE_TLS_CERT]
    #[arg(
        long,
        value_name = "PEM",
        global = true,
        help_heading = "Store",
        requires = "tls_key"
    )]
    tls_cert: Option<std::path::PathBuf>,
    /// The key of --tls-cert's certificate (PEM) [env: HMAP_NATIVE_TLS_KEY]
    #[arg(
        long,
        value_name = "PEM",
        global = true,
        help_heading = "Store",
        requires = "tls_cert"
    )]
    tls_key: Option<std::path::PathBuf>,
    /// Kerberos, logged in as this principal from --keytab: NativeStore's SASL, or a Thrift gateway's (unframed, hbase.thrift.security.qop); needs the `kerberos` feature [env: HMAP_PRINCIPAL]
    #[arg(
        long,
        value_name = "PRINCIPAL",
        global = true,
        help_heading = "Store",
        requires = "keytab"
    )]
    principal: Option<String>,
    /// The keytab file of --principal [env: HMAP_KEYTAB]
    #[arg(
        long,
        value_name = "FILE",
        global = true,
        help_heading = "Store",
        requires = "principal"
    )]
    keytab: Option<std::path::PathBuf>,
    /// Kerberos from the ticket cache (kinit), as --principal [env: HMAP_KERBEROS=ticket-cache]
    #[arg(long, global = true, help_heading = "Store", conflicts_with = "principal")]
    kerberos: bool,
    /// The servers' Kerberos principal, as hbase.regionserver.kerberos.principal or a gateway's hbase.thrift.kerberos.principal (hbase/_HOST@REALM) [env: HMAP_SERVER_PRINCIPAL]
    #[arg(long, value_name = "PRINCIPAL", global = true, help_heading = "Store")]
    server_principal: Option<String>,
    /// The ZooKeeper quorum's Kerberos principal (zookeeper/_HOST@REALM), for a quorum that demands SASL, with --zookeeper [env: HMAP_ZOOKEEPER_PRINCIPAL]
    #[arg(long, value_name = "PRINCIPAL", global = true, help_heading = "Store")]
    zookeeper_principal: Option<String>,
    /// The protection levels accepted, as hbase.rpc.protection: privacy, integrity, authentication (several separated by commas, the first preferred) [env: HMAP_KRB_PROTECTION]
    #[arg(long, value_name = "LEVELS", global = true, help_heading = "Store")]
    protection: Option<String>,
    /// Put before every table name in HBase.
    #[arg(long, env = "HMAP_TABLE_PREFIX", global = true, default_value = "")]
    table_prefix: String,
    /// How long one call to HBase may take, in seconds.
    #[arg(long, global = true, default_value_t = 30)]
    timeout: u64,
}

/// BigtableStore on the emulator at `address` or the Cloud Bigtable
/// instance it names, for `--bigtable`.
fn bigtable(address: &str) -> std::result::Result<Backend, CliError> {
    #[cfg(feature = "bigtable")]
    {
        Ok(Backend::bigtable(address))
    }
    #[cfg(not(feature = "bigtable"))]
    {
        Err(hmap::store::BackendError::Feature {
            named_by: format!("--bigtable {address}"),
            what: "BigtableStore",
            feature: "bigtable (build hmap-cli with --features bigtable)",
        }
        .into())
    }
}

/// The flags of `flags` that were given, in order.
fn given<const N: usize>(flags: [(&'static str, bool); N]) -> Vec<&'static str> {
    flags
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
}

impl Connection {
    /// The store these flags name, else the one the environment names,
    /// and what named it.
    fn backend(&self) -> std::result::Result<(Backend, String), CliError> {
        let flags: Vec<(&'static str, Backend)> = [
            ("--native", self.native.as_deref().map(Backend::native)),
            ("--zookeeper", self.zookeeper.as_deref().map(Backend::zookeeper)),
            ("--thrift", self.thrift.as_deref().map(Backend::thrift)),
            ("--thrift1", self.thrift1.as_deref().map(Backend::thrift1)),
            ("--bigtable", self.bigtable.as_deref().map(bigtable).transpose()?),
        ]
        .into_iter()
        .filter_map(|(flag, backend)| Some((flag, backend?)))
        .collect();
        let wire = given([
            ("--framed", self.framed),
            ("--compact", self.compact),
            ("--http", self.http),
            ("--https", self.https),
        ]);
        let native_only = given([("--tls", self.tls), ("--tls-cert", self.tls_cert.is_some())]);
        let kerberos = given([
            ("--principal", self.principal.is_some()),
            ("--kerberos", self.kerberos),
            ("--server-principal", self.server_principal.is_some()),
            ("--protection", self.protection.is_some()),
            ("--zookeeper-principal", self.zookeeper_principal.is_some()),
        ]);
        let (flag, mut backend) = match <[_; 1]>::try_from(flags) {
            Ok([one]) => one,
            Err(flags) if !flags.is_empty() => {
                return Err(CliError::SeveralStores {
                    named: flags.iter().map(|(f, _)| f.to_string()).collect(),
                    from_env: false,
                });
            }
            Err(_) => {
                if let Some(flag) = wire.first() {
                    return Err(CliError::WireFlag { flag });
                }
                if let Some(flag) = native_only.first() {
                    return Err(CliError::NativeFlag { flag });
                }
                if let Some(flag) = kerberos.first() {
                    return Err(CliError::StoreFlag { flag });
                }
                if self.ca.is_some() {
                    return Err(CliError::StoreFlag { flag: "--ca" });
                }
                return self.env_backend();
            }
        };
        if let Some(config) = backend.thrift_config_mut() {
            if let Some(flag) = native_only.first() {
                return Err(CliError::NativeFlag { flag });
            }
            config.framed = self.framed;
            if self.compact {
                config.protocol = ThriftProtocol::Compact;
            }
            if self.https || self.ca.is_some() {
                let named_by = if self.ca.is_some() { "--ca" } else { "--https" };
                config.http = Some(https(self.ca.as_deref(), named_by)?);
            } else if self.http {
                config.http = Some(ThriftHttp::plain());
            }
        } else if let Some(flag) = wire.first() {
            return Err(CliError::WireFlag { flag });
        } else if self.tls || self.ca.is_some() || self.tls_cert.is_some() {
            let named_by = given([
                ("--tls", self.tls),
                ("--ca", self.ca.is_some()),
                ("--tls-cert", self.tls_cert.is_some()),
            ])
            .join(" ");
            let client = self.tls_cert.as_deref().zip(self.tls_key.as_deref());
            backend.set_native_tls(self.ca.as_deref(), client, &named_by)?;
        }
        if self.principal.is_some() || self.kerberos {
            let mut settings = match self.principal.clone().zip(self.keytab.clone()) {
                Some((principal, keytab)) => KerberosSettings::keytab(principal, keytab),
                None => KerberosSettings::ticket_cache(),
            };
            if let Some(principal) = &self.server_principal {
                settings = settings.server_principal(principal);
            }
            if let Some(principal) = &self.zookeeper_principal {
                settings = settings.zookeeper_principal(principal);
            }
            if let Some(levels) = &self.protection {
                settings = settings.protection(levels);
            }
            let named_by = if self.kerberos { "--kerberos" } else { "--principal" };
            backend.set_kerberos(&settings, named_by)?;
        } else if let Some(&flag) = given([
            ("--server-principal", self.server_principal.is_some()),
            ("--protection", self.protection.is_some()),
            ("--zookeeper-principal", self.zookeeper_principal.is_some()),
        ])
        .first()
        {
            return Err(CliError::KerberosFlag { flag });
        }
        Ok((backend, flag.to_string()))
    }

    /// The store the environment names: exactly one of [`ENV_VARIABLES`]
    /// set.
    fn env_backend(&self) -> std::result::Result<(Backend, String), CliError> {
        match Backend::env_variables_set()[..] {
            [] => Err(CliError::NoStore),
            [variable] => {
                let backend = Backend::from_env_var(variable)?.ok_or(CliError::NoStore)?;
                Ok((backend, variable.to_string()))
            }
            ref several => Err(CliError::SeveralStores {
                named: several.iter().map(|v| v.to_string()).collect(),
                from_env: true,
            }),
        }
    }
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
    /// How to print the report: `json` is one line, its fields in a fixed order (docs/cli.md).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
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
        let (mut backend, named_by) = self.connection.backend()?;
        backend.set_table_prefix(&self.connection.table_prefix);
        backend.set_timeout(Duration::from_secs(self.connection.timeout.max(1)));
        let shown = backend.to_string();
        let store = block_on(backend.connect()).map_err(|source| CliError::Connect {
            backend: shown,
            named_by,
            source: Box::new(source),
        })?;
        self.store = Some(Arc::clone(&store));
        Ok(store)
    }

    fn run(mut self, action: Action, out: &mut dyn Write) -> std::result::Result<Status, CliError> {
        let done = match action {
            Action::Tables => self.tables(out),
            Action::Describe { table } => self.describe(&table, out),
            Action::Plan(args) => self.migrate(&args, false, out),
            Action::Migrate(args) => self.migrate(&args, true, out),
            Action::Create { table, dry_run } => {
                let table = self.cli.table_named(&table)?;
                if dry_run {
                    writeln!(out, "{}", table.schema())?;
                } else {
                    let store = self.store()?;
                    table.create(store)?;
                    writeln!(out, "created {}", table.name())?;
                }
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
                        return Ok(Status::NotFound);
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
            Action::Verify(args) => return self.check(Check::Verify, &args, out),
            Action::Repair(args) => return self.check(Check::Repair, &args, out),
            Action::RebuildIndex(args) => return self.check(Check::Rebuild, &args, out),
        };
        done.map(|()| Status::Clean)
    }

    /// The tables the registered relations keep of their own (an index's
    /// table), each with the relation's name and the schema it creates.
    fn helper_tables(&mut self) -> std::result::Result<Vec<(String, TableSchema)>, CliError> {
        let store = self.store()?;
        Ok(self
            .cli
            .relations
            .iter()
            .flat_map(|(name, build)| {
                build(Arc::clone(&store))
                    .own_tables()
                    .into_iter()
                    .map(|schema| (name.clone(), schema))
            })
            .collect())
    }

    fn tables(&mut self, out: &mut dyn Write) -> Outcome {
        let store = self.store()?;
        let live = block_on(store.list_tables())?;
        let helpers = self.helper_tables()?;
        let registered = |name: &str| {
            self.cli.tables.iter().any(|t| t.name() == name) || helpers.iter().any(|(_, s)| s.name == name)
        };
        let width = (self.cli.tables.iter().map(|t| t.name().len()))
            .chain(helpers.iter().map(|(_, s)| s.name.len()))
            .chain(live.iter().map(String::len))
            .max()
            .unwrap_or(0);
        let status = |diff: Option<SchemaDiff>| match diff {
            None => "missing: `plan` shows how to create it".to_string(),
            Some(diff) => match diff.errors().count() {
                0 => "ok".to_string(),
                n => format!(
                    "drift: {n} difference{} (`describe` lists them)",
                    if n == 1 { "" } else { "s" }
                ),
            },
        };
        for table in &self.cli.tables {
            let diff = match live.iter().any(|l| l == table.name()) {
                true => Some(table.diff(Arc::clone(&store))?),
                false => None,
            };
            writeln!(out, "{:width$}  {}", table.name(), status(diff))?;
        }
        for (relation, schema) in &helpers {
            let diff = match live.contains(&schema.name) {
                true => Some(SchemaDiff::between(
                    schema,
                    &block_on(store.describe_table(&schema.name))?,
                )),
                false => None,
            };
            writeln!(out, "{:width$}  {} (kept by `{relation}`)", schema.name, status(diff))?;
        }
        for name in live.iter().filter(|l| !registered(l)) {
            writeln!(out, "{name:width$}  not registered")?;
        }
        Ok(())
    }

    fn describe(&mut self, name: &str, out: &mut dyn Write) -> Outcome {
        let store = self.store()?;
        let declared = match self.cli.table_named(name) {
            Ok(table) => Some(table.schema()),
            Err(_) => self
                .helper_tables()?
                .into_iter()
                .map(|(_, s)| s)
                .find(|s| s.name == name),
        };
        let live = block_on(store.describe_table(name))?;
        writeln!(out, "{live}")?;
        if let Some(declared) = declared {
            let diff = SchemaDiff::between(&declared, &live);
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
        let helpers = self.helper_tables()?;
        let options = MigrateOptions::new().drop_families(args.drop_families);
        // The registered tables' migrations, then those of the tables the
        // relations keep (an index's): every one, or those named.
        let mut migrations = Vec::new();
        let named = |name: &str| args.tables.is_empty() || args.tables.iter().any(|n| n == name);
        for name in &args.tables {
            if self.cli.table_named(name).is_err() && !helpers.iter().any(|(_, s)| s.name == *name) {
                self.cli.table_named(name)?;
            }
        }
        for table in self.cli.tables.iter().filter(|t| named(t.name())) {
            migrations.push(table.migration(Arc::clone(&store), &options)?);
        }
        for (_, schema) in helpers.iter().filter(|(_, s)| named(&s.name)) {
            let live = match block_on(store.describe_table(&schema.name)) {
                Ok(live) => Some(live),
                Err(StoreError::TableNotFound { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            migrations.push(Migration::plan_kept(
                schema,
                live.as_ref(),
                &options,
                store.kept_family_options(),
            ));
        }
        for migration in migrations {
            let name = migration.table();
            if migration.is_empty() && migration.notes().is_empty() {
                writeln!(out, "# {name}: up to date")?;
                continue;
            }
            writeln!(out, "# {name}")?;
            write!(out, "{migration}")?;
            if apply && !migration.is_empty() {
                block_on(migration.apply(&*store))?;
                writeln!(out, "# {name}: applied {} step(s)", migration.steps().len())?;
            }
        }
        Ok(())
    }

    fn check(&mut self, check: Check, args: &CheckArgs, out: &mut dyn Write) -> std::result::Result<Status, CliError> {
        let name = args.relation.as_str();
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
        let mut options = CheckOptions::new().batch(args.batch);
        if let Some(from) = &args.from {
            options = options.from(from.parse().map_err(CliError::Checkpoint)?);
        }
        let progress = CheckProgress::new(name);
        let options = options.progress(progress.reporter());
        let report = match check {
            Check::Verify | Check::Repair => relation.check_blocking(check == Check::Repair, &options),
            Check::Rebuild => {
                let rebuilt = relation.rebuild_with_blocking(&options);
                progress.finish();
                rebuilt.ok_or_else(|| CliError::NotAnIndex(name.to_string()))??;
                match args.format {
                    Format::Table => writeln!(out, "{name}: rebuilt")?,
                    Format::Json => writeln!(
                        out,
                        "{}",
                        json_line(&Rebuilt {
                            relation: name,
                            rebuilt: true
                        })?
                    )?,
                }
                return Ok(Status::Clean);
            }
        };
        progress.finish();
        let report = report?;
        print_report(name, check, &report, args.format, out)?;
        Ok(if report.is_empty() {
            Status::Clean
        } else {
            Status::Problems
        })
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

/// `verify` or `repair`'s report as `--format json` prints it: one line,
/// its fields in this order (docs/cli.md shows one).
#[derive(Serialize)]
struct ReportLine<'a> {
    relation: &'a str,
    check: &'static str,
    consistent: bool,
    found: usize,
    missing: &'a [String],
    dangling: &'a [String],
    stale: &'a [String],
    absent: &'a [String],
    held: &'a [String],
    unreadable: &'a [String],
}

/// `rebuild-index`'s line for `--format json`.
#[derive(Serialize)]
struct Rebuilt<'a> {
    relation: &'a str,
    rebuilt: bool,
}

/// `value` as one line of JSON, its fields in their declaration order.
fn json_line(value: &impl Serialize) -> std::result::Result<String, CliError> {
    serde_json::to_string(value).map_err(|e| CliError::Io(io::Error::other(e)))
}

fn print_report(name: &str, check: Check, report: &Report, format: Format, out: &mut dyn Write) -> Outcome {
    let verb = if check == Check::Repair { "repaired" } else { "verified" };
    if format == Format::Json {
        let line = ReportLine {
            relation: name,
            check: if check == Check::Repair { "repair" } else { "verify" },
            consistent: report.is_consistent(),
            found: report.len(),
            missing: &report.missing,
            dangling: &report.dangling,
            stale: &report.stale,
            absent: &report.absent,
            held: &report.held,
            unreadable: &report.unreadable,
        };
        writeln!(out, "{}", json_line(&line)?)?;
        return Ok(());
    }
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

/// A row as printed: its JSON line, the fields in the order the struct's
/// `Serialize` writes them (declaration order, for a derived one), and the
/// same as a value, for the table format.
struct PrintedRow {
    json: String,
    /// Each field's JSON text as `json` holds it: a map of JSON prints
    /// its keys in the order the row's own JSON does (a `Value` would sort
    /// them).
    fields: std::collections::HashMap<String, Box<serde_json::value::RawValue>>,
}

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
        let fail = |e: serde_json::Error| Error::Query {
            table: T::TABLE,
            reason: format!("the row does not serialize: {e}"),
        };
        let json = serde_json::to_string(row).map_err(fail)?;
        let fields = serde_json::from_str(&json).map_err(fail)?;
        Ok(PrintedRow { json, fields })
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
        // Parts parsed from the command line: checked against the layout
        // when encoded, not at compile time.
        let row = T::key_schema().encode(&key).map_err(|source| hmap::Error::Key {
            table: T::TABLE,
            cause: source,
        })?;
        Table::<T, _>::new(store)
            .get_row(row)?
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
                writeln!(out, "{}", row.json)?;
            }
        }
        Format::Table => {
            let fields = table.fields();
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|row| fields.iter().map(|f| shown(row.fields.get(*f).map(|v| &**v))).collect())
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
fn shown(value: Option<&serde_json::value::RawValue>) -> String {
    let Some(text) = value.map(serde_json::value::RawValue::get) else {
        return String::new();
    };
    match text {
        "null" => String::new(),
        _ if text.starts_with('"') => serde_json::from_str(text).unwrap_or_else(|_| text.to_string()),
        _ => text.to_string(),
    }
}
