//! The error-handling modes that stop a collection (StopTestOnNewCollection,
//! StopTestOnCollectionMore): a list of booleans, whose first command is
//! `new_collection`.

use geist::generators as gs;
use serde::Serialize;

#[derive(Serialize)]
struct Metrics {
    length: usize,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |_: &serde_json::Value, tc| {
        let length = tc.draw(gs::vecs(gs::booleans()).max_size(5)).len();
        geist_client_conformance::write_metrics(&Metrics { length });
    })
}
