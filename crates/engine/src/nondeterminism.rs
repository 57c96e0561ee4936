//! Nondeterministic tests: what a run does when the same choices do not
//! always lead to the same draws or the same outcome.
//!
//! A run proves its test nondeterministic when generation differs between
//! two test cases with the same earlier choices, or when a failure does not
//! fail again when replayed (the run replays every failure it finds before
//! shrinking it, and can replay it at once, `discovery_replays` times). Under
//! [`Nondeterminism::Abort`] the run then stops with a flaky-test error, as
//! Hypothesis does. Under [`Nondeterminism::Handle`] it goes on:
//!
//! - each failure gets a confirmation batch of replays (at most 20; over at
//!   the fourth that fails again, or after ten that do not), and the
//!   [`Replays`] it had say how far it can be trusted: its [`Standing`];
//! - shrinking runs each candidate up to [`Replays::tries`] times, until it
//!   fails, so that a failure that shows one time in `n` still shrinks;
//! - the choice tree, which assumes determinism, starts again whenever
//!   generation contradicts it, and the shrinker no longer skips the
//!   candidates it knows;
//! - a failure no replay reproduced is reported only when no other is.

/// What a run does when its test proves nondeterministic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Nondeterminism {
    /// Stop with a flaky-test error ([`crate::StopReason::Flaky`]); the
    /// failures found are not reported.
    #[default]
    Abort,
    /// Go on under nondeterministic handling (see the module's doc).
    Handle,
}

/// How a failure's replays went: how many ran, and how many failed again
/// with its origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replays {
    /// Replays that failed with the failure's origin.
    pub failed: u32,
    /// Replays run.
    pub run: u32,
}

/// Most replays in a confirmation batch.
pub(crate) const CONFIRM_REPLAYS: u32 = 20;
/// A confirmation batch stops once the failure has recurred this often.
const CONFIRM_FAILURES: u32 = 4;
/// A confirmation batch gives up on a failure that did not recur in this many replays.
const CONFIRM_GATE: u32 = 10;
/// The chance a test case that fails as often as its failure did may pass
/// every time it is run, which [`Replays::tries`] keeps below.
const MISS_CHANCE: f64 = 0.1;
/// Most runs of one test case under nondeterministic handling.
const MAX_TRIES: u32 = 8;

impl Replays {
    /// How many times to run a test case that fails as often as this failure
    /// did for it to fail at least once (but for a chance of [`MISS_CHANCE`]):
    /// `ln(MISS_CHANCE) / ln(1 - p)` for the failure rate `p`, estimated on
    /// the low side as `failed / (run + 1)`; between 1 and [`MAX_TRIES`].
    pub fn tries(&self) -> u32 {
        let rate = f64::from(self.failed) / f64::from(self.run + 1);
        if rate <= 0.0 {
            return MAX_TRIES;
        }
        let tries = (MISS_CHANCE.ln() / (1.0 - rate).ln()).ceil();
        if tries.is_finite() {
            tries.clamp(1.0, f64::from(MAX_TRIES)) as u32
        } else {
            MAX_TRIES
        }
    }

    /// Adds a batch's replays.
    pub(crate) fn add(&mut self, more: Replays) {
        self.failed += more.failed;
        self.run += more.run;
    }

    /// Whether a confirmation batch that went this far is over: the failure
    /// recurred [`CONFIRM_FAILURES`] times, or not once in [`CONFIRM_GATE`]
    /// replays ([`CONFIRM_REPLAYS`] bounds it too).
    pub(crate) fn confirmation_is_over(&self) -> bool {
        self.failed >= CONFIRM_FAILURES || (self.failed == 0 && self.run >= CONFIRM_GATE)
    }
}

/// How far a reported failure can be trusted to fail again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The run never saw the test behave nondeterministically.
    Deterministic,
    /// Under nondeterministic handling, replays of the failure reproduced it.
    Confirmed(Replays),
    /// Under nondeterministic handling, no replay of the failure reproduced
    /// it: reported only when no failure was confirmed.
    Unconfirmed(Replays),
}
