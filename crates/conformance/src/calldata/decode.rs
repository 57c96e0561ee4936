//! The strict Calldata decoder.
//!
//! Two encodings of one value would give two consensus hashes, so this decoder
//! accepts only the canonical form: minimal ULEB128 everywhere, map keys strictly
//! increasing by UTF-8 bytes, valid UTF-8, only the four special values, lengths
//! within the bytes that are left, no trailing bytes and a bounded nesting depth.
//! Every refusal is a [`DecodeError`] naming the byte offset and the rule broken.
//!
//! Allocation is bounded by the input: a declared length or count is checked
//! against the bytes that remain before anything is reserved for it.

use super::encode::{
    SPECIAL_ADDRESS, SPECIAL_FALSE, SPECIAL_NULL, SPECIAL_TRUE, TYPE_ARRAY, TYPE_BITS, TYPE_BYTES,
    TYPE_MAP, TYPE_NEGATIVE_INT, TYPE_POSITIVE_INT, TYPE_SPECIAL, TYPE_STR,
};
use super::integer::Integer;
use super::uleb128::{self, ScanError};
use super::value::{ADDRESS_LEN, Address, Map, Value};

/// The nesting limit used by [`decode`]: arrays and maps at most this deep.
pub const DEFAULT_MAX_DEPTH: usize = 256;

/// Settings of the strict decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// The deepest nesting of arrays and maps accepted (a scalar has depth 0).
    pub max_depth: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// A refusal of the strict decoder: where, and which rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte offset {offset}: {rule}")]
pub struct DecodeError {
    /// The offset of the first byte of the offending item in the input.
    pub offset: usize,
    /// The rule the input broke.
    pub rule: DecodeRule,
}

/// The rules of canonical Calldata, one variant per way of breaking them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeRule {
    /// The input holds no bytes at all.
    #[error("no value: the input is empty")]
    Empty,
    /// The input ends inside a ULEB128 number.
    #[error("truncated: the ULEB128 {what} has no final byte")]
    UnterminatedUleb {
        /// What the number was (a value head, a key length).
        what: &'static str,
    },
    /// A ULEB128 number ends with a zero group, so a shorter form exists.
    #[error("ULEB128 must be minimal: the {what} ends with a zero group")]
    NonMinimalUleb {
        /// What the number was.
        what: &'static str,
    },
    /// A length or count does not fit in 64 bits (it could never fit in the input).
    #[error("the {what} does not fit in 64 bits")]
    LengthOverflow {
        /// What the number was.
        what: &'static str,
    },
    /// Fewer bytes remain than a declared length or count needs.
    #[error("truncated: {what} needs {needed} bytes but only {available} remain")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// The bytes it needs, at least.
        needed: u64,
        /// The bytes left in the input.
        available: usize,
    },
    /// Type tag 7 has no meaning.
    #[error("type tag 7 is reserved")]
    ReservedType,
    /// A special value other than null, false, true or address.
    #[error("unknown special value {id}: only null (0), false (1), true (2) and address (3) exist")]
    UnknownSpecial {
        /// The special value's id (the head without its type bits).
        id: u64,
    },
    /// Bytes that are not UTF-8 where a string or a map key must be.
    #[error("invalid UTF-8 in a {what}")]
    InvalidUtf8 {
        /// A string or a map key.
        what: &'static str,
    },
    /// A map key that is not greater than the key before it.
    #[error(
        "map keys must be strictly increasing by UTF-8 bytes: {key:?} comes after {previous:?}"
    )]
    UnsortedKeys {
        /// The key before.
        previous: String,
        /// The offending key.
        key: String,
    },
    /// The same map key twice.
    #[error("duplicate map key {key:?}")]
    DuplicateKey {
        /// The repeated key.
        key: String,
    },
    /// Bytes left over after one complete value.
    #[error("{count} trailing bytes after the value")]
    TrailingBytes {
        /// How many bytes are left.
        count: usize,
    },
    /// Arrays and maps nested deeper than the limit.
    #[error("nesting deeper than the limit of {limit}")]
    TooDeep {
        /// The limit in force.
        limit: usize,
    },
}

/// Decodes one canonical Calldata value that must span all of `input`.
pub fn decode(input: &[u8]) -> Result<Value, DecodeError> {
    decode_with(input, &DecodeOptions::default())
}

/// Decodes one canonical Calldata value with explicit settings.
pub fn decode_with(input: &[u8], options: &DecodeOptions) -> Result<Value, DecodeError> {
    if input.is_empty() {
        return Err(DecodeError {
            offset: 0,
            rule: DecodeRule::Empty,
        });
    }
    let mut reader = Reader {
        input,
        position: 0,
        max_depth: options.max_depth,
    };
    let value = reader.value(0).map_err(|e| *e)?;
    if reader.position != input.len() {
        return Err(DecodeError {
            offset: reader.position,
            rule: DecodeRule::TrailingBytes {
                count: input.len() - reader.position,
            },
        });
    }
    Ok(value)
}

/// Internal results carry the error boxed: it is rare and large, and a small
/// `Result` keeps the recursive hot path lean.
type Step<T> = Result<T, Box<DecodeError>>;

struct Reader<'a> {
    input: &'a [u8],
    position: usize,
    max_depth: usize,
}

/// Builds a big integer from a head longer than 64 bits; rare, so kept out of the hot path.
#[cold]
#[inline(never)]
fn big_integer(head: &[u8], negative: bool) -> Integer {
    let payload = uleb128::to_biguint(head) >> TYPE_BITS;
    Integer::from_payload(payload, negative)
}

/// The refusal for a key that is not greater than the one before it.
#[cold]
#[inline(never)]
fn key_order_error(offset: usize, previous: &[u8], key: &str) -> Box<DecodeError> {
    let rule = if previous == key.as_bytes() {
        DecodeRule::DuplicateKey {
            key: key.to_owned(),
        }
    } else {
        DecodeRule::UnsortedKeys {
            previous: String::from_utf8_lossy(previous).into_owned(),
            key: key.to_owned(),
        }
    };
    Box::new(DecodeError { offset, rule })
}

impl<'a> Reader<'a> {
    #[cold]
    fn error(&self, offset: usize, rule: DecodeRule) -> Box<DecodeError> {
        Box::new(DecodeError { offset, rule })
    }

    fn remaining(&self) -> usize {
        self.input.len() - self.position
    }

    /// Reads a ULEB128 number that must fit in 64 bits (a length, count or key length).
    #[inline]
    fn length(&mut self, what: &'static str) -> Step<u64> {
        let start = self.position;
        let scanned =
            uleb128::scan(&self.input[start..]).map_err(|e| self.scan_error(start, e, what))?;
        let Some(value) = scanned.small else {
            return Err(self.error(start, DecodeRule::LengthOverflow { what }));
        };
        self.position += scanned.bytes.len();
        Ok(value)
    }

    fn scan_error(&self, offset: usize, error: ScanError, what: &'static str) -> Box<DecodeError> {
        match error {
            ScanError::Unterminated => self.error(offset, DecodeRule::UnterminatedUleb { what }),
            ScanError::NonMinimal => self.error(offset, DecodeRule::NonMinimalUleb { what }),
        }
    }

    /// Takes `length` bytes, or fails naming what they were for.
    #[inline]
    fn take(&mut self, length: u64, what: &'static str, offset: usize) -> Step<&'a [u8]> {
        let available = self.remaining();
        if length > available as u64 {
            return Err(self.error(
                offset,
                DecodeRule::Truncated {
                    what,
                    needed: length,
                    available,
                },
            ));
        }
        let start = self.position;
        self.position += length as usize;
        Ok(&self.input[start..self.position])
    }

    fn value(&mut self, depth: usize) -> Step<Value> {
        let start = self.position;
        let scanned = uleb128::scan(&self.input[start..])
            .map_err(|e| self.scan_error(start, e, "value head"))?;
        self.position += scanned.bytes.len();
        let tag = scanned.bytes[0] & ((1 << TYPE_BITS) - 1);
        if tag == TYPE_POSITIVE_INT || tag == TYPE_NEGATIVE_INT {
            let negative = tag == TYPE_NEGATIVE_INT;
            return Ok(Value::Int(match scanned.small {
                Some(head) => {
                    // At most 61 bits of payload: fits in i64 either way.
                    let payload = (head >> TYPE_BITS) as i64;
                    Integer::from(if negative { -payload - 1 } else { payload })
                }
                None => big_integer(scanned.bytes, negative),
            }));
        }
        let what = match tag {
            TYPE_SPECIAL => "special value id",
            TYPE_BYTES => "bytes length",
            TYPE_STR => "string length",
            TYPE_ARRAY => "array length",
            TYPE_MAP => "map length",
            _ => return Err(self.error(start, DecodeRule::ReservedType)),
        };
        let Some(head) = scanned.small else {
            return Err(self.error(start, DecodeRule::LengthOverflow { what }));
        };
        let payload = head >> TYPE_BITS;
        match tag {
            TYPE_SPECIAL => match payload {
                SPECIAL_NULL => Ok(Value::Null),
                SPECIAL_FALSE => Ok(Value::Bool(false)),
                SPECIAL_TRUE => Ok(Value::Bool(true)),
                SPECIAL_ADDRESS => {
                    let bytes = self.take(ADDRESS_LEN as u64, "an address", start)?;
                    let mut address = [0u8; ADDRESS_LEN];
                    address.copy_from_slice(bytes);
                    Ok(Value::Address(Address(address)))
                }
                id => Err(self.error(start, DecodeRule::UnknownSpecial { id })),
            },
            TYPE_BYTES => Ok(Value::Bytes(
                self.take(payload, "a byte string", start)?.to_vec(),
            )),
            TYPE_STR => {
                let bytes = self.take(payload, "a string", start)?;
                let text = std::str::from_utf8(bytes).map_err(|e| {
                    self.error(
                        self.position - bytes.len() + e.valid_up_to(),
                        DecodeRule::InvalidUtf8 { what: "string" },
                    )
                })?;
                Ok(Value::Str(text.to_owned()))
            }
            TYPE_ARRAY => {
                let depth = self.enter(depth, start)?;
                // Every element takes at least one byte.
                self.check_count(payload, 1, "an array", start)?;
                let mut items = Vec::with_capacity(payload as usize);
                for _ in 0..payload {
                    items.push(self.value(depth)?);
                }
                Ok(Value::Array(items))
            }
            _ => {
                let depth = self.enter(depth, start)?;
                // Every entry takes at least two bytes: a key length and a value.
                self.check_count(payload, 2, "a map", start)?;
                self.map(payload, depth)
            }
        }
    }

    fn enter(&self, depth: usize, offset: usize) -> Step<usize> {
        if depth >= self.max_depth {
            return Err(self.error(
                offset,
                DecodeRule::TooDeep {
                    limit: self.max_depth,
                },
            ));
        }
        Ok(depth + 1)
    }

    fn check_count(
        &self,
        count: u64,
        min_size: u64,
        what: &'static str,
        offset: usize,
    ) -> Step<()> {
        let needed = count.saturating_mul(min_size);
        let available = self.remaining();
        if needed > available as u64 {
            return Err(self.error(
                offset,
                DecodeRule::Truncated {
                    what,
                    needed,
                    available,
                },
            ));
        }
        Ok(())
    }

    fn map(&mut self, count: u64, depth: usize) -> Step<Value> {
        let mut map = Map::with_capacity(count as usize);
        let mut previous: Option<&'a [u8]> = None;
        for _ in 0..count {
            let key_start = self.position;
            let key_length = self.length("map key length")?;
            let key = self.take(key_length, "a map key", key_start)?;
            let key_text = std::str::from_utf8(key).map_err(|e| {
                self.error(
                    self.position - key.len() + e.valid_up_to(),
                    DecodeRule::InvalidUtf8 { what: "map key" },
                )
            })?;
            if let Some(previous) = previous
                && previous >= key
            {
                return Err(key_order_error(key_start, previous, key_text));
            }
            previous = Some(key);
            let value = self.value(depth)?;
            map.push_sorted(key_text, value);
        }
        Ok(Value::Map(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(hex_input: &str) -> DecodeRule {
        decode(&hex::decode(hex_input).unwrap()).unwrap_err().rule
    }

    #[test]
    fn refuses_each_rule_with_its_offset() {
        assert_eq!(rule(""), DecodeRule::Empty);
        assert!(matches!(rule("8000"), DecodeRule::NonMinimalUleb { .. }));
        assert!(matches!(
            rule("16017a0902616111"),
            DecodeRule::UnsortedKeys { .. }
        ));
        assert!(matches!(
            rule("16016109016111"),
            DecodeRule::DuplicateKey { .. }
        ));
        assert_eq!(rule("01ff"), DecodeRule::TrailingBytes { count: 1 });
        assert_eq!(rule("07"), DecodeRule::ReservedType);
        assert_eq!(rule("20"), DecodeRule::UnknownSpecial { id: 4 });
        assert!(matches!(
            rule("2c6865"),
            DecodeRule::Truncated {
                needed: 5,
                available: 2,
                ..
            }
        ));
        assert!(matches!(
            rule("180011"),
            DecodeRule::Truncated { needed: 20, .. }
        ));
        assert_eq!(rule("14fffe"), DecodeRule::InvalidUtf8 { what: "string" });
        let error = decode(&hex::decode("16016109016111").unwrap()).unwrap_err();
        assert_eq!(error.offset, 4);
    }

    #[test]
    fn huge_lengths_fail_without_allocating() {
        // bytes of length 2^40: head (2^40 << 3) | 3.
        let mut input = Vec::new();
        uleb128::write_u64(&mut input, (1u64 << 40) << 3 | 3);
        assert!(matches!(
            decode(&input).unwrap_err().rule,
            DecodeRule::Truncated { needed, .. } if needed == 1 << 40
        ));
        // An array claiming 2^60 elements.
        let mut input = Vec::new();
        uleb128::write_u64(&mut input, (1u64 << 60) << 3 | 5);
        assert!(matches!(
            decode(&input).unwrap_err().rule,
            DecodeRule::Truncated { .. }
        ));
        // A 10-byte length that overflows 64 bits.
        let input = hex::decode("fbffffffffffffffff7f").unwrap();
        assert!(matches!(
            decode(&input).unwrap_err().rule,
            DecodeRule::LengthOverflow { .. }
        ));
    }

    #[test]
    fn deep_nesting_is_refused_cleanly() {
        // 10,000 nested one-element arrays.
        let mut input = vec![0x0d; 10_000];
        input.push(0x00);
        let error = decode(&input).unwrap_err();
        assert_eq!(
            error.rule,
            DecodeRule::TooDeep {
                limit: DEFAULT_MAX_DEPTH
            }
        );
        assert_eq!(error.offset, DEFAULT_MAX_DEPTH);
        let shallow = decode_with(&input[9_990..], &DecodeOptions { max_depth: 10 }).unwrap();
        assert_eq!(shallow.depth(), 10);
    }

    #[test]
    fn big_integers_decode_and_normalise() {
        let value = decode(&hex::decode("81808080808080808010").unwrap()).unwrap();
        assert_eq!(value, Value::Int("18446744073709551616".parse().unwrap()));
        let value = decode(&hex::decode("faffffffffffffffff0f").unwrap()).unwrap();
        assert_eq!(value, Value::Int("-18446744073709551616".parse().unwrap()));
    }
}
