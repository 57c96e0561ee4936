//! Borrowed Calldata values: what [`decode_ref`](super::decode_ref) returns.
//!
//! Reading calldata to inspect it (route a call, check a result's shape, hash a
//! field) rarely needs owned copies of its strings and byte strings. A
//! [`ValueRef`] points into the input instead, so decoding allocates only for
//! arrays and maps; [`ValueRef::to_value`] makes the owned [`Value`] when one
//! is needed. The decoder behind it is the strict one: a `ValueRef` exists only
//! for canonical input.

use super::integer::Integer;
use super::value::{Address, Map, Value};

/// One Calldata value whose strings and byte strings borrow from the input.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueRef<'a> {
    /// Special value 0.
    Null,
    /// Special values 1 (`false`) and 2 (`true`).
    Bool(bool),
    /// Special value 3, followed by 20 raw bytes.
    Address(Address),
    /// Types 1 and 2: an integer of any size.
    Int(Integer),
    /// Type 3: a byte string, borrowed from the input.
    Bytes(&'a [u8]),
    /// Type 4: a UTF-8 string, borrowed from the input.
    Str(&'a str),
    /// Type 5: a sequence of values.
    Array(Vec<ValueRef<'a>>),
    /// Type 6: string keys to values, sorted by the UTF-8 bytes of the keys.
    Map(MapRef<'a>),
}

impl ValueRef<'_> {
    /// The owned copy of this value (what [`decode`](super::decode) gives for the same input).
    pub fn to_value(&self) -> Value {
        match self {
            ValueRef::Null => Value::Null,
            ValueRef::Bool(value) => Value::Bool(*value),
            ValueRef::Address(address) => Value::Address(*address),
            ValueRef::Int(value) => Value::Int(value.clone()),
            ValueRef::Bytes(bytes) => Value::Bytes(bytes.to_vec()),
            ValueRef::Str(text) => Value::Str((*text).to_owned()),
            ValueRef::Array(items) => Value::Array(items.iter().map(ValueRef::to_value).collect()),
            ValueRef::Map(map) => {
                let mut owned = Map::with_capacity(map.len());
                for (key, value) in map.iter() {
                    owned.push_sorted(key, value.to_value());
                }
                Value::Map(owned)
            }
        }
    }

    /// A short name of the value's kind, as [`Value::kind`].
    pub fn kind(&self) -> &'static str {
        match self {
            ValueRef::Null => "null",
            ValueRef::Bool(_) => "bool",
            ValueRef::Address(_) => "address",
            ValueRef::Int(_) => "int",
            ValueRef::Bytes(_) => "bytes",
            ValueRef::Str(_) => "string",
            ValueRef::Array(_) => "array",
            ValueRef::Map(_) => "map",
        }
    }
}

impl PartialEq<Value> for ValueRef<'_> {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (ValueRef::Null, Value::Null) => true,
            (ValueRef::Bool(a), Value::Bool(b)) => a == b,
            (ValueRef::Address(a), Value::Address(b)) => a == b,
            (ValueRef::Int(a), Value::Int(b)) => a == b,
            (ValueRef::Bytes(a), Value::Bytes(b)) => *a == b.as_slice(),
            (ValueRef::Str(a), Value::Str(b)) => *a == b.as_str(),
            (ValueRef::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            (ValueRef::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|((ka, va), (kb, vb))| ka == kb && va == vb)
            }
            _ => false,
        }
    }
}

/// A borrowed Calldata map: keys borrowed from the input, in increasing order
/// of their UTF-8 bytes (the decoder has checked the order).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MapRef<'a> {
    entries: Vec<(&'a str, ValueRef<'a>)>,
}

impl<'a> MapRef<'a> {
    /// An empty map with room for `capacity` entries (for the decoder).
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        MapRef {
            entries: Vec::with_capacity(capacity),
        }
    }

    /// Appends an entry whose key the decoder has checked sorts after every other.
    #[inline]
    pub(crate) fn push_sorted(&mut self, key: &'a str, value: ValueRef<'a>) {
        debug_assert!(self.entries.last().is_none_or(|(last, _)| *last < key));
        self.entries.push((key, value));
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&ValueRef<'a>> {
        self.entries
            .binary_search_by(|(probe, _)| probe.as_bytes().cmp(key.as_bytes()))
            .ok()
            .map(|index| &self.entries[index].1)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, &ValueRef<'a>)> {
        self.entries.iter().map(|(key, value)| (*key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{decode, decode_ref};
    use super::*;

    #[test]
    fn borrowed_and_owned_decodes_agree() {
        let value: Value = super::super::text::parse_text(&format!(
            r#"{{"a": [b#00ff, "hé", -5, null, true, addr#{}], "b": {{}}, "zz": 18446744073709551616}}"#,
            "01".repeat(20)
        ))
        .unwrap();
        let input = super::super::encode(&value);
        let borrowed = decode_ref(&input).unwrap();
        assert_eq!(borrowed, value);
        assert_eq!(borrowed.to_value(), decode(&input).unwrap());
        let ValueRef::Map(map) = &borrowed else {
            panic!("expected a map, got {}", borrowed.kind());
        };
        assert_eq!(map.len(), 3);
        assert_eq!(map.get("b"), Some(&ValueRef::Map(MapRef::default())));
        assert_eq!(map.get("c"), None);
        assert_eq!(
            map.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["a", "b", "zz"]
        );
    }

    #[test]
    fn borrowed_values_stay_small() {
        assert_eq!(std::mem::size_of::<ValueRef<'_>>(), 32);
    }
}
