//! TextConformance: one string with size bounds and character options
//! (codec, code point range, categories, included and excluded characters).

use geist::generators as gs;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Params {
    min_size: usize,
    max_size: Option<usize>,
    codec: Option<String>,
    min_codepoint: Option<u32>,
    max_codepoint: Option<u32>,
    categories: Option<Vec<String>>,
    exclude_categories: Option<Vec<String>>,
    include_characters: Option<String>,
    exclude_characters: Option<String>,
}

#[derive(Serialize)]
struct Metrics {
    codepoints: Vec<u32>,
}

fn main() -> std::process::ExitCode {
    geist_client_conformance::run(false, |p: &Params, tc| {
        let mut g = gs::text().min_size(p.min_size);
        if let Some(max) = p.max_size {
            g = g.max_size(max);
        }
        if let Some(codec) = &p.codec {
            g = g.codec(codec);
        }
        if let Some(c) = p.min_codepoint {
            g = g.min_codepoint(c);
        }
        if let Some(c) = p.max_codepoint {
            g = g.max_codepoint(c);
        }
        if let Some(categories) = &p.categories {
            let names: Vec<&str> = categories.iter().map(String::as_str).collect();
            g = g.categories(&names);
        }
        if let Some(categories) = &p.exclude_categories {
            let names: Vec<&str> = categories.iter().map(String::as_str).collect();
            g = g.exclude_categories(&names);
        }
        if let Some(chars) = &p.include_characters {
            g = g.include_characters(chars);
        }
        if let Some(chars) = &p.exclude_characters {
            g = g.exclude_characters(chars);
        }
        let value = tc.draw(g);
        let codepoints = value.chars().map(u32::from).collect();
        geist_client_conformance::write_metrics(&Metrics { codepoints });
    })
}
