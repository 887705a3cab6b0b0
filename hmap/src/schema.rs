//! Table and column-family schemas: what is needed to create a table, with the
//! family options HBase users tune.
//!
//! Defaults are HBase 2.x's own (`ColumnFamilyDescriptorBuilder`): one
//! version, no minimum, no TTL, 64 KiB blocks, block cache on, not in memory,
//! a row bloom filter, no compression. (Older books, and the seeds, say three
//! versions: that was HBase 0.94 and earlier.)

use std::collections::BTreeMap;
use std::fmt;

use bytes::Bytes;

/// A column family's bloom filter (`BLOOMFILTER`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BloomType {
    /// No bloom filter.
    None,
    /// One entry per row: helps gets of whole rows (HBase's default).
    #[default]
    Row,
    /// One entry per row and column: helps gets of single columns, costs more space.
    RowCol,
}

impl BloomType {
    /// The name HBase uses (`NONE`, `ROW`, `ROWCOL`).
    pub fn as_str(self) -> &'static str {
        match self {
            BloomType::None => "NONE",
            BloomType::Row => "ROW",
            BloomType::RowCol => "ROWCOL",
        }
    }
}

/// A column family's compression (`COMPRESSION`). Data is compressed on disk
/// only, not in memory or on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// No compression (HBase's default).
    #[default]
    None,
    /// GZIP: the best ratio, the most CPU.
    Gz,
    /// Snappy: fast, a moderate ratio; the usual choice.
    Snappy,
    /// LZ4: fast, a moderate ratio.
    Lz4,
    /// LZO: like Snappy, but its library is GPL and installed separately.
    Lzo,
    /// Zstandard: a good ratio at moderate CPU.
    Zstd,
    /// BZIP2.
    Bzip2,
}

impl Compression {
    /// The name HBase uses (`NONE`, `GZ`, `SNAPPY`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "NONE",
            Compression::Gz => "GZ",
            Compression::Snappy => "SNAPPY",
            Compression::Lz4 => "LZ4",
            Compression::Lzo => "LZO",
            Compression::Zstd => "ZSTD",
            Compression::Bzip2 => "BZIP2",
        }
    }
}

/// HBase's `TTL` for "forever": `Integer.MAX_VALUE` seconds.
pub const TTL_FOREVER: u32 = i32::MAX as u32;

/// A column family and its options.
///
/// ```
/// use hmap::schema::{BloomType, Compression, FamilySchema};
///
/// // create 'mytable', {NAME => 'colfam1', VERSIONS => 5, MIN_VERSIONS => 1, TTL => 18000}
/// let family = FamilySchema::new("colfam1")
///     .versions(5)
///     .min_versions(1)
///     .ttl_secs(18_000)
///     .bloom(BloomType::RowCol)
///     .compression(Compression::Snappy);
/// assert_eq!(family.versions, 5);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FamilySchema {
    /// The family name: short (one letter is best, it is stored in every cell).
    pub name: String,
    /// `VERSIONS`: how many versions of a cell reads return (and compactions keep).
    pub versions: u32,
    /// `MIN_VERSIONS`: how many of the newest versions outlive the TTL.
    pub min_versions: u32,
    /// `TTL` in seconds; [`TTL_FOREVER`] means never expire.
    pub ttl_secs: u32,
    /// `BLOCKSIZE` in bytes: smaller blocks favour random reads, larger ones scans.
    pub block_size: u32,
    /// `BLOCKCACHE`: whether reads cache this family's blocks.
    pub block_cache: bool,
    /// `IN_MEMORY`: a higher priority in the block cache.
    pub in_memory: bool,
    /// `BLOOMFILTER`.
    pub bloom: BloomType,
    /// `COMPRESSION`.
    pub compression: Compression,
}

impl FamilySchema {
    /// A family with HBase's default options.
    pub fn new(name: impl Into<String>) -> Self {
        FamilySchema {
            name: name.into(),
            versions: 1,
            min_versions: 0,
            ttl_secs: TTL_FOREVER,
            block_size: 65_536,
            block_cache: true,
            in_memory: false,
            bloom: BloomType::Row,
            compression: Compression::None,
        }
    }

    /// Sets `VERSIONS`.
    pub fn versions(mut self, versions: u32) -> Self {
        self.versions = versions;
        self
    }

    /// Sets `MIN_VERSIONS`.
    pub fn min_versions(mut self, min_versions: u32) -> Self {
        self.min_versions = min_versions;
        self
    }

    /// Sets `TTL` in seconds.
    pub fn ttl_secs(mut self, ttl_secs: u32) -> Self {
        self.ttl_secs = ttl_secs;
        self
    }

    /// Sets `BLOCKSIZE` in bytes.
    pub fn block_size(mut self, block_size: u32) -> Self {
        self.block_size = block_size;
        self
    }

    /// Sets `BLOCKCACHE`.
    pub fn block_cache(mut self, block_cache: bool) -> Self {
        self.block_cache = block_cache;
        self
    }

    /// Sets `IN_MEMORY`.
    pub fn in_memory(mut self, in_memory: bool) -> Self {
        self.in_memory = in_memory;
        self
    }

    /// Sets `BLOOMFILTER`.
    pub fn bloom(mut self, bloom: BloomType) -> Self {
        self.bloom = bloom;
        self
    }

    /// Sets `COMPRESSION`.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// The TTL, if cells expire.
    pub fn ttl(&self) -> Option<std::time::Duration> {
        (self.ttl_secs < TTL_FOREVER).then(|| std::time::Duration::from_secs(u64::from(self.ttl_secs)))
    }

    /// Checks the options as HBase's master does when a table is created.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.is_empty() {
            return Err("a family name cannot be empty".into());
        }
        // HBase: "Family names cannot contain control characters or colons",
        // and may not start with a period.
        if self.name.starts_with('.') || self.name.chars().any(|c| c == ':' || c.is_control()) {
            return Err(format!(
                "family name {:?} may not start with '.' or hold ':' or control characters",
                self.name
            ));
        }
        if self.versions == 0 {
            return Err(format!("family `{}`: VERSIONS must be at least 1", self.name));
        }
        if self.min_versions > self.versions {
            return Err(format!(
                "family `{}`: MIN_VERSIONS ({}) exceeds VERSIONS ({})",
                self.name, self.min_versions, self.versions
            ));
        }
        if self.ttl_secs == 0 {
            return Err(format!("family `{}`: TTL must be at least 1 second", self.name));
        }
        // HBase: "Block size for column family must be between 1K and 16MB".
        if !(1024..=16 * 1024 * 1024).contains(&self.block_size) {
            return Err(format!(
                "family `{}`: BLOCKSIZE {} is not between 1K and 16MB",
                self.name, self.block_size
            ));
        }
        Ok(())
    }
}

/// The table attribute in which hmap records a table's key layout when it
/// creates the table: [`KeySchema::fingerprint`](crate::key::KeySchema::fingerprint)
/// of the struct's key. The HBase shell shows it in `describe` as
/// `METADATA => {'hmap.key' => '...'}`.
pub const KEY_LAYOUT_ATTRIBUTE: &str = "hmap.key";

/// A table: its name, column families, initial split points and metadata.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TableSchema {
    /// `table` or `namespace:table`.
    pub name: String,
    /// The column families; few is better (one or two).
    pub families: Vec<FamilySchema>,
    /// Row keys at which the table is split into regions when it is created
    /// (a salted table is split at each bucket).
    pub split_keys: Vec<Bytes>,
    /// The table's metadata: key-value attributes of its descriptor (HBase's
    /// `TableDescriptor.getValue`, the shell's `METADATA`), kept with the
    /// table and read back by `describe_table`. hmap records the key layout
    /// under [`KEY_LAYOUT_ATTRIBUTE`]. HBase adds attributes of its own to
    /// every table (2.6: `IS_META`, `hbase.store.file-tracker.impl`), which
    /// `ThriftStore` reports as they are and `MemoryStore` does not invent.
    pub metadata: BTreeMap<String, String>,
}

impl TableSchema {
    /// A table with no families yet.
    pub fn new(name: impl Into<String>) -> Self {
        TableSchema {
            name: name.into(),
            families: Vec::new(),
            split_keys: Vec::new(),
            metadata: BTreeMap::new(),
        }
    }

    /// Sets a metadata attribute.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// The key layout recorded in the metadata, if any.
    pub fn key_layout(&self) -> Option<&str> {
        self.metadata.get(KEY_LAYOUT_ATTRIBUTE).map(String::as_str)
    }

    /// Adds a column family.
    pub fn family(mut self, family: FamilySchema) -> Self {
        self.families.push(family);
        self
    }

    /// Sets the split points.
    pub fn split_keys(mut self, keys: impl IntoIterator<Item = Bytes>) -> Self {
        self.split_keys = keys.into_iter().collect();
        self
    }

    /// The family with that name.
    pub fn find_family(&self, name: &[u8]) -> Option<&FamilySchema> {
        self.families.iter().find(|f| f.name.as_bytes() == name)
    }

    /// Checks the table as HBase's master does when it is created: a valid
    /// name, at least one family, unique valid families, sorted distinct
    /// non-empty split keys.
    pub fn validate(&self) -> Result<(), String> {
        validate_table_name(&self.name)?;
        if self.families.is_empty() {
            return Err(format!("table `{}` needs at least one column family", self.name));
        }
        for (i, f) in self.families.iter().enumerate() {
            f.validate()?;
            if self.families[..i].iter().any(|g| g.name == f.name) {
                return Err(format!("table `{}` declares family `{}` twice", self.name, f.name));
            }
        }
        if self.split_keys.iter().any(|k| k.is_empty()) {
            return Err(format!("table `{}`: a split key cannot be empty", self.name));
        }
        if self.split_keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!("table `{}`: split keys must be sorted and distinct", self.name));
        }
        Ok(())
    }
}

/// The longest namespace or table qualifier, in bytes: each is the name of
/// a directory under HBase's root (`data/<namespace>/<qualifier>`), and file
/// systems refuse longer names (`NAME_MAX` on Linux; HDFS's
/// `dfs.namenode.fs-limits.max-component-length`). HBase itself sets no
/// limit: creating a table with a longer name fails in the master, which
/// retries it forever.
pub const MAX_TABLE_NAME_PART: usize = 255;

/// HBase's table name rules (`TableName.isLegalTableQualifierName` and
/// `isLegalNamespaceName`): an optional `namespace:` of word characters,
/// then a qualifier of word characters, `-` and `.`, not starting with `.`
/// or `-`, and not `zookeeper`; each part at most [`MAX_TABLE_NAME_PART`]
/// bytes. Letters and digits are ASCII (HBase also takes other alphabets).
pub fn validate_table_name(name: &str) -> Result<(), String> {
    let (namespace, qualifier) = match name.split_once(':') {
        Some((ns, q)) => (Some(ns), q),
        None => (None, name),
    };
    let legal = |part: &str, allow_punct: bool| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || (allow_punct && (c == '-' || c == '.')))
            && !part.starts_with(['.', '-'])
    };
    if namespace.is_some_and(|ns| !legal(ns, false)) || !legal(qualifier, true) {
        return Err(format!(
            "illegal table name {name:?}: use letters, digits, '_', '-' and '.' (not first), with an optional 'namespace:'"
        ));
    }
    if let Some(part) = [namespace, Some(qualifier)]
        .into_iter()
        .flatten()
        .find(|p| p.len() > MAX_TABLE_NAME_PART)
    {
        return Err(format!(
            "illegal table name {:?}... ({} bytes): a namespace or table name holds at most {MAX_TABLE_NAME_PART} bytes, \
             the longest directory name a file system takes",
            name.get(..32).unwrap_or(name),
            part.len()
        ));
    }
    // HBase: "Tables may not be named 'zookeeper'".
    if qualifier == "zookeeper" {
        return Err("illegal table name \"zookeeper\": HBase reserves it".into());
    }
    Ok(())
}

impl fmt::Display for TableSchema {
    /// The HBase shell statement that creates the table, naming `VERSIONS`
    /// and every option that differs from HBase's default, then the split
    /// points and the metadata:
    /// `create 'sale', {NAME => 'n', VERSIONS => 1, TTL => 2592000, COMPRESSION => 'SNAPPY'}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "create '{}'", self.name)?;
        for fam in &self.families {
            write!(f, ", {}", ShellFamily(fam))?;
        }
        if !self.split_keys.is_empty() {
            f.write_str(", SPLITS => [")?;
            for (i, key) in self.split_keys.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                // A Ruby double-quoted string: \xHH escapes, and the quote escaped too.
                f.write_str("\"")?;
                for &b in key.iter() {
                    if (b' '..=b'~').contains(&b) && !matches!(b, b'"' | b'\\' | b'#') {
                        fmt::Write::write_char(f, char::from(b))?;
                    } else {
                        write!(f, "\\x{b:02X}")?;
                    }
                }
                f.write_str("\"")?;
            }
            f.write_str("]")?;
        }
        if !self.metadata.is_empty() {
            f.write_str(", METADATA => {")?;
            for (i, (key, value)) in self.metadata.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{} => {}", RubyQuoted(key), RubyQuoted(value))?;
            }
            f.write_str("}")?;
        }
        Ok(())
    }
}

/// A family as the HBase shell writes it: `{NAME => 'n', VERSIONS => 1, ...}`,
/// `VERSIONS` and every option that differs from HBase's default.
pub(crate) struct ShellFamily<'a>(pub(crate) &'a FamilySchema);

impl fmt::Display for ShellFamily<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fam = self.0;
        let default = FamilySchema::new("");
        write!(f, "{{NAME => {}, VERSIONS => {}", RubyQuoted(&fam.name), fam.versions)?;
        for option in FamilyOption::ALL {
            if option != FamilyOption::Versions && option.value(fam) != option.value(&default) {
                write!(f, ", {} => {}", option.as_str(), option.value(fam))?;
            }
        }
        f.write_str("}")
    }
}

/// A Ruby single-quoted string: `\` and `'` escaped.
pub(crate) struct RubyQuoted<'a>(pub(crate) &'a str);

impl fmt::Display for RubyQuoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("'")?;
        for c in self.0.chars() {
            if matches!(c, '\\' | '\'') {
                f.write_str("\\")?;
            }
            fmt::Write::write_char(f, c)?;
        }
        f.write_str("'")
    }
}

/// A family option `describe` reads back, by its HBase name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FamilyOption {
    /// `VERSIONS`
    Versions,
    /// `MIN_VERSIONS`
    MinVersions,
    /// `TTL`
    Ttl,
    /// `BLOCKSIZE`
    BlockSize,
    /// `BLOCKCACHE`
    BlockCache,
    /// `IN_MEMORY`
    InMemory,
    /// `BLOOMFILTER`
    Bloom,
    /// `COMPRESSION`
    Compression,
}

impl FamilyOption {
    /// Every option, in the order the HBase shell lists them.
    pub const ALL: [FamilyOption; 8] = [
        FamilyOption::Versions,
        FamilyOption::MinVersions,
        FamilyOption::Ttl,
        FamilyOption::BlockSize,
        FamilyOption::BlockCache,
        FamilyOption::InMemory,
        FamilyOption::Bloom,
        FamilyOption::Compression,
    ];

    /// The name HBase uses (`VERSIONS`, `TTL`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FamilyOption::Versions => "VERSIONS",
            FamilyOption::MinVersions => "MIN_VERSIONS",
            FamilyOption::Ttl => "TTL",
            FamilyOption::BlockSize => "BLOCKSIZE",
            FamilyOption::BlockCache => "BLOCKCACHE",
            FamilyOption::InMemory => "IN_MEMORY",
            FamilyOption::Bloom => "BLOOMFILTER",
            FamilyOption::Compression => "COMPRESSION",
        }
    }

    /// The option's value in a family, as the HBase shell writes it
    /// (`3`, `'true'`, `'SNAPPY'`; a TTL that never expires is `'FOREVER'`,
    /// as the shell's `describe` shows it and its `alter` takes it).
    pub fn value(self, family: &FamilySchema) -> String {
        match self {
            FamilyOption::Versions => family.versions.to_string(),
            FamilyOption::MinVersions => family.min_versions.to_string(),
            FamilyOption::Ttl if family.ttl_secs == TTL_FOREVER => "'FOREVER'".to_string(),
            FamilyOption::Ttl => family.ttl_secs.to_string(),
            FamilyOption::BlockSize => family.block_size.to_string(),
            FamilyOption::BlockCache => format!("'{}'", family.block_cache),
            FamilyOption::InMemory => format!("'{}'", family.in_memory),
            FamilyOption::Bloom => format!("'{}'", family.bloom.as_str()),
            FamilyOption::Compression => format!("'{}'", family.compression.as_str()),
        }
    }
}

impl fmt::Display for FamilyOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One way a live table differs from the schema a struct declares.
///
/// [`is_error`](Self::is_error) tells the differences that make the struct
/// read or write the table wrongly (a missing family, another key layout)
/// from those reported for information (a family only the table has).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaDifference {
    /// The struct declares a family the table lacks.
    MissingFamily(FamilySchema),
    /// The table has a family the struct does not declare (informational).
    ExtraFamily {
        /// The family.
        family: String,
    },
    /// A family option differs.
    FamilyOption {
        /// The family.
        family: String,
        /// The option.
        option: FamilyOption,
        /// Its value in the struct's schema, as the shell writes it.
        declared: String,
        /// Its value in the table.
        live: String,
    },
    /// The table was created for another key layout: rows written by one
    /// cannot be read by the other.
    KeyLayout {
        /// The struct's layout ([`KeySchema::fingerprint`](crate::key::KeySchema::fingerprint)).
        declared: String,
        /// The layout recorded in the table's metadata.
        recorded: String,
    },
    /// The table records no key layout: hmap did not create it
    /// (informational; record one with the shell's `alter`).
    KeyLayoutNotRecorded {
        /// The struct's layout.
        declared: String,
    },
    /// A metadata attribute the schema declares that the table lacks or
    /// holds with another value (other than the key layout).
    Metadata {
        /// The attribute.
        key: String,
        /// The declared value.
        declared: String,
        /// The table's value, if it has the attribute.
        live: Option<String>,
    },
}

impl SchemaDifference {
    /// Whether the difference makes the struct unfit for the table, rather
    /// than being reported for information.
    pub fn is_error(&self) -> bool {
        !matches!(
            self,
            SchemaDifference::ExtraFamily { .. } | SchemaDifference::KeyLayoutNotRecorded { .. }
        )
    }
}

impl fmt::Display for SchemaDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaDifference::MissingFamily(fam) => {
                write!(f, "family `{}` is missing (declared {})", fam.name, ShellFamily(fam))
            }
            SchemaDifference::ExtraFamily { family } => {
                write!(f, "the table has family `{family}`, which the struct does not declare")
            }
            SchemaDifference::FamilyOption {
                family,
                option,
                declared,
                live,
            } => write!(
                f,
                "family `{family}`: {option} is {live} in the table, {declared} in the struct"
            ),
            SchemaDifference::KeyLayout { declared, recorded } => write!(
                f,
                "the table was created for another key layout: its rows are `{recorded}`, the struct's are `{declared}`"
            ),
            SchemaDifference::KeyLayoutNotRecorded { declared } => write!(
                f,
                "the table records no key layout (hmap did not create it); the struct's is `{declared}`"
            ),
            SchemaDifference::Metadata { key, declared, live } => match live {
                Some(live) => write!(
                    f,
                    "metadata `{key}` is {live:?} in the table, {declared:?} in the struct"
                ),
                None => write!(f, "metadata `{key}` is missing ({declared:?} in the struct)"),
            },
        }
    }
}

/// Every difference between the schema a struct declares and a live table's
/// ([`SchemaDiff::between`]): what `Table::create_if_missing` and
/// `Table::check_schema` report, and what a migration acts on.
///
/// Split points are not compared: regions split and merge as a table grows.
///
/// ```
/// use hmap::schema::{FamilyOption, FamilySchema, SchemaDiff, SchemaDifference, TableSchema};
///
/// let declared = TableSchema::new("user")
///     .family(FamilySchema::new("i").versions(3))
///     .family(FamilySchema::new("x"));
/// let live = TableSchema::new("user")
///     .family(FamilySchema::new("i"))
///     .family(FamilySchema::new("old"));
/// let diff = SchemaDiff::between(&declared, &live);
/// assert!(!diff.is_compatible());
/// assert_eq!(
///     diff.differences,
///     [
///         SchemaDifference::FamilyOption {
///             family: "i".into(),
///             option: FamilyOption::Versions,
///             declared: "3".into(),
///             live: "1".into(),
///         },
///         SchemaDifference::MissingFamily(FamilySchema::new("x")),
///         SchemaDifference::ExtraFamily { family: "old".into() },
///     ]
/// );
/// assert_eq!(
///     diff.to_string(),
///     "table `user`: family `i`: VERSIONS is 1 in the table, 3 in the struct; \
///      family `x` is missing (declared {NAME => 'x', VERSIONS => 1}); \
///      the table has family `old`, which the struct does not declare"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SchemaDiff {
    /// The table.
    pub table: String,
    /// The differences: per declared family in declaration order (missing,
    /// or its options one by one), then the table's extra families, then
    /// the key layout and other metadata.
    pub differences: Vec<SchemaDifference>,
}

impl SchemaDiff {
    /// Compares a declared schema with a live one (as `describe_table`
    /// returns it): families, their options, and the declared metadata,
    /// including the key layout.
    pub fn between(declared: &TableSchema, live: &TableSchema) -> SchemaDiff {
        Self::between_kept(declared, live, &FamilyOption::ALL)
    }

    /// [`between`](Self::between), comparing only the family options in
    /// `kept`: those the store keeps (`Store::kept_family_options`).
    pub fn between_kept(declared: &TableSchema, live: &TableSchema, kept: &[FamilyOption]) -> SchemaDiff {
        let mut differences = Vec::new();
        for fam in &declared.families {
            let Some(found) = live.find_family(fam.name.as_bytes()) else {
                differences.push(SchemaDifference::MissingFamily(fam.clone()));
                continue;
            };
            for &option in kept {
                let (declared, live) = (option.value(fam), option.value(found));
                if declared != live {
                    differences.push(SchemaDifference::FamilyOption {
                        family: fam.name.clone(),
                        option,
                        declared,
                        live,
                    });
                }
            }
        }
        for fam in &live.families {
            if declared.find_family(fam.name.as_bytes()).is_none() {
                differences.push(SchemaDifference::ExtraFamily {
                    family: fam.name.clone(),
                });
            }
        }
        for (key, value) in &declared.metadata {
            let found = live.metadata.get(key);
            if found == Some(value) {
                continue;
            }
            differences.push(match (key.as_str(), found) {
                (KEY_LAYOUT_ATTRIBUTE, None) => SchemaDifference::KeyLayoutNotRecorded {
                    declared: value.clone(),
                },
                (KEY_LAYOUT_ATTRIBUTE, Some(recorded)) => SchemaDifference::KeyLayout {
                    declared: value.clone(),
                    recorded: recorded.clone(),
                },
                (_, found) => SchemaDifference::Metadata {
                    key: key.clone(),
                    declared: value.clone(),
                    live: found.cloned(),
                },
            });
        }
        SchemaDiff {
            table: declared.name.clone(),
            differences,
        }
    }

    /// Whether the schemas agree exactly (informational differences aside
    /// too).
    pub fn is_empty(&self) -> bool {
        self.differences.is_empty()
    }

    /// Whether no difference is an error: the struct can use the table.
    pub fn is_compatible(&self) -> bool {
        self.errors().next().is_none()
    }

    /// The differences that are errors.
    pub fn errors(&self) -> impl Iterator<Item = &SchemaDifference> + Clone {
        self.differences.iter().filter(|d| d.is_error())
    }

    /// The errors alone, shown as `Display` shows them all.
    pub fn show_errors(&self) -> impl fmt::Display + '_ {
        ShowDifferences(self.errors())
    }
}

impl fmt::Display for SchemaDiff {
    /// `table `user`: ` and the differences separated by `; `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "table `{}`: ", self.table)?;
        if self.differences.is_empty() {
            return f.write_str("no differences");
        }
        ShowDifferences(self.differences.iter()).fmt(f)
    }
}

/// Differences separated by `; `.
struct ShowDifferences<I>(I);

impl<'a, I: Iterator<Item = &'a SchemaDifference> + Clone> fmt::Display for ShowDifferences<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.clone().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_as_the_derive_checks_them() {
        // The cases of ui-tests/tests/ui/table-name-hbase-refuses.rs, whose
        // compile errors the derive gives by the same rules.
        for refused in ["my table!", "zookeeper", "ns-1:users", ".hidden"] {
            assert!(validate_table_name(refused).is_err(), "{refused}");
        }
        assert_eq!(validate_table_name("app:user-events.v2"), Ok(()));
    }

    #[test]
    fn a_ttl_that_never_expires_reads_as_the_shell_writes_it() {
        let forever = FamilySchema::new("f");
        assert_eq!(FamilyOption::Ttl.value(&forever), "'FOREVER'");
        let mut day = FamilySchema::new("f");
        day.ttl_secs = 86_400;
        assert_eq!(FamilyOption::Ttl.value(&day), "86400");
        let diff = SchemaDiff::between(
            &TableSchema::new("t").family(forever),
            &TableSchema::new("t").family(day),
        );
        let shown = diff
            .differences
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(shown.contains("'FOREVER'") && !shown.contains("2147483647"), "{shown}");
    }

    #[test]
    fn shell_statement_quotes_metadata_as_ruby_strings() {
        let schema = TableSchema::new("t")
            .family(FamilySchema::new("f"))
            .metadata(KEY_LAYOUT_ATTRIBUTE, "text '_': id: string")
            .metadata("note", r"a\b");
        assert_eq!(
            schema.to_string(),
            r"create 't', {NAME => 'f', VERSIONS => 1}, METADATA => {'hmap.key' => 'text \'_\': id: string', 'note' => 'a\\b'}"
        );
    }

    #[test]
    fn only_the_options_a_store_keeps_are_compared() {
        let declared =
            TableSchema::new("t").family(FamilySchema::new("f").versions(3).compression(Compression::Snappy));
        let live = TableSchema::new("t").family(FamilySchema::new("f").versions(1));
        let kept = [FamilyOption::Versions, FamilyOption::MinVersions, FamilyOption::Ttl];
        let diff = SchemaDiff::between_kept(&declared, &live, &kept);
        assert_eq!(
            diff.differences,
            [SchemaDifference::FamilyOption {
                family: "f".into(),
                option: FamilyOption::Versions,
                declared: "3".into(),
                live: "1".into(),
            }]
        );
        assert_eq!(
            SchemaDiff::between(&declared, &live).differences.len(),
            2,
            "every option by default"
        );
    }

    #[test]
    fn declared_metadata_is_compared_and_the_table_s_own_ignored() {
        let declared = TableSchema::new("t")
            .family(FamilySchema::new("f"))
            .metadata(KEY_LAYOUT_ATTRIBUTE, "binary: id: u64")
            .metadata("owner", "shop")
            .metadata("tier", "gold");
        let live = TableSchema::new("t")
            .family(FamilySchema::new("f"))
            .metadata(KEY_LAYOUT_ATTRIBUTE, "binary: id: u64")
            .metadata("IS_META", "false")
            .metadata("tier", "silver");
        let diff = SchemaDiff::between(&declared, &live);
        assert_eq!(
            diff.differences,
            [
                SchemaDifference::Metadata {
                    key: "owner".into(),
                    declared: "shop".into(),
                    live: None,
                },
                SchemaDifference::Metadata {
                    key: "tier".into(),
                    declared: "gold".into(),
                    live: Some("silver".into()),
                },
            ]
        );
        assert!(!diff.is_compatible());
        assert!(SchemaDiff::between(&declared, &declared).is_empty());
    }
}
