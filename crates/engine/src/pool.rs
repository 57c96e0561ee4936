//! Variable pools: the values a stateful test has made so far, for rules that
//! act on one of them. One implementation serves geist-server's protocol
//! (`new_pool`, `pool_add`, `pool_generate`, `pool_consume`) and libhegel's
//! C ABI (`hegel_new_pool`, `hegel_pool_add`, `hegel_pool_generate`,
//! `hegel_pool_restore`).
//!
//! A pool holds variable ids; the caller keeps its own map from id to value.
//! Both the ids and the draws are recorded *by value*, so that shrinking is
//! stable:
//!
//! - [`Pool::add`] draws a fresh id, a choice in a small window above the
//!   ids in use (one that collides, as a replay after shrinking may, becomes
//!   the smallest unused id). Deleting an earlier addition never renumbers
//!   the later ones.
//! - [`Pool::draw`] draws the id itself within the live ids' range, and the
//!   live variable nearest the drawn value is the one used: a draw keeps
//!   meaning the same variable when the steps around it are deleted. It
//!   shrinks toward the oldest (lowest) id; with `consume` the variable
//!   leaves the pool.
//! - [`Pool::restore`] puts a consumed variable back when the value drawn
//!   with it is thrown away unused (a filter that rejected it, a rule that
//!   was rejected).
//!
//! Drawing from an empty pool rejects the test case, as a failed assumption
//! does; a caller that reports that differently checks [`Pool::is_empty`]
//! first.

use crate::choice::IntegerConstraints;
use crate::data::{StopTest, TestData, labels};
use std::collections::BTreeSet;

/// The id of one variable in a [`Pool`].
pub type VariableId = i64;

/// The variables of one pool in one test case. Every operation costs
/// O(log n) in the variables added, so a test that adds a million variables
/// (until its test case overruns) runs as fast as one that draws a million
/// integers.
#[derive(Clone, Debug, Default)]
pub struct Pool {
    /// Every variable added, in order.
    variables: Vec<VariableId>,
    /// The ids handed out (the same as `variables`, for lookups).
    ids: BTreeSet<VariableId>,
    /// The ids below the largest one handed out that are not handed out:
    /// where a colliding draw's replacement comes from.
    unused: BTreeSet<VariableId>,
    /// The live (handed out, not consumed) ids.
    live: BTreeSet<VariableId>,
}

/// Why a pool operation was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// `restore` was given a variable that no draw consumed.
    #[error("variable {0} is not a consumed variable of the pool")]
    NotConsumed(VariableId),
}

impl Pool {
    /// An empty pool.
    pub fn new() -> Pool {
        Pool::default()
    }

    /// Draws a fresh variable id, live from now on.
    pub fn add(&mut self, data: &mut TestData) -> Result<VariableId, StopTest> {
        data.start_span(labels::POOL_VARIABLE);
        let top = self
            .ids
            .iter()
            .next_back()
            .map_or(1, |m| m.saturating_add(2));
        let drawn = data.draw_integer(IntegerConstraints::bounded(0, i128::from(top)));
        data.stop_span(false);
        let drawn = drawn? as VariableId;
        let id = if self.ids.contains(&drawn) {
            // The smallest unused id: a gap below the largest, or the next one.
            match self.unused.pop_first() {
                Some(gap) => gap,
                None => self.ids.last().map_or(0, |m| m.saturating_add(1)),
            }
        } else {
            drawn
        };
        self.hand_out(id);
        Ok(id)
    }

    /// Records `id` as handed out and live; the ids it skips over become
    /// unused gaps (at most two: a fresh id is at most the largest plus two).
    fn hand_out(&mut self, id: VariableId) {
        let first_new = self.ids.last().map_or(0, |m| m.saturating_add(1));
        if id >= first_new {
            self.unused.extend(first_new..id);
        } else {
            self.unused.remove(&id);
        }
        self.ids.insert(id);
        self.live.insert(id);
        self.variables.push(id);
    }

    /// The live variables, oldest first.
    pub fn live(&self) -> Vec<VariableId> {
        self.variables
            .iter()
            .copied()
            .filter(|v| self.live.contains(v))
            .collect()
    }

    /// Whether no variable is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Lets the engine choose a live variable; with `consume` it leaves the
    /// pool. An empty pool rejects the test case.
    pub fn draw(&mut self, data: &mut TestData, consume: bool) -> Result<VariableId, StopTest> {
        let (Some(&lo), Some(&hi)) = (self.live.first(), self.live.last()) else {
            return Err(data.reject());
        };
        data.start_span(labels::POOL_VARIABLE);
        let drawn = data.draw_integer(IntegerConstraints::bounded(i128::from(lo), i128::from(hi)));
        data.stop_span(false);
        let drawn = drawn? as VariableId;
        // The recorded id, or the live variable nearest it (the lower on a tie).
        let below = self.live.range(..=drawn).next_back().copied();
        let above = self.live.range(drawn..).next().copied();
        let id = match (below, above) {
            (Some(b), Some(a)) if a.abs_diff(drawn) < b.abs_diff(drawn) => a,
            (Some(b), _) => b,
            (None, Some(a)) => a,
            (None, None) => drawn,
        };
        if consume {
            self.live.remove(&id);
        }
        Ok(id)
    }

    /// Removes `variable` from the live ones (unknown ids are ignored: the
    /// protocol's `pool_consume` has no error for them).
    pub fn consume(&mut self, variable: VariableId) {
        self.live.remove(&variable);
    }

    /// Puts back a variable that a consuming draw (or [`Pool::consume`])
    /// removed, in its original place among the live ones.
    pub fn restore(&mut self, variable: VariableId) -> Result<(), PoolError> {
        if self.ids.contains(&variable) && self.live.insert(variable) {
            Ok(())
        } else {
            Err(PoolError::NotConsumed(variable))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Source;

    fn generating(seed: u64) -> TestData {
        TestData::generating(Vec::new(), Source::from_seed(seed), 1000)
    }

    #[test]
    fn ids_are_fresh_and_draws_pick_live_ones() {
        for seed in 0..50 {
            let mut pool = Pool::new();
            let mut data = generating(seed);
            let ids: Vec<_> = (0..6).map(|_| pool.add(&mut data).unwrap()).collect();
            let distinct: BTreeSet<_> = ids.iter().collect();
            assert_eq!(distinct.len(), 6, "seed {seed}: {ids:?}");
            for _ in 0..50 {
                let v = pool.draw(&mut data, false).unwrap();
                assert!(ids.contains(&v));
            }
            assert_eq!(pool.live(), ids);
        }
    }

    #[test]
    fn consuming_draws_empty_the_pool_then_reject() {
        let mut pool = Pool::new();
        let mut data = generating(2);
        pool.add(&mut data).unwrap();
        pool.add(&mut data).unwrap();
        let a = pool.draw(&mut data, true).unwrap();
        let b = pool.draw(&mut data, true).unwrap();
        assert_ne!(a, b);
        assert!(pool.is_empty());
        assert_eq!(pool.draw(&mut data, true), Err(StopTest));
        assert_eq!(data.status, Some(crate::Status::Invalid));
    }

    #[test]
    fn restore_puts_back_in_order_and_refuses_live_or_unknown_ids() {
        let mut pool = Pool::new();
        let mut data = TestData::replaying(Vec::new(), 100);
        let ids: Vec<_> = (0..3).map(|_| pool.add(&mut data).unwrap()).collect();
        // The simplest ids are the smallest unused ones.
        assert_eq!(ids, [0, 1, 2]);
        pool.consume(1);
        pool.consume(7);
        assert_eq!(pool.live(), &[0, 2]);
        assert_eq!(pool.restore(0), Err(PoolError::NotConsumed(0)));
        assert_eq!(pool.restore(9), Err(PoolError::NotConsumed(9)));
        pool.restore(1).unwrap();
        assert_eq!(pool.live(), &[0, 1, 2]);
        assert_eq!(pool.restore(1), Err(PoolError::NotConsumed(1)));
    }

    #[test]
    fn a_colliding_id_becomes_the_smallest_unused_one() {
        use crate::choice::ChoiceValue::Integer;
        // Drawn: 1, 1 (taken: the gap 0), 3, 0 (taken: the gap 2), 0 (taken,
        // no gap left: the next id, 4).
        let choices = [1, 1, 3, 0, 0].map(Integer).to_vec();
        let mut data = TestData::replaying(choices, 100);
        let mut pool = Pool::new();
        let ids: Vec<_> = (0..5).map(|_| pool.add(&mut data).unwrap()).collect();
        assert_eq!(ids, [1, 0, 3, 2, 4]);
        assert!(!data.misaligned);
    }

    #[test]
    fn colliding_additions_and_draws_stay_cheap() {
        // The simplest choices collide on every addition. A linear search
        // for the free id made this loop quadratic: a frontend adding until
        // its test case overran (a million choices) did not finish in hours.
        let n = 1 << 18;
        let mut data = TestData::replaying(Vec::new(), 2 * n + 1);
        let mut pool = Pool::new();
        for expected in 0..n as VariableId {
            assert_eq!(pool.add(&mut data), Ok(expected));
        }
        for expected in 0..n as VariableId {
            assert_eq!(pool.draw(&mut data, true), Ok(expected));
        }
        assert!(pool.is_empty());
        assert_eq!(pool.draw(&mut data, false), Err(StopTest));
    }

    #[test]
    fn the_simplest_draw_is_the_oldest_live_variable() {
        let mut pool = Pool::new();
        let mut data = generating(5);
        let ids: Vec<_> = (0..5).map(|_| pool.add(&mut data).unwrap()).collect();
        let oldest_live = *ids.iter().min().unwrap();
        let mut data = TestData::replaying(Vec::new(), 1000);
        assert_eq!(pool.draw(&mut data, false), Ok(oldest_live));
    }

    #[test]
    fn a_draw_keeps_its_variable_when_an_earlier_addition_is_deleted() {
        let mut checked = 0;
        for seed in 0..200 {
            // Adds a, b, c and draws once: four choices.
            let mut data = generating(seed);
            let mut pool = Pool::new();
            let ids: Vec<_> = (0..3).map(|_| pool.add(&mut data).unwrap()).collect();
            let drawn = pool.draw(&mut data, false).unwrap();
            let choices = data.choices();
            assert_eq!(choices.len(), 4);
            // The same test case without the first addition.
            let mut shorter = TestData::replaying(choices[1..].to_vec(), 100);
            let mut pool = Pool::new();
            let kept = [
                pool.add(&mut shorter).unwrap(),
                pool.add(&mut shorter).unwrap(),
            ];
            if drawn == ids[0] || kept != [ids[1], ids[2]] {
                continue;
            }
            checked += 1;
            assert_eq!(pool.draw(&mut shorter, false), Ok(drawn), "seed {seed}");
        }
        assert!(checked >= 5, "{checked} seeds checked");
    }
}
