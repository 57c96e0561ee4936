//! IntegerConformance: one `i64` within the optional bounds.

use geist::generators as gs;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    min_value: Option<i64>,
    max_value: Option<i64>,
}

#[derive(Serialize)]
struct Metrics {
    value: i64,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let mut g = gs::integers::<i64>();
        if let Some(min) = p.min_value {
            g = g.min_value(min);
        }
        if let Some(max) = p.max_value {
            g = g.max_value(max);
        }
        let value = tc.draw(g);
        geist_client_conformance::write_metrics(&Metrics { value });
    })
}
