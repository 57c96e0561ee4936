//! The codec the tour's property campaign tests: a message of key/value fields.
//!
//! Wire form: a LEB128 varint field count, then per field the key's length
//! (varint) and UTF-8 bytes, and the value as a zig-zag varint. The codec
//! comes in two builds: [`ZigZag::Correct`], and [`ZigZag::Planted`], which
//! carries a classic bug on purpose: the zig-zag step of 32-bit integers
//! (`n >> 31`) applied to 64-bit ones. Values in `-2^31..2^31` still survive
//! the round trip, so small tests pass; the smallest value that breaks is
//! `2^31`, which makes the minimal failing message known in advance.

use std::fmt;

/// One field of a message.
#[derive(Clone, Debug, PartialEq, Eq, geist::Generate)]
pub struct Field {
    /// The field's name.
    #[geist(with = geist::generators::text().max_size(8))]
    pub key: String,
    /// The field's value.
    pub value: i64,
}

/// How signed values are mapped to unsigned ones before varint encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZigZag {
    /// `(n << 1) ^ (n >> 63)`: every `i64` survives.
    Correct,
    /// `(n << 1) ^ (n >> 31)`: the 32-bit shift, the planted bug.
    Planted,
}

impl ZigZag {
    fn encode(self, n: i64) -> u64 {
        let sign = match self {
            ZigZag::Correct => n >> 63,
            ZigZag::Planted => n >> 31,
        };
        ((n << 1) ^ sign) as u64
    }
}

fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// Why bytes do not decode to a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end inside a varint or a key.
    Truncated,
    /// A varint longer than ten bytes or above `u64::MAX`.
    VarintTooLong,
    /// A key that is not UTF-8.
    KeyNotUtf8,
    /// Bytes left after the last field.
    TrailingBytes(usize),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "truncated"),
            DecodeError::VarintTooLong => write!(f, "varint too long"),
            DecodeError::KeyNotUtf8 => write!(f, "key is not UTF-8"),
            DecodeError::TrailingBytes(n) => write!(f, "{n} trailing bytes"),
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Encodes `fields` with the given zig-zag step.
pub fn encode(fields: &[Field], zigzag: ZigZag) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, fields.len() as u64);
    for field in fields {
        put_varint(&mut out, field.key.len() as u64);
        out.extend_from_slice(field.key.as_bytes());
        put_varint(&mut out, zigzag.encode(field.value));
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = *self.bytes.get(self.at).ok_or(DecodeError::Truncated)?;
            self.at += 1;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && bits > 1 {
                return Err(DecodeError::VarintTooLong);
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::VarintTooLong)
    }

    fn take(&mut self, n: u64) -> Result<&[u8], DecodeError> {
        let n = usize::try_from(n).map_err(|_| DecodeError::Truncated)?;
        let end = self.at.checked_add(n).ok_or(DecodeError::Truncated)?;
        let part = self.bytes.get(self.at..end).ok_or(DecodeError::Truncated)?;
        self.at = end;
        Ok(part)
    }
}

/// Decodes a message (the decoder is the same for both builds).
pub fn decode(bytes: &[u8]) -> Result<Vec<Field>, DecodeError> {
    let mut reader = Reader { bytes, at: 0 };
    let count = reader.varint()?;
    let mut fields = Vec::new();
    for _ in 0..count {
        let length = reader.varint()?;
        let key = std::str::from_utf8(reader.take(length)?)
            .map_err(|_| DecodeError::KeyNotUtf8)?
            .to_string();
        let value = unzigzag(reader.varint()?);
        fields.push(Field { key, value });
    }
    match bytes.len() - reader.at {
        0 => Ok(fields),
        n => Err(DecodeError::TrailingBytes(n)),
    }
}

/// Whether `fields` survive encoding with `zigzag` and decoding.
pub fn round_trips(fields: &[Field], zigzag: ZigZag) -> bool {
    decode(&encode(fields, zigzag)).as_deref() == Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(key: &str, value: i64) -> Field {
        Field {
            key: key.to_string(),
            value,
        }
    }

    #[test]
    fn the_correct_build_round_trips_the_extremes() {
        for value in [0, 1, -1, i64::MAX, i64::MIN, 1 << 31, -(1 << 31) - 1] {
            let fields = [field("k", value), field("", -(value / 2))];
            assert!(round_trips(&fields, ZigZag::Correct), "{value}");
        }
    }

    #[test]
    fn the_planted_bug_starts_at_two_to_the_thirty_one() {
        assert!(round_trips(&[field("", (1 << 31) - 1)], ZigZag::Planted));
        assert!(round_trips(&[field("", -(1 << 31))], ZigZag::Planted));
        assert!(!round_trips(&[field("", 1 << 31)], ZigZag::Planted));
        assert!(!round_trips(&[field("", -(1 << 31) - 1)], ZigZag::Planted));
    }

    #[test]
    fn known_bytes() {
        assert_eq!(
            encode(&[field("a", -1), field("", 300)], ZigZag::Correct),
            vec![2, 1, b'a', 1, 0, 0xd8, 0x04]
        );
    }

    #[test]
    fn refuses_malformed_input() {
        assert_eq!(decode(&[]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[1, 1]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[0, 0]), Err(DecodeError::TrailingBytes(1)));
        assert_eq!(decode(&[1, 1, 0xff, 0]), Err(DecodeError::KeyNotUtf8));
        assert_eq!(decode(&[0xff; 11]), Err(DecodeError::VarintTooLong));
    }
}
