//! Fuzz the CBOR payload decoder geist-server reads every message with.
//!
//! Properties: no panic, no runaway allocation or recursion (nesting is
//! capped); a decoded value re-encodes to bytes that decode to the same
//! value; and converting it to an engine value and back (as `generate`
//! schemas and values travel) never panics.

#![no_main]

use geist_protocol::values::{StringForm, from_cbor, to_cbor};
use geist_wire::cbor;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = cbor::decode(data) else {
        return;
    };
    let again = cbor::decode(&cbor::encode(&value)).expect("re-encoded CBOR decodes");
    assert_eq!(format!("{again:?}"), format!("{value:?}"), "re-encoding changed the value");
    let engine = from_cbor(&value);
    for form in [StringForm::Text, StringForm::Tagged(cbor::TAG_HEGEL_STRING)] {
        let back = to_cbor(&engine, form);
        let _ = cbor::encode(&back);
    }
});
