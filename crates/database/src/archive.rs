//! A whole example database as one file, and copying between databases.
//!
//! The file is JSON, so a CI job can upload it as an artifact and a person
//! can read which tests it holds failures for:
//!
//! ```json
//! {
//!   "format": "geist-example-database",
//!   "version": 1,
//!   "keys": [
//!     {"key": "tests/codec.rs:12", "entries": ["R0VEQgIBAAAAAOAP"]},
//!     {"key_base64": "/w==", "entries": []}
//!   ]
//! }
//! ```
//!
//! A key is given as text when it is UTF-8 and as `key_base64` otherwise;
//! entries are base64 of the entry format. [`export`] reads a database into an
//! [`Archive`], [`import`] saves an archive's entries into a database, and
//! [`merge`] copies one database into another directly. Entries are added,
//! never removed: importing or merging twice changes nothing.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use geist_engine::database::{DatabaseError, EntryError, ExampleDatabase, decode_choices};
use serde::{Deserialize, Serialize};
use std::io::Read;

/// The `format` field of every archive.
pub const FORMAT: &str = "geist-example-database";
/// The archive version this geist writes and reads.
pub const VERSION: u32 = 1;
/// The largest archive [`Archive::read`] accepts unless told otherwise (256 MiB).
pub const DEFAULT_MAX_SIZE: u64 = 256 << 20;

/// A database's keys and entries, as a file holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Archive {
    /// Each key with its entries, keys in byte order.
    pub keys: Vec<(Vec<u8>, Vec<Vec<u8>>)>,
}

/// Why an archive could not be read, or a copy could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// Reading the file failed.
    #[error("reading the archive: {0}")]
    Read(#[source] std::io::Error),
    /// The file is bigger than allowed.
    #[error("the archive is larger than {limit} bytes (raise the limit to read it)")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not JSON of the archive's shape.
    #[error("not a geist example database archive: {0}")]
    Shape(#[source] serde_json::Error),
    /// Another format, or a version this geist does not read.
    #[error(
        "archive format {format:?} version {version}; this geist reads {FORMAT:?} version {VERSION}"
    )]
    Version {
        /// The file's `format`.
        format: String,
        /// The file's `version`.
        version: u32,
    },
    /// A key or entry is not what it must be.
    #[error("key {key}: {reason}")]
    Entry {
        /// Which key (as text, or its position).
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The database failed.
    #[error(transparent)]
    Database(#[from] DatabaseError),
}

#[derive(Serialize, Deserialize)]
struct File {
    format: String,
    version: u32,
    #[serde(default)]
    keys: Vec<KeyRecord>,
}

#[derive(Serialize, Deserialize)]
struct KeyRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_base64: Option<String>,
    #[serde(default)]
    entries: Vec<String>,
}

/// How much an import or merge did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Copied {
    /// Keys that had entries.
    pub keys: usize,
    /// Entries saved (some may have been there already).
    pub entries: usize,
}

impl Archive {
    /// The number of entries under all keys.
    pub fn entry_count(&self) -> usize {
        self.keys.iter().map(|(_, entries)| entries.len()).sum()
    }

    /// The archive as JSON text.
    pub fn to_json(&self) -> String {
        let file = File {
            format: FORMAT.into(),
            version: VERSION,
            keys: self
                .keys
                .iter()
                .map(|(key, entries)| {
                    let (key, key_base64) = match std::str::from_utf8(key) {
                        Ok(text) => (Some(text.to_string()), None),
                        Err(_) => (None, Some(BASE64.encode(key))),
                    };
                    KeyRecord {
                        key,
                        key_base64,
                        entries: entries.iter().map(|e| BASE64.encode(e)).collect(),
                    }
                })
                .collect(),
        };
        let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads an archive of at most `max_size` bytes. Every entry must be in
    /// the entry format (of any version): a damaged archive is refused whole,
    /// naming the key.
    pub fn read(reader: impl Read, max_size: u64) -> Result<Archive, ArchiveError> {
        let mut bytes = Vec::new();
        reader
            .take(max_size.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(ArchiveError::Read)?;
        if bytes.len() as u64 > max_size {
            return Err(ArchiveError::TooLarge { limit: max_size });
        }
        let file: File = serde_json::from_slice(&bytes).map_err(ArchiveError::Shape)?;
        if file.format != FORMAT || file.version != VERSION {
            return Err(ArchiveError::Version {
                format: file.format,
                version: file.version,
            });
        }
        let mut keys = Vec::with_capacity(file.keys.len());
        for (position, record) in file.keys.into_iter().enumerate() {
            let named = |reason: String| ArchiveError::Entry {
                key: record
                    .key
                    .as_ref()
                    .map_or_else(|| format!("number {}", position + 1), |k| format!("{k:?}")),
                reason,
            };
            let key = match (&record.key, &record.key_base64) {
                (Some(text), None) => text.as_bytes().to_vec(),
                (None, Some(encoded)) => BASE64
                    .decode(encoded)
                    .map_err(|e| named(format!("key_base64 is not base64: {e}")))?,
                _ => return Err(named("needs exactly one of key and key_base64".into())),
            };
            let mut entries = Vec::with_capacity(record.entries.len());
            for (index, encoded) in record.entries.iter().enumerate() {
                let entry = BASE64
                    .decode(encoded)
                    .map_err(|e| named(format!("entry {} is not base64: {e}", index + 1)))?;
                match decode_choices(&entry) {
                    Ok(_) | Err(EntryError::UnsupportedVersion(_)) => entries.push(entry),
                    Err(e) => return Err(named(format!("entry {} is damaged: {e}", index + 1))),
                }
            }
            keys.push((key, entries));
        }
        Ok(Archive { keys })
    }
}

/// Every key of `database` with its entries.
pub fn export(database: &dyn ExampleDatabase) -> Result<Archive, ArchiveError> {
    let mut keys = Vec::new();
    for key in database.keys()? {
        let mut entries = database.fetch(&key)?;
        if entries.is_empty() {
            continue;
        }
        entries.sort();
        keys.push((key, entries));
    }
    Ok(Archive { keys })
}

/// Saves every entry of `archive` into `database`.
pub fn import(archive: &Archive, database: &dyn ExampleDatabase) -> Result<Copied, ArchiveError> {
    let mut copied = Copied::default();
    for (key, entries) in &archive.keys {
        for entry in entries {
            database.save(key, entry)?;
        }
        if !entries.is_empty() {
            copied.keys += 1;
            copied.entries += entries.len();
        }
    }
    Ok(copied)
}

/// Saves every entry of `from` into `into`.
pub fn merge(
    from: &dyn ExampleDatabase,
    into: &dyn ExampleDatabase,
) -> Result<Copied, ArchiveError> {
    import(&export(from)?, into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use geist_engine::choice::ChoiceValue;
    use geist_engine::database::{DirectoryDatabase, encode_choices};

    fn entry(n: i128) -> Vec<u8> {
        encode_choices(&[ChoiceValue::Integer(n)])
    }

    #[test]
    fn export_import_and_merge_round_trip() {
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let source = DirectoryDatabase::new(a.path());
        source.save(b"tests/a.rs:1", &entry(1)).unwrap();
        source.save(b"tests/a.rs:1", &entry(2)).unwrap();
        source.save(&[0xff, 0x00], &entry(3)).unwrap();

        let archive = export(&source).unwrap();
        assert_eq!(archive.entry_count(), 3);
        let text = archive.to_json();
        assert!(text.contains("\"key\": \"tests/a.rs:1\""), "{text}");
        assert!(text.contains("\"key_base64\": \"/wA=\""), "{text}");
        let read = Archive::read(text.as_bytes(), DEFAULT_MAX_SIZE).unwrap();
        assert_eq!(read, archive);

        let target = DirectoryDatabase::new(b.path());
        assert_eq!(
            import(&read, &target).unwrap(),
            Copied {
                keys: 2,
                entries: 3
            }
        );
        assert_eq!(import(&read, &target).unwrap().entries, 3);
        assert_eq!(export(&target).unwrap(), archive);

        let merged = DirectoryDatabase::new(c.path());
        merged.save(b"own", &entry(9)).unwrap();
        assert_eq!(merge(&source, &merged).unwrap().entries, 3);
        assert_eq!(export(&merged).unwrap().entry_count(), 4);
    }

    #[test]
    fn bad_archives_say_what_is_wrong() {
        let ok = Archive {
            keys: vec![(b"k".to_vec(), vec![entry(1)])],
        }
        .to_json();
        let cases = [
            ("[1, 2]".to_string(), "not a geist example database archive"),
            (ok.replace("\"version\": 1", "\"version\": 7"), "version 7"),
            (
                ok.replace(&BASE64.encode(entry(1)), "R0VEQgI="),
                "key \"k\": entry 1 is damaged",
            ),
            (
                ok.replace(&BASE64.encode(entry(1)), "***"),
                "entry 1 is not base64",
            ),
            (
                ok.replace("\"key\": \"k\"", "\"key\": \"k\", \"key_base64\": \"aw==\""),
                "exactly one of",
            ),
        ];
        for (text, expected) in cases {
            let error = Archive::read(text.as_bytes(), DEFAULT_MAX_SIZE)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{error}\n{text}");
        }
        let error = Archive::read(ok.as_bytes(), 10).unwrap_err().to_string();
        assert!(error.contains("larger than 10 bytes"), "{error}");
    }
}
