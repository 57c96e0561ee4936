//! The typed JSON notation of Calldata values, as used by the shared vectors file.
//!
//! Plain JSON cannot tell bytes from strings or carry big integers, so each value
//! is an object with exactly one key naming its type: `{"null": null}`,
//! `{"bool": true}`, `{"int": "-12"}` (a decimal string), `{"bytes": "00ff"}`,
//! `{"str": "héllo"}`, `{"address": "<40 hex digits>"}`, `{"array": [...]}` and
//! `{"map": {"key": <typed value>}}`. Errors name the JSON path of the culprit.

use super::integer::Integer;
use super::value::{ADDRESS_LEN, Address, Map, Value};
use serde_json::Value as Json;

/// A typed JSON document that is not a Calldata value: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {path}: {message}")]
pub struct TypedJsonError {
    /// The JSON path of the offending element, like `$.map.a.array[2]`.
    pub path: String,
    /// What was wrong.
    pub message: String,
}

/// Converts a value to the typed JSON notation.
pub fn to_typed_json(value: &Value) -> Json {
    let (tag, inner) = match value {
        Value::Null => ("null", Json::Null),
        Value::Bool(b) => ("bool", Json::Bool(*b)),
        Value::Int(i) => ("int", Json::String(i.to_string())),
        Value::Bytes(bytes) => ("bytes", Json::String(hex::encode(bytes))),
        Value::Str(text) => ("str", Json::String(text.clone())),
        Value::Address(address) => ("address", Json::String(hex::encode(address.as_bytes()))),
        Value::Array(items) => (
            "array",
            Json::Array(items.iter().map(to_typed_json).collect()),
        ),
        Value::Map(map) => (
            "map",
            Json::Object(
                map.iter()
                    .map(|(k, v)| (k.to_owned(), to_typed_json(v)))
                    .collect(),
            ),
        ),
    };
    let mut object = serde_json::Map::new();
    object.insert(tag.to_owned(), inner);
    Json::Object(object)
}

/// Converts typed JSON to a value; `path` names the document's root in errors.
pub fn from_typed_json(json: &Json, path: &str) -> Result<Value, TypedJsonError> {
    let fail = |message: String| TypedJsonError {
        path: path.to_owned(),
        message,
    };
    let Json::Object(object) = json else {
        return Err(fail("expected an object with one type key".to_owned()));
    };
    let mut entries = object.iter();
    let (Some((tag, inner)), None) = (entries.next(), entries.next()) else {
        return Err(fail(format!(
            "expected exactly one type key, found {}",
            object.len()
        )));
    };
    let inner_path = format!("{path}.{tag}");
    let fail_inner = |message: String| TypedJsonError {
        path: inner_path.clone(),
        message,
    };
    let as_str = |what: &str| {
        inner
            .as_str()
            .ok_or_else(|| fail_inner(format!("expected a string holding {what}")))
    };
    Ok(match tag.as_str() {
        "null" => match inner {
            Json::Null => Value::Null,
            _ => return Err(fail_inner("expected null".to_owned())),
        },
        "bool" => Value::Bool(
            inner
                .as_bool()
                .ok_or_else(|| fail_inner("expected true or false".to_owned()))?,
        ),
        "int" => {
            let text = as_str("a decimal integer")?;
            let integer: Integer = text.parse().map_err(|e| fail_inner(format!("{e}")))?;
            Value::Int(integer)
        }
        "bytes" => Value::Bytes(
            hex::decode(as_str("hex")?).map_err(|e| fail_inner(format!("bad hex: {e}")))?,
        ),
        "str" => Value::Str(as_str("text")?.to_owned()),
        "address" => {
            let bytes = hex::decode(as_str("40 hex digits")?)
                .map_err(|e| fail_inner(format!("bad hex: {e}")))?;
            let array: [u8; ADDRESS_LEN] = bytes.try_into().map_err(|b: Vec<u8>| {
                fail_inner(format!(
                    "an address has {ADDRESS_LEN} bytes, found {}",
                    b.len()
                ))
            })?;
            Value::Address(Address(array))
        }
        "array" => {
            let items = inner
                .as_array()
                .ok_or_else(|| fail_inner("expected an array".to_owned()))?;
            let values = items
                .iter()
                .enumerate()
                .map(|(index, item)| from_typed_json(item, &format!("{inner_path}[{index}]")))
                .collect::<Result<Vec<_>, _>>()?;
            Value::Array(values)
        }
        "map" => {
            let object = inner
                .as_object()
                .ok_or_else(|| fail_inner("expected an object".to_owned()))?;
            let mut map = Map::with_capacity(object.len());
            for (key, item) in object {
                let value = from_typed_json(
                    item,
                    &format!("{inner_path}[{}]", Json::String(key.clone())),
                )?;
                map.insert(key.clone(), value);
            }
            Value::Map(map)
        }
        other => return Err(fail(format!("unknown type key {other:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_every_kind() {
        let json = json!({"map": {
            "z": {"int": "-18446744073709551616"},
            "a": {"array": [{"null": null}, {"bool": true}, {"bytes": "00ff"}, {"str": "é"}]},
            "b": {"address": "00112233445566778899aabbccddeeff00112233"}
        }});
        let value = from_typed_json(&json, "$").unwrap();
        assert_eq!(to_typed_json(&value), json);
    }

    #[test]
    fn errors_name_the_json_path() {
        let json = json!({"map": {"a": {"array": [{"int": "1.5"}]}}});
        let error = from_typed_json(&json, "$").unwrap_err();
        assert_eq!(error.path, "$.map[\"a\"].array[0].int");
        let error = from_typed_json(&json!({"address": "0011"}), "$").unwrap_err();
        assert!(error.message.contains("20 bytes"));
        assert!(from_typed_json(&json!({"int": "1", "str": "x"}), "$").is_err());
        assert!(from_typed_json(&json!({"float": 1.5}), "$").is_err());
    }
}
