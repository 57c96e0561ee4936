//! Sub-VM and module results through the public API, with shared vector values.

use geist_genvm::calldata::{self, text::parse_text};
use geist_genvm::results::{
    ModuleAnswer, ModuleResult, Operation, SubVmResult, SubVmResultError, VmError, VmErrorParam,
};

#[test]
fn a_return_blob_wraps_canonical_calldata() {
    let value =
        parse_text(r#"{"a": [1, b#ff], "b": addr#00112233445566778899aabbccddeeff00112233}"#)
            .unwrap();
    let mut blob = vec![0];
    blob.extend_from_slice(&calldata::encode(&value));
    assert_eq!(
        SubVmResult::decode(&blob).unwrap(),
        SubVmResult::Return(value)
    );
    // One non-canonical byte inside the value: refused, offset counted from the blob.
    let mut unsorted = vec![0];
    unsorted.extend_from_slice(&hex_bytes("16017a0902616111"));
    let error = SubVmResult::decode(&unsorted).unwrap_err();
    assert!(matches!(error, SubVmResultError::ReturnValue(ref e) if e.offset == 4));
    assert!(error.to_string().contains("byte offset 5"), "{error}");
}

#[test]
fn every_code_outside_zero_to_two_is_refused() {
    for code in 3..=255u8 {
        assert_eq!(
            SubVmResult::decode(&[code, 0]),
            Err(SubVmResultError::UnknownCode(code))
        );
    }
}

#[test]
fn vm_errors_are_validated() {
    let result = SubVmResult::decode(b"\x02exit_code -1 # killed").unwrap();
    let SubVmResult::VmError(VmError {
        code,
        param,
        detail,
        ..
    }) = result
    else {
        panic!("not a vm error")
    };
    assert_eq!(code, "exit_code");
    assert_eq!(param, Some(VmErrorParam::I32(-1)));
    assert_eq!(detail.as_deref(), Some("killed"));
    assert!(SubVmResult::decode(b"\x02exit_code one").is_err());
    assert!(SubVmResult::decode(b"\x02\xff").is_err());
}

#[test]
fn the_shared_ok_response_vector_is_a_web_request_answer() {
    let bytes = hex_bytes(
        "0e026f6b1e04626f647913686907686561646572730e0c636f6e74656e742d7479706553746578742f706c61696e06737461747573c10c",
    );
    let ModuleResult::Ok(ModuleAnswer::Response(response)) =
        ModuleResult::decode(&bytes, Operation::WebRequest).unwrap()
    else {
        panic!("not a response")
    };
    assert_eq!(response.status, 200);
    assert_eq!(
        response.headers.get("content-type").map(Vec::as_slice),
        Some(&b"text/plain"[..])
    );
    assert_eq!(response.body, b"hi");
    // The same bytes are not a WebRender text answer.
    assert!(ModuleResult::decode(&bytes, Operation::WebRenderText).is_err());
    // The shared error vector is an error answer for any operation.
    let error = hex_bytes("0e056572726f723c74696d656f7574");
    for (operation, _) in Operation::ALL {
        assert_eq!(
            ModuleResult::decode(&error, operation).unwrap(),
            ModuleResult::Error(calldata::Value::from("timeout"))
        );
    }
}

fn hex_bytes(text: &str) -> Vec<u8> {
    hex::decode(text).expect("test hex")
}
