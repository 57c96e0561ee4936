//! The error-handling modes that stop a collection (StopTestOnNewCollection,
//! StopTestOnCollectionMore): a list of booleans drawn element by element
//! (the elements are a composite generator, so the list is not one `list`
//! schema), whose first command is `new_collection`.

use geist::generators as gs;
use serde::Serialize;

#[derive(Serialize)]
struct Metrics {
    length: usize,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |_: &serde_json::Value, tc| {
        let element = gs::from_fn(|tc| tc.draw_silent(gs::booleans()));
        let length = tc.draw(gs::vecs(element).max_size(5)).len();
        geist_client_conformance::write_metrics(&Metrics { length });
    })
}
