//! Reshaping passes: moves that make one choice *less* simple so that the
//! test takes another path, which may make fewer choices (a shorter sequence
//! is simpler whatever its values). A gate drawn below a threshold that
//! hides a pick, a `one_of` whose later branch is shorter, a flag that skips
//! a loop: none of these shrink by lowering values alone. They run in the
//! polish round only (see [`Shrinker::shrink`](crate::shrink::Shrinker::shrink)):
//! most raises change nothing and each costs a test case.

use super::{closes_collection, decides_element};
use crate::choice::{ChoiceNode, ChoiceValue, Constraints};
use crate::shrink::Shrinker;

/// How many choices after a raised one are tried raised too, or deleted,
/// when the raise changed the path but did not shorten it on its own: what
/// the new path reads wrongly sits right after the switch.
const REPAIR_WINDOW: usize = 8;

/// The widest integer range whose values are raised: selectors, gates and
/// small counts; raising a value drawn from a wide range is a value change,
/// not a change of path.
const MAX_RAISED_RANGE: u128 = 255;

/// How many raises in a row may leave the path as it was (or only make it
/// longer) before the pass gives up for this round: selectors and gates are
/// drawn early, and every raise costs a test case. Eight reach a gate drawn
/// after a conversion, five flags and a width kind (`sprintf`'s precision
/// coin); over the shrinking challenges they cost binheap 6 test cases a
/// shrink more than three did.
const MAX_FRUITLESS_RAISES: usize = 8;

/// Raises each choice that may select a path (a boolean false, an integer in
/// a small range) to its least simple value, and keeps the result if its
/// replay makes fewer choices and still fails. The least simple value,
/// because a gate that hides draws below a threshold (`if coin < 50 {
/// pick }`) must jump past it, and a `one_of`'s or `sampled_from`'s last
/// alternative is as likely to be the short one as the next; the other
/// passes then bring the raised value back down as far as it goes.
///
/// When a raise changes the path without shortening it enough to fail, the
/// new path usually needs one more change right after the switch: a choice
/// it reads as the simplest value raised too (a `one_of` whose short branch
/// must hold `true`), or a choice the old path made and the new one does
/// not deleted (libhegel's `try_shortening_via_increment`), or, last, every
/// choice after the raised one far from its simplest value in fewer choices
/// than the example (a `one_of` raised into a nested `one_of` whose last
/// branch is short and must hold `true`).
pub(in crate::shrink) fn raise_to_shorten(s: &mut Shrinker) {
    if !s.polish {
        return;
    }
    let mut fruitless = 0;
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() && fruitless < MAX_FRUITLESS_RAISES {
        // Raising a collection's "no more" only draws another element.
        if decides_element(s, i) || closes_collection(s, i) {
            i += 1;
            continue;
        }
        if let Some(raised) = raised_value(&s.best.nodes[i]) {
            let simplest = s.best.nodes[i].value == s.best.nodes[i].constraints.simplest();
            match raise_at(s, i, raised) {
                Raised::Improved => fruitless = 0,
                Raised::PathChanged => {}
                // A pick left at its simplest value (a name, an operator)
                // says nothing of the gates after it; a value the failure
                // holds above its simplest does (the test reads it).
                Raised::Unchanged if simplest => {}
                Raised::Unchanged | Raised::Fruitless => fruitless += 1,
            }
        }
        i += 1;
    }
}

/// The value a choice is raised to: the last of its simplicity order (true
/// for a boolean), for a free boolean or an integer in a small range.
fn raised_value(node: &ChoiceNode) -> Option<ChoiceValue> {
    if node.forced {
        return None;
    }
    match (&node.value, &node.constraints) {
        (ChoiceValue::Boolean(false), Constraints::Boolean { p }) if *p > 0.0 => {
            Some(ChoiceValue::Boolean(true))
        }
        (ChoiceValue::Integer(v), Constraints::Integer(c)) => {
            let c = c.get();
            let range = c.max?.abs_diff(c.min?);
            if range > MAX_RAISED_RANGE || c.index_of(*v) >= range {
                return None;
            }
            c.value_at(range).map(ChoiceValue::Integer)
        }
        _ => None,
    }
}

/// What raising one choice did.
enum Raised {
    /// The example improved.
    Improved,
    /// The replay took another path, no longer than the example, that did
    /// not fail (and no repair after the switch made it fail).
    PathChanged,
    /// The replay took a path that needs more choices, or the test
    /// rejected it.
    Fruitless,
    /// The replay read every choice as before (the raised choice is a
    /// value, not a selector), or the raise did not run (seen before, or
    /// known to the choice tree).
    Unchanged,
}

/// Tries the best example with choice `i` raised to `raised`, then (if the
/// path changed) with one more choice in the window after it raised, then
/// with one span or choice there deleted.
fn raise_at(s: &mut Shrinker, i: usize, raised: ChoiceValue) -> Raised {
    let mut candidate = s.best.choices();
    if i >= candidate.len() {
        return Raised::Fruitless;
    }
    candidate[i] = raised;
    if s.consider_reshaped(candidate.clone()) {
        return Raised::Improved;
    }
    // Worth repairing only if the raise took another path that did not run
    // past the candidate's end: a path that needs more choices (a
    // collection that goes on) is not made shorter by a change here.
    // A raise the test rejected (a filter that ran out of attempts on the
    // values the new path misread) is not repaired: over the shrinking
    // challenges those repairs cost binheap 11 test cases a shrink and never
    // made one fail.
    if s.last_run.as_ref().is_some_and(|run| run.invalid) {
        return Raised::Fruitless;
    }
    let Some(realized) = s.last_run.as_mut().and_then(|run| run.realized.take()) else {
        return Raised::Fruitless;
    };
    if realized == candidate {
        return Raised::Unchanged;
    }
    if realized.len() > candidate.len() {
        return Raised::Fruitless;
    }
    let window_end = candidate.len().min(i + 1 + REPAIR_WINDOW);
    // The new path's own choices, one of them raised: the replay read them
    // from the old path's values, and the simplest value a misfit became
    // may not be what fails.
    for j in i + 1..window_end.min(realized.len()) {
        if s.exhausted() {
            return Raised::PathChanged;
        }
        let Some(node) = s.best.nodes.get(j) else {
            break;
        };
        let raised_next = match &realized[j] {
            ChoiceValue::Boolean(false) => Some(ChoiceValue::Boolean(true)),
            _ if node.value == realized[j] => raised_value(node),
            _ => None,
        };
        if let Some(value) = raised_next {
            let mut twice = realized.clone();
            twice[j] = value;
            if s.consider_reshaped(twice) {
                return Raised::Improved;
            }
        }
    }
    let mut regions: Vec<(usize, usize)> = s
        .best
        .spans
        .iter()
        .filter(|sp| sp.start > i && sp.start < window_end && sp.start < sp.end)
        .filter(|sp| sp.end <= candidate.len())
        .map(|sp| (sp.start, sp.end))
        .collect();
    regions.extend((i + 1..window_end).map(|j| (j, j + 1)));
    let mut tried = std::collections::HashSet::new();
    for (start, end) in regions {
        if s.exhausted() {
            break;
        }
        if !tried.insert((start, end)) {
            continue;
        }
        let mut shorter = candidate.clone();
        shorter.drain(start..end);
        if s.consider_reshaped(shorter) {
            return Raised::Improved;
        }
    }
    // The new path's choices far from their simplest values, in fewer
    // choices than the example: a `one_of` raised into another `one_of`
    // whose short branch is its last, holding `true` (the choices the old
    // path left there are read as the simplest alternative).
    if s.consider_far(candidate[..=i].to_vec(), candidate.len() - 1) {
        return Raised::Improved;
    }
    Raised::PathChanged
}
