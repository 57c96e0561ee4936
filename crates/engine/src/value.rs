//! Values: what schemas describe and what generation produces.
//!
//! The engine knows no wire format; a protocol layer converts its payloads to
//! and from [`Value`]. Integers of any size are plain integers here (how a
//! format spells a big one, e.g. a CBOR bignum, is its own business). Strings are kept as "WTF-8" bytes (UTF-8 that may encode
//! surrogates) because Hegel strings may carry surrogate code points.

/// A generated or schema-supplied value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Null / None.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer within the 128-bit signed range.
    Integer(i128),
    /// An integer outside the 128-bit signed range (never one inside it:
    /// build integers with [`Value::from_big_integer`], which keeps that so).
    BigInteger(BigInt),
    /// A float.
    Float(f64),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A string as WTF-8 bytes.
    String(Vec<u8>),
    /// An array (lists, tuples, dict entries as `[k, v]`).
    Array(Vec<Value>),
    /// A map, in insertion order.
    Map(Vec<(Value, Value)>),
    /// A value under a tag of the caller's encoding that the engine has no
    /// meaning for: passed through untouched, never built by the engine.
    Tagged(u64, Box<Value>),
}

impl Value {
    /// A string value from text.
    pub fn text(s: &str) -> Value {
        Value::String(s.as_bytes().to_vec())
    }

    /// A string value from code points (surrogates encoded as WTF-8).
    pub fn from_code_points(points: &[u32]) -> Value {
        Value::String(encode_wtf8(points))
    }

    /// An integer of any size: [`Value::Integer`] when it fits in 128 bits.
    pub fn from_big_integer(n: BigInt) -> Value {
        match i128::try_from(&n) {
            Ok(small) => Value::Integer(small),
            Err(_) => Value::BigInteger(n),
        }
    }

    /// The integer this value holds, of any size.
    pub fn as_big_integer(&self) -> Option<BigInt> {
        match self {
            Value::Integer(n) => Some(BigInt::from(*n)),
            Value::BigInteger(n) => Some(n.clone()),
            _ => None,
        }
    }

    /// The text of a string value, if it is valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    /// The entry under a string key of a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// A short description of the value's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Integer(_) | Value::BigInteger(_) => "integer",
            Value::Float(_) => "float",
            Value::Bytes(_) => "bytes",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Map(_) => "map",
            Value::Tagged(..) => "tagged value",
        }
    }

    /// Equality for uniqueness checks: floats by bit pattern except that 0.0 == -0.0
    /// is treated like Python (equal), NaN never equal to itself.
    pub fn same_as(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Integer(a), Value::Float(b)) | (Value::Float(b), Value::Integer(a)) => {
                (*a as f64) == *b
            }
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_as(y))
            }
            _ => self == other,
        }
    }
}

use num_bigint::BigInt;

/// Encodes code points as WTF-8 (UTF-8 that also encodes lone surrogates).
pub fn encode_wtf8(points: &[u32]) -> Vec<u8> {
    encode_wtf8_with_room(points, 0)
}

/// How many bytes `points` take in WTF-8 (as in UTF-8: 1 to 4 a code point).
pub fn wtf8_len(points: &[u32]) -> usize {
    points
        .iter()
        .map(|&c| match c {
            0..0x80 => 1,
            0x80..0x800 => 2,
            0x800..0x10000 => 3,
            _ => 4,
        })
        .sum()
}

/// Encodes code points as UTF-8 into a string with room for `extra` more
/// bytes (a terminating NUL), sized once; `None` when one of them is not a
/// Unicode scalar value (a lone surrogate, which only WTF-8 encodes). Saves
/// a caller that wants a `String` the validating pass over WTF-8 bytes.
pub fn encode_utf8_with_room(points: &[u32], extra: usize) -> Option<String> {
    // One pass checks every point and sizes the buffer, the other writes
    // the bytes (a `String` push per character checks and grows each time).
    let mut len = 0;
    for &c in points {
        len += match c {
            0..0x80 => 1,
            0x80..0x800 => 2,
            0xD800..0xE000 => return None,
            0x800..0x10000 => 3,
            0x10000..0x11_0000 => 4,
            _ => return None,
        };
    }
    let mut out = Vec::with_capacity(len + extra);
    push_wtf8(&mut out, points);
    // SAFETY: every point is a Unicode scalar value (checked above: no
    // surrogate, none past U+10FFFF), whose WTF-8 is its UTF-8.
    Some(unsafe { String::from_utf8_unchecked(out) })
}

/// Appends the WTF-8 of `points` to `out`.
#[inline(always)]
fn push_wtf8(out: &mut Vec<u8>, points: &[u32]) {
    for &c in points {
        match c {
            0..=0x7F => out.push(c as u8),
            0x80..=0x7FF => {
                out.push(0xC0 | (c >> 6) as u8);
                out.push(0x80 | (c & 0x3F) as u8);
            }
            0x800..=0xFFFF => {
                out.push(0xE0 | (c >> 12) as u8);
                out.push(0x80 | ((c >> 6) & 0x3F) as u8);
                out.push(0x80 | (c & 0x3F) as u8);
            }
            _ => {
                out.push(0xF0 | (c >> 18) as u8);
                out.push(0x80 | ((c >> 12) & 0x3F) as u8);
                out.push(0x80 | ((c >> 6) & 0x3F) as u8);
                out.push(0x80 | (c & 0x3F) as u8);
            }
        }
    }
}

/// [`encode_wtf8`] into a vector with room for `extra` more bytes (a
/// terminating NUL), sized once: no regrowth for non-ASCII text.
pub fn encode_wtf8_with_room(points: &[u32], extra: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(wtf8_len(points) + extra);
    push_wtf8(&mut out, points);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_encoding_matches_wtf8_and_refuses_surrogates() {
        let points = [0x41, 0xE9, 0x20AC, 0x1F600, 0];
        let text = encode_utf8_with_room(&points, 1).expect("scalar values");
        assert_eq!(text.as_bytes(), encode_wtf8(&points).as_slice());
        assert!(text.capacity() > text.len());
        assert_eq!(encode_utf8_with_room(&[0x41, 0xD800], 0), None);
        assert_eq!(encode_utf8_with_room(&[0x11_0000], 0), None);
    }

    /// Every code point at and beside each encoding-length boundary, and
    /// around the surrogates: what `char`'s own encoding gives, or `None`
    /// for exactly the points that are not scalar values.
    #[test]
    fn utf8_encoding_is_chars_at_every_boundary() {
        let mut points = Vec::new();
        for edge in [0x80u32, 0x800, 0xD800, 0xE000, 0x1_0000, 0x11_0000] {
            points.extend(edge.saturating_sub(2)..edge + 2);
        }
        points.extend([0, u32::MAX, 0xDFFF, 0x10_FFFF]);
        for &c in &points {
            assert_eq!(wtf8_len(&[c]), encode_wtf8(&[c]).len(), "{c:#x}");
            let expected = char::from_u32(c).map(String::from);
            assert_eq!(encode_utf8_with_room(&[c], 1), expected, "{c:#x}");
            assert_eq!(encode_utf8_with_room(&[0x41, c, 0xE9], 0), {
                char::from_u32(c).map(|ch| format!("A{ch}\u{e9}"))
            });
        }
        let scalars: Vec<u32> = points
            .iter()
            .copied()
            .filter(|&c| char::from_u32(c).is_some())
            .collect();
        let expected: String = scalars.iter().filter_map(|&c| char::from_u32(c)).collect();
        assert_eq!(encode_utf8_with_room(&scalars, 0), Some(expected));
    }

    #[test]
    fn wtf8_matches_utf8_for_scalar_values() {
        let s = "a\u{e9}\u{2603}\u{1F600}";
        let points: Vec<u32> = s.chars().map(|c| c as u32).collect();
        assert_eq!(encode_wtf8(&points), s.as_bytes());
        assert_eq!(encode_wtf8(&[0xD800]), vec![0xED, 0xA0, 0x80]);
    }

    #[test]
    fn integers_that_fit_128_bits_are_never_big() {
        assert_eq!(
            Value::from_big_integer(BigInt::from(i128::MIN)),
            Value::Integer(i128::MIN)
        );
        let beyond = BigInt::from(u128::MAX);
        assert_eq!(
            Value::from_big_integer(beyond.clone()),
            Value::BigInteger(beyond.clone())
        );
        assert_eq!(
            Value::BigInteger(beyond.clone()).as_big_integer(),
            Some(beyond)
        );
    }
}
