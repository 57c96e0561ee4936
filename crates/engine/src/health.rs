//! Health checks and the other reasons a run stops before it has an answer.
//!
//! A run whose test cases are mostly rejected, too slow to generate or too
//! large, or whose simplest test case is already huge, says so instead of
//! passing on evidence that proves nothing (Hypothesis' health checks). A run
//! also stops when the test turns out flaky or its caller aborts it. All of
//! these are typed here ([`StopReason`]); the messages a user reads are their
//! `Display`. How a protocol names a health check on the wire is the
//! protocol layer's business, not the engine's.

use crate::data::{DEFAULT_MAX_LENGTH, Status, TestData};
use std::fmt;

/// A health check a run can fail (each can be suppressed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HealthCheck {
    /// Too many test cases were rejected.
    FilterTooMuch,
    /// Generating test cases is too slow.
    TooSlow,
    /// Test cases make too many choices.
    TestCasesTooLarge,
    /// The simplest test case is already large.
    LargeInitialTestCase,
}

impl HealthCheck {
    /// Every health check.
    pub const ALL: [HealthCheck; 4] = [
        HealthCheck::FilterTooMuch,
        HealthCheck::TooSlow,
        HealthCheck::TestCasesTooLarge,
        HealthCheck::LargeInitialTestCase,
    ];
}

impl fmt::Display for HealthCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HealthCheck::FilterTooMuch => "filter too much",
            HealthCheck::TooSlow => "too slow",
            HealthCheck::TestCasesTooLarge => "test cases too large",
            HealthCheck::LargeInitialTestCase => "large initial test case",
        })
    }
}

/// A failed health check, with the figures that failed it.
#[derive(Clone, Debug, PartialEq)]
pub enum HealthCheckFailure {
    /// Fewer than ten valid test cases among many rejected ones.
    FilterTooMuch {
        /// Valid test cases by then.
        valid: u64,
        /// Rejected (or overrun) test cases by then.
        invalid: u64,
    },
    /// Over a second spent generating data before the tenth valid test case.
    TooSlow {
        /// Valid test cases by then.
        valid: u64,
        /// Invalid test cases by then.
        invalid: u64,
        /// Seconds spent drawing values.
        draw_seconds: f64,
    },
    /// Many early test cases ran past the choice limit.
    TestCasesTooLarge {
        /// Test cases that ran past the limit.
        overruns: u64,
        /// The limit.
        max_choices: usize,
        /// Valid test cases by then.
        valid: u64,
    },
    /// The simplest test case overran, or used more than half the choices
    /// or half the serialized size allowed.
    LargeInitialTestCase {
        /// Choices the simplest test case made.
        choices: usize,
        /// The limit.
        max_choices: usize,
        /// The serialized size of its choices (bytes, as Hypothesis counts them).
        length: usize,
        /// The limit on that size.
        max_length: usize,
    },
}

impl HealthCheckFailure {
    /// The health check that failed.
    pub fn check(&self) -> HealthCheck {
        match self {
            HealthCheckFailure::FilterTooMuch { .. } => HealthCheck::FilterTooMuch,
            HealthCheckFailure::TooSlow { .. } => HealthCheck::TooSlow,
            HealthCheckFailure::TestCasesTooLarge { .. } => HealthCheck::TestCasesTooLarge,
            HealthCheckFailure::LargeInitialTestCase { .. } => HealthCheck::LargeInitialTestCase,
        }
    }
}

// The advice names each check as Hypothesis and every Hegel client spell it
// in their settings, which is the name a user suppresses it by.
impl fmt::Display for HealthCheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HealthCheckFailure::FilterTooMuch { valid, invalid } => write!(
                f,
                "It looks like this test is filtering out a lot of inputs. {invalid} inputs were \
                 rejected and only {valid} passed. If this is expected, suppress the \
                 filter_too_much health check. Otherwise, generate the values you need \
                 directly rather than rejecting (with assume or filter) the ones you don't."
            ),
            HealthCheckFailure::TooSlow {
                valid,
                invalid,
                draw_seconds,
            } => write!(
                f,
                "Data generation is extremely slow: only {valid} valid test cases were \
                 generated in {draw_seconds:.2} seconds of drawing values ({invalid} invalid \
                 ones). Generate smaller data (lower max_size, fewer nested collections, \
                 simpler regexes), or suppress the too_slow health check."
            ),
            HealthCheckFailure::TestCasesTooLarge {
                overruns,
                max_choices,
                valid,
            } => write!(
                f,
                "Generated inputs routinely consumed more than the maximum allowed entropy: \
                 {valid} inputs were generated successfully, while {overruns} inputs exceeded \
                 the maximum allowed entropy during generation (at most {max_choices} choices \
                 of {DEFAULT_MAX_LENGTH} bytes serialized in all). Bound the sizes of generated \
                 collections and strings (max_size) or suppress the test_cases_too_large health \
                 check."
            ),
            HealthCheckFailure::LargeInitialTestCase {
                choices,
                max_choices,
                length,
                max_length,
            } => write!(
                f,
                "The smallest natural input for this test is very large: the simplest test case \
                 made {choices} choices of {length} bytes serialized (the limits are \
                 {max_choices} choices and {max_length} bytes). Generate smaller values \
                 (lower min_size, fewer nested collections), or suppress the \
                 large_initial_test_case health check if this is intended."
            ),
        }
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

/// How a test proved flaky.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Flakiness {
    /// Two test cases with the same earlier choices asked for different
    /// kinds of choice next.
    Generation {
        /// Where and how they differed.
        difference: String,
    },
    /// A failure did not fail again when replayed.
    Outcome {
        /// The origin of the failure that did not reproduce.
        origin: String,
    },
}

impl fmt::Display for Flakiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flakiness::Generation { difference } => write!(f, "{FLAKY_GENERATION} ({difference})"),
            Flakiness::Outcome { .. } => f.write_str(FLAKY_OUTCOME),
        }
    }
}

/// Why a run stopped before it could say whether the property holds.
#[derive(Clone, Debug, PartialEq)]
pub enum StopReason {
    /// A health check failed.
    HealthCheck(HealthCheckFailure),
    /// The test is flaky (failures found are not reported).
    Flaky(Flakiness),
    /// The test function aborted the run (e.g. its client went away).
    Aborted,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::HealthCheck(failure) => {
                write!(f, "health check {} failed: {failure}", failure.check())
            }
            StopReason::Flaky(flakiness) => write!(f, "flaky: {flakiness}"),
            StopReason::Aborted => f.write_str("aborted by the test function"),
        }
    }
}

/// What the health checks watch during generation.
#[derive(Debug)]
pub(crate) struct HealthMonitor {
    suppressed: Vec<HealthCheck>,
    max_choices: usize,
    /// Generated test cases that ran past the run's choice limit.
    overruns: u64,
    /// Generation time reported for the test cases run before the tenth
    /// valid one (the `too_slow` window: more than a second fails it).
    early_draw_seconds: f64,
    /// The `too_slow` budget for that window, in seconds.
    too_slow_seconds: f64,
}

/// The default `too_slow` budget: seconds of generation before the tenth
/// valid test case.
pub const TOO_SLOW_SECONDS: f64 = 1.0;

/// The run's counts after a generated test case.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counts {
    /// Valid test cases.
    pub valid: u64,
    /// Invalid and overrun test cases.
    pub invalid: u64,
    /// Overruns of the early small-example limit (the engine's doing: no
    /// health check counts them).
    pub small_overruns: u64,
}

impl HealthMonitor {
    pub(crate) fn new(
        suppressed: &[HealthCheck],
        max_choices: usize,
        too_slow_seconds: f64,
    ) -> HealthMonitor {
        HealthMonitor {
            suppressed: suppressed.to_vec(),
            max_choices,
            overruns: 0,
            early_draw_seconds: 0.0,
            too_slow_seconds,
        }
    }

    fn unless_suppressed(&self, failure: HealthCheckFailure) -> Option<HealthCheckFailure> {
        (!self.suppressed.contains(&failure.check())).then_some(failure)
    }

    /// The check on the simplest test case.
    pub(crate) fn after_simplest(&self, simplest: &TestData) -> Option<HealthCheckFailure> {
        // Hypothesis: `zero_data.length * 2 > BUFFER_SIZE`, its length being
        // the serialized size of the choices.
        let large = simplest.status == Some(Status::Overrun)
            || simplest.nodes.len() > self.max_choices / 2
            || simplest.length() > simplest.max_length() / 2;
        if !large {
            return None;
        }
        self.unless_suppressed(HealthCheckFailure::LargeInitialTestCase {
            choices: simplest.nodes.len(),
            max_choices: self.max_choices,
            length: simplest.length(),
            max_length: simplest.max_length(),
        })
    }

    /// The checks after a generated test case; `small_overrun` says it ran
    /// past the early small-example limit rather than the run's.
    pub(crate) fn after_generated(
        &mut self,
        data: &TestData,
        small_overrun: bool,
        counts: Counts,
    ) -> Option<HealthCheckFailure> {
        if data.status == Some(Status::Overrun) && !small_overrun {
            self.overruns += 1;
        }
        // Hypothesis' window: the test cases up to the tenth valid one, whose
        // own time is added but no longer checked (it stops watching there,
        // so neither is the time of any test case after it).
        if counts.valid < 10 {
            self.early_draw_seconds += data.draw_seconds;
            if self.early_draw_seconds > self.too_slow_seconds {
                let failure = self.unless_suppressed(HealthCheckFailure::TooSlow {
                    valid: counts.valid,
                    invalid: counts.invalid,
                    draw_seconds: self.early_draw_seconds,
                });
                if failure.is_some() {
                    return failure;
                }
            }
        }
        if counts.valid < 10 && self.overruns >= 20 {
            let failure = self.unless_suppressed(HealthCheckFailure::TestCasesTooLarge {
                overruns: self.overruns,
                max_choices: self.max_choices,
                valid: counts.valid,
            });
            if failure.is_some() {
                return failure;
            }
        }
        if counts.valid < 10 && counts.invalid - counts.small_overruns >= 50 {
            return self.unless_suppressed(HealthCheckFailure::FilterTooMuch {
                valid: counts.valid,
                invalid: counts.invalid,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_setting_that_suppresses_each_check() {
        let failures = [
            HealthCheckFailure::FilterTooMuch {
                valid: 1,
                invalid: 50,
            },
            HealthCheckFailure::TooSlow {
                valid: 2,
                invalid: 0,
                draw_seconds: 1.5,
            },
            HealthCheckFailure::TestCasesTooLarge {
                overruns: 20,
                max_choices: 8192,
                valid: 3,
            },
            HealthCheckFailure::LargeInitialTestCase {
                choices: 5000,
                max_choices: 8192,
                length: 5000,
                max_length: 8192,
            },
        ];
        for (failure, name) in failures.iter().zip([
            "filter_too_much",
            "too_slow",
            "test_cases_too_large",
            "large_initial_test_case",
        ]) {
            assert!(failure.to_string().contains(name), "{failure}");
        }
        assert_eq!(
            failures.iter().map(|f| f.check()).collect::<Vec<_>>(),
            HealthCheck::ALL
        );
    }

    /// A second and a half over the first nine valid test cases fails
    /// too_slow; the same time with the tenth valid test case taking most of
    /// it does not (Hypothesis stops watching at the tenth), nor does any
    /// time after it.
    #[test]
    fn too_slow_watches_the_test_cases_before_the_tenth_valid_one() {
        let slow = |seconds: f64| {
            let mut data = TestData::replaying(Vec::new(), 8);
            data.draw_seconds = seconds;
            data
        };
        let valid = |valid: u64| Counts {
            valid,
            invalid: 0,
            small_overruns: 0,
        };
        let mut monitor = HealthMonitor::new(&[], 8, TOO_SLOW_SECONDS);
        for n in 1..=8 {
            assert_eq!(monitor.after_generated(&slow(0.1), false, valid(n)), None);
        }
        assert!(matches!(
            monitor.after_generated(&slow(0.7), false, valid(9)),
            Some(HealthCheckFailure::TooSlow { valid: 9, .. })
        ));

        let mut monitor = HealthMonitor::new(&[], 8, TOO_SLOW_SECONDS);
        for n in 1..=9 {
            assert_eq!(monitor.after_generated(&slow(0.1), false, valid(n)), None);
        }
        assert_eq!(monitor.after_generated(&slow(0.7), false, valid(10)), None);
        assert_eq!(monitor.after_generated(&slow(5.0), false, valid(10)), None);

        let mut suppressed = HealthMonitor::new(&[HealthCheck::TooSlow], 8, TOO_SLOW_SECONDS);
        assert_eq!(
            suppressed.after_generated(&slow(5.0), false, valid(1)),
            None
        );
    }

    #[test]
    fn suppressed_checks_do_not_fail() {
        let data = TestData::replaying(Vec::new(), 8);
        let mut monitor = HealthMonitor::new(&[HealthCheck::FilterTooMuch], 8, TOO_SLOW_SECONDS);
        let counts = Counts {
            valid: 0,
            invalid: 60,
            small_overruns: 0,
        };
        assert_eq!(monitor.after_generated(&data, false, counts), None);
        let mut monitor = HealthMonitor::new(&[], 8, TOO_SLOW_SECONDS);
        assert!(matches!(
            monitor.after_generated(&data, false, counts),
            Some(HealthCheckFailure::FilterTooMuch { .. })
        ));
    }
}
