//! Fixture-runner and lazily codec throughput, with the `lazily` crate measured in the same run.
//!
//! Prints a markdown table of medians over several runs:
//! - fixtures checked per second (the shared lazily suite, loaded from memory);
//! - generated messages round-tripped per second (encode, decode, compare), by geist's pack
//!   and by lazily 0.61.0 on the same messages, and their ratio.
//!
//! Run: `cargo bench -p geist-lazily --bench fixtures` (one thread, one core).

use geist_fixtures::Runner;
use geist_lazily::generate::{SeededChoices, draw_message};
use geist_lazily::{IpcMessage, LazilyPack, decode, encode};
use std::hint::black_box;
use std::time::Instant;

const RUNS: usize = 7;
const MESSAGES: usize = 20_000;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// Runs `work` (which does `items` units) `RUNS` times and returns the median units per second.
fn rate(items: usize, mut work: impl FnMut()) -> f64 {
    work(); // warm up
    let samples = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            work();
            items as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    median(samples)
}

fn main() {
    let dir = geist_pack::data::shared_path("lazily-conformance");
    let mut fixtures: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            Some((
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).ok()?,
            ))
        })
        .collect();
    fixtures.sort();
    let runner = Runner::new().with_pack(LazilyPack);
    let rounds = 500;
    let fixtures_per_second = rate(fixtures.len() * rounds, || {
        for _ in 0..rounds {
            for (name, bytes) in &fixtures {
                assert!(
                    black_box(runner.check_bytes(name, bytes)).passed(),
                    "{name} failed"
                );
            }
        }
    });

    let mut choices = SeededChoices::new(42);
    let messages: Vec<IpcMessage> = (0..MESSAGES).map(|_| draw_message(&mut choices)).collect();
    let total_bytes: usize = messages.iter().map(|m| encode(m).len()).sum();
    let geist_rate = rate(messages.len(), || {
        for message in &messages {
            let bytes = encode(message);
            let back = decode(&bytes);
            assert!(back.as_ref() == Ok(message));
        }
    });
    let theirs: Vec<lazily::IpcMessage> = messages
        .iter()
        .filter_map(|message| serde_json::from_slice(&encode(message)).ok())
        .collect();
    assert_eq!(
        theirs.len(),
        messages.len(),
        "lazily must decode every generated message"
    );
    let lazily_rate = rate(theirs.len(), || {
        for message in &theirs {
            let bytes = serde_json::to_vec(message).unwrap_or_default();
            let back: Result<lazily::IpcMessage, _> = serde_json::from_slice(&bytes);
            assert!(back.as_ref().ok() == Some(message));
        }
    });

    println!("| measure | median of {RUNS} runs |");
    println!("| --- | ---: |");
    println!(
        "| fixtures checked per second ({} shared fixtures) | {:.0} |",
        fixtures.len(),
        fixtures_per_second
    );
    println!(
        "| geist: generated messages round-tripped per second ({MESSAGES} messages, mean {} bytes) | {:.0} |",
        total_bytes / MESSAGES,
        geist_rate
    );
    println!("| lazily 0.61.0: same messages round-tripped per second | {lazily_rate:.0} |");
    println!("| geist / lazily | {:.2} |", geist_rate / lazily_rate);
}
