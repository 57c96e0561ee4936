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
                        c.get(),
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

/// The largest divisor [`odd_prime_factors`] tries.
const TRIAL_DIVISION_LIMIT: u128 = 1000;

/// In the polish round, divides the distance of each integer that
/// `minimize_choices` could not move from its simplest value by each of the
/// distance's odd prime factors, smallest first (halving is the integer
/// shrinker's own move): a bug at multiples of six stalls at `18`, `30`,
/// `78`, where no subtraction or halving lands on another multiple, and
/// `78 / 13` does. Not a value with copies: `lower_integers_together` moves
/// those, and one copy moved alone breaks what they share.
pub(in crate::shrink) fn divide_integers(s: &mut Shrinker) {
    if !s.polish {
        return;
    }
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        let node = &s.best.nodes[i];
        if let (false, ChoiceValue::Integer(v), Constraints::Integer(c)) =
            (node.forced, &node.value, &node.constraints)
            && s.stuck.contains(&(i, *v))
            && !has_copy(s, i)
        {
            let (v, c) = (*v, c.get());
            let (t, d) = (c.simplest(), v.abs_diff(c.simplest()));
            for p in odd_prime_factors(d) {
                let to = if v > t {
                    t.checked_add_unsigned(d / p)
                } else {
                    t.checked_sub_unsigned(d / p)
                };
                if let Some(to) = to
                    && c.permits(to)
                    && s.try_set(i, ChoiceValue::Integer(to))
                {
                    break;
                }
            }
        }
        i += 1;
    }
}

/// Whether another free choice has choice `i`'s value.
fn has_copy(s: &Shrinker, i: usize) -> bool {
    let value = &s.best.nodes[i].value;
    s.best
        .nodes
        .iter()
        .enumerate()
        .any(|(k, n)| k != i && !n.forced && n.value == *value)
}

/// The odd prime factors of `d` up to [`TRIAL_DIVISION_LIMIT`], smallest
/// first, then what they leave of its odd part if more than one (a prime or
/// a product of large ones).
fn odd_prime_factors(d: u128) -> Vec<u128> {
    let mut rest = d >> d.trailing_zeros().min(127);
    let mut factors = Vec::new();
    let mut p = 3;
    while p <= TRIAL_DIVISION_LIMIT && p * p <= rest {
        if rest.is_multiple_of(p) {
            factors.push(p);
            while rest.is_multiple_of(p) {
                rest /= p;
            }
        }
        p += 2;
    }
    if rest > 1 && rest < d {
        factors.push(rest);
    }
    factors
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
                Constraints::Integer(c) => Some(c.get()),
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

/// Whether an integer with these bounds may select a path: a small range.
fn is_selector(c: &crate::choice::IntegerConstraints) -> bool {
    c.min
        .zip(c.max)
        .is_some_and(|(min, max)| max.abs_diff(min) <= 255)
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
        let (x, y, ca, cb) = (*x, *y, ca.get(), cb.get());
        // Only when one of them could not move on its own this round.
        if !s.stuck.contains(&(i, x)) && !s.stuck.contains(&(j, y)) {
            i = j;
            continue;
        }
        // Both on the same side of their simplest values, neither at it.
        let (tx, ty) = (ca.simplest(), cb.simplest());
        let above = x > tx;
        if x == tx {
            i = j;
            continue;
        }
        if y == ty || (y > ty) != above {
            // In the polish round, the first all the way to its simplest
            // value with the second moved by as much, away from its own
            // (`a + gap == b` at `(10, 0)`: `(0, -10)` is simpler): for
            // values drawn apart, not two elements of one collection (its
            // elements move by the passes that sort, merge and delete them).
            if s.polish && !same_collection(s, i, j) {
                let moved = tx.checked_sub(x).and_then(|delta| y.checked_add(delta));
                try_integer_pair(s, (i, &ca, Some(tx)), (j, &cb, moved));
            }
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
        if !shift(room) && find_integer(|k| k < room && shift(k)) == 0 && s.polish {
            trade_product(s, (i, x, &ca), (j, y, &cb));
        }
        i = j;
    }
}

/// Whether choices `i` and `j` are elements of the same collection (the
/// innermost collection around each is the same).
fn same_collection(s: &Shrinker, i: usize, j: usize) -> bool {
    let innermost = |k: usize| {
        s.best
            .spans
            .iter()
            .filter(|sp| sp.label == crate::data::labels::COLLECTION && sp.start <= k && k < sp.end)
            .max_by_key(|sp| sp.depth)
            .map(|sp| (sp.start, sp.end))
    };
    innermost(i).is_some_and(|c| innermost(j) == Some(c))
}

/// Trades two integers on the same side of their simplest values against
/// each other, keeping the product of their distances from them (bugs that
/// need `a * k >= 1000`: lowering either alone stops at `(2, 500)`): the
/// first goes to one step from its simplest value, the second up by as much
/// as keeps the product (as far as its bound allows).
fn trade_product(
    s: &mut Shrinker,
    (i, x, ca): (usize, i128, &crate::choice::IntegerConstraints),
    (j, y, cb): (usize, i128, &crate::choice::IntegerConstraints),
) {
    let (tx, ty) = (ca.simplest(), cb.simplest());
    let (dx, dy) = (x.abs_diff(tx), y.abs_diff(ty));
    let Some(product) = dx.checked_mul(dy) else {
        return;
    };
    if dx < 2 {
        return;
    }
    let step = |t: i128, v: i128, d: u128| {
        if v > t {
            t.checked_add_unsigned(d)
        } else {
            t.checked_sub_unsigned(d)
        }
    };
    // As far as the bound on the second's side allows.
    let far = match (step(ty, y, product), if y > ty { cb.max } else { cb.min }) {
        (Some(v), Some(bound)) if (y > ty && v > bound) || (y < ty && v < bound) => Some(bound),
        (v, _) => v,
    };
    try_integer_pair(s, (i, ca, step(tx, x, 1)), (j, cb, far));
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
                    let (ca, cb) = (ca.get(), cb.get());
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
                    // successes form a prefix of 1..full. A selector (a
                    // small range) moved by one may read what follows
                    // another way where all of it does not (`%f` between
                    // `%d` and `%s`): it moves all the way once more.
                    if shift(1) {
                        if full > 1 && !shift(full) {
                            move_most(full, &mut shift);
                        }
                    } else if full > 1 && is_selector(&ca) {
                        shift(full);
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
                (ChoiceValue::Integer(_), ChoiceValue::Float(_), _, _)
                | (ChoiceValue::Float(_), ChoiceValue::Integer(_), _, _) => {
                    redistribute_mixed(s, i, j);
                }
                (ChoiceValue::Boolean(true), ChoiceValue::Boolean(false), _, _)
                    if !decides_element(s, i) && !decides_element(s, j) =>
                {
                    // The true moves later: a recursive value's branch
                    // decision passes to a later sub-value, so the same
                    // number of leaves hangs deeper on the right (a
                    // saturated leaf budget admits no smaller tree, only a
                    // shortlex-simpler one of the same size). Not a
                    // collection's "draw another" decision: moving it moves
                    // elements between collections, which the deletion and
                    // merging passes do directly (the swap cost nestedlists
                    // 13 test cases a shrink and never improved it).
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

/// A number choice as the redistribution of an integer and a float sees it:
/// its value, its simplest value, and the choice holding `value` if the
/// constraints permit it exactly.
fn as_number(node: &ChoiceNode) -> Option<(f64, f64, impl Fn(f64) -> Option<ChoiceValue> + use<>)> {
    let (value, simplest) = match (&node.value, &node.constraints) {
        (ChoiceValue::Integer(v), Constraints::Integer(c)) => (*v as f64, c.simplest() as f64),
        (ChoiceValue::Float(v), Constraints::Float(c)) => (*v, c.simplest()),
        _ => return None,
    };
    let constraints = node.constraints.clone();
    let choice = move |v: f64| {
        let value = match constraints {
            Constraints::Integer(_) if v.fract() == 0.0 && v.abs() < 2f64.powi(100) => {
                ChoiceValue::Integer(v as i128)
            }
            Constraints::Float(_) => ChoiceValue::Float(v),
            _ => return None,
        };
        constraints.permits(&value).then_some(value)
    };
    (value.is_finite() && simplest.is_finite()).then_some((value, simplest, choice))
}

/// Moves a whole amount from an integer to a float after it or the other way
/// round, keeping their sum (`a + b > 1000` with one of each): the first
/// goes toward its simplest value by as much as the second can take.
fn redistribute_mixed(s: &mut Shrinker, i: usize, j: usize) {
    let (Some((x, tx, first)), Some((y, _, second))) =
        (as_number(&s.best.nodes[i]), as_number(&s.best.nodes[j]))
    else {
        return;
    };
    let full = (x - tx).abs().floor();
    if full < 1.0 || full >= 2f64.powi(53) {
        return;
    }
    let toward = if x > tx { -1.0 } else { 1.0 };
    let mut moved = 0u128;
    let mut shift = |k: u128| -> bool {
        if k <= moved {
            return true;
        }
        let (nx, ny) = (x + toward * k as f64, y - toward * k as f64);
        let (Some(nx), Some(ny)) = (first(nx), second(ny)) else {
            return false;
        };
        let mut candidate = s.best.choices();
        candidate[i] = nx;
        candidate[j] = ny;
        let ok = s.consider(candidate);
        if ok {
            moved = k;
        }
        ok
    };
    let full = full as u128;
    // Every probe moves k from the original pair: one first (most pairs
    // cannot move at all), then all of it, else as much as works.
    if shift(1) && full > 1 && !shift(full) {
        move_most(full, &mut shift);
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
