//! Vectors generated straight from the seed JSON Schema by geist's
//! `json_schema` generator: each validates against the seed schema and
//! round-trips through geist's loader (the generated `car_bytes` is hex but no
//! real CAR, which the checker reports as a note, as for the oni mock).
//!
//! One tightening: the seed schema's hex pattern `0x[0-9a-f]*` admits an odd
//! number of digits, which no byte string has (this property found that; the
//! loader rightly refuses `0x000`). Generation uses whole bytes,
//! `^0x([0-9a-f]{2})*$`. Likewise a state root's `"/"` may be any string to the
//! schema, but must be a CID to mean anything: generation draws state roots
//! from those of the sample vectors (read from the shared data at test time).
//! And `exit_code` / `gas_used` are "number" to the schema but integers to
//! every VM (the loader refuses `1.5`), as is the epoch: generation draws
//! 64-bit integers for them. Validation uses the seed schema as published.

mod vectors_support;

use geist::generators as gs;
use geist::{Settings, TestCase, check};
use geist_vectors::TestVector;
use geist_vectors::schema::FormatVersion;
use vectors_support::schemas;

/// State roots of the sample vectors.
fn sample_roots() -> Vec<String> {
    let mut roots = Vec::new();
    let dir = vectors_support::corpus().join("test-vectors/transfer");
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for side in ["preconditions", "postconditions"] {
            if let Some(root) = doc[side]["state_tree"]["root_cid"]["/"].as_str() {
                roots.push(root.to_string());
            }
        }
    }
    roots.sort();
    roots.dedup();
    assert!(!roots.is_empty(), "no state roots in {}", dir.display());
    roots
}

#[test]
fn json_schema_vectors_validate_and_round_trip_through_the_loader() {
    let schemas = schemas();
    let seed_path =
        geist_pack::data::workspace_root().join("../shared/spec/test-vector-schema.json");
    let text = std::fs::read_to_string(&seed_path)
        .unwrap_or_else(|e| panic!("seed schema not found at {}: {e}", seed_path.display()));
    let seed: serde_json::Value = serde_json::from_str(&text).expect("seed schema is JSON");
    let mut whole_bytes = seed.clone();
    whole_bytes["definitions"]["hex"]["pattern"] = serde_json::json!("^0x([0-9a-f]{2})*$");
    whole_bytes["definitions"]["state_tree"]["properties"]["root_cid"]["properties"]["/"] =
        serde_json::json!({"enum": sample_roots()});
    let int64 = serde_json::json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX});
    for field in ["exit_code", "gas_used"] {
        whole_bytes["definitions"]["receipt"]["properties"][field] = int64.clone();
    }
    whole_bytes["definitions"]["preconditions"]["properties"]["epoch"] = int64;
    let generator = gs::json_schema(&whole_bytes);
    check(
        Settings::new().test_cases(1_000).seed(Some(11)),
        |tc: &mut TestCase| {
            let value = tc.draw(&generator);
            let violations = schemas.seed.violations(&value);
            assert!(violations.is_empty(), "{violations:?}");
            let written = serde_json::to_vec(&value).unwrap();
            let vector = TestVector::from_json(&written, FormatVersion::Seed)
                .unwrap_or_else(|e| panic!("loader refused a schema-valid vector: {e:?}"));
            let again: serde_json::Value = serde_json::from_str(&vector.to_json()).unwrap();
            assert_eq!(again, value, "loader round trip changed the document");
        },
    );
}
