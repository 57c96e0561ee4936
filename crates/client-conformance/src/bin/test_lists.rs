//! ListConformance: a `Vec<i64>` with size bounds, element bounds and
//! uniqueness; mode `non_basic` draws each element through a composite
//! generator (an extra span per element).

use geist::generators::{self as gs, Generator};
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    min_size: usize,
    max_size: Option<usize>,
    #[serde(default)]
    unique: bool,
    min_value: Option<i64>,
    max_value: Option<i64>,
    #[serde(default)]
    mode: String,
}

#[derive(Serialize)]
struct Metrics {
    elements: Vec<i64>,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let mut element = gs::integers::<i64>();
        if let Some(min) = p.min_value {
            element = element.min_value(min);
        }
        if let Some(max) = p.max_value {
            element = element.max_value(max);
        }
        let element = if p.mode == "non_basic" {
            gs::from_fn(move |tc| tc.draw_silent(element)).boxed()
        } else {
            element.boxed()
        };
        let mut g = gs::vecs(element).min_size(p.min_size).unique(p.unique);
        if let Some(max) = p.max_size {
            g = g.max_size(max);
        }
        let elements = tc.draw(g);
        geist_client_conformance::write_metrics(&Metrics { elements });
    })
}
