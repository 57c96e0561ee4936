//! The entry format: one failing choice sequence as bytes.
//!
//! `GEDB`, a format version, the number of choices, then each choice tagged by
//! kind (integers as zigzag varints). The same bytes are the database's values
//! in every backend and the protocol's `failure_blob`s (base64), so an entry
//! moves between backends, export files and clients unchanged.

use crate::choice::ChoiceValue;

/// Why bytes are not an entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Written by a geist that uses another version of the format: kept, not replayed.
    #[error("unsupported example format version {0} (this geist reads version {FORMAT_VERSION})")]
    UnsupportedVersion(u8),
    /// Not a well-formed entry: truncated, foreign or damaged.
    #[error("{0}")]
    Malformed(String),
}

impl From<String> for EntryError {
    fn from(message: String) -> EntryError {
        EntryError::Malformed(message)
    }
}

impl From<&str> for EntryError {
    fn from(message: &str) -> EntryError {
        EntryError::Malformed(message.to_string())
    }
}

/// The first bytes of every entry.
pub(crate) const MAGIC: &[u8; 4] = b"GEDB";
/// The version of the entry format this geist writes and reads.
pub const FORMAT_VERSION: u8 = 2;

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

    /// A choice count, checked against the bytes left: every value takes at
    /// least two bytes, so a count beyond that is a lie.
    fn count(&mut self) -> Result<usize, String> {
        let count = self.u32()? as usize;
        if count > self.bytes.len() / 2 {
            return Err(format!(
                "claims {count} choices in {} bytes",
                self.bytes.len()
            ));
        }
        Ok(count)
    }

    /// A float's little-endian bit pattern.
    fn float(&mut self) -> Result<ChoiceValue, String> {
        let b = self.take(8)?;
        let mut bits = [0; 8];
        bits.copy_from_slice(b);
        Ok(ChoiceValue::Float(f64::from_bits(u64::from_le_bytes(bits))))
    }

    /// A boolean byte, 0 or 1.
    fn boolean(&mut self) -> Result<ChoiceValue, String> {
        match self.take(1)?[0] {
            0 => Ok(ChoiceValue::Boolean(false)),
            1 => Ok(ChoiceValue::Boolean(true)),
            other => Err(format!("bad boolean byte {other} at {}", self.pos - 1)),
        }
    }

    /// A u32 length, then that many bytes.
    fn bytes(&mut self) -> Result<ChoiceValue, String> {
        let n = self.u32()? as usize;
        Ok(ChoiceValue::Bytes(self.take(n)?.to_vec()))
    }

    /// A u32 count, then that many little-endian u32 code points.
    fn code_points(&mut self) -> Result<ChoiceValue, String> {
        let n = self.u32()? as usize;
        let raw = self.take(n.checked_mul(4).ok_or("string length overflows")?)?;
        let points: Vec<u32> = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if let Some(bad) = points.iter().find(|c| **c > crate::charset::MAX_CODEPOINT) {
            return Err(format!("code point {bad:#x} out of range"));
        }
        Ok(ChoiceValue::String(points))
    }

    /// A count, then that many values, each a tag byte read by `value`,
    /// and nothing after them.
    fn choices(
        &mut self,
        value: impl Fn(&mut Reader<'a>, u8) -> Result<ChoiceValue, EntryError>,
    ) -> Result<Vec<ChoiceValue>, EntryError> {
        let count = self.count()?;
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let tag = self.take(1)?[0];
            out.push(value(self, tag)?);
        }
        self.finish()?;
        Ok(out)
    }

    /// Every byte was read.
    fn finish(&self) -> Result<(), String> {
        match self.bytes.len() - self.pos {
            0 => Ok(()),
            left => Err(format!("{left} trailing bytes")),
        }
    }
}

/// Parses a serialized choice sequence, rejecting anything malformed.
pub fn decode_choices(bytes: &[u8]) -> Result<Vec<ChoiceValue>, EntryError> {
    let mut r = Reader { bytes, pos: 0 };
    if r.take(4)? != MAGIC {
        return Err(EntryError::Malformed(
            "not a geist example (bad magic)".into(),
        ));
    }
    let version = r.take(1)?[0];
    if version != FORMAT_VERSION {
        return Err(EntryError::UnsupportedVersion(version));
    }
    r.choices(|r, tag| {
        Ok(match tag {
            0 => {
                let z = r.varint()?;
                ChoiceValue::Integer(((z >> 1) as i128) ^ -((z & 1) as i128))
            }
            1 => r.float()?,
            2 => r.boolean()?,
            3 => r.bytes()?,
            4 => r.code_points()?,
            other => {
                return Err(EntryError::Malformed(format!(
                    "unknown choice tag {other} at byte {}",
                    r.pos - 1
                )));
            }
        })
    })
}

/// Parses libhegel's (hegeltest-c 0.49's) serialized choice sequence, as its
/// documentation describes it: a little-endian u32 count, then per choice a
/// tag (0 integer, 1 boolean, 2 float, 3 bytes, 4 string, 5 clone) and its
/// value. An integer is width sub-tag 10, a u32 length and that many
/// two's-complement little-endian bytes; the older sub-tags 0-9 are not
/// documented and are refused, and so are clone values (a libhegel
/// clone-stream has no geist counterpart). Floats, booleans, bytes and strings
/// are laid out as in geist's own format.
pub(crate) fn decode_libhegel_choices(bytes: &[u8]) -> Result<Vec<ChoiceValue>, EntryError> {
    let mut r = Reader { bytes, pos: 0 };
    r.choices(|r, tag| {
        Ok(match tag {
            0 => {
                let width = r.take(1)?[0];
                if width != 10 {
                    return Err(EntryError::Malformed(format!(
                        "libhegel integer width sub-tag {width} at byte {} (only 10, a \
                         length-prefixed integer, is read)",
                        r.pos - 1
                    )));
                }
                let at = r.pos;
                let n = r.u32()? as usize;
                ChoiceValue::Integer(twos_complement_le(r.take(n)?).ok_or_else(|| {
                    EntryError::Malformed(format!(
                        "libhegel integer at byte {at} does not fit in 128 bits"
                    ))
                })?)
            }
            1 => r.boolean()?,
            2 => r.float()?,
            3 => r.bytes()?,
            4 => r.code_points()?,
            5 => {
                return Err(EntryError::Malformed(format!(
                    "libhegel clone values (tag 5 at byte {}) have no geist counterpart",
                    r.pos - 1
                )));
            }
            other => {
                return Err(EntryError::Malformed(format!(
                    "unknown libhegel choice tag {other} at byte {}",
                    r.pos - 1
                )));
            }
        })
    })
}

/// A two's-complement little-endian integer, if it fits in an i128 (longer
/// encodings are accepted when the extra bytes only extend the sign).
fn twos_complement_le(raw: &[u8]) -> Option<i128> {
    let Some(&last) = raw.last() else {
        return Some(0);
    };
    let fill = if last & 0x80 != 0 { 0xFF } else { 0 };
    let mut buf = [fill; 16];
    if raw.len() > 16 {
        let (low, high) = raw.split_at(16);
        if high.iter().any(|b| *b != fill) || (low[15] & 0x80 != 0) != (fill == 0xFF) {
            return None;
        }
        buf.copy_from_slice(low);
    } else {
        buf[..raw.len()].copy_from_slice(raw);
    }
    Some(i128::from_le_bytes(buf))
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
        let mut newer = bytes.clone();
        newer[4] = FORMAT_VERSION + 1;
        assert_eq!(
            decode_choices(&newer),
            Err(EntryError::UnsupportedVersion(FORMAT_VERSION + 1))
        );
        let mut lying = bytes.clone();
        lying[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_choices(&lying).is_err());
    }
}
