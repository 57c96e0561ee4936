//! A read-only view of a database: fetches pass through, writes are dropped.
//!
//! For a store that many read and only some should write (a team's shared
//! store read by every developer, a CI artifact): wrap it, usually inside a
//! [`MultiplexedDatabase`](super::MultiplexedDatabase) beside a local
//! directory that keeps the developer's own failures.

use super::{DatabaseError, ExampleDatabase};

/// Reads from the wrapped database and never changes it.
#[derive(Clone, Debug)]
pub struct ReadOnlyDatabase<D> {
    inner: D,
}

impl<D: ExampleDatabase> ReadOnlyDatabase<D> {
    /// Wraps `inner`.
    pub fn new(inner: D) -> ReadOnlyDatabase<D> {
        ReadOnlyDatabase { inner }
    }

    /// The wrapped database.
    pub fn inner(&self) -> &D {
        &self.inner
    }
}

impl<D: ExampleDatabase> ExampleDatabase for ReadOnlyDatabase<D> {
    fn location(&self) -> String {
        format!("read-only {}", self.inner.location())
    }

    fn fetch(&self, key: &[u8]) -> Result<Vec<Vec<u8>>, DatabaseError> {
        self.inner.fetch(key)
    }

    /// Does nothing: the wrapped database is not changed.
    fn save(&self, _key: &[u8], _value: &[u8]) -> Result<(), DatabaseError> {
        Ok(())
    }

    /// Does nothing: the wrapped database is not changed.
    fn delete(&self, _key: &[u8], _value: &[u8]) -> Result<(), DatabaseError> {
        Ok(())
    }

    /// Does nothing: the wrapped database is not changed.
    fn move_value(&self, _from: &[u8], _to: &[u8], _value: &[u8]) -> Result<(), DatabaseError> {
        Ok(())
    }

    fn keys(&self) -> Result<Vec<Vec<u8>>, DatabaseError> {
        self.inner.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::DirectoryDatabase;

    #[test]
    fn reads_through_and_writes_nothing() {
        let root = std::env::temp_dir().join(format!("geist-db-read-only-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let shared = DirectoryDatabase::new(&root);
        shared.save(b"k", b"shared").unwrap();
        let view = ReadOnlyDatabase::new(shared.clone());
        view.save(b"k", b"mine").unwrap();
        view.delete(b"k", b"shared").unwrap();
        view.move_value(b"k", b"elsewhere", b"shared").unwrap();
        assert_eq!(view.fetch(b"k").unwrap(), vec![b"shared".to_vec()]);
        assert_eq!(shared.fetch(b"k").unwrap(), vec![b"shared".to_vec()]);
        assert_eq!(view.keys().unwrap(), vec![b"k".to_vec()]);
        assert!(view.location().starts_with("read-only "));
        let _ = std::fs::remove_dir_all(&root);
    }
}
