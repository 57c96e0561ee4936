//! Failures shared between processes through Redis (issue 17), with a real
//! `redis-server` started per test on a free loopback port and stopped at its
//! end. `scripts/stages/redis.sh` installs the server and runs these.
//!
//! Each test runs its workers as child processes of this test binary: the
//! test re-runs itself with `GEIST_SHARED_ROLE` set, and a test that finds the
//! variable set plays that worker instead of orchestrating.

use geist::generators as gs;
use geist::{Settings, TestCase, run_property};
use geist_database::ExampleDatabase;
use geist_database::local_server::LocalRedis;
use geist_engine::choice::ChoiceValue;
use geist_engine::database::{decode_choices, secondary_key};
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// Names the worker a child process plays.
const ROLE: &str = "GEIST_SHARED_ROLE";

/// The smallest failing value of property `a`.
const A_MINIMUM: u64 = 1000;

/// Runs one property in this process and prints what happened as a line:
/// `RESULT key=K failed=B first_failing_call=N` (N = 0: never failed).
fn run_and_report(key: &str, threshold: u64) {
    let calls = AtomicU64::new(0);
    let first_failing_call = AtomicU64::new(0);
    let settings = Settings::new().name(key).test_cases(100);
    let outcome = run_property(&settings, &mut |tc: &mut TestCase| {
        let call = calls.fetch_add(1, Ordering::Relaxed) + 1;
        let x: u64 = tc.draw(gs::integers::<u64>().min_value(0).max_value(1_000_000));
        if x >= threshold {
            let _ =
                first_failing_call.compare_exchange(0, call, Ordering::Relaxed, Ordering::Relaxed);
            panic!("{x} is at least {threshold}");
        }
    });
    if let Err(report) = &outcome
        && !report.contains(&format!("draw 1 = {threshold}"))
    {
        panic!("{key}: the failure did not shrink to {threshold}:\n{report}");
    }
    println!(
        "RESULT key={key} failed={} first_failing_call={}",
        outcome.is_err(),
        first_failing_call.load(Ordering::Relaxed)
    );
}

/// Plays the worker `role`, if this process is a worker.
fn play_worker() -> bool {
    let Ok(role) = std::env::var(ROLE) else {
        return false;
    };
    match role.as_str() {
        "a" => run_and_report("shared::a", A_MINIMUM),
        "b" => run_and_report("shared::b", 2000),
        "both" => {
            run_and_report("shared::a", A_MINIMUM);
            run_and_report("shared::b", 2000);
        }
        many => {
            // `many:W:N`: worker W runs N failing properties, printing a line each.
            let mut fields = many.split(':').skip(1);
            let worker: u64 = fields.next().and_then(|w| w.parse().ok()).expect("worker");
            let runs: u64 = fields.next().and_then(|n| n.parse().ok()).expect("runs");
            for run in 0..runs {
                // Even runs share their keys between all workers.
                let key = if run % 2 == 0 {
                    format!("shared-{run}")
                } else {
                    format!("w{worker}-{run}")
                };
                run_and_report(&key, 100 + run);
            }
        }
    }
    true
}

/// Runs `test` of this binary as a worker child playing `role`.
fn worker(test: &str, role: &str, database: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command
        .args([
            "--exact",
            test,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env("GEIST_DATABASE", database)
        .env_remove("CI")
        .env_remove("GEIST_SERVER_COMMAND")
        .env_remove("GEIST_SEED");
    command
}

/// The tests' keys among `keys` (without the engine's `.shrunk` records).
fn test_keys(keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    keys.into_iter()
        .filter(|k| !geist_engine::database::is_shrunk_key(k))
        .collect()
}

fn results(output: &Output) -> Vec<(String, bool, u64)> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "worker failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().filter_map(parse_result).collect()
}

fn parse_result(line: &str) -> Option<(String, bool, u64)> {
    // The first line follows the harness' "test NAME ... " on the same line.
    let rest = &line[line.find("RESULT key=")? + "RESULT key=".len()..];
    let (key, rest) = rest.split_once(" failed=")?;
    let (failed, call) = rest.split_once(" first_failing_call=")?;
    Some((key.to_string(), failed == "true", call.trim().parse().ok()?))
}

fn start_redis() -> LocalRedis {
    LocalRedis::start().expect("these tests need redis-server (scripts/stages/redis.sh)")
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn a_fresh_machine_replays_failures_found_by_two_others_first() {
    const TEST: &str = "a_fresh_machine_replays_failures_found_by_two_others_first";
    if play_worker() {
        return;
    }
    let redis = start_redis();
    let url = redis.url(0);
    let machines: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let local = |i: usize| machines[i].path().join("examples").display().to_string();

    // Two workers, each with its own local directory, fail on different properties.
    let a = results(
        &worker(TEST, "a", &format!("{},{url}", local(0)))
            .output()
            .unwrap(),
    );
    let b = results(
        &worker(TEST, "b", &format!("{},{url}", local(1)))
            .output()
            .unwrap(),
    );
    assert_eq!(a.len(), 1);
    assert!(a[0].1 && a[0].2 > 1, "a: {a:?}");
    assert!(b[0].1 && b[0].2 > 1, "b: {b:?}");

    // Without the shared store a new machine finds them only by searching...
    let alone = results(&worker(TEST, "both", &local(2)).output().unwrap());
    assert!(
        alone.iter().all(|(_, failed, call)| *failed && *call > 1),
        "{alone:?}"
    );

    // ...with it, both failures are the first test cases it runs.
    let fresh = local(3);
    let output = worker(TEST, "both", &format!("{fresh},readonly:{url}"))
        .output()
        .unwrap();
    let replayed = results(&output);
    assert_eq!(
        replayed,
        vec![
            ("shared::a".to_string(), true, 1),
            ("shared::b".to_string(), true, 1)
        ],
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The fresh machine keeps its own copies; the read-only store is unchanged.
    let own = geist_database::DirectoryDatabase::new(&fresh);
    assert_eq!(
        test_keys(own.keys().unwrap()),
        vec![b"shared::a".to_vec(), b"shared::b".to_vec()]
    );
    let shared = geist_database::open(&url).unwrap();
    assert_eq!(
        test_keys(shared.keys().unwrap()),
        vec![b"shared::a".to_vec(), b"shared::b".to_vec()]
    );
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn eight_workers_of_200_failing_runs_lose_no_entry() {
    const TEST: &str = "eight_workers_of_200_failing_runs_lose_no_entry";
    const WORKERS: u64 = 8;
    const RUNS: u64 = 200;
    if play_worker() {
        return;
    }
    let redis = start_redis();
    let url = redis.url(0);
    let children: Vec<_> = (0..WORKERS)
        .map(|w| {
            worker(TEST, &format!("many:{w}:{RUNS}"), &url)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let runs = results(&output);
        assert_eq!(runs.len() as u64, RUNS);
        assert!(runs.iter().all(|(_, failed, _)| *failed), "{runs:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("example database"), "{stderr}");
    }

    let shared = geist_database::open(&url).unwrap();
    let mut keys = 0;
    for run in 0..RUNS {
        let minimal = vec![ChoiceValue::Integer(i128::from(100 + run))];
        let owners: Vec<String> = if run % 2 == 0 {
            vec![format!("shared-{run}")]
        } else {
            (0..WORKERS).map(|w| format!("w{w}-{run}")).collect()
        };
        for key in owners {
            keys += 1;
            let entries: Vec<Vec<ChoiceValue>> = shared
                .fetch(key.as_bytes())
                .unwrap()
                .iter()
                .map(|e| decode_choices(e).unwrap_or_else(|err| panic!("{key}: corrupt: {err}")))
                .collect();
            // A worker's own key holds its minimal failure and nothing else;
            // a key all workers shared holds it too (and may hold a larger
            // failure another worker replayed before it was replaced).
            if run % 2 == 1 {
                assert_eq!(entries, vec![minimal.clone()], "{key}");
            } else {
                assert!(entries.contains(&minimal), "{key}: {entries:?}");
            }
            assert!(
                shared
                    .fetch(&secondary_key(key.as_bytes()))
                    .unwrap()
                    .is_empty()
            );
        }
    }
    assert_eq!(keys, RUNS / 2 + RUNS / 2 * WORKERS);
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn redis_killed_mid_run_costs_one_warning() {
    const TEST: &str = "redis_killed_mid_run_costs_one_warning";
    const RUNS: u64 = 100;
    if play_worker() {
        return;
    }
    let mut redis = start_redis();
    let local = tempfile::tempdir().unwrap();
    let setting = format!("{},{}?timeout=1", local.path().display(), redis.url(0));
    let mut child = worker(TEST, &format!("many:0:{RUNS}"), &setting)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut runs = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        runs.extend(parse_result(&line));
        if runs.len() == 20 {
            redis.kill().unwrap();
            break;
        }
    }
    runs.extend(lines.map_while(Result::ok).filter_map(|l| parse_result(&l)));
    let status = child.wait().unwrap();
    let stderr = stderr.join().unwrap();
    assert!(status.success(), "{status}\n{stderr}");

    // Every run completed and failed as it should...
    assert_eq!(runs.len() as u64, RUNS, "{stderr}");
    assert!(runs.iter().all(|(_, failed, _)| *failed));
    // ...with one warning for the whole outage...
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("example database"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains("is unavailable"), "{}", warnings[0]);
    // ...and the local part kept every failure.
    let own = geist_database::DirectoryDatabase::new(local.path());
    let keys = test_keys(own.keys().unwrap());
    assert_eq!(keys.len() as u64, RUNS, "{keys:?}");
}
