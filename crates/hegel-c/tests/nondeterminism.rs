//! Runs of nondeterministic tests (hegel.h: `hegel_nondeterminism_strictness_t`,
//! `hegel_failure_caveat`, `hegel_test_case_should_capture`), and the
//! replays every failure gets: a failure that does not fail again aborts the
//! run as flaky under `error` strictness and is handled under `quiet` and
//! `warn` (confirmed by replay, reported with its standing); generation that
//! differs between runs of the same choices likewise. And
//! `stop_on_first_failure`, which decides whether a failure ends exploration.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::hegel_context_t;
use hegel_c::generate::hegel_generate_integer;
use hegel_c::settings::*;
use hegel_c::test_case::hegel_test_case_t;

use hegel_nondeterminism_strictness_t::*;

fn with_strictness(
    ctx: *mut hegel_context_t,
    strictness: hegel_nondeterminism_strictness_t,
) -> *mut hegel_settings_t {
    let s = settings(ctx, 100, 5);
    ok(hegel_settings_set_nondeterminism_strictness(
        ctx,
        s,
        strictness as u32,
    ));
    s
}

/// Draws an integer in `[min, max]`, or the outcome that stops the body.
fn draw(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min: i64,
    max: i64,
) -> Result<i64, Outcome> {
    let mut x = 0;
    match stopped(hegel_generate_integer(ctx, tc, min, max, &mut x)) {
        Some(outcome) => Err(outcome),
        None => Ok(x),
    }
}

/// A test that fails the first time it runs and never again.
fn vanishing(ctx: *mut hegel_context_t) -> impl FnMut(*mut hegel_test_case_t) -> (Outcome, String) {
    let mut calls = 0;
    move |tc| {
        let x = match draw(ctx, tc, 0, 10) {
            Ok(x) => x,
            Err(outcome) => return (outcome, String::new()),
        };
        calls += 1;
        if calls == 1 {
            (Outcome::Failed("vanishing".into()), x.to_string())
        } else {
            (Outcome::Valid, x.to_string())
        }
    }
}

#[test]
fn a_vanishing_failure_is_reported_unconfirmed_under_quiet_strictness() {
    let ctx = context();
    let s = with_strictness(ctx, HEGEL_NONDETERMINISM_QUIET);
    let report = run(ctx, s, vanishing(ctx));
    assert_eq!(report.status, hegel_run_status_t::HEGEL_RUN_STATUS_FAILED);
    assert_eq!(report.failures, vec!["vanishing".to_string()]);
    let caveat = report.caveats[0].clone().expect("a caveat");
    assert!(caveat.starts_with("unconfirmed"), "{caveat}");
    assert_eq!(
        report.blobs[0], None,
        "nothing that never failed again can replay"
    );
}

#[test]
fn a_vanishing_failure_aborts_the_run_as_flaky_under_error_strictness() {
    let ctx = context();
    let s = with_strictness(ctx, HEGEL_NONDETERMINISM_ERROR);
    let report = run(ctx, s, vanishing(ctx));
    assert_eq!(report.status, hegel_run_status_t::HEGEL_RUN_STATUS_ERROR);
    assert_eq!(
        report.error_kind,
        hegel_run_error_kind_t::HEGEL_RUN_ERROR_FLAKY
    );
    let error = report.error.expect("a message");
    assert!(error.starts_with("Flaky test detected"), "{error}");
    assert!(
        error.ends_with("The failure that did not reproduce was: vanishing"),
        "{error}"
    );
}

/// A test whose first draw's lower bound grows with every run.
fn drifting(ctx: *mut hegel_context_t) -> impl FnMut(*mut hegel_test_case_t) -> (Outcome, String) {
    let mut calls = 0;
    move |tc| {
        calls += 1;
        match draw(ctx, tc, calls, 1 << 40) {
            Ok(x) => (Outcome::Valid, x.to_string()),
            Err(outcome) => (outcome, String::new()),
        }
    }
}

#[test]
fn nondeterministic_generation_is_handled_unless_strictness_is_error() {
    for strictness in [HEGEL_NONDETERMINISM_QUIET, HEGEL_NONDETERMINISM_WARN] {
        let ctx = context();
        let report = run(ctx, with_strictness(ctx, strictness), drifting(ctx));
        assert_eq!(
            report.status,
            hegel_run_status_t::HEGEL_RUN_STATUS_PASSED,
            "{strictness:?}: {:?}",
            report.error
        );
        assert!(report.test_cases >= 100, "{strictness:?}");
    }
    let ctx = context();
    let report = run(
        ctx,
        with_strictness(ctx, HEGEL_NONDETERMINISM_ERROR),
        drifting(ctx),
    );
    assert_eq!(report.status, hegel_run_status_t::HEGEL_RUN_STATUS_ERROR);
    assert_eq!(
        report.error_kind,
        hegel_run_error_kind_t::HEGEL_RUN_ERROR_NONDETERMINISTIC
    );
    let error = report.error.expect("a message");
    assert!(
        error.starts_with("Your data generation is non-deterministic"),
        "{error}"
    );
}

#[test]
fn a_failure_that_fails_every_other_run_is_confirmed_and_shrunk() {
    let ctx = context();
    let s = with_strictness(ctx, HEGEL_NONDETERMINISM_QUIET);
    let mut coin = 0;
    let report = run(ctx, s, |tc| {
        let x = match draw(ctx, tc, 0, 1000) {
            Ok(x) => x,
            Err(outcome) => return (outcome, String::new()),
        };
        if x >= 5 {
            coin += 1;
            if coin % 2 == 1 {
                return (Outcome::Failed("large".into()), x.to_string());
            }
        }
        (Outcome::Valid, x.to_string())
    });
    assert_eq!(report.failures, vec!["large".to_string()]);
    let caveat = report.caveats[0].clone().expect("a caveat");
    assert!(
        caveat.starts_with("nondeterministic failure, confirmed: failed "),
        "{caveat}"
    );
    assert!(!caveat.contains("report time"), "{caveat}");
    assert_eq!(
        report.captured.as_deref(),
        Some("5"),
        "shrunk to the boundary"
    );
    assert!(report.blobs[0].is_some());
}

#[test]
fn a_failure_reproduced_at_every_replay_has_no_caveat_in_a_nondeterministic_run() {
    let ctx = context();
    let s = with_strictness(ctx, HEGEL_NONDETERMINISM_QUIET);
    let mut calls = 0;
    let report = run(ctx, s, |tc| {
        if let Err(outcome) = draw(ctx, tc, 0, 10) {
            return (outcome, String::new());
        }
        calls += 1;
        let origin = if calls == 1 { "flaky" } else { "deterministic" };
        (Outcome::Failed(origin.into()), String::new())
    });
    assert_eq!(report.failures, vec!["deterministic".to_string()]);
    assert_eq!(report.caveats, vec![None]);
    assert!(report.blobs[0].is_some());
}

#[test]
fn a_deterministic_failure_pays_the_discovery_replays_the_check_and_the_report() {
    let ctx = context();
    let s = with_strictness(ctx, HEGEL_NONDETERMINISM_QUIET);
    let report = run(ctx, s, |_tc| {
        (Outcome::Failed("always".into()), String::new())
    });
    assert_eq!(report.failures, vec!["always".to_string()]);
    assert_eq!(report.caveats, vec![None]);
    // Found by the first test case; then four discovery replays, the replay
    // before shrinking (a test case without choices has nothing to shrink),
    // and the replay for the report, each stamped for capture.
    assert_eq!(report.test_cases, 1 + 4 + 1 + 1);
    assert_eq!(report.stamped, 4 + 1 + 1);
}

/// The test cases a run of 50 runs when every odd input fails.
fn odd_inputs_fail(stop_on_first_failure: bool) -> usize {
    let ctx = context();
    let s = settings(ctx, 50, 9);
    ok(hegel_settings_set_phases(
        ctx,
        s,
        hegel_phase_t::HEGEL_PHASE_GENERATE as u32,
    ));
    ok(hegel_settings_set_stop_on_first_failure(
        ctx,
        s,
        stop_on_first_failure,
    ));
    let report = run(ctx, s, |tc| match draw(ctx, tc, 0, 255) {
        Ok(x) if x % 2 == 1 => (Outcome::Failed("odd".into()), x.to_string()),
        Ok(x) => (Outcome::Valid, x.to_string()),
        Err(outcome) => (outcome, String::new()),
    });
    assert_eq!(report.failures, vec!["odd".to_string()]);
    report.test_cases
}

#[test]
fn stop_on_first_failure_decides_whether_the_budget_runs_out() {
    let stopped = odd_inputs_fail(true);
    assert!(stopped < 50, "{stopped} test cases");
    let whole = odd_inputs_fail(false);
    assert!(whole > 50 + 4, "{whole} test cases");
}
