//! The protocol loop: requests in, responses out, one JSON line each.
//!
//! Every request gets an answer: receipts and the state root, a skip with its
//! reason, or an error naming what went wrong — including a panic inside
//! the VM, which is caught so that the session goes on with the next vector.

use crate::execute::{Outcome, Vm};
use geist_vectors::driver::{
    DriverRequest, DriverResponse, PROTOCOL, ResponseReceipt, serve_requests,
};
use geist_vectors::payload::encode_base64;
use std::io::{BufRead, Write};
use std::panic::AssertUnwindSafe;

/// Serves requests from `input` until it ends.
pub fn serve(vm: &Vm, input: impl BufRead, output: impl Write) -> std::io::Result<()> {
    serve_requests(input, output, |request| answer(vm, request))
}

/// The response to one request.
pub fn answer(vm: &Vm, request: &DriverRequest) -> DriverResponse {
    let mut response = DriverResponse {
        request: Some(request.request),
        ..DriverResponse::default()
    };
    if request.protocol != PROTOCOL {
        response.error = Some(format!(
            "protocol {:?}: this driver speaks {PROTOCOL}",
            request.protocol
        ));
        return response;
    }
    match std::panic::catch_unwind(AssertUnwindSafe(|| vm.execute(request))) {
        Ok(Ok(Outcome::Executed(execution))) => {
            response.receipts = Some(
                execution
                    .receipts
                    .into_iter()
                    .map(|r| {
                        Some(ResponseReceipt {
                            exit_code: i64::from(r.exit_code),
                            return_data: encode_base64(&r.return_data),
                            gas_used: i64::try_from(r.gas_used).unwrap_or(i64::MAX),
                        })
                    })
                    .collect(),
            );
            response.post_state_root = Some(execution.post_state_root.to_string());
            response.traces = execution.traces;
        }
        Ok(Ok(Outcome::Skipped(reason))) => response.skip = Some(reason),
        Ok(Err(error)) => response.error = Some(error.to_string()),
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            response.error = Some(format!("the VM panicked: {text}"));
        }
    }
    response
}
