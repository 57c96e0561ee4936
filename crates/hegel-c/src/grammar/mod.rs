//! Strings of Lark grammars (`hegel_grammar_*`, `hegel_generate_grammar`).
//!
//! [`syntax`] reads Lark's grammar syntax, [`compile`] gathers the files a
//! grammar imports (the caller supplies them; [`bundled`] stands in for
//! `common.lark`) and compiles them, and [`walk`] draws a string through
//! engine choices. A terminal whose values the caller supplies (an
//! *explicit* terminal) stands in a drawn string as a placeholder marker;
//! a grammar draw (`hegel_grammar_draw_*`) asks the caller for a value for
//! each marker and splices it in, drawing the string again under a smaller
//! cap when the values push it over the size cap.

pub mod bundled;
pub mod compile;
pub mod syntax;
pub mod walk;

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{self, handled};
use crate::strings::{alphabet_of, hegel_string_generator_t};
use crate::test_case::{TestCaseHandle, handle, hegel_test_case_t, label_from_name};
use crate::text::{self, LentText};
use compile::{Builder, Grammar, Options};
use std::sync::{Arc, Mutex, MutexGuard};
use walk::Piece;

/// Opaque to C: `hegel_grammar_builder_t`.
pub enum hegel_grammar_builder_t {}
/// Opaque to C: `hegel_grammar_t`.
pub enum hegel_grammar_t {}
/// Opaque to C: `hegel_grammar_draw_t`.
pub enum hegel_grammar_draw_t {}

/// The default size cap.
const DEFAULT_MAX_SIZE: u64 = 8192;
/// The largest size cap.
const MAX_MAX_SIZE: u64 = 1 << 20;
/// The default depth cap.
const DEFAULT_MAX_DEPTH: u32 = 200;
/// The largest depth cap.
const MAX_MAX_DEPTH: u32 = 500;

/// A builder handle's contents.
pub struct BuilderHandle {
    state: Mutex<BuilderState>,
}
handled!(BuilderHandle, 16, "grammar builder");

struct BuilderState {
    builder: Builder,
    /// The paths lent out, one per file asked for.
    paths: Vec<LentText>,
}

/// A compiled grammar's handle contents.
pub struct GrammarHandle {
    grammar: Arc<Grammar>,
    markers: Vec<LentText>,
}
handled!(GrammarHandle, 17, "grammar");

/// A grammar draw in progress.
pub struct DrawHandle {
    state: Mutex<DrawState>,
}
handled!(DrawHandle, 18, "grammar draw");

struct DrawState {
    grammar: Arc<Grammar>,
    max_size: usize,
    /// The stream the draw belongs to, once advanced: its test case's
    /// family id ([`crate::test_case::Family::id`], distinct for every test
    /// case, where the family's address is not: a run's next root may
    /// renew the last one's family in place) and the stream's index.
    stream: Option<(u64, u64)>,
    attempts: u32,
    /// The current attempt's string.
    pieces: Option<Vec<Piece>>,
    /// Its markers, in order.
    markers: Vec<usize>,
    /// Values supplied so far, in marker order.
    values: Vec<String>,
    awaiting: Option<usize>,
    result: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn try_lock<'a, T>(m: &'a Mutex<T>, what: &str) -> AbiResult<MutexGuard<'a, T>> {
    match m.try_lock() {
        Ok(g) => Ok(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => Err(AbiError::ConcurrentUse(format!(
            "the {what} is in use on another thread"
        ))),
    }
}

/// Starts gathering a grammar.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_builder_new(
    ctx: *mut hegel_context_t,
    text_: hegel_string_t,
    out_builder: *mut *mut hegel_grammar_builder_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let grammar = unsafe { text::text(text_, "text")? };
        require(out_builder, "out_builder")?;
        let builder = Builder::new(grammar).map_err(AbiError::InvalidArg)?;
        let paths = builder.files[1..]
            .iter()
            .map(|f| LentText::new(f.path.as_str()))
            .collect();
        let handle = BuilderHandle {
            state: Mutex::new(BuilderState { builder, paths }),
        };
        write(
            out_builder,
            handles::insert(Arc::new(handle))?,
            "out_builder",
        )
    })
}

/// The path of the `index`th file the grammar needs.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_builder_file(
    ctx: *mut hegel_context_t,
    builder: *const hegel_grammar_builder_t,
    index: usize,
    out_path: *mut hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let builder = handles::get::<BuilderHandle, _>(builder)?;
        require(out_path, "out_path")?;
        let state = lock(&builder.state);
        match state.paths.get(index) {
            Some(path) => write(out_path, path.view(), "out_path"),
            None => Err(AbiError::NotFound(format!(
                "the grammar needs {} files; index {index} is past the end",
                state.paths.len()
            ))),
        }
    })
}

/// Supplies the `index`th file (NULL: missing, use the bundled one).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_builder_provide(
    ctx: *mut hegel_context_t,
    builder: *mut hegel_grammar_builder_t,
    index: usize,
    text_: *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let builder = handles::get::<BuilderHandle, _>(builder)?;
        // SAFETY: the caller's optional view.
        let file = unsafe { text::optional_text(text_, "text")? };
        let mut state = lock(&builder.state);
        state
            .builder
            .provide(index, file)
            .map_err(AbiError::InvalidArg)?;
        let known = state.paths.len();
        let new: Vec<LentText> = state.builder.files[1 + known..]
            .iter()
            .map(|f| LentText::new(f.path.as_str()))
            .collect();
        state.paths.extend(new);
        Ok(())
    })
}

/// Frees a builder; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_builder_free(
    ctx: *mut hegel_context_t,
    builder: *mut hegel_grammar_builder_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<BuilderHandle, _>(builder).map(drop))
}

/// Compiles a gathered grammar.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_new(
    ctx: *mut hegel_context_t,
    builder: *const hegel_grammar_builder_t,
    start: *const hegel_string_t,
    max_size: u64,
    max_depth: u32,
    alphabet: *const hegel_string_generator_t,
    explicit_names: *const hegel_string_t,
    explicit_len: usize,
    out_grammar: *mut *mut hegel_grammar_t,
) -> hegel_result_t {
    guard(ctx, || {
        let builder = handles::get::<BuilderHandle, _>(builder)?;
        require(out_grammar, "out_grammar")?;
        // SAFETY: the caller's views.
        let (start, explicit) = unsafe {
            (
                text::optional_text(start, "start")?.unwrap_or("start"),
                text::text_array(explicit_names, explicit_len, "explicit_names")?,
            )
        };
        let max_size = if max_size == 0 {
            DEFAULT_MAX_SIZE
        } else {
            max_size
        };
        if max_size > MAX_MAX_SIZE {
            return Err(AbiError::arg(format!(
                "max_size is {max_size}, but may be at most {MAX_MAX_SIZE}"
            )));
        }
        let max_depth = if max_depth == 0 {
            DEFAULT_MAX_DEPTH
        } else {
            max_depth
        };
        if max_depth > MAX_MAX_DEPTH {
            return Err(AbiError::arg(format!(
                "max_depth is {max_depth}, but may be at most {MAX_MAX_DEPTH}"
            )));
        }
        let alphabet = match alphabet_of(alphabet)? {
            Some(options) => Some(Arc::new(
                geist_engine::generate::schema::parse_charset(&options)
                    .map_err(|e| AbiError::arg(e.to_string()))?,
            )),
            None => None,
        };
        let explicit: Vec<String> = explicit.iter().map(|s| s.to_string()).collect();
        if let Some(twice) = explicit
            .iter()
            .find(|n| explicit.iter().filter(|m| m == n).count() > 1)
        {
            return Err(AbiError::arg(format!(
                "explicit terminal '{twice}' is named twice"
            )));
        }
        let state = lock(&builder.state);
        let grammar = compile::compile(
            &state.builder,
            &Options {
                start,
                max_size: max_size as usize,
                max_depth: max_depth as usize,
                alphabet,
                explicit: &explicit,
            },
        )
        .map_err(AbiError::InvalidArg)?;
        let markers = grammar
            .markers
            .iter()
            .map(|m| LentText::new(m.as_str()))
            .collect();
        let handle = GrammarHandle {
            grammar: Arc::new(grammar),
            markers,
        };
        write(
            out_grammar,
            handles::insert(Arc::new(handle))?,
            "out_grammar",
        )
    })
}

/// Frees a grammar; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_free(
    ctx: *mut hegel_context_t,
    grammar: *mut hegel_grammar_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<GrammarHandle, _>(grammar).map(drop))
}

/// The placeholder marker of an explicit terminal.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_placeholder(
    ctx: *mut hegel_context_t,
    grammar: *const hegel_grammar_t,
    name: hegel_string_t,
    out_marker: *mut hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let grammar = handles::get::<GrammarHandle, _>(grammar)?;
        // SAFETY: the caller's view.
        let name = unsafe { text::text(name, "name")? };
        require(out_marker, "out_marker")?;
        let index = grammar
            .grammar
            .explicit
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| {
                AbiError::arg(format!("{name} is not an explicit terminal of the grammar"))
            })?;
        write(out_marker, grammar.markers[index].view(), "out_marker")
    })
}

fn cap_of(grammar: &Grammar, max_size: u64) -> usize {
    if max_size == 0 {
        grammar.max_size
    } else {
        usize::try_from(max_size)
            .unwrap_or(usize::MAX)
            .clamp(grammar.min_len, grammar.max_size)
    }
}

/// Draws a string of a grammar (explicit terminals as their markers).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_grammar(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    grammar: *const hegel_grammar_t,
    max_size: u64,
    out_result: *mut hegel_owned_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let grammar = handles::get::<GrammarHandle, _>(grammar)?;
        require(out_result, "out_result")?;
        let g = &grammar.grammar;
        let cap = cap_of(g, max_size);
        let drawn = tc.draw(|data| {
            data.start_span(label_from_name(b"hegel.lark"));
            let pieces = walk::draw(g, data, cap);
            data.stop_span(false);
            Ok(walk::with_markers(g, &pieces?))
        })?;
        write(out_result, text::owned_string(drawn), "out_result")
    })
}

/// Starts a draw whose explicit terminals take the caller's values.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_draw_new(
    ctx: *mut hegel_context_t,
    grammar: *const hegel_grammar_t,
    max_size: u64,
    out_draw: *mut *mut hegel_grammar_draw_t,
) -> hegel_result_t {
    guard(ctx, || {
        let grammar = handles::get::<GrammarHandle, _>(grammar)?;
        require(out_draw, "out_draw")?;
        let state = DrawState {
            max_size: cap_of(&grammar.grammar, max_size),
            grammar: Arc::clone(&grammar.grammar),
            stream: None,
            attempts: 0,
            pieces: None,
            markers: Vec::new(),
            values: Vec::new(),
            awaiting: None,
            result: None,
        };
        let handle = DrawHandle {
            state: Mutex::new(state),
        };
        write(out_draw, handles::insert(Arc::new(handle))?, "out_draw")
    })
}

fn text_len(pieces: &[Piece]) -> usize {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.chars().count(),
            Piece::Marker(_) => 0,
        })
        .sum()
}

impl DrawState {
    /// Advances to the next value due, or completes the string.
    fn advance(&mut self, tc: &TestCaseHandle) -> AbiResult<usize> {
        let label = label_from_name(b"hegel.lark");
        loop {
            if self.pieces.is_none() {
                let values_len: usize = self.values.iter().map(|v| v.chars().count()).sum();
                let cap = if self.attempts == 0 {
                    self.max_size
                } else {
                    self.max_size.saturating_sub(values_len)
                };
                self.values.clear();
                let grammar = Arc::clone(&self.grammar);
                if cap < grammar.min_len {
                    return Err(reject(tc));
                }
                let pieces = tc.draw(|data| {
                    data.start_span(label);
                    Ok(walk::draw(&grammar, data, cap)?)
                })?;
                self.markers = pieces
                    .iter()
                    .filter_map(|p| match p {
                        Piece::Marker(i) => Some(*i),
                        Piece::Text(_) => None,
                    })
                    .collect();
                self.pieces = Some(pieces);
            }
            if let Some(next) = self.markers.get(self.values.len()) {
                self.awaiting = Some(*next);
                return Ok(*next);
            }
            let pieces = self.pieces.as_deref().unwrap_or_default();
            let total =
                text_len(pieces) + self.values.iter().map(|v| v.chars().count()).sum::<usize>();
            if total <= self.max_size {
                let mut values = self.values.iter();
                let result: String = pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Text(t) => t.clone(),
                        Piece::Marker(_) => values.next().cloned().unwrap_or_default(),
                    })
                    .collect();
                tc.draw(|data| {
                    data.stop_span(false);
                    Ok(())
                })?;
                self.result = Some(result);
                return Err(AbiError::NotFound("the string is complete".into()));
            }
            // The values pushed the string over the cap: discard the attempt
            // and draw again with less room for the grammar's own text.
            tc.draw(|data| {
                data.stop_span(true);
                Ok(())
            })?;
            self.attempts += 1;
            if self.attempts >= HEGEL_FILTER_ATTEMPTS {
                return Err(reject(tc));
            }
            self.pieces = None;
        }
    }
}

fn reject(tc: &TestCaseHandle) -> AbiError {
    let _ = tc.draw(|data| {
        data.reject();
        Ok(())
    });
    AbiError::Assume(format!(
        "the explicit values did not fit the grammar's size cap in {HEGEL_FILTER_ATTEMPTS} attempts"
    ))
}

/// Advances a grammar draw to the next explicit terminal needing a value.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_draw_next(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    draw: *mut hegel_grammar_draw_t,
    out_terminal: *mut usize,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let draw = handles::get::<DrawHandle, _>(draw)?;
        require(out_terminal, "out_terminal")?;
        let mut state = try_lock(&draw.state, "grammar draw")?;
        let stream = (tc.family.id, tc.stream);
        match state.stream {
            None => state.stream = Some(stream),
            Some(s) if s != stream => {
                return Err(AbiError::arg(
                    "the grammar draw belongs to another test case's stream: start a draw per test case",
                ));
            }
            Some(_) => {}
        }
        if state.awaiting.is_some() {
            return Err(AbiError::arg(
                "a value is still due: supply it with hegel_grammar_draw_provide",
            ));
        }
        if state.result.is_some() {
            return Err(AbiError::NotFound("the string is complete".into()));
        }
        let terminal = state.advance(&tc)?;
        write(out_terminal, terminal, "out_terminal")
    })
}

/// Supplies the value due.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_draw_provide(
    ctx: *mut hegel_context_t,
    draw: *mut hegel_grammar_draw_t,
    value: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let draw = handles::get::<DrawHandle, _>(draw)?;
        // SAFETY: the caller's view.
        let value = unsafe { text::text(value, "value")? };
        let mut state = try_lock(&draw.state, "grammar draw")?;
        if state.awaiting.take().is_none() {
            return Err(AbiError::arg(
                "no value is due: call hegel_grammar_draw_next first",
            ));
        }
        state.values.push(value.to_string());
        Ok(())
    })
}

/// The completed string.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_draw_result(
    ctx: *mut hegel_context_t,
    draw: *const hegel_grammar_draw_t,
    out_result: *mut hegel_owned_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let draw = handles::get::<DrawHandle, _>(draw)?;
        require(out_result, "out_result")?;
        let state = try_lock(&draw.state, "grammar draw")?;
        match &state.result {
            Some(result) => write(out_result, text::owned_string(result.clone()), "out_result"),
            None => Err(AbiError::NotComplete(
                "the string is not complete: call hegel_grammar_draw_next until it returns HEGEL_E_NOT_FOUND".into(),
            )),
        }
    })
}

/// Frees a grammar draw; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_grammar_draw_free(
    ctx: *mut hegel_context_t,
    draw: *mut hegel_grammar_draw_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<DrawHandle, _>(draw).map(drop))
}
