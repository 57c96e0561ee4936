//! Several databases used as one: reads from all, writes to all.
//!
//! The usual shape is a local directory beside a shared store (often
//! read-only): failures anyone found are replayed, and the developer's own
//! are kept locally even when the shared store is down. One part failing
//! never stops the others: the operation is done on every part, and what
//! failed is reported alongside what the others found.

use super::{DatabaseError, ExampleDatabase};

/// Fetches the union of its parts; saves, deletes and moves in every part.
pub struct MultiplexedDatabase {
    parts: Vec<Box<dyn ExampleDatabase>>,
}

impl MultiplexedDatabase {
    /// The union of `parts`.
    pub fn new(parts: Vec<Box<dyn ExampleDatabase>>) -> MultiplexedDatabase {
        MultiplexedDatabase { parts }
    }

    /// The parts, in the order they were given.
    pub fn parts(&self) -> &[Box<dyn ExampleDatabase>] {
        &self.parts
    }

    /// Collects what every part returns, without duplicates, and what failed.
    fn gather(
        &self,
        ask: impl Fn(&dyn ExampleDatabase) -> Result<Vec<Vec<u8>>, DatabaseError>,
    ) -> Result<Vec<Vec<u8>>, DatabaseError> {
        let mut found: Vec<Vec<u8>> = Vec::new();
        let mut failures = Vec::new();
        for part in &self.parts {
            let (values, failed) = match ask(part.as_ref()) {
                Ok(values) => (values, Vec::new()),
                Err(DatabaseError::Partial { found, failures }) => (found, failures),
                Err(e) => (Vec::new(), vec![e]),
            };
            for value in values {
                if !found.contains(&value) {
                    found.push(value);
                }
            }
            failures.extend(failed);
        }
        if failures.is_empty() {
            Ok(found)
        } else {
            Err(DatabaseError::Partial { found, failures })
        }
    }

    /// Does `act` on every part; the failures, if any.
    fn each(
        &self,
        act: impl Fn(&dyn ExampleDatabase) -> Result<(), DatabaseError>,
    ) -> Result<(), DatabaseError> {
        let mut failures: Vec<DatabaseError> = Vec::new();
        for part in &self.parts {
            match act(part.as_ref()) {
                Ok(()) => {}
                Err(DatabaseError::Partial { failures: more, .. }) => failures.extend(more),
                Err(e) => failures.push(e),
            }
        }
        match failures.len() {
            0 => Ok(()),
            1 => Err(failures.remove(0)),
            _ => Err(DatabaseError::Partial {
                found: Vec::new(),
                failures,
            }),
        }
    }
}

impl ExampleDatabase for MultiplexedDatabase {
    fn location(&self) -> String {
        let parts: Vec<String> = self.parts.iter().map(|p| p.location()).collect();
        parts.join(", ")
    }

    fn fetch(&self, key: &[u8]) -> Result<Vec<Vec<u8>>, DatabaseError> {
        self.gather(|part| part.fetch(key))
    }

    fn save(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        self.each(|part| part.save(key, value))
    }

    fn delete(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        self.each(|part| part.delete(key, value))
    }

    fn move_value(&self, from: &[u8], to: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        self.each(|part| part.move_value(from, to, value))
    }

    fn keys(&self) -> Result<Vec<Vec<u8>>, DatabaseError> {
        let mut keys = self.gather(|part| part.keys());
        if let Ok(keys) = &mut keys {
            keys.sort();
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::{DirectoryDatabase, FailingDatabase, ReadOnlyDatabase};
    use std::path::PathBuf;
    use std::sync::atomic::AtomicU64;

    fn scratch(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("geist-db-mux-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        root
    }

    #[test]
    fn reads_the_union_and_writes_every_writable_part() {
        let (local, shared) = (scratch("local"), scratch("shared"));
        DirectoryDatabase::new(&shared)
            .save(b"k", b"from CI")
            .unwrap();
        let db = MultiplexedDatabase::new(vec![
            Box::new(DirectoryDatabase::new(&local)),
            Box::new(ReadOnlyDatabase::new(DirectoryDatabase::new(&shared))),
        ]);
        db.save(b"k", b"mine").unwrap();
        db.save(b"k", b"from CI").unwrap();
        let mut values = db.fetch(b"k").unwrap();
        values.sort();
        assert_eq!(values, vec![b"from CI".to_vec(), b"mine".to_vec()]);
        assert_eq!(
            DirectoryDatabase::new(&shared).fetch(b"k").unwrap().len(),
            1
        );
        db.delete(b"k", b"from CI").unwrap();
        assert_eq!(
            db.fetch(b"k").unwrap().len(),
            2,
            "the read-only part keeps its copy"
        );
        assert_eq!(db.keys().unwrap(), vec![b"k".to_vec()]);
        for root in [local, shared] {
            let _ = std::fs::remove_dir_all(root);
        }
    }

    #[test]
    fn a_part_that_fails_does_not_stop_the_others() {
        let local = scratch("failing");
        let db = MultiplexedDatabase::new(vec![
            Box::new(FailingDatabase(AtomicU64::new(0))),
            Box::new(DirectoryDatabase::new(&local)),
        ]);
        let saved = db.save(b"k", b"kept locally");
        assert!(
            matches!(&saved, Err(DatabaseError::Refused { message, .. }) if message == "error 0"),
            "{saved:?}"
        );
        match db.fetch(b"k") {
            Err(DatabaseError::Partial { found, failures }) => {
                assert_eq!(found, vec![b"kept locally".to_vec()]);
                assert_eq!(failures.len(), 1);
            }
            other => panic!("expected a partial fetch, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(local);
    }
}
