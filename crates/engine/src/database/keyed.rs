//! One run's view of the database: one test's key, choice sequences as values.
//!
//! The run never fails because of its database. Entries that cannot be
//! decoded are removed (they would otherwise warn on every run and never
//! replay); entries of another format version are kept for the geist that
//! wrote them. The first error of the run becomes a warning and later ones are
//! only counted, so a store that goes away mid-run costs one line, not one per
//! test case.
//!
//! A failure whose shrinking ran to its end is also recorded under the
//! `.shrunk` sub-key: a later run that replays exactly such failures reports
//! them without shrinking again (as Hypothesis does with its own), while one
//! saved in the middle of a shrink (by an interrupted run, or by another
//! worker sharing the store) is shrunk again.

use super::{DatabaseError, EntryError, ExampleDatabase, decode_choices, describe_key};
use super::{encode_choices, secondary_key, shrunk_key};
use crate::choice::ChoiceValue;

/// The database as one run of one test uses it.
pub struct KeyedDatabase<'a> {
    database: &'a dyn ExampleDatabase,
    key: Vec<u8>,
    secondary: Vec<u8>,
    shrunk: Vec<u8>,
    warnings: Vec<String>,
    first_error: Option<String>,
    further_errors: u64,
}

impl<'a> KeyedDatabase<'a> {
    /// The entries of `key` in `database`.
    pub fn new(database: &'a dyn ExampleDatabase, key: Vec<u8>) -> KeyedDatabase<'a> {
        KeyedDatabase {
            database,
            secondary: secondary_key(&key),
            shrunk: shrunk_key(&key),
            key,
            warnings: Vec::new(),
            first_error: None,
            further_errors: 0,
        }
    }

    /// The test's key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    fn note(&mut self, error: DatabaseError) {
        match error {
            DatabaseError::Partial { failures, .. } => {
                for failure in failures {
                    self.note(failure);
                }
            }
            error if self.first_error.is_none() => {
                let going_on = match error {
                    DatabaseError::Unavailable { .. } => "; the run goes on without it",
                    _ => "",
                };
                self.first_error = Some(format!("{error}{going_on}"));
            }
            _ => self.further_errors += 1,
        }
    }

    fn values_of(&mut self, key: &[u8]) -> Vec<Vec<u8>> {
        match self.database.fetch(key) {
            Ok(values) => values,
            Err(DatabaseError::Partial { found, failures }) => {
                self.note(DatabaseError::Partial {
                    found: Vec::new(),
                    failures,
                });
                found
            }
            Err(error) => {
                self.note(error);
                Vec::new()
            }
        }
    }

    /// The saved failures to replay, simplest first. Entries that cannot be
    /// decoded are deleted, with a warning.
    pub fn fetch(&mut self) -> Vec<Vec<ChoiceValue>> {
        let mut values = self.values_of(&self.key.clone());
        // Shortest first, then bytewise: shorter sequences are likelier to be
        // the shrunk ones, and the order is the same on every machine.
        values.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        values.dedup();
        let mut entries = Vec::new();
        for value in values {
            match decode_choices(&value) {
                Ok(choices) => entries.push(choices),
                Err(EntryError::UnsupportedVersion(version)) => self.warnings.push(format!(
                    "kept an entry of key {} in {} written in format version {version}: this \
                     geist cannot replay it",
                    describe_key(&self.key),
                    self.database.location(),
                )),
                Err(EntryError::Malformed(reason)) => {
                    self.warnings.push(format!(
                        "removed a damaged entry of key {} from {}: {reason}",
                        describe_key(&self.key),
                        self.database.location(),
                    ));
                    if let Err(e) = self.database.delete(&self.key, &value) {
                        self.note(e);
                    }
                }
            }
        }
        entries
    }

    /// Saves a failure.
    pub fn save(&mut self, choices: &[ChoiceValue]) {
        if let Err(e) = self.database.save(&self.key, &encode_choices(choices)) {
            self.note(e);
        }
    }

    /// Deletes a saved failure (it no longer fails).
    pub fn delete(&mut self, choices: &[ChoiceValue]) {
        if let Err(e) = self.database.delete(&self.key, &encode_choices(choices)) {
            self.note(e);
        }
        self.unmark_shrunk(choices);
    }

    /// Records that a saved failure's shrinking ran to its end.
    pub fn mark_shrunk(&mut self, choices: &[ChoiceValue]) {
        if let Err(e) = self.database.save(&self.shrunk, &encode_choices(choices)) {
            self.note(e);
        }
    }

    /// Whether a failure was recorded as shrunk to its end.
    pub fn is_shrunk(&mut self, choices: &[ChoiceValue]) -> bool {
        let value = encode_choices(choices);
        let shrunk = self.shrunk.clone();
        self.values_of(&shrunk).contains(&value)
    }

    fn unmark_shrunk(&mut self, choices: &[ChoiceValue]) {
        if let Err(e) = self.database.delete(&self.shrunk, &encode_choices(choices)) {
            self.note(e);
        }
    }

    /// Moves a failure that a smaller one replaced to the secondary key, where
    /// it stays until the run ends (an interrupted run loses no progress).
    pub fn demote(&mut self, choices: &[ChoiceValue]) {
        let value = encode_choices(choices);
        if let Err(e) = self.database.move_value(&self.key, &self.secondary, &value) {
            self.note(e);
        }
        self.unmark_shrunk(choices);
    }

    /// Empties the secondary key at the end of a run.
    pub fn clear_secondary(&mut self) {
        let secondary = self.secondary.clone();
        for value in self.values_of(&secondary) {
            if let Err(e) = self.database.delete(&secondary, &value) {
                self.note(e);
            }
        }
    }

    /// What the run should tell the user: entries removed or kept, and the
    /// first error (with a count of the later ones).
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut warnings = std::mem::take(&mut self.warnings);
        if let Some(first) = self.first_error.take() {
            warnings.push(match std::mem::take(&mut self.further_errors) {
                0 => first,
                n => format!("{first} (and {n} more database errors in this run)"),
            });
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::{DirectoryDatabase, FailingDatabase};
    use std::sync::atomic::AtomicU64;

    fn scratch(name: &str) -> std::path::PathBuf {
        let root =
            std::env::temp_dir().join(format!("geist-db-keyed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        root
    }

    #[test]
    fn damaged_entries_are_removed_once_and_newer_formats_kept() {
        let root = scratch("damaged");
        let db = DirectoryDatabase::new(&root);
        let good = vec![ChoiceValue::Integer(7)];
        db.save(b"k", &encode_choices(&good)).unwrap();
        db.save(b"k", b"GEDB\x02garbage").unwrap();
        let mut newer = encode_choices(&good);
        newer[4] += 1;
        db.save(b"k", &newer).unwrap();

        let mut keyed = KeyedDatabase::new(&db, b"k".to_vec());
        assert_eq!(keyed.fetch(), vec![good.clone()]);
        let warnings = keyed.take_warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("removed a damaged entry"))
        );
        assert!(warnings.iter().any(|w| w.contains("format version 3")));

        // The next run sees only the newer-format warning.
        let mut keyed = KeyedDatabase::new(&db, b"k".to_vec());
        assert_eq!(keyed.fetch(), vec![good]);
        assert_eq!(keyed.take_warnings().len(), 1);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn errors_become_one_warning_with_a_count() {
        let db = FailingDatabase(AtomicU64::new(0));
        let mut keyed = KeyedDatabase::new(&db, b"k".to_vec());
        assert!(keyed.fetch().is_empty());
        keyed.save(&[ChoiceValue::Boolean(true)]);
        keyed.demote(&[ChoiceValue::Boolean(true)]);
        keyed.clear_secondary();
        assert_eq!(
            keyed.take_warnings(),
            vec!["down: error 0 (and 4 more database errors in this run)".to_string()]
        );
        assert!(keyed.take_warnings().is_empty());
    }
}
