//! What the engine's benchmarks share, and the fingerprint example
//! (`examples/fingerprint`) with them: building schemas, reading settings
//! from the environment, and measuring CPU time of the benchmark thread.

use geist_engine::generate::Schema;
use geist_engine::value::Value;

/// A schema map from its entries.
pub fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::text(k), v))
            .collect(),
    )
}

/// Parses a schema the benchmark itself wrote (a bug here is a bug in the benchmark).
pub fn schema(value: Value) -> Schema {
    match Schema::parse(&value) {
        Ok(s) => s,
        Err(e) => panic!("benchmark schema {value:?} is invalid: {e}"),
    }
}

/// Nanoseconds this thread has spent on a CPU (Linux `schedstat`), so that
/// other processes competing for the cores do not count against the engine.
pub fn thread_cpu_nanos() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// A number from the environment, or `default` (with a warning if it is not one).
pub fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => match text.trim().parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("{name}={text:?} is not a number; using {default}");
                default
            }
        },
        Err(_) => default,
    }
}
