//! Settings handles: the values a run is configured with, set one by one
//! from C, by name from text (`hegel_settings_set_from_string`), from the
//! `HEGEL_*` environment variables, and from named profiles.
//!
//! Every way of setting a value goes through [`Settings::set`], the one
//! vocabulary of keys and values (`hegel.toml`'s): a profile is a list of
//! such assignments (see [`crate::profiles`]), and an environment variable
//! is one assignment under its key.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{self, handled};
use crate::text::{self, LentText};
use std::sync::{Arc, Mutex, MutexGuard};

/// Opaque to C: `hegel_settings_t`.
pub enum hegel_settings_t {}

/// Where failures are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Database {
    /// `./.hegel/examples/`.
    Default,
    /// No database.
    Disabled,
    /// This directory.
    Path(String),
}

/// Where the test under these settings is defined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestLocation {
    /// Source file.
    pub file: String,
    /// Line of the definition.
    pub begin_line: u32,
    /// Enclosing class, module or package.
    pub class_name: String,
    /// Function name.
    pub function: String,
}

/// The settings of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Valid test cases to run.
    pub test_cases: u64,
    /// What the engine prints.
    pub verbosity: hegel_verbosity_t,
    /// How nondeterminism is handled.
    pub strictness: hegel_nondeterminism_strictness_t,
    /// A fixed seed.
    pub seed: Option<u64>,
    /// Whether the seed comes from the database key.
    pub derandomize: bool,
    /// Whether every distinct failure is reported.
    pub report_multiple_failures: bool,
    /// Whether generation stops at the first failure.
    pub stop_on_first_failure: bool,
    /// Whether the statistics block is printed.
    pub show_statistics: bool,
    /// Whether test cases may make any number of choices.
    pub unbounded_choices: bool,
    /// Where failures are stored.
    pub database: Database,
    /// The key examples are stored under.
    pub database_key: Option<String>,
    /// Where the test lives.
    pub location: Option<TestLocation>,
    /// Enabled phases (`HEGEL_PHASE_*` bits).
    pub phases: u32,
    /// Suppressed health checks (`HEGEL_HC_*` bits).
    pub suppressed: u32,
    /// Whether failures should print a reproduction line.
    pub print_blob: bool,
    /// Source of randomness.
    pub backend: hegel_backend_t,
    /// The `hegel.toml` the settings were resolved with, if any.
    pub config_path: Option<String>,
}

/// The names of the phases, bit by bit.
pub const PHASE_NAMES: [(&str, u32); 5] = [
    ("explicit", PHASE_EXPLICIT),
    ("reuse", PHASE_REUSE),
    ("generate", PHASE_GENERATE),
    ("target", PHASE_TARGET),
    ("shrink", PHASE_SHRINK),
];

/// The names of the health checks, bit by bit.
pub const HEALTH_CHECK_NAMES: [(&str, u32); 4] = [
    ("filter_too_much", HC_FILTER_TOO_MUCH),
    ("too_slow", HC_TOO_SLOW),
    ("test_cases_too_large", HC_TEST_CASES_TOO_LARGE),
    ("large_initial_test_case", HC_LARGE_INITIAL_TEST_CASE),
];

/// The keys [`Settings::set`] accepts.
pub const KEYS: [&str; 15] = [
    "test_cases",
    "seed",
    "derandomize",
    "database",
    "verbosity",
    "phases",
    "suppress_health_check",
    "report_multiple_failures",
    "stop_on_first_failure",
    "show_statistics",
    "print_blob",
    "backend",
    "nondeterminism_strictness",
    "unbounded_choices",
    "database_key",
];

/// The environment variables that override settings, with their keys.
const ENVIRONMENT: [(&str, &str); 14] = [
    ("HEGEL_TEST_CASES", "test_cases"),
    ("HEGEL_DATABASE", "database"),
    ("HEGEL_STATISTICS", "show_statistics"),
    ("HEGEL_SEED", "seed"),
    ("HEGEL_DERANDOMIZE", "derandomize"),
    ("HEGEL_PRINT_BLOB", "print_blob"),
    ("HEGEL_STOP_ON_FIRST_FAILURE", "stop_on_first_failure"),
    ("HEGEL_UNBOUNDED_CHOICES", "unbounded_choices"),
    ("HEGEL_REPORT_MULTIPLE_FAILURES", "report_multiple_failures"),
    (
        "HEGEL_NONDETERMINISM_STRICTNESS",
        "nondeterminism_strictness",
    ),
    ("HEGEL_VERBOSITY", "verbosity"),
    ("HEGEL_BACKEND", "backend"),
    ("HEGEL_PHASES", "phases"),
    ("HEGEL_SUPPRESS_HEALTH_CHECK", "suppress_health_check"),
];

fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// Decimal digits, optionally after a `+`, nothing else.
fn parse_unsigned(value: &str) -> Option<u64> {
    let digits = value.strip_prefix('+').unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What a setting's text value must be, for the message refusing one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vocabulary {
    /// `test_cases`.
    PositiveInteger,
    /// `seed`.
    IntegerOrNone,
    /// The boolean settings.
    Boolean,
    /// One of a few words (`verbosity`, `backend`, ...).
    Words(&'static [&'static str]),
    /// `database`: a path, `disabled` or `default`.
    Database,
}

/// Why [`Settings::set`] refused a value. The words depend on where the value
/// came from, so the error is rendered by its reader: under the setting's key
/// (`` `seed` expects an integer or "none", got "x" ``; the text setter and
/// `hegel.toml`) or under an environment variable (`HEGEL_SEED must be an
/// integer or "none", got "x"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingError {
    /// No setting has this key.
    UnknownKey,
    /// The value is outside the setting's vocabulary.
    Expected {
        /// What the setting takes.
        vocabulary: Vocabulary,
        /// The value given.
        got: String,
    },
    /// A list names something that is not one of its names.
    UnknownName {
        /// The name given.
        name: String,
        /// The names the list takes, for the message.
        known: &'static str,
    },
    /// A word that stands for a whole list (`all`, `none`) came with others.
    NotAlone(&'static str),
    /// The database setting does not parse.
    Database {
        /// The value given.
        got: String,
        /// Why it does not.
        reason: String,
    },
}

/// `a, b or c`.
fn alternatives(words: &[&str]) -> String {
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_string(),
        None => String::new(),
    }
}

impl SettingError {
    /// The message for a value given under the setting's key: by
    /// `hegel_settings_set_from_string` or in a `hegel.toml` profile.
    pub fn for_key(&self, key: &str) -> String {
        match self {
            SettingError::UnknownKey => {
                format!(
                    "unknown setting {key:?}; the settings are {}",
                    KEYS.join(", ")
                )
            }
            SettingError::Expected { vocabulary, got } => {
                let expected = match vocabulary {
                    Vocabulary::PositiveInteger => "a positive integer".to_string(),
                    Vocabulary::IntegerOrNone => "an integer or \"none\"".to_string(),
                    Vocabulary::Boolean => "one of true|false|1|0|yes|no".to_string(),
                    Vocabulary::Words(words) => format!("one of {}", words.join("|")),
                    Vocabulary::Database => "a path, \"disabled\" or \"default\"".to_string(),
                };
                format!("`{key}` expects {expected}, got {got:?}")
            }
            SettingError::UnknownName { name, known } => {
                format!("`{key}` does not recognise {name:?}. Known names: {known}")
            }
            SettingError::NotAlone(word) => {
                format!("{word:?} must be the only element of `{key}`")
            }
            SettingError::Database { got, reason } => format!("`{key}` {got:?}: {reason}"),
        }
    }

    /// The message for a value given by the environment variable `variable`.
    pub fn for_variable(&self, variable: &str) -> String {
        match self {
            SettingError::UnknownKey => format!("{variable} names no setting"),
            SettingError::Expected { vocabulary, got } => {
                let expected = match vocabulary {
                    Vocabulary::PositiveInteger => "a positive integer".to_string(),
                    Vocabulary::IntegerOrNone => "an integer or \"none\"".to_string(),
                    Vocabulary::Boolean => alternatives(&["true", "1", "yes", "false", "0", "no"]),
                    Vocabulary::Words(words) => alternatives(words),
                    Vocabulary::Database => "a path or \"disabled\"".to_string(),
                };
                format!("{variable} must be {expected}, got {got:?}")
            }
            SettingError::UnknownName { name, known } => {
                format!("{variable} does not recognise {name:?}. Known names: {known}")
            }
            SettingError::NotAlone(word) => {
                format!("{word:?} must be the only element of {variable}")
            }
            SettingError::Database { got, reason } => format!("{variable} {got:?}: {reason}"),
        }
    }
}

/// The names `phases` takes, for messages.
const PHASES_KNOWN: &str = "explicit, reuse, generate, target, shrink, none";
/// The names `suppress_health_check` takes, for messages.
const HEALTH_CHECKS_KNOWN: &str =
    "all, filter_too_much, too_slow, test_cases_too_large, large_initial_test_case";

/// A comma-separated list of `names` (whitespace around each ignored, the
/// empty string for none), or `whole` alone for every bit in `all`, or
/// `none` alone for no bits.
fn parse_names(
    value: &str,
    names: &[(&str, u32)],
    whole: Option<(&'static str, u32)>,
    known: &'static str,
) -> Result<u32, SettingError> {
    let items: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    let mut bits = 0;
    for &item in &items {
        let alone = match whole {
            Some((word, all)) if item == word => Some((word, all)),
            _ if item == "none" => Some(("none", 0)),
            _ => None,
        };
        if let Some((word, value)) = alone {
            if items.len() > 1 {
                return Err(SettingError::NotAlone(word));
            }
            return Ok(value);
        }
        match names.iter().find(|(n, _)| *n == item) {
            Some((_, bit)) => bits |= bit,
            None => {
                return Err(SettingError::UnknownName {
                    name: item.to_string(),
                    known,
                });
            }
        }
    }
    Ok(bits)
}

fn names_of(bits: u32, names: &[(&str, u32)]) -> String {
    names
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a `uint32_t` enumeration value.
pub fn verbosity_from(v: u32) -> AbiResult<hegel_verbosity_t> {
    use hegel_verbosity_t::*;
    Ok(match v {
        0 => HEGEL_VERBOSITY_NORMAL,
        1 => HEGEL_VERBOSITY_QUIET,
        2 => HEGEL_VERBOSITY_VERBOSE,
        3 => HEGEL_VERBOSITY_DEBUG,
        _ => {
            return Err(AbiError::arg(format!(
                "verbosity {v} is not a hegel_verbosity_t (0-3)"
            )));
        }
    })
}

fn strictness_from(v: u32) -> AbiResult<hegel_nondeterminism_strictness_t> {
    use hegel_nondeterminism_strictness_t::*;
    Ok(match v {
        0 => HEGEL_NONDETERMINISM_QUIET,
        1 => HEGEL_NONDETERMINISM_WARN,
        2 => HEGEL_NONDETERMINISM_ERROR,
        _ => {
            return Err(AbiError::arg(format!(
                "nondeterminism strictness {v} is not a hegel_nondeterminism_strictness_t (0-2)"
            )));
        }
    })
}

fn backend_from(v: u32) -> AbiResult<hegel_backend_t> {
    match v {
        1 => Ok(hegel_backend_t::HEGEL_BACKEND_DEFAULT),
        2 => Ok(hegel_backend_t::HEGEL_BACKEND_URANDOM),
        _ => Err(AbiError::arg(format!(
            "backend {v} is not a hegel_backend_t (1 or 2)"
        ))),
    }
}

impl Settings {
    /// The base settings: 100 test cases, every phase, normal verbosity, no
    /// seed, the default database.
    pub fn base() -> Settings {
        Settings {
            test_cases: 100,
            verbosity: hegel_verbosity_t::HEGEL_VERBOSITY_NORMAL,
            strictness: hegel_nondeterminism_strictness_t::HEGEL_NONDETERMINISM_QUIET,
            seed: None,
            derandomize: false,
            report_multiple_failures: false,
            stop_on_first_failure: true,
            show_statistics: false,
            unbounded_choices: false,
            database: Database::Default,
            database_key: None,
            location: None,
            phases: PHASE_ALL,
            suppressed: 0,
            print_blob: true,
            backend: hegel_backend_t::HEGEL_BACKEND_DEFAULT,
            config_path: None,
        }
    }

    /// Sets `key` from its text form (`hegel.toml`'s vocabulary); on error
    /// nothing changes.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SettingError> {
        let expected = |vocabulary| SettingError::Expected {
            vocabulary,
            got: value.to_string(),
        };
        let bool_value = || parse_bool(value).ok_or_else(|| expected(Vocabulary::Boolean));
        let word = |words: &'static [&'static str]| {
            words
                .iter()
                .position(|w| *w == value)
                .ok_or_else(|| expected(Vocabulary::Words(words)))
        };
        match key {
            "test_cases" => {
                self.test_cases = parse_unsigned(value)
                    .filter(|n| *n > 0)
                    .ok_or_else(|| expected(Vocabulary::PositiveInteger))?;
            }
            "seed" => {
                self.seed = if value == "none" {
                    None
                } else {
                    Some(parse_unsigned(value).ok_or_else(|| expected(Vocabulary::IntegerOrNone))?)
                };
            }
            "derandomize" => self.derandomize = bool_value()?,
            "report_multiple_failures" => self.report_multiple_failures = bool_value()?,
            "stop_on_first_failure" => self.stop_on_first_failure = bool_value()?,
            "show_statistics" => self.show_statistics = bool_value()?,
            "print_blob" => self.print_blob = bool_value()?,
            "unbounded_choices" => self.unbounded_choices = bool_value()?,
            "database" => {
                self.database = match value {
                    "disabled" => Database::Disabled,
                    "default" => Database::Default,
                    "" => return Err(expected(Vocabulary::Database)),
                    setting => {
                        geist_database::DatabaseSetting::parse(setting).map_err(|e| {
                            SettingError::Database {
                                got: setting.to_string(),
                                reason: e.to_string(),
                            }
                        })?;
                        Database::Path(setting.to_string())
                    }
                }
            }
            "database_key" => self.database_key = Some(value.to_string()),
            "verbosity" => {
                use hegel_verbosity_t::*;
                self.verbosity = [
                    HEGEL_VERBOSITY_QUIET,
                    HEGEL_VERBOSITY_NORMAL,
                    HEGEL_VERBOSITY_VERBOSE,
                    HEGEL_VERBOSITY_DEBUG,
                ][word(&["quiet", "normal", "verbose", "debug"])?];
            }
            "nondeterminism_strictness" => {
                use hegel_nondeterminism_strictness_t::*;
                self.strictness = [
                    HEGEL_NONDETERMINISM_QUIET,
                    HEGEL_NONDETERMINISM_WARN,
                    HEGEL_NONDETERMINISM_ERROR,
                ][word(&["quiet", "warn", "error"])?];
            }
            "backend" => {
                self.backend = [
                    hegel_backend_t::HEGEL_BACKEND_DEFAULT,
                    hegel_backend_t::HEGEL_BACKEND_URANDOM,
                ][word(&["default", "urandom"])?];
            }
            "phases" => self.phases = parse_names(value, &PHASE_NAMES, None, PHASES_KNOWN)?,
            "suppress_health_check" => {
                self.suppressed = parse_names(
                    value,
                    &HEALTH_CHECK_NAMES,
                    Some(("all", HC_ALL)),
                    HEALTH_CHECKS_KNOWN,
                )?;
            }
            _ => return Err(SettingError::UnknownKey),
        }
        Ok(())
    }

    /// Applies the `HEGEL_*` environment variables read through `env` (an
    /// empty one is ignored); the error names the variable.
    pub fn apply_environment(
        &mut self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        for (variable, key) in ENVIRONMENT {
            let Some(value) = env(variable).filter(|v| !v.is_empty()) else {
                continue;
            };
            let value = match (key, value.as_str()) {
                ("show_statistics", v) => if v == "0" { "false" } else { "true" }.to_string(),
                ("database", "disabled") => "disabled".to_string(),
                _ => value,
            };
            self.set(key, &value)
                .map_err(|error| error.for_variable(variable))?;
        }
        Ok(())
    }

    /// The phases as their names, for messages.
    pub fn phase_names(&self) -> String {
        names_of(self.phases, &PHASE_NAMES)
    }
}

/// A settings handle's contents.
pub struct SettingsHandle {
    state: Mutex<SettingsState>,
}
handled!(SettingsHandle, 2, "settings");

struct SettingsState {
    settings: Settings,
    /// The database path lent out by `hegel_settings_get_database`.
    database_view: Option<LentText>,
}

impl SettingsHandle {
    /// A handle holding `settings`.
    pub fn new(settings: Settings) -> SettingsHandle {
        SettingsHandle {
            state: Mutex::new(SettingsState {
                settings,
                database_view: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SettingsState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of the settings.
    pub fn snapshot(&self) -> Settings {
        self.lock().settings.clone()
    }
}

/// The settings behind a handle, copied.
pub fn settings_of(s: *const hegel_settings_t) -> AbiResult<Settings> {
    Ok(handles::get::<SettingsHandle, _>(s)?.snapshot())
}

fn hand_out(settings: Settings, out: *mut *mut hegel_settings_t) -> AbiResult {
    crate::context::require(out, "out_settings")?;
    let handle = handles::insert(Arc::new(SettingsHandle::new(settings)))?;
    write(out, handle, "out_settings")
}

fn update(s: *mut hegel_settings_t, change: impl FnOnce(&mut Settings) -> AbiResult) -> AbiResult {
    let handle = handles::get::<SettingsHandle, _>(s)?;
    let mut state = handle.lock();
    change(&mut state.settings)
}

fn read<T>(
    s: *const hegel_settings_t,
    out: *mut T,
    what: impl FnOnce(&Settings) -> T,
) -> AbiResult {
    let handle = handles::get::<SettingsHandle, _>(s)?;
    crate::context::require(out, "out")?;
    let value = what(&handle.lock().settings);
    write(out, value, "out")
}

/// Settings from the default profile.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_new(
    ctx: *mut hegel_context_t,
    out_settings: *mut *mut hegel_settings_t,
) -> hegel_result_t {
    guard(ctx, || {
        crate::context::require(out_settings, "out_settings")?;
        let settings = crate::profiles::settings_for(None).map_err(AbiError::InvalidArg)?;
        hand_out(settings, out_settings)
    })
}

/// Settings from a named profile.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_new_for_profile(
    ctx: *mut hegel_context_t,
    name: hegel_string_t,
    out_settings: *mut *mut hegel_settings_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let name = unsafe { text::text(name, "name")? };
        crate::context::require(out_settings, "out_settings")?;
        let settings = crate::profiles::settings_for(Some(name)).map_err(AbiError::InvalidArg)?;
        hand_out(settings, out_settings)
    })
}

/// Frees a settings handle; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_free(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<SettingsHandle, _>(s).map(drop))
}

/// Sets the backend.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_backend(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    backend: u32,
) -> hegel_result_t {
    guard(ctx, || {
        update(s, |st| {
            st.backend = backend_from(backend)?;
            Ok(())
        })
    })
}

/// Sets the number of valid test cases.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_test_cases(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    n: u64,
) -> hegel_result_t {
    guard(ctx, || {
        update(s, |st| {
            if n == 0 {
                return Err(AbiError::arg("test_cases must be at least 1"));
            }
            st.test_cases = n;
            Ok(())
        })
    })
}

/// Sets the verbosity.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_verbosity(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    v: u32,
) -> hegel_result_t {
    guard(ctx, || {
        update(s, |st| {
            st.verbosity = verbosity_from(v)?;
            Ok(())
        })
    })
}

/// Sets the nondeterminism strictness.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_nondeterminism_strictness(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    strictness: u32,
) -> hegel_result_t {
    guard(ctx, || {
        update(s, |st| {
            st.strictness = strictness_from(strictness)?;
            Ok(())
        })
    })
}

/// Sets or clears the seed.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_seed(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    seed: u64,
    has_seed: bool,
) -> hegel_result_t {
    guard(ctx, || {
        update(s, |st| {
            st.seed = has_seed.then_some(seed);
            Ok(())
        })
    })
}

macro_rules! bool_setter {
    ($name:ident, $field:ident, $doc:expr) => {
        #[doc = $doc]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(
            ctx: *mut hegel_context_t,
            s: *mut hegel_settings_t,
            yes: bool,
        ) -> hegel_result_t {
            guard(ctx, || update(s, |st| Ok(st.$field = yes)))
        }
    };
}

bool_setter!(
    hegel_settings_set_derandomize,
    derandomize,
    "Sets derandomization."
);
bool_setter!(
    hegel_settings_set_report_multiple_failures,
    report_multiple_failures,
    "Sets whether every distinct failure is reported."
);
bool_setter!(
    hegel_settings_set_stop_on_first_failure,
    stop_on_first_failure,
    "Sets whether generation stops at the first failure."
);
bool_setter!(
    hegel_settings_set_show_statistics,
    show_statistics,
    "Sets whether the statistics block is printed."
);
bool_setter!(
    hegel_settings_set_unbounded_choices,
    unbounded_choices,
    "Sets whether test cases may make any number of choices."
);
bool_setter!(
    hegel_settings_set_print_blob,
    print_blob,
    "Sets whether failures print a reproduction line."
);

/// Sets the database: NULL for the default, "" to disable, else geist's
/// database setting: a directory, `redis://host:port/db?prefix=&expire=`,
/// `readonly:X`, or several comma-separated (a malformed one is
/// HEGEL_E_INVALID_ARG, naming what is wrong).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_database(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    database: *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's optional view.
        let database = unsafe { text::optional_text(database, "database")? };
        update(s, |st| {
            st.database = match database {
                None => Database::Default,
                Some("") => Database::Disabled,
                Some(setting) => {
                    geist_database::DatabaseSetting::parse(setting)
                        .map_err(|e| AbiError::arg(format!("database {setting:?}: {e}")))?;
                    Database::Path(setting.to_string())
                }
            };
            Ok(())
        })
    })
}

/// Sets or clears the database key.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_database_key(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    key: *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's optional view.
        let key = unsafe { text::optional_text(key, "key")? };
        update(s, |st| {
            st.database_key = key.map(str::to_string);
            Ok(())
        })
    })
}

/// Records where the test is defined.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_test_location(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    file: hegel_string_t,
    begin_line: u32,
    class_name: hegel_string_t,
    function: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's views.
        let (file, class_name, function) = unsafe {
            (
                text::text(file, "file")?,
                text::text(class_name, "class_name")?,
                text::text(function, "function")?,
            )
        };
        update(s, |st| {
            st.location = Some(TestLocation {
                file: file.to_string(),
                begin_line,
                class_name: class_name.to_string(),
                function: function.to_string(),
            });
            Ok(())
        })
    })
}

/// Sets the enabled phases.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_phases(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    phases: u32,
) -> hegel_result_t {
    guard(ctx, || {
        if phases & !PHASE_ALL != 0 {
            return Err(AbiError::arg(format!(
                "phases {phases:#x} has bits outside PHASE_ALL ({PHASE_ALL:#x})"
            )));
        }
        update(s, |st| {
            st.phases = phases;
            Ok(())
        })
    })
}

/// Sets the suppressed health checks.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_suppress_health_check(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    checks: u32,
) -> hegel_result_t {
    guard(ctx, || {
        if checks & !HC_ALL != 0 {
            return Err(AbiError::arg(format!(
                "health checks {checks:#x} has bits outside the four hegel_health_check_t values"
            )));
        }
        update(s, |st| {
            st.suppressed = checks;
            Ok(())
        })
    })
}

/// Sets one setting from text.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_set_from_string(
    ctx: *mut hegel_context_t,
    s: *mut hegel_settings_t,
    key: hegel_string_t,
    value: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's views.
        let (key, value) = unsafe { (text::text(key, "key")?, text::text(value, "value")?) };
        update(s, |st| {
            let mut changed = st.clone();
            changed
                .set(key, value)
                .map_err(|error| AbiError::InvalidArg(error.for_key(key)))?;
            *st = changed;
            Ok(())
        })
    })
}

/// Registers a snapshot of `settings` as profile `name`.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_register_profile(
    ctx: *mut hegel_context_t,
    name: hegel_string_t,
    settings: *const hegel_settings_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let name = unsafe { text::text(name, "name")? };
        let settings = settings_of(settings)?;
        crate::profiles::register(name, settings).map_err(AbiError::InvalidArg)
    })
}

/// Sets the Unicode version of string generators.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_set_unicode_version(
    ctx: *mut hegel_context_t,
    version: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let version = unsafe { text::text(version, "version")? };
        crate::profiles::set_unicode_version(version).map_err(AbiError::InvalidArg)
    })
}

/// Sets the process's default profile ("" clears it).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_set_default_profile(
    ctx: *mut hegel_context_t,
    name: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let name = unsafe { text::text(name, "name")? };
        crate::profiles::set_default(name).map_err(AbiError::InvalidArg)
    })
}

/// Reads the number of test cases.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_test_cases(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out: *mut u64,
) -> hegel_result_t {
    guard(ctx, || read(s, out, |st| st.test_cases))
}

/// Reads the verbosity.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_verbosity(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out: *mut hegel_verbosity_t,
) -> hegel_result_t {
    guard(ctx, || read(s, out, |st| st.verbosity))
}

/// Reads the seed.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_seed(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out_seed: *mut u64,
    out_has_seed: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        crate::context::require(out_has_seed, "out_has_seed")?;
        let seed = settings_of(s)?.seed;
        write(out_seed, seed.unwrap_or(0), "out_seed")?;
        write(out_has_seed, seed.is_some(), "out_has_seed")
    })
}

macro_rules! bool_getter {
    ($name:ident, $field:ident, $doc:expr) => {
        #[doc = $doc]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(
            ctx: *mut hegel_context_t,
            s: *const hegel_settings_t,
            out: *mut bool,
        ) -> hegel_result_t {
            guard(ctx, || read(s, out, |st| st.$field))
        }
    };
}

bool_getter!(
    hegel_settings_get_derandomize,
    derandomize,
    "Reads derandomization."
);
bool_getter!(
    hegel_settings_get_report_multiple_failures,
    report_multiple_failures,
    "Reads whether every distinct failure is reported."
);
bool_getter!(
    hegel_settings_get_stop_on_first_failure,
    stop_on_first_failure,
    "Reads whether generation stops at the first failure."
);
bool_getter!(
    hegel_settings_get_show_statistics,
    show_statistics,
    "Reads whether the statistics block is printed."
);
bool_getter!(
    hegel_settings_get_unbounded_choices,
    unbounded_choices,
    "Reads whether test cases may make any number of choices."
);
bool_getter!(
    hegel_settings_get_print_blob,
    print_blob,
    "Reads whether failures print a reproduction line."
);

/// Reads the database: NULL for the default, "" when disabled, else the path.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_database(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out_database: *mut *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let handle = handles::get::<SettingsHandle, _>(s)?;
        crate::context::require(out_database, "out_database")?;
        let mut state = handle.lock();
        let lent = match state.settings.database.clone() {
            Database::Default => None,
            Database::Disabled => Some(String::new()),
            Database::Path(path) => Some(path),
        };
        state.database_view = lent.map(LentText::new);
        let view = state
            .database_view
            .as_ref()
            .map_or(std::ptr::null(), LentText::view_ptr);
        write(out_database, view, "out_database")
    })
}

/// Reads the enabled phases.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_phases(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out: *mut u32,
) -> hegel_result_t {
    guard(ctx, || read(s, out, |st| st.phases))
}

/// Reads the suppressed health checks.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_suppress_health_check(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out: *mut u32,
) -> hegel_result_t {
    guard(ctx, || read(s, out, |st| st.suppressed))
}

/// Reads the backend.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_backend(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out: *mut hegel_backend_t,
) -> hegel_result_t {
    guard(ctx, || read(s, out, |st| st.backend))
}

/// Reads the nondeterminism strictness.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_settings_get_nondeterminism_strictness(
    ctx: *mut hegel_context_t,
    s: *const hegel_settings_t,
    out: *mut hegel_nondeterminism_strictness_t,
) -> hegel_result_t {
    guard(ctx, || read(s, out, |st| st.strictness))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_settings_follow_the_vocabulary() {
        let mut s = Settings::base();
        s.set("test_cases", "+250").expect("integer");
        assert_eq!(s.test_cases, 250);
        assert!(s.set("test_cases", "0x10").is_err());
        assert!(s.set("test_cases", " 5").is_err());
        s.set("seed", "42").expect("seed");
        assert_eq!(s.seed, Some(42));
        s.set("seed", "none").expect("none");
        assert_eq!(s.seed, None);
        s.set("phases", " generate , shrink").expect("phases");
        assert_eq!(s.phases, PHASE_GENERATE | PHASE_SHRINK);
        s.set("phases", "").expect("no phases");
        assert_eq!(s.phases, 0);
        s.set("suppress_health_check", "all").expect("all");
        assert_eq!(s.suppressed, HC_ALL);
        let before = s.clone();
        let error = s
            .set("suppress_health_check", "too_slow,bogus")
            .unwrap_err();
        assert_eq!(
            error.for_key("suppress_health_check"),
            "`suppress_health_check` does not recognise \"bogus\". Known names: all, \
             filter_too_much, too_slow, test_cases_too_large, large_initial_test_case"
        );
        assert_eq!(s, before);
        assert!(
            s.set("nope", "1")
                .unwrap_err()
                .for_key("nope")
                .starts_with("unknown setting")
        );
        s.set("database", "disabled").expect("disabled");
        assert_eq!(s.database, Database::Disabled);
    }

    #[test]
    fn environment_variables_override_and_name_themselves() {
        let mut s = Settings::base();
        let env = |name: &str| match name {
            "HEGEL_TEST_CASES" => Some("7".to_string()),
            "HEGEL_STATISTICS" => Some("yes".to_string()),
            "HEGEL_SEED" => Some(String::new()),
            _ => None,
        };
        s.apply_environment(env).expect("valid");
        assert_eq!(s.test_cases, 7);
        assert!(s.show_statistics);
        assert_eq!(s.seed, None);
        let bad = |name: &str| (name == "HEGEL_VERBOSITY").then(|| "loud".to_string());
        let error = Settings::base().apply_environment(bad).unwrap_err();
        assert!(error.starts_with("HEGEL_VERBOSITY"), "{error}");
    }
}
