//! The `json_schema` generator against a real JSON Schema validator: every
//! generated value must validate, for the seed test-vector schema and for
//! schemas exercising each supported keyword.

use geist_engine::data::{DEFAULT_MAX_CHOICES, Status};
use geist_engine::generate::{Schema, generate};
use geist_engine::random::Source;
use geist_engine::{TestData, Value};
use std::path::PathBuf;

fn to_engine(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i128::from(i)),
            None => Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        serde_json::Value::String(s) => Value::text(s),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(to_engine).collect()),
        serde_json::Value::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| (Value::text(k), to_engine(v)))
                .collect(),
        ),
    }
}

fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Integer(i) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(small), _) => serde_json::json!(small),
            (_, Ok(unsigned)) => serde_json::json!(unsigned),
            // Beyond 64 bits JSON numbers are floats to serde_json; the sign and
            // magnitude are what the bounds checks need.
            _ => serde_json::json!(*i as f64),
        },
        Value::Float(f) => serde_json::json!(f),
        Value::String(b) => serde_json::Value::String(String::from_utf8_lossy(b).into_owned()),
        Value::Array(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => serde_json::Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.as_str().unwrap_or("").to_string(), to_json(v)))
                .collect(),
        ),
        other => panic!("unexpected {other:?}"),
    }
}

/// Generates from `schema` over many seeds; every value must validate. Returns the values.
fn check_all(schema: &serde_json::Value, seeds: u64) -> Vec<serde_json::Value> {
    let validator = jsonschema::validator_for(schema).expect("a valid schema");
    let wrapper = Value::Map(vec![
        (Value::text("type"), Value::text("json_schema")),
        (Value::text("schema"), to_engine(schema)),
    ]);
    let parsed = Schema::parse(&wrapper).expect("geist accepts the schema");
    let mut values = Vec::new();
    for seed in 0..seeds {
        let mut data = TestData::generating(vec![], Source::from_seed(seed), DEFAULT_MAX_CHOICES);
        match generate(&parsed, &mut data) {
            Ok(v) => {
                let json = to_json(&v);
                let errors: Vec<String> = validator
                    .iter_errors(&json)
                    .map(|e| e.to_string())
                    .collect();
                assert!(errors.is_empty(), "seed {seed}: {json}\n{errors:?}");
                values.push(json);
            }
            Err(_) => assert_ne!(data.status, Some(Status::Interesting)),
        }
    }
    assert!(
        values.len() as u64 > seeds / 2,
        "too many rejections: {} of {seeds}",
        values.len()
    );
    values
}

#[test]
fn every_generated_test_vector_validates_against_the_seed_schema() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/spec/test-vector-schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("seed schema not found at {}: {e}", path.display()));
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let values = check_all(&schema, 500);
    // The if/then branch is exercised: class "messages" brings apply_messages.
    let with_messages = values
        .iter()
        .filter(|v| v["class"] == "messages")
        .inspect(|v| assert!(v.get("apply_messages").is_some(), "{v}"))
        .count();
    assert!(with_messages > 0);
}

#[test]
fn each_keyword_is_respected() {
    let schema = serde_json::json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "required": ["n", "x", "s", "list", "choice", "tuple"],
        "additionalProperties": false,
        "definitions": {"small": {"type": "integer", "minimum": -3, "exclusiveMaximum": 4}},
        "properties": {
            "n": {"$ref": "#/definitions/small"},
            "x": {"type": "number", "exclusiveMinimum": 0.5, "maximum": 2},
            "s": {"type": "string", "minLength": 2, "maxLength": 5},
            "p": {"type": "string", "pattern": "^[a-f]{3}-[0-9]+$"},
            "list": {"type": "array", "items": {"enum": [1, "two", null]}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
            "choice": {"anyOf": [{"type": "boolean"}, {"const": "fixed"}]},
            "tuple": {"type": "array", "items": [{"type": "null"}, {"type": "integer"}]},
            "both": {"allOf": [{"type": "integer"}, {"minimum": 10}]},
            "many": {"type": ["string", "integer"]}
        }
    });
    check_all(&schema, 300);
}

#[test]
fn unsupported_or_broken_schemas_are_refused_clearly() {
    for (schema, expected) in [
        (
            serde_json::json!({"not": {"type": "string"}}),
            "\"not\" is not supported",
        ),
        (
            serde_json::json!({"$ref": "#/definitions/missing"}),
            "cannot resolve",
        ),
        (
            serde_json::json!({"type": "string", "pattern": "("}),
            "#/pattern",
        ),
        (serde_json::json!({"anyOf": []}), "must not be empty"),
    ] {
        let wrapper = Value::Map(vec![
            (Value::text("type"), Value::text("json_schema")),
            (Value::text("schema"), to_engine(&schema)),
        ]);
        let error = Schema::parse(&wrapper).expect_err("refused").message;
        assert!(error.contains(expected), "{schema}: {error}");
    }
}

#[test]
fn all_of_merges_its_parts() {
    let schema = serde_json::json!({"allOf": [{"type": "integer"}, {"minimum": 10}]});
    for v in check_all(&schema, 200) {
        assert!(v.as_f64().is_some_and(|n| n >= 10.0), "{v}");
    }
}

#[test]
fn integer_bounds_are_exact_at_the_64_bit_edges() {
    let schema =
        serde_json::json!({"type": "integer", "minimum": i64::MAX - 3, "maximum": i64::MAX});
    for v in check_all(&schema, 100) {
        assert!(v.as_i64().is_some(), "{v} is beyond i64");
    }
}
