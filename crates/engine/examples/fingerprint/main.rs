//! Fingerprints of every choice the engine makes: for a pure speed change,
//! the proof that it changed no choice (generation, mutation, shrinking,
//! the choice tree). Two sections, each a set of properties run over seeds
//! 0..SEEDS (default 40, `GEIST_FINGERPRINT_SEEDS`) with one hash per
//! property and one over all (`choice ... all`, `tree ... all`):
//!
//! - `choice` ([`choice`]): mutation, spans and state machines;
//! - `tree` ([`tree`]): the choice tree (its cap, exhaustion, discarded
//!   spans).
//!
//! The same output before and after a change means the same choices.
//!
//! Run: `cargo run --release -p geist-engine --example fingerprint`, or
//! `... -- choice` / `... -- tree` for one section.

mod choice;
#[path = "../../benches/support/mod.rs"]
#[expect(dead_code, reason = "the benchmarks' CPU clock is not used here")]
mod support;
mod tree;

fn main() {
    let seeds = u128::from(support::env_number("GEIST_FINGERPRINT_SEEDS", 40));
    let only = std::env::args().nth(1);
    match only.as_deref() {
        None => {
            choice::print(seeds);
            tree::print(seeds);
        }
        Some("choice") => choice::print(seeds),
        Some("tree") => tree::print(seeds),
        Some(other) => {
            eprintln!("unknown section {other:?} (choice or tree)");
            std::process::exit(2);
        }
    }
}
