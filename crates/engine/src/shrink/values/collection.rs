//! Collections of ranked elements: shorter first, then each element simpler.
//!
//! An element is its rank in its own simplicity order (0 = simplest), so one
//! shrinker serves strings (characters ranked by their alphabet's shrink
//! order) and byte strings (bytes by value) alike; see [`super::text`].

use super::Predicate;
use crate::shrink::search::bisect;
use std::ops::Range;

/// Shrinks a collection of element ranks of at least `min_size` elements:
/// all-simplest at the minimum size; elements deleted from the end
/// backwards; each element lowered (see [`lower_element`]); one element
/// lowered with everything after it made simplest (smaller in order even
/// when no element can move alone); the elements sorted.
///
/// `runs` splits the ranks into the stretches (in order, from 0) within
/// which a property of an element is expected to change at most once, as a
/// character's does along code points (see
/// [`CharSet::shrink_runs`](crate::charset::CharSet::shrink_runs)); `None`
/// when all ranks are one such stretch (values).
pub fn shrink_collection(
    ranks: &[u64],
    min_size: usize,
    runs: Option<&[Range<u64>]>,
    predicate: &mut dyn Predicate<[u64]>,
) {
    let whole = 0..u64::MAX;
    let runs = runs.unwrap_or(std::slice::from_ref(&whole));
    let mut current = ranks.to_vec();
    let mut attempt = |candidate: Vec<u64>, current: &mut Vec<u64>| -> bool {
        if candidate.len() < min_size || !predicate.holds(&candidate) {
            return false;
        }
        *current = candidate;
        true
    };
    let simplest = vec![0; min_size];
    if simplest != current && attempt(simplest, &mut current) {
        return;
    }
    // The stopped() checks need the predicate, which `attempt` holds; the
    // loops below end anyway once every candidate is refused.
    let mut j = current.len();
    while j > 0 {
        j -= 1;
        let mut candidate = current.clone();
        candidate.remove(j);
        attempt(candidate, &mut current);
        j = j.min(current.len());
    }
    for j in 0..current.len() {
        lower_element(&mut current, j, runs, &mut attempt);
    }
    for j in 0..current.len() {
        lower_with_simplest_suffix(&mut current, j, &mut attempt);
    }
    let mut sorted = current.clone();
    sorted.sort_unstable();
    if sorted != current {
        attempt(sorted, &mut current);
    }
    // Neighbours out of order swapped one pair at a time: sorting all of
    // them may lose what matters (an element that must stay out of order),
    // a single swap moving a smaller element earlier keeps the rest.
    for j in 1..current.len() {
        if current[j - 1] > current[j] {
            let mut candidate = current.clone();
            candidate.swap(j - 1, j);
            attempt(candidate, &mut current);
        }
    }
}

type Attempt<'a> = dyn FnMut(Vec<u64>, &mut Vec<u64>) -> bool + 'a;

/// Lowers element `j` to the simplest rank that works, run by run from the
/// simplest: a run's first rank; for a run wholly below the element, its
/// last one and, if that works, a binary search between them; in the
/// element's own run, a binary search below it. The property need not be
/// monotone across runs: with `c > '0'`, a binary search over all ranks
/// from `[` meets only `/`..`\0` below it and stops there, while `1`..`Z`,
/// simpler still, work.
fn lower_element(current: &mut Vec<u64>, j: usize, runs: &[Range<u64>], attempt: &mut Attempt<'_>) {
    let rank = current[j];
    let mut at = |r: u64, current: &mut Vec<u64>| {
        let mut candidate = current.clone();
        candidate[j] = r;
        attempt(candidate, current)
    };
    for run in runs.iter().filter(|run| !run.is_empty()) {
        if run.start >= rank {
            return;
        }
        if at(run.start, current) {
            return;
        }
        // The lowest rank that works in (run.start, top], given that top does.
        let top = if run.contains(&rank) {
            rank
        } else if run.end - 1 > run.start && at(run.end - 1, current) {
            run.end - 1
        } else {
            continue;
        };
        bisect(u128::from(run.start), u128::from(top), |r| {
            !at(r as u64, current)
        });
        return;
    }
}

/// Lowers element `j` and makes every element after it simplest: small ranks
/// first (readable results), then halving toward the current one; at most 16
/// tries.
fn lower_with_simplest_suffix(current: &mut Vec<u64>, j: usize, attempt: &mut Attempt<'_>) {
    if j >= current.len() || current[j] == 0 || current[j + 1..].iter().all(|r| *r == 0) {
        return;
    }
    let rank = current[j];
    let mut t = 0u64;
    for _ in 0..16 {
        if t >= rank {
            return;
        }
        let mut candidate = current[..j].to_vec();
        candidate.push(t);
        candidate.resize(current.len(), 0);
        if attempt(candidate, current) {
            return;
        }
        t = if t < 8 {
            t + 1
        } else {
            t + (rank - t).div_ceil(2)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shrunk(
        ranks: &[u64],
        min_size: usize,
        mut property: impl FnMut(&[u64]) -> bool,
    ) -> Vec<u64> {
        let mut current = ranks.to_vec();
        shrink_collection(ranks, min_size, None, &mut |c: &[u64]| {
            let ok = property(c);
            if ok {
                current = c.to_vec();
            }
            ok
        });
        current
    }

    #[test]
    fn collections_lose_elements_then_lower_them() {
        assert_eq!(shrunk(&[5, 9, 3, 7], 0, |c| c.iter().any(|r| *r >= 4)), [4]);
        assert_eq!(shrunk(&[5, 9, 3, 7], 2, |_| true), [0, 0]);
        assert_eq!(shrunk(&[9, 9, 9], 0, |c| c.len() >= 2), [0, 0]);
    }

    #[test]
    fn elements_end_sorted() {
        assert_eq!(
            shrunk(&[3, 1, 2], 0, |c| {
                let mut distinct = c.to_vec();
                distinct.sort_unstable();
                distinct.dedup();
                distinct.len() >= 3
            }),
            [0, 1, 2]
        );
    }

    #[test]
    fn an_element_that_must_stay_out_of_order_moves_by_one_swap() {
        // Unsorted and holding a 1: sorting all of [1, 0, 0] loses the
        // disorder, one swap keeps it.
        assert_eq!(
            shrunk(&[1, 0, 0], 3, |c| c.contains(&1) && !c.is_sorted()),
            [0, 1, 0]
        );
    }

    #[test]
    fn an_element_moves_down_when_the_rest_goes_simplest() {
        // No element of [3, 5] can move on its own, but [2, 0] is smaller.
        assert_eq!(
            shrunk(&[3, 5], 2, |c| (c[0] >= 3 && c[1] >= 5) || c == [2, 0]),
            [2, 0]
        );
    }
}
