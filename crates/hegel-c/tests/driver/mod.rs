//! Drives runs through the exported C functions, as a frontend does.

#![allow(dead_code)]

use hegel_c::abi::*;
use hegel_c::context::{hegel_context_new, hegel_context_t};
use hegel_c::run::*;
use hegel_c::settings::*;
use hegel_c::stateful::{hegel_new_state_machine, hegel_state_machine_t};
use hegel_c::test_case::*;
use std::ptr;

/// A string view of `s`.
pub fn view(s: &str) -> hegel_string_t {
    hegel_string_t {
        data: s.as_ptr().cast(),
        len: s.len(),
    }
}

/// The text of a view.
pub fn text(s: hegel_string_t) -> String {
    // SAFETY: views handed out by the library are valid while read here.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(s.data.cast::<u8>(), s.len) })
        .into_owned()
}

/// Asserts a call succeeded.
pub fn ok(rc: hegel_result_t) {
    assert_eq!(rc, hegel_result_t::HEGEL_OK);
}

/// A state machine made on `tc`: the rules `names` in `groups`, equal
/// weights, one worker, at most 10 steps; asserts it was made.
pub fn plain_machine(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    names: &[hegel_string_t],
    groups: &[i64],
) -> *mut hegel_state_machine_t {
    let mut machine = ptr::null_mut();
    let mut concurrency = 0i64;
    ok(hegel_new_state_machine(
        ctx,
        tc,
        names.as_ptr(),
        groups.as_ptr(),
        ptr::null(),
        names.len(),
        ptr::null(),
        ptr::null(),
        0,
        1,
        1,
        10,
        &mut machine,
        &mut concurrency,
    ));
    machine
}

/// A fresh context.
pub fn context() -> *mut hegel_context_t {
    hegel_context_new()
}

/// Settings for a test: `n` test cases, a seed, no database.
pub fn settings(ctx: *mut hegel_context_t, n: u64, seed: u64) -> *mut hegel_settings_t {
    let mut s = ptr::null_mut();
    ok(hegel_settings_new_for_profile(ctx, view("base"), &mut s));
    ok(hegel_settings_set_test_cases(ctx, s, n));
    ok(hegel_settings_set_seed(ctx, s, seed, true));
    ok(hegel_settings_set_database(ctx, s, &view("")));
    s
}

/// How a test body ended.
pub enum Outcome {
    Valid,
    Invalid,
    Overrun,
    Failed(String),
}

/// What a run reported, with what the last stamped test case returned.
pub struct Report {
    pub status: hegel_run_status_t,
    /// The failures' origins.
    pub failures: Vec<String>,
    /// The failures' caveats.
    pub caveats: Vec<Option<String>>,
    /// The failures' reproduce blobs.
    pub blobs: Vec<Option<String>>,
    pub captured: Option<String>,
    pub error: Option<String>,
    pub error_kind: hegel_run_error_kind_t,
    pub test_cases: usize,
    /// How many of the test cases were stamped for capture.
    pub stamped: usize,
}

/// The text of an optional view (NULL: `None`).
fn optional_text(view: *const hegel_string_t) -> Option<String> {
    // SAFETY: a non-NULL view handed out by the library is valid while read here.
    (!view.is_null()).then(|| text(unsafe { *view }))
}

/// Runs `body` under `settings`; `body` returns its outcome and a value
/// worth reporting (kept from stamped test cases).
pub fn run(
    ctx: *mut hegel_context_t,
    settings: *mut hegel_settings_t,
    mut body: impl FnMut(*mut hegel_test_case_t) -> (Outcome, String),
) -> Report {
    let mut run = ptr::null_mut();
    ok(hegel_run_start(
        ctx,
        settings,
        None,
        ptr::null_mut(),
        &mut run,
    ));
    let mut captured = None;
    let mut test_cases = 0;
    let mut stamped_cases = 0;
    loop {
        let mut tc = ptr::null_mut();
        ok(hegel_next_test_case(ctx, run, &mut tc));
        if tc.is_null() {
            break;
        }
        test_cases += 1;
        let mut stamped = false;
        ok(hegel_test_case_should_capture(ctx, tc, &mut stamped));
        let (outcome, value) = body(tc);
        if stamped {
            captured = Some(value);
            stamped_cases += 1;
        }
        let (status, origin) = match outcome {
            Outcome::Valid => (hegel_status_t::HEGEL_STATUS_VALID, None),
            Outcome::Invalid => (hegel_status_t::HEGEL_STATUS_INVALID, None),
            Outcome::Overrun => (hegel_status_t::HEGEL_STATUS_OVERRUN, None),
            Outcome::Failed(origin) => (hegel_status_t::HEGEL_STATUS_INTERESTING, Some(origin)),
        };
        let origin_view = origin.as_deref().map(view);
        ok(hegel_mark_complete(
            ctx,
            tc,
            status as u32,
            origin_view.as_ref().map_or(ptr::null(), |v| v as *const _),
        ));
        ok(hegel_test_case_free(ctx, tc));
    }
    let mut result = ptr::null_mut();
    ok(hegel_run_result(ctx, run, &mut result));
    let mut status = hegel_run_status_t::HEGEL_RUN_STATUS_PASSED;
    ok(hegel_run_result_status(ctx, result, &mut status));
    let mut count = 0;
    ok(hegel_run_result_failure_count(ctx, result, &mut count));
    let mut failures = Vec::new();
    let mut caveats = Vec::new();
    let mut blobs = Vec::new();
    for i in 0..count {
        let mut f = ptr::null_mut();
        ok(hegel_run_result_failure(ctx, result, i, &mut f));
        let mut origin = view("");
        ok(hegel_failure_origin(ctx, f, &mut origin));
        failures.push(text(origin));
        let mut caveat = ptr::null();
        ok(hegel_failure_caveat(ctx, f, &mut caveat));
        caveats.push(optional_text(caveat));
        let mut blob = ptr::null();
        ok(hegel_failure_reproduction_blob(ctx, f, &mut blob));
        blobs.push(optional_text(blob));
        ok(hegel_failure_free(ctx, f));
    }
    let mut error = ptr::null();
    ok(hegel_run_result_error(ctx, result, &mut error));
    let error = optional_text(error);
    let mut error_kind = hegel_run_error_kind_t::HEGEL_RUN_ERROR_NONE;
    ok(hegel_run_result_error_kind(
        ctx,
        result,
        &mut error_kind,
        ptr::null_mut(),
    ));
    ok(hegel_run_result_free(ctx, result));
    ok(hegel_run_free(ctx, run));
    Report {
        status,
        failures,
        caveats,
        blobs,
        captured,
        error,
        error_kind,
        test_cases,
        stamped: stamped_cases,
    }
}

/// Maps a draw's result code to the body's outcome when it did not succeed.
pub fn stopped(rc: hegel_result_t) -> Option<Outcome> {
    match rc {
        hegel_result_t::HEGEL_OK => None,
        hegel_result_t::HEGEL_E_STOP_TEST => Some(Outcome::Overrun),
        hegel_result_t::HEGEL_E_ASSUME => Some(Outcome::Invalid),
        other => panic!("unexpected result {other:?}"),
    }
}
