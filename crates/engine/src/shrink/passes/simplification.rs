//! Simplification passes: whole spans set to their simplest values in one
//! test case each (a structure whose values do not matter is zeroed at once,
//! and equal simplest values make later deletions succeed).

use super::{ElementStarts, find_integer, sibling_chain};
use crate::choice::ChoiceValue;
use crate::shrink::Shrinker;

/// Replaces every choice in a span with its simplest value, except the
/// choices that decided to draw collection elements: turned `false`, one
/// ends its collection there and the choices after it are misread (the
/// deletion passes remove elements). It runs first: zeroing a whole
/// structure, or each element in turn, is one test case each, and values at
/// their simplest make later deletions succeed (duplicates everywhere).
pub(in crate::shrink) fn simplify_spans(s: &mut Shrinker) {
    let mut starts = ElementStarts::default();
    let mut i = 0;
    while i < s.best.spans.len() && !s.exhausted() {
        let span = s.best.spans[i].clone();
        i += 1;
        if span.end > s.best.nodes.len() || span.start >= span.end {
            continue;
        }
        let choices = s.best.choices();
        let mut candidate = choices.clone();
        simplify_range(s, &mut starts, &mut candidate, span.start..span.end);
        if candidate == choices || !s.consider(candidate) {
            continue;
        }
        // The siblings after it too, as many as work at once (a long list
        // whose values do not matter is zeroed in a few test cases). Every
        // candidate is built from the example as it is now.
        let ends = sibling_chain(s, span.label, span.depth, span.end, true);
        let Some(&last) = ends.last() else { continue };
        if last > s.best.nodes.len() {
            continue;
        }
        let base = s.best.choices();
        let mut simplest = base.clone();
        simplify_range(s, &mut starts, &mut simplest, span.end..last);
        find_integer(|n| {
            let n = n as usize;
            if n > ends.len() || s.exhausted() {
                return false;
            }
            let mut candidate = base.clone();
            candidate[span.end..ends[n - 1]].clone_from_slice(&simplest[span.end..ends[n - 1]]);
            candidate != base && s.consider(candidate)
        });
    }
}

/// Sets the choices in `range` of `candidate` to their simplest values,
/// except forced ones and those that draw collection elements.
fn simplify_range(
    s: &Shrinker,
    starts: &mut ElementStarts,
    candidate: &mut [ChoiceValue],
    range: std::ops::Range<usize>,
) {
    for j in range {
        let n = &s.best.nodes[j];
        if !n.forced && !starts.get(s, j) {
            candidate[j] = n.constraints.simplest();
        }
    }
}
