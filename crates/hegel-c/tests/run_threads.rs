//! A run advanced from a new thread at every test case: the ABI's handles
//! may be used from any thread, one at a time, so the engine's pull-style
//! run (a coroutine, resumed by `hegel_next_test_case`) resumes on
//! whichever thread asks. Under ThreadSanitizer
//! (`scripts/sanitize-hegel-c.sh tsan`) this is the coroutine crossing
//! threads; without it, a check that the run is the same as on one thread.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::hegel_context_free;
use hegel_c::generate::hegel_generate_integer;
use hegel_c::run::{
    hegel_next_test_case, hegel_run_free, hegel_run_result, hegel_run_result_free, hegel_run_start,
};
use hegel_c::test_case::*;
use std::ptr;

/// A handle that crosses to another thread (used by one at a time).
struct Sendable<T>(*mut T);
impl<T> Clone for Sendable<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Sendable<T> {}
// SAFETY: each handle is used by one thread at a time: the thread that
// gets it runs to its end and is joined before the next one starts.
unsafe impl<T> Send for Sendable<T> {}

/// Whether the pair drawn fails (the second above the first plus 500).
fn fails(a: i64, b: i64) -> bool {
    b > a + 500
}

/// One test case: two integers, a failure when [`fails`].
fn body(tc: *mut hegel_test_case_t) -> (Outcome, String) {
    let ctx = context();
    let (mut a, mut b) = (0, 0);
    let drawn = hegel_generate_integer(ctx, tc, 0, 1000, &mut a) == hegel_result_t::HEGEL_OK
        && hegel_generate_integer(ctx, tc, 0, 1000, &mut b) == hegel_result_t::HEGEL_OK;
    ok(hegel_context_free(ctx));
    if !drawn {
        (Outcome::Invalid, String::new())
    } else if fails(a, b) {
        (Outcome::Failed("fails".into()), format!("{a},{b}"))
    } else {
        (Outcome::Valid, format!("{a},{b}"))
    }
}

/// The run of `body` with each test case fetched, run and completed on a
/// thread of its own: (test cases, the failing pair it reports last).
fn run_on_fresh_threads(seed: u64) -> (usize, Option<String>) {
    let ctx = context();
    let s = settings(ctx, 100, seed);
    let mut run = ptr::null_mut();
    ok(hegel_run_start(ctx, s, None, ptr::null_mut(), &mut run));
    let run = Sendable(run);
    let (mut test_cases, mut captured) = (0, None);
    loop {
        let step = std::thread::spawn(move || {
            let run = run;
            let ctx = context();
            let mut tc = ptr::null_mut();
            ok(hegel_next_test_case(ctx, run.0, &mut tc));
            if tc.is_null() {
                ok(hegel_context_free(ctx));
                return None;
            }
            let mut stamped = false;
            ok(hegel_test_case_should_capture(ctx, tc, &mut stamped));
            let (outcome, shown) = body(tc);
            let status = match outcome {
                Outcome::Failed(_) => hegel_status_t::HEGEL_STATUS_INTERESTING,
                Outcome::Invalid => hegel_status_t::HEGEL_STATUS_INVALID,
                _ => hegel_status_t::HEGEL_STATUS_VALID,
            };
            let origin = view("fails");
            ok(hegel_mark_complete(
                ctx,
                tc,
                status as u32,
                if status == hegel_status_t::HEGEL_STATUS_INTERESTING {
                    &origin
                } else {
                    ptr::null()
                },
            ));
            ok(hegel_test_case_free(ctx, tc));
            ok(hegel_context_free(ctx));
            Some(stamped.then_some(shown))
        });
        match step.join().expect("the test case's thread") {
            None => break,
            Some(shown) => {
                test_cases += 1;
                if shown.is_some() {
                    captured = shown;
                }
            }
        }
    }
    let mut result = ptr::null_mut();
    ok(hegel_run_result(ctx, run.0, &mut result));
    ok(hegel_run_result_free(ctx, result));
    ok(hegel_run_free(ctx, run.0));
    ok(hegel_context_free(ctx));
    (test_cases, captured)
}

#[test]
fn a_run_advanced_from_a_new_thread_each_test_case_runs_as_on_one_thread() {
    for seed in [3, 11] {
        let (test_cases, captured) = run_on_fresh_threads(seed);
        let ctx = context();
        let report = run(ctx, settings(ctx, 100, seed), body);
        ok(hegel_context_free(ctx));
        assert_eq!(test_cases, report.test_cases, "seed {seed}");
        assert_eq!(captured, report.captured, "seed {seed}");
        assert_eq!(captured.as_deref(), Some("0,501"), "shrunk, seed {seed}");
    }
}
