//! Reordering passes: a span replaced by a descendant with the same label
//! (a nested list by one of its sublists), adjacent siblings sorted into
//! simplest-first order, and adjacent blocks of choices that no span marks
//! swapped.

use super::{closes_collection, decides_element};
use crate::choice::ChoiceValue;
use crate::shrink::Shrinker;
use std::cmp::Ordering;

/// Replaces a span by a descendant span with the same label (e.g. a nested
/// list by one of its sublists).
pub(in crate::shrink) fn lift_spans(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best.spans.len() && !s.exhausted() {
        let outer = s.best.spans[i].clone();
        i += 1;
        if outer.end > s.best.nodes.len() {
            continue;
        }
        let inner: Vec<_> = s
            .best
            .spans
            .iter()
            .filter(|d| {
                d.label == outer.label
                    && d.start >= outer.start
                    && d.end <= outer.end
                    && (d.start, d.end) != (outer.start, outer.end)
                    && d.end <= s.best.nodes.len()
            })
            .cloned()
            .collect();
        for d in inner {
            let replacement: Vec<ChoiceValue> = s.best.nodes[d.start..d.end]
                .iter()
                .map(|n| n.value.clone())
                .collect();
            if s.try_replace(outer.start..outer.end, &replacement) {
                break;
            }
        }
    }
}

/// Sorts runs of adjacent sibling spans with the same label into simplest-first order.
pub(in crate::shrink) fn sort_sibling_spans(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best.spans.len() && !s.exhausted() {
        let first = s.best.spans[i].clone();
        i += 1;
        // Find the next sibling: same label and depth, starting where this ends.
        let Some(second) = s
            .best
            .spans
            .iter()
            .find(|t| {
                t.label == first.label
                    && t.depth == first.depth
                    && t.start == first.end
                    && t.end > t.start
            })
            .cloned()
        else {
            continue;
        };
        if second.end > s.best.nodes.len() {
            continue;
        }
        let a = &s.best.nodes[first.start..first.end];
        let b = &s.best.nodes[second.start..second.end];
        if crate::choice::sequence_cmp(b, a) == Ordering::Less {
            let mut replacement: Vec<ChoiceValue> = b.iter().map(|n| n.value.clone()).collect();
            replacement.extend(a.iter().map(|n| n.value.clone()));
            s.try_replace(first.start..second.end, &replacement);
        }
    }
}

/// The block lengths [`swap_adjacent_blocks`] tries: a value drawn as a
/// gate and what it selects, with a payload or without.
const SWAPPED_BLOCK_LENGTHS: [usize; 2] = [2, 3];

/// In the polish round, swaps two adjacent blocks of choices of the same
/// length when the later one is simpler: values drawn one after another by
/// the same helper without a span around each (`(gate, pick)` twice) reach
/// the simplest order this way, as spanned siblings do by
/// [`sort_sibling_spans`]. A test whose failure needs `(∞, 0)` with `(0, ∞)`
/// failing as well stalls at the former otherwise: no value of either can
/// move on its own.
pub(in crate::shrink) fn swap_adjacent_blocks(s: &mut Shrinker) {
    if !s.polish {
        return;
    }
    for k in SWAPPED_BLOCK_LENGTHS {
        let mut i = 0;
        while i + 2 * k <= s.best.nodes.len() && !s.exhausted() {
            // Spanned values of several choices are sorted by
            // `sort_sibling_spans`; a block that cuts one would tear it apart.
            let cut = s.best.spans.iter().any(|sp| {
                sp.end.saturating_sub(sp.start) > 1
                    && ((sp.start > i && sp.start < i + 2 * k)
                        || (sp.end > i && sp.end < i + 2 * k))
            });
            // Nor a collection's decisions to draw another element: moving
            // them moves elements between collections, which the deletion
            // and merging passes do directly.
            if cut || (i..i + 2 * k).any(|j| decides_element(s, j) || closes_collection(s, j)) {
                i += 1;
                continue;
            }
            let a = &s.best.nodes[i..i + k];
            let b = &s.best.nodes[i + k..i + 2 * k];
            if crate::choice::sequence_cmp(b, a) == Ordering::Less {
                let mut replacement: Vec<ChoiceValue> = b.iter().map(|n| n.value.clone()).collect();
                replacement.extend(a.iter().map(|n| n.value.clone()));
                s.try_replace(i..i + 2 * k, &replacement);
            }
            i += 1;
        }
    }
}
