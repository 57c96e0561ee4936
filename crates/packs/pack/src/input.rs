//! Bounded input: reading files and walking directories the way every pack's command does.
//!
//! Input files decide how much memory a command uses, so each read has a size
//! limit ([`read_file`] refuses a file over it before reading, and stops
//! reading past it when the size was not known in advance). Only regular files
//! are read: a FIFO or a device named `*.json` would block or never end.
//! [`collect_files`] walks directories without following a symbolic link into
//! a directory already on the way (a cycle) or visiting the same file twice,
//! skips special files, and reports a directory it cannot read while going on
//! with the rest.

use std::collections::HashSet;
use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The default largest input file: 64 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 64 << 20;

/// Why an input file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened, inspected or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not a regular file (a directory, FIFO, socket or device).
    #[error("cannot read {path}: not a regular file (a {what})")]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        what: &'static str,
    },
    /// Larger than the limit.
    #[error(
        "{path} is larger than the {limit}-byte input limit ({size} bytes; raise it with --max-file-size)"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, or how much was read before giving up.
        size: u64,
        /// The limit.
        limit: u64,
    },
}

/// What kind of special file `file_type` is, for messages.
pub fn describe(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return "FIFO";
        }
        if file_type.is_socket() {
            return "socket";
        }
        if file_type.is_block_device() {
            return "block device";
        }
        if file_type.is_char_device() {
            return "character device";
        }
    }
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_symlink() {
        "symbolic link"
    } else if file_type.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

/// Reads a regular file of at most `limit` bytes.
///
/// The kind of file is checked before opening it (opening a FIFO for reading
/// blocks until a writer comes), and the size both before and while reading.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(InputError::NotRegular {
            path: path.to_path_buf(),
            what: describe(metadata.file_type()),
        });
    }
    if metadata.len() > limit {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            size: metadata.len(),
            limit,
        });
    }
    let file = File::open(path).map_err(io)?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// Reads at most `limit` bytes from `reader` (standard input), naming it `name` in errors.
pub fn read_stream(
    mut reader: impl std::io::Read,
    name: &str,
    limit: u64,
) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    (&mut reader)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            path: PathBuf::from(name),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            path: PathBuf::from(name),
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// Parses a size: bytes, or a number with a `K`, `M` or `G` suffix (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((at, 'k' | 'K')) => (&text[..at], 10),
        Some((at, 'm' | 'M')) => (&text[..at], 20),
        Some((at, 'g' | 'G')) => (&text[..at], 30),
        _ => (text, 0),
    };
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (bytes, or a number with K, M or G)"))?;
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// Something a directory walk skipped or could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkNote {
    /// The path concerned.
    pub path: PathBuf,
    /// What happened.
    pub message: String,
    /// Whether it is an error (an unreadable directory) rather than a skip.
    pub error: bool,
}

impl std::fmt::Display for WalkNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// The files a walk found, sorted, and what it skipped or could not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// Regular files whose names `wanted` accepted, each once.
    pub files: Vec<PathBuf>,
    /// Skipped special files, symbolic-link cycles, unreadable directories.
    pub notes: Vec<WalkNote>,
}

/// Identity of a file: device and inode where there are such things, else its canonical path.
fn identity(path: &Path, metadata: &std::fs::Metadata) -> (u64, u64, Option<PathBuf>) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let _ = path;
        (metadata.dev(), metadata.ino(), None)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        (0, 0, std::fs::canonicalize(path).ok())
    }
}

/// Walks `dir` for regular files whose names `wanted` accepts.
///
/// Symbolic links are followed, but a directory is entered at most once and a
/// file listed at most once (by device and inode), so link cycles end and
/// nothing is counted twice. FIFOs, sockets and devices are skipped with a
/// note; a directory that cannot be read is noted as an error and the walk
/// goes on. Files come out sorted.
pub fn collect_files(dir: &Path, wanted: &dyn Fn(&Path) -> bool) -> Walk {
    let mut walk = Walk::default();
    let mut seen_dirs = HashSet::new();
    let mut seen_files = HashSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        match std::fs::metadata(&dir) {
            Ok(metadata) => {
                if !seen_dirs.insert(identity(&dir, &metadata)) {
                    walk.notes.push(WalkNote {
                        path: dir,
                        message: "directory already walked (a symbolic-link cycle or a second link): skipped".to_string(),
                        error: false,
                    });
                    continue;
                }
            }
            Err(error) => {
                walk.notes.push(WalkNote {
                    path: dir,
                    message: format!("cannot read: {error}"),
                    error: true,
                });
                continue;
            }
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                walk.notes.push(WalkNote {
                    path: dir,
                    message: format!("cannot read directory: {error}"),
                    error: true,
                });
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    walk.notes.push(WalkNote {
                        path: dir.clone(),
                        message: format!("cannot read directory: {error}"),
                        error: true,
                    });
                    break;
                }
            };
            let path = entry.path();
            // Follows links: a link to a directory is walked, a dangling one is reported.
            let metadata = match std::fs::metadata(&path) {
                Ok(metadata) => metadata,
                Err(error) => {
                    if wanted(&path) {
                        walk.notes.push(WalkNote {
                            path,
                            message: format!("cannot read: {error}"),
                            error: true,
                        });
                    }
                    continue;
                }
            };
            if metadata.is_dir() {
                pending.push(path);
            } else if wanted(&path) {
                if !metadata.is_file() {
                    walk.notes.push(WalkNote {
                        message: format!(
                            "not a regular file (a {}): skipped",
                            describe(metadata.file_type())
                        ),
                        path,
                        error: false,
                    });
                } else if seen_files.insert(identity(&path, &metadata)) {
                    walk.files.push(path);
                }
            }
        }
    }
    walk.files.sort();
    walk.notes.sort_by(|a, b| a.path.cmp(&b.path));
    walk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("10").unwrap(), 10);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("2m").unwrap(), 2 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }

    #[test]
    fn reads_refuse_files_over_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_file(&path, 10).unwrap().len(), 10);
        let error = read_file(&path, 9).unwrap_err().to_string();
        assert!(
            error.contains("larger than the 9-byte input limit"),
            "{error}"
        );
        let error = read_file(dir.path(), 9).unwrap_err().to_string();
        assert!(
            error.contains("not a regular file (a directory)"),
            "{error}"
        );
        let error = read_stream(&b"0123456789"[..], "<stdin>", 4)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("<stdin> is larger than the 4-byte"),
            "{error}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn walks_end_on_link_cycles_count_files_once_and_skip_fifos() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/one.json"), b"{}").unwrap();
        std::fs::write(root.join("a/b/two.json"), b"{}").unwrap();
        std::os::unix::fs::symlink("..", root.join("a/b/up")).unwrap();
        std::os::unix::fs::symlink("../..", root.join("a/b/upup")).unwrap();
        std::os::unix::fs::symlink("two.json", root.join("a/b/alias.json")).unwrap();
        let fifo = root.join("a/pipe.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let walk = collect_files(root, &|p: &Path| p.extension().is_some_and(|e| e == "json"));
        assert_eq!(walk.files.len(), 2, "{walk:?}");
        assert!(
            walk.notes
                .iter()
                .any(|n| n.path == fifo && n.message.contains("FIFO")),
            "{walk:?}"
        );
        assert!(walk.notes.iter().all(|n| !n.error), "{walk:?}");
        let error = read_file(&fifo, 100).unwrap_err().to_string();
        assert!(error.contains("not a regular file (a FIFO)"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn an_unreadable_directory_is_reported_and_the_walk_goes_on() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("closed")).unwrap();
        std::fs::write(root.join("closed/x.json"), b"{}").unwrap();
        std::fs::write(root.join("open.json"), b"{}").unwrap();
        std::fs::set_permissions(root.join("closed"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        let walk = collect_files(root, &|_: &Path| true);
        std::fs::set_permissions(root.join("closed"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        if walk.files.len() == 2 {
            // Running as root: permissions do not apply.
            return;
        }
        assert_eq!(walk.files, vec![root.join("open.json")]);
        assert!(walk.notes.iter().any(|n| n.error), "{walk:?}");
    }
}
