//! CBOR payloads: encoding, bounded decoding, and the Hegel conventions on top.
//!
//! Hegel payloads are CBOR maps with text keys. Two conventions matter beyond
//! plain CBOR: integers outside the 64-bit range travel as bignums (tag 2 for
//! non-negative, tag 3 for negative, RFC 8949 §3.4.3), and generated strings
//! travel as a tagged byte string of UTF-8 that may hold surrogates (tag 91 in
//! protocol 0.10 and later, tag 6 in the reference document).

pub use ciborium::Value;
use num_bigint::{BigInt, Sign};

/// Tag for a non-negative bignum.
pub const TAG_POSITIVE_BIGNUM: u64 = 2;
/// Tag for a negative bignum (value is -1 - n).
pub const TAG_NEGATIVE_BIGNUM: u64 = 3;
/// The string tag of protocol versions 0.10 and later ("WTF-8" bytes).
pub const TAG_HEGEL_STRING: u64 = 91;
/// The string tag of the reference protocol document.
pub const TAG_REFERENCE_STRING: u64 = 6;

/// Nesting deeper than this is rejected while decoding.
pub const MAX_DEPTH: usize = 256;

/// Why a payload is not acceptable CBOR.
#[derive(Debug, thiserror::Error)]
#[error("invalid CBOR payload: {0}")]
pub struct CborError(pub String);

/// Encodes a value.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    // Writing into a Vec cannot fail, and every ciborium Value is encodable.
    ciborium::into_writer(value, &mut out).expect("CBOR encoding into a Vec");
    out
}

/// Decodes exactly one value occupying all of `bytes`.
///
/// Declared lengths are checked against the bytes that are actually there
/// before anything is allocated, so a short payload claiming a huge string
/// is an error rather than an allocation.
pub fn decode(bytes: &[u8]) -> Result<Value, CborError> {
    check_structure(bytes)?;
    let mut reader = bytes;
    let value: Value = ciborium::de::from_reader_with_recursion_limit(&mut reader, MAX_DEPTH)
        .map_err(|e| CborError(e.to_string()))?;
    if !reader.is_empty() {
        return Err(CborError(format!(
            "{} trailing bytes after the value",
            reader.len()
        )));
    }
    Ok(value)
}

/// Walks the CBOR item headers without building values, checking that every
/// definite length fits in the remaining input and that nesting stays bounded.
fn check_structure(bytes: &[u8]) -> Result<(), CborError> {
    let mut pos = 0usize;
    // Number of items still expected at each open level; u64::MAX marks an
    // indefinite-length container closed by a 0xFF break.
    let mut pending: Vec<u64> = vec![1];
    // Whether the item being read is the content of a bignum tag (2 or 3).
    let mut in_bignum = false;
    while let Some(top) = pending.last_mut() {
        if *top == 0 {
            pending.pop();
            continue;
        }
        if pos >= bytes.len() {
            return Err(CborError(format!("unexpected end of input at byte {pos}")));
        }
        let initial = bytes[pos];
        if initial == 0xFF {
            if *top != u64::MAX {
                return Err(CborError(format!("unexpected break byte at {pos}")));
            }
            pos += 1;
            pending.pop();
            continue;
        }
        if *top != u64::MAX {
            *top -= 1;
        }
        pos += 1;
        let major = initial >> 5;
        let info = initial & 0x1F;
        let argument: Option<u64> = match info {
            0..=23 => Some(u64::from(info)),
            24..=27 => {
                let size = 1usize << (info - 24);
                if bytes.len() - pos < size {
                    return Err(CborError(format!(
                        "unexpected end of input in the header at byte {}",
                        pos - 1
                    )));
                }
                let mut n = 0u64;
                for b in &bytes[pos..pos + size] {
                    n = (n << 8) | u64::from(*b);
                }
                pos += size;
                Some(n)
            }
            31 => None,
            _ => {
                return Err(CborError(format!(
                    "reserved additional information {info} at byte {}",
                    pos - 1
                )));
            }
        };
        let remaining = (bytes.len() - pos) as u64;
        // A bignum over an indefinite-length byte string would decode as a
        // tag, and its re-encoding (definite) as an integer: refused, so that
        // what decodes re-encodes to the same value.
        if std::mem::take(&mut in_bignum) && major == 2 && argument.is_none() {
            return Err(CborError(format!(
                "bignum at byte {} holds an indefinite-length byte string",
                pos - 1
            )));
        }
        match (major, argument) {
            (0 | 1 | 7, Some(_)) => {}
            (2 | 3, Some(len)) => {
                if len > remaining {
                    return Err(CborError(format!(
                        "string at byte {} claims {len} bytes but only {remaining} remain",
                        pos - 1
                    )));
                }
                pos += len as usize;
            }
            (2..=5, None) => pending.push(u64::MAX),
            (4, Some(count)) => {
                if count > remaining {
                    return Err(CborError(format!(
                        "array claims {count} items but only {remaining} bytes remain"
                    )));
                }
                pending.push(count);
            }
            (5, Some(count)) => {
                if count > remaining / 2 {
                    return Err(CborError(format!(
                        "map claims {count} entries but only {remaining} bytes remain"
                    )));
                }
                pending.push(count * 2);
            }
            (6, Some(tag)) => {
                in_bignum = tag == TAG_POSITIVE_BIGNUM || tag == TAG_NEGATIVE_BIGNUM;
                pending.push(1);
            }
            _ => {
                return Err(CborError(format!(
                    "indefinite length not allowed for major type {major} at byte {}",
                    pos - 1
                )));
            }
        }
        if pending.len() > MAX_DEPTH + 1 {
            return Err(CborError(format!("nesting deeper than {MAX_DEPTH}")));
        }
    }
    if pos != bytes.len() {
        return Err(CborError(format!(
            "{} trailing bytes after the value",
            bytes.len() - pos
        )));
    }
    Ok(())
}

/// The entry under a text key of a CBOR map.
pub fn map_get<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Map(entries) => entries
            .iter()
            .find(|(k, _)| matches!(k, Value::Text(t) if t == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// Builds a CBOR map with text keys.
pub fn text_map<I, K>(entries: I) -> Value
where
    I: IntoIterator<Item = (K, Value)>,
    K: Into<String>,
{
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::Text(k.into()), v))
            .collect(),
    )
}

/// An integer as CBOR: a plain integer within the 64-bit ranges, a bignum beyond.
pub fn integer(n: i128) -> Value {
    if (-(1i128 << 64)..(1i128 << 64)).contains(&n) {
        Value::Integer(
            ciborium::value::Integer::try_from(n).expect("within CBOR's native integer range"),
        )
    } else if n >= 0 {
        bignum(false, n as u128)
    } else {
        bignum(true, (-1 - n) as u128)
    }
}

/// A CBOR bignum (tag 2 or 3) with minimal big-endian bytes: `n` itself, or
/// when `negative` the value `-1 - n` (CBOR's encoding of negatives).
pub fn bignum(negative: bool, n: u128) -> Value {
    let tag = if negative {
        TAG_NEGATIVE_BIGNUM
    } else {
        TAG_POSITIVE_BIGNUM
    };
    Value::Tag(tag, Box::new(Value::Bytes(minimal_be(n))))
}

fn minimal_be(n: u128) -> Vec<u8> {
    let bytes = n.to_be_bytes();
    let first = bytes
        .iter()
        .position(|b| *b != 0)
        .unwrap_or(bytes.len() - 1);
    bytes[first..].to_vec()
}

/// Reads an integer (plain or bignum) that fits in an i128.
pub fn as_i128(value: &Value) -> Option<i128> {
    match value {
        Value::Integer(i) => Some(i128::from(*i)),
        Value::Tag(tag @ (TAG_POSITIVE_BIGNUM | TAG_NEGATIVE_BIGNUM), inner) => {
            let Value::Bytes(bytes) = inner.as_ref() else {
                return None;
            };
            let significant: &[u8] = {
                let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
                &bytes[first..]
            };
            if significant.len() > 16 {
                return None;
            }
            let mut magnitude = 0u128;
            for b in significant {
                magnitude = (magnitude << 8) | u128::from(*b);
            }
            if *tag == TAG_POSITIVE_BIGNUM {
                i128::try_from(magnitude).ok()
            } else {
                i128::try_from(magnitude).ok().map(|m| -1 - m)
            }
        }
        _ => None,
    }
}

/// An integer of any size as CBOR: [`integer`] within 128 bits, a bignum
/// (tag 2, or tag 3 holding `-1 - n`) beyond.
pub fn big_integer(n: &BigInt) -> Value {
    if let Ok(small) = i128::try_from(n) {
        return integer(small);
    }
    let (tag, magnitude) = match n.sign() {
        Sign::Minus => (TAG_NEGATIVE_BIGNUM, -(n + 1u8)),
        _ => (TAG_POSITIVE_BIGNUM, n.clone()),
    };
    let (_, bytes) = magnitude.to_bytes_be();
    Value::Tag(tag, Box::new(Value::Bytes(bytes)))
}

/// An integer of any size: a plain integer or a bignum (tag 2 or 3 over a
/// byte string). `None` for anything else.
pub fn as_big_integer(value: &Value) -> Option<BigInt> {
    match value {
        Value::Integer(i) => Some(BigInt::from(i128::from(*i))),
        Value::Tag(tag @ (TAG_POSITIVE_BIGNUM | TAG_NEGATIVE_BIGNUM), inner) => {
            let Value::Bytes(bytes) = inner.as_ref() else {
                return None;
            };
            let magnitude = BigInt::from_bytes_be(Sign::Plus, bytes);
            Some(if *tag == TAG_POSITIVE_BIGNUM {
                magnitude
            } else {
                -1 - magnitude
            })
        }
        _ => None,
    }
}

/// A float value as f64 (integers are accepted too, as clients send `0` for `0.0`).
pub fn as_f64(value: &Value) -> Option<f64> {
    match value {
        Value::Float(f) => Some(*f),
        Value::Integer(i) => Some(i128::from(*i) as f64),
        _ => None,
    }
}

/// Text from a plain text string or either Hegel string tag holding valid UTF-8.
pub fn as_text(value: &Value) -> Option<&str> {
    match value {
        Value::Text(t) => Some(t),
        Value::Tag(TAG_HEGEL_STRING | TAG_REFERENCE_STRING, inner) => match inner.as_ref() {
            Value::Bytes(b) => std::str::from_utf8(b).ok(),
            Value::Text(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_through_bignums() {
        for n in [
            0i128,
            -1,
            u64::MAX as i128,
            u64::MAX as i128 + 1,
            -(1i128 << 64),
            -(1i128 << 64) - 1,
            i128::MAX,
            i128::MIN,
        ] {
            let v = integer(n);
            let back = decode(&encode(&v)).unwrap();
            assert_eq!(as_i128(&back), Some(n), "{n}");
        }
        assert!(matches!(integer(i128::MAX), Value::Tag(2, _)));
        assert!(matches!(integer(i128::MIN), Value::Tag(3, _)));
    }

    #[test]
    fn integers_of_any_size_round_trip() {
        let beyond = BigInt::from(u128::MAX) * 1000u32;
        for n in [
            BigInt::from(0),
            BigInt::from(i128::MAX),
            BigInt::from(i128::MIN),
            BigInt::from(u128::MAX),
            -BigInt::from(u128::MAX) - 7,
            beyond.clone(),
            -beyond,
        ] {
            let v = big_integer(&n);
            let back = decode(&encode(&v)).unwrap();
            assert_eq!(as_big_integer(&back), Some(n.clone()), "{n}");
        }
        assert_eq!(
            big_integer(&BigInt::from(u128::MAX)),
            Value::Tag(2, Box::new(Value::Bytes(vec![0xFF; 16])))
        );
        assert_eq!(
            big_integer(&(-BigInt::from(u128::MAX) - 1)),
            Value::Tag(3, Box::new(Value::Bytes(vec![0xFF; 16])))
        );
    }

    #[test]
    fn bignums_over_indefinite_byte_strings_are_refused() {
        // Found by fuzz/fuzz_targets/server_cbor.rs: `3([_ ])` decoded as a tag
        // and re-decoded, after encoding, as the integer -1.
        for bytes in [
            &[0xC3, 0x5F, 0xFF][..],
            &[0xC2, 0x5F, 0x41, 0x01, 0xFF],
            &[0x81, 0xC3, 0x5F, 0xFF],
        ] {
            let error = decode(bytes).unwrap_err().to_string();
            assert!(error.contains("indefinite-length byte string"), "{error}");
        }
        assert_eq!(decode(&[0xC3, 0x40]).unwrap(), Value::Integer((-1).into()));
        // Other tags may hold indefinite strings.
        assert!(decode(&[0xC6, 0x5F, 0xFF]).is_ok());
        assert!(decode(&[0xC3, 0xC6, 0x5F, 0xFF]).is_ok());
    }

    #[test]
    fn rejects_lies_about_length_and_depth() {
        // A byte string claiming 2^40 bytes.
        let huge = [0x5B, 0, 0, 1, 0, 0, 0, 0, 0];
        assert!(decode(&huge).is_err());
        // An array claiming a billion items.
        assert!(decode(&[0x9A, 0x3B, 0x9A, 0xCA, 0x00]).is_err());
        // 10,000 nested arrays.
        let deep = vec![0x81u8; 10_000];
        assert!(decode(&deep).is_err());
        // Trailing bytes.
        assert!(decode(&[0x01, 0x02]).is_err());
        // Reserved additional info.
        assert!(decode(&[0x1C]).is_err());
        // Empty input.
        assert!(decode(&[]).is_err());
    }

    #[test]
    fn decodes_ordinary_payloads() {
        let v = text_map([
            ("command", Value::Text("generate".into())),
            (
                "schema",
                text_map([("type", Value::Text("integer".into()))]),
            ),
        ]);
        let back = decode(&encode(&v)).unwrap();
        assert_eq!(back, v);
        assert_eq!(
            as_text(map_get(&back, "command").unwrap()),
            Some("generate")
        );
        // Indefinite-length containers are fine.
        let indefinite = [0x9F, 0x01, 0x02, 0xFF];
        assert_eq!(
            decode(&indefinite).unwrap(),
            Value::Array(vec![integer(1), integer(2)])
        );
    }
}
