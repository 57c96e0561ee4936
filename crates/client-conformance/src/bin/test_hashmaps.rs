//! DictConformance: a `HashMap` with integer or string keys and bounded
//! integer values; mode `non_basic` draws keys and values through composite
//! generators.

use geist::generators::{self as gs, BoxedGenerator, Generator};
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    min_size: usize,
    max_size: usize,
    key_type: String,
    min_key: i32,
    max_key: i32,
    min_value: i32,
    max_value: i32,
    #[serde(default)]
    mode: String,
}

#[derive(Serialize)]
struct Metrics {
    size: usize,
    min_key: Option<i32>,
    max_key: Option<i32>,
    min_value: Option<i32>,
    max_value: Option<i32>,
}

/// `g`, or `g` behind a composite generator in mode `non_basic`.
fn shaped<T: std::fmt::Debug + 'static>(
    g: impl Generator<Output = T> + Send + Sync + Clone + 'static,
    mode: &str,
) -> BoxedGenerator<T> {
    if mode == "non_basic" {
        gs::from_fn(move |tc| tc.draw_silent(g.clone())).boxed()
    } else {
        g.boxed()
    }
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let values = shaped(
            gs::integers::<i32>()
                .min_value(p.min_value)
                .max_value(p.max_value),
            &p.mode,
        );
        let metrics = if p.key_type == "integer" {
            let keys = shaped(
                gs::integers::<i32>()
                    .min_value(p.min_key)
                    .max_value(p.max_key),
                &p.mode,
            );
            let map = tc.draw(
                gs::hashmaps(keys, values)
                    .min_size(p.min_size)
                    .max_size(p.max_size),
            );
            Metrics {
                size: map.len(),
                min_key: map.keys().min().copied(),
                max_key: map.keys().max().copied(),
                min_value: map.values().min().copied(),
                max_value: map.values().max().copied(),
            }
        } else {
            let keys = shaped(gs::text(), &p.mode);
            let map = tc.draw(
                gs::hashmaps(keys, values)
                    .min_size(p.min_size)
                    .max_size(p.max_size),
            );
            Metrics {
                size: map.len(),
                min_key: None,
                max_key: None,
                min_value: map.values().min().copied(),
                max_value: map.values().max().copied(),
            }
        };
        geist_client_conformance::write_metrics(&metrics);
    })
}
