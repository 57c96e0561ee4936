//! BinaryConformance: one byte string within the size bounds.

use geist::generators as gs;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    min_size: usize,
    max_size: Option<usize>,
}

#[derive(Serialize)]
struct Metrics {
    length: usize,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let mut g = gs::binary().min_size(p.min_size);
        if let Some(max) = p.max_size {
            g = g.max_size(max);
        }
        let length = tc.draw(g).len();
        geist_client_conformance::write_metrics(&Metrics { length });
    })
}
