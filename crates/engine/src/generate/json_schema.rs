//! Values valid under a JSON Schema (draft-07): the `json_schema` generator.
//!
//! The schema is walked at parse time (references resolved, patterns compiled,
//! unsupported keywords refused with a clear error) and at generation time
//! every keyword becomes choices: the type to produce, which optional
//! properties to include, collection sizes, numbers within their bounds,
//! strings matching their pattern. `allOf` entries with `if`/`then` are
//! honoured for objects: the properties an `if` looks at are generated first,
//! then the `then` of every condition that holds is merged in before the rest.

use super::regex::RegexSchema;
use super::schema::SchemaError;
use crate::charset::{CharSet, CharSetSpec};
use crate::choice::{FloatConstraints, IntegerConstraints, SizeConstraints};
use crate::data::{Collection, StopTest, TestData, labels};
use crate::value::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// How deep `$ref`s may nest while generating (recursive schemas stop here).
const MAX_DEPTH: usize = 16;

/// A parsed JSON Schema ready to generate from.
#[derive(Debug)]
pub struct JsonSchema {
    root: Value,
    patterns: HashMap<String, RegexSchema>,
    text: Arc<CharSet>,
}

const SUPPORTED: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "examples",
    "default",
    "definitions",
    "$defs",
    "$ref",
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "allOf",
    "anyOf",
    "oneOf",
    "if",
    "then",
    "else",
    "readOnly",
    "writeOnly",
    "deprecated",
];

fn text_of(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

impl JsonSchema {
    /// Parses a schema (a map, or `true`/`false`).
    pub fn parse(schema: &Value) -> Result<JsonSchema, SchemaError> {
        let text = CharSet::from_spec(&CharSetSpec {
            // Printable characters: readable examples, no control characters.
            exclude_categories: Some(vec!["C".into()]),
            ..CharSetSpec::default()
        })
        .map_err(|e| SchemaError::new(e.to_string()))?;
        let mut parsed = JsonSchema {
            root: schema.clone(),
            patterns: HashMap::new(),
            text: Arc::new(text),
        };
        parsed.check(schema, "#")?;
        Ok(parsed)
    }

    fn check(&mut self, schema: &Value, path: &str) -> Result<(), SchemaError> {
        let entries = match schema {
            Value::Bool(_) => return Ok(()),
            Value::Map(entries) => entries,
            other => {
                return Err(SchemaError::new(format!(
                    "json_schema at {path}: a schema must be an object or a boolean, got {}",
                    other.type_name()
                )));
            }
        };
        for (key, value) in entries {
            let Some(key) = key.as_str() else {
                return Err(SchemaError::new(format!(
                    "json_schema at {path}: non-string key"
                )));
            };
            if !SUPPORTED.contains(&key) {
                return Err(SchemaError::new(format!(
                    "json_schema at {path}: keyword {key:?} is not supported"
                )));
            }
            let child = format!("{path}/{key}");
            match key {
                "$ref" => {
                    let target = text_of(value).ok_or_else(|| {
                        SchemaError::new(format!("json_schema at {child}: $ref must be a string"))
                    })?;
                    if self.resolve(&target).is_none() {
                        return Err(SchemaError::new(format!(
                            "json_schema at {child}: cannot resolve {target:?} (only local #/definitions/... and #/$defs/... references)"
                        )));
                    }
                }
                "pattern" => {
                    let pattern = text_of(value).ok_or_else(|| {
                        SchemaError::new(format!(
                            "json_schema at {child}: pattern must be a string"
                        ))
                    })?;
                    if let std::collections::hash_map::Entry::Vacant(slot) =
                        self.patterns.entry(pattern.clone())
                    {
                        let compiled = RegexSchema::parse(&ecma_to_python(&pattern), false, None)
                            .map_err(|e| {
                            SchemaError::new(format!("json_schema at {child}: {}", e.message))
                        })?;
                        slot.insert(compiled);
                    }
                }
                "properties" | "definitions" | "$defs" => {
                    if let Value::Map(children) = value {
                        for (name, sub) in children {
                            let name = name.as_str().unwrap_or("?");
                            self.check(sub, &format!("{child}/{name}"))?;
                        }
                    }
                }
                "items" => match value {
                    Value::Array(items) => {
                        for (i, sub) in items.iter().enumerate() {
                            self.check(sub, &format!("{child}/{i}"))?;
                        }
                    }
                    sub => self.check(sub, &child)?,
                },
                "allOf" | "anyOf" | "oneOf" => {
                    let Value::Array(items) = value else {
                        return Err(SchemaError::new(format!(
                            "json_schema at {child}: must be an array of schemas"
                        )));
                    };
                    if items.is_empty() {
                        return Err(SchemaError::new(format!(
                            "json_schema at {child}: must not be empty"
                        )));
                    }
                    for (i, sub) in items.iter().enumerate() {
                        self.check(sub, &format!("{child}/{i}"))?;
                    }
                }
                "additionalProperties" | "if" | "then" | "else" => self.check(value, &child)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn resolve(&self, reference: &str) -> Option<&Value> {
        let path = reference.strip_prefix("#")?;
        let mut at = &self.root;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            let part = part.replace("~1", "/").replace("~0", "~");
            at = at.get(&part)?;
        }
        Some(at)
    }

    /// Generates a value valid under the schema.
    pub fn generate(&self, data: &mut TestData) -> Result<Value, StopTest> {
        self.generate_at(&self.root, data, 0)
    }

    fn generate_at(
        &self,
        schema: &Value,
        data: &mut TestData,
        depth: usize,
    ) -> Result<Value, StopTest> {
        if depth > MAX_DEPTH {
            return Err(data.reject());
        }
        let schema = match schema {
            Value::Bool(false) => return Err(data.reject()),
            Value::Bool(true) => return Ok(Value::Null),
            s => s,
        };
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            let Some(resolved) = self.resolve(target) else {
                return Err(data.reject());
            };
            return self.generate_at(resolved, data, depth + 1);
        }
        if let Some(v) = schema.get("const") {
            return Ok(v.clone());
        }
        if let Some(Value::Array(options)) = schema.get("enum") {
            let i = data.draw_integer(IntegerConstraints::bounded(0, options.len() as i128 - 1))?;
            return Ok(options[i as usize].clone());
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                data.start_span(labels::ONE_OF);
                let i =
                    data.draw_integer(IntegerConstraints::bounded(0, branches.len() as i128 - 1))?;
                let merged = merge(schema, &branches[i as usize], &[key]);
                let v = self.generate_at(&merged, data, depth + 1)?;
                data.stop_span(false);
                return Ok(v);
            }
        }
        // allOf without conditions merges into this schema; conditional entries
        // are handled by object generation.
        let schema = match schema.get("allOf") {
            Some(Value::Array(parts)) if parts.iter().any(|p| p.get("if").is_none()) => {
                let mut merged = schema.clone();
                let mut conditional = Vec::new();
                for part in parts {
                    if part.get("if").is_some() {
                        conditional.push(part.clone());
                    } else {
                        let resolved = match part.get("$ref").and_then(Value::as_str) {
                            Some(r) => self.resolve(r).cloned().unwrap_or(Value::Bool(true)),
                            None => part.clone(),
                        };
                        merged = merge(&merged, &resolved, &["allOf"]);
                    }
                }
                set(&mut merged, "allOf", Value::Array(conditional));
                merged
            }
            _ => schema.clone(),
        };
        let kind = self.pick_type(&schema, data)?;
        match kind.as_str() {
            "null" => Ok(Value::Null),
            "boolean" => Ok(Value::Bool(data.draw_boolean(0.5)?)),
            "integer" => self.integer(&schema, data),
            "number" => self.number(&schema, data),
            "string" => self.string(&schema, data),
            "array" => self.array(&schema, data, depth),
            _ => self.object(&schema, data, depth),
        }
    }

    fn pick_type(&self, schema: &Value, data: &mut TestData) -> Result<String, StopTest> {
        let declared: Vec<String> = match schema.get("type") {
            Some(Value::Array(kinds)) => kinds.iter().filter_map(text_of).collect(),
            Some(kind) => text_of(kind).into_iter().collect(),
            None => Vec::new(),
        };
        if declared.len() == 1 {
            return Ok(declared[0].clone());
        }
        if declared.len() > 1 {
            let i =
                data.draw_integer(IntegerConstraints::bounded(0, declared.len() as i128 - 1))?;
            return Ok(declared[i as usize].clone());
        }
        let has = |keys: &[&str]| keys.iter().any(|k| schema.get(k).is_some());
        Ok(
            if has(&["properties", "required", "additionalProperties", "allOf"]) {
                "object"
            } else if has(&["items", "minItems", "maxItems", "uniqueItems"]) {
                "array"
            } else if has(&["pattern", "minLength", "maxLength", "format"]) {
                "string"
            } else if has(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) {
                "number"
            } else {
                "null"
            }
            .to_string(),
        )
    }

    fn integer(&self, schema: &Value, data: &mut TestData) -> Result<Value, StopTest> {
        // Integer bounds are read exactly (through f64, i64::MAX would round
        // up to 2^63); fractional bounds round inward. Option::max treats None
        // as smallest, which is what a lower bound wants.
        let min = integer_bound(schema.get("minimum"), f64::ceil)
            .max(integer_bound(schema.get("exclusiveMinimum"), f64::floor).map(|m| m + 1));
        let max = min_option(
            integer_bound(schema.get("maximum"), f64::floor),
            integer_bound(schema.get("exclusiveMaximum"), f64::ceil).map(|m| m - 1),
        );
        if let (Some(lo), Some(hi)) = (min, max)
            && lo > hi
        {
            return Err(data.reject());
        }
        Ok(Value::Integer(data.draw_integer(IntegerConstraints {
            min,
            max,
            shrink_towards: 0,
        })?))
    }

    fn number(&self, schema: &Value, data: &mut TestData) -> Result<Value, StopTest> {
        let exclusive_min = number(schema.get("exclusiveMinimum"));
        let exclusive_max = number(schema.get("exclusiveMaximum"));
        let min = number(schema.get("minimum"))
            .unwrap_or(-f64::MAX)
            .max(exclusive_min.map(f64::next_up).unwrap_or(-f64::MAX));
        let max = number(schema.get("maximum"))
            .unwrap_or(f64::MAX)
            .min(exclusive_max.map(f64::next_down).unwrap_or(f64::MAX));
        if min > max {
            return Err(data.reject());
        }
        let v = data.draw_float(FloatConstraints {
            min,
            max,
            allow_nan: false,
            width: 64,
        })?;
        // Integral numbers travel as integers, like JSON writers print them.
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            Ok(Value::Integer(v as i128))
        } else {
            Ok(Value::Float(v))
        }
    }

    fn string(&self, schema: &Value, data: &mut TestData) -> Result<Value, StopTest> {
        let min = number(schema.get("minLength"))
            .map(|n| n as usize)
            .unwrap_or(0);
        let max = number(schema.get("maxLength")).map(|n| n as usize);
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            let Some(regex) = self.patterns.get(pattern) else {
                return Err(data.reject());
            };
            let v = regex.generate(data)?;
            let length = v.as_str().map(|s| s.chars().count()).unwrap_or(0);
            if length < min || max.is_some_and(|m| length > m) {
                return Err(data.reject());
            }
            return Ok(v);
        }
        let points = data.draw_string(
            self.text.clone(),
            SizeConstraints {
                min_size: min,
                max_size: max.unwrap_or(usize::MAX),
            },
        )?;
        Ok(Value::from_code_points(&points))
    }

    fn array(&self, schema: &Value, data: &mut TestData, depth: usize) -> Result<Value, StopTest> {
        let min = number(schema.get("minItems"))
            .map(|n| n as usize)
            .unwrap_or(0);
        let max = number(schema.get("maxItems")).map(|n| n as usize);
        let unique = matches!(schema.get("uniqueItems"), Some(Value::Bool(true)));
        data.start_span(labels::COLLECTION);
        let mut out: Vec<Value> = Vec::new();
        if let Some(Value::Array(positional)) = schema.get("items") {
            for item in positional.iter().take(max.unwrap_or(usize::MAX)) {
                out.push(self.generate_at(item, data, depth + 1)?);
            }
        } else {
            let item = schema.get("items").cloned().unwrap_or(Value::Bool(true));
            let mut collection = Collection::new(min, max);
            while collection.more(data)? {
                let v = self.generate_at(&item, data, depth + 1)?;
                if unique && out.iter().any(|seen| seen.same_as(&v)) {
                    collection.reject(data)?;
                } else {
                    out.push(v);
                }
            }
        }
        data.stop_span(false);
        if out.len() < min {
            return Err(data.reject());
        }
        Ok(Value::Array(out))
    }

    fn object(&self, schema: &Value, data: &mut TestData, depth: usize) -> Result<Value, StopTest> {
        let mut properties = property_list(schema);
        let mut required = required_list(schema);
        let conditions: Vec<Value> = match schema.get("allOf") {
            Some(Value::Array(parts)) => parts
                .iter()
                .filter(|p| p.get("if").is_some())
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        // Properties that conditions look at come first.
        let mut first: Vec<String> = Vec::new();
        for condition in &conditions {
            if let Some(watched) = condition.get("if") {
                for (name, _) in property_list(watched) {
                    if !first.contains(&name) {
                        first.push(name);
                    }
                }
            }
        }
        data.start_span(labels::COLLECTION);
        let mut out: Vec<(Value, Value)> = Vec::new();
        let mut done: Vec<String> = Vec::new();
        let emit = |this: &Self,
                    name: &str,
                    properties: &[(String, Value)],
                    required: &[String],
                    out: &mut Vec<(Value, Value)>,
                    data: &mut TestData|
         -> Result<(), StopTest> {
            let Some((_, sub)) = properties.iter().find(|(n, _)| n == name) else {
                return Ok(());
            };
            let include = required.iter().any(|r| r == name) || data.draw_boolean(0.5)?;
            if include {
                data.start_span(labels::DICT_ENTRY);
                let v = this.generate_at(sub, data, depth + 1)?;
                data.stop_span(false);
                out.push((Value::text(name), v));
            }
            Ok(())
        };
        for name in &first {
            emit(self, name, &properties, &required, &mut out, data)?;
            done.push(name.clone());
        }
        let partial = Value::Map(out.clone());
        for condition in &conditions {
            let holds = condition.get("if").is_some_and(|c| matches(c, &partial));
            let branch = if holds {
                condition.get("then")
            } else {
                condition.get("else")
            };
            if let Some(branch) = branch {
                for (name, sub) in property_list(branch) {
                    match properties.iter_mut().find(|(n, _)| *n == name) {
                        Some(slot) => slot.1 = sub,
                        None => properties.push((name, sub)),
                    }
                }
                for name in required_list(branch) {
                    if !required.contains(&name) {
                        required.push(name);
                    }
                }
            }
        }
        let names: Vec<String> = properties.iter().map(|(n, _)| n.clone()).collect();
        for name in names {
            if !done.contains(&name) {
                emit(self, &name, &properties, &required, &mut out, data)?;
            }
        }
        data.stop_span(false);
        // A required property with no schema still has to be there.
        for name in &required {
            if !out.iter().any(|(k, _)| k.as_str() == Some(name)) {
                out.push((Value::text(name), Value::Null));
            }
        }
        Ok(Value::Map(out))
    }
}

/// Translates an ECMA-262 pattern (what JSON Schema uses) to the Python `re`
/// dialect the regex generator speaks: `$` ends the input (Python's `$` also
/// matches before a final newline, so it becomes `\Z`), and `\d` and `\w` are
/// ASCII classes (Python's are Unicode).
fn ecma_to_python(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('d') if in_class => out.push_str("0-9"),
                Some('w') if in_class => out.push_str("A-Za-z0-9_"),
                Some('d') => out.push_str("[0-9]"),
                Some('D') if !in_class => out.push_str("[^0-9]"),
                Some('w') => out.push_str("[A-Za-z0-9_]"),
                Some('W') if !in_class => out.push_str("[^A-Za-z0-9_]"),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A leading ] or ^] is literal.
                let rest = chars.as_str();
                if let Some(stripped) = rest.strip_prefix("^]") {
                    out.push_str("^]");
                    chars = stripped.chars();
                } else if let Some(stripped) = rest.strip_prefix(']') {
                    out.push(']');
                    chars = stripped.chars();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '$' if !in_class => out.push_str("\\Z"),
            _ => out.push(c),
        }
    }
    out
}

/// An integer bound: exact for integers, rounded with `round` for floats.
fn integer_bound(v: Option<&Value>, round: fn(f64) -> f64) -> Option<i128> {
    match v? {
        Value::Integer(i) => Some(*i),
        Value::Float(f) if f.is_finite() => Some(round(*f) as i128),
        _ => None,
    }
}

/// The smaller of two optional bounds (either may be absent).
fn min_option(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

fn property_list(schema: &Value) -> Vec<(String, Value)> {
    match schema.get("properties") {
        Some(Value::Map(entries)) => entries
            .iter()
            .filter_map(|(k, v)| k.as_str().map(|k| (k.to_string(), v.clone())))
            .collect(),
        _ => Vec::new(),
    }
}

fn required_list(schema: &Value) -> Vec<String> {
    match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(text_of).collect(),
        _ => Vec::new(),
    }
}

fn set(map: &mut Value, key: &str, value: Value) {
    if let Value::Map(entries) = map {
        match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
            Some(slot) => slot.1 = value,
            None => entries.push((Value::text(key), value)),
        }
    }
}

/// `base` with the keywords of `extra` merged in (properties and required
/// united, other keywords from `extra`), minus the `drop` keywords.
fn merge(base: &Value, extra: &Value, drop: &[&str]) -> Value {
    let mut out = match base {
        Value::Map(entries) => Value::Map(
            entries
                .iter()
                .filter(|(k, _)| !k.as_str().is_some_and(|k| drop.contains(&k)))
                .cloned()
                .collect(),
        ),
        _ => Value::Map(Vec::new()),
    };
    let Value::Map(extra_entries) = extra else {
        return out;
    };
    for (key, value) in extra_entries {
        let Some(name) = key.as_str() else { continue };
        match name {
            "properties" => {
                let mut properties = property_list(&out);
                for (n, v) in property_list(extra) {
                    match properties.iter_mut().find(|(p, _)| *p == n) {
                        Some(slot) => slot.1 = v,
                        None => properties.push((n, v)),
                    }
                }
                set(
                    &mut out,
                    "properties",
                    Value::Map(
                        properties
                            .into_iter()
                            .map(|(k, v)| (Value::text(&k), v))
                            .collect(),
                    ),
                );
            }
            "required" => {
                let mut required = required_list(&out);
                for n in required_list(extra) {
                    if !required.contains(&n) {
                        required.push(n);
                    }
                }
                set(
                    &mut out,
                    "required",
                    Value::Array(required.iter().map(|r| Value::text(r)).collect()),
                );
            }
            _ => set(&mut out, name, value.clone()),
        }
    }
    out
}

/// Whether `value` satisfies the condition schema of an `if` (the keywords
/// conditions use: const, enum, type, properties, required).
fn matches(condition: &Value, value: &Value) -> bool {
    if let Some(expected) = condition.get("const")
        && !expected.same_as(value)
    {
        return false;
    }
    if let Some(Value::Array(options)) = condition.get("enum")
        && !options.iter().any(|o| o.same_as(value))
    {
        return false;
    }
    if let Some(kind) = condition.get("type").and_then(Value::as_str) {
        let ok = matches!(
            (kind, value),
            ("null", Value::Null)
                | ("boolean", Value::Bool(_))
                | ("string", Value::String(_))
                | ("integer", Value::Integer(_))
                | ("number", Value::Integer(_) | Value::Float(_))
                | ("array", Value::Array(_))
                | ("object", Value::Map(_))
        );
        if !ok {
            return false;
        }
    }
    if let Value::Map(_) = value {
        for name in required_list(condition) {
            if value.get(&name).is_none() {
                return false;
            }
        }
        for (name, sub) in property_list(condition) {
            if let Some(v) = value.get(&name)
                && !matches(&sub, v)
            {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::ecma_to_python;

    #[test]
    fn ecma_patterns_translate_to_python() {
        assert_eq!(ecma_to_python("^[a-f]{3}-\\d+$"), "^[a-f]{3}-[0-9]+\\Z");
        assert_eq!(ecma_to_python("[$\\d]x\\$"), "[$0-9]x\\$");
        assert_eq!(ecma_to_python("0x[0-9a-f]*"), "0x[0-9a-f]*");
        assert_eq!(ecma_to_python("[]$]\\w"), "[]$][A-Za-z0-9_]");
    }
}
