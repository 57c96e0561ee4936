//! Fuzz the strict Calldata decoder and the GenVM result readers on arbitrary bytes.
//!
//! Properties: no panic and no runaway allocation on any input; whatever the
//! decoder accepts is canonical (re-encodes to the same bytes) and survives the
//! text form; sub-VM and module results built on it never panic either.

#![no_main]

use geist_conformance::calldata::{decode, encode, text};
use geist_conformance::genvm::{ModuleResult, Operation, SubVmResult};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = decode(data) {
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
