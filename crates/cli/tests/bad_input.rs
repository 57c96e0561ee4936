//! The command line on broken input: every case ends in time with a clear
//! message and exit status 1 or 2, never a panic, an abort or a hang.
//!
//! Each test builds its input in a temporary directory (the shared data is
//! read, never copied into the repository) and runs the `geist` binary under a
//! 10-second deadline.

use geist_pack::data::shared_path;
use geist_vectors::payload;
use serde_json::Value;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(10);

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.status.code()
    }

    fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// Waits for a child, killing it (and failing) after the deadline.
fn finish(mut child: Child, what: &str) -> Run {
    let started = Instant::now();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = stdout.as_mut() {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = stderr.as_mut() {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits for geist") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`geist {what}` did not end within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_geist"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn geist(args: &[&str]) -> Run {
    finish(command(args).spawn().expect("runs geist"), &args.join(" "))
}

/// Asserts a refusal: status 1 or 2, the message present, no Rust debug text or panic.
fn refused(run: &Run, status: i32, message: &str) {
    let all = run.all();
    assert_eq!(run.code(), Some(status), "{all}");
    assert!(all.contains(message), "expected `{message}` in:\n{all}");
    assert!(!all.contains("panicked"), "{all}");
    assert!(!all.contains(" { name: "), "Rust debug text in:\n{all}");
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

fn transfer() -> PathBuf {
    shared_path(
        "filecoin-vectors/test-vectors/transfer/self_transfer--id-to-secp-addresses--actorsv2.json",
    )
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("reads the sample")).expect("JSON sample")
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

/// A fixture of the shared lazily suite.
fn lazily_fixture(name: &str) -> PathBuf {
    shared_path(&format!("lazily-conformance/{name}"))
}

#[test]
fn a_gzip_bomb_in_a_car_stops_at_the_limit_with_a_plain_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut vector = read_json(&transfer());
    vector["car"] = Value::String(payload::encode_base64(&payload::gzip(&vec![0u8; 8 << 20])));
    let path = dir.path().join("bomb.json");
    write_json(&path, &vector);
    let run = geist(&["vectors", "check", text(&path), "--max-car-size", "1M"]);
    refused(
        &run,
        1,
        "gzip stream inflates past the 1048576-byte limit on the CAR (raise it with --max-car-size)",
    );
    // Under the limit, the zeros are not a CAR, said in words.
    let run = geist(&["vectors", "check", text(&path), "--max-car-size", "16M"]);
    refused(&run, 1, "header is not a DAG-CBOR {roots, version} map");
}

#[test]
fn files_over_the_size_limit_are_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 4096]).unwrap();
    let limit = "larger than the 1024-byte input limit";
    for args in [
        vec!["vectors", "check", text(&big), "--max-file-size", "1K"],
        vec!["vectors", "inspect", text(&big), "--max-file-size", "1K"],
        vec!["fixtures", "check", text(&big), "--max-file-size", "1K"],
    ] {
        refused(&geist(&args), 1, limit);
    }
    for args in [
        vec!["calldata", "check", text(&big), "--max-file-size", "1K"],
        vec![
            "calldata",
            "decode",
            "--file",
            text(&big),
            "--max-file-size",
            "1K",
        ],
        vec![
            "genvm",
            "decode-result",
            "--file",
            text(&big),
            "--max-file-size",
            "1K",
        ],
        vec![
            "fixtures",
            "record",
            "--wire",
            text(&big),
            "--description",
            "d",
            "--max-file-size",
            "1K",
        ],
    ] {
        refused(&geist(&args), 2, limit);
    }
}

#[cfg(unix)]
#[test]
fn symlink_cycles_end_and_count_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("suite");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::copy(
        lazily_fixture("snapshot_minimal.json"),
        root.join("one.json"),
    )
    .unwrap();
    std::fs::copy(
        lazily_fixture("delta_sequential.json"),
        root.join("sub/two.json"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
    std::os::unix::fs::symlink("../..", root.join("sub/deeper/upup")).unwrap();
    std::os::unix::fs::symlink("../../sub", root.join("sub/deeper/again")).unwrap();
    let run = geist(&["fixtures", "check", text(&root)]);
    assert_eq!(run.code(), Some(0), "{}", run.all());
    assert!(
        run.stdout.ends_with("2 passed, 0 failed\n"),
        "{}",
        run.all()
    );

    // Links that lead back into the tree from two levels down.
    let other = tempfile::tempdir().unwrap();
    let vectors = other.path().join("vectors");
    std::fs::create_dir_all(vectors.join("sub/deeper")).unwrap();
    std::fs::copy(transfer(), vectors.join("sub/transfer.json")).unwrap();
    std::os::unix::fs::symlink("..", vectors.join("sub/up")).unwrap();
    std::os::unix::fs::symlink("../..", vectors.join("sub/deeper/upup")).unwrap();
    std::os::unix::fs::symlink("../../sub", vectors.join("sub/deeper/again")).unwrap();
    let run = geist(&["vectors", "check", text(&vectors)]);
    assert_eq!(run.code(), Some(0), "{}", run.all());
    assert!(
        run.stdout.ends_with("1 passed, 0 failed\n"),
        "{}",
        run.all()
    );
}

#[cfg(unix)]
#[test]
fn fifos_named_json_are_refused_or_skipped_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.json");
    mkfifo(&fifo);
    let special = "not a regular file (a FIFO)";
    refused(&geist(&["vectors", "check", text(&fifo)]), 1, special);
    refused(&geist(&["fixtures", "check", text(&fifo)]), 1, special);
    refused(&geist(&["calldata", "check", text(&fifo)]), 2, special);
    refused(
        &geist(&["calldata", "decode", "--file", text(&fifo)]),
        2,
        special,
    );

    // Inside a directory, the FIFO is skipped with a note and the rest is checked.
    let suite = dir.path().join("suite");
    std::fs::create_dir(&suite).unwrap();
    mkfifo(&suite.join("pipe.json"));
    std::fs::copy(
        lazily_fixture("snapshot_minimal.json"),
        suite.join("one.json"),
    )
    .unwrap();
    let run = geist(&["fixtures", "check", text(&suite)]);
    assert_eq!(run.code(), Some(0), "{}", run.all());
    assert!(run.stderr.contains(special), "{}", run.all());
    assert!(
        run.stdout.ends_with("1 passed, 0 failed\n"),
        "{}",
        run.all()
    );
    std::fs::copy(transfer(), suite.join("vector.json")).unwrap();
    std::fs::remove_file(suite.join("one.json")).unwrap();
    let run = geist(&["vectors", "check", text(&suite)]);
    assert_eq!(run.code(), Some(0), "{}", run.all());
    assert!(run.stderr.contains(special), "{}", run.all());
}

#[test]
fn a_closed_standard_output_ends_the_run_quietly() {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..3000 {
        std::fs::write(dir.path().join(format!("{index:04}.json")), b"{}").unwrap();
    }
    for args in [
        vec!["fixtures", "check", text(dir.path())],
        vec!["vectors", "check", text(dir.path())],
    ] {
        let mut child = command(&args).spawn().expect("runs geist");
        let mut stdout = child.stdout.take().expect("piped");
        let mut first = [0u8; 16];
        stdout.read_exact(&mut first).expect("some output");
        drop(stdout);
        let run = finish(child, &args.join(" "));
        assert_eq!(run.code(), Some(1), "{}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        assert!(!run.stderr.contains("Broken pipe"), "{}", run.stderr);
    }
}

/// Calldata of `levels` arrays nested in one another around an empty array.
fn nested_arrays(levels: usize) -> String {
    let inner = geist_genvm::calldata::text::parse_text("[]").unwrap();
    let empty = geist_genvm::calldata::encode(&inner);
    let outer = geist_genvm::calldata::text::parse_text("[[]]").unwrap();
    let wrapped = geist_genvm::calldata::encode(&outer);
    let prefix = &wrapped[..wrapped.len() - empty.len()];
    let mut bytes = prefix.repeat(levels);
    bytes.extend_from_slice(&empty);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn calldata_depth_is_capped_so_deep_input_cannot_overflow_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.hex");
    std::fs::write(&deep, nested_arrays(50_000)).unwrap();
    let run = finish(
        command(&["calldata", "decode", "--max-depth", "10000000", "-"])
            .stdin(std::fs::File::open(&deep).unwrap())
            .spawn()
            .unwrap(),
        "calldata decode --max-depth 10000000",
    );
    refused(&run, 2, "10000000 is not in 1..=10000");
    let run = finish(
        command(&["calldata", "decode", "--max-depth", "10000", "-"])
            .stdin(std::fs::File::open(&deep).unwrap())
            .spawn()
            .unwrap(),
        "calldata decode --max-depth 10000",
    );
    refused(&run, 2, "not canonical Calldata");
    // At the cap itself, decoding, printing and dropping fit the stack.
    std::fs::write(&deep, nested_arrays(9_999)).unwrap();
    let run = finish(
        command(&["calldata", "decode", "--max-depth", "10000", "-"])
            .stdin(std::fs::File::open(&deep).unwrap())
            .spawn()
            .unwrap(),
        "calldata decode --max-depth 10000",
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert!(run.stdout.starts_with("[[[["), "{}", &run.stdout[..40]);
}

#[test]
fn a_seed_vector_with_a_truncated_gzip_car_fails() {
    let dir = tempfile::tempdir().unwrap();
    let later = read_json(&transfer());
    let gzipped = payload::decode_base64(later["car"].as_str().unwrap(), "/car").unwrap();
    let car = payload::gunzip(&gzipped, "/car").unwrap();
    let truncated = payload::gzip(&car[..car.len() / 2]);
    let mut seed = read_json(&shared_path(
        "filecoin-vectors/seed-schema/oni-single_message.json",
    ));
    seed["car_bytes"] = Value::String(payload::encode_hex(&truncated));
    let path = dir.path().join("seed.json");
    write_json(&path, &seed);
    let run = geist(&["vectors", "check", text(&path)]);
    refused(&run, 1, "runs past the end");
    assert!(
        run.stdout.ends_with("0 passed, 1 failed\n"),
        "{}",
        run.all()
    );
}

#[test]
fn duplicate_keys_in_a_vector_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(transfer()).unwrap();
    let body = original.trim_start().strip_prefix('{').unwrap();
    let doubled = format!("{{\"class\": \"tipset\",{body}");
    let path = dir.path().join("doubled.json");
    std::fs::write(&path, doubled).unwrap();
    let run = geist(&["vectors", "check", text(&path)]);
    refused(&run, 1, "duplicate key \"class\"");
}

/// Runs geist as an unprivileged user when running as root (root reads every directory).
#[cfg(unix)]
fn geist_unprivileged(args: &[&str]) -> Option<Run> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some(geist(args));
    }
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_geist"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().ok()?;
    Some(finish(child, &args.join(" ")))
}

#[cfg(unix)]
#[test]
fn an_unreadable_subdirectory_is_reported_and_the_run_goes_on() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = dir.path().join("suite");
    std::fs::create_dir_all(root.join("closed")).unwrap();
    std::fs::copy(
        lazily_fixture("snapshot_minimal.json"),
        root.join("one.json"),
    )
    .unwrap();
    std::fs::copy(
        lazily_fixture("snapshot_minimal.json"),
        root.join("closed/two.json"),
    )
    .unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        root.join("one.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(root.join("closed"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let Some(run) = geist_unprivileged(&["fixtures", "check", text(&root)]) else {
        panic!("cannot run geist unprivileged (setpriv missing?)");
    };
    std::fs::set_permissions(root.join("closed"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run.code(), Some(1), "{}", run.all());
    assert!(run.stdout.contains("closed"), "{}", run.all());
    assert!(run.stdout.contains("Permission denied"), "{}", run.all());
    assert!(
        run.stdout.ends_with("1 passed, 1 failed\n"),
        "{}",
        run.all()
    );
}

#[test]
fn fixture_kinds_no_pack_handles_are_skipped_and_fail_with_strict() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        lazily_fixture("snapshot_minimal.json"),
        dir.path().join("a.json"),
    )
    .unwrap();
    // Another suite's fixture: no protocol_version, a kind of its own.
    std::fs::write(
        dir.path().join("b.json"),
        br#"{"description": "a collection", "kind": "Collection", "input": [1, 2]}"#,
    )
    .unwrap();
    let run = geist(&["fixtures", "check", text(dir.path())]);
    assert_eq!(run.code(), Some(0), "{}", run.all());
    assert!(run.stdout.contains("skip "), "{}", run.all());
    assert!(
        run.stdout
            .contains("[Collection]: no pack handles kind `Collection`"),
        "{}",
        run.all()
    );
    assert!(
        run.stdout.ends_with("1 passed, 0 failed, 1 skipped\n"),
        "{}",
        run.all()
    );
    let run = geist(&["fixtures", "check", "--strict", text(dir.path())]);
    refused(&run, 1, "1 fixture(s) skipped: a failure with --strict");
}

#[test]
fn the_july_2025_executor_vm_errors_decode_naming_the_version() {
    for code in [
        "validator_disagrees call 0",
        "version_too_big",
        "OOM",
        "absent",
        "runner_actions",
    ] {
        let hex: String = std::iter::once(2u8)
            .chain(code.bytes())
            .map(|b| format!("{b:02x}"))
            .collect();
        let run = geist(&["genvm", "decode-result", &hex]);
        assert_eq!(run.code(), Some(0), "{code}: {}", run.all());
        assert_eq!(
            run.stdout,
            format!("vm_error {code} (vocabulary of GenVM executor v0.1.8 (July 2025))\n")
        );
    }
}

#[test]
fn a_missing_file_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("absent.json");
    for args in [
        vec!["vectors", "check", text(&absent)],
        vec!["fixtures", "check", text(&absent)],
        vec!["calldata", "check", text(&absent)],
        vec!["calldata", "decode", "--file", text(&absent)],
    ] {
        let run = geist(&args);
        let all = run.all();
        assert!(matches!(run.code(), Some(1 | 2)), "{all}");
        assert_eq!(
            all.matches(text(&absent)).count(),
            1,
            "the path is named once in:\n{all}"
        );
    }
}
