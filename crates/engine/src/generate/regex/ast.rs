//! The parsed pattern: one tree that both the generator and the matcher walk.
//!
//! Nodes keep Python's meaning (captures, backreferences, look-around, atomic
//! groups) so that the matcher can decide exactly what Python's `re` would.
//! Each character class carries two sets: what it *matches* (for checking)
//! and what it may *generate* (the same, within the alphabet). After parsing,
//! [`Node::settle`] records which parts can be generated at all, so
//! generation only ever takes branches that can produce a string.

use super::classes::{NEWLINE, ascii_word, unicode_word};
use crate::charset::CharSet;
use std::sync::Arc;

/// A zero-width assertion on the position between two characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Anchor {
    /// `\A`, or `^` without MULTILINE: the start of the string.
    Start,
    /// `^` under MULTILINE: the start, or just after a newline.
    StartLine,
    /// `$` without MULTILINE: the end, or just before a final newline.
    End,
    /// `$` under MULTILINE: the end, or just before a newline.
    EndLine,
    /// `\Z`: the very end.
    EndString,
    /// `\b` (ASCII word characters under the `a` flag).
    Boundary {
        /// Under the `a` flag.
        ascii: bool,
    },
    /// `\B`.
    NotBoundary {
        /// Under the `a` flag.
        ascii: bool,
    },
}

impl Anchor {
    /// Whether the assertion holds at position `p` of `text`.
    pub(super) fn holds(self, text: &[u32], p: usize) -> bool {
        let len = text.len();
        let before = p.checked_sub(1).and_then(|i| text.get(i)).copied();
        let after = text.get(p).copied();
        let newline = Some(NEWLINE);
        let word = |ascii: bool, c: Option<u32>| {
            if ascii {
                ascii_word(c)
            } else {
                unicode_word(c)
            }
        };
        match self {
            Anchor::Start => p == 0,
            Anchor::StartLine => p == 0 || before == newline,
            Anchor::End => p == len || (p + 1 == len && after == newline),
            Anchor::EndLine => p == len || after == newline,
            Anchor::EndString => p == len,
            Anchor::Boundary { ascii } => word(ascii, before) != word(ascii, after),
            Anchor::NotBoundary { ascii } => word(ascii, before) == word(ascii, after),
        }
    }
}

/// One character from a set.
#[derive(Clone, Debug)]
pub(super) struct CharClass {
    /// What the class matches.
    pub matches: Arc<CharSet>,
    /// What generation draws from: `matches` within the alphabet.
    pub generate: Arc<CharSet>,
}

/// A node of the pattern tree.
#[derive(Clone, Debug)]
pub(super) enum Node {
    /// Matches the empty string.
    Empty,
    /// Exact text (case-sensitive; IGNORECASE literals are classes).
    Text(Vec<u32>),
    /// One character from a class.
    Class(CharClass),
    /// A zero-width assertion.
    Anchor(Anchor),
    /// A capturing group.
    Group {
        /// Group number (1-based).
        index: usize,
        /// What it matches.
        body: Box<Node>,
    },
    /// Nodes one after another.
    Concat(Vec<Node>),
    /// Alternatives, tried in order.
    Alt {
        /// The branches.
        branches: Vec<Node>,
        /// Indices of the branches that can be generated (see [`Node::settle`]).
        viable: Vec<usize>,
    },
    /// A repeated node (possessive repeats are atomic groups around a greedy one).
    Repeat {
        /// What is repeated.
        body: Box<Node>,
        /// Fewest repetitions.
        min: usize,
        /// Most repetitions, if bounded.
        max: Option<usize>,
        /// Lazy (`*?`): fewest repetitions first when matching.
        lazy: bool,
        /// Whether the body can be generated.
        body_viable: bool,
    },
    /// `(?>...)`: once matched, never backtracked into.
    Atomic(Box<Node>),
    /// Look-ahead or look-behind.
    Look {
        /// Look-behind rather than look-ahead.
        behind: bool,
        /// Negative (`(?!...)`, `(?<!...)`).
        negate: bool,
        /// The asserted pattern.
        body: Box<Node>,
        /// The body's fixed width (look-behind only).
        width: usize,
        /// Whether the body can be generated (a hint for positive look-around).
        body_viable: bool,
    },
    /// `\1`, `(?P=name)`: the text a group captured.
    Backref {
        /// Group number.
        group: usize,
        /// Compared ignoring case (IGNORECASE).
        ignore_case: bool,
        /// Case folding is ASCII-only (the `a` flag).
        ascii: bool,
    },
    /// `(?(1)yes|no)`: `yes` if the group matched, else `no`.
    Conditional {
        /// Group number.
        group: usize,
        /// Taken when the group matched.
        yes: Box<Node>,
        /// Taken otherwise.
        no: Box<Node>,
        /// Whether `yes` can be generated.
        yes_viable: bool,
        /// Whether `no` can be generated.
        no_viable: bool,
    },
}

/// A set of positions in text still to come, as bits (see [`Node::ends_in`]).
pub(super) type Positions = u128;

/// How many characters of text still to come [`Node::ends_in`] looks at.
pub(super) const AHEAD_LOOKED_AT: usize = 100;

/// Applies `step` to each position in `from` below `len` and unites the
/// results; the position `len` (past the text) stays.
fn each(from: Positions, len: usize, mut step: impl FnMut(usize) -> Positions) -> Positions {
    let past = 1u128 << len;
    let mut out = from & past;
    let mut rest = from & (past - 1);
    while rest != 0 {
        let p = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        out |= step(p);
    }
    out
}

/// Widths of matches as (shortest, longest if bounded).
pub(super) type Width = (usize, Option<usize>);

impl Node {
    /// Records which parts can be generated within `alphabet` (every class
    /// already has its `generate` set) and returns the length of the
    /// shortest string the node generates, or `None` if it generates none.
    pub(super) fn settle(&mut self, alphabet: Option<&CharSet>) -> Option<usize> {
        match self {
            Node::Empty | Node::Anchor(_) | Node::Backref { .. } => Some(0),
            Node::Text(text) => alphabet
                .is_none_or(|a| text.iter().all(|c| a.contains(*c)))
                .then_some(text.len()),
            Node::Class(class) => (!class.generate.is_empty()).then_some(1),
            Node::Group { body, .. } | Node::Atomic(body) => body.settle(alphabet),
            Node::Concat(items) => {
                let mut total = Some(0usize);
                for item in items {
                    let len = item.settle(alphabet);
                    total = match (total, len) {
                        (Some(t), Some(l)) => Some(t.saturating_add(l)),
                        _ => None,
                    };
                }
                total
            }
            Node::Alt { branches, viable } => {
                viable.clear();
                let mut shortest: Option<usize> = None;
                for (i, branch) in branches.iter_mut().enumerate() {
                    if let Some(len) = branch.settle(alphabet) {
                        viable.push(i);
                        shortest = Some(shortest.map_or(len, |s| s.min(len)));
                    }
                }
                shortest
            }
            Node::Repeat {
                body,
                min,
                max,
                body_viable,
                ..
            } => {
                let len = body.settle(alphabet);
                *body_viable = len.is_some() && *max != Some(0);
                match len {
                    _ if *max == Some(0) => Some(0),
                    None if *min == 0 => Some(0),
                    None => None,
                    Some(l) => Some(l.saturating_mul(*min)),
                }
            }
            Node::Look {
                body,
                body_viable,
                negate,
                ..
            } => {
                *body_viable = body.settle(alphabet).is_some();
                // `(?!)`, `(?<!a?)`: the body matches wherever it is tried,
                // so the assertion never holds.
                (!(*negate && body.matches_empty_anywhere())).then_some(0)
            }
            Node::Conditional {
                yes,
                no,
                yes_viable,
                no_viable,
                ..
            } => {
                let y = yes.settle(alphabet);
                let n = no.settle(alphabet);
                *yes_viable = y.is_some();
                *no_viable = n.is_some();
                match (y, n) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    /// Whether a positive look-behind is in this node (its body, generated
    /// in place, is text before the position it asserts at).
    pub(super) fn has_positive_look_behind(&self) -> bool {
        match self {
            Node::Look {
                behind: true,
                negate: false,
                ..
            } => true,
            Node::Look { body, .. } | Node::Group { body, .. } | Node::Atomic(body) => {
                body.has_positive_look_behind()
            }
            Node::Repeat { body, .. } => body.has_positive_look_behind(),
            Node::Concat(items)
            | Node::Alt {
                branches: items, ..
            } => items.iter().any(Node::has_positive_look_behind),
            Node::Conditional { yes, no, .. } => {
                yes.has_positive_look_behind() || no.has_positive_look_behind()
            }
            Node::Empty
            | Node::Text(_)
            | Node::Class(_)
            | Node::Anchor(_)
            | Node::Backref { .. } => false,
        }
    }

    /// Where in `ahead` (at most [`AHEAD_LOOKED_AT`] characters of text
    /// still to come) text generated for this node may end, starting from
    /// any of the positions in `from` (a set of positions as bits; the bit
    /// of `ahead.len()` stands for "past all of it", where anything goes).
    /// No bits: nothing this node generates agrees with `ahead`.
    /// Conservative: where that depends on context (backreferences,
    /// conditionals), every position from the first onwards.
    pub(super) fn ends_in(&self, ahead: &[u32], from: Positions) -> Positions {
        let past = 1u128 << ahead.len();
        match self {
            Node::Empty | Node::Anchor(_) | Node::Look { .. } => from,
            Node::Text(text) => each(from, ahead.len(), |p| {
                let mut at = p;
                for &c in text {
                    match ahead.get(at) {
                        None => return past,
                        Some(&a) if a == c => at += 1,
                        Some(_) => return 0,
                    }
                }
                1 << at
            }),
            Node::Class(class) => each(from, ahead.len(), |p| match ahead.get(p) {
                None => past,
                Some(&a) if class.generate.contains(a) => 1 << (p + 1),
                Some(_) => 0,
            }),
            Node::Group { body, .. } | Node::Atomic(body) => body.ends_in(ahead, from),
            Node::Concat(items) => items
                .iter()
                .try_fold(from, |at, item| {
                    let next = item.ends_in(ahead, at);
                    (next != 0).then_some(next)
                })
                .unwrap_or(0),
            Node::Alt { branches, viable } => viable
                .iter()
                .fold(0, |all, &b| all | branches[b].ends_in(ahead, from)),
            Node::Repeat {
                body,
                min,
                max,
                body_viable,
                ..
            } => {
                if !*body_viable {
                    return if *min == 0 { from } else { 0 };
                }
                let mut ends = 0;
                // Where `count` repeats may end.
                let mut at = from;
                let mut count = 0usize;
                loop {
                    if count >= *min {
                        ends |= at;
                    }
                    if at == 0 || max.is_some_and(|m| count >= m) {
                        break;
                    }
                    let next = body.ends_in(ahead, at);
                    if next == at {
                        // Every further repeat ends where this one did.
                        ends |= at;
                        break;
                    }
                    at = next;
                    count += 1;
                }
                ends
            }
            Node::Backref { .. } | Node::Conditional { .. } => {
                if from == 0 {
                    0
                } else {
                    // Every position from the lowest one in `from`.
                    let lowest = from.trailing_zeros();
                    let upto = (past << 1).wrapping_sub(1);
                    upto & !((1u128 << lowest) - 1)
                }
            }
        }
    }

    /// Whether the node matches the empty string at any position, whatever
    /// surrounds it (conservatively: `false` when that depends on context).
    fn matches_empty_anywhere(&self) -> bool {
        match self {
            Node::Empty => true,
            Node::Text(text) => text.is_empty(),
            Node::Group { body, .. } | Node::Atomic(body) => body.matches_empty_anywhere(),
            Node::Concat(items) => items.iter().all(Node::matches_empty_anywhere),
            Node::Alt { branches, .. } => branches.iter().any(Node::matches_empty_anywhere),
            Node::Repeat { body, min, .. } => *min == 0 || body.matches_empty_anywhere(),
            Node::Class(_)
            | Node::Anchor(_)
            | Node::Look { .. }
            | Node::Backref { .. }
            | Node::Conditional { .. } => false,
        }
    }

    /// The widths of the strings this node matches; `groups` gives the
    /// widths of closed groups (for backreferences).
    pub(super) fn width(&self, groups: &[Option<Width>]) -> Width {
        let add = |a: Option<usize>, b: Option<usize>| a.zip(b).and_then(|(x, y)| x.checked_add(y));
        match self {
            Node::Empty | Node::Anchor(_) | Node::Look { .. } => (0, Some(0)),
            Node::Text(text) => (text.len(), Some(text.len())),
            Node::Class(_) => (1, Some(1)),
            Node::Group { body, .. } | Node::Atomic(body) => body.width(groups),
            Node::Concat(items) => items.iter().fold((0, Some(0)), |(lo, hi), item| {
                let (l, h) = item.width(groups);
                (lo.saturating_add(l), add(hi, h))
            }),
            Node::Alt { branches, .. } => {
                let mut widths = branches.iter().map(|b| b.width(groups));
                let first = widths.next().unwrap_or((0, Some(0)));
                widths.fold(first, |(lo, hi), (l, h)| {
                    (lo.min(l), hi.zip(h).map(|(a, b)| a.max(b)))
                })
            }
            Node::Repeat { body, min, max, .. } => {
                let (l, h) = body.width(groups);
                let hi = match (h, max) {
                    (Some(0), _) => Some(0),
                    (Some(h), Some(m)) => h.checked_mul(*m),
                    _ => None,
                };
                (l.saturating_mul(*min), hi)
            }
            Node::Backref { group, .. } => {
                groups.get(*group).copied().flatten().unwrap_or((0, None))
            }
            Node::Conditional { yes, no, .. } => {
                let (a, b) = (yes.width(groups), no.width(groups));
                (a.0.min(b.0), a.1.zip(b.1).map(|(x, y)| x.max(y)))
            }
        }
    }
}
