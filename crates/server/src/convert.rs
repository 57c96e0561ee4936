//! Conversion between CBOR payload values and engine values.

use crate::ProtocolVersion;
use geist_engine::Value;
use geist_wire::cbor::{self, Value as Cbor};

/// A CBOR value as an engine value. Text and either Hegel string tag become
/// strings; bignums within 128 bits become integers; other tags pass through.
pub fn from_cbor(value: &Cbor) -> Value {
    match value {
        Cbor::Null => Value::Null,
        Cbor::Bool(b) => Value::Bool(*b),
        Cbor::Integer(i) => Value::Integer(i128::from(*i)),
        Cbor::Float(f) => Value::Float(*f),
        Cbor::Bytes(b) => Value::Bytes(b.clone()),
        Cbor::Text(t) => Value::String(t.as_bytes().to_vec()),
        Cbor::Array(items) => Value::Array(items.iter().map(from_cbor).collect()),
        Cbor::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| (from_cbor(k), from_cbor(v)))
                .collect(),
        ),
        Cbor::Tag(tag @ (cbor::TAG_POSITIVE_BIGNUM | cbor::TAG_NEGATIVE_BIGNUM), inner) => {
            match cbor::as_i128(value) {
                Some(n) => Value::Integer(n),
                None => Value::Tagged(*tag, Box::new(from_cbor(inner))),
            }
        }
        Cbor::Tag(cbor::TAG_HEGEL_STRING | cbor::TAG_REFERENCE_STRING, inner) => {
            match inner.as_ref() {
                Cbor::Bytes(b) => Value::String(b.clone()),
                Cbor::Text(t) => Value::String(t.as_bytes().to_vec()),
                other => from_cbor(other),
            }
        }
        Cbor::Tag(tag, inner) => Value::Tagged(*tag, Box::new(from_cbor(inner))),
        _ => Value::Null,
    }
}

/// An engine value as CBOR for `version` (strings as that version's string tag).
pub fn to_cbor(value: &Value, version: ProtocolVersion) -> Cbor {
    match value {
        Value::Null => Cbor::Null,
        Value::Bool(b) => Cbor::Bool(*b),
        Value::Integer(n) => cbor::integer(*n),
        Value::Float(f) => Cbor::Float(*f),
        Value::Bytes(b) => Cbor::Bytes(b.clone()),
        Value::String(b) => Cbor::Tag(version.string_tag(), Box::new(Cbor::Bytes(b.clone()))),
        Value::Array(items) => Cbor::Array(items.iter().map(|v| to_cbor(v, version)).collect()),
        Value::Map(entries) => Cbor::Map(
            entries
                .iter()
                .map(|(k, v)| (to_cbor(k, version), to_cbor(v, version)))
                .collect(),
        ),
        Value::Tagged(tag, inner) => Cbor::Tag(*tag, Box::new(to_cbor(inner, version))),
    }
}
