//! The in-process backend: geist's engine, linked into the test process.
//!
//! The engine's run loop (`geist_engine::run_with_database`) drives the
//! search: it replays the examples saved in the database, generates, targets
//! and shrinks, and for each test case lends its `TestData` to the client,
//! which runs the property on it. No process, no serialization. The
//! failures come back as choice sequences, which [`InProcess`] replays on
//! fresh `TestData` when the run loop asks for the report.

use super::{CaseEnd, Lent, RunBackend, RunCase, SearchEnd};
use crate::runner::RunSummary;
use crate::settings::Settings;
use crate::transport::WireError;
use geist_engine::choice::ChoiceValue;
use geist_engine::data::DEFAULT_MAX_CHOICES;
use geist_engine::database::ExampleDatabase;
use geist_engine::{DatabaseHandle, Phases, RunSettings, TestData};
use std::sync::Arc;

/// Test cases whose draws are timed for the engine's `too_slow` health
/// check: the first ten that pass (the clock is not read on every draw of a
/// run).
const TIMED_PASSES: u32 = 10;

/// One in-process test case: the engine's data, lent for the test case.
pub(crate) struct LocalCase {
    /// The engine's record of the test case's choices.
    pub(crate) data: TestData,
    /// Whether outermost draws are timed (see [`TIMED_PASSES`]).
    pub(crate) time_draws: bool,
}

impl LocalCase {
    /// A case with no choices (a placeholder between test cases).
    pub(crate) fn empty() -> LocalCase {
        LocalCase {
            data: TestData::replaying(Vec::new(), DEFAULT_MAX_CHOICES),
            time_draws: false,
        }
    }
}

/// A run on the engine in this process.
pub(crate) struct InProcess {
    settings: RunSettings,
    seed: u64,
    database: Option<Arc<dyn ExampleDatabase>>,
    key: Option<Vec<u8>>,
    /// The choices of each failure found, smallest first.
    failures: Vec<Vec<ChoiceValue>>,
}

impl InProcess {
    /// A run of `settings` with `seed`, opening the example database when
    /// the property has a name to key it by.
    pub(crate) fn new(settings: &Settings, seed: u64) -> Result<InProcess, String> {
        let database =
            match (&settings.database, &settings.name) {
                (Some(setting), Some(_)) => Some(setting.open().map_err(|e| {
                    format!("geist: cannot open the example database {setting}: {e}")
                })?),
                _ => None,
            };
        Ok(InProcess {
            settings: RunSettings {
                test_cases: settings.test_cases,
                seed: u128::from(seed),
                phases: Phases::default(),
                report_multiple_failures: settings.report_multiple_failures,
                suppress_health_checks: settings.suppress_health_checks.clone(),
                max_choices: DEFAULT_MAX_CHOICES,
                max_shrink_calls: settings.max_shrink_calls,
                ..RunSettings::default()
            },
            seed,
            database,
            key: settings.name.as_ref().map(|n| n.as_bytes().to_vec()),
            failures: Vec::new(),
        })
    }
}

impl RunBackend for InProcess {
    fn search(&mut self, run_case: &mut RunCase<'_>) -> Result<SearchEnd, WireError> {
        let handle = match (&self.database, &self.key) {
            (Some(database), Some(key)) => Some(DatabaseHandle {
                database: database.as_ref(),
                key: key.clone(),
            }),
            _ => None,
        };
        // The engine lends its data for each test case: the run loop swaps
        // it into the test case's backend, and back.
        let mut passed = 0u32;
        let result = geist_engine::run_with_database(&self.settings, handle, &mut |data| {
            let lent = Lent::Engine {
                data,
                time_draws: passed < TIMED_PASSES,
            };
            let end = run_case(lent, false);
            match end {
                Ok(CaseEnd::Passed) => {
                    passed += 1;
                    true
                }
                Ok(CaseEnd::Stopped | CaseEnd::Failed) => true,
                // A usage error ends the run; in process nothing else fails.
                Ok(CaseEnd::Usage) | Err(_) => false,
            }
        });
        self.failures = result.failures.iter().map(|f| f.choices.clone()).collect();
        Ok(SearchEnd {
            summary: RunSummary {
                seed: self.seed,
                test_cases: result.test_cases,
                valid_test_cases: result.valid_test_cases,
                invalid_test_cases: result.invalid_test_cases,
                shrink_calls: result.shrink_calls,
            },
            failures: result.failures.len(),
            passed: result.failures.is_empty(),
            error: None,
            health_check_failure: result.health_check_failure().map(|f| f.to_string()),
            flaky: result.flakiness().map(|f| f.to_string()),
            warnings: result.warnings.clone(),
            shrink_statistics: result
                .shrink_statistics
                .iter()
                .map(|p| p.to_string())
                .collect(),
            over_the_wire: false,
        })
    }

    fn replay_failures(&mut self, run_case: &mut RunCase<'_>) -> Result<(), WireError> {
        for choices in std::mem::take(&mut self.failures) {
            let lent = Lent::Engine {
                data: &mut TestData::replaying(choices, DEFAULT_MAX_CHOICES),
                time_draws: false,
            };
            run_case(lent, true)?;
        }
        Ok(())
    }

    fn finish(&mut self, _run_case: &mut RunCase<'_>) -> Result<(), WireError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// A whole run in process (generation, a failure that unwinds out of
    /// the property, shrinking, the final replay), the engine's data
    /// swapped into the `TestCase` and back at every test case. Small
    /// enough for Miri.
    #[test]
    fn a_failing_run_swaps_the_engine_data_in_and_out_of_every_test_case() {
        let settings = crate::Settings::new()
            .test_cases(5)
            .seed(Some(1))
            .database(None::<&str>);
        let result = crate::run_property(&settings, &mut |tc: &mut crate::TestCase| {
            let x: u8 = tc.draw(crate::generators::integers::<u8>().max_value(10));
            assert!(x < 3, "too large");
        });
        let message = result.expect_err("fails").to_string();
        assert!(message.contains("= 3"), "{message}");
    }
}
