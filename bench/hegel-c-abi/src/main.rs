//! Test cases per second of the same frontend (hegeltest 0.51.0) on two
//! engines behind the same C ABI: libhegel and geist's `libhegel_c.so`.
//!
//! hegeltest loads its engine once per process, so each measurement runs in
//! a child process of this one: `--child ENGINE PROPERTY N` runs one
//! property for `N` test cases and prints its rate (the load is not timed).
//! Without `--child`, the driver alternates the engines round by round for
//! every property and prints the median rates and their ratio.
//!
//! `GEIST_LIB_DIR` names the directory holding geist's library (the
//! libhegel run clears `HEGEL_C_LIB_DIR`, so hegeltest loads the libhegel its
//! build script baked in). Arguments: `--test-cases N` (per round, default
//! 20,000), `--rounds N` (default 7).

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
        let x: i64 = tc.draw(gs::integers::<i64>());
        self.items.push(x);
    }

    #[rule]
    fn pop(&mut self, _: TestCase) {
        self.items.pop();
    }

    #[rule]
    fn push_then_pop(&mut self, tc: TestCase) {
        let x: i64 = tc.draw(gs::integers::<i64>());
        self.items.push(x);
        assert_eq!(self.items.pop(), Some(x));
    }
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

fn argument(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn child(engine: &str, property: &str, n: u64) -> f64 {
    let exe = std::env::current_exe().expect("own path");
    let mut command = Command::new(exe);
    command.args(["--child", engine, property, &n.to_string()]);
    match engine {
        "geist" => {
            let dir = std::env::var("GEIST_LIB_DIR").expect("GEIST_LIB_DIR names geist's library");
            command.env("HEGEL_C_LIB_DIR", dir);
        }
        _ => {
            command.env_remove("HEGEL_C_LIB_DIR");
        }
    }
    let output = command.output().expect("child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout.trim().parse().unwrap_or_else(|_| {
        panic!(
            "{engine} {property}: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let (property, n) = (&args[3], args[4].parse().expect("count"));
        // Load the engine before timing: the first run pays for dlopen.
        run(property, 1);
        let start = Instant::now();
        let runs = run(property, n);
        println!("{}", runs as f64 / start.elapsed().as_secs_f64());
        return;
    }
    let n = argument("--test-cases", 20_000);
    let rounds = argument("--rounds", 7).max(1);
    println!(
        "hegeltest 0.51.0 on two engines: test cases per second ({n} per round, median of {rounds} interleaved rounds)\n"
    );
    println!("| property | libhegel 0.49.0 | geist | ratio |");
    println!("|---|---:|---:|---:|");
    let properties = [
        ("i64", "one `i64`"),
        ("vec", "a `Vec<i64>`"),
        ("string", "a `String`"),
        ("state_machine", "a state machine (3 rules)"),
    ];
    for (property, name) in properties {
        let (mut lib, mut geist) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            lib.push(child("libhegel", property, n));
            geist.push(child("geist", property, n));
        }
        let (lib, geist) = (median(lib), median(geist));
        println!(
            "| {name} | {:.0} | {:.0} | {:.2}x |",
            lib,
            geist,
            geist / lib
        );
    }
}
