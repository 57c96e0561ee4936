//! Regeneration: a choice that selects a path (a `one_of`'s branch, an
//! explicit `branch` draw) lowered to its simplest value, with the choices
//! after it made afresh. The lower path reads the choices after the selector
//! under other constraints, so the old values mean nothing there, and the
//! simplest ones the replay fills in seldom fail (branch 0 fails only for
//! `x >= T`, branch 1 always, so every lowering that keeps the rest of the
//! example or fills in simplest values passes): values far from the simplest
//! may (a threshold crossed from above). The other passes then shrink them
//! down to where the failure starts.
//!
//! A string (or byte string) the other passes left above its simplest value
//! is emptied the same way: it may fail only together with what follows as
//! it stands, and a value far from the simplest after it may fail alone.
//!
//! Polish round only, and only in the first one and after one where it
//! improved the example: every try costs a test case, and most selectors are
//! already as low as they go.

use crate::choice::{ChoiceValue, Constraints, IntegerConstraints};
use crate::shrink::Shrinker;
use crate::tree::same_kind;

/// The highest selector (as its index in simplicity order) that is lowered:
/// alternatives are few.
const MAX_SELECTOR_INDEX: u128 = 10;

/// The widest integer range a selector is drawn from: a value drawn from a
/// wide range is data, not a choice of path.
const MAX_SELECTOR_RANGE: u128 = 255;

/// Sets each small integer choice that `minimize_choices` could not lower
/// (keeping the choices after it) to each simpler value in turn, the
/// simplest first, with the choices after it far from their simplest values
/// ([`crate::choice::Constraints::far_value`]); keeps the result if it fails.
pub(in crate::shrink) fn lower_and_regenerate(s: &mut Shrinker) {
    if !s.polish || !s.regenerate {
        return;
    }
    let improvements = s.improvements;
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        if let Some(simplest) = unshrunk_text(s, i) {
            let mut lowered = s.best.choices();
            lowered[i] = simplest;
            lowered.truncate(i + 1);
            let max_choices = s.best.nodes.len();
            s.consider_far(lowered, max_choices);
        } else if let Some((c, index)) = selector(s, i) {
            // Each value below it, the simplest first: the alternative whose
            // far values fail need not be the first.
            for lower in 0..index {
                let Some(value) = c.value_at(lower) else {
                    break;
                };
                let mut lowered = s.best.choices();
                lowered[i] = ChoiceValue::Integer(value);
                // A continuation longer than the best example is never simpler.
                let max_choices = s.best.nodes.len();
                if switches_path(s, i, &lowered)
                    && (s.consider_far(lowered[..=i].to_vec(), max_choices)
                        || splice_far_choice(s, i)
                        || s.exhausted())
                {
                    break;
                }
                if let Some(j) = parallel_divergence(s, i, &lowered)
                    && continue_randomly(s, &lowered[..j])
                {
                    break;
                }
            }
        }
        i += 1;
    }
    s.regenerate = s.improvements > improvements;
}

/// Whether the test may read the choices after choice `i` differently with
/// `lowered` (the best example with choice `i` lowered): unless the choice
/// tree knows that replaying `lowered` ends right after `i` (no continuation
/// can change that), or makes the next choice under the constraints the best
/// example's next choice has (the path did not switch there).
fn switches_path(s: &mut Shrinker, i: usize, lowered: &[ChoiceValue]) -> bool {
    if s.replay.known_length(lowered).is_some_and(|n| n <= i + 1) {
        return false;
    }
    let Some(next) = s.best.nodes.get(i + 1) else {
        return true;
    };
    match s.replay.constraints_after(&lowered[..=i]) {
        Some(c) => !same_kind(&c, &next.constraints),
        None => true,
    }
}

/// Where the best example with choice `i` lowered (`lowered`, the choices
/// after it kept) first reads a choice under other constraints than the
/// best example does, if the choice tree knows that replay and it makes as
/// many choices as the best example: the lowered selector took a parallel
/// branch, one that reads as many values as the old one, but from other
/// ranges (`if branch == 0 { y in 0..=9999 } else { a: i64 }`), possibly
/// after some it reads alike. Its failures may lie in a window of those
/// ranges (`9000 <= y <= 9500`) that neither the old values, nor the
/// simplest, nor the far ones reach.
///
/// Only for examples of at most [`MAX_PARALLEL_LENGTH`] choices: the tree
/// is walked afresh for each choice compared.
fn parallel_divergence(s: &mut Shrinker, i: usize, lowered: &[ChoiceValue]) -> Option<usize> {
    let length = s.best.nodes.len();
    if length > MAX_PARALLEL_LENGTH || s.replay.known_length(lowered) != Some(length) {
        return None;
    }
    for j in i + 1..length {
        let c = s.replay.constraints_after(&lowered[..j])?;
        if !same_kind(&c, &s.best.nodes[j].constraints) {
            return Some(j);
        }
    }
    None
}

/// The longest example [`parallel_divergence`] looks at (libhegel's
/// mutation pass stops at 32 choices): random continuations seldom make a
/// long one simpler.
const MAX_PARALLEL_LENGTH: usize = 64;

/// How many random continuations a parallel branch gets: a window of a
/// twentieth of a range is met with probability 0.8.
const RANDOM_CONTINUATIONS: usize = 32;

/// Runs `prefix` (a lowered selector and the choices after it the new
/// branch reads alike) with random choices after it, up to
/// [`RANDOM_CONTINUATIONS`] times, no longer than the best example; true
/// once one became the new best.
fn continue_randomly(s: &mut Shrinker, prefix: &[ChoiceValue]) -> bool {
    let max_choices = s.best.nodes.len();
    for _ in 0..RANDOM_CONTINUATIONS {
        if s.consider_random(prefix.to_vec(), max_choices) {
            return true;
        }
        if s.exhausted() {
            break;
        }
    }
    false
}

/// Choice `i`'s constraints and its value's index in their simplicity
/// order, if it is a free integer from a small range a few steps above its
/// simplest value, that could not be lowered on its own.
fn selector(s: &Shrinker, i: usize) -> Option<(IntegerConstraints, u128)> {
    let node = s.best.nodes.get(i)?;
    match (&node.value, &node.constraints) {
        (ChoiceValue::Integer(v), Constraints::Integer(c))
            if !node.forced && s.stuck.contains(&(i, *v)) =>
        {
            let c = c.get();
            let range = c.max?.abs_diff(c.min?);
            let index = c.index_of(*v);
            (range <= MAX_SELECTOR_RANGE && (1..=MAX_SELECTOR_INDEX).contains(&index))
                .then_some((c, index))
        }
        _ => None,
    }
}

/// Choice `i`'s simplest value, if it is a free string or byte string that
/// the passes before left above it: one that only fails together with the
/// values after it as they are (`s.len() >= 4 || x != 0.0` at `("0000",
/// 0.0)`), where emptying it needs another value raised at the same time.
fn unshrunk_text(s: &Shrinker, i: usize) -> Option<ChoiceValue> {
    let node = s.best.nodes.get(i)?;
    if node.forced || !matches!(node.value, ChoiceValue::String(_) | ChoiceValue::Bytes(_)) {
        return None;
    }
    let simplest = node.constraints.simplest();
    (node.value != simplest).then_some(simplest)
}

/// After a far continuation from a selector lowered at `i` did not fail:
/// if its path was as long as the best example's, the best example with its
/// first `i + 2` choices taken from that path (the selector lowered, the
/// first choice of the new branch far from its simplest value) and the rest
/// kept. The new branch read as many choices as the old one, so what came
/// after the old branch lines up again (`(one of five delta kinds, k)`: the
/// kind that holds a wide millisecond count, that count far, and `k` as it
/// was, where a far `k` too overflows the product). True if it became the
/// new best.
fn splice_far_choice(s: &mut Shrinker, i: usize) -> bool {
    let Some(far) = s.last_run.as_mut().and_then(|run| run.realized.take()) else {
        return false;
    };
    if far.len() != s.best.nodes.len() || i + 2 >= far.len() {
        return false;
    }
    let mut spliced = s.best.choices();
    spliced[..i + 2].clone_from_slice(&far[..i + 2]);
    s.consider(spliced)
}
