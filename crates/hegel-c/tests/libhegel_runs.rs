//! How a run goes where hegeltest 0.51 counts on libhegel's behaviour: a
//! run makes its valid test cases even over a space it has used up; a
//! filter rejecting a small space fails `filter_too_much` rather than
//! ending the run; an always-rejecting test gives up at Hypothesis's
//! invalid budget; an input that passed before it failed keeps a caveat;
//! and a test case the engine ended refuses every later call.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::generate::{hegel_generate_boolean, hegel_generate_integer};
use hegel_c::settings::{
    hegel_settings_set_nondeterminism_strictness, hegel_settings_set_suppress_health_check,
};
use hegel_c::stateful::{hegel_new_recursion, hegel_recursion_finish, hegel_recursion_free};
use hegel_c::test_case::{hegel_start_span, hegel_stop_span, hegel_test_case_t};
use std::cell::Cell;
use std::ptr;

/// One choice out of seven, only the last of which is valid: the tree is
/// used up after seven test cases, yet the run makes its five valid ones
/// (hegeltest's `rare_valid_input_is_found_under_suppression`).
#[test]
fn a_used_up_space_still_makes_every_valid_test_case() {
    for seed in 0..20 {
        let ctx = context();
        let settings = settings(ctx, 5, seed);
        // Every health check suppressed.
        ok(hegel_settings_set_suppress_health_check(
            ctx, settings, 0b1111,
        ));
        let valid = Cell::new(0);
        let report = run(ctx, settings, |tc| {
            let mut x = 0i64;
            if let Some(outcome) = stopped(hegel_generate_integer(ctx, tc, 0, 6, &mut x)) {
                return (outcome, String::new());
            }
            if x != 6 {
                return (Outcome::Invalid, String::new());
            }
            valid.set(valid.get() + 1);
            (Outcome::Valid, String::new())
        });
        assert_eq!(
            report.status,
            hegel_run_status_t::HEGEL_RUN_STATUS_PASSED,
            "seed {seed}: {:?}",
            report.error
        );
        assert_eq!(valid.get(), 5, "seed {seed}");
    }
}

/// Three tries at a value in 0..=9 that a filter always rejects: the tree's
/// killed branches use the space up after a few test cases, and the run goes
/// on to fail filter_too_much (hegeltest's `test_unsat_filtered_sampling`).
#[test]
fn a_filter_rejecting_a_small_space_fails_filter_too_much() {
    for seed in 0..10 {
        let ctx = context();
        let settings = settings(ctx, 100, seed);
        let report = run(ctx, settings, |tc| {
            for _ in 0..3 {
                ok(hegel_start_span(ctx, tc, 7));
                let mut x = 0i64;
                if let Some(outcome) = stopped(hegel_generate_integer(ctx, tc, 0, 9, &mut x)) {
                    return (outcome, String::new());
                }
                ok(hegel_stop_span(ctx, tc, true));
            }
            (Outcome::Invalid, String::new())
        });
        assert_eq!(
            report.error_kind,
            hegel_run_error_kind_t::HEGEL_RUN_ERROR_HEALTH_CHECK,
            "seed {seed}: {:?}",
            report.error
        );
        assert!(
            report
                .error
                .as_deref()
                .unwrap_or("")
                .contains("FilterTooMuch"),
            "{:?}",
            report.error
        );
    }
}

/// With filter_too_much suppressed, a test that never accepts anything
/// gives up after 459 test cases, Hypothesis's invalid budget with no valid
/// test case, and is unsatisfiable.
#[test]
fn an_always_rejecting_test_gives_up_at_the_invalid_budget() {
    let ctx = context();
    let settings = settings(ctx, 100, 3);
    ok(hegel_settings_set_suppress_health_check(
        ctx,
        settings,
        hegel_health_check_t::HEGEL_HC_FILTER_TOO_MUCH as u32,
    ));
    let report = run(ctx, settings, |tc| {
        let mut x = 0i64;
        if let Some(outcome) = stopped(hegel_generate_integer(ctx, tc, i64::MIN, i64::MAX, &mut x))
        {
            return (outcome, String::new());
        }
        (Outcome::Invalid, String::new())
    });
    assert_eq!(
        report.error_kind,
        hegel_run_error_kind_t::HEGEL_RUN_ERROR_UNSATISFIABLE
    );
    assert_eq!(report.test_cases, 459);
}

/// `true` passes the first time and fails from then on: every replay of the
/// failure fails, but the run saw its input pass, so the failure is
/// nondeterministic, confirmed by a full batch of replays, with its caveat.
#[test]
fn an_input_that_passed_before_it_failed_keeps_a_caveat() {
    let ctx = context();
    let settings = settings(ctx, 100, 5);
    // Quiet strictness: nondeterminism is handled, not an error.
    ok(hegel_settings_set_nondeterminism_strictness(
        ctx, settings, 0,
    ));
    let passed = Cell::new(false);
    let report = run(ctx, settings, |tc| {
        let mut b = false;
        if let Some(outcome) = stopped(hegel_generate_boolean(ctx, tc, 0.5, false, false, &mut b)) {
            return (outcome, String::new());
        }
        if b && passed.replace(true) {
            return (Outcome::Failed("second".into()), String::new());
        }
        (Outcome::Valid, String::new())
    });
    assert_eq!(report.status, hegel_run_status_t::HEGEL_RUN_STATUS_FAILED);
    assert_eq!(report.failures, vec!["second".to_string()]);
    assert_eq!(
        report.caveats[0].as_deref(),
        Some("nondeterministic failure, confirmed: failed 20 of 20 replays")
    );
}

/// Draws until the engine ends the test case for want of choices.
fn overrun(ctx: *mut hegel_c::context::hegel_context_t, tc: *mut hegel_test_case_t) {
    let mut x = 0i64;
    for _ in 0..10_000_000 {
        let rc = hegel_generate_integer(ctx, tc, i64::MIN, i64::MAX, &mut x);
        if rc == hegel_result_t::HEGEL_E_STOP_TEST {
            return;
        }
        ok(rc);
    }
    panic!("the choice budget never ran out");
}

/// Once a test case overran, spans and a recursion's finishing check
/// return STOP_TEST like the draws do (hegeltest's
/// `span_calls_after_overrun_unwind_as_stop_test` and
/// `finishing_a_recursive_value_on_an_exhausted_stream_is_an_overrun`).
#[test]
fn calls_on_an_overrun_test_case_return_stop_test() {
    let ctx = context();
    let settings = settings(ctx, 1, 1);
    let mut checked = false;
    run(ctx, settings, |tc| {
        if checked {
            return (Outcome::Valid, String::new());
        }
        checked = true;
        let mut recursion = ptr::null_mut();
        ok(hegel_new_recursion(ctx, tc, 0, 100, &mut recursion));
        ok(hegel_start_span(ctx, tc, 11));
        overrun(ctx, tc);
        assert_eq!(
            hegel_stop_span(ctx, tc, false),
            hegel_result_t::HEGEL_E_STOP_TEST
        );
        assert_eq!(
            hegel_start_span(ctx, tc, 11),
            hegel_result_t::HEGEL_E_STOP_TEST
        );
        assert_eq!(
            hegel_recursion_finish(ctx, tc, recursion),
            hegel_result_t::HEGEL_E_STOP_TEST
        );
        ok(hegel_recursion_free(ctx, recursion));
        (Outcome::Overrun, String::new())
    });
    assert!(checked);
}
