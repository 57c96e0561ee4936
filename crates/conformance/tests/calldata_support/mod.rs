//! Seeded Calldata value and input generation shared by the Calldata tests and benchmark.
//!
//! A stand-in until geist's own client (`geist::check`) exists: a small
//! deterministic generator (splitmix64) so the round-trip, canonical-form and
//! differential checks can already run over tens of thousands of values. The
//! geist-based versions of these checks are in `tests/calldata_pending/`.

#![allow(dead_code)]

use geist_conformance::calldata::{Address, Integer, Map, Value};
use num_bigint::BigInt;

/// A splitmix64 generator: tiny, fast, reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// True with probability `numerator / denominator`.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// Random bytes.
    pub fn bytes(&mut self, length: usize) -> Vec<u8> {
        (0..length).map(|_| self.next_u64() as u8).collect()
    }
}

/// Keys chosen to exercise UTF-8 byte order: prefixes, multi-byte and astral characters.
const KEYS: &[&str] = &[
    "",
    "a",
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
    "key with spaces",
];

/// Characters for strings: ASCII, controls, 2-, 3- and 4-byte UTF-8.
const CHARS: &[char] = &[
    'a',
    'Z',
    '0',
    ' ',
    '"',
    '\\',
    '\n',
    '\u{0}',
    '\u{7f}',
    'é',
    'ß',
    '✓',
    '\u{fffd}',
    '\u{ffff}',
    '😀',
    '\u{10ffff}',
];

fn draw_integer(rng: &mut Rng) -> Integer {
    match rng.below(6) {
        0 => Integer::from(rng.below(16) as i64 - 8),
        1 => Integer::from(rng.next_u64() as i64 >> rng.below(64)),
        2 => Integer::from(rng.next_u64()),
        3 => {
            // Boundaries of the inline representation and of ULEB byte counts.
            let edges: [i128; 10] = [
                i64::MIN as i128 - 1,
                i64::MIN as i128,
                i64::MAX as i128,
                i64::MAX as i128 + 1,
                u64::MAX as i128,
                u64::MAX as i128 + 1,
                -(u64::MAX as i128) - 1,
                -(u64::MAX as i128) - 2,
                (1i128 << 60) - 1,
                -(1i128 << 60),
            ];
            Integer::from(edges[rng.below(edges.len() as u64) as usize])
        }
        _ => {
            // Up to ~512 bits, either sign.
            let length = 1 + rng.below(64) as usize;
            let bytes = rng.bytes(length);
            let magnitude = BigInt::from_bytes_le(num_bigint::Sign::Plus, &bytes);
            Integer::from(if rng.chance(1, 2) {
                -magnitude
            } else {
                magnitude
            })
        }
    }
}

fn draw_string(rng: &mut Rng) -> String {
    let long = rng.chance(1, 8);
    let length = rng.below(if long { 200 } else { 12 });
    (0..length)
        .map(|_| CHARS[rng.below(CHARS.len() as u64) as usize])
        .collect()
}

/// One value, arrays and maps nested at most `depth` deep.
pub fn draw_value(rng: &mut Rng, depth: usize) -> Value {
    let kinds = if depth == 0 { 6 } else { 8 };
    match rng.below(kinds) {
        0 => match rng.below(3) {
            0 => Value::Null,
            _ => Value::Bool(rng.chance(1, 2)),
        },
        1 => {
            let mut address = [0u8; 20];
            address.copy_from_slice(&rng.bytes(20));
            Value::Address(Address(address))
        }
        2 | 3 => Value::Int(draw_integer(rng)),
        4 => {
            let length = if rng.chance(1, 10) {
                rng.below(2000)
            } else {
                rng.below(40)
            };
            Value::Bytes(rng.bytes(length as usize))
        }
        5 => Value::Str(draw_string(rng)),
        6 => {
            let length = rng.below(6);
            Value::Array((0..length).map(|_| draw_value(rng, depth - 1)).collect())
        }
        _ => {
            let length = rng.below(6);
            let mut map = Map::new();
            for _ in 0..length {
                let key = if rng.chance(3, 4) {
                    KEYS[rng.below(KEYS.len() as u64) as usize].to_owned()
                } else {
                    draw_string(rng)
                };
                map.insert(key, draw_value(rng, depth - 1));
            }
            Value::Map(map)
        }
    }
}

/// A damaged copy of `bytes`: flipped, inserted, deleted or appended bytes, or a truncation.
pub fn mutate(rng: &mut Rng, bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(3) {
        let position = if out.is_empty() {
            0
        } else {
            rng.below(out.len() as u64) as usize
        };
        match rng.below(6) {
            0 if !out.is_empty() => out[position] ^= 1 << rng.below(8),
            1 if !out.is_empty() => out[position] = rng.next_u64() as u8,
            2 => out.insert(position, rng.next_u64() as u8),
            3 if !out.is_empty() => {
                out.remove(position);
            }
            4 => out.truncate(position),
            _ => out.push(rng.next_u64() as u8),
        }
    }
    out
}

/// Whether genlayer-js 1.2.0's decoder would spend more than `budget` steps on
/// `bytes`: it reads past the end as zero bytes (nulls), so a damaged array or map
/// count of 2^40 makes it loop 2^40 times before it notices the input ended.
/// This walk mirrors its control flow, counting declared elements.
pub fn sdk_would_spin(bytes: &[u8], budget: u64) -> bool {
    let mut position = 0usize;
    let mut steps = 0u64;
    walk(bytes, &mut position, &mut steps, budget, 0).is_err()
}

struct TooMuch;

fn sdk_uleb(bytes: &[u8], position: &mut usize) -> (u128, bool) {
    // Returns the value (saturated) and whether it exceeds 64 bits.
    let mut value: u128 = 0;
    let mut shift = 0u32;
    let mut huge = false;
    loop {
        let byte = bytes.get(*position).copied().unwrap_or(0);
        *position = position.saturating_add(1);
        if shift < 120 {
            value |= u128::from(byte & 0x7f) << shift;
        } else if byte & 0x7f != 0 {
            huge = true;
        }
        shift += 7;
        if byte < 0x80 {
            break;
        }
    }
    (value, huge || value > u128::from(u64::MAX))
}

fn walk(
    bytes: &[u8],
    position: &mut usize,
    steps: &mut u64,
    budget: u64,
    depth: usize,
) -> Result<(), TooMuch> {
    *steps += 1;
    if *steps > budget || depth > 5_000 {
        return Err(TooMuch);
    }
    if *position >= bytes.len() {
        // Past the end the SDK reads a zero byte: a null. The loops above count them.
        *position = position.saturating_add(1);
        return Ok(());
    }
    let (head, huge) = sdk_uleb(bytes, position);
    match head {
        0 | 8 | 16 => return Ok(()),
        24 => {
            *position = position.saturating_add(20);
            return Ok(());
        }
        _ => {}
    }
    let rest = head >> 3;
    match head & 7 {
        1 | 2 => Ok(()),
        3 | 4 => {
            *position = position.saturating_add(usize::try_from(rest).unwrap_or(usize::MAX));
            Ok(())
        }
        5 => {
            if huge || rest > u128::from(budget) {
                return Err(TooMuch);
            }
            for _ in 0..rest {
                walk(bytes, position, steps, budget, depth + 1)?;
            }
            Ok(())
        }
        6 => {
            if huge || rest > u128::from(budget) {
                return Err(TooMuch);
            }
            for _ in 0..rest {
                *steps += 1;
                let (length, _) = sdk_uleb(bytes, position);
                *position = position.saturating_add(usize::try_from(length).unwrap_or(usize::MAX));
                walk(bytes, position, steps, budget, depth + 1)?;
            }
            Ok(())
        }
        // The SDK throws on these: it stops at once.
        _ => Ok(()),
    }
}
