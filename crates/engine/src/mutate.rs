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

use crate::choice::{ChoiceNode, ChoiceValue, Constraints};
use crate::data::{Nodes, Span, Values};
use crate::random::Source;
use crate::tree::same_kind;

/// The most choices a mutation looks at (longer test cases: the first ones).
const MAX_NODES: usize = 1024;
/// Tries at finding two spans whose copy changes the test case.
const TRIES: usize = 4;

/// The most distinct span labels counted by a linear search; a test case
/// with more has its labels sorted instead.
const FEW_LABELS: usize = 16;

/// The working vectors of [`copy_onto_equal_label`], kept between calls:
/// a run mutates thousands of test cases.
#[derive(Debug, Default)]
pub struct MutationScratch {
    /// The labels of the spans a copy may take, each with its number of
    /// spans; then only those with two spans or more (the groups a pair is
    /// drawn from), in label order.
    groups: Vec<(u64, usize)>,
    /// Those spans' labels, sorted, when there are more than [`FEW_LABELS`].
    labels: Vec<u64>,
    /// The choices not forced alike one of them (drawn), by index.
    alike: Vec<usize>,
    /// A vector for the next mutation's choices (a caller that drops a
    /// mutation may put its vector back here).
    pub spare: Values,
}

/// Choices for a test case like `nodes` but with one span's (or one
/// choice's) choices copied over another with the same label (the same
/// constraints). `None` when there is no such pair whose copy changes
/// anything.
pub fn copy_onto_equal_label(
    nodes: &[ChoiceNode],
    spans: &[Span],
    source: &mut Source,
) -> Option<Values> {
    let owns_nothing = nodes.iter().all(ChoiceNode::owns_nothing);
    // SAFETY: `owns_nothing` is true only when no node owns memory.
    unsafe {
        copy_onto(
            &mut MutationScratch::default(),
            nodes,
            owns_nothing,
            spans,
            source,
        )
    }
}

/// [`copy_onto_equal_label`], in the working vectors of `scratch`.
pub fn copy_onto_equal_label_with(
    scratch: &mut MutationScratch,
    nodes: &Nodes,
    spans: &[Span],
    source: &mut Source,
) -> Option<Values> {
    // SAFETY: `Nodes` marks itself as owning nothing only when no node does.
    unsafe { copy_onto(scratch, nodes, nodes.owns_nothing(), spans, source) }
}

/// [`copy_onto_equal_label_with`] of `nodes`; when `owns_nothing`, the
/// values are copied bit for bit without a look at each.
///
/// # Safety
///
/// `owns_nothing` may be true only when no node's value owns memory
/// ([`ChoiceValue::owns_nothing`]): else a value's pointer would be copied
/// and freed twice.
unsafe fn copy_onto(
    scratch: &mut MutationScratch,
    nodes: &[ChoiceNode],
    owns_nothing: bool,
    spans: &[Span],
    source: &mut Source,
) -> Option<Values> {
    debug_assert!(!owns_nothing || nodes.iter().all(|n| n.value.owns_nothing()));
    let limit = nodes.len().min(MAX_NODES);
    let MutationScratch {
        groups,
        labels,
        alike,
        spare,
    } = scratch;
    // The spans a copy may take: whole, not discarded, within the limit.
    // Tested without branches (`&`, not `&&`): nearly every span is taken.
    let takes = |span: &&Span| !span.discarded & (span.start < span.end) & (span.end <= limit);
    // The labels with two spans or more, in label order: the groups a pair
    // is drawn from. A test case has few distinct labels (a state machine's
    // steps, a list's elements), so they are counted by a linear search,
    // not sorted with every span.
    // The label last counted is tried first: spans of one label come in
    // runs (a list's elements).
    // A run is counted in registers and added to its label's count when
    // it ends.
    groups.clear();
    let add = |groups: &mut Vec<(u64, usize)>, (label, count): (u64, usize)| {
        if let Some(group) = groups.iter_mut().find(|(l, _)| *l == label) {
            group.1 += count;
        } else if groups.len() < FEW_LABELS {
            groups.push((label, count));
        } else {
            return false;
        }
        true
    };
    let mut run = (0, 0);
    let mut few = true;
    for span in spans.iter().filter(takes) {
        if run.1 > 0 && run.0 == span.label {
            run.1 += 1;
            continue;
        }
        if run.1 > 0 && !add(groups, run) {
            few = false;
            run.1 = 0;
            break;
        }
        run = (span.label, 1);
    }
    if run.1 > 0 && !add(groups, run) {
        few = false;
    }
    if few {
        groups.sort_unstable_by_key(|(label, _)| *label);
    } else {
        labels.clear();
        labels.extend(spans.iter().filter(takes).map(|span| span.label));
        labels.sort_unstable();
        groups.clear();
        groups.extend(
            labels
                .chunk_by(|a, b| a == b)
                .map(|run| (run[0], run.len())),
        );
    }
    groups.retain(|(_, count)| *count >= 2);
    // The choices not forced, counted (the one drawn is found by a scan:
    // a mutation draws one at most a few times).
    let considered = &nodes[..limit];
    let free_count = limit - considered.iter().filter(|n| n.forced).count();
    let groups: &[_] = groups;
    for _ in 0..TRIES {
        let pair = if !groups.is_empty() && (free_count < 2 || source.chance(0.5)) {
            // Two spans of a label, by their order among its spans.
            let (label, len) = groups[source.below(groups.len() as u64) as usize];
            let a = source.below(len as u64) as usize;
            let mut b = source.below(len as u64 - 1) as usize;
            if b >= a {
                b += 1;
            }
            let mut group = spans
                .iter()
                .filter(takes)
                .filter(|span| span.label == label)
                .map(|span| (span.start, span.end));
            let (low, high) = (a.min(b), a.max(b));
            let low_range = group.nth(low).expect("counted");
            let high_range = group.nth(high - low - 1).expect("counted");
            Some(if a < b {
                (low_range, high_range)
            } else {
                (high_range, low_range)
            })
        } else if free_count >= 2 {
            let k = source.below(free_count as u64) as usize;
            let i = if free_count == limit {
                k
            } else {
                (0..limit)
                    .filter(|&i| !considered[i].forced)
                    .nth(k)
                    .expect("counted")
            };
            collect_alike(alike, considered, i);
            (!alike.is_empty()).then(|| {
                let j = alike[source.below(alike.len() as u64) as usize];
                ((i, i + 1), (j, j + 1))
            })
        } else {
            None
        };
        let Some((a, b)) = pair else { continue };
        let Some(copy) = Copy::between(nodes, a, b, source) else {
            continue;
        };
        let mut out = std::mem::take(spare);
        out.clear_all();
        out.append_with(|out| {
            out.reserve(nodes.len());
            if owns_nothing {
                // SAFETY: no value owns memory (this function's contract).
                unsafe { copy.write_plain(nodes, out) };
                false
            } else {
                copy.write(nodes, out)
            }
        });
        return Some(out);
    }
    None
}

/// One span's choices copied onto another's: the two spans in order and
/// the one whose choices both take.
struct Copy {
    first: (usize, usize),
    second: (usize, usize),
    copied: (usize, usize),
}

impl Copy {
    /// The copy between spans `a` and `b` (ranges of choices), the one
    /// copied drawn from `source`; none when they overlap (nested or
    /// overlapping spans cannot both take the copy) or already hold equal
    /// values (the copy would change nothing).
    fn between(
        nodes: &[ChoiceNode],
        a: (usize, usize),
        b: (usize, usize),
        source: &mut Source,
    ) -> Option<Copy> {
        let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
        if second.0 < first.1 {
            return None;
        }
        let copied = if source.chance(0.5) { first } else { second };
        let values = |(start, end): (usize, usize)| nodes[start..end].iter().map(|n| &n.value);
        if values(first).eq(values(second)) {
            return None;
        }
        Some(Copy {
            first,
            second,
            copied,
        })
    }

    /// [`Copy::write`] of values that own nothing.
    ///
    /// # Safety
    ///
    /// No value of `nodes` may own memory ([`ChoiceValue::owns_nothing`]).
    unsafe fn write_plain(&self, nodes: &[ChoiceNode], out: &mut Vec<ChoiceValue>) {
        for range in self.pieces(nodes) {
            // SAFETY: by this function's contract.
            unsafe { extend_plain_values(out, range) };
        }
    }

    /// Appends the test case's choices, with the copy made, to `out`;
    /// whether one of them owns memory.
    fn write(&self, nodes: &[ChoiceNode], out: &mut Vec<ChoiceValue>) -> bool {
        let mut owns = false;
        for range in self.pieces(nodes) {
            owns |= extend_values(out, range);
        }
        owns
    }

    /// The test case's choices with the copy made, in order: before the
    /// first span, the copied span in its place, between the spans, the
    /// copied span again, after the second.
    #[inline(always)]
    fn pieces<'a>(&self, nodes: &'a [ChoiceNode]) -> [&'a [ChoiceNode]; 5] {
        let replacement = &nodes[self.copied.0..self.copied.1];
        [
            &nodes[..self.first.0],
            replacement,
            &nodes[self.first.1..self.second.0],
            replacement,
            &nodes[self.second.1..],
        ]
    }
}

/// Appends the values of `nodes` to `out`: each written into the vector's
/// room, those that own nothing (numbers and booleans, nearly all) copied
/// bit for bit rather than matched variant by variant (a mutation copies
/// every choice of the test case it mutates). Whether one of them owns
/// memory.
#[inline]
fn extend_values(out: &mut Vec<ChoiceValue>, nodes: &[ChoiceNode]) -> bool {
    out.reserve(nodes.len());
    let len = out.len();
    let mut owns = false;
    for (slot, node) in out.spare_capacity_mut().iter_mut().zip(nodes) {
        // SAFETY: the bytes are copied into the room, not yet a value of the
        // vector's; a value that owns nothing holds no pointer, so its
        // copy is an equal value, and dropping both frees nothing twice.
        // Any other's copy is overwritten with a clone, untouched (the
        // bytes written over are not dropped).
        unsafe { std::ptr::copy_nonoverlapping(&node.value, slot.as_mut_ptr(), 1) };
        if !node.value.owns_nothing() {
            slot.write(node.value.clone());
            owns = true;
        }
    }
    // SAFETY: the loop initialised the `nodes.len()` elements past `len`
    // (the room reserved above holds them all).
    unsafe { out.set_len(len + nodes.len()) }
    owns
}

/// [`extend_values`] of values that own nothing: each copied bit for bit,
/// without a look at its variant.
///
/// # Safety
///
/// No value of `nodes` may own memory ([`ChoiceValue::owns_nothing`]).
#[inline]
unsafe fn extend_plain_values(out: &mut Vec<ChoiceValue>, nodes: &[ChoiceNode]) {
    out.reserve(nodes.len());
    let len = out.len();
    for (slot, node) in out.spare_capacity_mut().iter_mut().zip(nodes) {
        // SAFETY: the bytes are copied into the room, not yet a value of the
        // vector's; the value owns nothing (this function's contract), so it
        // holds no pointer, its copy is an equal value, and dropping both
        // frees nothing twice.
        unsafe { std::ptr::copy_nonoverlapping(&node.value, slot.as_mut_ptr(), 1) };
    }
    // SAFETY: the loop initialised the `nodes.len()` elements past `len`
    // (the room reserved above holds them all).
    unsafe { out.set_len(len + nodes.len()) }
}

/// Sets `alike` to the indices of the choices of `nodes` not forced, other
/// than `i`, alike `i` (by [`same_kind`]). Choice `i`'s kind is matched
/// once, not once per choice compared: the common kinds get a loop of
/// their own.
fn collect_alike(alike: &mut Vec<usize>, nodes: &[ChoiceNode], i: usize) {
    alike.clear();
    match &nodes[i].constraints {
        Constraints::Integer(x) => collect_where(
            alike,
            nodes,
            i,
            |c| matches!(c, Constraints::Integer(y) if y == x),
        ),
        // Any boolean is alike any boolean (see `same_kind`).
        Constraints::Boolean { .. } => collect_where(alike, nodes, i, |c| {
            matches!(c, Constraints::Boolean { .. })
        }),
        c => collect_where(alike, nodes, i, |other| same_kind(c, other)),
    }
}

/// Appends to `alike` the indices of the choices of `nodes` not forced,
/// other than `i`, whose constraints are `alike_i`: written into the
/// vector's room with the count kept aside, the length set once at the end.
#[inline(always)]
fn collect_where(
    alike: &mut Vec<usize>,
    nodes: &[ChoiceNode],
    i: usize,
    alike_i: impl Fn(&Constraints) -> bool,
) {
    let len = alike.len();
    alike.reserve(nodes.len());
    let room = &mut alike.spare_capacity_mut()[..nodes.len()];
    let mut count = 0;
    for (j, node) in nodes.iter().enumerate() {
        if !node.forced && j != i && alike_i(&node.constraints) {
            room[count].write(j);
            count += 1;
        }
    }
    // SAFETY: the loop initialised the first `count` elements of the
    // vector's room, the `count` places after its `len` elements.
    unsafe { alike.set_len(len + count) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charset::CharSet;
    use crate::choice::{Constraints, IntegerConstraints, SizeConstraints};
    use std::sync::Arc;

    fn int(v: i128) -> ChoiceNode {
        ChoiceNode {
            constraints: Constraints::integer(IntegerConstraints::bounded(0, 1000)),
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

    /// The implementation before choices were counted rather than sorted
    /// and collected (session 9): the reference the current one must match
    /// draw for draw.
    fn reference(
        nodes: &[ChoiceNode],
        spans: &[Span],
        source: &mut Source,
    ) -> Option<Vec<ChoiceValue>> {
        let limit = nodes.len().min(MAX_NODES);
        let mut members: Vec<(u64, usize, usize, usize)> = spans
            .iter()
            .enumerate()
            .filter(|(_, span)| !span.discarded && span.start < span.end && span.end <= limit)
            .map(|(position, span)| (span.label, position, span.start, span.end))
            .collect();
        members.sort_unstable();
        let mut groups = Vec::new();
        let mut first = 0;
        for run in members.chunk_by(|a, b| a.0 == b.0) {
            if run.len() >= 2 {
                groups.push((first, run.len()));
            }
            first += run.len();
        }
        let free: Vec<usize> = (0..limit).filter(|&i| !nodes[i].forced).collect();
        for _ in 0..TRIES {
            let pair = if !groups.is_empty() && (free.len() < 2 || source.chance(0.5)) {
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
                let alike: Vec<usize> = free
                    .iter()
                    .copied()
                    .filter(|&j| j != i && same_kind(&nodes[i].constraints, &nodes[j].constraints))
                    .collect();
                (!alike.is_empty()).then(|| {
                    let j = alike[source.below(alike.len() as u64) as usize];
                    ((i, i + 1), (j, j + 1))
                })
            } else {
                None
            };
            let Some((a, b)) = pair else { continue };
            // Applying a pair did not change: the reference shares it.
            let Some(copy) = Copy::between(nodes, a, b, source) else {
                continue;
            };
            let mut out = Vec::new();
            copy.write(nodes, &mut out);
            return Some(out);
        }
        None
    }

    /// Test cases of every kind of choice (some forced, values often
    /// equal) and spans (nested, overlapping, empty, discarded, a few
    /// labels or more than [`FEW_LABELS`]), made from `seed`.
    fn arbitrary_case(seed: u64) -> (Vec<ChoiceNode>, Vec<Span>) {
        let mut r = Source::from_seed(seed);
        let shared = Arc::new(CharSet::from_intervals(vec![(0x61, 0x63)]));
        let n = r.below(60) as usize;
        let nodes: Vec<ChoiceNode> = (0..n)
            .map(|_| {
                let v = r.below(3);
                let (constraints, value) = match r.below(7) {
                    0 => (
                        Constraints::integer(IntegerConstraints::bounded(0, 1000)),
                        ChoiceValue::Integer(v as i128),
                    ),
                    1 => (
                        Constraints::integer(IntegerConstraints::bounded(0, 3)),
                        ChoiceValue::Integer(v as i128),
                    ),
                    2 => (
                        Constraints::integer(IntegerConstraints::UNBOUNDED),
                        ChoiceValue::Integer(v as i128),
                    ),
                    3 => (
                        Constraints::Boolean {
                            p: [0.5, 0.1, 1.0][v as usize],
                        },
                        ChoiceValue::Boolean(v == 1),
                    ),
                    4 => (
                        Constraints::Float(crate::choice::FloatConstraints {
                            min: f64::NEG_INFINITY,
                            max: f64::INFINITY,
                            allow_nan: v == 0,
                            width: 64,
                        }),
                        ChoiceValue::Float(v as f64),
                    ),
                    5 => (
                        Constraints::String {
                            // Shared, or an equal alphabet of its own.
                            alphabet: if v == 2 {
                                Arc::new(CharSet::from_intervals(vec![(0x61, 0x63)]))
                            } else {
                                shared.clone()
                            },
                            size: SizeConstraints {
                                min_size: 0,
                                max_size: 5,
                            },
                        },
                        ChoiceValue::String(vec![0x61; v as usize]),
                    ),
                    _ => (
                        Constraints::Bytes(SizeConstraints {
                            min_size: 0,
                            max_size: 4 + v as usize,
                        }),
                        ChoiceValue::Bytes(vec![1; v as usize]),
                    ),
                };
                ChoiceNode {
                    constraints,
                    value,
                    forced: r.below(8) == 0,
                }
            })
            .collect();
        let labels = [1, 3, 16, 17, 40][r.below(5) as usize];
        let spans = (0..r.below(50))
            .map(|_| {
                let start = r.below(n as u64 + 1) as usize;
                let end = start + r.below((n - start) as u64 + 1) as usize;
                Span {
                    label: 1000 + r.below(labels),
                    start,
                    end,
                    depth: 0,
                    discarded: r.below(10) == 0,
                }
            })
            .collect();
        (nodes, spans)
    }

    #[test]
    fn mutations_match_the_reference_draw_for_draw() {
        let mut scratch = MutationScratch::default();
        let mut some: u64 = 0;
        let mut plain: u64 = 0;
        // Fewer under Miri, which checks the copies bit for bit.
        let cases = if cfg!(miri) { 60 } else { 6000 };
        for seed in 0..cases {
            let (mut nodes, spans) = arbitrary_case(seed / 2);
            if seed % 2 == 1 {
                // Only choices that own nothing: copied bit for bit.
                nodes.retain(ChoiceNode::owns_nothing);
            }
            let mut expected_source = Source::from_seed(seed ^ 0x5eed);
            let mut source = expected_source.clone();
            let expected = reference(&nodes, &spans, &mut expected_source);
            let nodes = Nodes::scanned(nodes);
            plain += u64::from(nodes.owns_nothing());
            let got = copy_onto_equal_label_with(&mut scratch, &nodes, &spans, &mut source);
            assert_eq!(got.as_deref(), expected.as_ref(), "seed {seed}");
            if let Some(got) = &got {
                // Marked as owning memory exactly when a value does.
                let owns = got.iter().any(|v| !v.owns_nothing());
                assert_eq!(got.may_own(), owns, "seed {seed}");
            }
            assert_eq!(
                source.below(1 << 40),
                expected_source.below(1 << 40),
                "seed {seed}: the same draws"
            );
            some += u64::from(got.is_some());
            if let Some(out) = got {
                scratch.spare = out;
            }
        }
        assert!(some > cases / 3, "{some} mutations");
        assert!(plain > cases / 2, "{plain} test cases owning nothing");
    }

    #[test]
    fn values_are_copied_equal_whether_or_not_they_own_memory() {
        let node = |value: ChoiceValue| ChoiceNode {
            constraints: Constraints::Boolean { p: 0.5 },
            value,
            forced: false,
        };
        let nodes = [
            node(ChoiceValue::Integer(-3)),
            node(ChoiceValue::String(vec![0x41, 0x42])),
            node(ChoiceValue::Boolean(true)),
            node(ChoiceValue::Bytes(vec![1, 2, 3])),
            node(ChoiceValue::Float(-0.0)),
        ];
        let mut out = vec![ChoiceValue::Integer(7)];
        assert!(extend_values(&mut out, &nodes));
        assert!(extend_values(&mut out, &nodes[1..2]));
        assert!(!extend_values(&mut out, &nodes[2..3]));
        out.pop();
        let mut expected = vec![ChoiceValue::Integer(7)];
        expected.extend(nodes.iter().map(|n| n.value.clone()));
        expected.push(nodes[1].value.clone());
        assert_eq!(out, expected);
        // Each copy owns its own memory: dropping the copies, then the
        // originals, frees nothing twice (checked under Miri).
        drop(out);
        drop(nodes);
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
            seen.insert(out.into_vec());
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
            assert!(copy_onto_equal_label(&nodes, &[], &mut source).is_none());
        }
        let mut other = string.clone();
        other.value = ChoiceValue::String(vec![0x42; 9]);
        let nodes = [string.clone(), int(1), other];
        let out = copy_onto_equal_label(&nodes, &[], &mut source).expect("a mutation");
        assert_eq!(out[0], out[2]);
    }

    #[test]
    fn collect_where_appends_after_what_the_vector_holds() {
        let mut forced = int(7);
        forced.forced = true;
        let nodes = [int(1), forced, int(2), int(3)];
        let mut alike = vec![99, 98];
        collect_where(&mut alike, &nodes, 2, |_| true);
        assert_eq!(alike, [99, 98, 0, 3]);
        collect_alike(&mut alike, &nodes, 0);
        assert_eq!(alike, [2, 3]);
    }
}
