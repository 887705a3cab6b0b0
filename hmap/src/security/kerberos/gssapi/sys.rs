//! MIT Kerberos' GSSAPI as C declares it (`<gssapi/gssapi.h>`,
//! `<gssapi/gssapi_ext.h>`, `<gssapi/gssapi_krb5.h>`, and a few of
//! `<krb5.h>`'s error codes), written by hand: only what hmap calls. The
//! names are C's, so that each one can be looked up in the headers.
//!
//! `check.c` beside this file restates every declaration here for a C
//! compiler, which checks it against MIT's headers (`scripts/gssapi-check`:
//! each function assigned to a pointer of the type declared here, each
//! type, constant, struct size and field offset asserted); the test below
//! checks, without the headers, that `check.c` restates exactly what this
//! file declares. Change both together.
//!
//! Layouts are those of an LP64 target (64-bit Linux), the only kind
//! `check.c` asserts.

// C's names, kept so that they can be checked against the headers.
#![allow(non_camel_case_types, non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_void};

pub type OM_uint32 = u32;
pub type gss_qop_t = OM_uint32;
pub type gss_cred_usage_t = c_int;

/// Opaque to C's callers too (`struct gss_name_struct`).
#[repr(C)]
pub struct gss_name_struct {
    _opaque: [u8; 0],
}
pub type gss_name_t = *mut gss_name_struct;

/// Opaque to C's callers too (`struct gss_cred_id_struct`).
#[repr(C)]
pub struct gss_cred_id_struct {
    _opaque: [u8; 0],
}
pub type gss_cred_id_t = *mut gss_cred_id_struct;

/// Opaque to C's callers too (`struct gss_ctx_id_struct`).
#[repr(C)]
pub struct gss_ctx_id_struct {
    _opaque: [u8; 0],
}
pub type gss_ctx_id_t = *mut gss_ctx_id_struct;

/// Channel bindings, which hmap never passes (only null): opaque here.
#[repr(C)]
pub struct gss_channel_bindings_struct {
    _opaque: [u8; 0],
}
pub type gss_channel_bindings_t = *mut gss_channel_bindings_struct;

#[repr(C)]
pub struct gss_buffer_desc {
    pub length: usize,
    pub value: *mut c_void,
}
pub type gss_buffer_t = *mut gss_buffer_desc;

#[repr(C)]
pub struct gss_OID_desc {
    pub length: OM_uint32,
    pub elements: *mut c_void,
}
pub type gss_OID = *mut gss_OID_desc;

#[repr(C)]
pub struct gss_OID_set_desc {
    pub count: usize,
    pub elements: gss_OID,
}
pub type gss_OID_set = *mut gss_OID_set_desc;

/// One entry of a credential store (`gss_acquire_cred_from`), such as
/// `client_keytab` or `ccache`.
#[repr(C)]
pub struct gss_key_value_element_desc {
    pub key: *const c_char,
    pub value: *const c_char,
}

#[repr(C)]
pub struct gss_key_value_set_desc {
    pub count: OM_uint32,
    pub elements: *mut gss_key_value_element_desc,
}
pub type gss_const_key_value_set_t = *const gss_key_value_set_desc;

pub const GSS_S_COMPLETE: OM_uint32 = 0;
/// A supplementary bit: the context needs another token.
pub const GSS_S_CONTINUE_NEEDED: OM_uint32 = 1;
pub const GSS_C_CALLING_ERROR_OFFSET: OM_uint32 = 24;
pub const GSS_C_ROUTINE_ERROR_OFFSET: OM_uint32 = 16;
pub const GSS_C_CALLING_ERROR_MASK: OM_uint32 = 0o377;
pub const GSS_C_ROUTINE_ERROR_MASK: OM_uint32 = 0o377;
// Routine errors: numbers in bits 16 to 23 of a major status.
pub const GSS_S_BAD_NAME: OM_uint32 = 2 << GSS_C_ROUTINE_ERROR_OFFSET;
pub const GSS_S_NO_CRED: OM_uint32 = 7 << GSS_C_ROUTINE_ERROR_OFFSET;
pub const GSS_S_CREDENTIALS_EXPIRED: OM_uint32 = 11 << GSS_C_ROUTINE_ERROR_OFFSET;
#[cfg(test)] // Only the tests make errors of it.
pub const GSS_S_FAILURE: OM_uint32 = 13 << GSS_C_ROUTINE_ERROR_OFFSET;

pub const GSS_C_MUTUAL_FLAG: OM_uint32 = 2;
pub const GSS_C_CONF_FLAG: OM_uint32 = 16;
pub const GSS_C_INTEG_FLAG: OM_uint32 = 32;
pub const GSS_C_INITIATE: gss_cred_usage_t = 1;
pub const GSS_C_GSS_CODE: c_int = 1;
pub const GSS_C_MECH_CODE: c_int = 2;
pub const GSS_C_QOP_DEFAULT: gss_qop_t = 0;
pub const GSS_C_INDEFINITE: OM_uint32 = 0xffff_ffff;

// MIT Kerberos' error codes (`<krb5.h>`, the com_err table krb5), the
// minor statuses hmap tells apart.
pub const KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN: i32 = -1765328378;
pub const KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN: i32 = -1765328377;
pub const KRB5KDC_ERR_PREAUTH_FAILED: i32 = -1765328360;
pub const KRB5KRB_AP_ERR_BAD_INTEGRITY: i32 = -1765328353;
pub const KRB5KRB_AP_ERR_TKT_EXPIRED: i32 = -1765328352;
pub const KRB5_CONFIG_CANTOPEN: i32 = -1765328249;
pub const KRB5_CC_NOTFOUND: i32 = -1765328243;
pub const KRB5_REALM_UNKNOWN: i32 = -1765328230;
pub const KRB5_KDC_UNREACH: i32 = -1765328228;
pub const KRB5_KT_NOTFOUND: i32 = -1765328203;
pub const KRB5_FCC_NOFILE: i32 = -1765328189;
pub const KRB5_CONFIG_NODEFREALM: i32 = -1765328160;

// MIT Kerberos (libkrb5-dev's libgssapi_krb5.so at build time,
// libgssapi-krb5-2's libgssapi_krb5.so.2 at run time), linked as the
// `libgssapi-sys` crate linked it before; see kerberos.rs for why not dlopen.
#[link(name = "gssapi_krb5")]
unsafe extern "C" {
    /// The Kerberos 5 mechanism, `1.2.840.113554.1.2.2` (the library's
    /// own constant; it is never written).
    pub safe static gss_mech_krb5: gss_OID;
    /// The name type of a Kerberos principal, `1.2.840.113554.1.2.2.1`.
    pub safe static GSS_KRB5_NT_PRINCIPAL_NAME: gss_OID;

    pub fn gss_import_name(
        minor_status: *mut OM_uint32,
        input_name_buffer: gss_buffer_t,
        input_name_type: gss_OID,
        output_name: *mut gss_name_t,
    ) -> OM_uint32;

    pub fn gss_release_name(minor_status: *mut OM_uint32, input_name: *mut gss_name_t) -> OM_uint32;

    pub fn gss_acquire_cred(
        minor_status: *mut OM_uint32,
        desired_name: gss_name_t,
        time_req: OM_uint32,
        desired_mechs: gss_OID_set,
        cred_usage: gss_cred_usage_t,
        output_cred_handle: *mut gss_cred_id_t,
        actual_mechs: *mut gss_OID_set,
        time_rec: *mut OM_uint32,
    ) -> OM_uint32;

    /// MIT's credential store extension (`<gssapi/gssapi_ext.h>`).
    pub fn gss_acquire_cred_from(
        minor_status: *mut OM_uint32,
        desired_name: gss_name_t,
        time_req: OM_uint32,
        desired_mechs: gss_OID_set,
        cred_usage: gss_cred_usage_t,
        cred_store: gss_const_key_value_set_t,
        output_cred_handle: *mut gss_cred_id_t,
        actual_mechs: *mut gss_OID_set,
        time_rec: *mut OM_uint32,
    ) -> OM_uint32;

    pub fn gss_inquire_cred(
        minor_status: *mut OM_uint32,
        cred_handle: gss_cred_id_t,
        name: *mut gss_name_t,
        lifetime: *mut OM_uint32,
        cred_usage: *mut gss_cred_usage_t,
        mechanisms: *mut gss_OID_set,
    ) -> OM_uint32;

    pub fn gss_release_cred(minor_status: *mut OM_uint32, cred_handle: *mut gss_cred_id_t) -> OM_uint32;

    pub fn gss_init_sec_context(
        minor_status: *mut OM_uint32,
        claimant_cred_handle: gss_cred_id_t,
        context_handle: *mut gss_ctx_id_t,
        target_name: gss_name_t,
        mech_type: gss_OID,
        req_flags: OM_uint32,
        time_req: OM_uint32,
        input_chan_bindings: gss_channel_bindings_t,
        input_token: gss_buffer_t,
        actual_mech_type: *mut gss_OID,
        output_token: gss_buffer_t,
        ret_flags: *mut OM_uint32,
        time_rec: *mut OM_uint32,
    ) -> OM_uint32;

    pub fn gss_delete_sec_context(
        minor_status: *mut OM_uint32,
        context_handle: *mut gss_ctx_id_t,
        output_token: gss_buffer_t,
    ) -> OM_uint32;

    pub fn gss_wrap(
        minor_status: *mut OM_uint32,
        context_handle: gss_ctx_id_t,
        conf_req_flag: c_int,
        qop_req: gss_qop_t,
        input_message_buffer: gss_buffer_t,
        conf_state: *mut c_int,
        output_message_buffer: gss_buffer_t,
    ) -> OM_uint32;

    pub fn gss_unwrap(
        minor_status: *mut OM_uint32,
        context_handle: gss_ctx_id_t,
        input_message_buffer: gss_buffer_t,
        output_message_buffer: gss_buffer_t,
        conf_state: *mut c_int,
        qop_state: *mut gss_qop_t,
    ) -> OM_uint32;

    pub fn gss_display_status(
        minor_status: *mut OM_uint32,
        status_value: OM_uint32,
        status_type: c_int,
        mech_type: gss_OID,
        message_context: *mut OM_uint32,
        status_string: gss_buffer_t,
    ) -> OM_uint32;

    pub fn gss_release_buffer(minor_status: *mut OM_uint32, buffer: gss_buffer_t) -> OM_uint32;
}

/// `check.c` states exactly what this file declares: the same functions
/// with the same parameter types, statics, type aliases, constants with
/// the same values, structs with the same sizes, offsets and field types,
/// each Rust type spelt as C spells it. (That C spells them as MIT's
/// headers do is `scripts/gssapi-check`'s part.)
#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const RUST: &str = include_str!("sys.rs");
    const C: &str = include_str!("check.c");

    /// Whitespace collapsed.
    fn norm(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// A Rust type of this file as C spells it.
    fn c_type(rust: &str) -> String {
        let rust = rust.trim();
        if let Some(pointee) = rust.strip_prefix("*mut ") {
            return format!("{} *", c_type(pointee));
        }
        if let Some(pointee) = rust.strip_prefix("*const ") {
            return format!("const {} *", c_type(pointee));
        }
        match rust {
            "u32" => "uint32_t".to_string(),
            "usize" => "size_t".to_string(),
            "c_int" => "int".to_string(),
            "c_char" => "char".to_string(),
            "c_void" => "void".to_string(),
            tag if tag.ends_with("_struct") => format!("struct {tag}"),
            name => name.to_string(),
        }
    }

    /// The arguments of every `name(...)` that starts a line of check.c
    /// (not the `#define`s), split at their top-level commas.
    fn c_checks(name: &str) -> Vec<Vec<String>> {
        let open = format!("\n{name}(");
        let mut found = Vec::new();
        let mut rest = C;
        while let Some(at) = rest.find(&open) {
            rest = &rest[at + open.len()..];
            let (mut depth, mut args, mut arg) = (0, Vec::new(), String::new());
            for (i, ch) in rest.char_indices() {
                match ch {
                    ')' if depth == 0 => {
                        args.push(norm(&arg));
                        rest = &rest[i..];
                        break;
                    }
                    ',' if depth == 0 => args.push(norm(&std::mem::take(&mut arg))),
                    '(' | ')' => {
                        depth += if ch == '(' { 1 } else { -1 };
                        arg.push(ch);
                    }
                    _ => arg.push(ch),
                }
            }
            found.push(args);
        }
        assert!(!found.is_empty(), "no {name} in check.c");
        found
    }

    /// `(name, rest)` of every line of this file that starts (after its
    /// indentation) with `prefix`.
    fn rust_lines<'a>(prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        RUST.lines().filter_map(move |line| {
            let rest = line.trim_start().strip_prefix(prefix)?;
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            Some((&rest[..end], &rest[end..]))
        })
    }

    /// The same names on both sides, each described the same.
    fn same<V: PartialEq + std::fmt::Debug>(what: &str, rust: &BTreeMap<String, V>, c: &BTreeMap<String, V>) {
        let unchecked: Vec<&String> = rust.keys().filter(|name| !c.contains_key(*name)).collect();
        let undeclared: Vec<&String> = c.keys().filter(|name| !rust.contains_key(*name)).collect();
        assert!(
            unchecked.is_empty() && undeclared.is_empty(),
            "{what}: sys.rs declares {unchecked:?}, which check.c does not check; check.c checks {undeclared:?}, \
             which sys.rs does not declare"
        );
        for (name, described) in rust {
            assert_eq!(
                described, &c[name],
                "{what} {name}: sys.rs (left) and check.c (right) differ"
            );
        }
    }

    fn pairs(checks: Vec<Vec<String>>) -> BTreeMap<String, String> {
        checks
            .into_iter()
            .map(|args| (args[0].clone(), args[1].clone()))
            .collect()
    }

    #[test]
    fn check_c_restates_every_function() {
        let mut rust = BTreeMap::new();
        for (name, rest) in rust_lines("pub fn ") {
            // `pub fn name(params) -> ret;`, over one line or many.
            let start = RUST.find(&format!("pub fn {name}(")).expect("declared") + "pub fn (".len() + name.len();
            let end = start + RUST[start..].find(')').expect("a parameter list");
            let params: Vec<String> = RUST[start..end]
                .split(',')
                .map(str::trim)
                .filter(|param| !param.is_empty())
                .map(|param| c_type(param.split_once(':').expect("name: type").1))
                .collect();
            let returns = RUST[end..].split_once("->").expect("a return type").1;
            let returns = c_type(returns.split_once(';').expect("`;`").0);
            assert!(rest.starts_with('('), "{name}");
            rust.insert(name.to_string(), format!("{returns} ({})", params.join(", ")));
        }
        let c: BTreeMap<String, String> = c_checks("CHECK_FN")
            .into_iter()
            .map(|args| (args[0].clone(), format!("{} {}", args[1], args[2])))
            .collect();
        same("function", &rust, &c);
        assert_eq!(rust.len(), 12);
    }

    #[test]
    fn check_c_restates_every_static_and_type() {
        let statics: BTreeMap<String, String> = rust_lines("pub safe static ")
            .map(|(name, rest)| {
                let ty = rest.trim_start_matches(':').trim_end_matches(';');
                (name.to_string(), format!("const {}", c_type(ty)))
            })
            .collect();
        same("static", &statics, &pairs(c_checks("CHECK_STATIC")));
        let types: BTreeMap<String, String> = rust_lines("pub type ")
            .map(|(name, rest)| {
                let ty = rest.trim_start_matches(" =").trim_end_matches(';');
                (name.to_string(), c_type(ty))
            })
            .collect();
        same("type", &types, &pairs(c_checks("CHECK_TYPE")));
    }

    #[test]
    fn check_c_restates_every_constant_and_its_value() {
        macro_rules! values {
            ($($name:ident),* $(,)?) => {
                [$((stringify!($name).to_string(), i64::from($name))),*].into_iter().collect::<BTreeMap<_, _>>()
            };
        }
        let values = values![
            GSS_S_COMPLETE,
            GSS_S_CONTINUE_NEEDED,
            GSS_C_CALLING_ERROR_OFFSET,
            GSS_C_ROUTINE_ERROR_OFFSET,
            GSS_C_CALLING_ERROR_MASK,
            GSS_C_ROUTINE_ERROR_MASK,
            GSS_S_BAD_NAME,
            GSS_S_NO_CRED,
            GSS_S_CREDENTIALS_EXPIRED,
            GSS_S_FAILURE,
            GSS_C_MUTUAL_FLAG,
            GSS_C_CONF_FLAG,
            GSS_C_INTEG_FLAG,
            GSS_C_INITIATE,
            GSS_C_GSS_CODE,
            GSS_C_MECH_CODE,
            GSS_C_QOP_DEFAULT,
            GSS_C_INDEFINITE,
            KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN,
            KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN,
            KRB5KDC_ERR_PREAUTH_FAILED,
            KRB5KRB_AP_ERR_BAD_INTEGRITY,
            KRB5KRB_AP_ERR_TKT_EXPIRED,
            KRB5_CONFIG_CANTOPEN,
            KRB5_CC_NOTFOUND,
            KRB5_REALM_UNKNOWN,
            KRB5_KDC_UNREACH,
            KRB5_KT_NOTFOUND,
            KRB5_FCC_NOFILE,
            KRB5_CONFIG_NODEFREALM,
        ];
        let mut declared: Vec<String> = rust_lines("pub const ").map(|(name, _)| name.to_string()).collect();
        declared.sort();
        assert_eq!(
            declared,
            values.keys().cloned().collect::<Vec<_>>(),
            "every constant in the table"
        );
        let c: BTreeMap<String, i64> = pairs(c_checks("CHECK_CONST"))
            .into_iter()
            .map(|(name, value)| {
                let value = value
                    .parse()
                    .unwrap_or_else(|_| panic!("{name}'s value {value} is no number"));
                (name, value)
            })
            .collect();
        same("constant", &values, &c);
    }

    #[test]
    fn check_c_restates_every_struct_layout() {
        macro_rules! layouts {
            ($($ty:ident { $($field:ident),* }),* $(,)?) => {
                [$((
                    stringify!($ty).to_string(),
                    (
                        std::mem::size_of::<$ty>(),
                        vec![$((stringify!($field).to_string(), std::mem::offset_of!($ty, $field))),*],
                    ),
                )),*]
                .into_iter()
                .collect::<BTreeMap<_, _>>()
            };
        }
        let layouts = layouts![
            gss_buffer_desc { length, value },
            gss_OID_desc { length, elements },
            gss_OID_set_desc { count, elements },
            gss_key_value_element_desc { key, value },
            gss_key_value_set_desc { count, elements },
        ];
        // The fields of each struct this file declares, their types in C;
        // opaque ones (no public field) are C's incomplete `struct *_struct`.
        let mut fields: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        let mut lines = RUST.lines();
        while let Some(line) = lines.next() {
            let Some(name) = line.strip_prefix("pub struct ") else {
                continue;
            };
            let name = name.trim_end_matches(" {").to_string();
            let mut declared = Vec::new();
            for line in lines.by_ref().take_while(|line| *line != "}") {
                if let Some((field, ty)) = line.trim().strip_prefix("pub ").and_then(|f| f.split_once(':')) {
                    declared.push((field.to_string(), c_type(ty.trim_end_matches(','))));
                }
            }
            if declared.is_empty() {
                assert!(name.ends_with("_struct"), "{name} is opaque");
            } else {
                fields.insert(name, declared);
            }
        }
        assert_eq!(fields.keys().collect::<Vec<_>>(), layouts.keys().collect::<Vec<_>>());
        let sizes: BTreeMap<String, usize> = pairs(c_checks("CHECK_SIZE"))
            .into_iter()
            .map(|(name, size)| (name, size.parse().expect("a size")))
            .collect();
        let mut c_fields: BTreeMap<String, Vec<(String, usize, String)>> = BTreeMap::new();
        for args in c_checks("CHECK_FIELD") {
            let offset = args[2].parse().expect("an offset");
            c_fields
                .entry(args[0].clone())
                .or_default()
                .push((args[1].clone(), offset, args[3].clone()));
        }
        let mut rust_fields = BTreeMap::new();
        let mut rust_sizes = BTreeMap::new();
        for (name, (size, offsets)) in &layouts {
            rust_sizes.insert(name.clone(), *size);
            let described: Vec<(String, usize, String)> = fields[name]
                .iter()
                .zip(offsets)
                .map(|((field, ty), (named, offset))| {
                    assert_eq!(field, named, "{name}'s fields in order");
                    (field.clone(), *offset, ty.clone())
                })
                .collect();
            assert_eq!(described.len(), fields[name].len(), "{name}: every field in the table");
            rust_fields.insert(name.clone(), described);
        }
        same("size of", &rust_sizes, &sizes);
        same("fields of", &rust_fields, &c_fields);
    }
}
