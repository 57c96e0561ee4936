//! How generated integers spread over their range, measured through a whole
//! run (1,000 test cases, one draw each), as a client sees them.
//!
//! A narrow range (here `0..=10000`) must be covered nearly uniformly, with
//! its boundaries mixed in but not dominating: a bug that needs a value above
//! a few hundred must be as easy to hit as one below. A wide range (`i64`)
//! must still produce small values often, and large ones too.
//!
//! `cargo test -p geist-engine --test distribution -- --nocapture` prints the
//! figures.

use geist_engine::choice::IntegerConstraints;
use geist_engine::{RunSettings, run};
use std::collections::HashMap;

fn draws(constraints: IntegerConstraints, seed: u128) -> Vec<i128> {
    let settings = RunSettings {
        seed,
        test_cases: 1000,
        ..RunSettings::default()
    };
    let mut values = Vec::new();
    let result = run(&settings, &[], &mut |data| {
        if let Ok(v) = data.draw_integer(constraints) {
            values.push(v);
        }
        true
    });
    assert!(result.passed());
    values
}

struct Figures {
    distinct: usize,
    small_share: f64,
    top_count: usize,
}

fn figures(values: &[i128], small: impl Fn(i128) -> bool) -> Figures {
    let mut counts: HashMap<i128, usize> = HashMap::new();
    for &v in values {
        *counts.entry(v).or_default() += 1;
    }
    Figures {
        distinct: counts.len(),
        small_share: values.iter().filter(|&&v| small(v)).count() as f64 / values.len() as f64,
        top_count: counts.values().copied().max().unwrap_or(0),
    }
}

#[test]
fn a_range_of_ten_thousand_is_covered_nearly_uniformly() {
    for seed in 0..5 {
        let values = draws(IntegerConstraints::bounded(0, 10_000), seed);
        assert_eq!(values.len(), 1000);
        let f = figures(&values, |v| v <= 255);
        println!(
            "0..=10000, seed {seed}: {} distinct of 1000, {:.1}% <= 255, most frequent value drawn {} times",
            f.distinct,
            100.0 * f.small_share,
            f.top_count
        );
        assert!(f.distinct >= 850, "{} distinct", f.distinct);
        assert!(f.small_share <= 0.08, "{:.3} <= 255", f.small_share);
        assert!(f.top_count <= 30, "one value drawn {} times", f.top_count);
        // The boundaries still turn up.
        for boundary in [0, 10_000] {
            assert!(values.contains(&boundary), "{boundary} never drawn");
        }
        // Above half the range as often as below it (within noise).
        let high = values.iter().filter(|&&v| v > 5_000).count();
        assert!((400..=600).contains(&high), "{high} above 5000");
    }
}

#[test]
fn a_wide_range_mixes_small_and_large_values() {
    let i64_range = IntegerConstraints::bounded(i64::MIN.into(), i64::MAX.into());
    for seed in 0..5 {
        let values = draws(i64_range, seed);
        let f = figures(&values, |v| v.abs() <= 255);
        let large = values.iter().filter(|v| v.abs() > 1 << 32).count();
        println!(
            "i64, seed {seed}: {} distinct of 1000, {:.1}% within +-255, {large} beyond +-2^32",
            f.distinct,
            100.0 * f.small_share
        );
        assert!(f.distinct >= 700, "{} distinct", f.distinct);
        assert!(f.small_share >= 0.15, "{:.3} small", f.small_share);
        assert!(large >= 50, "{large} large");
    }
}
