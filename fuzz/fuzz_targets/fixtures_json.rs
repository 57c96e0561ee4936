//! Fuzz the fixture runner (`geist fixtures check`) with the lazily pack on arbitrary bytes.
//!
//! Properties: no panic on any file; a fixture that passes still passes after
//! the runner's own re-serialisation of it (`Fixture::to_file_text`); the
//! lazily wire decoder accepts only what re-encodes and decodes back the same.

#![no_main]

use geist_fixtures::{Fixture, Runner};
use geist_lazily::LazilyPack;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let runner = Runner::new().with_pack(LazilyPack);
    let outcome = runner.check_bytes("fuzz.json", data);
    if outcome.passed() {
        let fixture = Fixture::from_slice("fuzz.json", data).expect("a passing fixture loads");
        let again = runner.check_bytes("again.json", fixture.to_file_text().as_bytes());
        assert!(again.passed(), "{again:?}");
    }
    if let Ok(message) = geist_lazily::decode(data) {
        let bytes = geist_lazily::encode(&message);
        assert_eq!(geist_lazily::decode(&bytes).ok(), Some(message));
    }
});
