//! The `database` setting: one string that says where examples are kept.
//!
//! ```text
//! SETTING := PART ("," PART)*        two or more parts: a multiplexed database
//! PART    := "readonly:" PART        fetches from PART, never writes to it
//!          | "redis://" ADDRESS      a Redis server: redis://host[:port][/db][?options]
//!          | PATH                    a directory (created on first save)
//! ```
//!
//! Spaces around parts are ignored. Redis options, all optional:
//! `prefix=TEXT` (the prefix of every Redis key, default `geist-example:`),
//! `expire=SECONDS` (how long a test's entries outlive its last run, default
//! 8 days, `0` for never), `timeout=SECONDS` (each connection attempt and
//! command, default 2), `retry=SECONDS` (how long to go on without a store that
//! failed before trying it again, default 30). A path that contains a comma or
//! starts with `readonly:` or `redis://` cannot be written in a setting string
//! (prefix it with `./`); in Rust, pass a `Path` instead.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where examples are kept, as a setting names it.
#[derive(Clone, Debug, PartialEq)]
pub enum DatabaseSetting {
    /// A directory on this machine.
    Directory(PathBuf),
    /// A Redis server.
    Redis(RedisSetting),
    /// Another database, fetched from and never written.
    ReadOnly(Box<DatabaseSetting>),
    /// Several databases used as one: fetches from all, writes to all.
    Multiplexed(Vec<DatabaseSetting>),
}

/// A Redis server and how geist uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct RedisSetting {
    /// The connection URL without geist's options (`redis://host:port/db`).
    pub url: String,
    /// Prepended to every key geist stores.
    pub prefix: String,
    /// How long a key lives after its last use; `None` for ever.
    pub expire: Option<Duration>,
    /// The bound on each connection attempt and each command.
    pub timeout: Duration,
    /// How long to go on without the server after it failed before trying again.
    pub retry: Duration,
    /// The setting as written (how it is shown and sent on).
    text: String,
}

/// The defaults of [`RedisSetting`].
impl RedisSetting {
    /// Default key prefix.
    pub const DEFAULT_PREFIX: &'static str = "geist-example:";
    /// Default expiry: entries of a test not run for 8 days go (weekly jobs keep theirs).
    pub const DEFAULT_EXPIRE: Duration = Duration::from_secs(8 * 24 * 3600);
    /// Default bound on a connection attempt or a command.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
    /// Default pause before trying a failed server again.
    pub const DEFAULT_RETRY: Duration = Duration::from_secs(30);

    /// Where the server is, for messages (the URL without a password).
    pub fn location(&self) -> String {
        match url::Url::parse(&self.url) {
            Ok(mut url) => {
                if url.password().is_some() {
                    let _ = url.set_password(Some("***"));
                }
                url.to_string()
            }
            Err(_) => self.url.clone(),
        }
    }
}

/// Why a setting string names no database.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// Nothing was given: a directory named "" would be the working directory.
    #[error(
        "the database setting is empty; to disable the example database leave it out \
         (null in the protocol, `none` in GEIST_DATABASE)"
    )]
    Empty,
    /// A comma with nothing on one side.
    #[error("part {position} of the database setting {setting:?} is empty")]
    EmptyPart {
        /// The whole setting.
        setting: String,
        /// Which part (from 1).
        position: usize,
    },
    /// A Redis address geist cannot use.
    #[error("database {part:?}: {reason}")]
    Redis {
        /// The part of the setting.
        part: String,
        /// What is wrong with it.
        reason: String,
    },
}

const READ_ONLY: &str = "readonly:";

impl DatabaseSetting {
    /// Parses a setting string (see the [module documentation](self)).
    pub fn parse(text: &str) -> Result<DatabaseSetting, SettingError> {
        if text.trim().is_empty() {
            return Err(SettingError::Empty);
        }
        let mut parts = Vec::new();
        for (index, part) in text.split(',').enumerate() {
            let part = part.trim();
            if part.is_empty() {
                return Err(SettingError::EmptyPart {
                    setting: text.to_string(),
                    position: index + 1,
                });
            }
            parts.push(parse_part(part)?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            DatabaseSetting::Multiplexed(parts)
        })
    }

    /// The same setting with every directory replaced by `change(directory)`
    /// (a client keeps a server's examples apart from its own this way).
    pub fn map_directories(&self, change: &dyn Fn(&Path) -> PathBuf) -> DatabaseSetting {
        match self {
            DatabaseSetting::Directory(path) => DatabaseSetting::Directory(change(path)),
            DatabaseSetting::Redis(redis) => DatabaseSetting::Redis(redis.clone()),
            DatabaseSetting::ReadOnly(inner) => {
                DatabaseSetting::ReadOnly(Box::new(inner.map_directories(change)))
            }
            DatabaseSetting::Multiplexed(parts) => DatabaseSetting::Multiplexed(
                parts.iter().map(|p| p.map_directories(change)).collect(),
            ),
        }
    }
}

fn parse_part(part: &str) -> Result<DatabaseSetting, SettingError> {
    if let Some(inner) = part.strip_prefix(READ_ONLY) {
        let inner = inner.trim();
        if inner.is_empty() {
            return Err(SettingError::Redis {
                part: part.to_string(),
                reason: "readonly: names no database".into(),
            });
        }
        return Ok(DatabaseSetting::ReadOnly(Box::new(parse_part(inner)?)));
    }
    let lower = part.to_ascii_lowercase();
    if lower.starts_with("redis://") {
        return parse_redis(part).map(DatabaseSetting::Redis);
    }
    for scheme in [
        "rediss://",
        "redis+unix://",
        "unix://",
        "valkey://",
        "valkeys://",
    ] {
        if lower.starts_with(scheme) {
            return Err(SettingError::Redis {
                part: part.to_string(),
                reason: format!("{scheme} addresses are not supported; use redis://host:port/db"),
            });
        }
    }
    Ok(DatabaseSetting::Directory(PathBuf::from(part)))
}

fn seconds(
    part: &str,
    name: &str,
    value: &str,
    zero_allowed: bool,
) -> Result<Duration, SettingError> {
    let error = |reason: String| SettingError::Redis {
        part: part.to_string(),
        reason,
    };
    let number: f64 = value
        .parse()
        .map_err(|_| error(format!("{name}={value:?} is not a number of seconds")))?;
    let positive = if zero_allowed {
        number >= 0.0
    } else {
        number > 0.0
    };
    if !number.is_finite() || !positive {
        return Err(error(format!(
            "{name}={value} must be {} seconds",
            if zero_allowed {
                "0 or more"
            } else {
                "more than 0"
            }
        )));
    }
    Duration::try_from_secs_f64(number).map_err(|e| error(format!("{name}={value}: {e}")))
}

fn parse_redis(part: &str) -> Result<RedisSetting, SettingError> {
    let error = |reason: String| SettingError::Redis {
        part: part.to_string(),
        reason,
    };
    let mut url = url::Url::parse(part).map_err(|e| error(format!("not a URL: {e}")))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(error("names no host (redis://host:port/db)".into()));
    }
    let mut setting = RedisSetting {
        url: String::new(),
        prefix: RedisSetting::DEFAULT_PREFIX.to_string(),
        expire: Some(RedisSetting::DEFAULT_EXPIRE),
        timeout: RedisSetting::DEFAULT_TIMEOUT,
        retry: RedisSetting::DEFAULT_RETRY,
        text: part.to_string(),
    };
    let options: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    for (name, value) in options {
        match name.as_str() {
            "prefix" => setting.prefix = value,
            "expire" => {
                let expire = seconds(part, "expire", &value, true)?;
                setting.expire = (!expire.is_zero()).then_some(expire);
            }
            "timeout" => setting.timeout = seconds(part, "timeout", &value, false)?,
            "retry" => setting.retry = seconds(part, "retry", &value, true)?,
            other => {
                return Err(error(format!(
                    "unknown option {other:?} (geist takes prefix, expire, timeout and retry)"
                )));
            }
        }
    }
    url.set_query(None);
    setting.url = url.to_string();
    redis::IntoConnectionInfo::into_connection_info(setting.url.as_str())
        .map_err(|e| error(e.to_string()))?;
    Ok(setting)
}

impl fmt::Display for RedisSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for DatabaseSetting {
    /// The setting string (parsing it gives the same setting back).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseSetting::Directory(path) => write!(f, "{}", path.display()),
            DatabaseSetting::Redis(redis) => write!(f, "{redis}"),
            DatabaseSetting::ReadOnly(inner) => write!(f, "{READ_ONLY}{inner}"),
            DatabaseSetting::Multiplexed(parts) => {
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{part}")?;
                }
                Ok(())
            }
        }
    }
}

/// What a database can be given as in code: a setting string (parsed), a
/// path (always a directory, never parsed), or a parsed setting.
pub trait IntoDatabaseSetting {
    /// The setting, or why the value names none.
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError>;
}

impl IntoDatabaseSetting for DatabaseSetting {
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError> {
        Ok(self)
    }
}

impl IntoDatabaseSetting for &str {
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError> {
        DatabaseSetting::parse(self)
    }
}

impl IntoDatabaseSetting for String {
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError> {
        DatabaseSetting::parse(&self)
    }
}

impl IntoDatabaseSetting for &String {
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError> {
        DatabaseSetting::parse(self)
    }
}

impl IntoDatabaseSetting for &Path {
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError> {
        if self.as_os_str().is_empty() {
            return Err(SettingError::Empty);
        }
        Ok(DatabaseSetting::Directory(self.to_path_buf()))
    }
}

impl IntoDatabaseSetting for PathBuf {
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError> {
        self.as_path().into_database_setting()
    }
}

impl IntoDatabaseSetting for &PathBuf {
    fn into_database_setting(self) -> Result<DatabaseSetting, SettingError> {
        self.as_path().into_database_setting()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redis(setting: &DatabaseSetting) -> &RedisSetting {
        match setting {
            DatabaseSetting::Redis(redis) => redis,
            other => panic!("not redis: {other:?}"),
        }
    }

    #[test]
    fn paths_redis_read_only_and_multiplexed() {
        assert_eq!(
            DatabaseSetting::parse(".geist/examples").unwrap(),
            DatabaseSetting::Directory(".geist/examples".into())
        );
        let r = DatabaseSetting::parse("redis://127.0.0.1:6380/2").unwrap();
        let r = redis(&r);
        assert_eq!(r.url, "redis://127.0.0.1:6380/2");
        assert_eq!(r.prefix, RedisSetting::DEFAULT_PREFIX);
        assert_eq!(r.expire, Some(RedisSetting::DEFAULT_EXPIRE));
        let setting = DatabaseSetting::parse(
            " local , readonly:redis://ci:6379/0?prefix=team:&expire=0&timeout=0.5&retry=5",
        )
        .unwrap();
        let DatabaseSetting::Multiplexed(parts) = &setting else {
            panic!("{setting:?}")
        };
        assert_eq!(parts[0], DatabaseSetting::Directory("local".into()));
        let DatabaseSetting::ReadOnly(inner) = &parts[1] else {
            panic!("{:?}", parts[1])
        };
        let r = redis(inner);
        assert_eq!(r.url, "redis://ci:6379/0");
        assert_eq!(r.prefix, "team:");
        assert_eq!(r.expire, None);
        assert_eq!(r.timeout, Duration::from_millis(500));
        assert_eq!(r.retry, Duration::from_secs(5));
        // Shown as given, and parsing that gives the same setting.
        let shown = setting.to_string();
        assert_eq!(
            shown,
            "local,readonly:redis://ci:6379/0?prefix=team:&expire=0&timeout=0.5&retry=5"
        );
        assert_eq!(DatabaseSetting::parse(&shown).unwrap(), setting);
    }

    /// Issue 16: an empty setting used to mean the working directory.
    #[test]
    fn empty_settings_and_parts_are_refused() {
        assert_eq!(DatabaseSetting::parse(""), Err(SettingError::Empty));
        assert_eq!(DatabaseSetting::parse("  "), Err(SettingError::Empty));
        assert_eq!(
            Path::new("").into_database_setting(),
            Err(SettingError::Empty)
        );
        let e = DatabaseSetting::parse("a,,b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "part 2 of the database setting \"a,,b\" is empty"
        );
        assert!(DatabaseSetting::parse("readonly:").is_err());
    }

    #[test]
    fn bad_redis_addresses_say_what_is_wrong() {
        for (setting, expected) in [
            ("redis://", "names no host"),
            (
                "redis://h/0?timeout=0",
                "timeout=0 must be more than 0 seconds",
            ),
            ("redis://h/0?expire=soon", "expire=\"soon\" is not a number"),
            ("redis://h/0?colour=blue", "unknown option \"colour\""),
            ("rediss://h/0", "rediss:// addresses are not supported"),
            ("redis://h/notanumber", "Invalid database number"),
        ] {
            let error = DatabaseSetting::parse(setting).unwrap_err().to_string();
            assert!(error.contains(expected), "{setting}: {error}");
        }
    }

    #[test]
    fn paths_in_code_are_never_parsed() {
        let odd = Path::new("readonly:a,b");
        assert_eq!(
            odd.into_database_setting(),
            Ok(DatabaseSetting::Directory(odd.to_path_buf()))
        );
    }

    #[test]
    fn directories_can_be_moved_under_a_subdirectory() {
        let setting = DatabaseSetting::parse("a,readonly:b,redis://h:1/0").unwrap();
        let moved = setting.map_directories(&|p| p.join("server"));
        assert_eq!(
            moved.to_string(),
            "a/server,readonly:b/server,redis://h:1/0"
        );
    }

    #[test]
    fn passwords_are_not_shown() {
        let setting = DatabaseSetting::parse("redis://:hunter2@h:1/0").unwrap();
        let location = redis(&setting).location();
        assert!(!location.contains("hunter2"), "{location}");
    }
}
