//! serde serialization into Calldata: derive `Serialize`, get a [`Value`] or bytes.
//!
//! The mapping follows serde's data model onto Calldata's:
//! integers of every width become Calldata integers, `bool` a bool, `char` and
//! strings a string, byte buffers (`serde_bytes`) bytes, sequences and tuples an
//! array, maps and structs a map (keys must be strings), `None`, `()` and unit
//! structs null, `Some(v)` and newtype structs `v`. Every enum variant becomes a
//! one-entry map `{"Variant": content}`: null for a unit variant, the value for a
//! newtype variant, an array for a tuple variant, a map for a struct variant.
//! Floats have no Calldata form and are refused.
//!
//! [`Address`] and [`Integer`] serialize through private newtype names that this
//! serializer recognises, so they keep their Calldata types inside user structs.

use super::decode::DecodeError;
use super::encode::encode;
use super::integer::Integer;
use super::value::{ADDRESS_LEN, Address, Map, Value};
use serde::ser::{self, Serialize};

/// The newtype name under which an [`Address`] travels through serde.
pub(crate) const ADDRESS_TOKEN: &str = "$geist::calldata::Address";
/// The newtype name under which an [`Integer`] too wide for `i128`/`u128` travels
/// through serde, as a decimal string.
pub(crate) const INTEGER_TOKEN: &str = "$geist::calldata::Integer";

/// An error converting between user types and Calldata.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SerdeError {
    /// The bytes were not canonical Calldata.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The value did not fit the type (or the type has no Calldata form).
    #[error("{0}")]
    Message(String),
}

impl ser::Error for SerdeError {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        SerdeError::Message(message.to_string())
    }
}

impl serde::de::Error for SerdeError {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        SerdeError::Message(message.to_string())
    }
}

/// Converts any `Serialize` type to a Calldata [`Value`].
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, SerdeError> {
    value.serialize(ValueSerializer)
}

/// Converts any `Serialize` type straight to canonical Calldata bytes.
pub fn to_bytes<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, SerdeError> {
    Ok(encode(&to_value(value)?))
}

impl Serialize for Value {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Address(address) => address.serialize(serializer),
            Value::Int(integer) => integer.serialize(serializer),
            Value::Bytes(bytes) => serializer.serialize_bytes(bytes),
            Value::Str(text) => serializer.serialize_str(text),
            Value::Array(items) => serializer.collect_seq(items),
            Value::Map(map) => map.serialize(serializer),
        }
    }
}

impl Serialize for Map {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl Serialize for Integer {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(v) = self.to_i64() {
            serializer.serialize_i64(v)
        } else if let Some(v) = self.to_u64() {
            serializer.serialize_u64(v)
        } else if let Some(v) = self.to_i128() {
            serializer.serialize_i128(v)
        } else if let Some(v) = self.to_u128() {
            serializer.serialize_u128(v)
        } else {
            serializer.serialize_newtype_struct(INTEGER_TOKEN, &self.to_string())
        }
    }
}

/// Serializes a byte slice with `serialize_bytes` (what `serde_bytes` does).
struct RawBytes<'a>(&'a [u8]);

impl Serialize for RawBytes<'_> {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

impl Serialize for Address {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(ADDRESS_TOKEN, &RawBytes(self.as_bytes()))
    }
}

fn message(text: impl Into<String>) -> SerdeError {
    SerdeError::Message(text.into())
}

fn variant_map(variant: &str, content: Value) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(variant, content);
    Value::Map(map)
}

/// The serializer that builds [`Value`]s.
struct ValueSerializer;

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = SerdeError;
    type SerializeSeq = SerializeArray;
    type SerializeTuple = SerializeArray;
    type SerializeTupleStruct = SerializeArray;
    type SerializeTupleVariant = SerializeArray;
    type SerializeMap = SerializeMap;
    type SerializeStruct = SerializeMap;
    type SerializeStructVariant = SerializeMap;

    fn serialize_bool(self, v: bool) -> Result<Value, SerdeError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, SerdeError> {
        Err(message(format!("Calldata has no floats (got {v})")))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, SerdeError> {
        Err(message(format!("Calldata has no floats (got {v})")))
    }
    fn serialize_char(self, v: char) -> Result<Value, SerdeError> {
        Ok(Value::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, SerdeError> {
        Ok(Value::Str(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, SerdeError> {
        Ok(Value::Bytes(v.to_vec()))
    }
    fn serialize_none(self) -> Result<Value, SerdeError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, SerdeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, SerdeError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, SerdeError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, SerdeError> {
        Ok(variant_map(variant, Value::Null))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Value, SerdeError> {
        let inner = value.serialize(ValueSerializer)?;
        match (name, inner) {
            (ADDRESS_TOKEN, Value::Bytes(bytes)) => {
                let array: [u8; ADDRESS_LEN] = bytes
                    .try_into()
                    .map_err(|_| message("an address must have 20 bytes"))?;
                Ok(Value::Address(Address(array)))
            }
            (INTEGER_TOKEN, Value::Str(text)) => text
                .parse::<Integer>()
                .map(Value::Int)
                .map_err(|e| message(e.to_string())),
            (ADDRESS_TOKEN | INTEGER_TOKEN, other) => {
                Err(message(format!("{name} cannot hold a {}", other.kind())))
            }
            (_, inner) => Ok(inner),
        }
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, SerdeError> {
        Ok(variant_map(variant, value.serialize(ValueSerializer)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SerializeArray, SerdeError> {
        Ok(SerializeArray {
            variant: None,
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SerializeArray, SerdeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SerializeArray, SerdeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SerializeArray, SerdeError> {
        let mut array = self.serialize_seq(Some(len))?;
        array.variant = Some(variant);
        Ok(array)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<SerializeMap, SerdeError> {
        Ok(SerializeMap {
            variant: None,
            map: Map::new(),
            next_key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<SerializeMap, SerdeError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SerializeMap, SerdeError> {
        let mut map = self.serialize_map(Some(len))?;
        map.variant = Some(variant);
        Ok(map)
    }
}

/// Builds arrays (and the content of tuple variants).
struct SerializeArray {
    variant: Option<&'static str>,
    items: Vec<Value>,
}

impl SerializeArray {
    fn finish(self) -> Value {
        let array = Value::Array(self.items);
        match self.variant {
            Some(variant) => variant_map(variant, array),
            None => array,
        }
    }
}

impl ser::SerializeSeq for SerializeArray {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.items.push(value.serialize(ValueSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for SerializeArray {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for SerializeArray {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleVariant for SerializeArray {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, SerdeError> {
        Ok(self.finish())
    }
}

/// Builds maps (and structs, and the content of struct variants).
struct SerializeMap {
    variant: Option<&'static str>,
    map: Map,
    next_key: Option<String>,
}

impl SerializeMap {
    fn put(&mut self, key: String, value: Value) -> Result<(), SerdeError> {
        if self.map.insert(key.clone(), value).is_some() {
            return Err(message(format!("duplicate map key {key:?}")));
        }
        Ok(())
    }

    fn finish(self) -> Value {
        let map = Value::Map(self.map);
        match self.variant {
            Some(variant) => variant_map(variant, map),
            None => map,
        }
    }
}

impl ser::SerializeMap for SerializeMap {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        match key.serialize(ValueSerializer)? {
            Value::Str(text) => {
                self.next_key = Some(text);
                Ok(())
            }
            other => Err(message(format!(
                "Calldata map keys must be strings, found a {}",
                other.kind()
            ))),
        }
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        let key = self
            .next_key
            .take()
            .ok_or_else(|| message("a map value came before its key"))?;
        let value = value.serialize(ValueSerializer)?;
        self.put(key, value)
    }
    fn end(self) -> Result<Value, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeStruct for SerializeMap {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        let value = value.serialize(ValueSerializer)?;
        self.put(key.to_owned(), value)
    }
    fn end(self) -> Result<Value, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeStructVariant for SerializeMap {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<Value, SerdeError> {
        Ok(self.finish())
    }
}
