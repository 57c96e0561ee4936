//! VM-error strings: the text a sub-VM hands back with result code 2.
//!
//! A VM error is `public-code [" # " detail]`. The public code is a path in
//! GenVM's `vm_error` string trie (space-separated components such as
//! `OOM RAM table`), some entries taking one parameter (`exit_code 3`,
//! `wasm_trap unreachable`); the detail is free UTF-8. The whole string is
//! covered by the execution hash, so the validator is exact: unknown codes,
//! missing or malformed parameters, doubled spaces and `#` in the public code
//! are all refused.
//!
//! The trie below is the one in GenVM's published constants appendix that the
//! shared spec refers to (with `OOM ...` codes). Results written by the
//! executor of July 2025 (GenVM v0.1.8, `executor/src/public_abi.rs` and the
//! places that build `VMError`s) use an older vocabulary: a bare `OOM`,
//! `validator_disagrees call N`, `version_too_big`, `invalid_contract wasm`,
//! the host's error names (`absent`, `forbidden`, `i_am_leader`,
//! `out_of_storage_gas`) and `runner_actions`. Those are accepted too, and a
//! parsed error says which [`Vocabulary`] it belongs to; a code both know
//! counts as current.

use std::fmt;

/// The parameter an entry of the trie takes after its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// No parameter: the path is the whole public code.
    None,
    /// One signed 32-bit decimal integer, canonical (`-5`, not `+5` or `-05`).
    I32,
    /// One unsigned 32-bit decimal integer, canonical (`7`, not `07`).
    U32,
    /// Free text: one or more further components.
    Str,
}

/// The entries of the `vm_error` trie: path and parameter.
pub const VM_ERROR_TRIE: &[(&str, ParamKind)] = &[
    ("timeout", ParamKind::None),
    ("absent_leader_nondet_output", ParamKind::None),
    ("exit_code", ParamKind::I32),
    ("wasm_trap", ParamKind::Str),
    ("OOM RAM", ParamKind::None),
    ("OOM RAM table", ParamKind::None),
    ("OOM RAM memory", ParamKind::None),
    ("OOM RAM limit", ParamKind::None),
    ("OOM storage", ParamKind::None),
    ("OOM receipt nondet_output", ParamKind::None),
    ("OOM receipt message internal", ParamKind::None),
    ("OOM receipt message external", ParamKind::None),
    ("OOM fees internal", ParamKind::None),
    ("OOM fees external", ParamKind::None),
    ("invalid_contract", ParamKind::None),
    ("invalid_contract absent_runner_comment", ParamKind::None),
    ("invalid_contract not_utf8_text", ParamKind::None),
    ("invalid_contract malformed_runner", ParamKind::None),
    ("invalid_contract major_mismatch", ParamKind::None),
    ("invalid_contract wasm validating", ParamKind::None),
    ("invalid_contract wasm linking", ParamKind::None),
    ("invalid_contract wasm entrypoint", ParamKind::None),
    ("host", ParamKind::Str),
];

/// The VM-error codes of GenVM executor v0.1.8 (July 2025) that the current
/// trie lacks: its `vm_error` enum had `timeout`, `validator_disagrees`,
/// `version_too_big`, `OOM` and `invalid_contract`, with parameters and
/// host-error names added where the errors are raised.
pub const VM_ERROR_TRIE_V0_1_8: &[(&str, ParamKind)] = &[
    ("OOM", ParamKind::None),
    ("validator_disagrees call", ParamKind::U32),
    ("version_too_big", ParamKind::None),
    ("invalid_contract wasm", ParamKind::None),
    ("absent", ParamKind::None),
    ("forbidden", ParamKind::None),
    ("i_am_leader", ParamKind::None),
    ("out_of_storage_gas", ParamKind::None),
    ("runner_actions", ParamKind::None),
];

/// Which executor generation's vocabulary a VM error belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Vocabulary {
    /// The current `vm_error` trie ([`VM_ERROR_TRIE`]).
    Current,
    /// GenVM executor v0.1.8 of July 2025 ([`VM_ERROR_TRIE_V0_1_8`]).
    ExecutorV0_1_8,
}

impl Vocabulary {
    /// The version it names, for people.
    pub fn name(self) -> &'static str {
        match self {
            Vocabulary::Current => "the current vm_error trie",
            Vocabulary::ExecutorV0_1_8 => "GenVM executor v0.1.8 (July 2025)",
        }
    }
}

/// A parameter after a trie path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VmErrorParam {
    /// The exit code of `exit_code N`.
    I32(i32),
    /// The call number of `validator_disagrees call N`.
    U32(u32),
    /// The text of `wasm_trap ...` or `host ...`.
    Str(String),
}

/// A valid VM-error string, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmError {
    /// The trie entry, like `OOM RAM table` or `exit_code`.
    pub code: &'static str,
    /// The entry's parameter, if it takes one.
    pub param: Option<VmErrorParam>,
    /// The text after ` # `, if present (possibly empty).
    pub detail: Option<String>,
    /// The vocabulary the code belongs to.
    pub vocabulary: Vocabulary,
}

/// Why a string is not a valid VM error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid VM error {text:?}: {reason}")]
pub struct VmErrorRefusal {
    /// The refused string.
    pub text: String,
    /// The rule it broke.
    pub reason: String,
}

impl VmError {
    /// Validates and takes apart a VM-error string.
    pub fn parse(text: &str) -> Result<VmError, VmErrorRefusal> {
        let refuse = |reason: String| VmErrorRefusal {
            text: text.to_owned(),
            reason,
        };
        let (public, detail) = match text.split_once(" # ") {
            Some((public, detail)) => (public, Some(detail.to_owned())),
            None => (text, None),
        };
        if public.contains('#') {
            return Err(refuse(
                "the public code contains '#' (a detail is separated by \" # \")".to_owned(),
            ));
        }
        let components: Vec<&str> = public.split(' ').collect();
        if let Some(index) = components.iter().position(|c| c.is_empty()) {
            return Err(refuse(format!(
                "empty component {index}: components are separated by single spaces"
            )));
        }
        // The longest trie path that prefixes the components decides, the
        // current trie first; the older vocabulary only when the current one
        // does not take the whole code.
        let longest = |trie: &'static [(&'static str, ParamKind)]| {
            trie.iter()
                .filter_map(|(path, kind)| {
                    let path_parts: Vec<&str> = path.split(' ').collect();
                    components
                        .starts_with(&path_parts)
                        .then_some((path, kind, path_parts.len()))
                })
                .max_by_key(|(_, _, length)| *length)
        };
        let takes_all = |(_, kind, length): &(&&str, &ParamKind, usize)| match kind {
            ParamKind::None => *length == components.len(),
            ParamKind::I32 | ParamKind::U32 => *length + 1 == components.len(),
            ParamKind::Str => *length < components.len(),
        };
        let current = longest(VM_ERROR_TRIE);
        let older = longest(VM_ERROR_TRIE_V0_1_8);
        let (best, vocabulary) = match (current, older) {
            (Some(current), _) if takes_all(&current) => (current, Vocabulary::Current),
            (_, Some(older)) if takes_all(&older) => (older, Vocabulary::ExecutorV0_1_8),
            (Some(current), _) => (current, Vocabulary::Current),
            (None, Some(older)) => (older, Vocabulary::ExecutorV0_1_8),
            (None, None) => {
                return Err(refuse(format!(
                    "unknown public code {public:?} (in neither {} nor {})",
                    Vocabulary::Current.name(),
                    Vocabulary::ExecutorV0_1_8.name()
                )));
            }
        };
        let (path, kind, length) = best;
        let rest = &components[length..];
        let param = match (kind, rest) {
            (ParamKind::None, []) => None,
            (ParamKind::None, _) => {
                return Err(refuse(format!(
                    "unknown public code {public:?} (after {path:?})"
                )));
            }
            (ParamKind::I32, [number]) => {
                let value: i32 = number
                    .parse()
                    .ok()
                    .filter(|v: &i32| v.to_string() == *number)
                    .ok_or_else(|| {
                        refuse(format!("{path} takes a canonical i32, found {number:?}"))
                    })?;
                Some(VmErrorParam::I32(value))
            }
            (ParamKind::I32, _) => return Err(refuse(format!("{path} takes exactly one i32"))),
            (ParamKind::U32, [number]) => {
                let value: u32 = number
                    .parse()
                    .ok()
                    .filter(|v: &u32| v.to_string() == *number)
                    .ok_or_else(|| {
                        refuse(format!("{path} takes a canonical u32, found {number:?}"))
                    })?;
                Some(VmErrorParam::U32(value))
            }
            (ParamKind::U32, _) => return Err(refuse(format!("{path} takes exactly one u32"))),
            (ParamKind::Str, []) => return Err(refuse(format!("{path} takes a parameter"))),
            (ParamKind::Str, parts) => Some(VmErrorParam::Str(parts.join(" "))),
        };
        Ok(VmError {
            code: path,
            param,
            detail,
            vocabulary,
        })
    }
}

impl fmt::Display for VmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)?;
        match &self.param {
            Some(VmErrorParam::I32(v)) => write!(f, " {v}")?,
            Some(VmErrorParam::U32(v)) => write!(f, " {v}")?,
            Some(VmErrorParam::Str(s)) => write!(f, " {s}")?,
            None => {}
        }
        if let Some(detail) = &self.detail {
            write!(f, " # {detail}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_documented_forms_and_round_trips() {
        for text in [
            "timeout",
            "exit_code 0",
            "exit_code -2147483648",
            "wasm_trap unreachable",
            "OOM RAM",
            "OOM RAM table # grew to 10 pages",
            "invalid_contract",
            "invalid_contract wasm linking",
            "host some failure # x # y",
            "timeout # ",
        ] {
            let parsed = VmError::parse(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(parsed.to_string(), text);
        }
        let parsed = VmError::parse("exit_code 7 # oops").unwrap();
        assert_eq!(parsed.code, "exit_code");
        assert_eq!(parsed.param, Some(VmErrorParam::I32(7)));
        assert_eq!(parsed.detail.as_deref(), Some("oops"));
    }

    #[test]
    fn refuses_everything_else() {
        for text in [
            "",
            "timeout now",
            "exit_code",
            "exit_code 2147483648",
            "exit_code +1",
            "exit_code 01",
            "exit_code 1 2",
            "wasm_trap",
            "OOM  RAM",
            " timeout",
            "timeout#x",
            "Timeout",
            "invalid_contract wasm linking extra",
        ] {
            assert!(VmError::parse(text).is_err(), "{text:?} accepted");
        }
    }

    #[test]
    fn the_july_2025_executor_vocabulary_is_accepted_and_named() {
        for text in [
            "validator_disagrees call 0",
            "validator_disagrees call 12 # leader said 16",
            "version_too_big",
            "OOM",
            "absent",
            "forbidden",
            "i_am_leader",
            "out_of_storage_gas",
            "runner_actions",
            "invalid_contract wasm",
        ] {
            let parsed = VmError::parse(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(parsed.vocabulary, Vocabulary::ExecutorV0_1_8, "{text}");
            assert_eq!(parsed.to_string(), text);
        }
        for text in [
            "OOM RAM table",
            "timeout",
            "exit_code 3",
            "invalid_contract",
        ] {
            assert_eq!(
                VmError::parse(text).unwrap().vocabulary,
                Vocabulary::Current,
                "{text}"
            );
        }
        for text in [
            "validator_disagrees",
            "validator_disagrees call",
            "validator_disagrees call -1",
            "validator_disagrees call 01",
            "version_too_big now",
            "absent x",
        ] {
            assert!(VmError::parse(text).is_err(), "{text:?} accepted");
        }
        let error = VmError::parse("nonsense").unwrap_err().to_string();
        assert!(error.contains("GenVM executor v0.1.8"), "{error}");
    }
}
