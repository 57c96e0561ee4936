//! Mutations of earlier test cases that make two parts of them equal.
//!
//! Many bugs need two equal values (a duplicate in a list, two equal keys,
//! two equal strings), which independent random draws almost never produce
//! when the values are large. Hypothesis copies the choices of one span onto
//! another span with the same label. geist does the same from a test case
//! that already ran: the copy's choices become the prefix of a new test case,
//! which generates at random past them. Besides labelled spans, every single
//! choice counts as a span labelled by its constraints, so two strings (or
//! integers) drawn alike become equal even when the client opened no span.

use crate::choice::{ChoiceNode, ChoiceValue};
use crate::data::Span;
use crate::random::Source;
use crate::tree::same_kind;

/// The most choices a mutation looks at (longer test cases: the first ones).
const MAX_NODES: usize = 1024;
/// Tries at finding two spans whose copy changes the test case.
const TRIES: usize = 4;

/// The working vectors of [`copy_onto_equal_label`], kept between calls:
/// a run mutates thousands of test cases.
#[derive(Debug, Default)]
pub struct MutationScratch {
    /// Spans as (label, position among the spans, start, end), by label.
    members: Vec<(u64, usize, usize, usize)>,
    /// The runs of `members` (first index, length) sharing a label, two spans or more.
    groups: Vec<(usize, usize)>,
    /// Indices of the choices not forced.
    free: Vec<usize>,
    /// Those of `free` alike one of them (drawn).
    alike: Vec<usize>,
    /// A vector for the next mutation's choices (a caller that drops a
    /// mutation may put its vector back here).
    pub spare: Vec<ChoiceValue>,
}

/// Choices for a test case like `nodes` but with one span's (or one
/// choice's) choices copied over another with the same label (the same
/// constraints). `None` when there is no such pair whose copy changes
/// anything.
pub fn copy_onto_equal_label(
    nodes: &[ChoiceNode],
    spans: &[Span],
    source: &mut Source,
) -> Option<Vec<ChoiceValue>> {
    copy_onto_equal_label_with(&mut MutationScratch::default(), nodes, spans, source)
}

/// [`copy_onto_equal_label`], in the working vectors of `scratch`.
pub fn copy_onto_equal_label_with(
    scratch: &mut MutationScratch,
    nodes: &[ChoiceNode],
    spans: &[Span],
    source: &mut Source,
) -> Option<Vec<ChoiceValue>> {
    let limit = nodes.len().min(MAX_NODES);
    // The spans by label (in label order, each label's in span order), and
    // the labels with two spans or more: the groups a pair is drawn from.
    let MutationScratch {
        members,
        groups,
        free,
        alike,
        spare,
    } = scratch;
    members.clear();
    members.extend(
        spans
            .iter()
            .enumerate()
            .filter(|(_, span)| !span.discarded && span.start < span.end && span.end <= limit)
            .map(|(position, span)| (span.label, position, span.start, span.end)),
    );
    // By label, then position: what a stable sort by label gives, in place.
    members.sort_unstable();
    groups.clear();
    let mut first = 0;
    for run in members.chunk_by(|a, b| a.0 == b.0) {
        if run.len() >= 2 {
            groups.push((first, run.len()));
        }
        first += run.len();
    }
    free.clear();
    free.extend((0..limit).filter(|&i| !nodes[i].forced));
    let (members, groups, free): (&[_], &[_], &[usize]) = (members, groups, free);
    for _ in 0..TRIES {
        let pair =
            if !groups.is_empty() && (free.len() < 2 || source.chance(0.5)) {
                let (first, len) = groups[source.below(groups.len() as u64) as usize];
                let group = &members[first..first + len];
                let a = source.below(group.len() as u64) as usize;
                let mut b = source.below(group.len() as u64 - 1) as usize;
                if b >= a {
                    b += 1;
                }
                let range = |(_, _, start, end): (u64, usize, usize, usize)| (start, end);
                Some((range(group[a]), range(group[b])))
            } else if free.len() >= 2 {
                let i = free[source.below(free.len() as u64) as usize];
                alike.clear();
                alike.extend(free.iter().copied().filter(|&j| {
                    j != i && same_kind(&nodes[i].constraints, &nodes[j].constraints)
                }));
                (!alike.is_empty()).then(|| {
                    let j = alike[source.below(alike.len() as u64) as usize];
                    ((i, i + 1), (j, j + 1))
                })
            } else {
                None
            };
        let Some((a, b)) = pair else { continue };
        let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
        // Nested or overlapping spans cannot both take the copy.
        if second.0 < first.1 {
            continue;
        }
        let copied = if source.chance(0.5) { first } else { second };
        let replacement = &nodes[copied.0..copied.1];
        if nodes[first.0..first.1]
            .iter()
            .map(|n| &n.value)
            .eq(nodes[second.0..second.1].iter().map(|n| &n.value))
        {
            continue;
        }
        let mut out = std::mem::take(spare);
        out.clear();
        out.reserve(nodes.len());
        for range in [
            &nodes[..first.0],
            replacement,
            &nodes[first.1..second.0],
            replacement,
            &nodes[second.1..],
        ] {
            out.extend(range.iter().map(|n| n.value.clone()));
        }
        return Some(out);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charset::CharSet;
    use crate::choice::{Constraints, IntegerConstraints, SizeConstraints};
    use std::sync::Arc;

    fn int(v: i128) -> ChoiceNode {
        ChoiceNode {
            constraints: Constraints::Integer(IntegerConstraints::bounded(0, 1000)),
            value: ChoiceValue::Integer(v),
            forced: false,
        }
    }

    fn span(label: u64, start: usize, end: usize) -> Span {
        Span {
            label,
            start,
            end,
            depth: 0,
            discarded: false,
        }
    }

    #[test]
    fn a_span_is_copied_onto_another_with_its_label() {
        // Two pairs (a, b) in spans labelled 7, and a lone integer.
        let nodes = [int(1), int(2), int(3), int(4), int(5)];
        let spans = [span(7, 0, 2), span(7, 2, 4)];
        let mut source = Source::from_seed(1);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let out = copy_onto_equal_label(&nodes, &spans, &mut source).expect("a mutation");
            assert_eq!(out.len(), 5);
            seen.insert(out);
        }
        let i = |v: &[i128]| {
            v.iter()
                .map(|&x| ChoiceValue::Integer(x))
                .collect::<Vec<_>>()
        };
        assert!(seen.contains(&i(&[1, 2, 1, 2, 5])));
        assert!(seen.contains(&i(&[3, 4, 3, 4, 5])));
        // Single choices with the same constraints count as spans too.
        assert!(seen.contains(&i(&[5, 2, 3, 4, 5])));
    }

    #[test]
    fn choices_of_other_kinds_are_never_copied_onto_each_other() {
        let string = ChoiceNode {
            constraints: Constraints::String {
                alphabet: Arc::new(CharSet::from_intervals(vec![(0x20, 0x7e)])),
                size: SizeConstraints {
                    min_size: 5,
                    max_size: 100,
                },
            },
            value: ChoiceValue::String(vec![0x41; 6]),
            forced: false,
        };
        let nodes = [int(1), string.clone()];
        let mut source = Source::from_seed(2);
        for _ in 0..50 {
            assert_eq!(copy_onto_equal_label(&nodes, &[], &mut source), None);
        }
        let mut other = string.clone();
        other.value = ChoiceValue::String(vec![0x42; 9]);
        let nodes = [string.clone(), int(1), other];
        let out = copy_onto_equal_label(&nodes, &[], &mut source).expect("a mutation");
        assert_eq!(out[0], out[2]);
    }
}
