//! What `#[derive(HTable)]` implements: a struct's table, key, families and fields.

use std::marker::PhantomData;

use bytes::Bytes;

use super::{RowReader, RowWriter};
use crate::error::Result;
use crate::key::{FromKeyTuple, KeyArg, KeyError, KeyOf, KeySchema, Segment};
use crate::schema::{FamilySchema, KEY_LAYOUT_ATTRIBUTE, TableSchema};

/// What a field of a mapped struct is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldRole {
    /// A part of the rowkey.
    Key,
    /// One cell (an `Option` field may be absent).
    Cell,
    /// A map whose keys are the qualifiers of a family (`item:<item_id>=type`).
    Dynamic,
    /// A dynamic family that a relation helper owns (`#[hmap(dynamic,
    /// relation)]`): read like [`Dynamic`](Self::Dynamic), but written only
    /// by the relation (its `link`, `unlink`, deletes and repair). A put of
    /// the entity leaves it alone, an update refuses it, and a delete of a
    /// row whose relation family is not empty is refused.
    Relation,
    /// A tree node's pointer to its parent (`#[hmap(parent)]`): the
    /// parent's rowkey, read like [`Cell`](Self::Cell) but written only by
    /// the [`Tree`](crate::relation::Tree). A put of the entity leaves it
    /// alone and an update refuses it.
    Parent,
    /// The newest versions of one cell, with their timestamps.
    Versions,
    /// The optimistic-concurrency version: writes check it.
    Version,
    /// A counter, changed by atomic increments only.
    Counter,
}

/// A field of a mapped struct: where it is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldInfo {
    /// The Rust field name.
    pub name: &'static str,
    /// The column family (empty for key fields).
    pub family: &'static str,
    /// The qualifier (empty for key and dynamic fields).
    pub qualifier: &'static str,
    /// What the field is.
    pub role: FieldRole,
}

/// A Rust type mapped to an HBase table. Implement it with
/// `#[derive(HTable)]`; see the derive's documentation for the attributes.
///
/// A table is a [`KeyOf`] its own [`Key`](Self::Key), so that code generic
/// over tables can pass a key it holds to [`Table::get`](crate::Table::get).
pub trait HTable: Sized + Send + Sync + KeyOf<<Self as HTable>::Key> {
    /// The key parts' owned values, in key order: a tuple, or the type of a
    /// single-part key. The calls that take a whole key take any
    /// [`KeyArg`] of it (a `&str` for a `String` part, ...), checked at
    /// compile time (the table's own calls through [`KeyOf`]).
    type Key: FromKeyTuple + KeyArg<Self::Key> + Send + Sync;

    /// The table's name.
    const TABLE: &'static str;

    /// The rowkey layout.
    fn key_schema() -> &'static KeySchema;

    /// The column families and their options.
    fn families() -> Vec<FamilySchema>;

    /// Every field, in declaration order.
    fn fields() -> &'static [FieldInfo];

    /// Appends this row's key.
    fn encode_key(&self, out: &mut Vec<u8>) -> Result<(), KeyError>;

    /// Writes this row's cells (every field but key and counter fields).
    /// The derive's plumbing, not part of the documented API.
    #[doc(hidden)]
    fn write_cells(&self, cells: &mut RowWriter<'_>) -> Result<()>;

    /// Builds a row from its decoded key and its cells. The derive's
    /// plumbing, not part of the documented API.
    #[doc(hidden)]
    fn read_row(key: Self::Key, cells: &RowReader<'_>) -> Result<Self>;

    /// The optimistic-concurrency version, for types that have one.
    fn version(&self) -> Option<u64> {
        None
    }

    /// Sets the optimistic-concurrency version.
    fn set_version(&mut self, _version: u64) {}

    /// The schema that creates the table: its families, split points at
    /// each salt bucket for a salted key, and the key layout's
    /// [fingerprint](KeySchema::fingerprint) in the metadata (under
    /// [`KEY_LAYOUT_ATTRIBUTE`]).
    fn table_schema() -> TableSchema {
        let mut schema = TableSchema::new(Self::TABLE);
        schema.families = Self::families();
        schema.split_keys = salt_split_keys(Self::key_schema());
        schema
            .metadata
            .insert(KEY_LAYOUT_ATTRIBUTE.into(), Self::key_schema().fingerprint());
        schema
    }

    /// How many versions reads fetch: the largest `VERSIONS` among the
    /// families of multi-version fields, else 1.
    fn read_versions() -> u32 {
        let families = Self::families();
        Self::fields()
            .iter()
            .filter(|f| f.role == FieldRole::Versions)
            .filter_map(|f| families.iter().find(|fam| fam.name == f.family))
            .map(|fam| fam.versions)
            .max()
            .unwrap_or(1)
    }
}

/// A field of `T`: the typed handles `#[derive(HTable)]` generates as
/// associated constants (`User::NAME` for the field `name`), which
/// [`Table::update`](crate::Table::update),
/// [`Table::increment`](crate::Table::increment) and the typed filters
/// ([`Where`](crate::Where)) take, so that a misspelt field, a value of
/// the wrong type or another table's field is a compile error.
///
/// `V` is the field's value type (`X` for an `Option<X>` field, and for a
/// multi-version field of `Versioned<X>`), `C` its cell codec
/// ([`Native`](crate::value::Native), [`Json`](crate::value::Json) or
/// [`Text`](crate::value::Text)).
///
/// ```
/// use hmap::{Field, HTable};
/// use hmap::value::Native;
///
/// #[derive(HTable)]
/// #[hmap(table = "user", family(name = "i"))]
/// struct User {
///     #[hmap(key)]
///     id: String,
///     name: String,
///     #[hmap(counter)]
///     posts: i64,
/// }
///
/// let name: Field<User, String, Native> = User::NAME;
/// assert_eq!(name.name(), "name");
/// assert_eq!(User::POSTS.name(), "posts");
/// ```
pub struct Field<T, V, C> {
    name: &'static str,
    of: PhantomData<Of<T, V, C>>,
}

/// What a [`Field`] stands for, without owning any of it (so that a handle
/// is `Copy`, `Send` and `Sync` whatever the types).
type Of<T, V, C> = fn() -> (T, V, C);

impl<T, V, C> Field<T, V, C> {
    /// The handle of `T`'s field `name`; the derive's business.
    #[doc(hidden)]
    pub const fn new(name: &'static str) -> Self {
        Field { name, of: PhantomData }
    }

    /// The field's Rust name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T, V, C> Clone for Field<T, V, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, V, C> Copy for Field<T, V, C> {}

impl<T, V, C> PartialEq for Field<T, V, C> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl<T, V, C> Eq for Field<T, V, C> {}

impl<T, V, C> std::fmt::Debug for Field<T, V, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Field({})", self.name)
    }
}

/// Some fields of `T`, for [`Table::update`](crate::Table::update): one
/// handle, an array or slice of handles of one type (`&[User::NAME,
/// User::CITY]`), or a tuple of handles of different types
/// (`(User::NAME, User::AGE)`, up to 8).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a list of fields of `{T}`",
    label = "expected handles of `{T}`'s fields",
    note = "pass one handle, an array of handles of one type, or a tuple of handles (`(User::NAME, User::AGE)`)"
)]
pub trait Fields<T> {
    /// The fields' names.
    fn names(&self) -> Vec<&'static str>;
}

impl<T, V, C> Fields<T> for Field<T, V, C> {
    fn names(&self) -> Vec<&'static str> {
        vec![self.name]
    }
}

impl<T, V, C, const N: usize> Fields<T> for [Field<T, V, C>; N] {
    fn names(&self) -> Vec<&'static str> {
        self.iter().map(Field::name).collect()
    }
}

impl<T, V, C, const N: usize> Fields<T> for &[Field<T, V, C>; N] {
    fn names(&self) -> Vec<&'static str> {
        self.iter().map(Field::name).collect()
    }
}

impl<T, V, C> Fields<T> for &[Field<T, V, C>] {
    fn names(&self) -> Vec<&'static str> {
        self.iter().map(Field::name).collect()
    }
}

macro_rules! tuple_fields {
    ($(($($v:ident $c:ident $i:tt),+))*) => {$(
        impl<T, $($v, $c),+> Fields<T> for ($(Field<T, $v, $c>,)+) {
            fn names(&self) -> Vec<&'static str> {
                vec![$(self.$i.name),+]
            }
        }
    )*};
}

tuple_fields! {
    (V0 C0 0)
    (V0 C0 0, V1 C1 1)
    (V0 C0 0, V1 C1 1, V2 C2 2)
    (V0 C0 0, V1 C1 1, V2 C2 2, V3 C3 3)
    (V0 C0 0, V1 C1 1, V2 C2 2, V3 C3 3, V4 C4 4)
    (V0 C0 0, V1 C1 1, V2 C2 2, V3 C3 3, V4 C4 4, V5 C5 5)
    (V0 C0 0, V1 C1 1, V2 C2 2, V3 C3 3, V4 C4 4, V5 C5 5, V6 C6 6)
    (V0 C0 0, V1 C1 1, V2 C2 2, V3 C3 3, V4 C4 4, V5 C5 5, V6 C6 6, V7 C7 7)
}

/// The region split points of a salted key: the first key of each bucket
/// but the first.
pub fn salt_split_keys(schema: &KeySchema) -> Vec<Bytes> {
    let Some((buckets, _)) = schema.salt() else {
        return Vec::new();
    };
    if !matches!(schema.segments().first(), Some(Segment::Salt { .. })) {
        return Vec::new();
    }
    (1..buckets)
        .filter_map(|b| schema.encode_prefix_in_bucket(&(), b).ok())
        .map(Bytes::from)
        .collect()
}
