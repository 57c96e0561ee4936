//! BooleanConformance (and the error-handling modes that expect one `generate`):
//! one boolean per test case.

use geist::generators as gs;
use serde::Serialize;

#[derive(Serialize)]
struct Metrics {
    value: bool,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |_: &serde_json::Value, tc| {
        let value = tc.draw(gs::booleans());
        geist_client_conformance::write_metrics(&Metrics { value });
    })
}
