//! The contract of hegel-core's client conformance binaries, shared by the
//! binaries in `src/bin`.
//!
//! `hegel.conformance` (PyPI `hegel-core`) runs each binary with its test
//! parameters as JSON in `argv[1]` and environment variables naming where to
//! write: the binary runs one property over the wire (the server is
//! `GEIST_SERVER_COMMAND`, by default `hegel` on the `PATH`), and every test
//! case appends one JSON line of metrics (the drawn value, its length...) to
//! `CONFORMANCE_METRICS_FILE`; the server writes its own line per test case,
//! and the suite pairs them up. `CONFORMANCE_TEST_CASES` is the test case
//! count. A binary exits 0 when the run ends normally, whatever the property's
//! verdict the suite asked for.

use geist::{Settings, TestCase, Transport};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::cell::Cell;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::process::ExitCode;

thread_local! {
    /// Whether the current test case has written its metrics line.
    static WRITTEN: Cell<bool> = const { Cell::new(false) };
}

/// Why a binary could not do its job (printed, then exit status 1).
#[derive(Debug)]
pub struct ConformanceError(pub String);

impl std::fmt::Display for ConformanceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The parameters in `argv[1]`. Lone surrogate escapes (which Python's JSON
/// writes for `st.text()` draws and Rust strings cannot hold) are dropped
/// first: they only ever name characters to include or exclude, and a Rust
/// string never contains one anyway.
pub fn params<P: DeserializeOwned>() -> Result<P, ConformanceError> {
    let text = std::env::args()
        .nth(1)
        .ok_or_else(|| ConformanceError("usage: <binary> '<json params>'".into()))?;
    serde_json::from_str(&without_lone_surrogates(&text))
        .map_err(|e| ConformanceError(format!("bad params {text:?}: {e}")))
}

/// `text` with every `\uD800`-`\uDFFF` escape that is not half of a valid
/// pair removed.
pub fn without_lone_surrogates(text: &str) -> String {
    fn escape_at(chars: &[char], i: usize) -> Option<u32> {
        if chars.get(i) != Some(&'\\') || chars.get(i + 1) != Some(&'u') {
            return None;
        }
        let hex: String = chars.get(i + 2..i + 6)?.iter().collect();
        u32::from_str_radix(&hex, 16).ok()
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' && chars.get(i + 1) == Some(&'\\') {
            out.push_str("\\\\");
            i += 2;
            continue;
        }
        match escape_at(&chars, i) {
            Some(high @ 0xD800..=0xDBFF) => match escape_at(&chars, i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    out.extend(&chars[i..i + 12]);
                    i += 12;
                }
                _ => {
                    let _ = high;
                    i += 6;
                }
            },
            Some(0xDC00..=0xDFFF) => i += 6,
            _ => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// Settings for a conformance run: the suite's test case count, no
/// database, and the wire transport (`GEIST_SERVER_COMMAND`, else `hegel`).
pub fn settings() -> Settings {
    let test_cases = std::env::var("CONFORMANCE_TEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(50);
    let settings = Settings::new()
        .test_cases(test_cases)
        .database(None::<&str>)
        .name(
            std::env::args()
                .next()
                .unwrap_or_else(|| "conformance".into()),
        );
    match settings.get_transport() {
        Transport::InProcess => settings.transport(Transport::server("hegel")),
        Transport::Server(_) | Transport::Connect(_) => settings,
    }
}

/// Appends one JSON line to `CONFORMANCE_METRICS_FILE` (nothing when unset).
pub fn write_metrics<M: Serialize>(metrics: &M) {
    let Ok(path) = std::env::var("CONFORMANCE_METRICS_FILE") else {
        return;
    };
    let line = match serde_json::to_string(metrics) {
        Ok(line) => line,
        Err(e) => panic!("metrics are not JSON: {e}"),
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| writeln!(file, "{line}"));
    if let Err(e) = written {
        panic!("cannot append to CONFORMANCE_METRICS_FILE={path}: {e}");
    }
    WRITTEN.with(|w| w.set(true));
}

/// The suite pairs the client's metrics lines with the server's, one per
/// test case, and skips the pairs of test cases the server stopped (overruns,
/// rejections). A test case stopped before it wrote its line still needs
/// one: an empty object.
fn with_metrics_line(test: impl FnOnce()) {
    WRITTEN.with(|w| w.set(false));
    let outcome = catch_unwind(AssertUnwindSafe(test));
    if !WRITTEN.with(Cell::get) {
        write_metrics(&serde_json::Map::new());
    }
    if let Err(payload) = outcome {
        resume_unwind(payload);
    }
}

/// Runs `property` with parameters `P` from `argv[1]`. Exit status 0 when
/// the run completed (passing, or failing when `expect_failure`), 1 when it
/// could not run or ended otherwise.
pub fn run<P: DeserializeOwned>(
    expect_failure: bool,
    property: impl Fn(&P, &mut TestCase),
) -> ExitCode {
    let params: P = match params() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let result = geist::run_property(&settings(), &mut |tc: &mut TestCase| {
        with_metrics_line(|| property(&params, tc))
    });
    match (result, expect_failure) {
        (Ok(_), false) => ExitCode::SUCCESS,
        (Err(report), true)
            if report.contains("Minimal failing example")
                || report.contains("distinct failures") =>
        {
            ExitCode::SUCCESS
        }
        (Ok(summary), true) => {
            eprintln!("expected the property to fail; it passed: {summary}");
            ExitCode::FAILURE
        }
        (Err(report), _) => {
            eprintln!("{report}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_dropped_and_pairs_kept() {
        assert_eq!(without_lone_surrogates(r#""a\ud800b""#), r#""ab""#);
        assert_eq!(without_lone_surrogates(r#""\udc00""#), r#""""#);
        assert_eq!(
            without_lone_surrogates(r#""\ud83d\ude00""#),
            r#""\ud83d\ude00""#
        );
        assert_eq!(without_lone_surrogates(r#""\\ud800""#), r#""\\ud800""#);
        assert_eq!(without_lone_surrogates(r#""\u0041""#), r#""\u0041""#);
        let parsed: String =
            serde_json::from_str(&without_lone_surrogates(r#""x\ud800""#)).unwrap();
        assert_eq!(parsed, "x");
    }
}
