//! serde deserialization from Calldata: decode bytes or a [`Value`] into user types.
//!
//! The inverse of the mapping in [`ser`](super::ser). Enums read `{"Variant":
//! content}` (and, for unit variants, also a bare `"Variant"` string). A Calldata
//! byte string also deserializes into a `Vec<u8>` without `serde_bytes`. Sequences
//! must be consumed completely: a struct or tuple that reads fewer elements than
//! the array holds is an error, never a silent truncation.

use super::decode::decode;
use super::integer::Integer;
use super::ser::{ADDRESS_TOKEN, INTEGER_TOKEN, SerdeError};
use super::value::{ADDRESS_LEN, Address, Map, Value};
use serde::de::{
    self, Deserialize, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess,
    IntoDeserializer, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use std::fmt;

/// Converts a Calldata [`Value`] to any `Deserialize` type.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, SerdeError> {
    T::deserialize(value)
}

/// Decodes canonical Calldata bytes (strictly) into any `Deserialize` type.
pub fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, SerdeError> {
    from_value(decode(bytes)?)
}

fn error(text: impl fmt::Display) -> SerdeError {
    SerdeError::Message(text.to_string())
}

/// Presents a single-entry map `{token: value}`: how addresses and very large
/// integers reach `deserialize_any` visitors.
fn visit_token_map<'de, V: Visitor<'de>>(
    token: &'static str,
    value: Value,
    visitor: V,
) -> Result<V::Value, SerdeError> {
    visitor.visit_map(EntriesAccess {
        entries: std::iter::once((token.to_owned(), value)),
        pending: None,
    })
}

impl<'de> Deserializer<'de> for Value {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Int(integer) => {
                if let Some(v) = integer.to_i64() {
                    visitor.visit_i64(v)
                } else if let Some(v) = integer.to_u64() {
                    visitor.visit_u64(v)
                } else if let Some(v) = integer.to_i128() {
                    visitor.visit_i128(v)
                } else if let Some(v) = integer.to_u128() {
                    visitor.visit_u128(v)
                } else {
                    visit_token_map(INTEGER_TOKEN, Value::Str(integer.to_string()), visitor)
                }
            }
            Value::Bytes(bytes) => visitor.visit_byte_buf(bytes),
            Value::Str(text) => visitor.visit_string(text),
            Value::Address(address) => {
                visit_token_map(ADDRESS_TOKEN, Value::Bytes(address.0.to_vec()), visitor)
            }
            Value::Array(items) => visit_array(items, visitor),
            Value::Map(map) => visitor.visit_map(EntriesAccess {
                entries: map.into_iter(),
                pending: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match (name, self) {
            (ADDRESS_TOKEN, Value::Address(address)) => visitor.visit_bytes(&address.0),
            (ADDRESS_TOKEN, other) => Err(error(format!(
                "expected an address, found a {}",
                other.kind()
            ))),
            (_, other) => visitor.visit_newtype_struct(other),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self {
            // Lets a plain Vec<u8> read a Calldata byte string.
            Value::Bytes(bytes) => {
                visit_array(bytes.into_iter().map(Value::from).collect(), visitor)
            }
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match self {
            Value::Str(variant) => visitor.visit_enum(VariantContent {
                variant,
                content: None,
            }),
            Value::Map(map) if map.len() == 1 => {
                let mut entries = map.into_iter();
                let Some((variant, content)) = entries.next() else {
                    return Err(error("an enum needs one variant key"));
                };
                visitor.visit_enum(VariantContent {
                    variant,
                    content: Some(content),
                })
            }
            other => Err(error(format!(
                "an enum must be a one-entry map {{\"Variant\": ...}}, found a {}{}",
                other.kind(),
                match &other {
                    Value::Map(map) => format!(" with {} entries", map.len()),
                    _ => String::new(),
                }
            ))),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct tuple tuple_struct map struct identifier ignored_any
    }
}

impl IntoDeserializer<'_, SerdeError> for Value {
    type Deserializer = Value;
    fn into_deserializer(self) -> Value {
        self
    }
}

fn visit_array<'de, V: Visitor<'de>>(
    items: Vec<Value>,
    visitor: V,
) -> Result<V::Value, SerdeError> {
    let length = items.len();
    let mut access = ItemsAccess {
        items: items.into_iter(),
    };
    let result = visitor.visit_seq(&mut access)?;
    let left = access.items.len();
    if left > 0 {
        return Err(de::Error::invalid_length(
            length,
            &format!("{} elements", length - left).as_str(),
        ));
    }
    Ok(result)
}

struct ItemsAccess {
    items: std::vec::IntoIter<Value>,
}

impl<'de> SeqAccess<'de> for ItemsAccess {
    type Error = SerdeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, SerdeError> {
        self.items
            .next()
            .map(|item| seed.deserialize(item))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct EntriesAccess<I> {
    entries: I,
    pending: Option<Value>,
}

impl<'de, I: ExactSizeIterator<Item = (String, Value)>> MapAccess<'de> for EntriesAccess<I> {
    type Error = SerdeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, SerdeError> {
        match self.entries.next() {
            Some((key, value)) => {
                self.pending = Some(value);
                seed.deserialize(Value::Str(key)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<T::Value, SerdeError> {
        let value = self
            .pending
            .take()
            .ok_or_else(|| error("a map value was requested before its key"))?;
        seed.deserialize(value)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

struct VariantContent {
    variant: String,
    content: Option<Value>,
}

impl<'de> EnumAccess<'de> for VariantContent {
    type Error = SerdeError;
    type Variant = VariantValue;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, VariantValue), SerdeError> {
        let variant = seed.deserialize(Value::Str(self.variant))?;
        Ok((variant, VariantValue(self.content)))
    }
}

struct VariantValue(Option<Value>);

impl<'de> VariantAccess<'de> for VariantValue {
    type Error = SerdeError;
    fn unit_variant(self) -> Result<(), SerdeError> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(other) => Err(error(format!(
                "a unit variant holds null, found a {}",
                other.kind()
            ))),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, SerdeError> {
        match self.0 {
            Some(content) => seed.deserialize(content),
            None => Err(error("a newtype variant needs content")),
        }
    }
    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match self.0 {
            Some(Value::Array(items)) => visit_array(items, visitor),
            _ => Err(error("a tuple variant holds an array")),
        }
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match self.0 {
            Some(content @ Value::Map(_)) => content.deserialize_any(visitor),
            _ => Err(error("a struct variant holds a map")),
        }
    }
}

/// Bytes from anything that can carry them: a byte string or a sequence of `u8`.
struct ByteVec(Vec<u8>);

impl<'de> de::Deserialize<'de> for ByteVec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BytesVisitor;
        impl<'de> Visitor<'de> for BytesVisitor {
            type Value = ByteVec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ByteVec, E> {
                Ok(ByteVec(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<ByteVec, E> {
                Ok(ByteVec(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ByteVec, A::Error> {
                let mut out = Vec::new();
                while let Some(byte) = seq.next_element::<u8>()? {
                    out.push(byte);
                }
                Ok(ByteVec(out))
            }
        }
        deserializer.deserialize_byte_buf(BytesVisitor)
    }
}

impl<'de> de::Deserialize<'de> for Address {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AddressVisitor;
        impl<'de> Visitor<'de> for AddressVisitor {
            type Value = Address;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a 20-byte address")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Address, E> {
                let array: [u8; ADDRESS_LEN] = v
                    .try_into()
                    .map_err(|_| E::invalid_length(v.len(), &"20 bytes"))?;
                Ok(Address(array))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Address, E> {
                let digits = v.strip_prefix("0x").unwrap_or(v);
                let bytes = hex::decode(digits).map_err(E::custom)?;
                self.visit_bytes(&bytes)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Address, A::Error> {
                let bytes = ByteVec::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                self.visit_bytes(&bytes.0)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Address, D::Error> {
                let bytes = ByteVec::deserialize(d)?;
                self.visit_bytes(&bytes.0)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Address, A::Error> {
                match map.next_key::<String>()? {
                    Some(key) if key == ADDRESS_TOKEN => {
                        let bytes: ByteVec = map.next_value()?;
                        self.visit_bytes(&bytes.0)
                    }
                    _ => Err(de::Error::custom("expected an address")),
                }
            }
        }
        deserializer.deserialize_newtype_struct(ADDRESS_TOKEN, AddressVisitor)
    }
}

impl<'de> de::Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IntegerVisitor;
        impl<'de> Visitor<'de> for IntegerVisitor {
            type Value = Integer;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Integer, E> {
                Ok(Integer::from(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Integer, E> {
                Ok(Integer::from(v))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Integer, E> {
                Ok(Integer::from(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Integer, E> {
                Ok(Integer::from(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Integer, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Integer, A::Error> {
                match map.next_key::<String>()? {
                    Some(key) if key == INTEGER_TOKEN => {
                        let text: String = map.next_value()?;
                        text.parse().map_err(de::Error::custom)
                    }
                    _ => Err(de::Error::custom("expected an integer")),
                }
            }
        }
        deserializer.deserialize_any(IntegerVisitor)
    }
}

impl<'de> de::Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

impl<'de> de::Deserialize<'de> for Map {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Map(map) => Ok(map),
            other => Err(de::Error::custom(format!(
                "expected a map, found a {}",
                other.kind()
            ))),
        }
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Calldata value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Err(E::custom(format!("Calldata has no floats (got {v})")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Bytes(v.to_vec()))
    }
    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Bytes(v))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        let mut first = true;
        while let Some(key) = access.next_key::<String>()? {
            if first && key == ADDRESS_TOKEN {
                let bytes: ByteVec = access.next_value()?;
                let array: [u8; ADDRESS_LEN] = bytes
                    .0
                    .try_into()
                    .map_err(|_| de::Error::custom("an address has 20 bytes"))?;
                return Ok(Value::Address(Address(array)));
            }
            if first && key == INTEGER_TOKEN {
                let text: String = access.next_value()?;
                return text.parse().map(Value::Int).map_err(de::Error::custom);
            }
            first = false;
            let value: Value = access.next_value()?;
            if map.insert(key.clone(), value).is_some() {
                return Err(de::Error::custom(format!("duplicate map key {key:?}")));
            }
        }
        Ok(Value::Map(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calldata::{encode, to_bytes, to_value};
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Shape {
        Point,
        Circle(u32),
        Pair(i8, String),
        Rect { width: u64, height: u64 },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Record {
        name: String,
        owner: Address,
        balance: Integer,
        tags: Vec<String>,
        shapes: Vec<Shape>,
        note: Option<String>,
        extra: BTreeMap<String, i64>,
        raw: Value,
        blob: Vec<u8>,
    }

    fn record() -> Record {
        Record {
            name: "alice".into(),
            owner: Address([7; 20]),
            balance: "-340282366920938463463374607431768211457".parse().unwrap(),
            tags: vec!["a".into(), "b".into()],
            shapes: vec![
                Shape::Point,
                Shape::Circle(3),
                Shape::Pair(-1, "x".into()),
                Shape::Rect {
                    width: 2,
                    height: 5,
                },
            ],
            note: None,
            extra: [("k".to_owned(), -5)].into_iter().collect(),
            raw: Value::Bytes(vec![1, 2]),
            blob: vec![9, 8],
        }
    }

    #[test]
    fn derived_types_round_trip_through_bytes() {
        let bytes = to_bytes(&record()).unwrap();
        let back: Record = from_bytes(&bytes).unwrap();
        assert_eq!(back, record());
    }

    #[test]
    fn enums_are_one_entry_maps() {
        let text = |shape: &Shape| crate::calldata::text::to_text(&to_value(shape).unwrap());
        assert_eq!(text(&Shape::Point), r#"{"Point": null}"#);
        assert_eq!(text(&Shape::Circle(3)), r#"{"Circle": 3}"#);
        assert_eq!(text(&Shape::Pair(1, "y".into())), r#"{"Pair": [1, "y"]}"#);
        assert_eq!(
            text(&Shape::Rect {
                width: 1,
                height: 2
            }),
            r#"{"Rect": {"height": 2, "width": 1}}"#
        );
        assert_eq!(
            from_value::<Shape>(Value::from("Point")).unwrap(),
            Shape::Point
        );
        let two: Map = [("Point", Value::Null), ("Circle", Value::from(1))]
            .into_iter()
            .collect();
        assert!(from_value::<Shape>(Value::Map(two)).is_err());
    }

    #[test]
    fn value_and_address_keep_their_types() {
        let value = to_value(&record()).unwrap();
        let Value::Map(map) = &value else {
            panic!("not a map")
        };
        assert_eq!(map.get("owner"), Some(&Value::Address(Address([7; 20]))));
        let again = to_value(&from_value::<Value>(value.clone()).unwrap()).unwrap();
        assert_eq!(again, value);
        assert_eq!(encode(&again), encode(&value));
    }

    #[test]
    fn mismatches_are_errors() {
        assert!(to_value(&1.5f64).is_err());
        let mut keyed = BTreeMap::new();
        keyed.insert(1u8, 2u8);
        assert!(
            to_value(&keyed)
                .unwrap_err()
                .to_string()
                .contains("strings")
        );
        assert!(from_value::<(u8, u8)>(Value::Array(vec![1.into(), 2.into(), 3.into()])).is_err());
        assert!(from_value::<u8>(Value::from(300)).is_err());
        assert!(from_bytes::<u8>(&[0x01, 0x00]).is_err());
    }
}
