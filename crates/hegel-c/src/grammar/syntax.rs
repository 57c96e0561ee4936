//! Lark's grammar syntax, read into definitions and directives.
//!
//! What is read: rules (`name: ...`, with the `?`/`!` modifiers and
//! priorities accepted and ignored) and terminals (`NAME: ...`), templates
//! (`_sep{x, sep}: x (sep x)*`), alternatives (`|`, also at the start of a
//! continuation line), aliases (`-> name`, ignored), groups, optionals
//! (`[...]`, `x?`), repetitions (`*`, `+`, `~ n`, `~ n..m`), literals
//! (`"..."`, `"..."i`), character ranges (`"a".."z"`), regular expressions
//! (`/.../flags`), comments (`//`), and the directives `%import`,
//! `%ignore`, `%declare`, `%override` and `%extend`.

use std::fmt;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal string.
    Literal {
        /// Its text.
        text: String,
        /// Whether it matches case-insensitively.
        insensitive: bool,
    },
    /// A regular expression with its flags.
    Pattern {
        /// Python `re` syntax.
        regex: String,
        /// Flag letters (`imslux`).
        flags: String,
    },
    /// A character range `"a".."z"`.
    Range(char, char),
    /// A rule or terminal name.
    Name(String),
    /// A template instantiated with arguments.
    Template {
        /// The template's name.
        name: String,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// Items in sequence.
    Seq(Vec<Expr>),
    /// Alternatives.
    Alt(Vec<Expr>),
    /// Zero or one.
    Optional(Box<Expr>),
    /// Between `min` and `max` (unbounded when `None`) repetitions.
    Repeat {
        /// What repeats.
        item: Box<Expr>,
        /// Fewest repetitions.
        min: usize,
        /// Most repetitions.
        max: Option<usize>,
    },
}

/// A rule or terminal definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    /// Its name.
    pub name: String,
    /// Template parameters (empty for plain definitions).
    pub params: Vec<String>,
    /// Its expansion.
    pub body: Expr,
}

impl Definition {
    /// Whether it defines a terminal (an upper-case name).
    pub fn is_terminal(&self) -> bool {
        is_terminal_name(&self.name)
    }
}

/// Whether a name is a terminal's (no lower-case letters).
pub fn is_terminal_name(name: &str) -> bool {
    let bare = name.trim_start_matches('_');
    !bare.is_empty() && !bare.chars().any(|c| c.is_ascii_lowercase())
}

/// An `%import`.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// Leading dots (0 for an absolute import).
    pub dots: usize,
    /// The module path (`a.b` in `%import a.b.X`).
    pub module: Vec<String>,
    /// `(name, alias)` pairs imported.
    pub names: Vec<(String, String)>,
}

/// A statement of a grammar file.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// A definition.
    Define(Definition),
    /// `%override`: a definition replacing an imported one.
    Override(Definition),
    /// `%extend`: alternatives added to an existing definition.
    Extend(Definition),
    /// `%import`.
    Import(Import),
    /// `%ignore`: what may appear between tokens.
    Ignore(Expr),
    /// `%declare`: terminals with no definition.
    Declare(Vec<String>),
}

/// A syntax error, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Name(String),
    Literal(String, bool),
    Pattern(String, String),
    Number(usize),
    Directive(String),
    Punct(&'static str),
    Newline,
}

struct Lexer<'a> {
    chars: Vec<char>,
    at: usize,
    line: usize,
    _text: &'a str,
}

const PUNCTS: [&str; 16] = [
    "->", "..", ":", "|", "(", ")", "[", "]", "{", "}", ",", "?", "*", "+", "~", ".",
];

impl Lexer<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: self.line,
            message: message.into(),
        }
    }

    fn tokens(mut self) -> Result<Vec<(Token, usize)>, SyntaxError> {
        let mut out = Vec::new();
        while self.at < self.chars.len() {
            let c = self.chars[self.at];
            match c {
                '\n' => {
                    out.push((Token::Newline, self.line));
                    self.line += 1;
                    self.at += 1;
                }
                ' ' | '\t' | '\r' => self.at += 1,
                '/' if self.chars.get(self.at + 1) == Some(&'/') => {
                    while self.at < self.chars.len() && self.chars[self.at] != '\n' {
                        self.at += 1;
                    }
                }
                '"' => {
                    let text = self.literal()?;
                    let insensitive = self.chars.get(self.at) == Some(&'i');
                    if insensitive {
                        self.at += 1;
                    }
                    out.push((Token::Literal(text, insensitive), self.line));
                }
                '/' => {
                    let (regex, flags) = self.pattern()?;
                    out.push((Token::Pattern(regex, flags), self.line));
                }
                '%' => {
                    self.at += 1;
                    let name = self.word();
                    if name.is_empty() {
                        return Err(self.error("a directive name must follow %"));
                    }
                    out.push((Token::Directive(name), self.line));
                }
                c if c.is_ascii_digit() => {
                    let digits = self.word();
                    let n = digits
                        .parse()
                        .map_err(|_| self.error(format!("{digits:?} is not a number")))?;
                    out.push((Token::Number(n), self.line));
                }
                '?' | '!' => {
                    let at_start = matches!(out.last(), None | Some((Token::Newline, _)));
                    let name_follows = self
                        .chars
                        .get(self.at + 1)
                        .is_some_and(|n| *n == '_' || n.is_ascii_alphabetic());
                    self.at += 1;
                    if at_start && name_follows {
                        // The `?` (inline) and `!` (keep tokens) rule modifiers
                        // change the parse tree, not the strings: dropped.
                        let name = self.word();
                        out.push((Token::Name(name), self.line));
                    } else if c == '?' {
                        out.push((Token::Punct("?"), self.line));
                    } else {
                        return Err(self.error("unexpected '!'"));
                    }
                }
                c if c == '_' || c.is_ascii_alphabetic() => {
                    let name = self.word();
                    out.push((Token::Name(name), self.line));
                }
                _ => {
                    let rest: String = self.chars[self.at..].iter().take(2).collect();
                    match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
                        Some(p) => {
                            self.at += p.chars().count();
                            out.push((Token::Punct(p), self.line));
                        }
                        None => return Err(self.error(format!("unexpected character {c:?}"))),
                    }
                }
            }
        }
        out.push((Token::Newline, self.line));
        Ok(out)
    }

    fn word(&mut self) -> String {
        let start = self.at;
        while self
            .chars
            .get(self.at)
            .is_some_and(|c| *c == '_' || c.is_ascii_alphanumeric())
        {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    fn literal(&mut self) -> Result<String, SyntaxError> {
        self.at += 1;
        let mut text = String::new();
        loop {
            let Some(&c) = self.chars.get(self.at) else {
                return Err(self.error("unterminated string"));
            };
            self.at += 1;
            match c {
                '"' => return Ok(text),
                '\n' => return Err(self.error("unterminated string")),
                '\\' => {
                    let Some(&e) = self.chars.get(self.at) else {
                        return Err(self.error("unterminated string"));
                    };
                    self.at += 1;
                    text.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'f' => '\x0c',
                        'v' => '\x0b',
                        '0' => '\0',
                        'x' | 'u' | 'U' => {
                            let width = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let hex: String = self.chars[self.at..].iter().take(width).collect();
                            self.at += hex.chars().count();
                            u32::from_str_radix(&hex, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or_else(|| self.error(format!("bad escape \\{e}{hex}")))?
                        }
                        other => other,
                    });
                }
                other => text.push(other),
            }
        }
    }

    fn pattern(&mut self) -> Result<(String, String), SyntaxError> {
        self.at += 1;
        let mut regex = String::new();
        loop {
            let Some(&c) = self.chars.get(self.at) else {
                return Err(self.error("unterminated regular expression"));
            };
            self.at += 1;
            match c {
                '/' => break,
                '\n' => return Err(self.error("unterminated regular expression")),
                '\\' => {
                    let next = *self
                        .chars
                        .get(self.at)
                        .ok_or_else(|| self.error("unterminated regular expression"))?;
                    self.at += 1;
                    if next == '/' {
                        regex.push('/');
                    } else {
                        regex.push('\\');
                        regex.push(next);
                    }
                }
                other => regex.push(other),
            }
        }
        let mut flags = String::new();
        while let Some(&c) = self.chars.get(self.at) {
            if "imslux".contains(c) {
                flags.push(c);
                self.at += 1;
            } else {
                break;
            }
        }
        Ok((regex, flags))
    }
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)].0
    }

    fn line(&self) -> usize {
        self.tokens[self.at.min(self.tokens.len() - 1)].1
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: self.line(),
            message: message.into(),
        }
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        self.at += 1;
        t
    }

    fn eat(&mut self, punct: &str) -> bool {
        if matches!(self.peek(), Token::Punct(p) if *p == punct) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: &str) -> Result<(), SyntaxError> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(self.error(format!("expected {punct:?}, found {:?}", self.peek())))
        }
    }

    /// Skips newlines that continue a definition: before a `|` on the next line.
    fn continuation(&mut self) -> bool {
        let mut look = self.at;
        while matches!(self.tokens.get(look), Some((Token::Newline, _))) {
            look += 1;
        }
        if look > self.at && matches!(self.tokens.get(look), Some((Token::Punct("|"), _))) {
            self.at = look;
            return true;
        }
        false
    }

    fn statements(&mut self) -> Result<Vec<Statement>, SyntaxError> {
        let mut out = Vec::new();
        loop {
            while matches!(self.peek(), Token::Newline) && self.at < self.tokens.len() - 1 {
                self.at += 1;
            }
            if self.at >= self.tokens.len() - 1 {
                return Ok(out);
            }
            let statement = match self.next() {
                Token::Directive(d) => self.directive(&d)?,
                Token::Name(name) => Statement::Define(self.definition(name)?),
                other => return Err(self.error(format!("expected a definition, found {other:?}"))),
            };
            out.push(statement);
            if !matches!(self.peek(), Token::Newline) {
                return Err(self.error(format!("unexpected {:?} after the statement", self.peek())));
            }
        }
    }

    fn definition(&mut self, name: String) -> Result<Definition, SyntaxError> {
        let mut params = Vec::new();
        if self.eat("{") {
            loop {
                match self.next() {
                    Token::Name(p) => params.push(p),
                    other => {
                        return Err(self.error(format!("expected a parameter, found {other:?}")));
                    }
                }
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("}")?;
        }
        if self.eat(".") {
            match self.next() {
                Token::Number(_) => {}
                other => return Err(self.error(format!("expected a priority, found {other:?}"))),
            }
        }
        self.expect(":")?;
        let body = self.expansions(true)?;
        Ok(Definition { name, params, body })
    }

    fn directive(&mut self, name: &str) -> Result<Statement, SyntaxError> {
        match name {
            "import" => self.import().map(Statement::Import),
            "ignore" => self.expansions(false).map(Statement::Ignore),
            "declare" => {
                let mut names = Vec::new();
                while let Token::Name(n) = self.peek().clone() {
                    self.at += 1;
                    names.push(n);
                }
                if names.is_empty() {
                    return Err(self.error("%declare needs terminal names"));
                }
                Ok(Statement::Declare(names))
            }
            "override" | "extend" => {
                let Token::Name(n) = self.next() else {
                    return Err(self.error(format!("%{name} needs a definition")));
                };
                let definition = self.definition(n)?;
                Ok(if name == "override" {
                    Statement::Override(definition)
                } else {
                    Statement::Extend(definition)
                })
            }
            other => Err(self.error(format!("unknown directive %{other}"))),
        }
    }

    fn import(&mut self) -> Result<Import, SyntaxError> {
        let mut dots = 0;
        while self.eat(".") {
            dots += 1;
        }
        let mut parts = Vec::new();
        loop {
            match self.next() {
                Token::Name(n) => parts.push(n),
                other => {
                    return Err(self.error(format!("expected an import path, found {other:?}")));
                }
            }
            if !self.eat(".") {
                break;
            }
        }
        if self.eat("(") {
            let mut names = Vec::new();
            loop {
                match self.next() {
                    Token::Name(n) => names.push((n.clone(), n)),
                    other => return Err(self.error(format!("expected a name, found {other:?}"))),
                }
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")")?;
            return Ok(Import {
                dots,
                module: parts,
                names,
            });
        }
        if parts.len() < 2 && dots == 0 {
            return Err(self.error("%import needs a module and a name (module.NAME)"));
        }
        let name = parts.pop().unwrap_or_default();
        let alias = if self.eat("->") {
            match self.next() {
                Token::Name(a) => a,
                other => return Err(self.error(format!("expected an alias, found {other:?}"))),
            }
        } else {
            name.clone()
        };
        Ok(Import {
            dots,
            module: parts,
            names: vec![(name, alias)],
        })
    }

    fn expansions(&mut self, multiline: bool) -> Result<Expr, SyntaxError> {
        let mut alternatives = Vec::new();
        if multiline {
            self.continuation();
        }
        self.eat("|");
        loop {
            alternatives.push(self.alias()?);
            if self.eat("|") || (multiline && self.continuation() && self.eat("|")) {
                continue;
            }
            break;
        }
        Ok(if alternatives.len() == 1 {
            alternatives.pop().unwrap_or(Expr::Seq(Vec::new()))
        } else {
            Expr::Alt(alternatives)
        })
    }

    fn alias(&mut self) -> Result<Expr, SyntaxError> {
        let expansion = self.expansion()?;
        if self.eat("->") {
            match self.next() {
                Token::Name(_) => {}
                other => return Err(self.error(format!("expected an alias, found {other:?}"))),
            }
        }
        Ok(expansion)
    }

    fn expansion(&mut self) -> Result<Expr, SyntaxError> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Token::Literal(..) | Token::Pattern(..) | Token::Name(_) => {}
                Token::Punct("(") | Token::Punct("[") => {}
                _ => break,
            }
            items.push(self.expr()?);
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Expr::Seq(Vec::new()))
        } else {
            Expr::Seq(items)
        })
    }

    /// The expansions after an opening bracket, up to its `close`.
    fn bracketed(&mut self, close: &str, what: &str) -> Result<Expr, SyntaxError> {
        let unclosed = |p: &Parser| {
            p.tokens[p.at.min(p.tokens.len())..]
                .iter()
                .all(|(t, _)| matches!(t, Token::Newline))
        };
        if unclosed(self) {
            return Err(self.error(format!("Unclosed {what}: the text ends before {close:?}")));
        }
        let inner = self.inner_expansions()?;
        if !self.eat(close) {
            if unclosed(self) {
                return Err(self.error(format!("Unclosed {what}: the text ends before {close:?}")));
            }
            self.expect(close)?;
        }
        Ok(inner)
    }

    fn inner_expansions(&mut self) -> Result<Expr, SyntaxError> {
        // Inside brackets, newlines do not end the statement.
        let skip = |p: &mut Parser| {
            while matches!(p.peek(), Token::Newline) && p.at < p.tokens.len() - 1 {
                p.at += 1;
            }
        };
        let mut alternatives = Vec::new();
        skip(self);
        self.eat("|");
        loop {
            skip(self);
            alternatives.push(self.alias()?);
            skip(self);
            if !self.eat("|") {
                break;
            }
        }
        Ok(if alternatives.len() == 1 {
            alternatives.pop().unwrap_or(Expr::Seq(Vec::new()))
        } else {
            Expr::Alt(alternatives)
        })
    }

    fn expr(&mut self) -> Result<Expr, SyntaxError> {
        let atom = self.atom()?;
        Ok(if self.eat("?") {
            Expr::Optional(Box::new(atom))
        } else if self.eat("*") {
            Expr::Repeat {
                item: Box::new(atom),
                min: 0,
                max: None,
            }
        } else if self.eat("+") {
            Expr::Repeat {
                item: Box::new(atom),
                min: 1,
                max: None,
            }
        } else if self.eat("~") {
            let Token::Number(min) = self.next() else {
                return Err(self.error("~ needs a count"));
            };
            let max = if self.eat("..") {
                let Token::Number(max) = self.next() else {
                    return Err(self.error("~ n.. needs an upper count"));
                };
                if max < min {
                    return Err(self.error(format!("~ {min}..{max} is an empty range")));
                }
                max
            } else {
                min
            };
            Expr::Repeat {
                item: Box::new(atom),
                min,
                max: Some(max),
            }
        } else {
            atom
        })
    }

    fn atom(&mut self) -> Result<Expr, SyntaxError> {
        match self.next() {
            Token::Punct("(") => self.bracketed(")", "parenthesis"),
            Token::Punct("[") => Ok(Expr::Optional(Box::new(self.bracketed("]", "bracket")?))),
            Token::Literal(text, insensitive) => {
                if self.eat("..") {
                    let Token::Literal(end, _) = self.next() else {
                        return Err(self.error("a range needs a closing string"));
                    };
                    let (mut a, mut b) = (text.chars(), end.chars());
                    match (a.next(), a.next(), b.next(), b.next()) {
                        (Some(lo), None, Some(hi), None) if lo <= hi => Ok(Expr::Range(lo, hi)),
                        _ => Err(self.error(format!(
                            "a range is between single characters, low to high: {text:?}..{end:?}"
                        ))),
                    }
                } else {
                    Ok(Expr::Literal { text, insensitive })
                }
            }
            Token::Pattern(regex, flags) => Ok(Expr::Pattern { regex, flags }),
            Token::Name(name) => {
                if self.eat("{") {
                    let mut args = Vec::new();
                    loop {
                        args.push(self.inner_expansions()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect("}")?;
                    Ok(Expr::Template { name, args })
                } else {
                    Ok(Expr::Name(name))
                }
            }
            other => Err(self.error(format!("expected an expression, found {other:?}"))),
        }
    }
}

/// Parses a grammar file's text.
pub fn parse(text: &str) -> Result<Vec<Statement>, SyntaxError> {
    let tokens = Lexer {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
        _text: text,
    }
    .tokens()?;
    Parser { tokens, at: 0 }.statements()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_and_directives_parse() {
        let statements = parse(
            "start: INT (\",\" INT)*\n%import common.INT\n?value: a | b\n    | \"c\"i -> cee\nX: \"a\"..\"z\"~2..3 /[0-9]+/i\n%ignore WS\n%declare NUM\n",
        )
        .expect("parses");
        assert_eq!(statements.len(), 6);
        assert!(
            matches!(&statements[1], Statement::Import(i) if i.module == ["common"] && i.names[0].0 == "INT")
        );
        let Statement::Define(value) = &statements[2] else {
            panic!()
        };
        assert_eq!(value.name, "value");
        assert!(matches!(&value.body, Expr::Alt(a) if a.len() == 3));
        assert!(matches!(&statements[5], Statement::Declare(n) if n == &["NUM".to_string()]));
    }

    #[test]
    fn templates_and_errors() {
        let statements =
            parse("_sep{x, sep}: x (sep x)*\nstart: _sep{\"a\", \",\"}\n").expect("parses");
        let Statement::Define(sep) = &statements[0] else {
            panic!()
        };
        assert_eq!(sep.params, vec!["x".to_string(), "sep".to_string()]);
        let error = parse("start: \"a\nb: c\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(parse("start: (a\n").is_err());
        assert!(parse("%bogus x\n").is_err());
    }
}
