//! Properties of generated seed-schema vectors, driven by geist's own client:
//! every generated vector validates against the seed schema, checks clean
//! (real CAR with both roots, decodable messages, one receipt per message)
//! and round-trips through the loader; failing cases shrink.

mod vectors_support;

use geist::generators as gs;
use geist::{Settings, TestCase, check};
use geist_vectors::schema::{FormatVersion, detect_format};
use geist_vectors::{TestVector, check_document};
use vectors_support::generate::{Choices, draw_message, draw_seed_vector};
use vectors_support::schemas;

/// Draws from a geist test case, so the shrinker sees every choice.
struct Drawn<'a>(&'a mut TestCase);

impl Choices for Drawn<'_> {
    fn integer(&mut self, min: i64, max: i64) -> i64 {
        self.0
            .draw(&gs::integers::<i64>().min_value(min).max_value(max))
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        self.0.draw(&gs::binary().min_size(0).max_size(max))
    }
    fn text(&mut self, max: usize) -> String {
        self.0.draw(&gs::text().max_size(max))
    }
    fn boolean(&mut self) -> bool {
        self.0.draw(&gs::booleans())
    }
}

#[test]
fn generated_seed_vectors_validate_check_and_round_trip() {
    let schemas = schemas();
    check(
        Settings::new().test_cases(500).seed(Some(7)),
        |tc: &mut TestCase| {
            let value = draw_seed_vector(&mut Drawn(tc));
            tc.note(format!("{value:#}"));
            let violations = schemas.seed.violations(&value);
            assert!(violations.is_empty(), "{violations:?}");
            assert_eq!(detect_format(&value), FormatVersion::Seed);
            let checked =
                check_document("generated", &serde_json::to_vec(&value).unwrap(), &schemas);
            assert!(checked.report.passed(), "{:?}", checked.report.failures);
            let vector = checked.vector.unwrap();
            let written = vector.to_json();
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&written).unwrap(),
                value
            );
            assert_eq!(
                TestVector::from_json(written.as_bytes(), FormatVersion::Seed).unwrap(),
                vector
            );
        },
    );
}

#[test]
fn generated_messages_round_trip_through_their_bytes() {
    check(
        Settings::new().test_cases(2_000).seed(Some(8)),
        |tc: &mut TestCase| {
            let message = draw_message(&mut Drawn(tc));
            tc.note(format!("{message}"));
            let decoded = geist_vectors::message::Message::decode(&message.encode()).unwrap();
            assert_eq!(decoded, message);
        },
    );
}
