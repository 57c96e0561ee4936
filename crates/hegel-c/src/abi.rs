//! The C ABI's vocabulary: result codes, enumerations, constants and the
//! plain structs that cross the boundary, laid out as `include/hegel.h`
//! declares them (hegeltest-c 0.49.0's interface).
//!
//! Enumerations that the caller passes in arrive as `u32` and are checked
//! here, so an out-of-range value is an error rather than undefined
//! behaviour; enumerations written out to the caller use `#[repr(C)]` enums.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// The result of every fallible call: zero for success, negative for errors.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_result_t {
    /// Success.
    HEGEL_OK = 0,
    /// The test case ran out of choices: abort the body.
    HEGEL_E_STOP_TEST = -1,
    /// An assumption failed: the test case is invalid.
    HEGEL_E_ASSUME = -2,
    /// The backend failed.
    HEGEL_E_BACKEND = -3,
    /// A handle was null, freed, or of the wrong kind.
    HEGEL_E_INVALID_HANDLE = -4,
    /// Another argument was invalid.
    HEGEL_E_INVALID_ARG = -5,
    /// The test case was already completed.
    HEGEL_E_ALREADY_COMPLETE = -6,
    /// Something was read before it was ready.
    HEGEL_E_NOT_COMPLETE = -7,
    /// An internal invariant failed.
    HEGEL_E_INTERNAL = -8,
    /// A handle was used from two threads at once.
    HEGEL_E_CONCURRENT_USE = -9,
    /// A recursive generation attempt must start again from its root.
    HEGEL_E_RETRY = -10,
    /// Nothing at that index, or nothing left.
    HEGEL_E_NOT_FOUND = -11,
}

/// How a test case ended, as `hegel_mark_complete` receives it (as a `u32`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_status_t {
    /// The body ran to completion.
    HEGEL_STATUS_VALID = 0,
    /// An assumption failed.
    HEGEL_STATUS_INVALID = 1,
    /// The test case ran out of choices.
    HEGEL_STATUS_OVERRUN = 2,
    /// The property failed.
    HEGEL_STATUS_INTERESTING = 3,
}

pub(crate) const STATUS_VALID: u32 = hegel_status_t::HEGEL_STATUS_VALID as u32;
pub(crate) const STATUS_INVALID: u32 = hegel_status_t::HEGEL_STATUS_INVALID as u32;
pub(crate) const STATUS_OVERRUN: u32 = hegel_status_t::HEGEL_STATUS_OVERRUN as u32;
pub(crate) const STATUS_INTERESTING: u32 = hegel_status_t::HEGEL_STATUS_INTERESTING as u32;

/// The verdict of a finished run.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_run_status_t {
    /// The property held.
    HEGEL_RUN_STATUS_PASSED = 0,
    /// The property failed.
    HEGEL_RUN_STATUS_FAILED = 1,
    /// The run itself failed and gave no verdict.
    HEGEL_RUN_STATUS_ERROR = 2,
}

/// Why a run errored.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_run_error_kind_t {
    /// The run did not error.
    HEGEL_RUN_ERROR_NONE = 0,
    /// A health check failed.
    HEGEL_RUN_ERROR_HEALTH_CHECK = 1,
    /// The test's outcome changed on identical data.
    HEGEL_RUN_ERROR_FLAKY = 2,
    /// The test's data generation changed on identical data.
    HEGEL_RUN_ERROR_NONDETERMINISTIC = 3,
    /// No valid test case was ever generated.
    HEGEL_RUN_ERROR_UNSATISFIABLE = 4,
    /// The caller broke the driving contract.
    HEGEL_RUN_ERROR_USAGE = 5,
    /// A bug in the engine.
    HEGEL_RUN_ERROR_INTERNAL = 6,
}

/// How much the engine says through the output callback.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_verbosity_t {
    /// The run's notices only.
    HEGEL_VERBOSITY_NORMAL = 0,
    /// Nothing.
    HEGEL_VERBOSITY_QUIET = 1,
    /// Phases and test cases too.
    HEGEL_VERBOSITY_VERBOSE = 2,
    /// The engine's own trace too.
    HEGEL_VERBOSITY_DEBUG = 3,
}

/// Where randomness comes from.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_backend_t {
    /// One seeded PRNG.
    HEGEL_BACKEND_DEFAULT = 1,
    /// Fresh entropy on every draw.
    HEGEL_BACKEND_URANDOM = 2,
}

/// How a run reacts to nondeterministic tests.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_nondeterminism_strictness_t {
    /// Handle it silently.
    HEGEL_NONDETERMINISM_QUIET = 0,
    /// Handle it, with a notice.
    HEGEL_NONDETERMINISM_WARN = 1,
    /// Abort the run.
    HEGEL_NONDETERMINISM_ERROR = 2,
}

/// A phase of a run, as a bit flag.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_phase_t {
    /// Explicit examples (reserved).
    HEGEL_PHASE_EXPLICIT = 1 << 0,
    /// Replay failures saved in the database.
    HEGEL_PHASE_REUSE = 1 << 1,
    /// Generate test cases.
    HEGEL_PHASE_GENERATE = 1 << 2,
    /// Optimise targets.
    HEGEL_PHASE_TARGET = 1 << 3,
    /// Shrink failures.
    HEGEL_PHASE_SHRINK = 1 << 4,
    /// Every phase.
    HEGEL_PHASE_ALL = 31,
}

pub(crate) const PHASE_EXPLICIT: u32 = hegel_phase_t::HEGEL_PHASE_EXPLICIT as u32;
pub(crate) const PHASE_REUSE: u32 = hegel_phase_t::HEGEL_PHASE_REUSE as u32;
pub(crate) const PHASE_GENERATE: u32 = hegel_phase_t::HEGEL_PHASE_GENERATE as u32;
pub(crate) const PHASE_TARGET: u32 = hegel_phase_t::HEGEL_PHASE_TARGET as u32;
pub(crate) const PHASE_SHRINK: u32 = hegel_phase_t::HEGEL_PHASE_SHRINK as u32;
pub(crate) const PHASE_ALL: u32 = hegel_phase_t::HEGEL_PHASE_ALL as u32;

/// A health check, as a bit flag.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hegel_health_check_t {
    /// Too many test cases rejected.
    HEGEL_HC_FILTER_TOO_MUCH = 1 << 0,
    /// Test cases too slow.
    HEGEL_HC_TOO_SLOW = 1 << 1,
    /// Test cases too large.
    HEGEL_HC_TEST_CASES_TOO_LARGE = 1 << 2,
    /// The first test case is already large.
    HEGEL_HC_LARGE_INITIAL_TEST_CASE = 1 << 3,
}

pub(crate) const HC_FILTER_TOO_MUCH: u32 = hegel_health_check_t::HEGEL_HC_FILTER_TOO_MUCH as u32;
pub(crate) const HC_TOO_SLOW: u32 = hegel_health_check_t::HEGEL_HC_TOO_SLOW as u32;
pub(crate) const HC_TEST_CASES_TOO_LARGE: u32 =
    hegel_health_check_t::HEGEL_HC_TEST_CASES_TOO_LARGE as u32;
pub(crate) const HC_LARGE_INITIAL_TEST_CASE: u32 =
    hegel_health_check_t::HEGEL_HC_LARGE_INITIAL_TEST_CASE as u32;
/// Every health check bit.
pub(crate) const HC_ALL: u32 = 15;

/// Draw-and-test attempts of a filter before it rejects the test case.
pub const HEGEL_FILTER_ATTEMPTS: u32 = 3;
/// Attempts of a recursive value before the test case is rejected.
pub const HEGEL_RECURSION_ATTEMPTS: u32 = 9;
/// A state machine's "no more rules" / "done" answer.
pub const HEGEL_STATE_MACHINE_DONE: i64 = i64::MIN;
/// The `max_size` that asks for the default maximum of text and bytes.
pub const HEGEL_MAX_SIZE_DEFAULT: u64 = u64::MAX - 1;

/// A UTF-8 string view: `len` bytes at `data`, no terminator needed on input.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hegel_string_t {
    /// The bytes (may be null when `len` is 0).
    pub data: *const c_char,
    /// Their number.
    pub len: usize,
}

/// An owned string allocated by the engine.
pub type hegel_owned_string_t = hegel_string_t;

/// Bytes allocated by the engine.
#[repr(C)]
#[derive(Debug)]
pub struct hegel_generate_bytes_result_t {
    /// The bytes (never null after a successful draw).
    pub data: *mut u8,
    /// Their number.
    pub len: usize,
}

/// A rendered printer document allocated by the engine.
#[repr(C)]
#[derive(Debug)]
pub struct hegel_printer_value_result_t {
    /// UTF-8 followed by a NUL.
    pub data: *mut c_char,
    /// Bytes before the NUL.
    pub len: usize,
}

/// A proleptic Gregorian date.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hegel_date_t {
    /// Year in [-999999, 999999].
    pub year: i32,
    /// Month in [1, 12].
    pub month: u8,
    /// Day in [1, days in month].
    pub day: u8,
}

/// A time of day.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hegel_time_t {
    /// Hour in [0, 23].
    pub hour: u8,
    /// Minute in [0, 59].
    pub minute: u8,
    /// Second in [0, 59].
    pub second: u8,
    /// Nanosecond in [0, 999999999].
    pub nanosecond: u32,
}

/// A naive datetime.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hegel_datetime_t {
    /// The date.
    pub date: hegel_date_t,
    /// The time of day.
    pub time: hegel_time_t,
}

/// The per-line output callback of a run.
pub type hegel_output_callback_t =
    Option<unsafe extern "C" fn(user_data: *mut c_void, line: *const c_char, len: usize)>;
