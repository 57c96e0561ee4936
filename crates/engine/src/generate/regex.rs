//! Strings matching a regular expression: the `regex` schema (Hypothesis'
//! `from_regex`).
//!
//! Hegel patterns are written in Python's `re` syntax, because the reference
//! server is Python. A small translation pass rewrites the Python-only bits
//! (`\Z`, octal escapes, `{` taken literally, the `a` flag, comments ...) into
//! the dialect `regex-syntax` parses, and the parsed HIR is compiled into a
//! [`Node`] tree whose character classes are already intersected with the
//! alphabet and whose unsatisfiable branches are pruned. Generation walks that
//! tree making choices, so strings replay and shrink like any other value:
//! classes are string choices (shrinking toward `0`, `A`, `a`), alternations
//! are integer choices (toward the first branch) and repetitions are
//! collections (shrinking by deleting repeats).
//!
//! Zero-width assertions (`^`, `$`, `\b` ...) cannot be decided while the
//! string is still being built, so each one is recorded with its position and
//! checked once the whole string, padding included, is known. A string whose
//! assertions fail is never returned: the test case is rejected instead.
//!
//! Refused with a [`SchemaError`]: look-around, backreferences, conditional
//! and atomic groups, `\N{...}`, and patterns that cannot match (within the
//! alphabet). Accepted beyond Python: `\p{...}` classes, `(?-u)` (read as
//! ASCII) and repeated quantifiers such as `a**`; `[[:alpha:]]` keeps Python's
//! meaning (a plain class). Classes use regex-syntax's Unicode tables, which
//! may be newer than a peer Python's.

use super::schema::SchemaError;
use crate::charset::{CharSet, CharSetSpec};
use crate::choice::{IntegerConstraints, SizeConstraints};
use crate::data::{Collection, StopTest, TestData};
use crate::value::Value;
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use std::sync::Arc;

/// Span label around one alternation: the branch index and the branch's text.
const BRANCH_SPAN: u64 = 0x6765_6973_7410;
/// Span label around the text added before or after a match (search mode).
const PADDING_SPAN: u64 = 0x6765_6973_7411;

/// A parsed regex schema, ready to generate matching strings.
#[derive(Debug)]
pub struct RegexSchema {
    body: Node,
    left: Padding,
    right: Padding,
    pad_alphabet: Arc<CharSet>,
}

/// The compiled pattern. Every node can produce at least one string within
/// the alphabet (unsatisfiable parts are pruned while compiling).
#[derive(Debug)]
enum Node {
    /// Fixed text.
    Text(Vec<u32>),
    /// One character from a class.
    Char(Arc<CharSet>),
    /// A run of characters from one class (`[a-z]+`, `\d{3}`): one string choice.
    Chars {
        class: Arc<CharSet>,
        min: usize,
        max: Option<usize>,
    },
    /// A zero-width assertion, checked when the whole string is known.
    Assert(Look),
    /// Nodes one after another.
    Sequence(Vec<Node>),
    /// One of several alternatives.
    Choice(Vec<Node>),
    /// A repeated node.
    Repeat {
        body: Box<Node>,
        min: usize,
        max: Option<usize>,
    },
}

/// The longest shortest-match a pattern may have: `a{1000000000}` is valid,
/// but building such strings would exhaust memory rather than test anything.
const MAX_MIN_LENGTH: usize = 1_000_000;

impl Node {
    /// Length of the shortest string this node produces (saturating).
    fn min_len(&self) -> usize {
        match self {
            Node::Text(text) => text.len(),
            Node::Char(_) => 1,
            Node::Chars { min, .. } => *min,
            Node::Assert(_) => 0,
            Node::Sequence(items) => items
                .iter()
                .fold(0usize, |total, item| total.saturating_add(item.min_len())),
            Node::Choice(branches) => branches.iter().map(Node::min_len).min().unwrap_or(0),
            Node::Repeat { body, min, .. } => body.min_len().saturating_mul(*min),
        }
    }
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

/// A string being built, with the assertions it must satisfy.
struct Draft {
    text: Vec<u32>,
    assertions: Vec<(usize, Look)>,
}

const NEWLINE: u32 = '\n' as u32;

impl RegexSchema {
    /// Parses a Python-syntax `pattern`. With `fullmatch` the whole string
    /// matches; otherwise it contains a match. With an `alphabet`, every
    /// character generated (padding included) is in it.
    pub fn parse(
        pattern: &str,
        fullmatch: bool,
        alphabet: Option<Arc<CharSet>>,
    ) -> Result<RegexSchema, SchemaError> {
        let translated = translate_python_syntax(pattern)?;
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(&translated)
            .map_err(|e| {
                let reason = match &e {
                    regex_syntax::Error::Parse(p) => p.kind().to_string(),
                    regex_syntax::Error::Translate(t) => t.kind().to_string(),
                    other => other.to_string(),
                };
                invalid(pattern, &reason)
            })?;
        let body = compile(&hir, alphabet.as_deref(), pattern)?.ok_or_else(|| {
            SchemaError::new(match &alphabet {
                Some(_) => format!(
                    "no string matching the regex pattern {pattern:?} can be built from the given alphabet"
                ),
                None => format!("the regex pattern {pattern:?} can never match"),
            })
        })?;
        if body.min_len() > MAX_MIN_LENGTH {
            return Err(SchemaError::new(format!(
                "the regex pattern {pattern:?} only matches strings longer than {MAX_MIN_LENGTH} characters, which geist does not generate"
            )));
        }
        let pad_alphabet = match alphabet {
            Some(a) => a,
            None => Arc::new(
                CharSet::from_spec(&CharSetSpec::default())
                    .map_err(|e| SchemaError::new(e.to_string()))?,
            ),
        };
        let (left, right) = if fullmatch {
            (Padding::Empty, Padding::Empty)
        } else {
            paddings(&body, pad_alphabet.contains(NEWLINE))
        };
        Ok(RegexSchema {
            body,
            left,
            right,
            pad_alphabet,
        })
    }

    /// Generates a matching string.
    pub fn generate(&self, data: &mut TestData) -> Result<Value, StopTest> {
        Ok(Value::from_code_points(&self.generate_code_points(data)?))
    }

    /// Generates a matching string as code points.
    pub(crate) fn generate_code_points(&self, data: &mut TestData) -> Result<Vec<u32>, StopTest> {
        let mut draft = Draft {
            text: Vec::new(),
            assertions: Vec::new(),
        };
        emit(&self.body, data, &mut draft)?;
        if self.left == Padding::Empty && self.right == Padding::Empty {
            return if assertions_hold(&draft, &[], &[]) {
                Ok(draft.text)
            } else {
                Err(data.reject())
            };
        }
        let left = self.draw_padding(self.left, data)?;
        let right = self.draw_padding(self.right, data)?;
        // Keep as much padding as still leaves the match in place (like
        // Hypothesis' maybe_pad), checking the exact match we built.
        let none: &[u32] = &[];
        for (l, r) in [
            (&left[..], &right[..]),
            (none, &right[..]),
            (&left[..], none),
            (none, none),
        ] {
            if assertions_hold(&draft, l, r) {
                let mut out = Vec::with_capacity(l.len() + draft.text.len() + r.len());
                out.extend_from_slice(l);
                out.extend_from_slice(&draft.text);
                out.extend_from_slice(r);
                return Ok(out);
            }
        }
        Err(data.reject())
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

fn invalid(pattern: &str, reason: &str) -> SchemaError {
    SchemaError::new(format!("invalid regex pattern {pattern:?}: {reason}"))
}

fn unsupported(pattern: &str, what: &str) -> SchemaError {
    SchemaError::new(format!(
        "unsupported regex pattern {pattern:?}: {what} are not supported"
    ))
}

/// Hypothesis' padding rules: text on both sides, except that a leading `^`
/// or `\A` forbids text before, a trailing `\Z` forbids text after, and a
/// trailing `$` allows only a final newline (multiline: a newline then text).
fn paddings(body: &Node, newline_allowed: bool) -> (Padding, Padding) {
    let (first, last) = match body {
        Node::Sequence(items) => (items.first(), items.last()),
        other => (Some(other), Some(other)),
    };
    let newline = |p: Padding| if newline_allowed { p } else { Padding::Empty };
    let left = match first {
        Some(Node::Assert(Look::Start)) => Padding::Empty,
        Some(Node::Assert(Look::StartLF)) => newline(Padding::TextThenNewline),
        _ => Padding::Text,
    };
    let right = match last {
        // `\Z` is translated to a CRLF-mode `$` (see translate_python_syntax).
        Some(Node::Assert(Look::EndCRLF)) => Padding::Empty,
        Some(Node::Assert(Look::End)) => newline(Padding::OptionalNewline),
        Some(Node::Assert(Look::EndLF)) => newline(Padding::NewlineThenText),
        _ => Padding::Text,
    };
    (left, right)
}

fn emit(node: &Node, data: &mut TestData, draft: &mut Draft) -> Result<(), StopTest> {
    match node {
        Node::Text(text) => draft.text.extend_from_slice(text),
        Node::Char(class) => {
            let c = data.draw_string(
                class.clone(),
                SizeConstraints {
                    min_size: 1,
                    max_size: 1,
                },
            )?;
            draft.text.extend(c);
        }
        Node::Chars { class, min, max } => {
            let run = data.draw_string(
                class.clone(),
                SizeConstraints {
                    min_size: *min,
                    max_size: max.unwrap_or(usize::MAX),
                },
            )?;
            draft.text.extend(run);
        }
        Node::Assert(look) => draft.assertions.push((draft.text.len(), *look)),
        Node::Sequence(items) => {
            for item in items {
                emit(item, data, draft)?;
            }
        }
        Node::Choice(branches) => {
            data.start_span(BRANCH_SPAN);
            let i =
                data.draw_integer(IntegerConstraints::bounded(0, branches.len() as i128 - 1))?;
            emit(&branches[i as usize], data, draft)?;
            data.stop_span(false);
        }
        Node::Repeat { body, min, max } => {
            if Some(*min) == *max {
                for _ in 0..*min {
                    emit(body, data, draft)?;
                }
            } else {
                let mut repeats = Collection::new(*min, *max);
                while repeats.more(data)? {
                    emit(body, data, draft)?;
                }
            }
        }
    }
    Ok(())
}

/// Whether every assertion of `draft` holds in `left + draft.text + right`.
fn assertions_hold(draft: &Draft, left: &[u32], right: &[u32]) -> bool {
    let len = left.len() + draft.text.len() + right.len();
    let at = |i: usize| -> Option<u32> {
        if i < left.len() {
            Some(left[i])
        } else if i - left.len() < draft.text.len() {
            Some(draft.text[i - left.len()])
        } else {
            right.get(i - left.len() - draft.text.len()).copied()
        }
    };
    draft.assertions.iter().all(|&(position, look)| {
        let p = position + left.len();
        let before = p.checked_sub(1).and_then(at);
        let after = at(p);
        look_holds(look, before, after, p, len)
    })
}

fn ascii_word(c: Option<u32>) -> bool {
    c.and_then(char::from_u32)
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Python's word characters for `\b`: the same set as its `\w`.
fn unicode_word(c: Option<u32>) -> bool {
    use unicode_general_category::{GeneralCategory::*, get_general_category};
    c.and_then(char::from_u32).is_some_and(|c| {
        c == '_'
            || matches!(
                get_general_category(c),
                UppercaseLetter
                    | LowercaseLetter
                    | TitlecaseLetter
                    | ModifierLetter
                    | OtherLetter
                    | DecimalNumber
                    | LetterNumber
                    | OtherNumber
            )
    })
}

/// Python semantics of each assertion at position `p` of a string of `len`
/// code points with neighbours `before` and `after`.
fn look_holds(look: Look, before: Option<u32>, after: Option<u32>, p: usize, len: usize) -> bool {
    let newline = Some(NEWLINE);
    match look {
        Look::Start => p == 0,
        // Python's `$`: the end, or just before a final newline.
        Look::End => p == len || (p + 1 == len && after == newline),
        // Our translation of `\Z`: the very end.
        Look::EndCRLF => p == len,
        Look::StartLF => before.is_none() || before == newline,
        Look::EndLF => after.is_none() || after == newline,
        Look::StartCRLF => {
            before.is_none() || before == newline || (before == Some(0x0D) && after != newline)
        }
        Look::WordAscii => ascii_word(before) != ascii_word(after),
        Look::WordAsciiNegate => ascii_word(before) == ascii_word(after),
        Look::WordUnicode => unicode_word(before) != unicode_word(after),
        Look::WordUnicodeNegate => unicode_word(before) == unicode_word(after),
        Look::WordStartAscii => !ascii_word(before) && ascii_word(after),
        Look::WordEndAscii => ascii_word(before) && !ascii_word(after),
        Look::WordStartUnicode => !unicode_word(before) && unicode_word(after),
        Look::WordEndUnicode => unicode_word(before) && !unicode_word(after),
        Look::WordStartHalfAscii => !ascii_word(before),
        Look::WordEndHalfAscii => !ascii_word(after),
        Look::WordStartHalfUnicode => !unicode_word(before),
        Look::WordEndHalfUnicode => !unicode_word(after),
    }
}

/// The code points both sets contain.
fn intersect(a: &CharSet, b: &CharSet) -> CharSet {
    let (xs, ys) = (a.intervals(), b.intervals());
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < xs.len() && j < ys.len() {
        let lo = xs[i].0.max(ys[j].0);
        let hi = xs[i].1.min(ys[j].1);
        if lo <= hi {
            out.push((lo, hi));
        }
        if xs[i].1 < ys[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    CharSet::from_intervals(out)
}

/// Compiles HIR into a [`Node`]; `None` when nothing can match within the alphabet.
fn compile(
    hir: &Hir,
    alphabet: Option<&CharSet>,
    pattern: &str,
) -> Result<Option<Node>, SchemaError> {
    Ok(match hir.kind() {
        HirKind::Empty => Some(Node::Text(Vec::new())),
        HirKind::Literal(literal) => {
            let text = std::str::from_utf8(&literal.0)
                .map_err(|_| invalid(pattern, "it matches bytes that are not valid UTF-8"))?;
            let points: Vec<u32> = text.chars().map(u32::from).collect();
            alphabet
                .is_none_or(|a| points.iter().all(|c| a.contains(*c)))
                .then_some(Node::Text(points))
        }
        HirKind::Class(class) => class_set(class, alphabet).map(|c| Node::Char(Arc::new(c))),
        HirKind::Look(look) => Some(Node::Assert(*look)),
        HirKind::Capture(capture) => compile(&capture.sub, alphabet, pattern)?,
        HirKind::Repetition(repetition) => {
            let min = repetition.min as usize;
            let max = repetition.max.map(|m| m as usize);
            match compile(&repetition.sub, alphabet, pattern)? {
                _ if max == Some(0) => Some(Node::Text(Vec::new())),
                None if min == 0 => Some(Node::Text(Vec::new())),
                None => None,
                Some(Node::Char(class)) => Some(Node::Chars { class, min, max }),
                Some(body) => Some(Node::Repeat {
                    body: Box::new(body),
                    min,
                    max,
                }),
            }
        }
        HirKind::Concat(items) => {
            let mut nodes: Vec<Node> = Vec::with_capacity(items.len());
            for item in items {
                let Some(node) = compile(item, alphabet, pattern)? else {
                    return Ok(None);
                };
                let parts = match node {
                    Node::Sequence(inner) => inner,
                    other => vec![other],
                };
                for part in parts {
                    match (nodes.last_mut(), part) {
                        (Some(Node::Text(previous)), Node::Text(more)) => previous.extend(more),
                        (_, Node::Text(t)) if t.is_empty() => {}
                        (_, part) => nodes.push(part),
                    }
                }
            }
            Some(match nodes.len() {
                0 => Node::Text(Vec::new()),
                1 => nodes.pop().unwrap_or(Node::Text(Vec::new())),
                _ => Node::Sequence(nodes),
            })
        }
        HirKind::Alternation(branches) => {
            let mut nodes = Vec::with_capacity(branches.len());
            for branch in branches {
                if let Some(node) = compile(branch, alphabet, pattern)? {
                    nodes.push(node);
                }
            }
            match nodes.len() {
                0 => None,
                1 => nodes.pop(),
                _ => Some(Node::Choice(nodes)),
            }
        }
    })
}

fn class_set(class: &Class, alphabet: Option<&CharSet>) -> Option<CharSet> {
    let intervals: Vec<(u32, u32)> = match class {
        // regex-syntax ranges are of `char`s, so a range may span the
        // surrogate gap (`[^a]` is '\u{62}'..='\u{10FFFF}'): cut it out.
        Class::Unicode(c) => c
            .iter()
            .flat_map(|r| {
                let (a, b) = (u32::from(r.start()), u32::from(r.end()));
                if a < 0xD800 && b > 0xDFFF {
                    vec![(a, 0xD7FF), (0xE000, b)]
                } else {
                    vec![(a, b)]
                }
            })
            .collect(),
        Class::Bytes(c) => c
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
    };
    let set = CharSet::from_intervals(intervals);
    let set = match alphabet {
        Some(a) => intersect(&set, a),
        None => set,
    };
    (!set.is_empty()).then_some(set)
}

/// Flags that change how the translation reads the pattern, per group.
#[derive(Clone, Copy, Debug, Default)]
struct SyntaxFlags {
    /// Python's `a` flag: `\d`, `\w`, `\s`, `\b` are ASCII-only.
    ascii: bool,
    /// Python's `x` flag: whitespace and `#` comments are ignored.
    verbose: bool,
}

/// Rewrites a Python `re` pattern into the dialect `regex-syntax` parses.
///
/// Python-only syntax becomes its equivalent (`\Z`, octal escapes, `{`
/// taken literally, `(?#...)` comments, the `a` flag); constructs neither
/// side can generate from (look-around, backreferences, conditionals, atomic
/// groups) are refused with a message naming them. `\Z` becomes `(?mR:$)`, an
/// assertion Python patterns cannot otherwise produce (Python has no CRLF
/// mode), so that it stays distinct from Python's `$`.
fn translate_python_syntax(pattern: &str) -> Result<String, SchemaError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut scopes = vec![SyntaxFlags::default()];
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let flags = scopes.last().copied().unwrap_or_default();
        if in_class {
            match c {
                ']' => {
                    in_class = false;
                    out.push(']');
                    i += 1;
                }
                '\\' => i = translate_escape(&chars, i, flags, true, pattern, &mut out)?,
                // Python keeps these literally in verbose classes; regex-syntax would drop them.
                c if flags.verbose && (c == '#' || c.is_whitespace()) => {
                    push_code_point(&mut out, u32::from(c));
                    i += 1;
                }
                // Literal in Python; nested classes and set operators in regex-syntax.
                '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                    i += 1;
                }
                _ => {
                    out.push(c);
                    i += 1;
                }
            }
            continue;
        }
        match c {
            '\\' => i = translate_escape(&chars, i, flags, false, pattern, &mut out)?,
            '[' => {
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                // A `]` first in a class is a literal.
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
                in_class = true;
            }
            '(' => i = translate_group_open(&chars, i, &mut scopes, pattern, &mut out)?,
            ')' => {
                if scopes.len() > 1 {
                    scopes.pop();
                }
                out.push(')');
                i += 1;
            }
            '{' => i = translate_brace(&chars, i, &mut out),
            '}' => {
                out.push_str("\\}");
                i += 1;
            }
            '#' if flags.verbose => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(chars[i]);
                    i += 1;
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// A `{` starts a counted repetition only when Python would read one
/// (`{m}`, `{m,}`, `{,n}`, `{m,n}`, `{,}`); otherwise it is a literal.
fn translate_brace(chars: &[char], i: usize, out: &mut String) -> usize {
    let digits = |from: usize| -> usize {
        let mut j = from;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let lo_end = digits(i + 1);
    let lo: String = chars[i + 1..lo_end].iter().collect();
    let (hi, end) = if chars.get(lo_end) == Some(&',') {
        let hi_end = digits(lo_end + 1);
        (
            Some(chars[lo_end + 1..hi_end].iter().collect::<String>()),
            hi_end,
        )
    } else {
        (None, lo_end)
    };
    let closes = chars.get(end) == Some(&'}');
    let empty = lo.is_empty() && hi.is_none();
    if !closes || empty {
        out.push_str("\\{");
        return i + 1;
    }
    let lo = if lo.is_empty() { "0".to_string() } else { lo };
    match hi {
        None => out.push_str(&format!("{{{lo}}}")),
        Some(hi) => out.push_str(&format!("{{{lo},{hi}}}")),
    }
    end + 1
}

fn translate_group_open(
    chars: &[char],
    i: usize,
    scopes: &mut Vec<SyntaxFlags>,
    pattern: &str,
    out: &mut String,
) -> Result<usize, SchemaError> {
    let current = scopes.last().copied().unwrap_or_default();
    let rest = |n: usize| -> String { chars[i..(i + n).min(chars.len())].iter().collect() };
    if chars.get(i + 1) != Some(&'?') {
        scopes.push(current);
        out.push('(');
        return Ok(i + 1);
    }
    let third = chars.get(i + 2).copied();
    match third {
        Some('#') => {
            // A comment: dropped.
            let mut j = i + 3;
            while j < chars.len() && chars[j] != ')' {
                j += 1;
            }
            if j == chars.len() {
                return Err(invalid(pattern, "missing ), unterminated comment"));
            }
            return Ok(j + 1);
        }
        Some('=') | Some('!') => return Err(unsupported(pattern, "look-ahead assertions")),
        Some('<') if matches!(chars.get(i + 3), Some('=') | Some('!')) => {
            return Err(unsupported(pattern, "look-behind assertions"));
        }
        Some('(') => return Err(unsupported(pattern, "conditional groups (?(...)...)")),
        Some('>') => return Err(unsupported(pattern, "atomic groups (?>...)")),
        Some('P') if chars.get(i + 3) == Some(&'=') => {
            return Err(unsupported(pattern, "backreferences (?P=name)"));
        }
        Some('P') if chars.get(i + 3) == Some(&'>') => {
            return Err(unsupported(pattern, "recursive references (?P>name)"));
        }
        Some('P') | Some('<') | Some(':') => {
            scopes.push(current);
            out.push_str(&rest(2));
            return Ok(i + 2);
        }
        _ => {}
    }
    // Flags: (?aiLmsux), (?aiLmsux-imsx:...).
    let mut j = i + 2;
    let mut on = String::new();
    let mut off = String::new();
    let mut negative = false;
    let mut flags = current;
    loop {
        let Some(&c) = chars.get(j) else {
            return Err(invalid(pattern, "missing -, : or ) after the flags"));
        };
        j += 1;
        match c {
            ':' | ')' => {
                let mut group = String::from("(?");
                group.push_str(&on);
                if !off.is_empty() {
                    group.push('-');
                    group.push_str(&off);
                }
                if c == ':' {
                    group.push(':');
                    scopes.push(flags);
                    out.push_str(&group);
                } else {
                    if let Some(top) = scopes.last_mut() {
                        *top = flags;
                    }
                    if !on.is_empty() || !off.is_empty() {
                        group.push(')');
                        out.push_str(&group);
                    }
                }
                return Ok(j);
            }
            '-' if !negative => negative = true,
            'i' | 'm' | 's' | 'x' => {
                if c == 'x' {
                    flags.verbose = !negative;
                }
                if negative { &mut off } else { &mut on }.push(c);
            }
            'a' if !negative => flags.ascii = true,
            // Python refuses `-u`; regex-syntax users mean ASCII by it.
            'u' => flags.ascii = negative,
            'L' => {
                return Err(invalid(
                    pattern,
                    "the L (locale) flag is only valid with bytes patterns",
                ));
            }
            other => {
                return Err(invalid(pattern, &format!("unknown flag {other:?}")));
            }
        }
    }
}

/// Python's Unicode `\w`: `str.isalnum()` (letters and numbers) or `_`.
/// (regex-syntax's `\w` also has marks and connector punctuation but not `No`.)
const PYTHON_WORD_CLASS: &str = "\\p{L}\\p{N}_";

/// Python's Unicode `\s`: `str.isspace()`, which unlike Unicode White_Space
/// includes the separators U+001C..U+001F.
const PYTHON_SPACE_CLASS: &str = "\\t\\n\\x0B\\x0C\\r\\x1C-\\x1F\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

/// Pushes a code point as an escape regex-syntax reads the same everywhere.
fn push_code_point(out: &mut String, c: u32) {
    out.push_str(&format!("\\x{{{c:X}}}"));
}

fn translate_escape(
    chars: &[char],
    i: usize,
    flags: SyntaxFlags,
    in_class: bool,
    pattern: &str,
    out: &mut String,
) -> Result<usize, SchemaError> {
    let Some(&c) = chars.get(i + 1) else {
        return Err(invalid(pattern, "bad escape (end of pattern)"));
    };
    let copy_braced_or = |n: usize, out: &mut String| -> usize {
        // `\p{...}`, `\x{...}`, `\u{...}` (regex-syntax forms) or `n` more characters.
        let start = i;
        let mut end = i + 2;
        if chars.get(end) == Some(&'{') {
            while end < chars.len() && chars[end] != '}' {
                end += 1;
            }
            end = (end + 1).min(chars.len());
        } else {
            end = (end + n).min(chars.len());
        }
        out.extend(&chars[start..end]);
        end
    };
    let class_escape = |positive: &str, negated: bool, out: &mut String| {
        match (in_class, negated) {
            (true, false) => out.push_str(positive),
            _ => {
                out.push('[');
                if negated {
                    out.push('^');
                }
                out.push_str(positive);
                out.push(']');
            }
        }
        i + 2
    };
    Ok(match c {
        'A' | 'Z' | 'z' | 'B' if in_class => {
            return Err(invalid(
                pattern,
                &format!("bad escape \\{c} in a character class"),
            ));
        }
        'A' => {
            out.push_str("\\A");
            i + 2
        }
        'Z' | 'z' => {
            out.push_str("(?mR:$)");
            i + 2
        }
        'b' if in_class => {
            push_code_point(out, 8);
            i + 2
        }
        'b' | 'B' => {
            out.push_str(match (flags.ascii, c) {
                (true, 'b') => "(?-u:\\b)",
                (true, _) => "(?-u:\\B)",
                (false, 'b') => "(?:\\b)",
                (false, _) => "(?:\\B)",
            });
            i + 2
        }
        'd' | 'D' if flags.ascii => class_escape("0-9", c == 'D', out),
        'w' | 'W' if flags.ascii => class_escape("0-9A-Za-z_", c == 'W', out),
        's' | 'S' if flags.ascii => class_escape(" \\t\\n\\r\\x0B\\x0C", c == 'S', out),
        'w' | 'W' => class_escape(PYTHON_WORD_CLASS, c == 'W', out),
        's' | 'S' => class_escape(PYTHON_SPACE_CLASS, c == 'S', out),
        'd' | 'D' | 'a' | 'f' | 'n' | 'r' | 't' | 'v' => {
            out.push('\\');
            out.push(c);
            i + 2
        }
        'p' | 'P' => copy_braced_or(1, out),
        'x' => copy_braced_or(2, out),
        'u' => copy_braced_or(4, out),
        'U' => copy_braced_or(8, out),
        'N' => return Err(unsupported(pattern, "named characters \\N{...}")),
        '0'..='7' => {
            // Python: `\0`, `\0o`, `\0oo` and `\ooo` are octal; other digits are group references.
            let octal = |k: usize| chars.get(k).is_some_and(|d| ('0'..='7').contains(d));
            let end = if c == '0' {
                let mut end = i + 2;
                while end < i + 4 && octal(end) {
                    end += 1;
                }
                end
            } else if octal(i + 2) && octal(i + 3) {
                i + 4
            } else {
                return Err(unsupported(pattern, "backreferences"));
            };
            let digits: String = chars[i + 1..end].iter().collect();
            let value = u32::from_str_radix(&digits, 8).unwrap_or(0);
            if value > 0o377 {
                return Err(invalid(
                    pattern,
                    &format!("octal escape value \\{digits} outside of range 0-0o377"),
                ));
            }
            push_code_point(out, value);
            end
        }
        '8' | '9' => return Err(unsupported(pattern, "backreferences")),
        c if c.is_ascii_alphanumeric() => {
            return Err(invalid(pattern, &format!("bad escape \\{c}")));
        }
        other => {
            push_code_point(out, u32::from(other));
            i + 2
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DEFAULT_MAX_CHOICES, Status};
    use crate::random::Source;

    fn text_of(points: &[u32]) -> String {
        points.iter().filter_map(|c| char::from_u32(*c)).collect()
    }

    /// Generates up to `n` strings; returns them and how many were rejected.
    fn generate_many(schema: &RegexSchema, n: u64) -> (Vec<String>, usize) {
        let mut out = Vec::new();
        let mut rejected = 0;
        for seed in 0..n {
            let mut data =
                TestData::generating(vec![], Source::from_seed(seed), DEFAULT_MAX_CHOICES);
            match schema.generate_code_points(&mut data) {
                Ok(points) => out.push(text_of(&points)),
                Err(StopTest) => {
                    assert!(
                        matches!(data.status, Some(Status::Invalid | Status::Overrun)),
                        "{:?}",
                        data.status
                    );
                    rejected += 1;
                }
            }
        }
        (out, rejected)
    }

    fn minimal(pattern: &str, fullmatch: bool) -> String {
        let schema = RegexSchema::parse(pattern, fullmatch, None).unwrap();
        let mut data = TestData::replaying(vec![], DEFAULT_MAX_CHOICES);
        text_of(&schema.generate_code_points(&mut data).unwrap())
    }

    /// Patterns whose meaning is the same in Python `re` and Rust `regex`.
    const SHARED_PATTERNS: &[&str] = &[
        r"[a-z]+",
        r"\d{3}",
        r"\d{3}-\d{4}",
        r"(foo|bar)+baz",
        r"[^a-z]{2,5}",
        r"\w+@\w+\.(com|org)",
        r"a*b?c{2,}",
        r"(?i)hello world",
        r"\s*\S+\s*",
        r"[\u00e0-\u00ff]{1,3}x",
        r"\p{Greek}+",
        r"(ab|cd){0,3}e",
        r"^start",
        r"(?m)^line",
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}",
        r"x(?:y|z)*",
        r".{0,10}",
        r"(?s).{3}",
        r"",
        r"(a|b|c)(d|e)?\.",
        r"(?-u:\w)+",
        r"[^\d\s]+",
    ];

    /// A Rust regex with the pattern's Python meaning (`\w`, `\s` as Python has them).
    fn rust_regex(pattern: &str, fullmatch: bool) -> ::regex::Regex {
        let translated = translate_python_syntax(pattern).unwrap();
        let source = if fullmatch {
            format!(r"\A(?:{translated})\z")
        } else {
            translated
        };
        ::regex::Regex::new(&source).unwrap()
    }

    #[test]
    fn fullmatch_strings_match_the_whole_pattern() {
        for pattern in SHARED_PATTERNS {
            let schema = RegexSchema::parse(pattern, true, None).unwrap();
            let check = rust_regex(pattern, true);
            let (strings, rejected) = generate_many(&schema, 2000);
            assert!(rejected < 1000, "{pattern}: {rejected} rejected");
            for s in &strings {
                assert!(
                    check.is_match(s),
                    "{pattern:?} does not fullmatch {s:?} {:?}",
                    s.chars().map(u32::from).collect::<Vec<_>>()
                );
            }
        }
    }

    #[test]
    fn search_strings_contain_a_match() {
        for pattern in SHARED_PATTERNS {
            let schema = RegexSchema::parse(pattern, false, None).unwrap();
            let check = rust_regex(pattern, false);
            let (strings, rejected) = generate_many(&schema, 2000);
            assert!(rejected < 1000, "{pattern}: {rejected} rejected");
            for s in &strings {
                assert!(check.is_match(s), "{pattern:?} is not found in {s:?}");
            }
            if !pattern.starts_with('^') {
                // Unanchored patterns get text around the match.
                let full = rust_regex(pattern, true);
                assert!(
                    strings.iter().any(|s| !full.is_match(s)),
                    "{pattern:?}: no padding ever added"
                );
            }
        }
    }

    #[test]
    fn simplest_choices_give_readable_minimal_matches() {
        for (pattern, expected) in [
            (r"[a-z]+", "a"),
            (r"\d{3}", "000"),
            (r"(foo|bar)+baz", "foobaz"),
            (r"\w+@\w+\.com", "0@0.com"),
            (r"[^a-z]", "0"),
            (r"a|b", "a"),
            (r"(ab){2}", "abab"),
            (r"x*", ""),
            (r"^abc$", "abc"),
            (r"\bcat\b", "cat"),
        ] {
            assert_eq!(minimal(pattern, true), expected, "{pattern}");
            assert_eq!(minimal(pattern, false), expected, "{pattern} (search)");
        }
    }

    #[test]
    fn word_boundaries_hold_in_the_final_string() {
        // Over ASCII, Python's and Rust's word characters agree.
        let ascii = Arc::new(CharSet::from_intervals(vec![(0x20, 0x7E)]));
        for pattern in [r"\bcat\b", r"\w\Bat", r"x\b", r"\B-\B", r"(a|-)\b(b|-)"] {
            for fullmatch in [true, false] {
                let schema = RegexSchema::parse(pattern, fullmatch, Some(ascii.clone())).unwrap();
                let check = rust_regex(pattern, fullmatch);
                let (strings, _) = generate_many(&schema, 1000);
                assert!(strings.len() > 100, "{pattern}: {}", strings.len());
                for s in &strings {
                    assert!(check.is_match(s), "{pattern:?} ({fullmatch}) gave {s:?}");
                }
            }
        }
        // Python counts `No` numbers (U+00B2) as word characters, and not marks.
        let word = |c: char| unicode_word(Some(u32::from(c)));
        assert!(word('\u{b2}') && word('_') && word('\u{4e00}'));
        assert!(!word('\u{301}') && !word('-'));
    }

    #[test]
    fn python_character_classes() {
        let space = RegexSchema::parse(r"\s", true, None).unwrap();
        let (strings, _) = generate_many(&space, 2000);
        assert!(strings.iter().any(|s| s == "\u{1c}"));
        let word = RegexSchema::parse(r"\w", true, None).unwrap();
        let (strings, _) = generate_many(&word, 3000);
        for s in &strings {
            assert!(unicode_word(s.chars().next().map(u32::from)), "{s:?}");
        }
    }

    #[test]
    fn python_dollar_allows_a_final_newline_but_backslash_z_does_not() {
        let dollar = RegexSchema::parse("a$", false, None).unwrap();
        let (strings, _) = generate_many(&dollar, 500);
        assert!(strings.iter().any(|s| s.ends_with("a\n")));
        for s in &strings {
            assert!(s.ends_with('a') || s.ends_with("a\n"), "{s:?}");
        }
        let end = RegexSchema::parse(r"a\Z", false, None).unwrap();
        let (strings, _) = generate_many(&end, 500);
        assert!(strings.iter().all(|s| s.ends_with('a')));
        assert!(strings.iter().any(|s| s.len() > 1));
        let start = RegexSchema::parse(r"\Aa", false, None).unwrap();
        let (strings, _) = generate_many(&start, 500);
        assert!(strings.iter().all(|s| s.starts_with('a')));
    }

    #[test]
    fn python_only_syntax_is_translated() {
        for (pattern, fullmatch_check) in [
            (r"a{,2}b", r"\A(?:a{0,2}b)\z"),
            (r"a{}", r"\A(?:a\{\})\z"),
            (r"x{foo}", r"\A(?:x\{foo\})\z"),
            (r"\101\0", r"\A(?:A\x00)\z"),
            (r"(?#note)ab", r"\A(?:ab)\z"),
            (
                r"(?a)\w+\s\d",
                r"\A(?:[0-9A-Za-z_]+[ \t\n\r\x0B\x0C][0-9])\z",
            ),
            (r"[[]", r"\A(?:\[)\z"),
            (r"[a&&b]", r"\A(?:[a&b])\z"),
            (r"\<\>", r"\A(?:<>)\z"),
            (r"[\b]", r"\A(?:\x08)\z"),
            ("(?x) a b # comment (?=x) [\n c [#] \\ ", r"\A(?:abc# )\z"),
            (r"[[:digit:]]", r"\A(?:[\[:digt]\])\z"),
        ] {
            let schema = RegexSchema::parse(pattern, true, None)
                .unwrap_or_else(|e| panic!("{pattern}: {e}"));
            let check = ::regex::Regex::new(fullmatch_check).unwrap();
            let (strings, _) = generate_many(&schema, 300);
            assert!(!strings.is_empty());
            for s in &strings {
                assert!(check.is_match(s), "{pattern:?} gave {s:?}");
            }
        }
    }

    #[test]
    fn alphabet_restricts_every_character() {
        let alphabet = Arc::new(CharSet::from_intervals(vec![('a' as u32, 'f' as u32)]));
        let schema = RegexSchema::parse(r"\w+|xyz", false, Some(alphabet.clone())).unwrap();
        let check = ::regex::Regex::new(r"\w+").unwrap();
        let (strings, _) = generate_many(&schema, 1000);
        for s in &strings {
            assert!(s.chars().all(|c| ('a'..='f').contains(&c)), "{s:?}");
            assert!(check.is_match(s));
        }
        // Branches outside the alphabet are dropped; nothing left is an error.
        let abc = RegexSchema::parse("abc|def|xyz", true, Some(alphabet.clone())).unwrap();
        let (strings, _) = generate_many(&abc, 200);
        assert!(strings.iter().all(|s| s == "abc" || s == "def"));
        let err = RegexSchema::parse("x+", true, Some(alphabet)).unwrap_err();
        assert!(err.message.contains("alphabet"), "{}", err.message);
    }

    #[test]
    fn impossible_word_boundaries_are_rejected_not_returned() {
        let schema = RegexSchema::parse(r"a\bb|c", true, None).unwrap();
        let (strings, rejected) = generate_many(&schema, 500);
        assert!(strings.iter().all(|s| s == "c"));
        assert!(rejected > 0);
    }

    #[test]
    fn invalid_and_unsupported_patterns_are_schema_errors() {
        for (pattern, needle) in [
            ("(a", "unclosed group"),
            ("a)", "invalid regex pattern"),
            ("[a", "unclosed character class"),
            (r"(a)\1", "backreferences"),
            (r"(?P<n>a)(?P=n)", "backreferences"),
            ("(?=a)", "look-ahead"),
            ("(?<!a)b", "look-behind"),
            ("(?>a)", "atomic"),
            (r"\N{DIGIT ONE}", "named characters"),
            (r"\q", "bad escape"),
            ("a\\", "bad escape"),
            ("(?R)a", "unknown flag"),
            ("(ab){1000}(cd){1000}x{999000}", "longer than"),
            (r"\d{4000000000}", "longer than"),
            (r"[^\s\S]", "can never match"),
        ] {
            let err = RegexSchema::parse(pattern, true, None)
                .expect_err(pattern)
                .message;
            assert!(err.contains(needle), "{pattern}: {err}");
            assert!(err.contains(&format!("{pattern:?}")), "{pattern}: {err}");
        }
    }

    #[test]
    fn arbitrary_patterns_never_panic() {
        const PIECES: &[&str] = &[
            "a", "(", ")", "[", "]", "^", "-", "|", "*", "+", "?", "{", "}", ",", "2", "\\", "$",
            ".", "(?", "i", "x", "#", ":", "P<n>", "\\b", "\\Z", "\\w", "\\0", "\\1", "\\x", "\\u",
            "\\p", "é", " ", "\n", "&&", "~", "=", "!", "<",
        ];
        let mut source = Source::from_seed(99);
        for _ in 0..5000 {
            let n = 1 + source.below(8) as usize;
            let pattern: String = (0..n)
                .map(|_| PIECES[source.below(PIECES.len() as u64) as usize])
                .collect();
            for fullmatch in [true, false] {
                if let Ok(schema) = RegexSchema::parse(&pattern, fullmatch, None) {
                    let (_, _) = generate_many(&schema, 5);
                }
            }
        }
    }

    #[test]
    fn unbounded_repeats_shrink_by_deleting_elements() {
        // (ab)+ with choices [more=true(forced), more=true, more=false] replays
        // as "abab"; dropping the middle choice gives the shorter "ab".
        let schema = RegexSchema::parse("(ab)+", true, None).unwrap();
        let mut data = TestData::generating(vec![], Source::from_seed(3), DEFAULT_MAX_CHOICES);
        let long = text_of(&schema.generate_code_points(&mut data).unwrap());
        let repeats = long.len() / 2;
        let choices = data.choices();
        assert_eq!(choices.len(), repeats + 1);
        let mut shorter = choices.clone();
        shorter.remove(1);
        let mut again = TestData::replaying(shorter, DEFAULT_MAX_CHOICES);
        let s = text_of(&schema.generate_code_points(&mut again).unwrap());
        assert_eq!(s.len(), (repeats.max(2) - 1) * 2);
    }
}
