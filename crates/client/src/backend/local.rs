//! The in-process backend: geist's engine, linked into the test process.
//!
//! The engine's run loop (`geist_engine::run_with_database`) drives the
//! search: it replays the examples saved in the database, generates, targets
//! and shrinks, and for each test case lends its `TestData` to the client,
//! which runs the property on it. No process, no serialization. The
//! failures come back as choice sequences, which [`InProcess`] replays on
//! fresh `TestData` when the run loop asks for the report.

use super::{CaseBackend, CaseEnd, Lent, RunBackend, RunCase, SearchEnd};
use crate::runner::RunSummary;
use crate::settings::Settings;
use crate::transport::WireError;
use geist_engine::choice::ChoiceValue;
use geist_engine::data::DEFAULT_MAX_CHOICES;
use geist_engine::database::ExampleDatabase;
use geist_engine::{DatabaseHandle, Phases, RunSettings, TestData};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Test cases whose draws are timed for the engine's `too_slow` health
/// check: the first ten that pass (the clock is not read on every draw of a
/// run).
const TIMED_PASSES: u32 = 10;

/// Where one run's in-process choices go: the engine's `TestData` while the
/// run loop lends it for a test case, a placeholder of the lease's own
/// between test cases.
///
/// The engine's data is lent by pointer rather than swapped into the
/// `TestCase` and back around every test case (twice 400-odd bytes: about
/// 230 of the 3,200 instructions of a one-integer test case). The
/// pointer sits here, behind an `Arc` the run loop ([`Lender`]) and the
/// run's `TestCase` ([`LocalCase`]) share, and not in the `TestCase`
/// itself, because a property can move its `TestCase`'s contents: with a
/// nested `check` in its body it can `std::mem::swap` its `&mut TestCase`
/// with the nested run's. Wherever a run's `LocalCase` ends up, its run
/// loop still reaches the pointer through its `Lender` and sets it back to
/// the placeholder before the lent borrow ends ([`Lender::lend`]), so no
/// `TestCase` ever points at data that is gone; the `Arc` keeps the lease
/// (and its placeholder) alive for whichever `TestCase` holds it. The run
/// loop then tells the property it swapped ([`Lender::is_held_by`]).
struct Lease {
    /// The data the choices go to: `placeholder`, or the engine's while lent.
    current: AtomicPtr<TestData>,
    /// The data between test cases (from `Box::into_raw`, freed on drop).
    /// Kept raw, not as a `Box`: moving a `Box` asserts that it is the only
    /// way to its data, which `current` also is.
    placeholder: NonNull<TestData>,
    /// Whether outermost draws are timed (see [`TIMED_PASSES`]).
    time_draws: AtomicBool,
}

// SAFETY: a `Lease` owns its placeholder as a `Box<TestData>` would, and
// `current` points at it or at data lent with `&mut` (`Lender::lend`):
// `TestData` is `Send` and `Sync` (checked below), so the lease may be sent
// and shared as a `Box<TestData>` or a `&mut TestData` may. Through `&Lease`
// only the atomics are read and written; the data is reached only in
// `LocalCase`'s methods, through `&mut LocalCase` or `&LocalCase`, and each
// lease has exactly one `LocalCase` (`lease` makes it and it is not
// `Clone`), so the data's accesses are as exclusive as the `LocalCase`'s.
unsafe impl Send for Lease {}
// SAFETY: as for `Send`.
unsafe impl Sync for Lease {}

const _: () = {
    const fn is_send_and_sync<T: Send + Sync>() {}
    is_send_and_sync::<TestData>();
};

impl Drop for Lease {
    fn drop(&mut self) {
        // SAFETY: `placeholder` came from `Box::into_raw` in `lease` and is
        // freed only here, once; with the last `Arc` gone nothing points at
        // it any more.
        drop(unsafe { Box::from_raw(self.placeholder.as_ptr()) });
    }
}

/// A run loop's side of a [`Lease`]: lends the engine's data.
pub(crate) struct Lender(Arc<Lease>);

/// A `TestCase`'s side of a [`Lease`]: its in-process choices go to the
/// data lent to it.
pub(crate) struct LocalCase(Arc<Lease>);

/// A new lease, idle: the run loop's side and the one `TestCase`'s.
pub(crate) fn lease() -> (Lender, LocalCase) {
    let placeholder = NonNull::from(Box::leak(Box::new(TestData::replaying(
        Vec::new(),
        DEFAULT_MAX_CHOICES,
    ))));
    let lease = Arc::new(Lease {
        current: AtomicPtr::new(placeholder.as_ptr()),
        placeholder,
        time_draws: AtomicBool::new(false),
    });
    (Lender(Arc::clone(&lease)), LocalCase(lease))
}

impl Lender {
    /// Runs `run` with `data` lent: the choices of the `LocalCase` of this
    /// lease go to `data` meanwhile, to the placeholder again once `run`
    /// returns or unwinds (`data` is borrowed for no longer than this call).
    #[inline]
    pub(crate) fn lend<R>(
        &self,
        data: &mut TestData,
        time_draws: bool,
        run: impl FnOnce() -> R,
    ) -> R {
        /// Points the lease at its placeholder again when dropped.
        struct GiveBack<'a>(&'a Lease);
        impl Drop for GiveBack<'_> {
            #[inline]
            fn drop(&mut self) {
                let lease = self.0;
                lease
                    .current
                    .store(lease.placeholder.as_ptr(), Ordering::Relaxed);
            }
        }
        let lease = &*self.0;
        lease.time_draws.store(time_draws, Ordering::Relaxed);
        lease.current.store(data, Ordering::Relaxed);
        let _give_back = GiveBack(lease);
        run()
    }

    /// Whether `backend` holds this lease's `LocalCase`: false when the
    /// property swapped its `TestCase` with another run's.
    #[inline]
    pub(crate) fn is_held_by(&self, backend: &CaseBackend) -> bool {
        matches!(backend, CaseBackend::Local(LocalCase(lease)) if Arc::ptr_eq(lease, &self.0))
    }
}

impl LocalCase {
    /// The data the test case's choices go to.
    #[inline(always)]
    pub(crate) fn data(&mut self) -> &mut TestData {
        // SAFETY: `current` points at the placeholder, alive as long as the
        // lease, or at data `Lender::lend` lent, alive until `lend` points
        // `current` away from it (on return or unwinding); the reference
        // made here ends with `&mut self`'s borrow, within one backend
        // method that runs no property code, so no `lend` returns (nor does
        // any other test case begin) meanwhile. This is the lease's one
        // `LocalCase`, and `&mut self` makes this the only reference to the
        // data meanwhile (`lend`'s caller does not use `data` until `lend`
        // returns).
        unsafe { &mut *self.0.current.load(Ordering::Relaxed) }
    }

    /// [`LocalCase::data`], shared.
    #[inline(always)]
    pub(crate) fn data_ref(&self) -> &TestData {
        // SAFETY: as in `data`; `&self` makes every reference to the data
        // meanwhile a shared one.
        unsafe { &*self.0.current.load(Ordering::Relaxed) }
    }

    /// Whether outermost draws are timed (see [`TIMED_PASSES`]).
    #[inline]
    pub(crate) fn time_draws(&self) -> bool {
        self.0.time_draws.load(Ordering::Relaxed)
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
        // The engine lends its data for each test case: the run loop lends
        // it on to the test case's backend (`Lender::lend`).
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
    /// the property, shrinking, the final replay), the engine's data lent
    /// to the `TestCase` at every test case. Small enough for Miri.
    #[test]
    fn a_failing_run_lends_the_engine_data_to_every_test_case() {
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

    fn small(seed: u64) -> crate::Settings {
        crate::Settings::new()
            .test_cases(3)
            .seed(Some(seed))
            .database(None::<&str>)
    }

    /// A property that swaps its `TestCase` with a nested run's, from safe
    /// code, then draws on what it holds after the nested run has ended
    /// (and dropped the engine data it lent): the draws go to the nested
    /// run's placeholder, not to freed data, and both runs end with a
    /// usage error saying what the property did. Under Miri this shows the
    /// lending has no use after free; lending a bare pointer (a `TestCase`
    /// pointing at the engine's data itself) failed it.
    #[test]
    fn a_testcase_swapped_with_a_nested_runs_is_refused_without_use_after_free() {
        let integers = || crate::generators::integers::<u8>().max_value(10);
        let mut inner_reports = Vec::new();
        let outer = crate::run_property(&small(1), &mut |outer: &mut crate::TestCase| {
            let _: u8 = outer.draw(integers());
            let inner = crate::run_property(&small(2), &mut |inner: &mut crate::TestCase| {
                std::mem::swap(&mut *outer, inner);
                // The outer run's test case, still lent.
                let _: u8 = inner.draw(integers());
            });
            inner_reports.push(inner.expect_err("the nested run refuses the swap"));
            // The nested run's test case: its data is gone.
            let _: u8 = outer.draw(integers());
            let _: u8 = outer.draw(integers());
        });
        let report = outer.expect_err("the outer run refuses the swap");
        assert!(report.contains("swapped its TestCase"), "{report}");
        assert_eq!(inner_reports.len(), 1, "the outer run stops at once");
        assert!(
            inner_reports[0].contains("swapped its TestCase"),
            "{}",
            inner_reports[0]
        );
    }

    /// Swapped and swapped back within the nested property: each run's
    /// `TestCase` is back in its place whenever its run looks, so both runs
    /// go on (the nested draws in between went to the outer run's data).
    #[test]
    fn a_testcase_swapped_and_swapped_back_leaves_both_runs_running() {
        let integers = || crate::generators::integers::<u8>().max_value(10);
        let mut nested_runs = 0;
        let outer = crate::run_property(&small(3), &mut |outer: &mut crate::TestCase| {
            let _: u8 = outer.draw(integers());
            let inner = crate::run_property(&small(4), &mut |inner: &mut crate::TestCase| {
                let _: u8 = inner.draw(integers());
                std::mem::swap(&mut *outer, inner);
                let _: u8 = inner.draw(integers());
                std::mem::swap(&mut *outer, inner);
                let _: u8 = inner.draw(integers());
            });
            assert!(inner.is_ok(), "{inner:?}");
            nested_runs += 1;
            let _: u8 = outer.draw(integers());
        });
        assert!(outer.is_ok(), "{outer:?}");
        assert!(nested_runs >= 1);
    }
}
