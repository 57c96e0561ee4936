//! The classic shrinking challenges (github.com/jlink/shrinking-challenge,
//! originally from the Hypothesis ECOOP 2020 artifact), written the way a
//! Hegel client drives the engine: values come from Hegel schemas through
//! `generate::generate`, client-side combinators (filter, flat_map, composite,
//! one_of, tuples) open the same spans `crates/client` opens, filters reject,
//! and a broken property concludes the test case `Interesting`.
//!
//! Each challenge runs over many seeds; for each it prints the most common
//! final (shrunk) example, how many distinct final examples there were, and
//! the test executions spent shrinking (`RunResult::shrink_calls`) as well as
//! every execution from the first failure on (the "evaluations" measure of the
//! challenge collection's Hypothesis reports).
//!
//! Environment: `GEIST_BENCH_SEEDS` (default 50) seeds per challenge,
//! `GEIST_BENCH_FIRST_SEED` (default 0) where they start,
//! `GEIST_BENCH_ONLY` (comma-separated names) to run a subset,
//! `GEIST_BENCH_FIRST` to print each seed's first failure and shrink cost,
//! `GEIST_BENCH_PASSES` to print what each shrink pass spent per challenge,
//! `GEIST_BENCH_MAX_CASES` (default 1,000,000) test cases before giving up.
//!
//! Run: `cargo bench -p geist-engine --bench shrinking_challenges`.

use geist_engine::data::{Status, StopTest, TestData, labels};
use geist_engine::generate::{Schema, generate};
use geist_engine::value::Value;
use geist_engine::{HealthCheck, RunSettings, run};
use std::collections::HashMap;
use std::time::Instant;

mod support;
use support::{env_number, map, schema, thread_cpu_nanos};

/// Span label of one filter attempt (as `crates/client` places it).
const FILTER: u64 = 0x6765_6973_7502;
/// Span label of a flat_map (as `crates/client` places it).
const FLAT_MAP: u64 = 0x6765_6973_7503;
/// Span label of a composite generator (as `crates/client` places it).
const COMPOSITE: u64 = 0x6765_6973_7505;
/// How many times a filter tries before rejecting the test case (as in the client and Hypothesis).
const FILTER_ATTEMPTS: usize = 3;

type Drawn<T> = Result<T, StopTest>;

/// What one test case of a challenge showed.
struct Outcome {
    /// The drawn value, printed like Python's `repr` so it compares with Hypothesis.
    shown: String,
    /// `Some(origin)` when the property failed (distinct origins are distinct bugs).
    failure: Option<&'static str>,
}

impl Outcome {
    fn new(shown: String, failed: bool) -> Outcome {
        Outcome {
            shown,
            failure: failed.then_some("assertion"),
        }
    }
}

/// A challenge's test function: draws a test case and checks the property.
type TestFunction = Box<dyn Fn(&mut TestData) -> Drawn<Outcome>>;

/// A shrinking challenge: its name and its test function.
struct Challenge {
    name: &'static str,
    test: TestFunction,
}

// ---------------------------------------------------------------- schemas

fn integers(min: Option<i128>, max: Option<i128>) -> Value {
    let mut entries = vec![("type", Value::text("integer"))];
    if let Some(min) = min {
        entries.push(("min_value", Value::Integer(min)));
    }
    if let Some(max) = max {
        entries.push(("max_value", Value::Integer(max)));
    }
    map(entries)
}

fn lists(elements: Value, min_size: usize, max_size: Option<usize>) -> Value {
    let mut entries = vec![
        ("type", Value::text("list")),
        ("elements", elements),
        ("min_size", Value::Integer(min_size as i128)),
    ];
    if let Some(max) = max_size {
        entries.push(("max_size", Value::Integer(max as i128)));
    }
    map(entries)
}

fn tuples(elements: Vec<Value>) -> Value {
    map(vec![
        ("type", Value::text("tuple")),
        ("elements", Value::Array(elements)),
    ])
}

fn constant(value: Value) -> Value {
    map(vec![("type", Value::text("constant")), ("value", value)])
}

// ---------------------------------------------------------------- values

fn int(v: &Value) -> i128 {
    match v {
        Value::Integer(i) => *i,
        other => panic!("expected an integer from an integer schema, got {other:?}"),
    }
}

fn items(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        other => panic!("expected an array from a list or tuple schema, got {other:?}"),
    }
}

fn ints(v: Value) -> Vec<i128> {
    items(v).iter().map(int).collect()
}

fn repr_ints(xs: &[i128]) -> String {
    let parts: Vec<String> = xs.iter().map(i128::to_string).collect();
    format!("[{}]", parts.join(", "))
}

fn repr_tuple(parts: &[String]) -> String {
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

// ---------------------------------------------------------------- client combinators

/// A client-side filter: a few attempts, each in its own span (discarded when
/// rejected), then the test case is rejected.
fn filtered<T>(
    data: &mut TestData,
    draw: impl Fn(&mut TestData) -> Drawn<T>,
    keep: impl Fn(&T) -> bool,
) -> Drawn<T> {
    for _ in 0..FILTER_ATTEMPTS {
        data.start_span(FILTER);
        let v = draw(data)?;
        if keep(&v) {
            data.stop_span(false);
            return Ok(v);
        }
        data.stop_span(true);
    }
    Err(data.reject())
}

// ---------------------------------------------------------------- the challenges

/// bound5: five lists of int16 (at most one element each, as in the original),
/// each filtered to sum below 256; the int16 (wrapping) sum of all must stay below 5 * 256.
fn bound5() -> Challenge {
    let list = schema(lists(integers(Some(-32768), Some(32767)), 0, Some(1)));
    let wrapping_sum = |xs: &[i128]| xs.iter().fold(0i16, |acc, x| acc.wrapping_add(*x as i16));
    Challenge {
        name: "bound5",
        test: Box::new(move |data| {
            data.start_span(labels::TUPLE);
            let mut parts = Vec::with_capacity(5);
            for _ in 0..5 {
                let xs = filtered(
                    data,
                    |d| Ok(ints(generate(&list, d)?)),
                    |xs: &Vec<i128>| xs.iter().sum::<i128>() < 256,
                )?;
                parts.push(xs);
            }
            data.stop_span(false);
            let all: Vec<i128> = parts.concat();
            let shown: Vec<String> = parts.iter().map(|p| repr_ints(p)).collect();
            Ok(Outcome::new(
                repr_tuple(&shown),
                i32::from(wrapping_sum(&all)) >= 5 * 256,
            ))
        }),
    }
}

/// large_union_list: a list of lists of integers has fewer than five distinct integers.
fn large_union_list() -> Challenge {
    let s = schema(lists(lists(integers(None, None), 0, None), 0, None));
    Challenge {
        name: "large_union_list",
        test: Box::new(move |data| {
            let lists: Vec<Vec<i128>> = items(generate(&s, data)?).into_iter().map(ints).collect();
            let mut distinct: Vec<i128> = lists.concat();
            distinct.sort_unstable();
            distinct.dedup();
            let shown: Vec<String> = lists.iter().map(|l| repr_ints(l)).collect();
            Ok(Outcome::new(
                format!("[{}]", shown.join(", ")),
                distinct.len() >= 5,
            ))
        }),
    }
}

/// reverse: a list of integers equals its reverse.
fn reverse() -> Challenge {
    let s = schema(lists(integers(None, None), 0, None));
    Challenge {
        name: "reverse",
        test: Box::new(move |data| {
            let xs = ints(generate(&s, data)?);
            let reversed: Vec<i128> = xs.iter().rev().copied().collect();
            Ok(Outcome::new(repr_ints(&xs), xs != reversed))
        }),
    }
}

/// An expression of the calculator challenge.
enum Expr {
    Int(i128),
    Add(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
}

impl Expr {
    fn repr(&self) -> String {
        match self {
            Expr::Int(i) => i.to_string(),
            Expr::Add(a, b) => format!("('+', {}, {})", a.repr(), b.repr()),
            Expr::Div(a, b) => format!("('/', {}, {})", a.repr(), b.repr()),
        }
    }

    /// No subterm divides by a literal 0.
    fn no_literal_zero_divisor(&self) -> bool {
        match self {
            Expr::Int(_) => true,
            Expr::Div(_, b) if matches!(**b, Expr::Int(0)) => false,
            Expr::Add(a, b) | Expr::Div(a, b) => {
                a.no_literal_zero_divisor() && b.no_literal_zero_divisor()
            }
        }
    }

    /// Evaluates with Python's floor division: `Err(true)` on division by
    /// zero, `Err(false)` on i128 overflow (Python's integers never overflow).
    fn evaluate(&self) -> Result<i128, bool> {
        match self {
            Expr::Int(i) => Ok(*i),
            Expr::Add(a, b) => a.evaluate()?.checked_add(b.evaluate()?).ok_or(false),
            Expr::Div(a, b) => {
                let (x, y) = (a.evaluate()?, b.evaluate()?);
                if y == 0 {
                    return Err(true);
                }
                let q = x.checked_div(y).ok_or(false)?;
                Ok(if x % y != 0 && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                })
            }
        }
    }
}

fn draw_expr(data: &mut TestData, branch: &Schema, leaf: &Schema) -> Drawn<Expr> {
    data.start_span(labels::ONE_OF);
    let expr = match int(&generate(branch, data)?) {
        0 => Expr::Int(int(&generate(leaf, data)?)),
        k => {
            data.start_span(labels::TUPLE);
            let a = Box::new(draw_expr(data, branch, leaf)?);
            let b = Box::new(draw_expr(data, branch, leaf)?);
            data.stop_span(false);
            if k == 1 {
                Expr::Add(a, b)
            } else {
                Expr::Div(a, b)
            }
        }
    };
    data.stop_span(false);
    Ok(expr)
}

/// calculator: an expression without a literal `x / 0` evaluates without dividing by zero.
fn calculator() -> Challenge {
    let branch = schema(integers(Some(0), Some(2)));
    let leaf = schema(integers(None, None));
    Challenge {
        name: "calculator",
        test: Box::new(move |data| {
            let e = draw_expr(data, &branch, &leaf)?;
            if !e.no_literal_zero_divisor() {
                return Err(data.reject());
            }
            match e.evaluate() {
                Ok(_) => Ok(Outcome::new(e.repr(), false)),
                Err(true) => Ok(Outcome::new(e.repr(), true)),
                // Overflow: outside what the challenge (with bignums) means; not counted.
                Err(false) => Err(data.reject()),
            }
        }),
    }
}

/// lengthlist: a length in 1..=100, then (flat_map) a list of exactly that
/// many integers in 0..=1000; its maximum is below 900.
fn lengthlist() -> Challenge {
    let length = schema(integers(Some(1), Some(100)));
    Challenge {
        name: "lengthlist",
        test: Box::new(move |data| {
            data.start_span(FLAT_MAP);
            let n = int(&generate(&length, data)?) as usize;
            let list = schema(lists(integers(Some(0), Some(1000)), n, Some(n)));
            let xs = ints(generate(&list, data)?);
            data.stop_span(false);
            let max = xs.iter().copied().max().unwrap_or(0);
            Ok(Outcome::new(repr_ints(&xs), max >= 900))
        }),
    }
}

/// difference: two positive 32-bit integers; the property holds when the
/// first is below 10 or `holds(|first - second|)`.
fn difference(name: &'static str, holds: fn(i128) -> bool) -> Challenge {
    let positive = schema(integers(Some(1), Some(i128::from(i32::MAX))));
    Challenge {
        name,
        test: Box::new(move |data| {
            let a = int(&generate(&positive, data)?);
            let b = int(&generate(&positive, data)?);
            let failed = a >= 10 && !holds((a - b).abs());
            Ok(Outcome::new(format!("({a}, {b})"), failed))
        }),
    }
}

/// A binary heap: `None` or (value, left, right).
#[derive(Clone)]
struct Heap(Option<Box<(i128, Heap, Heap)>>);

impl Heap {
    fn repr(&self) -> String {
        match &self.0 {
            None => "None".into(),
            Some(node) => format!("({}, {}, {})", node.0, node.1.repr(), node.2.repr()),
        }
    }

    fn to_list(&self) -> Vec<i128> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(h) = stack.pop() {
            if let Some(node) = &h.0 {
                out.push(node.0);
                stack.push(&node.1);
                stack.push(&node.2);
            }
        }
        out
    }

    fn merge(a: &Heap, b: &Heap) -> Heap {
        match (&a.0, &b.0) {
            (None, _) => b.clone(),
            (_, None) => a.clone(),
            (Some(x), Some(y)) => {
                let (low, high) = if x.0 <= y.0 { (x, b) } else { (y, a) };
                Heap(Some(Box::new((
                    low.0,
                    Heap::merge(&low.2, high),
                    low.1.clone(),
                ))))
            }
        }
    }

    fn wrong_to_sorted_list(&self) -> Vec<i128> {
        match &self.0 {
            None => Vec::new(),
            Some(node) => {
                let mut out = vec![node.0];
                out.extend(Heap::merge(&node.1, &node.2).to_list());
                out
            }
        }
    }
}

fn draw_heap(
    data: &mut TestData,
    bound: Option<i128>,
    size: i128,
    branch: &Schema,
    key: &Schema,
) -> Drawn<Heap> {
    data.start_span(COMPOSITE);
    let b = int(&generate(branch, data)?);
    if b == 1 || size <= 0 {
        data.stop_span(false);
        return Ok(Heap(None));
    }
    let head = match bound {
        None => int(&generate(key, data)?),
        Some(bound) => filtered(data, |d| Ok(int(&generate(key, d)?)), |n| *n >= bound)?,
    };
    let left = draw_heap(data, Some(head), size / 2, branch, key)?;
    let right = draw_heap(data, Some(head), size / 2, branch, key)?;
    data.stop_span(false);
    Ok(Heap(Some(Box::new((head, left, right)))))
}

/// binheap: a wrong heap-to-sorted-list conversion (two assertions, so two origins).
fn binheap() -> Challenge {
    let size = schema(integers(Some(0), Some(20)));
    let branch = schema(integers(Some(1), Some(8)));
    let key = schema(integers(None, None));
    Challenge {
        name: "binheap",
        test: Box::new(move |data| {
            data.start_span(COMPOSITE);
            let n = int(&generate(&size, data)?);
            let heap = draw_heap(data, None, n, &branch, &key)?;
            data.stop_span(false);
            let l1 = heap.to_list();
            let l2 = heap.wrong_to_sorted_list();
            let mut sorted_l2 = l2.clone();
            sorted_l2.sort_unstable();
            let mut sorted_l1 = l1;
            sorted_l1.sort_unstable();
            let failure = if l2 != sorted_l2 {
                Some("result is not sorted")
            } else if sorted_l1 != l2 {
                Some("result is not a permutation")
            } else {
                None
            };
            Ok(Outcome {
                shown: heap.repr(),
                failure,
            })
        }),
    }
}

/// coupling: a list of integers in 0..=10, all below its length; no two
/// positions i != j point at each other (`ls[i] == j && ls[j] == i`).
fn coupling() -> Challenge {
    let s = schema(lists(integers(Some(0), Some(10)), 0, None));
    Challenge {
        name: "coupling",
        test: Box::new(move |data| {
            let xs = ints(generate(&s, data)?);
            if xs.iter().any(|v| *v as usize >= xs.len()) {
                return Err(data.reject());
            }
            let failed = xs
                .iter()
                .enumerate()
                .any(|(i, &j)| i != j as usize && xs[j as usize] == i as i128);
            Ok(Outcome::new(repr_ints(&xs), failed))
        }),
    }
}

/// deletion: removing (the first occurrence of) `ls[i]` removes it from the list.
fn deletion() -> Challenge {
    let s = schema(tuples(vec![
        lists(integers(None, None), 0, None),
        integers(Some(0), Some(10)),
    ]));
    Challenge {
        name: "deletion",
        test: Box::new(move |data| {
            let mut parts = items(generate(&s, data)?).into_iter();
            let (Some(list), Some(i)) = (parts.next(), parts.next()) else {
                panic!("a two-element tuple schema produced fewer elements");
            };
            let xs = ints(list);
            let i = int(&i) as usize;
            if i >= xs.len() {
                return Err(data.reject());
            }
            let x = xs[i];
            let mut rest = xs.clone();
            if let Some(first) = rest.iter().position(|v| *v == x) {
                rest.remove(first);
            }
            Ok(Outcome::new(
                format!("({}, {i})", repr_ints(&xs)),
                rest.contains(&x),
            ))
        }),
    }
}

/// distinct: a list of integers has fewer than three distinct elements.
fn distinct() -> Challenge {
    let s = schema(lists(integers(None, None), 0, None));
    Challenge {
        name: "distinct",
        test: Box::new(move |data| {
            let xs = ints(generate(&s, data)?);
            let mut d = xs.clone();
            d.sort_unstable();
            d.dedup();
            Ok(Outcome::new(repr_ints(&xs), d.len() >= 3))
        }),
    }
}

/// nestedlists: a list of lists of `()` has at most ten `()` in all.
fn nestedlists() -> Challenge {
    let s = schema(lists(
        lists(constant(Value::Array(Vec::new())), 0, None),
        0,
        None,
    ));
    Challenge {
        name: "nestedlists",
        test: Box::new(move |data| {
            let lengths: Vec<usize> = items(generate(&s, data)?)
                .into_iter()
                .map(|l| items(l).len())
                .collect();
            let shown: Vec<String> = lengths
                .iter()
                .map(|n| format!("[{}]", vec!["()"; *n].join(", ")))
                .collect();
            Ok(Outcome::new(
                format!("[{}]", shown.join(", ")),
                lengths.iter().sum::<usize>() > 10,
            ))
        }),
    }
}

fn all_challenges() -> Vec<Challenge> {
    vec![
        bound5(),
        large_union_list(),
        reverse(),
        calculator(),
        lengthlist(),
        difference("difference_must_not_be_zero", |d| d != 0),
        difference("difference_must_not_be_small", |d| !(1..=4).contains(&d)),
        difference("difference_must_not_be_one", |d| d != 1),
        binheap(),
        coupling(),
        deletion(),
        distinct(),
        nestedlists(),
    ]
}

// ---------------------------------------------------------------- measuring

/// What one seed of one challenge gave.
struct SeedResult {
    /// The smallest final failing example, if a failure was found.
    shown: Option<String>,
    /// `RunResult::shrink_calls`.
    shrink_calls: u64,
    /// Test executions from the first failure on (that one included).
    after_first_failure: u64,
    /// Test executions in the whole run.
    executions: u64,
    /// CPU time of the whole run (wall time where unavailable).
    seconds: f64,
    /// What each shrink pass did.
    passes: Vec<geist_engine::shrink::PassStatistics>,
}

fn run_seed(challenge: &Challenge, seed: u128, max_cases: u64) -> SeedResult {
    // As the challenge collection runs Hypothesis: all health checks suppressed.
    let settings = RunSettings {
        seed,
        test_cases: max_cases,
        suppress_health_checks: HealthCheck::ALL.to_vec(),
        ..RunSettings::default()
    };
    let mut after_first_failure = 0u64;
    let show_first = std::env::var_os("GEIST_BENCH_FIRST").is_some();
    let cpu_before = thread_cpu_nanos();
    let started = Instant::now();
    let result = run(&settings, &[], &mut |data| {
        if after_first_failure > 0 {
            after_first_failure += 1;
        }
        if let Ok(Outcome {
            failure: Some(origin),
            shown,
        }) = (challenge.test)(data)
        {
            data.conclude(Status::Interesting, Some(origin.to_string()));
            if after_first_failure == 0 {
                after_first_failure = 1;
                if show_first {
                    eprintln!(
                        "    {} seed {seed}: first failure ({} choices): {}",
                        challenge.name,
                        data.nodes.len(),
                        shown
                    );
                }
            }
        }
        true
    });
    let seconds = match (cpu_before, thread_cpu_nanos()) {
        (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
        _ => started.elapsed().as_secs_f64(),
    };
    if result.failures.is_empty() && std::env::var_os("GEIST_BENCH_VERBOSE").is_some() {
        eprintln!(
            "    {} seed {seed}: no failure after {} test cases ({} invalid); health check: {:?}",
            challenge.name,
            result.test_cases,
            result.invalid_test_cases,
            result.health_check_failure()
        );
    }
    let shown = result.failures.first().map(|failure| {
        let mut replay = TestData::replaying(failure.choices.clone(), settings.max_choices);
        match (challenge.test)(&mut replay) {
            Ok(outcome) if outcome.failure.is_some() => outcome.shown,
            Ok(outcome) => format!("{} (did not fail on replay!)", outcome.shown),
            Err(StopTest) => "(replay stopped early!)".into(),
        }
    });
    if show_first {
        eprintln!(
            "    {} seed {seed}: {} shrink executions, {} from the first failure, final {}",
            challenge.name,
            result.shrink_calls,
            after_first_failure,
            shown.as_deref().unwrap_or("(none)")
        );
    }
    SeedResult {
        shown,
        shrink_calls: result.shrink_calls,
        after_first_failure,
        executions: result.test_cases,
        seconds,
        passes: result.shrink_statistics,
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn bench() {
    let seeds = env_number("GEIST_BENCH_SEEDS", 50);
    let first_seed = env_number("GEIST_BENCH_FIRST_SEED", 0);
    let max_cases = env_number("GEIST_BENCH_MAX_CASES", 1_000_000);
    let only: Option<Vec<String>> = std::env::var("GEIST_BENCH_ONLY")
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect());
    println!(
        "geist shrinking challenges: {seeds} seeds each (seeds {first_seed}..{}), \
         at most {max_cases} test cases per run, health checks suppressed, \
         default RunSettings otherwise\n",
        first_seed + seeds
    );
    println!(
        "| challenge | found | most common final example | share | distinct finals | \
         shrink execs mean | shrink execs median | execs from 1st failure mean | execs/run mean | CPU ms/run |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for challenge in all_challenges() {
        if only
            .as_ref()
            .is_some_and(|names| !names.iter().any(|n| n == challenge.name))
        {
            continue;
        }
        let results: Vec<SeedResult> = (first_seed..first_seed + seeds)
            .map(|seed| run_seed(&challenge, u128::from(seed), max_cases))
            .collect();
        let found: Vec<&SeedResult> = results.iter().filter(|r| r.shown.is_some()).collect();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for r in &found {
            if let Some(shown) = &r.shown {
                *counts.entry(shown.as_str()).or_default() += 1;
            }
        }
        let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then(a.0.len().cmp(&b.0.len()))
                .then(a.0.cmp(b.0))
        });
        let (top, top_count) = ranked.first().copied().unwrap_or(("(none)", 0));
        let shrink: Vec<f64> = found.iter().map(|r| r.shrink_calls as f64).collect();
        let after: Vec<f64> = found.iter().map(|r| r.after_first_failure as f64).collect();
        let executions: Vec<f64> = results.iter().map(|r| r.executions as f64).collect();
        let ms: Vec<f64> = results.iter().map(|r| r.seconds * 1000.0).collect();
        println!(
            "| {} | {}/{} | `{}` | {}/{} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |",
            challenge.name,
            found.len(),
            results.len(),
            top,
            top_count,
            found.len(),
            ranked.len(),
            mean(&shrink),
            median(&shrink),
            mean(&after),
            mean(&executions),
            mean(&ms),
        );
        if std::env::var_os("GEIST_BENCH_PASSES").is_some() {
            let mut passes: Vec<geist_engine::shrink::PassStatistics> = Vec::new();
            for r in &results {
                for p in &r.passes {
                    match passes.iter_mut().find(|q| q.name == p.name) {
                        Some(q) => q.add(p),
                        None => passes.push(p.clone()),
                    }
                }
            }
            passes.sort_by_key(|p| std::cmp::Reverse(p.calls));
            for p in passes.iter().filter(|p| p.calls > 0) {
                eprintln!(
                    "    {}: {} {:.2} test cases per run, {} improvements",
                    challenge.name,
                    p.name,
                    p.calls as f64 / results.len() as f64,
                    p.improvements
                );
            }
        }
        if std::env::var_os("GEIST_BENCH_VERBOSE").is_some() {
            for (shown, n) in ranked.iter().skip(1) {
                eprintln!("    {}: {n} x `{shown}`", challenge.name);
            }
        }
    }
}

fn main() {
    // Recursive challenges (calculator) can nest thousands of levels deep.
    let worker = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(bench);
    match worker.map(|handle| handle.join()) {
        Ok(Ok(())) => {}
        Ok(Err(_)) => std::process::exit(101),
        Err(e) => {
            eprintln!("could not start the benchmark thread: {e}");
            std::process::exit(1);
        }
    }
}
