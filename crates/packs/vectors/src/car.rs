//! CARv1 archives: the container of a vector's pre- and post-state trees.
//!
//! A CAR is a varint-length-prefixed DAG-CBOR header (`{roots, version}`)
//! followed by sections, each a varint length, a CID and the block's bytes.
//! The CID and header are decoded with the `cid` and `serde_ipld_dagcbor`
//! crates; only the length-prefix framing is read here, so that every error
//! names the byte offset where the archive went wrong and so that a damaged
//! block does not stop the reading of the ones after it (see [`integrity`]).
//!
//! [`integrity`]: crate::integrity

use cid::Cid;
use std::io::Cursor;

/// The longest block accepted; the largest real state-tree blocks are a few hundred KB.
pub const MAX_BLOCK_LEN: usize = 64 << 20;

/// One block of a CAR: its claimed CID, its bytes and where it sat in the archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarBlock {
    /// The CID written in front of the block (what the block claims to be).
    pub cid: Cid,
    /// The block's bytes.
    pub data: Vec<u8>,
    /// Byte offset of the section (its length prefix) in the uncompressed CAR.
    pub offset: usize,
}

/// A parsed CARv1 archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarArchive {
    /// The header's root CIDs.
    pub roots: Vec<Cid>,
    /// The blocks, in archive order.
    pub blocks: Vec<CarBlock>,
    /// Length of the uncompressed archive in bytes.
    pub len: usize,
}

/// Why bytes are not a CARv1 archive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CarError {
    /// A length varint that is truncated or malformed.
    #[error("CAR byte {offset}: bad length varint: {reason}")]
    Varint {
        /// Byte offset of the varint.
        offset: usize,
        /// The decoder's explanation.
        reason: String,
    },
    /// A section or header that runs past the end of the archive.
    #[error("CAR byte {offset}: {what} of {len} bytes runs past the end ({available} bytes left)")]
    Truncated {
        /// Byte offset of the section's payload.
        offset: usize,
        /// "header" or "section".
        what: &'static str,
        /// The length the prefix announced.
        len: usize,
        /// Bytes actually left.
        available: usize,
    },
    /// A header that is not DAG-CBOR `{roots: [CID], version: int}`.
    #[error("CAR byte {offset}: header is not a DAG-CBOR {{roots, version}} map: {reason}")]
    Header {
        /// Byte offset of the header payload.
        offset: usize,
        /// The decoder's explanation.
        reason: String,
    },
    /// A header whose version is not 1.
    #[error("CAR header declares version {0}, only CARv1 is supported")]
    Version(u64),
    /// A section whose CID cannot be parsed.
    #[error("CAR byte {offset}: section CID is malformed: {reason}")]
    Cid {
        /// Byte offset of the section payload.
        offset: usize,
        /// The decoder's explanation.
        reason: String,
    },
    /// A section longer than [`MAX_BLOCK_LEN`].
    #[error("CAR byte {offset}: section of {len} bytes exceeds the {MAX_BLOCK_LEN}-byte limit")]
    TooLong {
        /// Byte offset of the section.
        offset: usize,
        /// Announced length.
        len: usize,
    },
}

#[derive(serde::Deserialize, serde::Serialize)]
struct CarHeader {
    roots: Vec<Cid>,
    version: u64,
}

impl CarArchive {
    /// Parses an uncompressed CARv1 archive.
    pub fn parse(bytes: &[u8]) -> Result<CarArchive, CarError> {
        let (header_len, header_start) = read_length(bytes, 0)?;
        let header_bytes = take(bytes, header_start, header_len, "header")?;
        let header: CarHeader =
            serde_ipld_dagcbor::from_slice(header_bytes).map_err(|error| CarError::Header {
                offset: header_start,
                reason: describe_decode_error(&error),
            })?;
        if header.version != 1 {
            return Err(CarError::Version(header.version));
        }
        let mut blocks = Vec::new();
        let mut position = header_start + header_len;
        while position < bytes.len() {
            let offset = position;
            let (len, payload_start) = read_length(bytes, position)?;
            if len > MAX_BLOCK_LEN {
                return Err(CarError::TooLong { offset, len });
            }
            let section = take(bytes, payload_start, len, "section")?;
            let mut cursor = Cursor::new(section);
            let cid = Cid::read_bytes(&mut cursor).map_err(|error| CarError::Cid {
                offset: payload_start,
                reason: error.to_string(),
            })?;
            let data_start = cursor.position() as usize;
            blocks.push(CarBlock {
                cid,
                data: section[data_start..].to_vec(),
                offset,
            });
            position = payload_start + len;
        }
        Ok(CarArchive {
            roots: header.roots,
            blocks,
            len: bytes.len(),
        })
    }

    /// Writes a CARv1 archive with these roots and blocks (for building test vectors).
    pub fn write(roots: &[Cid], blocks: &[(Cid, Vec<u8>)]) -> Vec<u8> {
        let header = CarHeader {
            roots: roots.to_vec(),
            version: 1,
        };
        // Serializing a struct of CIDs and an integer into a Vec cannot fail.
        let header_bytes = serde_ipld_dagcbor::to_vec(&header).unwrap_or_default();
        let mut out = Vec::new();
        write_length(header_bytes.len(), &mut out);
        out.extend_from_slice(&header_bytes);
        for (cid, data) in blocks {
            let cid_bytes = cid.to_bytes();
            write_length(cid_bytes.len() + data.len(), &mut out);
            out.extend_from_slice(&cid_bytes);
            out.extend_from_slice(data);
        }
        out
    }

    /// Total bytes of block data (without CIDs and framing).
    pub fn block_bytes(&self) -> usize {
        self.blocks.iter().map(|block| block.data.len()).sum()
    }
}

/// A DAG-CBOR decoding error in words (the decoder's own text is its Rust debug form).
pub fn describe_decode_error<E: std::fmt::Display>(
    error: &serde_ipld_dagcbor::DecodeError<E>,
) -> String {
    use serde_ipld_dagcbor::DecodeError as D;
    match error {
        D::Msg(message) => message.clone(),
        D::Read(error) => format!("read error: {error}"),
        D::Eof { name, .. } => format!("the data ends inside a {name}"),
        D::Mismatch { name, found } => format!("expected a {name}, found byte 0x{found:02x}"),
        D::Unsupported { name, found } => {
            format!("unsupported byte 0x{found:02x} where a {name} was expected")
        }
        D::RequireLength { name, .. } => format!("a {name} is shorter than it must be"),
        D::RequireBorrowed { name } => format!("a {name} cannot be borrowed"),
        D::RequireUtf8 { name } => format!("a {name} is not valid UTF-8"),
        D::LengthOverflow { name, .. } => format!("the length of a {name} overflows"),
        D::CastOverflow { name } => format!("a {name} is out of range"),
        D::ArithmeticOverflow { name, .. } => format!("a {name} overflows"),
        D::DepthOverflow { name } => format!("a {name} is nested too deeply"),
        D::LengthMismatch {
            name,
            expect,
            value,
        } => format!("a {name} has {value} items where {expect} were expected"),
        D::TrailingData => "bytes follow the value".to_string(),
        D::IndefiniteSize => "an indefinite-length item (not DAG-CBOR)".to_string(),
        D::NonMinimal { name, .. } => format!("a {name} is not minimally encoded"),
        D::UnorderedKey => "map keys are not in DAG-CBOR order".to_string(),
        #[allow(unreachable_patterns)]
        _ => "not DAG-CBOR".to_string(),
    }
}

fn read_length(bytes: &[u8], offset: usize) -> Result<(usize, usize), CarError> {
    let rest = bytes.get(offset..).unwrap_or_default();
    let (len, remaining) =
        unsigned_varint::decode::usize(rest).map_err(|error| CarError::Varint {
            offset,
            reason: error.to_string(),
        })?;
    Ok((len, offset + (rest.len() - remaining.len())))
}

fn take<'a>(
    bytes: &'a [u8],
    start: usize,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8], CarError> {
    let available = bytes.len().saturating_sub(start);
    start
        .checked_add(len)
        .and_then(|end| bytes.get(start..end))
        .ok_or(CarError::Truncated {
            offset: start,
            what,
            len,
            available,
        })
}

fn write_length(len: usize, out: &mut Vec<u8>) {
    let mut buffer = unsigned_varint::encode::usize_buffer();
    out.extend_from_slice(unsigned_varint::encode::usize(len, &mut buffer));
}

#[cfg(test)]
mod tests {
    use super::*;
    use multihash_codetable::{Code, MultihashDigest as _};

    fn raw_block(data: &[u8]) -> (Cid, Vec<u8>) {
        (
            Cid::new_v1(0x55, Code::Blake2b256.digest(data)),
            data.to_vec(),
        )
    }

    #[test]
    fn written_archives_parse_back_with_offsets() {
        let blocks = vec![raw_block(b"one"), raw_block(b"two")];
        let bytes = CarArchive::write(&[blocks[0].0], &blocks);
        let archive = CarArchive::parse(&bytes).unwrap();
        assert_eq!(archive.roots, vec![blocks[0].0]);
        assert_eq!(archive.blocks.len(), 2);
        assert_eq!(archive.blocks[1].data, b"two");
        assert!(archive.blocks[0].offset < archive.blocks[1].offset);
        assert_eq!(archive.block_bytes(), 6);
    }

    #[test]
    fn truncation_and_garbage_name_the_byte_offset() {
        let blocks = vec![raw_block(b"one")];
        let bytes = CarArchive::write(&[blocks[0].0], &blocks);
        let error = CarArchive::parse(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(
            matches!(
                error,
                CarError::Truncated {
                    what: "section",
                    ..
                }
            ),
            "{error}"
        );
        assert!(matches!(
            CarArchive::parse(&[]),
            Err(CarError::Varint { offset: 0, .. })
        ));
        assert!(matches!(
            CarArchive::parse(&[0x02, 0xff, 0xff]),
            Err(CarError::Header { offset: 1, .. })
        ));
        assert!(matches!(
            CarArchive::parse(&[0x09, 0x00]),
            Err(CarError::Truncated { what: "header", .. })
        ));
    }
}
