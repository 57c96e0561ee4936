//! FloatConformance: one `f64` with bounds, exclusions and the NaN and
//! infinity options left unset when the suite says `null` (the defaults
//! must then be Hypothesis').

use geist::generators as gs;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    min_value: Option<f64>,
    max_value: Option<f64>,
    #[serde(default)]
    exclude_min: bool,
    #[serde(default)]
    exclude_max: bool,
    allow_nan: Option<bool>,
    allow_infinity: Option<bool>,
}

#[derive(Serialize)]
struct Metrics {
    value: f64,
    is_nan: bool,
    is_infinite: bool,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let mut g = gs::floats::<f64>()
            .exclude_min(p.exclude_min)
            .exclude_max(p.exclude_max);
        if let Some(min) = p.min_value {
            g = g.min_value(min);
        }
        if let Some(max) = p.max_value {
            g = g.max_value(max);
        }
        if let Some(allow) = p.allow_nan {
            g = g.allow_nan(allow);
        }
        if let Some(allow) = p.allow_infinity {
            g = g.allow_infinity(allow);
        }
        let value = tc.draw(g);
        geist_client_conformance::write_metrics(&Metrics {
            value,
            is_nan: value.is_nan(),
            is_infinite: value.is_infinite(),
        });
    })
}
