//! Execution traces as lines of text, for `geist vectors run --trace`.
//!
//! ref-fvm records, when the machine is built with tracing on, every gas
//! charge, call, actor invocation, return and syscall error of a message.
//! Each becomes one line, indented by call depth; the message's outcome
//! (receipt, failure backtrace), randomness the vector did not record, and
//! proofs taken as valid without verification are called out, since those
//! are where a driver and a vector part ways.

use crate::externs::RandomnessKind;
use fvm::executor::ApplyRet;
use fvm::trace::ExecutionEvent;
use fvm_shared::clock::ChainEpoch;

/// Gas charges that stand for a proof verification the kernel skipped.
const TRUSTED_PROOF_CHARGES: [&str; 5] = [
    "OnVerifyPost",
    "OnVerifySeal",
    "OnVerifyAggregateSeals",
    "OnVerifyReplicaUpdate",
    "OnVerifyConsensusFault",
];

/// Renders one applied message: its events, then its outcome.
pub fn render(ret: &ApplyRet, randomness_misses: &[(RandomnessKind, ChainEpoch)]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut depth = 0usize;
    for event in &ret.exec_trace {
        let indent = "  ".repeat(depth);
        match event {
            ExecutionEvent::GasCharge(charge) => {
                let note = if TRUSTED_PROOF_CHARGES.contains(&charge.name.as_ref()) {
                    "  (proof taken as valid, not verified)"
                } else {
                    ""
                };
                lines.push(format!(
                    "{indent}gas {} compute {} other {}{note}",
                    charge.name, charge.compute_gas, charge.other_gas
                ));
            }
            ExecutionEvent::Call {
                from,
                to,
                method,
                params,
                value,
                gas_limit,
                read_only,
            } => {
                let params = params
                    .as_ref()
                    .map(|p| format!(", params {} B (codec {:#x})", p.data.len(), p.codec))
                    .unwrap_or_default();
                let read_only = if *read_only { ", read-only" } else { "" };
                lines.push(format!(
                    "{indent}call f0{from} -> {to} method {method} value {} gas limit {gas_limit}{params}{read_only}",
                    value.atto()
                ));
                depth += 1;
            }
            ExecutionEvent::InvokeActor { id, state } => {
                lines.push(format!("{indent}invoke f0{id} code {}", state.code));
            }
            ExecutionEvent::CallReturn(exit_code, data) => {
                depth = depth.saturating_sub(1);
                let data = data
                    .as_ref()
                    .map(|d| format!(", {} B", d.data.len()))
                    .unwrap_or_default();
                lines.push(format!(
                    "{}return exit {}{data}",
                    "  ".repeat(depth),
                    exit_code.value()
                ));
            }
            ExecutionEvent::CallError(error) => {
                depth = depth.saturating_sub(1);
                lines.push(format!(
                    "{}syscall error {:?}: {}",
                    "  ".repeat(depth),
                    error.1,
                    error.0
                ));
            }
            other => lines.push(format!("{indent}{other:?}")),
        }
    }
    let receipt = &ret.msg_receipt;
    lines.push(format!(
        "receipt: exit {}, return {} B, gas used {}",
        receipt.exit_code.value(),
        receipt.return_data.len(),
        receipt.gas_used
    ));
    if let Some(failure) = &ret.failure_info {
        lines.extend(failure.to_string().lines().map(|l| format!("failure: {l}")));
    }
    for (kind, epoch) in randomness_misses {
        lines.push(format!(
            "randomness: {kind} draw at epoch {epoch} not recorded by the vector; answered with the fixed fallback"
        ));
    }
    lines
}
