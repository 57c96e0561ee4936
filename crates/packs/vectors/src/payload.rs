//! The text encodings that carry binary data inside a vector's JSON.
//!
//! The seed schema writes bytes as lowercase hex with a `0x` prefix; later
//! format versions use standard base64 (RFC 4648, padded). State trees travel
//! gzipped on top of that. Each decoder names the JSON path of the string it
//! was given, so an error points at the field, not just at the vector.

use base64::Engine as _;
use std::io::Read as _;

/// The first two bytes of every gzip member.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How a binary field is written in the JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BinaryText {
    /// `0x`-prefixed lowercase hex (the seed schema).
    Hex,
    /// Standard padded base64 (schema v0.0.5 and later).
    Base64,
}

/// Why a binary field could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// Hex text without the `0x` prefix the seed schema requires.
    #[error("{path}: hex value must start with 0x")]
    MissingHexPrefix {
        /// JSON pointer of the field.
        path: String,
    },
    /// Hex text with a bad digit, an uppercase digit or an odd length.
    #[error("{path}: invalid hex at character {offset}: {reason}")]
    Hex {
        /// JSON pointer of the field.
        path: String,
        /// Character offset after the `0x` prefix.
        offset: usize,
        /// The rule broken.
        reason: String,
    },
    /// Text that is not standard padded base64.
    #[error("{path}: invalid base64: {reason}")]
    Base64 {
        /// JSON pointer of the field.
        path: String,
        /// The decoder's explanation (with the offending offset).
        reason: String,
    },
    /// Bytes that do not start with the gzip magic number.
    #[error("{path}: not gzip data (starts with {found}, gzip starts with 1f 8b)")]
    NotGzip {
        /// JSON pointer of the field.
        path: String,
        /// The first bytes found, in hex.
        found: String,
    },
    /// A gzip stream that inflates past the limit (a gzip bomb, or a limit set too low).
    #[error(
        "{path}: gzip stream inflates past the {limit}-byte limit on the CAR (raise it with --max-car-size)"
    )]
    TooLarge {
        /// JSON pointer of the field.
        path: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// A gzip stream that fails to decompress (truncated, bad CRC, ...).
    #[error("{path}: gzip stream is corrupt: {reason}")]
    Gzip {
        /// JSON pointer of the field.
        path: String,
        /// The decompressor's explanation.
        reason: String,
    },
}

impl PayloadError {
    /// JSON pointer of the field at fault.
    pub fn path(&self) -> &str {
        match self {
            PayloadError::MissingHexPrefix { path }
            | PayloadError::Hex { path, .. }
            | PayloadError::Base64 { path, .. }
            | PayloadError::NotGzip { path, .. }
            | PayloadError::Gzip { path, .. }
            | PayloadError::TooLarge { path, .. } => path,
        }
    }
}

/// Decodes `0x`-prefixed lowercase hex, as the seed schema's `hex` definition describes.
pub fn decode_hex(text: &str, path: &str) -> Result<Vec<u8>, PayloadError> {
    let digits = text
        .strip_prefix("0x")
        .ok_or_else(|| PayloadError::MissingHexPrefix {
            path: path.to_string(),
        })?;
    if let Some(offset) = digits.bytes().position(|b| b.is_ascii_uppercase()) {
        return Err(PayloadError::Hex {
            path: path.to_string(),
            offset,
            reason: "uppercase digit (the schema allows lowercase only)".to_string(),
        });
    }
    hex::decode(digits).map_err(|error| {
        let offset = match error {
            hex::FromHexError::InvalidHexCharacter { index, .. } => index,
            _ => digits.len(),
        };
        PayloadError::Hex {
            path: path.to_string(),
            offset,
            reason: error.to_string(),
        }
    })
}

/// Decodes standard padded base64 (RFC 4648 section 4).
pub fn decode_base64(text: &str, path: &str) -> Result<Vec<u8>, PayloadError> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|error| PayloadError::Base64 {
            path: path.to_string(),
            reason: error.to_string(),
        })
}

/// Decodes a binary field written in `encoding`.
pub fn decode_binary(
    text: &str,
    encoding: BinaryText,
    path: &str,
) -> Result<Vec<u8>, PayloadError> {
    match encoding {
        BinaryText::Hex => decode_hex(text, path),
        BinaryText::Base64 => decode_base64(text, path),
    }
}

/// Encodes bytes as standard padded base64.
pub fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Encodes bytes in the seed schema's `0x`-prefixed lowercase hex.
pub fn encode_hex(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

/// Whether bytes start like a gzip stream.
pub fn looks_gzipped(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// The default largest inflated CAR: 128 MiB.
pub const DEFAULT_MAX_CAR_SIZE: u64 = 128 << 20;

/// Decompresses a gzip stream (all members) of at most [`DEFAULT_MAX_CAR_SIZE`] bytes.
pub fn gunzip(bytes: &[u8], path: &str) -> Result<Vec<u8>, PayloadError> {
    gunzip_limited(bytes, path, DEFAULT_MAX_CAR_SIZE)
}

/// Decompresses a gzip stream (all members), checking the magic number first
/// and stopping once more than `limit` bytes come out.
pub fn gunzip_limited(bytes: &[u8], path: &str, limit: u64) -> Result<Vec<u8>, PayloadError> {
    if !looks_gzipped(bytes) {
        let found = bytes
            .iter()
            .take(4)
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        let found = if found.is_empty() {
            "nothing (empty)".to_string()
        } else {
            found
        };
        return Err(PayloadError::NotGzip {
            path: path.to_string(),
            found,
        });
    }
    let capacity = (bytes.len() as u64).saturating_mul(4).min(limit);
    let mut out = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    flate2::read::MultiGzDecoder::new(bytes)
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|error| PayloadError::Gzip {
            path: path.to_string(),
            reason: error.to_string(),
        })?;
    if out.len() as u64 > limit {
        return Err(PayloadError::TooLarge {
            path: path.to_string(),
            limit,
        });
    }
    Ok(out)
}

/// Compresses bytes with gzip (used to build vectors and tampered copies).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_needs_the_prefix_and_lowercase_digits() {
        assert_eq!(decode_hex("0x", "/a").unwrap(), Vec::<u8>::new());
        assert_eq!(decode_hex("0xa1b2", "/a").unwrap(), vec![0xa1, 0xb2]);
        assert!(matches!(
            decode_hex("a1", "/a"),
            Err(PayloadError::MissingHexPrefix { .. })
        ));
        assert!(matches!(
            decode_hex("0xA1", "/a"),
            Err(PayloadError::Hex { offset: 0, .. })
        ));
        let error = decode_hex("0xa1zz", "/car_bytes").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("/car_bytes: invalid hex at character 2"),
            "{error}"
        );
        assert!(matches!(
            decode_hex("0xa", "/a"),
            Err(PayloadError::Hex { .. })
        ));
    }

    #[test]
    fn base64_is_standard_and_padded() {
        assert_eq!(decode_base64("", "/r").unwrap(), Vec::<u8>::new());
        assert_eq!(
            decode_base64("hBkCFvQAQA==", "/r").unwrap(),
            vec![0x84, 0x19, 0x02, 0x16, 0xf4, 0x00, 0x40]
        );
        assert!(decode_base64("hBkCFvQAQA", "/r").is_err());
        assert!(
            decode_base64("h_kC", "/r")
                .unwrap_err()
                .to_string()
                .starts_with("/r: invalid base64")
        );
    }

    #[test]
    fn gzip_round_trips_and_rejects_non_gzip_and_truncation() {
        let data = b"a CAR would be here".repeat(20);
        let packed = gzip(&data);
        assert_eq!(gunzip(&packed, "/car").unwrap(), data);
        let error = gunzip(&[0x89, 0x00], "/car").unwrap_err();
        assert_eq!(
            error.to_string(),
            "/car: not gzip data (starts with 89 00, gzip starts with 1f 8b)"
        );
        assert!(matches!(
            gunzip(&packed[..packed.len() - 6], "/car"),
            Err(PayloadError::Gzip { .. })
        ));
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_limit() {
        let bomb = gzip(&vec![0u8; 8 << 20]);
        assert!(bomb.len() < 64 << 10, "{}", bomb.len());
        let error = gunzip_limited(&bomb, "/car", 1 << 20).unwrap_err();
        assert_eq!(
            error.to_string(),
            "/car: gzip stream inflates past the 1048576-byte limit on the CAR (raise it with --max-car-size)"
        );
        assert_eq!(
            gunzip_limited(&bomb, "/car", 8 << 20).unwrap().len(),
            8 << 20
        );
    }
}
