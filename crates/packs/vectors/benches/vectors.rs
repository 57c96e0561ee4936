//! Benchmark: how fast `geist vectors check` gets through a corpus.
//!
//! Reads the sample corpora (`../shared/data/filecoin-vectors`) into memory
//! once, then checks every vector (schema, decoding, gunzip, CAR, every CID
//! recomputed, links, messages) several times, on one thread and on all
//! cores. Prints vectors per second and MB/s of JSON and of uncompressed CAR
//! data (medians of the runs), and extrapolates to the public corpora
//! (~1,200 vectors, ~100 MB of JSON). Run with
//! `cargo bench -p geist-vectors --bench vectors`.

use geist_vectors::{SchemaSet, check_document, collect_vector_files};
use std::time::{Duration, Instant};

const RUNS: usize = 7;
const CORPUS_VECTORS: f64 = 1200.0;
const CORPUS_MB: f64 = 100.0;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let schemas = SchemaSet::from_shared_dir().unwrap_or_else(|error| panic!("{error}"));
    let dir = geist_pack::data::shared_path("filecoin-vectors");
    let files = collect_vector_files(&[dir])
        .unwrap_or_else(|error| panic!("{error}"))
        .files;
    let documents: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|f| {
            (
                f.display().to_string(),
                std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())),
            )
        })
        .collect();
    let json_bytes: usize = documents.iter().map(|(_, d)| d.len()).sum();
    let car_bytes: usize = documents
        .iter()
        .map(|(n, d)| check_document(n, d, &schemas).report.stats.car_bytes)
        .sum();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);

    let time = |workers: usize| -> Duration {
        let runs: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                let next = std::sync::atomic::AtomicUsize::new(0);
                std::thread::scope(|scope| {
                    for _ in 0..workers {
                        scope.spawn(|| {
                            loop {
                                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                let Some((name, text)) = documents.get(i) else {
                                    break;
                                };
                                let checked = check_document(name, text, &schemas);
                                assert!(
                                    checked.report.passed(),
                                    "{name}: {:?}",
                                    checked.report.failures
                                );
                            }
                        });
                    }
                });
                started.elapsed()
            })
            .collect();
        median(runs)
    };

    println!(
        "| threads | vectors | JSON MB | CAR MB | median time | vectors/s | JSON MB/s | CAR MB/s | 1,200 vectors / 100 MB JSON, extrapolated |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for workers in [1, cores] {
        let elapsed = time(workers).as_secs_f64();
        let per_vector = elapsed / documents.len() as f64;
        let per_mb = elapsed / (json_bytes as f64 / 1e6);
        // The corpus is bounded by whichever is slower: its count or its size.
        let extrapolated = (per_vector * CORPUS_VECTORS).max(per_mb * CORPUS_MB);
        println!(
            "| {workers} | {} | {:.2} | {:.2} | {:.1} ms | {:.0} | {:.1} | {:.1} | {:.2} s |",
            documents.len(),
            json_bytes as f64 / 1e6,
            car_bytes as f64 / 1e6,
            elapsed * 1e3,
            documents.len() as f64 / elapsed,
            json_bytes as f64 / 1e6 / elapsed,
            car_bytes as f64 / 1e6 / elapsed,
            extrapolated
        );
    }
}
