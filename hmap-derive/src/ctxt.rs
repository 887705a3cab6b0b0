//! Collects every error found, so that a user sees all mistakes at once.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// An error pointing at `tokens`.
    pub fn error_at<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.errors.borrow_mut().push(syn::Error::new_spanned(tokens, message));
    }

    /// A syn error as it is.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// All errors combined into one, or `Ok` if there were none.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            first.combine(e);
        }
        Err(first)
    }
}
