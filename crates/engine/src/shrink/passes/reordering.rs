//! Reordering passes: a span replaced by a descendant with the same label
//! (a nested list by one of its sublists), adjacent siblings sorted into
//! simplest-first order, and adjacent blocks of choices that no span marks
//! swapped.

use super::{closes_collection, decides_element};
use crate::choice::ChoiceValue;
use crate::shrink::Shrinker;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

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

/// The runs of adjacent sibling spans (same label and depth, each starting
/// where the last ended) of the best example with three spans or more, each
/// as the positions where its spans start followed by where the last ends.
fn sibling_runs(s: &Shrinker) -> Vec<Vec<usize>> {
    let length = s.best.nodes.len();
    let mut next: HashMap<(u64, usize, usize), usize> = HashMap::new();
    for sp in &s.best.spans {
        if sp.start < sp.end && sp.end <= length && !sp.discarded {
            next.entry((sp.label, sp.depth, sp.start)).or_insert(sp.end);
        }
    }
    let ends: HashSet<(u64, usize, usize)> = next
        .iter()
        .map(|(&(label, depth, _), &end)| (label, depth, end))
        .collect();
    let mut runs = Vec::new();
    for (&(label, depth, start), &end) in &next {
        // A run starts at a span no sibling ends at.
        if ends.contains(&(label, depth, start)) {
            continue;
        }
        let mut bounds = vec![start, end];
        while let Some(&after) = next.get(&(label, depth, bounds[bounds.len() - 1])) {
            bounds.push(after);
        }
        if bounds.len() > 3 {
            runs.push(bounds);
        }
    }
    runs.sort();
    runs
}

/// The most spans [`rotate_sibling_spans`] rotates at once: each span of a
/// run is tried with the few after it, so a long unsorted run costs a few
/// test cases per span, not one per pair.
const MAX_ROTATED: usize = 4;

/// In the polish round, moves one span of a run of siblings to another
/// place in it when that makes the example simpler: a later span before an
/// earlier, less simple one, or an earlier span after later ones when the
/// one after it is simpler (the spans between shift by one place; a
/// rotation of that part of the run). [`sort_sibling_spans`] swaps
/// neighbours only, and elements that refer to each other by position (an
/// arena: `[2, 0, 1]`, each naming the next) fail only as a whole cycle, so
/// that `[1, 2, 0]` is one rotation away and no swap of two fails.
pub(in crate::shrink) fn rotate_sibling_spans(s: &mut Shrinker) {
    if !s.polish {
        return;
    }
    'runs: loop {
        for bounds in sibling_runs(s) {
            let spans = bounds.len() - 1;
            let content = |s: &Shrinker, k: usize| -> Vec<ChoiceValue> {
                s.best.nodes[bounds[k]..bounds[k + 1]]
                    .iter()
                    .map(|n| n.value.clone())
                    .collect()
            };
            for first in 0..spans {
                for last in first + 2..spans.min(first + MAX_ROTATED) {
                    if s.exhausted() {
                        return;
                    }
                    let (from, to) = (bounds[first], bounds[last + 1]);
                    let nodes = &s.best.nodes;
                    let simpler = |a: usize, b: usize| {
                        crate::choice::sequence_cmp(
                            &nodes[bounds[a]..bounds[a + 1]],
                            &nodes[bounds[b]..bounds[b + 1]],
                        ) == Ordering::Less
                    };
                    // The last span moved to the front, or the first to the back.
                    let right = simpler(last, first);
                    let left = simpler(first + 1, first);
                    let mut moves = Vec::new();
                    if right {
                        let mut r = content(s, last);
                        r.extend((first..last).flat_map(|k| content(s, k)));
                        moves.push(r);
                    }
                    if left {
                        let mut r: Vec<ChoiceValue> =
                            (first + 1..=last).flat_map(|k| content(s, k)).collect();
                        r.extend(content(s, first));
                        moves.push(r);
                    }
                    for replacement in moves {
                        if s.try_replace(from..to, &replacement) {
                            continue 'runs;
                        }
                    }
                }
            }
        }
        return;
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
