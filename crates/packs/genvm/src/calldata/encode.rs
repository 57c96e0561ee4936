//! The canonical Calldata encoder.
//!
//! Encoding cannot fail: every [`Value`] has exactly one canonical form (maps are
//! already sorted, integers already normalised), and this module writes it.

use super::uleb128::{write_biguint, write_u64, write_u128};
use super::value::Value;
use super::value::{ADDRESS_LEN, Map};

/// Type tag of special values (null, false, true, address).
pub(crate) const TYPE_SPECIAL: u8 = 0;
/// Type tag of integers `>= 0`.
pub(crate) const TYPE_POSITIVE_INT: u8 = 1;
/// Type tag of integers `< 0`.
pub(crate) const TYPE_NEGATIVE_INT: u8 = 2;
/// Type tag of byte strings.
pub(crate) const TYPE_BYTES: u8 = 3;
/// Type tag of UTF-8 strings.
pub(crate) const TYPE_STR: u8 = 4;
/// Type tag of arrays.
pub(crate) const TYPE_ARRAY: u8 = 5;
/// Type tag of maps.
pub(crate) const TYPE_MAP: u8 = 6;
/// The number of low bits of a head that hold the type.
pub(crate) const TYPE_BITS: u32 = 3;

/// Special value id of `null`.
pub(crate) const SPECIAL_NULL: u64 = 0;
/// Special value id of `false`.
pub(crate) const SPECIAL_FALSE: u64 = 1;
/// Special value id of `true`.
pub(crate) const SPECIAL_TRUE: u64 = 2;
/// Special value id of an address.
pub(crate) const SPECIAL_ADDRESS: u64 = 3;

/// Encodes `value` in canonical Calldata.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(value, &mut out);
    out
}

/// Appends the canonical Calldata encoding of `value` to `out`.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.push(special(SPECIAL_NULL)),
        Value::Bool(false) => out.push(special(SPECIAL_FALSE)),
        Value::Bool(true) => out.push(special(SPECIAL_TRUE)),
        Value::Address(address) => {
            out.reserve(1 + ADDRESS_LEN);
            out.push(special(SPECIAL_ADDRESS));
            out.extend_from_slice(address.as_bytes());
        }
        Value::Int(integer) => {
            let tag = if integer.is_negative() {
                TYPE_NEGATIVE_INT
            } else {
                TYPE_POSITIVE_INT
            };
            match integer.small_payload() {
                Some(payload) => {
                    write_u128(out, (u128::from(payload) << TYPE_BITS) | u128::from(tag))
                }
                None => {
                    let head =
                        (integer.big_payload() << TYPE_BITS) | num_bigint::BigUint::from(tag);
                    write_biguint(out, &head);
                }
            }
        }
        Value::Bytes(bytes) => {
            write_head(out, TYPE_BYTES, bytes.len());
            out.extend_from_slice(bytes);
        }
        Value::Str(text) => {
            write_head(out, TYPE_STR, text.len());
            out.extend_from_slice(text.as_bytes());
        }
        Value::Array(items) => {
            write_head(out, TYPE_ARRAY, items.len());
            for item in items {
                encode_into(item, out);
            }
        }
        Value::Map(map) => encode_map(map, out),
    }
}

fn encode_map(map: &Map, out: &mut Vec<u8>) {
    write_head(out, TYPE_MAP, map.len());
    for (key, value) in map.iter_bytes() {
        write_u64(out, key.len() as u64);
        out.extend_from_slice(key);
        encode_into(value, out);
    }
}

#[inline]
fn special(id: u64) -> u8 {
    // Ids 0..=3 shifted by 3 stay below 0x80: one byte.
    ((id as u8) << TYPE_BITS) | TYPE_SPECIAL
}

#[inline]
fn write_head(out: &mut Vec<u8>, tag: u8, length: usize) {
    write_u128(out, ((length as u128) << TYPE_BITS) | u128::from(tag));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calldata::Integer;

    #[test]
    fn encodes_documented_examples() {
        assert_eq!(encode(&Value::Null), [0x00]);
        assert_eq!(encode(&Value::Bool(false)), [0x08]);
        assert_eq!(encode(&Value::Bool(true)), [0x10]);
        assert_eq!(encode(&Value::from(0)), [0x01]);
        assert_eq!(encode(&Value::from(-1)), [0x02]);
        assert_eq!(encode(&Value::from(127)), [0xf9, 0x07]);
        assert_eq!(encode(&Value::from(-128)), [0xfa, 0x07]);
        assert_eq!(
            encode(&Value::from("hello")),
            hex::decode("2c68656c6c6f").unwrap()
        );
        let big: Integer = "18446744073709551616".parse().unwrap();
        assert_eq!(
            encode(&Value::Int(big)),
            hex::decode("81808080808080808010").unwrap()
        );
        let negative_big: Integer = "-18446744073709551616".parse().unwrap();
        assert_eq!(
            encode(&Value::Int(negative_big)),
            hex::decode("faffffffffffffffff0f").unwrap()
        );
    }

    #[test]
    fn i64_extremes_match_the_big_path() {
        for v in [
            i64::MIN as i128,
            i64::MAX as i128,
            u64::MAX as i128,
            i128::MIN,
            i128::MAX,
        ] {
            let small = encode(&Value::from(v));
            let mut big = Vec::new();
            let integer = Integer::from(v);
            let tag = if integer.is_negative() {
                TYPE_NEGATIVE_INT
            } else {
                TYPE_POSITIVE_INT
            };
            write_biguint(
                &mut big,
                &((integer.big_payload() << TYPE_BITS) | num_bigint::BigUint::from(tag)),
            );
            assert_eq!(small, big, "{v}");
        }
    }
}
