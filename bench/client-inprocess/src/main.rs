//! In-process test cases per second for trivial properties, geist side by
//! side with hegeltest (its in-process engine, `static-engine`) in one run.
//!
//! `cargo run --release --manifest-path bench/client-inprocess/Cargo.toml`
//! prints a markdown table: for
//! each property, the median rate (test cases per CPU-second of the thread
//! running them) of several interleaved rounds of each library and the
//! ratio geist / hegeltest. Arguments: `--test-cases N`
//! (per round, default 20,000), `--rounds N` (default 7), and
//! `--geist-only` (geist's side alone, no ratio: for profiling, e.g. under
//! valgrind, where hegeltest's static engine does not run), and `--only
//! TEXT` (only the properties whose name contains TEXT, e.g. `--only Vec`).

use std::hint::black_box;
use std::time::Instant;

/// One library running one property for `n` test cases; returns test cases run.
type Runner = fn(u64, u64) -> u64;

mod geist_side {
    use geist::generators as gs;
    use geist::{Settings, TestCase, run_property};

    fn settings(n: u64, seed: u64) -> Settings {
        Settings::new()
            .test_cases(n)
            .seed(Some(seed))
            .database(None::<&str>)
    }

    pub fn one_integer(n: u64, seed: u64) -> u64 {
        let mut runs = 0;
        let result = run_property(&settings(n, seed), &mut |tc: &mut TestCase| {
            let x: i64 = tc.draw(gs::integers::<i64>());
            runs += 1;
            assert!(super::black_box(x) == x);
        });
        assert!(result.is_ok(), "{result:?}");
        runs
    }

    pub fn bounded_pair(n: u64, seed: u64) -> u64 {
        let mut runs = 0;
        let result = run_property(&settings(n, seed), &mut |tc: &mut TestCase| {
            let a: u32 = tc.draw(gs::integers::<u32>().max_value(1000));
            let b: bool = tc.draw(gs::booleans());
            runs += 1;
            super::black_box((a, b));
        });
        assert!(result.is_ok(), "{result:?}");
        runs
    }

    pub fn small_vec(n: u64, seed: u64) -> u64 {
        let mut runs = 0;
        let result = run_property(&settings(n, seed), &mut |tc: &mut TestCase| {
            let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()).max_size(10));
            runs += 1;
            assert!(super::black_box(xs.len()) <= 10);
        });
        assert!(result.is_ok(), "{result:?}");
        runs
    }
}

mod hegel_side {
    use hegel::generators as gs;
    use hegel::{Hegel, Settings, TestCase};
    use std::cell::Cell;

    fn settings(n: u64, seed: u64) -> Settings {
        Settings::new()
            .test_cases(n)
            .seed(Some(seed))
            .database(None::<String>)
    }

    pub fn one_integer(n: u64, seed: u64) -> u64 {
        let runs = Cell::new(0);
        Hegel::new(|tc: TestCase| {
            let x: i64 = tc.draw(gs::integers::<i64>());
            runs.set(runs.get() + 1);
            assert!(super::black_box(x) == x);
        })
        .settings(settings(n, seed))
        .run();
        runs.get()
    }

    pub fn bounded_pair(n: u64, seed: u64) -> u64 {
        let runs = Cell::new(0);
        Hegel::new(|tc: TestCase| {
            let a: u32 = tc.draw(gs::integers::<u32>().max_value(1000));
            let b: bool = tc.draw(gs::booleans());
            runs.set(runs.get() + 1);
            super::black_box((a, b));
        })
        .settings(settings(n, seed))
        .run();
        runs.get()
    }

    pub fn small_vec(n: u64, seed: u64) -> u64 {
        let runs = Cell::new(0);
        Hegel::new(|tc: TestCase| {
            let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()).max_size(10));
            runs.set(runs.get() + 1);
            assert!(super::black_box(xs.len()) <= 10);
        })
        .settings(settings(n, seed))
        .run();
        runs.get()
    }
}

/// Test cases per second of one round, and the test cases it ran.
/// Test cases per second of this thread's CPU time (wall-clock time where
/// `/proc/thread-self/schedstat` is unavailable), and the test cases run.
/// Both libraries run their test cases on the calling thread; a round in
/// which the process as a whole used clearly more CPU than this thread (other
/// threads doing the work) is reported on stderr.
fn rate(runner: Runner, n: u64, seed: u64) -> (f64, u64) {
    let (start, cpu, process) = (Instant::now(), thread_cpu_seconds(), process_cpu_seconds());
    let runs = runner(n, seed);
    let wall = start.elapsed().as_secs_f64();
    let seconds = match (cpu, thread_cpu_seconds()) {
        (Some(before), Some(after)) if after > before => after - before,
        _ => wall,
    };
    if let (Some(before), Some(after)) = (process, process_cpu_seconds())
        && after - before > seconds * 1.2 + 0.05
    {
        eprintln!(
            "note: the process used {:.2} CPU-seconds, this thread {seconds:.2}",
            after - before
        );
    }
    (runs as f64 / seconds, runs)
}

/// This thread's CPU time so far, in seconds (nanosecond resolution).
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 / 1e9)
}

/// The whole process' CPU time so far (user and system, all threads), in
/// seconds, at the kernel's clock-tick resolution (assumed 100 Hz).
fn process_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which may contain spaces).
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The word after `name` on the command line.
fn argument_text(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).cloned()
}

fn argument(name: &str, default: u64) -> u64 {
    argument_text(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let n = argument("--test-cases", 20_000);
    let rounds = argument("--rounds", 7).max(1);
    let geist_only = std::env::args().any(|a| a == "--geist-only");
    let only = argument_text("--only");
    let properties: [(&str, Runner, Runner); 3] = [
        ("one i64", geist_side::one_integer, hegel_side::one_integer),
        (
            "u32 in 0..=1000 and a bool",
            geist_side::bounded_pair,
            hegel_side::bounded_pair,
        ),
        (
            "Vec<i64> of at most 10",
            geist_side::small_vec,
            hegel_side::small_vec,
        ),
    ];
    println!(
        "In-process test cases per CPU-second of the running thread ({n} test cases per round, median of {rounds} rounds, interleaved)\n"
    );
    println!(
        "| property | geist | hegeltest 0.51.0 (static-engine) | geist / hegeltest | test cases per round (geist, hegeltest) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (name, ours, theirs) in properties {
        if only.as_ref().is_some_and(|only| !name.contains(only.as_str())) {
            continue;
        }
        // Warm both up (first-use set-up, page faults) outside the timing.
        rate(ours, 200, 0);
        if geist_only {
            let rates = (0..rounds).map(|round| rate(ours, n, round + 1).0).collect();
            println!("| {name} | {:.0} | | | |", median(rates));
            continue;
        }
        rate(theirs, 200, 0);
        let mut geist_rates = Vec::new();
        let mut hegel_rates = Vec::new();
        let mut counts = (0, 0);
        for round in 0..rounds {
            let (r, c) = rate(ours, n, round + 1);
            geist_rates.push(r);
            counts.0 = c;
            let (r, c) = rate(theirs, n, round + 1);
            hegel_rates.push(r);
            counts.1 = c;
        }
        let (g, h) = (median(geist_rates), median(hegel_rates));
        println!(
            "| {name} | {g:.0} | {h:.0} | {:.2} | {}, {} |",
            g / h,
            counts.0,
            counts.1
        );
    }
}
