//! Recursive values: trees, documents, expressions, sized by the engine.
//!
//! One [`Recursion`] scope serves one recursive value (libhegel's
//! `hegel_recursion_t`: the C ABI maps its calls onto this). The caller
//! asks, for each sub-value from the root down (depth-first), whether it is
//! a branch ([`Recursion::branch`]); before drawing a leaf it counts it
//! against the leaf budget ([`Recursion::leaf`]). All policy is here, so a
//! recursive generator behaves the same in every frontend:
//!
//! - **Size.** A scope aims at one leaf half the time, else at a target
//!   drawn from `2..=max_leaves` (both are choices, so the simplest value is
//!   one leaf). Toward a target above one it branches hard (probability
//!   [`P_GROW`]) until the expected leaves reach the target, given the
//!   branch arity it has observed so far, then just below criticality: with
//!   branch probability `p` and `a` children per branch a value has
//!   `(1 - p) / (1 - p a)` leaves on average, so `p = (L - 1) / (L a - 1)`
//!   expects `L`.
//! - **Budget.** An attempt that outgrows `max_leaves` is discarded
//!   ([`Recursion::retry`]: its open spans closed as discarded) and retried
//!   aiming at half the target, less likely to branch; after [`ATTEMPTS`]
//!   attempts the test case is rejected, as a failed assumption is.
//! - **Mispricing.** A finished value far smaller than its target (the
//!   observed arity was off) is discarded and drawn again from the root
//!   ([`Recursion::finish`]), at most [`MAX_REDRAWS`] times.
//!
//! - **Collections.** A collection inside the value keeps its usual size
//!   ([`TestData::begin_sized_recursion`]); outside a scope, collections
//!   nested in a recursive value shrink with the depth
//!   ([`crate::data::Collection`]), which a scope does not need.
//!
//! `max_depth` bounds the nesting: sub-values at that depth are leaves. The
//! test case's span depth limit ([`crate::data::MAX_SPAN_DEPTH`]) bounds
//! recursions that do not go through a scope (a generator that draws
//! itself).

use crate::choice::IntegerConstraints;
use crate::data::{StopTest, TestData};

/// How many attempts one recursive value gets before the test case is
/// rejected (libhegel's `HEGEL_RECURSION_ATTEMPTS`).
pub const ATTEMPTS: u32 = 9;

/// Probability a recursive value aims at more than one leaf.
const P_LARGE_TARGET: f64 = 0.5;
/// Branch probability while a value grows toward its target.
pub const P_GROW: f64 = 0.9;
/// The arity assumed before any branch has been seen whole, and its weight
/// in branches against the branches observed.
const PRIOR_ARITY: f64 = 2.0;
const PRIOR_WEIGHT: f64 = 2.0;
/// Finished values discarded as far too small, at most, per value.
pub const MAX_REDRAWS: u32 = 2;

/// What [`Recursion::leaf`] allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// Draw the leaf.
    Draw,
    /// The attempt outgrew the leaf budget: unwind it without drawing
    /// anything more, then call [`Recursion::retry`].
    Retry,
}

/// What [`Recursion::retry`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Start the value again from the root.
    Again,
    /// The attempts are spent: the test case has been concluded invalid.
    GiveUp,
}

/// What [`Recursion::finish`] decided about a complete value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Use the value.
    Accept,
    /// The value came out far smaller than it aimed at and has been
    /// discarded (its spans closed as discarded): draw it again from the
    /// root, without calling [`Recursion::retry`].
    Again,
}

/// One recursive value's scope in one test case.
#[derive(Clone, Debug)]
pub struct Recursion {
    max_depth: u64,
    max_leaves: u64,
    /// The number of leaves the first attempt aims at.
    target: u64,
    /// Attempts discarded for outgrowing the budget so far.
    attempt: u32,
    /// Finished values discarded as far too small so far.
    redraws: u32,
    /// Leaves counted in the current attempt.
    leaves: u64,
    /// Spans open when the scope was created: a discarded attempt's spans
    /// are the ones above them.
    base_spans: usize,
    /// Children seen across branches known to be complete.
    closed_children: u64,
    /// How many branches those are.
    closed_branches: u64,
    /// Branches still taking children: (depth, children so far), outermost
    /// first (generation is depth-first, so these are the current path).
    open_branches: Vec<(u64, u64)>,
}

impl Recursion {
    /// Opens a scope where the recursive value begins: draws its target
    /// number of leaves (one, or `2..=max_leaves`) when `max_leaves` allows
    /// a choice.
    pub fn new(
        data: &mut TestData,
        max_depth: u64,
        max_leaves: u64,
    ) -> Result<Recursion, StopTest> {
        let target = if max_leaves < 2 || !data.draw_boolean(P_LARGE_TARGET)? {
            1
        } else {
            data.draw_integer(IntegerConstraints::bounded(2, i128::from(max_leaves)))? as u64
        };
        data.begin_sized_recursion();
        Ok(Recursion {
            max_depth,
            max_leaves,
            target,
            attempt: 0,
            redraws: 0,
            leaves: 0,
            base_spans: data.open_span_count(),
            closed_children: 0,
            closed_branches: 0,
            open_branches: Vec::new(),
        })
    }

    /// The mean number of children per branch: the prior, then what the
    /// complete branches showed.
    fn arity(&self) -> f64 {
        (PRIOR_ARITY * PRIOR_WEIGHT + self.closed_children as f64)
            / (PRIOR_WEIGHT + self.closed_branches as f64)
    }

    /// The number of leaves the current attempt aims at: the target, halved
    /// by each attempt that outgrew the budget.
    fn aim(&self) -> u64 {
        (self.target >> self.attempt.min(63)).max(1)
    }

    /// A branch probability just below criticality, expecting `leaves`
    /// leaves; each discarded attempt makes branching less likely.
    fn subcritical(&self, leaves: u64) -> f64 {
        let arity = (self.arity() + f64::from(self.attempt)).max(1.0);
        let leaves = leaves.clamp(2, 1 << 32) as f64;
        ((leaves - 1.0) / (leaves * arity - 1.0)).min(P_GROW)
    }

    /// The probability the sub-value at `depth` is a branch.
    fn branch_probability(&self, depth: u64) -> f64 {
        if depth >= self.max_depth {
            return 0.0;
        }
        let aim = self.aim();
        if aim == 1 {
            return self.subcritical(2);
        }
        // Grow hard until the expected leaves reach the aim, then wind down.
        let arity = self.arity().max(1.01);
        let grow_depth = ((aim as f64).ln() / arity.ln()).ceil().max(0.0) as u64;
        if depth < grow_depth {
            P_GROW
        } else {
            self.subcritical(2)
        }
    }

    /// Branches at `depth` or deeper cannot take more children once a
    /// decision at `depth` is made; the decision is a child of the deepest
    /// branch left.
    fn observe_decision(&mut self, depth: u64) {
        while self.open_branches.last().is_some_and(|(d, _)| *d >= depth) {
            self.close_branch();
        }
        if depth > 0
            && let Some((_, children)) = self.open_branches.last_mut()
        {
            *children += 1;
        }
    }

    fn close_branch(&mut self) {
        if let Some((_, children)) = self.open_branches.pop() {
            self.closed_children += children;
            self.closed_branches += 1;
        }
    }

    /// Whether the sub-value at `depth` (0 for the root) is a branch.
    /// Sub-values at `max_depth` are always leaves.
    pub fn branch(&mut self, data: &mut TestData, depth: u64) -> Result<bool, StopTest> {
        self.observe_decision(depth);
        let branch = data.draw_boolean(self.branch_probability(depth))?;
        if branch {
            self.open_branches.push((depth, 0));
        }
        Ok(branch)
    }

    /// Counts one leaf against the attempt's budget.
    pub fn leaf(&mut self) -> Leaf {
        if self.leaves >= self.max_leaves {
            return Leaf::Retry;
        }
        self.leaves += 1;
        Leaf::Draw
    }

    /// The most leaves a value may have.
    pub fn max_leaves(&self) -> u64 {
        self.max_leaves
    }

    /// Closes the spans the current attempt left open, as discarded.
    fn discard_attempt(&mut self, data: &mut TestData) {
        while data.open_span_count() > self.base_spans && data.stop_span(true) {}
        self.leaves = 0;
    }

    /// Discards an attempt that outgrew its budget: closes the spans it left
    /// open (as discarded) and, unless the attempts are spent, aims the next
    /// one at half the target. Call it from where the scope was created.
    pub fn retry(&mut self, data: &mut TestData) -> Result<Retry, StopTest> {
        if !data.is_active() {
            return Err(StopTest);
        }
        self.discard_attempt(data);
        // Their child counts were cut short: they would understate the arity.
        self.open_branches.clear();
        self.attempt += 1;
        if self.attempt >= ATTEMPTS {
            let _ = data.reject();
            return Ok(Retry::GiveUp);
        }
        Ok(Retry::Again)
    }

    /// The root sub-value is complete: its branches' child counts are final.
    /// A value far smaller than the attempt aimed at (a quarter of an aim of
    /// four or more) is discarded and drawn again, at most [`MAX_REDRAWS`]
    /// times; otherwise it is accepted.
    pub fn finish(&mut self, data: &mut TestData) -> Result<Finish, StopTest> {
        if !data.is_active() {
            return Err(StopTest);
        }
        while !self.open_branches.is_empty() {
            self.close_branch();
        }
        let aim = self.aim();
        let far_too_small = aim >= 4 && self.leaves.saturating_mul(4) < aim && self.max_depth > 1;
        if self.redraws >= MAX_REDRAWS || !far_too_small {
            return Ok(Finish::Accept);
        }
        self.redraws += 1;
        self.discard_attempt(data);
        Ok(Finish::Again)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DEFAULT_MAX_CHOICES, MAX_SPAN_DEPTH};
    use crate::random::Source;
    use crate::{Status, StopTest};

    /// A binary tree through the scope: its number of leaves, or `None`
    /// when the attempt must be retried.
    fn tree(r: &mut Recursion, data: &mut TestData, depth: u64) -> Result<Option<u64>, StopTest> {
        data.start_span(7);
        let leaves = if r.branch(data, depth)? {
            let Some(left) = tree(r, data, depth + 1)? else {
                return Ok(None);
            };
            let Some(right) = tree(r, data, depth + 1)? else {
                return Ok(None);
            };
            left + right
        } else {
            if r.leaf() == Leaf::Retry {
                return Ok(None);
            }
            data.draw_boolean(0.5)?;
            1
        };
        data.stop_span(false);
        Ok(Some(leaves))
    }

    /// One binary tree's number of leaves, with its retries; `None` once
    /// the test case is rejected or stopped.
    fn draw_tree(data: &mut TestData, max_depth: u64, max_leaves: u64) -> Option<u64> {
        let mut r = Recursion::new(data, max_depth, max_leaves).ok()?;
        loop {
            match tree(&mut r, data, 0).ok()? {
                Some(leaves) => match r.finish(data).ok()? {
                    Finish::Accept => return Some(leaves),
                    Finish::Again => continue,
                },
                None => match r.retry(data).ok()? {
                    Retry::Again => continue,
                    Retry::GiveUp => return None,
                },
            }
        }
    }

    #[test]
    fn the_simplest_value_is_one_leaf() {
        let mut data = TestData::replaying(Vec::new(), 100);
        assert_eq!(draw_tree(&mut data, 5, 50), Some(1));
    }

    #[test]
    fn values_stay_within_the_budget_and_vary_in_size() {
        let mut sizes = Vec::new();
        for seed in 0..300 {
            let mut data = TestData::generating(Vec::new(), Source::from_seed(seed), 10_000);
            if let Some(leaves) = draw_tree(&mut data, 10, 20) {
                assert!((1..=20).contains(&leaves), "{leaves}");
                assert_eq!(data.open_span_count(), 0);
                sizes.push(leaves);
            }
        }
        assert!(sizes.len() > 250, "{} of 300 values fit", sizes.len());
        assert!(sizes.iter().any(|s| *s >= 10), "{sizes:?}");
        assert!(sizes.contains(&1), "{sizes:?}");
    }

    #[test]
    fn depth_zero_gives_only_leaves_and_spent_attempts_reject() {
        let mut data = TestData::generating(Vec::new(), Source::from_seed(1), 1000);
        assert_eq!(draw_tree(&mut data, 0, 10), Some(1));
        // No leaf fits a budget of zero: every attempt is retried, then the
        // test case is rejected.
        let mut data = TestData::generating(Vec::new(), Source::from_seed(1), 1000);
        assert_eq!(draw_tree(&mut data, 3, 0), None);
        assert_eq!(data.status, Some(Status::Invalid));
    }

    #[test]
    fn a_retry_closes_the_spans_the_attempt_left_open() {
        let mut data = TestData::generating(Vec::new(), Source::from_seed(3), 1000);
        data.start_span(1);
        let mut r = Recursion::new(&mut data, 3, 1).unwrap();
        data.start_span(2);
        data.start_span(3);
        assert_eq!(r.retry(&mut data), Ok(Retry::Again));
        assert_eq!(data.open_span_count(), 1);
        assert!(
            data.spans
                .iter()
                .filter(|s| s.label != 1)
                .all(|s| s.discarded)
        );
    }

    #[test]
    fn a_concluded_test_case_finishes_and_retries_nothing() {
        let mut data = TestData::replaying(Vec::new(), 2);
        let mut r = Recursion::new(&mut data, 3, 1).unwrap();
        while data.draw_boolean(0.5).is_ok() {}
        assert_eq!(data.status, Some(Status::Overrun));
        assert_eq!(r.finish(&mut data), Err(StopTest));
        assert_eq!(r.retry(&mut data), Err(StopTest));
    }

    /// A recursion with no scope (a generator drawing itself, as a deferred
    /// JSON value does), every level a branch, as a swarm subset without the
    /// leaves or ten-times lists would make it: the span depth limit stops
    /// it as an overrun long before a frontend's stack would overflow,
    /// however large the choice budget.
    fn runaway(data: &mut TestData) -> Result<usize, StopTest> {
        data.start_span(42);
        let children = data.draw_integer(IntegerConstraints::bounded(1, 2))?;
        let mut nodes = 1;
        for _ in 0..children {
            nodes += runaway(data)?;
        }
        data.stop_span(false);
        Ok(nodes)
    }

    #[test]
    fn a_recursion_without_leaves_is_rejected_at_the_span_depth_limit() {
        for seed in 0..20 {
            let mut data = TestData::generating(Vec::new(), Source::from_seed(seed), usize::MAX);
            assert_eq!(runaway(&mut data), Err(StopTest));
            assert_eq!(data.status, Some(Status::Invalid));
            assert!(data.too_deep);
            assert!(
                data.nodes.len() < 10 * MAX_SPAN_DEPTH,
                "{}",
                data.nodes.len()
            );
            assert!(data.spans.iter().all(|s| s.depth < MAX_SPAN_DEPTH));
        }
    }

    /// A recursive generator whose values end (each level expects under
    /// one sub-value): a one_of of `alternatives` values, the last a list
    /// of itself (`max_size` elements at most). Its number of nodes, or
    /// `Err` once it overruns the budget.
    fn value(
        data: &mut TestData,
        alternatives: i128,
        max_size: Option<usize>,
    ) -> Result<usize, StopTest> {
        data.start_span(99);
        let mut nodes = 1;
        if data.draw_integer(IntegerConstraints::bounded(1, alternatives))? == alternatives {
            let mut list = crate::data::Collection::new(0, max_size);
            while list.more(data)? {
                nodes += value(data, alternatives, max_size)?;
            }
        }
        data.stop_span(false);
        Ok(nodes)
    }

    /// Of 2000 test cases drawing one such value, how many overran.
    fn overruns(alternatives: i128, max_size: Option<usize>) -> usize {
        (0..2000)
            .filter(|&seed| {
                let mut data =
                    TestData::generating(Vec::new(), Source::from_seed(seed), DEFAULT_MAX_CHOICES);
                value(&mut data, alternatives, max_size).is_err()
            })
            .count()
    }

    /// A swarm subset may leave out a `one_of`'s leaves (a range of six
    /// values keeps only the list): below the value's top level it holds
    /// back, so every value ends. With swarms at every level, 22 of these
    /// 2000 test cases ran to the budget (none do now).
    #[test]
    fn swarm_subsets_do_not_make_a_recursion_run_away() {
        assert!(overruns(6, Some(3)) <= 3);
    }

    /// Lists ten or a hundred times their usual length hold back below a
    /// value's top level (nine values are too many for a swarm subset):
    /// scaled at every level, a list of itself one time in nine expects
    /// more than two sub-values per level, and 34 of these 2000 test cases
    /// ran to the budget (none do now).
    #[test]
    fn scaled_collections_do_not_make_a_recursion_run_away() {
        assert!(overruns(9, None) <= 3);
    }
}
