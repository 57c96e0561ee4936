//! Named settings profiles and `hegel.toml`.
//!
//! A profile is a list of assignments in the settings vocabulary
//! ([`Settings::set`]) applied over the base settings, or, for a profile
//! registered through the ABI, a complete snapshot. Two names are reserved:
//! `base` (the base settings; a chain reaching it stops) and `default`, an
//! alias for the first of these not already in the chain being resolved:
//! the named default (`hegel_set_default_profile`, else
//! `HEGEL_DEFAULT_PROFILE`, else `default = "..."` in `hegel.toml`), then the
//! environment's profile (`workload` inside Antithesis, `ci` on a CI server,
//! else `development`), then `base`. Three profiles ship: `development`
//! (nothing changed), `ci` and `workload`; a custom profile without
//! `extends` extends `default`. The `HEGEL_*` variables apply over whatever
//! was resolved.
//!
//! `hegel.toml` is looked for in the current directory and its ancestors
//! (or named by `HEGEL_CONFIG`): a top-level `default` entry and
//! `[profiles.<name>]` tables of settings keys (plus `extends`). Anything else
//! is an error naming the file and line.

use crate::settings::{KEYS, Settings};
use geist_engine::unicode::UnicodeVersion;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const BASE: &str = "base";
const DEFAULT: &str = "default";
const DEFAULT_PROFILE_VARIABLE: &str = "HEGEL_DEFAULT_PROFILE";
const CONFIG_VARIABLE: &str = "HEGEL_CONFIG";

/// A profile's changes: assignments in the settings vocabulary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Delta {
    /// The profile it extends, when it says.
    pub extends: Option<String>,
    /// `(key, value)` assignments, in order.
    pub assignments: Vec<(String, String)>,
}

/// A loaded `hegel.toml`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigFile {
    /// The `default` entry.
    pub default: Option<String>,
    /// Profile sections, in file order.
    pub profiles: Vec<(String, Delta)>,
    /// Where it was read from.
    pub path: Option<PathBuf>,
}

/// Process-wide profile state set through the ABI.
#[derive(Default)]
struct Registry {
    registered: Vec<(String, Settings)>,
    default_override: Option<String>,
    unicode_version: Option<UnicodeVersion>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    registered: Vec::new(),
    default_override: None,
    unicode_version: None,
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn shipped(name: &str) -> Option<Delta> {
    let assignments: &[(&str, &str)] = match name {
        "development" => &[],
        "ci" => &[
            ("derandomize", "true"),
            ("database", "disabled"),
            ("suppress_health_check", "too_slow"),
        ],
        "workload" => &[
            ("backend", "urandom"),
            ("database", "disabled"),
            ("suppress_health_check", "all"),
        ],
        _ => return None,
    };
    Some(Delta {
        extends: None,
        assignments: assignments
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    })
}

/// Whether a profile name is made of ASCII letters, digits, `-` and `_`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Registers a snapshot of `settings` as profile `name`.
pub fn register(name: &str, mut settings: Settings) -> Result<(), String> {
    if name == BASE || name == DEFAULT {
        return Err(format!("cannot register reserved profile name {name:?}"));
    }
    if !valid_name(name) {
        return Err(format!(
            "invalid profile name {name:?}: use ASCII letters, digits, '-' and '_'"
        ));
    }
    settings.database_key = None;
    settings.location = None;
    settings.config_path = None;
    let mut registry = registry();
    registry.registered.retain(|(n, _)| n != name);
    registry.registered.push((name.to_string(), settings));
    Ok(())
}

/// Sets (or, with "", clears) the process's default profile.
pub fn set_default(name: &str) -> Result<(), String> {
    if name == DEFAULT {
        return Err("the default profile cannot be the `default` alias itself".into());
    }
    if !name.is_empty() && !valid_name(name) {
        return Err(format!(
            "invalid profile name {name:?}: use ASCII letters, digits, '-' and '_'"
        ));
    }
    registry().default_override = (!name.is_empty()).then(|| name.to_string());
    Ok(())
}

/// Sets the Unicode version string generators follow ("" for the newest):
/// the engine's tables for the newest version not above it.
pub fn set_unicode_version(version: &str) -> Result<(), String> {
    let tables = if version.is_empty() {
        None
    } else {
        Some(UnicodeVersion::parse(version).map_err(|e| e.to_string())?)
    };
    registry().unicode_version = tables;
    Ok(())
}

/// The Unicode version string generators built now follow (`None`: the
/// engine's newest).
pub fn unicode_version() -> Option<UnicodeVersion> {
    registry().unicode_version
}

fn environment(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether the process runs on a CI server.
fn in_ci(env: &impl Fn(&str) -> Option<String>) -> bool {
    const MARKERS: [(&str, Option<&str>); 11] = [
        ("CI", None),
        ("TF_BUILD", Some("true")),
        ("BUILDKITE", Some("true")),
        ("CIRCLECI", Some("true")),
        ("CIRRUS_CI", Some("true")),
        ("CODEBUILD_BUILD_ID", None),
        ("GITHUB_ACTIONS", Some("true")),
        ("GITLAB_CI", None),
        ("HEROKU_TEST_RUN_ID", None),
        ("TEAMCITY_VERSION", None),
        ("bamboo.buildKey", None),
    ];
    MARKERS.iter().any(|(key, expected)| match expected {
        None => env(key).is_some(),
        Some(value) => env(key).as_deref() == Some(value),
    })
}

fn environment_profile(env: &impl Fn(&str) -> Option<String>) -> &'static str {
    if env("ANTITHESIS_OUTPUT_DIR").is_some() {
        "workload"
    } else if in_ci(env) {
        "ci"
    } else {
        "development"
    }
}

/// Everything a resolution consults.
struct Resolver<'a> {
    config: &'a ConfigFile,
    registered: &'a [(String, Settings)],
    named_default: Option<(String, &'static str)>,
    environment: &'static str,
}

/// What a resolution found: the snapshot it stopped at (if any) and the
/// deltas over it, topmost first.
struct Chain<'a> {
    root: Option<&'a Settings>,
    deltas: Vec<Delta>,
}

impl<'a> Resolver<'a> {
    fn known(&self) -> Vec<String> {
        let mut names: Vec<String> = ["base", "default", "development", "ci", "workload"]
            .iter()
            .map(|n| n.to_string())
            .collect();
        names.extend(self.config.profiles.iter().map(|(n, _)| n.clone()));
        names.extend(self.registered.iter().map(|(n, _)| n.clone()));
        names.dedup();
        names
    }

    fn chain(&self, name: &str) -> Result<Chain<'a>, String> {
        let mut seen: Vec<String> = Vec::new();
        let mut deltas = Vec::new();
        let mut current = name.to_string();
        let mut arrived_by: Option<String> = None;
        loop {
            if current == DEFAULT {
                let named = self
                    .named_default
                    .as_ref()
                    .filter(|(n, _)| !seen.contains(n));
                current = match named {
                    Some((n, source)) => {
                        arrived_by = Some(format!("named by {source}"));
                        n.clone()
                    }
                    None if !seen.iter().any(|n| n == self.environment) => {
                        self.environment.to_string()
                    }
                    None => BASE.to_string(),
                };
                continue;
            }
            if current == BASE {
                return Ok(Chain { root: None, deltas });
            }
            if seen.contains(&current) {
                seen.push(current);
                return Err(format!(
                    "settings profiles extend each other in a cycle: {}",
                    seen.join(" -> ")
                ));
            }
            seen.push(current.clone());
            let from_file = self
                .config
                .profiles
                .iter()
                .find(|(n, _)| *n == current)
                .map(|(_, d)| d.clone());
            let registered = self.registered.iter().find(|(n, _)| *n == current);
            let ship = shipped(&current);
            if from_file.is_none() && registered.is_none() && ship.is_none() {
                let how = arrived_by.map(|s| format!(" ({s})")).unwrap_or_default();
                return Err(format!(
                    "unknown settings profile {current:?}{how}; known profiles: {}",
                    self.known().join(", ")
                ));
            }
            let extends = from_file.as_ref().and_then(|d| d.extends.clone());
            if let Some(delta) = from_file {
                deltas.push(delta);
            }
            if let Some((_, snapshot)) = registered {
                if extends.is_some() {
                    return Err(format!(
                        "hegel.toml may not set `extends` on the registered profile {current:?}"
                    ));
                }
                return Ok(Chain {
                    root: Some(snapshot),
                    deltas,
                });
            }
            let is_shipped = ship.is_some();
            if let Some(delta) = ship {
                deltas.push(delta);
            }
            current = match extends {
                Some(parent) => {
                    arrived_by = Some(format!(
                        "extended by {:?}",
                        seen.last().cloned().unwrap_or_default()
                    ));
                    parent
                }
                None if is_shipped => BASE.to_string(),
                None => DEFAULT.to_string(),
            };
        }
    }

    fn resolve(&self, name: &str) -> Result<Settings, String> {
        let chain = self.chain(name)?;
        let mut settings = chain.root.cloned().unwrap_or_else(Settings::base);
        for delta in chain.deltas.iter().rev() {
            for (key, value) in &delta.assignments {
                settings
                    .set(key, value)
                    .map_err(|e| format!("settings profile: {}", e.for_key(key)))?;
            }
        }
        Ok(settings)
    }
}

/// The settings of profile `name` (the `default` alias when `None`), with
/// the environment variables applied.
pub fn settings_for(name: Option<&str>) -> Result<Settings, String> {
    let config = load_config()?;
    let (registered, overridden) = {
        let registry = registry();
        (
            registry.registered.clone(),
            registry.default_override.clone(),
        )
    };
    let named_default = overridden
        .map(|n| (n, "hegel_set_default_profile"))
        .or_else(|| {
            environment(DEFAULT_PROFILE_VARIABLE)
                .filter(|v| !v.is_empty())
                .map(|n| (n, DEFAULT_PROFILE_VARIABLE))
        })
        .or_else(|| {
            config
                .default
                .clone()
                .map(|n| (n, "the default entry in hegel.toml"))
        });
    if let Some((name, source)) = &named_default
        && name == DEFAULT
    {
        return Err(format!("{source} names the `default` alias itself"));
    }
    let resolver = Resolver {
        config: &config,
        registered: &registered,
        named_default,
        environment: environment_profile(&environment),
    };
    // Every profile the file defines must resolve, used or not, so that a
    // broken one fails loudly.
    for (defined, _) in &config.profiles {
        resolver.chain(defined).map_err(|e| in_file(&config, e))?;
    }
    let mut settings = resolver
        .resolve(name.unwrap_or(DEFAULT))
        .map_err(|e| in_file(&config, e))?;
    settings.apply_environment(environment)?;
    settings.config_path = config.path.as_ref().map(|p| p.display().to_string());
    Ok(settings)
}

fn in_file(config: &ConfigFile, message: String) -> String {
    match &config.path {
        Some(path) => format!("{message} (config: {})", path.display()),
        None => message,
    }
}

/// Finds and parses `hegel.toml` (none found is an empty config).
fn load_config() -> Result<ConfigFile, String> {
    let path = match environment(CONFIG_VARIABLE).filter(|v| !v.is_empty()) {
        Some(named) => {
            let path = PathBuf::from(named);
            if !path.is_file() {
                return Err(format!(
                    "cannot read the file named by {CONFIG_VARIABLE}: {} does not exist",
                    path.display()
                ));
            }
            Some(path)
        }
        None => std::env::current_dir().ok().and_then(|dir| {
            dir.ancestors()
                .map(|d| d.join("hegel.toml"))
                .find(|p| p.is_file())
        }),
    };
    let Some(path) = path else {
        return Ok(ConfigFile::default());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_config(&text, &path)
}

fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line where `needle` first appears after `from` (for messages about
/// a key the parser accepted but the vocabulary does not).
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(1, |at| line_at(text, at))
}

/// Parses a `hegel.toml`'s text.
pub fn parse_config(text: &str, path: &Path) -> Result<ConfigFile, String> {
    let at = |line: usize, message: String| format!("{}:{line}: {message}", path.display());
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_at(text, s.start));
        at(line, e.message().trim().to_string())
    })?;
    let mut config = ConfigFile {
        path: Some(path.to_path_buf()),
        ..ConfigFile::default()
    };
    for (key, value) in &table {
        match (key.as_str(), value) {
            ("default", toml::Value::String(name)) => config.default = Some(name.clone()),
            ("default", _) => {
                return Err(at(
                    line_of(text, "default"),
                    "default must be a profile name string".into(),
                ));
            }
            ("profiles", toml::Value::Table(profiles)) => {
                for (name, section) in profiles {
                    let toml::Value::Table(section) = section else {
                        return Err(at(
                            line_of(text, name),
                            format!("profiles.{name} must be a table"),
                        ));
                    };
                    config
                        .profiles
                        .push((name.clone(), delta_of(name, section, text, &at)?));
                }
            }
            (other, _) => {
                return Err(at(
                    line_of(text, other),
                    format!(
                        "unknown top-level entry {other:?}: hegel.toml has `default` and `[profiles.<name>]` tables"
                    ),
                ));
            }
        }
    }
    Ok(config)
}

fn delta_of(
    profile: &str,
    section: &toml::Table,
    text: &str,
    at: &impl Fn(usize, String) -> String,
) -> Result<Delta, String> {
    let mut delta = Delta::default();
    for (key, value) in section {
        let line = line_of(text, key);
        if key == "extends" {
            match value {
                toml::Value::String(parent) => delta.extends = Some(parent.clone()),
                _ => {
                    return Err(at(
                        line,
                        format!("profiles.{profile}.extends must be a profile name"),
                    ));
                }
            }
            continue;
        }
        if !KEYS.contains(&key.as_str()) || key == "database_key" {
            return Err(at(
                line,
                format!("unknown setting {key:?} in profiles.{profile}"),
            ));
        }
        let text_value = match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) if *i >= 0 => i.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => {
                let mut names = Vec::new();
                for item in items {
                    match item {
                        toml::Value::String(s) => names.push(s.clone()),
                        _ => {
                            return Err(at(
                                line,
                                format!("profiles.{profile}.{key} must list names"),
                            ));
                        }
                    }
                }
                names.join(",")
            }
            _ => {
                return Err(at(
                    line,
                    format!("profiles.{profile}.{key} has a value of the wrong type"),
                ));
            }
        };
        Settings::base()
            .set(key, &text_value)
            .map_err(|e| at(line, format!("profiles.{profile}: {}", e.for_key(key))))?;
        delta.assignments.push((key.clone(), text_value));
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver<'a>(config: &'a ConfigFile, env: &'static str) -> Resolver<'a> {
        Resolver {
            config,
            registered: &[],
            named_default: config
                .default
                .clone()
                .map(|n| (n, "the default entry in hegel.toml")),
            environment: env,
        }
    }

    #[test]
    fn shipped_profiles_are_siblings_over_base() {
        let config = ConfigFile::default();
        let ci = resolver(&config, "ci")
            .resolve("default")
            .expect("resolves");
        assert!(ci.derandomize);
        assert_eq!(ci.database, crate::settings::Database::Disabled);
        let dev = resolver(&config, "ci")
            .resolve("development")
            .expect("resolves");
        assert_eq!(dev, Settings::base());
        assert_eq!(
            resolver(&config, "ci").resolve("base").expect("base"),
            Settings::base()
        );
    }

    #[test]
    fn custom_profiles_extend_the_default() {
        let text = "[profiles.fast]\ntest_cases = 5\n\n[profiles.plain]\nextends = \"base\"\ntest_cases = 6\n";
        let config = parse_config(text, Path::new("hegel.toml")).expect("parses");
        let fast = resolver(&config, "ci").resolve("fast").expect("resolves");
        assert_eq!(fast.test_cases, 5);
        assert!(fast.derandomize, "fast sits on ci on a CI server");
        let plain = resolver(&config, "ci").resolve("plain").expect("resolves");
        assert!(!plain.derandomize);
        assert_eq!(plain.test_cases, 6);
    }

    #[test]
    fn bad_files_name_the_line() {
        let error = parse_config(
            "[profiles.x]\ntest_cases = \"many\"\n",
            Path::new("hegel.toml"),
        )
        .unwrap_err();
        assert!(error.starts_with("hegel.toml:2:"), "{error}");
        let error =
            parse_config("default = \"x\"\nbogus = 1\n", Path::new("hegel.toml")).unwrap_err();
        assert!(error.starts_with("hegel.toml:2:"), "{error}");
        let error = parse_config("[profiles\n", Path::new("hegel.toml")).unwrap_err();
        assert!(error.starts_with("hegel.toml:1:"), "{error}");
    }

    #[test]
    fn unknown_and_cyclic_profiles_are_errors() {
        let config = ConfigFile::default();
        let error = resolver(&config, "development")
            .resolve("nope")
            .unwrap_err();
        assert!(
            error.starts_with("unknown settings profile \"nope\""),
            "{error}"
        );
        let text = "[profiles.a]\nextends = \"b\"\n[profiles.b]\nextends = \"a\"\n";
        let config = parse_config(text, Path::new("hegel.toml")).expect("parses");
        assert!(
            resolver(&config, "development")
                .resolve("a")
                .unwrap_err()
                .contains("cycle")
        );
    }
}
