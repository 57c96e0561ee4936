//! Clones of a test case draw from independent streams
//! (`hegel_test_case_clone`): what a thread draws through its clone depends
//! on its own calls only, so a run replays the same whatever the threads'
//! timing, and its failures shrink and reproduce.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::{hegel_context_free, hegel_context_t};
use hegel_c::generate::hegel_generate_integer;
use hegel_c::test_case::*;
use std::ptr;
use std::time::Duration;

/// A test case handle that crosses to another thread: the ABI's handles
/// may be used from any thread, one at a time.
struct Sendable(*mut hegel_test_case_t);
// SAFETY: see above; each handle is used by one thread at a time here.
unsafe impl Send for Sendable {}

/// Draws an integer in `0..=1000` through `tc`, on a context of this thread's.
fn small_int(tc: *mut hegel_test_case_t) -> Result<i64, Outcome> {
    let ctx = context();
    let mut x = 0;
    let rc = hegel_generate_integer(ctx, tc, 0, 1000, &mut x);
    ok(hegel_context_free(ctx));
    match stopped(rc) {
        None => Ok(x),
        Some(outcome) => Err(outcome),
    }
}

/// One test case: a clone draws on another thread while the root draws
/// here; `child_first` decides which thread is likely to draw first.
/// Returns the outcome of `check` on (root's value, clone's value).
fn clone_and_draw(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    child_first: bool,
    check: impl Fn(i64, i64) -> bool,
) -> (Outcome, String) {
    let mut clone = ptr::null_mut();
    if let Some(outcome) = stopped(hegel_test_case_clone(ctx, tc, &mut clone)) {
        return (outcome, String::new());
    }
    let sent = Sendable(clone);
    let child = std::thread::spawn(move || {
        let sent = sent;
        if !child_first {
            std::thread::sleep(Duration::from_millis(2));
        }
        small_int(sent.0)
    });
    if child_first {
        std::thread::sleep(Duration::from_millis(2));
    }
    let main = small_int(tc);
    let child = child.join().expect("the drawing thread");
    ok(hegel_test_case_free(ctx, clone));
    match (main, child) {
        (Ok(main), Ok(child)) => {
            let shown = format!("{main},{child}");
            if check(main, child) {
                (Outcome::Valid, shown)
            } else {
                (Outcome::Failed("Panic at streams.rs".into()), shown)
            }
        }
        (Err(outcome), _) | (_, Err(outcome)) => (outcome, String::new()),
    }
}

#[test]
fn clone_streams_draw_the_same_values_whatever_thread_draws_first() {
    let run_once = |child_first: bool| -> Vec<String> {
        let ctx = context();
        let s = settings(ctx, 20, 99);
        let mut seen = Vec::new();
        run(ctx, s, |tc| {
            let (outcome, shown) = clone_and_draw(ctx, tc, child_first, |_, _| true);
            seen.push(shown);
            (outcome, String::new())
        });
        ok(hegel_context_free(ctx));
        seen
    };
    let first = run_once(true);
    assert!(first.len() >= 20, "{first:?}");
    assert_eq!(first, run_once(false));
}

#[test]
fn a_failure_in_a_clone_shrinks_to_the_minimal_pair() {
    let ctx = context();
    let s = settings(ctx, 200, 5);
    let mut case = 0;
    let report = run(ctx, s, |tc| {
        case += 1;
        clone_and_draw(ctx, tc, case % 2 == 0, |_, child| child < 100)
    });
    assert_eq!(report.status, hegel_run_status_t::HEGEL_RUN_STATUS_FAILED);
    assert_eq!(report.captured.as_deref(), Some("0,100"));
    ok(hegel_context_free(ctx));
}

#[test]
fn a_stream_the_engine_ends_ends_the_test_case_whatever_the_caller_reports() {
    // A clone nests spans past the engine's limit, which rejects the test
    // case (a failed assumption to the caller); the caller then reports a
    // failure, which must not count.
    let ctx = context();
    let s = settings(ctx, 10, 2);
    let report = run(ctx, s, |tc| {
        let mut clone = ptr::null_mut();
        ok(hegel_test_case_clone(ctx, tc, &mut clone));
        let mut opened = 0;
        let stopped = loop {
            let rc = hegel_start_span(ctx, clone, 1);
            if rc != hegel_result_t::HEGEL_OK || opened > 1001 {
                break rc;
            }
            opened += 1;
        };
        assert_eq!(
            stopped,
            hegel_result_t::HEGEL_E_ASSUME,
            "after {opened} spans"
        );
        assert!(opened <= 1001, "{opened} spans opened");
        let mut x = 0;
        assert_eq!(
            hegel_generate_integer(ctx, tc, 0, 10, &mut x),
            hegel_result_t::HEGEL_E_ASSUME,
            "the root's draws stop too"
        );
        ok(hegel_test_case_free(ctx, clone));
        (Outcome::Failed("Panic at streams.rs".into()), String::new())
    });
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_ne!(report.status, hegel_run_status_t::HEGEL_RUN_STATUS_FAILED);
    ok(hegel_context_free(ctx));
}
