//! Reordering passes: a span replaced by a descendant with the same label
//! (a nested list by one of its sublists), and adjacent siblings sorted into
//! simplest-first order.

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
