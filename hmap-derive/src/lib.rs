//! The `#[derive(HTable)]` macro of hmap (the package `hmap-hbase`, whose
//! library is `hmap`; the `hmap` on crates.io is another crate).
//!
//! Depend on `hmap-hbase`, which re-exports the derive as `hmap::HTable`; its
//! documentation is the reference for every attribute.
//!
//! The macro works in three stages: `attr` parses the `#[hmap(...)]`
//! attributes, `model` builds a checked model of the struct (keeping the
//! syntax nodes, for error spans) and `check` applies the rules that span
//! fields, and `expand` writes the code. Every mistake found is reported at
//! once.

mod attr;
mod check;
mod ctxt;
mod expand;
mod model;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Maps a struct to an HBase table. See `hmap::HTable` for the attributes.
#[proc_macro_derive(HTable, attributes(hmap))]
pub fn derive_htable(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
