//! Engine-owned state machines: the engine chooses which rule runs next.
//!
//! A stateful test names its rules; the engine picks each step's rule from
//! the choice sequence, so the sequence of steps shrinks like any other
//! choices. Each test case enables a random subset of the rules (swarm
//! testing): rules that mask each other's bugs are sometimes apart, and a
//! subset with one rule left runs long stretches of it.

use crate::choice::IntegerConstraints;
use crate::data::{StopTest, TestData, labels};
use std::num::NonZeroUsize;

/// The probability that swarm testing disables a rule for a test case.
const SWARM_DISABLE_PROBABILITY: f64 = 0.15;

/// One state machine in one test case.
#[derive(Clone, Debug)]
pub struct StateMachine {
    /// The rules enabled in this test case, by index, in ascending order.
    enabled: Vec<usize>,
}

impl StateMachine {
    /// A state machine of `rules` rules. Draws its swarm subset: each rule is
    /// disabled with a small probability, and if none is left all are
    /// enabled. The simplest choice keeps a rule, so shrinking re-enables
    /// rules and what shrinks is the sequence of steps.
    pub fn new(data: &mut TestData, rules: NonZeroUsize) -> Result<StateMachine, StopTest> {
        let rules = rules.get();
        data.start_span(labels::TUPLE);
        let mut enabled = Vec::with_capacity(rules);
        for rule in 0..rules {
            if !data.draw_boolean(SWARM_DISABLE_PROBABILITY)? {
                enabled.push(rule);
            }
        }
        data.stop_span(false);
        if enabled.is_empty() {
            enabled = (0..rules).collect();
        }
        Ok(StateMachine { enabled })
    }

    /// The rules enabled in this test case, by index, in ascending order.
    pub fn enabled_rules(&self) -> &[usize] {
        &self.enabled
    }

    /// The index of the rule to run next, one of the enabled ones; the
    /// simplest is the first enabled rule.
    pub fn next_rule(&self, data: &mut TestData) -> Result<usize, StopTest> {
        let last = self.enabled.len() as i128 - 1;
        let choice = data.draw_integer(IntegerConstraints::bounded(0, last))?;
        Ok(self.enabled[choice as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Source;

    fn rules(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn the_simplest_machine_enables_every_rule_and_runs_the_first() {
        let mut data = TestData::replaying(Vec::new(), 100);
        let machine = StateMachine::new(&mut data, rules(4)).unwrap();
        assert_eq!(machine.enabled_rules(), &[0, 1, 2, 3]);
        assert_eq!(machine.next_rule(&mut data), Ok(0));
    }

    #[test]
    fn swarm_subsets_vary_and_rules_come_only_from_them() {
        let mut subsets = std::collections::HashSet::new();
        for seed in 0..200 {
            let mut data = TestData::generating(Vec::new(), Source::from_seed(seed), 1000);
            let machine = StateMachine::new(&mut data, rules(5)).unwrap();
            assert!(!machine.enabled_rules().is_empty());
            for _ in 0..20 {
                let rule = machine.next_rule(&mut data).unwrap();
                assert!(machine.enabled_rules().contains(&rule));
            }
            subsets.insert(machine.enabled_rules().to_vec());
        }
        assert!(subsets.len() > 5, "only {} distinct subsets", subsets.len());
        assert!(subsets.iter().any(|s| s.len() < 5));
    }
}
