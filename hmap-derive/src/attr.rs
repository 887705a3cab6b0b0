//! Parsing of `#[hmap(...)]` attributes into plain values with their spans.
//! No rule that involves more than one attribute is checked here: that is
//! [`crate::check`]'s job.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, LitBool, LitInt, LitStr, Token};

use crate::ctxt::Ctxt;

const CONTAINER_ATTRS: &str =
    "`table`, `crate`, `text_key`, `separator`, `key_prefix`, `salt(...)`, `hash_prefix(...)` or `family(...)`";
const FAMILY_ATTRS: &str =
    "`name`, `versions`, `min_versions`, `ttl`, `block_size`, `block_cache`, `in_memory`, `bloom` or `compression`";
const FIELD_ATTRS: &str = "`key`, `desc`, `reverse_ts`, `reversed`, `width`, `unpadded`, `family`, `column`, `json`, `text`, `keep_on_none`, `dynamic`, `relation`, `parent`, `children`, `level`, `versions`, `version`, `counter` or `skip`";

/// A `salt(buckets = N, by = [a, b])` attribute.
pub struct Salt {
    pub span: Span,
    pub buckets: Option<LitInt>,
    pub by: Vec<Ident>,
}

/// A `hash_prefix(len = N, of = field)` attribute.
pub struct HashPrefix {
    pub span: Span,
    pub len: Option<LitInt>,
    pub of: Option<Ident>,
}

/// A `family(name = "f", ...)` attribute.
pub struct Family {
    pub span: Span,
    pub name: Option<LitStr>,
    pub versions: Option<LitInt>,
    pub min_versions: Option<LitInt>,
    /// Seconds, parsed from `ttl = 18000` or `ttl = "5h"`.
    pub ttl: Option<(u32, Span)>,
    pub block_size: Option<LitInt>,
    pub block_cache: Option<LitBool>,
    pub in_memory: Option<LitBool>,
    pub bloom: Option<LitStr>,
    pub compression: Option<LitStr>,
}

/// Attributes on the struct.
#[derive(Default)]
pub struct Container {
    pub table: Option<LitStr>,
    pub crate_path: Option<syn::Path>,
    pub text_key: Option<Span>,
    pub separator: Option<LitStr>,
    pub key_prefix: Option<LitStr>,
    pub salt: Option<Salt>,
    pub hash_prefix: Option<HashPrefix>,
    pub families: Vec<Family>,
}

/// Attributes on a field.
#[derive(Default)]
pub struct Field {
    pub key: Option<Span>,
    pub desc: Option<Span>,
    pub reverse_ts: Option<Span>,
    pub reversed: Option<Span>,
    pub width: Option<LitInt>,
    pub unpadded: Option<Span>,
    pub family: Option<LitStr>,
    pub column: Option<LitStr>,
    pub json: Option<Span>,
    pub text: Option<Span>,
    pub keep_on_none: Option<Span>,
    pub dynamic: Option<Span>,
    /// `dynamic(key = "text")`: the codec of the map's keys (the qualifiers).
    pub dynamic_key: Option<LitStr>,
    /// `dynamic(value = "json")`: the codec of the map's values.
    pub dynamic_value: Option<LitStr>,
    /// `relation`: a dynamic family that a relation helper owns.
    pub relation: Option<Span>,
    /// `parent`: the cell holding a tree node's parent's rowkey.
    pub parent: Option<Span>,
    /// `children`: a tree node's child list (a dynamic family the tree owns).
    pub children: Option<Span>,
    /// `level`: the key part that tells a tree's top-level nodes (0) from the others (1).
    pub level: Option<Span>,
    pub versions: Option<Span>,
    pub version: Option<Span>,
    pub counter: Option<Span>,
    pub skip: Option<Span>,
}

/// Sets `slot` once; a second time is an error at the attribute.
fn set_once<T>(cx: &Ctxt, meta: &ParseNestedMeta<'_>, slot: &mut Option<T>, value: T) {
    if slot.is_some() {
        let name = meta.path.get_ident().map_or_else(String::new, Ident::to_string);
        cx.syn_error(meta.error(format!("duplicate hmap attribute `{name}`")));
    } else {
        *slot = Some(value);
    }
}

fn hmap_attrs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("hmap"))
}

impl Container {
    pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> Container {
        let mut c = Container::default();
        for attr in hmap_attrs(attrs) {
            let result = attr.parse_nested_meta(|meta| {
                let span = meta.path.get_ident().map_or_else(Span::call_site, Ident::span);
                if meta.path.is_ident("table") {
                    let v: LitStr = meta.value()?.parse()?;
                    set_once(cx, &meta, &mut c.table, v);
                } else if meta.path.is_ident("crate") {
                    let v: LitStr = meta.value()?.parse()?;
                    set_once(cx, &meta, &mut c.crate_path, v.parse()?);
                } else if meta.path.is_ident("text_key") {
                    set_once(cx, &meta, &mut c.text_key, span);
                } else if meta.path.is_ident("separator") {
                    let v: LitStr = meta.value()?.parse()?;
                    set_once(cx, &meta, &mut c.separator, v);
                } else if meta.path.is_ident("key_prefix") {
                    let v: LitStr = meta.value()?.parse()?;
                    set_once(cx, &meta, &mut c.key_prefix, v);
                } else if meta.path.is_ident("salt") {
                    let salt = parse_salt(&meta, span)?;
                    set_once(cx, &meta, &mut c.salt, salt);
                } else if meta.path.is_ident("hash_prefix") {
                    let hash = parse_hash_prefix(&meta, span)?;
                    set_once(cx, &meta, &mut c.hash_prefix, hash);
                } else if meta.path.is_ident("family") {
                    c.families.push(parse_family(cx, &meta, span)?);
                } else {
                    // Reported, and passed over: the attributes after it
                    // (the families) still count, so that what follows
                    // is not reported as missing too.
                    cx.syn_error(meta.error(format_args!(
                        "unknown hmap attribute `{}` on a struct, expected one of {CONTAINER_ATTRS}",
                        path_name(&meta.path)
                    )));
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        c
    }
}

fn path_name(path: &syn::Path) -> String {
    quote::quote!(#path).to_string().replace(' ', "")
}

/// `by = field` or `by = [field, field]`.
fn parse_idents(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Ident>> {
    let input = meta.value()?;
    if input.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in input);
        Ok(Punctuated::<Ident, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect())
    } else {
        Ok(vec![input.parse()?])
    }
}

fn parse_salt(meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<Salt> {
    let mut salt = Salt {
        span,
        buckets: None,
        by: Vec::new(),
    };
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("buckets") {
            salt.buckets = Some(inner.value()?.parse()?);
        } else if inner.path.is_ident("by") {
            salt.by = parse_idents(&inner)?;
        } else {
            return Err(inner.error(format_args!(
                "unknown salt option `{}`, expected `buckets` or `by`",
                path_name(&inner.path)
            )));
        }
        Ok(())
    })?;
    Ok(salt)
}

fn parse_hash_prefix(meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<HashPrefix> {
    let mut hash = HashPrefix {
        span,
        len: None,
        of: None,
    };
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("len") {
            hash.len = Some(inner.value()?.parse()?);
        } else if inner.path.is_ident("of") {
            hash.of = Some(inner.value()?.parse()?);
        } else {
            return Err(inner.error(format_args!(
                "unknown hash_prefix option `{}`, expected `len` or `of`",
                path_name(&inner.path)
            )));
        }
        Ok(())
    })?;
    Ok(hash)
}

fn parse_family(cx: &Ctxt, meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<Family> {
    let mut f = Family {
        span,
        name: None,
        versions: None,
        min_versions: None,
        ttl: None,
        block_size: None,
        block_cache: None,
        in_memory: None,
        bloom: None,
        compression: None,
    };
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("name") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.name, v);
        } else if inner.path.is_ident("versions") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.versions, v);
        } else if inner.path.is_ident("min_versions") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.min_versions, v);
        } else if inner.path.is_ident("ttl") {
            // A bad value is reported without dropping the whole family, so
            // that its fields do not also report a missing family.
            match parse_ttl(&inner) {
                Ok(v) => set_once(cx, &inner, &mut f.ttl, v),
                Err(e) => cx.syn_error(e),
            }
        } else if inner.path.is_ident("block_size") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.block_size, v);
        } else if inner.path.is_ident("block_cache") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.block_cache, v);
        } else if inner.path.is_ident("in_memory") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.in_memory, v);
        } else if inner.path.is_ident("bloom") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.bloom, v);
        } else if inner.path.is_ident("compression") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, &mut f.compression, v);
        } else {
            return Err(inner.error(format_args!(
                "unknown family option `{}`, expected one of {FAMILY_ATTRS}",
                path_name(&inner.path)
            )));
        }
        Ok(())
    })?;
    Ok(f)
}

/// `ttl = 18000` (seconds) or `ttl = "30d"` (`s`, `m`, `h`, `d`, `w`).
fn parse_ttl(meta: &ParseNestedMeta<'_>) -> syn::Result<(u32, Span)> {
    let input = meta.value()?;
    let (text, span) = if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        (lit.base10_digits().to_string(), lit.span())
    } else {
        let lit: LitStr = input.parse()?;
        (lit.value(), lit.span())
    };
    let error = || {
        syn::Error::new(
            span,
            format!("invalid ttl {text:?}: write seconds (`18000`) or a number with s, m, h, d or w (`\"30d\"`)"),
        )
    };
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text.as_str(), "s"),
    };
    let n: u64 = digits.parse().map_err(|_| error())?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(error()),
    };
    let secs = n
        .checked_mul(scale)
        .filter(|s| (1..i32::MAX as u64).contains(s))
        .ok_or_else(|| {
            syn::Error::new(
                span,
                format!("ttl {text:?} is out of range: from 1 second to about 68 years"),
            )
        })?;
    Ok((secs as u32, span))
}

/// `dynamic(key = "text", value = "json")`: a codec for the map's keys and
/// one for its values, each `"native"`, `"text"` or `"json"` (checked in
/// [`crate::model`]).
fn parse_dynamic(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &mut Option<LitStr>,
    value: &mut Option<LitStr>,
) -> syn::Result<()> {
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("key") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, key, v);
        } else if inner.path.is_ident("value") {
            let v = inner.value()?.parse()?;
            set_once(cx, &inner, value, v);
        } else {
            return Err(inner.error(format_args!(
                "unknown dynamic option `{}`, expected `key` or `value`: `dynamic(key = \"text\", value = \"json\")`",
                path_name(&inner.path)
            )));
        }
        Ok(())
    })
}

impl Field {
    pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> Field {
        let mut f = Field::default();
        for attr in hmap_attrs(attrs) {
            let result = attr.parse_nested_meta(|meta| {
                let span = meta.path.get_ident().map_or_else(Span::call_site, Ident::span);
                let flag = |slot: &mut Option<Span>| set_once(cx, &meta, slot, span);
                match meta.path.get_ident().map(Ident::to_string).as_deref() {
                    Some("key") => flag(&mut f.key),
                    Some("desc") => flag(&mut f.desc),
                    Some("reverse_ts") => flag(&mut f.reverse_ts),
                    Some("reversed") => flag(&mut f.reversed),
                    Some("unpadded") => flag(&mut f.unpadded),
                    Some("json") => flag(&mut f.json),
                    Some("text") => flag(&mut f.text),
                    Some("keep_on_none") => flag(&mut f.keep_on_none),
                    Some("dynamic") => {
                        flag(&mut f.dynamic);
                        if meta.input.peek(syn::token::Paren) {
                            parse_dynamic(cx, &meta, &mut f.dynamic_key, &mut f.dynamic_value)?;
                        }
                    }
                    Some("relation") => flag(&mut f.relation),
                    Some("parent") => flag(&mut f.parent),
                    Some("children") => flag(&mut f.children),
                    Some("level") => flag(&mut f.level),
                    Some("versions") => flag(&mut f.versions),
                    Some("version") => flag(&mut f.version),
                    Some("counter") => flag(&mut f.counter),
                    Some("skip") => flag(&mut f.skip),
                    Some("width") => {
                        let v = meta.value()?.parse()?;
                        set_once(cx, &meta, &mut f.width, v);
                    }
                    Some("family") => {
                        let v = meta.value()?.parse()?;
                        set_once(cx, &meta, &mut f.family, v);
                    }
                    Some("column") => {
                        let v = meta.value()?.parse()?;
                        set_once(cx, &meta, &mut f.column, v);
                    }
                    _ => {
                        cx.syn_error(meta.error(format_args!(
                            "unknown hmap attribute `{}` on a field, expected one of {FIELD_ATTRS}",
                            path_name(&meta.path)
                        )));
                        skip_value(&meta)?;
                    }
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        f
    }
}

/// Passes over an unknown attribute's value (`= ...` or `(...)`), so that
/// parsing goes on with the next attribute.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}
