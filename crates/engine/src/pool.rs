//! Variable pools: the values a stateful test has made so far, for rules that
//! act on one of them.
//!
//! A pool holds variable ids; the caller keeps its own map from id to value.
//! [`Pool::add`] hands out a fresh id, [`Pool::draw`] lets the engine choose
//! (and shrink) which live variable a rule uses, optionally consuming it, and
//! [`Pool::restore`] puts a consumed variable back when the value drawn with
//! it is thrown away unused. Drawing from an empty pool rejects the test case,
//! as a failed assumption does.

use crate::choice::IntegerConstraints;
use crate::data::{StopTest, TestData, labels};

/// The id of one variable in a [`Pool`] (the first is 1).
pub type VariableId = i64;

/// The variables of one pool in one test case.
#[derive(Clone, Debug, Default)]
pub struct Pool {
    last_id: VariableId,
    live: Vec<VariableId>,
    consumed: Vec<VariableId>,
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

    /// A fresh variable id, live from now on.
    pub fn add(&mut self) -> VariableId {
        self.last_id += 1;
        self.live.push(self.last_id);
        self.last_id
    }

    /// The live variables, oldest first.
    pub fn live(&self) -> &[VariableId] {
        &self.live
    }

    /// Lets the engine choose a live variable; with `consume` it leaves the
    /// pool. An empty pool rejects the test case.
    ///
    /// The choice is an index that shrinks toward the newest variable: a
    /// problem found late in a sequence shrinks without the earlier steps
    /// that only padded the pool.
    pub fn draw(&mut self, data: &mut TestData, consume: bool) -> Result<VariableId, StopTest> {
        if self.live.is_empty() {
            return Err(data.reject());
        }
        let newest = self.live.len() as i128 - 1;
        data.start_span(labels::POOL_VARIABLE);
        let index = data.draw_integer(IntegerConstraints {
            min: Some(0),
            max: Some(newest),
            shrink_towards: newest,
        })?;
        data.stop_span(false);
        let index = index as usize;
        let variable = self.live[index];
        if consume {
            self.live.remove(index);
            self.consumed.push(variable);
        }
        Ok(variable)
    }

    /// Removes `variable` from the live ones (unknown ids are ignored: the
    /// protocol's `pool_consume` has no error for them).
    pub fn consume(&mut self, variable: VariableId) {
        if let Some(index) = self.live.iter().position(|v| *v == variable) {
            self.live.remove(index);
            self.consumed.push(variable);
        }
    }

    /// Puts back a variable that a consuming draw (or [`Pool::consume`])
    /// removed, in its original place among the live ones.
    pub fn restore(&mut self, variable: VariableId) -> Result<(), PoolError> {
        let index = self
            .consumed
            .iter()
            .position(|v| *v == variable)
            .ok_or(PoolError::NotConsumed(variable))?;
        self.consumed.swap_remove(index);
        let at = self.live.partition_point(|v| *v < variable);
        self.live.insert(at, variable);
        Ok(())
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
        let mut pool = Pool::new();
        let mut data = generating(1);
        let ids: Vec<_> = (0..4).map(|_| pool.add()).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        for _ in 0..50 {
            let v = pool.draw(&mut data, false).unwrap();
            assert!(ids.contains(&v));
        }
        assert_eq!(pool.live(), &[1, 2, 3, 4]);
    }

    #[test]
    fn consuming_draws_empty_the_pool_then_reject() {
        let mut pool = Pool::new();
        let mut data = generating(2);
        pool.add();
        pool.add();
        let a = pool.draw(&mut data, true).unwrap();
        let b = pool.draw(&mut data, true).unwrap();
        assert_ne!(a, b);
        assert_eq!(pool.draw(&mut data, true), Err(StopTest));
        assert_eq!(data.status, Some(crate::Status::Invalid));
    }

    #[test]
    fn restore_puts_back_in_order_and_refuses_live_or_unknown_ids() {
        let mut pool = Pool::new();
        for _ in 0..3 {
            pool.add();
        }
        pool.consume(2);
        assert_eq!(pool.live(), &[1, 3]);
        assert_eq!(pool.restore(1), Err(PoolError::NotConsumed(1)));
        assert_eq!(pool.restore(9), Err(PoolError::NotConsumed(9)));
        pool.restore(2).unwrap();
        assert_eq!(pool.live(), &[1, 2, 3]);
        assert_eq!(pool.restore(2), Err(PoolError::NotConsumed(2)));
    }

    #[test]
    fn the_simplest_draw_is_the_newest_variable() {
        let mut pool = Pool::new();
        for _ in 0..5 {
            pool.add();
        }
        let mut data = TestData::replaying(Vec::new(), 1000);
        assert_eq!(pool.draw(&mut data, false), Ok(5));
    }
}
