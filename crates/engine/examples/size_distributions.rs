//! Sizes of generated collections, as whole runs generate them: lists of
//! integers (unbounded, `max_size` 10 and 100, `min_size` 5) and a deferred
//! JSON value (hegeltest 0.51's test_find_quality recursive test: a
//! `one_of` of null, float, text, a list of itself and a map from text to
//! itself, with the frontend's span per generator), whose collections are
//! reported by nesting level.
//!
//! Each list property runs 200 seeded runs of 100 test cases (generation
//! only, as `run()` generates: mutations and copies included); JSON runs 20
//! seeds of 1,000 test cases under hegel-c's lifted choice budget, as the
//! frontend's test does, and reports how many seeds reached its target
//! shape (a map whose `""` key holds a list), the test cases that hit the
//! span depth limit, and the CPU time.
//!
//! Run: `cargo run --release -p geist-engine --example size_distributions [list|json]`.

use geist_engine::choice::{FloatConstraints, IntegerConstraints};
use geist_engine::data::{Collection, StopTest, TestData};
use geist_engine::generate::{Schema, generate};
use geist_engine::run::{Phases, RunSettings, run};
use geist_engine::value::Value;
use std::time::Instant;

/// Span labels standing in for hegeltest 0.51's generator labels (hashes).
const DEFERRED: u64 = 0x5eed_0000_0001;
const ONE_OF: u64 = 0x5eed_0000_0002;
const LIST_MAP: u64 = 0x5eed_0000_0003;
const LIST: u64 = 0x5eed_0000_0004;
const MAP_MAP: u64 = 0x5eed_0000_0005;
const MAP: u64 = 0x5eed_0000_0006;
const TEXT: u64 = 0x5eed_0000_0007;
const FLOAT: u64 = 0x5eed_0000_0008;
const INTEGER: u64 = 0x5eed_0000_0009;

fn text_schema() -> Schema {
    let value = Value::Map(vec![(Value::text("type"), Value::text("string"))]);
    match Schema::parse(&value) {
        Ok(s) => s,
        Err(e) => panic!("text schema: {e}"),
    }
}

/// One list of integers; its length.
fn list(data: &mut TestData, min: usize, max: Option<usize>) -> Result<usize, StopTest> {
    data.start_span(LIST);
    let mut sizing = Collection::new(min, max);
    let mut n = 0;
    while sizing.more(data)? {
        data.start_span(INTEGER);
        data.draw_integer(IntegerConstraints::UNBOUNDED)?;
        data.stop_span(false);
        n += 1;
    }
    data.stop_span(false);
    Ok(n)
}

/// A generated JSON value's shape: collections' lengths by nesting level.
#[derive(Default)]
struct Shape {
    nodes: usize,
    lengths: Vec<(usize, usize)>,
    /// Whether it is a map whose `""` key holds a list.
    target: bool,
}

/// One JSON value at `level` (0 at the top); returns whether it is a list.
fn json(
    data: &mut TestData,
    text: &Schema,
    level: usize,
    shape: &mut Shape,
) -> Result<bool, StopTest> {
    shape.nodes += 1;
    data.start_span(DEFERRED);
    data.start_span(ONE_OF);
    let branch = data.draw_integer(IntegerConstraints::bounded(0, 4))?;
    let mut is_list = false;
    match branch {
        0 => {}
        1 => {
            data.start_span(FLOAT);
            data.draw_float(FloatConstraints {
                min: f64::NEG_INFINITY,
                max: f64::INFINITY,
                allow_nan: true,
                width: 64,
            })?;
            data.stop_span(false);
        }
        2 => {
            data.start_span(TEXT);
            generate(text, data)?;
            data.stop_span(false);
        }
        3 => {
            is_list = true;
            data.start_span(LIST_MAP);
            data.start_span(LIST);
            let mut sizing = Collection::new(0, None);
            let mut n = 0;
            while sizing.more(data)? {
                json(data, text, level + 1, shape)?;
                n += 1;
            }
            shape.lengths.push((level, n));
            data.stop_span(false);
            data.stop_span(false);
        }
        _ => {
            data.start_span(MAP_MAP);
            data.start_span(MAP);
            let mut sizing = Collection::new(0, None);
            let mut keys: Vec<Value> = Vec::new();
            while sizing.more(data)? {
                data.start_span(TEXT);
                let key = generate(text, data)?;
                data.stop_span(false);
                if keys.contains(&key) {
                    sizing.reject(data)?;
                    continue;
                }
                let holds_list = json(data, text, level + 1, shape)?;
                if level == 0 && holds_list && key == Value::text("") {
                    shape.target = true;
                }
                keys.push(key);
            }
            shape.lengths.push((level, keys.len()));
            data.stop_span(false);
            data.stop_span(false);
        }
    }
    data.stop_span(false);
    data.stop_span(false);
    if !data.is_active() {
        return Err(StopTest);
    }
    Ok(is_list)
}

fn settings(seed: u128, test_cases: u64, max_choices: usize) -> RunSettings {
    RunSettings {
        seed,
        test_cases,
        max_choices,
        phases: Phases {
            reuse: false,
            generate: true,
            target: false,
            shrink: false,
        },
        suppress_health_checks: geist_engine::health::HealthCheck::ALL.to_vec(),
        ..RunSettings::default()
    }
}

fn report(name: &str, sizes: &mut [usize]) {
    if sizes.is_empty() {
        println!("| {name} | 0 | | | | | | | |");
        return;
    }
    sizes.sort_unstable();
    let n = sizes.len();
    let mean = sizes.iter().sum::<usize>() as f64 / n as f64;
    let q = |p: f64| sizes[((n as f64 * p) as usize).min(n - 1)];
    let at_least = |k: usize| sizes.iter().filter(|s| **s >= k).count() as f64 / n as f64;
    println!(
        "| {name} | {n} | {mean:.2} | {} | {} | {} | {} | {:.3} | {:.4} |",
        q(0.5),
        q(0.9),
        q(0.99),
        sizes[n - 1],
        at_least(4),
        at_least(30)
    );
}

fn lists() {
    let cases: [(&str, usize, Option<usize>); 4] = [
        ("list, unbounded", 0, None),
        ("list, max_size 10", 0, Some(10)),
        ("list, max_size 100", 0, Some(100)),
        ("list, min_size 5", 5, None),
    ];
    for (name, min, max) in cases {
        let mut sizes = Vec::new();
        for seed in 0..200 {
            let settings = settings(seed, 100, geist_engine::data::DEFAULT_MAX_CHOICES);
            run(&settings, &[], &mut |data| {
                if let Ok(n) = list(data, min, max) {
                    sizes.push(n);
                }
                true
            });
        }
        report(name, &mut sizes);
    }
}

fn json_runs() {
    let text = text_schema();
    let mut nodes = Vec::new();
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); 4];
    let (mut found, mut too_deep, mut total, mut choices) = (0, 0u64, 0u64, 0u64);
    let started = Instant::now();
    for seed in 0..20 {
        let settings = settings(seed, 1000, 1 << 20);
        let mut hit = false;
        run(&settings, &[], &mut |data| {
            let mut shape = Shape::default();
            let done = json(data, &text, 0, &mut shape).is_ok();
            total += 1;
            choices += data.nodes.len() as u64;
            if data.too_deep {
                too_deep += 1;
            }
            if done {
                hit |= shape.target;
                nodes.push(shape.nodes);
                for (level, n) in shape.lengths {
                    by_level[level.min(3)].push(n);
                }
            }
            true
        });
        found += usize::from(hit);
    }
    let seconds = started.elapsed().as_secs_f64();
    report("json, nodes per value", &mut nodes);
    for (level, sizes) in by_level.iter_mut().enumerate() {
        let plus = if level == 3 { "+" } else { "" };
        report(
            &format!("json, collection length, level {level}{plus}"),
            sizes,
        );
    }
    println!(
        "\njson: target shape found in {found} of 20 seeds; {total} test cases, {too_deep} hit the span depth limit, \
         {:.0} choices per test case, {seconds:.1} s",
        choices as f64 / total.max(1) as f64
    );
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    println!(
        "| distribution | values | mean | median | p90 | p99 | max | P(>= 4) | P(>= 30) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    if which != "json" {
        lists();
    }
    if which != "list" {
        json_runs();
    }
}
