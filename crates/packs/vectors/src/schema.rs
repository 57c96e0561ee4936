//! JSON Schema validation of vectors, and recognition of their format version.
//!
//! The seed schema (draft-07, `../shared/spec/test-vector-schema.json`) is the
//! vector format's first form: hex bytes, `car_bytes`, class `messages`. The
//! public corpora follow later versions (base64, `car`, class `message` /
//! `tipset`, variants, randomness), described by `schema-v0.0.5.json`. Vectors
//! do not say which version they follow, so [`detect_format`] recognises it
//! from the document's shape and [`SchemaSet`] validates against the matching
//! schema with the `jsonschema` crate. Every violation carries the JSON
//! pointer of the offending value.
//!
//! Schemas are read from files at run time (they live in the shared specs,
//! never copied into the repository); [`SchemaSet::from_shared_dir`] finds them.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The format version a vector is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatVersion {
    /// The seed schema: hex bytes, `car_bytes`, classes `messages`/`block`/`tipset`/`chain`.
    Seed,
    /// Schema v0.0.5 and later: base64 bytes, `car`, classes `message`/`tipset`/`blockseq`.
    Later,
}

impl FormatVersion {
    /// A short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            FormatVersion::Seed => "seed schema",
            FormatVersion::Later => "schema v0.0.5+",
        }
    }
}

/// One schema violation: where in the vector, and what rule.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SchemaViolation {
    /// JSON pointer of the offending value (`""` is the document itself).
    pub path: String,
    /// JSON pointer of the schema keyword that failed.
    pub schema_path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {} (schema {})", self.message, self.schema_path)
    }
}

/// Why a schema could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The schema file could not be read.
    #[error("cannot read schema {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The schema file is not JSON (the upstream `schema-head.json` is one such file).
    #[error("schema {path} is not valid JSON: {message} at line {line} column {column}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The document is JSON but not a valid draft-07 schema.
    #[error("schema {name} is not a valid draft-07 schema: {message}")]
    Invalid {
        /// The schema's name or file.
        name: String,
        /// The validator's message.
        message: String,
    },
    /// The shared specs directory could not be found.
    #[error("{0}")]
    SharedData(String),
}

/// A compiled schema with the name it was loaded under.
pub struct NamedSchema {
    /// File name or label, for reports.
    pub name: String,
    validator: jsonschema::Validator,
}

impl NamedSchema {
    /// Compiles a draft-07 schema document.
    pub fn compile(name: impl Into<String>, document: &Value) -> Result<NamedSchema, SchemaError> {
        let name = name.into();
        let validator =
            jsonschema::draft7::new(document).map_err(|error| SchemaError::Invalid {
                name: name.clone(),
                message: error.to_string(),
            })?;
        Ok(NamedSchema { name, validator })
    }

    /// Reads and compiles a schema file.
    pub fn load(path: &Path) -> Result<NamedSchema, SchemaError> {
        let document = read_json(path)?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        NamedSchema::compile(name, &document)
    }

    /// Every violation of this schema by `instance`, in document order.
    pub fn violations(&self, instance: &Value) -> Vec<SchemaViolation> {
        self.validator
            .iter_errors(instance)
            .map(|error| SchemaViolation {
                path: error.instance_path().as_str().to_string(),
                schema_path: error.schema_path().as_str().to_string(),
                message: shorten(&error.to_string()),
            })
            .collect()
    }

    /// Whether `instance` is valid under this schema.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }
}

/// The schemas vectors are validated against: the seed schema and the later one.
pub struct SchemaSet {
    /// The seed schema (draft-07), for [`FormatVersion::Seed`] documents.
    pub seed: NamedSchema,
    /// The later schema (v0.0.5), for [`FormatVersion::Later`] documents; without it
    /// later-format vectors are recognised but only checked structurally.
    pub later: Option<NamedSchema>,
    /// Things found while loading that a user should know (e.g. an unparsable schema-head.json).
    pub notes: Vec<String>,
}

/// Path of the seed schema relative to the shared directory (the parent of `shared/data`).
pub const SEED_SCHEMA: &str = "spec/test-vector-schema.json";
/// Path of the later schema relative to the shared data directory.
pub const LATER_SCHEMA: &str = "filecoin-vectors/test-vectors/schema-v0.0.5.json";
/// Path of the corpus' head schema relative to the shared data directory (broken upstream).
pub const HEAD_SCHEMA: &str = "filecoin-vectors/test-vectors/schema-head.json";

impl SchemaSet {
    /// Builds a set from already compiled schemas.
    pub fn new(seed: NamedSchema, later: Option<NamedSchema>) -> SchemaSet {
        SchemaSet {
            seed,
            later,
            notes: Vec::new(),
        }
    }

    /// Loads the seed schema and, if given, the later one from files.
    pub fn load(seed: &Path, later: Option<&Path>) -> Result<SchemaSet, SchemaError> {
        let seed = NamedSchema::load(seed)?;
        let later = later.map(NamedSchema::load).transpose()?;
        Ok(SchemaSet::new(seed, later))
    }

    /// Loads the schemas from the shared directory beside the checkout (see [`geist_pack::data`]).
    ///
    /// The head schema of the public corpus is tried as well; it is not valid
    /// JSON upstream, which is recorded in [`SchemaSet::notes`] rather than failing.
    pub fn from_shared_dir() -> Result<SchemaSet, SchemaError> {
        let data = geist_pack::data::shared_data_dir().map_err(SchemaError::SharedData)?;
        let shared = data
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| data.join(".."));
        let mut set = SchemaSet::load(&shared.join(SEED_SCHEMA), Some(&data.join(LATER_SCHEMA)))?;
        let head = data.join(HEAD_SCHEMA);
        if head.exists()
            && let Err(error) = NamedSchema::load(&head)
        {
            set.notes.push(format!(
                "{error}; later vectors are validated against {LATER_SCHEMA} instead"
            ));
        }
        Ok(set)
    }

    /// The schema for a format version, if loaded.
    pub fn for_format(&self, format: FormatVersion) -> Option<&NamedSchema> {
        match format {
            FormatVersion::Seed => Some(&self.seed),
            FormatVersion::Later => self.later.as_ref(),
        }
    }
}

/// Recognises the format version of a vector document from its shape.
///
/// `car_bytes`, hex strings as messages or a seed-only class mean the seed
/// format; `car`, message objects or a later-only class mean a later one.
/// A document showing neither is judged by the seed schema (which will say why).
pub fn detect_format(document: &Value) -> FormatVersion {
    let Some(object) = document.as_object() else {
        return FormatVersion::Seed;
    };
    if object.contains_key("car_bytes") {
        return FormatVersion::Seed;
    }
    if object.contains_key("car")
        || object.contains_key("apply_tipsets")
        || object.contains_key("randomness")
    {
        return FormatVersion::Later;
    }
    match object.get("class").and_then(Value::as_str) {
        Some("messages" | "block" | "chain") => return FormatVersion::Seed,
        Some("message" | "blockseq") => return FormatVersion::Later,
        _ => {}
    }
    match object
        .get("apply_messages")
        .and_then(Value::as_array)
        .and_then(|items| items.first())
    {
        Some(Value::Object(_)) => FormatVersion::Later,
        _ => FormatVersion::Seed,
    }
}

/// Reads a JSON file, reporting syntax errors with line and column.
pub fn read_json(path: &Path) -> Result<Value, SchemaError> {
    let text = std::fs::read(path).map_err(|source| SchemaError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&text).map_err(|error| SchemaError::Json {
        path: path.to_path_buf(),
        message: error
            .to_string()
            .split(" at line")
            .next()
            .unwrap_or_default()
            .to_string(),
        line: error.line(),
        column: error.column(),
    })
}

/// Violation messages quote the offending value; a whole CAR in a message helps nobody.
fn shorten(message: &str) -> String {
    const LIMIT: usize = 240;
    if message.len() <= LIMIT {
        return message.to_string();
    }
    let mut cut = LIMIT;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} characters)", &message[..cut], message.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn format_is_recognised_from_shape() {
        assert_eq!(
            detect_format(&json!({"class": "messages", "car_bytes": "0x"})),
            FormatVersion::Seed
        );
        assert_eq!(
            detect_format(&json!({"class": "message", "car": ""})),
            FormatVersion::Later
        );
        assert_eq!(
            detect_format(&json!({"class": "tipset", "apply_tipsets": []})),
            FormatVersion::Later
        );
        assert_eq!(
            detect_format(&json!({"class": "tipset"})),
            FormatVersion::Seed
        );
        assert_eq!(
            detect_format(&json!({"apply_messages": [{"bytes": ""}]})),
            FormatVersion::Later
        );
        assert_eq!(detect_format(&json!([1, 2])), FormatVersion::Seed);
    }

    #[test]
    fn violations_name_the_json_path_and_if_then_applies() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"class": {"enum": ["messages", "block"]}, "n": {"type": "integer"}},
            "allOf": [{"if": {"properties": {"class": {"const": "messages"}}}, "then": {"required": ["apply_messages"]}}]
        });
        let schema = NamedSchema::compile("test", &schema).unwrap();
        assert!(schema.is_valid(&json!({"class": "block"})));
        let violations = schema.violations(&json!({"class": "messages", "n": 1.5}));
        let paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
        assert!(paths.contains(&"/n"), "{violations:?}");
        assert!(
            paths.contains(&""),
            "the if/then `required` applies at the root: {violations:?}"
        );
    }

    #[test]
    fn long_messages_are_shortened() {
        let long = "x".repeat(1000);
        assert!(shorten(&long).ends_with("(1000 characters)"));
        assert_eq!(shorten("short"), "short");
    }
}
