//! Properties of the Calldata codec, checked with geist's own engine.
//!
//! decode(encode(v)) == v; encode(decode(b)) == b for every b that decodes (one
//! encoding per value); the decoder never panics on damaged or arbitrary bytes;
//! the text form and serde round-trip; sub-VM results round-trip; the borrowed
//! decoder (`decode_ref`) accepts and refuses exactly what `decode` does, with
//! the same errors and values.

use geist::generators as gs;
use geist::{Settings, TestCase, check};
use geist_genvm::calldata::generators::{draw_damage, draw_value};
use geist_genvm::calldata::{self, DecodeError, Value, decode, decode_ref, encode, text};
use geist_genvm::results::SubVmResult;

/// Runs both decoders on `bytes`, asserts they agree, and returns the owned result.
fn decode_both(bytes: &[u8]) -> Result<Value, DecodeError> {
    let owned = decode(bytes);
    match (&owned, decode_ref(bytes)) {
        (Ok(value), Ok(borrowed)) => {
            assert!(
                borrowed == *value,
                "decode_ref gives {borrowed:?}, decode {value:?}"
            );
            assert_eq!(borrowed.to_value(), *value);
        }
        (Err(error), Err(borrowed)) => assert_eq!(borrowed, *error),
        (owned, borrowed) => panic!("decode gives {owned:?}, decode_ref {borrowed:?}"),
    }
    owned
}

fn settings(seed: u64) -> Settings {
    Settings::new()
        .test_cases(10_000)
        .seed(Some(seed))
        .database(None::<&str>)
}

#[test]
fn decode_inverts_encode() {
    check(settings(1), |tc: &mut TestCase| {
        let value = draw_value(tc, 4);
        tc.note(format!("value = {}", text::to_text(&value)));
        let bytes = encode(&value);
        tc.note(format!("bytes = {}", hex::encode(&bytes)));
        assert_eq!(decode_both(&bytes).as_ref(), Ok(&value));
    });
}

#[test]
fn everything_accepted_is_canonical() {
    check(settings(2), |tc: &mut TestCase| {
        let value = draw_value(tc, 3);
        let damaged = draw_damage(tc, &encode(&value));
        tc.note(format!("input = {}", hex::encode(&damaged)));
        // Never panics; when it accepts, the input was the one canonical form.
        if let Ok(decoded) = decode_both(&damaged) {
            assert_eq!(hex::encode(encode(&decoded)), hex::encode(&damaged));
        }
    });
}

#[test]
fn arbitrary_bytes_never_panic_and_accepted_bytes_are_canonical() {
    check(settings(3), |tc: &mut TestCase| {
        let bytes = tc.draw(gs::binary().max_size(64));
        if let Ok(decoded) = decode_both(&bytes) {
            assert_eq!(encode(&decoded), bytes);
        }
        if let Ok(result) = SubVmResult::decode(&bytes) {
            assert_eq!(result.encode(), bytes);
        }
    });
}

#[test]
fn text_form_round_trips() {
    check(settings(4), |tc: &mut TestCase| {
        let value = draw_value(tc, 4);
        let printed = text::to_text(&value);
        tc.note(format!("text = {printed}"));
        assert_eq!(text::parse_text(&printed).as_ref(), Ok(&value));
    });
}

#[test]
fn serde_round_trips_values() {
    check(settings(5), |tc: &mut TestCase| {
        let value = draw_value(tc, 4);
        tc.note(format!("value = {}", text::to_text(&value)));
        let through: Value = calldata::from_value(value.clone()).expect("a value deserializes");
        assert_eq!(calldata::to_value(&through).as_ref(), Ok(&value));
        let bytes = calldata::to_bytes(&value).expect("a value serializes");
        assert_eq!(bytes, encode(&value));
    });
}

#[test]
fn sub_vm_results_round_trip() {
    check(settings(6), |tc: &mut TestCase| {
        let result = match tc.draw(gs::integers::<u8>().max_value(2)) {
            0 => SubVmResult::Return(draw_value(tc, 3)),
            1 => SubVmResult::UserError(tc.draw(gs::text().max_size(30))),
            _ => {
                let code = tc.draw(gs::integers::<i32>());
                let detail = tc.draw(gs::optional(gs::text().max_size(20)));
                let text = match detail {
                    Some(detail) => format!("exit_code {code} # {detail}"),
                    None => format!("exit_code {code}"),
                };
                let error =
                    geist_genvm::results::VmError::parse(&text).expect("valid by construction");
                SubVmResult::VmError(error)
            }
        };
        tc.note(format!("result = {result}"));
        assert_eq!(SubVmResult::decode(&result.encode()).as_ref(), Ok(&result));
    });
}
