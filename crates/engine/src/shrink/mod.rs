//! The shrinker: search for a simpler choice sequence that fails the same way.
//!
//! A failing example is its choice sequence. The shrinker runs small,
//! independent passes over it ([`passes`], by family: deletion,
//! simplification, choices, characters, reordering, reshaping, regeneration),
//! keeping any candidate that still fails with the same origin and is
//! smaller in shortlex order. The [`schedule`] runs them in rounds until a whole round
//! improves nothing or the budget runs out, and keeps per-pass statistics.
//! Single values shrink through the standalone shrinkers in [`values`];
//! [`search`] holds the searches over counts they share. A cache ensures no
//! choice sequence runs twice.

mod passes;
pub mod schedule;
pub mod search;
pub mod values;

pub use schedule::PassStatistics;

use crate::choice::{ChoiceNode, ChoiceValue, Constraints, sequence_cmp};
use crate::data::{Span, Status, TestData};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// A failing test case as the shrinker sees it.
#[derive(Clone, Debug)]
pub struct Example {
    /// The choices.
    pub nodes: Vec<ChoiceNode>,
    /// The spans over them.
    pub spans: Vec<Span>,
    /// The failure's origin.
    pub origin: String,
}

impl Example {
    /// The example's choice values.
    pub fn choices(&self) -> Vec<ChoiceValue> {
        self.nodes.iter().map(|n| n.value.clone()).collect()
    }

    /// Captures a concluded failing test case.
    pub fn from_data(data: &TestData) -> Example {
        Example {
            nodes: data.nodes.to_vec(),
            spans: data.spans.clone(),
            origin: data.origin.clone().unwrap_or_default(),
        }
    }
}

/// Runs a test case from a choice sequence and reports how it ended.
pub trait Replay {
    /// Replays `choices` (simplest values beyond them) and returns the concluded data.
    fn replay(&mut self, choices: Vec<ChoiceValue>) -> TestData;

    /// How many choices replaying `choices` makes, if that replay would only
    /// repeat a test case already run (so its outcome is known and the
    /// shrinker need not run it).
    fn known_length(&mut self, _choices: &[ChoiceValue]) -> Option<usize> {
        None
    }

    /// Whether replaying `choices` is known to need choices past their end.
    fn runs_past(&mut self, _choices: &[ChoiceValue]) -> bool {
        false
    }

    /// The constraints of the choice a replay of `choices` makes right after
    /// them, if known without running it.
    fn constraints_after(&mut self, _choices: &[ChoiceValue]) -> Option<Constraints> {
        None
    }

    /// Runs a test case that replays `prefix`, then makes choices far from
    /// the simplest ([`crate::choice::Constraints::far_value`]), at most
    /// `max_choices` in all, and returns the concluded data; `None` if this
    /// replay cannot (then no such move is tried).
    fn replay_far(&mut self, _prefix: Vec<ChoiceValue>, _max_choices: usize) -> Option<TestData> {
        None
    }

    /// Runs a test case that replays `prefix`, then makes random choices
    /// (from the run's random source), at most `max_choices` in all, and
    /// returns the concluded data; `None` if this replay cannot (then no
    /// such move is tried).
    fn replay_random(
        &mut self,
        _prefix: Vec<ChoiceValue>,
        _max_choices: usize,
    ) -> Option<TestData> {
        None
    }
}

/// How a candidate continues past the prefix it keeps
/// ([`Shrinker::consider_continued`]).
#[derive(Clone, Copy, Debug)]
enum Continuation {
    /// Values far from the simplest ([`Replay::replay_far`]).
    Far,
    /// Random values ([`Replay::replay_random`]).
    Random,
}

impl<F: FnMut(Vec<ChoiceValue>) -> TestData> Replay for F {
    fn replay(&mut self, choices: Vec<ChoiceValue>) -> TestData {
        self(choices)
    }
}

/// Shrinks one failure.
pub struct Shrinker<'a> {
    replay: &'a mut dyn Replay,
    /// The smallest failing example found so far.
    pub best: Example,
    seen: HashSet<Vec<ChoiceValue>>,
    /// Smallest examples of other failures met along the way, by origin.
    pub other_failures: HashMap<String, Example>,
    /// Test cases run.
    pub calls: usize,
    /// Candidates that became the best example.
    pub improvements: usize,
    max_calls: usize,
    /// Candidates considered, including those answered from the cache: a
    /// backstop so that no pass can loop forever on candidates already seen.
    attempts: usize,
    improved_in_round: bool,
    /// Whether `delete_spans` deleted anything in the current round (then
    /// `delete_chunks` waits for the next round, see there).
    spans_deleted_in_round: bool,
    /// Rounds of passes completed.
    rounds: usize,
    /// Whether the current round also runs the costly moves kept for when
    /// the cheap ones are stuck (see [`Shrinker::shrink`]).
    polish: bool,
    /// Integer choices (position, value) that `minimize_choices` could not
    /// move on their own in the current round.
    stuck: HashSet<(usize, i128)>,
    /// Whether `lower_and_regenerate` runs in the next polish round: in the
    /// first, and after one where it improved the example.
    regenerate: bool,
    /// The last candidate considered and not kept, run or known to the
    /// choice tree: what a pass that changed the shape learns from it.
    last_run: Option<LastRun>,
    /// What to print to stderr while shrinking (`GEIST_SHRINK_DEBUG`).
    debug: Debug,
    /// The order the passes run in, as indices into [`schedule::PASSES`].
    order: Vec<usize>,
    /// What each pass did, in [`schedule::PASSES`] order.
    statistics: Vec<PassStatistics>,
}

/// What the shrinker learned from the last candidate it considered.
struct LastRun {
    /// The candidate's length.
    length: usize,
    /// How many choices its replay made.
    realized_length: usize,
    /// The values of the choices its replay made, kept only for a candidate
    /// of [`Shrinker::consider_reshaped`] or [`Shrinker::consider_far`] that
    /// ran (copying every run's choices would cost each shrink execution a
    /// copy of the test case).
    realized: Option<Vec<ChoiceValue>>,
    /// Whether the test rejected it (its replay ran and ended invalid).
    invalid: bool,
}

/// `GEIST_SHRINK_DEBUG`: unset prints nothing; set, each pass's calls,
/// improvements and result; `candidates`, every candidate run as well.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Debug {
    Off,
    Passes,
    Candidates,
}

impl Debug {
    fn from_env() -> Debug {
        match std::env::var("GEIST_SHRINK_DEBUG") {
            Err(_) => Debug::Off,
            Ok(v) if v == "candidates" => Debug::Candidates,
            Ok(_) => Debug::Passes,
        }
    }
}

/// Keeps the markers of the independent streams around an edit counting
/// their choices ([`TestData::fork_stream`]): `range` of `example`'s
/// choices became `replaced_by` choices in `candidate`. Without it, a
/// deletion inside a stream would hand the stream's last choices' worth of
/// its parent's to the stream on replay.
fn recount_streams(
    example: &Example,
    range: &std::ops::Range<usize>,
    replaced_by: usize,
    candidate: &mut [ChoiceValue],
) {
    if replaced_by == range.len() {
        return;
    }
    for span in &example.spans {
        if span.label != crate::data::labels::STREAM
            || span.start >= range.start
            || range.end > span.end
        {
            continue;
        }
        if let Some(ChoiceValue::Integer(count)) = candidate.get_mut(span.start) {
            *count = (*count + replaced_by as i128 - range.len() as i128).max(0);
        }
    }
}

impl<'a> Shrinker<'a> {
    /// A shrinker starting from `example`, spending at most `max_calls` test cases.
    pub fn new(replay: &'a mut dyn Replay, example: Example, max_calls: usize) -> Shrinker<'a> {
        let mut seen = HashSet::new();
        seen.insert(example.choices());
        Shrinker {
            replay,
            best: example,
            seen,
            other_failures: HashMap::new(),
            calls: 0,
            improvements: 0,
            max_calls,
            attempts: 0,
            improved_in_round: false,
            spans_deleted_in_round: false,
            rounds: 0,
            polish: false,
            stuck: HashSet::new(),
            regenerate: true,
            last_run: None,
            debug: Debug::from_env(),
            order: (0..schedule::PASSES.len()).collect(),
            statistics: schedule::new_statistics(),
        }
    }

    /// What each shrink pass did so far.
    pub fn statistics(&self) -> &[PassStatistics] {
        &self.statistics
    }

    /// Whether the budget is spent.
    pub fn exhausted(&self) -> bool {
        self.calls >= self.max_calls || self.attempts >= self.max_calls.saturating_mul(20)
    }

    /// Tries a candidate choice sequence; true if it became the new best.
    ///
    /// Only candidates that can be an improvement run: choices past the best
    /// example's length are dropped (shortlex order: they could only make it
    /// larger), a candidate that is not simpler than the best is refused, and
    /// so is one whose replay would only repeat a test case already run.
    pub fn consider(&mut self, candidate: Vec<ChoiceValue>) -> bool {
        self.consider_unless_running_past(candidate, false)
    }

    /// [`Shrinker::consider`], but a candidate the choice tree knows would
    /// run past its end (the replay filling in simplest values) is refused:
    /// for moves whose point is that the choices left are all the test needs
    /// (a count lowered together with deleting what it counted).
    pub fn consider_whole(&mut self, candidate: Vec<ChoiceValue>) -> bool {
        self.consider_unless_running_past(candidate, true)
    }

    fn consider_unless_running_past(
        &mut self,
        mut candidate: Vec<ChoiceValue>,
        refuse_running_past: bool,
    ) -> bool {
        self.attempts += 1;
        self.last_run = None;
        if self.exhausted() {
            return false;
        }
        candidate.truncate(self.best.nodes.len());
        if !self.may_be_simpler(&candidate) || self.seen.contains(&candidate) {
            return false;
        }
        // Refused for this caller only: another pass may still run it.
        if refuse_running_past && self.replay.runs_past(&candidate) {
            return false;
        }
        self.seen.insert(candidate.clone());
        if self.is_known(&candidate) {
            return false;
        }
        self.run(candidate, false)
    }

    /// Whether the choice tree knows how replaying `candidate` ends (then it
    /// need not run, and its length is noted in `last_run`).
    fn is_known(&mut self, candidate: &[ChoiceValue]) -> bool {
        match self.replay.known_length(candidate) {
            Some(realized_length) => {
                self.last_run = Some(LastRun {
                    length: candidate.len(),
                    realized_length,
                    realized: None,
                    invalid: false,
                });
                true
            }
            None => false,
        }
    }

    /// Runs a candidate the caller has vetted (not seen, not known); true if
    /// it became the new best. `keep_realized`: note the replay's values in
    /// `last_run`.
    fn run(&mut self, candidate: Vec<ChoiceValue>, keep_realized: bool) -> bool {
        self.calls += 1;
        let shown = (self.debug == Debug::Candidates).then(|| format!("{candidate:?}"));
        let length = candidate.len();
        let data = self.replay.replay(candidate);
        if let Some(shown) = shown {
            eprintln!("  ran {shown} -> {:?}", data.status);
        }
        self.last_run = Some(LastRun {
            length,
            realized_length: data.nodes.len(),
            realized: keep_realized.then(|| data.nodes.iter().map(|n| n.value.clone()).collect()),
            invalid: data.status == Some(Status::Invalid),
        });
        self.adopt(&data)
    }

    /// Runs a test case that keeps `prefix` and makes the rest far from the
    /// simplest (at most `max_choices` choices in all): for a move whose
    /// choices after the prefix cannot be derived from the best example's (a
    /// `one_of` lowered to a branch that reads them differently). The caller
    /// makes the prefix simpler than the best example at its first
    /// difference. True if the test case became the new best.
    fn consider_far(&mut self, prefix: Vec<ChoiceValue>, max_choices: usize) -> bool {
        self.consider_continued(prefix, max_choices, Continuation::Far)
    }

    /// [`Shrinker::consider_far`] with random choices after the prefix: for
    /// a branch whose failures lie in a window of its values that neither
    /// the simplest nor the far ones reach.
    fn consider_random(&mut self, prefix: Vec<ChoiceValue>, max_choices: usize) -> bool {
        self.consider_continued(prefix, max_choices, Continuation::Random)
    }

    fn consider_continued(
        &mut self,
        prefix: Vec<ChoiceValue>,
        max_choices: usize,
        how: Continuation,
    ) -> bool {
        self.attempts += 1;
        self.last_run = None;
        if self.exhausted() {
            return false;
        }
        let data = match how {
            Continuation::Far => self.replay.replay_far(prefix, max_choices),
            Continuation::Random => self.replay.replay_random(prefix, max_choices),
        };
        let Some(data) = data else {
            return false;
        };
        self.calls += 1;
        if self.debug == Debug::Candidates {
            let values: Vec<&ChoiceValue> = data.nodes.iter().map(|n| &n.value).collect();
            eprintln!("  ran {how:?} {values:?} -> {:?}", data.status);
        }
        self.last_run = Some(LastRun {
            length: data.nodes.len(),
            realized_length: data.nodes.len(),
            realized: Some(data.nodes.iter().map(|n| n.value.clone()).collect()),
            invalid: data.status == Some(Status::Invalid),
        });
        self.adopt(&data)
    }

    /// Takes a concluded test case's outcome: a failure with another origin
    /// is noted in `other_failures`; one with the best example's origin that
    /// is simpler becomes the best. True if it did.
    fn adopt(&mut self, data: &TestData) -> bool {
        if data.status != Some(Status::Interesting) {
            return false;
        }
        let example = Example::from_data(data);
        if example.origin != self.best.origin {
            let keep = match self.other_failures.get(&example.origin) {
                Some(existing) => sequence_cmp(&example.nodes, &existing.nodes) == Ordering::Less,
                None => true,
            };
            if keep {
                self.other_failures.insert(example.origin.clone(), example);
            }
            return false;
        }
        self.seen.insert(example.choices());
        if sequence_cmp(&example.nodes, &self.best.nodes) == Ordering::Less {
            self.best = example;
            self.improved_in_round = true;
            self.improvements += 1;
            true
        } else {
            false
        }
    }

    /// Runs a candidate that need not be simpler than the best example at its
    /// first difference (a value raised, a `one_of` moved to a later branch):
    /// its replay may take a path that makes fewer choices, and that shorter
    /// sequence is kept if it still fails. Seen and known candidates are
    /// refused as [`Shrinker::consider`] refuses them. True if it became the
    /// new best.
    pub fn consider_reshaped(&mut self, mut candidate: Vec<ChoiceValue>) -> bool {
        self.attempts += 1;
        self.last_run = None;
        if self.exhausted() {
            return false;
        }
        candidate.truncate(self.best.nodes.len());
        if self.seen.contains(&candidate) {
            return false;
        }
        self.seen.insert(candidate.clone());
        if self.is_known(&candidate) {
            return false;
        }
        self.run(candidate, true)
    }

    /// How many fewer choices the last candidate's replay made than the
    /// candidate held (its shape changed: a count went down), if any.
    fn last_run_lost(&self) -> Option<usize> {
        self.last_run
            .as_ref()
            .map(|run| run.length.saturating_sub(run.realized_length))
            .filter(|&lost| lost > 0)
    }

    /// Whether `candidate` may be simpler than the best example: shorter, or
    /// as long and simpler at its first difference (judged under the best
    /// example's constraints; a value they do not permit misaligns the replay,
    /// whose result only running tells).
    fn may_be_simpler(&self, candidate: &[ChoiceValue]) -> bool {
        if candidate.len() < self.best.nodes.len() {
            return true;
        }
        for (value, node) in candidate.iter().zip(&self.best.nodes) {
            if *value == node.value {
                continue;
            }
            if !node.constraints.permits(value) {
                return true;
            }
            return value.simplicity_cmp(&node.value, &node.constraints) == Ordering::Less;
        }
        false
    }

    /// Tries the best example with the choices in `range` replaced by `replacement`.
    pub fn try_replace(
        &mut self,
        range: std::ops::Range<usize>,
        replacement: &[ChoiceValue],
    ) -> bool {
        let current = self.best.choices();
        if range.end > current.len() {
            return false;
        }
        let mut candidate = Vec::with_capacity(current.len() - range.len() + replacement.len());
        candidate.extend_from_slice(&current[..range.start]);
        candidate.extend_from_slice(replacement);
        candidate.extend_from_slice(&current[range.end..]);
        recount_streams(&self.best, &range, replacement.len(), &mut candidate);
        self.consider(candidate)
    }

    /// Tries the best example with choice `i` set to `value`.
    pub fn try_set(&mut self, i: usize, value: ChoiceValue) -> bool {
        self.try_replace(i..i + 1, &[value])
    }

    /// Shrinks until no pass improves the example or the budget is spent.
    ///
    /// Rounds of the cheap passes run to a fixed point; then one polish round
    /// adds the costly moves (deleting a chunk together with lowering the
    /// integer before it), and if that improves anything the cheap rounds
    /// resume.
    pub fn shrink(&mut self) {
        if self.debug != Debug::Off {
            eprintln!("shrinking from {:?}", self.best.choices());
        }
        loop {
            self.improved_in_round = false;
            self.spans_deleted_in_round = false;
            schedule::run_round(self);
            self.rounds += 1;
            if self.exhausted() {
                break;
            }
            if !self.improved_in_round {
                if self.polish {
                    break;
                }
                self.polish = true;
                continue;
            }
            self.polish = false;
        }
    }
}
