//! What can go wrong in a call, as a typed error that knows its ABI code.

use crate::abi::hegel_result_t;
use geist_engine::StopTest;

/// The outcome of a call that did not succeed. Some are not failures at all
/// but signals the ABI reports through its result code (a test case out of
/// choices, a failed assumption, a retry, nothing left).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum AbiError {
    /// The test case ran out of choices (or was concluded): abort the body.
    #[error("the test case is over: it ran out of choices or was concluded")]
    StopTest,
    /// An assumption failed: the test case was concluded invalid.
    #[error("{0}")]
    Assume(String),
    /// A handle was null, freed or of the wrong kind.
    #[error("{0}")]
    InvalidHandle(String),
    /// Another argument was invalid.
    #[error("{0}")]
    InvalidArg(String),
    /// The test case was completed already.
    #[error("{0}")]
    AlreadyComplete(String),
    /// Something was read before it was ready.
    #[error("{0}")]
    NotComplete(String),
    /// A handle was used from two threads at once.
    #[error("{0}")]
    ConcurrentUse(String),
    /// A recursive attempt must start again from its root.
    #[error("{0}")]
    Retry(String),
    /// Nothing at that index, or nothing left.
    #[error("{0}")]
    NotFound(String),
    /// A bug in this library.
    #[error("internal error in geist's libhegel: {0}")]
    Internal(String),
}

impl AbiError {
    /// A handle table is full: `what` names the kind of handle.
    pub fn too_many_handles(what: &str) -> AbiError {
        AbiError::Internal(format!("too many live {what} handles"))
    }

    /// The ABI's code for this outcome.
    pub fn code(&self) -> hegel_result_t {
        use hegel_result_t::*;
        match self {
            AbiError::StopTest => HEGEL_E_STOP_TEST,
            AbiError::Assume(_) => HEGEL_E_ASSUME,
            AbiError::InvalidHandle(_) => HEGEL_E_INVALID_HANDLE,
            AbiError::InvalidArg(_) => HEGEL_E_INVALID_ARG,
            AbiError::AlreadyComplete(_) => HEGEL_E_ALREADY_COMPLETE,
            AbiError::NotComplete(_) => HEGEL_E_NOT_COMPLETE,
            AbiError::ConcurrentUse(_) => HEGEL_E_CONCURRENT_USE,
            AbiError::Retry(_) => HEGEL_E_RETRY,
            AbiError::NotFound(_) => HEGEL_E_NOT_FOUND,
            AbiError::Internal(_) => HEGEL_E_INTERNAL,
        }
    }

    /// An invalid-argument error.
    pub fn arg(message: impl Into<String>) -> AbiError {
        AbiError::InvalidArg(message.into())
    }
}

impl From<StopTest> for AbiError {
    fn from(_: StopTest) -> AbiError {
        AbiError::StopTest
    }
}

/// The result of the body of an ABI call.
pub type AbiResult<T = ()> = Result<T, AbiError>;
