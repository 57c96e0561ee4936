//! Drawing a string of a grammar: a walk from the start rule whose every
//! decision is an engine choice, so the string replays exactly and shrinks
//! with the engine's shrinker (fewer repetitions, simpler alternatives,
//! smaller characters).
//!
//! The walk first draws a target length (up to the size cap; the simplest
//! is the grammar's smallest string) and steers toward it: repetitions go
//! on while the string is short of it. It never breaks the caps: an
//! alternative, option or repetition is only drawn when what it needs at
//! least, plus what the rest of the string needs at least, still fits, and
//! rules nest no deeper than the depth cap. Alternatives are ordered by the
//! least they need, so the simplest choice is the smallest one.
//!
//! Between tokens (terminals, and literals in rules) the walk now and then
//! puts an `%ignore`d token; next to a placeholder marker it always does,
//! so that a value spliced in there reads apart from its neighbours.

use super::compile::{Grammar, Kind, Node};
use geist_engine::TestData;
use geist_engine::choice::IntegerConstraints;
use geist_engine::data::labels;
use geist_engine::{StopTest, Value};

/// Probability of an ignored token between two tokens.
const P_IGNORE: f64 = 0.1;
/// Attempts at a pattern's string that fits before the test case is rejected.
const PATTERN_ATTEMPTS: usize = 3;

/// A piece of a drawn string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text.
    Text(String),
    /// The place of an explicit terminal's value.
    Marker(usize),
}

struct Walk<'a> {
    grammar: &'a Grammar,
    data: &'a mut TestData,
    pieces: Vec<Piece>,
    /// Characters drawn so far (markers count none).
    len: usize,
    /// The length aimed for.
    target: usize,
    /// Whether a token was drawn, and whether the last was a marker.
    after_token: bool,
    after_marker: bool,
}

/// Draws a string of `grammar` of at most `cap` characters.
pub fn draw(grammar: &Grammar, data: &mut TestData, cap: usize) -> Result<Vec<Piece>, StopTest> {
    let start = &grammar.symbols[grammar.start];
    let cap = cap.clamp(grammar.min_len, grammar.max_size);
    let target = data.draw_integer(IntegerConstraints::bounded(
        grammar.min_len as i128,
        cap as i128,
    ))? as usize;
    let mut walk = Walk {
        grammar,
        data,
        pieces: Vec::new(),
        len: 0,
        target,
        after_token: false,
        after_marker: false,
    };
    walk.symbol_body(
        &start.body,
        start.terminal,
        cap,
        grammar.max_depth.saturating_sub(1),
        false,
    )?;
    Ok(walk.pieces)
}

impl Walk<'_> {
    fn emit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.len += text.chars().count();
        match self.pieces.last_mut() {
            Some(Piece::Text(last)) => last.push_str(text),
            _ => self.pieces.push(Piece::Text(text.to_string())),
        }
    }

    fn fits(&self, node: &Node, limit: usize, depth: usize) -> bool {
        node.min_len <= limit && node.min_depth <= depth
    }

    /// Before a token: maybe an ignored token (always beside a marker).
    fn boundary(&mut self, limit: &mut usize, marker: bool) -> Result<(), StopTest> {
        let Some(ignore) = self.grammar.ignore else {
            self.after_token = true;
            self.after_marker = marker;
            return Ok(());
        };
        if self.after_token {
            let grammar = self.grammar;
            let body = &grammar.symbols[ignore].body;
            let needed = marker || self.after_marker;
            let room = body.min_len <= *limit;
            let insert = if needed && room {
                self.data.force_boolean(P_IGNORE, true)?
            } else if room {
                self.data.draw_boolean(P_IGNORE)?
            } else {
                self.data.force_boolean(P_IGNORE, false)?
            };
            if insert {
                let before = self.len;
                self.node(body, *limit, usize::MAX, true)?;
                *limit = limit.saturating_sub(self.len - before);
            }
        }
        self.after_token = true;
        self.after_marker = marker;
        Ok(())
    }

    fn symbol_body(
        &mut self,
        body: &Node,
        terminal: bool,
        limit: usize,
        depth: usize,
        in_token: bool,
    ) -> Result<(), StopTest> {
        if terminal && !in_token {
            let mut limit = limit;
            if !matches!(body.kind, Kind::Marker(_)) {
                self.boundary(&mut limit, false)?;
            }
            self.node(body, limit, depth, true)
        } else {
            self.node(body, limit, depth, in_token)
        }
    }

    /// Draws `node` in at most `limit` characters and `depth` nested rules.
    fn node(
        &mut self,
        node: &Node,
        limit: usize,
        depth: usize,
        in_token: bool,
    ) -> Result<(), StopTest> {
        match &node.kind {
            Kind::Text(text) => {
                let mut limit = limit;
                if !in_token {
                    self.boundary(&mut limit, false)?;
                }
                self.emit(text);
                Ok(())
            }
            Kind::Chars(set) => {
                let mut limit = limit;
                if !in_token {
                    self.boundary(&mut limit, false)?;
                }
                let last = set.len().saturating_sub(1);
                let i = self
                    .data
                    .draw_integer(IntegerConstraints::bounded(0, i128::from(last)))?
                    as u64;
                let c = set
                    .char_at_shrink_index(i)
                    .or_else(|| set.char_at(i))
                    .and_then(char::from_u32)
                    .unwrap_or('?');
                self.emit(&c.to_string());
                Ok(())
            }
            Kind::Pattern(schema) => {
                let mut limit = limit;
                if !in_token {
                    self.boundary(&mut limit, false)?;
                }
                for _ in 0..PATTERN_ATTEMPTS {
                    self.data.start_span(labels::SCHEMA_VALUE);
                    let drawn = schema.generate(self.data);
                    let text = match drawn {
                        Ok(Value::String(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                        Ok(_) => String::new(),
                        Err(stop) => {
                            self.data.stop_span(true);
                            return Err(stop);
                        }
                    };
                    if text.chars().count() <= limit {
                        self.data.stop_span(false);
                        self.emit(&text);
                        return Ok(());
                    }
                    self.data.stop_span(true);
                }
                Err(self.data.reject())
            }
            Kind::Marker(i) => {
                let mut limit = limit;
                self.boundary(&mut limit, true)?;
                self.pieces.push(Piece::Marker(*i));
                Ok(())
            }
            Kind::Symbol(s) => {
                let grammar = self.grammar;
                let symbol = &grammar.symbols[*s];
                let depth = if symbol.terminal {
                    depth
                } else {
                    depth.saturating_sub(1)
                };
                self.symbol_body(&symbol.body, symbol.terminal, limit, depth, in_token)
            }
            Kind::Seq(items) => {
                let mut rest: usize = items
                    .iter()
                    .map(|i| i.min_len)
                    .fold(0, usize::saturating_add);
                let start = self.len;
                for item in items {
                    rest = rest.saturating_sub(item.min_len);
                    let used = self.len - start;
                    let room = limit.saturating_sub(used).saturating_sub(rest);
                    self.node(item, room, depth, in_token)?;
                }
                Ok(())
            }
            Kind::Alt(items) => {
                let mut candidates: Vec<&Node> = items
                    .iter()
                    .filter(|i| self.fits(i, limit, depth))
                    .collect();
                if candidates.is_empty() {
                    return Err(self.data.reject());
                }
                candidates.sort_by_key(|i| (i.min_len, i.min_depth));
                let k = if candidates.len() == 1 {
                    0
                } else {
                    self.data.draw_integer(IntegerConstraints::bounded(
                        0,
                        candidates.len() as i128 - 1,
                    ))? as usize
                };
                let chosen = candidates[k];
                self.node(chosen, limit, depth, in_token)
            }
            Kind::Optional(item) => {
                let take = if self.fits(item, limit, depth) {
                    let p = self.continue_probability(item);
                    self.data.draw_boolean(p.clamp(0.1, 0.9))?
                } else {
                    self.data.force_boolean(0.5, false)?
                };
                if take {
                    self.node(item, limit, depth, in_token)?;
                }
                Ok(())
            }
            Kind::Repeat { item, min, max } => {
                let start = self.len;
                let mut count = 0usize;
                loop {
                    let used = self.len - start;
                    let still_needed = min.saturating_sub(count + 1).saturating_mul(item.min_len);
                    let room = limit.saturating_sub(used);
                    let fits = self.fits(item, room.saturating_sub(still_needed), depth);
                    let at_max = max.is_some_and(|m| count >= m);
                    let p = self.continue_probability(item);
                    let more = if count < *min {
                        self.data.force_boolean(p, true)?
                    } else if at_max || !fits {
                        self.data.force_boolean(p, false)?
                    } else {
                        self.data.draw_boolean(p)?
                    };
                    if !more {
                        return Ok(());
                    }
                    let element_start = self.data.nodes.len();
                    let room = limit
                        .saturating_sub(self.len - start)
                        .saturating_sub(still_needed);
                    self.node(item, room, depth, in_token)?;
                    self.data.record_span(
                        labels::COLLECTION_ELEMENT,
                        element_start.saturating_sub(1),
                        self.data.nodes.len(),
                    );
                    count += 1;
                }
            }
        }
    }

    /// The probability of one more repetition, steering toward the target:
    /// the expected number of further ones is what the target still has
    /// room for.
    fn continue_probability(&self, item: &Node) -> f64 {
        let left = self.target.saturating_sub(self.len) as f64;
        if left <= 0.0 {
            return 0.0;
        }
        let cost = (item.min_len.max(1) * 2) as f64;
        let expected = left / cost;
        (expected / (expected + 1.0)).min(0.995)
    }
}

/// The pieces joined, each marker as its text.
pub fn with_markers(grammar: &Grammar, pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.as_str(),
            Piece::Marker(i) => grammar.markers[*i].as_str(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::compile::{Builder, Options, compile};
    use super::*;
    use geist_engine::random::Source;

    fn grammar(text: &str, max_size: usize) -> Grammar {
        let mut builder = Builder::new(text).expect("parses");
        for i in 0..builder.files.len() - 1 {
            builder.provide(i, None).expect("bundled");
        }
        compile(
            &builder,
            &Options {
                start: "start",
                max_size,
                max_depth: 200,
                alphabet: None,
                explicit: &[],
            },
        )
        .expect("compiles")
    }

    fn sample(g: &Grammar, seed: u64) -> Option<String> {
        let mut data = TestData::generating(Vec::new(), Source::from_seed(seed), 1 << 20);
        draw(g, &mut data, g.max_size)
            .ok()
            .map(|p| with_markers(g, &p))
    }

    #[test]
    fn drawn_strings_are_in_the_grammar_and_within_the_cap() {
        let g = grammar("start: INT (\",\" INT)*\n%import common.INT\n", 50);
        let mut long = false;
        for seed in 0..200 {
            let Some(s) = sample(&g, seed) else { continue };
            assert!(s.len() <= 50, "{s}");
            assert!(
                s.split(',')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
                "{s:?}"
            );
            long |= s.len() > 30;
        }
        assert!(long, "the target should make some strings long");
    }

    #[test]
    fn the_simplest_draw_is_the_smallest_string() {
        let g = grammar("start: \"(\" start \")\" | \"x\"", 100);
        let mut data = TestData::replaying(Vec::new(), 1 << 20);
        let pieces = draw(&g, &mut data, 100).expect("draws");
        assert_eq!(with_markers(&g, &pieces), "x");
    }

    #[test]
    fn ignorables_appear_between_tokens() {
        let g = grammar("start: \"a\" \"b\"\n%import common.WS\n%ignore WS\n", 100);
        assert!(
            (0..300)
                .filter_map(|seed| sample(&g, seed))
                .any(|s| s.contains(' '))
        );
    }
}
