//! Two neighbouring collection elements deleted together: elements that
//! only make sense in pairs (a block's `Begin` and its `End`, a push and the
//! pop that undoes it) cannot go one at a time, and a pair of elements is
//! longer than the chunks [`super::deletion::delete_chunks`] cuts. Polish
//! round only: most pairs are deletable one element at a time, which the
//! cheap rounds already do.

use super::deletion::element_runs;
use crate::shrink::Shrinker;

/// Deletes pairs of adjacent elements of a collection, the last pair first,
/// until no pair in any collection can go.
pub(in crate::shrink) fn delete_element_pairs(s: &mut Shrinker) {
    if !s.polish {
        return;
    }
    'runs: while !s.exhausted() {
        for run in element_runs(s).iter().rev() {
            for pair in run.windows(2).rev() {
                if s.exhausted() {
                    return;
                }
                if s.try_replace(pair[0].0..pair[1].1, &[]) {
                    continue 'runs;
                }
            }
        }
        return;
    }
}
