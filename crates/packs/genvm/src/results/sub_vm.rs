//! Sub-VM results: `[result_code: u8][data]` from CallContract, RunNondet, Sandbox.
//!
//! Code 0 (return) carries one canonical Calldata value, code 1 (user_error) the
//! UTF-8 message a contract rolled back with, code 2 (vm_error) a UTF-8
//! [`VmError`] string. Any other code is refused, as is anything in `data` that
//! does not match its code. Offsets in errors count from the blob's first byte.

use super::vm_error::{VmError, VmErrorRefusal};
use crate::calldata::{DecodeError, Value, decode, encode};
use std::fmt;

/// Result code of a successful execution.
pub const RESULT_CODE_RETURN: u8 = 0;
/// Result code of a contract-initiated rollback.
pub const RESULT_CODE_USER_ERROR: u8 = 1;
/// Result code of a VM-level error.
pub const RESULT_CODE_VM_ERROR: u8 = 2;

/// A decoded sub-VM result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubVmResult {
    /// Code 0: the Calldata value the contract returned.
    Return(Value),
    /// Code 1: the message the contract rolled back with.
    UserError(String),
    /// Code 2: the VM error.
    VmError(VmError),
}

/// Why a blob is not a sub-VM result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubVmResultError {
    /// The blob has no result code byte.
    #[error("at byte offset 0: no result code: the result is empty")]
    Empty,
    /// The first byte is not 0, 1 or 2.
    #[error(
        "at byte offset 0: unknown result code {0}: only 0 (return), 1 (user_error) and 2 (vm_error) exist"
    )]
    UnknownCode(u8),
    /// Code 0 with data that is not canonical Calldata (offset relative to the blob).
    #[error("return value: at byte offset {}: {}", .0.offset + 1, .0.rule)]
    ReturnValue(DecodeError),
    /// Code 1 or 2 with data that is not UTF-8.
    #[error("at byte offset {offset}: the {what} is not UTF-8")]
    NotUtf8 {
        /// The message kind (user_error message, vm_error string).
        what: &'static str,
        /// The first invalid byte, counted from the blob's start.
        offset: usize,
    },
    /// Code 2 with a string that is not a valid VM error.
    #[error(transparent)]
    VmError(#[from] VmErrorRefusal),
}

impl SubVmResult {
    /// Decodes `[code][data]`.
    pub fn decode(blob: &[u8]) -> Result<SubVmResult, SubVmResultError> {
        let (&code, data) = blob.split_first().ok_or(SubVmResultError::Empty)?;
        let text = |what: &'static str| {
            std::str::from_utf8(data).map_err(|e| SubVmResultError::NotUtf8 {
                what,
                offset: 1 + e.valid_up_to(),
            })
        };
        match code {
            RESULT_CODE_RETURN => decode(data)
                .map(SubVmResult::Return)
                .map_err(SubVmResultError::ReturnValue),
            RESULT_CODE_USER_ERROR => Ok(SubVmResult::UserError(
                text("user_error message")?.to_owned(),
            )),
            RESULT_CODE_VM_ERROR => Ok(SubVmResult::VmError(VmError::parse(text(
                "vm_error string",
            )?)?)),
            other => Err(SubVmResultError::UnknownCode(other)),
        }
    }

    /// The result code.
    pub fn code(&self) -> u8 {
        match self {
            SubVmResult::Return(_) => RESULT_CODE_RETURN,
            SubVmResult::UserError(_) => RESULT_CODE_USER_ERROR,
            SubVmResult::VmError(_) => RESULT_CODE_VM_ERROR,
        }
    }

    /// The name of the result code: `return`, `user_error` or `vm_error`.
    pub fn code_name(&self) -> &'static str {
        match self {
            SubVmResult::Return(_) => "return",
            SubVmResult::UserError(_) => "user_error",
            SubVmResult::VmError(_) => "vm_error",
        }
    }

    /// Encodes `[code][data]`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![self.code()];
        match self {
            SubVmResult::Return(value) => out.extend_from_slice(&encode(value)),
            SubVmResult::UserError(message) => out.extend_from_slice(message.as_bytes()),
            SubVmResult::VmError(error) => out.extend_from_slice(error.to_string().as_bytes()),
        }
        out
    }
}

impl fmt::Display for SubVmResult {
    /// `return <text form>`, `user_error "<message>"` or `vm_error <string>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubVmResult::Return(value) => {
                write!(f, "return {}", crate::calldata::text::to_text(value))
            }
            SubVmResult::UserError(message) => {
                write!(
                    f,
                    "user_error {}",
                    crate::calldata::text::to_text(&Value::Str(message.clone()))
                )
            }
            SubVmResult::VmError(error) => match error.vocabulary {
                super::vm_error::Vocabulary::Current => write!(f, "vm_error {error}"),
                older => write!(f, "vm_error {error} (vocabulary of {})", older.name()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_each_code_and_round_trips() {
        let blobs: [&[u8]; 3] = [
            b"\x00\x2chello",
            b"\x01not enough funds",
            b"\x02exit_code 3 # panic",
        ];
        let expected = [
            "return \"hello\"",
            "user_error \"not enough funds\"",
            "vm_error exit_code 3 # panic",
        ];
        for (blob, text) in blobs.iter().zip(expected) {
            let result = SubVmResult::decode(blob).unwrap();
            assert_eq!(result.to_string(), text);
            assert_eq!(result.encode(), *blob);
        }
    }

    #[test]
    fn refusals_name_offsets() {
        assert_eq!(SubVmResult::decode(b""), Err(SubVmResultError::Empty));
        assert_eq!(
            SubVmResult::decode(b"\x03"),
            Err(SubVmResultError::UnknownCode(3))
        );
        let error = SubVmResult::decode(b"\x00\x01\xff").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("return value: at byte offset 2:"),
            "{error}"
        );
        assert_eq!(
            SubVmResult::decode(b"\x01ab\xff"),
            Err(SubVmResultError::NotUtf8 {
                what: "user_error message",
                offset: 3
            })
        );
        assert!(matches!(
            SubVmResult::decode(b"\x02OOM nonsense"),
            Err(SubVmResultError::VmError(_))
        ));
        // An empty return value is not a value.
        assert!(SubVmResult::decode(b"\x00").is_err());
    }
}
