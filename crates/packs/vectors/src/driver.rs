//! Running vectors against a VM through a driver: the protocol and the runner.
//!
//! geist does not execute Filecoin actors; a real VM (ref-fvm, lotus) does,
//! behind a small driver program. The runner starts the driver once
//! (`sh -c CMD`), writes one JSON request per line on its standard input and
//! reads one JSON response per line from its standard output:
//!
//! - request: `{"protocol": "geist-vectors-driver/1", "request": n, "vector":
//!   {"path", "id"}, "class", "variant", "epoch", "network_version",
//!   "base_fee", "circ_supply", "pre_state_root", "car", "messages",
//!   "tipsets", "randomness", "selector", "hints"}` — `car` is the
//!   uncompressed CARv1 in base64, messages are base64 DAG-CBOR with their
//!   absolute epoch, big integers are decimal strings; `"trace": true` (only
//!   present when asked for) requests execution traces;
//! - response: `{"request": n, "receipts": [{"exit_code", "return" (base64),
//!   "gas_used"} | null], "post_state_root": "bafy…", "receipts_roots": [...]}`
//!   (plus `"traces": [[line, ...], ...]`, one per message, when traced),
//!   or `{"request": n, "skip": "why"}`, or `{"request": n, "error": "why"}`.
//!
//! The runner compares exit codes, return bytes, gas used, the receipts roots
//! and the final state root, and reports each difference. A vector with
//! several variants runs once per variant. Hints are honoured: `negate`
//! passes only when the results differ; `incorrect` alone is skipped.

use crate::check::CheckedVector;
use crate::model::{Receipt, TestVector, Variant, VectorClass};
use crate::payload::{decode_base64, encode_base64};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// The protocol name and version carried in every request.
pub const PROTOCOL: &str = "geist-vectors-driver/1";

/// Which vector a request comes from (informational; the replay driver reads the file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorRef {
    /// The file the runner read.
    pub path: String,
    /// `_meta.id`.
    pub id: Option<String>,
}

/// One message to apply, at its absolute epoch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestMessage {
    /// DAG-CBOR message bytes, base64.
    pub bytes: String,
    /// Absolute epoch to apply it at.
    pub epoch: Option<i64>,
}

/// One block of a tipset to apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestBlock {
    /// Miner address (text form).
    pub miner_addr: String,
    /// Election win count.
    pub win_count: i64,
    /// DAG-CBOR messages, base64.
    pub messages: Vec<String>,
}

/// One tipset to apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestTipset {
    /// Absolute epoch.
    pub epoch: Option<i64>,
    /// Base fee, decimal.
    pub base_fee: Option<String>,
    /// Blocks.
    pub blocks: Vec<RequestBlock>,
}

/// A request to execute one vector (one variant of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverRequest {
    /// Always [`PROTOCOL`].
    pub protocol: String,
    /// Sequence number; the response must echo it.
    pub request: u64,
    /// Where the vector came from.
    pub vector: VectorRef,
    /// `message` or `tipset`.
    pub class: String,
    /// The protocol variant run, if the vector has variants.
    pub variant: Option<Variant>,
    /// Epoch of the variant (or the seed schema's epoch).
    pub epoch: Option<i64>,
    /// Network version of the variant.
    pub network_version: Option<i64>,
    /// Base fee, decimal attoFIL.
    pub base_fee: Option<String>,
    /// Circulating supply, decimal attoFIL.
    pub circ_supply: Option<String>,
    /// Root of the state tree to start from.
    pub pre_state_root: Option<String>,
    /// The uncompressed CARv1 holding the state trees, base64.
    pub car: String,
    /// Messages to apply (message class).
    pub messages: Vec<RequestMessage>,
    /// Tipsets to apply (tipset class).
    pub tipsets: Vec<RequestTipset>,
    /// Randomness to replay, as in the vector.
    pub randomness: Option<serde_json::Value>,
    /// Selector, as in the vector.
    pub selector: Option<serde_json::Value>,
    /// Hints, as in the vector.
    pub hints: Vec<String>,
    /// Asks for the execution trace of every message (`traces` in the response).
    /// Sent only when true; a driver that cannot trace ignores it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

/// A receipt as a driver reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseReceipt {
    /// Exit code.
    pub exit_code: i64,
    /// Return bytes, base64.
    #[serde(rename = "return")]
    pub return_data: String,
    /// Gas used.
    pub gas_used: i64,
}

/// A driver's answer to one request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverResponse {
    /// The request's sequence number (optional, checked when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<u64>,
    /// One receipt per applied message (`null` for a message that was not applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipts: Option<Vec<Option<ResponseReceipt>>>,
    /// The state root after execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_state_root: Option<String>,
    /// Receipts roots of applied tipsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipts_roots: Option<Vec<String>>,
    /// The driver declines this vector (unsupported class, selector...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<String>,
    /// The driver failed to execute the vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The execution trace of each applied message, as lines of text (when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces: Option<Vec<Vec<String>>>,
}

/// Why the runner could not talk to the driver.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The command could not be started.
    #[error("cannot start driver `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing the request failed (the driver closed its input or exited).
    #[error("driver stopped reading requests: {0}")]
    Write(std::io::Error),
    /// The driver exited or closed its output before answering.
    #[error("driver exited before answering request {0}")]
    Exited(u64),
    /// No answer within the time limit.
    #[error("driver did not answer request {request} within {seconds} s")]
    Timeout {
        /// The request's sequence number.
        request: u64,
        /// The limit.
        seconds: u64,
    },
    /// An answer that is not a response object.
    #[error(
        "driver answered request {request} with something that is not a response: {reason}: {line}"
    )]
    BadResponse {
        /// The request's sequence number.
        request: u64,
        /// The parser's explanation.
        reason: String,
        /// The line (shortened).
        line: String,
    },
}

/// Something that answers driver requests: a process, or an in-process driver in tests.
pub trait Driver {
    /// Sends one request and waits for its response.
    fn exchange(&mut self, request: &DriverRequest) -> Result<DriverResponse, DriverError>;
}

/// The driver's side of the protocol: reads one request per input line, writes
/// `answer`'s response on one output line (flushed), until the input ends.
///
/// A line that is not a request is answered with an `error` response, so the
/// runner reports it and the session goes on. The response's `request` number
/// is filled in when `answer` leaves it out.
pub fn serve_requests(
    input: impl BufRead,
    mut output: impl Write,
    mut answer: impl FnMut(&DriverRequest) -> DriverResponse,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<DriverRequest>(&line) {
            Ok(request) => {
                let mut response = answer(&request);
                response.request.get_or_insert(request.request);
                response
            }
            Err(error) => DriverResponse {
                error: Some(format!("not a request: {error}")),
                ..DriverResponse::default()
            },
        };
        let text = serde_json::to_string(&response).map_err(std::io::Error::other)?;
        writeln!(output, "{text}")?;
        output.flush()?;
    }
    Ok(())
}

/// A driver program speaking the protocol over its standard input and output.
pub struct ProcessDriver {
    command: String,
    timeout: Duration,
    child: Option<(Child, ChildStdin, Receiver<String>)>,
}

impl ProcessDriver {
    /// A driver started lazily from a shell command line (`sh -c CMD`), with a per-request time limit.
    pub fn new(command: impl Into<String>, timeout: Duration) -> ProcessDriver {
        ProcessDriver {
            command: command.into(),
            timeout,
            child: None,
        }
    }

    fn start(&mut self) -> Result<(), DriverError> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| DriverError::Spawn {
                command: self.command.clone(),
                source,
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(DriverError::Spawn {
                command: self.command.clone(),
                source: std::io::Error::other("no pipes to the driver"),
            });
        };
        let (sender, receiver) = std::sync::mpsc::channel();
        // A reader thread lets the runner wait with a time limit.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        self.child = Some((child, stdin, receiver));
        Ok(())
    }

    fn stop(&mut self) {
        if let Some((mut child, stdin, _)) = self.child.take() {
            drop(stdin);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Driver for ProcessDriver {
    fn exchange(&mut self, request: &DriverRequest) -> Result<DriverResponse, DriverError> {
        if self.child.is_none() {
            self.start()?;
        }
        let Some((_, stdin, receiver)) = self.child.as_mut() else {
            return Err(DriverError::Exited(request.request));
        };
        let mut line = serde_json::to_string(request).unwrap_or_default();
        line.push('\n');
        if let Err(error) = stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
        {
            self.stop();
            return Err(DriverError::Write(error));
        }
        loop {
            match receiver.recv_timeout(self.timeout) {
                Ok(answer) if answer.trim().is_empty() => continue,
                Ok(answer) => {
                    return serde_json::from_str::<DriverResponse>(&answer).map_err(|error| {
                        DriverError::BadResponse {
                            request: request.request,
                            reason: error.to_string(),
                            line: answer.chars().take(200).collect(),
                        }
                    });
                }
                Err(RecvTimeoutError::Timeout) => {
                    // A hung driver is restarted for the next request.
                    self.stop();
                    return Err(DriverError::Timeout {
                        request: request.request,
                        seconds: self.timeout.as_secs(),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.stop();
                    return Err(DriverError::Exited(request.request));
                }
            }
        }
    }
}

impl Drop for ProcessDriver {
    fn drop(&mut self) {
        if let Some((mut child, stdin, _)) = self.child.take() {
            // Closing standard input is the signal to finish; give the driver a moment.
            drop(stdin);
            for _ in 0..50 {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// How one run of one vector variant ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunStatus {
    /// The driver's results match the postconditions (or differ, for a negated vector).
    Passed,
    /// The results differ (or match, for a negated vector).
    Failed {
        /// One line per difference.
        differences: Vec<String>,
    },
    /// Not run: the driver declined, or the vector is marked incorrect.
    Skipped {
        /// Why.
        reason: String,
    },
    /// Not run: the vector does not check, or the driver failed.
    Error {
        /// Why.
        reason: String,
    },
}

/// The outcome of running one variant of one vector.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunOutcome {
    /// The vector's file.
    pub path: String,
    /// The variant's id, if the vector has variants.
    pub variant: Option<String>,
    /// How it ended.
    #[serde(flatten)]
    pub status: RunStatus,
    /// The driver's execution trace of the message that differs (`--trace`, failures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<String>>,
}

impl std::fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match &self.status {
            RunStatus::Passed => "ok  ",
            RunStatus::Failed { .. } => "FAIL",
            RunStatus::Skipped { .. } => "skip",
            RunStatus::Error { .. } => "ERR ",
        };
        write!(f, "{label} {}", self.path)?;
        if let Some(variant) = &self.variant {
            write!(f, " [{variant}]")?;
        }
        match &self.status {
            RunStatus::Passed => {}
            RunStatus::Failed { differences } => {
                for difference in differences {
                    write!(f, "\n       {difference}")?;
                }
            }
            RunStatus::Skipped { reason } | RunStatus::Error { reason } => {
                write!(f, ": {reason}")?;
            }
        }
        for line in self.trace.iter().flatten() {
            write!(f, "\n         | {line}")?;
        }
        Ok(())
    }
}

/// Options of a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Ignore `incorrect` and `negate` hints (compare plainly).
    pub ignore_hints: bool,
    /// Ask the driver for execution traces and keep the trace of the message that differs.
    pub trace: bool,
}

/// Builds the driver requests for a checked vector: one per variant (or one without variants).
///
/// A vector that cannot be run gives the status to report instead: an error
/// when it does not check, a skip when there is simply nothing to execute (the
/// seed sample's mock CAR, a class no corpus defines inputs for).
pub fn requests_for(
    checked: &CheckedVector,
    first_request: u64,
) -> Result<Vec<DriverRequest>, RunStatus> {
    if !checked.report.passed() {
        let first = checked
            .report
            .failures
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(RunStatus::Error {
            reason: format!("vector does not check: {first}"),
        });
    }
    let skip = |reason: &str| {
        Err(RunStatus::Skipped {
            reason: reason.to_string(),
        })
    };
    let (Some(vector), Some(car), Some(_)) = (&checked.vector, &checked.car, &checked.archive)
    else {
        return skip("no real CAR to execute (absent, or the seed sample's mock)");
    };
    if !matches!(vector.class, VectorClass::Message | VectorClass::Tipset) {
        return skip("no corpus defines the inputs of this class");
    }
    let car = encode_base64(car);
    let variants: Vec<Option<&Variant>> = if vector.preconditions.variants.is_empty() {
        vec![None]
    } else {
        vector.preconditions.variants.iter().map(Some).collect()
    };
    Ok(variants
        .into_iter()
        .enumerate()
        .map(|(index, variant)| {
            build_request(checked, vector, variant, &car, first_request + index as u64)
        })
        .collect())
}

fn build_request(
    checked: &CheckedVector,
    vector: &TestVector,
    variant: Option<&Variant>,
    car: &str,
    request: u64,
) -> DriverRequest {
    let epoch = variant.and_then(|v| v.epoch).or(vector.preconditions.epoch);
    let at = |offset: Option<i64>| match (epoch, offset) {
        (Some(epoch), Some(offset)) => Some(epoch.saturating_add(offset)),
        (epoch, None) => epoch,
        (None, Some(offset)) => Some(offset),
    };
    DriverRequest {
        protocol: PROTOCOL.to_string(),
        request,
        vector: VectorRef {
            path: checked.report.path.clone(),
            id: vector.meta.id.clone(),
        },
        class: vector
            .class
            .as_text(crate::schema::FormatVersion::Later)
            .to_string(),
        variant: variant.cloned(),
        epoch,
        network_version: variant.and_then(|v| v.nv),
        base_fee: vector
            .preconditions
            .basefee
            .as_ref()
            .map(ToString::to_string),
        circ_supply: vector
            .preconditions
            .circ_supply
            .as_ref()
            .map(ToString::to_string),
        pre_state_root: vector.preconditions.state_root.map(|c| c.to_string()),
        car: car.to_string(),
        messages: vector
            .apply_messages
            .iter()
            .map(|m| RequestMessage {
                bytes: encode_base64(&m.bytes),
                epoch: m.epoch.or_else(|| at(m.epoch_offset)),
            })
            .collect(),
        tipsets: vector
            .apply_tipsets
            .iter()
            .map(|t| RequestTipset {
                epoch: at(t.epoch_offset),
                base_fee: t.basefee.as_ref().map(ToString::to_string),
                blocks: t
                    .blocks
                    .iter()
                    .map(|b| RequestBlock {
                        miner_addr: b.miner_addr.clone(),
                        win_count: b.win_count,
                        messages: b.messages.iter().map(|m| encode_base64(m)).collect(),
                    })
                    .collect(),
            })
            .collect(),
        randomness: vector.randomness.clone(),
        selector: vector.selector.clone(),
        hints: vector.hints.clone(),
        trace: false,
    }
}

/// Compares a driver's response with a vector's postconditions, one line per difference.
pub fn compare(vector: &TestVector, response: &DriverResponse) -> Vec<String> {
    compare_detailed(vector, response).differences
}

/// The differences between a response and the postconditions, and where they start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// One line per difference.
    pub differences: Vec<String>,
    /// The index of the first message whose receipt differs, if one does.
    pub first_differing_receipt: Option<usize>,
}

/// [`compare`], also telling which message's receipt differs first.
pub fn compare_detailed(vector: &TestVector, response: &DriverResponse) -> Comparison {
    let mut differences = Vec::new();
    let mut first_differing_receipt = None;
    let expected = &vector.postconditions.receipts;
    let empty = Vec::new();
    let actual = response.receipts.as_ref().unwrap_or(&empty);
    if response.receipts.is_none() && !expected.is_empty() {
        differences.push(format!(
            "receipts: expected {}, driver reported none",
            expected.len()
        ));
    } else if expected.len() != actual.len() {
        differences.push(format!(
            "receipts: expected {}, got {}",
            expected.len(),
            actual.len()
        ));
    }
    for (index, (expected, actual)) in expected.iter().zip(actual).enumerate() {
        let before = differences.len();
        match (expected, actual) {
            (None, None) => {}
            (Some(_), None) => differences.push(format!(
                "receipt {index}: expected a receipt, got null (not applied)"
            )),
            (None, Some(_)) => differences.push(format!(
                "receipt {index}: expected null (not applied), got a receipt"
            )),
            (Some(expected), Some(actual)) => {
                compare_receipt(index, expected, actual, &mut differences)
            }
        }
        if differences.len() > before && first_differing_receipt.is_none() {
            first_differing_receipt = Some(index);
        }
    }
    if let Some(expected) = &vector.postconditions.state_root {
        match &response.post_state_root {
            Some(actual) if actual == &expected.to_string() => {}
            Some(actual) => differences.push(format!(
                "post-state root: expected {expected}, got {actual}"
            )),
            None => differences.push(format!(
                "post-state root: expected {expected}, driver reported none"
            )),
        }
    }
    let expected_roots: Vec<String> = vector
        .postconditions
        .receipts_roots
        .iter()
        .map(ToString::to_string)
        .collect();
    if !expected_roots.is_empty() {
        match &response.receipts_roots {
            Some(actual) if actual == &expected_roots => {}
            Some(actual) => differences.push(format!(
                "receipts roots: expected {expected_roots:?}, got {actual:?}"
            )),
            None => differences.push("receipts roots: driver reported none".to_string()),
        }
    }
    Comparison {
        differences,
        first_differing_receipt,
    }
}

fn compare_receipt(
    index: usize,
    expected: &Receipt,
    actual: &ResponseReceipt,
    out: &mut Vec<String>,
) {
    if expected.exit_code != actual.exit_code {
        out.push(format!(
            "receipt {index} exit_code: expected {}, got {}",
            expected.exit_code, actual.exit_code
        ));
    }
    match decode_base64(&actual.return_data, "return") {
        Ok(bytes) if bytes == expected.return_data => {}
        Ok(bytes) => out.push(format!(
            "receipt {index} return: expected 0x{}, got 0x{}",
            hex::encode(&expected.return_data),
            hex::encode(bytes)
        )),
        Err(error) => out.push(format!(
            "receipt {index} return: driver sent invalid base64 ({error})"
        )),
    }
    if expected.gas_used != actual.gas_used {
        out.push(format!(
            "receipt {index} gas_used: expected {}, got {} ({:+})",
            expected.gas_used,
            actual.gas_used,
            i128::from(actual.gas_used) - i128::from(expected.gas_used)
        ));
    }
}

/// Runs every variant of a checked vector through the driver.
pub fn run_vector(
    checked: &CheckedVector,
    driver: &mut dyn Driver,
    options: RunOptions,
    next_request: &mut u64,
) -> Vec<RunOutcome> {
    let path = checked.report.path.clone();
    let requests = match requests_for(checked, *next_request) {
        Ok(requests) => requests,
        Err(status) => {
            return vec![RunOutcome {
                path,
                variant: None,
                status,
                trace: None,
            }];
        }
    };
    *next_request += requests.len() as u64;
    let Some(vector) = &checked.vector else {
        return Vec::new();
    };
    let negate = !options.ignore_hints && vector.hints.iter().any(|h| h == "negate");
    let incorrect = !options.ignore_hints && vector.hints.iter().any(|h| h == "incorrect");
    requests
        .into_iter()
        .map(|mut request| {
            request.trace = options.trace;
            let variant = request.variant.as_ref().and_then(|v| v.id.clone());
            let mut trace = None;
            let status = if incorrect && !negate {
                RunStatus::Skipped {
                    reason: "vector is marked incorrect".to_string(),
                }
            } else {
                match driver.exchange(&request) {
                    Err(error) => RunStatus::Error {
                        reason: error.to_string(),
                    },
                    Ok(response) => {
                        let status = judge(vector, &request, &response, negate);
                        if matches!(status, RunStatus::Failed { .. }) {
                            trace = trace_of_difference(vector, &response);
                        }
                        status
                    }
                }
            };
            RunOutcome {
                path: path.clone(),
                variant,
                status,
                trace,
            }
        })
        .collect()
}

/// The trace lines to show for a failed run: those of the first message whose
/// receipt differs, or of every message when only the roots (or the receipt
/// count) differ. `None` when the driver sent no traces.
fn trace_of_difference(vector: &TestVector, response: &DriverResponse) -> Option<Vec<String>> {
    let traces = response.traces.as_ref()?;
    let chosen: Vec<usize> = match compare_detailed(vector, response).first_differing_receipt {
        Some(index) if index < traces.len() => vec![index],
        _ => (0..traces.len()).collect(),
    };
    let mut lines = Vec::new();
    for index in chosen {
        lines.push(format!("trace of message {index}:"));
        lines.extend(traces[index].iter().cloned());
    }
    Some(lines)
}

fn judge(
    vector: &TestVector,
    request: &DriverRequest,
    response: &DriverResponse,
    negate: bool,
) -> RunStatus {
    if let Some(number) = response.request
        && number != request.request
    {
        return RunStatus::Error {
            reason: format!(
                "driver answered request {number} while request {} was pending",
                request.request
            ),
        };
    }
    if let Some(reason) = &response.skip {
        return RunStatus::Skipped {
            reason: format!("driver: {reason}"),
        };
    }
    if let Some(reason) = &response.error {
        return RunStatus::Error {
            reason: format!("driver: {reason}"),
        };
    }
    let differences = compare(vector, response);
    match (negate, differences.is_empty()) {
        (false, true) | (true, false) => RunStatus::Passed,
        (false, false) => RunStatus::Failed { differences },
        (true, true) => RunStatus::Failed {
            differences: vec![
                "negated vector: the results match postconditions the vector marks incorrect (hints: negate)".to_string(),
            ],
        },
    }
}

/// Totals of a run: passed, failed (failed and errors), skipped.
pub fn tally(outcomes: &[RunOutcome]) -> (usize, usize, usize) {
    let mut totals = (0, 0, 0);
    for outcome in outcomes {
        match outcome.status {
            RunStatus::Passed => totals.0 += 1,
            RunStatus::Failed { .. } | RunStatus::Error { .. } => totals.1 += 1,
            RunStatus::Skipped { .. } => totals.2 += 1,
        }
    }
    totals
}
