//! The test run: generate test cases, find failures, shrink them, report.
//!
//! The caller supplies the test function as a closure over a [`TestData`]; it
//! may run code in-process or relay every choice to a remote client. The run
//! loop starts with the simplest test case, then generates at random (never
//! running the same choice sequence twice), stops at the first failure or when
//! enough valid test cases have passed (or the space is exhausted), and
//! shrinks each distinct failure.

use crate::choice::{ChoiceValue, sequence_cmp};
use crate::data::{DEFAULT_MAX_CHOICES, Status, TestData};
use crate::database::{ExampleDatabase, KeyedDatabase};
use crate::random::Source;
use crate::shrink::{Example, Replay, Shrinker};
use crate::target::{Step, TargetBest};
use crate::tree::DataTree;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;

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

/// Health checks a run can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HealthCheck {
    /// Too many test cases were rejected.
    FilterTooMuch,
    /// Test cases are too slow.
    TooSlow,
    /// Test cases make too many choices.
    TestCasesTooLarge,
    /// The simplest test case is already large.
    LargeInitialTestCase,
}

impl HealthCheck {
    /// The Hegel name of the health check.
    pub fn name(self) -> &'static str {
        match self {
            HealthCheck::FilterTooMuch => "filter_too_much",
            HealthCheck::TooSlow => "too_slow",
            HealthCheck::TestCasesTooLarge => "test_cases_too_large",
            HealthCheck::LargeInitialTestCase => "large_initial_test_case",
        }
    }

    /// The health check with a Hegel name.
    pub fn from_name(name: &str) -> Option<HealthCheck> {
        [
            HealthCheck::FilterTooMuch,
            HealthCheck::TooSlow,
            HealthCheck::TestCasesTooLarge,
            HealthCheck::LargeInitialTestCase,
        ]
        .into_iter()
        .find(|h| h.name() == name)
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
    /// Health checks not to fail on.
    pub suppress_health_checks: Vec<HealthCheck>,
    /// Most choices a test case may make.
    pub max_choices: usize,
    /// Most test cases to spend shrinking each failure.
    pub max_shrink_calls: usize,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            test_cases: 100,
            seed: 0,
            phases: Phases::default(),
            report_multiple_failures: true,
            suppress_health_checks: Vec::new(),
            max_choices: DEFAULT_MAX_CHOICES,
            max_shrink_calls: 5_000,
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
    /// A failed health check's message.
    pub health_check_failure: Option<String>,
    /// Test cases spent shrinking, each failure's replay before it is shrunk
    /// included.
    pub shrink_calls: u64,
    /// Whether the test function aborted the run.
    pub aborted: bool,
    /// Set when the test proved flaky: what was inconsistent.
    pub flaky: Option<String>,
    /// Problems worth telling the user that did not stop the run (e.g. unreadable database entries).
    pub warnings: Vec<String>,
}

impl RunResult {
    /// Whether the property held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.health_check_failure.is_none() && self.flaky.is_none()
    }
}

/// The flaky-generation message (the wording hegel-core uses, which clients look for).
pub const FLAKY_GENERATION: &str = "Your data generation is non-deterministic: a different call to \
draw() happened than expected, or your test errored before data generation that previously \
completed successfully had finished. This usually means your test depends on external state \
such as global variables, system time, or external random number generators.";

/// The flaky-outcome message.
pub const FLAKY_OUTCOME: &str = "Your test produced different outcomes when run with the same \
generated data - it failed when it previously succeeded, or succeeded when it previously failed. \
This usually means your test depends on external state such as global variables, system time, \
or external random number generators.";

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
    aborted: bool,
    first_bug_at: Option<u64>,
    last_bug_at: u64,
    source: Source,
    ran_simplest: bool,
    optimised: bool,
    /// Generation kept repeating itself: the space of test cases is used up.
    exhausted: bool,
    /// Generated test cases that ran past the choice limit.
    overruns: u64,
    /// Choices the simplest test case made.
    simplest_length: usize,
    /// Whether early test cases are still kept small (see [`Runner::generate`]).
    small_phase: bool,
    /// Early test cases that ran past the small-phase limit, in all and in a row.
    small_overruns: u64,
    small_overruns_in_a_row: u32,
    /// Generation time reported for the test cases run before the tenth
    /// valid one (the `too_slow` health check's window).
    early_draw_seconds: f64,
}

/// The shrinker's way to run candidates: through the runner, so every test
/// case counts, lands in the choice tree and records failures; candidates
/// whose replay the tree already knows are not run again.
struct RunnerReplay<'r, 's, 't, 'd> {
    runner: &'r mut Runner<'s, 't, 'd>,
    max_choices: usize,
}

impl Replay for RunnerReplay<'_, '_, '_, '_> {
    fn replay(&mut self, choices: Vec<ChoiceValue>) -> TestData {
        let mut data = TestData::replaying(choices, self.max_choices);
        self.runner.execute(&mut data);
        data
    }

    fn is_known(&mut self, choices: &[ChoiceValue]) -> bool {
        self.runner.tree.replay_is_known(choices)
    }

    fn runs_past(&mut self, choices: &[ChoiceValue]) -> bool {
        self.runner.tree.replay_runs_past(choices)
    }
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
            aborted: false,
            first_bug_at: None,
            last_bug_at: 0,
            source: Source::from_seed128(settings.seed),
            ran_simplest: false,
            optimised: false,
            exhausted: false,
            overruns: 0,
            simplest_length: 0,
            small_phase: true,
            small_overruns: 0,
            small_overruns_in_a_row: 0,
            early_draw_seconds: 0.0,
        }
    }

    fn stopped(&self) -> bool {
        self.aborted || self.result.flaky.is_some() || self.result.health_check_failure.is_some()
    }

    /// Runs one test case and records everything it tells us.
    fn execute(&mut self, data: &mut TestData) {
        self.last_was_new = false;
        if self.stopped() {
            data.conclude(Status::Overrun, None);
            return;
        }
        if !(self.test)(data) {
            self.aborted = true;
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
        match self.tree.record(&data.nodes, ended) {
            Ok(new) => self.last_was_new = new,
            Err(difference) => {
                self.result.flaky = Some(format!("{FLAKY_GENERATION} ({difference})"));
                return;
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
                        nodes: data.nodes.clone(),
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
        self.failures.insert(example.origin.clone(), example);
    }

    fn run(mut self, saved: Vec<Vec<ChoiceValue>>) -> RunResult {
        if self.settings.phases.reuse {
            self.reuse(saved);
        }
        if self.settings.phases.generate && self.failures.is_empty() && !self.stopped() {
            self.generate();
        }
        if self.settings.phases.target && self.failures.is_empty() && !self.stopped() {
            self.optimise_targets();
            self.optimised = true;
            // The rest of the budget goes to generation again.
            if self.settings.phases.generate
                && !self.targets.is_empty()
                && !self.exhausted
                && self.failures.is_empty()
                && !self.stopped()
            {
                self.generate();
            }
        }
        if self.settings.phases.shrink && !self.stopped() {
            self.shrink();
        }
        self.finish()
    }

    fn reuse(&mut self, saved: Vec<Vec<ChoiceValue>>) {
        for choices in saved {
            let mut data = TestData::replaying(choices.clone(), self.settings.max_choices);
            self.execute(&mut data);
            // A replayed failure is shrunk like a new one: in a store shared by
            // several workers it may be another worker's example from the middle
            // of its shrinking, and shrinking an already minimal one costs a
            // few test cases.
            if data.status != Some(Status::Interesting)
                && let Some(database) = &mut self.database
            {
                database.delete(&choices);
            }
        }
    }

    /// Fails the run with a health check unless it is suppressed; true if it failed.
    fn fail_health_check(&mut self, check: HealthCheck, message: String) -> bool {
        if self.settings.suppress_health_checks.contains(&check) {
            return false;
        }
        self.result.health_check_failure = Some(message);
        true
    }

    /// Whether generation goes on: enough valid test cases not yet run and,
    /// after a first bug, a little longer to find distinct others.
    fn should_generate_more(&self) -> bool {
        if self.stopped() || self.result.valid_test_cases >= self.settings.test_cases {
            return false;
        }
        match self.first_bug_at {
            None => true,
            Some(_) if !self.settings.report_multiple_failures => false,
            Some(first) => {
                let calls = self.result.test_cases;
                calls < 10 || calls < (first + 1000).min(self.last_bug_at * 2)
            }
        }
    }

    fn generate(&mut self) {
        // The simplest test case first: it finds many bugs at once, minimal already.
        if !self.ran_simplest {
            self.ran_simplest = true;
            let mut first = TestData::replaying(Vec::new(), self.settings.max_choices);
            self.execute(&mut first);
            self.simplest_length = first.nodes.len();
            let large = first.status == Some(Status::Overrun)
                || first.nodes.len() > self.settings.max_choices / 2;
            if large
                && self.fail_health_check(
                    HealthCheck::LargeInitialTestCase,
                    format!(
                        "The smallest natural input for this test is very large: the simplest test \
                     case made {} choices (the limit is {}). Generate smaller values (lower \
                     min_size, fewer nested collections), or suppress the \
                     large_initial_test_case health check if this is intended.",
                        first.nodes.len(),
                        self.settings.max_choices
                    ),
                )
            {
                return;
            }
        }

        let max_invalid = (self.settings.test_cases * 10).max(1000);
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
        while self.should_generate_more()
            && self.result.invalid_test_cases - self.small_overruns < max_invalid
        {
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
            let mut data = TestData::generating(Vec::new(), self.source.split(), max_choices);
            self.execute(&mut data);
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
                if consecutive_duplicates >= 50 {
                    self.exhausted = true;
                    break;
                }
            } else {
                consecutive_duplicates = 0;
            }
            if data.status == Some(Status::Overrun) && !small_overrun {
                self.overruns += 1;
            }
            if self.result.valid_test_cases <= 10 {
                self.early_draw_seconds += data.draw_seconds;
                if self.early_draw_seconds > 1.0
                    && self.fail_health_check(
                        HealthCheck::TooSlow,
                        format!(
                            "Data generation is extremely slow: only {} valid test cases were                              generated in {:.2} seconds of drawing values ({} invalid ones).                              Generate smaller data (lower max_size, fewer nested collections,                              simpler regexes), or suppress the too_slow health check.",
                            self.result.valid_test_cases,
                            self.early_draw_seconds,
                            self.result.invalid_test_cases
                        ),
                    )
                {
                    return;
                }
            }
            if self.result.valid_test_cases < 10
                && self.overruns >= 20
                && self.fail_health_check(
                    HealthCheck::TestCasesTooLarge,
                    format!(
                        "Test cases are too large: {} of the first test cases ran past the limit \
                         of {} choices while only {} were valid. Bound the sizes of generated \
                         collections (max_size) or suppress the test_cases_too_large health check.",
                        self.overruns, self.settings.max_choices, self.result.valid_test_cases
                    ),
                )
            {
                return;
            }
            if self.result.valid_test_cases < 10
                && self.result.invalid_test_cases - self.small_overruns >= 50
                && !self
                    .settings
                    .suppress_health_checks
                    .contains(&HealthCheck::FilterTooMuch)
            {
                self.result.health_check_failure = Some(format!(
                    "It looks like this test is filtering out a lot of inputs. {} inputs were \
                     rejected and only {} passed. If this is expected, suppress the \
                     filter_too_much health check. Otherwise, generate the values you need \
                     directly rather than rejecting (with assume or filter) the ones you don't.",
                    self.result.invalid_test_cases, self.result.valid_test_cases
                ));
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
                    || !self.failures.is_empty()
                    || self.result.valid_test_cases >= budget
                {
                    return Step::Stop;
                }
                let mut data = TestData::replaying(candidate, self.settings.max_choices);
                self.execute(&mut data);
                if data.status == Some(Status::Interesting) {
                    return Step::Stop;
                }
                Step::Ran(crate::target::score_of(&data, &label), data.nodes)
            };
            crate::target::climb(start, &mut execute);
            if !self.failures.is_empty() || self.stopped() {
                return;
            }
        }
    }

    fn shrink(&mut self) {
        let mut pending: Vec<String> = self.failures.keys().cloned().collect();
        pending.sort();
        let mut done: HashSet<String> = HashSet::new();
        while let Some(origin) = pending.pop() {
            if self.stopped() {
                break;
            }
            if !done.insert(origin.clone()) {
                continue;
            }
            let Some(example) = self.failures.get(&origin).cloned() else {
                continue;
            };
            // A failure must reproduce before it is worth shrinking. This
            // replay counts as a shrink call (as Hypothesis counts its own in
            // the shrink phase).
            let before = self.result.test_cases;
            let mut check = TestData::replaying(example.choices(), self.settings.max_choices);
            self.execute(&mut check);
            let reproduced = check.status == Some(Status::Interesting)
                && check.origin.as_deref() == Some(&origin);
            if self.stopped() || !reproduced {
                self.result.shrink_calls += self.result.test_cases - before;
                if !self.stopped() {
                    self.result.flaky = Some(FLAKY_OUTCOME.to_string());
                }
                break;
            }
            let max_choices = self.settings.max_choices;
            let max_calls = self.settings.max_shrink_calls;
            let mut replay = RunnerReplay {
                runner: self,
                max_choices,
            };
            let mut shrinker = Shrinker::new(&mut replay, example, max_calls);
            shrinker.shrink();
            let best = shrinker.best.clone();
            let others: Vec<String> = shrinker.other_failures.keys().cloned().collect();
            drop(shrinker);
            self.result.shrink_calls += self.result.test_cases - before;
            self.record_failure(best);
            if self.settings.report_multiple_failures {
                pending.extend(others.into_iter().filter(|o| !done.contains(o)));
            }
        }
    }

    fn finish(mut self) -> RunResult {
        self.result.aborted = self.aborted;
        if let Some(database) = &mut self.database {
            database.clear_secondary();
            let warnings = database.take_warnings();
            self.result.warnings.extend(warnings);
        }
        let mut found: Vec<Example> = self.failures.into_values().collect();
        found.sort_by(|a, b| sequence_cmp(&a.nodes, &b.nodes));
        if !self.settings.report_multiple_failures {
            found.truncate(1);
        }
        if self.result.flaky.is_some() {
            found.clear();
        }
        self.result.failures = found
            .into_iter()
            .map(|e| Failure {
                choices: e.choices(),
                origin: e.origin,
            })
            .collect();
        self.result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::IntegerConstraints;
    use crate::data::Collection;

    fn fail(data: &mut TestData) {
        data.conclude(Status::Interesting, Some("assertion".into()));
    }

    #[test]
    fn finds_and_shrinks_an_integer_threshold() {
        let settings = RunSettings {
            seed: 3,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut |data| {
            let Ok(v) = data.draw_integer(IntegerConstraints::UNBOUNDED) else {
                return true;
            };
            if v > 1000 {
                fail(data);
            }
            true
        });
        assert_eq!(result.failures.len(), 1);
        assert_eq!(result.failures[0].choices, vec![ChoiceValue::Integer(1001)]);
    }

    #[test]
    fn shrinks_a_list_to_its_minimal_failing_form() {
        let settings = RunSettings {
            seed: 5,
            test_cases: 1000,
            ..RunSettings::default()
        };
        let draw_list = |data: &mut TestData| -> Option<Vec<i128>> {
            let mut c = Collection::new(0, None);
            let mut out = vec![];
            while c.more(data).ok()? {
                out.push(data.draw_integer(IntegerConstraints::UNBOUNDED).ok()?);
            }
            Some(out)
        };
        let result = run(&settings, &[], &mut |data| {
            let Some(xs) = draw_list(data) else {
                return true;
            };
            if xs.iter().sum::<i128>() > 100 {
                fail(data);
            }
            true
        });
        assert_eq!(result.failures.len(), 1);
        let mut replay = TestData::replaying(result.failures[0].choices.clone(), 1000);
        let xs = draw_list(&mut replay).unwrap();
        assert_eq!(xs, vec![101]);
    }

    #[test]
    fn passing_property_runs_the_requested_number_of_cases() {
        let settings = RunSettings {
            test_cases: 200,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut |data| {
            let _ = data.draw_integer(IntegerConstraints::UNBOUNDED);
            true
        });
        assert!(result.passed());
        assert_eq!(result.valid_test_cases, 200);
    }

    #[test]
    fn exhausted_space_ends_early() {
        let result = run(&RunSettings::default(), &[], &mut |data| {
            let _ = data.draw_boolean(0.5);
            true
        });
        assert!(result.passed());
        assert!(result.test_cases < 100);
    }
}

#[cfg(test)]
mod collection_shrinking {
    use super::*;
    use crate::generate::{Schema, generate};
    use crate::value::Value;

    fn schema(n: i128) -> Schema {
        let map = |entries: Vec<(&str, Value)>| {
            Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| (Value::text(k), v))
                    .collect(),
            )
        };
        Schema::parse(&map(vec![
            ("type", Value::text("list")),
            ("unique", Value::Bool(true)),
            ("min_size", Value::Integer(n)),
            ("max_size", Value::Integer(n)),
            ("elements", map(vec![("type", Value::text("integer"))])),
        ]))
        .unwrap()
    }

    #[test]
    fn fixed_size_unique_lists_shrink_to_consecutive_values() {
        for n in [3i128, 5, 8] {
            let s = schema(n);
            let settings = RunSettings {
                seed: 11,
                test_cases: 500,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                if generate(&s, data).is_ok() {
                    data.conclude(Status::Interesting, Some("always".into()));
                }
                true
            });
            let mut replay = TestData::replaying(result.failures[0].choices.clone(), 1000);
            let Value::Array(items) = generate(&s, &mut replay).unwrap() else {
                panic!()
            };
            let mut xs: Vec<i128> = items
                .iter()
                .map(|v| match v {
                    Value::Integer(i) => *i,
                    _ => panic!(),
                })
                .collect();
            xs.sort();
            let expected: Vec<i128> = (xs[0]..xs[0] + n).collect();
            assert_eq!(xs, expected, "n={n}");
        }
    }
}

#[cfg(test)]
mod binding_shrinking {
    use super::*;
    use crate::choice::IntegerConstraints;
    use crate::data::Collection;

    /// A size drawn first, then exactly that many booleans: the minimal
    /// failing example needs the size and a middle element removed together.
    fn draw(data: &mut TestData) -> Option<Vec<bool>> {
        let k = data
            .draw_integer(IntegerConstraints::bounded(1, 100))
            .ok()? as usize;
        let mut c = Collection::new(k, Some(k));
        let mut out = vec![];
        while c.more(data).ok()? {
            out.push(data.draw_boolean(0.5).ok()?);
        }
        Some(out)
    }

    #[test]
    fn deletes_in_the_middle_of_a_binding() {
        for n in [1usize, 4, 9] {
            let settings = RunSettings {
                seed: 7,
                test_cases: 1000,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                if let Some(x) = draw(data)
                    && x.len() >= 2
                    && x[0]
                    && x[x.len() - 1]
                    && x.iter().filter(|b| !**b).count() >= n
                {
                    data.conclude(Status::Interesting, Some("found".into()));
                }
                true
            });
            let mut replay = TestData::replaying(result.failures[0].choices.clone(), 10_000);
            let x = draw(&mut replay).unwrap();
            let mut expected = vec![false; n + 2];
            expected[0] = true;
            expected[n + 1] = true;
            assert_eq!(x, expected, "n={n}, {} shrink calls", result.shrink_calls);
        }
    }
}

#[cfg(test)]
mod matrix_shrinking {
    use super::*;
    use crate::choice::IntegerConstraints;

    fn draw(data: &mut TestData) -> Option<Vec<Vec<i128>>> {
        let rows = data.draw_integer(IntegerConstraints::bounded(1, 10)).ok()?;
        let columns = data.draw_integer(IntegerConstraints::bounded(1, 10)).ok()?;
        let mut m = Vec::new();
        for _ in 0..rows {
            let mut row = Vec::new();
            for _ in 0..columns {
                row.push(
                    data.draw_integer(IntegerConstraints::bounded(0, 10_000))
                        .ok()?,
                );
            }
            m.push(row);
        }
        Some(m)
    }

    /// Rows and columns must shrink together for the matrix to stay square.
    #[test]
    fn square_asymmetric_matrix_shrinks_to_two_by_two() {
        for seed in [1u128, 2, 3] {
            let settings = RunSettings {
                seed,
                test_cases: 500,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                if let Some(m) = draw(data) {
                    let n = m.len();
                    if m[0].len() == n && (0..n).any(|i| (i + 1..n).any(|j| m[i][j] != m[j][i])) {
                        data.conclude(Status::Interesting, Some("asymmetric".into()));
                    }
                }
                true
            });
            let mut replay = TestData::replaying(result.failures[0].choices.clone(), 10_000);
            let m = draw(&mut replay).unwrap();
            let mut all: Vec<i128> = m.concat();
            all.sort();
            assert_eq!((m.len(), all), (2, vec![0, 0, 0, 1]), "seed {seed}");
        }
    }
}

#[cfg(test)]
mod float_pair_shrinking {
    use super::*;
    use crate::choice::FloatConstraints;

    #[test]
    fn sum_of_pair_moves_magnitude_to_the_second() {
        let c = FloatConstraints {
            min: 0.0,
            max: 1000.0,
            allow_nan: false,
            width: 64,
        };
        let settings = RunSettings {
            seed: 4,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut |data| {
            if let (Ok(a), Ok(b)) = (data.draw_float(c), data.draw_float(c))
                && a + b > 1000.0
            {
                data.conclude(Status::Interesting, Some("sum".into()));
            }
            true
        });
        assert_eq!(
            result.failures[0].choices,
            vec![ChoiceValue::Float(1.0), ChoiceValue::Float(1000.0)]
        );
    }
}

#[cfg(test)]
mod health_checks {
    use super::*;
    use crate::choice::IntegerConstraints;
    use crate::data::Collection;

    fn huge(data: &mut TestData) -> bool {
        let mut c = Collection::new(10_000, None);
        while let Ok(true) = c.more(data) {}
        true
    }

    #[test]
    fn a_huge_simplest_test_case_fails_unless_suppressed() {
        let result = run(&RunSettings::default(), &[], &mut huge);
        let message = result.health_check_failure.expect("health check");
        assert!(message.contains("large_initial_test_case"), "{message}");
        let settings = RunSettings {
            suppress_health_checks: vec![
                HealthCheck::LargeInitialTestCase,
                HealthCheck::TestCasesTooLarge,
                HealthCheck::FilterTooMuch,
            ],
            test_cases: 5,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut huge);
        assert!(result.health_check_failure.is_none());
    }

    /// A test whose data takes `seconds` to generate per test case (as the
    /// caller reports it: the engine keeps no clock).
    fn slow_draws(seconds: f64) -> impl FnMut(&mut TestData) -> bool {
        move |data: &mut TestData| {
            let _ = data.draw_integer(IntegerConstraints::bounded(0, 1000));
            data.draw_seconds = seconds;
            true
        }
    }

    #[test]
    fn slow_generation_fails_too_slow_unless_suppressed() {
        let settings = RunSettings {
            test_cases: 100,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut slow_draws(0.3));
        let message = result.health_check_failure.expect("too_slow");
        assert!(message.contains("too_slow"), "{message}");
        assert!(
            result.test_cases <= 5,
            "stopped early: {}",
            result.test_cases
        );
        // Fast enough: 10 valid test cases in well under a second.
        let result = run(&settings, &[], &mut slow_draws(0.05));
        assert!(result.health_check_failure.is_none());
        let settings = RunSettings {
            suppress_health_checks: vec![HealthCheck::TooSlow],
            ..settings
        };
        let result = run(&settings, &[], &mut slow_draws(0.3));
        assert!(result.health_check_failure.is_none());
        assert_eq!(result.valid_test_cases, 100);
    }
}

#[cfg(test)]
mod huge_float_shrinking {
    use super::*;
    use crate::choice::FloatConstraints;

    /// Floats far beyond 2^53 once made a binary search spin forever.
    #[test]
    fn cancellation_in_huge_floats_shrinks_and_terminates() {
        let c = FloatConstraints {
            min: -1e100,
            max: 1e100,
            allow_nan: false,
            width: 64,
        };
        for seed in 0..20 {
            let settings = RunSettings {
                seed,
                test_cases: 2000,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                if let (Ok(x), Ok(y)) = (data.draw_float(c), data.draw_float(c))
                    && x + (y - x) != y
                {
                    data.conclude(Status::Interesting, Some("cancel".into()));
                }
                true
            });
            assert!(!result.failures.is_empty(), "seed {seed} found nothing");
        }
    }
}

#[cfg(test)]
mod list_shrinking_regressions {
    use super::*;
    use crate::choice::IntegerConstraints;
    use crate::data::Collection;

    /// Default settings with this seed and number of test cases.
    fn seeded(seed: u128, test_cases: u64) -> RunSettings {
        RunSettings {
            seed,
            test_cases,
            ..RunSettings::default()
        }
    }

    /// A list of at most `max_size` integers in 0..=`max_value`, of
    /// `average` size.
    fn draw_list(
        data: &mut TestData,
        max_size: usize,
        average: f64,
        max_value: i128,
    ) -> Option<Vec<i128>> {
        let mut c = Collection::with_average(0, max_size, average);
        let mut out = vec![];
        while c.more(data).ok()? {
            out.push(
                data.draw_integer(IntegerConstraints::bounded(0, max_value))
                    .ok()?,
            );
        }
        Some(out)
    }

    /// A test that fails as soon as an element after the first is 0 (before
    /// the rest is drawn), and at the end when there are five or more: the
    /// example shrinks while siblings are being simplified in bulk (this once
    /// indexed past the end of the shrunk example).
    #[test]
    fn bulk_simplification_survives_an_example_that_shrinks_under_it() {
        for seed in 0..50 {
            let result = run(&seeded(seed, 300), &[], &mut |data| {
                let mut c = Collection::with_average(0, 100_000, 10.0);
                let mut n = 0;
                while let Ok(true) = c.more(data) {
                    let Ok(x) = data.draw_integer(IntegerConstraints::bounded(0, 100)) else {
                        return true;
                    };
                    n += 1;
                    if n > 1 && x == 0 {
                        data.conclude(Status::Interesting, Some("zero".into()));
                        return true;
                    }
                }
                if n >= 5 {
                    data.conclude(Status::Interesting, Some("long".into()));
                }
                true
            });
            assert!(!result.failures.is_empty(), "seed {seed}");
        }
    }

    /// A list of about 200 elements that must keep 50: cut to exactly 50 in
    /// about 30 test cases (zeroed in bulk, the tail cut by a search), not
    /// one per element; the polish round's chunk deletions, which try every
    /// misaligned one, bring it to about 75.
    #[test]
    fn a_long_required_prefix_is_kept_whole() {
        for seed in 0..5 {
            let result = run(&seeded(seed, 1000), &[], &mut |data| {
                if let Some(xs) = draw_list(data, 100_000, 200.0, 100)
                    && xs.len() >= 50
                {
                    data.conclude(Status::Interesting, Some("long".into()));
                }
                true
            });
            let mut replay = TestData::replaying(result.failures[0].choices.clone(), 100_000);
            assert_eq!(
                draw_list(&mut replay, 100_000, 200.0, 100),
                Some(vec![0; 50]),
                "seed {seed}"
            );
            assert!(
                result.shrink_calls <= 90,
                "seed {seed}: {} shrink executions",
                result.shrink_calls
            );
        }
    }

    /// A list of about a hundred elements of which three matter: the values
    /// are zeroed and the tail deleted a run of elements at a time, not one
    /// per test case (about 100 shrink executions per seed once, 47-57 now).
    #[test]
    fn an_irrelevant_tail_goes_in_few_test_cases() {
        let draw_list = |data: &mut TestData| draw_list(data, 10_000, 100.0, 10_000);
        for seed in 0..10 {
            let result = run(&seeded(seed, 1000), &[], &mut |data| {
                if let Some(xs) = draw_list(data)
                    && xs.len() >= 3
                    && xs[0] >= 5000
                {
                    data.conclude(Status::Interesting, Some("x".into()));
                }
                true
            });
            let mut replay = TestData::replaying(result.failures[0].choices.clone(), 100_000);
            assert_eq!(
                draw_list(&mut replay),
                Some(vec![5000, 0, 0]),
                "seed {seed}"
            );
            assert!(
                result.shrink_calls <= 70,
                "seed {seed}: {} shrink executions",
                result.shrink_calls
            );
        }
    }
}
