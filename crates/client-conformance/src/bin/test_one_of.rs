//! OneOfConformance: a one_of of integer ranges. In modes `basic` and
//! `map_negate` every branch has a single schema, so the one_of is one
//! `generate` of a `one_of` schema; in `filter_even` the branches are
//! filtered and the one_of is drawn piece by piece (an index, then the branch).

use geist::generators::{self as gs, BoxedGenerator, Generator};
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Range {
    min_value: i64,
    max_value: i64,
}

#[derive(Deserialize)]
struct Params {
    ranges: Vec<Range>,
    #[serde(default)]
    mode: String,
}

#[derive(Serialize)]
struct Metrics {
    value: i64,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let branches: Vec<BoxedGenerator<i64>> = p
            .ranges
            .iter()
            .map(|r| {
                let g = gs::integers::<i64>()
                    .min_value(r.min_value)
                    .max_value(r.max_value);
                match p.mode.as_str() {
                    "map_negate" => g.map(|x| -x).boxed(),
                    "filter_even" => g.filter(|x| x % 2 == 0).boxed(),
                    _ => g.boxed(),
                }
            })
            .collect();
        let value = tc.draw(gs::one_of(branches));
        geist_client_conformance::write_metrics(&Metrics { value });
    })
}
