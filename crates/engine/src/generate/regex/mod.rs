//! Strings matching a regular expression: the `regex` schema (Hypothesis'
//! `from_regex`).
//!
//! Hegel patterns are written in Python's `re` syntax, because the reference
//! server is Python, so geist parses that syntax itself ([`parser`]) into a
//! tree ([`ast`]) that keeps everything Python can say: captures,
//! backreferences (`\1`, `(?P=name)`), conditionals (`(?(1)a|b)`),
//! look-ahead and look-behind, atomic groups and possessive repeats.
//! Character classes are intersected with the alphabet while parsing, and
//! parts that cannot be generated within it are set aside, so generation
//! only takes branches that can produce a string.
//!
//! Generation ([`generator`]) walks the tree making choices, recording group
//! captures as it goes. What cannot be decided while the string is being
//! built (anchors, look-arounds, the commitment of atomic groups) is checked
//! once the whole string, padding included, is known, with a backtracking
//! matcher that has Python's semantics ([`matcher`]). A string that fails is
//! never returned: the test case is rejected instead, so impossible patterns
//! such as `(?!foo)foo` give only rejected test cases, quickly.
//!
//! Refused with a [`SchemaError`]: invalid patterns (with Python's message and
//! position), `\N{...}`, variable-width look-behind (as in Python), and
//! patterns that cannot match within the alphabet. Accepted beyond Python:
//! `\p{...}` classes, `\x{...}`, `(?<name>...)`, flags in mid-pattern (they
//! apply to the rest of their group) and `(?-u)` (read as ASCII). Unicode
//! tables and case folding are regex-syntax's, which may be newer than a
//! peer Python's.

mod ast;
mod classes;
mod generator;
mod matcher;
mod parser;
#[cfg(test)]
mod tests;

use super::schema::SchemaError;
use crate::charset::{CharSet, CharSetSpec};
use crate::choice::SizeConstraints;
use crate::data::{StopTest, TestData};
use crate::value::Value;
use ast::{Anchor, Node};
use classes::NEWLINE;
use generator::{Draft, emit, verify};
use std::sync::Arc;

/// Span label around the text added before or after a match (search mode).
const PADDING_SPAN: u64 = 0x6765_6973_7411;

/// The longest shortest-match a pattern may have: `a{1000000000}` is valid,
/// but building such strings would exhaust memory rather than test anything.
const MAX_MIN_LENGTH: usize = 1_000_000;

/// A parsed regex schema, ready to generate matching strings.
#[derive(Debug)]
pub struct RegexSchema {
    root: Node,
    groups: usize,
    fullmatch: bool,
    left: Padding,
    right: Padding,
    pad_alphabet: Arc<CharSet>,
}

/// What may surround the match when the pattern need only be found somewhere
/// in the string (Python `re.search`), following Hypothesis' rules for anchors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Padding {
    /// Nothing (fullmatch, or anchored at this end).
    Empty,
    /// Any text from the alphabet.
    Text,
    /// Nothing or a single newline (Python's `$` also matches before a final "\n").
    OptionalNewline,
    /// Nothing, or a newline then any text (multiline `$`).
    NewlineThenText,
    /// Nothing, or any text then a newline (multiline `^`).
    TextThenNewline,
}

fn invalid(pattern: &str, reason: &str) -> SchemaError {
    SchemaError::new(format!("invalid regex pattern {pattern:?}: {reason}"))
}

fn unsupported(pattern: &str, what: &str) -> SchemaError {
    SchemaError::new(format!(
        "unsupported regex pattern {pattern:?}: {what} are not supported"
    ))
}

impl RegexSchema {
    /// Parses a Python-syntax `pattern`. With `fullmatch` the whole string
    /// matches; otherwise it contains a match. With an `alphabet`, every
    /// character generated (padding included) is in it.
    pub fn parse(
        pattern: &str,
        fullmatch: bool,
        alphabet: Option<Arc<CharSet>>,
    ) -> Result<RegexSchema, SchemaError> {
        let pad_alphabet = match &alphabet {
            Some(a) => a.clone(),
            None => Arc::new(
                CharSet::from_spec(&CharSetSpec::default())
                    .map_err(|e| SchemaError::new(e.to_string()))?,
            ),
        };
        let parsed = parser::parse(pattern, &pad_alphabet)?;
        let mut root = parsed.root;
        let shortest = root.settle(alphabet.as_deref()).ok_or_else(|| {
            SchemaError::new(match &alphabet {
                Some(_) => format!(
                    "the regex pattern {pattern:?} matches no string over the alphabet"
                ),
                None => format!(
                    "the regex pattern {pattern:?} can never match: it matches no string the generator can produce"
                ),
            })
        })?;
        if shortest > MAX_MIN_LENGTH {
            return Err(SchemaError::new(format!(
                "the regex pattern {pattern:?} only matches strings longer than {MAX_MIN_LENGTH} characters, which geist does not generate"
            )));
        }
        let (left, right) = if fullmatch {
            (Padding::Empty, Padding::Empty)
        } else {
            paddings(&root, pad_alphabet.contains(NEWLINE))
        };
        Ok(RegexSchema {
            root,
            groups: parsed.groups,
            fullmatch,
            left,
            right,
            pad_alphabet,
        })
    }

    /// The same schema with the text around a match (search mode) drawn
    /// only from `padding`, within the alphabet. Whether a newline may pad
    /// an end (`$`, multiline `^`) still follows the alphabet.
    pub fn with_padding(mut self, padding: &CharSet) -> RegexSchema {
        self.pad_alphabet = Arc::new(classes::intersect(&self.pad_alphabet, padding));
        self
    }

    /// Generates a matching string.
    pub fn generate(&self, data: &mut TestData) -> Result<Value, StopTest> {
        Ok(Value::from_code_points(&self.generate_code_points(data)?))
    }

    /// Generates a matching string as code points.
    pub(crate) fn generate_code_points(&self, data: &mut TestData) -> Result<Vec<u32>, StopTest> {
        let mut draft = Draft::new(self.groups);
        emit(&self.root, data, &mut draft)?;
        let (left, right) = if self.left == Padding::Empty && self.right == Padding::Empty {
            (Vec::new(), Vec::new())
        } else {
            let left = self.draw_padding(self.left, data)?;
            let mut right = self.draw_padding(self.right, data)?;
            if self.right == Padding::Text && !draft.given_up.is_empty() {
                // Look-ahead text the match could not take may still follow it.
                right.splice(0..0, draft.given_up.iter().copied());
            }
            (left, right)
        };
        let end = draft.text.len();
        draft.finish();
        if let Some(out) = self.place(&draft, &left, &right) {
            return Ok(out);
        }
        if draft.text.len() > end {
            // Look-ahead text nothing took, appended, may be what keeps the
            // string from matching (`a(?=c*)`, fullmatch): without it.
            draft.text.truncate(end);
            if let Some(out) = self.place(&draft, &left, &right) {
                return Ok(out);
            }
        }
        Err(data.reject())
    }

    /// The draft with as much of the padding as still leaves the match in
    /// place (like Hypothesis' maybe_pad), if any of it does.
    fn place(&self, draft: &Draft<'_>, left: &[u32], right: &[u32]) -> Option<Vec<u32>> {
        let none: &[u32] = &[];
        let tries: &[(&[u32], &[u32])] = if left.is_empty() && right.is_empty() {
            &[(none, none)]
        } else {
            &[(left, right), (none, right), (left, none), (none, none)]
        };
        tries.iter().find_map(|&(l, r)| {
            verify(&self.root, draft, l, r, self.fullmatch).then(|| {
                let mut out = Vec::with_capacity(l.len() + draft.text.len() + r.len());
                out.extend_from_slice(l);
                out.extend_from_slice(&draft.text);
                out.extend_from_slice(r);
                out
            })
        })
    }

    fn draw_padding(&self, padding: Padding, data: &mut TestData) -> Result<Vec<u32>, StopTest> {
        let text = |data: &mut TestData| {
            data.draw_string(
                self.pad_alphabet.clone(),
                SizeConstraints {
                    min_size: 0,
                    max_size: usize::MAX,
                },
            )
        };
        data.start_span(PADDING_SPAN);
        let out = match padding {
            Padding::Empty => Vec::new(),
            Padding::Text => text(data)?,
            Padding::OptionalNewline => {
                if data.draw_boolean(0.5)? {
                    vec![NEWLINE]
                } else {
                    Vec::new()
                }
            }
            Padding::NewlineThenText => {
                if data.draw_boolean(0.5)? {
                    let mut out = vec![NEWLINE];
                    out.extend(text(data)?);
                    out
                } else {
                    Vec::new()
                }
            }
            Padding::TextThenNewline => {
                if data.draw_boolean(0.5)? {
                    let mut out = text(data)?;
                    out.push(NEWLINE);
                    out
                } else {
                    Vec::new()
                }
            }
        };
        data.stop_span(false);
        Ok(out)
    }
}

/// The anchor a node starts (`first`) or ends with, looking into groups.
fn edge_anchor(node: &Node, first: bool) -> Option<Anchor> {
    match node {
        Node::Anchor(anchor) => Some(*anchor),
        Node::Group { body, .. } => edge_anchor(body, first),
        Node::Concat(items) => {
            let edge = if first { items.first() } else { items.last() };
            edge.and_then(|item| edge_anchor(item, first))
        }
        _ => None,
    }
}

/// Hypothesis' padding rules: text on both sides, except that a leading `^`
/// or `\A` forbids text before, a trailing `\Z` forbids text after, and a
/// trailing `$` allows only a final newline (multiline: a newline then text).
fn paddings(root: &Node, newline_allowed: bool) -> (Padding, Padding) {
    let newline = |p: Padding| if newline_allowed { p } else { Padding::Empty };
    let left = match edge_anchor(root, true) {
        Some(Anchor::Start) => Padding::Empty,
        Some(Anchor::StartLine) => newline(Padding::TextThenNewline),
        _ => Padding::Text,
    };
    let right = match edge_anchor(root, false) {
        Some(Anchor::EndString) => Padding::Empty,
        Some(Anchor::End) => newline(Padding::OptionalNewline),
        Some(Anchor::EndLine) => newline(Padding::NewlineThenText),
        _ => Padding::Text,
    };
    (left, right)
}
