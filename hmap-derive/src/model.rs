//! The checked model of a mapped struct: each field's role, family and
//! column resolved, the syntax nodes kept for error spans.

use syn::{Data, DeriveInput, Fields, GenericArgument, Ident, LitStr, PathArguments, Type};

use crate::attr;
use crate::ctxt::Ctxt;

/// How a cell value is encoded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Native,
    Json,
    Text,
}

/// A key field's modifiers.
pub struct KeyPart {
    pub desc: bool,
    pub reverse_ts: bool,
    pub reversed: bool,
    pub width: Option<u16>,
    pub unpadded: bool,
    /// `level`: a tree's level (0 for top-level nodes, 1 below).
    pub level: bool,
}

pub enum Role<'a> {
    Key(KeyPart),
    Cell {
        family: String,
        column: String,
        codec: Codec,
        /// `Some(T)` for an `Option<T>` field.
        optional: Option<&'a Type>,
        keep_on_none: bool,
        /// `parent`: a tree node's pointer to its parent, which the tree
        /// writes (a put of the entity leaves it alone).
        parent: bool,
    },
    Dynamic {
        family: String,
        key_ty: &'a Type,
        value_ty: &'a Type,
        /// The codec of the map's keys, which are the qualifiers.
        key_codec: Codec,
        /// The codec of the map's values.
        value_codec: Codec,
        /// `relation`: a relation helper owns the family, so that writes of
        /// the entity leave it alone.
        relation: bool,
        /// `children`: a tree node's child list (also `relation`).
        children: bool,
    },
    Versions {
        family: String,
        column: String,
        value_ty: &'a Type,
        codec: Codec,
    },
    Version {
        family: String,
        column: String,
    },
    Counter {
        family: String,
        column: String,
    },
    Skip,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub attrs: attr::Field,
    pub role: Role<'a>,
}

impl Field<'_> {
    /// The family and column a field is stored in, if it has cells.
    pub fn column(&self) -> Option<(&str, Option<&str>)> {
        match &self.role {
            Role::Cell { family, column, .. }
            | Role::Versions { family, column, .. }
            | Role::Version { family, column }
            | Role::Counter { family, column } => Some((family, Some(column))),
            Role::Dynamic { family, .. } => Some((family, None)),
            Role::Key(_) | Role::Skip => None,
        }
    }
}

pub struct Model<'a> {
    pub input: &'a DeriveInput,
    pub attrs: attr::Container,
    pub table: String,
    pub fields: Vec<Field<'a>>,
}

impl<'a> Model<'a> {
    /// The key fields, in key order.
    pub fn keys(&self) -> impl Iterator<Item = &Field<'a>> {
        self.fields.iter().filter(|f| matches!(f.role, Role::Key(_)))
    }

    /// The position of a key field among the key fields.
    pub fn key_index(&self, name: &Ident) -> Option<usize> {
        self.keys().position(|f| f.ident == name)
    }

    pub fn crate_path(&self) -> syn::Path {
        self.attrs
            .crate_path
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::hmap))
    }

    pub fn build(cx: &Ctxt, input: &'a DeriveInput) -> Option<Model<'a>> {
        let named = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(named) => named,
                _ => {
                    cx.error_at(&input.ident, "#[derive(HTable)] needs a struct with named fields");
                    return None;
                }
            },
            _ => {
                cx.error_at(&input.ident, "#[derive(HTable)] maps structs only, not enums or unions");
                return None;
            }
        };
        if !input.generics.params.is_empty() {
            cx.error_at(&input.generics, "#[derive(HTable)] does not support generic structs");
        }
        let attrs = attr::Container::parse(cx, &input.attrs);
        let table = attrs
            .table
            .as_ref()
            .map_or_else(|| snake_case(&input.ident.to_string()), LitStr::value);
        let declared: Vec<String> = attrs
            .families
            .iter()
            .filter_map(|f| f.name.as_ref().map(LitStr::value))
            .collect();
        // With no family declared, the first field that needs one says so,
        // once for the struct.
        let no_family_reported = std::cell::Cell::new(false);
        let fields = named
            .named
            .iter()
            .filter_map(|f| {
                let ident = f.ident.as_ref()?;
                let attrs = attr::Field::parse(cx, &f.attrs);
                let role = role_of(cx, ident, &f.ty, &attrs, &declared, &no_family_reported);
                Some(Field {
                    ident,
                    ty: &f.ty,
                    attrs,
                    role,
                })
            })
            .collect();
        Some(Model {
            input,
            attrs,
            table,
            fields,
        })
    }
}

/// Types that are plainly no rowkey part, caught here with one clear error
/// rather than the trait bounds' noise: an `Option` (every row has every
/// key part), collections other than bytes.
fn not_a_key_part(cx: &Ctxt, ident: &Ident, ty: &Type) {
    let Type::Path(path) = ty else { return };
    let Some(last) = path.path.segments.last() else { return };
    let shown = quote::quote!(#ty).to_string().replace(' ', "");
    let parts = "key parts are integers, f32/f64, bool, String, Vec<u8>/Bytes/[u8; N], uuid::Uuid, chrono::DateTime<Utc> and chrono::NaiveDate";
    let reason = match last.ident.to_string().as_str() {
        "Option" => format!(
            "`{shown}` cannot be a rowkey part: every row has every key part, so a key field is never optional; make `{ident}` a plain value, or a cell (#[hmap(family = \"...\")]) if it may be missing"
        ),
        "Vec" if !shown.ends_with("Vec<u8>") => {
            format!("`{shown}` cannot be a rowkey part ({parts}); a list belongs in a cell or a dynamic family")
        }
        "HashMap" | "BTreeMap" | "HashSet" | "BTreeSet" | "VecDeque" => {
            format!("`{shown}` cannot be a rowkey part ({parts}); a collection belongs in a cell or a dynamic family")
        }
        _ => return,
    };
    cx.error_at(ty, reason);
}

/// `UserRole` -> `user_role`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn role_of<'a>(
    cx: &Ctxt,
    ident: &Ident,
    ty: &'a Type,
    a: &attr::Field,
    families: &[String],
    no_family_reported: &std::cell::Cell<bool>,
) -> Role<'a> {
    let cell_attrs: [(&str, bool); 8] = [
        ("parent", a.parent.is_some()),
        ("children", a.children.is_some()),
        ("family", a.family.is_some()),
        ("column", a.column.is_some()),
        ("json", a.json.is_some()),
        ("text", a.text.is_some()),
        ("keep_on_none", a.keep_on_none.is_some()),
        ("dynamic", a.dynamic.is_some()),
    ];
    let key_attrs: [(&str, bool); 6] = [
        ("level", a.level.is_some()),
        ("desc", a.desc.is_some()),
        ("reverse_ts", a.reverse_ts.is_some()),
        ("reversed", a.reversed.is_some()),
        ("width", a.width.is_some()),
        ("unpadded", a.unpadded.is_some()),
    ];
    let roles = [
        ("key", a.key),
        ("dynamic", a.dynamic),
        ("versions", a.versions),
        ("version", a.version),
        ("counter", a.counter),
        ("skip", a.skip),
    ];
    let chosen: Vec<&(&str, Option<proc_macro2::Span>)> = roles.iter().filter(|(_, s)| s.is_some()).collect();
    if chosen.len() > 1 {
        cx.error_at(
            ident,
            format!(
                "field `{ident}` is marked both `{}` and `{}`; a field has one role",
                chosen[0].0, chosen[1].0
            ),
        );
    }
    if a.key.is_none() {
        for (name, set) in key_attrs {
            if set {
                cx.error_at(
                    ident,
                    format!("`{name}` applies to key fields only; add `key` to `{ident}` or remove it"),
                );
            }
        }
    }
    // With two roles (already an error), `key` wins, so that the struct is
    // not also reported as keyless.
    if a.skip.is_some() && a.key.is_none() {
        return Role::Skip;
    }
    if a.key.is_some() {
        for (name, set) in cell_attrs {
            if set {
                cx.error_at(ident, format!("`{name}` does not apply to the key field `{ident}`"));
            }
        }
        let width = a.width.as_ref().and_then(|w| match w.base10_parse::<u16>() {
            Ok(n) if (1..=39).contains(&n) => Some(n),
            _ => {
                cx.error_at(w, "a key width is from 1 to 39 digits");
                None
            }
        });
        not_a_key_part(cx, ident, ty);
        return Role::Key(KeyPart {
            desc: a.desc.is_some(),
            reverse_ts: a.reverse_ts.is_some(),
            reversed: a.reversed.is_some(),
            width,
            unpadded: a.unpadded.is_some(),
            level: a.level.is_some(),
        });
    }
    let family = match (&a.family, families) {
        (Some(f), _) => f.value(),
        (None, [only]) => only.clone(),
        (None, []) => {
            if no_family_reported.replace(true) {
                return Role::Skip;
            }
            cx.error_at(
                ident,
                format!(
                    "field `{ident}` needs a column family, and the struct declares none: declare one on the struct, e.g. #[hmap(family(name = \"f\"))] (with a single family every field goes there), or mark `{ident}` #[hmap(key)] or #[hmap(skip)]"
                ),
            );
            String::new()
        }
        (None, several) => {
            cx.error_at(
                ident,
                format!(
                    "field `{ident}` needs a place: add #[hmap(family = \"...\")] naming one of the struct's families ({}), #[hmap(key)] or #[hmap(skip)]",
                    several.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ")
                ),
            );
            String::new()
        }
    };
    let column = a.column.as_ref().map_or_else(|| ident.to_string(), LitStr::value);
    if let (Some(span), None) = (a.relation, a.dynamic) {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "`relation` marks a dynamic family that a relation helper owns: write `#[hmap(dynamic, relation)]` on `{ident}`, or remove `relation`"
            ),
        ));
    }
    if let (Some(span), None) = (a.children, a.dynamic) {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "`children` marks a tree node's child list, a dynamic family: write `#[hmap(dynamic, children)]` on `{ident}`"
            ),
        ));
    }
    if let (Some(span), Some(_)) = (a.parent, a.dynamic) {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "`parent` marks one cell holding the parent's rowkey (an `Option<String>`, or `Option<Vec<u8>>` for a binary key), not a dynamic family: remove `dynamic` or `parent` from `{ident}`"
            ),
        ));
    }
    if a.dynamic.is_some() {
        if a.column.is_some() {
            cx.error_at(
                ident,
                "a dynamic field's qualifiers are its map's keys: remove `column`",
            );
        }
        // A plain `json` or `text` could mean the keys or the values: rather
        // than guess, ask for `dynamic(key = ..., value = ...)`.
        for (name, span) in [("json", a.json), ("text", a.text)] {
            if let Some(span) = span {
                cx.syn_error(syn::Error::new(
                    span,
                    format!(
                        "`{name}` on the dynamic field `{ident}` is ambiguous: it could encode the map's keys (the qualifiers) or its values; write `dynamic(key = \"{name}\")`, `dynamic(value = \"{name}\")` or both"
                    ),
                ));
            }
        }
        let key_codec = dynamic_codec(cx, a.dynamic_key.as_ref(), "keys");
        let value_codec = dynamic_codec(cx, a.dynamic_value.as_ref(), "values");
        return match map_types(ty) {
            Some((key_ty, value_ty)) => Role::Dynamic {
                family,
                key_ty,
                value_ty,
                key_codec,
                value_codec,
                relation: a.relation.is_some() || a.children.is_some(),
                children: a.children.is_some(),
            },
            None => {
                cx.error_at(
                    ty,
                    "a dynamic field is a `BTreeMap<K, V>` or `HashMap<K, V>`: qualifier -> value",
                );
                Role::Skip
            }
        };
    }
    let codec = match (a.json, a.text) {
        (Some(_), Some(_)) => {
            cx.error_at(
                ident,
                format!("field `{ident}` is marked both `json` and `text`; choose one"),
            );
            Codec::Native
        }
        (Some(_), None) => Codec::Json,
        (None, Some(_)) => Codec::Text,
        (None, None) => Codec::Native,
    };
    if let Some(span) = a
        .parent
        .filter(|_| a.versions.is_some() || a.version.is_some() || a.counter.is_some())
    {
        cx.syn_error(syn::Error::new(
            span,
            format!("`parent` marks a plain `Option` cell; `{ident}` has another role"),
        ));
    }
    if a.versions.is_some() {
        return match versioned_type(ty) {
            Some(value_ty) => Role::Versions {
                family,
                column,
                value_ty,
                codec,
            },
            None => {
                cx.error_at(ty, "a `versions` field is a `Vec<hmap::Versioned<T>>`, newest first");
                Role::Skip
            }
        };
    }
    if a.version.is_some() {
        if !is_named(ty, "u64") {
            cx.error_at(ty, "a `version` field is a `u64`");
        }
        return Role::Version { family, column };
    }
    if a.counter.is_some() {
        if !is_named(ty, "i64") {
            cx.error_at(ty, "a `counter` field is an `i64` (HBase counters are 8-byte longs)");
        }
        return Role::Counter { family, column };
    }
    let optional = generic_args(ty, "Option").and_then(|args| args.first().copied());
    if a.keep_on_none.is_some() && optional.is_none() {
        cx.error_at(ident, "`keep_on_none` applies to `Option` fields");
    }
    if let Some(span) = a.parent {
        let raw = optional.is_some_and(|t| is_named(t, "String") || is_named(t, "Vec") || is_named(t, "Bytes"));
        if !raw || codec != Codec::Native {
            cx.syn_error(syn::Error::new(
                span,
                format!(
                    "the `parent` field `{ident}` holds the parent's rowkey as the tree writes it: make it an `Option<String>` (a text key) or an `Option<Vec<u8>>` (a binary key), with no `json` or `text`"
                ),
            ));
        }
    }
    Role::Cell {
        family,
        column,
        codec,
        optional,
        keep_on_none: a.keep_on_none.is_some(),
        parent: a.parent.is_some(),
    }
}

/// The codec named in `dynamic(key = "...")` or `dynamic(value = "...")`;
/// `Native` when absent.
fn dynamic_codec(cx: &Ctxt, name: Option<&LitStr>, what: &str) -> Codec {
    let Some(lit) = name else { return Codec::Native };
    match lit.value().as_str() {
        "native" => Codec::Native,
        "text" => Codec::Text,
        "json" => Codec::Json,
        other => {
            cx.error_at(
                lit,
                format!("unknown codec `{other}` for the map's {what}, expected \"native\", \"text\" or \"json\""),
            );
            Codec::Native
        }
    }
}

/// The type arguments of `Name<...>` (by the path's last segment).
fn generic_args<'a>(ty: &'a Type, name: &str) -> Option<Vec<&'a Type>> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    Some(
        args.args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
    )
}

fn map_types(ty: &Type) -> Option<(&Type, &Type)> {
    let args = generic_args(ty, "BTreeMap").or_else(|| generic_args(ty, "HashMap"))?;
    match args.as_slice() {
        [k, v, ..] => Some((k, v)),
        _ => None,
    }
}

fn versioned_type(ty: &Type) -> Option<&Type> {
    let inner = *generic_args(ty, "Vec")?.first()?;
    generic_args(inner, "Versioned")?.first().copied()
}

/// Whether the type's path ends in `name` (`u64`, `chrono::DateTime<Utc>`).
pub fn is_named(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name))
}
