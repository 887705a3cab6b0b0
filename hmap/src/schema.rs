//! Table and column-family schemas: what is needed to create a table, with the
//! family options HBase users tune.
//!
//! Defaults are HBase 2.x's own (`ColumnFamilyDescriptorBuilder`): one
//! version, no minimum, no TTL, 64 KiB blocks, block cache on, not in memory,
//! a row bloom filter, no compression. (Older books, and the seeds, say three
//! versions: that was HBase 0.94 and earlier.)

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

/// A table: its name, column families and initial split points.
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
}

impl TableSchema {
    /// A table with no families yet.
    pub fn new(name: impl Into<String>) -> Self {
        TableSchema {
            name: name.into(),
            families: Vec::new(),
            split_keys: Vec::new(),
        }
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
    /// and every option that differs from HBase's default:
    /// `create 'sale', {NAME => 'n', VERSIONS => 1, TTL => 2592000, COMPRESSION => 'SNAPPY'}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let default = FamilySchema::new("");
        write!(f, "create '{}'", self.name)?;
        for fam in &self.families {
            write!(f, ", {{NAME => '{}', VERSIONS => {}", fam.name, fam.versions)?;
            if fam.min_versions != default.min_versions {
                write!(f, ", MIN_VERSIONS => {}", fam.min_versions)?;
            }
            if fam.ttl_secs != default.ttl_secs {
                write!(f, ", TTL => {}", fam.ttl_secs)?;
            }
            if fam.block_size != default.block_size {
                write!(f, ", BLOCKSIZE => {}", fam.block_size)?;
            }
            if fam.block_cache != default.block_cache {
                write!(f, ", BLOCKCACHE => '{}'", fam.block_cache)?;
            }
            if fam.in_memory != default.in_memory {
                write!(f, ", IN_MEMORY => '{}'", fam.in_memory)?;
            }
            if fam.bloom != default.bloom {
                write!(f, ", BLOOMFILTER => '{}'", fam.bloom.as_str())?;
            }
            if fam.compression != default.compression {
                write!(f, ", COMPRESSION => '{}'", fam.compression.as_str())?;
            }
            f.write_str("}")?;
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
        Ok(())
    }
}
