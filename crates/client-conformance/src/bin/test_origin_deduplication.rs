//! OriginDeduplicationConformance: a property that fails with the drawn
//! value in its message (`value_in_error_message`), or fails in one helper
//! reached from two call sites (`multiple_call_sites`). The failure's origin
//! is the panic location, so either way the server sees one distinct failure.

use geist::generators as gs;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    mode: String,
}

/// Nothing to measure: the suite reads the server's count of distinct
/// failures. The line is written before any draw, so test cases the server
/// stops early (overruns while shrinking) still have theirs.
#[derive(Serialize)]
struct Metrics {}

fn check_small(value: u32) {
    assert!(value < 10, "value {value} is not small");
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(true, |p: &Params, tc| {
        geist_client_conformance::write_metrics(&Metrics {});
        let value = tc.draw(gs::integers::<u32>().max_value(1000));
        match p.mode.as_str() {
            "value_in_error_message" => assert!(value < 10, "value {value} is too big"),
            _ => {
                if tc.draw(gs::booleans()) {
                    check_small(value);
                } else {
                    check_small(value + 1);
                }
            }
        }
    })
}
