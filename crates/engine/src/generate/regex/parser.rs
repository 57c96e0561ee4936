//! A parser for Python `re` pattern syntax.
//!
//! It follows CPython's `re._parser` rule for rule where that decides what a
//! pattern means: `{` is a literal unless it starts a valid counted repeat,
//! `\1`..`\99` are backreferences unless three octal digits make an octal
//! escape, `[]...]` starts with a literal `]`, flags scope over groups, the
//! `x` flag drops whitespace and comments outside classes, and look-behind
//! needs a fixed width. Errors carry Python's wording and a position (in
//! code points). Beyond Python it accepts `\p{...}` classes, `\x{...}`,
//! `(?<name>...)`, flags in the middle of a pattern (they apply to the rest
//! of their group) and `(?-u)` (read as ASCII).

use super::ast::{Anchor, CharClass, Node, Width};
use super::classes::{
    Category, NEWLINE, case_fold, complement, everything, unicode_property, union,
};
use super::invalid;
use crate::charset::{CharSet, MAX_CODEPOINT};
use crate::generate::schema::SchemaError;
use std::sync::Arc;

/// Python's limit on repeat counts (`_sre.MAXREPEAT`).
const MAX_REPEAT: u64 = u32::MAX as u64;

/// Python's verbose-mode white space.
const VERBOSE_SPACE: &[char] = &[' ', '\t', '\n', '\r', '\x0B', '\x0C'];

/// A parsed pattern.
#[derive(Debug)]
pub(super) struct Parsed {
    /// The pattern tree (not yet settled).
    pub root: Node,
    /// Number of capturing groups.
    pub groups: usize,
}

/// Parses `pattern`; classes generate from within `alphabet`.
pub(super) fn parse(pattern: &str, alphabet: &CharSet) -> Result<Parsed, SchemaError> {
    let mut parser = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        pattern,
        alphabet,
        groups: 0,
        widths: vec![None],
        names: Vec::new(),
        conditional_refs: Vec::new(),
    };
    let mut flags = Flags::default();
    let root = parser.alternation(&mut flags)?;
    if parser.pos < parser.chars.len() {
        return Err(parser.error("unbalanced parenthesis", parser.pos));
    }
    for &(group, at) in &parser.conditional_refs {
        if group > parser.groups {
            return Err(parser.error(&format!("invalid group reference {group}"), at));
        }
    }
    Ok(Parsed {
        root,
        groups: parser.groups,
    })
}

/// The flags in force at a point of the pattern.
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    ignore_case: bool,
    multiline: bool,
    dotall: bool,
    verbose: bool,
    ascii: bool,
}

/// What the last item of a sequence was, for Python's repeat errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Last {
    Nothing,
    Anchor,
    Repeat,
    Item,
}

/// One member of a `[...]` class.
enum ClassItem {
    Char(u32),
    Set(CharSet),
}

struct Parser<'p> {
    chars: Vec<char>,
    pos: usize,
    pattern: &'p str,
    alphabet: &'p CharSet,
    /// Groups opened so far.
    groups: usize,
    /// Width of each closed group, by number (`None` while open).
    widths: Vec<Option<Width>>,
    names: Vec<(String, usize)>,
    /// Groups named by conditionals, checked once all groups are known.
    conditional_refs: Vec<(usize, usize)>,
}

impl Parser<'_> {
    fn error(&self, message: &str, at: usize) -> SchemaError {
        invalid(self.pattern, &format!("{message} at position {at}"))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn class_node(&self, matches: CharSet) -> Node {
        let generate = super::classes::intersect(&matches, self.alphabet);
        Node::Class(CharClass {
            matches: Arc::new(matches),
            generate: Arc::new(generate),
        })
    }

    fn literal(&self, c: u32, flags: &Flags) -> Node {
        if flags.ignore_case {
            let folded = case_fold(&CharSet::from_intervals(vec![(c, c)]), flags.ascii);
            if folded.len() > 1 {
                return self.class_node(folded);
            }
        }
        Node::Text(vec![c])
    }

    fn alternation(&mut self, flags: &mut Flags) -> Result<Node, SchemaError> {
        let mut branches = self.branches(flags)?;
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt {
                branches,
                viable: Vec::new(),
            }
        })
    }

    fn branches(&mut self, flags: &mut Flags) -> Result<Vec<Node>, SchemaError> {
        let mut branches = vec![self.sequence(flags)?];
        while self.eat('|') {
            branches.push(self.sequence(flags)?);
        }
        Ok(branches)
    }

    fn skip_verbose(&mut self) {
        loop {
            while self.peek().is_some_and(|c| VERBOSE_SPACE.contains(&c)) {
                self.pos += 1;
            }
            if self.peek() != Some('#') {
                return;
            }
            while let Some(c) = self.next() {
                if c == '\n' {
                    break;
                }
            }
        }
    }

    fn sequence(&mut self, flags: &mut Flags) -> Result<Node, SchemaError> {
        let mut items: Vec<Node> = Vec::new();
        let mut last = Last::Nothing;
        loop {
            if flags.verbose {
                self.skip_verbose();
            }
            let Some(c) = self.peek() else { break };
            let start = self.pos;
            match c {
                '|' | ')' => break,
                '*' | '+' | '?' | '{' => {
                    let Some((min, max)) = self.quantifier()? else {
                        // A `{` that does not start a counted repeat is a literal.
                        self.pos += 1;
                        items.push(self.literal(u32::from('{'), flags));
                        last = Last::Item;
                        continue;
                    };
                    match last {
                        Last::Nothing | Last::Anchor => {
                            return Err(self.error("nothing to repeat", start));
                        }
                        Last::Repeat => return Err(self.error("multiple repeat", start)),
                        Last::Item => {}
                    }
                    let lazy = self.eat('?');
                    let possessive = !lazy && self.eat('+');
                    let body = items.pop().unwrap_or(Node::Empty);
                    let repeat = Node::Repeat {
                        body: Box::new(body),
                        min,
                        max,
                        lazy,
                        body_viable: false,
                    };
                    items.push(if possessive {
                        Node::Atomic(Box::new(repeat))
                    } else {
                        repeat
                    });
                    last = Last::Repeat;
                }
                '(' => {
                    if let Some(node) = self.group(flags)? {
                        items.push(node);
                        last = Last::Item;
                    }
                }
                '[' => {
                    let node = self.class(flags)?;
                    items.push(node);
                    last = Last::Item;
                }
                '.' => {
                    self.pos += 1;
                    let matches = if flags.dotall {
                        everything()
                    } else {
                        complement(&CharSet::from_intervals(vec![(NEWLINE, NEWLINE)]))
                    };
                    items.push(self.class_node(matches));
                    last = Last::Item;
                }
                '^' => {
                    self.pos += 1;
                    items.push(Node::Anchor(if flags.multiline {
                        Anchor::StartLine
                    } else {
                        Anchor::Start
                    }));
                    last = Last::Anchor;
                }
                '$' => {
                    self.pos += 1;
                    items.push(Node::Anchor(if flags.multiline {
                        Anchor::EndLine
                    } else {
                        Anchor::End
                    }));
                    last = Last::Anchor;
                }
                '\\' => {
                    let node = self.escape(flags)?;
                    last = if matches!(node, Node::Anchor(_)) {
                        Last::Anchor
                    } else {
                        Last::Item
                    };
                    items.push(node);
                }
                c => {
                    self.pos += 1;
                    items.push(self.literal(u32::from(c), flags));
                    last = Last::Item;
                }
            }
        }
        // Adjacent literals become one text (only now: a repeat takes one character).
        let mut merged: Vec<Node> = Vec::with_capacity(items.len());
        for item in items {
            match (merged.last_mut(), item) {
                (_, Node::Empty) => {}
                (Some(Node::Text(previous)), Node::Text(more)) => previous.extend(more),
                (_, item) => merged.push(item),
            }
        }
        Ok(match merged.len() {
            0 => Node::Empty,
            1 => merged.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(merged),
        })
    }

    /// Reads `*`, `+`, `?` or a counted repeat; `None` for a literal `{`.
    fn quantifier(&mut self) -> Result<Option<(usize, Option<usize>)>, SchemaError> {
        let start = self.pos;
        match self.chars[start] {
            '*' => {
                self.pos += 1;
                return Ok(Some((0, None)));
            }
            '+' => {
                self.pos += 1;
                return Ok(Some((1, None)));
            }
            '?' => {
                self.pos += 1;
                return Ok(Some((0, Some(1))));
            }
            _ => {}
        }
        let digits_from = |mut j: usize| -> usize {
            while self.chars.get(j).is_some_and(char::is_ascii_digit) {
                j += 1;
            }
            j
        };
        if self.chars.get(start + 1) == Some(&'}') {
            return Ok(None);
        }
        let lo_end = digits_from(start + 1);
        let lo: String = self.chars[start + 1..lo_end].iter().collect();
        let (hi, end) = if self.chars.get(lo_end) == Some(&',') {
            let hi_end = digits_from(lo_end + 1);
            (
                self.chars[lo_end + 1..hi_end].iter().collect::<String>(),
                hi_end,
            )
        } else {
            (lo.clone(), lo_end)
        };
        if self.chars.get(end) != Some(&'}') {
            return Ok(None);
        }
        let number = |text: &str| -> Result<Option<usize>, SchemaError> {
            if text.is_empty() {
                return Ok(None);
            }
            match text.parse::<u64>() {
                Ok(n) if n < MAX_REPEAT => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
                _ => Err(self.error("the repetition number is too large", start + 1)),
            }
        };
        let min = number(&lo)?.unwrap_or(0);
        let max = number(&hi)?;
        if max.is_some_and(|m| m < min) {
            return Err(self.error("min repeat greater than max repeat", start + 1));
        }
        self.pos = end + 1;
        Ok(Some((min, max)))
    }

    fn close(&mut self, open_at: usize) -> Result<(), SchemaError> {
        if self.eat(')') {
            Ok(())
        } else {
            Err(self.error("missing ), unterminated subpattern", open_at))
        }
    }

    fn capture(&mut self, flags: &Flags, open_at: usize) -> Result<Node, SchemaError> {
        self.groups += 1;
        let index = self.groups;
        self.widths.push(None);
        let body = self.alternation(&mut flags.clone())?;
        self.close(open_at)?;
        self.widths[index] = Some(body.width(&self.widths));
        Ok(Node::Group {
            index,
            body: Box::new(body),
        })
    }

    fn name(&mut self, terminator: char, open_at: usize) -> Result<String, SchemaError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c != terminator) {
            self.pos += 1;
        }
        if self.peek().is_none() {
            return Err(self.error(&format!("missing {terminator}, unterminated name"), start));
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        self.pos += 1;
        let mut chars = name.chars();
        let identifier = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_');
        if name.is_empty() {
            return Err(self.error("missing group name", open_at));
        }
        if !identifier {
            return Err(self.error(&format!("bad character in group name {name:?}"), start));
        }
        Ok(name)
    }

    fn named_group(&mut self, flags: &Flags, open_at: usize) -> Result<Node, SchemaError> {
        let name_at = self.pos;
        let name = self.name('>', open_at)?;
        if let Some((_, previous)) = self.names.iter().find(|(n, _)| *n == name) {
            return Err(self.error(
                &format!(
                    "redefinition of group name {name:?} as group {}; was group {previous}",
                    self.groups + 1
                ),
                name_at,
            ));
        }
        self.names.push((name, self.groups + 1));
        self.capture(flags, open_at)
    }

    fn backref(&self, group: usize, flags: &Flags, at: usize) -> Result<Node, SchemaError> {
        if group == 0 || group > self.groups {
            return Err(self.error(&format!("invalid group reference {group}"), at));
        }
        if self.widths[group].is_none() {
            return Err(self.error("cannot refer to an open group", at));
        }
        Ok(Node::Backref {
            group,
            ignore_case: flags.ignore_case,
            ascii: flags.ascii,
        })
    }

    fn look(
        &mut self,
        flags: &Flags,
        behind: bool,
        negate: bool,
        open_at: usize,
    ) -> Result<Node, SchemaError> {
        let body = self.alternation(&mut flags.clone())?;
        self.close(open_at)?;
        let width = if behind {
            match body.width(&self.widths) {
                (lo, Some(hi)) if lo == hi => lo,
                _ => {
                    return Err(self.error("look-behind requires fixed-width pattern", open_at));
                }
            }
        } else {
            0
        };
        Ok(Node::Look {
            behind,
            negate,
            body: Box::new(body),
            width,
            body_viable: false,
        })
    }

    /// Parses a group at `(`; `None` for comments and global flags.
    fn group(&mut self, flags: &mut Flags) -> Result<Option<Node>, SchemaError> {
        let open_at = self.pos;
        self.pos += 1;
        if !self.eat('?') {
            return self.capture(flags, open_at).map(Some);
        }
        let Some(c) = self.next() else {
            return Err(self.error("unexpected end of pattern", self.pos));
        };
        let node = match c {
            '#' => {
                while self.peek().is_some_and(|c| c != ')') {
                    self.pos += 1;
                }
                if !self.eat(')') {
                    return Err(self.error("missing ), unterminated comment", open_at));
                }
                return Ok(None);
            }
            ':' => {
                let body = self.alternation(&mut flags.clone())?;
                self.close(open_at)?;
                body
            }
            'P' => match self.next() {
                Some('<') => self.named_group(flags, open_at)?,
                Some('=') => {
                    let at = self.pos;
                    let name = self.name(')', open_at)?;
                    let Some(&(_, group)) = self.names.iter().find(|(n, _)| *n == name) else {
                        return Err(self.error(&format!("unknown group name {name:?}"), at));
                    };
                    self.backref(group, flags, at)?
                }
                other => {
                    let shown = other.map(String::from).unwrap_or_default();
                    return Err(self.error(&format!("unknown extension ?P{shown}"), open_at + 1));
                }
            },
            '<' => match self.peek() {
                Some('=') | Some('!') => {
                    let negate = self.next() == Some('!');
                    self.look(flags, true, negate, open_at)?
                }
                _ => self.named_group(flags, open_at)?,
            },
            '=' => self.look(flags, false, false, open_at)?,
            '!' => self.look(flags, false, true, open_at)?,
            '>' => {
                let body = self.alternation(&mut flags.clone())?;
                self.close(open_at)?;
                Node::Atomic(Box::new(body))
            }
            '(' => self.conditional(flags, open_at)?,
            c if "aiLmsux-".contains(c) => {
                self.pos -= 1;
                return self.flag_group(flags, open_at);
            }
            other => {
                return Err(self.error(&format!("unknown extension ?{other}"), open_at + 1));
            }
        };
        Ok(Some(node))
    }

    fn conditional(&mut self, flags: &Flags, open_at: usize) -> Result<Node, SchemaError> {
        let at = self.pos;
        while self.peek().is_some_and(|c| c != ')') {
            self.pos += 1;
        }
        if !self.eat(')') {
            return Err(self.error("missing ), unterminated name", at));
        }
        let name: String = self.chars[at..self.pos - 1].iter().collect();
        let group = if !name.is_empty() && name.chars().all(|c| c.is_ascii_digit()) {
            match name.parse::<usize>() {
                Ok(0) => return Err(self.error("bad group number", at)),
                Ok(n) => {
                    self.conditional_refs.push((n, at));
                    n
                }
                Err(_) => return Err(self.error(&format!("invalid group reference {name}"), at)),
            }
        } else {
            match self.names.iter().find(|(n, _)| *n == name) {
                Some(&(_, g)) => g,
                None if name.is_empty() => return Err(self.error("missing group name", at)),
                None => return Err(self.error(&format!("unknown group name {name:?}"), at)),
            }
        };
        let mut branches = self.branches(&mut flags.clone())?;
        if branches.len() > 2 {
            return Err(self.error("conditional backref with more than two branches", at));
        }
        self.close(open_at)?;
        let no = if branches.len() == 2 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Empty
        };
        let yes = branches.pop().unwrap_or(Node::Empty);
        Ok(Node::Conditional {
            group,
            yes: Box::new(yes),
            no: Box::new(no),
            yes_viable: false,
            no_viable: false,
        })
    }

    /// `(?aiLmsux)` (for the rest of the group) or `(?aiLmsux-imsx:...)`.
    fn flag_group(
        &mut self,
        flags: &mut Flags,
        open_at: usize,
    ) -> Result<Option<Node>, SchemaError> {
        let mut scoped = *flags;
        let mut negative = false;
        loop {
            let at = self.pos;
            let Some(c) = self.next() else {
                return Err(self.error("missing -, : or )", at));
            };
            match c {
                ':' => {
                    let body = self.alternation(&mut scoped)?;
                    self.close(open_at)?;
                    return Ok(Some(body));
                }
                ')' => {
                    *flags = scoped;
                    return Ok(None);
                }
                '-' if !negative => negative = true,
                'i' => scoped.ignore_case = !negative,
                'm' => scoped.multiline = !negative,
                's' => scoped.dotall = !negative,
                'x' => scoped.verbose = !negative,
                'a' if !negative => scoped.ascii = true,
                // Python refuses `-u`; regex-syntax users mean ASCII by it.
                'u' => scoped.ascii = negative,
                'L' => {
                    return Err(self.error(
                        "bad inline flag: cannot use 'L' flag with a str pattern",
                        at,
                    ));
                }
                other if other.is_alphabetic() => {
                    return Err(self.error(&format!("unknown flag {other:?}"), at));
                }
                _ => return Err(self.error("missing -, : or )", at)),
            }
        }
    }

    fn class(&mut self, flags: &Flags) -> Result<Node, SchemaError> {
        let open_at = self.pos;
        self.pos += 1;
        let negate = self.eat('^');
        let mut set = CharSet::from_intervals(Vec::new());
        let mut singles: Vec<(u32, u32)> = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated character set", open_at));
            };
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            let item_at = self.pos;
            let low = self.class_item(flags)?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                self.pos += 1;
                let high = self.class_item(flags)?;
                match (low, high) {
                    (ClassItem::Char(a), ClassItem::Char(b)) if a <= b => singles.push((a, b)),
                    (ClassItem::Char(a), ClassItem::Char(b)) => {
                        let show = |c: u32| char::from_u32(c).map(String::from).unwrap_or_default();
                        return Err(self.error(
                            &format!("bad character range {}-{}", show(a), show(b)),
                            item_at,
                        ));
                    }
                    _ => return Err(self.error("bad character range", item_at)),
                }
            } else {
                match low {
                    ClassItem::Char(c) => singles.push((c, c)),
                    ClassItem::Set(s) => set = union(&set, &s),
                }
            }
        }
        let mut set = union(&set, &CharSet::from_intervals(singles));
        if flags.ignore_case {
            set = case_fold(&set, flags.ascii);
        }
        if negate {
            set = complement(&set);
        }
        Ok(self.class_node(set))
    }

    fn class_item(&mut self, flags: &Flags) -> Result<ClassItem, SchemaError> {
        let Some(c) = self.next() else {
            return Err(self.error("unterminated character set", self.pos));
        };
        if c != '\\' {
            return Ok(ClassItem::Char(u32::from(c)));
        }
        let at = self.pos - 1;
        let Some(e) = self.next() else {
            return Err(self.error("bad escape (end of pattern)", at));
        };
        Ok(match e {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'p' | 'P' => {
                ClassItem::Set(self.category_set(e, flags, at)?)
            }
            'b' => ClassItem::Char(8),
            '0'..='7' => {
                // In a class every digit escape is octal: up to three digits.
                let mut digits = String::from(e);
                while digits.len() < 3 && self.peek().is_some_and(|d| ('0'..='7').contains(&d)) {
                    digits.push(self.next().unwrap_or('0'));
                }
                ClassItem::Char(self.octal_value(&digits, at)?)
            }
            _ => ClassItem::Char(self.simple_escape(e, at)?),
        })
    }

    /// `\d`, `\w`, `\s`, their negations, and `\p{...}`/`\P{...}` (regex-syntax's
    /// Unicode classes, beyond Python); the escape letter `e` is already read.
    fn category_set(&mut self, e: char, flags: &Flags, at: usize) -> Result<CharSet, SchemaError> {
        let category = match e.to_ascii_lowercase() {
            'd' => Category::Digit,
            'w' => Category::Word,
            's' => Category::Space,
            _ => {
                let name_start = self.pos;
                if self.eat('{') {
                    while self.peek().is_some_and(|c| c != '}') {
                        self.pos += 1;
                    }
                    if !self.eat('}') {
                        return Err(self.error(&format!("bad escape \\{e}"), at));
                    }
                } else if self.next().is_none() {
                    return Err(self.error(&format!("bad escape \\{e}"), at));
                }
                let spec: String = self.chars[name_start..self.pos].iter().collect();
                let Some(mut set) = unicode_property(&format!("\\{e}{spec}")) else {
                    return Err(self.error(&format!("unknown Unicode class \\{e}{spec}"), at));
                };
                if flags.ignore_case {
                    set = case_fold(&set, flags.ascii);
                }
                return Ok(set);
            }
        };
        let set = category.set(flags.ascii);
        Ok(if e.is_ascii_uppercase() {
            complement(&set)
        } else {
            set
        })
    }

    fn octal_value(&self, digits: &str, at: usize) -> Result<u32, SchemaError> {
        let value = u32::from_str_radix(digits, 8).unwrap_or(0);
        if value > 0o377 {
            return Err(self.error(
                &format!("octal escape value \\{digits} outside of range 0-0o377"),
                at,
            ));
        }
        Ok(value)
    }

    /// Reads `count` hex digits (or `{...}`, beyond Python) after `\x`, `\u`, `\U`.
    fn hex(&mut self, e: char, count: usize, at: usize) -> Result<u32, SchemaError> {
        let start = self.pos;
        let digits: String = if self.eat('{') {
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let digits: String = self.chars[start + 1..self.pos].iter().collect();
            if digits.is_empty() || !self.eat('}') {
                return Err(self.error(&format!("incomplete escape \\{e}"), at));
            }
            digits
        } else {
            while self.pos - start < count && self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let digits: String = self.chars[start..self.pos].iter().collect();
            if digits.len() != count {
                return Err(self.error(&format!("incomplete escape \\{e}{digits}"), at));
            }
            digits
        };
        match u32::from_str_radix(&digits, 16) {
            Ok(v) if v <= MAX_CODEPOINT => Ok(v),
            _ => Err(self.error(&format!("bad escape \\{e}{digits}"), at)),
        }
    }

    /// A one-character escape other than classes, anchors and digits.
    fn simple_escape(&mut self, e: char, at: usize) -> Result<u32, SchemaError> {
        Ok(match e {
            'a' => 7,
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            'x' => self.hex(e, 2, at)?,
            'u' => self.hex(e, 4, at)?,
            'U' => self.hex(e, 8, at)?,
            'N' => {
                return Err(super::unsupported(
                    self.pattern,
                    "named characters \\N{...}",
                ));
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(self.error(&format!("bad escape \\{c}"), at));
            }
            other => u32::from(other),
        })
    }

    /// An escape outside a class, at `\\`.
    fn escape(&mut self, flags: &Flags) -> Result<Node, SchemaError> {
        let at = self.pos;
        self.pos += 1;
        let Some(e) = self.next() else {
            return Err(self.error("bad escape (end of pattern)", at));
        };
        Ok(match e {
            'A' => Node::Anchor(Anchor::Start),
            'Z' | 'z' => Node::Anchor(Anchor::EndString),
            'b' => Node::Anchor(Anchor::Boundary { ascii: flags.ascii }),
            'B' => Node::Anchor(Anchor::NotBoundary { ascii: flags.ascii }),
            'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'p' | 'P' => {
                let set = self.category_set(e, flags, at)?;
                self.class_node(set)
            }
            '0' => {
                let mut digits = String::from('0');
                while digits.len() < 3 && self.peek().is_some_and(|d| ('0'..='7').contains(&d)) {
                    digits.push(self.next().unwrap_or('0'));
                }
                self.literal(self.octal_value(&digits, at)?, flags)
            }
            '1'..='9' => {
                // Python: three octal digits are an octal escape, otherwise
                // one or two digits are a group reference.
                let mut digits = String::from(e);
                if let Some(d) = self.peek().filter(char::is_ascii_digit) {
                    self.pos += 1;
                    digits.push(d);
                    let octal = |c: char| ('0'..='7').contains(&c);
                    if octal(e) && octal(d) && self.peek().is_some_and(octal) {
                        digits.push(self.next().unwrap_or('0'));
                        return Ok(self.literal(self.octal_value(&digits, at)?, flags));
                    }
                }
                let group = digits.parse::<usize>().unwrap_or(0);
                self.backref(group, flags, at)?
            }
            other => {
                let c = self.simple_escape(other, at)?;
                self.literal(c, flags)
            }
        })
    }
}
