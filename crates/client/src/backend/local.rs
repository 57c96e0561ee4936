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
use std::ptr::NonNull;
use std::sync::Arc;

/// Test cases whose draws are timed for the engine's `too_slow` health
/// check: the first ten that pass (the clock is not read on every draw of a
/// run).
const TIMED_PASSES: u32 = 10;

/// One in-process test case: the engine's data, lent for the test case.
///
/// The `TestCase` a property is handed holds one for the whole run; for
/// each test case the engine lends its `TestData` by reference
/// ([`LocalCase::lend`]) and takes it back afterwards
/// ([`LocalCase::give_back`]). Between test cases it points at a
/// placeholder of its own. Holding the engine's data by pointer, rather
/// than swapping its 400-odd bytes in and out of the `TestCase` around
/// every test case, is what lets the public `TestCase` stay a type without
/// a lifetime.
pub(crate) struct LocalCase {
    /// The data the choices go to: `idle`, or the engine's while lent.
    data: NonNull<TestData>,
    /// The placeholder between test cases (from `Box::into_raw`; freed on
    /// drop). Kept raw, not as a `Box`: moving a `Box` asserts that it is
    /// the only way to its data, which `data` also is while idle.
    idle: NonNull<TestData>,
    /// Whether outermost draws are timed (see [`TIMED_PASSES`]).
    pub(crate) time_draws: bool,
}

// SAFETY: a `LocalCase` is as a `Box<TestData>` (its placeholder) plus, while
// lent, a `&mut TestData` of the engine's: both are `Send` when `TestData` is
// (checked below), and only `&mut self` reaches either.
unsafe impl Send for LocalCase {}

const _: () = {
    const fn is_send<T: Send>() {}
    is_send::<TestData>();
};

impl LocalCase {
    /// A case with no choices (a placeholder between test cases).
    pub(crate) fn empty() -> LocalCase {
        let idle = NonNull::from(Box::leak(Box::new(TestData::replaying(
            Vec::new(),
            DEFAULT_MAX_CHOICES,
        ))));
        LocalCase {
            data: idle,
            idle,
            time_draws: false,
        }
    }

    /// The data the test case's choices go to.
    #[inline(always)]
    pub(crate) fn data(&mut self) -> &mut TestData {
        // SAFETY: `data` is the placeholder, alive until drop, or data lent
        // by `lend`, whose caller keeps it alive and unused until
        // `give_back`; `&mut self` makes this the only reference made
        // through `data` meanwhile.
        unsafe { self.data.as_mut() }
    }

    /// [`LocalCase::data`], shared.
    #[inline(always)]
    pub(crate) fn data_ref(&self) -> &TestData {
        // SAFETY: as in `data`; `&self` makes every reference made through
        // `data` meanwhile a shared one.
        unsafe { self.data.as_ref() }
    }

    /// Makes `data` the data the choices go to, until [`LocalCase::give_back`].
    ///
    /// # Safety
    ///
    /// The caller calls `give_back` before `data`'s borrow ends (before
    /// `data` is used, moved or dropped again), and this case is used for
    /// nothing else meanwhile but through `&mut self` / `&self`.
    #[inline]
    pub(crate) unsafe fn lend(&mut self, data: &mut TestData, time_draws: bool) {
        self.data = NonNull::from(data);
        self.time_draws = time_draws;
    }

    /// Lets go of the lent data: the choices go to the placeholder again.
    #[inline]
    pub(crate) fn give_back(&mut self) {
        self.data = self.idle;
    }
}

impl Drop for LocalCase {
    fn drop(&mut self) {
        // SAFETY: `idle` came from `Box::leak` in `empty` and is freed only
        // here, once; `data` is not used after.
        drop(unsafe { Box::from_raw(self.idle.as_ptr()) });
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
    use super::*;
    use crate::backend::CaseBackend;
    use geist_engine::choice::IntegerConstraints;

    /// The lent data gets the choices while lent, the placeholder before
    /// and after; a case moved while idle (and while lent) keeps both.
    #[test]
    fn a_lent_case_writes_to_the_lent_data_and_gives_it_back() {
        let c = IntegerConstraints::bounded(0, 10);
        let mut holder = CaseBackend::idle();
        holder.integer(c);
        for round in 0..3 {
            let mut engine = TestData::replaying(vec![ChoiceValue::Integer(7)], 100);
            let mut lent = Lent::Engine {
                data: &mut engine,
                time_draws: round == 1,
            };
            lent.lend_to(&mut holder);
            assert_eq!(holder.times_draws(), round == 1);
            let moved = std::mem::replace(&mut holder, CaseBackend::idle());
            holder = moved;
            assert_eq!(holder.integer(c), 7);
            assert_eq!(holder.choice_count(), 1);
            lent.take_back(&mut holder);
            assert_eq!(engine.nodes.len(), 1);
            // Idle again: the placeholder (one choice from before the rounds).
            assert_eq!(holder.choice_count(), 1);
            let moved = std::mem::replace(&mut holder, CaseBackend::idle());
            holder = moved;
            assert_eq!(holder.choice_count(), 1);
        }
    }

    /// A whole run in process (generation, a failure that unwinds out of
    /// the property, shrinking, the final replay): every test case lends
    /// the engine's data and takes it back. Small enough for Miri.
    #[test]
    fn a_failing_run_lends_and_takes_back_every_test_case() {
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
