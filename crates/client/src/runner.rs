//! Running a property: search, shrink, then replay the minimal failure and report it.
//!
//! [`check`] hands the engine a closure that runs one test case in-process:
//! it lends the engine's test data to a [`TestCase`], runs the property under
//! `catch_unwind`, and concludes the test case from how it ended. Failures
//! come back from the engine as choice sequences; each is replayed once more
//! with recording on, and the report is the panic `check` ends with.
//!
//! With a [`Transport::Server`] or [`Transport::Connect`] the run goes over the wire
//! instead (`transport::remote_run`), and ends in the same report.

use crate::panic_capture::{CaptureGuard, CapturedPanic, take_last_panic};
use crate::settings::{Settings, Verbosity};
use crate::test_case::{Recording, StopSignal, TestCase, UsageError};
use crate::transport::Transport;
use geist_engine::DatabaseHandle;
use geist_engine::data::DEFAULT_MAX_CHOICES;
use geist_engine::{Phases, RunResult, RunSettings, Status, TestData};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// How one test case ended.
pub(crate) enum Outcome {
    /// It returned normally.
    Passed,
    /// It stopped (rejected or out of choices).
    Stopped,
    /// It panicked.
    Failed(CapturedPanic),
    /// It misused the API.
    Usage(String),
}

/// Runs one test case on `data` and concludes it.
///
/// A test case that passes but takes longer than `deadline` fails (see
/// [`deadline_exceeded`]).
fn run_one(
    tc: &mut TestCase,
    data: &mut TestData,
    test: &mut dyn FnMut(&mut TestCase),
    record: bool,
    deadline: Option<Duration>,
    is_final: bool,
) -> Outcome {
    std::mem::swap(&mut tc.data, data);
    tc.reset(record);
    let (outcome, elapsed) = run_caught(tc, test, deadline);
    std::mem::swap(&mut tc.data, data);
    match outcome {
        Ok(()) => match deadline_exceeded(deadline, is_final, elapsed) {
            Some(panic) => {
                data.conclude(Status::Interesting, Some(DEADLINE_ORIGIN.into()));
                Outcome::Failed(panic)
            }
            None => Outcome::Passed,
        },
        Err(payload) => {
            if payload.is::<StopSignal>() {
                if data.status.is_none() {
                    data.conclude(Status::Invalid, None);
                }
                return Outcome::Stopped;
            }
            let payload = match payload.downcast::<UsageError>() {
                Ok(usage) => {
                    data.conclude(Status::Invalid, None);
                    return Outcome::Usage(usage.0);
                }
                Err(other) => other,
            };
            let (panic, origin) = failure_of(payload.as_ref());
            data.conclude(Status::Interesting, Some(origin));
            Outcome::Failed(panic)
        }
    }
}

/// Runs the property on `tc`, catching its unwinding; with a deadline, also
/// how long it took.
pub(crate) fn run_caught(
    tc: &mut TestCase,
    test: &mut dyn FnMut(&mut TestCase),
    deadline: Option<Duration>,
) -> (std::thread::Result<()>, Option<Duration>) {
    let started = deadline.map(|_| Instant::now());
    let outcome = catch_unwind(AssertUnwindSafe(|| test(tc)));
    (outcome, started.map(|s| s.elapsed()))
}

/// The origin of a failure by exceeding the deadline.
pub(crate) const DEADLINE_ORIGIN: &str = "deadline exceeded";

/// Hypothesis's deadline: a test case that passed but took longer than the
/// deadline is a failure, reported with its duration. The search allows a
/// quarter more than the deadline, so that the final replay (held to the
/// deadline itself) rarely passes where the search failed.
pub(crate) fn deadline_exceeded(
    deadline: Option<Duration>,
    is_final: bool,
    elapsed: Option<Duration>,
) -> Option<CapturedPanic> {
    let (deadline, elapsed) = (deadline?, elapsed?);
    let limit = if is_final {
        deadline
    } else {
        deadline.mul_f64(1.25)
    };
    (elapsed > limit).then(|| CapturedPanic {
        message: format!(
            "Deadline exceeded: this test case took {:.2} ms, more than the deadline of {:.2} ms \
             (Settings::deadline, GEIST_DEADLINE_MS). If this is expected, raise the deadline or \
             remove it.",
            elapsed.as_secs_f64() * 1e3,
            deadline.as_secs_f64() * 1e3
        ),
        location: None,
    })
}

/// The panic a test case failed with (as the hook captured it, or from its
/// payload) and the failure's origin: its location, which tells distinct
/// failures apart, or its message when the location is unknown.
pub(crate) fn failure_of(payload: &(dyn std::any::Any + Send)) -> (CapturedPanic, String) {
    let panic = take_last_panic().unwrap_or_else(|| CapturedPanic {
        message: describe_payload(payload),
        location: None,
    });
    let origin = panic
        .location
        .clone()
        .unwrap_or_else(|| format!("panic: {}", panic.message));
    (panic, origin)
}

fn describe_payload(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic with a non-text payload)".to_string()
    }
}

/// Checks a property: runs `test` on many generated test cases. If one
/// panics, the failure is shrunk to a minimal example, replayed, and `check`
/// panics with a report of it (drawn values, notes, the original panic and a
/// line to reproduce it).
///
/// ```
/// use geist::generators as gs;
/// use geist::{Settings, TestCase, check};
///
/// check(Settings::new().test_cases(50), |tc: &mut TestCase| {
///     let xs: Vec<u8> = tc.draw(gs::vecs(gs::integers::<u8>()).max_size(10));
///     let mut sorted = xs.clone();
///     sorted.sort();
///     assert_eq!(sorted.len(), xs.len());
/// });
/// ```
#[track_caller]
pub fn check<F: FnMut(&mut TestCase)>(settings: Settings, mut test: F) {
    let settings = if settings.name.is_none() {
        let caller = std::panic::Location::caller();
        settings.name(format!("{}:{}", caller.file(), caller.line()))
    } else {
        settings
    };
    if let Err(report) = run_property(&settings, &mut test) {
        panic!("{report}");
    }
}

/// Runs a property and returns the failure report instead of panicking with it.
pub fn run_property(
    settings: &Settings,
    test: &mut dyn FnMut(&mut TestCase),
) -> Result<RunSummary, String> {
    if let Some(error) = &settings.database_error {
        return Err(format!("geist: invalid database setting: {error}"));
    }
    if !settings.environment_errors.is_empty() {
        return Err(format!(
            "geist: cannot use the environment: {}",
            settings.environment_errors.join("; ")
        ));
    }
    if settings.transport != Transport::InProcess {
        return crate::transport::remote_run::run_remote(settings, &settings.transport, test);
    }
    let seed = settings.effective_seed();
    let run_settings = RunSettings {
        test_cases: settings.test_cases,
        seed: u128::from(seed),
        phases: Phases::default(),
        report_multiple_failures: settings.report_multiple_failures,
        suppress_health_checks: settings.suppress_health_checks.clone(),
        max_choices: DEFAULT_MAX_CHOICES,
        max_shrink_calls: settings.max_shrink_calls,
        ..RunSettings::default()
    };
    let debug = settings.verbosity >= Verbosity::Debug;
    let database = match (&settings.database, &settings.name) {
        (Some(setting), Some(_)) => Some(
            setting
                .open()
                .map_err(|e| format!("geist: cannot open the example database {setting}: {e}"))?,
        ),
        _ => None,
    };
    let handle = match (&database, &settings.name) {
        (Some(db), Some(name)) => Some(DatabaseHandle {
            database: db.as_ref(),
            key: name.as_bytes().to_vec(),
        }),
        _ => None,
    };
    let _capture = CaptureGuard::start();
    let mut tc = TestCase::new();
    let mut usage: Option<String> = None;
    // The first panic seen: if the engine ends with no failure despite it,
    // the property is flaky (the failure did not reproduce).
    let mut first_panic: Option<CapturedPanic> = None;
    // Saved failures are replayed first; failures are saved as they are found
    // and shrunk, and entries that no longer fail are deleted.
    // Draws are timed for the too_slow health check until ten test cases passed.
    let mut passed = 0u32;
    let result = geist_engine::run_with_database(&run_settings, handle, &mut |data| {
        tc.time_draws = passed < 10;
        let outcome = run_one(&mut tc, data, test, debug, settings.deadline, false);
        if matches!(outcome, Outcome::Passed) {
            passed += 1;
        }
        match outcome {
            Outcome::Usage(message) => {
                usage = Some(message);
                return false;
            }
            Outcome::Failed(panic) if first_panic.is_none() => {
                first_panic = Some(panic.clone());
                if debug {
                    print_debug_case(&mut tc, data, &Outcome::Failed(panic));
                }
            }
            outcome if debug => print_debug_case(&mut tc, data, &outcome),
            _ => {}
        }
        true
    });
    for warning in &result.warnings {
        eprintln!("geist: example database: {warning}");
    }
    if debug {
        for pass in &result.shrink_statistics {
            eprintln!("geist: shrink pass {pass}");
        }
    }
    let name = settings.name.as_deref();
    let summary = RunSummary::from_result(&result, seed);
    if let Some(message) = usage {
        return Err(format!("geist: invalid use of a generator: {message}"));
    }
    if settings.verbosity >= Verbosity::Verbose {
        eprintln!(
            "geist: {}{summary}",
            name.map(|n| format!("{n}: ")).unwrap_or_default()
        );
    }
    if let Some(failure) = result.health_check_failure() {
        return Err(format!("geist: health check failed: {failure}"));
    }
    if let Some(message) = result.flakiness() {
        let seen = first_panic
            .map(|p| {
                let at = p.location.map(|l| format!(" at {l}")).unwrap_or_default();
                format!("\nThe failure seen{at}:\n{}", p.message)
            })
            .unwrap_or_default();
        return Err(format!(
            "geist: {} is flaky: {message}{seen}\nSearch ran {summary}",
            name.map(|n| format!("property {n}"))
                .unwrap_or("the property".into()),
        ));
    }
    if result.failures.is_empty() {
        return match first_panic {
            None => Ok(summary),
            Some(panic) => Err(format!(
                "geist: {} is flaky: a test case failed during the search but the failure \
                 did not reproduce when replayed (the property depends on something besides \
                 the drawn values).\nThe failure seen:\n{}{}\nSearch ran {summary}",
                name.map(|n| format!("property {n}"))
                    .unwrap_or("the property".into()),
                panic
                    .location
                    .map(|l| format!("panicked at {l}:\n"))
                    .unwrap_or_default(),
                panic.message,
            )),
        };
    }
    let mut sections = Vec::new();
    for failure in &result.failures {
        let mut data = TestData::replaying(failure.choices.clone(), DEFAULT_MAX_CHOICES);
        let outcome = run_one(&mut tc, &mut data, test, true, settings.deadline, true);
        let recording = tc.take_recording().unwrap_or_default();
        sections.push(failure_section(&recording, outcome));
    }
    Err(format_report(name, seed, &summary, &sections))
}

fn print_debug_case(tc: &mut TestCase, data: &TestData, outcome: &Outcome) {
    let recording = tc.take_recording().unwrap_or_default();
    let verdict = match (outcome, data.status) {
        (Outcome::Failed(p), _) => format!("failed: {}", p.message),
        (_, Some(Status::Invalid)) => "rejected".to_string(),
        (_, Some(Status::Overrun)) => "stopped (too many choices)".to_string(),
        _ => "passed".to_string(),
    };
    eprintln!("geist: test case {verdict}: {}", recording.lines.join(", "));
}

/// Counts from a finished run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSummary {
    /// The seed the run used.
    pub seed: u64,
    /// Test cases run, shrinking included.
    pub test_cases: u64,
    /// Test cases that passed.
    pub valid_test_cases: u64,
    /// Test cases rejected or stopped.
    pub invalid_test_cases: u64,
    /// Test cases spent shrinking.
    pub shrink_calls: u64,
}

impl RunSummary {
    fn from_result(result: &RunResult, seed: u64) -> RunSummary {
        RunSummary {
            seed,
            test_cases: result.test_cases,
            valid_test_cases: result.valid_test_cases,
            invalid_test_cases: result.invalid_test_cases,
            shrink_calls: result.shrink_calls,
        }
    }
}

impl std::fmt::Display for RunSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} test cases ({} passed, {} rejected), {} shrink steps, seed {}",
            self.test_cases,
            self.valid_test_cases,
            self.invalid_test_cases,
            self.shrink_calls,
            self.seed
        )
    }
}

pub(crate) fn failure_section(recording: &Recording, outcome: Outcome) -> String {
    let mut out = String::new();
    if recording.lines.is_empty() {
        out.push_str("  (no values drawn)\n");
    }
    for line in &recording.lines {
        for (i, part) in line.lines().enumerate() {
            out.push_str(if i == 0 { "  " } else { "    " });
            out.push_str(part);
            out.push('\n');
        }
    }
    match outcome {
        Outcome::Failed(panic) => {
            match &panic.location {
                Some(location) => out.push_str(&format!("panicked at {location}:\n")),
                None if panic.message.starts_with("Deadline exceeded") => {}
                None => out.push_str("panicked:\n"),
            }
            out.push_str(&panic.message);
            out.push('\n');
        }
        Outcome::Usage(message) => {
            out.push_str(&format!("invalid use of a generator: {message}\n"));
        }
        Outcome::Passed | Outcome::Stopped => out.push_str(
            "Flaky: this example failed during the search but passed when replayed; \
             the property depends on something besides the drawn values.\n",
        ),
    }
    out
}

pub(crate) fn format_report(
    name: Option<&str>,
    seed: u64,
    summary: &RunSummary,
    sections: &[String],
) -> String {
    let what = name
        .map(|n| format!("property {n}"))
        .unwrap_or("property".into());
    let mut out = format!(
        "geist: {what} failed after {} test cases ({} shrink steps).\n",
        summary.test_cases, summary.shrink_calls
    );
    if sections.len() == 1 {
        out.push_str("Minimal failing example:\n");
        out.push_str(&sections[0]);
    } else {
        out.push_str(&format!("Found {} distinct failures.\n", sections.len()));
        for (i, section) in sections.iter().enumerate() {
            out.push_str(&format!(
                "\nFailure {} of {}, minimal example:\n",
                i + 1,
                sections.len()
            ));
            out.push_str(section);
        }
    }
    let filter = name
        .and_then(|n| n.split_once("::").map(|(_, rest)| rest))
        .map(|n| format!(" -- {n} --exact"))
        .unwrap_or_default();
    out.push_str(&format!(
        "Reproduce with: GEIST_SEED={seed} cargo test{filter}   (or Settings::seed(Some({seed})))"
    ));
    out
}
