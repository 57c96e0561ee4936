//! Generating one match path through the pattern tree, and checking it.
//!
//! Generation walks the tree making choices, so strings replay and shrink
//! like any other value: classes are string choices (shrinking toward `0`,
//! `A`, `a`), alternations integer choices (toward the first branch) and
//! repetitions collections (shrinking by deleting repeats). Captures are
//! recorded as the walk goes, so a backreference repeats the captured text
//! and a conditional takes the branch its group decides; a backreference to
//! a group that did not take part rejects the test case, as Python's match
//! would fail.
//!
//! What cannot be decided while the string is still being built is recorded
//! as a [`Check`] and verified once the whole string, padding included, is
//! known: anchors, look-arounds (run by the [`Matcher`] against the final
//! string, with the captures of the moment), and atomic groups (the matcher's
//! first match of the body must be the one generated). A positive
//! look-around may also be made to hold by generating its body in place, as
//! Hypothesis does; the string is then no longer one path of the pattern, so
//! the whole pattern is matched against it instead (in search mode from any
//! start in the draft: a look-behind's body comes before its match). A
//! look-behind reads text that is already final, so its body is generated
//! exactly when that text does not already end with a match. A look-ahead's
//! body is always generated (the string is then matched whole, as above),
//! but not kept in place: its text is what the rest of the pattern produces
//! next ([`Draft::ahead`]). Classes and runs take those characters instead of
//! drawing them (a run ends early where the text goes on with a character it
//! cannot take), alternations draw only among the branches whose text can
//! agree with it, literals and backreferences compare with them. A character
//! what follows cannot produce is dropped: a flexible body (`.*\d`) may still
//! hold, and search mode keeps the dropped characters for just after the
//! match. What is left when the pattern is done is appended, and left out
//! again if the string then does not match (`a(?=c*)`). A body with a
//! positive look-behind in it is generated in place instead: that
//! look-behind's text belongs before the position. Without a positive
//! look-ahead, none of this changes the choices drawn.

use super::ast::{AHEAD_LOOKED_AT, Anchor, Node};
use super::matcher::{Captures, Matcher};
use crate::charset::CharSet;
use crate::choice::{IntegerConstraints, SizeConstraints};
use crate::data::{Collection, StopTest, TestData};
use std::collections::VecDeque;

/// Span label around one alternation: the branch index and the branch's text.
const BRANCH_SPAN: u64 = 0x6765_6973_7410;

/// Something to verify once the whole string is known.
pub(super) enum Check<'n> {
    /// An anchor at a position of the generated text.
    Anchor {
        /// Position in the generated text.
        at: usize,
        /// The assertion.
        anchor: Anchor,
    },
    /// A look-around node at a position, with the captures of that moment.
    Look {
        /// Position in the generated text.
        at: usize,
        /// The `Node::Look`.
        node: &'n Node,
        /// Captures when the look-around was reached.
        captures: Captures,
    },
    /// An atomic group: the matcher's first match of `body` from `start`
    /// must end at `end` with the captures generation recorded.
    Atomic {
        /// Where the group starts.
        start: usize,
        /// Where the generated group ends.
        end: usize,
        /// The group's body.
        body: &'n Node,
        /// Captures before the group.
        before: Captures,
        /// Captures after the group.
        after: Captures,
    },
}

/// A string being built.
pub(super) struct Draft<'n> {
    /// The generated text.
    pub text: Vec<u32>,
    /// Group spans in `text`.
    pub captures: Captures,
    /// What to verify at the end.
    pub checks: Vec<Check<'n>>,
    /// Whether a look-around body was generated in place (see the module doc).
    pub hinted: bool,
    /// Text that positive look-aheads ask the rest of the pattern to produce
    /// next, at `text.len()` onwards.
    pub ahead: VecDeque<u32>,
    /// Look-ahead characters given up because the pattern could not produce
    /// them where they were asked for (see [`Draft::drop_ahead`]).
    pub given_up: Vec<u32>,
}

impl<'n> Draft<'n> {
    /// An empty draft for a pattern with `groups` groups.
    pub(super) fn new(groups: usize) -> Draft<'n> {
        Draft {
            text: Vec::new(),
            captures: vec![None; groups + 1],
            checks: Vec::new(),
            hinted: false,
            ahead: VecDeque::new(),
            given_up: Vec::new(),
        }
    }

    /// Drops the next look-ahead character: the pattern cannot produce it
    /// there. Search mode keeps it for after the match, where it may still
    /// let the look-ahead hold (`(?=.*\d)\w+` followed by a digit).
    fn drop_ahead(&mut self) {
        if let Some(c) = self.ahead.pop_front() {
            self.given_up.push(c);
        }
    }

    /// Appends text the pattern fixes (a literal, a backreference), taking
    /// the look-ahead characters it agrees with and dropping the others.
    fn push_fixed(&mut self, text: &[u32]) {
        for &c in text {
            if self.ahead.front() == Some(&c) {
                self.ahead.pop_front();
            } else {
                self.drop_ahead();
            }
            self.text.push(c);
        }
    }

    /// Appends the next look-ahead character if `set` can produce it; with
    /// `skip`, drops the ones it cannot produce until one fits. A look-ahead
    /// whose text had to be cut holds only if its body is flexible enough
    /// (`.*\d` does, `abc` does not), which the final check decides.
    fn take_ahead(&mut self, set: &CharSet, skip: bool) -> bool {
        while let Some(&c) = self.ahead.front() {
            if set.contains(c) {
                self.ahead.pop_front();
                self.text.push(c);
                return true;
            }
            if !skip {
                return false;
            }
            self.drop_ahead();
        }
        false
    }

    /// The text of the span `start..end`, reading on into the look-ahead
    /// text (a group inside a look-ahead captures text still to come).
    fn span_text(&self, start: usize, end: usize) -> Option<Vec<u32>> {
        let mut out = Vec::with_capacity(end.saturating_sub(start));
        for i in start..end {
            let c = match self.text.get(i) {
                Some(c) => *c,
                None => *self.ahead.get(i - self.text.len())?,
            };
            out.push(c);
        }
        Some(out)
    }

    /// Appends what is left of the look-ahead text, once the pattern is done.
    pub(super) fn finish(&mut self) {
        if !self.ahead.is_empty() {
            self.text.extend(self.ahead.drain(..));
        }
    }
}

/// Generates `node` onto the draft.
pub(super) fn emit<'n>(
    node: &'n Node,
    data: &mut TestData,
    draft: &mut Draft<'n>,
) -> Result<(), StopTest> {
    match node {
        Node::Empty => {}
        Node::Text(text) => draft.push_fixed(text),
        Node::Class(class) => {
            if !draft.take_ahead(&class.generate, true) {
                let c = data.draw_string(
                    class.generate.clone(),
                    SizeConstraints {
                        min_size: 1,
                        max_size: 1,
                    },
                )?;
                draft.text.extend(c);
            }
        }
        Node::Anchor(anchor) => draft.checks.push(Check::Anchor {
            at: draft.text.len(),
            anchor: *anchor,
        }),
        Node::Group { index, body } => {
            let start = draft.text.len();
            emit(body, data, draft)?;
            draft.captures[*index] = Some((start, draft.text.len()));
        }
        Node::Concat(items) => {
            for item in items {
                emit(item, data, draft)?;
            }
        }
        Node::Alt { branches, viable } => {
            // With look-ahead text to produce, only the branches whose text
            // can agree with it (be the start of it, or start with all of
            // it) are drawn from, when any can.
            let fitting: Vec<usize>;
            let choices = if viable.len() > 1 && !draft.ahead.is_empty() {
                let looked_at = draft.ahead.len().min(AHEAD_LOOKED_AT);
                let ahead = &draft.ahead.make_contiguous()[..looked_at];
                fitting = viable
                    .iter()
                    .copied()
                    .filter(|&b| branches[b].ends_in(ahead, 1) != 0)
                    .collect();
                if fitting.is_empty() { viable } else { &fitting }
            } else {
                viable
            };
            match choices.as_slice() {
                [] => return Err(data.reject()),
                [only] => emit(&branches[*only], data, draft)?,
                _ => {
                    data.start_span(BRANCH_SPAN);
                    let i = data
                        .draw_integer(IntegerConstraints::bounded(0, choices.len() as i128 - 1))?;
                    emit(&branches[choices[i as usize]], data, draft)?;
                    data.stop_span(false);
                }
            }
        }
        Node::Repeat {
            body,
            min,
            max,
            body_viable,
            ..
        } => {
            if !*body_viable {
                if *min > 0 {
                    return Err(data.reject());
                }
            } else if let Node::Class(class) = body.as_ref() {
                // A run of one class (`[a-z]+`, `\d{3}`) is one string choice,
                // after the look-ahead text it can take.
                let max = max.unwrap_or(usize::MAX);
                let mut taken = 0;
                while taken < max && draft.take_ahead(&class.generate, taken < *min) {
                    taken += 1;
                }
                // Where the look-ahead text goes on with a character the run
                // cannot take (once it is long enough), the run ends there.
                if draft.ahead.is_empty() && (taken < max || taken == 0) {
                    let run = data.draw_string(
                        class.generate.clone(),
                        SizeConstraints {
                            min_size: min.saturating_sub(taken),
                            max_size: max - taken,
                        },
                    )?;
                    draft.text.extend(run);
                }
            } else if Some(*min) == *max {
                for _ in 0..*min {
                    emit(body, data, draft)?;
                }
            } else {
                let mut repeats = Collection::new(*min, *max).without_scaling();
                while repeats.more(data)? {
                    emit(body, data, draft)?;
                }
            }
        }
        Node::Atomic(body) => {
            let before = draft.captures.clone();
            let start = draft.text.len();
            emit(body, data, draft)?;
            draft.checks.push(Check::Atomic {
                start,
                end: draft.text.len(),
                body,
                before,
                after: draft.captures.clone(),
            });
        }
        Node::Look {
            behind,
            negate,
            body,
            body_viable,
            ..
        } => {
            let at = draft.text.len();
            draft.checks.push(Check::Look {
                at,
                node,
                captures: draft.captures.clone(),
            });
            if *negate || !*body_viable {
                return Ok(());
            }
            if *behind {
                // The text a look-behind reads is already generated and
                // final: leave it alone when the assertion holds, and
                // otherwise generate the body, the only way left to a match.
                if !look_holds(&draft.text, node, at, draft.captures.clone()) {
                    draft.hinted = true;
                    emit(body, data, draft)?;
                }
            } else if body.has_positive_look_behind() {
                // A look-behind's body generated inside would come before
                // this position, not after it: the body stays in place.
                draft.hinted = true;
                emit(body, data, draft)?;
            } else {
                // The body's text (following any earlier look-ahead's) is
                // what comes next: the rest of the pattern produces it.
                draft.hinted = true;
                emit(body, data, draft)?;
                let mut next: VecDeque<u32> = draft.text.drain(at..).collect();
                next.extend(draft.ahead.drain(..));
                draft.ahead = next;
            }
        }
        Node::Backref { group, .. } => match draft.captures.get(*group).copied().flatten() {
            Some((start, end)) => match draft.span_text(start, end) {
                Some(copy) => draft.push_fixed(&copy),
                // Captured inside a look-ahead whose text was given up.
                None => return Err(data.reject()),
            },
            None => return Err(data.reject()),
        },
        Node::Conditional {
            group,
            yes,
            no,
            yes_viable,
            no_viable,
        } => {
            let taken = draft.captures.get(*group).copied().flatten().is_some();
            let (branch, viable) = if taken {
                (yes, yes_viable)
            } else {
                (no, no_viable)
            };
            if !*viable {
                return Err(data.reject());
            }
            emit(branch, data, draft)?;
        }
    }
    Ok(())
}

/// Whether `left + draft.text + right` is a string Python's `re` accepts:
/// a full match of `root` with `fullmatch`, else a match starting after
/// `left` (anywhere in the draft once a body was generated in place).
/// Giving up (the matcher's budget) counts as no.
pub(super) fn verify(
    root: &Node,
    draft: &Draft<'_>,
    left: &[u32],
    right: &[u32],
    fullmatch: bool,
) -> bool {
    let mut text = Vec::with_capacity(left.len() + draft.text.len() + right.len());
    text.extend_from_slice(left);
    text.extend_from_slice(&draft.text);
    text.extend_from_slice(right);
    let offset = left.len();
    let shift = |captures: &Captures| -> Captures {
        captures
            .iter()
            .map(|c| c.map(|(a, b)| (a + offset, b + offset)))
            .collect()
    };
    if draft.hinted {
        let mut matcher = Matcher::new(&text, vec![None; draft.captures.len()]);
        let len = text.len();
        if fullmatch {
            let found = matcher.matches(root, 0, &mut |end| end == len);
            return found && !matcher.exhausted;
        }
        // A look-behind's body generated in place comes before the match it
        // allows (`(?<=a)b` gives "ab", matched from "b"): any match that
        // starts in the draft will do, as Python's search would find one.
        // The starts share one matcher, so one budget.
        for start in offset..=offset + draft.text.len() {
            matcher.captures = vec![None; draft.captures.len()];
            if matcher.matches(root, start, &mut |_| true) {
                return !matcher.exhausted;
            }
            if matcher.exhausted {
                return false;
            }
        }
        return false;
    }
    draft.checks.iter().all(|check| match check {
        Check::Anchor { at, anchor } => anchor.holds(&text, at + offset),
        Check::Look { at, node, captures } => look_holds(&text, node, at + offset, shift(captures)),
        Check::Atomic {
            start,
            end,
            body,
            before,
            after,
        } => {
            let mut matcher = Matcher::new(&text, shift(before));
            let mut first = None;
            matcher.matches(body, start + offset, &mut |e| {
                first = Some(e);
                true
            });
            !matcher.exhausted && first == Some(end + offset) && matcher.captures == shift(after)
        }
    })
}

/// Whether the look-around `node` holds at `at` in `text` with `captures`.
/// Giving up (the matcher's budget) counts as no.
fn look_holds(text: &[u32], node: &Node, at: usize, captures: Captures) -> bool {
    let mut matcher = Matcher::new(text, captures);
    let holds = matcher.matches(node, at, &mut |_| true);
    holds && !matcher.exhausted
}
