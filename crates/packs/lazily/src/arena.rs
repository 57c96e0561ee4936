//! The shared-blob arena host: where a `SharedBlob` descriptor's bytes live.
//!
//! Large payloads travel out of band: the sender writes them into an arena
//! (shared memory, or an in-process buffer) behind a 40-byte header and sends
//! only a [`ShmBlobRef`] descriptor. The header layout and the FNV-1a-64
//! checksum are a cross-language contract (the `Arena` fixture locks them):
//!
//! | bytes  | field                                     |
//! |--------|-------------------------------------------|
//! | 0..4   | magic `0x4C5A5348` ("LZSH"), little endian |
//! | 4..6   | header version, 1                          |
//! | 6..8   | header length, 40                          |
//! | 8..16  | generation                                 |
//! | 16..24 | epoch                                      |
//! | 24..32 | payload length                             |
//! | 32..40 | FNV-1a-64 checksum of the payload          |

use crate::message::{BlobBackend, ShmBlobRef};

/// The length of the header written before every blob.
pub const HEADER_LEN: usize = 40;
/// The header magic, "LZSH" when read as a big-endian ASCII word.
pub const MAGIC: u32 = 0x4C5A_5348;
/// The header layout version.
pub const HEADER_VERSION: u16 = 1;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The FNV-1a 64-bit hash of `bytes`: the blob checksum.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash = FNV_OFFSET_BASIS;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The magic as text ("LZSH").
pub fn magic_text() -> String {
    String::from_utf8_lossy(&MAGIC.to_be_bytes()).into_owned()
}

/// Why an arena operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArenaError {
    /// The arena cannot hold a header and one payload byte.
    #[error("arena capacity {capacity} is below the minimum {minimum}")]
    CapacityTooSmall {
        /// The capacity asked for.
        capacity: usize,
        /// The smallest usable capacity.
        minimum: usize,
    },
    /// The payload does not fit in the arena even when empty.
    #[error("payload of {len} bytes exceeds the largest blob, {max} bytes")]
    BlobTooLarge {
        /// The payload length.
        len: usize,
        /// The largest payload.
        max: usize,
    },
    /// The descriptor points outside the arena.
    #[error("descriptor offset {offset} len {len} lies outside the arena of {capacity} bytes")]
    OutOfBounds {
        /// Descriptor offset.
        offset: u64,
        /// Descriptor length.
        len: u64,
        /// Arena capacity.
        capacity: usize,
    },
    /// A header field disagrees with the descriptor (or the header is not a blob header).
    #[error("blob header field `{field}` does not match the descriptor")]
    HeaderMismatch {
        /// The field.
        field: &'static str,
    },
    /// The payload's checksum is not the descriptor's.
    #[error("payload checksum {actual:#x} does not match the descriptor's {expected:#x}")]
    ChecksumMismatch {
        /// From the descriptor.
        expected: u64,
        /// Of the bytes found.
        actual: u64,
    },
    /// The generation counter ran out.
    #[error("blob generation counter overflowed")]
    GenerationOverflow,
}

/// A fixed-size arena of blobs, each behind a header, written round-robin.
#[derive(Debug, Clone)]
pub struct ShmBlobArena {
    bytes: Vec<u8>,
    write_offset: usize,
    next_generation: u64,
}

impl ShmBlobArena {
    /// An empty arena of `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Result<Self, ArenaError> {
        let minimum = HEADER_LEN + 1;
        if capacity < minimum {
            return Err(ArenaError::CapacityTooSmall { capacity, minimum });
        }
        Ok(Self {
            bytes: vec![0; capacity],
            write_offset: 0,
            next_generation: 1,
        })
    }

    /// The arena's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The arena's size.
    pub fn capacity(&self) -> usize {
        self.bytes.len()
    }

    /// Writes `payload` for `epoch`, wrapping to the start when it does not fit at the end,
    /// and returns its descriptor.
    pub fn write_blob(&mut self, epoch: u64, payload: &[u8]) -> Result<ShmBlobRef, ArenaError> {
        let max = self.capacity() - HEADER_LEN;
        if payload.len() > max {
            return Err(ArenaError::BlobTooLarge {
                len: payload.len(),
                max,
            });
        }
        let total = HEADER_LEN + payload.len();
        if self.write_offset + total > self.capacity() {
            self.write_offset = 0;
        }
        let generation = self.next_generation;
        self.next_generation = generation
            .checked_add(1)
            .ok_or(ArenaError::GenerationOverflow)?;
        let offset = self.write_offset;
        let descriptor = ShmBlobRef {
            offset: offset as u64,
            len: payload.len() as u64,
            generation,
            epoch,
            checksum: fnv1a64(payload),
            backend: BlobBackend::Shm,
        };
        self.bytes[offset..offset + HEADER_LEN].copy_from_slice(&header_bytes(&descriptor));
        self.bytes[offset + HEADER_LEN..offset + total].copy_from_slice(payload);
        self.write_offset = (offset + total) % self.capacity();
        Ok(descriptor)
    }

    /// The 40 header bytes at `offset`, if they lie inside the arena.
    pub fn header_at(&self, offset: usize) -> Option<&[u8]> {
        self.bytes.get(offset..offset.checked_add(HEADER_LEN)?)
    }

    /// Reads the payload a descriptor names, validating header and checksum.
    pub fn read_blob(&self, descriptor: &ShmBlobRef) -> Result<&[u8], ArenaError> {
        let out_of_bounds = ArenaError::OutOfBounds {
            offset: descriptor.offset,
            len: descriptor.len,
            capacity: self.capacity(),
        };
        let (Ok(offset), Ok(len)) = (
            usize::try_from(descriptor.offset),
            usize::try_from(descriptor.len),
        ) else {
            return Err(out_of_bounds);
        };
        let end = offset
            .checked_add(HEADER_LEN)
            .and_then(|start| start.checked_add(len))
            .filter(|end| *end <= self.capacity())
            .ok_or(out_of_bounds)?;
        let header = &self.bytes[offset..offset + HEADER_LEN];
        let word = |range: std::ops::Range<usize>| {
            let mut buffer = [0u8; 8];
            buffer[..range.len()].copy_from_slice(&header[range]);
            u64::from_le_bytes(buffer)
        };
        let checks: [(&'static str, u64, u64); 7] = [
            ("magic", word(0..4), u64::from(MAGIC)),
            ("version", word(4..6), u64::from(HEADER_VERSION)),
            ("header_len", word(6..8), HEADER_LEN as u64),
            ("generation", word(8..16), descriptor.generation),
            ("epoch", word(16..24), descriptor.epoch),
            ("len", word(24..32), descriptor.len),
            ("checksum", word(32..40), descriptor.checksum),
        ];
        if let Some((field, _, _)) = checks.iter().find(|(_, found, wanted)| found != wanted) {
            return Err(ArenaError::HeaderMismatch { field });
        }
        let payload = &self.bytes[offset + HEADER_LEN..end];
        let actual = fnv1a64(payload);
        if actual != descriptor.checksum {
            return Err(ArenaError::ChecksumMismatch {
                expected: descriptor.checksum,
                actual,
            });
        }
        Ok(payload)
    }
}

/// The 40-byte header for a descriptor.
pub fn header_bytes(descriptor: &ShmBlobRef) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    header[4..6].copy_from_slice(&HEADER_VERSION.to_le_bytes());
    header[6..8].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
    header[8..16].copy_from_slice(&descriptor.generation.to_le_bytes());
    header[16..24].copy_from_slice(&descriptor.epoch.to_le_bytes());
    header[24..32].copy_from_slice(&descriptor.len.to_le_bytes());
    header[32..40].copy_from_slice(&descriptor.checksum.to_le_bytes());
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_reference_values() {
        // Published FNV-1a-64 test values.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn write_read_and_detect_tampering() {
        let mut arena = ShmBlobArena::with_capacity(128).unwrap();
        let first = arena.write_blob(9, b"hello").unwrap();
        assert_eq!(first.offset, 0);
        assert_eq!(arena.read_blob(&first).unwrap(), b"hello");
        assert_eq!(magic_text(), "LZSH");
        assert_eq!(&arena.header_at(0).unwrap()[..4], b"HSZL");

        let second = arena.write_blob(10, &[7; 20]).unwrap();
        assert_eq!(second.offset, 45);
        // Does not fit after the second blob: wraps and overwrites the first.
        let third = arena.write_blob(11, &[1; 40]).unwrap();
        assert_eq!(third.offset, 0);
        assert_eq!(
            arena.read_blob(&first),
            Err(ArenaError::HeaderMismatch {
                field: "generation"
            })
        );

        let mut wrong = third;
        wrong.checksum ^= 1;
        assert_eq!(
            arena.read_blob(&wrong),
            Err(ArenaError::HeaderMismatch { field: "checksum" })
        );
        wrong = third;
        wrong.offset = u64::MAX;
        assert!(matches!(
            arena.read_blob(&wrong),
            Err(ArenaError::OutOfBounds { .. })
        ));
        assert!(matches!(
            arena.write_blob(1, &[0; 89]),
            Err(ArenaError::BlobTooLarge { .. })
        ));
        assert!(ShmBlobArena::with_capacity(40).is_err());
    }
}
