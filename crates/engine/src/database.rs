//! The example database: failing choice sequences kept between runs.
//!
//! A failure found once is replayed first on the next run of the same test
//! (found by its key), so a fixed bug is confirmed fixed and an unfixed one
//! reappears at once, already shrunk. Entries that no longer fail are deleted.
//!
//! [`DirectoryDatabase`] stores one file per entry under a directory per key.
//! Writes go to a temporary file renamed into place, so a crash never leaves a
//! half-written entry; a corrupt or foreign file is skipped with a warning.

use crate::choice::ChoiceValue;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where failing examples are kept.
pub trait ExampleDatabase {
    /// The entries under `key`. Unreadable entries are skipped and described in the warnings.
    fn fetch(&self, key: &[u8]) -> (Vec<Vec<ChoiceValue>>, Vec<String>);
    /// Stores an entry under `key` (storing it twice keeps one copy).
    fn save(&self, key: &[u8], choices: &[ChoiceValue]) -> Result<(), String>;
    /// Removes an entry from `key` if present.
    fn delete(&self, key: &[u8], choices: &[ChoiceValue]) -> Result<(), String>;
}

const MAGIC: &[u8; 4] = b"GEDB";
const FORMAT_VERSION: u8 = 2;

/// The key under which intermediate (not yet minimal) examples of `key` are kept.
pub fn secondary_key(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.extend_from_slice(b".secondary");
    k
}

fn push_varint(out: &mut Vec<u8>, mut v: u128) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Serializes a choice sequence: `GEDB`, version, count, then tagged values.
pub fn encode_choices(choices: &[ChoiceValue]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + choices.len() * 9);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT_VERSION);
    out.extend_from_slice(&(choices.len() as u32).to_le_bytes());
    for choice in choices {
        match choice {
            ChoiceValue::Integer(v) => {
                // Zigzag varint: small magnitudes take few bytes.
                out.push(0);
                push_varint(&mut out, ((v << 1) ^ (v >> 127)) as u128);
            }
            ChoiceValue::Float(v) => {
                out.push(1);
                out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            ChoiceValue::Boolean(v) => {
                out.push(2);
                out.push(u8::from(*v));
            }
            ChoiceValue::Bytes(v) => {
                out.push(3);
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                out.extend_from_slice(v);
            }
            ChoiceValue::String(v) => {
                out.push(4);
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                for c in v {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() - self.pos < n {
            return Err(format!(
                "truncated at byte {}: needed {n} more bytes, {} left",
                self.pos,
                self.bytes.len() - self.pos
            ));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn varint(&mut self) -> Result<u128, String> {
        let mut v: u128 = 0;
        for shift in (0..19).map(|i| i * 7) {
            let byte = self.take(1)?[0];
            let chunk = u128::from(byte & 0x7F);
            if shift == 126 && chunk > 3 {
                return Err(format!(
                    "integer varint overflows 128 bits at byte {}",
                    self.pos - 1
                ));
            }
            v |= chunk << shift;
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 {
                    return Err(format!("non-minimal varint at byte {}", self.pos - 1));
                }
                return Ok(v);
            }
        }
        Err(format!("integer varint too long at byte {}", self.pos))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Parses a serialized choice sequence, rejecting anything malformed.
pub fn decode_choices(bytes: &[u8]) -> Result<Vec<ChoiceValue>, String> {
    let mut r = Reader { bytes, pos: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a geist example (bad magic)".into());
    }
    let version = r.take(1)?[0];
    if version != FORMAT_VERSION {
        return Err(format!("unsupported example format version {version}"));
    }
    let count = r.u32()? as usize;
    // Every value takes at least two bytes, so a count beyond that is a lie.
    if count > bytes.len() / 2 {
        return Err(format!("claims {count} choices in {} bytes", bytes.len()));
    }
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let tag = r.take(1)?[0];
        let value = match tag {
            0 => {
                let z = r.varint()?;
                ChoiceValue::Integer(((z >> 1) as i128) ^ -((z & 1) as i128))
            }
            1 => {
                let b = r.take(8)?;
                ChoiceValue::Float(f64::from_bits(u64::from_le_bytes(
                    b.try_into().map_err(|_| "float")?,
                )))
            }
            2 => match r.take(1)?[0] {
                0 => ChoiceValue::Boolean(false),
                1 => ChoiceValue::Boolean(true),
                other => return Err(format!("bad boolean byte {other} at {}", r.pos - 1)),
            },
            3 => {
                let n = r.u32()? as usize;
                ChoiceValue::Bytes(r.take(n)?.to_vec())
            }
            4 => {
                let n = r.u32()? as usize;
                let raw = r.take(n.checked_mul(4).ok_or("string length overflows")?)?;
                let points: Vec<u32> = raw
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                if let Some(bad) = points.iter().find(|c| **c > crate::charset::MAX_CODEPOINT) {
                    return Err(format!("code point {bad:#x} out of range"));
                }
                ChoiceValue::String(points)
            }
            other => return Err(format!("unknown choice tag {other} at byte {}", r.pos - 1)),
        };
        out.push(value);
    }
    if r.pos != bytes.len() {
        return Err(format!("{} trailing bytes", bytes.len() - r.pos));
    }
    Ok(out)
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

/// A database in a directory: `<dir>/<digest of key>/<digest of entry>`.
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

    fn key_dir(&self, key: &[u8]) -> PathBuf {
        self.root.join(digest_hex(key))
    }
}

impl ExampleDatabase for DirectoryDatabase {
    fn fetch(&self, key: &[u8]) -> (Vec<Vec<ChoiceValue>>, Vec<String>) {
        let dir = self.key_dir(key);
        let mut entries = Vec::new();
        let mut warnings = Vec::new();
        let Ok(listing) = fs::read_dir(&dir) else {
            return (entries, warnings);
        };
        let mut paths: Vec<PathBuf> = listing
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_none())
            .collect();
        paths.sort();
        for path in paths {
            match fs::read(&path) {
                Ok(bytes) => match decode_choices(&bytes) {
                    Ok(choices) => entries.push(choices),
                    Err(e) => warnings.push(format!("skipping {}: {e}", path.display())),
                },
                Err(e) => warnings.push(format!("skipping {}: {e}", path.display())),
            }
        }
        // Smallest first: shorter sequences are likelier to be the shrunk ones.
        entries.sort_by_key(Vec::len);
        (entries, warnings)
    }

    fn save(&self, key: &[u8], choices: &[ChoiceValue]) -> Result<(), String> {
        let bytes = encode_choices(choices);
        let dir = self.key_dir(key);
        fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let path = dir.join(digest_hex(&bytes));
        if path.exists() {
            return Ok(());
        }
        let temp = dir.join(format!("{}.{}.tmp", digest_hex(&bytes), std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut file = fs::File::create(&temp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            fs::rename(&temp, &path)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&temp);
            format!("writing {}: {e}", path.display())
        })
    }

    fn delete(&self, key: &[u8], choices: &[ChoiceValue]) -> Result<(), String> {
        let path = self.key_dir(key).join(digest_hex(&encode_choices(choices)));
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("deleting {}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<ChoiceValue> {
        vec![
            ChoiceValue::Integer(-(1 << 100)),
            ChoiceValue::Integer(i128::MIN),
            ChoiceValue::Integer(i128::MAX),
            ChoiceValue::Integer(0),
            ChoiceValue::Integer(-1),
            ChoiceValue::Float(-0.0),
            ChoiceValue::Boolean(true),
            ChoiceValue::Bytes(vec![0, 255]),
            ChoiceValue::String(vec![0x30, 0xD800, 0x10FFFF]),
        ]
    }

    #[test]
    fn encoding_round_trips_and_rejects_damage() {
        let bytes = encode_choices(&sample());
        assert_eq!(decode_choices(&bytes).unwrap(), sample());
        for cut in 0..bytes.len() {
            assert!(
                decode_choices(&bytes[..cut]).is_err(),
                "prefix of {cut} bytes"
            );
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(decode_choices(&extra).is_err());
        let mut lying = bytes.clone();
        lying[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_choices(&lying).is_err());
    }

    #[test]
    fn directory_database_saves_fetches_deletes_and_skips_junk() {
        let dir = std::env::temp_dir().join(format!("geist-db-test-{}", std::process::id()));
        let db = DirectoryDatabase::new(&dir);
        let key = b"my test";
        db.save(key, &sample()).unwrap();
        db.save(key, &sample()).unwrap();
        db.save(key, &[ChoiceValue::Boolean(false)]).unwrap();
        let (entries, warnings) = db.fetch(key);
        assert_eq!(entries.len(), 2);
        assert!(warnings.is_empty());
        assert_eq!(entries[0], vec![ChoiceValue::Boolean(false)]);
        fs::write(db.key_dir(key).join("junk"), b"not an example").unwrap();
        let (entries, warnings) = db.fetch(key);
        assert_eq!(entries.len(), 2);
        assert_eq!(warnings.len(), 1);
        db.delete(key, &sample()).unwrap();
        assert_eq!(db.fetch(key).0.len(), 1);
        assert!(db.fetch(b"other key").0.is_empty());
        let _ = fs::remove_dir_all(&dir);
    }
}
