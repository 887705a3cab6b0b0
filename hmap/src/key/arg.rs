//! Key values checked at compile time against a table's key type.

use bytes::Bytes;

use super::KeyError;
use super::part::{FromKeyPart, KeyPart};
use super::tuple::KeyTuple;

/// A value that stands for a key part of type `P`: `P` itself, `&P`, and
/// `&str` for `String`, `&[u8]` for `Vec<u8>` and [`Bytes`], `Vec<u8>` and
/// `Bytes` for each other. Each encodes exactly as `P` does.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot stand for a key part of type `{P}`",
    label = "expected a `{P}` (or a reference to one)",
    note = "a key part of type `String` also takes a `&str`, and one of `Vec<u8>` or `Bytes` a `&[u8]`"
)]
pub trait PartArg<P>: KeyPart {
    /// The part as an owned `P`.
    fn into_part(self) -> P;
}

impl<P: FromKeyPart> PartArg<P> for P {
    #[inline]
    fn into_part(self) -> P {
        self
    }
}

impl<P: FromKeyPart + Clone> PartArg<P> for &P {
    #[inline]
    fn into_part(self) -> P {
        self.clone()
    }
}

impl PartArg<String> for &str {
    #[inline]
    fn into_part(self) -> String {
        self.to_owned()
    }
}

impl PartArg<Vec<u8>> for &[u8] {
    #[inline]
    fn into_part(self) -> Vec<u8> {
        self.to_vec()
    }
}

impl PartArg<Bytes> for &[u8] {
    #[inline]
    fn into_part(self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
}

impl PartArg<Vec<u8>> for Bytes {
    #[inline]
    fn into_part(self) -> Vec<u8> {
        self.to_vec()
    }
}

impl PartArg<Bytes> for Vec<u8> {
    #[inline]
    fn into_part(self) -> Bytes {
        Bytes::from(self)
    }
}

/// A table's [`HTable::Key`](crate::HTable::Key) is the owned type of its
/// key parts: `String`, or `(String, u64)`. A [`KeyArg`] of it is the key
/// itself, a reference to it, or a tuple of the parts' [`PartArg`]s, which
/// lets a `&str` stand for a `String` part and a `&[u8]` for a `Vec<u8>` or
/// [`Bytes`] part. The relation helpers' calls that take a whole key
/// (`link`, `rights_of` ...) take a `KeyArg`; a table's own
/// ([`Table::get`](crate::Table::get), `delete`, `increment`, `row_key`)
/// take a [`KeyOf`] it, which accepts the same values.
///
/// Key *prefixes* ([`Query::prefix`](crate::Query::prefix)) stay untyped
/// [`KeyTuple`]s, checked when they are encoded.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a key of this table, whose key is `{K}`",
    label = "expected the table's key, `{K}`",
    note = "give every key part, in key order, as a tuple for a key of several parts; a `String` part also takes a `&str`"
)]
pub trait KeyArg<K>: KeyTuple {
    /// The key as the table's owned key type.
    fn into_key(self) -> K;
}

// The impls are `do_not_recommend`: a value that is not a key is then one
// error, about `KeyArg` and naming the key's type, rather than about the
// `PartArg` or `FromKeyPart` bound of an impl for a key of another shape.

/// A one-part key: the part, or a one-element tuple of it.
#[diagnostic::do_not_recommend]
impl<P: FromKeyPart, A: PartArg<P>> KeyArg<P> for A {
    #[inline]
    fn into_key(self) -> P {
        self.into_part()
    }
}

#[diagnostic::do_not_recommend]
impl<P: FromKeyPart, A: PartArg<P>> KeyArg<P> for (A,) {
    #[inline]
    fn into_key(self) -> P {
        self.0.into_part()
    }
}

macro_rules! key_arg_impls {
    ($($idx:tt $P:ident $A:ident),+) => {
        #[diagnostic::do_not_recommend]
        impl<$($P: FromKeyPart, $A: PartArg<$P>),+> KeyArg<($($P,)+)> for ($($A,)+) {
            #[inline]
            fn into_key(self) -> ($($P,)+) {
                ($(self.$idx.into_part(),)+)
            }
        }

        /// A reference to the owned key.
        #[diagnostic::do_not_recommend]
        impl<$($P: FromKeyPart + Clone),+> KeyArg<($($P,)+)> for &($($P,)+) {
            #[inline]
            fn into_key(self) -> ($($P,)+) {
                self.clone()
            }
        }
    };
}

key_arg_impls!(0 PA A, 1 PB B);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E, 5 PF F);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E, 5 PF F, 6 PG G);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E, 5 PF F, 6 PG G, 7 PH H);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E, 5 PF F, 6 PG G, 7 PH H, 8 PI I);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E, 5 PF F, 6 PG G, 7 PH H, 8 PI I, 9 PJ J);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E, 5 PF F, 6 PG G, 7 PH H, 8 PI I, 9 PJ J, 10 PK K);
key_arg_impls!(0 PA A, 1 PB B, 2 PC C, 3 PD D, 4 PE E, 5 PF F, 6 PG G, 7 PH H, 8 PI I, 9 PJ J, 10 PK K, 11 PL L);

/// The values a table's calls that take a whole key
/// ([`Table::get`](crate::Table::get), `get_many`, `delete`, `increment`,
/// `row_key`) accept for table `Self`: exactly its [`KeyArg`]s, checked at
/// compile time. `#[derive(HTable)]` implements it, so that a value that is
/// not a key of the table is one error naming the table and its key's parts:
///
/// ```compile_fail,E0277
/// # use hmap::{HTable, Table};
/// # use hmap::store::MemoryStore;
/// #[derive(HTable)]
/// #[hmap(table = "post", family(name = "p"))]
/// struct Post { #[hmap(key)] user: String, #[hmap(key)] seq: u64, text: String }
/// # async fn run() -> Result<(), hmap::Error> {
/// let posts = Table::<Post, _>::new(MemoryStore::new());
/// // `(&str,)` is not a key of `Post`, whose key is (user: String, seq: u64)
/// posts.get(("u1",)).await?;
/// # Ok(()) }
/// ```
///
/// ```
/// # use hmap::{HTable, Table};
/// # use hmap::store::MemoryStore;
/// # #[derive(HTable)]
/// # #[hmap(table = "user", family(name = "i"))]
/// # struct User { #[hmap(key)] id: String, name: String }
/// # #[derive(HTable)]
/// # #[hmap(table = "post", family(name = "p"))]
/// # struct Post { #[hmap(key)] user: String, #[hmap(key)] seq: u64, text: String }
/// # async fn run() -> Result<(), hmap::Error> {
/// let users = Table::<User, _>::new(MemoryStore::new());
/// let posts = Table::<Post, _>::new(MemoryStore::new());
/// let id = String::from("u1");
/// users.get("u1").await?;
/// users.get(&id).await?;
/// users.get(("u1",)).await?;
/// posts.get(("u1", 7)).await?;
/// posts.get(&(id, 7u64)).await?;
/// # Ok(()) }
/// ```
///
/// The derive's impl is `impl<A: KeyOfPost> KeyOf<A> for Post`, where the
/// hidden trait `KeyOfPost` holds every [`KeyArg`] of the key and carries
/// the error message: a message can name only a trait's own parameters, so
/// the table's parts are written into a trait of the table's own. The
/// compiler reports the first bound of that chain it cannot meet, and the
/// derive marks the impls below `KeyOfPost` `#[diagnostic::do_not_recommend]`,
/// so the error is that one, not one about a part ([`PartArg`],
/// [`FromKeyPart`]) of a key shape the table does not have.
#[diagnostic::on_unimplemented(
    message = "`{A}` is not a key of `{Self}`",
    label = "not a key of `{Self}`",
    note = "give every key part, in key order, as a tuple for a key of several parts; a `String` part also takes a `&str`"
)]
pub trait KeyOf<A> {
    /// The rowkey of `key`. The derive's plumbing: [`Table::row_key`](crate::Table::row_key)
    /// is the documented call.
    #[doc(hidden)]
    fn encode_key_arg(key: &A) -> Result<Vec<u8>, KeyError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{KeyFormat, KeySchema, PartSpec, Segment};

    fn owned<K, A: KeyArg<K>>(a: A) -> K {
        a.into_key()
    }

    #[test]
    fn borrowed_parts_become_the_owned_key() {
        assert_eq!(owned::<String, _>("u1"), "u1");
        assert_eq!(owned::<String, _>(&String::from("u1")), "u1");
        assert_eq!(owned::<String, _>(("u1",)), "u1");
        assert_eq!(owned::<(String, u64), _>(("u1", 7)), ("u1".to_owned(), 7));
        assert_eq!(owned::<(String, u64), _>(&("u1".to_owned(), 7)), ("u1".to_owned(), 7));
        assert_eq!(owned::<Vec<u8>, _>(&b"ab"[..]), b"ab".to_vec());
        assert_eq!(owned::<Bytes, _>(b"ab".to_vec()), Bytes::from_static(b"ab"));
    }

    /// Each stand-in encodes exactly as the owned part it stands for.
    #[test]
    fn stand_ins_encode_as_the_owned_parts() {
        use crate::key::PartKind;
        let schema = |a, b| {
            KeySchema::new(
                KeyFormat::Binary,
                vec![
                    Segment::Part(PartSpec::new("a", a)),
                    Segment::Part(PartSpec::new("b", b)),
                ],
            )
            .unwrap()
        };
        let text_bytes = schema(PartKind::Str, PartKind::Bytes);
        assert_eq!(
            text_bytes.encode(&("u1", &b"x\0y"[..])).unwrap(),
            text_bytes.encode(&("u1".to_owned(), b"x\0y".to_vec())).unwrap()
        );
        let bytes_number = schema(PartKind::Bytes, PartKind::U64);
        assert_eq!(
            bytes_number.encode(&(Bytes::from_static(b"k"), 9u64)).unwrap(),
            bytes_number.encode(&(b"k".to_vec(), 9u64)).unwrap()
        );
    }
}
