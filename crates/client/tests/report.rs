//! The failure report: minimal example with every drawn value, the notes,
//! the panic message and location, a reproduce line; and quiet shrinking.

use geist::generators as gs;
use geist::{Generator, Settings, TestCase, check, run_property};
use geist_database::ExampleDatabase;
use std::process::Command;

fn settings(seed: u64) -> Settings {
    Settings::new().seed(Some(seed)).database(None::<&str>)
}

#[test]
fn report_names_draws_notes_panic_and_seed() {
    let report = run_property(
        &settings(21).name("report::sum_below_100"),
        &mut |tc: &mut TestCase| {
            let xs: Vec<i64> =
                tc.draw(gs::vecs(gs::integers::<i64>().min_value(0).max_value(1000)));
            let label = tc.draw_named("label", gs::just("fixed"));
            let sum: i64 = xs.iter().sum();
            tc.note(format!("sum = {sum}"));
            let _ = label;
            assert!(sum <= 100, "sum too large: {sum}");
        },
    )
    .expect_err("the property fails");
    assert!(report.contains("draw 1 = [101]"), "{report}");
    assert!(report.contains("label = \"fixed\""), "{report}");
    assert!(report.contains("sum = 101"), "{report}");
    assert!(report.contains("sum too large: 101"), "{report}");
    assert!(
        report.contains("panicked at crates/client/tests/report.rs:"),
        "{report}"
    );
    assert!(
        report.contains("GEIST_SEED=21 cargo test -- sum_below_100 --exact"),
        "{report}"
    );
    assert!(
        report.contains("property report::sum_below_100 failed"),
        "{report}"
    );
    // Draws and notes appear in the order they happened.
    let draw = report.find("draw 1").unwrap_or(usize::MAX);
    let note = report.find("sum = 101").unwrap_or(0);
    assert!(draw < note, "{report}");
}

#[test]
fn distinct_failures_are_reported_separately() {
    let report = run_property(&settings(22), &mut |tc: &mut TestCase| {
        let left: bool = tc.draw(gs::booleans());
        let n: u32 = tc.draw(gs::integers::<u32>().max_value(1000));
        // Two panic sites: distinct failures, each shrunk on its own (shrinking
        // one flips the boolean and meets the other).
        if left {
            assert!(n < 10, "left");
        } else {
            assert!(n < 5, "right");
        }
    })
    .expect_err("the property fails");
    assert!(report.contains("Found 2 distinct failures"), "{report}");
    assert!(
        report.contains("draw 1 = false\n  draw 2 = 5\npanicked"),
        "{report}"
    );
    assert!(
        report.contains("draw 1 = true\n  draw 2 = 10\npanicked"),
        "{report}"
    );
}

#[test]
fn passing_property_reports_counts() {
    let summary = run_property(&settings(23).test_cases(50), &mut |tc: &mut TestCase| {
        let _ = tc.draw(gs::integers::<u64>());
    })
    .expect("the property holds");
    assert_eq!(summary.valid_test_cases, 50);
    assert_eq!(summary.seed, 23);
}

#[test]
fn usage_errors_end_the_run_with_their_message() {
    let report = run_property(&settings(24), &mut |tc: &mut TestCase| {
        let _ = tc.draw(gs::integers::<u8>().min_value(5).max_value(1));
    })
    .expect_err("a usage error");
    assert!(report.contains("invalid use of a generator"), "{report}");
    assert!(report.contains("max_value=1 < min_value=5"), "{report}");
    let report = run_property(&settings(24), &mut |tc: &mut TestCase| {
        let _ = tc.draw(gs::from_regex("(unclosed"));
    })
    .expect_err("a usage error");
    assert!(report.contains("from_regex(\"(unclosed\")"), "{report}");
}

/// `property` fails the health check `check` (the report says `named`) and
/// passes `cases` test cases once that check is suppressed.
fn fails_health_check_unless_suppressed(
    seed: u64,
    check: geist::HealthCheck,
    named: &str,
    cases: u64,
    property: impl Fn(&mut TestCase),
) {
    let report = run_property(&settings(seed), &mut |tc: &mut TestCase| property(tc))
        .expect_err("a health check failure");
    assert!(report.contains(named), "{report}");
    let suppressed = settings(seed)
        .suppress_health_check([check])
        .test_cases(cases);
    let result = run_property(&suppressed, &mut |tc: &mut TestCase| property(tc));
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn rejecting_everything_fails_the_filter_health_check() {
    fails_health_check_unless_suppressed(
        25,
        geist::HealthCheck::FilterTooMuch,
        "filter",
        5,
        |tc: &mut TestCase| {
            let n: u64 = tc.draw(gs::integers::<u64>());
            tc.assume(n == 12345);
        },
    );
}

#[test]
fn slow_generation_fails_the_too_slow_health_check() {
    // Each draw takes 150 ms to generate; a slow test body would not count.
    let slow = || {
        gs::integers::<u8>().map(|x| {
            std::thread::sleep(std::time::Duration::from_millis(150));
            x
        })
    };
    fails_health_check_unless_suppressed(
        27,
        geist::HealthCheck::TooSlow,
        "too_slow",
        12,
        |tc: &mut TestCase| {
            let _: u8 = tc.draw(slow());
        },
    );
    // A slow test body with fast draws passes.
    let result = run_property(&settings(27).test_cases(12), &mut |tc: &mut TestCase| {
        let _: u8 = tc.draw(gs::integers::<u8>());
        std::thread::sleep(std::time::Duration::from_millis(150));
    });
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn test_cases_over_the_deadline_fail_and_shrink() {
    // Slow only from 100 up: the failure shrinks to the smallest slow value.
    let mut slow_from_100 = |tc: &mut TestCase| {
        let n: u8 = tc.draw(gs::integers::<u8>());
        if n >= 100 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let report = run_property(
        &settings(28).deadline(Some(std::time::Duration::from_millis(25))),
        &mut slow_from_100,
    )
    .expect_err("a test case over the deadline fails");
    assert!(report.contains("Deadline exceeded"), "{report}");
    assert!(report.contains("deadline of 25.00 ms"), "{report}");
    assert!(report.contains("draw 1 = 100"), "{report}");
    assert!(!report.contains("panicked"), "{report}");
    // No deadline by default.
    let result = run_property(&settings(28).test_cases(20), &mut slow_from_100);
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn flaky_failure_is_reported_as_such() {
    let mut calls = 0u32;
    let report = run_property(
        &settings(26).max_shrink_calls(0),
        &mut |tc: &mut TestCase| {
            // Wide enough that the choice tree is not exhausted before the
            // third call (one boolean is: two test cases cover it).
            let _: u64 = tc.draw(gs::integers::<u64>());
            calls += 1;
            assert!(calls != 3, "only the third call fails");
        },
    )
    .expect_err("the property fails once");
    assert!(report.to_lowercase().contains("flaky"), "{report}");
    assert!(report.contains("only the third call fails"), "{report}");
}

#[test]
fn same_seed_same_values() {
    let mut first = Vec::new();
    let mut second = Vec::new();
    for out in [&mut first, &mut second] {
        run_property(&settings(27).test_cases(30), &mut |tc: &mut TestCase| {
            out.push(tc.draw(gs::integers::<i64>()));
        })
        .expect("passes");
    }
    assert_eq!(first, second);
    assert!(first.iter().any(|v| *v != 0));
}

#[test]
fn check_panics_with_the_report() {
    let outcome = std::panic::catch_unwind(|| {
        check(settings(28), |tc: &mut TestCase| {
            let n: u8 = tc.draw(gs::integers::<u8>());
            assert!(n < 200);
        })
    });
    let payload = outcome.expect_err("check panics");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("draw 1 = 200"), "{message}");
    // check names the property after where it was called.
    assert!(
        message.contains("crates/client/tests/report.rs:"),
        "{message}"
    );
}

#[test]
fn database_replays_the_saved_failure_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = settings(29).database(Some(dir.path())).name("db_test");
    let property = |tc: &mut TestCase| {
        let n: u32 = tc.draw(gs::integers::<u32>());
        assert!(n < 777_777);
    };
    let first = run_property(&db, &mut { property }).expect_err("fails");
    assert!(first.contains("draw 1 = 777777"), "{first}");
    // Another seed finds it at once, from the database.
    let second = run_property(&db.clone().seed(Some(30)), &mut { property }).expect_err("fails");
    assert!(second.contains("draw 1 = 777777"), "{second}");
    assert_eq!(generated_before_shrinking(&second), 1, "{second}");
    // Once fixed, the entry is deleted.
    let fixed = run_property(&db.clone().test_cases(5), &mut |tc: &mut TestCase| {
        let _: u32 = tc.draw(gs::integers::<u32>());
    });
    assert!(fixed.is_ok());
    let database = geist_database::DirectoryDatabase::new(dir.path());
    let entries: usize = database
        .keys()
        .expect("keys")
        .iter()
        .map(|key| database.fetch(key).expect("fetch").len())
        .sum();
    assert_eq!(entries, 0);
}

/// Test cases run before shrinking, from a report's first line.
fn generated_before_shrinking(report: &str) -> u64 {
    let numbers: Vec<u64> = report
        .lines()
        .next()
        .unwrap_or("")
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    match numbers[..] {
        [total, shrinking] => total - shrinking,
        _ => u64::MAX,
    }
}

/// Run by `shrink_attempts_are_not_printed` in a child process.
#[test]
#[ignore = "run as a child process by shrink_attempts_are_not_printed"]
fn noisy_property_child() {
    check(settings(31), |tc: &mut TestCase| {
        let xs: Vec<u16> = tc.draw(gs::vecs(gs::integers::<u16>()));
        assert!(xs.len() < 4, "NOISY-MARKER {}", xs.len());
    });
}

#[test]
fn shrink_attempts_are_not_printed() {
    let exe = std::env::current_exe().expect("test binary path");
    let output = Command::new(exe)
        .args([
            "noisy_property_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run the child test");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let all = format!("{stdout}{stderr}");
    assert!(!output.status.success(), "the child fails: {all}");
    // The final panic (carrying the report) prints once; shrink attempts never.
    assert_eq!(all.matches("NOISY-MARKER").count(), 1, "{all}");
    assert!(all.contains("NOISY-MARKER 4"), "{all}");
    assert!(all.contains("draw 1 = [0, 0, 0, 0]"), "{all}");
}
