//! `libhegel_c.so` on geist's engine: the C ABI of libhegel (hegeltest-c
//! 0.49.0, declared in `include/hegel.h`) implemented over `geist-engine`, so
//! that every Hegel frontend that loads libhegel at run time — hegeltest
//! 0.51 with `HEGEL_C_LIB_DIR` — runs on geist instead, unchanged.
//!
//! The ABI is pull-style: the caller starts a run, asks for each test case,
//! draws from it, and marks it complete. [`run`] drives the engine's own run
//! loop that way ([`geist_engine::pull`]); [`test_case`] holds a test case's
//! family of handles; the draws live in [`generate`], [`strings`],
//! [`collection`] and [`stateful`]; [`printer`] lays out the documents that
//! failure reports are printed from.
//!
//! Every exported function runs in [`context::guard`]: no panic unwinds into
//! C, and a NULL, freed or foreign handle ([`handles`]), a bad argument or a
//! call out of turn returns the ABI's error code with a message on the
//! caller's context.

// C names (hegel_string_t, hegel_run_t ...) are the ABI's.
#![allow(non_camel_case_types)]
// The exported functions take C pointers by design: C callers have no
// `unsafe`, and each function's documentation in hegel.h states what its
// pointers must be (NULL is checked everywhere the header allows it).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod abi;
pub mod collection;
pub mod context;
pub mod error;
pub mod generate;
pub mod grammar;
pub mod handles;
pub mod printer;
pub mod profiles;
pub mod run;
pub mod settings;
pub mod stateful;
pub mod statistics;
pub mod strings;
pub mod test_case;
pub mod text;

use abi::{hegel_result_t, hegel_string_t};
use context::{guard, hegel_context_t, write};
use std::sync::OnceLock;

/// The version of the ABI implemented (hegeltest-c's version).
pub const ABI_VERSION: &str = "0.49.0";

/// The version `hegel_version` reports: [`ABI_VERSION`], or
/// `GEIST_HEGEL_ABI_VERSION` to serve a frontend that pins another.
pub fn reported_version() -> &'static text::LentText {
    static VERSION: OnceLock<text::LentText> = OnceLock::new();
    VERSION.get_or_init(|| {
        let version = std::env::var("GEIST_HEGEL_ABI_VERSION")
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| ABI_VERSION.to_string());
        text::LentText::new(version)
    })
}

/// The ABI version this library implements.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_version(
    ctx: *mut hegel_context_t,
    out_version: *mut hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        write(out_version, reported_version().view(), "out_version")
    })
}
