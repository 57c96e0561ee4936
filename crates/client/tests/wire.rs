//! The wire transport against geist-server and against broken servers:
//! failures found and shrunk over the wire, concurrent runs sharing one
//! connection, every protocol version geist-server speaks, and a server that
//! dies, sends garbage or stays silent (a clear error, never a hang).
//!
//! geist-server is the binary `cargo test --workspace` builds next to this
//! test (`target/<profile>/geist-server`); with `cargo test -p geist` alone,
//! build it first with `cargo build -p geist-server`.

use geist::generators as gs;
use geist::{ServerCommand, Settings, TestCase, Transport, run_property};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The geist-server built beside this test binary.
fn geist_server() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/wire-<hash> -> target/<profile>/geist-server
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("geist-server"))
        .expect("the test binary lives in target/<profile>/deps");
    assert!(
        path.exists(),
        "{} does not exist: build it with `cargo build -p geist-server` \
         (`cargo test --workspace` builds it)",
        path.display()
    );
    path
}

fn server(args: &[&str]) -> ServerCommand {
    let mut command = ServerCommand::new(geist_server().to_string_lossy());
    for arg in args {
        command = command.arg(*arg);
    }
    command.timeout(Duration::from_secs(30))
}

fn settings(command: ServerCommand) -> Settings {
    Settings::new()
        .transport(Transport::Server(command))
        .database(None::<&str>)
        .seed(Some(7))
}

#[test]
fn a_failure_is_found_shrunk_and_reported_over_the_wire() {
    let report = run_property(
        &settings(server(&[]))
            .test_cases(1000)
            .name("wire::threshold"),
        &mut |tc: &mut TestCase| {
            let x = tc.draw_named("x", gs::integers::<u32>());
            let xs = tc.draw_named("xs", gs::vecs(gs::integers::<i64>()).max_size(20));
            tc.note(format!(
                "sum = {}",
                xs.iter().map(|v| i128::from(*v)).sum::<i128>()
            ));
            assert!(
                x < 1000 || xs.len() < 2,
                "x = {x} too big with {} elements",
                xs.len()
            );
        },
    )
    .expect_err("the property fails");
    assert!(report.contains("Minimal failing example:"), "{report}");
    assert!(report.contains("  x = 1000\n"), "{report}");
    assert!(report.contains("  xs = [0, 0]\n"), "{report}");
    assert!(report.contains("sum = 0"), "{report}");
    assert!(
        report.contains("x = 1000 too big with 2 elements"),
        "{report}"
    );
    assert!(report.contains("Reproduce with: GEIST_SEED=7"), "{report}");
}

#[test]
fn strings_and_structure_travel_in_every_protocol_version() {
    for version in ["0.1", "0.10", "0.13", "0.15", "0.16"] {
        let report = run_property(
            &settings(server(&["--protocol-version", version])).test_cases(300),
            &mut |tc: &mut TestCase| {
                let s = tc.draw(gs::text().max_size(10));
                let c = tc.draw(gs::characters().codec("ascii"));
                let b = tc.draw(gs::binary().max_size(5));
                let f = tc.draw(gs::floats::<f64>().min_value(-1.0).max_value(1.0));
                let o = tc.draw(gs::optional(gs::booleans()));
                let pick = tc.draw(gs::sampled_from(vec!["a", "b", "c"]));
                assert!(s.chars().count() <= 10 && c.is_ascii() && b.len() <= 5);
                assert!((-1.0..=1.0).contains(&f));
                let _ = (o, pick);
                assert!(!s.contains('Z'), "found a Z");
            },
        )
        .expect_err("some string holds a Z");
        assert!(
            report.contains("draw 1 = \"Z\""),
            "protocol {version}: {report}"
        );
    }
}

#[test]
fn concurrent_runs_share_one_connection() {
    // The server command records each start in a file, so the test can see
    // how many servers the threads started.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let starts = dir.path().join("starts");
    let script = format!(
        "echo started >> '{}'; exec '{}'",
        starts.display(),
        geist_server().display()
    );
    let command = ServerCommand::new("sh")
        .arg("-c")
        .arg(script)
        .timeout(Duration::from_secs(30));
    let threads: Vec<_> = (0..4u64)
        .map(|i| {
            let command = command.clone();
            std::thread::spawn(move || {
                let passing = run_property(
                    &settings(command.clone()).test_cases(200),
                    &mut |tc: &mut TestCase| {
                        let xs = tc.draw(gs::vecs(gs::integers::<u8>()).max_size(8));
                        assert!(xs.len() <= 8);
                    },
                );
                let failing = run_property(
                    &settings(command).test_cases(500).seed(Some(i)),
                    &mut |tc: &mut TestCase| {
                        let n = tc.draw(gs::integers::<u64>());
                        assert!(n < 100 + i, "too big");
                    },
                );
                (i, passing, failing)
            })
        })
        .collect();
    for thread in threads {
        let (i, passing, failing) = thread.join().expect("the thread finished");
        assert!(passing.is_ok(), "thread {i}: {passing:?}");
        let report = failing.expect_err("each thread's failing property fails");
        assert!(
            report.contains(&format!("draw 1 = {}\n", 100 + i)),
            "thread {i}: {report}"
        );
    }
    let started = std::fs::read_to_string(&starts).expect("the server recorded its start");
    assert_eq!(started.lines().count(), 1, "one server for all threads");
}

#[test]
fn stateful_tests_find_their_bug_over_the_wire() {
    use geist::stateful::StateMachine;
    // A counter that forgets increments past 3.
    let machine = StateMachine::new()
        .rule("increment", |state: &mut (u32, u32), _tc: &mut TestCase| {
            state.0 += 1;
            if state.0 <= 3 {
                state.1 += 1;
            }
        })
        .rule("check", |state: &mut (u32, u32), _tc: &mut TestCase| {
            assert_eq!(state.0, state.1, "the counter lost an increment");
        });
    let report = run_property(
        &settings(server(&[])).test_cases(500),
        &mut |tc: &mut TestCase| machine.run(tc, (0, 0)),
    )
    .expect_err("the lost increment is found");
    assert!(report.contains("step 4: increment()"), "{report}");
    assert!(report.contains("step 5: check()"), "{report}");
    assert!(!report.contains("step 6"), "{report}");
}

#[test]
fn usage_errors_end_the_run_with_their_message() {
    let report = run_property(&settings(server(&[])), &mut |tc: &mut TestCase| {
        let _ = tc.draw(gs::integers::<i32>().min_value(5).max_value(1));
    })
    .expect_err("min > max is a usage error");
    assert!(report.contains("invalid use of a generator"), "{report}");
    assert!(report.contains("max_value=1 < min_value=5"), "{report}");
}

fn shell(script: &str, timeout: Duration) -> ServerCommand {
    ServerCommand::new("sh")
        .arg("-c")
        .arg(script)
        .timeout(timeout)
}

fn trivial(tc: &mut TestCase) {
    let _ = tc.draw(gs::booleans());
}

#[test]
fn a_server_that_cannot_start_is_a_clear_error() {
    let report = run_property(
        &settings(ServerCommand::new("/nonexistent/hegel-server")),
        &mut trivial,
    )
    .expect_err("nothing to run");
    assert!(report.contains("cannot start the Hegel server"), "{report}");
    assert!(report.contains("/nonexistent/hegel-server"), "{report}");
}

#[test]
fn a_server_that_dies_at_once_is_reported_with_its_stderr() {
    let started = Instant::now();
    let report = run_property(
        &settings(shell(
            "echo 'fatal: no license' >&2; exit 3",
            Duration::from_secs(20),
        )),
        &mut trivial,
    )
    .expect_err("the server is gone");
    assert!(report.contains("bad handshake"), "{report}");
    assert!(report.contains("exit status: 3"), "{report}");
    assert!(report.contains("fatal: no license"), "{report}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn garbage_instead_of_packets_is_a_protocol_error() {
    let report = run_property(
        &settings(shell(
            "printf 'HTTP/1.1 400 Bad Request\\r\\n\\r\\n'; sleep 5",
            Duration::from_secs(20),
        )),
        &mut trivial,
    )
    .expect_err("not a Hegel server");
    assert!(report.contains("not Hegel packets"), "{report}");
}

#[test]
fn a_silent_server_times_out() {
    let started = Instant::now();
    let report = run_property(
        &settings(shell("sleep 30", Duration::from_millis(500))),
        &mut trivial,
    )
    .expect_err("no handshake reply");
    assert!(report.contains("bad handshake"), "{report}");
    assert!(started.elapsed() < Duration::from_secs(10), "{report}");
}

#[test]
fn a_server_killed_mid_run_ends_the_run_with_an_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pid_file = dir.path().join("pid");
    let script = format!(
        "echo $$ > '{}'; exec '{}'",
        pid_file.display(),
        geist_server().display()
    );
    let runs = AtomicU64::new(0);
    let started = Instant::now();
    let report = run_property(
        &settings(shell(&script, Duration::from_secs(20))).test_cases(10_000),
        &mut |tc: &mut TestCase| {
            let _ = tc.draw(gs::integers::<u64>());
            if runs.fetch_add(1, Ordering::Relaxed) == 20 {
                let pid = std::fs::read_to_string(&pid_file).expect("the server's pid");
                let killed = std::process::Command::new("kill")
                    .arg("-9")
                    .arg(pid.trim())
                    .status()
                    .expect("kill runs");
                assert!(killed.success());
            }
            let _ = tc.draw(gs::integers::<u64>());
        },
    )
    .expect_err("the server died");
    assert!(report.contains("exited unexpectedly"), "{report}");
    assert!(started.elapsed() < Duration::from_secs(15), "{report}");
}

#[test]
fn the_deadline_holds_over_the_wire() {
    let report = run_property(
        &settings(server(&[])).deadline(Some(Duration::from_millis(25))),
        &mut |tc: &mut TestCase| {
            let n: u8 = tc.draw(gs::integers::<u8>());
            if n >= 100 {
                std::thread::sleep(Duration::from_millis(50));
            }
        },
    )
    .expect_err("a test case over the deadline fails");
    assert!(report.contains("Deadline exceeded"), "{report}");
    assert!(report.contains("draw 1 = 100"), "{report}");
}

/// The variable naming the file the server of
/// `a_spawned_server_finishes_before_the_test_process_exits` writes last.
const EXIT_MARKER: &str = "GEIST_WIRE_TEST_EXIT_MARKER";

/// A server the client spawned has finished when the test process is gone:
/// what it does after its last reply (here, once its input ends: wait, then
/// write a file) is done. hegel-core writes its per-test-case conformance
/// metrics after replying to `mark_complete`; a process that exited at once
/// left its last line unwritten when the suite counted them (the flaky
/// OriginDeduplicationConformance). The test runs itself as a child
/// process that makes one run over the wire and exits.
#[test]
fn a_spawned_server_finishes_before_the_test_process_exits() {
    if let Ok(marker) = std::env::var(EXIT_MARKER) {
        let script = format!(
            "'{}'; sleep 1; echo finished > '{marker}'",
            geist_server().display()
        );
        let result = run_property(
            &settings(shell(&script, Duration::from_secs(30))).test_cases(20),
            &mut trivial,
        );
        assert!(result.is_ok(), "{result:?}");
        // Exits like a test binary does: through `exit`, not the end of a thread.
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let marker = dir.path().join("marker");
    let child = std::process::Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "a_spawned_server_finishes_before_the_test_process_exits",
            "--exact",
            "--test-threads",
            "1",
        ])
        .env(EXIT_MARKER, &marker)
        .env_remove("GEIST_SERVER_COMMAND")
        .env_remove("GEIST_SERVER_ADDRESS")
        .output()
        .expect("the test binary runs");
    assert!(
        child.status.success(),
        "{}\n{}",
        child.status,
        String::from_utf8_lossy(&child.stderr)
    );
    assert!(
        marker.exists(),
        "the test process exited before the server it spawned had finished"
    );
}
