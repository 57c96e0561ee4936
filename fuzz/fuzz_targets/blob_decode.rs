//! Fuzz reproduction blobs and database entries: geist's own form and the
//! libhegel blobs geist also reads (`geist_engine::blob`).
//!
//! Properties: no panic and no runaway inflation (a zlib payload is capped);
//! bytes accepted as a geist entry re-encode to exactly themselves; whatever
//! a blob decodes to survives a round trip through geist's own blob.

#![no_main]

use base64::Engine;
use geist_engine::blob::{decode_blob, encode_blob};
use geist_engine::database::{decode_choices, encode_choices};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(choices) = decode_choices(data) {
        assert_eq!(encode_choices(&choices), data, "not canonical");
    }
    let blob = base64::engine::general_purpose::STANDARD.encode(data);
    if let Ok(choices) = decode_blob(&blob) {
        assert_eq!(decode_blob(&encode_blob(&choices)), Ok(choices));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = decode_blob(text);
    }
});
