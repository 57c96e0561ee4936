//! Re-laying out a one-line debug representation (`hegel_printer_reflow`).
//!
//! Languages format values for debugging on one line (Rust's `{:?}`, Go's
//! `%#v`, Python's `repr` ...). The reflower reads such a line with a
//! language-agnostic grammar and re-emits it as groups and break points, so
//! it wraps like a structurally printed value:
//!
//! - an *item* is a run of plain text, quoted literals (`"…"`, `'…'`, with
//!   backslash escapes, kept whole) and *groups*;
//! - a group is `(`, `[` or `{` up to its match, holding items separated by
//!   `, ` or `; `; the word glued to its open delimiter (`Some(`,
//!   `main.Point{`, `Point {`) is its prefix and stays with it;
//! - a group whose open delimiter is followed by a space (`Point { x: 1 }`)
//!   is *padded*: broken, its items go four columns in, one per line;
//!   any other group aligns its items just past its open text.
//!
//! Flat, every parsed line renders as it was given. A line that does not
//! parse, or nests deeper than [`MAX_DEPTH`], is emitted verbatim (newlines
//! as hard breaks).

use super::Op;

/// Deepest nesting reflowed; deeper representations are emitted verbatim.
pub const MAX_DEPTH: usize = 64;

const PADDED_INDENT: usize = 4;

enum Piece {
    Plain(String),
    Nested(Nest),
}

struct Nest {
    /// Text glued to the open delimiter (with one joining space for `Name {`).
    prefix: String,
    open: char,
    close: char,
    padded: bool,
    items: Vec<Vec<Piece>>,
    /// The separator character ahead of each item after the first.
    separators: Vec<char>,
}

impl Nest {
    fn has_no_nests(&self) -> bool {
        self.items
            .iter()
            .all(|item| item.iter().all(|p| matches!(p, Piece::Plain(_))))
    }

    /// The nest as written (for nests without nests inside).
    fn as_written(&self) -> String {
        let mut s = format!("{}{}", self.prefix, self.open);
        let pad = self.padded && !self.items.is_empty();
        if pad {
            s.push(' ');
        }
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                s.push(self.separators[i - 1]);
                s.push(' ');
            }
            for piece in item {
                if let Piece::Plain(text) = piece {
                    s.push_str(text);
                }
            }
        }
        if pad {
            s.push(' ');
        }
        s.push(self.close);
        s
    }
}

struct Reader {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Reader {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn separator_here(&self) -> bool {
        matches!(self.peek(0), Some(',' | ';')) && self.peek(1) == Some(' ')
    }

    fn item(&mut self) -> Option<Vec<Piece>> {
        let mut pieces = Vec::new();
        let mut plain = String::new();
        loop {
            match self.peek(0) {
                None | Some(')' | ']' | '}') => break,
                Some(',' | ';') if self.separator_here() => break,
                Some(' ') if matches!(self.peek(1), Some(')' | ']' | '}')) => break,
                Some(quote @ ('"' | '\'')) => {
                    push_plain(&mut plain, &mut pieces);
                    pieces.push(Piece::Plain(self.quoted(quote)?));
                }
                Some(open @ ('(' | '[' | '{')) => {
                    let prefix = split_prefix(&mut plain, &mut pieces);
                    push_plain(&mut plain, &mut pieces);
                    pieces.push(Piece::Nested(self.nest(prefix, open)?));
                }
                Some(c) => {
                    plain.push(c);
                    self.at += 1;
                }
            }
        }
        push_plain(&mut plain, &mut pieces);
        Some(pieces)
    }

    fn nest(&mut self, prefix: String, open: char) -> Option<Nest> {
        if self.depth == MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        self.at += 1;
        let close = match open {
            '(' => ')',
            '[' => ']',
            _ => '}',
        };
        let padded = self.peek(0) == Some(' ');
        if padded {
            self.at += 1;
        }
        let mut nest = Nest {
            prefix,
            open,
            close,
            padded,
            items: Vec::new(),
            separators: Vec::new(),
        };
        if !padded && self.peek(0) == Some(close) {
            self.at += 1;
        } else {
            loop {
                nest.items.push(self.item()?);
                match self.peek(0) {
                    Some(sep) if self.separator_here() => {
                        nest.separators.push(sep);
                        self.at += 2;
                    }
                    Some(' ') if padded && self.peek(1) == Some(close) => {
                        self.at += 2;
                        break;
                    }
                    Some(c) if !padded && c == close => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(nest)
    }

    fn quoted(&mut self, quote: char) -> Option<String> {
        let mut literal = String::from(quote);
        self.at += 1;
        loop {
            let c = self.peek(0)?;
            self.at += 1;
            literal.push(c);
            if c == '\\' {
                literal.push(self.peek(0)?);
                self.at += 1;
            } else if c == quote {
                return Some(literal);
            }
        }
    }
}

fn push_plain(plain: &mut String, pieces: &mut Vec<Piece>) {
    if !plain.is_empty() {
        pieces.push(Piece::Plain(std::mem::take(plain)));
    }
}

/// Takes the prefix of a nest about to open off the item read so far: the
/// last space-separated word of the pending text (keeping one joining space
/// for `Name {`); a word with no space before it reaches back through the
/// item's earlier plain pieces and nest-free nests (`map[string]int{`).
fn split_prefix(plain: &mut String, pieces: &mut Vec<Piece>) -> String {
    let joiner = plain.ends_with(' ');
    if joiner {
        plain.pop();
    }
    let word_start = plain.rfind(' ').map(|i| i + 1);
    let mut prefix = plain.split_off(word_start.unwrap_or(0));
    if word_start.is_none() {
        while let Some(piece) = pieces.pop() {
            match piece {
                Piece::Plain(mut text) => match text.rfind(' ') {
                    Some(space) => {
                        prefix.insert_str(0, &text.split_off(space + 1));
                        pieces.push(Piece::Plain(text));
                        break;
                    }
                    None => prefix.insert_str(0, &text),
                },
                Piece::Nested(nest) if nest.has_no_nests() => {
                    prefix.insert_str(0, &nest.as_written());
                }
                other => {
                    pieces.push(other);
                    break;
                }
            }
        }
    }
    if joiner {
        prefix.push(' ');
    }
    prefix
}

fn emit(pieces: &[Piece], ops: &mut Vec<Op>) {
    for piece in pieces {
        match piece {
            Piece::Plain(text) => ops.push(Op::Text(text.clone())),
            Piece::Nested(nest) => {
                let open = format!("{}{}", nest.prefix, nest.open);
                let indent = if nest.padded {
                    PADDED_INDENT
                } else {
                    open.chars().count()
                };
                ops.push(Op::Open { indent, text: open });
                if nest.padded {
                    ops.push(Op::Break(" ".into()));
                }
                for (i, item) in nest.items.iter().enumerate() {
                    if i > 0 {
                        ops.push(Op::Text(nest.separators[i - 1].to_string()));
                        ops.push(Op::Break(" ".into()));
                    }
                    emit(item, ops);
                }
                let close = if nest.padded {
                    format!(" {}", nest.close)
                } else {
                    nest.close.to_string()
                };
                ops.push(Op::Close(close));
            }
        }
    }
}

/// The commands that print `repr` reflowed.
pub fn reflow(repr: &str) -> Vec<Op> {
    let parsed = if repr.contains('\n') {
        None
    } else {
        let mut reader = Reader {
            chars: repr.chars().collect(),
            at: 0,
            depth: 0,
        };
        reader.item().filter(|_| reader.at == reader.chars.len())
    };
    let mut ops = Vec::new();
    match parsed {
        Some(pieces) => emit(&pieces, &mut ops),
        None => {
            for (i, line) in repr.split('\n').enumerate() {
                if i > 0 {
                    ops.push(Op::Newline);
                }
                if !line.is_empty() {
                    ops.push(Op::Text(line.to_string()));
                }
            }
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::super::{Document, Target};
    use super::*;

    fn laid_out(repr: &str, width: u64) -> String {
        let doc = Document::new();
        doc.set_width(width);
        for op in reflow(repr) {
            doc.record(Target::Main, op).unwrap();
        }
        doc.value().unwrap()
    }

    #[test]
    fn what_fits_renders_as_given() {
        for repr in [
            "Some(5)",
            "Point { x: 1, y: [1, 2] }",
            "\"a, b\"",
            "[]",
            "{}",
            "x(y",
        ] {
            assert_eq!(laid_out(repr, 79), repr);
        }
    }

    #[test]
    fn aligned_and_padded_groups_break_their_own_ways() {
        assert_eq!(
            laid_out("Some([1000, 2000, 3000])", 12),
            "Some([1000,\n      2000,\n      3000])"
        );
        assert_eq!(
            laid_out("Point { x: 1000, y: 2000 }", 12),
            "Point {\n    x: 1000,\n    y: 2000 }"
        );
    }

    #[test]
    fn prefixes_reach_back_through_type_expressions() {
        assert_eq!(
            laid_out("map[string]int{\"a\": 1, \"b\": 2}", 20),
            "map[string]int{\"a\": 1,\n               \"b\": 2}"
        );
    }
}
