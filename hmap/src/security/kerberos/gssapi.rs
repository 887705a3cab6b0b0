//! MIT Kerberos' GSSAPI (`libgssapi_krb5`) through hmap's own declarations
//! ([`sys`], checked against MIT's headers by `scripts/gssapi-check`): the
//! few calls hmap's Kerberos makes, each behind a type that releases what
//! the library allocated (a name, credentials, a security context, a
//! buffer) when it is dropped. Only the Kerberos 5 mechanism.
//!
//! The crate's only `unsafe` code is here (see lib.rs): each call's
//! pointers point to values that live through the call, the library's
//! outputs are owned by exactly one value of this module, and every
//! `unsafe` block says why it is sound.

// FFI to MIT Kerberos, and nothing else: lib.rs denies unsafe code, and
// this module alone allows it.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_int, c_void};
use std::fmt;
use std::ptr;
use std::sync::{Arc, Once, PoisonError, RwLock};
use std::time::Duration;

pub(super) mod sys;

use sys::{GSS_C_INDEFINITE, GSS_C_INITIATE, GSS_S_COMPLETE, GSS_S_CONTINUE_NEEDED, OM_uint32};

/// Held shared by every call into the library, and for good by the process's
/// exit.
///
/// MIT Kerberos destroys its mutexes in its library destructor, which
/// `exit` runs while other threads may still be inside the library: a
/// tokio worker releasing a connection's security context just as `main`
/// returns, say. That call then aborts the process (`k5_mutex_lock:
/// Assertion 'r == 0' failed`) after the program's work is done, and its
/// exit status is lost. So every call here holds this lock shared (see
/// [`library`]), and an `atexit` handler takes it exclusively and never
/// lets go: `exit` first waits for the calls under way, and a call begun
/// after that waits for the process to end. The handler is registered with
/// the first call, after the dynamic loader's own handler, which runs the
/// libraries' destructors: `atexit` handlers run in the reverse order of
/// their registration, so this one runs first.
static LIBRARY: RwLock<()> = RwLock::new(());

/// Runs `call`, one call into the library, holding [`LIBRARY`] shared.
/// Held only around the call itself: a thread that took the lock shared
/// again while an exit waits for it would wait for ever.
fn library<R>(call: impl FnOnce() -> R) -> R {
    static CLOSE_AT_EXIT: Once = Once::new();
    CLOSE_AT_EXIT.call_once(|| {
        // SAFETY: `close_library` has C's calling convention, takes nothing
        // and returns nothing, as `atexit` wants, and is a plain function
        // that lives as long as the process. If the registration fails
        // (no memory), the process exits as it did before it was made.
        let _ = unsafe { atexit(close_library) };
    });
    let _entered = LIBRARY.read().unwrap_or_else(PoisonError::into_inner);
    call()
}

/// `exit`'s handler: waits for the calls into the library under way, then
/// keeps every later one out until the process has ended.
extern "C" fn close_library() {
    std::mem::forget(LIBRARY.write().unwrap_or_else(PoisonError::into_inner));
}

unsafe extern "C" {
    /// The C library's `atexit` (stdlib.h).
    fn atexit(handler: extern "C" fn()) -> c_int;
}

/// A failed GSSAPI call: its major status (a routine error, a calling
/// error, supplementary bits) and the mechanism's minor status (one of
/// MIT Kerberos' error codes).
#[derive(Clone, Copy, Debug)]
pub(super) struct GssError {
    pub(super) major: OM_uint32,
    pub(super) minor: OM_uint32,
}

impl GssError {
    /// The routine error of the major status: a number in bits 16 to 23
    /// (RFC 2744), not a set of flags (`GSS_S_FAILURE`, 13, shares bits
    /// with `GSS_S_NO_CRED`, 7).
    pub(super) fn routine_error(&self) -> OM_uint32 {
        self.major & (sys::GSS_C_ROUTINE_ERROR_MASK << sys::GSS_C_ROUTINE_ERROR_OFFSET)
    }
}

/// C's `GSS_ERROR(major)`: a calling or routine error, not supplementary
/// information alone.
fn is_error(major: OM_uint32) -> bool {
    major
        & ((sys::GSS_C_CALLING_ERROR_MASK << sys::GSS_C_CALLING_ERROR_OFFSET)
            | (sys::GSS_C_ROUTINE_ERROR_MASK << sys::GSS_C_ROUTINE_ERROR_OFFSET))
        != 0
}

/// MIT Kerberos' own words for the major status, then each of its words
/// for the minor one in parentheses (as the `libgssapi` crate wrote them,
/// which hmap used before: the errors' text is unchanged).
impl fmt::Display for GssError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_status(f, self.major, sys::GSS_C_GSS_CODE)?;
        display_status(f, self.minor, sys::GSS_C_MECH_CODE)
    }
}

impl std::error::Error for GssError {}

/// Writes `gss_display_status`'s messages for `code` (`kind`: a major or
/// a minor status), one call a message.
fn display_status(f: &mut fmt::Formatter<'_>, code: OM_uint32, kind: c_int) -> fmt::Result {
    let mut message_context = 0;
    loop {
        let mut minor = 0;
        let mut text = Buffer::empty();
        // SAFETY: the pointers are to locals that live through the call;
        // `text` receives a buffer it then owns; a null mechanism is
        // allowed (the default one).
        let major = library(|| unsafe {
            sys::gss_display_status(
                &mut minor,
                code,
                kind,
                ptr::null_mut(),
                &mut message_context,
                text.as_out(),
            )
        });
        if major != GSS_S_COMPLETE && major != GSS_S_CONTINUE_NEEDED {
            let which = if kind == sys::GSS_C_GSS_CODE { "Major" } else { "Minor" };
            return writeln!(f, "unknown GSSAPI({which}) error code({code})");
        }
        let text = String::from_utf8_lossy(text.bytes());
        if kind == sys::GSS_C_GSS_CODE {
            f.write_str(&text)?;
        } else {
            write!(f, " ({text})")?;
        }
        if message_context == 0 {
            return Ok(());
        }
    }
}

/// `Ok` for `GSS_S_COMPLETE`, else the error.
fn complete(major: OM_uint32, minor: OM_uint32) -> Result<(), GssError> {
    match major {
        GSS_S_COMPLETE => Ok(()),
        _ => Err(GssError { major, minor }),
    }
}

/// A buffer the library filled (a token, a message, a status text),
/// released on drop.
struct Buffer(sys::gss_buffer_desc);

impl Buffer {
    fn empty() -> Buffer {
        Buffer(sys::gss_buffer_desc {
            length: 0,
            value: ptr::null_mut(),
        })
    }

    /// Where a call writes the buffer it allocates.
    fn as_out(&mut self) -> sys::gss_buffer_t {
        &mut self.0
    }

    fn bytes(&self) -> &[u8] {
        if self.0.value.is_null() || self.0.length == 0 {
            return &[];
        }
        // SAFETY: the library set `value` to `length` bytes of its own,
        // which stay until the buffer is released (on drop, after this
        // borrow of `self` ends).
        unsafe { std::slice::from_raw_parts(self.0.value.cast::<u8>(), self.0.length) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if !self.0.value.is_null() {
            let mut minor = 0;
            // SAFETY: the library allocated the buffer; it is released
            // once, here.
            library(|| unsafe { sys::gss_release_buffer(&mut minor, &mut self.0) });
        }
    }
}

/// A buffer descriptor for `bytes`, for an input of a call: GSSAPI reads
/// its inputs and never writes them (the `*mut` is C's, not a licence to
/// write), and copies what it keeps.
fn input(bytes: &[u8]) -> sys::gss_buffer_desc {
    sys::gss_buffer_desc {
        length: bytes.len(),
        value: bytes.as_ptr().cast_mut().cast::<c_void>(),
    }
}

/// The set of one mechanism, Kerberos 5 (the library's own OID).
fn krb5_mechs() -> sys::gss_OID_set_desc {
    sys::gss_OID_set_desc {
        count: 1,
        elements: sys::gss_mech_krb5,
    }
}

/// A Kerberos principal name, released on drop.
pub(super) struct Name(sys::gss_name_t);

// SAFETY: a name is not changed after its import, and MIT Kerberos lets
// a name be used and released on any thread.
unsafe impl Send for Name {}

impl Name {
    /// `principal` (`hbase/host@REALM`, the realm optional) as a Kerberos
    /// principal name (`GSS_KRB5_NT_PRINCIPAL_NAME`).
    pub(super) fn principal(principal: &[u8]) -> Result<Name, GssError> {
        let mut buffer = input(principal);
        let mut minor = 0;
        let mut name = Name(ptr::null_mut());
        // SAFETY: `buffer` points to `principal`, which outlives the call
        // (the library copies it); the name type is the library's own
        // static OID; the new name is written into `name`, which owns it.
        let major = library(|| unsafe {
            sys::gss_import_name(&mut minor, &mut buffer, sys::GSS_KRB5_NT_PRINCIPAL_NAME, &mut name.0)
        });
        complete(major, minor)?;
        Ok(name)
    }
}

impl Drop for Name {
    fn drop(&mut self) {
        if !self.0.is_null() {
            let mut minor = 0;
            // SAFETY: the name came from gss_import_name and is released
            // once, here.
            library(|| unsafe { sys::gss_release_name(&mut minor, &mut self.0) });
        }
    }
}

/// Initiator credentials for Kerberos 5; clones share them, and the last
/// one releases them.
#[derive(Clone)]
pub(super) struct Cred(Arc<CredHandle>);

impl fmt::Debug for Cred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cred").finish_non_exhaustive()
    }
}

struct CredHandle(sys::gss_cred_id_t);

// SAFETY: MIT Kerberos locks a credential inside every call that uses it
// (its krb5_gss_cred_id_rec has a mutex), so one credential may be used by
// several threads at once (concurrent handshakes) and released on any.
unsafe impl Send for CredHandle {}
// SAFETY: as for Send.
unsafe impl Sync for CredHandle {}

impl Drop for CredHandle {
    fn drop(&mut self) {
        if !self.0.is_null() {
            let mut minor = 0;
            // SAFETY: the credential came from gss_acquire_cred(_from) and
            // is released once, here, when its last `Cred` is gone.
            library(|| unsafe { sys::gss_release_cred(&mut minor, &mut self.0) });
        }
    }
}

impl Cred {
    /// The default credentials (`gss_acquire_cred`): the default ticket
    /// cache, `KRB5CCNAME`.
    pub(super) fn acquire_default() -> Result<Cred, GssError> {
        let mut mechs = krb5_mechs();
        let mut minor = 0;
        let mut cred = CredHandle(ptr::null_mut());
        // SAFETY: `mechs` is a local that lives through the call and names
        // the library's own OID, which it only reads; the new credential
        // is written into `cred`, which owns it; the outputs not wanted
        // are null, which GSSAPI allows (as it does the default name).
        let major = library(|| unsafe {
            sys::gss_acquire_cred(
                &mut minor,
                ptr::null_mut(),
                GSS_C_INDEFINITE,
                &mut mechs,
                GSS_C_INITIATE,
                &mut cred.0,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        });
        complete(major, minor)?;
        Ok(Cred(Arc::new(cred)))
    }

    /// Credentials of `name` (or the store's default principal) from the
    /// credential store `store` (`gss_acquire_cred_from`, MIT's
    /// extension): `client_keytab`, `ccache`, ... and their values.
    pub(super) fn acquire_from(name: Option<&Name>, store: &[(&CStr, &CStr)]) -> Result<Cred, GssError> {
        let mut elements: Vec<sys::gss_key_value_element_desc> = store
            .iter()
            .map(|(key, value)| sys::gss_key_value_element_desc {
                key: key.as_ptr(),
                value: value.as_ptr(),
            })
            .collect();
        let store = sys::gss_key_value_set_desc {
            count: elements.len() as OM_uint32,
            elements: elements.as_mut_ptr(),
        };
        let mut mechs = krb5_mechs();
        let mut minor = 0;
        let mut cred = CredHandle(ptr::null_mut());
        // SAFETY: `store` and `elements` are locals, and the strings they
        // point to are borrowed, for the whole call; the library reads
        // them (and `mechs`, and the name, which `name` keeps alive) and
        // copies what it keeps; the new credential is written into `cred`,
        // which owns it; the outputs not wanted are null, which GSSAPI
        // allows.
        let major = library(|| unsafe {
            sys::gss_acquire_cred_from(
                &mut minor,
                name.map_or(ptr::null_mut(), |name| name.0),
                GSS_C_INDEFINITE,
                &mut mechs,
                GSS_C_INITIATE,
                &store,
                &mut cred.0,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        });
        complete(major, minor)?;
        Ok(Cred(Arc::new(cred)))
    }

    /// How long the credentials have left (`gss_inquire_cred`): the
    /// ticket-granting ticket's, once there is one.
    pub(super) fn lifetime(&self) -> Result<Duration, GssError> {
        let mut minor = 0;
        let mut lifetime = 0;
        // SAFETY: the credential is live (`self` holds it); only the
        // lifetime is asked for, into a local, the other outputs null,
        // which GSSAPI allows.
        let major = library(|| unsafe {
            sys::gss_inquire_cred(
                &mut minor,
                self.0.0,
                ptr::null_mut(),
                &mut lifetime,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        });
        if is_error(major) {
            return Err(GssError { major, minor });
        }
        Ok(Duration::from_secs(lifetime.into()))
    }
}

/// The client's side of a Kerberos 5 security context with one server
/// (`gss_init_sec_context` step by step, then `gss_wrap` and `gss_unwrap`),
/// deleted on drop.
pub(super) struct ClientCtx {
    /// Null until the first step makes it.
    ctx: sys::gss_ctx_id_t,
    cred: Cred,
    target: Name,
    flags: OM_uint32,
    state: State,
}

#[derive(Clone, Copy)]
enum State {
    /// Steps to go.
    Open,
    Complete,
    /// A step failed: the context can go no further.
    Failed(GssError),
}

// SAFETY: every call on the context takes `&mut self`, so one thread at a
// time uses it (the connection's security layer keeps it in a Mutex), and
// MIT Kerberos lets a context move between threads; its credential and
// name are Send.
unsafe impl Send for ClientCtx {}

impl ClientCtx {
    /// A context with `cred` towards `target`, asking for `flags`
    /// (`GSS_C_MUTUAL_FLAG`, ...); [`step`](Self::step) establishes it.
    pub(super) fn new(cred: Cred, target: Name, flags: OM_uint32) -> ClientCtx {
        ClientCtx {
            ctx: ptr::null_mut(),
            cred,
            target,
            flags,
            state: State::Open,
        }
    }

    /// One step of the context's establishment, with the server's last
    /// token (`None` for the first step): the token to send the server,
    /// empty when there is none. Once complete, steps give nothing; once
    /// failed, the same error.
    pub(super) fn step(&mut self, token: Option<&[u8]>) -> Result<Vec<u8>, GssError> {
        match self.state {
            State::Open => {}
            State::Complete => return Ok(Vec::new()),
            State::Failed(e) => return Err(e),
        }
        let mut token = token.map(input);
        let token_buffer = token
            .as_mut()
            .map_or(ptr::null_mut(), |buffer| buffer as sys::gss_buffer_t);
        let mut output = Buffer::empty();
        let mut minor = 0;
        // SAFETY: the credential and the target name are live (`self`
        // holds them); `self.ctx` is this context's own handle (null
        // before the first step: the library makes one, which drop
        // deletes); the mechanism is the library's own static OID;
        // `token_buffer` points to the server's token, which outlives the
        // call and which the library only reads (or is null: no token yet); `output` receives a buffer
        // it then owns; no channel bindings, and the outputs not wanted
        // are null, which GSSAPI allows.
        let major = library(|| unsafe {
            sys::gss_init_sec_context(
                &mut minor,
                self.cred.0.0,
                &mut self.ctx,
                self.target.0,
                sys::gss_mech_krb5,
                self.flags,
                GSS_C_INDEFINITE,
                ptr::null_mut(),
                token_buffer,
                ptr::null_mut(),
                output.as_out(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        });
        if is_error(major) {
            let e = GssError { major, minor };
            self.state = State::Failed(e);
            return Err(e);
        }
        if major & GSS_S_CONTINUE_NEEDED == 0 {
            self.state = State::Complete;
        }
        Ok(output.bytes().to_vec())
    }

    /// Whether the context is established.
    pub(super) fn is_complete(&self) -> bool {
        matches!(self.state, State::Complete)
    }

    /// `message` signed, and encrypted if `encrypt` (`gss_wrap`, the
    /// default quality of protection).
    pub(super) fn wrap(&mut self, encrypt: bool, message: &[u8]) -> Result<Vec<u8>, GssError> {
        let mut message = input(message);
        let mut output = Buffer::empty();
        let mut minor = 0;
        // SAFETY: the context handle is this context's own (a null one, not
        // yet made, is refused by the library with GSS_S_NO_CONTEXT);
        // `message` describes the caller's bytes, which outlive the call
        // and which the library only reads; `output` receives a buffer it
        // then owns; a null conf_state is allowed.
        let major = library(|| unsafe {
            sys::gss_wrap(
                &mut minor,
                self.ctx,
                c_int::from(encrypt),
                sys::GSS_C_QOP_DEFAULT,
                &mut message,
                ptr::null_mut(),
                output.as_out(),
            )
        });
        complete(major, minor)?;
        Ok(output.bytes().to_vec())
    }

    /// A message the server wrapped, checked (and decrypted) by
    /// `gss_unwrap`.
    pub(super) fn unwrap(&mut self, message: &[u8]) -> Result<Vec<u8>, GssError> {
        let mut message = input(message);
        let mut output = Buffer::empty();
        let mut minor = 0;
        // SAFETY: as in `wrap`; a null conf_state and qop_state are allowed.
        let major = library(|| unsafe {
            sys::gss_unwrap(
                &mut minor,
                self.ctx,
                &mut message,
                output.as_out(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        });
        complete(major, minor)?;
        Ok(output.bytes().to_vec())
    }
}

impl Drop for ClientCtx {
    fn drop(&mut self) {
        if !self.ctx.is_null() {
            let mut minor = 0;
            // SAFETY: the handle came from gss_init_sec_context and is
            // deleted once, here; no output token is asked for.
            library(|| unsafe { sys::gss_delete_sec_context(&mut minor, &mut self.ctx, ptr::null_mut()) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_in_mit_kerberos_words() {
        let e = |major| GssError { major, minor: 0 }.to_string();
        assert!(
            e(sys::GSS_S_BAD_NAME).starts_with("An invalid name was supplied"),
            "{}",
            e(sys::GSS_S_BAD_NAME)
        );
        // Each message of a status, one after the other (as libgssapi wrote them).
        let failure_continued = e(sys::GSS_S_FAILURE | GSS_S_CONTINUE_NEEDED);
        assert!(
            failure_continued.starts_with(
                "Unspecified GSS failure.  Minor code may provide more informationThe routine must be called again \
                 to complete its function"
            ),
            "{failure_continued}"
        );
        assert_eq!(
            GssError {
                major: sys::GSS_S_FAILURE,
                minor: 0
            }
            .routine_error(),
            sys::GSS_S_FAILURE
        );
        assert!(is_error(sys::GSS_S_NO_CRED | GSS_S_CONTINUE_NEEDED));
        assert!(!is_error(GSS_S_CONTINUE_NEEDED));
    }

    /// The child of [`an_exit_while_other_threads_call_the_library_is_clean`]:
    /// threads import and release names without pause while the process
    /// exits under them.
    const EXIT_CHILD: &str = "HMAP_GSSAPI_EXIT_CHILD";

    #[test]
    fn an_exit_while_other_threads_call_the_library_is_clean() {
        if std::env::var_os(EXIT_CHILD).is_some() {
            for _ in 0..2 {
                std::thread::spawn(|| {
                    loop {
                        drop(Name::principal(b"hbase/localhost@HMAP.TEST"));
                    }
                });
            }
            std::thread::sleep(Duration::from_millis(30));
            std::process::exit(0);
        }
        // Before `close_library`, about one exit in ten aborted in
        // k5_mutex_lock (see LIBRARY).
        for run in 0..40 {
            let child = std::process::Command::new(std::env::current_exe().expect("this test's binary"))
                .args([
                    "security::kerberos::gssapi::tests::an_exit_while_other_threads_call_the_library_is_clean",
                    "--exact",
                    "--test-threads=1",
                ])
                .env(EXIT_CHILD, "1")
                .output()
                .expect("the child runs");
            assert!(
                child.status.success(),
                "run {run}: the child exited with {:?}: {}",
                child.status,
                String::from_utf8_lossy(&child.stderr)
            );
        }
    }

    #[test]
    fn a_principal_name_is_imported_and_released() {
        let name = Name::principal(b"hbase/localhost@HMAP.TEST").expect("a principal name");
        assert!(!name.0.is_null());
    }
}
