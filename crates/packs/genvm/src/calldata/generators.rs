//! Calldata values and damaged inputs drawn with geist's own engine.
//!
//! Plain functions over a [`TestCase`], so the property tests, the differential
//! test against genlayer-js and anyone else can build on them. Every draw goes
//! through the engine, so failures shrink: towards `null`, short collections,
//! small integers and the first keys of [`KEYS`].

use super::integer::Integer;
use super::value::{ADDRESS_LEN, Address, Map, Value};
use geist::TestCase;
use geist::generators as gs;
use num_bigint::{BigInt, Sign};

/// Map keys chosen to exercise UTF-8 byte order: prefixes, multi-byte and astral
/// characters, and the keys GenVM results use.
pub const KEYS: &[&str] = &[
    "a",
    "",
    "aa",
    "ab",
    "b",
    "z",
    "ok",
    "error",
    "status",
    "é",
    "ë",
    "\u{7f}",
    "\u{80}",
    "\u{ffff}",
    "\u{10000}",
    "😀",
    "a\u{0}",
];

/// Integers of every size class: tiny, 64-bit, around the 64-bit boundaries, and
/// big (up to 512 bits) of either sign.
pub fn draw_integer(tc: &mut TestCase) -> Integer {
    match tc.draw_silent(gs::integers::<u8>().max_value(4)) {
        0 => Integer::from(tc.draw_silent(gs::integers::<i64>().min_value(-8).max_value(8))),
        1 => Integer::from(tc.draw_silent(gs::integers::<i64>())),
        2 => Integer::from(tc.draw_silent(gs::integers::<u64>())),
        3 => {
            let edge = tc.draw_silent(gs::sampled_from(vec![
                i64::MIN as i128 - 1,
                i64::MIN as i128,
                i64::MAX as i128,
                i64::MAX as i128 + 1,
                u64::MAX as i128,
                u64::MAX as i128 + 1,
                -(u64::MAX as i128) - 1,
                -(u64::MAX as i128) - 2,
                (1 << 60) - 1,
                -(1 << 60),
            ]));
            let offset = tc.draw_silent(gs::integers::<i8>().min_value(-2).max_value(2));
            Integer::from(edge + i128::from(offset))
        }
        _ => {
            let bytes = tc.draw_silent(gs::binary().min_size(1).max_size(64));
            let magnitude = BigInt::from_bytes_le(Sign::Plus, &bytes);
            if tc.draw_silent(gs::booleans()) {
                Integer::from(-magnitude)
            } else {
                Integer::from(magnitude)
            }
        }
    }
}

/// A map key: usually one of [`KEYS`], sometimes any string.
pub fn draw_key(tc: &mut TestCase) -> String {
    if tc.draw_silent(gs::integers::<u8>().max_value(3)) < 3 {
        tc.draw_silent(gs::sampled_from(KEYS.to_vec())).to_owned()
    } else {
        tc.draw_silent(gs::text().max_size(8))
    }
}

/// Any Calldata value, arrays and maps nested at most `depth` deep.
pub fn draw_value(tc: &mut TestCase, depth: usize) -> Value {
    let kinds = if depth == 0 { 5 } else { 7 };
    match tc.draw_silent(gs::integers::<u8>().max_value(kinds)) {
        0 => Value::Null,
        1 => Value::Bool(tc.draw_silent(gs::booleans())),
        2 => Value::Int(draw_integer(tc)),
        3 => {
            let long = tc.draw_silent(gs::integers::<u8>().max_value(9)) == 9;
            let max = if long { 2_000 } else { 40 };
            Value::Bytes(tc.draw_silent(gs::binary().max_size(max)))
        }
        4 => Value::Str(tc.draw_silent(gs::text().max_size(40))),
        5 => {
            let bytes = tc.draw_silent(gs::binary().min_size(ADDRESS_LEN).max_size(ADDRESS_LEN));
            let mut address = [0u8; ADDRESS_LEN];
            address.copy_from_slice(&bytes);
            Value::Address(Address(address))
        }
        6 => {
            let length = tc.draw_silent(gs::integers::<usize>().max_value(5));
            Value::Array((0..length).map(|_| draw_value(tc, depth - 1)).collect())
        }
        _ => {
            let length = tc.draw_silent(gs::integers::<usize>().max_value(5));
            let mut map = Map::new();
            for _ in 0..length {
                let key = draw_key(tc);
                let value = draw_value(tc, depth - 1);
                map.insert(key, value);
            }
            Value::Map(map)
        }
    }
}

/// A damaged copy of `bytes`: one to three flipped, replaced, inserted, deleted or
/// appended bytes, or a truncation.
pub fn draw_damage(tc: &mut TestCase, bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let edits = tc.draw_silent(gs::integers::<u8>().min_value(1).max_value(3));
    for _ in 0..edits {
        let position =
            tc.draw_silent(gs::integers::<usize>().max_value(out.len().saturating_sub(1)));
        let byte = tc.draw_silent(gs::integers::<u8>());
        match tc.draw_silent(gs::integers::<u8>().max_value(5)) {
            0 if !out.is_empty() => out[position] ^= 1 << (byte % 8),
            1 if !out.is_empty() => out[position] = byte,
            2 => out.insert(position.min(out.len()), byte),
            3 if !out.is_empty() => {
                out.remove(position);
            }
            4 => out.truncate(position),
            _ => out.push(byte),
        }
    }
    out
}
