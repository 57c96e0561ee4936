//! The `tree` section: where the choice tree matters most. Several
//! properties (a list of 100 integers run until the choice tree is full,
//! failing lists that shrink, a small space the tree exhausts, filters that
//! discard spans, strings, floats and dictionaries), hashing each test
//! case's choices and outcome and each run's result.

use crate::support::{map, schema};
use geist_engine::choice::{ChoiceValue, IntegerConstraints};
use geist_engine::data::Collection;
use geist_engine::generate::generate;
use geist_engine::value::Value;
use geist_engine::{RunSettings, Status, TestData, run};
use std::hash::{DefaultHasher, Hash, Hasher};

fn hash_choices(h: &mut DefaultHasher, choices: &[ChoiceValue]) {
    choices.len().hash(h);
    for c in choices {
        c.hash(h);
    }
}

type Property = Box<dyn Fn(&mut TestData) -> bool>;

fn properties() -> Vec<(&'static str, u64, Property)> {
    let list100 = schema(map(vec![
        ("type", Value::text("list")),
        ("elements", map(vec![("type", Value::text("integer"))])),
        ("min_size", Value::Integer(100)),
        ("max_size", Value::Integer(100)),
    ]));
    let mixed = schema(map(vec![
        ("type", Value::text("dict")),
        ("keys", map(vec![("type", Value::text("string"))])),
        ("values", map(vec![("type", Value::text("float"))])),
    ]));
    let texts = schema(map(vec![
        ("type", Value::text("list")),
        ("elements", map(vec![("type", Value::text("string"))])),
    ]));
    vec![
        (
            "list of 100 integers",
            // Past the tree's million entries, where it stops growing.
            6000,
            Box::new(move |data: &mut TestData| {
                let _ = generate(&list100, data);
                true
            }),
        ),
        (
            "list sum fails",
            300,
            Box::new(|data: &mut TestData| {
                let mut list = Collection::new(0, None);
                let mut sum = 0i128;
                while let Ok(true) = list.more(data) {
                    match data.draw_integer(IntegerConstraints::bounded(-1000, 1000)) {
                        Ok(v) => sum += v,
                        Err(_) => return true,
                    }
                }
                if sum > 1500 {
                    data.conclude(Status::Interesting, Some("sum".into()));
                }
                true
            }),
        ),
        (
            "small space",
            500,
            Box::new(|data: &mut TestData| {
                let (Ok(a), Ok(b), Ok(c)) = (
                    data.draw_integer(IntegerConstraints::bounded(0, 3)),
                    data.draw_boolean(0.5),
                    data.draw_integer(IntegerConstraints::bounded(-2, 2)),
                ) else {
                    return true;
                };
                if a == 3 && b && c == -2 && data.draw_boolean(0.5) == Ok(true) {
                    let _ = data.draw_integer(IntegerConstraints::bounded(0, 1));
                }
                true
            }),
        ),
        (
            "filter discards",
            300,
            Box::new(|data: &mut TestData| {
                let mut kept = Vec::new();
                for _ in 0..4 {
                    for _ in 0..3 {
                        data.start_span(0xF1);
                        let Ok(v) = data.draw_integer(IntegerConstraints::bounded(0, 20)) else {
                            return true;
                        };
                        let discard = v % 3 != 0;
                        data.stop_span(discard);
                        if !discard {
                            kept.push(v);
                            break;
                        }
                    }
                }
                if kept.len() < 2 {
                    data.conclude(Status::Invalid, None);
                } else if kept.iter().sum::<i128>() > 30 {
                    data.conclude(Status::Interesting, Some("kept".into()));
                }
                true
            }),
        ),
        (
            "strings and floats",
            200,
            Box::new(move |data: &mut TestData| {
                let a = generate(&mixed, data);
                let b = generate(&texts, data);
                let size = |v: &Result<Value, _>| match v {
                    Ok(Value::Map(m)) => m.len(),
                    Ok(Value::Array(a)) => a.len(),
                    _ => 0,
                };
                if size(&a) + size(&b) > 6 {
                    data.conclude(Status::Interesting, Some("big".into()));
                }
                true
            }),
        ),
        (
            "unbounded integers",
            300,
            Box::new(|data: &mut TestData| {
                let mut list = Collection::new(0, Some(20));
                while let Ok(true) = list.more(data) {
                    if let Ok(v) = data.draw_integer(IntegerConstraints::UNBOUNDED)
                        && v > 1 << 40
                    {
                        data.conclude(Status::Interesting, Some("large".into()));
                        return true;
                    }
                }
                true
            }),
        ),
    ]
}

/// Prints the section's fingerprints over seeds `0..seeds`: one per
/// property and one over all.
pub fn print(seeds: u128) {
    let mut total = DefaultHasher::new();
    for (name, cases, property) in properties() {
        let mut h = DefaultHasher::new();
        let mut test_cases = 0;
        for seed in 0..seeds {
            let settings = RunSettings {
                seed,
                test_cases: cases,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                let outcome = property(data);
                hash_choices(&mut h, &data.choices());
                outcome.hash(&mut h);
                outcome
            });
            test_cases += result.test_cases;
            (
                result.test_cases,
                result.valid_test_cases,
                result.invalid_test_cases,
                result.shrink_calls,
            )
                .hash(&mut h);
            format!("{:?}", result.stop).hash(&mut h);
            for failure in &result.failures {
                hash_choices(&mut h, &failure.choices);
                failure.origin.hash(&mut h);
            }
        }
        let fingerprint = h.finish();
        println!("tree   {name:24} {test_cases:>9} test cases  {fingerprint:016x}");
        fingerprint.hash(&mut total);
    }
    println!("tree   {:24} {:>30}  {:016x}", "all", "", total.finish());
}
