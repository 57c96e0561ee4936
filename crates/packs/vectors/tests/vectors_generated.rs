//! Generated seed-schema vectors validate against the seed schema, check
//! clean, and round-trip through the loader (deterministic sweep over seeds;
//! the geist-driven property over the same generator is `vectors_properties.rs`).

mod vectors_support;

use geist_vectors::schema::{FormatVersion, detect_format};
use geist_vectors::{TestVector, check_document};
use vectors_support::generate::{SplitMix, draw_message, draw_seed_vector};
use vectors_support::schemas;

#[test]
fn generated_seed_vectors_validate_check_and_round_trip() {
    let schemas = schemas();
    let mut classes = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let value = draw_seed_vector(&mut SplitMix(seed));
        classes.insert(value["class"].as_str().unwrap_or_default().to_string());
        let violations = schemas.seed.violations(&value);
        assert!(
            violations.is_empty(),
            "seed {seed}: {violations:?}\n{value:#}"
        );
        assert_eq!(detect_format(&value), FormatVersion::Seed);
        let text = serde_json::to_vec(&value).unwrap();
        let checked = check_document(&format!("generated-{seed}"), &text, &schemas);
        assert!(
            checked.report.passed(),
            "seed {seed}: {:?}",
            checked.report.failures
        );
        let vector = checked.vector.unwrap();
        let written = vector.to_json();
        let reread: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(
            reread, value,
            "seed {seed}: writing back changed the document"
        );
        assert_eq!(
            TestVector::from_json(written.as_bytes(), FormatVersion::Seed).unwrap(),
            vector
        );
    }
    assert_eq!(classes.len(), 4, "all classes drawn: {classes:?}");
}

#[test]
fn generated_messages_round_trip_through_their_bytes() {
    for seed in 0..500u64 {
        let message = draw_message(&mut SplitMix(seed));
        let decoded = geist_vectors::message::Message::decode(&message.encode()).unwrap();
        assert_eq!(decoded, message, "seed {seed}");
        assert_eq!(
            geist_vectors::address::Address::from_bytes(&message.to.to_bytes()).unwrap(),
            message.to
        );
    }
}
