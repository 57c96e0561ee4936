//! SampledFromConformance: one of the given integers.

use geist::generators as gs;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    options: Vec<i64>,
}

#[derive(Serialize)]
struct Metrics {
    value: i64,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let value = tc.draw(gs::sampled_from(p.options.clone()));
        geist_client_conformance::write_metrics(&Metrics { value });
    })
}
