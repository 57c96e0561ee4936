//! Fuzz the GenVM result readers (`geist genvm decode-result`) on arbitrary bytes.
//!
//! Properties: no panic; a VM-error string that parses prints back to exactly
//! itself (the bytes are hashed), in either vocabulary; a sub-VM result that
//! decodes re-encodes to the same bytes.

#![no_main]

use geist_genvm::results::{SubVmResult, VmError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(error) = VmError::parse(text)
    {
        assert_eq!(error.to_string(), text);
    }
    if let Ok(result) = SubVmResult::decode(data) {
        assert_eq!(result.encode(), data);
        let _ = result.to_string();
    }
});
