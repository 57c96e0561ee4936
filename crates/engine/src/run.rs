//! The test run: generate test cases, find failures, shrink them, report.
//!
//! The caller supplies the test function as a closure over a [`TestData`]; it
//! may run code in-process or relay every choice to a remote client. The run
//! loop starts with the simplest test case, then generates at random (never
//! running the same choice sequence twice), stops at the first failure or when
//! enough valid test cases have passed (or the space is exhausted), and
//! shrinks each distinct failure.

use crate::choice::ChoiceValue;
use crate::data::{DEFAULT_MAX_CHOICES, Status, TestData};
use crate::random::Source;
use crate::shrink::{Example, Shrinker};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

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
    /// Test cases spent shrinking.
    pub shrink_calls: u64,
    /// Whether the test function aborted the run.
    pub aborted: bool,
}

impl RunResult {
    /// Whether the property held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.health_check_failure.is_none()
    }
}

fn fingerprint(choices: &[ChoiceValue]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    choices.hash(&mut hasher);
    hasher.finish()
}

/// Runs a property: `test` runs one test case on the data it is given and
/// concludes it (a test case left unconcluded counts as valid). `test` returns
/// false to abort the whole run (e.g. the client went away); the result then
/// has `aborted` set and reports what was found so far.
pub fn run(
    settings: &RunSettings,
    saved: &[Vec<ChoiceValue>],
    test: &mut dyn FnMut(&mut TestData) -> bool,
) -> RunResult {
    let aborted = std::cell::Cell::new(false);
    let mut test = |data: &mut TestData| {
        if aborted.get() || !test(data) {
            aborted.set(true);
            if data.status.is_none() {
                data.conclude(Status::Overrun, None);
            }
        }
    };
    let mut result = RunResult::default();
    let mut failures: HashMap<String, Example> = HashMap::new();
    let mut source = Source::from_seed128(settings.seed);
    let mut seen: HashSet<u64> = HashSet::new();

    let mut execute = |data: &mut TestData, result: &mut RunResult| {
        test(data);
        if data.status.is_none() {
            data.conclude(Status::Valid, None);
        }
        result.test_cases += 1;
        match data.status {
            Some(Status::Valid) => result.valid_test_cases += 1,
            Some(Status::Invalid) | Some(Status::Overrun) => result.invalid_test_cases += 1,
            _ => {}
        }
    };
    let record = |data: &TestData, failures: &mut HashMap<String, Example>| {
        if data.status == Some(Status::Interesting) {
            let example = Example::from_data(data);
            let keep = failures.get(&example.origin).is_none_or(|e| {
                crate::choice::sequence_cmp(&example.nodes, &e.nodes) == std::cmp::Ordering::Less
            });
            if keep {
                failures.insert(example.origin.clone(), example);
            }
        }
    };

    if settings.phases.reuse {
        for choices in saved {
            let mut data = TestData::replaying(choices.clone(), settings.max_choices);
            execute(&mut data, &mut result);
            record(&data, &mut failures);
        }
    }

    if settings.phases.generate && failures.is_empty() {
        // The simplest test case first: it finds many bugs at once, minimal already.
        let mut first = TestData::replaying(Vec::new(), settings.max_choices);
        execute(&mut first, &mut result);
        seen.insert(fingerprint(&first.choices()));
        record(&first, &mut failures);

        let max_invalid = (settings.test_cases * 10).max(1000);
        let mut consecutive_duplicates = 0u32;
        while failures.is_empty()
            && !aborted.get()
            && result.valid_test_cases < settings.test_cases
            && result.invalid_test_cases < max_invalid
        {
            let mut data = TestData::generating(Vec::new(), source.split(), settings.max_choices);
            execute(&mut data, &mut result);
            record(&data, &mut failures);
            if !seen.insert(fingerprint(&data.choices())) {
                consecutive_duplicates += 1;
                // Almost every new test case repeats an old one: the space is exhausted.
                if consecutive_duplicates >= 50 {
                    break;
                }
            } else {
                consecutive_duplicates = 0;
            }
            if result.valid_test_cases < 10
                && result.invalid_test_cases >= 50
                && !settings
                    .suppress_health_checks
                    .contains(&HealthCheck::FilterTooMuch)
            {
                result.health_check_failure = Some(format!(
                    "It looks like this test is filtering out a lot of inputs. {} inputs were \
                     rejected and only {} passed. If this is expected, suppress the \
                     filter_too_much health check. Otherwise, generate the values you need \
                     directly rather than rejecting (with assume or filter) the ones you don't.",
                    result.invalid_test_cases, result.valid_test_cases
                ));
                return result;
            }
        }
    }

    if settings.phases.shrink {
        let mut pending: Vec<String> = failures.keys().cloned().collect();
        pending.sort();
        let mut done: HashSet<String> = HashSet::new();
        while let Some(origin) = pending.pop() {
            if aborted.get() {
                break;
            }
            if !done.insert(origin.clone()) {
                continue;
            }
            let Some(example) = failures.get(&origin).cloned() else {
                continue;
            };
            let mut replay = |choices: Vec<ChoiceValue>| {
                let mut data = TestData::replaying(choices, settings.max_choices);
                test(&mut data);
                if data.status.is_none() {
                    data.conclude(Status::Valid, None);
                }
                data
            };
            let mut shrinker = Shrinker::new(&mut replay, example, settings.max_shrink_calls);
            shrinker.shrink();
            result.test_cases += shrinker.calls as u64;
            result.shrink_calls += shrinker.calls as u64;
            failures.insert(origin.clone(), shrinker.best.clone());
            if settings.report_multiple_failures {
                for (other, example) in std::mem::take(&mut shrinker.other_failures) {
                    let keep = failures.get(&other).is_none_or(|e| {
                        crate::choice::sequence_cmp(&example.nodes, &e.nodes)
                            == std::cmp::Ordering::Less
                    });
                    if keep {
                        failures.insert(other.clone(), example);
                    }
                    if !done.contains(&other) {
                        pending.push(other);
                    }
                }
            }
        }
    }

    result.aborted = aborted.get();
    let mut found: Vec<Example> = failures.into_values().collect();
    found.sort_by(|a, b| crate::choice::sequence_cmp(&a.nodes, &b.nodes));
    if !settings.report_multiple_failures {
        found.truncate(1);
    }
    result.failures = found
        .into_iter()
        .map(|e| Failure {
            choices: e.choices(),
            origin: e.origin,
        })
        .collect();
    result
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
