//! The human-readable text form of Calldata values.
//!
//! Meant for people: CLI output, error reports, hand-written inputs. It is JSON
//! extended with what JSON lacks, so every JSON document whose numbers are
//! integers is also valid text form:
//!
//! | value    | text form                                   |
//! |----------|---------------------------------------------|
//! | null     | `null`                                      |
//! | bool     | `true`, `false`                             |
//! | integer  | decimal of any size: `0`, `-42`, `18446744073709551616` |
//! | bytes    | `b#` + lowercase hex, two digits per byte: `b#`, `b#00ff` |
//! | address  | `addr#` + exactly 40 hex digits             |
//! | string   | a JSON string: `"héllo\n"`, escapes as in JSON |
//! | array    | `[1, "a", null]`                            |
//! | map      | `{"a": 1, "b": [true]}`; keys are strings    |
//!
//! [`to_text`] prints maps in key order with `, ` and `: ` separators, so equal
//! values print equally. [`parse_text`] accepts JSON whitespace anywhere between
//! tokens, keys in any order (they are sorted), upper-case hex; it refuses
//! duplicate keys, fractions and exponents, trailing commas and nesting deeper
//! than [`DEFAULT_MAX_DEPTH`](super::DEFAULT_MAX_DEPTH).

use super::decode::DEFAULT_MAX_DEPTH;
use super::integer::Integer;
use super::value::{ADDRESS_LEN, Address, Map, Value};
use std::fmt::Write as _;

/// A text-form input that does not parse: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct TextError {
    /// 1-based line of the offending character.
    pub line: usize,
    /// 1-based column (in characters) of the offending character.
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

/// Prints `value` in the text form, on one line.
pub fn to_text(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(integer) => {
            let _ = write!(out, "{integer}");
        }
        Value::Bytes(bytes) => {
            out.push_str("b#");
            out.push_str(&hex::encode(bytes));
        }
        Value::Address(address) => {
            out.push_str("addr#");
            out.push_str(&hex::encode(address.as_bytes()));
        }
        Value::Str(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_string(key, out);
                out.push_str(": ");
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Parses one value in the text form; only whitespace may surround it.
pub fn parse_text(input: &str) -> Result<Value, TextError> {
    let mut parser = Parser {
        input,
        position: 0,
        max_depth: DEFAULT_MAX_DEPTH,
    };
    parser.skip_whitespace();
    let value = parser.value(0)?;
    parser.skip_whitespace();
    if parser.position != input.len() {
        return Err(parser.error_here("unexpected text after the value"));
    }
    Ok(value)
}

struct Parser<'a> {
    input: &'a str,
    position: usize,
    max_depth: usize,
}

impl Parser<'_> {
    fn error_at(&self, position: usize, message: impl Into<String>) -> TextError {
        let before = &self.input[..position.min(self.input.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        TextError {
            line,
            column,
            message: message.into(),
        }
    }

    fn error_here(&self, message: impl Into<String>) -> TextError {
        self.error_at(self.position, message)
    }

    fn rest(&self) -> &str {
        &self.input[self.position..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_whitespace(&mut self) {
        let rest = self.rest();
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        self.position += rest.len() - trimmed.len();
    }

    fn expect(&mut self, c: char) -> Result<(), TextError> {
        if self.peek() == Some(c) {
            self.position += c.len_utf8();
            Ok(())
        } else {
            Err(self.error_here(format!("expected {c:?}")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, TextError> {
        let Some(c) = self.peek() else {
            return Err(self.error_here("expected a value, found the end of the input"));
        };
        match c {
            '[' => {
                let depth = self.enter(depth)?;
                self.array(depth)
            }
            '{' => {
                let depth = self.enter(depth)?;
                self.map(depth)
            }
            '"' => Ok(Value::Str(self.string()?)),
            '-' | '0'..='9' => self.integer(),
            _ => self.word(),
        }
    }

    fn enter(&self, depth: usize) -> Result<usize, TextError> {
        if depth >= self.max_depth {
            return Err(self.error_here(format!(
                "nesting deeper than the limit of {}",
                self.max_depth
            )));
        }
        Ok(depth + 1)
    }

    fn array(&mut self, depth: usize) -> Result<Value, TextError> {
        self.expect('[')?;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(']') {
            self.position += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value(depth)?);
            self.skip_whitespace();
            match self.peek() {
                Some(',') => self.position += 1,
                Some(']') => {
                    self.position += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error_here("expected ',' or ']' in an array")),
            }
        }
    }

    fn map(&mut self, depth: usize) -> Result<Value, TextError> {
        self.expect('{')?;
        let mut map = Map::new();
        self.skip_whitespace();
        if self.peek() == Some('}') {
            self.position += 1;
            return Ok(Value::Map(map));
        }
        loop {
            self.skip_whitespace();
            let key_start = self.position;
            if self.peek() != Some('"') {
                return Err(self.error_here("expected a string key in a map"));
            }
            let key = self.string()?;
            self.skip_whitespace();
            self.expect(':')?;
            self.skip_whitespace();
            let item = self.value(depth)?;
            if map.contains_key(&key) {
                return Err(self.error_at(key_start, format!("duplicate map key {key:?}")));
            }
            map.insert(key, item);
            self.skip_whitespace();
            match self.peek() {
                Some(',') => self.position += 1,
                Some('}') => {
                    self.position += 1;
                    return Ok(Value::Map(map));
                }
                _ => return Err(self.error_here("expected ',' or '}' in a map")),
            }
        }
    }

    fn integer(&mut self) -> Result<Value, TextError> {
        let start = self.position;
        let rest = self.rest();
        let sign = usize::from(rest.starts_with('-'));
        let digits = rest[sign..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(self.error_here("expected digits after '-'"));
        }
        let end = sign + digits;
        if matches!(rest[end..].chars().next(), Some('.' | 'e' | 'E')) {
            return Err(self.error_at(start + end, "Calldata has no fractional numbers"));
        }
        let text = &rest[..end];
        let integer: Integer = text
            .parse()
            .map_err(|_| self.error_at(start, format!("not an integer: {text}")))?;
        self.position += end;
        Ok(Value::Int(integer))
    }

    fn word(&mut self) -> Result<Value, TextError> {
        let start = self.position;
        let rest = self.rest();
        let length = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#' || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..length];
        let value = if word == "null" {
            Value::Null
        } else if word == "true" {
            Value::Bool(true)
        } else if word == "false" {
            Value::Bool(false)
        } else if let Some(digits) = word.strip_prefix("b#") {
            let bytes = hex::decode(digits)
                .map_err(|e| self.error_at(start, format!("bad hex in a byte string: {e}")))?;
            Value::Bytes(bytes)
        } else if let Some(digits) = word.strip_prefix("addr#") {
            let bytes = hex::decode(digits)
                .map_err(|e| self.error_at(start, format!("bad hex in an address: {e}")))?;
            let array: [u8; ADDRESS_LEN] = bytes.try_into().map_err(|bytes: Vec<u8>| {
                self.error_at(
                    start,
                    format!("an address has {ADDRESS_LEN} bytes, found {}", bytes.len()),
                )
            })?;
            Value::Address(Address(array))
        } else if word.is_empty() {
            let found = self.peek().map_or_else(String::new, |c| format!(" {c:?}"));
            return Err(self.error_here(format!("expected a value, found{found}")));
        } else {
            return Err(self.error_here(format!("unknown word {word:?}")));
        };
        self.position += length;
        Ok(value)
    }

    fn string(&mut self) -> Result<String, TextError> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error_here("unterminated string"));
            };
            match c {
                '"' => {
                    self.position += 1;
                    return Ok(out);
                }
                '\\' => {
                    self.position += 1;
                    out.push(self.escape()?);
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error_here("control character in a string: escape it"));
                }
                c => {
                    out.push(c);
                    self.position += c.len_utf8();
                }
            }
        }
    }

    fn escape(&mut self) -> Result<char, TextError> {
        let start = self.position - 1;
        let Some(c) = self.peek() else {
            return Err(self.error_here("unterminated escape"));
        };
        self.position += c.len_utf8();
        Ok(match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let high = self.hex4()?;
                if (0xd800..0xdc00).contains(&high) {
                    if !self.rest().starts_with("\\u") {
                        return Err(self.error_at(start, "unpaired surrogate escape"));
                    }
                    self.position += 2;
                    let low = self.hex4()?;
                    if !(0xdc00..0xe000).contains(&low) {
                        return Err(self.error_at(start, "unpaired surrogate escape"));
                    }
                    let code = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
                    char::from_u32(code)
                        .ok_or_else(|| self.error_at(start, "bad surrogate pair"))?
                } else {
                    char::from_u32(high)
                        .ok_or_else(|| self.error_at(start, "unpaired surrogate escape"))?
                }
            }
            other => return Err(self.error_at(start, format!("unknown escape \\{other}"))),
        })
    }

    fn hex4(&mut self) -> Result<u32, TextError> {
        let digits = self.rest().get(..4).unwrap_or("");
        if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.error_here("expected four hex digits after \\u"));
        }
        let code =
            u32::from_str_radix(digits, 16).map_err(|_| self.error_here("bad \\u escape"))?;
        self.position += 4;
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_every_kind() {
        let map: Map = [
            ("z", Value::from(-1)),
            (
                "a",
                Value::Array(vec![
                    Value::Null,
                    Value::Bool(true),
                    Value::Bytes(vec![0, 0xff]),
                ]),
            ),
            ("addr", Value::Address(Address([0x11; 20]))),
            ("s", Value::from("q\"\n\u{1}é")),
        ]
        .into_iter()
        .collect();
        let text = to_text(&Value::Map(map.clone()));
        assert_eq!(
            text,
            r#"{"a": [null, true, b#00ff], "addr": addr#1111111111111111111111111111111111111111, "s": "q\"\n\u0001é", "z": -1}"#
        );
        assert_eq!(parse_text(&text).unwrap(), Value::Map(map));
    }

    #[test]
    fn plain_json_is_text_form() {
        let value =
            parse_text(" {\"b\": [1, 2, {\"c\": \"\\u00e9\\ud83d\\ude00\"}],\n \"a\": null } ")
                .unwrap();
        assert_eq!(to_text(&value), r#"{"a": null, "b": [1, 2, {"c": "é😀"}]}"#);
        assert_eq!(
            parse_text("-340282366920938463463374607431768211457").unwrap(),
            Value::Int("-340282366920938463463374607431768211457".parse().unwrap())
        );
    }

    #[test]
    fn refusals_name_the_place() {
        let error = parse_text("[1,\n 2.5]").unwrap_err();
        assert_eq!((error.line, error.column), (2, 3));
        assert!(error.message.contains("fractional"));
        assert!(
            parse_text(r#"{"a": 1, "a": 2}"#)
                .unwrap_err()
                .message
                .contains("duplicate")
        );
        assert!(parse_text("[1,]").is_err());
        assert!(parse_text("b#abc").unwrap_err().message.contains("hex"));
        assert!(
            parse_text("addr#0011")
                .unwrap_err()
                .message
                .contains("20 bytes")
        );
        assert!(
            parse_text(r#""\ud800""#)
                .unwrap_err()
                .message
                .contains("surrogate")
        );
        assert!(parse_text("nul").is_err());
        assert!(parse_text("1 2").is_err());
        assert!(parse_text("").is_err());
        let deep = "[".repeat(10_000);
        assert!(parse_text(&deep).unwrap_err().message.contains("nesting"));
    }
}
