//! State machines: failing step sequences shrink to the shortest program.

use geist::generators as gs;
use geist::stateful::{StateMachine, Variables};
use geist::{Settings, TestCase, run_property};

fn settings(seed: u64) -> Settings {
    Settings::new()
        .test_cases(500)
        .seed(Some(seed))
        .database(None::<&str>)
}

/// A counter whose increment misbehaves once it has been bumped three times.
#[derive(Default)]
struct Counter {
    value: u32,
    bumps: u32,
}

#[test]
fn failing_sequence_shrinks_to_the_shortest_program() {
    let machine = StateMachine::new()
        .rule("bump", |c: &mut Counter, tc: &mut TestCase| {
            let by = tc.draw(gs::integers::<u32>().max_value(10));
            c.bumps += 1;
            // The planted bug: the fourth bump adds far too much.
            c.value += if c.bumps == 4 { by + 41 } else { by };
        })
        .rule("reset", |c: &mut Counter, _tc: &mut TestCase| {
            c.value = 0;
        })
        .invariant("value counts bumps only", |c| {
            assert!(c.value <= 10 * c.bumps)
        });
    let mut seen_reset = false;
    let report = run_property(&settings(1), &mut |tc: &mut TestCase| {
        machine.run(tc, Counter::default());
        seen_reset = true;
    });
    let report = report.expect_err("the planted bug is found");
    assert!(seen_reset);
    // Four bumps are needed and enough; resets are deleted; every amount is 0.
    for step in 1..=4 {
        assert!(
            report.contains(&format!("step {step}: bump(0)\n")),
            "{report}"
        );
    }
    assert!(!report.contains("step 5"), "{report}");
    assert!(!report.contains("reset"), "{report}");
}

#[test]
fn preconditions_are_respected_and_variables_flow_between_steps() {
    struct Bank {
        accounts: Variables<usize>,
        balances: Vec<i64>,
    }
    let machine = StateMachine::new()
        .rule("open", |b: &mut Bank, _tc: &mut TestCase| {
            b.balances.push(0);
            b.accounts.add(b.balances.len() - 1);
        })
        .rule_when(
            "deposit",
            |b| !b.accounts.is_empty(),
            |b: &mut Bank, tc: &mut TestCase| {
                let account = *b.accounts.draw(tc);
                let amount = tc.draw(gs::integers::<i64>().min_value(1).max_value(100));
                b.balances[account] += amount;
            },
        )
        .rule_when(
            "close",
            |b| !b.accounts.is_empty(),
            |b: &mut Bank, tc: &mut TestCase| {
                let account = b.accounts.consume(tc);
                b.balances[account] = 0;
            },
        )
        .invariant("no negative balance", |b| {
            assert!(b.balances.iter().all(|x| *x >= 0))
        });
    let result = run_property(&settings(2), &mut |tc: &mut TestCase| {
        machine.run(
            tc,
            Bank {
                accounts: Variables::new(),
                balances: Vec::new(),
            },
        );
    });
    assert!(result.is_ok(), "{result:?}");

    // A deposit into a closed account is a bug this machine can find.
    let strict = StateMachine::new()
        .rule("open", |b: &mut Bank, _tc: &mut TestCase| {
            b.balances.push(0);
            b.accounts.add(b.balances.len() - 1);
        })
        .rule_when(
            "deposit",
            |b| !b.accounts.is_empty(),
            |b: &mut Bank, tc: &mut TestCase| {
                let account = *b.accounts.draw(tc);
                let amount = tc.draw(gs::integers::<i64>().min_value(1).max_value(100));
                b.balances[account] += amount;
                assert!(b.balances[account] <= 150, "balance over 150");
            },
        );
    let report = run_property(&settings(3), &mut |tc: &mut TestCase| {
        strict.run(
            tc,
            Bank {
                accounts: Variables::new(),
                balances: Vec::new(),
            },
        );
    })
    .expect_err("overdraft found");
    assert!(report.contains("step 1: open()"), "{report}");
    assert!(report.contains("balance over 150"), "{report}");
    assert!(!report.contains("step 4"), "{report}");
}
