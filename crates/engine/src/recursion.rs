//! Recursive values: trees, documents, expressions, sized by the engine.
//!
//! One [`Recursion`] scope serves one recursive value. The caller asks, for
//! each sub-value from the root down (depth-first), whether it is a branch
//! ([`Recursion::branch`]); before drawing a leaf it counts it against the
//! leaf budget ([`Recursion::leaf`]). The scope aims for a target number of
//! leaves drawn at creation (the simplest is one), choosing each branch
//! probability from that target and the branch arity it has observed so
//! far: with branch probability `p` and `a` children per branch, a value
//! has `(1 - p) / (1 - p a)` leaves on average, so `p = (L - 1) / (L a - 1)`
//! aims at `L`. An attempt that outgrows `max_leaves` is discarded
//! ([`Recursion::retry`]: its open spans closed as discarded) and retried
//! aiming at half the target; after [`ATTEMPTS`] attempts the test case is
//! rejected, as a failed assumption is. All of this is the engine's, so a
//! recursive generator behaves the same in every frontend.

use crate::choice::IntegerConstraints;
use crate::data::{StopTest, TestData};

/// How many attempts one recursive value gets before the test case is
/// rejected.
pub const ATTEMPTS: u32 = 9;

/// The arity assumed before any branch has been seen whole.
const DEFAULT_ARITY: f64 = 2.0;

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

/// One recursive value's scope in one test case.
#[derive(Clone, Debug)]
pub struct Recursion {
    max_depth: u64,
    max_leaves: u64,
    /// The number of leaves the current attempt aims at.
    target: u64,
    /// Attempts discarded so far.
    attempt: u32,
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
    /// Opens a scope: draws the target number of leaves in `1..=max_leaves`
    /// (when that is a choice), simplest 1.
    pub fn new(
        data: &mut TestData,
        max_depth: u64,
        max_leaves: u64,
    ) -> Result<Recursion, StopTest> {
        let target = if max_leaves >= 2 {
            data.draw_integer(IntegerConstraints {
                min: Some(1),
                max: Some(i128::from(max_leaves)),
                shrink_towards: 1,
            })? as u64
        } else {
            1
        };
        Ok(Recursion {
            max_depth,
            max_leaves,
            target,
            attempt: 0,
            leaves: 0,
            base_spans: data.open_span_count(),
            closed_children: 0,
            closed_branches: 0,
            open_branches: Vec::new(),
        })
    }

    /// The mean number of children per branch seen so far.
    fn arity(&self) -> f64 {
        if self.closed_branches == 0 {
            DEFAULT_ARITY
        } else {
            (self.closed_children as f64 / self.closed_branches as f64).max(1.0)
        }
    }

    /// The branch probability that aims at the target given the arity.
    fn branch_probability(&self) -> f64 {
        let leaves = self.target as f64;
        let arity = self.arity();
        if leaves <= 1.0 {
            return 0.0;
        }
        if arity <= 1.0 {
            // Single-child branches never add leaves: keep chains short.
            return 0.5;
        }
        ((leaves - 1.0) / (leaves * arity - 1.0)).clamp(0.0, 0.95 / arity)
    }

    /// Branches at `depth` or deeper cannot take more children once a
    /// decision at `depth` is made; the decision is a child of the deepest
    /// branch left.
    fn observe_decision(&mut self, depth: u64) {
        while self.open_branches.last().is_some_and(|(d, _)| *d >= depth) {
            if let Some((_, children)) = self.open_branches.pop() {
                self.closed_children += children;
                self.closed_branches += 1;
            }
        }
        if depth > 0
            && let Some((_, children)) = self.open_branches.last_mut()
        {
            *children += 1;
        }
    }

    /// Whether the sub-value at `depth` (0 for the root) is a branch.
    /// Sub-values at `max_depth` are always leaves.
    pub fn branch(&mut self, data: &mut TestData, depth: u64) -> Result<bool, StopTest> {
        self.observe_decision(depth);
        let p = self.branch_probability();
        let branch = if depth >= self.max_depth || p <= 0.0 {
            data.force_boolean(p.max(f64::MIN_POSITIVE), false)?
        } else {
            data.draw_boolean(p)?
        };
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

    /// Discards an attempt that outgrew its budget: closes the spans it left
    /// open (as discarded) and, unless the attempts are spent, aims the next
    /// one at half the target. Call it from where the scope was created.
    pub fn retry(&mut self, data: &mut TestData) -> Result<Retry, StopTest> {
        while data.open_span_count() > self.base_spans {
            data.stop_span(true);
        }
        // Their child counts were cut short: they would understate the arity.
        self.open_branches.clear();
        self.attempt += 1;
        if self.attempt >= ATTEMPTS {
            let _ = data.reject();
            return Ok(Retry::GiveUp);
        }
        self.leaves = 0;
        self.target = (self.target / 2).max(1);
        Ok(Retry::Again)
    }

    /// The value is complete: its branches' child counts are final. The
    /// value is accepted.
    pub fn finish(&mut self) {
        while let Some((_, children)) = self.open_branches.pop() {
            self.closed_children += children;
            self.closed_branches += 1;
        }
    }

    /// Leaves counted in the current attempt.
    pub fn leaves(&self) -> u64 {
        self.leaves
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Source;

    /// A binary tree through the scope: its number of leaves, or `None`
    /// when the attempt must be retried.
    fn tree(r: &mut Recursion, data: &mut TestData, depth: u64) -> Result<Option<u64>, StopTest> {
        if r.branch(data, depth)? {
            let Some(left) = tree(r, data, depth + 1)? else {
                return Ok(None);
            };
            let Some(right) = tree(r, data, depth + 1)? else {
                return Ok(None);
            };
            Ok(Some(left + right))
        } else {
            if r.leaf() == Leaf::Retry {
                return Ok(None);
            }
            data.draw_boolean(0.5)?;
            Ok(Some(1))
        }
    }

    fn draw_tree(data: &mut TestData, max_depth: u64, max_leaves: u64) -> Option<u64> {
        let mut r = Recursion::new(data, max_depth, max_leaves).ok()?;
        loop {
            match tree(&mut r, data, 0).ok()? {
                Some(leaves) => {
                    r.finish();
                    return Some(leaves);
                }
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
                sizes.push(leaves);
            }
        }
        assert!(sizes.len() > 250, "{} of 300 values fit", sizes.len());
        assert!(sizes.iter().any(|s| *s >= 5), "{sizes:?}");
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
        assert_eq!(data.status, Some(crate::Status::Invalid));
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
}
