//! geist's example database beyond one machine, and the one way to open it.
//!
//! The engine defines the [`ExampleDatabase`] interface with a directory
//! backend and read-only and multiplexed wrappers; it opens no sockets. This
//! crate adds what needs the network or a file format:
//!
//! - [`setting`]: the `database` setting string that every front end takes
//!   (Rust client settings and `GEIST_DATABASE`, the protocol's `database`
//!   field, the C ABI): a path, `redis://host:port/db`, `readonly:...`, and
//!   several of them separated by commas for a multiplexed database;
//! - [`redis`]: a Redis backend that many workers and machines share, which
//!   goes on without the store (saying so once) when it is down or slow;
//! - [`archive`]: a whole database as one JSON file (a CI artifact), with
//!   export, import and merge between any two databases;
//! - `local_server` (feature `local-server`): a real `redis-server` started
//!   on a free loopback port, for tests.
//!
//! ```
//! let local = std::env::temp_dir().join(format!("geist-doc-{}", std::process::id()));
//! let setting = format!("{},readonly:redis://127.0.0.1:6379/0", local.display());
//! let database = geist_database::open(&setting).unwrap();
//! assert!(database.location().contains("read-only redis://127.0.0.1:6379/0"));
//! # std::fs::remove_dir_all(&local).ok();
//! ```
//! ```

pub mod archive;
#[cfg(feature = "local-server")]
pub mod local_server;
pub mod redis;
pub mod setting;

pub use geist_engine::database::{
    DatabaseError, DirectoryDatabase, ExampleDatabase, MultiplexedDatabase, ReadOnlyDatabase,
};
pub use setting::{DatabaseSetting, IntoDatabaseSetting, SettingError};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Parses a `database` setting and opens the database it names.
pub fn open(setting: &str) -> Result<Arc<dyn ExampleDatabase>, SettingError> {
    DatabaseSetting::parse(setting)?.open()
}

impl DatabaseSetting {
    /// Opens the database this setting names. Nothing is contacted yet: a
    /// Redis server that is down is found out (and reported) on first use.
    ///
    /// Redis databases are shared within the process (one per distinct
    /// setting), so that every run sees one connection and one outage.
    pub fn open(&self) -> Result<Arc<dyn ExampleDatabase>, SettingError> {
        Ok(match self {
            DatabaseSetting::Directory(path) => Arc::new(DirectoryDatabase::new(path)),
            DatabaseSetting::Redis(redis) => shared_redis(redis)?,
            DatabaseSetting::ReadOnly(inner) => Arc::new(ReadOnlyDatabase::new(inner.open()?)),
            DatabaseSetting::Multiplexed(parts) => {
                let mut opened: Vec<Box<dyn ExampleDatabase>> = Vec::with_capacity(parts.len());
                for part in parts {
                    opened.push(Box::new(part.open()?));
                }
                Arc::new(MultiplexedDatabase::new(opened))
            }
        })
    }
}

/// The process' Redis databases, by setting.
fn shared_redis(setting: &setting::RedisSetting) -> Result<Arc<dyn ExampleDatabase>, SettingError> {
    static OPENED: OnceLock<Mutex<HashMap<String, Arc<redis::RedisDatabase>>>> = OnceLock::new();
    let mut opened = OPENED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let name = setting.to_string();
    if let Some(database) = opened.get(&name) {
        return Ok(database.clone());
    }
    let database = Arc::new(redis::RedisDatabase::new(setting)?);
    opened.insert(name, database.clone());
    Ok(database)
}
