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
//! shared spec refers to (with `OOM ...` codes).

use std::fmt;

/// The parameter an entry of the trie takes after its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// No parameter: the path is the whole public code.
    None,
    /// One signed 32-bit decimal integer, canonical (`-5`, not `+5` or `-05`).
    I32,
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

/// A parameter after a trie path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VmErrorParam {
    /// The exit code of `exit_code N`.
    I32(i32),
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
        // The longest trie path that prefixes the components decides.
        let best = VM_ERROR_TRIE
            .iter()
            .filter_map(|(path, kind)| {
                let path_parts: Vec<&str> = path.split(' ').collect();
                components
                    .starts_with(&path_parts)
                    .then_some((path, kind, path_parts.len()))
            })
            .max_by_key(|(_, _, length)| *length);
        let Some((path, kind, length)) = best else {
            return Err(refuse(format!("unknown public code {public:?}")));
        };
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
            (ParamKind::Str, []) => return Err(refuse(format!("{path} takes a parameter"))),
            (ParamKind::Str, parts) => Some(VmErrorParam::Str(parts.join(" "))),
        };
        Ok(VmError {
            code: path,
            param,
            detail,
        })
    }
}

impl fmt::Display for VmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)?;
        match &self.param {
            Some(VmErrorParam::I32(v)) => write!(f, " {v}")?,
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
            "OOM",
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
            "invalid_contract wasm",
        ] {
            assert!(VmError::parse(text).is_err(), "{text:?} accepted");
        }
    }
}
