//! Calldata encode/decode throughput, beside genlayer-js measured in the same run.
//!
//! Two corpora: byte-heavy values (HTTP-response-like maps with 4–256 KiB
//! bodies) and small nested values (maps and arrays of small integers, short
//! strings and booleans, a few bytes each). Rates are MB of Calldata per second:
//! bytes produced by encode, bytes consumed by decode; the median of several
//! timed rounds is reported. Decode is measured twice: `decode` (the owned
//! `Value`, every string and byte string copied) and `decode_ref` (the
//! borrowed `ValueRef`, strings and byte strings point into the input); both
//! apply every canonical-form check, and both include dropping the result.
//! genlayer-js runs in its own node process over the
//! same corpora (needs `scripts/stages/genlayer.sh` to have installed it, or
//! `GEIST_GENLAYER_JS_DIR`); without it, its column says so.
//!
//! Run: `cargo bench -p geist-genvm --bench calldata`

use geist_genvm::calldata::peer::GenlayerJs;
use geist_genvm::calldata::{Map, Value, decode, decode_ref, encode_into};
use std::hint::black_box;
use std::time::{Duration, Instant};

const ROUNDS: usize = 7;

/// A splitmix64 generator: the corpus is a fixed, reproducible fixture.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    fn bytes(&mut self, length: usize) -> Vec<u8> {
        (0..length).map(|_| self.next_u64() as u8).collect()
    }
}
const ROUND_TIME: Duration = Duration::from_millis(300);

fn byte_heavy(rng: &mut Rng) -> Vec<Value> {
    (0..48)
        .map(|_| {
            let body_len = 4096 << rng.below(7);
            let headers: Map = [
                (
                    "content-type",
                    Value::Bytes(b"application/octet-stream".to_vec()),
                ),
                ("etag", Value::Bytes(rng.bytes(16))),
            ]
            .into_iter()
            .collect();
            [
                ("status", Value::from(200)),
                ("headers", Value::Map(headers)),
                ("body", Value::Bytes(rng.bytes(body_len))),
            ]
            .into_iter()
            .collect::<Map>()
            .into()
        })
        .collect()
}

fn small_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 4 } else { 6 }) {
        0 => Value::from(rng.below(300) as i64 - 100),
        1 => Value::Bool(rng.chance(1, 2)),
        2 => Value::Str(["ok", "name", "x", "status", "value"][rng.below(5) as usize].to_owned()),
        3 => Value::Null,
        4 => Value::Array(
            (0..rng.below(5))
                .map(|_| small_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Map(
            (0..rng.below(5))
                .map(|i| {
                    (
                        ["a", "b", "id", "kind", "v"][i as usize],
                        small_value(rng, depth - 1),
                    )
                })
                .collect(),
        ),
    }
}

fn small_nested(rng: &mut Rng) -> Vec<Value> {
    (0..20_000)
        .map(|_| {
            Value::Map(
                [
                    ("id", Value::from(rng.below(1 << 20))),
                    ("args", small_value(rng, 3)),
                    ("kwargs", small_value(rng, 3)),
                ]
                .into_iter()
                .collect(),
            )
        })
        .collect()
}

/// Nanoseconds this thread has spent on a CPU (Linux `schedstat`), if known.
///
/// The benchmark machine is shared, so wall time counts other processes' turns;
/// CPU time does not. genlayer-js is measured the same way (`process.cpuUsage`).
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The median rate in MB/s of `work`, which handles `bytes` bytes per call:
/// over CPU time when the platform reports it, else over wall time.
fn median_rate(bytes: usize, mut work: impl FnMut()) -> f64 {
    let mut rates = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let cpu_start = thread_cpu_ns();
        let mut calls = 0u64;
        while start.elapsed() < ROUND_TIME {
            work();
            calls += 1;
        }
        let seconds = match (cpu_start, thread_cpu_ns()) {
            (Some(begin), Some(end)) if end > begin => (end - begin) as f64 / 1e9,
            _ => start.elapsed().as_secs_f64(),
        };
        rates.push(bytes as f64 * calls as f64 / seconds / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    rates[ROUNDS / 2]
}

struct Row {
    corpus: &'static str,
    values: usize,
    bytes: usize,
    encode: f64,
    decode: f64,
    decode_ref: f64,
    peer: Result<(f64, f64), String>,
}

fn measure(corpus: &'static str, values: &[Value], peer: &mut Result<GenlayerJs, String>) -> Row {
    let encoded: Vec<Vec<u8>> = values
        .iter()
        .map(|v| {
            let mut out = Vec::new();
            encode_into(v, &mut out);
            out
        })
        .collect();
    let bytes: usize = encoded.iter().map(Vec::len).sum();
    let mut buffer = Vec::with_capacity(encoded.iter().map(Vec::len).max().unwrap_or(0));
    let encode = median_rate(bytes, || {
        for value in values {
            buffer.clear();
            encode_into(black_box(value), &mut buffer);
            black_box(&buffer);
        }
    });
    let decode = median_rate(bytes, || {
        for input in &encoded {
            let value = decode(black_box(input));
            assert!(value.is_ok(), "bench corpus must decode");
            black_box(value.ok());
        }
    });
    let decode_ref = median_rate(bytes, || {
        for input in &encoded {
            let value = decode_ref(black_box(input));
            assert!(value.is_ok(), "bench corpus must decode");
            black_box(value.ok());
        }
    });
    let peer = match peer {
        Ok(peer) => peer
            .bench(&encoded, ROUND_TIME.as_secs_f64() * ROUNDS as f64 / 2.0)
            .map(|r| (r.encode_mb_per_s, r.decode_mb_per_s))
            .map_err(|e| e.to_string()),
        Err(reason) => Err(reason.clone()),
    };
    Row {
        corpus,
        values: values.len(),
        bytes,
        encode,
        decode,
        decode_ref,
        peer,
    }
}

/// Profiling mode (`GEIST_CALLDATA_PROFILE=<passes>`, plus
/// `GEIST_CALLDATA_PROFILE_REF=1` for `decode_ref`): decodes the small nested
/// corpus that many times, untimed and without the peer, for
/// `valgrind --tool=callgrind --toggle-collect='*profile_small_decode*'`,
/// whose instruction counts do not depend on the machine's load.
#[inline(never)]
fn profile_small_decode(passes: usize, encoded: &[Vec<u8>], borrowed: bool) {
    for _ in 0..passes {
        for input in encoded {
            if borrowed {
                black_box(decode_ref(black_box(input)).ok());
            } else {
                black_box(decode(black_box(input)).ok());
            }
        }
    }
}

fn main() {
    let mut rng = Rng::new(42);
    let heavy = byte_heavy(&mut rng);
    let small = small_nested(&mut rng);
    if let Some(passes) = std::env::var("GEIST_CALLDATA_PROFILE")
        .ok()
        .and_then(|text| text.parse().ok())
    {
        let encoded: Vec<Vec<u8>> = small.iter().map(geist_genvm::calldata::encode).collect();
        let borrowed = std::env::var_os("GEIST_CALLDATA_PROFILE_REF").is_some();
        profile_small_decode(passes, &encoded, borrowed);
        return;
    }
    let mut peer = GenlayerJs::spawn_default().map_err(|e| e.to_string());
    let version = peer
        .as_ref()
        .map_or_else(|_| "not available".to_owned(), |p| p.version().to_owned());
    let rows = [
        measure("byte-heavy", &heavy, &mut peer),
        measure("small nested", &small, &mut peer),
    ];
    println!(
        "Calldata throughput, MB/s of encoded Calldata per CPU-second (median of {ROUNDS} rounds); genlayer-js {version}\n"
    );
    println!(
        "| corpus | values | bytes | geist encode | geist decode (owned `Value`) | geist decode_ref (borrowed `ValueRef`) | genlayer-js encode | genlayer-js decode | decode ratio (owned) | decode_ref ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        let (peer_encode, peer_decode, ratio, ratio_ref) = match &row.peer {
            Ok((e, d)) => (
                format!("{e:.1}"),
                format!("{d:.1}"),
                format!("{:.1}x", row.decode / d),
                format!("{:.1}x", row.decode_ref / d),
            ),
            Err(_) => (
                "n/a".to_owned(),
                "n/a".to_owned(),
                "n/a".to_owned(),
                "n/a".to_owned(),
            ),
        };
        println!(
            "| {} | {} | {} | {:.0} | {:.0} | {:.0} | {peer_encode} | {peer_decode} | {ratio} | {ratio_ref} |",
            row.corpus, row.values, row.bytes, row.encode, row.decode, row.decode_ref
        );
    }
    if let Some(Err(reason)) = rows.first().map(|r| &r.peer) {
        println!("\ngenlayer-js not measured: {reason}");
    }
}
