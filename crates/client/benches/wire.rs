//! Test cases per second of the same properties in-process and over the
//! wire, against geist-server and against hegel-core, in one run.
//!
//! `cargo bench -p geist --bench wire` prints a markdown table. The servers:
//! `GEIST_BENCH_GEIST_SERVER` (default: `geist-server` built beside this
//! bench, `cargo build --release -p geist-server`) and
//! `GEIST_BENCH_HEGEL` (default: `target/client-conformance-venv/bin/hegel`,
//! which `scripts/stages/client-conformance.sh` installs); a missing server
//! is left out of the table with a note. Arguments: `--rounds N` (default 5).

use geist::generators as gs;
use geist::{ServerCommand, Settings, TestCase, Transport, run_property};
use std::hint::black_box;

mod support;
use std::time::Instant;

/// A property run for `n` test cases; returns how many ran.
type Property = fn(&Settings) -> u64;

fn one_integer(settings: &Settings) -> u64 {
    let mut runs = 0;
    let result = run_property(settings, &mut |tc: &mut TestCase| {
        let x: i64 = tc.draw(gs::integers::<i64>());
        runs += 1;
        black_box(x);
    });
    assert!(result.is_ok(), "{result:?}");
    runs
}

fn small_vec(settings: &Settings) -> u64 {
    let mut runs = 0;
    let result = run_property(settings, &mut |tc: &mut TestCase| {
        let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()).max_size(10));
        runs += 1;
        black_box(xs);
    });
    assert!(result.is_ok(), "{result:?}");
    runs
}

fn argument(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The servers to measure, with the test cases per round each gets.
fn transports() -> Vec<(String, Transport, u64)> {
    let mut out = vec![("in-process".to_string(), Transport::InProcess, 20_000)];
    let (geist_server, hegel) = support::server_paths();
    for (name, path, n) in [
        ("geist-server", geist_server, 5_000),
        ("hegel-core 0.9.0", Some(hegel), 1_000),
    ] {
        match path {
            Some(path) if path.exists() => out.push((
                name.to_string(),
                Transport::Server(ServerCommand::new(path.to_string_lossy())),
                n,
            )),
            other => eprintln!("(no {name}: {other:?} does not exist)"),
        }
    }
    out
}

fn main() {
    let rounds = argument("--rounds", 5).max(1);
    let properties: [(&str, Property); 2] = [
        ("one i64", one_integer),
        ("Vec<i64> of at most 10", small_vec),
    ];
    let transports = transports();
    println!(
        "Test cases per second, median of {rounds} rounds (rounds interleaved across transports)\n"
    );
    print!("| property |");
    for (name, _, n) in &transports {
        print!(" {name} ({n} per round) |");
    }
    println!();
    println!("| --- |{}", " ---: |".repeat(transports.len()));
    for (property_name, property) in properties {
        let mut rates = vec![Vec::new(); transports.len()];
        for round in 0..=rounds {
            for (i, (_, transport, n)) in transports.iter().enumerate() {
                let settings = Settings::new()
                    .test_cases(*n)
                    .seed(Some(round))
                    .database(None::<&str>)
                    .transport(transport.clone());
                let started = Instant::now();
                let runs = property(&settings);
                let rate = runs as f64 / started.elapsed().as_secs_f64();
                // Round 0 warms up (spawning the servers, first-use set-up).
                if round > 0 {
                    rates[i].push(rate);
                }
            }
        }
        print!("| {property_name} |");
        for r in rates {
            print!(" {:.0} |", median(r));
        }
        println!();
    }
}
