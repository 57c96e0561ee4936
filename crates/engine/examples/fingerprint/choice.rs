//! The `choice` section: mutation, spans and state machines. Several
//! properties (lists with equal-label spans, strings, floats, nested spans,
//! state machines of one and several workers, groups and weights, a rule
//! that rejects; most of them fail and shrink, and each runs once more with
//! its bug turned off, so that the whole budget goes to generation and
//! mutation), hashing every test case's choices (values and whether
//! forced), spans and status, and each run's result.

use geist_engine::charset::CharSet;
use geist_engine::choice::{FloatConstraints, IntegerConstraints, SizeConstraints};
use geist_engine::data::Collection;
use geist_engine::state_machine::{StateMachine, StateMachineSpec};
use geist_engine::{RunSettings, Status, TestData, run};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

type Property = fn(&mut TestData) -> Option<()>;

/// Whether the properties fail on their bug (else they pass, and each run
/// spends its whole budget on generation and mutation).
static FAILING: AtomicBool = AtomicBool::new(true);

fn fail(data: &mut TestData) {
    if FAILING.load(Ordering::Relaxed) {
        data.conclude(Status::Interesting, Some("fails".into()));
    }
}

/// A list of bounded integers, each in a span: fails on two equal elements
/// above 100 (mutations find it).
fn duplicates(data: &mut TestData) -> Option<()> {
    let mut c = Collection::new(0, Some(40));
    let mut xs = Vec::new();
    while c.more(data).ok()? {
        data.start_span(11);
        xs.push(
            data.draw_integer(IntegerConstraints::bounded(0, 100_000))
                .ok()?,
        );
        data.stop_span(false);
    }
    let mut big: Vec<i128> = xs.into_iter().filter(|x| *x > 100).collect();
    big.sort_unstable();
    if big.windows(2).any(|w| w[0] == w[1]) {
        fail(data);
    }
    Some(())
}

/// Pairs of strings in nested spans: fails when two are equal and long.
fn strings(data: &mut TestData) -> Option<()> {
    let alphabet = Arc::new(CharSet::from_intervals(vec![(0x20, 0x7e)]));
    let size = SizeConstraints {
        min_size: 0,
        max_size: 20,
    };
    let mut c = Collection::new(0, Some(10));
    let mut seen = Vec::new();
    while c.more(data).ok()? {
        data.start_span(21);
        data.start_span(22);
        let s = data.draw_string(alphabet.clone(), size).ok()?;
        data.stop_span(false);
        let n = data.draw_integer(IntegerConstraints::bounded(-5, 5)).ok()?;
        data.stop_span(n == 0);
        if s.len() > 3 && seen.contains(&s) {
            fail(data);
        }
        seen.push(s);
    }
    Some(())
}

/// Floats and booleans, unlabelled: fails when two floats above 1 are equal.
fn floats(data: &mut TestData) -> Option<()> {
    let mut xs = Vec::new();
    for _ in 0..8 {
        if data.draw_boolean(0.5).ok()? {
            xs.push(
                data.draw_float(FloatConstraints {
                    min: f64::NEG_INFINITY,
                    max: f64::INFINITY,
                    allow_nan: true,
                    width: 64,
                })
                .ok()?,
            );
        } else {
            let _ = data.draw_integer(IntegerConstraints::UNBOUNDED).ok()?;
        }
    }
    if xs
        .iter()
        .enumerate()
        .any(|(i, x)| *x > 1.0 && xs[i + 1..].contains(x))
    {
        fail(data);
    }
    Some(())
}

/// Protocol 0.16's machine, as the ABI bench's stack: push (draws), pop,
/// push then pop; fails when the stack holds two equal values above 1000.
fn sequential_machine(data: &mut TestData) -> Option<()> {
    let mut machine = StateMachine::new(data, NonZeroUsize::new(3)?).ok()?;
    let mut stack: Vec<i128> = Vec::new();
    for _ in 0..50 {
        data.start_span(31);
        match machine.pick_rule(data).ok()? {
            0 => stack.push(data.draw_integer(IntegerConstraints::UNBOUNDED).ok()?),
            1 => {
                stack.pop();
            }
            _ => {
                let x = data.draw_integer(IntegerConstraints::bounded(0, 10)).ok()?;
                stack.push(x);
                stack.pop();
            }
        }
        data.stop_span(false);
        let mut big: Vec<i128> = stack.iter().copied().filter(|x| *x > 1000).collect();
        big.sort_unstable();
        if big.windows(2).any(|w| w[0] == w[1]) {
            fail(data);
            return Some(());
        }
    }
    Some(())
}

/// The C ABI's machine: five rules in two groups, unequal weights,
/// concurrency 1 to 3, two invariants, a rule that rejects.
fn concurrent_machine(data: &mut TestData) -> Option<()> {
    let spec = StateMachineSpec::new(
        vec![0, 0, 0, 7, 7],
        Some(vec![1.0, 2.0, 0.5, 1.0, 3.0]),
        vec![true, false],
        (1, 3),
        20,
    )
    .ok()?;
    let mut machine = StateMachine::with_spec(data, spec).ok()?;
    let mut total = 0i128;
    while machine.next_group(data).ok()?.is_some() {
        for worker in 0..machine.concurrency() as i64 {
            while let Some(rule) = machine.next_rule(data, worker).ok()?.ok()? {
                data.start_span(41 + rule as u64);
                let x = data.draw_integer(IntegerConstraints::bounded(0, 50)).ok()?;
                data.stop_span(false);
                if rule == 2 && x % 3 == 0 {
                    machine.rule_rejected(worker).ok()?;
                    continue;
                }
                total += if rule < 3 { x } else { -x };
            }
        }
        for invariant in 0..2 {
            if machine.should_check_invariant(data, invariant).ok()?.ok()? && total > 120 {
                fail(data);
                return Some(());
            }
        }
    }
    Some(())
}

/// Steps in nested spans, one group of three equal rules: fails when two
/// consecutive draws are equal and above 1000.
fn spanned_machine(data: &mut TestData) -> Option<()> {
    let spec = StateMachineSpec::new(vec![0, 0, 0], None, vec![], (1, 1), 50).ok()?;
    let mut machine = StateMachine::with_spec(data, spec).ok()?;
    let mut last = None;
    while machine.next_group(data).ok()?.is_some() {
        while let Some(rule) = machine.next_rule(data, 0).ok()?.ok()? {
            data.start_span(51);
            if rule != 1 {
                data.start_span(52);
                let x = data.draw_integer(IntegerConstraints::UNBOUNDED).ok()?;
                data.stop_span(false);
                if x > 1000 && last == Some(x) {
                    fail(data);
                    return Some(());
                }
                last = Some(x);
            }
            data.stop_span(false);
        }
    }
    Some(())
}

fn hash_case(h: &mut DefaultHasher, data: &TestData) {
    data.nodes.len().hash(h);
    for node in &data.nodes {
        format!("{:?}", node.value).hash(h);
        node.forced.hash(h);
    }
    for span in &data.spans {
        (span.label, span.start, span.end, span.discarded).hash(h);
    }
    format!("{:?}", data.status).hash(h);
}

/// Prints the section's fingerprints over seeds `0..seeds`: one per
/// property and one over all.
pub fn print(seeds: u128) {
    let properties: [(&str, Property, u64); 6] = [
        ("duplicates", duplicates, 300),
        ("strings", strings, 300),
        ("floats", floats, 300),
        ("sequential_machine", sequential_machine, 200),
        ("concurrent_machine", concurrent_machine, 200),
        ("spanned_machine", spanned_machine, 300),
    ];
    let mut all = DefaultHasher::new();
    let mut cases = 0u64;
    for (failing, (name, property, test_cases)) in [true, false]
        .into_iter()
        .flat_map(|f| properties.iter().map(move |p| (f, *p)))
    {
        FAILING.store(failing, Ordering::Relaxed);
        let name = format!("{name}{}", if failing { "" } else { " (passing)" });
        let mut h = DefaultHasher::new();
        let mut failed = 0;
        for seed in 0..seeds {
            let settings = RunSettings {
                seed,
                test_cases,
                too_slow_seconds: f64::INFINITY,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                let _ = property(data);
                hash_case(&mut h, data);
                true
            });
            cases += result.test_cases;
            failed += usize::from(!result.failures.is_empty());
            (
                result.test_cases,
                result.valid_test_cases,
                result.shrink_calls,
            )
                .hash(&mut h);
            for failure in &result.failures {
                format!("{:?}", failure.choices).hash(&mut h);
            }
        }
        let f = h.finish();
        f.hash(&mut all);
        println!("choice {name:30} {f:016x} ({failed}/{seeds} seeds failed)");
    }
    println!("choice {:30} {:016x}", "all", all.finish());
    println!("choice {cases} test cases");
}
