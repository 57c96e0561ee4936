//! Choice passes: each choice minimised on its own by the standalone value
//! shrinkers, and the moves single choices cannot make: equal integers
//! lowered together, neighbouring integers lowered by the same amount, and
//! magnitude moved from an earlier choice to a later one.

use super::{Attempts, ElementStarts, decides_element, find_integer};
use crate::choice::{ChoiceNode, ChoiceValue, Constraints};
use crate::shrink::Shrinker;
use crate::shrink::search::move_most;
use crate::shrink::values::Predicate;
use crate::shrink::values::{float::shrink_float, integer, text};

/// Minimises each choice on its own. Integers that cannot move are noted
/// (position and value) for `lower_pairs_together`.
///
/// An integer held back by a later one (`a <= b` with `b` large: `a` can
/// only come down to `b`) is tried at its simplest value once more after the
/// sweep, if later choices moved meanwhile. Once only, and only the simplest
/// value: two integers that hold each other back (`|a - b| == 1`) would
/// otherwise leapfrog down a step per try, which is `lower_pairs_together`'s
/// job (both still short of their simplest values count as stuck for it).
pub(in crate::shrink) fn minimize_choices(s: &mut Shrinker) {
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
                    integer::shrink_integer(
                        *v,
                        *c,
                        &mut Attempts::new(s, |s, x: &i128| {
                            try_set_deleting_lost(s, i, ChoiceValue::Integer(*x))
                        }),
                    );
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
                (ChoiceValue::Float(v), Constraints::Float(c)) => shrink_float(
                    *v,
                    *c,
                    &mut Attempts::new(s, |s, x: &f64| s.try_set(i, ChoiceValue::Float(*x))),
                ),
                (ChoiceValue::Bytes(b), Constraints::Bytes(size)) => text::shrink_bytes(
                    b,
                    size.min_size,
                    &mut Attempts::new(s, |s, x: &Vec<u8>| {
                        s.try_set(i, ChoiceValue::Bytes(x.clone()))
                    }),
                ),
                (ChoiceValue::String(p), Constraints::String { alphabet, size }) => {
                    text::shrink_string(
                        p,
                        alphabet,
                        size.min_size,
                        &mut Attempts::new(s, |s, x: &Vec<u32>| {
                            s.try_set(i, ChoiceValue::String(x.clone()))
                        }),
                    )
                }
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

/// Tries the best example with choice `i` set to `value`; if that fails but
/// its replay made fewer choices than the candidate holds (the value sized
/// what follows it, as a count does), tries it once more with that many
/// choices right after `i` deleted: what the count no longer asks for goes,
/// and the choices after it line up again (Hypothesis' `try_shrinking_nodes`).
fn try_set_deleting_lost(s: &mut Shrinker, i: usize, value: ChoiceValue) -> bool {
    let mut candidate = s.best.choices();
    if i >= candidate.len() {
        return false;
    }
    candidate[i] = value;
    if s.consider(candidate.clone()) {
        return true;
    }
    let Some(lost) = s.last_run_lost() else {
        return false;
    };
    if i + 1 + lost > candidate.len() {
        return false;
    }
    candidate.drain(i + 1..i + 1 + lost);
    s.consider(candidate)
}

/// Lowers every copy of a duplicated integer value together (bugs that need
/// x == y == z), by binary search on the shared distance from the simplest value.
pub(in crate::shrink) fn lower_integers_together(s: &mut Shrinker) {
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
        let attempt = |s: &mut Shrinker, d: &u128| -> bool {
            let d = *d;
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
        let mut attempts = Attempts::new(s, attempt);
        if !attempts.holds(&0) {
            integer::shrink_distance(value.abs_diff(target), &mut attempts);
        }
        lower_pairs_of_copies(s, value, &positions);
    }
}

/// When three or more choices share a value and lowering them all together
/// did not work, some of the copies may be equal by coincidence (a tag that
/// happens to equal two labels that must match): each pair of them goes to
/// its simplest value together, in one test case per pair (at most
/// `MAX_PAIRS` pairs).
fn lower_pairs_of_copies(s: &mut Shrinker, value: i128, positions: &[usize]) {
    const MAX_PAIRS: usize = 15;
    let unchanged = |s: &Shrinker| {
        positions
            .iter()
            .all(|&p| s.best.nodes.get(p).map(|n| &n.value) == Some(&ChoiceValue::Integer(value)))
    };
    if positions.len() < 3 || !unchanged(s) {
        return;
    }
    let pairs = positions
        .iter()
        .enumerate()
        .flat_map(|(k, &a)| positions[k + 1..].iter().map(move |&b| (a, b)))
        .take(MAX_PAIRS);
    for (a, b) in pairs {
        if s.exhausted() {
            return;
        }
        let mut candidate = s.best.choices();
        for p in [a, b] {
            candidate[p] = s.best.nodes[p].constraints.simplest();
        }
        if s.consider(candidate) {
            return;
        }
    }
}

/// Moves two neighbouring integers toward their simplest values by the same
/// amount, keeping their difference (bugs that need `y == x + 1`, or any
/// relation between two values, with both large): Hypothesis's
/// `lower_common_node_offset` for pairs. Each integer is paired with the next
/// free integer choice; small offsets are probed first.
pub(in crate::shrink) fn lower_pairs_together(s: &mut Shrinker) {
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
        let mut shift = |k: u128| -> bool {
            let (nx, ny) = if above {
                (x.checked_sub_unsigned(k), y.checked_sub_unsigned(k))
            } else {
                (x.checked_add_unsigned(k), y.checked_add_unsigned(k))
            };
            try_integer_pair(s, (i, &ca, nx), (j, &cb, ny))
        };
        // Every probe moves both from the original pair.
        if !shift(room) {
            find_integer(|k| k < room && shift(k));
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
/// Moves magnitude from an earlier integer to a later one (keeping their sum),
/// so the earlier, more significant choice becomes simpler; likewise a float,
/// characters of a string, or a boolean's truth.
pub(in crate::shrink) fn redistribute_pairs(s: &mut Shrinker) {
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
                    let mut moved = 0u128;
                    let mut shift = |k: u128| -> bool {
                        if k <= moved {
                            return true;
                        }
                        let (nx, ny) = if x > ca.simplest() {
                            (x.checked_sub_unsigned(k), y.checked_add_unsigned(k))
                        } else {
                            (x.checked_add_unsigned(k), y.checked_sub_unsigned(k))
                        };
                        let ok = try_integer_pair(s, (i, &ca, nx), (j, &cb, ny));
                        if ok {
                            moved = k;
                        }
                        ok
                    };
                    // Every probe moves k from the original pair, so the
                    // successes form a prefix of 1..full.
                    if shift(1) && full > 1 && !shift(full) {
                        move_most(full, &mut shift);
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
                (ChoiceValue::Boolean(true), ChoiceValue::Boolean(false), _, _) => {
                    // The true moves later: a recursive value's branch
                    // decision passes to a later sub-value, so the same
                    // number of leaves hangs deeper on the right (a
                    // saturated leaf budget admits no smaller tree, only a
                    // shortlex-simpler one of the same size). Between two
                    // collections' "one more?" choices the move only
                    // shifts an element to another collection, which the
                    // deletion passes do better (it cost nestedlists 13 test
                    // cases a shrink and never improved it).
                    if decides_element(s, i) && decides_element(s, j) {
                        continue;
                    }
                    let mut candidate = s.best.choices();
                    candidate[i] = ChoiceValue::Boolean(false);
                    candidate[j] = ChoiceValue::Boolean(true);
                    s.consider(candidate);
                }
                (
                    ChoiceValue::String(x),
                    ChoiceValue::String(y),
                    Constraints::String { size: sx, .. },
                    Constraints::String { size: sy, .. },
                ) => {
                    if let Some((nx, ny)) = move_elements(x, y, sx.min_size, sy.max_size) {
                        let mut candidate = s.best.choices();
                        candidate[i] = ChoiceValue::String(nx);
                        candidate[j] = ChoiceValue::String(ny);
                        s.consider(candidate);
                    }
                }
                (
                    ChoiceValue::Bytes(x),
                    ChoiceValue::Bytes(y),
                    Constraints::Bytes(sx),
                    Constraints::Bytes(sy),
                ) => {
                    if let Some((nx, ny)) = move_elements(x, y, sx.min_size, sy.max_size) {
                        let mut candidate = s.best.choices();
                        candidate[i] = ChoiceValue::Bytes(nx);
                        candidate[j] = ChoiceValue::Bytes(ny);
                        s.consider(candidate);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Moves as many elements as the sizes allow from the end of the first of two
/// strings (or byte strings) to the front of the second, so the first, more
/// significant one gets shorter while the total length stays: the first
/// keeps at least `min_first` elements, the second gets at most
/// `max_second`. `None` when nothing can move.
fn move_elements<T: Clone>(
    first: &[T],
    second: &[T],
    min_first: usize,
    max_second: usize,
) -> Option<(Vec<T>, Vec<T>)> {
    let movable = first.len().saturating_sub(min_first);
    let room = max_second.saturating_sub(second.len());
    let moved = movable.min(room);
    if moved == 0 {
        return None;
    }
    let keep = first.len() - moved;
    let mut new_second = first[keep..].to_vec();
    new_second.extend_from_slice(second);
    Some((first[..keep].to_vec(), new_second))
}
