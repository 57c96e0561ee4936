//! The run lifecycle: `hegel_run_start`, `hegel_next_test_case`, results,
//! failures and reproduce blobs.
//!
//! A run is the engine's own run loop, pulled one test case at a time
//! ([`geist_engine::pull::PullRun`]), followed by the report-time replays:
//! each shrunk failure is replayed once more, stamped for capture, so that the
//! caller records the output its report is made of. A blob run replays a
//! recorded choice sequence instead of exploring.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, panic_message, require, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{self, handled};
use crate::settings::{Database, Settings, hegel_settings_t, settings_of};
use crate::statistics::Statistics;
use crate::test_case::{
    Completed, Family, Handback, hand_out_new_root, hand_out_root, hegel_test_case_t,
};
use crate::text::{self, LentText};
use geist_engine::choice::ChoiceValue;
use geist_engine::health::FLAKY_OUTCOME;
use geist_engine::pull::{Next, OwnedDatabase, PullRun};
use geist_engine::run::Phases;
use geist_engine::{
    Flakiness, HealthCheck, Nondeterminism, RunSettings, Standing, Status, TestData, WhenExhausted,
};
use std::collections::VecDeque;
use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, TryLockError};

/// Opaque to C: `hegel_run_t`.
pub enum hegel_run_t {}
/// Opaque to C: `hegel_run_result_t`.
pub enum hegel_run_result_t {}
/// Opaque to C: `hegel_failure_t`.
pub enum hegel_failure_t {}

/// The most choices a test case may make unless told otherwise.
const MAX_CHOICES: usize = 1 << 20;
/// The replays a deterministic blob gets before it is declared not to fail.
const BLOB_REPLAYS: u32 = 4;
/// The replays a failure found while exploring gets at once: a deterministic
/// failure pays exactly these, and a nondeterministic one that fails at rate
/// `p` escapes all of them with chance `(1 - p)^4`.
const DISCOVERY_REPLAYS: u32 = 4;
/// The `too_slow` budget: seconds the test cases before the tenth valid one
/// may take, as libhegel allows them (its frontends, hegeltest among them,
/// were written against it). The ABI times a test case from hand-out to
/// completion, the test function's own work included, so the engine's
/// default of one second would fail a test on a loaded machine that
/// libhegel passes.
const TOO_SLOW_SECONDS: f64 = 30.0;
/// Where the database lives by default.
const DEFAULT_DATABASE: &str = ".hegel/examples";

/// Where a run's output lines go.
#[derive(Clone, Copy)]
pub struct Output {
    callback: hegel_output_callback_t,
    user_data: usize,
    verbosity: hegel_verbosity_t,
}

impl Output {
    /// Output through `callback` (stderr when NULL).
    pub fn new(
        callback: hegel_output_callback_t,
        user_data: *mut c_void,
        settings: &Settings,
    ) -> Output {
        Output {
            callback,
            user_data: user_data as usize,
            verbosity: settings.verbosity,
        }
    }

    /// Whether the verbosity is at least verbose.
    pub fn verbose(&self) -> bool {
        matches!(
            self.verbosity,
            hegel_verbosity_t::HEGEL_VERBOSITY_VERBOSE | hegel_verbosity_t::HEGEL_VERBOSITY_DEBUG
        )
    }

    /// Whether the verbosity is debug.
    pub fn debug(&self) -> bool {
        self.verbosity == hegel_verbosity_t::HEGEL_VERBOSITY_DEBUG
    }

    /// Emits each line of `text` (nothing under quiet verbosity).
    pub fn emit(&self, text: &str) {
        if self.verbosity == hegel_verbosity_t::HEGEL_VERBOSITY_QUIET {
            return;
        }
        for line in text.split('\n') {
            match self.callback {
                Some(callback) => {
                    let mut bytes = Vec::with_capacity(line.len() + 1);
                    bytes.extend_from_slice(line.as_bytes());
                    bytes.push(0);
                    // SAFETY: the caller supplied the callback and user data
                    // for exactly this use; the line outlives the call.
                    unsafe {
                        callback(
                            self.user_data as *mut c_void,
                            bytes.as_ptr().cast::<c_char>(),
                            line.len(),
                        )
                    };
                }
                None => eprintln!("{line}"),
            }
        }
    }
}

/// A failure as reported: its origin, blob and caveat.
#[derive(Debug)]
pub struct FailureRecord {
    origin: LentText,
    blob: Option<LentText>,
    caveat: Option<LentText>,
}
handled!(FailureRecord, 6, "failure");

impl FailureRecord {
    fn copy(&self) -> FailureRecord {
        FailureRecord {
            origin: LentText::new(self.origin.as_bytes()),
            blob: self.blob.as_ref().map(|b| LentText::new(b.as_bytes())),
            caveat: self.caveat.as_ref().map(|c| LentText::new(c.as_bytes())),
        }
    }
}

/// A finished run's outcome.
#[derive(Debug)]
pub struct Outcome {
    status: hegel_run_status_t,
    error: Option<LentText>,
    error_kind: hegel_run_error_kind_t,
    health_check: u32,
    failures: Vec<FailureRecord>,
}
handled!(Outcome, 5, "run result");

impl Outcome {
    fn passed() -> Outcome {
        Outcome {
            status: hegel_run_status_t::HEGEL_RUN_STATUS_PASSED,
            error: None,
            error_kind: hegel_run_error_kind_t::HEGEL_RUN_ERROR_NONE,
            health_check: 0,
            failures: Vec::new(),
        }
    }

    fn error(kind: hegel_run_error_kind_t, health_check: u32, message: String) -> Outcome {
        Outcome {
            status: hegel_run_status_t::HEGEL_RUN_STATUS_ERROR,
            error: Some(LentText::new(message)),
            error_kind: kind,
            health_check,
            failures: Vec::new(),
        }
    }

    fn copy(&self) -> Outcome {
        Outcome {
            status: self.status,
            error: self.error.as_ref().map(|e| LentText::new(e.as_bytes())),
            error_kind: self.error_kind,
            health_check: self.health_check,
            failures: self.failures.iter().map(FailureRecord::copy).collect(),
        }
    }
}

fn health_check_bit(check: HealthCheck) -> u32 {
    match check {
        HealthCheck::FilterTooMuch => HC_FILTER_TOO_MUCH,
        HealthCheck::TooSlow => HC_TOO_SLOW,
        HealthCheck::TestCasesTooLarge => HC_TEST_CASES_TOO_LARGE,
        HealthCheck::LargeInitialTestCase => HC_LARGE_INITIAL_TEST_CASE,
    }
}

fn health_check_name(check: HealthCheck) -> &'static str {
    match check {
        HealthCheck::FilterTooMuch => "FilterTooMuch",
        HealthCheck::TooSlow => "TooSlow",
        HealthCheck::TestCasesTooLarge => "TestCasesTooLarge",
        HealthCheck::LargeInitialTestCase => "LargeInitialTestCase",
    }
}

/// The choices of a reproduce blob (geist's, or one libhegel printed). A
/// blob that does not decode is refused with the reason, and with the likely
/// cause: a blob is only guaranteed to replay in the version of Hegel (here:
/// of geist) that made it.
pub fn decode_blob(blob: &str) -> AbiResult<Vec<ChoiceValue>> {
    geist_engine::blob::decode_blob(blob).map_err(|e| {
        AbiError::arg(format!(
            "the supplied failure blob could not be decoded ({e}). It may be corrupt, \
             or come from another version of Hegel or another engine: a blob only replays in \
             the version that printed it"
        ))
    })
}

/// The random seed of a run without a fixed one.
fn fresh_seed() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    let mut hasher = state.build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    let high = hasher.finish();
    hasher.write_u64(high);
    (u128::from(high) << 64) | u128::from(hasher.finish())
}

/// The engine settings of a run.
fn engine_settings(settings: &Settings) -> RunSettings {
    let seed = match (settings.seed, settings.derandomize) {
        (Some(seed), _) => u128::from(seed),
        (None, true) => {
            let key = settings.database_key.as_deref().unwrap_or("");
            u128::from(crate::test_case::label_from_name(key.as_bytes()))
        }
        (None, false) => fresh_seed(),
    };
    let unbounded =
        settings.unbounded_choices || settings.suppressed & HC_TEST_CASES_TOO_LARGE != 0;
    let suppress_health_checks = [
        HealthCheck::FilterTooMuch,
        HealthCheck::TooSlow,
        HealthCheck::TestCasesTooLarge,
        HealthCheck::LargeInitialTestCase,
    ]
    .into_iter()
    .filter(|c| settings.suppressed & health_check_bit(*c) != 0)
    .collect();
    RunSettings {
        test_cases: settings.test_cases,
        seed,
        phases: Phases {
            reuse: settings.phases & PHASE_REUSE != 0,
            generate: settings.phases & PHASE_GENERATE != 0,
            target: settings.phases & PHASE_TARGET != 0,
            shrink: settings.phases & PHASE_SHRINK != 0,
        },
        report_multiple_failures: settings.report_multiple_failures,
        stop_on_first_failure: settings.stop_on_first_failure,
        nondeterminism: match settings.strictness {
            hegel_nondeterminism_strictness_t::HEGEL_NONDETERMINISM_ERROR => Nondeterminism::Abort,
            _ => Nondeterminism::Handle,
        },
        discovery_replays: DISCOVERY_REPLAYS,
        suppress_health_checks,
        max_choices: if unbounded {
            usize::MAX >> 2
        } else {
            MAX_CHOICES
        },
        too_slow_seconds: TOO_SLOW_SECONDS,
        // libhegel's contract: a run makes its valid test cases even over a
        // space it has used up (repeats included), and a filter rejecting a
        // small space fails filter_too_much instead of ending the run early.
        when_exhausted: WhenExhausted::Repeat,
        ..RunSettings::default()
    }
}

/// The run's database: geist's one database setting (a directory,
/// `redis://...`, `readonly:X`, several comma-separated), as everywhere else.
/// A setting that cannot be opened costs a warning, not the run.
fn database_of(settings: &Settings, output: &Output) -> Option<OwnedDatabase> {
    let key = settings.database_key.as_ref()?;
    let setting = match &settings.database {
        Database::Disabled => return None,
        Database::Default => DEFAULT_DATABASE,
        Database::Path(setting) => setting.as_str(),
    };
    match geist_database::open(setting) {
        Ok(database) => Some(OwnedDatabase {
            database,
            key: key.as_bytes().to_vec(),
        }),
        Err(e) => {
            output.emit(&format!(
                "example database {setting:?}: {e}; this run goes on without it"
            ));
            None
        }
    }
}

/// A failure waiting for its report-time replay.
struct PendingFailure {
    choices: Vec<ChoiceValue>,
    origin: String,
    standing: Standing,
    /// Replays for the report left before it is declared not to reproduce.
    tries_left: u32,
}

impl PendingFailure {
    fn new(failure: geist_engine::Failure) -> PendingFailure {
        let tries_left = match failure.standing {
            Standing::Confirmed(replays) => replays.tries(),
            Standing::Deterministic | Standing::Unconfirmed(_) => 1,
        };
        PendingFailure {
            choices: failure.choices,
            origin: failure.origin,
            standing: failure.standing,
            tries_left,
        }
    }

    /// The failure as reported, after its report-time replays: its caveat
    /// quotes the replays nondeterministic handling gave it, and a failure
    /// that did not fail again since it was found has no blob to replay.
    fn report(self, reproduced: bool) -> FailureRecord {
        let dry = if reproduced {
            ""
        } else {
            "; not reproduced at report time"
        };
        let caveat = match self.standing {
            Standing::Deterministic if reproduced => None,
            Standing::Deterministic => Some(format!("nondeterministic failure{dry}")),
            Standing::Confirmed(replays)
                if reproduced && replays.failed == replays.run && !replays.passed_before =>
            {
                None
            }
            Standing::Confirmed(replays) => Some(format!(
                "nondeterministic failure, confirmed: failed {} of {} replays{dry}",
                replays.failed, replays.run
            )),
            Standing::Unconfirmed(replays) => Some(format!(
                "unconfirmed failure: failed {} of {} replays{}",
                replays.failed,
                replays.run,
                if reproduced {
                    ", but again at report time"
                } else {
                    dry
                }
            )),
        };
        let replayable = reproduced || matches!(self.standing, Standing::Confirmed(_));
        FailureRecord {
            origin: LentText::new(self.origin.as_str()),
            blob: replayable.then(|| LentText::new(geist_engine::blob::encode_blob(&self.choices))),
            caveat: caveat.map(LentText::new),
        }
    }
}

/// A flaky-test error's message: the failure that did not reproduce, named.
fn flaky_failure_message(origin: &str) -> String {
    format!("Flaky test detected: {FLAKY_OUTCOME} The failure that did not reproduce was: {origin}")
}

/// What the run does next.
enum Stage {
    /// The engine's loop is exploring.
    Exploring(Box<PullRun>),
    /// Replaying the shrunk failures for the report.
    Reporting {
        pending: VecDeque<PendingFailure>,
        current: Option<PendingFailure>,
        confirmed: Vec<FailureRecord>,
    },
    /// Replaying a blob.
    ReplayingBlob {
        choices: Vec<ChoiceValue>,
        replays_left: u32,
    },
    /// Over.
    Done(Arc<Outcome>),
}

struct RunState {
    settings: Settings,
    max_choices: usize,
    output: Output,
    stage: Stage,
    handback: Handback,
    current: Option<Arc<Family>>,
    /// Whether the current test case came from the engine's loop.
    exploring_case: bool,
    statistics: Statistics,
    /// Whether the end of the run was announced (debug line, statistics).
    announced: bool,
    /// A passed outcome, what the stage holds while [`RunState::next`]
    /// works on it: shared, not allocated again at every test case.
    passed: Arc<Outcome>,
}

/// A run handle's contents.
pub struct Run {
    state: Mutex<RunState>,
}
handled!(Run, 4, "run");

impl RunState {
    fn new(settings: Settings, output: Output, stage: Stage) -> RunState {
        let max_choices = engine_settings(&settings).max_choices;
        RunState {
            settings,
            max_choices,
            output,
            stage,
            handback: Arc::new(Mutex::new(None)),
            current: None,
            exploring_case: false,
            statistics: Statistics::default(),
            announced: false,
            passed: Arc::new(Outcome::passed()),
        }
    }

    fn take_completed(&mut self) -> AbiResult<Option<Completed>> {
        let Some(family) = &self.current else {
            return Ok(None);
        };
        if !family.is_completed() {
            return Err(AbiError::NotComplete(
                "the previous test case was not marked complete (call hegel_mark_complete first)"
                    .into(),
            ));
        }
        self.current = None;
        Ok(self
            .handback
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take())
    }

    fn hand_out(
        &mut self,
        data: Box<TestData>,
        capture: bool,
    ) -> AbiResult<*mut hegel_test_case_t> {
        let (family, raw) = hand_out_new_root(data, Some(Arc::clone(&self.handback)), capture);
        self.current = family;
        raw
    }

    /// Advances to the next test case (NULL once the run is over). An
    /// engine that fails or panics while advancing ends the run with an
    /// internal error: the caller then gets NULL and a result that says
    /// so, never a run left neither going on nor over.
    fn advance(&mut self) -> AbiResult<*mut hegel_test_case_t> {
        let message = match catch_unwind(AssertUnwindSafe(|| self.next())) {
            Ok(Err(AbiError::Internal(message))) => message,
            Ok(outcome) => return outcome,
            Err(payload) => panic_message(payload.as_ref()),
        };
        if let Some(family) = self.current.take() {
            family.complete(Status::Overrun, None);
        }
        self.stage = Stage::Done(Arc::new(Outcome::error(
            hegel_run_error_kind_t::HEGEL_RUN_ERROR_INTERNAL,
            0,
            format!("the engine failed while running the test: {message}"),
        )));
        Err(AbiError::Internal(message))
    }

    /// Advances to the next test case (NULL once the run is over).
    fn next(&mut self) -> AbiResult<*mut hegel_test_case_t> {
        let completed = self.take_completed()?;
        let exploring_case = std::mem::replace(&mut self.exploring_case, false);
        let mut completed = completed;
        loop {
            let stage = std::mem::replace(&mut self.stage, Stage::Done(Arc::clone(&self.passed)));
            match stage {
                Stage::Exploring(mut pull) => {
                    let starting = !pull.is_outstanding();
                    if starting {
                        if self.output.debug() {
                            let config = match &self.settings.config_path {
                                Some(path) => format!("loaded config: {path}"),
                                None => "no config file loaded".to_string(),
                            };
                            self.output.emit(&config);
                        }
                        if self.output.verbose() {
                            self.output.emit("Starting phase: Generate");
                        }
                    }
                    let step = if pull.is_outstanding() {
                        let done = completed.take().map(|c| {
                            if exploring_case && c.data.status == Some(Status::Valid) {
                                self.statistics.record(&c.observations);
                            }
                            let mut data = c.data;
                            data.draw_seconds = c.seconds;
                            data
                        });
                        // A test case freed without completion counts as valid.
                        let data =
                            done.unwrap_or_else(|| Box::new(TestData::replaying(Vec::new(), 0)));
                        pull.resume(data)
                    } else {
                        pull.start()
                    }
                    .map_err(|e| AbiError::Internal(e.to_string()))?;
                    match step {
                        Next::TestCase(data) => {
                            self.stage = Stage::Exploring(pull);
                            self.exploring_case = true;
                            if self.output.verbosity == hegel_verbosity_t::HEGEL_VERBOSITY_VERBOSE {
                                self.output.emit("Running test case");
                            }
                            let stamped = data.stamped;
                            return self.hand_out(data, stamped);
                        }
                        Next::Finished(result) => {
                            if self.output.verbose() {
                                self.output.emit("Ending phase: Generate");
                            }
                            self.stage = self.after_exploring(result);
                        }
                    }
                }
                Stage::Reporting {
                    mut pending,
                    current,
                    mut confirmed,
                } => {
                    if let Some(mut failure) = current {
                        let reproduced = completed.take().is_some_and(|c| {
                            c.data.status == Some(Status::Interesting)
                                && c.data.origin.as_deref() == Some(failure.origin.as_str())
                        });
                        failure.tries_left = failure.tries_left.saturating_sub(1);
                        if !reproduced && failure.tries_left > 0 {
                            let data = Box::new(TestData::replaying(
                                failure.choices.clone(),
                                self.max_choices,
                            ));
                            self.stage = Stage::Reporting {
                                pending,
                                current: Some(failure),
                                confirmed,
                            };
                            return self.hand_out(data, true);
                        }
                        let strict = self.settings.strictness
                            == hegel_nondeterminism_strictness_t::HEGEL_NONDETERMINISM_ERROR;
                        if !reproduced && strict {
                            self.stage = Stage::Done(Arc::new(Outcome::error(
                                hegel_run_error_kind_t::HEGEL_RUN_ERROR_FLAKY,
                                0,
                                flaky_failure_message(&failure.origin),
                            )));
                            continue;
                        }
                        confirmed.push(failure.report(reproduced));
                    }
                    match pending.pop_front() {
                        Some(next) => {
                            let data = Box::new(TestData::replaying(
                                next.choices.clone(),
                                self.max_choices,
                            ));
                            self.stage = Stage::Reporting {
                                pending,
                                current: Some(next),
                                confirmed,
                            };
                            return self.hand_out(data, true);
                        }
                        None => {
                            self.stage = Stage::Done(Arc::new(Outcome {
                                status: hegel_run_status_t::HEGEL_RUN_STATUS_FAILED,
                                error: None,
                                error_kind: hegel_run_error_kind_t::HEGEL_RUN_ERROR_NONE,
                                health_check: 0,
                                failures: confirmed,
                            }));
                        }
                    }
                }
                Stage::ReplayingBlob {
                    choices,
                    replays_left,
                } => {
                    if let Some(c) = completed.take()
                        && c.data.status == Some(Status::Interesting)
                    {
                        self.stage = Stage::Done(Arc::new(Outcome {
                            status: hegel_run_status_t::HEGEL_RUN_STATUS_FAILED,
                            error: None,
                            error_kind: hegel_run_error_kind_t::HEGEL_RUN_ERROR_NONE,
                            health_check: 0,
                            failures: vec![FailureRecord {
                                origin: LentText::new(c.data.origin.unwrap_or_default()),
                                blob: None,
                                caveat: None,
                            }],
                        }));
                        continue;
                    }
                    if replays_left == 0 {
                        self.output.emit(
                            "The reproduce blob did not reproduce a failure: every replay of its \
                             choices passed.",
                        );
                        self.stage = Stage::Done(Arc::new(Outcome::passed()));
                        continue;
                    }
                    // Exact replay: a draw past the recording overruns.
                    let data = Box::new(TestData::replaying(choices.clone(), choices.len()));
                    self.stage = Stage::ReplayingBlob {
                        choices,
                        replays_left: replays_left - 1,
                    };
                    return self.hand_out(data, true);
                }
                Stage::Done(outcome) => {
                    if !self.announced {
                        self.announced = true;
                        if self.output.debug() {
                            self.output.emit(&format!(
                                "Test done. interesting_test_cases={}",
                                outcome.failures.len()
                            ));
                        }
                        if self.settings.show_statistics {
                            let report = self.statistics.report();
                            self.output.emit(&report);
                        }
                    }
                    self.stage = Stage::Done(outcome);
                    return Ok(std::ptr::null_mut());
                }
            }
        }
    }

    /// What follows the engine's loop: the report replays, or the end.
    fn after_exploring(&mut self, result: geist_engine::RunResult) -> Stage {
        for warning in &result.warnings {
            self.output.emit(warning);
        }
        if let Some(failure) = result.health_check_failure() {
            let check = failure.check();
            return Stage::Done(Arc::new(Outcome::error(
                hegel_run_error_kind_t::HEGEL_RUN_ERROR_HEALTH_CHECK,
                health_check_bit(check),
                format!("FailedHealthCheck: {}: {failure}", health_check_name(check)),
            )));
        }
        if let Some(flakiness) = result.flakiness() {
            let (kind, message) = match flakiness {
                Flakiness::Generation { .. } => (
                    hegel_run_error_kind_t::HEGEL_RUN_ERROR_NONDETERMINISTIC,
                    flakiness.to_string(),
                ),
                Flakiness::Outcome { origin } => (
                    hegel_run_error_kind_t::HEGEL_RUN_ERROR_FLAKY,
                    flaky_failure_message(origin),
                ),
            };
            return Stage::Done(Arc::new(Outcome::error(kind, 0, message)));
        }
        if result.nondeterminism.is_some()
            && self.settings.strictness
                == hegel_nondeterminism_strictness_t::HEGEL_NONDETERMINISM_WARN
        {
            self.output.emit(
                "The test is nondeterministic: the same choices did not always lead to the same \
                 draws or outcome. Failures are confirmed by replaying them.",
            );
        }
        if result.failures.is_empty() {
            if result.valid_test_cases == 0
                && result.test_cases > 0
                && self.settings.phases & PHASE_GENERATE != 0
            {
                return Stage::Done(Arc::new(Outcome::error(
                    hegel_run_error_kind_t::HEGEL_RUN_ERROR_UNSATISFIABLE,
                    0,
                    format!(
                        "Unable to satisfy assumptions of this test: none of the {} test cases \
                         run was valid",
                        result.test_cases
                    ),
                )));
            }
            return Stage::Done(Arc::new(Outcome::passed()));
        }
        let mut failures: Vec<PendingFailure> = result
            .failures
            .into_iter()
            .map(PendingFailure::new)
            .collect();
        if !self.settings.report_multiple_failures {
            failures.truncate(1);
        }
        Stage::Reporting {
            pending: failures.into(),
            current: None,
            confirmed: Vec::new(),
        }
    }
}

fn start(
    settings: *const hegel_settings_t,
    callback: hegel_output_callback_t,
    user_data: *mut c_void,
    out_run: *mut *mut hegel_run_t,
    blob: Option<Vec<ChoiceValue>>,
) -> AbiResult {
    let settings = settings_of(settings)?;
    require(out_run, "out_run")?;
    if let Ok(dir) = std::env::var("ANTITHESIS_OUTPUT_DIR")
        && !std::path::Path::new(&dir).is_dir()
    {
        return Err(AbiError::arg(format!(
            "ANTITHESIS_OUTPUT_DIR names {dir}, which is not a directory"
        )));
    }
    let output = Output::new(callback, user_data, &settings);
    let stage = match blob {
        Some(choices) => Stage::ReplayingBlob {
            choices,
            replays_left: BLOB_REPLAYS,
        },
        None => {
            let pull = PullRun::new(engine_settings(&settings), database_of(&settings, &output))
                .map_err(|e| AbiError::Internal(e.to_string()))?;
            Stage::Exploring(Box::new(pull))
        }
    };
    let run = Run {
        state: Mutex::new(RunState::new(settings, output, stage)),
    };
    write(out_run, handles::insert(Arc::new(run))?, "out_run")
}

/// Sets up a run.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_start(
    ctx: *mut hegel_context_t,
    settings: *const hegel_settings_t,
    callback: hegel_output_callback_t,
    user_data: *mut c_void,
    out_run: *mut *mut hegel_run_t,
) -> hegel_result_t {
    guard(ctx, || start(settings, callback, user_data, out_run, None))
}

/// Sets up a run that replays a reproduce blob.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_start_blob(
    ctx: *mut hegel_context_t,
    settings: *const hegel_settings_t,
    blob: hegel_string_t,
    callback: hegel_output_callback_t,
    user_data: *mut c_void,
    out_run: *mut *mut hegel_run_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let blob = unsafe { text::text(blob, "blob")? };
        let choices = decode_blob(blob)?;
        start(settings, callback, user_data, out_run, Some(choices))
    })
}

/// The next test case, or NULL once the run is over.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_next_test_case(
    ctx: *mut hegel_context_t,
    run: *mut hegel_run_t,
    out_test_case: *mut *mut hegel_test_case_t,
) -> hegel_result_t {
    guard(ctx, || {
        // Looked up without copying it out (see `handles::with`).
        handles::with::<Run, _, _>(run, |run| {
            require(out_test_case, "out_test_case")?;
            let mut state = match run.state.try_lock() {
                Ok(state) => state,
                // A panic while advancing ended the run already (see below).
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    return Err(AbiError::ConcurrentUse(
                        "the run is being advanced on another thread".into(),
                    ));
                }
            };
            let next = state.advance()?;
            write(out_test_case, next, "out_test_case")
        })?
    })
}

/// A copy of the finished run's result.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_result(
    ctx: *mut hegel_context_t,
    run: *mut hegel_run_t,
    out_result: *mut *mut hegel_run_result_t,
) -> hegel_result_t {
    guard(ctx, || {
        let run = handles::get::<Run, _>(run)?;
        require(out_result, "out_result")?;
        let state = run.state.lock().unwrap_or_else(|e| e.into_inner());
        let Stage::Done(outcome) = &state.stage else {
            return Err(AbiError::NotComplete(
                "the run has not finished: call hegel_next_test_case until it hands out NULL"
                    .into(),
            ));
        };
        let copy = outcome.copy();
        write(out_result, handles::insert(Arc::new(copy))?, "out_result")
    })
}

/// Frees a run (an unfinished one is stopped); NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_free(
    ctx: *mut hegel_context_t,
    run: *mut hegel_run_t,
) -> hegel_result_t {
    guard(ctx, || {
        if let Some(run) = handles::free::<Run, _>(run)? {
            let mut state = run.state.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(family) = state.current.take() {
                family.complete(Status::Overrun, None);
            }
            if let Stage::Exploring(pull) = &mut state.stage
                && !pull.is_finished()
            {
                let _ = pull.abort();
            }
        }
        Ok(())
    })
}

/// A test case that replays a blob, outside any run.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_test_case_from_blob(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    blob: hegel_string_t,
    _callback: hegel_output_callback_t,
    _user_data: *mut c_void,
    out_test_case: *mut *mut hegel_test_case_t,
) -> hegel_result_t {
    guard(ctx, || {
        settings_of(s)?;
        // SAFETY: the caller's view.
        let blob = unsafe { text::text(blob, "blob")? };
        require(out_test_case, "out_test_case")?;
        let choices = decode_blob(blob)?;
        let len = choices.len();
        let family = Family::new(Box::new(TestData::replaying(choices, len)), None, true);
        write(out_test_case, hand_out_root(family)?, "out_test_case")
    })
}

fn outcome(r: *const hegel_run_result_t) -> AbiResult<Arc<Outcome>> {
    handles::get::<Outcome, _>(r)
}

/// Frees a run result; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_result_free(
    ctx: *mut hegel_context_t,
    r: *mut hegel_run_result_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<Outcome, _>(r).map(drop))
}

/// The run's verdict.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_result_status(
    ctx: *mut hegel_context_t,
    r: *const hegel_run_result_t,
    out_status: *mut hegel_run_status_t,
) -> hegel_result_t {
    guard(ctx, || write(out_status, outcome(r)?.status, "out_status"))
}

/// The run's error message (NULL when it did not error).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_result_error(
    ctx: *mut hegel_context_t,
    r: *const hegel_run_result_t,
    out_error: *mut *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let outcome = outcome(r)?;
        let view = outcome
            .error
            .as_ref()
            .map_or(std::ptr::null(), LentText::view_ptr);
        write(out_error, view, "out_error")
    })
}

/// Why the run errored.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_result_error_kind(
    ctx: *mut hegel_context_t,
    r: *const hegel_run_result_t,
    out_kind: *mut hegel_run_error_kind_t,
    out_health_check: *mut u32,
) -> hegel_result_t {
    guard(ctx, || {
        let outcome = outcome(r)?;
        if out_kind.is_null() && out_health_check.is_null() {
            return Err(AbiError::arg("out_kind and out_health_check are both NULL"));
        }
        if !out_kind.is_null() {
            write(out_kind, outcome.error_kind, "out_kind")?;
        }
        if !out_health_check.is_null() {
            write(out_health_check, outcome.health_check, "out_health_check")?;
        }
        Ok(())
    })
}

/// The number of distinct failures.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_result_failure_count(
    ctx: *mut hegel_context_t,
    r: *const hegel_run_result_t,
    out_count: *mut usize,
) -> hegel_result_t {
    guard(ctx, || {
        write(out_count, outcome(r)?.failures.len(), "out_count")
    })
}

/// A copy of one failure.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_run_result_failure(
    ctx: *mut hegel_context_t,
    r: *const hegel_run_result_t,
    index: usize,
    out_failure: *mut *mut hegel_failure_t,
) -> hegel_result_t {
    guard(ctx, || {
        let outcome = outcome(r)?;
        require(out_failure, "out_failure")?;
        let failure = outcome.failures.get(index).ok_or_else(|| {
            AbiError::arg(format!(
                "failure index {index} is out of range: the run has {} failures",
                outcome.failures.len()
            ))
        })?;
        write(
            out_failure,
            handles::insert(Arc::new(failure.copy()))?,
            "out_failure",
        )
    })
}

fn failure(f: *const hegel_failure_t) -> AbiResult<Arc<FailureRecord>> {
    handles::get::<FailureRecord, _>(f)
}

/// Frees a failure; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_failure_free(
    ctx: *mut hegel_context_t,
    f: *mut hegel_failure_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<FailureRecord, _>(f).map(drop))
}

/// The failure's origin.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_failure_origin(
    ctx: *mut hegel_context_t,
    f: *const hegel_failure_t,
    out_origin: *mut hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        write(out_origin, failure(f)?.origin.view(), "out_origin")
    })
}

/// The failure's reproduce blob (NULL when none).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_failure_reproduction_blob(
    ctx: *mut hegel_context_t,
    f: *const hegel_failure_t,
    out_blob: *mut *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let failure = failure(f)?;
        let view = failure
            .blob
            .as_ref()
            .map_or(std::ptr::null(), LentText::view_ptr);
        write(out_blob, view, "out_blob")
    })
}

/// The failure's confirmation caveat (NULL for a deterministic failure).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_failure_caveat(
    ctx: *mut hegel_context_t,
    f: *const hegel_failure_t,
    out_caveat: *mut *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let failure = failure(f)?;
        let view = failure
            .caveat
            .as_ref()
            .map_or(std::ptr::null(), LentText::view_ptr);
        write(out_caveat, view, "out_caveat")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_state(stage: Stage) -> RunState {
        let settings = Settings::base();
        let output = Output::new(None, std::ptr::null_mut(), &settings);
        RunState::new(settings, output, stage)
    }

    #[test]
    fn an_engine_that_fails_while_advancing_ends_the_run_with_an_internal_error() {
        // A run loop that is over before it started: starting it again is
        // an engine error, the kind a frontend must learn about.
        let mut pull = PullRun::new(engine_settings(&Settings::base()), None).unwrap();
        pull.abort().unwrap();
        let mut state = run_state(Stage::Exploring(Box::new(pull)));
        assert!(matches!(state.advance(), Err(AbiError::Internal(_))));
        let Stage::Done(outcome) = &state.stage else {
            panic!("the run did not end");
        };
        assert_eq!(outcome.status, hegel_run_status_t::HEGEL_RUN_STATUS_ERROR);
        assert_eq!(
            outcome.error_kind,
            hegel_run_error_kind_t::HEGEL_RUN_ERROR_INTERNAL
        );
        // And it stays over: NULL, not another error or a test case.
        assert!(state.advance().unwrap().is_null());
    }

    #[test]
    fn a_test_case_not_marked_complete_is_an_error_the_run_survives() {
        let pull = PullRun::new(engine_settings(&Settings::base()), None).unwrap();
        let mut state = run_state(Stage::Exploring(Box::new(pull)));
        let first = state.advance().unwrap();
        assert!(!first.is_null());
        assert!(matches!(state.advance(), Err(AbiError::NotComplete(_))));
        assert!(matches!(state.stage, Stage::Exploring(_)));
        if let Some(family) = state.current.take() {
            family.complete(Status::Valid, None);
            state.current = Some(family);
        }
        assert!(state.advance().is_ok());
    }
}
