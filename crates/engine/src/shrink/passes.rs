//! The shrink passes. Each is small and independent, works on the current best
//! example, and re-reads it after every success (indices may have moved).

use super::Shrinker;
use crate::choice::{ChoiceNode, ChoiceValue, Constraints, float_key};
use std::cmp::Ordering;

/// A shrink pass: improves the shrinker's best example in place.
type ShrinkPass = fn(&mut Shrinker);

/// One round of every pass, cheapest and most effective first (the order is
/// Hypothesis's: simplest spans, deletions, then single choices and pairs).
pub fn run_all(s: &mut Shrinker) {
    let passes: [(&str, ShrinkPass); 11] = [
        ("remove_discarded", remove_discarded),
        ("simplify_spans", simplify_spans),
        ("delete_spans", delete_spans),
        ("delete_chunks", delete_chunks),
        ("lower_integers_together", lower_integers_together),
        ("minimize_choices", minimize_choices),
        ("lower_pairs_together", lower_pairs_together),
        ("lower_and_delete", lower_and_delete),
        ("lift_spans", lift_spans),
        ("sort_sibling_spans", sort_sibling_spans),
        ("redistribute_pairs", redistribute_pairs),
    ];
    for (name, pass) in passes {
        let (calls, improvements) = (s.calls, s.improvements);
        pass(s);
        if s.debug != super::Debug::Off {
            eprintln!(
                "{name}: {} calls, {} improvements, best {:?}",
                s.calls - calls,
                s.improvements - improvements,
                s.best.choices()
            );
        }
    }
}

/// Deletes every discarded span (rejected filter attempts and the like) at
/// once: they do not contribute to the value, and without them later
/// candidates line up with the choices the test really uses.
fn remove_discarded(s: &mut Shrinker) {
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
/// one per test case. In the first round, collections are cut short first
/// (`truncate_collections`).
fn delete_spans(s: &mut Shrinker) {
    if s.rounds == 0 {
        truncate_collections(s);
    }
    let mut i = s.best.spans.len();
    while i > 0 && !s.exhausted() {
        i = (i - 1).min(s.best.spans.len().saturating_sub(1));
        let Some(span) = s.best.spans.get(i).cloned() else {
            return;
        };
        if span.end <= s.best.nodes.len()
            && span.start < span.end
            && s.try_replace(span.start..span.end, &[])
        {
            delete_preceding_siblings(s, &span);
            i = i.min(s.best.spans.len());
        }
    }
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
fn element_runs(s: &Shrinker) -> Vec<Vec<(usize, usize)>> {
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

/// The spans with `label` and `depth` that follow each other from `at`
/// (forwards: each starting where the last ended) or lead up to it
/// (backwards: each ending where the next starts), as the positions where
/// they end (forwards) or start (backwards), nearest first.
fn sibling_chain(s: &Shrinker, label: u64, depth: usize, at: usize, forwards: bool) -> Vec<usize> {
    let mut next: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for sp in &s.best.spans {
        if sp.label == label && sp.depth == depth && sp.start < sp.end {
            if forwards {
                next.entry(sp.start).or_insert(sp.end);
            } else {
                next.entry(sp.end).or_insert(sp.start);
            }
        }
    }
    let mut chain = Vec::new();
    let mut at = at;
    while let Some(&to) = next.get(&at) {
        chain.push(to);
        at = to;
    }
    chain
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

/// Deletes runs of one or two consecutive choices, from the end backwards
/// (whole elements and structures go with their spans in `delete_spans`).
fn delete_chunks(s: &mut Shrinker) {
    for k in [2usize, 1] {
        let mut i = s.best.nodes.len().saturating_sub(k) as isize;
        while i >= 0 && !s.exhausted() {
            let start = i as usize;
            if start + k <= s.best.nodes.len()
                && (s.polish || stays_aligned(&s.best.nodes, start, k))
                && s.try_replace(start..start + k, &[])
            {
                i = (s.best.nodes.len().saturating_sub(k) as isize).min(i);
                continue;
            }
            // Deleting a chunk sometimes needs the integer before it lowered
            // (a length drawn before the elements it counts): the polish
            // round tries that too.
            if s.polish && start > 0 && start + k <= s.best.nodes.len() {
                let prev = start - 1;
                if let Some(lowered) = lower_once(&s.best.nodes[prev]) {
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

/// A free integer choice one step simpler, if there is one.
fn lower_once(node: &crate::choice::ChoiceNode) -> Option<ChoiceValue> {
    match (&node.value, &node.constraints) {
        (ChoiceValue::Integer(v), Constraints::Integer(c)) if !node.forced => {
            let index = c.index_of(*v);
            if index == 0 {
                return None;
            }
            c.value_at(index - 1).map(ChoiceValue::Integer)
        }
        _ => None,
    }
}

/// Replaces every choice in a span with its simplest value, except the
/// choices that decided to draw collection elements: turned `false`, one
/// ends its collection there and the choices after it are misread (the
/// deletion passes remove elements). It runs first: zeroing a whole
/// structure, or each element in turn, is one test case each, and values at
/// their simplest make later deletions succeed (duplicates everywhere).
fn simplify_spans(s: &mut Shrinker) {
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

/// Which choices decided to draw a collection element, for the current best
/// example (recomputed when it changes).
#[derive(Default)]
struct ElementStarts {
    improvements: Option<usize>,
    at: Vec<bool>,
}

impl ElementStarts {
    fn get(&mut self, s: &Shrinker, i: usize) -> bool {
        if self.improvements != Some(s.improvements) {
            self.improvements = Some(s.improvements);
            self.at = vec![false; s.best.nodes.len()];
            for sp in &s.best.spans {
                if sp.label == crate::data::labels::COLLECTION_ELEMENT && sp.start < self.at.len() {
                    self.at[sp.start] = true;
                }
            }
        }
        self.at.get(i).copied().unwrap_or(false)
    }
}

/// Minimises each choice on its own. Integers that cannot move are noted
/// (position and value) for `lower_pairs_together`.
///
/// An integer held back by a later one (`a <= b` with `b` large: `a` can
/// only come down to `b`) is tried at its simplest value once more after the
/// sweep, if later choices moved meanwhile. Once only, and only the simplest
/// value: two integers that hold each other back (`|a - b| == 1`) would
/// otherwise leapfrog down a step per try, which is `lower_pairs_together`'s
/// job (both still short of their simplest values count as stuck for it).
fn minimize_choices(s: &mut Shrinker) {
    s.stuck.clear();
    // (position, value after minimising, improvements by then)
    let mut held: Vec<(usize, i128, usize)> = Vec::new();
    let mut starts = ElementStarts::default();
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        let node = s.best.nodes[i].clone();
        if !node.forced {
            match (&node.value, &node.constraints) {
                (ChoiceValue::Integer(v), Constraints::Integer(c)) => {
                    let before = s.improvements;
                    minimize_integer(s, i);
                    if s.improvements == before {
                        s.stuck.insert((i, *v));
                    }
                    if let Some(ChoiceValue::Integer(now)) = s.best.nodes.get(i).map(|n| &n.value)
                        && *now != c.simplest()
                    {
                        held.push((i, *now, s.improvements));
                    }
                }
                // Not an element's "draw it" choice: `false` would end the
                // collection there (see `simplify_spans`).
                (ChoiceValue::Boolean(true), _) if !starts.get(s, i) => {
                    s.try_set(i, ChoiceValue::Boolean(false));
                }
                (ChoiceValue::Float(_), Constraints::Float(_)) => minimize_float(s, i),
                (ChoiceValue::Bytes(_), _) => minimize_sequence(s, i),
                (ChoiceValue::String(_), _) => minimize_sequence(s, i),
                _ => {}
            }
        }
        i += 1;
    }
    for (i, v, improvements_then) in held {
        if s.exhausted() {
            return;
        }
        let Some(ChoiceNode {
            value: ChoiceValue::Integer(now),
            constraints: Constraints::Integer(c),
            ..
        }) = s.best.nodes.get(i).cloned()
        else {
            continue;
        };
        if now != v || s.improvements == improvements_then {
            continue;
        }
        if !s.try_set(i, ChoiceValue::Integer(c.simplest())) {
            s.stuck.insert((i, v));
        }
    }
}

/// The largest `n` for which `f(n)` holds, assuming `f(0)` does and that it
/// holds up to some point: a linear probe of 1..=4 (cheap when the answer is
/// small, the common case), then doubling, then binary search (Hypothesis's
/// `find_integer`). Returns 0 if `f(1)` fails.
fn find_integer(mut f: impl FnMut(u128) -> bool) -> u128 {
    for n in 1..=4 {
        if !f(n) {
            return n - 1;
        }
    }
    let (mut lo, mut hi) = (4u128, 5u128);
    while f(hi) {
        lo = hi;
        match hi.checked_mul(2) {
            Some(next) => hi = next,
            None => return lo,
        }
    }
    bisect(lo, hi, f).0
}

/// Binary search between `lo`, where `f` holds, and `hi`, where it does not:
/// the adjacent pair where it changes (for `f` true up to some point).
fn bisect(mut lo: u128, mut hi: u128, mut f: impl FnMut(u128) -> bool) -> (u128, u128) {
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if f(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

/// Lowers a distance (from an integer's simplest value) by Hypothesis's
/// integer moves: 1, a wide distance's top or bottom byte, then masking
/// high bits, shifting right, subtracting
/// multiples of two and of one, each probing small steps first so that a
/// distance that cannot move costs a handful of test cases. `attempt(s, d)`
/// tries distance `d` and tells whether it became the best example; `d` is
/// the current distance (whose attempt at 0 has already failed).
fn shrink_distance(
    s: &mut Shrinker,
    d: u128,
    attempt: &mut dyn FnMut(&mut Shrinker, u128) -> bool,
) {
    let mut d = d;
    if d > 1 && attempt(s, 1) {
        return;
    }
    // A wide value: into one byte at once if it can go (its top or bottom
    // eight bits), as Hypothesis's integer shrinker does first.
    {
        let bits = 128 - d.leading_zeros();
        if bits > 8 {
            for squeezed in [d >> (bits - 8), d & 0xFF] {
                if squeezed < d && attempt(s, squeezed) {
                    d = squeezed;
                    break;
                }
            }
        }
    }
    let bits = u128::from(128 - d.leading_zeros());
    let base = d;
    let masked = find_integer(|k| {
        k < bits && !s.exhausted() && attempt(s, base & ((1u128 << (bits - k)) - 1))
    });
    if masked > 0 {
        d = base & ((1u128 << (bits - masked)) - 1);
    }
    loop {
        let before = d;
        let base = d;
        let k = find_integer(|k| k < 128 && !s.exhausted() && attempt(s, base >> k));
        d = base >> k;
        let base = d;
        let n = find_integer(|n| {
            n.checked_mul(2).is_some_and(|m| m <= base)
                && !s.exhausted()
                && attempt(s, base - 2 * n)
        });
        d = base - 2 * n;
        let base = d;
        let n = find_integer(|n| n <= base && !s.exhausted() && attempt(s, base - n));
        d = base - n;
        if d == before || s.exhausted() {
            return;
        }
    }
}

/// The most (below `full`, which failed) that `shift` can move: small amounts
/// probed first, as `find_integer` does; past 16, a binary search up to
/// `full`, which halves the probes that doubling from below would spend on
/// huge values (moving 2^100 costs about 100 probes, not 200).
fn move_most(s: &mut Shrinker, full: u128, shift: &dyn Fn(&mut Shrinker, u128) -> bool) -> u128 {
    const SMALL: u128 = 16;
    let small = find_integer(|k| k <= SMALL && k < full && shift(s, k));
    if small < SMALL || full <= SMALL + 1 {
        return small;
    }
    bisect(SMALL, full, |k| shift(s, k)).0
}

/// Shrinks an integer toward the simplest value by its distance from it: the
/// simplest value; below it, one above it and then the same distance above
/// it (both simpler); then distance 1 and Hypothesis's integer moves (masking high bits, shifting right,
/// subtracting multiples of two and of one), each probing small steps first
/// so that a choice that cannot move costs a handful of test cases.
///
/// Like Hypothesis, it does not search every distance just below the current
/// one: a predicate that is not monotone (`x % 7 == 0` in 10..=1000) may stop
/// above its smallest failing value (21, not 14). Probing 2..=16 steps below
/// every stuck integer cost 4-15 executions each on every example, a third
/// of all shrinking on the difference challenges, to help only such
/// predicates.
fn minimize_integer(s: &mut Shrinker, i: usize) {
    let Some(node) = s.best.nodes.get(i) else {
        return;
    };
    let (ChoiceValue::Integer(v), Constraints::Integer(c)) = (&node.value, &node.constraints)
    else {
        return;
    };
    let (v, c) = (*v, *c);
    let target = c.simplest();
    if v == target || s.try_set(i, ChoiceValue::Integer(target)) {
        return;
    }
    // The current distance and side (true: above the target).
    let current = |s: &Shrinker| -> Option<(u128, bool)> {
        match s.best.nodes.get(i).map(|n| &n.value) {
            Some(ChoiceValue::Integer(now)) => Some((now.abs_diff(target), *now > target)),
            _ => None,
        }
    };
    let try_distance = |s: &mut Shrinker, d: u128, above: bool| -> bool {
        let candidate = if above {
            target.checked_add_unsigned(d)
        } else {
            target.checked_sub_unsigned(d)
        };
        match candidate {
            Some(x) if c.permits(x) && Some((d, above)) != current(s) => {
                s.try_set(i, ChoiceValue::Integer(x))
            }
            _ => false,
        }
    };
    let Some((d, above)) = current(s) else { return };
    if !above {
        // Below the target: one above it is the simplest value left, and
        // the same distance above it is simpler.
        if d > 1 && try_distance(s, 1, true) {
            return;
        }
        try_distance(s, d, true);
    }
    let Some((d, above)) = current(s) else { return };
    shrink_distance(s, d, &mut |s, d| try_distance(s, d, above));
    // Above the target, the other side's smaller distances are simpler too.
    if let Some((d, true)) = current(s)
        && d >= 2
        && try_distance(s, d - 1, false)
    {
        shrink_distance(s, d - 1, &mut |s, d| try_distance(s, d, false));
    }
}

/// Shrinks a float: a few likely candidates, then binary search on its
/// position in the float simplicity order (same sign), then the sign.
fn minimize_float(s: &mut Shrinker, i: usize) {
    let Some(node) = s.best.nodes.get(i) else {
        return;
    };
    let (ChoiceValue::Float(v), Constraints::Float(c)) =
        (node.value.clone(), node.constraints.clone())
    else {
        return;
    };
    let current_key = float_key(v);
    let mut candidates = vec![c.simplest(), 0.0, 1.0, -1.0];
    if v.is_nan() || v.is_infinite() {
        candidates.extend([f64::MAX, -f64::MAX, f64::INFINITY, f64::NEG_INFINITY]);
    }
    if v.is_finite() {
        candidates.extend([v.trunc(), v.floor(), v.ceil(), -v]);
    }
    candidates.retain(|x| c.permits(*x) && float_key(*x) < current_key);
    candidates.sort_by_key(|x| float_key(*x));
    candidates.dedup_by(|a, b| a.to_bits() == b.to_bits());
    for candidate in candidates {
        if s.try_set(i, ChoiceValue::Float(candidate)) {
            break;
        }
    }
    let Some(ChoiceValue::Float(v)) = s.best.nodes.get(i).map(|n| n.value.clone()) else {
        return;
    };
    if v.is_nan() {
        return;
    }
    let negative = v.is_sign_negative();
    let signed = |m: f64| if negative { -m } else { m };
    let mut lo = 0u64;
    let mut hi = crate::choice::float_magnitude_index(v);
    while lo < hi && !s.exhausted() {
        let mid = lo + (hi - lo) / 2;
        let candidate = signed(crate::choice::float_from_magnitude_key(mid));
        if c.permits(candidate)
            && !candidate.is_nan()
            && s.try_set(i, ChoiceValue::Float(candidate))
        {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if let Some(ChoiceValue::Float(now)) = s.best.nodes.get(i).map(|n| n.value.clone())
        && now.is_sign_negative()
        && c.permits(-now)
    {
        s.try_set(i, ChoiceValue::Float(-now));
    }
}

/// Shrinks a bytes or string choice: shorter first, then each element smaller.
fn minimize_sequence(s: &mut Shrinker, i: usize) {
    // Try the simplest value outright.
    if let Some(node) = s.best.nodes.get(i) {
        let simplest = node.constraints.simplest();
        if simplest != node.value && s.try_set(i, simplest) {
            return;
        }
    }
    // Delete elements from the end backwards; then try halving the length.
    let mut j = seq_len(s, i);
    while j > 0 && !s.exhausted() {
        j -= 1;
        if let Some(v) = with_element_removed(s, i, j) {
            s.try_set(i, v);
        }
        j = j.min(seq_len(s, i));
    }
    // Minimise each element.
    let mut j = 0;
    while j < seq_len(s, i) && !s.exhausted() {
        minimize_element(s, i, j);
        j += 1;
    }
    // Lower one element and make everything after it simplest: smaller in
    // order even when no single element can move alone.
    let mut j = 0;
    while j < seq_len(s, i) && !s.exhausted() {
        lower_with_simplest_suffix(s, i, j);
        j += 1;
    }
    // Sort elements into simplest order.
    if let Some(node) = s.best.nodes.get(i).cloned() {
        let sorted = match (&node.value, &node.constraints) {
            (ChoiceValue::Bytes(b), _) => {
                let mut b = b.clone();
                b.sort_unstable();
                ChoiceValue::Bytes(b)
            }
            (ChoiceValue::String(p), Constraints::String { alphabet, .. }) => {
                let mut p = p.clone();
                p.sort_by_key(|c| alphabet.shrink_index(*c));
                ChoiceValue::String(p)
            }
            _ => node.value.clone(),
        };
        if sorted != node.value {
            s.try_set(i, sorted);
        }
    }
}

/// Rebuilds a bytes or string value from element ranks (0 = simplest).
type RebuildSequence = Box<dyn Fn(&[u64]) -> Option<ChoiceValue>>;

fn lower_with_simplest_suffix(s: &mut Shrinker, i: usize, j: usize) {
    let Some(node) = s.best.nodes.get(i).cloned() else {
        return;
    };
    // Element ranks (0 = simplest) of the sequence and a way to rebuild it.
    let (ranks, rebuild): (Vec<u64>, RebuildSequence) = match (&node.value, &node.constraints) {
        (ChoiceValue::Bytes(b), _) => (
            b.iter().map(|x| u64::from(*x)).collect(),
            Box::new(|r: &[u64]| Some(ChoiceValue::Bytes(r.iter().map(|x| *x as u8).collect()))),
        ),
        (ChoiceValue::String(p), Constraints::String { alphabet, .. }) => {
            let alphabet = alphabet.clone();
            (
                p.iter().map(|c| alphabet.shrink_index(*c)).collect(),
                Box::new(move |r: &[u64]| {
                    r.iter()
                        .map(|x| alphabet.char_at_shrink_index(*x))
                        .collect::<Option<Vec<u32>>>()
                        .map(ChoiceValue::String)
                }),
            )
        }
        _ => return,
    };
    if j >= ranks.len() || ranks[j] == 0 || ranks[j + 1..].iter().all(|r| *r == 0) {
        return;
    }
    // Small ranks first (readable results), then halving toward the current one.
    let mut tried = 0;
    let mut t = 0u64;
    while t < ranks[j] && tried < 16 && !s.exhausted() {
        let mut candidate = ranks[..j].to_vec();
        candidate.push(t);
        candidate.extend(std::iter::repeat_n(0, ranks.len() - j - 1));
        if let Some(value) = rebuild(&candidate)
            && s.try_set(i, value)
        {
            return;
        }
        tried += 1;
        t = if t < 8 {
            t + 1
        } else {
            t + (ranks[j] - t).div_ceil(2)
        };
    }
}

fn seq_len(s: &Shrinker, i: usize) -> usize {
    match s.best.nodes.get(i).map(|n| &n.value) {
        Some(ChoiceValue::Bytes(b)) => b.len(),
        Some(ChoiceValue::String(p)) => p.len(),
        _ => 0,
    }
}

fn with_element_removed(s: &Shrinker, i: usize, j: usize) -> Option<ChoiceValue> {
    let node = s.best.nodes.get(i)?;
    match &node.value {
        ChoiceValue::Bytes(b) if j < b.len() => {
            let mut b = b.clone();
            b.remove(j);
            Some(ChoiceValue::Bytes(b))
        }
        ChoiceValue::String(p) if j < p.len() => {
            let mut p = p.clone();
            p.remove(j);
            Some(ChoiceValue::String(p))
        }
        _ => None,
    }
}

fn minimize_element(s: &mut Shrinker, i: usize, j: usize) {
    let Some(node) = s.best.nodes.get(i).cloned() else {
        return;
    };
    match (&node.value, &node.constraints) {
        (ChoiceValue::Bytes(b), _) => {
            let mut hi = u64::from(b[j]);
            let mut lo = 0u64;
            while lo < hi && !s.exhausted() {
                let mid = if lo == 0 && hi > 1 {
                    0
                } else {
                    lo + (hi - lo) / 2
                };
                let mut candidate = match s.best.nodes.get(i).map(|n| &n.value) {
                    Some(ChoiceValue::Bytes(b)) => b.clone(),
                    _ => return,
                };
                candidate[j] = mid as u8;
                if s.try_set(i, ChoiceValue::Bytes(candidate)) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
        }
        (ChoiceValue::String(p), Constraints::String { alphabet, .. }) => {
            let mut hi = alphabet.shrink_index(p[j]);
            let mut lo = 0u64;
            while lo < hi && !s.exhausted() {
                let mid = if lo == 0 { 0 } else { lo + (hi - lo) / 2 };
                let Some(ch) = alphabet.char_at_shrink_index(mid) else {
                    return;
                };
                let mut candidate = match s.best.nodes.get(i).map(|n| &n.value) {
                    Some(ChoiceValue::String(p)) => p.clone(),
                    _ => return,
                };
                candidate[j] = ch;
                if s.try_set(i, ChoiceValue::String(candidate)) {
                    hi = mid;
                } else if mid == 0 {
                    lo = 1;
                } else {
                    lo = mid + 1;
                }
            }
        }
        _ => {}
    }
}

/// Lowers an integer by one step toward its simplest value and deletes one
/// later span in the same candidate: a size chosen earlier (e.g. by a
/// `flat_map`) and the elements it sized shrink together, even when the
/// element to remove is in the middle.
fn lower_and_delete(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        let node = s.best.nodes[i].clone();
        i += 1;
        let (ChoiceValue::Integer(v), Constraints::Integer(c)) = (&node.value, &node.constraints)
        else {
            continue;
        };
        // Counts and sizes are bounded integers; lowering a free-ranging
        // value by one is not what makes a later span deletable.
        if node.forced || *v == c.simplest() || c.min.is_none() || c.max.is_none() {
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

/// Replaces a span by a descendant span with the same label (e.g. a nested
/// list by one of its sublists).
fn lift_spans(s: &mut Shrinker) {
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
fn sort_sibling_spans(s: &mut Shrinker) {
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

/// Moves magnitude from an earlier integer to a later one (keeping their sum),
/// so the earlier, more significant choice becomes simpler.
fn redistribute_pairs(s: &mut Shrinker) {
    let n = s.best.nodes.len();
    for i in 0..n {
        for j in (i + 1)..n.min(i + 9) {
            if s.exhausted() {
                return;
            }
            let (Some(a), Some(b)) = (s.best.nodes.get(i).cloned(), s.best.nodes.get(j).cloned())
            else {
                return;
            };
            if a.forced || b.forced {
                continue;
            }
            match (&a.value, &b.value, &a.constraints, &b.constraints) {
                (
                    ChoiceValue::Integer(x),
                    ChoiceValue::Integer(y),
                    Constraints::Integer(ca),
                    Constraints::Integer(cb),
                ) => {
                    let (x, y) = (*x, *y);
                    if x == ca.simplest() {
                        continue;
                    }
                    // Move k from x toward simplest, adding it to y: one
                    // first (most pairs cannot move at all), then all of it,
                    // else as much as works.
                    let (ca, cb) = (*ca, *cb);
                    let full = x.abs_diff(ca.simplest());
                    let moved = std::cell::Cell::new(0u128);
                    let shift = |s: &mut Shrinker, k: u128| -> bool {
                        if k <= moved.get() {
                            return true;
                        }
                        let (nx, ny) = if x > ca.simplest() {
                            (x.checked_sub_unsigned(k), y.checked_add_unsigned(k))
                        } else {
                            (x.checked_add_unsigned(k), y.checked_sub_unsigned(k))
                        };
                        let ok = try_integer_pair(s, (i, &ca, nx), (j, &cb, ny));
                        if ok {
                            moved.set(k);
                        }
                        ok
                    };
                    // Every probe moves k from the original pair, so the
                    // successes form a prefix of 1..full.
                    if shift(s, 1) && full > 1 && !shift(s, full) {
                        move_most(s, full, &shift);
                    }
                }
                (
                    ChoiceValue::Float(x),
                    ChoiceValue::Float(y),
                    Constraints::Float(ca),
                    Constraints::Float(cb),
                ) => {
                    // Make the first float the smallest integer that keeps the
                    // sum exactly, moving the difference to the second.
                    let (x, y) = (*x, *y);
                    if !x.is_finite() || !y.is_finite() || x <= 0.0 {
                        continue;
                    }
                    let total = x + y;
                    let attempt = |s: &mut Shrinker, nx: f64| -> bool {
                        let ny = total - nx;
                        if nx >= x || !ca.permits(nx) || !cb.permits(ny) || nx + ny != total {
                            return false;
                        }
                        let mut candidate = s.best.choices();
                        candidate[i] = ChoiceValue::Float(nx);
                        candidate[j] = ChoiceValue::Float(ny);
                        s.consider(candidate)
                    };
                    if attempt(s, 0.0) {
                        continue;
                    }
                    // Binary search over integral values. Above 2^53, adding
                    // or subtracting 1 no longer moves a float, so the search
                    // stops when its bounds stop moving (and after 128 steps at
                    // most: cached candidates cost no budget, so the budget
                    // alone would not end it).
                    let (mut lo, mut hi) = (1.0f64, x.floor());
                    for _ in 0..128 {
                        if lo > hi || s.exhausted() {
                            break;
                        }
                        let mid = ((lo + hi) / 2.0).floor();
                        let (next_lo, next_hi) = if attempt(s, mid) {
                            (lo, mid - 1.0)
                        } else {
                            (mid + 1.0, hi)
                        };
                        if (next_lo, next_hi) == (lo, hi) {
                            break;
                        }
                        (lo, hi) = (next_lo, next_hi);
                    }
                }
                (
                    ChoiceValue::String(x),
                    ChoiceValue::String(y),
                    _,
                    Constraints::String { size, .. },
                ) => {
                    // Move characters from the first string to the second.
                    if x.is_empty() {
                        continue;
                    }
                    let mut ny = x.clone();
                    ny.extend_from_slice(y);
                    if ny.len() <= size.max_size {
                        let mut candidate = s.best.choices();
                        candidate[i] = a.constraints.simplest();
                        candidate[j] = ChoiceValue::String(ny);
                        s.consider(candidate);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Lowers every copy of a duplicated integer value together (bugs that need
/// x == y == z), by binary search on the shared distance from the simplest value.
fn lower_integers_together(s: &mut Shrinker) {
    let mut values: Vec<i128> = s
        .best
        .nodes
        .iter()
        .filter(|n| !n.forced)
        .filter_map(|n| match n.value {
            ChoiceValue::Integer(v) => Some(v),
            _ => None,
        })
        .collect();
    values.sort_unstable();
    let duplicated: Vec<i128> = values
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for value in duplicated {
        if s.exhausted() {
            return;
        }
        let positions: Vec<usize> = s
            .best
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.forced && n.value == ChoiceValue::Integer(value))
            .map(|(i, _)| i)
            .collect();
        if positions.len() < 2 {
            continue;
        }
        let constraints: Vec<_> = positions
            .iter()
            .filter_map(|&i| match &s.best.nodes[i].constraints {
                Constraints::Integer(c) => Some(*c),
                _ => None,
            })
            .collect();
        let target = constraints[0].simplest();
        if value == target {
            continue;
        }
        let above = value > target;
        let mut attempt = |s: &mut Shrinker, d: u128| -> bool {
            let v = if above {
                target.checked_add_unsigned(d)
            } else {
                target.checked_sub_unsigned(d)
            };
            v.is_some_and(|v| {
                constraints.iter().all(|c| c.permits(v)) && {
                    let mut candidate = s.best.choices();
                    for &i in &positions {
                        candidate[i] = ChoiceValue::Integer(v);
                    }
                    s.consider(candidate)
                }
            })
        };
        if !attempt(s, 0) {
            shrink_distance(s, value.abs_diff(target), &mut attempt);
        }
    }
}

/// Moves two neighbouring integers toward their simplest values by the same
/// amount, keeping their difference (bugs that need `y == x + 1`, or any
/// relation between two values, with both large): Hypothesis's
/// `lower_common_node_offset` for pairs. Each integer is paired with the next
/// free integer choice; small offsets are probed first.
fn lower_pairs_together(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        let Some(j) = (i + 1..s.best.nodes.len()).find(|&j| {
            let n = &s.best.nodes[j];
            !n.forced && matches!(n.value, ChoiceValue::Integer(_))
        }) else {
            return;
        };
        let (a, b) = (&s.best.nodes[i], &s.best.nodes[j]);
        let (
            false,
            ChoiceValue::Integer(x),
            ChoiceValue::Integer(y),
            Constraints::Integer(ca),
            Constraints::Integer(cb),
        ) = (a.forced, &a.value, &b.value, &a.constraints, &b.constraints)
        else {
            i += 1;
            continue;
        };
        let (x, y, ca, cb) = (*x, *y, *ca, *cb);
        // Only when one of them could not move on its own this round.
        if !s.stuck.contains(&(i, x)) && !s.stuck.contains(&(j, y)) {
            i = j;
            continue;
        }
        // Both on the same side of their simplest values, neither at it.
        let (tx, ty) = (ca.simplest(), cb.simplest());
        let above = x > tx;
        if x == tx || y == ty || (y > ty) != above {
            i = j;
            continue;
        }
        let room = x.abs_diff(tx).min(y.abs_diff(ty));
        let shift = |s: &mut Shrinker, k: u128| -> bool {
            let (nx, ny) = if above {
                (x.checked_sub_unsigned(k), y.checked_sub_unsigned(k))
            } else {
                (x.checked_add_unsigned(k), y.checked_add_unsigned(k))
            };
            try_integer_pair(s, (i, &ca, nx), (j, &cb, ny))
        };
        // Every probe moves both from the original pair.
        if !shift(s, room) {
            find_integer(|k| k < room && shift(s, k));
        }
        i = j;
    }
}

/// Tries the best example with the integers at two positions replaced, when
/// both new values exist and are permitted there.
fn try_integer_pair(
    s: &mut Shrinker,
    (i, ci, vi): (usize, &crate::choice::IntegerConstraints, Option<i128>),
    (j, cj, vj): (usize, &crate::choice::IntegerConstraints, Option<i128>),
) -> bool {
    let (Some(vi), Some(vj)) = (vi, vj) else {
        return false;
    };
    if !ci.permits(vi) || !cj.permits(vj) || s.exhausted() || j >= s.best.nodes.len() {
        return false;
    }
    let mut candidate = s.best.choices();
    candidate[i] = ChoiceValue::Integer(vi);
    candidate[j] = ChoiceValue::Integer(vj);
    s.consider(candidate)
}
