//! Round-trip and canonical-form properties over a seeded corpus.
//!
//! decode(encode(v)) == v; encode(decode(b)) == b whenever b decodes; the decoder
//! never panics on damaged input; the text form and serde round-trip too. A
//! stand-in generator drives these until geist's client exists (the geist-based
//! versions are in tests/calldata_pending/).

mod calldata_support;

use calldata_support::{Rng, draw_value, mutate};
use geist_conformance::calldata::{self, Value, decode, encode, text};

const VALUES: usize = 10_000;

#[test]
fn decode_inverts_encode() {
    let mut rng = Rng::new(1);
    for _ in 0..VALUES {
        let value = draw_value(&mut rng, 4);
        let bytes = encode(&value);
        assert_eq!(
            decode(&bytes).as_ref(),
            Ok(&value),
            "bytes {}",
            hex::encode(&bytes)
        );
    }
}

#[test]
fn every_accepted_input_is_canonical_and_damage_never_panics() {
    let mut rng = Rng::new(2);
    let mut accepted = 0;
    for _ in 0..VALUES {
        let value = draw_value(&mut rng, 3);
        let damaged = mutate(&mut rng, &encode(&value));
        if let Ok(decoded) = decode(&damaged) {
            accepted += 1;
            assert_eq!(encode(&decoded), damaged, "accepted a non-canonical form");
        }
    }
    // Pure noise too.
    for _ in 0..VALUES {
        let length = rng.below(64) as usize;
        let noise = rng.bytes(length);
        if let Ok(decoded) = decode(&noise) {
            accepted += 1;
            assert_eq!(encode(&decoded), noise, "accepted a non-canonical form");
        }
    }
    assert!(
        accepted > 100,
        "only {accepted} damaged inputs decoded: the check is too weak"
    );
}

#[test]
fn text_form_round_trips() {
    let mut rng = Rng::new(3);
    for _ in 0..VALUES {
        let value = draw_value(&mut rng, 4);
        let printed = text::to_text(&value);
        assert_eq!(text::parse_text(&printed).as_ref(), Ok(&value), "{printed}");
    }
}

#[test]
fn serde_value_round_trips() {
    let mut rng = Rng::new(4);
    for _ in 0..VALUES / 10 {
        let value = draw_value(&mut rng, 4);
        let through: Value = calldata::from_value(value.clone()).expect("value deserializes");
        assert_eq!(calldata::to_value(&through).as_ref(), Ok(&value));
    }
}
