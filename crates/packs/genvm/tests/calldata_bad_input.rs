//! Hostile inputs from the issue: each gets a clear error naming offset and rule,
//! without a panic and without allocating more than the input justifies. The
//! borrowed decoder (`decode_ref`) must refuse each one with the same error.

use geist_genvm::calldata::{DecodeRule, decode, decode_ref};

fn refusal(input: &[u8]) -> (usize, DecodeRule) {
    let error = decode(input).expect_err("hostile input accepted");
    let borrowed = decode_ref(input).expect_err("hostile input accepted by decode_ref");
    assert_eq!(
        borrowed, error,
        "decode_ref refuses {input:02x?} differently"
    );
    (error.offset, error.rule)
}

#[test]
fn truncated_inputs() {
    for encoded in [&b"\x2chello"[..], b"\x1d\x01\x01\x01", b"\x0e\x01a\x01"] {
        for cut in 0..encoded.len() {
            let (_, rule) = refusal(&encoded[..cut]);
            assert!(
                matches!(
                    rule,
                    DecodeRule::Empty
                        | DecodeRule::Truncated { .. }
                        | DecodeRule::UnterminatedUleb { .. }
                ),
                "{:02x?}: {rule:?}",
                &encoded[..cut]
            );
        }
    }
}

#[test]
fn ten_byte_uleb_that_overflows() {
    // A string whose length head has 10 groups and more than 64 bits.
    let (offset, rule) = refusal(&[0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    assert_eq!(offset, 0);
    assert_eq!(
        rule,
        DecodeRule::LengthOverflow {
            what: "string length"
        }
    );
    // A map key length that overflows.
    let (offset, rule) = refusal(&[
        0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00,
    ]);
    assert_eq!(offset, 1);
    assert_eq!(
        rule,
        DecodeRule::LengthOverflow {
            what: "map key length"
        }
    );
}

#[test]
fn length_of_two_to_the_forty() {
    let mut input = Vec::new();
    let mut head: u64 = (1 << 40) << 3 | 3;
    while head >= 0x80 {
        input.push(head as u8 | 0x80);
        head >>= 7;
    }
    input.push(head as u8);
    input.extend_from_slice(b"tiny");
    let (offset, rule) = refusal(&input);
    assert_eq!(offset, 0);
    assert_eq!(
        rule,
        DecodeRule::Truncated {
            what: "a byte string",
            needed: 1 << 40,
            available: 4
        }
    );
}

#[test]
fn nesting_ten_thousand_deep() {
    let mut input = vec![0x0d; 10_000];
    input.push(0x00);
    let (offset, rule) = refusal(&input);
    assert!(matches!(rule, DecodeRule::TooDeep { .. }));
    assert!(offset < 10_000);
    let mut maps = Vec::new();
    for _ in 0..10_000 {
        maps.extend_from_slice(&[0x0e, 0x00]);
    }
    maps.push(0x00);
    assert!(matches!(refusal(&maps).1, DecodeRule::TooDeep { .. }));
}

#[test]
fn invalid_utf8_in_strings_and_keys() {
    let (offset, rule) = refusal(&[0x1c, b'o', b'k', 0xc3]);
    assert_eq!(
        (offset, rule),
        (3, DecodeRule::InvalidUtf8 { what: "string" })
    );
    let (offset, rule) = refusal(&[0x0e, 0x01, 0xff, 0x00]);
    assert_eq!(
        (offset, rule),
        (2, DecodeRule::InvalidUtf8 { what: "map key" })
    );
    // Surrogates encoded in UTF-8 (CESU) are not UTF-8 either.
    assert!(matches!(
        refusal(&[0x1c, 0xed, 0xa0, 0x80]).1,
        DecodeRule::InvalidUtf8 { .. }
    ));
}

#[test]
fn address_with_nineteen_bytes() {
    let mut input = vec![0x18];
    input.extend_from_slice(&[0xaa; 19]);
    let (offset, rule) = refusal(&input);
    assert_eq!(offset, 0);
    assert_eq!(
        rule,
        DecodeRule::Truncated {
            what: "an address",
            needed: 20,
            available: 19
        }
    );
}

#[test]
fn array_count_beyond_the_input() {
    // 2^60 elements declared, 3 bytes present: refused before any allocation.
    let mut input = Vec::new();
    let mut head: u64 = (1 << 60) << 3 | 5;
    while head >= 0x80 {
        input.push(head as u8 | 0x80);
        head >>= 7;
    }
    input.push(head as u8);
    input.extend_from_slice(&[0, 0, 0]);
    assert!(matches!(
        refusal(&input).1,
        DecodeRule::Truncated {
            what: "an array",
            ..
        }
    ));
}
