//! A backtracking matcher over the pattern tree, with Python's semantics.
//!
//! Generation builds one match path; whether Python would accept the string
//! also depends on things only a matcher can tell: a negative look-ahead must
//! find no match of its body, an atomic group (or possessive repeat) commits
//! to the first match of its body, and a positive look-around whose body was
//! generated as a hint must really hold. This matcher decides those the way
//! CPython's `sre` does: alternatives and repeats are tried in priority order
//! (greedy or lazy), captures are undone on backtracking, look-arounds and
//! atomic groups keep their first success, and a backreference to a group
//! that did not match fails.
//!
//! Matching is written in continuation-passing style and bounded: a step
//! budget and a depth limit make pathological patterns give up (the caller
//! then rejects the test case) instead of hanging or exhausting the stack.

use super::ast::Node;
use super::classes::equal_ignoring_case;

/// Most steps one check may take.
const STEP_BUDGET: usize = 200_000;
/// Deepest nesting of matcher calls (each level is a few stack frames).
const DEPTH_LIMIT: usize = 400;

/// Captured spans by group number (index 0 unused).
pub(super) type Captures = Vec<Option<(usize, usize)>>;

/// What to do after a node matched up to a position: `true` ends the search.
type Continuation<'c, 't> = dyn FnMut(&mut Matcher<'t>, usize) -> bool + 'c;

/// The matcher's state over one string.
pub(super) struct Matcher<'t> {
    text: &'t [u32],
    /// Current captures.
    pub captures: Captures,
    steps: usize,
    depth: usize,
    /// Whether the budget ran out (the result is then unknown).
    pub exhausted: bool,
}

impl<'t> Matcher<'t> {
    /// A matcher over `text` with the given captures.
    pub(super) fn new(text: &'t [u32], captures: Captures) -> Matcher<'t> {
        Matcher {
            text,
            captures,
            steps: 0,
            depth: 0,
            exhausted: false,
        }
    }

    /// Whether `node` matches at `pos` with an end accepted by `accept`
    /// (captures are left as the first accepted match set them).
    pub(super) fn matches(
        &mut self,
        node: &Node,
        pos: usize,
        accept: &mut dyn FnMut(usize) -> bool,
    ) -> bool {
        self.run(node, pos, &mut |_, end| accept(end))
    }

    fn run(&mut self, node: &Node, pos: usize, k: &mut Continuation<'_, 't>) -> bool {
        if self.exhausted {
            return false;
        }
        self.steps += 1;
        if self.steps > STEP_BUDGET || self.depth >= DEPTH_LIMIT {
            self.exhausted = true;
            return false;
        }
        self.depth += 1;
        let result = self.step(node, pos, k);
        self.depth -= 1;
        result
    }

    fn step(&mut self, node: &Node, pos: usize, k: &mut Continuation<'_, 't>) -> bool {
        match node {
            Node::Empty | Node::Anchor(_) if !self.anchor_holds(node, pos) => false,
            Node::Empty | Node::Anchor(_) => k(self, pos),
            Node::Text(text) => {
                let end = pos + text.len();
                if self.text.get(pos..end) == Some(text.as_slice()) {
                    k(self, end)
                } else {
                    false
                }
            }
            Node::Class(class) => match self.text.get(pos) {
                Some(c) if class.matches.contains(*c) => k(self, pos + 1),
                _ => false,
            },
            Node::Group { index, body } => {
                let index = *index;
                self.run(body, pos, &mut |m, end| {
                    let old = m.captures[index];
                    m.captures[index] = Some((pos, end));
                    if k(m, end) {
                        return true;
                    }
                    m.captures[index] = old;
                    false
                })
            }
            Node::Concat(items) => self.sequence(items, pos, k),
            Node::Alt { branches, .. } => {
                for branch in branches {
                    if self.run(branch, pos, k) {
                        return true;
                    }
                    if self.exhausted {
                        return false;
                    }
                }
                false
            }
            Node::Repeat {
                body,
                min,
                max,
                lazy,
                ..
            } => {
                if let Some(count) = self.single_character_run(body, pos, *max) {
                    self.character_repeat(pos, count, *min, *lazy, k)
                } else {
                    self.repeat(body, *min, *max, *lazy, 0, pos, k)
                }
            }
            Node::Atomic(body) => {
                let before = self.captures.clone();
                let mut end = None;
                let matched = self.run(body, pos, &mut |_, e| {
                    end = Some(e);
                    true
                });
                match (matched, end) {
                    (true, Some(end)) => {
                        if k(self, end) {
                            return true;
                        }
                        self.captures = before;
                        false
                    }
                    _ => false,
                }
            }
            Node::Look {
                behind,
                negate,
                body,
                width,
                ..
            } => {
                let before = self.captures.clone();
                let found = if *behind {
                    match pos.checked_sub(*width) {
                        Some(start) => self.run(body, start, &mut |_, e| e == pos),
                        None => false,
                    }
                } else {
                    self.run(body, pos, &mut |_, _| true)
                };
                if self.exhausted {
                    return false;
                }
                if found != *negate {
                    if *negate {
                        self.captures = before.clone();
                    }
                    if k(self, pos) {
                        return true;
                    }
                }
                self.captures = before;
                false
            }
            Node::Backref {
                group,
                ignore_case,
                ascii,
            } => {
                let Some((start, end)) = self.captures.get(*group).copied().flatten() else {
                    return false;
                };
                let n = end - start;
                let Some(here) = self.text.get(pos..pos + n) else {
                    return false;
                };
                let captured = &self.text[start..end];
                let same = captured
                    .iter()
                    .zip(here)
                    .all(|(a, b)| a == b || (*ignore_case && equal_ignoring_case(*a, *b, *ascii)));
                same && k(self, pos + n)
            }
            Node::Conditional { group, yes, no, .. } => {
                let taken = self.captures.get(*group).copied().flatten().is_some();
                self.run(if taken { yes } else { no }, pos, k)
            }
        }
    }

    fn anchor_holds(&self, node: &Node, pos: usize) -> bool {
        match node {
            Node::Anchor(anchor) => anchor.holds(self.text, pos),
            _ => true,
        }
    }

    fn sequence(&mut self, items: &[Node], pos: usize, k: &mut Continuation<'_, 't>) -> bool {
        match items.split_first() {
            None => k(self, pos),
            Some((first, rest)) => self.run(first, pos, &mut |m, p| m.sequence(rest, p, k)),
        }
    }

    /// For a repeat of one character class or literal: how many characters
    /// from `pos` it could take (at most `max`).
    fn single_character_run(&self, body: &Node, pos: usize, max: Option<usize>) -> Option<usize> {
        let fits: &dyn Fn(u32) -> bool = match body {
            Node::Class(class) => &|c| class.matches.contains(c),
            Node::Text(text) if text.len() == 1 => &|c| c == text[0],
            _ => return None,
        };
        let limit = max.unwrap_or(usize::MAX);
        let rest = self.text.get(pos..).unwrap_or(&[]);
        Some(rest.iter().take(limit).take_while(|c| fits(**c)).count())
    }

    fn character_repeat(
        &mut self,
        pos: usize,
        count: usize,
        min: usize,
        lazy: bool,
        k: &mut Continuation<'_, 't>,
    ) -> bool {
        if count < min {
            return false;
        }
        let mut attempt = |m: &mut Matcher<'t>, n: usize| -> Option<bool> {
            m.steps += 1;
            if m.steps > STEP_BUDGET {
                m.exhausted = true;
            }
            if m.exhausted {
                return Some(false);
            }
            k(m, pos + n).then_some(true)
        };
        if lazy {
            for n in min..=count {
                if let Some(result) = attempt(self, n) {
                    return result;
                }
            }
        } else {
            for n in (min..=count).rev() {
                if let Some(result) = attempt(self, n) {
                    return result;
                }
            }
        }
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn repeat(
        &mut self,
        body: &Node,
        min: usize,
        max: Option<usize>,
        lazy: bool,
        count: usize,
        pos: usize,
        k: &mut Continuation<'_, 't>,
    ) -> bool {
        if count < min {
            return self.repeat_once_more(body, min, max, lazy, count, pos, k);
        }
        if lazy {
            k(self, pos)
                || (!self.exhausted && self.repeat_once_more(body, min, max, lazy, count, pos, k))
        } else {
            self.repeat_once_more(body, min, max, lazy, count, pos, k)
                || (!self.exhausted && k(self, pos))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn repeat_once_more(
        &mut self,
        body: &Node,
        min: usize,
        max: Option<usize>,
        lazy: bool,
        count: usize,
        pos: usize,
        k: &mut Continuation<'_, 't>,
    ) -> bool {
        if max.is_some_and(|m| count >= m) {
            return false;
        }
        self.run(body, pos, &mut |m, p| {
            // Like sre, an iteration past the minimum that matched nothing ends the loop.
            if p == pos && count >= min {
                return false;
            }
            m.repeat(body, min, max, lazy, count + 1, p, k)
        })
    }
}
