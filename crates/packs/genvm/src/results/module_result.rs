//! Module results: Calldata `{"ok": answer}` / `{"error": details}` from GenVM modules.
//!
//! WebRender, WebRequest, ExecPrompt and ExecPromptTemplate answer with one
//! Calldata map holding exactly one of `ok` or `error`. What `ok` holds depends
//! on the operation (and its mode), so decoding takes the [`Operation`] and
//! checks the answer's shape exactly: the right kinds, no missing and no extra
//! keys, a status that fits in `u16`. `error` may hold any value. Refusals name
//! the path inside the value (`$.ok.response.status`).

use crate::calldata::{DecodeError, Map, Value, decode, encode};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The module operation (and mode) whose answer is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// WebRender in mode `text`: `{"ok": {"text": String}}`.
    WebRenderText,
    /// WebRender in mode `html`: `{"ok": {"response": Response}}`.
    WebRenderHtml,
    /// WebRender in mode `screenshot`: `{"ok": {"image": Bytes}}`.
    WebRenderScreenshot,
    /// WebRequest: `{"ok": Response}`.
    WebRequest,
    /// ExecPrompt with response_format `text`: `{"ok": String}`.
    ExecPromptText,
    /// ExecPrompt with response_format `json`: `{"ok": Object}` (a map).
    ExecPromptJson,
    /// ExecPromptTemplate EqComparative or EqNonComparativeValidator: `{"ok": Bool}`.
    ExecPromptTemplateBool,
    /// ExecPromptTemplate EqNonComparativeLeader: `{"ok": String}`.
    ExecPromptTemplateText,
}

impl Operation {
    /// Every operation, with its command-line name.
    pub const ALL: [(Operation, &'static str); 8] = [
        (Operation::WebRenderText, "web-render-text"),
        (Operation::WebRenderHtml, "web-render-html"),
        (Operation::WebRenderScreenshot, "web-render-screenshot"),
        (Operation::WebRequest, "web-request"),
        (Operation::ExecPromptText, "exec-prompt-text"),
        (Operation::ExecPromptJson, "exec-prompt-json"),
        (
            Operation::ExecPromptTemplateBool,
            "exec-prompt-template-bool",
        ),
        (
            Operation::ExecPromptTemplateText,
            "exec-prompt-template-text",
        ),
    ];

    /// The command-line name, like `web-request`.
    pub fn name(self) -> &'static str {
        Operation::ALL
            .iter()
            .find(|(op, _)| *op == self)
            .map_or("unknown", |(_, name)| name)
    }
}

impl FromStr for Operation {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .iter()
            .find(|(_, name)| *name == text)
            .map(|(op, _)| *op)
            .ok_or_else(|| {
                let names: Vec<&str> = Operation::ALL.iter().map(|(_, n)| *n).collect();
                format!("unknown operation {text:?}; one of: {}", names.join(", "))
            })
    }
}

/// An HTTP response as modules report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebResponse {
    /// The HTTP status code.
    pub status: u16,
    /// Header names to raw header values.
    pub headers: BTreeMap<String, Vec<u8>>,
    /// The response body.
    pub body: Vec<u8>,
}

/// The `ok` answer of a module, by operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleAnswer {
    /// WebRender text mode.
    RenderedText(String),
    /// WebRender html mode.
    RenderedHtml(WebResponse),
    /// WebRender screenshot mode: the image bytes.
    Screenshot(Vec<u8>),
    /// WebRequest.
    Response(WebResponse),
    /// ExecPrompt text.
    PromptText(String),
    /// ExecPrompt json: the object.
    PromptJson(Map),
    /// ExecPromptTemplate comparative / validator verdict.
    Verdict(bool),
    /// ExecPromptTemplate leader text.
    TemplateText(String),
}

/// A decoded module result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleResult {
    /// `{"ok": answer}`.
    Ok(ModuleAnswer),
    /// `{"error": details}` with any value as details.
    Error(Value),
}

/// Why bytes or a value are not a module result of the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModuleResultError {
    /// The bytes are not canonical Calldata.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The value does not have the operation's shape.
    #[error("at {path}: {message}")]
    Shape {
        /// Where in the value, like `$.ok.status`.
        path: String,
        /// What was expected and found.
        message: String,
    },
}

fn shape(path: &str, message: impl Into<String>) -> ModuleResultError {
    ModuleResultError::Shape {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// The entries of a map that must have exactly `keys`.
fn exact_map<'a>(
    value: &'a Value,
    path: &str,
    keys: &[&str],
) -> Result<&'a Map, ModuleResultError> {
    let Value::Map(map) = value else {
        return Err(shape(
            path,
            format!(
                "expected a map with keys {keys:?}, found a {}",
                value.kind()
            ),
        ));
    };
    for key in map.keys() {
        if !keys.contains(&key) {
            return Err(shape(
                path,
                format!("unexpected key {key:?}; expected exactly {keys:?}"),
            ));
        }
    }
    for key in keys {
        if !map.contains_key(key) {
            return Err(shape(path, format!("missing key {key:?}")));
        }
    }
    Ok(map)
}

fn field<'a>(map: &'a Map, key: &str) -> &'a Value {
    // exact_map has checked the key exists.
    map.get(key).unwrap_or(&Value::Null)
}

fn string(value: &Value, path: &str) -> Result<String, ModuleResultError> {
    match value {
        Value::Str(text) => Ok(text.clone()),
        other => Err(shape(
            path,
            format!("expected a string, found a {}", other.kind()),
        )),
    }
}

fn bytes(value: &Value, path: &str) -> Result<Vec<u8>, ModuleResultError> {
    match value {
        Value::Bytes(bytes) => Ok(bytes.clone()),
        other => Err(shape(
            path,
            format!("expected bytes, found a {}", other.kind()),
        )),
    }
}

impl WebResponse {
    /// Reads `{status, headers, body}`.
    pub fn from_value(value: &Value, path: &str) -> Result<WebResponse, ModuleResultError> {
        let map = exact_map(value, path, &["body", "headers", "status"])?;
        let status_path = format!("{path}.status");
        let status = match field(map, "status") {
            Value::Int(i) => i
                .to_u64()
                .and_then(|v| u16::try_from(v).ok())
                .ok_or_else(|| shape(&status_path, format!("status {i} does not fit in u16")))?,
            other => {
                return Err(shape(
                    &status_path,
                    format!("expected an integer, found a {}", other.kind()),
                ));
            }
        };
        let headers_path = format!("{path}.headers");
        let Value::Map(header_map) = field(map, "headers") else {
            return Err(shape(
                &headers_path,
                "expected a map of header name to bytes",
            ));
        };
        let mut headers = BTreeMap::new();
        for (name, raw) in header_map.iter() {
            headers.insert(
                name.to_owned(),
                bytes(raw, &format!("{headers_path}[{name:?}]"))?,
            );
        }
        let body = bytes(field(map, "body"), &format!("{path}.body"))?;
        Ok(WebResponse {
            status,
            headers,
            body,
        })
    }

    /// The response as a Calldata value.
    pub fn to_value(&self) -> Value {
        let headers: Map = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), Value::Bytes(v.clone())))
            .collect();
        [
            ("status", Value::from(self.status)),
            ("headers", Value::Map(headers)),
            ("body", Value::Bytes(self.body.clone())),
        ]
        .into_iter()
        .collect::<Map>()
        .into()
    }
}

fn single(key: &str, value: Value) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(key, value);
    Value::Map(map)
}

impl ModuleResult {
    /// Decodes canonical Calldata and checks the operation's shape.
    pub fn decode(bytes: &[u8], operation: Operation) -> Result<ModuleResult, ModuleResultError> {
        ModuleResult::from_value(&decode(bytes)?, operation)
    }

    /// Checks a decoded value against the operation's shape.
    pub fn from_value(
        value: &Value,
        operation: Operation,
    ) -> Result<ModuleResult, ModuleResultError> {
        let Value::Map(map) = value else {
            return Err(shape(
                "$",
                format!(
                    "expected {{\"ok\": ...}} or {{\"error\": ...}}, found a {}",
                    value.kind()
                ),
            ));
        };
        let mut keys = map.keys();
        let (Some(key), None) = (keys.next(), keys.next()) else {
            return Err(shape(
                "$",
                format!(
                    "expected exactly one of \"ok\" or \"error\", found {} keys",
                    map.len()
                ),
            ));
        };
        let inner = field(map, key);
        match key {
            "error" => Ok(ModuleResult::Error(inner.clone())),
            "ok" => Ok(ModuleResult::Ok(answer(inner, operation)?)),
            other => Err(shape(
                "$",
                format!("expected \"ok\" or \"error\", found {other:?}"),
            )),
        }
    }

    /// The result as a Calldata value.
    pub fn to_value(&self) -> Value {
        match self {
            ModuleResult::Error(details) => single("error", details.clone()),
            ModuleResult::Ok(answer) => single(
                "ok",
                match answer {
                    ModuleAnswer::RenderedText(text) => single("text", Value::Str(text.clone())),
                    ModuleAnswer::RenderedHtml(response) => single("response", response.to_value()),
                    ModuleAnswer::Screenshot(image) => single("image", Value::Bytes(image.clone())),
                    ModuleAnswer::Response(response) => response.to_value(),
                    ModuleAnswer::PromptText(text) | ModuleAnswer::TemplateText(text) => {
                        Value::Str(text.clone())
                    }
                    ModuleAnswer::PromptJson(object) => Value::Map(object.clone()),
                    ModuleAnswer::Verdict(verdict) => Value::Bool(*verdict),
                },
            ),
        }
    }

    /// The result in canonical Calldata.
    pub fn encode(&self) -> Vec<u8> {
        encode(&self.to_value())
    }
}

fn answer(value: &Value, operation: Operation) -> Result<ModuleAnswer, ModuleResultError> {
    let path = "$.ok";
    Ok(match operation {
        Operation::WebRenderText => {
            let map = exact_map(value, path, &["text"])?;
            ModuleAnswer::RenderedText(string(field(map, "text"), "$.ok.text")?)
        }
        Operation::WebRenderHtml => {
            let map = exact_map(value, path, &["response"])?;
            ModuleAnswer::RenderedHtml(WebResponse::from_value(
                field(map, "response"),
                "$.ok.response",
            )?)
        }
        Operation::WebRenderScreenshot => {
            let map = exact_map(value, path, &["image"])?;
            ModuleAnswer::Screenshot(bytes(field(map, "image"), "$.ok.image")?)
        }
        Operation::WebRequest => ModuleAnswer::Response(WebResponse::from_value(value, path)?),
        Operation::ExecPromptText => ModuleAnswer::PromptText(string(value, path)?),
        Operation::ExecPromptJson => match value {
            Value::Map(object) => ModuleAnswer::PromptJson(object.clone()),
            other => {
                return Err(shape(
                    path,
                    format!("expected an object (map), found a {}", other.kind()),
                ));
            }
        },
        Operation::ExecPromptTemplateBool => match value {
            Value::Bool(verdict) => ModuleAnswer::Verdict(*verdict),
            other => {
                return Err(shape(
                    path,
                    format!("expected a bool, found a {}", other.kind()),
                ));
            }
        },
        Operation::ExecPromptTemplateText => ModuleAnswer::TemplateText(string(value, path)?),
    })
}

impl fmt::Display for ModuleResult {
    /// `ok <text form of the answer>` or `error <text form of the details>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = self.to_value();
        let Value::Map(map) = &value else {
            return Ok(());
        };
        for (key, inner) in map.iter() {
            write!(f, "{key} {}", crate::calldata::text::to_text(inner))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calldata::text::parse_text;

    fn value(text: &str) -> Value {
        parse_text(text).unwrap()
    }

    #[test]
    fn reads_each_operation_shape() {
        let cases = [
            (Operation::WebRenderText, r#"{"ok": {"text": "hi"}}"#),
            (
                Operation::WebRenderHtml,
                r#"{"ok": {"response": {"status": 200, "headers": {"a": b#01}, "body": b#}}}"#,
            ),
            (
                Operation::WebRenderScreenshot,
                r#"{"ok": {"image": b#89504e47}}"#,
            ),
            (
                Operation::WebRequest,
                r#"{"ok": {"status": 404, "headers": {}, "body": b#6869}}"#,
            ),
            (Operation::ExecPromptText, r#"{"ok": "answer"}"#),
            (Operation::ExecPromptJson, r#"{"ok": {"x": [1, 2]}}"#),
            (Operation::ExecPromptTemplateBool, r#"{"ok": true}"#),
            (
                Operation::ExecPromptTemplateText,
                r#"{"ok": "leader says"}"#,
            ),
            (Operation::WebRequest, r#"{"error": {"code": "timeout"}}"#),
        ];
        for (operation, text) in cases {
            let input = value(text);
            let result = ModuleResult::from_value(&input, operation)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(result.to_value(), input, "{text}");
            assert_eq!(
                ModuleResult::decode(&result.encode(), operation).unwrap(),
                result
            );
        }
    }

    #[test]
    fn refuses_wrong_shapes_with_paths() {
        let refusal = |op: Operation, text: &str| match ModuleResult::from_value(&value(text), op) {
            Err(ModuleResultError::Shape { path, .. }) => path,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            refusal(
                Operation::WebRequest,
                r#"{"ok": {"status": 70000, "headers": {}, "body": b#}}"#
            ),
            "$.ok.status"
        );
        assert_eq!(
            refusal(
                Operation::WebRequest,
                r#"{"ok": {"status": 200, "headers": {"a": "text"}, "body": b#}}"#
            ),
            "$.ok.headers[\"a\"]"
        );
        assert_eq!(
            refusal(
                Operation::WebRequest,
                r#"{"ok": {"status": 200, "headers": {}, "body": b#, "x": 1}}"#
            ),
            "$.ok"
        );
        assert_eq!(
            refusal(Operation::WebRenderText, r#"{"ok": {"text": b#00}}"#),
            "$.ok.text"
        );
        assert_eq!(
            refusal(Operation::ExecPromptTemplateBool, r#"{"ok": "yes"}"#),
            "$.ok"
        );
        assert_eq!(
            refusal(Operation::ExecPromptText, r#"{"ok": "a", "error": null}"#),
            "$"
        );
        assert_eq!(refusal(Operation::ExecPromptText, r#"{"fine": "a"}"#), "$");
        assert_eq!(refusal(Operation::ExecPromptText, r#"["ok"]"#), "$");
    }

    #[test]
    fn operation_names_parse() {
        for (operation, name) in Operation::ALL {
            assert_eq!(name.parse::<Operation>(), Ok(operation));
            assert_eq!(operation.name(), name);
        }
        assert!("web".parse::<Operation>().is_err());
    }
}
