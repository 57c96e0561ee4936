//! Fuzz the strict Calldata decoder and the GenVM result readers on arbitrary bytes.
//!
//! Properties: no panic and no runaway allocation on any input; whatever the
//! decoder accepts is canonical (re-encodes to the same bytes) and survives the
//! text form; the borrowed decoder (`decode_ref`) accepts and refuses exactly
//! the same inputs, with the same errors and values; sub-VM and module results
//! built on it never panic either.

#![no_main]

use geist_genvm::calldata::{decode, decode_ref, encode, text};
use geist_genvm::results::{ModuleResult, Operation, SubVmResult};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let owned = decode(data);
    match (&owned, decode_ref(data)) {
        (Ok(value), Ok(borrowed)) => {
            assert!(borrowed == *value, "decode_ref differs");
            assert_eq!(borrowed.to_value(), *value, "ValueRef::to_value differs");
        }
        (Err(a), Err(b)) => assert_eq!(*a, b, "decode_ref refuses differently"),
        (a, b) => panic!("decode and decode_ref disagree: {a:?} vs {b:?}"),
    }
    if let Ok(value) = owned {
        assert_eq!(encode(&value), data, "accepted a non-canonical encoding");
        let printed = text::to_text(&value);
        assert_eq!(
            text::parse_text(&printed).ok().as_ref(),
            Some(&value),
            "text form: {printed}"
        );
        for (operation, _) in Operation::ALL {
            let _ = ModuleResult::from_value(&value, operation);
        }
    }
    if let Ok(result) = SubVmResult::decode(data) {
        assert_eq!(result.encode(), data, "sub-VM result does not re-encode");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(value) = text::parse_text(text) {
            assert_eq!(decode(&encode(&value)).ok().as_ref(), Some(&value));
        }
    }
});
