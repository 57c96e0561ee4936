//! The replay driver: answers every request with the vector's own expectations.
//!
//! It executes nothing. It reads the vector file named in the request and
//! answers with its postconditions, so a run against it must pass: that tests
//! the runner, the protocol and the comparison, not a VM. A [`Perturbation`]
//! makes it answer slightly wrong on purpose, to see the runner's diffs.

use crate::driver::{DriverRequest, DriverResponse, ResponseReceipt};
use crate::model::TestVector;
use crate::payload::encode_base64;
use crate::schema::detect_format;
use std::io::{BufRead, Write};

/// A deliberate error in the replayed answer, to exercise mismatch reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Perturbation {
    /// One more gas used in the first receipt.
    GasUsed,
    /// Exit code of the first receipt plus one.
    ExitCode,
    /// An extra byte appended to the first receipt's return.
    Return,
    /// The pre-state root reported as the post-state root.
    StateRoot,
    /// The last receipt left out.
    DropReceipt,
}

impl std::str::FromStr for Perturbation {
    type Err = String;
    fn from_str(text: &str) -> Result<Perturbation, String> {
        Ok(match text {
            "gas" => Perturbation::GasUsed,
            "exit-code" => Perturbation::ExitCode,
            "return" => Perturbation::Return,
            "state-root" => Perturbation::StateRoot,
            "drop-receipt" => Perturbation::DropReceipt,
            other => {
                return Err(format!(
                    "unknown perturbation {other:?} (gas, exit-code, return, state-root, drop-receipt)"
                ));
            }
        })
    }
}

/// The answer the replay driver gives to one request.
pub fn answer(request: &DriverRequest, perturbation: Option<Perturbation>) -> DriverResponse {
    let fail = |error: String| DriverResponse {
        request: Some(request.request),
        error: Some(error),
        ..DriverResponse::default()
    };
    let text = match std::fs::read(&request.vector.path) {
        Ok(text) => text,
        Err(error) => {
            return fail(format!(
                "replay driver cannot read {}: {error}",
                request.vector.path
            ));
        }
    };
    let format = match serde_json::from_slice::<serde_json::Value>(&text) {
        Ok(document) => detect_format(&document),
        Err(error) => return fail(format!("{} is not JSON: {error}", request.vector.path)),
    };
    let vector = match TestVector::from_json(&text, format) {
        Ok(vector) => vector,
        Err(errors) => {
            return fail(format!(
                "{} does not load: {}",
                request.vector.path, errors[0]
            ));
        }
    };
    let mut receipts: Vec<Option<ResponseReceipt>> = vector
        .postconditions
        .receipts
        .iter()
        .map(|r| {
            r.as_ref().map(|r| ResponseReceipt {
                exit_code: r.exit_code,
                return_data: encode_base64(&r.return_data),
                gas_used: r.gas_used,
            })
        })
        .collect();
    let mut post_state_root = vector.postconditions.state_root.map(|c| c.to_string());
    match perturbation {
        Some(Perturbation::GasUsed) => {
            if let Some(Some(first)) = receipts.first_mut() {
                first.gas_used += 1;
            }
        }
        Some(Perturbation::ExitCode) => {
            if let Some(Some(first)) = receipts.first_mut() {
                first.exit_code += 1;
            }
        }
        Some(Perturbation::Return) => {
            if let Some(Some(first)) = receipts.first_mut()
                && let Some(Some(original)) = vector.postconditions.receipts.first()
            {
                let mut bytes = original.return_data.clone();
                bytes.push(0xff);
                first.return_data = encode_base64(&bytes);
            }
        }
        Some(Perturbation::StateRoot) => post_state_root = request.pre_state_root.clone(),
        Some(Perturbation::DropReceipt) => {
            receipts.pop();
        }
        None => {}
    }
    let receipts_roots = (!vector.postconditions.receipts_roots.is_empty()).then(|| {
        vector
            .postconditions
            .receipts_roots
            .iter()
            .map(ToString::to_string)
            .collect()
    });
    DriverResponse {
        request: Some(request.request),
        receipts: Some(receipts),
        post_state_root,
        receipts_roots,
        skip: None,
        error: None,
        traces: None,
    }
}

/// Serves the protocol: one request per input line, one response per output line, until input ends.
pub fn serve(
    input: impl BufRead,
    output: impl Write,
    perturbation: Option<Perturbation>,
) -> std::io::Result<()> {
    super::driver::serve_requests(input, output, |request| answer(request, perturbation))
}

/// The replay driver in process, for tests and for `geist vectors run --replay`.
pub struct ReplayDriver {
    /// The deliberate error, if any.
    pub perturbation: Option<Perturbation>,
}

impl crate::driver::Driver for ReplayDriver {
    fn exchange(
        &mut self,
        request: &DriverRequest,
    ) -> Result<DriverResponse, crate::driver::DriverError> {
        Ok(answer(request, self.perturbation))
    }
}
