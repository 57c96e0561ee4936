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
use super::value_ref::{MapRef, ValueRef};

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
    read_whole(input, options)
}

/// Decodes one canonical Calldata value into a [`ValueRef`] that borrows its
/// strings and byte strings from `input` (no copy, no allocation per string).
///
/// It applies exactly the checks of [`decode`]: the same input is accepted or
/// refused, with the same error, and [`ValueRef::to_value`] gives what
/// [`decode`] would have.
pub fn decode_ref(input: &[u8]) -> Result<ValueRef<'_>, DecodeError> {
    decode_ref_with(input, &DecodeOptions::default())
}

/// [`decode_ref`] with explicit settings.
pub fn decode_ref_with<'a>(
    input: &'a [u8],
    options: &DecodeOptions,
) -> Result<ValueRef<'a>, DecodeError> {
    read_whole(input, options)
}

/// What the decoder builds as it reads: the owned [`Value`] or the borrowed
/// [`ValueRef`]. One reader serves both, so both enforce the same rules.
trait Build<'a>: Sized {
    /// The map under construction.
    type Map;
    fn null() -> Self;
    fn boolean(value: bool) -> Self;
    fn address(address: Address) -> Self;
    fn int(value: Integer) -> Self;
    fn bytes(bytes: &'a [u8]) -> Self;
    fn string(text: &'a str) -> Self;
    fn array(items: Vec<Self>) -> Self;
    fn map_with_capacity(capacity: usize) -> Self::Map;
    /// Appends an entry whose key the reader has checked to be greater than the last.
    fn push_entry(map: &mut Self::Map, key: &'a str, value: Self);
    fn map(map: Self::Map) -> Self;
}

impl<'a> Build<'a> for Value {
    type Map = Map;
    #[inline]
    fn null() -> Self {
        Value::Null
    }
    #[inline]
    fn boolean(value: bool) -> Self {
        Value::Bool(value)
    }
    #[inline]
    fn address(address: Address) -> Self {
        Value::Address(address)
    }
    #[inline]
    fn int(value: Integer) -> Self {
        Value::Int(value)
    }
    #[inline]
    fn bytes(bytes: &'a [u8]) -> Self {
        Value::Bytes(bytes.to_vec())
    }
    #[inline]
    fn string(text: &'a str) -> Self {
        Value::Str(text.to_owned())
    }
    #[inline]
    fn array(items: Vec<Self>) -> Self {
        Value::Array(items)
    }
    #[inline]
    fn map_with_capacity(capacity: usize) -> Map {
        Map::with_capacity(capacity)
    }
    #[inline]
    fn push_entry(map: &mut Map, key: &'a str, value: Self) {
        map.push_sorted(key, value);
    }
    #[inline]
    fn map(map: Map) -> Self {
        Value::Map(map)
    }
}

impl<'a> Build<'a> for ValueRef<'a> {
    type Map = MapRef<'a>;
    #[inline]
    fn null() -> Self {
        ValueRef::Null
    }
    #[inline]
    fn boolean(value: bool) -> Self {
        ValueRef::Bool(value)
    }
    #[inline]
    fn address(address: Address) -> Self {
        ValueRef::Address(address)
    }
    #[inline]
    fn int(value: Integer) -> Self {
        ValueRef::Int(value)
    }
    #[inline]
    fn bytes(bytes: &'a [u8]) -> Self {
        ValueRef::Bytes(bytes)
    }
    #[inline]
    fn string(text: &'a str) -> Self {
        ValueRef::Str(text)
    }
    #[inline]
    fn array(items: Vec<Self>) -> Self {
        ValueRef::Array(items)
    }
    #[inline]
    fn map_with_capacity(capacity: usize) -> MapRef<'a> {
        MapRef::with_capacity(capacity)
    }
    #[inline]
    fn push_entry(map: &mut MapRef<'a>, key: &'a str, value: Self) {
        map.push_sorted(key, value);
    }
    #[inline]
    fn map(map: MapRef<'a>) -> Self {
        ValueRef::Map(map)
    }
}

/// Reads one value spanning all of `input`, built as `B`.
fn read_whole<'a, B: Build<'a>>(
    input: &'a [u8],
    options: &DecodeOptions,
) -> Result<B, DecodeError> {
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
    let value = reader.value::<B>(0).map_err(|e| *e)?;
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

/// Whether `key` sorts strictly after `previous` by UTF-8 bytes. Keys that
/// differ in their first byte (most neighbours) are settled without a `memcmp` call.
#[inline(always)]
fn key_after(previous: &[u8], key: &[u8]) -> bool {
    match (previous.first(), key.first()) {
        (Some(p), Some(k)) if p != k => k > p,
        _ => key > previous,
    }
}

/// Strings up to this many bytes take the ASCII fast path of [`utf8`].
const SHORT_TEXT: usize = 64;

/// Checks that `bytes` are UTF-8, quickly for the short ASCII strings that
/// make up most keys and strings. On failure, the offset of the first invalid byte.
#[inline]
fn utf8(bytes: &[u8]) -> Result<&str, usize> {
    if bytes.len() <= SHORT_TEXT && bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8. `str::from_utf8`
        // checks the same, but its set-up costs more than the check itself on
        // the few-byte keys and strings of typical calldata.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).map_err(|e| e.valid_up_to())
}

impl<'a> Reader<'a> {
    #[cold]
    #[inline(never)]
    fn error(&self, offset: usize, rule: DecodeRule) -> Box<DecodeError> {
        Box::new(DecodeError { offset, rule })
    }

    #[inline]
    fn remaining(&self) -> usize {
        self.input.len() - self.position
    }

    /// Reads a ULEB128 number that must fit in 64 bits (a key length).
    #[inline]
    fn length(&mut self, what: &'static str) -> Step<u64> {
        let start = self.position;
        if let Some(&byte) = self.input.get(start)
            && byte < 0x80
        {
            self.position = start + 1;
            return Ok(u64::from(byte));
        }
        self.long_length(what)
    }

    /// The rest of [`Self::length`]: numbers of two bytes or more, and the errors.
    #[inline(never)]
    fn long_length(&mut self, what: &'static str) -> Step<u64> {
        let start = self.position;
        let scanned =
            uleb128::scan(&self.input[start..]).map_err(|e| self.scan_error(start, e, what))?;
        let Some(value) = scanned.small else {
            return Err(self.error(start, DecodeRule::LengthOverflow { what }));
        };
        self.position += scanned.bytes.len();
        Ok(value)
    }

    #[cold]
    #[inline(never)]
    fn scan_error(&self, offset: usize, error: ScanError, what: &'static str) -> Box<DecodeError> {
        match error {
            ScanError::Unterminated => self.error(offset, DecodeRule::UnterminatedUleb { what }),
            ScanError::NonMinimal => self.error(offset, DecodeRule::NonMinimalUleb { what }),
        }
    }

    /// Takes `length` bytes, or fails naming what they were for.
    #[inline]
    fn take(&mut self, length: u64, what: &'static str, offset: usize) -> Step<&'a [u8]> {
        let start = self.position;
        let available = self.input.len() - start;
        if length > available as u64 {
            return Err(self.truncated(offset, what, length));
        }
        self.position = start + length as usize;
        Ok(&self.input[start..self.position])
    }

    #[cold]
    #[inline(never)]
    fn truncated(&self, offset: usize, what: &'static str, needed: u64) -> Box<DecodeError> {
        self.error(
            offset,
            DecodeRule::Truncated {
                what,
                needed,
                available: self.remaining(),
            },
        )
    }

    /// Reads a value head of more than one byte: `Some(head)` when it fits in
    /// 64 bits, `None` (position past it) for a longer one.
    #[inline(never)]
    fn long_head(&mut self, start: usize) -> Step<Option<u64>> {
        // Two- and three-byte heads (integers up to 2^18, lengths up to 2^18)
        // are read here; a zero final byte is not minimal and goes to `scan`,
        // which reports it.
        match self.input.get(start..) {
            Some(&[b0, b1, ..]) if b0 >= 0x80 && b1 < 0x80 && b1 != 0 => {
                self.position = start + 2;
                return Ok(Some(u64::from(b0 & 0x7f) | u64::from(b1) << 7));
            }
            Some(&[b0, b1, b2, ..]) if b0 >= 0x80 && b1 >= 0x80 && b2 < 0x80 && b2 != 0 => {
                self.position = start + 3;
                return Ok(Some(
                    u64::from(b0 & 0x7f) | u64::from(b1 & 0x7f) << 7 | u64::from(b2) << 14,
                ));
            }
            _ => {}
        }
        let scanned = uleb128::scan(&self.input[start..])
            .map_err(|e| self.scan_error(start, e, "value head"))?;
        self.position = start + scanned.bytes.len();
        Ok(scanned.small)
    }

    /// A head over 64 bits: a big integer, or an error for every other type.
    #[cold]
    #[inline(never)]
    fn wide_head<B: Build<'a>>(&self, start: usize) -> Step<B> {
        let bytes = &self.input[start..self.position];
        let tag = bytes[0] & ((1 << TYPE_BITS) - 1);
        let what = match tag {
            TYPE_POSITIVE_INT | TYPE_NEGATIVE_INT => {
                return Ok(B::int(big_integer(bytes, tag == TYPE_NEGATIVE_INT)));
            }
            TYPE_SPECIAL => "special value id",
            TYPE_BYTES => "bytes length",
            TYPE_STR => "string length",
            TYPE_ARRAY => "array length",
            TYPE_MAP => "map length",
            _ => return Err(self.error(start, DecodeRule::ReservedType)),
        };
        Err(self.error(start, DecodeRule::LengthOverflow { what }))
    }

    /// Reads one value. Inlined into the array and map loops, so scalars (most
    /// values) cost no call; only containers recurse, through [`Self::array`]
    /// and [`Self::map`].
    #[inline(always)]
    fn value<B: Build<'a>>(&mut self, depth: usize) -> Step<B> {
        let start = self.position;
        let head = match self.input.get(start) {
            Some(&byte) if byte < 0x80 => {
                self.position = start + 1;
                u64::from(byte)
            }
            _ => match self.long_head(start)? {
                Some(head) => head,
                None => return self.wide_head(start),
            },
        };
        let payload = head >> TYPE_BITS;
        match (head as u8) & ((1 << TYPE_BITS) - 1) {
            // At most 61 bits of payload: fits in i64 either way.
            TYPE_POSITIVE_INT => Ok(B::int(Integer::from(payload as i64))),
            TYPE_NEGATIVE_INT => Ok(B::int(Integer::from(-(payload as i64) - 1))),
            TYPE_SPECIAL => match payload {
                SPECIAL_NULL => Ok(B::null()),
                SPECIAL_FALSE => Ok(B::boolean(false)),
                SPECIAL_TRUE => Ok(B::boolean(true)),
                _ => self.special(payload, start),
            },
            TYPE_BYTES => Ok(B::bytes(self.take(payload, "a byte string", start)?)),
            TYPE_STR => {
                let bytes = self.take(payload, "a string", start)?;
                let text = utf8(bytes).map_err(|valid| {
                    self.error(
                        self.position - bytes.len() + valid,
                        DecodeRule::InvalidUtf8 { what: "string" },
                    )
                })?;
                Ok(B::string(text))
            }
            TYPE_ARRAY => self.array(payload, depth, start),
            TYPE_MAP => self.map(payload, depth, start),
            _ => Err(self.error(start, DecodeRule::ReservedType)),
        }
    }

    /// Special values other than null and booleans: an address, or an error.
    #[inline(never)]
    fn special<B: Build<'a>>(&mut self, id: u64, start: usize) -> Step<B> {
        if id != SPECIAL_ADDRESS {
            return Err(self.error(start, DecodeRule::UnknownSpecial { id }));
        }
        let bytes = self.take(ADDRESS_LEN as u64, "an address", start)?;
        let mut address = [0u8; ADDRESS_LEN];
        address.copy_from_slice(bytes);
        Ok(B::address(Address(address)))
    }

    #[inline(never)]
    fn array<B: Build<'a>>(&mut self, count: u64, depth: usize, start: usize) -> Step<B> {
        let depth = self.enter(depth, start)?;
        // Every element takes at least one byte.
        self.check_count(count, 1, "an array", start)?;
        let mut items = Vec::with_capacity(count as usize);
        for _ in 0..count {
            items.push(self.value::<B>(depth)?);
        }
        Ok(B::array(items))
    }

    #[inline]
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

    #[inline]
    fn check_count(
        &self,
        count: u64,
        min_size: u64,
        what: &'static str,
        offset: usize,
    ) -> Step<()> {
        let needed = count.saturating_mul(min_size);
        if needed > self.remaining() as u64 {
            return Err(self.truncated(offset, what, needed));
        }
        Ok(())
    }

    #[inline(never)]
    fn map<B: Build<'a>>(&mut self, count: u64, depth: usize, start: usize) -> Step<B> {
        let depth = self.enter(depth, start)?;
        // Every entry takes at least two bytes: a key length and a value.
        self.check_count(count, 2, "a map", start)?;
        let mut map = B::map_with_capacity(count as usize);
        let mut previous: &'a [u8] = &[];
        for index in 0..count {
            let key_start = self.position;
            let key_length = self.length("map key length")?;
            let key = self.take(key_length, "a map key", key_start)?;
            let key_text = utf8(key).map_err(|valid| {
                self.error(
                    self.position - key.len() + valid,
                    DecodeRule::InvalidUtf8 { what: "map key" },
                )
            })?;
            // The first key only has to exist; every later one must be greater.
            if index > 0 && !key_after(previous, key) {
                return Err(key_order_error(key_start, previous, key_text));
            }
            previous = key;
            let value = self.value::<B>(depth)?;
            B::push_entry(&mut map, key_text, value);
        }
        Ok(B::map(map))
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
