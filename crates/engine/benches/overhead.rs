//! Engine overhead alone: test cases per second of `run()` in process, no
//! protocol, single thread, for properties that do almost nothing, so the
//! figure is what the engine itself costs per test case.
//!
//! Properties: one unbounded integer (drawn directly and through a Hegel
//! integer schema), and a list of exactly 100 unbounded integers (through a
//! Hegel list schema with min_size = max_size = 100). Each is run `ROUNDS`
//! times; the table shows the median rate and the spread, per second of the
//! benchmark thread's CPU time (from `/proc/thread-self/schedstat`, so that
//! other processes sharing the cores do not distort it; wall-clock rates are
//! shown too, and used alone where schedstat is unavailable).
//!
//! Environment: `GEIST_BENCH_CASES` (default 200,000) test cases per run of
//! the one-integer properties (a tenth of it for the list property),
//! `GEIST_BENCH_ROUNDS` (default 7), `GEIST_BENCH_ONLY` (a substring of the
//! property names, e.g. `list`) to measure (or profile) one property alone.
//!
//! Run: `cargo bench -p geist-engine --bench overhead`.

use geist_engine::choice::IntegerConstraints;
use geist_engine::data::TestData;
use geist_engine::generate::generate;
use geist_engine::run::{RunSettings, run};
use geist_engine::value::Value;
use std::hint::black_box;
use std::time::Instant;

mod support;
use support::{env_number, map, schema, thread_cpu_nanos};

/// A property to measure.
struct Property {
    name: &'static str,
    cases: u64,
    test: Box<dyn Fn(&mut TestData)>,
}

fn properties(cases: u64) -> Vec<Property> {
    let integer = schema(map(vec![("type", Value::text("integer"))]));
    let list100 = schema(map(vec![
        ("type", Value::text("list")),
        ("elements", map(vec![("type", Value::text("integer"))])),
        ("min_size", Value::Integer(100)),
        ("max_size", Value::Integer(100)),
    ]));
    vec![
        Property {
            name: "one integer (draw_integer)",
            cases,
            test: Box::new(|data| {
                let _ = black_box(data.draw_integer(IntegerConstraints::UNBOUNDED));
            }),
        },
        Property {
            name: "one integer (integer schema)",
            cases,
            test: Box::new(move |data| {
                let _ = black_box(generate(&integer, data));
            }),
        },
        Property {
            name: "list of 100 integers (list schema)",
            cases: (cases / 10).max(1),
            test: Box::new(move |data| {
                let _ = black_box(generate(&list100, data));
            }),
        },
    ]
}

/// One run: (test cases run, wall seconds, CPU seconds if known).
fn measure(property: &Property, seed: u128) -> (u64, f64, Option<f64>) {
    let settings = RunSettings {
        seed,
        test_cases: property.cases,
        ..RunSettings::default()
    };
    let cpu_before = thread_cpu_nanos();
    let started = Instant::now();
    let result = run(&settings, &[], &mut |data| {
        (property.test)(data);
        true
    });
    let seconds = started.elapsed().as_secs_f64();
    let cpu = match (cpu_before, thread_cpu_nanos()) {
        (Some(a), Some(b)) if b > a => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    assert!(
        result.passed(),
        "{}: the property cannot fail, yet the run did not pass: {result:?}",
        property.name
    );
    (result.test_cases, seconds, cpu)
}

fn main() {
    let cases = env_number("GEIST_BENCH_CASES", 200_000);
    let rounds = env_number("GEIST_BENCH_ROUNDS", 7).max(1);
    println!(
        "geist engine overhead: run() in process, one thread, {rounds} rounds each; \
         rates per second of this thread's CPU time (wall-clock rates in brackets)\n"
    );
    println!(
        "| property | test cases per run | median cases/s | min cases/s | max cases/s | \
         median ns/case |"
    );
    println!("|---|---|---|---|---|---|");
    let only = std::env::var("GEIST_BENCH_ONLY").ok();
    for property in properties(cases) {
        if only
            .as_ref()
            .is_some_and(|o| !property.name.contains(o.as_str()))
        {
            continue;
        }
        // One warm-up run (page faults, allocator growth), not counted.
        measure(&property, 1_000);
        let runs: Vec<(u64, f64, Option<f64>)> = (0..rounds)
            .map(|round| measure(&property, u128::from(round)))
            .collect();
        let mut wall: Vec<f64> = runs.iter().map(|(n, s, _)| *n as f64 / s).collect();
        let mut cpu: Vec<f64> = runs
            .iter()
            .map(|(n, s, c)| *n as f64 / c.unwrap_or(*s))
            .collect();
        wall.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        let (median, median_wall) = (cpu[cpu.len() / 2], wall[wall.len() / 2]);
        println!(
            "| {} | {} | {:.0} ({:.0}) | {:.0} ({:.0}) | {:.0} ({:.0}) | {:.0} |",
            property.name,
            property.cases,
            median,
            median_wall,
            cpu[0],
            wall[0],
            cpu[cpu.len() - 1],
            wall[wall.len() - 1],
            1e9 / median
        );
    }
}
