//! Code generation: the `HTable` impl, a static key schema, and compile-time
//! type assertions spanned at the fields they concern.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, LitByteStr, LitStr};

use crate::check;
use crate::ctxt::Ctxt;
use crate::model::{Codec, Model, Role};

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::default();
    let model = Model::build(&cx, input);
    if let Some(m) = &model {
        check::check(&cx, m);
    }
    cx.check()?;
    let Some(model) = model else {
        return Err(syn::Error::new_spanned(&input.ident, "cannot derive HTable"));
    };
    Ok(expand(&model))
}

/// The codec's path, spanned at the field's type: an unsatisfied codec bound
/// is reported at the span of this path, so it points at the field.
fn codec_at(c: Codec, span: proc_macro2::Span) -> TokenStream {
    match c {
        Codec::Native => quote_spanned!(span=> __hmap::Native),
        Codec::Json => quote_spanned!(span=> __hmap::Json),
        Codec::Text => quote_spanned!(span=> __hmap::Text),
    }
}

fn expand(m: &Model<'_>) -> TokenStream {
    let krate = m.crate_path();
    let ident = &m.input.ident;
    let table = &m.table;
    let keys: Vec<_> = m.keys().collect();
    let key_idents: Vec<_> = keys.iter().map(|f| f.ident).collect();
    let key_types: Vec<_> = keys.iter().map(|f| f.ty).collect();

    let segments = segments(m);
    let segment_count = segments.len();
    let format = match (&m.attrs.text_key, &m.attrs.separator) {
        (None, _) => quote!(__hmap::KeyFormat::Binary),
        (Some(_), None) => quote!(__hmap::KeyFormat::Text {
            separator: ::core::option::Option::Some('_')
        }),
        (Some(_), Some(sep)) => match sep.value().chars().next() {
            Some(c) => quote!(__hmap::KeyFormat::Text { separator: ::core::option::Option::Some(#c) }),
            None => quote!(__hmap::KeyFormat::Text {
                separator: ::core::option::Option::None
            }),
        },
    };

    let (key_type, destructure) = if let [only] = key_types.as_slice() {
        let id = key_idents[0];
        (quote!(#only), quote!(let #id = key;))
    } else {
        (quote!((#(#key_types,)*)), quote!(let (#(#key_idents,)*) = key;))
    };

    let families = m.attrs.families.iter().filter_map(|f| {
        let name = f.name.as_ref()?;
        let mut e = quote!(__hmap::FamilySchema::new(#name));
        if let Some(v) = &f.versions {
            e = quote!(#e.versions(#v));
        }
        if let Some(v) = &f.min_versions {
            e = quote!(#e.min_versions(#v));
        }
        if let Some((secs, _)) = &f.ttl {
            e = quote!(#e.ttl_secs(#secs));
        }
        if let Some(v) = &f.block_size {
            e = quote!(#e.block_size(#v));
        }
        if let Some(v) = &f.block_cache {
            e = quote!(#e.block_cache(#v));
        }
        if let Some(v) = &f.in_memory {
            e = quote!(#e.in_memory(#v));
        }
        if let Some(b) = &f.bloom {
            let variant = match b.value().to_ascii_lowercase().as_str() {
                "none" => quote!(None),
                "rowcol" => quote!(RowCol),
                _ => quote!(Row),
            };
            e = quote!(#e.bloom(__hmap::BloomType::#variant));
        }
        if let Some(c) = &f.compression {
            let variant = match c.value().to_ascii_lowercase().as_str() {
                "gz" => quote!(Gz),
                "snappy" => quote!(Snappy),
                "lz4" => quote!(Lz4),
                "lzo" => quote!(Lzo),
                "zstd" => quote!(Zstd),
                "bzip2" => quote!(Bzip2),
                _ => quote!(None),
            };
            e = quote!(#e.compression(__hmap::Compression::#variant));
        }
        Some(e)
    });

    let field_infos = m.fields.iter().map(|f| {
        let name = f.ident.to_string();
        let (family, qualifier, role) = match &f.role {
            Role::Key(_) => (String::new(), String::new(), quote!(Key)),
            Role::Cell {
                family, column, parent, ..
            } => {
                let role = if *parent { quote!(Parent) } else { quote!(Cell) };
                (family.clone(), column.clone(), role)
            }
            Role::Dynamic {
                family, relation: true, ..
            } => (family.clone(), String::new(), quote!(Relation)),
            Role::Dynamic { family, .. } => (family.clone(), String::new(), quote!(Dynamic)),
            Role::Versions { family, column, .. } => (family.clone(), column.clone(), quote!(Versions)),
            Role::Version { family, column } => (family.clone(), column.clone(), quote!(Version)),
            Role::Counter { family, column } => (family.clone(), column.clone(), quote!(Counter)),
            Role::Skip => return None,
        };
        Some(quote! {
            __hmap::FieldInfo { name: #name, family: #family, qualifier: #qualifier, role: __hmap::FieldRole::#role }
        })
    });
    let field_infos: Vec<_> = field_infos.flatten().collect();
    let field_count = field_infos.len();

    let writes = m.fields.iter().filter_map(|f| {
        let id = f.ident;
        let name = id.to_string();
        let stmt = match &f.role {
            // The tree writes a node's parent pointer; a put of the entity
            // leaves it alone.
            Role::Cell { parent: true, .. } => return None,
            Role::Cell {
                family,
                column,
                codec: c,
                optional: Some(inner),
                keep_on_none,
                ..
            } => {
                let c = codec_at(*c, inner.span());
                quote_spanned!(inner.span()=> w.optional::<#c, #inner>(#family, #column, &self.#id, #keep_on_none)?;)
            }
            Role::Cell {
                family,
                column,
                codec: c,
                optional: None,
                ..
            } => {
                let (c, ty) = (codec_at(*c, f.ty.span()), f.ty);
                quote_spanned!(ty.span()=> w.cell::<#c, #ty>(#family, #column, &self.#id)?;)
            }
            // A relation helper writes a relation family; a put of the entity
            // leaves it alone.
            Role::Dynamic { relation: true, .. } => return None,
            Role::Dynamic {
                family,
                key_ty,
                value_ty,
                key_codec,
                value_codec,
                ..
            } => {
                let kc = codec_at(*key_codec, key_ty.span());
                let vc = codec_at(*value_codec, value_ty.span());
                quote!(w.dynamic::<#kc, #vc, #key_ty, #value_ty>(#family, &self.#id)?;)
            }
            Role::Versions {
                family,
                column,
                value_ty,
                codec: c,
            } => {
                let c = codec_at(*c, f.ty.span());
                quote!(w.versions::<#c, #value_ty>(#family, #column, &self.#id)?;)
            }
            Role::Key(_) | Role::Version { .. } | Role::Counter { .. } | Role::Skip => return None,
        };
        Some(quote!(if w.writes(#name) { #stmt }))
    });

    // The cell columns sorted as a stored row sorts them, so that the reader
    // finds them all in one pass; `slot_of[field]` is a field's position.
    let mut sorted: Vec<(String, String, usize)> = m
        .fields
        .iter()
        .enumerate()
        .filter_map(|(i, f)| match &f.role {
            Role::Cell { family, column, .. }
            | Role::Versions { family, column, .. }
            | Role::Version { family, column }
            | Role::Counter { family, column } => Some((family.clone(), column.clone(), i)),
            _ => None,
        })
        .collect();
    sorted.sort_by(|a, b| (a.0.as_bytes(), a.1.as_bytes()).cmp(&(b.0.as_bytes(), b.1.as_bytes())));
    let mut slot_of = vec![0usize; m.fields.len()];
    for (slot, (_, _, field)) in sorted.iter().enumerate() {
        slot_of[*field] = slot;
    }
    let column_count = sorted.len();
    let columns = sorted.iter().map(|(f, q, _)| quote!((#f, #q)));

    let reads = m.fields.iter().enumerate().map(|(index, f)| {
        let id = f.ident;
        let slot = slot_of[index];
        let value = match &f.role {
            Role::Key(_) => return quote!(#id),
            Role::Cell {
                family,
                column,
                codec: c,
                optional: Some(inner),
                ..
            } => {
                let c = codec_at(*c, inner.span());
                quote_spanned!(inner.span()=> r.optional_at::<#c, #inner>(__slots[#slot], #family, #column)?)
            }
            Role::Cell {
                family,
                column,
                codec: c,
                optional: None,
                ..
            } => {
                let (c, ty) = (codec_at(*c, f.ty.span()), f.ty);
                quote_spanned!(ty.span()=> r.cell_at::<#c, #ty>(__slots[#slot], #family, #column)?)
            }
            Role::Dynamic {
                family,
                key_ty,
                value_ty,
                key_codec,
                value_codec,
                ..
            } => {
                let kc = codec_at(*key_codec, key_ty.span());
                let vc = codec_at(*value_codec, value_ty.span());
                let ty = f.ty;
                quote!(r.dynamic::<#kc, #vc, #key_ty, #value_ty, #ty>(#family)?)
            }
            Role::Versions {
                family,
                column,
                value_ty,
                codec: c,
            } => {
                let c = codec_at(*c, f.ty.span());
                quote!(r.versions_at::<#c, #value_ty>(__slots[#slot], #family, #column)?)
            }
            Role::Version { family, column } => quote!(r.version_at(__slots[#slot], #family, #column)?),
            Role::Counter { family, column } => quote!(r.counter_at(__slots[#slot], #family, #column)?),
            Role::Skip => quote!(::core::default::Default::default()),
        };
        quote!(#id: #value)
    });

    let version = m
        .fields
        .iter()
        .find(|f| matches!(f.role, Role::Version { .. }))
        .map(|f| {
            let id = f.ident;
            quote! {
                fn version(&self) -> ::core::option::Option<u64> {
                    ::core::option::Option::Some(self.#id)
                }
                fn set_version(&mut self, version: u64) {
                    self.#id = version;
                }
            }
        });

    let assertions = assertions(m);
    let tree = tree_impl(m);
    let key_of = key_of_impl(m, &key_type);

    // A typed handle per field that `update` and `increment` take: a
    // misspelt field is a compile error, not a runtime one.
    let vis = &m.input.vis;
    let handles = m.fields.iter().filter_map(|f| {
        if matches!(f.role, Role::Key(_) | Role::Skip) {
            return None;
        }
        let name = f.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
        let konst = syn::Ident::new(&name.to_uppercase(), f.ident.span());
        let doc = format!(
            "The field `{name}`: a typed handle for `Table::update`, `Table::increment` and typed filters (`Where`)."
        );
        // The value type and codec a filter on the field encodes with.
        let ty = f.ty;
        let (value, codec) = match &f.role {
            Role::Cell { codec, optional, .. } => {
                let value = optional.unwrap_or(ty);
                (quote!(#value), codec_at(*codec, value.span()))
            }
            Role::Versions { value_ty, codec, .. } => (quote!(#value_ty), codec_at(*codec, value_ty.span())),
            Role::Counter { .. } => (quote!(i64), quote!(__hmap::Native)),
            _ => (quote!(#ty), quote!(__hmap::Native)),
        };
        Some(quote! {
            #[doc = #doc]
            #vis const #konst: __hmap::Field<#ident, #value, #codec> = __hmap::Field::new(#name);
        })
    });

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, clippy::all)]
        const _: () = {
            use #krate::__private as __hmap;

            #(#assertions)*

            static __HMAP_SEGMENTS: [__hmap::Segment; #segment_count] = [#(#segments),*];
            static __HMAP_KEY: __hmap::KeySchema = __hmap::KeySchema::from_static(#format, &__HMAP_SEGMENTS);
            static __HMAP_FIELDS: [__hmap::FieldInfo; #field_count] = [#(#field_infos),*];
            static __HMAP_COLUMNS: [(&str, &str); #column_count] = [#(#columns),*];

            #[automatically_derived]
            #[allow(dead_code)]
            impl #ident {
                #(#handles)*
            }

            #[automatically_derived]
            impl __hmap::HTable for #ident {
                type Key = #key_type;

                const TABLE: &'static str = #table;

                fn key_schema() -> &'static __hmap::KeySchema {
                    &__HMAP_KEY
                }

                fn families() -> __hmap::Vec<__hmap::FamilySchema> {
                    ::std::vec![#(#families),*]
                }

                fn fields() -> &'static [__hmap::FieldInfo] {
                    &__HMAP_FIELDS
                }

                fn encode_key(&self, out: &mut __hmap::Vec<u8>) -> ::core::result::Result<(), __hmap::KeyError> {
                    __HMAP_KEY.encode_into(&(#(&self.#key_idents,)*), out)
                }

                fn write_cells(&self, w: &mut __hmap::RowWriter<'_>) -> __hmap::Result<()> {
                    #(#writes)*
                    ::core::result::Result::Ok(())
                }

                fn read_row(key: Self::Key, r: &__hmap::RowReader<'_>) -> __hmap::Result<Self> {
                    #destructure
                    let __slots = r.locate(&__HMAP_COLUMNS);
                    ::core::result::Result::Ok(#ident { #(#reads),* })
                }

                #version
            }

            #tree

            #key_of
        };
    }
}

/// `KeyOf`: the values the table's calls that take a key accept, every
/// `KeyArg` of its key, through a trait of the table's own whose
/// `on_unimplemented` message names the table and its key's parts. A
/// message can name only a trait's parameters, so the parts are written
/// into it here; `do_not_recommend` keeps the compiler from looking below
/// it (at a part's `PartArg`, or at `FromKeyPart` of a key shape the table
/// does not have), so that a value that is not a key is one error, this
/// one. The trait is private to the `const _` block; its name shows only
/// in the error's `help:` line, so it says what it is.
fn key_of_impl(m: &Model<'_>, key_type: &TokenStream) -> TokenStream {
    let ident = &m.input.ident;
    let keys: Vec<_> = m.keys().collect();
    let name = |f: &crate::model::Field<'_>| {
        let name = f.ident.to_string();
        name.strip_prefix("r#").unwrap_or(&name).to_string()
    };
    let parts: Vec<String> = keys
        .iter()
        .map(|f| format!("{}: {}", name(f), type_text(f.ty)))
        .collect();
    let (whole, expected) = if let [only] = keys.as_slice() {
        (
            parts[0].clone(),
            format!("expected {}: `{}`", name(only), type_text(only.ty)),
        )
    } else {
        let names: Vec<String> = keys.iter().map(|f| name(f)).collect();
        let types: Vec<String> = keys.iter().map(|f| type_text(f.ty)).collect();
        (
            format!("({})", parts.join(", ")),
            format!("expected ({}): `({})`", names.join(", "), types.join(", ")),
        )
    };
    let table = ident.to_string();
    let table = table.strip_prefix("r#").unwrap_or(&table);
    // `{` and `}` would be read as the message's parameters.
    let escape = |s: &str| s.replace('{', "{{").replace('}', "}}");
    let message = format!(
        "`{{Self}}` is not a key of `{}`, whose key is {}",
        escape(table),
        escape(&whole)
    );
    let label = escape(&expected);
    let note = if parts.len() > 1 {
        "give every part of the key, in key order, as a tuple (or a reference to the key); \
         a `String` part also takes a `&str`, a `Vec<u8>` or `Bytes` part a `&[u8]`"
    } else {
        "a `String` key also takes a `&str`, a `Vec<u8>` or `Bytes` key a `&[u8]`"
    };
    let key_trait = quote::format_ident!("KeyOf{}", table);
    // The error shows the impl below (`KeyOf<Key>` is implemented for the
    // table), so its parameter has a plain name, unless that is the table's.
    let param = quote::format_ident!("{}", if table == "Key" { "K" } else { "Key" });
    // Spanned at the struct's name: an impl spanned at the derive draws
    // rustc's advice to implement the trait by hand "to avoid undesired
    // bounds", which is wrong here.
    let key_of = quote_spanned! {ident.span()=>
        #[automatically_derived]
        impl<#param: #key_trait> __hmap::KeyOf<#param> for #ident {
            fn encode_key_arg(key: &#param) -> ::core::result::Result<__hmap::Vec<u8>, __hmap::KeyError> {
                __HMAP_KEY.encode(key)
            }
        }
    };
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        trait #key_trait: __hmap::KeyArg<#key_type> {}

        #[diagnostic::do_not_recommend]
        impl<__HmapKeyArg: __hmap::KeyArg<#key_type>> #key_trait for __HmapKeyArg {}

        #key_of
    }
}

/// A type as a user writes it (`DateTime<Utc>`, `[u8; 16]`), for messages:
/// the tokens' text without the spaces `to_string` puts between them.
fn type_text(ty: &syn::Type) -> String {
    let mut text = quote!(#ty).to_string();
    for (spaced, tight) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        (" ;", ";"),
        ("& ", "&"),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
    ] {
        text = text.replace(spaced, tight);
    }
    text
}

/// `TreeMapped` for a tree node: where its parent pointer and child list
/// are, and how its id makes its key and its child-list qualifier. The
/// checks (`check::tree`) have made sure the parts are there.
fn tree_impl(m: &Model<'_>) -> Option<TokenStream> {
    let ident = &m.input.ident;
    let (parent_family, parent_column) = m.fields.iter().find_map(|f| match &f.role {
        Role::Cell {
            family,
            column,
            parent: true,
            ..
        } => Some((family, column)),
        _ => None,
    })?;
    let (children_family, key_ty, key_codec) = m.fields.iter().find_map(|f| match &f.role {
        Role::Dynamic {
            family,
            key_ty,
            key_codec,
            children: true,
            ..
        } => Some((family, *key_ty, *key_codec)),
        _ => None,
    })?;
    let keys: Vec<_> = m.keys().collect();
    let leveled = matches!(keys.first().map(|f| &f.role), Some(Role::Key(k)) if k.level);
    let id = keys.last()?;
    let id_ty = id.ty;
    let (node_key, node_id) = if leveled {
        (quote!((u8::from(!top), ::core::clone::Clone::clone(id))), quote!(key.1))
    } else {
        (
            quote!({
                let _ = top;
                ::core::clone::Clone::clone(id)
            }),
            quote!(key),
        )
    };
    let kc = codec_at(key_codec, key_ty.span());
    Some(quote! {
        #[automatically_derived]
        impl __hmap::TreeMapped for #ident {
            type Id = #id_ty;
            const PARENT: (&'static str, &'static str) = (#parent_family, #parent_column);
            const CHILDREN: &'static str = #children_family;
            const LEVELED: bool = #leveled;

            fn node_key(id: &Self::Id, top: bool) -> Self::Key {
                #node_key
            }

            fn node_id(key: Self::Key) -> Self::Id {
                #node_id
            }

            fn id_qualifier(id: &Self::Id) -> ::core::result::Result<__hmap::Bytes, __hmap::ValueError> {
                <#kc as __hmap::Codec<#key_ty>>::encode(id)
            }

            fn qualifier_id(qualifier: &[u8]) -> ::core::result::Result<Self::Id, __hmap::ValueError> {
                <#kc as __hmap::Codec<#key_ty>>::decode(qualifier)
            }
        }
    })
}

/// The key's segments: the salt first (so that scans can fan out over the
/// buckets), then a literal prefix, a hash prefix, and the parts.
fn segments(m: &Model<'_>) -> Vec<TokenStream> {
    let mut out = Vec::new();
    if let Some(salt) = &m.attrs.salt {
        let buckets = salt
            .buckets
            .as_ref()
            .map_or(1, |b| b.base10_parse::<u16>().unwrap_or(1));
        let by: Vec<usize> = salt.by.iter().filter_map(|n| m.key_index(n)).collect();
        out.push(quote! {
            __hmap::Segment::Salt { buckets: #buckets, by: __hmap::Cow::Borrowed(&[#(#by),*]) }
        });
    }
    if let Some(prefix) = &m.attrs.key_prefix {
        let bytes = LitByteStr::new(prefix.value().as_bytes(), prefix.span());
        out.push(quote!(__hmap::Segment::Literal(__hmap::Cow::Borrowed(#bytes))));
    }
    if let Some(hash) = &m.attrs.hash_prefix {
        let len = hash.len.as_ref().map_or(1, |l| l.base10_parse::<u8>().unwrap_or(1));
        let of = hash.of.as_ref().and_then(|n| m.key_index(n)).unwrap_or(0);
        out.push(quote!(__hmap::Segment::HashPrefix { len: #len, of: #of }));
    }
    for f in m.keys() {
        let Role::Key(k) = &f.role else { continue };
        let name = LitStr::new(&f.ident.to_string(), f.ident.span());
        let ty = f.ty;
        let kind = quote_spanned!(ty.span()=> <#ty as __hmap::KeyPart>::KIND);
        let mut spec = quote!(__hmap::PartSpec::new(#name, #kind));
        if k.desc {
            spec = quote!(#spec.desc());
        }
        if k.reverse_ts {
            spec = quote!(#spec.reverse_ts());
        }
        if k.reversed {
            spec = quote!(#spec.reversed());
        }
        if let Some(w) = k.width {
            spec = quote!(#spec.width(__hmap::Width::Fixed(#w)));
        } else if k.level && m.attrs.text_key.is_some() {
            // A tree's level is one digit in a text key: `0_001`, `1_002`.
            spec = quote!(#spec.width(__hmap::Width::Fixed(1)));
        }
        if k.unpadded {
            spec = quote!(#spec.width(__hmap::Width::Variable));
        }
        out.push(quote!(__hmap::Segment::Part(#spec)));
    }
    out
}

/// `const` assertions that key fields are key parts and native cells have
/// a default encoding, each reported at the field's type.
fn assertions(m: &Model<'_>) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for f in &m.fields {
        match &f.role {
            Role::Key(_) => {
                let ty = f.ty;
                out.push(quote_spanned!(ty.span()=> const _: () = __hmap::assert_key_part::<#ty>();));
            }
            Role::Cell {
                codec: Codec::Native,
                optional,
                ..
            } => {
                let ty = optional.unwrap_or(f.ty);
                out.push(quote_spanned!(ty.span()=> const _: () = __hmap::assert_cell_value::<#ty>();));
            }
            Role::Versions {
                codec: Codec::Native,
                value_ty,
                ..
            } => {
                let ty = *value_ty;
                out.push(quote_spanned!(ty.span()=> const _: () = __hmap::assert_cell_value::<#ty>();));
            }
            Role::Dynamic {
                key_ty,
                value_ty,
                key_codec,
                value_codec,
                ..
            } => {
                if *key_codec == Codec::Native {
                    let k = *key_ty;
                    out.push(quote_spanned!(k.span()=> const _: () = __hmap::assert_cell_value::<#k>();));
                }
                if *value_codec == Codec::Native {
                    let v = *value_ty;
                    out.push(quote_spanned!(v.span()=> const _: () = __hmap::assert_cell_value::<#v>();));
                }
            }
            _ => {}
        }
    }
    out
}
