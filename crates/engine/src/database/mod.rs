//! The example database: failing choice sequences kept between runs.
//!
//! A failure found once is replayed first on the next run of the same test
//! (found by its key), so a fixed bug is confirmed fixed and an unfixed one
//! reappears at once, already shrunk. Entries that no longer fail are deleted.
//!
//! An [`ExampleDatabase`] maps keys (byte strings, one per test) to sets of
//! values (byte strings: entries in the [`format`] of this module). Backends
//! store the sets: [`DirectoryDatabase`] on the local file system here;
//! network backends (Redis) live outside the engine, which opens no sockets.
//! [`ReadOnlyDatabase`] and [`MultiplexedDatabase`] combine them: a shared
//! store read by everyone, and a local one written too. [`KeyedDatabase`] is
//! one run's view: one key, choice sequences instead of bytes, and problems
//! turned into at most a few warnings instead of failures: a run never fails
//! because of its database.

mod directory;
pub mod format;
mod keyed;
mod multiplexed;
mod read_only;

pub use directory::DirectoryDatabase;
pub use format::{EntryError, decode_choices, encode_choices};
pub use keyed::KeyedDatabase;
pub use multiplexed::MultiplexedDatabase;
pub use read_only::ReadOnlyDatabase;

use std::path::PathBuf;

/// Where failing examples are kept: a set of byte-string values per byte-string key.
///
/// Every operation is safe to run from many threads and processes at once
/// against the same store: a value saved is never lost to a concurrent save,
/// delete or move of another value.
pub trait ExampleDatabase: Send + Sync {
    /// Where the database is, for messages: a path or an address.
    fn location(&self) -> String;

    /// The values under `key`, in no particular order.
    fn fetch(&self, key: &[u8]) -> Result<Vec<Vec<u8>>, DatabaseError>;

    /// Adds `value` under `key` (saving it twice keeps one copy).
    fn save(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError>;

    /// Removes `value` from `key` if it is there.
    fn delete(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError>;

    /// Moves `value` from `from` to `to`: afterwards it is under `to` and not
    /// under `from`. Backends that can do it in one step override this.
    fn move_value(&self, from: &[u8], to: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        // Saving first: interrupted in between, the value is kept twice, never lost.
        self.save(to, value)?;
        if from != to {
            self.delete(from, value)?;
        }
        Ok(())
    }

    /// Every key that holds values (for listing, exporting and merging).
    fn keys(&self) -> Result<Vec<Vec<u8>>, DatabaseError>;
}

macro_rules! forward_example_database {
    ($($pointer:ident)::+) => {
        impl<D: ExampleDatabase + ?Sized> ExampleDatabase for $($pointer)::+<D> {
            fn location(&self) -> String {
                (**self).location()
            }
            fn fetch(&self, key: &[u8]) -> Result<Vec<Vec<u8>>, DatabaseError> {
                (**self).fetch(key)
            }
            fn save(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
                (**self).save(key, value)
            }
            fn delete(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
                (**self).delete(key, value)
            }
            fn move_value(&self, from: &[u8], to: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
                (**self).move_value(from, to, value)
            }
            fn keys(&self) -> Result<Vec<Vec<u8>>, DatabaseError> {
                (**self).keys()
            }
        }
    };
}

// A boxed or shared database is a database (what the setting-string opener returns).
forward_example_database!(Box);
forward_example_database!(std::sync::Arc);

/// Why a database operation did not happen (or happened only in part).
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// A file system operation failed.
    #[error("{operation} {}: {source}", path.display())]
    Io {
        /// What was being done (`reading`, `writing`, ...).
        operation: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The store could not be reached (down, too slow, refused the connection).
    /// The backend goes on without it and tries again later.
    #[error("{location} is unavailable ({reason})")]
    Unavailable {
        /// The store's address.
        location: String,
        /// What went wrong, as the client library said it.
        reason: String,
    },
    /// The store answered, with an error.
    #[error("{location}: {message}")]
    Refused {
        /// The store's address.
        location: String,
        /// The store's answer.
        message: String,
    },
    /// Some parts of a fetch answered and others did not: `found` holds what
    /// the answering parts had.
    #[error("{}", describe_all(failures))]
    Partial {
        /// The values found by the parts that answered.
        found: Vec<Vec<u8>>,
        /// Why the other parts did not.
        failures: Vec<DatabaseError>,
    },
}

fn describe_all(failures: &[DatabaseError]) -> String {
    let parts: Vec<String> = failures.iter().map(ToString::to_string).collect();
    parts.join("; ")
}

/// The key under which intermediate (not yet minimal) examples of `key` are kept.
pub fn secondary_key(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.extend_from_slice(b".secondary");
    k
}

/// The key under which the failures of `key` whose shrinking ran to its end
/// are recorded (see [`KeyedDatabase::mark_shrunk`]).
pub fn shrunk_key(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.extend_from_slice(b".shrunk");
    k
}

/// Whether `key` is where some test's shrunk failures are recorded (a
/// [`shrunk_key`]) rather than a test's own key.
pub fn is_shrunk_key(key: &[u8]) -> bool {
    key.ends_with(b".shrunk")
}

/// A key as people read it: its text when it is UTF-8, else hex.
pub fn describe_key(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(text) => format!("{text:?}"),
        Err(_) => {
            let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{hex}")
        }
    }
}

/// A database that fails every operation, counting the calls (for tests of
/// what the callers do with failures).
#[cfg(test)]
pub(crate) struct FailingDatabase(pub std::sync::atomic::AtomicU64);

#[cfg(test)]
impl FailingDatabase {
    fn fail(&self) -> DatabaseError {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        DatabaseError::Refused {
            location: "down".into(),
            message: format!("error {n}"),
        }
    }
}

#[cfg(test)]
impl ExampleDatabase for FailingDatabase {
    fn location(&self) -> String {
        "down".into()
    }
    fn fetch(&self, _: &[u8]) -> Result<Vec<Vec<u8>>, DatabaseError> {
        Err(self.fail())
    }
    fn save(&self, _: &[u8], _: &[u8]) -> Result<(), DatabaseError> {
        Err(self.fail())
    }
    fn delete(&self, _: &[u8], _: &[u8]) -> Result<(), DatabaseError> {
        Err(self.fail())
    }
    fn keys(&self) -> Result<Vec<Vec<u8>>, DatabaseError> {
        Err(self.fail())
    }
}
