//! The rules that involve more than one attribute or field, one function
//! each. Each reports at the token that is wrong and says what to do.

use std::collections::HashMap;

use syn::LitStr;

use crate::ctxt::Ctxt;
use crate::model::{Model, Role, is_named};

pub fn check(cx: &Ctxt, m: &Model<'_>) {
    table_name(cx, m);
    has_key(cx, m);
    key_format(cx, m);
    key_modifiers(cx, m);
    salt(cx, m);
    hash_prefix(cx, m);
    families(cx, m);
    fields_in_declared_families(cx, m);
    unique_columns(cx, m);
    one_version_field(cx, m);
    tree(cx, m);
}

/// The table's name is one HBase takes, so that a name it would refuse
/// fails at compile time rather than at the first call: an optional
/// `namespace:` of letters, digits and `_`, then letters, digits, `_`, `-`
/// and `.` (not first), each part at most 255 bytes, not `zookeeper`. The
/// same rules as `hmap::schema::validate_table_name`, which checks at run
/// time (with a backend's prefix, which only then is known); this crate
/// cannot call it, and `ui-tests/tests/ui/table-name-hbase-refuses.rs` with the
/// schema tests keep the two in step.
fn table_name(cx: &Ctxt, m: &Model<'_>) {
    let name = m.table.as_str();
    let (namespace, qualifier) = match name.split_once(':') {
        Some((namespace, qualifier)) => (Some(namespace), qualifier),
        None => (None, name),
    };
    let legal = |part: &str, punctuation: bool| {
        !part.is_empty()
            && part.len() <= 255
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || (punctuation && (c == '-' || c == '.')))
            && !part.starts_with(['.', '-'])
    };
    let problem = if namespace.is_some_and(|ns| !legal(ns, false)) || !legal(qualifier, true) {
        format!(
            "HBase cannot name a table {name:?}: use letters, digits, `_`, `-` and `.` (not first), \
             at most 255 bytes, with an optional `namespace:` of letters, digits and `_`"
        )
    } else if qualifier == "zookeeper" {
        "HBase reserves the table name `zookeeper`: choose another with #[hmap(table = \"...\")]".to_string()
    } else {
        return;
    };
    match &m.attrs.table {
        Some(table) => cx.error_at(table, problem),
        None => cx.error_at(
            &m.input.ident,
            format!("{problem} (the name comes from the struct's; set one with #[hmap(table = \"...\")])"),
        ),
    }
}

fn has_key(cx: &Ctxt, m: &Model<'_>) {
    if m.keys().next().is_none() {
        cx.error_at(
            &m.input.ident,
            "an HTable needs at least one key field: mark the fields of the rowkey with #[hmap(key)], in key order",
        );
    }
}

/// `text_key` and `separator` go together; a separator is one ASCII
/// punctuation character, or empty for none.
fn key_format(cx: &Ctxt, m: &Model<'_>) {
    if let Some(sep) = &m.attrs.separator {
        if m.attrs.text_key.is_none() {
            cx.error_at(sep, "`separator` applies to text keys: add `text_key`");
        }
        let value = sep.value();
        let mut chars = value.chars();
        match (chars.next(), chars.next()) {
            (None, _) => {}
            (Some(c), None) if c.is_ascii_punctuation() || c == ' ' => {}
            _ => cx.error_at(
                sep,
                "a separator is one ASCII punctuation character (`_`, `|`, `#`...) or \"\" for none",
            ),
        }
    }
    if let Some(prefix) = &m.attrs.key_prefix
        && prefix.value().is_empty()
    {
        cx.error_at(prefix, "a key prefix cannot be empty");
    }
}

/// `reverse_ts` on time types, `reversed` on strings, text widths on text keys.
fn key_modifiers(cx: &Ctxt, m: &Model<'_>) {
    let text = m.attrs.text_key.is_some();
    for f in m.keys() {
        let Role::Key(k) = &f.role else { continue };
        if k.reverse_ts && !["DateTime", "i64", "u64"].iter().any(|t| is_named(f.ty, t)) {
            cx.error_at(
                f.ty,
                format!(
                    "`reverse_ts` needs a time: `chrono::DateTime<Utc>`, or milliseconds as `i64` or `u64`; `{}` is not one",
                    f.ident
                ),
            );
        }
        if k.reversed && !is_named(f.ty, "String") {
            cx.error_at(f.ty, "`reversed` stores a string backwards: it needs a `String` field");
        }
        if !text && (k.width.is_some() || k.unpadded) {
            let span = f.attrs.width.as_ref().map_or(f.ident.span(), syn::LitInt::span);
            cx.syn_error(syn::Error::new(
                span,
                "`width` and `unpadded` apply to text keys: add `text_key` to the struct",
            ));
        }
        if k.width.is_some() && k.unpadded {
            cx.error_at(f.ident, "a key part is either `width = N` or `unpadded`, not both");
        }
        if text && k.desc && (is_named(f.ty, "String") || k.unpadded) {
            cx.error_at(
                f.ident,
                "`desc` in a text key needs a fixed-width part (a padded number, a date, a uuid); store this key in binary, or drop `desc`",
            );
        }
        if text && (is_named(f.ty, "f64") || is_named(f.ty, "f32")) {
            cx.error_at(
                f.ty,
                "float key parts cannot be written in a text key; use the binary format",
            );
        }
    }
}

/// `salt(buckets = 1..=256, by = [key fields])`.
fn salt(cx: &Ctxt, m: &Model<'_>) {
    let Some(salt) = &m.attrs.salt else { return };
    match &salt.buckets {
        None => cx.syn_error(syn::Error::new(salt.span, "salt needs `buckets = N` (2 to 256)")),
        Some(b) => match b.base10_parse::<u16>() {
            Ok(n) if (1..=256).contains(&n) => {}
            _ => cx.error_at(b, "salt buckets are from 1 to 256"),
        },
    }
    if salt.by.is_empty() {
        cx.syn_error(syn::Error::new(
            salt.span,
            "salt needs `by = [fields]`: the key fields whose hash picks the bucket",
        ));
    }
    for (i, name) in salt.by.iter().enumerate() {
        if m.key_index(name).is_none() {
            let reason = if m.fields.iter().any(|f| f.ident == name) {
                "is not a key field"
            } else {
                "is not a field"
            };
            cx.error_at(
                name,
                format!("salt `by` names `{name}`, which {reason}; name key fields"),
            );
        } else if salt.by[..i].contains(name) {
            cx.error_at(name, format!("salt `by` names `{name}` twice"));
        }
    }
}

/// `hash_prefix(len = .., of = key field)`.
fn hash_prefix(cx: &Ctxt, m: &Model<'_>) {
    let Some(hash) = &m.attrs.hash_prefix else { return };
    let max = if m.attrs.text_key.is_some() { 32 } else { 16 };
    match &hash.len {
        None => cx.syn_error(syn::Error::new(
            hash.span,
            format!("hash_prefix needs `len = N` (1 to {max})"),
        )),
        Some(l) => match l.base10_parse::<u8>() {
            Ok(n) if n >= 1 && n <= max => {}
            _ => cx.error_at(
                l,
                format!(
                    "hash_prefix keeps 1 to {max} {}",
                    if max == 32 { "hex digits" } else { "bytes" }
                ),
            ),
        },
    }
    match &hash.of {
        None => cx.syn_error(syn::Error::new(
            hash.span,
            "hash_prefix needs `of = field`: the key field hashed",
        )),
        Some(name) if m.key_index(name).is_none() => {
            cx.error_at(
                name,
                format!("hash_prefix `of` names `{name}`, which is not a key field"),
            );
        }
        Some(_) => {}
    }
}

/// Each family declared once, with a name and valid options.
fn families(cx: &Ctxt, m: &Model<'_>) {
    let mut seen: HashMap<String, ()> = HashMap::new();
    for f in &m.attrs.families {
        let Some(name) = &f.name else {
            cx.syn_error(syn::Error::new(
                f.span,
                "a family needs `name = \"...\"` (short: one letter is best)",
            ));
            continue;
        };
        let value = name.value();
        if value.is_empty() || value.starts_with('.') || value.contains(':') || value.chars().any(char::is_control) {
            cx.error_at(
                name,
                "a family name is not empty, does not start with '.', and holds no ':' or control characters",
            );
        }
        if seen.insert(value.clone(), ()).is_some() {
            cx.error_at(name, format!("family `{value}` is declared twice"));
        }
        let versions = f.versions.as_ref().map(|v| v.base10_parse::<u32>());
        if let (Some(lit), Some(Ok(0) | Err(_))) = (&f.versions, &versions) {
            cx.error_at(lit, "`versions` is at least 1");
        }
        if let Some(min) = &f.min_versions {
            let max = versions.and_then(Result::ok).unwrap_or(1);
            match min.base10_parse::<u32>() {
                Ok(n) if n <= max => {}
                _ => cx.error_at(min, format!("`min_versions` is at most `versions` ({max})")),
            }
        }
        if let Some(size) = &f.block_size {
            match size.base10_parse::<u32>() {
                Ok(n) if (1024..=16 * 1024 * 1024).contains(&n) => {}
                _ => cx.error_at(size, "`block_size` is from 1024 to 16777216 bytes (HBase's 1K to 16MB)"),
            }
        }
        if let Some(bloom) = &f.bloom
            && !["none", "row", "rowcol"].contains(&bloom.value().to_ascii_lowercase().as_str())
        {
            cx.error_at(bloom, "`bloom` is \"none\", \"row\" or \"rowcol\"");
        }
        if let Some(c) = &f.compression
            && !["none", "gz", "snappy", "lz4", "lzo", "zstd", "bzip2"]
                .contains(&c.value().to_ascii_lowercase().as_str())
        {
            cx.error_at(
                c,
                "`compression` is \"none\", \"gz\", \"snappy\", \"lz4\", \"lzo\", \"zstd\" or \"bzip2\"",
            );
        }
    }
}

/// Every column's family is declared.
fn fields_in_declared_families(cx: &Ctxt, m: &Model<'_>) {
    let declared: Vec<String> = m
        .attrs
        .families
        .iter()
        .filter_map(|f| f.name.as_ref().map(LitStr::value))
        .collect();
    for f in &m.fields {
        let Some((family, _)) = f.column() else { continue };
        if family.is_empty() || declared.iter().any(|d| d == family) {
            continue;
        }
        let at = f.attrs.family.as_ref().map_or_else(|| f.ident.span(), LitStr::span);
        cx.syn_error(syn::Error::new(
            at,
            format!(
                "field `{}` is in family `{family}`, which the struct does not declare; add #[hmap(family(name = \"{family}\"))]",
                f.ident
            ),
        ));
    }
}

/// No two fields in one column, and a dynamic family holds nothing else.
fn unique_columns(cx: &Ctxt, m: &Model<'_>) {
    let mut columns: HashMap<(String, String), &syn::Ident> = HashMap::new();
    let dynamic: Vec<(&str, &syn::Ident)> = m
        .fields
        .iter()
        .filter_map(|f| match &f.role {
            Role::Dynamic { family, .. } => Some((family.as_str(), f.ident)),
            _ => None,
        })
        .collect();
    for f in &m.fields {
        let Some((family, column)) = f.column() else { continue };
        if let Some((_, owner)) = dynamic.iter().find(|(d, owner)| *d == family && *owner != f.ident) {
            cx.error_at(
                f.ident,
                format!(
                    "family `{family}` holds the dynamic field `{owner}`, so it cannot hold `{}` too; give one of them its own family",
                    f.ident
                ),
            );
            continue;
        }
        let Some(column) = column else { continue };
        if let Some(other) = columns.insert((family.to_string(), column.to_string()), f.ident) {
            let at = f.attrs.column.as_ref().map_or_else(|| f.ident.span(), LitStr::span);
            cx.syn_error(syn::Error::new(
                at,
                format!(
                    "fields `{other}` and `{}` are both stored in column `{family}:{column}`; give one a different `column`",
                    f.ident
                ),
            ));
        }
    }
}

fn one_version_field(cx: &Ctxt, m: &Model<'_>) {
    let versions: Vec<&syn::Ident> = m
        .fields
        .iter()
        .filter(|f| matches!(f.role, Role::Version { .. }))
        .map(|f| f.ident)
        .collect();
    if let [_, second, ..] = versions.as_slice() {
        cx.error_at(second, "a struct has at most one `version` field");
    }
}

/// A tree node (`parent`, `children`, `level`): one parent cell and one
/// child list, both or neither; a key of the node's id alone, or of a `u8`
/// level then the id; the child list's keys of the id's type; no salt or
/// hash prefix, so that the top level is one prefix scan.
fn tree(cx: &Ctxt, m: &Model<'_>) {
    let parents: Vec<_> = m
        .fields
        .iter()
        .filter(|f| matches!(f.role, Role::Cell { parent: true, .. }))
        .collect();
    let children: Vec<_> = m
        .fields
        .iter()
        .filter(|f| matches!(f.role, Role::Dynamic { children: true, .. }))
        .collect();
    let keys: Vec<_> = m.keys().collect();
    let levels: Vec<_> = keys
        .iter()
        .filter(|f| matches!(&f.role, Role::Key(k) if k.level))
        .collect();
    for (what, found) in [("parent", &parents), ("children", &children)] {
        if let Some(extra) = found.get(1) {
            cx.error_at(extra.ident, format!("a tree node has one `{what}` field"));
        }
    }
    if let Some(extra) = levels.get(1) {
        cx.error_at(extra.ident, "a tree node has one `level` key part");
    }
    match (parents.first(), children.first()) {
        (None, None) => {
            if let Some(level) = levels.first() {
                cx.error_at(
                    level.ident,
                    "`level` belongs to a tree node: add a `parent` cell and a `children` list",
                );
            }
            return;
        }
        (Some(p), None) => {
            cx.error_at(
                p.ident,
                "a tree node needs its child list too: a `#[hmap(dynamic, children)]` map of child id -> label",
            );
            return;
        }
        (None, Some(c)) => {
            cx.error_at(
                c.ident,
                "a tree node needs its parent pointer too: an `Option<String>` field marked `#[hmap(parent)]`",
            );
            return;
        }
        (Some(_), Some(_)) => {}
    }
    let id = match (levels.first(), keys.as_slice()) {
        (Some(level), [first, id]) if first.ident == level.ident => {
            if !is_named(level.ty, "u8") {
                cx.error_at(
                    level.ty,
                    "a tree's `level` key part is a `u8` (0 for top-level nodes, 1 below)",
                );
            }
            id
        }
        (Some(level), _) => {
            cx.error_at(
                level.ident,
                "a tree's key with a `level` is two parts: the `level` first, then the node's id",
            );
            return;
        }
        (None, [id]) => id,
        (None, _) => {
            cx.error_at(
                &m.input.ident,
                "a tree node's key is its id, or a `level` part then its id: one key field, or two with the first marked `level`",
            );
            return;
        }
    };
    if let Some(span) = m
        .attrs
        .salt
        .as_ref()
        .map(|s| s.span)
        .or(m.attrs.hash_prefix.as_ref().map(|h| h.span))
    {
        cx.syn_error(syn::Error::new(
            span,
            "a tree node's key cannot be salted or hash-prefixed: the tree reads its top level and its rows by key",
        ));
    }
    if let Some(Role::Dynamic { key_ty, .. }) = children.first().map(|c| &c.role) {
        let same = quote::quote!(#key_ty).to_string() == {
            let ty = id.ty;
            quote::quote!(#ty).to_string()
        };
        if !same {
            cx.error_at(
                *key_ty,
                format!(
                    "the child list's keys are child ids: make them the id's type, that of `{}`",
                    id.ident
                ),
            );
        }
    }
}
