use crate::key::KeyError;
use crate::schema::SchemaDiff;
use crate::store::StoreError;
use crate::value::ValueError;

/// `Result` with hmap's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error from the typed layer: a table, its rows and their cells.
///
/// Rows are shown in HBase's printable form (`\xHH` escapes); columns as
/// `family:qualifier`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A key could not be built or read.
    #[error("table `{table}`: {cause}")]
    Key {
        /// The table.
        table: &'static str,
        /// What went wrong.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: KeyError,
    },
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A required cell is absent from a stored row.
    #[error("table `{table}`, row {row}, column {column}: the cell is missing (the field is not an Option)")]
    MissingCell {
        /// The table.
        table: &'static str,
        /// The row, printable.
        row: String,
        /// The column.
        column: String,
    },
    /// A stored cell does not decode as its field's type.
    #[error("table `{table}`, row {row}, column {column}: {cause}")]
    Decode {
        /// The table.
        table: &'static str,
        /// The row, printable.
        row: String,
        /// The column.
        column: String,
        /// What is wrong with the bytes.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: ValueError,
    },
    /// A field's value could not be encoded.
    #[error("table `{table}`, row {row}, column {column}: cannot encode: {cause}")]
    Encode {
        /// The table.
        table: &'static str,
        /// The row, printable.
        row: String,
        /// The column.
        column: String,
        /// What went wrong.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: ValueError,
    },
    /// An optimistic write found another version than the one read: someone
    /// else wrote the row in between. Read it again and retry.
    #[error(
        "table `{table}`, row {row}: version conflict: the row was read at version {expected}, it is now at {found}"
    )]
    Conflict {
        /// The table.
        table: &'static str,
        /// The row, printable.
        row: String,
        /// The version the write expected.
        expected: u64,
        /// The version stored, if the row exists.
        found: String,
    },
    /// A field name that the table does not have, or that cannot be used so.
    #[error("table `{table}`: field `{field}`: {reason}")]
    Field {
        /// The table.
        table: &'static str,
        /// The field.
        field: String,
        /// Why it cannot be used.
        reason: &'static str,
    },
    /// The live table does not match the struct: families missing, family
    /// options that differ, another key layout. The diff lists every
    /// difference, also those reported for information only.
    #[error("table `{table}` does not match its struct: {}", .diff.show_errors())]
    SchemaMismatch {
        /// The table.
        table: &'static str,
        /// Every difference.
        diff: Box<SchemaDiff>,
    },
    /// A migration that cannot be applied: the table was created for
    /// another key layout, so no change of families makes the struct read
    /// its rows (see [`Migration`](crate::migrate::Migration)).
    #[error("table `{table}` cannot be migrated: {}", .diff.show_errors())]
    MigrationBlocked {
        /// The table.
        table: String,
        /// What blocks it.
        diff: Box<crate::schema::SchemaDiff>,
    },
    /// A query that cannot run as asked.
    #[error("table `{table}`: invalid query: {reason}")]
    Query {
        /// The table.
        table: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A relation was asked to link an entity that does not exist (no row,
    /// or a row holding only relation lists), or a tree to use a node that
    /// does not exist.
    #[error("table `{table}`: no entity with key {key}")]
    NoSuchEntity {
        /// The table.
        table: &'static str,
        /// The entity's key, printable.
        key: String,
    },
    /// An insert of a row that exists already (a tree node whose id is
    /// taken): nothing was written. Update the row, or delete it first.
    #[error("table `{table}`, row {row}: exists already; an insert does not overwrite it")]
    Exists {
        /// The table.
        table: &'static str,
        /// The row that holds it, printable, with its key parts.
        row: String,
    },
    /// A plain delete of a row that a relation links: deleting it would
    /// leave its id in its partners' lists.
    #[error(
        "table `{table}`, row {row}: the row is linked (family `{family}` is not empty); delete it through its relation (`ManyToMany::delete_left` or `delete_right`, or `delete_left_indexed`/`delete_right_indexed` given the indexes that list it), which also removes it from its partners' lists"
    )]
    Linked {
        /// The table.
        table: &'static str,
        /// The row, printable.
        row: String,
        /// The relation family that holds links.
        family: &'static str,
    },
    /// A write of a `Table` whose rows a secondary index lists (an
    /// `Index` of the type was made, and its table is in the store): it
    /// would leave the index's entries behind.
    #[error(
        "table `{table}` is indexed in `{index}`: write through the index (`Index::put`, `save`, `update`, `delete`) so that its entries stay current, or write around it with `Table::around_indexes()` and `Index::repair` afterwards"
    )]
    Indexed {
        /// The table.
        table: &'static str,
        /// The index table.
        index: &'static str,
    },
}
