//! JSON documents valid under a JSON Schema (draft-07), from the engine's
//! `json_schema` generator: every keyword becomes choices, so documents
//! shrink toward the smallest valid one.

use super::Generator;
use crate::test_case::{TestCase, usage_error};
use geist_engine::Value;
use geist_engine::generate::Schema;
use std::sync::Arc;

/// Documents valid under one schema.
#[derive(Clone, Debug)]
pub struct JsonSchemaGenerator {
    schema: Result<Arc<Schema>, String>,
    /// The Hegel schema map (`{"type": "json_schema", "schema": ...}`) sent over the wire.
    wire: Value,
}

/// Documents valid under `schema` (types, properties, required, enum, const,
/// pattern, items, bounds, `allOf` with `if`/`then`, `anyOf`/`oneOf`, local
/// `$ref`). An unsupported keyword is a usage error naming it.
pub fn json_schema(schema: &serde_json::Value) -> JsonSchemaGenerator {
    let wrapper = Value::Map(vec![
        (Value::text("type"), Value::text("json_schema")),
        (Value::text("schema"), from_json(schema)),
    ]);
    JsonSchemaGenerator {
        schema: Schema::parse(&wrapper)
            .map(Arc::new)
            .map_err(|e| format!("json_schema: {e}")),
        wire: wrapper,
    }
}

fn from_json(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Integer(i128::from(i)),
            (None, Some(u)) => Value::Integer(i128::from(u)),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::text(s),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(from_json).collect()),
        serde_json::Value::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| (Value::text(k), from_json(v)))
                .collect(),
        ),
    }
}

fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Integer(i) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(small), _) => serde_json::Value::from(small),
            (_, Ok(unsigned)) => serde_json::Value::from(unsigned),
            // Beyond 64 bits serde_json holds numbers as floats.
            _ => serde_json::Value::from(*i as f64),
        },
        // serde_json holds numbers this large as floats too.
        Value::BigInteger(n) => {
            serde_json::Value::from(n.to_string().parse::<f64>().unwrap_or(f64::NAN))
        }
        Value::Float(f) => serde_json::Value::from(*f),
        Value::String(bytes) | Value::Bytes(bytes) => {
            serde_json::Value::String(String::from_utf8_lossy(bytes).into_owned())
        }
        Value::Array(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => serde_json::Value::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::String(b) => String::from_utf8_lossy(b).into_owned(),
                        other => format!("{other:?}"),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Value::Tagged(_, inner) => to_json(inner),
    }
}

impl Generator for JsonSchemaGenerator {
    type Output = serde_json::Value;

    fn generate(&self, tc: &mut TestCase) -> serde_json::Value {
        match &self.schema {
            Ok(schema) => to_json(&tc.choose_schema(schema, &|| self.wire.clone())),
            Err(message) => usage_error(message.clone()),
        }
    }
}
