//! Error-reporting contexts and the guard every exported function runs in.
//!
//! Each call's body returns an [`AbiResult`]; [`guard`] turns it into the
//! result code, records the message on the caller's context (or clears it on
//! success), and catches any panic so that nothing unwinds into C: a panic
//! becomes `HEGEL_E_INTERNAL` with its message.

use crate::abi::{hegel_result_t, hegel_string_t};
use crate::error::{AbiError, AbiResult};
use crate::handles::{Reusable, Slots};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Opaque to C: `hegel_context_t`.
pub enum hegel_context_t {}

/// A context: the message of the last failed call made with it.
///
/// Every call names one, so contexts live in place in a [`Slots`] table:
/// finding one is a bounds check and an atomic load (a freed or foreign
/// handle is not found), and the call's success costs one more load (the
/// message is cleared only when there is one).
pub struct Context {
    /// The message, NUL-terminated (just the NUL when empty).
    message: Mutex<Vec<u8>>,
    /// Whether the message is non-empty (so success clears it cheaply).
    holds_message: AtomicBool,
}

/// The kind tag of context handles.
const CONTEXT_KIND: u8 = 1;

/// Every context ever made.
static CONTEXTS: Slots<Context> = Slots::new();

impl Default for Context {
    fn default() -> Context {
        Context {
            message: Mutex::new(vec![0]),
            holds_message: AtomicBool::new(false),
        }
    }
}

impl Reusable for Context {
    fn reset(&self) {
        let mut message = self.message.lock().unwrap_or_else(|e| e.into_inner());
        *message = vec![0];
        self.holds_message.store(false, Ordering::Relaxed);
    }
}

/// The live context behind a handle.
#[inline(always)]
fn context(ctx: *const hegel_context_t) -> Option<&'static Context> {
    CONTEXTS.get(ctx as usize, CONTEXT_KIND)
}

/// The error of a context handle not found.
#[cold]
fn invalid_context(ctx: *const hegel_context_t) -> AbiError {
    AbiError::InvalidHandle(format!(
        "the context handle {:#x} was freed or never existed",
        ctx as usize
    ))
}

impl Context {
    /// Records a call's outcome on the context `ctx` (this one, found
    /// before the call): its message, or none after a success.
    #[inline(always)]
    fn record(&self, ctx: *const hegel_context_t, outcome: &AbiResult) {
        match outcome {
            Ok(()) if !self.holds_message.load(Ordering::Relaxed) => {}
            _ => self.record_change(ctx, outcome),
        }
    }

    /// [`Context::record`] when the message changes. Nothing is recorded
    /// when `ctx` was freed during the call: its slot may hold a new
    /// context by now, whose message is not this call's.
    #[cold]
    #[inline(never)]
    fn record_change(&self, ctx: *const hegel_context_t, outcome: &AbiResult) {
        let text = match outcome {
            Ok(()) => vec![0],
            Err(error) => {
                let mut text = error.to_string().into_bytes();
                text.retain(|b| *b != 0);
                text.push(0);
                text
            }
        };
        let mut message = self.message.lock().unwrap_or_else(|e| e.into_inner());
        // Under the lock a reuse's reset takes (see `Slots::is_live`).
        if CONTEXTS.is_live(ctx as usize, CONTEXT_KIND) {
            *message = text;
            self.holds_message
                .store(outcome.is_err(), Ordering::Relaxed);
        }
    }
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs the body of an exported function: checks the context, catches
/// panics, records the outcome on the context and returns its code. Inlined
/// into each exported function: it is most of what a call costs beyond its
/// own work.
#[inline(always)]
pub fn guard(ctx: *const hegel_context_t, body: impl FnOnce() -> AbiResult) -> hegel_result_t {
    let context = if ctx.is_null() {
        None
    } else {
        let Some(context) = context(ctx) else {
            return invalid_context(ctx).code();
        };
        Some(context)
    };
    // The outcome is recorded and turned into its code inside the
    // `catch_unwind`: what comes out is the code alone.
    match catch_unwind(AssertUnwindSafe(
        #[inline(always)]
        || finish(context, ctx, body()),
    )) {
        Ok(code) => code,
        Err(payload) => panicked(context, ctx, payload),
    }
}

/// Records a call's outcome on its context (if any) and returns its code.
#[inline(always)]
fn finish(
    context: Option<&Context>,
    ctx: *const hegel_context_t,
    outcome: AbiResult,
) -> hegel_result_t {
    if let Some(context) = context {
        context.record(ctx, &outcome);
    }
    match outcome {
        Ok(()) => hegel_result_t::HEGEL_OK,
        Err(error) => error.code(),
    }
}

/// [`guard`] when the body panicked: an internal error with its message.
#[cold]
#[inline(never)]
fn panicked(
    context: Option<&Context>,
    ctx: *const hegel_context_t,
    payload: Box<dyn std::any::Any + Send>,
) -> hegel_result_t {
    let outcome = Err(AbiError::Internal(panic_message(payload.as_ref())));
    drop(payload);
    finish(context, ctx, outcome)
}

/// Writes `value` through an out-parameter, which must not be NULL.
pub fn write<T>(out: *mut T, value: T, what: &str) -> AbiResult {
    if out.is_null() {
        return Err(AbiError::arg(format!("{what} is NULL")));
    }
    // SAFETY: non-null; pointing at writable memory is the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Checks that an out-parameter is not NULL before any work is done.
pub fn require<T>(out: *const T, what: &str) -> AbiResult {
    if out.is_null() {
        Err(AbiError::arg(format!("{what} is NULL")))
    } else {
        Ok(())
    }
}

/// Returns a new error-reporting context. Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_context_new() -> *mut hegel_context_t {
    match catch_unwind(|| CONTEXTS.insert(CONTEXT_KIND, |_| ())) {
        Ok(Some(handle)) => handle as *mut hegel_context_t,
        // The table is full (millions of live contexts): there is no way to
        // report it but a NULL, which every call accepts as "no context".
        _ => std::ptr::null_mut(),
    }
}

/// Frees a context; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_context_free(ctx: *mut hegel_context_t) -> hegel_result_t {
    if ctx.is_null() {
        return hegel_result_t::HEGEL_OK;
    }
    match catch_unwind(|| CONTEXTS.free(ctx as usize, CONTEXT_KIND)) {
        Ok(true) => hegel_result_t::HEGEL_OK,
        Ok(false) => invalid_context(ctx).code(),
        Err(_) => hegel_result_t::HEGEL_E_INTERNAL,
    }
}

/// The message of the last failed call on `ctx` (empty after a success, or
/// for a NULL or unknown context). Valid until the next call on `ctx`.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_context_last_error(ctx: *const hegel_context_t) -> hegel_string_t {
    static EMPTY: &[u8] = b"\0";
    let empty = hegel_string_t {
        data: EMPTY.as_ptr().cast(),
        len: 0,
    };
    if ctx.is_null() {
        return empty;
    }
    let Some(context) = context(ctx) else {
        return empty;
    };
    let message = context.message.lock().unwrap_or_else(|e| e.into_inner());
    // Freed since it was found: the slot may hold another context's message.
    if !CONTEXTS.is_live(ctx as usize, CONTEXT_KIND) {
        return empty;
    }
    // The buffer lives in the context until the next call replaces it, which
    // is exactly how long the header lets the caller read it.
    hegel_string_t {
        data: message.as_ptr().cast(),
        len: message.len().saturating_sub(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message `ctx` holds.
    fn last_error(ctx: *const hegel_context_t) -> String {
        let message = hegel_context_last_error(ctx);
        // SAFETY: valid until the next call on `ctx`, and read before it.
        let bytes = unsafe { std::slice::from_raw_parts(message.data.cast::<u8>(), message.len) };
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// A call whose context another thread frees, and whose slot a new
    /// context takes, while the call runs (here: from inside the call).
    /// Returns the new context, or `None` when it got another slot (tests
    /// on other threads make contexts too).
    fn call_spanning_reuse(outcome: AbiResult) -> Option<*mut hegel_context_t> {
        let ctx = hegel_context_new();
        let mut new = std::ptr::null_mut();
        guard(ctx, || {
            assert_eq!(hegel_context_free(ctx), hegel_result_t::HEGEL_OK);
            new = hegel_context_new();
            // The new context's own failed call leaves its message.
            guard(new, || Err(AbiError::arg("the new context's own error")));
            outcome
        });
        if new as usize & 0xFF_FFFF == ctx as usize & 0xFF_FFFF {
            Some(new)
        } else {
            hegel_context_free(new);
            None
        }
    }

    #[test]
    fn a_call_on_a_context_freed_and_reused_meanwhile_leaves_the_new_context_alone() {
        let mut reused = 0;
        for round in 0..200 {
            let outcome = if round % 2 == 0 {
                Ok(())
            } else {
                Err(AbiError::arg("the freed context's call failed"))
            };
            let Some(new) = call_spanning_reuse(outcome) else {
                continue;
            };
            reused += 1;
            assert!(
                last_error(new).contains("the new context's own error"),
                "round {round}: the new context holds {:?}",
                last_error(new)
            );
            assert_eq!(hegel_context_free(new), hegel_result_t::HEGEL_OK);
        }
        assert!(reused >= 2, "the slot was reused in {reused} of 200 rounds");
    }

    #[test]
    fn a_panicking_call_returns_an_internal_error_with_its_message() {
        let ctx = hegel_context_new();
        let code = guard(ctx, || panic!("a panic inside a call"));
        assert_eq!(code, hegel_result_t::HEGEL_E_INTERNAL);
        assert!(last_error(ctx).contains("a panic inside a call"));
        // A success clears the message; a failure sets its own.
        assert_eq!(guard(ctx, || Ok(())), hegel_result_t::HEGEL_OK);
        assert_eq!(last_error(ctx), "");
        assert_eq!(
            guard(ctx, || Err(AbiError::arg("a bad argument"))),
            AbiError::arg("").code()
        );
        assert!(last_error(ctx).contains("a bad argument"));
        // With no context too, and with a freed one.
        assert_eq!(
            guard(std::ptr::null(), || panic!("no context")),
            hegel_result_t::HEGEL_E_INTERNAL
        );
        assert_eq!(hegel_context_free(ctx), hegel_result_t::HEGEL_OK);
        assert_eq!(
            guard(ctx, || panic!("a freed context: not run")),
            hegel_result_t::HEGEL_E_INVALID_HANDLE
        );
    }

    #[test]
    fn a_freed_context_has_no_message_to_read() {
        let ctx = hegel_context_new();
        guard(ctx, || Err(AbiError::arg("a message")));
        assert!(last_error(ctx).contains("a message"));
        assert_eq!(hegel_context_free(ctx), hegel_result_t::HEGEL_OK);
        assert_eq!(last_error(ctx), "");
    }
}
