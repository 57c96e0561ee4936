//! The test run: generate test cases, find failures, shrink them, report.
//!
//! The caller supplies the test function as a closure over a [`TestData`]; it
//! may run code in-process or relay every choice to a remote client. The run
//! loop starts with the simplest test case, then generates at random (never
//! running the same choice sequence twice), stops at the first failure or when
//! enough valid test cases have passed (or the space is exhausted), and
//! shrinks each distinct failure.
//!
//! A test can prove nondeterministic; [`crate::nondeterminism`] says what the
//! run then does.

use crate::choice::{ChoiceValue, sequence_cmp};
use crate::data::{DEFAULT_MAX_CHOICES, Nodes, Span, Status, TestData};
use crate::database::{ExampleDatabase, KeyedDatabase};
use crate::health::{
    Counts, Flakiness, HealthCheck, HealthCheckFailure, HealthMonitor, StopReason,
};
use crate::nondeterminism::{CONFIRM_REPLAYS, Nondeterminism, Replays, Standing};
use crate::random::Source;
use crate::shrink::{Example, PassStatistics, Replay, Shrinker};
use crate::target::{Step, TargetBest};
use crate::tree::DataTree;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// Which parts of a run to perform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases {
    /// Replay failures saved in the example database.
    pub reuse: bool,
    /// Generate new test cases.
    pub generate: bool,
    /// Hill-climb on target observations.
    pub target: bool,
    /// Shrink failures.
    pub shrink: bool,
}

impl Default for Phases {
    fn default() -> Self {
        Phases {
            reuse: true,
            generate: true,
            target: true,
            shrink: true,
        }
    }
}

/// Settings of one run.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// Number of valid test cases to run.
    pub test_cases: u64,
    /// The random seed.
    pub seed: u128,
    /// The phases to run.
    pub phases: Phases,
    /// Whether distinct failures are all reported (else only the first).
    pub report_multiple_failures: bool,
    /// Whether exploration ends at the first failure (else it uses the whole
    /// budget, and replays every saved failure, whatever it finds).
    pub stop_on_first_failure: bool,
    /// What the run does when the test proves nondeterministic.
    pub nondeterminism: Nondeterminism,
    /// How often a failure found while exploring is replayed at once, before
    /// anything else is spent on it: a replay that does not fail proves the
    /// test nondeterministic early (0: only the replay before shrinking checks).
    pub discovery_replays: u32,
    /// Health checks not to fail on.
    pub suppress_health_checks: Vec<HealthCheck>,
    /// Most choices a test case may make.
    pub max_choices: usize,
    /// Most test cases to spend shrinking each failure.
    pub max_shrink_calls: usize,
    /// The `too_slow` health check's budget: seconds of generation (as
    /// the test function reports it in `TestData::draw_seconds`) before
    /// the tenth valid test case.
    pub too_slow_seconds: f64,
    /// What generation does once every test case it could make has run.
    pub when_exhausted: WhenExhausted,
}

/// What generation does once the choice tree is exhausted: every test case
/// the run could generate has run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WhenExhausted {
    /// Stop generating, as Hypothesis does (`DataTree.is_exhausted`): the
    /// run ends with the valid test cases it has.
    #[default]
    Stop,
    /// Go on generating random test cases, repeats included, until the
    /// valid budget or the invalid budget is spent, as libhegel does:
    /// hegeltest's frontend counts on a run over a small space making its
    /// `test_cases` valid calls, and on a filter that rejects a small space
    /// failing `filter_too_much` rather than ending early.
    Repeat,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            test_cases: 100,
            seed: 0,
            phases: Phases::default(),
            report_multiple_failures: true,
            stop_on_first_failure: true,
            nondeterminism: Nondeterminism::Abort,
            discovery_replays: 0,
            suppress_health_checks: Vec::new(),
            max_choices: DEFAULT_MAX_CHOICES,
            max_shrink_calls: 5_000,
            too_slow_seconds: crate::health::TOO_SLOW_SECONDS,
            when_exhausted: WhenExhausted::Stop,
        }
    }
}

/// A failure found by a run, shrunk as far as it went.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The choices that reproduce it.
    pub choices: Vec<ChoiceValue>,
    /// Its origin.
    pub origin: String,
    /// How far it can be trusted to fail again.
    pub standing: Standing,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    /// Test cases run in all (including shrinking).
    pub test_cases: u64,
    /// Valid test cases.
    pub valid_test_cases: u64,
    /// Invalid test cases.
    pub invalid_test_cases: u64,
    /// Distinct failures, smallest first.
    pub failures: Vec<Failure>,
    /// Why the run stopped before it had an answer (a failed health check,
    /// a flaky test, an abort), if it did.
    pub stop: Option<StopReason>,
    /// Under [`Nondeterminism::Handle`]: how the test first proved
    /// nondeterministic, if it did.
    pub nondeterminism: Option<Flakiness>,
    /// Test cases spent shrinking, each failure's replay before it is shrunk
    /// included.
    pub shrink_calls: u64,
    /// Problems worth telling the user that did not stop the run (e.g. unreadable database entries).
    pub warnings: Vec<String>,
    /// What each shrink pass did, summed over every failure shrunk (empty
    /// when nothing was shrunk): for display at debug verbosity.
    pub shrink_statistics: Vec<PassStatistics>,
}

impl RunResult {
    /// Whether the property held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
            && !matches!(
                self.stop,
                Some(StopReason::HealthCheck(_) | StopReason::Flaky(_))
            )
    }

    /// The failed health check, if one stopped the run.
    pub fn health_check_failure(&self) -> Option<&HealthCheckFailure> {
        match &self.stop {
            Some(StopReason::HealthCheck(failure)) => Some(failure),
            _ => None,
        }
    }

    /// How the test proved flaky, if it did.
    pub fn flakiness(&self) -> Option<&Flakiness> {
        match &self.stop {
            Some(StopReason::Flaky(flakiness)) => Some(flakiness),
            _ => None,
        }
    }

    /// Whether the test function aborted the run.
    pub fn aborted(&self) -> bool {
        self.stop == Some(StopReason::Aborted)
    }
}

/// An example database and the key of the test using it.
pub struct DatabaseHandle<'a> {
    /// The database.
    pub database: &'a dyn ExampleDatabase,
    /// The test's key.
    pub key: Vec<u8>,
}

/// Runs a property: `test` runs one test case on the data it is given and
/// concludes it (a test case left unconcluded counts as valid). `test` returns
/// false to abort the whole run (e.g. the client went away); the result then
/// has `aborted` set and reports what was found so far. `saved` failures are
/// replayed first (without persistence; see [`run_with_database`]).
pub fn run(
    settings: &RunSettings,
    saved: &[Vec<ChoiceValue>],
    test: &mut dyn FnMut(&mut TestData) -> bool,
) -> RunResult {
    let runner = Runner::new(settings, test, None);
    runner.run(saved.to_vec())
}

/// Runs a property with an example database: saved failures for the key are
/// replayed first; a failure is saved the moment it is found and again at
/// every shrinking improvement (replacing the previous entry); entries that
/// no longer fail are deleted.
pub fn run_with_database(
    settings: &RunSettings,
    database: Option<DatabaseHandle<'_>>,
    test: &mut dyn FnMut(&mut TestData) -> bool,
) -> RunResult {
    match database {
        Some(handle) => {
            let mut keyed = KeyedDatabase::new(handle.database, handle.key);
            let saved = keyed.fetch();
            Runner::new(settings, test, Some(keyed)).run(saved)
        }
        None => Runner::new(settings, test, None).run(Vec::new()),
    }
}

/// The state of one run, shared by its phases.
struct Runner<'s, 't, 'd> {
    settings: &'s RunSettings,
    test: &'t mut dyn FnMut(&mut TestData) -> bool,
    database: Option<KeyedDatabase<'d>>,
    result: RunResult,
    failures: HashMap<String, Example>,
    tree: DataTree,
    /// Whether the last test case executed made choices no earlier one made.
    last_was_new: bool,
    targets: HashMap<String, TargetBest>,
    first_bug_at: Option<u64>,
    last_bug_at: u64,
    source: Source,
    ran_simplest: bool,
    optimised: bool,
    /// The shrink phase ran to its end (its failures are recorded as shrunk).
    shrunk: bool,
    /// Generation kept repeating itself: the space of test cases is used up.
    exhausted: bool,
    /// Choices the simplest test case made.
    simplest_length: usize,
    /// Whether early test cases are still kept small (see [`Runner::generate`]).
    small_phase: bool,
    /// Early test cases that ran past the small-phase limit, in all and in a row.
    small_overruns: u64,
    small_overruns_in_a_row: u32,
    health: HealthMonitor,
    /// Origins of failures found while exploring, not yet checked.
    unchecked: Vec<String>,
    /// The replays each failure has had, by origin.
    replays: HashMap<String, Replays>,
}

/// The shrinker's way to run candidates: through the runner, so every test
/// case counts, lands in the choice tree and records failures; candidates
/// whose replay the tree already knows are not run again.
///
/// Under nondeterministic handling the tree is no guide, and a candidate runs
/// up to `tries` times, until it fails with the origin being shrunk.
struct RunnerReplay<'r, 's, 't, 'd> {
    runner: &'r mut Runner<'s, 't, 'd>,
    max_choices: usize,
    origin: String,
    tries: u32,
}

impl Replay for RunnerReplay<'_, '_, '_, '_> {
    fn replay(&mut self, choices: Vec<ChoiceValue>) -> TestData {
        for _ in 1..self.tries {
            let mut data = TestData::replaying(choices.clone(), self.max_choices);
            self.runner.execute(&mut data);
            if reproduces(&data, &self.origin) || self.runner.stopped() {
                return data;
            }
        }
        let mut data = TestData::replaying(choices, self.max_choices);
        self.runner.execute(&mut data);
        data
    }

    fn known_length(&mut self, choices: &[ChoiceValue]) -> Option<usize> {
        if self.runner.nondeterministic() {
            return None;
        }
        self.runner.tree.known_replay_length(choices)
    }

    fn runs_past(&mut self, choices: &[ChoiceValue]) -> bool {
        !self.runner.nondeterministic() && self.runner.tree.replay_runs_past(choices)
    }

    fn constraints_after(&mut self, choices: &[ChoiceValue]) -> Option<crate::choice::Constraints> {
        if self.runner.nondeterministic() {
            return None;
        }
        self.runner.tree.constraints_after(choices).cloned()
    }

    fn replay_far(&mut self, prefix: Vec<ChoiceValue>, max_choices: usize) -> Option<TestData> {
        // Under nondeterministic handling a candidate must be replayable.
        if self.runner.nondeterministic() {
            return None;
        }
        let mut data = TestData::replaying_far(prefix, max_choices.min(self.max_choices));
        self.runner.execute(&mut data);
        Some(data)
    }

    fn replay_random(&mut self, prefix: Vec<ChoiceValue>, max_choices: usize) -> Option<TestData> {
        if self.runner.nondeterministic() {
            return None;
        }
        let source = self.runner.source.split();
        let mut data = TestData::generating(prefix, source, max_choices.min(self.max_choices));
        self.runner.execute(&mut data);
        Some(data)
    }
}

/// Whether a test case failed with `origin`.
fn reproduces(data: &TestData, origin: &str) -> bool {
    data.status == Some(Status::Interesting) && data.origin.as_deref() == Some(origin)
}

impl<'s, 't, 'd> Runner<'s, 't, 'd> {
    fn new(
        settings: &'s RunSettings,
        test: &'t mut dyn FnMut(&mut TestData) -> bool,
        database: Option<KeyedDatabase<'d>>,
    ) -> Self {
        Runner {
            settings,
            test,
            database,
            result: RunResult::default(),
            failures: HashMap::new(),
            tree: DataTree::default(),
            last_was_new: false,
            targets: HashMap::new(),
            first_bug_at: None,
            last_bug_at: 0,
            source: Source::from_seed128(settings.seed),
            ran_simplest: false,
            optimised: false,
            shrunk: false,
            exhausted: false,
            simplest_length: 0,
            small_phase: true,
            small_overruns: 0,
            small_overruns_in_a_row: 0,
            health: HealthMonitor::new(
                &settings.suppress_health_checks,
                settings.max_choices,
                settings.too_slow_seconds,
            ),
            unchecked: Vec::new(),
            replays: HashMap::new(),
        }
    }

    fn stopped(&self) -> bool {
        self.result.stop.is_some()
    }

    /// Whether the run is under nondeterministic handling.
    fn nondeterministic(&self) -> bool {
        self.result.nondeterminism.is_some()
    }

    /// The test proved nondeterministic (`evidence` says how): the run stops
    /// with a flaky-test error, or goes on under nondeterministic handling.
    /// Returns whether it goes on.
    fn nondeterminism_found(&mut self, evidence: Flakiness) -> bool {
        match self.settings.nondeterminism {
            Nondeterminism::Abort => {
                self.result.stop = Some(StopReason::Flaky(evidence));
                false
            }
            Nondeterminism::Handle => {
                self.result.nondeterminism.get_or_insert(evidence);
                true
            }
        }
    }

    /// Whether a failure found so far ends exploration.
    fn failure_ends_exploration(&self) -> bool {
        self.settings.stop_on_first_failure && !self.failures.is_empty()
    }

    /// Runs one test case and records everything it tells us.
    fn execute(&mut self, data: &mut TestData) {
        self.last_was_new = false;
        if self.stopped() {
            data.conclude(Status::Overrun, None);
            return;
        }
        if !(self.test)(data) {
            self.result.stop = Some(StopReason::Aborted);
            if data.status.is_none() {
                data.conclude(Status::Overrun, None);
            }
            return;
        }
        if data.status.is_none() {
            data.conclude(Status::Valid, None);
        }
        self.result.test_cases += 1;
        match data.status {
            Some(Status::Valid) => self.result.valid_test_cases += 1,
            Some(Status::Invalid) | Some(Status::Overrun) => self.result.invalid_test_cases += 1,
            _ => {}
        }
        // A test case cut short by a lower limit than the run's did not end
        // where its choices end.
        let ended =
            data.status != Some(Status::Overrun) || data.max_choices() >= self.settings.max_choices;
        // A discarded span (a rejected filter attempt) kills the branch it
        // stopped at. Independent streams may race on state they share (a
        // pool two threads draw from): what follows the first is not the
        // test's to keep the same. (Both from one pass over the spans.)
        let mut kills: Vec<usize> = Vec::new();
        let mut streams_from = usize::MAX;
        for span in &data.spans {
            if span.discarded {
                kills.push(span.end);
            }
            if span.label == crate::data::labels::STREAM {
                streams_from = streams_from.min(span.start);
            }
        }
        match self
            .tree
            .record_streams(&data.nodes, ended, &kills, streams_from)
        {
            Ok(new) => {
                self.last_was_new = new;
                let failed = data.status == Some(Status::Interesting);
                if self.tree.note_outcome(failed) {
                    let origin = data.origin.clone().unwrap_or_default();
                    if !self.nondeterminism_found(Flakiness::Outcome {
                        origin: origin.clone(),
                    }) {
                        return;
                    }
                    self.replays.entry(origin).or_default().passed_before = true;
                }
            }
            Err(difference) => {
                if !self.nondeterminism_found(Flakiness::Generation { difference }) {
                    return;
                }
                // What the tree knew no longer holds: it starts again from
                // this test case.
                self.tree = DataTree::default();
                self.last_was_new = self.tree.record(&data.nodes, ended, &kills).unwrap_or(true);
            }
        }
        for (label, _) in &data.target_observations {
            let Some(score) = crate::target::score_of(data, label) else {
                continue;
            };
            let better = self
                .targets
                .get(label)
                .is_none_or(|best| score > best.score);
            if better {
                self.targets.insert(
                    label.clone(),
                    TargetBest {
                        score,
                        nodes: data.nodes.to_vec(),
                    },
                );
            }
        }
        if data.status == Some(Status::Interesting) {
            self.record_failure(Example::from_data(data));
        }
    }

    /// Keeps the smallest example per origin, persisting each improvement.
    fn record_failure(&mut self, example: Example) {
        let previous = self.failures.get(&example.origin);
        if previous.is_some_and(|e| sequence_cmp(&example.nodes, &e.nodes) != Ordering::Less) {
            return;
        }
        if let Some(database) = &mut self.database {
            if let Some(old) = previous {
                // The replaced example moves to the secondary key until the run
                // ends, so an interrupted run loses no progress.
                database.demote(&old.choices());
            }
            database.save(&example.choices());
        }
        if self.first_bug_at.is_none() {
            self.first_bug_at = Some(self.result.test_cases);
        }
        self.last_bug_at = self.result.test_cases;
        if previous.is_none() {
            self.unchecked.push(example.origin.clone());
        }
        self.failures.insert(example.origin.clone(), example);
    }

    /// Replays the failure of `origin`, stamped, until `enough` says so or
    /// `most` replays have run; the replays count toward its record.
    fn replay_failure(
        &mut self,
        origin: &str,
        most: u32,
        enough: impl Fn(&Replays) -> bool,
    ) -> Replays {
        let mut batch = Replays {
            passed_before: self.replays.get(origin).is_some_and(|r| r.passed_before),
            ..Replays::default()
        };
        while batch.run < most && !enough(&batch) {
            let Some(example) = self.failures.get(origin) else {
                break;
            };
            let mut data = TestData::replaying(example.choices(), self.settings.max_choices);
            data.stamped = true;
            self.execute(&mut data);
            if self.stopped() {
                break;
            }
            batch.run += 1;
            if reproduces(&data, origin) {
                batch.failed += 1;
            }
        }
        self.replays
            .entry(origin.to_string())
            .or_default()
            .add(batch);
        batch
    }

    /// A confirmation batch of replays of the failure of `origin`.
    fn confirm(&mut self, origin: &str) {
        self.replay_failure(origin, CONFIRM_REPLAYS, Replays::confirmation_is_over);
    }

    /// Checks each failure found since the last check: `discovery_replays`
    /// replays, stopping at the first that does not fail with its origin
    /// (which proves the test nondeterministic); under nondeterministic
    /// handling, a confirmation batch.
    fn check_discoveries(&mut self) {
        while let Some(origin) = self.unchecked.pop() {
            if self.stopped() {
                return;
            }
            if !self.nondeterministic() {
                let replays =
                    self.replay_failure(&origin, self.settings.discovery_replays, |batch| {
                        batch.failed < batch.run
                    });
                if self.stopped() {
                    return;
                }
                if replays.failed == replays.run {
                    continue;
                }
                let evidence = Flakiness::Outcome {
                    origin: origin.clone(),
                };
                if !self.nondeterminism_found(evidence) {
                    return;
                }
            }
            self.confirm(&origin);
        }
    }

    /// How far the failure of `origin` can be trusted to fail again.
    fn standing(&self, origin: &str) -> Standing {
        if !self.nondeterministic() {
            return Standing::Deterministic;
        }
        let replays = self.replays.get(origin).copied().unwrap_or_default();
        if replays.failed > 0 {
            Standing::Confirmed(replays)
        } else {
            Standing::Unconfirmed(replays)
        }
    }

    fn run(mut self, saved: Vec<Vec<ChoiceValue>>) -> RunResult {
        if self.settings.phases.reuse && self.reuse(saved) {
            return self.finish();
        }
        // Failures replayed from the database are not checked: they failed
        // in an earlier run already.
        self.unchecked.clear();
        if self.settings.phases.generate && !self.failure_ends_exploration() && !self.stopped() {
            self.generate();
        }
        if self.settings.phases.target && !self.failure_ends_exploration() && !self.stopped() {
            self.optimise_targets();
            self.optimised = true;
            // The rest of the budget goes to generation again.
            if self.settings.phases.generate
                && !self.targets.is_empty()
                && !self.exhausted
                && !self.failure_ends_exploration()
                && !self.stopped()
            {
                self.generate();
            }
        }
        self.check_discoveries();
        if self.settings.phases.shrink && !self.stopped() {
            self.shrink();
            self.shrunk = !self.stopped();
        }
        self.finish()
    }

    /// Replays the saved failures. Returns whether the run is over: every
    /// failure that still fails replayed exactly as saved and is recorded as
    /// shrunk to its end, so it is reported as it is, without generating or
    /// shrinking again: Hypothesis's rule (`reused_previously_shrunk_test_case`),
    /// which hegeltest's `test_does_not_shrink_on_replay` checks. A saved
    /// failure the test now reads differently, or one saved in the middle of
    /// a shrink (another worker's, in a shared store), is shrunk again.
    fn reuse(&mut self, saved: Vec<Vec<ChoiceValue>>) -> bool {
        let mut found = false;
        let mut all_exact = true;
        for choices in saved {
            let mut data = TestData::replaying(choices.clone(), self.settings.max_choices);
            self.execute(&mut data);
            if data.status == Some(Status::Interesting) {
                found = true;
                all_exact &= data.choices() == choices
                    && self
                        .database
                        .as_mut()
                        .is_some_and(|d| d.is_shrunk(&choices));
                if !self.settings.report_multiple_failures && self.settings.stop_on_first_failure {
                    break;
                }
            } else if let Some(database) = &mut self.database {
                database.delete(&choices);
            }
        }
        found && all_exact && self.settings.stop_on_first_failure
    }

    /// The run's test cases so far, as the health checks count them.
    fn counts(&self) -> Counts {
        Counts {
            valid: self.result.valid_test_cases,
            invalid: self.result.invalid_test_cases,
            small_overruns: self.small_overruns,
        }
    }

    /// Whether generation goes on: enough valid test cases not yet run and,
    /// after a first bug, a little longer to find distinct others.
    fn should_generate_more(&self) -> bool {
        if self.stopped() || self.result.valid_test_cases >= self.settings.test_cases {
            return false;
        }
        match self.first_bug_at {
            None => true,
            Some(_) if !self.settings.stop_on_first_failure => true,
            Some(_) if !self.settings.report_multiple_failures => false,
            Some(first) => {
                let calls = self.result.test_cases;
                calls < 10 || calls < (first + 1000).min(self.last_bug_at * 2)
            }
        }
    }

    /// Whether generation stops now that the space of test cases is used
    /// up (see [`WhenExhausted`]); if so the run is recorded as exhausted.
    fn exhaustion_stops(&mut self) -> bool {
        let stops = self.settings.when_exhausted == WhenExhausted::Stop;
        self.exhausted |= stops;
        stops
    }

    /// Whether the invalid test cases so far leave generation room to go on:
    /// Hypothesis's rule (`_invalid_thresholds`, HypothesisWorks/hypothesis
    /// issue 4623). Generation gives up once it is 99% confident that fewer
    /// than 1% of test cases are valid: after more than
    /// `INVALID_BASE + INVALID_PER_VALID * valid` invalid ones. Overruns the
    /// engine caused itself (the small phase's) do not count.
    fn within_invalid_budget(&self) -> bool {
        let invalid = self.result.invalid_test_cases - self.small_overruns;
        invalid
            <= INVALID_BASE
                .saturating_add(INVALID_PER_VALID.saturating_mul(self.result.valid_test_cases))
    }

    fn generate(&mut self) {
        // The simplest test case first: it finds many bugs at once, minimal already.
        if !self.ran_simplest {
            self.ran_simplest = true;
            let mut first = TestData::replaying(Vec::new(), self.settings.max_choices);
            first.stamped = self.nondeterministic();
            self.execute(&mut first);
            self.simplest_length = first.nodes.len();
            // An aborted run is over: a health check must not replace its reason.
            if self.stopped() {
                return;
            }
            if let Some(failure) = self.health.after_simplest(&first) {
                self.result.stop = Some(StopReason::HealthCheck(failure));
                return;
            }
            // A test that makes no choice (or only forced ones) has one test case.
            if self.tree.is_exhausted() {
                self.exhausted = true;
                return;
            }
        }

        // Small test cases first, as Hypothesis does: for the first valid test
        // cases, a test case may make at most a few times as many choices as
        // the simplest one (it overruns past that). An easy bug is then found
        // on a small example, which is far cheaper to shrink; a test whose
        // test cases are seldom that small leaves this phase after a few
        // overruns in a row. These overruns are the engine's doing, so they
        // count toward no health check.
        let small_valid = (self.settings.test_cases / 10).min(50);
        let small_limit = (5 * self.simplest_length + 10).min(self.settings.max_choices);
        // With targets, half the budget goes to hill-climbing afterwards.
        let mut consecutive_duplicates = 0u32;
        let mut mutation: Option<crate::data::Values> = None;
        let mut chain: Option<MutationChain> = None;
        // The vectors of the last chain that ended, for the next to take.
        let mut spare: Option<(Nodes, Vec<Span>)> = None;
        let mut scratch = crate::mutate::MutationScratch::default();
        // Each generated test case restarts the last one, in its vectors.
        let mut data = TestData::replaying(Vec::new(), 0);
        while self.should_generate_more() && self.within_invalid_budget() {
            if !self.targets.is_empty()
                && !self.optimised
                && self.settings.phases.target
                && self.first_bug_at.is_none()
                && self.result.valid_test_cases >= self.settings.test_cases / 2
            {
                break;
            }
            let small = self.small_phase
                && self.first_bug_at.is_none()
                && self.result.valid_test_cases < small_valid
                && self.result.test_cases <= 5 * small_valid
                && small_limit < self.settings.max_choices;
            let max_choices = if small {
                small_limit
            } else {
                self.settings.max_choices
            };
            // A mutation of the last test case if one is due; else steer away
            // from what has run: a prefix of known choices down to a value
            // never made there, avoiding exhausted branches.
            let mut source = self.source.split();
            let mutated = mutation.take();
            let is_mutation = mutated.is_some();
            let prefix = mutated.unwrap_or_else(|| {
                let mut prefix = data.take_prefix();
                self.tree.novel_prefix_into(&mut source, &mut prefix);
                prefix
            });
            // While test cases are kept small, a novel prefix first runs with
            // the simplest values after it, as Hypothesis does (its estimate
            // of the smallest test case from that prefix): each new value
            // meets the simplest of everything drawn after it, so a bug at a
            // value combined with the bounds' simplest ones (`(15, 0)`, a
            // float bound then 0.0) is tried on purpose, not by chance.
            if small && !is_mutation && !prefix.is_empty() && !self.tree.replay_is_known(&prefix) {
                let mut zero = TestData::replaying(prefix.to_vec(), max_choices);
                zero.stamped = self.nondeterministic();
                self.execute(&mut zero);
                if self.stopped() {
                    break;
                }
                if self.tree.is_exhausted() && self.exhaustion_stops() {
                    break;
                }
                // It is generation's test case like any other to the health checks.
                let counts = self.counts();
                if let Some(failure) = self.health.after_generated(&zero, false, counts) {
                    self.result.stop = Some(StopReason::HealthCheck(failure));
                    return;
                }
                if !self.should_generate_more() || !self.within_invalid_budget() {
                    break;
                }
            }
            let old_prefix = data.restart_generating(prefix, source, max_choices);
            // A mutation's prefix left a vector for the next mutation.
            if scratch.spare.capacity() == 0 {
                scratch.spare = old_prefix;
            }
            // Under nondeterministic handling a failure may be reported
            // unconfirmed, from the test case that found it.
            data.stamped = self.nondeterministic();
            self.execute(&mut data);
            // Mutations come in chains, as Hypothesis' do: a generated test
            // case (valid or invalid) starts one half the time; a mutation
            // that ran something new, and did no worse, becomes the base of
            // the next, so copies accumulate (three equal values, a run of
            // equal steps); a chain ends after MUTATION_CHAIN mutations or
            // MUTATION_FAILURES that did not take. A runaway value (nested
            // too deep) neither starts a chain nor takes.
            // The chain takes the test case's vectors rather than copies
            // of them (the test case is done with them: only its status
            // and timing are read below), and gives it back vectors it no
            // longer needs, for the next test case to write into.
            if is_mutation {
                if let Some(mut link) = chain.take() {
                    let took =
                        self.last_was_new && data.status >= Some(link.status) && !data.too_deep;
                    if took {
                        std::mem::swap(&mut link.nodes, &mut data.nodes);
                        std::mem::swap(&mut link.spans, &mut data.spans);
                        link.failures = 0;
                    } else {
                        link.failures += 1;
                    }
                    link.left -= 1;
                    if link.left > 0 && link.failures < MUTATION_FAILURES {
                        chain = Some(link);
                    } else {
                        spare = Some((link.nodes, link.spans));
                    }
                }
            } else if let Some(status @ (Status::Valid | Status::Invalid)) = data.status
                && !data.too_deep
                && let Some(source) = data.source()
                && source.chance(MUTATION_PROBABILITY)
            {
                let (nodes, spans) = spare.take().unwrap_or_default();
                chain = Some(MutationChain {
                    nodes: std::mem::replace(&mut data.nodes, nodes),
                    spans: std::mem::replace(&mut data.spans, spans),
                    status,
                    left: MUTATION_CHAIN,
                    failures: 0,
                });
            }
            if let Some(link) = &chain {
                let mut source = self.source.split();
                // The first of a few tries that runs something new; the
                // vectors of the others go back to the scratch.
                for _ in 0..MUTATION_FAILURES {
                    let Some(choices) = crate::mutate::copy_onto_equal_label_with(
                        &mut scratch,
                        &link.nodes,
                        &link.spans,
                        &mut source,
                    ) else {
                        continue;
                    };
                    if self.tree.runs_nothing_new(&choices) {
                        scratch.spare = choices;
                    } else {
                        mutation = Some(choices);
                        break;
                    }
                }
                if mutation.is_none()
                    && let Some(link) = chain.take()
                {
                    spare = Some((link.nodes, link.spans));
                }
            }
            if self.stopped() {
                break;
            }
            if self.tree.is_exhausted() && self.exhaustion_stops() {
                break;
            }
            let small_overrun = small && data.status == Some(Status::Overrun);
            if small_overrun {
                self.small_overruns += 1;
                self.small_overruns_in_a_row += 1;
                if self.small_overruns_in_a_row >= 5 {
                    self.small_phase = false;
                }
            } else {
                self.small_overruns_in_a_row = 0;
            }
            if !self.last_was_new {
                consecutive_duplicates += 1;
                // Almost every new test case repeats an old one: the space is exhausted.
                if consecutive_duplicates >= 50 && self.exhaustion_stops() {
                    break;
                }
            } else {
                consecutive_duplicates = 0;
            }
            let counts = self.counts();
            if let Some(failure) = self.health.after_generated(&data, small_overrun, counts) {
                self.result.stop = Some(StopReason::HealthCheck(failure));
                return;
            }
        }
    }

    /// Hill-climbs each label's best test case with the rest of the budget.
    fn optimise_targets(&mut self) {
        let mut labels: Vec<String> = self.targets.keys().cloned().collect();
        labels.sort();
        for label in labels {
            let Some(start) = self.targets.get(&label).cloned() else {
                continue;
            };
            let budget = self.settings.test_cases;
            let mut execute = |candidate: Vec<ChoiceValue>| -> Step {
                if self.stopped()
                    || self.failure_ends_exploration()
                    || self.result.valid_test_cases >= budget
                {
                    return Step::Stop;
                }
                let mut data = TestData::replaying(candidate, self.settings.max_choices);
                self.execute(&mut data);
                if data.status == Some(Status::Interesting) && self.settings.stop_on_first_failure {
                    return Step::Stop;
                }
                Step::Ran(
                    crate::target::score_of(&data, &label),
                    data.nodes.into_vec(),
                )
            };
            crate::target::climb(start, &mut execute);
            if self.failure_ends_exploration() || self.stopped() {
                return;
            }
        }
    }

    /// Shrinks each failure (only the smallest, unless every distinct
    /// failure is reported), smallest first. A failure must reproduce before
    /// it is worth shrinking: one replay checks it, or under nondeterministic
    /// handling its confirmation, and an unconfirmed one is left as it is.
    fn shrink(&mut self) {
        // Largest first: the smallest is popped first.
        let mut by_size: Vec<&Example> = self.failures.values().collect();
        by_size
            .sort_by(|a, b| sequence_cmp(&b.nodes, &a.nodes).then_with(|| b.origin.cmp(&a.origin)));
        let mut pending: Vec<String> = by_size.into_iter().map(|e| e.origin.clone()).collect();
        let mut done: HashSet<String> = HashSet::new();
        while let Some(origin) = pending.pop() {
            if self.stopped() {
                break;
            }
            if !done.insert(origin.clone()) || !self.failures.contains_key(&origin) {
                continue;
            }
            // The check counts as a shrink call (as Hypothesis counts its own
            // in the shrink phase).
            let before = self.result.test_cases;
            if self.nondeterministic() {
                if !self.replays.contains_key(&origin) {
                    self.confirm(&origin);
                }
            } else if self.replay_failure(&origin, 1, |_| false).failed == 0 && !self.stopped() {
                let evidence = Flakiness::Outcome {
                    origin: origin.clone(),
                };
                if self.nondeterminism_found(evidence) {
                    self.confirm(&origin);
                }
            }
            let tries = match self.standing(&origin) {
                _ if self.stopped() => {
                    self.result.shrink_calls += self.result.test_cases - before;
                    break;
                }
                Standing::Deterministic => 1,
                Standing::Confirmed(replays) => replays.tries(),
                Standing::Unconfirmed(_) => {
                    self.result.shrink_calls += self.result.test_cases - before;
                    continue;
                }
            };
            let Some(example) = self.failures.get(&origin).cloned() else {
                continue;
            };
            let max_choices = self.settings.max_choices;
            let max_calls = self.settings.max_shrink_calls;
            let mut replay = RunnerReplay {
                runner: self,
                max_choices,
                origin: origin.clone(),
                tries,
            };
            let mut shrinker = Shrinker::new(&mut replay, example, max_calls);
            shrinker.shrink();
            let best = shrinker.best.clone();
            let statistics = shrinker.statistics().to_vec();
            let others: Vec<String> = shrinker.other_failures.keys().cloned().collect();
            drop(shrinker);
            self.result.shrink_calls += self.result.test_cases - before;
            merge_statistics(&mut self.result.shrink_statistics, &statistics);
            self.record_failure(best);
            if !self.settings.report_multiple_failures {
                break;
            }
            pending.extend(others.into_iter().filter(|o| !done.contains(o)));
        }
    }

    fn finish(mut self) -> RunResult {
        let failures = std::mem::take(&mut self.failures);
        let mut found: Vec<(Example, Standing)> = failures
            .into_values()
            .map(|e| {
                let standing = self.standing(&e.origin);
                (e, standing)
            })
            .collect();
        found.sort_by(|(a, _), (b, _)| sequence_cmp(&a.nodes, &b.nodes));
        // An unconfirmed failure is reported only when no other is.
        if found
            .iter()
            .any(|(_, standing)| !matches!(standing, Standing::Unconfirmed(_)))
        {
            found.retain(|(_, standing)| !matches!(standing, Standing::Unconfirmed(_)));
        }
        if !self.settings.report_multiple_failures {
            found.truncate(1);
        }
        if self.result.flakiness().is_some() {
            found.clear();
        }
        if self.shrunk
            && let Some(database) = &mut self.database
        {
            for (example, _) in &found {
                database.mark_shrunk(&example.choices());
            }
        }
        if let Some(database) = &mut self.database {
            database.clear_secondary();
            let warnings = database.take_warnings();
            self.result.warnings.extend(warnings);
        }
        self.result.failures = found
            .into_iter()
            .map(|(e, standing)| Failure {
                choices: e.choices(),
                origin: e.origin,
                standing,
            })
            .collect();
        self.result
    }
}

/// The invalid test cases generation tolerates with no valid one:
/// `ceil(ln(1 - c) / ln(1 - r)) - 1` for a confidence `c = 0.99` that the
/// valid rate is below `r = 0.01` (`ln 0.01 / ln 0.99 = 458.2`).
const INVALID_BASE: u64 = 458;

/// The invalid test cases each valid one buys: `1 / r`.
const INVALID_PER_VALID: u64 = 100;

/// How often a generated test case (valid or invalid) is followed by a
/// chain of mutations of it, each copying a span onto another with the same
/// label ([`crate::mutate`]).
const MUTATION_PROBABILITY: f64 = 0.5;
/// The most mutations in one chain. Longer chains find more bugs that need
/// several equal values and fewer that need fresh values: over 100 runs of
/// the find-power benchmark, chains of 3 found a sorted list of 4 distinct
/// bytes in 12, chains of 1 in 17 (a run of equal values 88 against 83).
const MUTATION_CHAIN: u32 = 2;
/// A chain ends after this many mutations in a row that did not take (ran
/// nothing new, or did worse than their base).
const MUTATION_FAILURES: u32 = 2;

/// The test case the next mutation of a chain copies within, and what is left of the chain.
struct MutationChain {
    /// The base's choices (a test case's vector, taken whole: its mark of
    /// whether any node owns memory goes with it).
    nodes: Nodes,
    spans: Vec<Span>,
    status: Status,
    left: u32,
    failures: u32,
}

/// Adds one shrink's per-pass figures to the run's, pass by pass.
fn merge_statistics(total: &mut Vec<PassStatistics>, more: &[PassStatistics]) {
    for pass in more {
        match total.iter_mut().find(|t| t.name == pass.name) {
            Some(t) => t.add(pass),
            None => total.push(pass.clone()),
        }
    }
}
