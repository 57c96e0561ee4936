//! The Redis backend: one Redis set per test, shared by every worker.
//!
//! A key `K` is stored as the set `<prefix>K`; its members are the entries.
//! Each operation is one short Lua script (`EVAL`), which Redis runs
//! atomically: saves (`SADD`), deletes (`SREM`) and moves (`SREM` and `SADD`)
//! from any number of workers at once never lose or tear an entry. Every
//! access renews the key's expiry (`PEXPIRE` in the same script), so the
//! entries of tests nobody runs any more go by themselves.
//!
//! The network is allowed to fail. Connecting and each operation's one reply
//! are bounded by the setting's timeout. When one fails, the operation returns
//! [`DatabaseError::Unavailable`] once; for the next `retry` seconds every
//! operation returns at once as if the store were empty (fetches find
//! nothing, writes are dropped), and the outage is not reported again until
//! the server has answered in between. A run therefore goes on without the
//! database, says so once, and never waits more than one timeout for it.

use crate::setting::{RedisSetting, SettingError};
use geist_engine::database::{DatabaseError, ExampleDatabase};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// `KEYS[1]`'s members, renewing its expiry (`ARGV[1]` milliseconds, `0` for none).
const FETCH: &str = "local members = redis.call('SMEMBERS', KEYS[1]) \
if ARGV[1] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return members";

/// Adds `ARGV[1]` to `KEYS[1]`, renewing its expiry (`ARGV[2]`).
const SAVE: &str = "redis.call('SADD', KEYS[1], ARGV[1]) \
if ARGV[2] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 1";

/// Removes `ARGV[1]` from `KEYS[1]`, renewing its expiry (`ARGV[2]`).
const DELETE: &str = "redis.call('SREM', KEYS[1], ARGV[1]) \
if ARGV[2] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 1";

/// Moves `ARGV[1]` from `KEYS[1]` to `KEYS[2]`, renewing both expiries (`ARGV[2]`).
const MOVE: &str = "redis.call('SREM', KEYS[1], ARGV[1]) redis.call('SADD', KEYS[2], ARGV[1]) \
if ARGV[2] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) \
redis.call('PEXPIRE', KEYS[2], ARGV[2]) end return 1";

/// Keys asked of `SCAN` at a time when listing.
const SCAN_BATCH: usize = 1000;

/// A database in a Redis server.
pub struct RedisDatabase {
    client: redis::Client,
    location: String,
    prefix: Vec<u8>,
    /// The expiry in milliseconds, `0` for none (the scripts' argument).
    expire_millis: u64,
    timeout: Duration,
    retry: Duration,
    link: Mutex<Link>,
}

/// The state of the connection.
enum Link {
    /// No connection open; the next operation connects.
    Closed,
    /// A connection that answered last time.
    Open(redis::Connection),
    /// The server failed; operations do nothing until `retry_at`.
    Down {
        /// When to try again.
        retry_at: Instant,
    },
}

/// Whether an error means the server is gone or too slow (rather than that it
/// answered with an error).
fn is_outage(error: &redis::RedisError) -> bool {
    error.is_io_error()
        || error.is_timeout()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_unrecoverable_error()
}

impl RedisDatabase {
    /// A database on the server `setting` names. Nothing is contacted until
    /// the first operation.
    pub fn new(setting: &RedisSetting) -> Result<RedisDatabase, SettingError> {
        let client =
            redis::Client::open(setting.url.as_str()).map_err(|e| SettingError::Redis {
                part: setting.to_string(),
                reason: e.to_string(),
            })?;
        Ok(RedisDatabase {
            client,
            location: setting.location(),
            prefix: setting.prefix.as_bytes().to_vec(),
            expire_millis: setting.expire.map_or(0, |e| {
                u64::try_from(e.as_millis()).unwrap_or(u64::MAX).max(1)
            }),
            timeout: setting.timeout,
            retry: setting.retry,
            link: Mutex::new(Link::Closed),
        })
    }

    fn redis_key(&self, key: &[u8]) -> Vec<u8> {
        let mut k = self.prefix.clone();
        k.extend_from_slice(key);
        k
    }

    fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let connection = self.client.get_connection_with_timeout(self.timeout)?;
        connection.set_read_timeout(Some(self.timeout))?;
        connection.set_write_timeout(Some(self.timeout))?;
        Ok(connection)
    }

    /// Runs `operation` on the connection, or returns `while_down` without
    /// touching the network while the server is known to be down.
    /// `operation` must be safe to run twice: a connection that has gone
    /// stale (the server restarted) is replaced once before the server
    /// counts as down.
    fn with_connection<T>(
        &self,
        while_down: T,
        operation: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, DatabaseError> {
        let mut link = self.link.lock().unwrap_or_else(PoisonError::into_inner);
        let (reused, retrying) = match std::mem::replace(&mut *link, Link::Closed) {
            Link::Open(connection) => (Some(connection), false),
            Link::Closed => (None, false),
            Link::Down { retry_at } if Instant::now() < retry_at => {
                *link = Link::Down { retry_at };
                return Ok(while_down);
            }
            Link::Down { .. } => (None, true),
        };
        if let Some(mut connection) = reused {
            match operation(&mut connection) {
                // Dropped or reset: the connection is stale (the server
                // restarted); try a fresh one. A timeout means the server
                // is slow: one timeout is all a run waits.
                Err(error) if is_outage(&error) && !error.is_timeout() => {}
                result => {
                    return self.settle(&mut link, Some(connection), result, retrying, while_down);
                }
            }
        }
        let (connection, result) = match self.connect() {
            Ok(mut connection) => {
                let result = operation(&mut connection);
                (Some(connection), result)
            }
            Err(error) => (None, Err(error)),
        };
        self.settle(&mut link, connection, result, retrying, while_down)
    }

    /// Records what an operation's outcome says of the link, and turns it
    /// into the database's answer.
    fn settle<T>(
        &self,
        link: &mut Link,
        connection: Option<redis::Connection>,
        result: redis::RedisResult<T>,
        retrying: bool,
        while_down: T,
    ) -> Result<T, DatabaseError> {
        match result {
            Ok(value) => {
                if let Some(connection) = connection {
                    *link = Link::Open(connection);
                }
                Ok(value)
            }
            Err(error) if is_outage(&error) => {
                *link = Link::Down {
                    retry_at: Instant::now() + self.retry,
                };
                if retrying {
                    // Still the outage already reported.
                    Ok(while_down)
                } else {
                    Err(DatabaseError::Unavailable {
                        location: self.location.clone(),
                        reason: error.to_string(),
                    })
                }
            }
            Err(error) => {
                if let Some(connection) = connection.filter(redis::ConnectionLike::is_open) {
                    *link = Link::Open(connection);
                }
                Err(DatabaseError::Refused {
                    location: self.location.clone(),
                    message: error.to_string(),
                })
            }
        }
    }

    /// Runs one of the scripts above on geist's keys for `keys`, with
    /// `ARGV` = `value` (if any), then the expiry.
    fn run_script<T: redis::FromRedisValue>(
        &self,
        while_down: T,
        script: &str,
        keys: &[&[u8]],
        value: Option<&[u8]>,
    ) -> Result<T, DatabaseError> {
        let mut command = redis::cmd("EVAL");
        command.arg(script).arg(keys.len());
        for key in keys {
            command.arg(self.redis_key(key));
        }
        if let Some(value) = value {
            command.arg(value);
        }
        command.arg(self.expire_millis);
        self.with_connection(while_down, |connection| command.query(connection))
    }
}

/// A `SCAN` pattern that matches `prefix` literally, then anything.
fn literal_prefix_pattern(prefix: &[u8]) -> Vec<u8> {
    let mut pattern = Vec::with_capacity(prefix.len() + 1);
    for &b in prefix {
        if matches!(b, b'*' | b'?' | b'[' | b']' | b'\\') {
            pattern.push(b'\\');
        }
        pattern.push(b);
    }
    pattern.push(b'*');
    pattern
}

impl ExampleDatabase for RedisDatabase {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn fetch(&self, key: &[u8]) -> Result<Vec<Vec<u8>>, DatabaseError> {
        self.run_script(Vec::new(), FETCH, &[key], None)
    }

    fn save(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        self.run_script((), SAVE, &[key], Some(value))
    }

    fn delete(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        self.run_script((), DELETE, &[key], Some(value))
    }

    fn move_value(&self, from: &[u8], to: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        if from == to {
            return self.save(to, value);
        }
        self.run_script((), MOVE, &[from, to], Some(value))
    }

    fn keys(&self) -> Result<Vec<Vec<u8>>, DatabaseError> {
        let pattern = literal_prefix_pattern(&self.prefix);
        self.with_connection(Vec::new(), |connection| {
            let mut keys = Vec::new();
            let mut cursor: u64 = 0;
            loop {
                let (next, batch): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(SCAN_BATCH)
                    .query(connection)?;
                keys.extend(
                    batch
                        .into_iter()
                        .filter_map(|k| k.strip_prefix(self.prefix.as_slice()).map(<[u8]>::to_vec)),
                );
                if next == 0 {
                    break;
                }
                cursor = next;
            }
            // SCAN may return a key twice.
            keys.sort();
            keys.dedup();
            Ok(keys)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_patterns_match_the_prefix_literally() {
        assert_eq!(
            literal_prefix_pattern(b"geist-example:"),
            b"geist-example:*"
        );
        assert_eq!(
            literal_prefix_pattern(b"a*b?[c]\\"),
            b"a\\*b\\?\\[c\\]\\\\*"
        );
    }

    /// Nothing listens on a port just released: the first operation reports
    /// the outage, the following ones go on quietly without the network.
    #[test]
    fn an_unreachable_server_is_reported_once() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let setting = crate::DatabaseSetting::parse(&format!(
            "redis://127.0.0.1:{port}/0?timeout=0.5&retry=60"
        ))
        .unwrap();
        let crate::DatabaseSetting::Redis(setting) = setting else {
            panic!("not redis")
        };
        let db = RedisDatabase::new(&setting).unwrap();
        let first = db.save(b"k", b"v");
        assert!(
            matches!(&first, Err(DatabaseError::Unavailable { location, .. }) if location.contains(&port.to_string())),
            "{first:?}"
        );
        let started = Instant::now();
        assert!(db.fetch(b"k").unwrap().is_empty());
        db.save(b"k", b"v").unwrap();
        db.delete(b"k", b"v").unwrap();
        assert!(db.keys().unwrap().is_empty());
        assert!(started.elapsed() < Duration::from_millis(100));
    }
}
