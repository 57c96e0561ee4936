//! How a property runs: test case count, seed, database, health checks, verbosity.
//!
//! [`Settings::new`] starts from the environment (`GEIST_TEST_CASES`,
//! `GEIST_SEED`, `GEIST_DATABASE`, `GEIST_VERBOSITY`, `GEIST_DERANDOMIZE`,
//! `CI`, `GEIST_SERVER_COMMAND`, `GEIST_SERVER_ADDRESS`, `GEIST_SERVER_TIMEOUT`), so a failure's
//! reproduce line works without editing code; builder calls made in code
//! then override those defaults.

use crate::transport::{ServerAddress, ServerCommand, Transport};
use geist_database::{DatabaseSetting, IntoDatabaseSetting};
use geist_engine::HealthCheck;
use std::time::Duration;

/// The default example database directory, relative to the working directory
/// (Cargo runs tests from the package root).
pub const DEFAULT_DATABASE: &str = ".geist/examples";

/// How much a run prints to stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Nothing but the failure report (carried by the final panic).
    Quiet,
    /// The failure report, and health check messages.
    Normal,
    /// Also a summary line per run (test cases, rejections, shrink steps).
    Verbose,
    /// Also every test case's drawn values while searching.
    Debug,
}

impl Verbosity {
    fn parse(text: &str) -> Option<Verbosity> {
        match text.trim().to_ascii_lowercase().as_str() {
            "quiet" => Some(Verbosity::Quiet),
            "normal" => Some(Verbosity::Normal),
            "verbose" => Some(Verbosity::Verbose),
            "debug" => Some(Verbosity::Debug),
            _ => None,
        }
    }
}

/// Settings of one property run. Build with [`Settings::new`] and the builder methods.
#[derive(Clone, Debug)]
pub struct Settings {
    pub(crate) test_cases: u64,
    pub(crate) seed: Option<u64>,
    pub(crate) derandomize: bool,
    pub(crate) database: Option<DatabaseSetting>,
    /// Why the database given in code names no database, reported when the run starts.
    pub(crate) database_error: Option<String>,
    pub(crate) suppress_health_checks: Vec<HealthCheck>,
    pub(crate) verbosity: Verbosity,
    pub(crate) report_multiple_failures: bool,
    pub(crate) max_shrink_calls: usize,
    pub(crate) deadline: Option<std::time::Duration>,
    pub(crate) name: Option<String>,
    pub(crate) transport: Transport,
    /// Environment variables that could not be used, reported when the run starts.
    pub(crate) environment_errors: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::new()
    }
}

/// The environment a [`Settings`] is read from (a map in tests, the process otherwise).
pub(crate) trait Environment {
    fn get(&self, name: &str) -> Option<String>;
}

struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl Settings {
    /// Defaults (100 test cases, a random seed, the database at
    /// [`DEFAULT_DATABASE`] unless `CI` is set), overridden by the environment:
    /// `GEIST_TEST_CASES=N`, `GEIST_SEED=N`, `GEIST_DATABASE=setting` (a
    /// directory, `redis://host:port/db`, `readonly:...`, several separated by
    /// commas; or `none`),
    /// `GEIST_VERBOSITY=quiet|normal|verbose|debug`, `GEIST_DERANDOMIZE=1`.
    pub fn new() -> Settings {
        Settings::from_environment(&ProcessEnvironment)
    }

    pub(crate) fn from_environment(env: &dyn Environment) -> Settings {
        let mut settings = Settings {
            test_cases: 100,
            seed: None,
            derandomize: false,
            database: Some(DatabaseSetting::Directory(DEFAULT_DATABASE.into())),
            database_error: None,
            suppress_health_checks: Vec::new(),
            verbosity: Verbosity::Normal,
            report_multiple_failures: true,
            max_shrink_calls: 5_000,
            deadline: None,
            name: None,
            transport: Transport::InProcess,
            environment_errors: Vec::new(),
        };
        if env.get("CI").is_some_and(|v| !v.is_empty()) {
            settings.database = None;
        }
        if let Some(text) = env.get("GEIST_TEST_CASES") {
            match text.trim().parse::<u64>() {
                Ok(n) => settings.test_cases = n,
                Err(_) => settings.environment_errors.push(format!(
                    "GEIST_TEST_CASES={text:?} is not a non-negative integer"
                )),
            }
        }
        if let Some(text) = env.get("GEIST_SEED") {
            match text.trim().parse::<u64>() {
                Ok(n) => settings.seed = Some(n),
                Err(_) => settings.environment_errors.push(format!(
                    "GEIST_SEED={text:?} is not a non-negative 64-bit integer"
                )),
            }
        }
        if let Some(text) = env.get("GEIST_DATABASE") {
            match text.trim() {
                "" | "none" | "off" => settings.database = None,
                setting => match DatabaseSetting::parse(setting) {
                    Ok(setting) => settings.database = Some(setting),
                    Err(e) => settings
                        .environment_errors
                        .push(format!("GEIST_DATABASE={text:?}: {e}")),
                },
            }
        }
        if let Some(text) = env.get("GEIST_VERBOSITY") {
            match Verbosity::parse(&text) {
                Some(v) => settings.verbosity = v,
                None => settings.environment_errors.push(format!(
                    "GEIST_VERBOSITY={text:?} is not one of quiet, normal, verbose, debug"
                )),
            }
        }
        if let Some(text) = env.get("GEIST_DEADLINE_MS") {
            match text.trim() {
                "" | "none" | "off" => settings.deadline = None,
                number => match number.parse::<f64>() {
                    Ok(ms) if ms.is_finite() && ms > 0.0 => {
                        settings.deadline = Some(std::time::Duration::from_secs_f64(ms / 1e3))
                    }
                    _ => settings.environment_errors.push(format!(
                        "GEIST_DEADLINE_MS={text:?} is not a positive number of milliseconds or none"
                    )),
                },
            }
        }
        if let Some(text) = env.get("GEIST_DERANDOMIZE") {
            settings.derandomize = matches!(text.trim(), "1" | "true" | "yes");
        }
        let timeout =
            env.get("GEIST_SERVER_TIMEOUT")
                .and_then(|text| match text.trim().parse::<f64>() {
                    Ok(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
                    _ => {
                        settings.environment_errors.push(format!(
                            "GEIST_SERVER_TIMEOUT={text:?} is not a positive number of seconds"
                        ));
                        None
                    }
                });
        if let Some(text) = env.get("GEIST_SERVER_COMMAND")
            && !text.trim().is_empty()
        {
            let mut command = ServerCommand::parse(&text);
            if let Some(timeout) = timeout {
                command = command.timeout(timeout);
            }
            settings.transport = Transport::Server(command);
        } else if let Some(text) = env.get("GEIST_SERVER_ADDRESS")
            && !text.trim().is_empty()
        {
            match ServerAddress::parse(&text) {
                Ok(mut address) => {
                    if let Some(timeout) = timeout {
                        address = address.timeout(timeout);
                    }
                    settings.transport = Transport::Connect(address);
                }
                Err(e) => settings
                    .environment_errors
                    .push(format!("GEIST_SERVER_ADDRESS: {e}")),
            }
        }
        settings
    }

    /// Number of valid test cases to run (default 100).
    pub fn test_cases(mut self, n: u64) -> Settings {
        self.test_cases = n;
        self
    }

    /// The random seed; `None` picks one at random (or from the name when derandomized).
    pub fn seed(mut self, seed: Option<u64>) -> Settings {
        self.seed = seed;
        self
    }

    /// Derive the seed from the property's name, so every run is the same.
    pub fn derandomize(mut self, derandomize: bool) -> Settings {
        self.derandomize = derandomize;
        self
    }

    /// Where failing examples are saved and replayed from first on the next
    /// run (keyed by the property's name); `None` for no database.
    ///
    /// A `Path` is a directory. A string is a database setting: a directory,
    /// `redis://host:port/db`, `readonly:SETTING`, or several of these
    /// separated by commas (see [`DatabaseSetting`]); a string that names no
    /// database fails the run with the reason.
    pub fn database(mut self, setting: Option<impl IntoDatabaseSetting>) -> Settings {
        self.database_error = None;
        self.database = match setting.map(IntoDatabaseSetting::into_database_setting) {
            None => None,
            Some(Ok(setting)) => Some(setting),
            Some(Err(e)) => {
                self.database_error = Some(e.to_string());
                None
            }
        };
        self
    }

    /// Fails any test case that passes but takes longer than `deadline`
    /// (Hypothesis's deadline; the search allows a quarter more, the final
    /// replay of the failure is held to the deadline itself). `None`, the
    /// default, sets no limit. From the environment: `GEIST_DEADLINE_MS=n`
    /// or `none`.
    pub fn deadline(mut self, deadline: Option<std::time::Duration>) -> Settings {
        self.deadline = deadline;
        self
    }

    /// Health checks not to fail on.
    pub fn suppress_health_check(
        mut self,
        checks: impl IntoIterator<Item = HealthCheck>,
    ) -> Settings {
        self.suppress_health_checks.extend(checks);
        self
    }

    /// How much to print.
    pub fn verbosity(mut self, verbosity: Verbosity) -> Settings {
        self.verbosity = verbosity;
        self
    }

    /// Whether every distinct failure is reported (default), or only the first.
    pub fn report_multiple_failures(mut self, report: bool) -> Settings {
        self.report_multiple_failures = report;
        self
    }

    /// Most test cases spent shrinking each failure (default 5,000).
    pub fn max_shrink_calls(mut self, calls: usize) -> Settings {
        self.max_shrink_calls = calls;
        self
    }

    /// The property's name, shown in reports and used to derandomize and as
    /// the database key (`#[geist::test]` sets it to the test's path).
    pub fn name(mut self, name: impl Into<String>) -> Settings {
        self.name = Some(name.into());
        self
    }

    /// Where test cases come from: in-process (the default) or a Hegel
    /// server over the wire (`GEIST_SERVER_COMMAND` sets the latter).
    pub fn transport(mut self, transport: Transport) -> Settings {
        self.transport = transport;
        self
    }

    /// The transport this run uses.
    pub fn get_transport(&self) -> &Transport {
        &self.transport
    }

    /// The number of valid test cases to run.
    pub fn get_test_cases(&self) -> u64 {
        self.test_cases
    }

    /// The seed given in code or by `GEIST_SEED`, if any.
    pub fn get_seed(&self) -> Option<u64> {
        self.seed
    }

    /// The example database, if any.
    pub fn get_database(&self) -> Option<&DatabaseSetting> {
        self.database.as_ref()
    }

    /// The seed this run uses: the given one, one derived from the name when
    /// derandomized, or a fresh random one.
    pub(crate) fn effective_seed(&self) -> u64 {
        if let Some(seed) = self.seed {
            return seed;
        }
        if self.derandomize {
            // FNV-1a: stable across Rust versions, unlike the std hashers.
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for byte in self.name.as_deref().unwrap_or("").bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
            return hash;
        }
        random_seed()
    }
}

/// A seed from the process' hash randomness and the clock.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    if let Ok(elapsed) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(elapsed.as_nanos());
    }
    // Keep seeds short enough to type.
    hasher.finish() % 1_000_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct MapEnvironment(HashMap<&'static str, &'static str>);

    impl Environment for MapEnvironment {
        fn get(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| v.to_string())
        }
    }

    fn from(pairs: &[(&'static str, &'static str)]) -> Settings {
        Settings::from_environment(&MapEnvironment(pairs.iter().copied().collect()))
    }

    #[test]
    fn defaults_without_environment() {
        let s = from(&[]);
        assert_eq!(s.test_cases, 100);
        assert_eq!(s.seed, None);
        assert_eq!(
            s.database,
            Some(DatabaseSetting::Directory(DEFAULT_DATABASE.into()))
        );
        assert!(s.environment_errors.is_empty());
    }

    #[test]
    fn environment_sets_defaults_and_code_overrides() {
        let s = from(&[
            ("GEIST_TEST_CASES", "7"),
            ("GEIST_SEED", "42"),
            ("CI", "true"),
        ]);
        assert_eq!(s.test_cases, 7);
        assert_eq!(s.seed, Some(42));
        assert_eq!(s.database, None);
        let s = s.test_cases(9).seed(Some(1));
        assert_eq!((s.test_cases, s.seed), (9, Some(1)));
    }

    #[test]
    fn ci_database_can_be_asked_for() {
        let s = from(&[("CI", "1"), ("GEIST_DATABASE", "db")]);
        assert_eq!(s.database, Some(DatabaseSetting::Directory("db".into())));
    }

    #[test]
    fn the_database_setting_takes_redis_and_combinations() {
        let s = from(&[("GEIST_DATABASE", "local,readonly:redis://ci:6379/0")]);
        assert_eq!(
            s.get_database().map(ToString::to_string).as_deref(),
            Some("local,readonly:redis://ci:6379/0")
        );
        for off in ["", "none", "off"] {
            assert_eq!(from(&[("GEIST_DATABASE", off)]).database, None);
        }
        let s = from(&[("GEIST_DATABASE", "redis://h/0?colour=blue")]);
        assert!(
            s.environment_errors[0].starts_with("GEIST_DATABASE=\"redis://h/0?colour=blue\": ")
        );
        let s = from(&[]).database(Some("a,,b"));
        assert_eq!(s.database, None);
        assert!(
            s.database_error
                .as_deref()
                .is_some_and(|e| e.contains("is empty"))
        );
        let s = s.database(Some(std::path::Path::new("a,,b")));
        assert_eq!(s.database, Some(DatabaseSetting::Directory("a,,b".into())));
        assert_eq!(s.database_error, None);
    }

    #[test]
    fn bad_environment_values_are_named() {
        let s = from(&[("GEIST_TEST_CASES", "many"), ("GEIST_VERBOSITY", "loud")]);
        assert_eq!(s.environment_errors.len(), 2);
        assert!(s.environment_errors[0].contains("GEIST_TEST_CASES=\"many\""));
        assert!(s.environment_errors[1].contains("GEIST_VERBOSITY"));
    }

    #[test]
    fn server_command_from_the_environment() {
        let s = from(&[
            (
                "GEIST_SERVER_COMMAND",
                "geist-server --protocol-version 0.1",
            ),
            ("GEIST_SERVER_TIMEOUT", "2.5"),
        ]);
        let Transport::Server(command) = &s.transport else {
            panic!("expected the wire transport, got {:?}", s.transport);
        };
        assert_eq!(command.argv, ["geist-server", "--protocol-version", "0.1"]);
        assert_eq!(command.timeout, Duration::from_millis(2500));
        assert_eq!(from(&[]).transport, Transport::InProcess);
        let bad = from(&[
            ("GEIST_SERVER_COMMAND", "x"),
            ("GEIST_SERVER_TIMEOUT", "soon"),
        ]);
        assert!(bad.environment_errors[0].contains("GEIST_SERVER_TIMEOUT"));
        let code = s.transport(Transport::InProcess);
        assert_eq!(code.transport, Transport::InProcess);
        let socket = from(&[("GEIST_SERVER_ADDRESS", "unix:/tmp/hegel.sock")]);
        assert_eq!(
            socket.transport,
            Transport::Connect(ServerAddress::unix("/tmp/hegel.sock"))
        );
        let bad = from(&[("GEIST_SERVER_ADDRESS", "http://x")]);
        assert!(bad.environment_errors[0].contains("GEIST_SERVER_ADDRESS"));
    }

    #[test]
    fn derandomized_seed_depends_on_name_only() {
        let a = from(&[]).derandomize(true).name("x");
        let b = from(&[]).derandomize(true).name("x");
        let c = from(&[]).derandomize(true).name("y");
        assert_eq!(a.effective_seed(), b.effective_seed());
        assert_ne!(a.effective_seed(), c.effective_seed());
    }
}
