//! `geist tour` end to end: it exits 0, finds the planted bug's minimal
//! example, and prints the same thing every time (timings aside).

use std::process::{Command, Output};

fn tour(shared_data: Option<&std::path::Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_geist"));
    command.arg("tour");
    if let Some(dir) = shared_data {
        command.env("GEIST_SHARED_DATA", dir);
    }
    command.output().expect("runs geist")
}

/// The output with every `(N.NN s)` timing blanked.
fn without_timings(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = match line.rfind(" s)") {
            Some(end) => match line[..end].rfind('(') {
                Some(start) => format!("{}(_ s){}", &line[..start], &line[end + 3..]),
                None => line.to_string(),
            },
            None => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn the_tour_holds_and_is_the_same_every_time() {
    let first = tour(None);
    let stdout = String::from_utf8_lossy(&first.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        first.status.success(),
        "{}\n{stdout}\n{stderr}",
        first.status
    );
    for expected in [
        "ok   lazily IPC fixtures",
        "ok   GenVM Calldata vectors",
        "ok   Filecoin test vectors",
        "ok   correct codec",
        "fields = [Field { key: \"\", value: 2147483648 }]",
        "ok   planted bug found and shrunk to the minimal example",
        "geist tour: all checks held",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    let second = tour(None);
    assert!(second.status.success());
    assert_eq!(
        without_timings(&stdout),
        without_timings(&String::from_utf8_lossy(&second.stdout))
    );
}

#[test]
fn the_tour_fails_without_the_shared_data() {
    let empty = tempfile::tempdir().expect("temporary directory");
    let output = tour(Some(empty.path()));
    assert!(!output.status.success());
}

/// Standard output closed before the tour writes a line (`geist tour | true`):
/// the tour ends quietly with status 1, as every other command does, instead
/// of panicking in `println!`.
#[test]
fn a_closed_standard_output_ends_the_tour_quietly() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let run = Command::new(env!("CARGO_BIN_EXE_geist"))
        .arg("tour")
        .stdout(writer)
        .output()
        .expect("runs geist");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}
