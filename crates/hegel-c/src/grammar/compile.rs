//! Gathering a grammar's files and compiling them into a [`Grammar`].
//!
//! A [`Builder`] holds the root grammar and asks for each file an
//! `%import` needs (`a.b.X` needs `a/b.lark`; `.c.X` in `x/y.lark` needs
//! `x/c.lark`). Compilation resolves every name in the file it appears in
//! (its own definitions, then its imports), instantiates templates,
//! substitutes the explicit terminals, and works out for every symbol the
//! fewest characters and the shallowest rule nesting it can produce, which
//! the walk ([`super::walk`]) uses to stay within its caps.

use super::syntax::{self, Definition, Expr, Statement, is_terminal_name};
use geist_engine::charset::CharSet;
use geist_engine::generate::regex::RegexSchema;
use std::collections::HashMap;
use std::sync::Arc;

/// A file of the grammar.
pub struct GrammarFile {
    /// Its path (`""` for the root).
    pub path: String,
    /// Its statements, once provided.
    pub statements: Option<Vec<Statement>>,
    /// Whether a relative import names it (no bundled fallback then).
    pub relatively_imported: bool,
}

/// The root grammar and the files its imports need.
pub struct Builder {
    /// Index 0 is the root; the rest are the files asked for, in order.
    pub files: Vec<GrammarFile>,
}

/// Whether `part` is a Lark name.
fn lark_name(part: &str) -> bool {
    let mut chars = part.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The directory of a file path (`""` for top-level files).
fn directory(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// The file an import in the file at `from` needs.
pub fn import_file(from: &str, import: &syntax::Import) -> Result<String, String> {
    if let Some(bad) = import.module.iter().find(|p| !lark_name(p)) {
        return Err(format!("{bad:?} is not a valid import path component"));
    }
    let mut base: Vec<&str> = if import.dots == 0 {
        Vec::new()
    } else {
        directory(from)
            .split('/')
            .filter(|p| !p.is_empty())
            .collect()
    };
    for _ in 1..import.dots.max(1) {
        if base.pop().is_none() {
            return Err(format!(
                "the relative import {}{} reaches above the grammar's root",
                ".".repeat(import.dots),
                import.module.join(".")
            ));
        }
    }
    let mut parts: Vec<String> = base.into_iter().map(str::to_string).collect();
    if import.module.is_empty() {
        return Err("an import needs a module".into());
    }
    parts.extend(import.module.iter().cloned());
    Ok(format!("{}.lark", parts.join("/")))
}

impl Builder {
    /// A builder for the root grammar `text`.
    pub fn new(text: &str) -> Result<Builder, String> {
        let statements =
            syntax::parse(text).map_err(|e| format!("the grammar does not parse: {e}"))?;
        let mut builder = Builder {
            files: vec![GrammarFile {
                path: String::new(),
                statements: None,
                relatively_imported: false,
            }],
        };
        builder.add_imports(0, &statements)?;
        builder.files[0].statements = Some(statements);
        Ok(builder)
    }

    fn add_imports(&mut self, from: usize, statements: &[Statement]) -> Result<(), String> {
        let from_path = self.files[from].path.clone();
        for statement in statements {
            let Statement::Import(import) = statement else {
                continue;
            };
            let path = import_file(&from_path, import)?;
            match self.files.iter_mut().find(|f| f.path == path) {
                Some(file) => file.relatively_imported |= import.dots > 0,
                None => {
                    if self.files.len() > 256 {
                        return Err("the grammar's imports nest too deeply (over 256 files)".into());
                    }
                    self.files.push(GrammarFile {
                        path,
                        statements: None,
                        relatively_imported: import.dots > 0,
                    });
                }
            }
        }
        Ok(())
    }

    /// Supplies the file at `index` of the imported files (`None`: missing,
    /// so the bundled grammar of that path stands in when there is one).
    pub fn provide(&mut self, index: usize, text: Option<&str>) -> Result<(), String> {
        let slot = index + 1;
        let Some(file) = self.files.get(slot) else {
            return Err(format!(
                "index {index} is past the end of the {} files asked for",
                self.files.len() - 1
            ));
        };
        if file.statements.is_some() {
            return Err(format!("{} was provided already", file.path));
        }
        let text = match text {
            Some(text) => text.to_string(),
            None if file.relatively_imported => {
                return Err(format!(
                    "Could not find grammar `{}`: it is imported relatively, so it must be provided (no bundled grammar stands in)",
                    file.path
                ));
            }
            None => super::bundled::grammar(&file.path)
                .ok_or_else(|| {
                    format!(
                        "Could not find grammar `{}`: it was not provided and no bundled grammar has that path",
                        file.path
                    )
                })?
                .to_string(),
        };
        let statements =
            syntax::parse(&text).map_err(|e| format!("In grammar `{}`: {e}", file.path))?;
        self.add_imports(slot, &statements)?;
        self.files[slot].statements = Some(statements);
        Ok(())
    }
}

/// What a node of a compiled grammar produces.
#[derive(Clone, Debug)]
pub enum Kind {
    /// Fixed text.
    Text(String),
    /// A string matching a regular expression.
    Pattern(Arc<RegexSchema>),
    /// One character of a set.
    Chars(Arc<CharSet>),
    /// A symbol's expansion.
    Symbol(usize),
    /// The value of an explicit terminal (index into the explicit names).
    Marker(usize),
    /// Items in order.
    Seq(Vec<Node>),
    /// One of the alternatives.
    Alt(Vec<Node>),
    /// The item or nothing.
    Optional(Box<Node>),
    /// Repetitions of the item.
    Repeat {
        /// What repeats.
        item: Box<Node>,
        /// Fewest.
        min: usize,
        /// Most.
        max: Option<usize>,
    },
}

/// A compiled node with the least it can produce.
#[derive(Clone, Debug)]
pub struct Node {
    /// What it produces.
    pub kind: Kind,
    /// Fewest characters (`usize::MAX`: it cannot produce anything).
    pub min_len: usize,
    /// Shallowest rule nesting.
    pub min_depth: usize,
}

impl Node {
    fn new(kind: Kind) -> Node {
        Node {
            kind,
            min_len: usize::MAX,
            min_depth: usize::MAX,
        }
    }
}

/// A rule or terminal.
#[derive(Clone, Debug)]
pub struct Symbol {
    /// Its name (with its file for imported ones).
    pub name: String,
    /// Whether its text is one token.
    pub terminal: bool,
    /// Its expansion.
    pub body: Node,
}

/// A compiled grammar.
#[derive(Debug)]
pub struct Grammar {
    /// Every symbol used.
    pub symbols: Vec<Symbol>,
    /// The start symbol.
    pub start: usize,
    /// The symbol of what may go between tokens (`None`: nothing).
    pub ignore: Option<usize>,
    /// The explicit terminals' names, in the caller's order.
    pub explicit: Vec<String>,
    /// Their markers.
    pub markers: Vec<String>,
    /// The most characters a string may have (markers count none).
    pub max_size: usize,
    /// How deeply rules may nest.
    pub max_depth: usize,
    /// Fewest characters of a string.
    pub min_len: usize,
}

/// The options of a compilation.
pub struct Options<'a> {
    /// The start rule.
    pub start: &'a str,
    /// The size cap.
    pub max_size: usize,
    /// The depth cap.
    pub max_depth: usize,
    /// Characters terminals may use.
    pub alphabet: Option<Arc<CharSet>>,
    /// Terminals whose values the caller supplies.
    pub explicit: &'a [String],
}

struct Compiler<'a> {
    builder: &'a Builder,
    options: &'a Options<'a>,
    symbols: Vec<Symbol>,
    /// (file, name) -> symbol.
    resolved: HashMap<(usize, String), usize>,
    /// Template instances: (template's file, name, arguments) -> symbol.
    instances: HashMap<String, usize>,
    /// Definitions still to compile: (symbol, file, definition, template arguments).
    pending: Vec<(usize, usize, Definition, HashMap<String, Node>)>,
    /// Declared terminals that are not explicit.
    undeclared: Vec<String>,
}

impl Compiler<'_> {
    fn file_index(&self, path: &str) -> Option<usize> {
        self.builder.files.iter().position(|f| f.path == path)
    }

    fn statements(&self, file: usize) -> &[Statement] {
        self.builder.files[file]
            .statements
            .as_deref()
            .unwrap_or(&[])
    }

    /// The definition of `name` in `file`, with `%extend`s folded in.
    fn definition(&self, file: usize, name: &str) -> Option<Definition> {
        let mut found: Option<Definition> = None;
        for statement in self.statements(file) {
            match statement {
                Statement::Override(d) if d.name == name => found = Some(d.clone()),
                Statement::Define(d) if d.name == name && found.is_none() => {
                    found = Some(d.clone())
                }
                _ => {}
            }
        }
        let extensions: Vec<Expr> = self
            .statements(file)
            .iter()
            .filter_map(|s| match s {
                Statement::Extend(d) if d.name == name => Some(d.body.clone()),
                _ => None,
            })
            .collect();
        if let Some(definition) = &mut found
            && !extensions.is_empty()
        {
            let mut alternatives =
                match std::mem::replace(&mut definition.body, Expr::Seq(Vec::new())) {
                    Expr::Alt(a) => a,
                    other => vec![other],
                };
            alternatives.extend(extensions);
            definition.body = Expr::Alt(alternatives);
        }
        found
    }

    fn declared(&self, file: usize, name: &str) -> bool {
        self.statements(file)
            .iter()
            .any(|s| matches!(s, Statement::Declare(names) if names.iter().any(|n| n == name)))
    }

    /// Where an imported `name` comes from: (file, original name).
    fn imported(&self, file: usize, name: &str) -> Result<Option<(usize, String)>, String> {
        let from = self.builder.files[file].path.clone();
        for statement in self.statements(file) {
            let Statement::Import(import) = statement else {
                continue;
            };
            if let Some((original, _)) = import.names.iter().find(|(_, alias)| alias == name) {
                let path = import_file(&from, import)?;
                let index = self
                    .file_index(&path)
                    .ok_or_else(|| format!("{path} was never asked for"))?;
                if self.builder.files[index].statements.is_none() {
                    return Err(format!("{path} has not been provided"));
                }
                return Ok(Some((index, original.clone())));
            }
        }
        Ok(None)
    }

    /// The symbol `name` stands for in `file`.
    fn resolve(&mut self, file: usize, name: &str) -> Result<usize, String> {
        if let Some(&s) = self.resolved.get(&(file, name.to_string())) {
            return Ok(s);
        }
        let symbol = if file == 0
            && let Some(i) = self.options.explicit.iter().position(|e| e == name)
        {
            let mut body = Node::new(Kind::Marker(i));
            body.min_len = 0;
            body.min_depth = 0;
            self.add(name, true, body)
        } else if let Some(definition) = self.definition(file, name) {
            if !definition.params.is_empty() {
                return Err(format!("the template {name} is used without arguments"));
            }
            let display = self.display(file, name);
            let symbol = self.add(
                &display,
                definition.is_terminal(),
                Node::new(Kind::Seq(Vec::new())),
            );
            self.resolved.insert((file, name.to_string()), symbol);
            self.pending
                .push((symbol, file, definition, HashMap::new()));
            return Ok(symbol);
        } else if let Some((from, original)) = self.imported(file, name)? {
            self.resolve(from, &original)?
        } else if self.declared(file, name) {
            self.undeclared.push(name.to_string());
            let mut body = Node::new(Kind::Seq(Vec::new()));
            body.min_len = usize::MAX;
            self.add(name, true, body)
        } else {
            let place = match self.builder.files[file].path.as_str() {
                "" => String::new(),
                path => format!(" in {path}"),
            };
            return Err(format!(
                "the symbol {name} is used{place} but never defined"
            ));
        };
        self.resolved.insert((file, name.to_string()), symbol);
        Ok(symbol)
    }

    fn display(&self, file: usize, name: &str) -> String {
        match self.builder.files[file].path.as_str() {
            "" => name.to_string(),
            path => format!(
                "{}.{name}",
                path.trim_end_matches(".lark").replace('/', ".")
            ),
        }
    }

    fn add(&mut self, name: &str, terminal: bool, body: Node) -> usize {
        self.symbols.push(Symbol {
            name: name.to_string(),
            terminal,
            body,
        });
        self.symbols.len() - 1
    }

    fn instantiate(&mut self, file: usize, name: &str, args: Vec<Node>) -> Result<usize, String> {
        let (def_file, definition) = match self.definition(file, name) {
            Some(d) => (file, d),
            None => match self.imported(file, name)? {
                Some((from, original)) => (
                    from,
                    self.definition(from, &original)
                        .ok_or_else(|| format!("the template {name} is not defined"))?,
                ),
                None => return Err(format!("the template {name} is used but never defined")),
            },
        };
        if definition.params.len() != args.len() {
            return Err(format!(
                "the template {name} takes {} arguments, given {}",
                definition.params.len(),
                args.len()
            ));
        }
        let key = format!("{def_file}/{name}/{args:?}");
        if let Some(&s) = self.instances.get(&key) {
            return Ok(s);
        }
        let symbol = self.add(
            &format!("{name}{{...}}"),
            definition.is_terminal(),
            Node::new(Kind::Seq(Vec::new())),
        );
        self.instances.insert(key, symbol);
        let bindings = definition.params.iter().cloned().zip(args).collect();
        self.pending.push((symbol, def_file, definition, bindings));
        Ok(symbol)
    }

    fn compile(
        &mut self,
        file: usize,
        expr: &Expr,
        bindings: &HashMap<String, Node>,
    ) -> Result<Node, String> {
        Ok(Node::new(match expr {
            Expr::Literal { text, .. } => {
                if let Some(alphabet) = &self.options.alphabet
                    && text.chars().any(|c| !alphabet.contains(c as u32))
                {
                    // A literal the alphabet cannot spell is never drawn.
                    return Ok(Node::new(Kind::Chars(Arc::new(CharSet::from_intervals(
                        Vec::new(),
                    )))));
                }
                Kind::Text(text.clone())
            }
            Expr::Pattern { regex, flags } => {
                let pattern = if flags.is_empty() {
                    regex.clone()
                } else {
                    format!("(?{flags}){regex}")
                };
                match RegexSchema::parse(&pattern, true, self.options.alphabet.clone()) {
                    Ok(schema) => Kind::Pattern(Arc::new(schema)),
                    Err(e)
                        if self.options.alphabet.is_some()
                            && e.to_string().contains("alphabet") =>
                    {
                        return Ok(Node::new(Kind::Seq(vec![Node::new(Kind::Chars(
                            Arc::new(CharSet::from_intervals(Vec::new())),
                        ))])));
                    }
                    Err(e) => return Err(format!("the pattern /{regex}/: {e}")),
                }
            }
            Expr::Range(lo, hi) => {
                let mut set = CharSet::from_intervals(vec![(*lo as u32, *hi as u32)]);
                if let Some(alphabet) = &self.options.alphabet {
                    let kept = set
                        .intervals()
                        .iter()
                        .flat_map(|(a, b)| (*a..=*b).filter(|c| alphabet.contains(*c)))
                        .map(|c| (c, c))
                        .collect();
                    set = CharSet::from_intervals(kept);
                }
                Kind::Chars(Arc::new(set))
            }
            Expr::Name(name) => {
                if let Some(bound) = bindings.get(name) {
                    return Ok(bound.clone());
                }
                Kind::Symbol(self.resolve(file, name)?)
            }
            Expr::Template { name, args } => {
                let args = args
                    .iter()
                    .map(|a| self.compile(file, a, bindings))
                    .collect::<Result<Vec<_>, _>>()?;
                Kind::Symbol(self.instantiate(file, name, args)?)
            }
            Expr::Seq(items) => Kind::Seq(
                items
                    .iter()
                    .map(|i| self.compile(file, i, bindings))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Alt(items) => Kind::Alt(
                items
                    .iter()
                    .map(|i| self.compile(file, i, bindings))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Optional(item) => Kind::Optional(Box::new(self.compile(file, item, bindings)?)),
            Expr::Repeat { item, min, max } => Kind::Repeat {
                item: Box::new(self.compile(file, item, bindings)?),
                min: *min,
                max: *max,
            },
        }))
    }
}

/// Works out every node's fewest characters and shallowest nesting, to a
/// fixed point over the (possibly recursive) symbols.
fn measure(symbols: &mut [Symbol]) {
    fn node(n: &mut Node, lens: &[(usize, usize)], symbols_terminal: &[bool]) {
        let (len, depth) = match &mut n.kind {
            Kind::Text(t) => (t.chars().count(), 0),
            Kind::Pattern(p) => {
                let mut data = geist_engine::TestData::replaying(Vec::new(), 1 << 16);
                match p.generate(&mut data) {
                    Ok(geist_engine::Value::String(bytes)) => {
                        (String::from_utf8_lossy(&bytes).chars().count(), 0)
                    }
                    _ => (usize::MAX, usize::MAX),
                }
            }
            Kind::Chars(set) => {
                if set.is_empty() {
                    (usize::MAX, usize::MAX)
                } else {
                    (1, 0)
                }
            }
            Kind::Marker(_) => (0, 0),
            Kind::Symbol(s) => {
                let (len, depth) = lens[*s];
                let extra = usize::from(!symbols_terminal[*s]);
                (len, depth.saturating_add(extra))
            }
            Kind::Seq(items) => {
                let mut len = 0usize;
                let mut depth = 0usize;
                for item in items.iter_mut() {
                    node(item, lens, symbols_terminal);
                    len = len.saturating_add(item.min_len);
                    depth = depth.max(item.min_depth);
                }
                (len, depth)
            }
            Kind::Alt(items) => {
                let mut best = (usize::MAX, usize::MAX);
                for item in items.iter_mut() {
                    node(item, lens, symbols_terminal);
                    if item.min_len != usize::MAX {
                        best.0 = best.0.min(item.min_len);
                        best.1 = best.1.min(item.min_depth);
                    }
                }
                best
            }
            Kind::Optional(item) => {
                node(item, lens, symbols_terminal);
                (0, 0)
            }
            Kind::Repeat { item, min, .. } => {
                node(item, lens, symbols_terminal);
                if *min == 0 {
                    (0, 0)
                } else {
                    (item.min_len.saturating_mul(*min), item.min_depth)
                }
            }
        };
        n.min_len = len;
        n.min_depth = if len == usize::MAX { usize::MAX } else { depth };
    }
    let terminal: Vec<bool> = symbols.iter().map(|s| s.terminal).collect();
    let mut lens: Vec<(usize, usize)> = vec![(usize::MAX, usize::MAX); symbols.len()];
    loop {
        let mut changed = false;
        for (i, symbol) in symbols.iter_mut().enumerate() {
            node(&mut symbol.body, &lens, &terminal);
            let now = (symbol.body.min_len, symbol.body.min_depth);
            if now != lens[i] {
                lens[i] = now;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// The marker standing for the explicit terminal `name`.
pub fn marker(name: &str) -> String {
    let noise = crate::test_case::label_from_name(format!("geist.grammar.{name}").as_bytes());
    format!("<<EXPLICIT_{name}_{:012x}>>", noise & 0xffff_ffff_ffff)
}

/// Compiles the gathered files.
pub fn compile(builder: &Builder, options: &Options<'_>) -> Result<Grammar, String> {
    if let Some(missing) = builder.files.iter().find(|f| f.statements.is_none()) {
        return Err(format!("{} has not been provided", missing.path));
    }
    let mut compiler = Compiler {
        builder,
        options,
        symbols: Vec::new(),
        resolved: HashMap::new(),
        instances: HashMap::new(),
        pending: Vec::new(),
        undeclared: Vec::new(),
    };
    for name in options.explicit {
        if !is_terminal_name(name) {
            return Err(format!(
                "the explicit terminal {name:?} is not a terminal name (upper case)"
            ));
        }
        let known = compiler.definition(0, name).is_some()
            || compiler.declared(0, name)
            || compiler.imported(0, name)?.is_some();
        if !known {
            return Err(format!(
                "the grammar does not use explicit terminal '{name}': it is not one of its terminals"
            ));
        }
    }
    let start = compiler.resolve(0, options.start).map_err(|e| {
        if compiler.definition(0, options.start).is_none() {
            format!("the start rule {} is not defined", options.start)
        } else {
            e
        }
    })?;
    let mut ignore = Vec::new();
    for statement in builder.files[0].statements.as_deref().unwrap_or(&[]) {
        if let Statement::Ignore(expr) = statement {
            ignore.push(compiler.compile(0, expr, &HashMap::new())?);
        }
    }
    while let Some((symbol, file, definition, bindings)) = compiler.pending.pop() {
        let body = compiler.compile(file, &definition.body, &bindings)?;
        compiler.symbols[symbol].body = body;
    }
    if let Some(name) = compiler.undeclared.first() {
        return Err(format!(
            "the terminal {name} is %declare'd, so its values must be supplied: name it among the explicit terminals"
        ));
    }
    let mut symbols = compiler.symbols;
    let ignore_symbol = match ignore.len() {
        0 => None,
        _ => {
            let body = if ignore.len() == 1 {
                ignore.swap_remove(0)
            } else {
                Node::new(Kind::Alt(ignore))
            };
            symbols.push(Symbol {
                name: "%ignore".into(),
                terminal: true,
                body,
            });
            Some(symbols.len() - 1)
        }
    };
    measure(&mut symbols);
    let ignore = ignore_symbol.filter(|s| symbols[*s].body.min_len != usize::MAX);
    let body = &symbols[start].body;
    if body.min_len == usize::MAX {
        return Err(format!(
            "the start rule {} can never produce a finite string{}",
            options.start,
            if options.alphabet.is_some() {
                " from the alphabet"
            } else {
                ""
            }
        ));
    }
    let min_len = body.min_len;
    let min_depth = body.min_depth + 1;
    if options.max_size < min_len {
        return Err(format!(
            "max_size is {}, below the {min_len} characters of the grammar's smallest string",
            options.max_size
        ));
    }
    if options.max_depth < min_depth {
        return Err(format!(
            "max_depth is {}, below the nesting of {min_depth} the grammar's shallowest string needs",
            options.max_depth
        ));
    }
    Ok(Grammar {
        symbols,
        start,
        ignore,
        explicit: options.explicit.to_vec(),
        markers: options.explicit.iter().map(|n| marker(n)).collect(),
        max_size: options.max_size,
        max_depth: options.max_depth,
        min_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options<'a>(start: &'a str, explicit: &'a [String]) -> Options<'a> {
        Options {
            start,
            max_size: 8192,
            max_depth: 200,
            alphabet: None,
            explicit,
        }
    }

    #[test]
    fn imports_are_asked_for_and_resolved() {
        let mut builder =
            Builder::new("start: INT (\",\" INT)*\n%import common.INT\n").expect("parses");
        assert_eq!(builder.files.len(), 2);
        assert_eq!(builder.files[1].path, "common.lark");
        assert!(compile(&builder, &options("start", &[])).is_err());
        builder.provide(0, None).expect("bundled");
        let grammar = compile(&builder, &options("start", &[])).expect("compiles");
        assert_eq!(grammar.min_len, 1);
    }

    #[test]
    fn relative_import_paths() {
        let import = syntax::Import {
            dots: 1,
            module: vec!["c".into()],
            names: vec![],
        };
        assert_eq!(import_file("x/y.lark", &import).expect("path"), "x/c.lark");
        let absolute = syntax::Import {
            dots: 0,
            module: vec!["a".into(), "b".into()],
            names: vec![],
        };
        assert_eq!(
            import_file("x/y.lark", &absolute).expect("path"),
            "a/b.lark"
        );
    }

    #[test]
    fn impossible_and_undefined_grammars_are_refused() {
        let builder = Builder::new("start: start \"a\"\n").expect("parses");
        let error = compile(&builder, &options("start", &[])).unwrap_err();
        assert!(error.contains("never produce a finite string"), "{error}");
        let builder = Builder::new("start: nope\n").expect("parses");
        assert!(
            compile(&builder, &options("start", &[]))
                .unwrap_err()
                .contains("never defined")
        );
        let builder = Builder::new("start: NUM\n%declare NUM\n").expect("parses");
        assert!(
            compile(&builder, &options("start", &[]))
                .unwrap_err()
                .contains("%declare")
        );
        let explicit = vec!["NUM".to_string()];
        assert!(compile(&builder, &options("start", &explicit)).is_ok());
    }
}
