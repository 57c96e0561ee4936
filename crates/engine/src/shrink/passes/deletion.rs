//! Deletion passes: make the example shorter, which is the biggest step
//! down in shortlex order. Discarded spans go at once; whole spans (list
//! elements, tuple parts) go last first with their preceding siblings, or
//! with the choices up to their next sibling (a state machine's step and
//! the invariant checks after it); in
//! the first round collections are cut short first; then chunks of one to
//! five choices; and in the polish round, deletions that need the integer
//! before them lowered (a count and what it counts), and cuts after a coin
//! raised to `true`.

use super::{decides_element, find_integer, lower_once, may_count, raise_once, sibling_chain};
use crate::choice::{ChoiceValue, Constraints};
use crate::shrink::Shrinker;
use crate::shrink::search::bisect;

/// Deletes every discarded span (rejected filter attempts and the like) at
/// once: they do not contribute to the value, and without them later
/// candidates line up with the choices the test really uses.
pub(in crate::shrink) fn remove_discarded(s: &mut Shrinker) {
    let mut ranges: Vec<(usize, usize)> = s
        .best
        .spans
        .iter()
        .filter(|sp| sp.discarded && sp.start < sp.end && sp.end <= s.best.nodes.len())
        .map(|sp| (sp.start, sp.end))
        .collect();
    if ranges.is_empty() {
        return;
    }
    ranges.sort_unstable();
    let mut keep = vec![true; s.best.nodes.len()];
    for (start, end) in ranges {
        keep[start..end].iter_mut().for_each(|k| *k = false);
    }
    let candidate: Vec<ChoiceValue> = s
        .best
        .nodes
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(n, _)| n.value.clone())
        .collect();
    s.consider(candidate);
}

/// Deletes whole spans (list elements, tuple parts), from the last recorded
/// to the first, so the last element of a collection goes first (elements
/// are recorded when they close, after their parts): the tail of a
/// structure usually matters least, and once it is gone the deletions tried
/// before it stay answered. When one goes, as many of the siblings
/// before it as can go with it go in a few test cases (`find_integer`), not
/// one per test case. A span that cannot go alone may go with the choices
/// between it and its next sibling ([`GapSiblings`]). In the
/// first round, collections are cut short first (`truncate_collections`).
pub(in crate::shrink) fn delete_spans(s: &mut Shrinker) {
    if s.rounds == 0 {
        truncate_collections(s);
    }
    let mut gaps = GapSiblings::default();
    let mut i = s.best.spans.len();
    while i > 0 && !s.exhausted() {
        i = (i - 1).min(s.best.spans.len().saturating_sub(1));
        let Some(span) = s.best.spans.get(i).cloned() else {
            return;
        };
        if span.end > s.best.nodes.len() || span.start >= span.end {
            continue;
        }
        if s.try_replace(span.start..span.end, &[]) {
            s.spans_deleted_in_round = true;
            delete_preceding_siblings(s, &span);
            i = i.min(s.best.spans.len());
        } else if let Some(next) = gaps.get(s, i)
            && s.try_replace(span.start..next, &[])
        {
            i = i.min(s.best.spans.len());
        } else if s.polish
            && span.label == crate::data::labels::COLLECTION_ELEMENT
            && delete_with_follower_nudged(s, &span)
        {
            i = i.min(s.best.spans.len());
        }
    }
}

/// Per span of the best example, where its next sibling (same label and
/// parent) starts when choices outside any span lie between them: a state
/// machine's step is a span (the "go on?" choice, the rule, its draws)
/// followed by the invariant checks of the join point after it, outside the
/// span, so deleting a step deletes from its span's start to the next
/// step's. (Without the checks the step leaves its booleans behind, read as
/// the next step's "go on?" choice.) Elements of a collection follow each
/// other with no gap, and values drawn between two siblings (another
/// structure's) have deletions of their own: neither has one.
///
/// Recomputed when the best example changes, in O(n log n) for n spans.
#[derive(Default)]
struct GapSiblings {
    improvements: Option<usize>,
    next: Vec<Option<usize>>,
}

impl GapSiblings {
    fn get(&mut self, s: &Shrinker, i: usize) -> Option<usize> {
        if self.improvements != Some(s.improvements) {
            self.improvements = Some(s.improvements);
            let spans = &s.best.spans;
            // Outer spans before the spans they contain at the same start.
            let mut order: Vec<usize> = (0..spans.len()).collect();
            order.sort_unstable_by_key(|&k| (spans[k].start, spans[k].depth));
            self.next = spans
                .iter()
                .map(|span| {
                    // The first span to start at or after this one's end:
                    // the next sibling if the gap is bare, else something
                    // else (a span in the gap, or the parent's sibling).
                    let first = order.partition_point(|&k| spans[k].start < span.end);
                    let next = &spans[*order.get(first)?];
                    (next.label == span.label
                        && next.depth == span.depth
                        && next.start > span.end
                        && next.start <= s.best.nodes.len())
                    .then_some(next.start)
                })
                .collect();
        }
        self.next.get(i).copied().flatten()
    }
}

/// Deletes a collection element together with a one-step change to the
/// choice right after its collection: an index into the list, its declared
/// length, a parity flag, a second list or string that must be as long
/// often has to move with the deletion, and no other deletion looks past
/// the collection's end (libhegel's `delete_spans` nudges the same way).
/// The changes: an integer one step simpler or one further from its
/// simplest value, a boolean flipped, a string or byte string one element
/// shorter, a following collection's first element deleted.
fn delete_with_follower_nudged(s: &mut Shrinker, element: &crate::data::Span) -> bool {
    let nodes = &s.best.nodes;
    let ends = sibling_chain(s, element.label, element.depth, element.end, true);
    let closing = ends.last().copied().unwrap_or(element.end);
    if !matches!(
        nodes.get(closing).map(|n| &n.value),
        Some(ChoiceValue::Boolean(false))
    ) {
        return false;
    }
    let follower = closing + 1;
    let Some(node) = nodes.get(follower).cloned() else {
        return false;
    };
    let width = element.end - element.start;
    let mut deleted = s.best.choices();
    deleted.drain(element.start..element.end);
    let at = follower - width;
    let mut candidates: Vec<Vec<ChoiceValue>> = Vec::new();
    let mut nudge = |value: ChoiceValue| {
        let mut candidate = deleted.clone();
        candidate[at] = value;
        candidates.push(candidate);
    };
    match (&node.value, &node.constraints) {
        _ if node.forced => {}
        // A step down (a declared length), then a step up (a total the
        // deleted element counted towards, paid for by the value after it).
        (ChoiceValue::Integer(_), _) => {
            for stepped in [lower_once(&node), raise_once(&node)].into_iter().flatten() {
                nudge(stepped);
            }
        }
        // A flag, not another collection's "one more?" choice (the next
        // collection's elements are handled below).
        (ChoiceValue::Boolean(b), _) if !decides_element(s, follower) => {
            nudge(ChoiceValue::Boolean(!b))
        }
        (ChoiceValue::String(v), Constraints::String { size, .. }) if v.len() > size.min_size => {
            nudge(ChoiceValue::String(v[..v.len() - 1].to_vec()))
        }
        (ChoiceValue::Bytes(v), Constraints::Bytes(size)) if v.len() > size.min_size => {
            nudge(ChoiceValue::Bytes(v[..v.len() - 1].to_vec()))
        }
        _ => {}
    }
    // A following collection's first innermost element (the first to end),
    // deleted too.
    if let Some(next) = s
        .best
        .spans
        .iter()
        .filter(|sp| {
            sp.label == crate::data::labels::COLLECTION_ELEMENT
                && sp.start >= follower
                && sp.start < sp.end
                && sp.end <= nodes.len()
        })
        .min_by_key(|sp| sp.end)
    {
        let mut candidate = deleted.clone();
        candidate.drain(next.start - width..next.end - width);
        candidates.push(candidate);
    }
    candidates
        .into_iter()
        .any(|candidate| s.consider(candidate))
}

/// Shortens each collection whose last elements are already at their
/// simplest (`simplify_spans` ran first) to as few elements as still fail,
/// cutting only from that simplest tail (an element that kept a value likely
/// matters): the whole tail first, then keeping 1, 2, 4, ... more of it, then
/// a binary search. A long list whose first few elements matter loses its
/// tail in a handful of test cases. Collections are taken last first, so
/// cutting one leaves the positions of those before it as they were.
fn truncate_collections(s: &mut Shrinker) {
    let mut before = usize::MAX;
    while !s.exhausted() {
        let Some(run) = element_runs(s)
            .into_iter()
            .filter(|run| run[0].0 < before)
            .max_by_key(|run| run[0].0)
        else {
            return;
        };
        before = run[0].0;
        // Elements at their simplest apart from the choice to draw them.
        let trivial = |j: usize| {
            let (start, end) = run[j];
            s.best.nodes[start + 1..end]
                .iter()
                .all(|n| n.forced || n.value == n.constraints.simplest())
        };
        // The first `keep_at_least` elements stay; the rest may go.
        let mut keep_at_least = run.len();
        while keep_at_least > 1 && trivial(keep_at_least - 1) {
            keep_at_least -= 1;
        }
        if keep_at_least == run.len() {
            continue;
        }
        let base = s.best.choices();
        let end = run[run.len() - 1].1;
        let keep = |s: &mut Shrinker, k: usize| -> bool {
            let mut candidate = base[..run[k].0].to_vec();
            candidate.extend_from_slice(&base[end..]);
            s.consider(candidate)
        };
        // The fewest elements kept that still fail: keep_at_least, then
        // keep_at_least + 1, + 2, + 4, ... and a binary search.
        let (mut passed, mut failed) = (None, None);
        let mut extra = 0usize;
        while keep_at_least + extra < run.len() && !s.exhausted() {
            if keep(s, keep_at_least + extra) {
                failed = Some(keep_at_least + extra);
                break;
            }
            passed = Some(keep_at_least + extra);
            extra = if extra == 0 { 1 } else { extra * 2 };
        }
        if let (Some(passed), Some(failed)) = (passed, failed) {
            bisect(passed as u128, failed as u128, |k| !keep(s, k as usize));
        }
    }
}

/// The runs of two or more adjacent collection elements (same depth, each
/// starting where the one before ends) in the best example, as
/// (start, end) per element; nested collections make runs of their own.
pub(super) fn element_runs(s: &Shrinker) -> Vec<Vec<(usize, usize)>> {
    let mut elements: Vec<(usize, usize, usize)> = s
        .best
        .spans
        .iter()
        .filter(|sp| {
            sp.label == crate::data::labels::COLLECTION_ELEMENT
                && sp.start < sp.end
                && sp.end <= s.best.nodes.len()
        })
        .map(|sp| (sp.start, sp.end, sp.depth))
        .collect();
    elements.sort_unstable();
    // The open run at each depth, by the end of its last element.
    let mut open: std::collections::HashMap<(usize, usize), usize> =
        std::collections::HashMap::new();
    let mut runs: Vec<Vec<(usize, usize)>> = Vec::new();
    for (start, end, depth) in elements {
        let r = match open.remove(&(depth, start)) {
            Some(r) => {
                runs[r].push((start, end));
                r
            }
            None => {
                runs.push(vec![(start, end)]);
                runs.len() - 1
            }
        };
        open.insert((depth, end), r);
    }
    runs.retain(|run| run.len() >= 2);
    runs
}

/// After `deleted` went: deletes the run of spans with its label and depth
/// that ended where it started, as many as works at once (the nearest first).
fn delete_preceding_siblings(s: &mut Shrinker, deleted: &crate::data::Span) {
    let starts = sibling_chain(s, deleted.label, deleted.depth, deleted.start, false);
    if starts.is_empty() || deleted.start > s.best.nodes.len() {
        return;
    }
    let base = s.best.choices();
    let end = deleted.start;
    find_integer(|n| {
        let n = n as usize;
        if n > starts.len() || s.exhausted() {
            return false;
        }
        let mut candidate = base[..starts[n - 1]].to_vec();
        candidate.extend_from_slice(&base[end..]);
        s.consider(candidate)
    });
}

/// Deletes runs of one to five consecutive choices (as Hypothesis'
/// shrinker does), from the end backwards (whole elements and structures
/// go with their spans in `delete_spans`): a step of a state machine is a
/// few choices outside any one span (the "go on?" choice, the rule, its
/// draws, an invariant check).
///
/// Only deletions worth a test case run: one that leaves the choices moving
/// up of the kind that was there ([`aligned_enough`]: a misaligned replay
/// reads noise; over the shrinking challenges such deletions cost up to 10
/// test cases a shrink and never improved one), and at the end, only a cut
/// the choice tree does not know to need choices past it (the replay would
/// fill in the simplest values: the deletion before the tail, tried anyway,
/// says the same). In the cheap rounds, chunks wait while whole spans still
/// go: the round after, which runs because this one improved, tries them on
/// the shorter example (chunk deletions of an example about to lose a span
/// are mostly spent).
pub(in crate::shrink) fn delete_chunks(s: &mut Shrinker) {
    if !s.polish && s.spans_deleted_in_round {
        return;
    }
    for k in [5usize, 4, 3, 2, 1] {
        let mut i = s.best.nodes.len().saturating_sub(k) as isize;
        while i >= 0 && !s.exhausted() {
            let start = i as usize;
            if start + k <= s.best.nodes.len()
                && aligned_enough(s, start, k)
                && !cut_runs_past(s, start, k)
                && s.try_replace(start..start + k, &[])
            {
                i = (s.best.nodes.len().saturating_sub(k) as isize).min(i);
                continue;
            }
            // Deleting a chunk sometimes needs the count before it lowered
            // (a length drawn before the elements it counts): the polish
            // round tries that too.
            if s.polish && start > 0 && start + k <= s.best.nodes.len() {
                let prev = start - 1;
                let count = match &s.best.nodes[prev].constraints {
                    Constraints::Integer(c) => may_count(c),
                    _ => false,
                };
                if let Some(lowered) = lower_once(&s.best.nodes[prev]).filter(|_| count) {
                    let length_before = s.best.nodes.len();
                    // Repeat at this position only if choices really went away;
                    // otherwise this would step the previous choice down by one
                    // per call.
                    let mut candidate = s.best.choices();
                    candidate.splice(prev..start + k, [lowered]);
                    if s.consider_whole(candidate) && s.best.nodes.len() < length_before {
                        continue;
                    }
                }
            }
            i -= 1;
        }
    }
    if s.polish {
        raise_and_cut(s);
    }
}

/// Whether deleting the last `k` choices (`start + k` is the example's
/// length) leaves a prefix whose replay the choice tree knows needs more
/// choices.
fn cut_runs_past(s: &mut Shrinker, start: usize, k: usize) -> bool {
    start + k == s.best.nodes.len() && {
        let prefix: Vec<ChoiceValue> = s.best.nodes[..start]
            .iter()
            .map(|n| n.value.clone())
            .collect();
        s.replay.runs_past(&prefix)
    }
}

/// How many of the last free `false` booleans [`raise_and_cut`] tries.
const RAISE_AND_CUT_TRIES: usize = 8;

/// Sets one of the last free `false` booleans to `true` and cuts every
/// choice after it: a test that can fail as soon as a coin comes up
/// (an invariant checked after this step instead of at the end, a loop
/// that stops) fails on a shorter example, which no lowering or deletion
/// reaches because the coin has to go up.
fn raise_and_cut(s: &mut Shrinker) {
    let mut tried = 0;
    let mut i = s.best.nodes.len();
    while i > 0 && tried < RAISE_AND_CUT_TRIES && !s.exhausted() {
        i -= 1;
        let node = &s.best.nodes[i];
        if node.forced || node.value != ChoiceValue::Boolean(false) || i + 1 >= s.best.nodes.len() {
            continue;
        }
        tried += 1;
        let mut candidate = s.best.choices();
        candidate.truncate(i);
        candidate.push(ChoiceValue::Boolean(true));
        if s.consider(candidate) {
            i = i.min(s.best.nodes.len());
        }
    }
}

/// Whether a chunk deletion is worth a test case: in the cheap rounds, the
/// choices that move up must be of the kind that was there
/// ([`stays_aligned`]); in the polish round, only the first of them (a
/// sequence's closing "no more" and the next one's "one more" deleted
/// together merge the two, and the merged elements then sit where a
/// "one more" choice was).
fn aligned_enough(s: &Shrinker, start: usize, k: usize) -> bool {
    let nodes = &s.best.nodes;
    if stays_aligned(nodes, start, k) {
        return true;
    }
    s.polish
        && start + k < nodes.len()
        && crate::tree::same_kind(&nodes[start].constraints, &nodes[start + k].constraints)
}

/// Whether deleting `k` choices at `start` leaves the choices that move up
/// into their place of the same kind as the ones there before (a boolean
/// where a boolean was, an integer with the same bounds): otherwise the
/// replay misreads them, and the candidate is noise.
fn stays_aligned(nodes: &[crate::choice::ChoiceNode], start: usize, k: usize) -> bool {
    (start..nodes.len().saturating_sub(k))
        .take(2)
        .all(|j| crate::tree::same_kind(&nodes[j].constraints, &nodes[j + k].constraints))
}

/// Lowers an integer by one step toward its simplest value and deletes one
/// later span in the same candidate: a size chosen earlier (e.g. by a
/// `flat_map`) and the elements it sized shrink together, even when the
/// element to remove is in the middle.
pub(in crate::shrink) fn lower_and_delete(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        let node = s.best.nodes[i].clone();
        i += 1;
        let (ChoiceValue::Integer(v), Constraints::Integer(c)) = (&node.value, &node.constraints)
        else {
            continue;
        };
        // Counts and sizes are bounded, non-negative integers; lowering
        // another value by one is not what makes a later span deletable.
        if node.forced || *v == c.simplest() || !may_count(c) {
            continue;
        }
        let lowered = if *v > c.simplest() { v - 1 } else { v + 1 };
        if !c.permits(lowered) {
            continue;
        }
        let position = i - 1;
        let mut spans: Vec<(usize, usize)> = s
            .best
            .spans
            .iter()
            .filter(|sp| sp.start > position && sp.end <= s.best.nodes.len() && sp.start < sp.end)
            .map(|sp| (sp.start, sp.end))
            .collect();
        spans.sort_unstable();
        spans.dedup();
        for (start, end) in spans {
            if s.exhausted() {
                return;
            }
            let mut candidate = s.best.choices();
            candidate.drain(start..end);
            candidate[position] = ChoiceValue::Integer(lowered);
            if s.consider(candidate) {
                // Same integer again: it may go lower still.
                i = position;
                break;
            }
        }
    }
}

/// Merges two collections drawn one after the other into one: the first's
/// closing "no more" choice goes (with anything between the two), so the
/// second's elements become the first's, and a count drawn before them (an
/// integer at the same nesting level, like a list's length drawn by the
/// client before its elements) is lowered by one with it. A list of sets
/// whose union matters ends at one set, as Hypothesis ends it (hegel-cpp's
/// `ShrinkCollections.FindLargeUnionList`); deleting either set alone
/// loses its elements, and lowering the count alone loses the second set.
pub(in crate::shrink) fn merge_collections(s: &mut Shrinker) {
    use crate::data::labels::COLLECTION;
    let mut i = 0;
    while !s.exhausted() {
        // Pairs of sibling collections: the second starts where the first
        // ends, or one or two choices later (an outer collection's "one
        // more" between them).
        let mut collections: Vec<&crate::data::Span> = s
            .best
            .spans
            .iter()
            .filter(|sp| {
                sp.label == COLLECTION && sp.start < sp.end && sp.end <= s.best.nodes.len()
            })
            .collect();
        collections.sort_by_key(|sp| (sp.start, sp.depth));
        let pairs: Vec<(crate::data::Span, crate::data::Span)> = collections
            .iter()
            .flat_map(|a| {
                collections
                    .iter()
                    .filter(move |b| b.depth == a.depth && b.start >= a.end && b.start <= a.end + 2)
                    .map(move |b| ((*a).clone(), (*b).clone()))
            })
            .collect();
        let Some((a, b)) = pairs.get(i).cloned() else {
            return;
        };
        i += 1;
        let nodes = &s.best.nodes;
        // The first collection must have elements and be free to take
        // more: merging an empty one only deletes its "no more" (a
        // deletion pass's move), and a full one's "no more" is forced.
        let closes = a.end - a.start >= 2
            && !nodes[a.end - 1].forced
            && matches!(nodes[a.end - 1].value, ChoiceValue::Boolean(false));
        let opens = matches!(nodes[b.start].value, ChoiceValue::Boolean(true));
        if !closes || !opens {
            continue;
        }
        let mut merged = s.best.choices();
        merged.drain(a.end - 1..b.start);
        // The count, if there is one: the nearest free integers before the
        // first collection, at its nesting level, that may count.
        let enclosing = |p: usize| {
            s.best
                .spans
                .iter()
                .filter(|sp| sp.start <= p && p < sp.end)
                .count()
        };
        let counts: Vec<(usize, ChoiceValue)> = (0..a.start)
            .rev()
            .filter(|&p| enclosing(p) == a.depth)
            .filter_map(|p| {
                let node = &s.best.nodes[p];
                match &node.constraints {
                    Constraints::Integer(c) if may_count(c) => lower_once(node).map(|v| (p, v)),
                    _ => None,
                }
            })
            .take(2)
            .collect();
        let mut candidates = vec![merged.clone()];
        for (p, lowered) in counts {
            let mut candidate = merged.clone();
            candidate[p] = lowered;
            candidates.push(candidate);
        }
        for candidate in candidates {
            if s.consider_whole(candidate) {
                i = 0;
                break;
            }
        }
    }
}
