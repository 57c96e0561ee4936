//! Running a Calldata vectors file (like `genvm/calldata-vectors.json`).
//!
//! The file has `valid` cases (a typed JSON `value` and its exact `hex`) and
//! `invalid` cases (a `hex` input and `why` it must be refused). A valid case
//! passes when the value encodes to exactly the hex, the hex decodes back to the
//! value (with both the owned and the borrowed decoder) and the text form
//! round-trips; an invalid case passes when the strict decoder refuses the
//! input, and the borrowed decoder refuses it with the same error. A malformed case fails on its own with a message
//! naming its JSON path; it never stops the run.

use super::decode::{decode, decode_ref};
use super::encode::encode;
use super::text::{parse_text, to_text};
use super::typed_json::from_typed_json;
use serde_json::Value as Json;
use std::path::Path;

/// A vectors file that could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum VectorsFileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a regular file or is over the size limit.
    #[error("{0}")]
    Input(#[from] geist_pack::input::InputError),
    /// The file is not JSON.
    #[error("{path} is not JSON: {source}")]
    Json {
        /// The file.
        path: String,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
    /// The JSON does not have the vectors-file shape.
    #[error("{path}: {message}")]
    Shape {
        /// The file.
        path: String,
        /// What is missing or wrong.
        message: String,
    },
}

/// Whether a case expects acceptance or refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseKind {
    /// A value with its exact canonical bytes.
    Valid,
    /// Bytes a strict decoder must refuse.
    Invalid,
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseOutcome {
    /// The case's name (or its JSON path when it has none).
    pub name: String,
    /// Valid or invalid.
    pub kind: CaseKind,
    /// `Ok(detail)` when the case passed (for an invalid case, the refusal
    /// message); `Err(reason)` when it failed.
    pub result: Result<String, String>,
}

impl CaseOutcome {
    /// Whether the case passed.
    pub fn passed(&self) -> bool {
        self.result.is_ok()
    }

    /// `name: reason` when the case failed, `None` when it passed.
    pub fn failure(&self) -> Option<String> {
        self.result
            .as_ref()
            .err()
            .map(|reason| format!("{}: {reason}", self.name))
    }
}

/// One `name: reason` line for each failed case, in order.
pub fn failures(outcomes: &[CaseOutcome]) -> Vec<String> {
    outcomes.iter().filter_map(CaseOutcome::failure).collect()
}

/// Reads and runs a vectors file.
pub fn run_file(path: &Path) -> Result<Vec<CaseOutcome>, VectorsFileError> {
    run_file_limited(path, geist_pack::input::DEFAULT_MAX_FILE_SIZE)
}

/// [`run_file`] for a regular file of at most `limit` bytes.
pub fn run_file_limited(path: &Path, limit: u64) -> Result<Vec<CaseOutcome>, VectorsFileError> {
    let shown = path.display().to_string();
    let text = geist_pack::input::read_file(path, limit)?;
    let json: Json = serde_json::from_slice(&text).map_err(|source| VectorsFileError::Json {
        path: shown.clone(),
        source,
    })?;
    run_json(&json).map_err(|message| VectorsFileError::Shape {
        path: shown,
        message,
    })
}

/// Runs an already parsed vectors document.
pub fn run_json(json: &Json) -> Result<Vec<CaseOutcome>, String> {
    let object = json
        .as_object()
        .ok_or("the top level must be an object with \"valid\" and \"invalid\" arrays")?;
    let mut outcomes = Vec::new();
    for (key, kind) in [("valid", CaseKind::Valid), ("invalid", CaseKind::Invalid)] {
        let Some(cases) = object.get(key) else {
            continue;
        };
        let cases = cases
            .as_array()
            .ok_or_else(|| format!("$.{key} must be an array"))?;
        for (index, case) in cases.iter().enumerate() {
            let path = format!("$.{key}[{index}]");
            let name = case
                .get("name")
                .and_then(Json::as_str)
                .map_or_else(|| path.clone(), str::to_owned);
            let result = match kind {
                CaseKind::Valid => run_valid(case, &path),
                CaseKind::Invalid => run_invalid(case, &path),
            };
            outcomes.push(CaseOutcome { name, kind, result });
        }
    }
    if !object.contains_key("valid") && !object.contains_key("invalid") {
        return Err("no \"valid\" or \"invalid\" array".to_owned());
    }
    Ok(outcomes)
}

fn case_hex(case: &Json, path: &str) -> Result<Vec<u8>, String> {
    let text = case
        .get("hex")
        .and_then(Json::as_str)
        .ok_or_else(|| format!("{path}.hex: missing or not a string"))?;
    hex::decode(text).map_err(|e| format!("{path}.hex: bad hex: {e}"))
}

fn run_valid(case: &Json, path: &str) -> Result<String, String> {
    let expected = case_hex(case, path)?;
    let typed = case
        .get("value")
        .ok_or_else(|| format!("{path}.value: missing"))?;
    let value = from_typed_json(typed, &format!("{path}.value")).map_err(|e| e.to_string())?;
    let encoded = encode(&value);
    if encoded != expected {
        return Err(format!(
            "encodes to {} but the vector says {}",
            hex::encode(&encoded),
            hex::encode(&expected)
        ));
    }
    let decoded = decode(&expected).map_err(|e| format!("the vector's bytes are refused: {e}"))?;
    if decoded != value {
        return Err(format!(
            "decodes to {} but the vector says {}",
            to_text(&decoded),
            to_text(&value)
        ));
    }
    match decode_ref(&expected) {
        Ok(borrowed) if borrowed == value => {}
        Ok(borrowed) => {
            return Err(format!(
                "decode_ref gives {} but the vector says {}",
                to_text(&borrowed.to_value()),
                to_text(&value)
            ));
        }
        Err(e) => return Err(format!("decode_ref refuses the vector's bytes: {e}")),
    }
    let text = to_text(&value);
    match parse_text(&text) {
        Ok(reparsed) if reparsed == value => Ok(text),
        Ok(reparsed) => Err(format!(
            "text form {text} parses back as {}",
            to_text(&reparsed)
        )),
        Err(e) => Err(format!("text form {text} does not parse: {e}")),
    }
}

fn run_invalid(case: &Json, path: &str) -> Result<String, String> {
    let input = case_hex(case, path)?;
    match decode(&input) {
        Ok(value) => Err(format!(
            "accepted as {} but must be refused ({})",
            to_text(&value),
            case.get("why")
                .and_then(Json::as_str)
                .unwrap_or("no reason given")
        )),
        Err(error) => match decode_ref(&input) {
            Err(borrowed) if borrowed == error => Ok(error.to_string()),
            Err(borrowed) => Err(format!(
                "decode refuses with \"{error}\" but decode_ref with \"{borrowed}\""
            )),
            Ok(value) => Err(format!(
                "decode refuses ({error}) but decode_ref accepts it as {}",
                to_text(&value.to_value())
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrong_vector_fails_alone() {
        let doc = json!({
            "valid": [
                {"name": "ok", "value": {"int": "0"}, "hex": "01"},
                {"name": "wrong", "value": {"int": "1"}, "hex": "01"},
                {"name": "malformed", "value": {"float": "1"}, "hex": "01"}
            ],
            "invalid": [
                {"name": "refused", "hex": "07"},
                {"name": "accepted", "hex": "00"},
                {"hex": "zz"}
            ]
        });
        let outcomes = run_json(&doc).unwrap();
        let passed: Vec<bool> = outcomes.iter().map(CaseOutcome::passed).collect();
        assert_eq!(passed, [true, false, false, true, false, false]);
        assert_eq!(outcomes[5].name, "$.invalid[2]");
        assert!(
            outcomes[2]
                .result
                .as_ref()
                .unwrap_err()
                .contains("$.valid[2].value")
        );
    }

    #[test]
    fn a_document_without_cases_is_refused() {
        assert!(run_json(&json!({"about": "nothing"})).is_err());
        assert!(run_json(&json!([1])).is_err());
    }
}
