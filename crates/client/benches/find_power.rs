//! Find power: how often each engine finds a planted bug within 100 test cases.
//!
//! Every property plants one bug: a condition on the drawn values (two equal
//! values, a boundary, a rare combination, a long run of one rule, ...) under
//! which it panics with a marker naming the bug. A run counts as *found* only
//! if the property saw its planted condition hold and the run's failure report
//! carries that property's marker: another failure (a health check, a flaky
//! report, a panic elsewhere) counts as not found and is tallied as an error.
//!
//! Each property runs `--runs` times (default 100) with 100 test cases, no
//! example database and a different seed per run, on each engine through the
//! same client (geist's own, `geist::run_property`): geist-server and
//! hegel-core over the wire, and geist in process. Prints a markdown table.
//!
//! ```text
//! cargo bench -p geist --bench find_power -- [--runs N] [--only SUBSTRING]
//!     [--engines geist-server,hegel-core,in-process]
//! ```
//!
//! The servers: `GEIST_BENCH_GEIST_SERVER` (default: `geist-server` beside
//! this bench, `cargo build --release -p geist-server`) and
//! `GEIST_BENCH_HEGEL` (default: `target/client-conformance-venv/bin/hegel`,
//! which `scripts/bench-find-power.sh` installs). A missing server is left
//! out of the table with a note. `scripts/bench-find-power.sh` does all of it.

use geist::generators::{self as gs, Generator};
use geist::stateful::StateMachine;
use geist::{ServerCommand, Settings, TestCase, Transport, Verbosity, run_property};
use std::collections::HashSet;

mod support;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Set when a property's planted condition held in some test case of the current run.
static HIT: AtomicBool = AtomicBool::new(false);
/// The start of every planted panic's message; the property's name follows.
const MARKER: &str = "planted bug found: ";

/// Fails the test case (the planted bug) when `condition` holds.
fn bug(name: &str, condition: bool) {
    if condition {
        HIT.store(true, Ordering::SeqCst);
        panic!("{MARKER}{name}");
    }
}

/// One planted-bug property.
struct Property {
    name: &'static str,
    /// What kind of bug it is (and, for hegel-cpp's, the test it follows).
    kind: &'static str,
    test: fn(&mut TestCase, &'static str),
}

fn codepoints(s: &str) -> usize {
    s.chars().count()
}

fn properties() -> Vec<Property> {
    vec![
        // Equal values at two positions.
        Property {
            name: "duplicate_tuples_in_list",
            kind: "equal values (hegeltest test_duplicate_tuples_in_list)",
            test: |tc, name| {
                let xs: Vec<(i64, i64)> = tc.draw(
                    gs::vecs((
                        gs::integers::<i64>().min_value(0).max_value(184),
                        gs::integers::<i64>().min_value(0).max_value(184),
                    ))
                    .max_size(10),
                );
                let distinct: HashSet<_> = xs.iter().collect();
                bug(name, distinct.len() < xs.len());
            },
        },
        Property {
            name: "equal_large_i64_pair",
            kind: "equal values, abs(x) > 1000",
            test: |tc, name| {
                let a: i64 = tc.draw(gs::integers::<i64>());
                let b: i64 = tc.draw(gs::integers::<i64>());
                bug(name, a == b && a.unsigned_abs() > 1000);
            },
        },
        Property {
            name: "same_int_twice",
            kind: "equal values (hegel-cpp FindCollections.CanProduceTheSameIntTwice)",
            test: |tc, name| {
                let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()));
                let distinct: HashSet<_> = xs.iter().collect();
                bug(name, distinct.len() < xs.len());
            },
        },
        Property {
            name: "value_three_times",
            kind: "equal values at three positions, abs(x) > 100",
            test: |tc, name| {
                let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()).max_size(20));
                bug(
                    name,
                    xs.iter().any(|x| {
                        x.unsigned_abs() > 100 && xs.iter().filter(|y| *y == x).count() >= 3
                    }),
                );
            },
        },
        Property {
            name: "equal_floats_nonzero",
            kind: "equal values, floats",
            test: |tc, name| {
                let a: f64 = tc.draw(gs::floats::<f64>().allow_nan(false));
                let b: f64 = tc.draw(gs::floats::<f64>().allow_nan(false));
                bug(name, a == b && a.abs() > 1.0 && a.is_finite());
            },
        },
        // Equal strings.
        Property {
            name: "long_duplicate_strings",
            kind: "equal strings (hegel-cpp FindStrings.LongDuplicatesStrings)",
            test: |tc, name| {
                let (a, b): (String, String) = tc.draw((gs::text(), gs::text()));
                bug(name, codepoints(&a) >= 5 && a == b);
            },
        },
        Property {
            name: "duplicate_string_in_list",
            kind: "equal strings in a list, 3+ code points",
            test: |tc, name| {
                let xs: Vec<String> = tc.draw(gs::vecs(gs::text()).max_size(20));
                let long: Vec<&String> = xs.iter().filter(|s| codepoints(s) >= 3).collect();
                let distinct: HashSet<_> = long.iter().collect();
                bug(name, distinct.len() < long.len());
            },
        },
        // Large values in wide ranges.
        Property {
            name: "above_9000_in_0_10000",
            kind: "large value, narrow-ish range",
            test: |tc, name| {
                let x: i64 = tc.draw(gs::integers::<i64>().min_value(0).max_value(10_000));
                bug(name, x > 9_000);
            },
        },
        Property {
            name: "upper_half_of_0_2p40",
            kind: "large value, wide range",
            test: |tc, name| {
                let x: i64 = tc.draw(gs::integers::<i64>().min_value(0).max_value(1 << 40));
                bug(name, x >= 1 << 39);
            },
        },
        Property {
            name: "really_large_i64",
            kind: "large value (hegel-cpp FindIntegers.CanOccasionallyBeReallyLarge)",
            test: |tc, name| {
                let x: i64 = tc.draw(gs::integers::<i64>());
                bug(name, x >= i64::MAX / 2);
            },
        },
        Property {
            name: "often_small_not_that_small",
            kind: "mid-sized value (hegel-cpp FindIntegers.IntegersAreOftenSmallButNotThatSmall)",
            test: |tc, name| {
                let x: i64 = tc.draw(gs::integers::<i64>());
                bug(name, (50..=255).contains(&x.unsigned_abs()));
            },
        },
        // Boundaries.
        Property {
            name: "i64_min",
            kind: "boundary",
            test: |tc, name| {
                let x: i64 = tc.draw(gs::integers::<i64>());
                bug(name, x == i64::MIN);
            },
        },
        Property {
            name: "i64_max_in_list",
            kind: "boundary in a list",
            test: |tc, name| {
                let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()).max_size(5));
                bug(name, xs.contains(&i64::MAX));
            },
        },
        Property {
            name: "u32_max",
            kind: "boundary u32::MAX, with a second value",
            test: |tc, name| {
                let x: u32 = tc.draw(gs::integers::<u32>());
                let y: bool = tc.draw(gs::booleans());
                bug(name, x == u32::MAX && y);
            },
        },
        Property {
            name: "top_of_0_2p40",
            kind: "boundary region: the top 2^30 of 0..=2^40",
            test: |tc, name| {
                let x: i64 = tc.draw(gs::integers::<i64>().min_value(0).max_value(1 << 40));
                bug(name, x > (1 << 40) - (1 << 30));
            },
        },
        Property {
            name: "float_nan",
            kind: "float special (hegel-cpp FindFloats.Nan)",
            test: |tc, name| {
                let x: f64 = tc.draw(gs::floats::<f64>());
                bug(name, x.is_nan());
            },
        },
        Property {
            name: "float_negative_infinity",
            kind: "float special (hegel-cpp FindFloats.NegativeInfinity)",
            test: |tc, name| {
                let x: f64 = tc.draw(gs::floats::<f64>());
                bug(name, x == f64::NEG_INFINITY);
            },
        },
        Property {
            name: "float_negative_zero",
            kind: "float special -0.0",
            test: |tc, name| {
                let x: f64 = tc.draw(gs::floats::<f64>());
                bug(name, x == 0.0 && x.is_sign_negative());
            },
        },
        Property {
            name: "float_subnormal",
            kind: "float special: subnormal",
            test: |tc, name| {
                let x: f64 = tc.draw(gs::floats::<f64>());
                bug(name, x.is_subnormal());
            },
        },
        Property {
            name: "float_max_in_list",
            kind: "float boundary f64::MAX in a list",
            test: |tc, name| {
                let xs: Vec<f64> = tc.draw(gs::vecs(gs::floats::<f64>()).max_size(5));
                bug(name, xs.iter().any(|x| x.abs() == f64::MAX));
            },
        },
        Property {
            name: "float_inversion_imperfect",
            kind: "float arithmetic (hegel-cpp FindFloats.InversionIsImperfect)",
            test: |tc, name| {
                let x: f64 = tc.draw(gs::floats::<f64>());
                bug(name, x != 0.0 && x.is_finite() && x * (1.0 / x) != 1.0);
            },
        },
        Property {
            name: "float_bounds_in_unit",
            kind: "float bound 1.0 of 0.0..=1.0, then 0.0",
            test: |tc, name| {
                let x: f64 = tc.draw(gs::floats::<f64>().min_value(0.0).max_value(1.0));
                let y: f64 = tc.draw(gs::floats::<f64>().min_value(0.0).max_value(1.0));
                bug(name, x == 1.0 && y == 0.0);
            },
        },
        // Rare combinations.
        Property {
            name: "three_flags_and_a_digit",
            kind: "rare combination (1 in 80)",
            test: |tc, name| {
                let (a, b, c): (bool, bool, bool) =
                    tc.draw((gs::booleans(), gs::booleans(), gs::booleans()));
                let d: u8 = tc.draw(gs::integers::<u8>().min_value(0).max_value(9));
                bug(name, a && b && c && d == 7);
            },
        },
        Property {
            name: "nibble_bounds_pair",
            kind: "rare combination of bounds: (15, 0) in 0..=15",
            test: |tc, name| {
                let (a, b): (u8, u8) = tc.draw((
                    gs::integers::<u8>().max_value(15),
                    gs::integers::<u8>().max_value(15),
                ));
                bug(name, a == 15 && b == 0);
            },
        },
        // Orderings.
        Property {
            name: "sorted_list_of_4",
            kind: "ordering: strictly increasing, 4+ elements",
            test: |tc, name| {
                let xs: Vec<u8> = tc.draw(gs::vecs(gs::integers::<u8>()).max_size(20));
                bug(name, xs.len() >= 4 && xs.windows(2).all(|w| w[0] < w[1]));
            },
        },
        Property {
            name: "unsorted_after_sort_bug",
            kind: "ordering: a sort that drops the last swap (4+ elements, reversed pair at the end)",
            test: |tc, name| {
                let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()).max_size(20));
                bug(
                    name,
                    xs.len() >= 4
                        && xs[..xs.len() - 1].windows(2).all(|w| w[0] <= w[1])
                        && xs[xs.len() - 2] > xs[xs.len() - 1],
                );
            },
        },
        // State machines needing long runs of one rule.
        Property {
            name: "run_of_6_increments",
            kind: "state machine: 6 increments in a row (3 rules)",
            test: |tc, name| {
                let machine = StateMachine::new()
                    .rule("increment", |s: &mut (u32, u32), _tc: &mut TestCase| {
                        s.0 += 1;
                        s.1 = s.1.max(s.0);
                    })
                    .rule("read", |s, _tc| s.0 = 0)
                    .rule("write", |s, _tc| s.0 = 0)
                    .invariant("run", move |s| bug(name, s.1 >= 6));
                machine.run(tc, (0, 0));
            },
        },
        Property {
            name: "stack_depth_8",
            kind: "state machine: stack of 8 (push, pop, clear)",
            test: |tc, name| {
                let machine = StateMachine::new()
                    .rule("push", |s: &mut Vec<u8>, tc: &mut TestCase| {
                        let x = tc.draw(gs::integers::<u8>());
                        s.push(x);
                    })
                    .rule_when(
                        "pop",
                        |s| !s.is_empty(),
                        |s, _tc| {
                            s.pop();
                        },
                    )
                    .rule("clear", |s, _tc| s.clear())
                    .invariant("depth", move |s| bug(name, s.len() >= 8));
                machine.run(tc, Vec::new());
            },
        },
        // hegel-cpp 0.2.0's Find* families (run there with 1,000 test cases).
        Property {
            name: "cpp_sampled_from_large_number_can_mix",
            kind: "hegel-cpp FindCollections.SampledFromLargeNumberCanMix",
            test: |tc, name| {
                let items: Vec<i64> = (0..50).collect();
                let xs: Vec<i64> = tc.draw(gs::vecs(gs::sampled_from(items)).min_size(50));
                let distinct: HashSet<_> = xs.iter().collect();
                bug(name, distinct.len() >= 25);
            },
        },
        Property {
            name: "cpp_long_lists",
            kind: "hegel-cpp FindCollections.CanProduceLongLists, 30+ elements",
            test: |tc, name| {
                let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()));
                bug(name, xs.len() >= 30);
            },
        },
        Property {
            name: "cpp_subset_of_ten_empty",
            kind: "hegel-cpp FindCollections.SubsetOfTenIsSometimesEmpty, after a full set",
            test: |tc, name| {
                let a: std::collections::BTreeSet<i64> = tc.draw(gs::btreesets(
                    gs::integers::<i64>().min_value(1).max_value(10),
                ));
                let b: std::collections::BTreeSet<i64> = tc.draw(gs::btreesets(
                    gs::integers::<i64>().min_value(1).max_value(10),
                ));
                bug(name, a.len() >= 5 && b.is_empty());
            },
        },
        Property {
            name: "cpp_long_strings_no_ascii",
            kind: "hegel-cpp FindStrings.CanProduceLongStringsWithNoAscii",
            test: |tc, name| {
                let x: String = tc.draw(gs::text().min_size(5));
                bug(name, !x.is_empty() && x.bytes().all(|b| b > 127));
            },
        },
        Property {
            name: "cpp_multiline_unstripped",
            kind: "hegel-cpp FindStrings.CanProduceMultiLineStrings and unstripped",
            test: |tc, name| {
                let x: String = tc.draw(gs::text());
                bug(
                    name,
                    x.contains('\n') && x.trim() != x && x.chars().any(|c| c.is_alphanumeric()),
                );
            },
        },
        Property {
            name: "cpp_one_of_map_deepest",
            kind: "hegel-cpp FindOneOfMap.Reaches(32)",
            test: |tc, name| {
                let just = |v: i64| gs::just(v).boxed();
                let g = gs::one_of(vec![
                    just(1),
                    gs::one_of(vec![
                        gs::one_of(vec![just(2), just(3)]).map(|x| x * 2).boxed(),
                        gs::one_of(vec![
                            gs::one_of(vec![just(4), just(5)]).map(|x| x * 2).boxed(),
                            gs::one_of(vec![just(6), just(7), just(8)])
                                .map(|x| x * 2)
                                .boxed(),
                        ])
                        .map(|x| x * 2)
                        .boxed(),
                    ])
                    .boxed(),
                ]);
                let x: i64 = tc.draw(g);
                let y: i64 = tc.draw(gs::integers::<i64>().min_value(0).max_value(3));
                bug(name, x == 32 && y == 3);
            },
        },
        Property {
            name: "cpp_one_of_filter_six",
            kind: "hegel-cpp FindOneOfFilter.Reaches(6), twice",
            test: |tc, name| {
                let just = |v: i64| gs::just(v).boxed();
                let g = || {
                    gs::one_of(vec![
                        just(0),
                        just(1),
                        gs::one_of(vec![
                            just(2),
                            just(3),
                            gs::one_of(vec![
                                just(4),
                                just(5),
                                gs::one_of(vec![just(6), just(7)]).boxed(),
                            ])
                            .boxed(),
                        ])
                        .boxed(),
                    ])
                    .filter(|x| x % 2 == 0)
                };
                let x: i64 = tc.draw(g());
                let y: i64 = tc.draw(g());
                bug(name, x == 6 && y == 6);
            },
        },
    ]
}

/// An engine column: its name and transport.
struct Engine {
    name: String,
    transport: Transport,
}

fn engines(wanted: &[String]) -> Vec<Engine> {
    let (geist_server, hegel) = support::server_paths();
    let mut out = Vec::new();
    for name in wanted {
        match name.as_str() {
            "in-process" => out.push(Engine {
                name: name.clone(),
                transport: Transport::InProcess,
            }),
            "geist-server" | "hegel-core" => {
                let path = if name == "geist-server" {
                    geist_server.clone()
                } else {
                    Some(hegel.clone())
                };
                match path {
                    Some(path) if path.exists() => out.push(Engine {
                        name: name.clone(),
                        transport: Transport::Server(ServerCommand::new(path.to_string_lossy())),
                    }),
                    other => eprintln!("(no {name}: {other:?} does not exist)"),
                }
            }
            other => eprintln!("(unknown engine {other}: geist-server, hegel-core, in-process)"),
        }
    }
    out
}

fn argument(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// A seed per property and run, the same for every engine.
fn seed(property: &str, run: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in property.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash ^ run.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 1_000_000_000_000
}

/// Runs one property once; whether the planted bug was found, and whether
/// the run ended in some other error.
fn run_once(property: &Property, engine: &Engine, seed: u64) -> (bool, Option<String>) {
    let settings = Settings::new()
        .test_cases(100)
        .seed(Some(seed))
        .database(None::<&str>)
        .verbosity(Verbosity::Quiet)
        .name(property.name)
        .transport(engine.transport.clone());
    HIT.store(false, Ordering::SeqCst);
    let test = property.test;
    let name = property.name;
    let result = run_property(&settings, &mut |tc: &mut TestCase| test(tc, name));
    let hit = HIT.load(Ordering::SeqCst);
    match result {
        Ok(_) => (false, None),
        Err(report) if hit && report.contains(&format!("{MARKER}{name}")) => (true, None),
        Err(report) => (false, Some(report)),
    }
}

fn main() {
    let runs: u64 = argument("--runs")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let only = argument("--only");
    let wanted: Vec<String> = argument("--engines")
        .unwrap_or_else(|| "geist-server,hegel-core,in-process".to_string())
        .split(',')
        .map(str::to_string)
        .collect();
    let engines = engines(&wanted);
    // Keep panics of planted bugs off the terminal.
    std::panic::set_hook(Box::new(|_| {}));
    println!(
        "Runs (of {runs}, 100 test cases each, no database, a seed per run) that found the planted bug\n"
    );
    print!("| property | kind |");
    for engine in &engines {
        print!(" {} |", engine.name);
    }
    println!();
    println!("| --- | --- |{}", " ---: |".repeat(engines.len()));
    let mut totals = vec![0u64; engines.len()];
    let mut seconds = vec![0f64; engines.len()];
    for property in properties() {
        if only.as_deref().is_some_and(|o| !property.name.contains(o)) {
            continue;
        }
        print!("| {} | {} |", property.name, property.kind);
        for (i, engine) in engines.iter().enumerate() {
            let started = Instant::now();
            let mut found = 0;
            let mut errors = 0;
            let mut first_error = None;
            for run in 0..runs {
                let (hit, error) = run_once(&property, engine, seed(property.name, run));
                found += u64::from(hit);
                if let Some(error) = error {
                    errors += 1;
                    first_error.get_or_insert(error);
                }
            }
            seconds[i] += started.elapsed().as_secs_f64();
            totals[i] += found;
            if errors > 0 {
                print!(" {found} ({errors} errors) |");
                if let Some(error) = first_error {
                    let line = error.lines().take(3).collect::<Vec<_>>().join(" / ");
                    eprintln!(
                        "{} on {}: {errors} errors, first: {line}",
                        property.name, engine.name
                    );
                }
            } else {
                print!(" {found} |");
            }
            use std::io::Write;
            let _ = std::io::stdout().flush();
        }
        println!();
    }
    print!("| **total** | |");
    for total in &totals {
        print!(" **{total}** |");
    }
    println!();
    for (engine, seconds) in engines.iter().zip(seconds) {
        println!("\n{}: {seconds:.0} s wall", engine.name);
    }
}
