//! Pools and state machines through the C ABI, driven as a frontend drives
//! them: a loop that only stops when the engine stops it ends, and refused
//! machines say why in the frontend's terms.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::{hegel_context_free, hegel_context_last_error};
use hegel_c::stateful::*;
use std::ptr;

use hegel_result_t::*;

#[test]
fn a_pool_add_loop_ends_when_the_test_case_runs_out_of_choices() {
    // A body that adds variables until a call fails: each test case ends
    // only at the choice budget (a million choices), so every addition must
    // stay cheap however many variables the pool holds.
    let ctx = context();
    let settings = settings(ctx, 5, 3);
    let report = run(ctx, settings, |tc| {
        let mut pool = ptr::null_mut();
        if let Some(outcome) = stopped(hegel_new_pool(ctx, tc, &mut pool)) {
            return (outcome, String::new());
        }
        let mut added = 0u64;
        let outcome = loop {
            let mut id = 0i64;
            if let Some(outcome) = stopped(hegel_pool_add(ctx, tc, pool, &mut id)) {
                break outcome;
            }
            added += 1;
        };
        ok(hegel_pool_free(ctx, pool));
        (outcome, added.to_string())
    });
    let error = report.error.unwrap_or_default();
    assert!(error.contains("LargeInitialTestCase"), "{error}");
    ok(hegel_context_free(ctx));
}

/// `hegel_new_state_machine` with `rules` named rules of the given weights,
/// on a test case of a fresh run; returns the result and the context's message.
fn new_machine(weights: &[f64], step_count: i64) -> (hegel_result_t, String) {
    let ctx = context();
    let s = settings(ctx, 5, 1);
    let names: Vec<String> = (0..weights.len()).map(|i| format!("rule{i}")).collect();
    let views: Vec<hegel_string_t> = names.iter().map(|n| view(n)).collect();
    let groups = vec![0i64; weights.len()];
    let mut outcome = (HEGEL_OK, String::new());
    let mut first = true;
    run(ctx, s, |tc| {
        if first {
            first = false;
            let mut machine = ptr::null_mut();
            let mut concurrency = 0i64;
            let rc = hegel_new_state_machine(
                ctx,
                tc,
                views.as_ptr(),
                groups.as_ptr(),
                weights.as_ptr(),
                weights.len(),
                ptr::null(),
                ptr::null(),
                0,
                1,
                1,
                step_count,
                &mut machine,
                &mut concurrency,
            );
            outcome = (rc, text(hegel_context_last_error(ctx)));
            ok(hegel_state_machine_free(ctx, machine));
        }
        (Outcome::Valid, String::new())
    });
    ok(hegel_context_free(ctx));
    outcome
}

#[test]
fn refused_machines_say_why_and_name_the_rule() {
    let (rc, message) = new_machine(&[], 50);
    assert_eq!(rc, HEGEL_E_INVALID_ARG);
    assert!(
        message.contains("cannot run a state machine with no rules"),
        "{message}"
    );
    let (rc, message) = new_machine(&[1.0], 0);
    assert_eq!(rc, HEGEL_E_INVALID_ARG);
    assert!(
        message.contains("step count must be at least 1"),
        "{message}"
    );
    for bad in [0.0, -2.0, f64::NAN, f64::INFINITY] {
        let (rc, message) = new_machine(&[1.0, bad], 50);
        assert_eq!(rc, HEGEL_E_INVALID_ARG);
        let expected = format!(
            "rule weights must be finite and positive, but rule 1 (rule1) has weight {bad}"
        );
        assert!(message.contains(&expected), "{message}");
    }
    assert_eq!(new_machine(&[1.0, 2.0], 50).0, HEGEL_OK);
}

#[test]
fn a_machine_answers_only_to_its_own_test_case() {
    let ctx = context();
    let s = settings(ctx, 3, 1);
    let names = [view("push"), view("pop")];
    let groups = [0i64, 0];
    let mut machine: *mut hegel_state_machine_t = ptr::null_mut();
    let mut seen = Vec::new();
    run(ctx, s, |tc| {
        let mut group = 0i64;
        if machine.is_null() {
            machine = plain_machine(ctx, tc, &names, &groups);
            ok(hegel_state_machine_next_group(ctx, tc, machine, &mut group));
            let mut rule = 0i64;
            ok(hegel_state_machine_next_rule(
                ctx, tc, machine, 0, &mut rule,
            ));
            assert!((0..2).contains(&rule), "{rule}");
        } else {
            // The machine of an earlier test case, with this one's handle.
            let rc = hegel_state_machine_next_group(ctx, tc, machine, &mut group);
            seen.push((rc, text(hegel_context_last_error(ctx))));
        }
        (Outcome::Valid, String::new())
    });
    assert!(!seen.is_empty());
    for (rc, message) in seen {
        assert_eq!(rc, HEGEL_E_INVALID_HANDLE);
        assert!(message.contains("another test case"), "{message}");
    }
    ok(hegel_state_machine_free(ctx, machine));
    assert_eq!(
        hegel_state_machine_free(ctx, machine),
        HEGEL_E_INVALID_HANDLE
    );
    ok(hegel_context_free(ctx));
}
