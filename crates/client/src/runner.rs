//! Running a property: the one run loop, over either backend.
//!
//! [`run_property`] reads the settings and picks the run's backend
//! ([`crate::backend`]): the engine in this process, or a Hegel server over
//! the wire. The backend drives the search and hands each test case to
//! [`Runner::run_case`], which lends the test case's backend to the
//! [`TestCase`], runs the property under `catch_unwind`, classifies how it
//! ended (passed; stopped; failed with an origin, by panicking, exceeding the
//! deadline or on a server's error; misused the API) and concludes the test
//! case with that verdict. When the search is over, each failure is replayed
//! once more with recording on, and the report is built from the backend's
//! [`SearchEnd`] and what the run loop saw, worded the same for both.

use crate::backend::local::{InProcess, Lender};
use crate::backend::remote::Remote;
use crate::backend::remote_case::CaseError;
use crate::backend::{CaseBackend, CaseEnd, Lent, RunBackend, SearchEnd, Verdict};
use crate::panic_capture::{CaptureGuard, CapturedPanic, take_last_panic};
use crate::settings::{Settings, Verbosity};
use crate::test_case::{Recording, RemoteFailure, StopSignal, TestCase, UsageError};
use crate::transport::{Transport, WireError};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// How one test case ended.
pub(crate) enum Outcome {
    /// It returned normally.
    Passed,
    /// It stopped (rejected or out of choices).
    Stopped,
    /// It panicked (or exceeded the deadline).
    Failed(CapturedPanic),
    /// The server replied to one of its commands with an error.
    ServerError(CapturedPanic),
    /// It misused the API.
    Usage(String),
}

/// The usage error of a property that swapped its `TestCase` with another
/// run's.
const SWAPPED: &str = "the property swapped its TestCase with another run's (e.g. with \
    std::mem::swap on the TestCase a nested check handed it): a TestCase belongs to the run \
    that handed it out, whose test cases' choices go to it";

/// The origin of a failure by exceeding the deadline.
const DEADLINE_ORIGIN: &str = "deadline exceeded";

/// Hypothesis's deadline: a test case that passed but took longer than the
/// deadline is a failure, reported with its duration. The search allows a
/// quarter more than the deadline, so that the final replay (held to the
/// deadline itself) rarely passes where the search failed.
fn deadline_exceeded(
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
fn failure_of(payload: &(dyn std::any::Any + Send)) -> (CapturedPanic, String) {
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

/// How a test case ended and the verdict it is concluded with, from what
/// the property's run returned (and how long it took). Only a failure of the
/// connection is an error: it ends the run.
fn classify(
    result: std::thread::Result<()>,
    elapsed: Option<Duration>,
    deadline: Option<Duration>,
    is_final: bool,
) -> Result<(Outcome, Verdict), WireError> {
    let payload = match result {
        Ok(()) => {
            return Ok(match deadline_exceeded(deadline, is_final, elapsed) {
                Some(panic) => (
                    Outcome::Failed(panic),
                    Verdict::Interesting(DEADLINE_ORIGIN.into()),
                ),
                None => (Outcome::Passed, Verdict::Valid),
            });
        }
        Err(payload) => payload,
    };
    // Rejected by the property, or stopped by the engine or the server.
    if payload.is::<StopSignal>() {
        return Ok((Outcome::Stopped, Verdict::Invalid));
    }
    let payload = match payload.downcast::<UsageError>() {
        Ok(usage) => return Ok((Outcome::Usage(usage.0), Verdict::Invalid)),
        Err(other) => other,
    };
    let payload = match payload.downcast::<RemoteFailure>() {
        Ok(failure) => {
            let RemoteFailure(error) = *failure;
            if let CaseError::Transport(e) = error {
                return Err(e);
            }
            let message = error.describe();
            let origin = match &error {
                CaseError::Reply {
                    command,
                    error_type,
                    ..
                } => format!("server error: {error_type} in reply to {command}"),
                _ => format!("server error: {message}"),
            };
            let panic = CapturedPanic {
                message,
                location: None,
            };
            return Ok((Outcome::ServerError(panic), Verdict::Interesting(origin)));
        }
        Err(other) => other,
    };
    let (panic, origin) = failure_of(payload.as_ref());
    Ok((Outcome::Failed(panic), Verdict::Interesting(origin)))
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
    let seed = settings.effective_seed();
    match &settings.transport {
        Transport::InProcess => run_on(&mut InProcess::new(settings, seed)?, settings, seed, test),
        transport => run_on(
            &mut Remote::start(settings, transport, seed)?,
            settings,
            seed,
            test,
        ),
    }
}

/// The property's name for messages.
fn describe(name: Option<&str>) -> String {
    name.map(|n| format!("property {n}"))
        .unwrap_or("the property".into())
}

/// Runs the property on `backend`: the search, then the verdict (with the
/// failures' final replays when there are failures to report), then
/// whatever the backend still has to settle.
pub(crate) fn run_on(
    backend: &mut dyn RunBackend,
    settings: &Settings,
    seed: u64,
    test: &mut dyn FnMut(&mut TestCase),
) -> Result<RunSummary, String> {
    let _capture = CaptureGuard::start();
    let what = describe(settings.name.as_deref());
    let transport_failure =
        |e: WireError| format!("geist: {what} could not run over the wire: {e}");
    let (lender, case) = crate::backend::local::lease();
    let mut runner = Runner {
        tc: TestCase::new(CaseBackend::Local(case)),
        test,
        deadline: settings.deadline,
        debug: settings.verbosity >= Verbosity::Debug,
        seen: Seen::default(),
    };
    let end = backend
        .search(&mut |case, is_final| runner.run_case(&lender, case, is_final))
        .map_err(transport_failure)?;
    let verdict = runner.verdict(&lender, backend, settings, seed, end);
    backend
        .finish(&mut |case, is_final| runner.run_case(&lender, case, is_final))
        .map_err(transport_failure)?;
    verdict
}

/// What the run loop saw while running the test cases.
#[derive(Default)]
struct Seen {
    /// A usage error (the report's words): later test cases are concluded
    /// invalid without running.
    usage: Option<String>,
    /// The first failure of the property (a run that passes despite it is flaky).
    first_panic: Option<CapturedPanic>,
    /// Error replies from the server that failed a test case.
    server_errors: Vec<String>,
    /// Report sections of the final replays.
    sections: Vec<String>,
}

/// The run loop's state: the test case handed to the property, and what it saw.
struct Runner<'t> {
    tc: TestCase,
    test: &'t mut dyn FnMut(&mut TestCase),
    deadline: Option<Duration>,
    debug: bool,
    seen: Seen,
}

impl Runner<'_> {
    /// Runs one test case on what `lent` lends (a final replay when
    /// `is_final`: it is recorded for the report) and concludes it. A whole
    /// backend is swapped into the `TestCase` for the test case and back;
    /// the engine's data is lent through `lender`, whose `LocalCase` the
    /// `TestCase` holds, and is given back however the test case ends.
    fn run_case(
        &mut self,
        lender: &Lender,
        lent: Lent<'_>,
        is_final: bool,
    ) -> Result<CaseEnd, WireError> {
        match lent {
            Lent::Backend(case) => {
                std::mem::swap(case, &mut self.tc.backend);
                let end = self.run_lent_case(None, is_final);
                std::mem::swap(case, &mut self.tc.backend);
                end
            }
            Lent::Engine { data, time_draws } => {
                let end = lender.lend(data, time_draws, || {
                    self.run_lent_case(Some(lender), is_final)
                });
                if let Ok(CaseEnd::Usage | CaseEnd::Stopped) = end {
                    // Concluded already, unless the property swapped its
                    // `TestCase` away (the first verdict stands).
                    Verdict::Invalid.conclude_local(data);
                }
                end
            }
        }
    }

    /// [`Runner::run_case`] on the backend lent to `self.tc`; in process,
    /// `lender` is the lease the engine's data is lent through.
    fn run_lent_case(
        &mut self,
        lender: Option<&Lender>,
        is_final: bool,
    ) -> Result<CaseEnd, WireError> {
        // The `TestCase` still holds what was lent to it, unless the
        // property swapped it with another run's (it may, with a nested
        // `check`): this test case's choices then went elsewhere, and the
        // `TestCase` is not this run's to conclude.
        let holds_lent = |tc: &TestCase| lender.is_none_or(|lender| lender.is_held_by(&tc.backend));
        if self.seen.usage.is_some() {
            // The run is settled; a server still sends the test cases it had
            // started (over the wire the run cannot be called off).
            if holds_lent(&self.tc) {
                self.tc.backend.conclude(Verdict::Invalid)?;
            }
            return Ok(CaseEnd::Stopped);
        }
        self.tc.reset(is_final || self.debug);
        let started = self.deadline.map(|_| Instant::now());
        let result = catch_unwind(AssertUnwindSafe(|| (self.test)(&mut self.tc)));
        let elapsed = started.map(|s| s.elapsed());
        if !holds_lent(&self.tc) {
            self.seen.usage = Some(SWAPPED.to_string());
            return Ok(CaseEnd::Usage);
        }
        let (outcome, verdict) = classify(result, elapsed, self.deadline, is_final)?;
        self.tc.backend.conclude(verdict)?;
        let end = match &outcome {
            Outcome::Passed => CaseEnd::Passed,
            Outcome::Stopped => CaseEnd::Stopped,
            Outcome::Failed(panic) => {
                if self.seen.first_panic.is_none() {
                    self.seen.first_panic = Some(panic.clone());
                }
                CaseEnd::Failed
            }
            Outcome::ServerError(error) => {
                self.seen.server_errors.push(error.message.clone());
                CaseEnd::Failed
            }
            Outcome::Usage(message) => {
                self.seen.usage = Some(format!("invalid use of a generator: {message}"));
                CaseEnd::Usage
            }
        };
        let recording = self.tc.take_recording().unwrap_or_default();
        if is_final {
            self.seen
                .sections
                .push(failure_section(&recording, outcome));
        } else if self.debug {
            let verdict = match &outcome {
                Outcome::Failed(p) | Outcome::ServerError(p) => format!("failed: {}", p.message),
                Outcome::Usage(message) => format!("invalid use of a generator: {message}"),
                Outcome::Stopped => self.tc.backend.stop_description().to_string(),
                Outcome::Passed => "passed".to_string(),
            };
            eprintln!("geist: test case {verdict}: {}", recording.lines.join(", "));
        }
        Ok(end)
    }

    /// The run's verdict from the search's end and what the run loop saw.
    fn verdict(
        &mut self,
        lender: &Lender,
        backend: &mut dyn RunBackend,
        settings: &Settings,
        seed: u64,
        end: SearchEnd,
    ) -> Result<RunSummary, String> {
        let name = settings.name.as_deref();
        let what = describe(name);
        let summary = end.summary;
        for warning in &end.warnings {
            eprintln!("geist: example database: {warning}");
        }
        if self.debug {
            for pass in &end.shrink_statistics {
                eprintln!("geist: shrink pass {pass}");
            }
        }
        if let Some(message) = self.seen.usage.take() {
            return Err(format!("geist: {message}"));
        }
        if settings.verbosity >= Verbosity::Verbose {
            eprintln!(
                "geist: {}{summary}{}",
                name.map(|n| format!("{n}: ")).unwrap_or_default(),
                if end.over_the_wire {
                    " (over the wire)"
                } else {
                    ""
                }
            );
        }
        if let Some(error) = end.error {
            return Err(format!(
                "geist: the Hegel server failed to run {what}: {error}"
            ));
        }
        if let Some(failure) = end.health_check_failure {
            return Err(format!("geist: health check failed: {failure}"));
        }
        if let Some(message) = end.flaky {
            let seen = self
                .seen
                .first_panic
                .take()
                .map(|p| {
                    let at = p.location.map(|l| format!(" at {l}")).unwrap_or_default();
                    format!("\nThe failure seen{at}:\n{}", p.message)
                })
                .unwrap_or_default();
            return Err(format!(
                "geist: {what} is flaky: {message}{seen}\nSearch ran {summary}"
            ));
        }
        if end.failures > 0 {
            backend
                .replay_failures(&mut |case, is_final| self.run_case(lender, case, is_final))
                .map_err(|e| format!("geist: {what} could not run over the wire: {e}"))?;
            if !self.seen.sections.is_empty() {
                return Err(format_report(name, seed, &summary, &self.seen.sections));
            }
        }
        if !end.passed {
            return Err(format!(
                "geist: the Hegel server reported that {what} failed, but sent no failing \
                 example to replay.\nSearch ran {summary}"
            ));
        }
        if let Some(panic) = self.seen.first_panic.take() {
            return Err(format!(
                "geist: {what} is flaky: a test case failed during the search but the failure \
                 did not reproduce when replayed (the property depends on something besides \
                 the drawn values).\nThe failure seen:\n{}{}\nSearch ran {summary}",
                panic
                    .location
                    .map(|l| format!("panicked at {l}:\n"))
                    .unwrap_or_default(),
                panic.message,
            ));
        }
        if let Some(error) = self.seen.server_errors.first()
            && settings.verbosity >= Verbosity::Normal
        {
            eprintln!(
                "geist: {what} passed, but {} test case(s) ended on a server error, e.g. {error}",
                self.seen.server_errors.len()
            );
        }
        Ok(summary)
    }
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

fn failure_section(recording: &Recording, outcome: Outcome) -> String {
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
        Outcome::Failed(panic) | Outcome::ServerError(panic) => {
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

fn format_report(
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
