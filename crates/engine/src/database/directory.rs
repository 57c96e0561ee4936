//! The directory backend: one file per entry on the local file system.
//!
//! `<root>/<digest of key>/<digest of value>` holds a value; `<root>/<digest of
//! key>/key` holds the key itself, so that tools can list and export keys.
//! Digests are 128-bit FNV-1a in hex: file names of fixed width whatever the
//! bytes. A write goes to a uniquely named temporary file, synced, renamed into
//! place, and the directory synced after the rename, so a crash never leaves a
//! half-written entry and a finished save survives a power loss.
//!
//! The backend repairs itself on every write to a key: temporary files left by
//! a killed writer (older than [`STALE_TEMPORARY_AGE`]) and entry files whose
//! content no longer matches their name (damaged on disk) are removed, and
//! saving a value whose file exists but holds other bytes rewrites it.

use super::{DatabaseError, ExampleDatabase};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// How old a temporary file must be before a writer counts it as left behind
/// by a writer that died: a write takes milliseconds, so this is generous.
pub const STALE_TEMPORARY_AGE: Duration = Duration::from_secs(300);

/// The file in each key directory that holds the key's bytes.
const KEY_FILE: &str = "key";

/// Distinguishes the temporary files of the threads of one process.
static TEMPORARY_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A database in a directory: `<root>/<digest of key>/<digest of value>`.
#[derive(Clone, Debug)]
pub struct DirectoryDatabase {
    root: PathBuf,
}

impl DirectoryDatabase {
    /// A database rooted at `root` (created on first save).
    pub fn new(root: impl Into<PathBuf>) -> DirectoryDatabase {
        DirectoryDatabase { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory holding the values of `key`.
    pub fn key_directory(&self, key: &[u8]) -> PathBuf {
        self.root.join(digest_hex(key))
    }

    /// The file that holds `value` under `key` once it is saved.
    pub fn entry_path(&self, key: &[u8], value: &[u8]) -> PathBuf {
        self.key_directory(key).join(digest_hex(value))
    }
}

/// A stable 128-bit FNV-1a digest, as lowercase hex (file and directory names).
fn digest_hex(bytes: &[u8]) -> String {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for b in bytes {
        h ^= u128::from(*b);
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    format!("{h:032x}")
}

/// Whether a file name is a digest (an entry, or a key directory).
fn is_digest(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn io_error(operation: &'static str, path: &Path) -> impl FnOnce(io::Error) -> DatabaseError {
    let path = path.to_path_buf();
    move |source| DatabaseError::Io {
        operation,
        path,
        source,
    }
}

/// Whether a key directory holds at least one entry file.
fn has_entries(directory: &Path) -> bool {
    fs::read_dir(directory).is_ok_and(|listing| {
        listing
            .filter_map(Result::ok)
            .any(|item| item.file_name().to_str().is_some_and(is_digest))
    })
}

/// Makes a rename or removal in `directory` durable.
fn sync_directory(directory: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(directory)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // Windows cannot open a directory as a file; its renames are journaled.
        let _ = directory;
        Ok(())
    }
}

/// Writes `bytes` to `path` (in `directory`) so that readers see either the
/// old file or the whole new one, never a part.
fn write_atomically(directory: &Path, path: &Path, bytes: &[u8]) -> Result<(), DatabaseError> {
    let name = path
        .file_name()
        .map_or_else(|| "entry".into(), |n| n.to_string_lossy().into_owned());
    let temporary = directory.join(format!(
        "{name}.{}.{}.tmp",
        std::process::id(),
        TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let write = || -> io::Result<()> {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)?;
        sync_directory(directory)
    };
    write().map_err(|source| {
        let _ = fs::remove_file(&temporary);
        DatabaseError::Io {
            operation: "writing",
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Removes what a killed writer or a damaged disk left in a key directory:
/// stale temporary files and entry files whose content is not what their name
/// says. Best effort: a file another process removes first is no loss.
fn repair(directory: &Path) {
    let Ok(listing) = fs::read_dir(directory) else {
        return;
    };
    let now = SystemTime::now();
    for item in listing.filter_map(Result::ok) {
        let path = item.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.ends_with(".tmp") {
            let stale = item
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok())
                .is_some_and(|age| age >= STALE_TEMPORARY_AGE);
            if stale {
                let _ = fs::remove_file(&path);
            }
        } else if is_digest(name)
            && let Ok(bytes) = fs::read(&path)
            && digest_hex(&bytes) != name
        {
            let _ = fs::remove_file(&path);
        }
    }
}

impl ExampleDatabase for DirectoryDatabase {
    fn location(&self) -> String {
        self.root.display().to_string()
    }

    fn fetch(&self, key: &[u8]) -> Result<Vec<Vec<u8>>, DatabaseError> {
        let directory = self.key_directory(key);
        let listing = match fs::read_dir(&directory) {
            Ok(listing) => listing,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("listing", &directory)(e)),
        };
        let mut paths: Vec<PathBuf> = listing
            .filter_map(Result::ok)
            .map(|item| item.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_digest)
            })
            .collect();
        paths.sort();
        let mut found = Vec::new();
        let mut failures = Vec::new();
        for path in paths {
            match fs::read(&path) {
                Ok(bytes) => found.push(bytes),
                // Deleted by another worker since the listing.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => failures.push(io_error("reading", &path)(e)),
            }
        }
        if failures.is_empty() {
            Ok(found)
        } else {
            Err(DatabaseError::Partial { found, failures })
        }
    }

    fn save(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        let directory = self.key_directory(key);
        fs::create_dir_all(&directory).map_err(io_error("creating", &directory))?;
        repair(&directory);
        let key_file = directory.join(KEY_FILE);
        if fs::read(&key_file).ok().as_deref() != Some(key) {
            write_atomically(&directory, &key_file, key)?;
        }
        let path = directory.join(digest_hex(value));
        // An existing file with other bytes is damaged: rewrite it.
        if fs::read(&path).ok().as_deref() == Some(value) {
            return Ok(());
        }
        write_atomically(&directory, &path, value)
    }

    fn delete(&self, key: &[u8], value: &[u8]) -> Result<(), DatabaseError> {
        let directory = self.key_directory(key);
        let path = directory.join(digest_hex(value));
        let removed = match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error("deleting", &path)(e)),
        };
        // A damaged value deleted by its bytes is not under its digest: the
        // repair removes it.
        repair(&directory);
        removed
    }

    fn keys(&self) -> Result<Vec<Vec<u8>>, DatabaseError> {
        let listing = match fs::read_dir(&self.root) {
            Ok(listing) => listing,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("listing", &self.root)(e)),
        };
        let mut keys = Vec::new();
        for item in listing.filter_map(Result::ok) {
            let name = item.file_name();
            let Some(name) = name.to_str().filter(|n| is_digest(n)) else {
                continue;
            };
            // Directories written before keys were recorded have no key file:
            // they still replay, but cannot be listed by name. Directories
            // whose entries were all deleted stay (removing them would race
            // with a concurrent save) but hold no values.
            if let Ok(key) = fs::read(item.path().join(KEY_FILE))
                && digest_hex(&key) == name
                && has_entries(&item.path())
            {
                keys.push(key);
            }
        }
        keys.sort();
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "geist-db-{name}-{}-{}",
            std::process::id(),
            TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn saves_fetches_deletes_and_lists_keys() {
        let root = scratch("basic");
        let db = DirectoryDatabase::new(&root);
        let key = b"my test";
        db.save(key, b"one").unwrap();
        db.save(key, b"one").unwrap();
        db.save(key, b"two").unwrap();
        db.save(b"other", b"three").unwrap();
        let mut values = db.fetch(key).unwrap();
        values.sort();
        assert_eq!(values, vec![b"one".to_vec(), b"two".to_vec()]);
        // Foreign files are not entries.
        fs::write(db.key_directory(key).join("notes.txt"), b"mine").unwrap();
        assert_eq!(db.fetch(key).unwrap().len(), 2);
        db.delete(key, b"one").unwrap();
        db.delete(key, b"absent").unwrap();
        assert_eq!(db.fetch(key).unwrap(), vec![b"two".to_vec()]);
        assert!(db.fetch(b"never saved").unwrap().is_empty());
        assert_eq!(
            db.keys().unwrap(),
            vec![b"my test".to_vec(), b"other".to_vec()]
        );
        db.move_value(key, b"other", b"two").unwrap();
        assert!(db.fetch(key).unwrap().is_empty());
        assert_eq!(db.fetch(b"other").unwrap().len(), 2);
        // A key whose entries are all gone is not listed.
        assert_eq!(db.keys().unwrap(), vec![b"other".to_vec()]);
        let _ = fs::remove_dir_all(&root);
    }

    /// Issue 16: an entry damaged on disk was never rewritten, because save
    /// returned early when the file existed.
    #[test]
    fn saving_again_repairs_a_damaged_entry() {
        let root = scratch("repair");
        let db = DirectoryDatabase::new(&root);
        db.save(b"k", b"the failure").unwrap();
        let path = db.entry_path(b"k", b"the failure");
        fs::write(&path, b"the fai").unwrap();
        db.save(b"k", b"the failure").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"the failure");
        let _ = fs::remove_dir_all(&root);
    }

    /// A damaged entry that is deleted by the bytes it now holds (what the
    /// engine does with an entry it cannot decode) is gone afterwards.
    #[test]
    fn deleting_a_damaged_entry_by_its_content_removes_it() {
        let root = scratch("damaged");
        let db = DirectoryDatabase::new(&root);
        db.save(b"k", b"good").unwrap();
        db.save(b"k", b"gone bad").unwrap();
        fs::write(db.entry_path(b"k", b"gone bad"), b"garbage").unwrap();
        db.delete(b"k", b"garbage").unwrap();
        assert_eq!(db.fetch(b"k").unwrap(), vec![b"good".to_vec()]);
        let _ = fs::remove_dir_all(&root);
    }

    /// Issue 16: a writer killed between creating its temporary file and the
    /// rename left `*.tmp` files that nobody removed.
    #[test]
    fn a_write_removes_stale_temporary_files_and_keeps_fresh_ones() {
        let root = scratch("temporaries");
        let db = DirectoryDatabase::new(&root);
        db.save(b"k", b"first").unwrap();
        let directory = db.key_directory(b"k");
        let stale = directory.join("0123.4242.0.tmp");
        let fresh = directory.join("4567.4243.0.tmp");
        fs::write(&stale, b"half of an ent").unwrap();
        fs::write(&fresh, b"being written").unwrap();
        let long_ago = SystemTime::now() - STALE_TEMPORARY_AGE - Duration::from_secs(60);
        fs::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        db.save(b"k", b"second").unwrap();
        assert!(!stale.exists(), "a stale temporary file survived a save");
        assert!(
            fresh.exists(),
            "a temporary file still being written was removed"
        );
        let leftovers: Vec<_> = fs::read_dir(&directory)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path() != fresh && e.path().extension().is_some())
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let _ = fs::remove_dir_all(&root);
    }

    /// Threads of one process saving the same value at once used to share one
    /// temporary file name (digest and process id), so one rename failed.
    #[test]
    fn concurrent_saves_of_one_value_all_succeed() {
        let root = scratch("threads");
        let db = DirectoryDatabase::new(&root);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for i in 0..50u32 {
                        db.save(b"k", &i.to_le_bytes()).unwrap();
                    }
                });
            }
        });
        assert_eq!(db.fetch(b"k").unwrap().len(), 50);
        let _ = fs::remove_dir_all(&root);
    }

    /// Run by `the_directory_is_synced_after_each_rename` under strace.
    #[test]
    #[ignore = "run under strace by the_directory_is_synced_after_each_rename"]
    fn save_one_entry_for_strace() {
        let root = match std::env::var_os("GEIST_STRACE_DATABASE") {
            Some(root) => PathBuf::from(root),
            None => scratch("strace"),
        };
        let db = DirectoryDatabase::new(&root);
        db.save(b"traced key", b"traced value").unwrap();
        assert_eq!(
            db.fetch(b"traced key").unwrap(),
            vec![b"traced value".to_vec()]
        );
    }

    /// Issue 16: the directory was not synced after the rename, so a power
    /// loss could lose a save that had returned. Needs strace (installed by
    /// `scripts/stages/redis.sh`, which runs the ignored database tests).
    #[test]
    #[ignore = "needs strace: scripts/stages/redis.sh runs it"]
    #[cfg(target_os = "linux")]
    fn the_directory_is_synced_after_each_rename() {
        let root = scratch("synced");
        fs::create_dir_all(&root).unwrap();
        let log = root.join("strace.log");
        let traced = std::process::Command::new("strace")
            .args([
                "-f",
                "-y",
                "-e",
                "trace=rename,renameat,renameat2,fsync,fdatasync",
                "-o",
            ])
            .arg(&log)
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "database::directory::tests::save_one_entry_for_strace",
                "--ignored",
                "--test-threads=1",
            ])
            .env("GEIST_STRACE_DATABASE", root.join("db"))
            .output()
            .expect("strace is not installed (apt-get install strace)");
        assert!(
            traced.status.success(),
            "the traced save failed: {}\n{}",
            traced.status,
            String::from_utf8_lossy(&traced.stdout)
        );
        let trace = fs::read_to_string(&log).unwrap();
        let directory = DirectoryDatabase::new(root.join("db")).key_directory(b"traced key");
        let directory = fs::canonicalize(directory).unwrap();
        let lines: Vec<&str> = trace.lines().collect();
        let renames: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].contains("rename") && lines[i].contains(".tmp"))
            .collect();
        assert_eq!(renames.len(), 2, "the key file and the entry:\n{trace}");
        for at in renames {
            let synced = lines[at + 1..]
                .iter()
                .take_while(|l| !l.contains("rename"))
                .any(|l| l.contains("fsync(") && l.contains(&format!("<{}>", directory.display())));
            assert!(
                synced,
                "no fsync of {} after:\n{}\n\n{trace}",
                directory.display(),
                lines[at]
            );
        }
        let _ = fs::remove_dir_all(&root);
    }
}
