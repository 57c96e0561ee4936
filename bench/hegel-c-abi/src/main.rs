//! The same frontend, hegeltest 0.51.0, on two engines behind the same C
//! ABI: libhegel (hegeltest-c 0.49.0) and geist's `libhegel_c.so`.
//!
//! Test cases per CPU-second: hegeltest loads its engine once per process,
//! so each measurement runs in a child process of this one: `--child ENGINE
//! PROPERTY N` runs one property for `N` test cases and prints its rate per
//! CPU-second of the whole process (every thread; the load is not timed),
//! then its wall-clock rate, which is not used (the machine's other load
//! distorts it). `--suite NAME=PATH` also times a test binary of
//! hegeltest 0.51.0 (`test_shrink_quality`, `test_find_quality`) whole, run
//! from `--suite-dir`. The driver alternates the engines round by round
//! (which goes first alternates too) and prints the medians and ratios.
//!
//! `LIBHEGEL_LIB_DIR` and `GEIST_LIB_DIR` name the directories holding each
//! engine's `libhegel_c.so`; every child gets one of them as
//! `HEGEL_C_LIB_DIR`. Arguments: `--test-cases N` (per run, default 20,000),
//! `--rounds N` (default 7), `--suite-rounds N` (default 3), `--only
//! PROPERTY` (i64, vec, string, state_machine; repeatable).
//! `scripts/bench-hegel-c.sh` builds everything and runs it.

use hegel::generators as gs;
use hegel::{Hegel, Settings, TestCase};
use std::cell::Cell;
use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

fn settings(n: u64) -> Settings {
    Settings::new()
        .test_cases(n)
        .seed(Some(7))
        .database(None::<String>)
}

/// A stack whose operations are checked against their inverse.
struct Stack {
    items: Vec<i64>,
}

#[hegel::state_machine]
impl Stack {
    #[rule]
    fn push(&mut self, tc: TestCase) {
        ELEMENTS.set(ELEMENTS.get() + 1);
        let x: i64 = tc.draw(gs::integers::<i64>());
        self.items.push(x);
    }

    #[rule]
    fn pop(&mut self, _: TestCase) {
        ELEMENTS.set(ELEMENTS.get() + 1);
        self.items.pop();
    }

    #[rule]
    fn push_then_pop(&mut self, tc: TestCase) {
        ELEMENTS.set(ELEMENTS.get() + 1);
        let x: i64 = tc.draw(gs::integers::<i64>());
        self.items.push(x);
        assert_eq!(self.items.pop(), Some(x));
    }
}

thread_local! {
    /// Elements of the vectors drawn so far, or rule steps the state
    /// machine ran (engines size collections and runs differently: the mean
    /// length tells how much work a test case is).
    static ELEMENTS: Cell<u64> = const { Cell::new(0) };
}

/// Runs `property` for `n` test cases; returns how many ran.
fn run(property: &str, n: u64) -> u64 {
    let runs = Cell::new(0u64);
    let count = || runs.set(runs.get() + 1);
    match property {
        "i64" => Hegel::new(|tc: TestCase| {
            let x: i64 = tc.draw(gs::integers::<i64>());
            count();
            black_box(x);
        })
        .settings(settings(n))
        .run(),
        "vec" => Hegel::new(|tc: TestCase| {
            let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()));
            count();
            ELEMENTS.set(ELEMENTS.get() + xs.len() as u64);
            black_box(xs);
        })
        .settings(settings(n))
        .run(),
        "string" => Hegel::new(|tc: TestCase| {
            let s: String = tc.draw(gs::text());
            count();
            black_box(s);
        })
        .settings(settings(n))
        .run(),
        "state_machine" => Hegel::new(|tc: TestCase| {
            count();
            hegel::stateful::machine(Stack { items: Vec::new() }).run(tc);
        })
        .settings(settings(n))
        .run(),
        other => panic!("unknown property {other}"),
    }
    runs.get()
}

/// The value following `name` on the command line, every occurrence.
fn arguments(name: &str) -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .enumerate()
        .filter(|(_, a)| *a == name)
        .filter_map(|(i, _)| args.get(i + 1).cloned())
        .collect()
}

fn argument(name: &str, default: u64) -> u64 {
    arguments(name)
        .last()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The directory `HEGEL_C_LIB_DIR` names for `engine`: both are explicit, so
/// no run falls back on a library found elsewhere.
fn lib_dir(engine: &str) -> String {
    let var = match engine {
        "geist" => "GEIST_LIB_DIR",
        _ => "LIBHEGEL_LIB_DIR",
    };
    std::env::var(var).unwrap_or_else(|_| panic!("{var} names {engine}'s libhegel_c.so"))
}

/// Test cases per CPU-second of `property` on `engine`, in a child process,
/// and the mean number of vector elements or rule steps per test case (0
/// for the other properties).
fn child(engine: &str, property: &str, n: u64) -> (f64, f64) {
    let exe = std::env::current_exe().expect("own path");
    let output = Command::new(exe)
        .args(["--child", engine, property, &n.to_string()])
        .env("HEGEL_C_LIB_DIR", lib_dir(engine))
        .output()
        .expect("child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Test cases per CPU-second, per wall-clock second, mean length.
    let figures: Vec<f64> = stdout
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    match figures[..] {
        [cpu_rate, _, mean_length] => (cpu_rate, mean_length),
        _ => panic!(
            "{engine} {property}: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// CPU seconds (user and system) of this process so far.
fn own_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// CPU seconds (user and system) of the children waited for so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// A hegeltest test binary's run on `engine`, one test at a time: wall and
/// CPU seconds, and how many of its tests passed and failed. The example
/// database is removed first (each engine would replay its own earlier
/// failures).
fn suite(engine: &str, exe: &str, dir: &str) -> (f64, f64, u64, u64) {
    let _ = std::fs::remove_dir_all(std::path::Path::new(dir).join(".hegel"));
    let cpu = children_cpu();
    let start = Instant::now();
    let output = Command::new(exe)
        .arg("--test-threads=1")
        .current_dir(dir)
        .env("HEGEL_C_LIB_DIR", lib_dir(engine))
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("test binary runs");
    let seconds = start.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu;
    let stdout = String::from_utf8_lossy(&output.stdout);
    // "test result: FAILED. 60 passed; 2 failed; ..."
    let count = |what: &str| -> u64 {
        stdout
            .lines()
            .filter(|l| l.starts_with("test result:"))
            .filter_map(|l| {
                let i = l.find(what)?;
                l[..i].split_whitespace().last()?.parse::<u64>().ok()
            })
            .sum()
    };
    (seconds, cpu, count(" passed"), count(" failed"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let (property, n) = (&args[3], args[4].parse().expect("count"));
        // Load the engine before timing: the first run pays for dlopen.
        run(property, 1);
        let cpu = own_cpu();
        let start = Instant::now();
        ELEMENTS.set(0);
        let runs = run(property, n);
        let wall = start.elapsed().as_secs_f64();
        let cpu = own_cpu() - cpu;
        // The rate per CPU-second of this process (every thread of it,
        // whatever engine runs there): the machine's other load does not
        // distort it as it does the wall-clock rate, printed second.
        let mean_length = ELEMENTS.get() as f64 / runs.max(1) as f64;
        println!("{} {} {mean_length}", runs as f64 / cpu, runs as f64 / wall);
        return;
    }
    let n = argument("--test-cases", 20_000);
    let rounds = argument("--rounds", 7).max(1);
    let suite_rounds = argument("--suite-rounds", 3).max(1);
    let suite_dir = arguments("--suite-dir").pop().unwrap_or_else(|| ".".into());
    // Each round runs both engines; the engine that goes first alternates.
    let order = |round: u64| {
        if round % 2 == 0 {
            ["libhegel", "geist"]
        } else {
            ["geist", "libhegel"]
        }
    };
    println!(
        "hegeltest 0.51.0 on libhegel (hegeltest-c 0.49.0) and on geist, alternating engines\n"
    );
    println!("| workload | libhegel 0.49.0 | geist | geist / libhegel |\n|---|---:|---:|---:|");
    let properties = [
        ("i64", "one `i64`"),
        ("vec", "a `Vec<i64>`"),
        ("string", "a `String`"),
        ("state_machine", "a state machine (3 rules)"),
    ];
    let only = arguments("--only");
    for (property, name) in properties {
        if !only.is_empty() && !only.iter().any(|o| o == property) {
            continue;
        }
        let (mut lib, mut geist) = (Vec::new(), Vec::new());
        let (mut lib_length, mut geist_length) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            for engine in order(round) {
                let (rate, length) = child(engine, property, n);
                if engine == "geist" {
                    geist.push(rate);
                    geist_length.push(length);
                } else {
                    lib.push(rate);
                    lib_length.push(length);
                }
            }
        }
        eprintln!("{property}: libhegel {lib:.0?} geist {geist:.0?}");
        let (lib_rate, geist_rate) = (median(lib.clone()), median(geist.clone()));
        println!(
            "| {name}: test cases per CPU-second ({n} per run, median of {rounds}) | {lib_rate:.0} | {geist_rate:.0} | {:.2}x |",
            geist_rate / lib_rate
        );
        if property == "vec" || property == "state_machine" {
            // The engines size unbounded collections and state machine
            // runs differently; per element or step, the work is comparable.
            let elements = |rates: &[f64], lengths: &[f64]| {
                median(rates.iter().zip(lengths).map(|(r, l)| r * l).collect())
            };
            let (lib_elements, geist_elements) =
                (elements(&lib, &lib_length), elements(&geist, &geist_length));
            let unit = if property == "vec" { "elements" } else { "rule steps" };
            println!(
                "| {name}: mean {unit} per test case | {:.1} | {:.1} | |",
                median(lib_length),
                median(geist_length)
            );
            println!(
                "| {name}: {unit} per CPU-second | {lib_elements:.0} | {geist_elements:.0} | {:.2}x |",
                geist_elements / lib_elements
            );
        }
    }
    // --suite NAME=PATH: a test binary of hegeltest 0.51.0, timed whole.
    for spec in arguments("--suite") {
        let (name, exe) = spec.split_once('=').expect("--suite NAME=PATH");
        let (mut lib, mut geist) = (Vec::new(), Vec::new());
        let mut outcomes = Vec::new();
        for round in 0..suite_rounds {
            for engine in order(round) {
                let (seconds, cpu, passed, failed) = suite(engine, exe, &suite_dir);
                outcomes.push(format!(
                    "{engine} {seconds:.1}s wall {cpu:.1}s cpu {passed} passed {failed} failed"
                ));
                let times = if engine == "geist" {
                    &mut geist
                } else {
                    &mut lib
                };
                times.push((seconds, cpu));
            }
        }
        eprintln!("{name}: {}", outcomes.join("; "));
        let wall = |v: &[(f64, f64)]| median(v.iter().map(|t| t.0).collect());
        let cpu = |v: &[(f64, f64)]| median(v.iter().map(|t| t.1).collect());
        println!(
            "| `{name}`: wall seconds (median of {suite_rounds}) | {:.1} | {:.1} | {:.2}x faster |",
            wall(&lib),
            wall(&geist),
            wall(&lib) / wall(&geist)
        );
        println!(
            "| `{name}`: CPU seconds (median of {suite_rounds}) | {:.1} | {:.1} | {:.2}x faster |",
            cpu(&lib),
            cpu(&geist),
            cpu(&lib) / cpu(&geist)
        );
    }
}
