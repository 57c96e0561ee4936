//! Repeat loops: a test body run again and again, as long as the engine
//! wants another iteration.
//!
//! The loop is a collection with no upper bound whose elements are
//! iterations: [`Repeat::new`] draws the loop's minimum number of
//! iterations (so the count shrinks like a collection's length), and
//! [`Repeat::more`] is the collection's "one more?" choice. An iteration that
//! fails calls [`Repeat::failed`], which records a marker choice so the
//! shrinker can tell the iterations before a failure from the one that
//! failed. The caller prints each iteration's heading; the engine prints
//! nothing.

use crate::choice::IntegerConstraints;
use crate::data::{Collection, StopTest, TestData};

/// The largest minimum number of iterations [`Repeat::new`] draws. With it
/// the loop has no maximum: the engine decides iteration by iteration, and
/// the choice budget ends a loop that runs too long.
pub const MAX_MIN_ITERATIONS: i128 = 1 << 40;

/// One repeat loop in one test case.
#[derive(Clone, Debug)]
pub struct Repeat {
    iterations: Collection,
    failed: bool,
}

impl Repeat {
    /// Starts a loop: draws its minimum number of iterations (the simplest
    /// is none).
    pub fn new(data: &mut TestData) -> Result<Repeat, StopTest> {
        let min = data.draw_integer(IntegerConstraints {
            min: Some(0),
            max: Some(MAX_MIN_ITERATIONS),
            shrink_towards: 0,
        })?;
        Ok(Repeat {
            iterations: Collection::new(min as usize, None),
            failed: false,
        })
    }

    /// Whether to run another iteration (never after [`Repeat::failed`]).
    pub fn more(&mut self, data: &mut TestData) -> Result<bool, StopTest> {
        if self.failed {
            return Ok(false);
        }
        self.iterations.more(data)
    }

    /// The iteration just run failed: the loop ends, and a marker choice
    /// records where.
    pub fn failed(&mut self, data: &mut TestData) -> Result<(), StopTest> {
        self.failed = true;
        data.draw_boolean(0.5)?;
        Ok(())
    }

    /// Iterations begun so far.
    pub fn iterations(&self) -> usize {
        self.iterations.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Source;

    #[test]
    fn the_simplest_loop_runs_no_iteration() {
        let mut data = TestData::replaying(Vec::new(), 100);
        let mut repeat = Repeat::new(&mut data).unwrap();
        assert_eq!(repeat.more(&mut data), Ok(false));
    }

    #[test]
    fn loops_run_until_done_failed_or_out_of_choices() {
        let mut lengths = Vec::new();
        for seed in 0..50 {
            let mut data = TestData::generating(Vec::new(), Source::from_seed(seed), 2000);
            let mut repeat = Repeat::new(&mut data).unwrap();
            let mut n = 0;
            loop {
                match repeat.more(&mut data) {
                    Ok(true) => n += 1,
                    Ok(false) => break,
                    Err(StopTest) => break,
                }
                if n == 7 && seed % 2 == 0 {
                    repeat.failed(&mut data).unwrap();
                    assert_eq!(repeat.more(&mut data), Ok(false));
                    break;
                }
            }
            assert_eq!(repeat.iterations(), n);
            lengths.push(n);
        }
        assert!(lengths.iter().any(|n| *n > 7), "{lengths:?}");
    }
}
