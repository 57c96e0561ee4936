//! The Calldata data model: one [`Value`] type for everything Calldata can carry.
//!
//! The model is exactly as rich as the wire form and no richer: there is one value
//! per canonical encoding and one encoding per value. Maps are kept sorted by the
//! UTF-8 bytes of their keys (the order the wire form requires), so building a
//! [`Map`] in any order and encoding it gives the canonical bytes.

use super::integer::Integer;
use std::fmt;

/// The number of raw bytes in a Calldata address.
pub const ADDRESS_LEN: usize = 20;

/// A 20-byte account address (Calldata special value 3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address(pub [u8; ADDRESS_LEN]);

impl Address {
    /// The raw bytes of the address.
    pub fn as_bytes(&self) -> &[u8; ADDRESS_LEN] {
        &self.0
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Address({})", hex::encode(self.0))
    }
}

impl From<[u8; ADDRESS_LEN]> for Address {
    fn from(bytes: [u8; ADDRESS_LEN]) -> Self {
        Address(bytes)
    }
}

/// One Calldata value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// Special value 0.
    Null,
    /// Special values 1 (`false`) and 2 (`true`).
    Bool(bool),
    /// Special value 3, followed by 20 raw bytes.
    Address(Address),
    /// Types 1 and 2: an integer of any size.
    Int(Integer),
    /// Type 3: a byte string.
    Bytes(Vec<u8>),
    /// Type 4: a UTF-8 string.
    Str(String),
    /// Type 5: a sequence of values.
    Array(Vec<Value>),
    /// Type 6: string keys to values, sorted by the UTF-8 bytes of the keys.
    Map(Map),
}

impl Value {
    /// A short name of the value's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Address(_) => "address",
            Value::Int(_) => "int",
            Value::Bytes(_) => "bytes",
            Value::Str(_) => "string",
            Value::Array(_) => "array",
            Value::Map(_) => "map",
        }
    }

    /// The nesting depth: 0 for scalars, 1 + the deepest child for arrays and maps.
    pub fn depth(&self) -> usize {
        match self {
            Value::Array(items) => 1 + items.iter().map(Value::depth).max().unwrap_or(0),
            Value::Map(map) => 1 + map.values().map(Value::depth).max().unwrap_or(0),
            _ => 0,
        }
    }
}

impl From<bool> for Value {
    fn from(value: bool) -> Self {
        Value::Bool(value)
    }
}

impl From<Address> for Value {
    fn from(value: Address) -> Self {
        Value::Address(value)
    }
}

impl From<Integer> for Value {
    fn from(value: Integer) -> Self {
        Value::Int(value)
    }
}

macro_rules! value_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(value: $t) -> Self {
                Value::Int(Integer::from(value))
            }
        }
    )*};
}
value_from_int!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

impl From<Vec<u8>> for Value {
    fn from(value: Vec<u8>) -> Self {
        Value::Bytes(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Value::Str(value.to_owned())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Self {
        Value::Str(value)
    }
}

impl From<Vec<Value>> for Value {
    fn from(value: Vec<Value>) -> Self {
        Value::Array(value)
    }
}

impl From<Map> for Value {
    fn from(value: Map) -> Self {
        Value::Map(value)
    }
}

/// Keys up to this many bytes are stored inline, without a heap allocation.
const INLINE_KEY_LEN: usize = 22;

/// A map key: inline when short (almost every key is), else on the heap.
///
/// Decoding small nested values is dominated by allocations; inline keys
/// remove one per map entry. The representation is canonical (inline exactly
/// when short, unused bytes zero), so derived equality is string equality.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Inline {
        len: u8,
        bytes: [u8; INLINE_KEY_LEN],
    },
    Heap(Box<str>),
}

impl Key {
    #[inline(always)]
    fn new(text: &str) -> Key {
        if text.len() <= INLINE_KEY_LEN {
            let mut bytes = [0u8; INLINE_KEY_LEN];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Key::Inline {
                len: text.len() as u8,
                bytes,
            }
        } else {
            Key::heap(text)
        }
    }

    /// A key too long to store inline; rare, so kept out of the decoder's loop.
    #[cold]
    #[inline(never)]
    fn heap(text: &str) -> Key {
        Key::Heap(text.into())
    }

    fn from_string(text: String) -> Key {
        if text.len() <= INLINE_KEY_LEN {
            Key::new(&text)
        } else {
            Key::Heap(text.into_boxed_str())
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Key::Heap(text) => text.as_bytes(),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // Built from a &str, so always UTF-8; validating a short key is cheap
            // and keeps this module free of unsafe code.
            Key::Inline { .. } => std::str::from_utf8(self.as_bytes()).unwrap_or_default(),
            Key::Heap(text) => text,
        }
    }

    fn into_string(self) -> String {
        match self {
            Key::Inline { .. } => self.as_str().to_owned(),
            Key::Heap(text) => text.into_string(),
        }
    }
}

/// A Calldata map: unique string keys kept in increasing order of their UTF-8 bytes.
///
/// Stored as a sorted vector rather than a tree: decoding appends entries that
/// are already in order, and lookups are binary searches.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Map {
    entries: Vec<(Key, Value)>,
}

impl Map {
    /// An empty map.
    pub fn new() -> Self {
        Map::default()
    }

    /// An empty map with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        Map {
            entries: Vec::with_capacity(capacity),
        }
    }

    /// Appends an entry whose key is known to sort after every key already present.
    ///
    /// Only the decoders use this, after they have checked the order themselves.
    #[inline(always)]
    pub(crate) fn push_sorted(&mut self, key: &str, value: Value) {
        debug_assert!(
            self.entries
                .last()
                .is_none_or(|(last, _)| last.as_bytes() < key.as_bytes())
        );
        self.entries.push((Key::new(key), value));
    }

    /// Inserts an entry, returning the value the key had before, if any.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        let key = key.into();
        match self.search(&key) {
            Ok(index) => Some(std::mem::replace(&mut self.entries[index].1, value)),
            Err(index) => {
                self.entries.insert(index, (Key::from_string(key), value));
                None
            }
        }
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.search(key).ok().map(|index| &self.entries[index].1)
    }

    /// Removes `key`, returning its value if it was present.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.search(key)
            .ok()
            .map(|index| self.entries.remove(index).1)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.search(key).is_ok()
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
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The entries in key order, keys as UTF-8 bytes (for the encoder).
    pub(crate) fn iter_bytes(&self) -> impl ExactSizeIterator<Item = (&[u8], &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_bytes(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The values in key order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }

    fn search(&self, key: &str) -> Result<usize, usize> {
        // Byte order is the order the wire form requires.
        self.entries
            .binary_search_by(|(probe, _)| probe.as_bytes().cmp(key.as_bytes()))
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The entries of a map, in key order, by value.
pub struct MapIntoIter(std::vec::IntoIter<(Key, Value)>);

impl Iterator for MapIntoIter {
    type Item = (String, Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k.into_string(), v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for MapIntoIter {}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = MapIntoIter;

    fn into_iter(self) -> Self::IntoIter {
        MapIntoIter(self.entries.into_iter())
    }
}

impl<K: Into<String>> FromIterator<(K, Value)> for Map {
    /// Collects entries in any order; a repeated key keeps its last value.
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        let mut entries: Vec<(String, Value)> =
            iter.into_iter().map(|(k, v)| (k.into(), v)).collect();
        // Stable sort, then keep the last of each run of equal keys.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut deduped: Vec<(String, Value)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            match deduped.last_mut() {
                Some(last) if last.0 == key => last.1 = value,
                _ => deduped.push((key, value)),
            }
        }
        Map {
            entries: deduped
                .into_iter()
                .map(|(k, v)| (Key::from_string(k), v))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_orders_by_utf8_bytes_and_keeps_last_duplicate() {
        let map: Map = [
            ("z", Value::from(1)),
            ("aa", Value::from(2)),
            ("é", Value::from(3)),
            ("z", Value::from(4)),
        ]
        .into_iter()
        .collect();
        let keys: Vec<&str> = map.keys().collect();
        assert_eq!(keys, ["aa", "z", "é"]);
        assert_eq!(map.get("z"), Some(&Value::from(4)));
    }

    #[test]
    fn insert_replaces_and_reports_previous() {
        let mut map = Map::new();
        assert_eq!(map.insert("b", Value::Null), None);
        assert_eq!(map.insert("a", Value::Bool(true)), None);
        assert_eq!(map.insert("b", Value::Bool(false)), Some(Value::Null));
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(map.remove("a"), Some(Value::Bool(true)));
        assert!(!map.contains_key("a"));
    }

    #[test]
    fn values_stay_small() {
        assert_eq!(std::mem::size_of::<Value>(), 32);
        assert_eq!(std::mem::size_of::<Key>(), 24);
    }

    #[test]
    fn long_and_short_keys_behave_alike() {
        let long = "k".repeat(INLINE_KEY_LEN + 1);
        let short = "k".repeat(INLINE_KEY_LEN);
        let map: Map = [
            (long.as_str(), Value::Null),
            (short.as_str(), Value::Bool(true)),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            map.keys().collect::<Vec<_>>(),
            [short.as_str(), long.as_str()]
        );
        assert_eq!(map.get(&long), Some(&Value::Null));
        let owned: Vec<String> = map.into_iter().map(|(k, _)| k).collect();
        assert_eq!(owned, [short, long]);
    }

    #[test]
    fn depth_counts_containers() {
        let nested = Value::Array(vec![Value::Array(vec![]), Value::from(1)]);
        assert_eq!(nested.depth(), 2);
        assert_eq!(Value::Null.depth(), 0);
    }
}
