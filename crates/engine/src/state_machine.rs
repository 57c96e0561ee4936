//! Engine-owned state machines: the engine chooses which rule runs next.
//!
//! A stateful test registers its rules (each in a concurrency group, with a
//! weight) and invariants; the engine draws every decision from the choice
//! sequence, so the sequence of steps shrinks like any other choices:
//!
//! - at creation, the concurrency level (how many workers pull rules;
//!   weighted toward the maximum, since concurrency bugs need concurrency)
//!   and each worker's swarm subset: a disable probability drawn for the
//!   subset (anywhere from 0 to 254/255, as Hypothesis's feature flags draw
//!   it), then each rule disabled with it, keeping at least one per group,
//!   so rules that mask each other's bugs are sometimes apart and a subset
//!   of one rule often runs long stretches of it;
//! - per round ([`StateMachine::next_group`]), whether to go on (at least
//!   one round, at most `step_count`) and which group's rules run;
//! - per pull ([`StateMachine::next_rule`]), which of the worker's enabled
//!   rules of that group runs, in proportion to their weights;
//! - per join point, whether a sampled invariant is checked
//!   ([`StateMachine::should_check_invariant`]).
//!
//! The simplest choices keep every rule, run one round and pick the first
//! rule, so shrinking re-enables rules and shortens the program. Protocol
//! 0.16's state machines (the client counts the steps) use
//! [`StateMachine::pick_rule`] alone.

use crate::choice::IntegerConstraints;
use crate::data::{StopTest, TestData, labels};
use std::num::NonZeroUsize;

/// The largest draw of the per-subset disable probability, which is that
/// draw over 255 (as Hypothesis's feature flags draw it).
const SWARM_DISABLE_STEPS: i128 = 254;

/// The group id [`StateMachine::next_group`] and [`StateMachine::next_rule`]
/// use for "done" in the C ABI; no group may have it.
pub const DONE: i64 = i64::MIN;

/// Why a state machine could not be created or driven.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StateMachineError {
    /// A state machine needs at least one rule.
    #[error("a state machine needs at least one rule")]
    NoRules,
    /// The weights are not one per rule.
    #[error("{weights} weights for {rules} rules")]
    WeightCount {
        /// Rules given.
        rules: usize,
        /// Weights given.
        weights: usize,
    },
    /// A rule's group is the reserved "done" value.
    #[error("rule {0} has the reserved group id {DONE}")]
    ReservedGroup(usize),
    /// A weight that is not finite and positive.
    #[error("rule {rule} has weight {weight}; weights must be finite and positive")]
    BadWeight {
        /// The rule.
        rule: usize,
        /// Its weight.
        weight: f64,
    },
    /// Concurrency bounds that are not `1 <= min <= max`.
    #[error("concurrency bounds [{min}, {max}] are not 1 <= min <= max")]
    BadConcurrency {
        /// The lower bound.
        min: i64,
        /// The upper bound.
        max: i64,
    },
    /// A step count below 1.
    #[error("step_count must be at least 1, got {0}")]
    BadStepCount(i64),
    /// A worker index outside `0..concurrency`.
    #[error("worker {worker} is not in 0..{concurrency}")]
    BadWorker {
        /// The index given.
        worker: i64,
        /// The machine's concurrency.
        concurrency: usize,
    },
    /// `rule_rejected` for a worker with no rule outstanding.
    #[error("worker {0} has no outstanding rule to reject")]
    NoOutstandingRule(usize),
    /// An invariant index outside the registered ones.
    #[error("invariant {index} is not in 0..{count}")]
    BadInvariant {
        /// The index given.
        index: i64,
        /// How many invariants there are.
        count: usize,
    },
}

/// What a state machine is made of, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct StateMachineSpec {
    /// Each rule's group id.
    rule_groups: Vec<i64>,
    /// Each rule's weight, if they are not all equal.
    rule_weights: Option<Vec<f64>>,
    /// Per invariant: checked at every join point (else sampled).
    invariant_always: Vec<bool>,
    min_concurrency: usize,
    max_concurrency: usize,
    step_count: u64,
}

impl StateMachineSpec {
    /// A machine of `rules` rules of equal weight in one group, no
    /// invariants, run by one worker: protocol 0.16's state machines.
    pub fn sequential(rules: NonZeroUsize) -> StateMachineSpec {
        StateMachineSpec {
            rule_groups: vec![0; rules.get()],
            rule_weights: None,
            invariant_always: Vec::new(),
            min_concurrency: 1,
            max_concurrency: 1,
            step_count: 50,
        }
    }

    /// A machine as the C ABI's `hegel_new_state_machine` describes it.
    pub fn new(
        rule_groups: Vec<i64>,
        rule_weights: Option<Vec<f64>>,
        invariant_always: Vec<bool>,
        concurrency: (i64, i64),
        step_count: i64,
    ) -> Result<StateMachineSpec, StateMachineError> {
        if rule_groups.is_empty() {
            return Err(StateMachineError::NoRules);
        }
        if let Some(rule) = rule_groups.iter().position(|g| *g == DONE) {
            return Err(StateMachineError::ReservedGroup(rule));
        }
        if let Some(weights) = &rule_weights {
            if weights.len() != rule_groups.len() {
                return Err(StateMachineError::WeightCount {
                    rules: rule_groups.len(),
                    weights: weights.len(),
                });
            }
            if let Some((rule, weight)) = weights
                .iter()
                .enumerate()
                .find(|(_, w)| !(w.is_finite() && **w > 0.0))
            {
                return Err(StateMachineError::BadWeight {
                    rule,
                    weight: *weight,
                });
            }
        }
        let (min, max) = concurrency;
        if min < 1 || max < min {
            return Err(StateMachineError::BadConcurrency { min, max });
        }
        if step_count < 1 {
            return Err(StateMachineError::BadStepCount(step_count));
        }
        // All-equal weights choose exactly as no weights do.
        let rule_weights = rule_weights.filter(|w| w.iter().any(|x| *x != w[0]));
        Ok(StateMachineSpec {
            rule_groups,
            rule_weights,
            invariant_always,
            min_concurrency: usize::try_from(min).unwrap_or(usize::MAX),
            max_concurrency: usize::try_from(max).unwrap_or(usize::MAX),
            step_count: step_count as u64,
        })
    }
}

/// One worker's view: its swarm subset and its place in the current round.
#[derive(Clone, Debug)]
struct Worker {
    /// Whether each rule is enabled for this worker.
    enabled: Vec<bool>,
    /// Rules pulled (and not rejected) in the current round.
    pulled: u64,
    /// Whether this worker's round budget is spent.
    round_over: bool,
    /// The rule last handed out and not yet superseded or rejected.
    outstanding: Option<usize>,
}

/// One state machine in one test case.
#[derive(Clone, Debug)]
pub struct StateMachine {
    spec: StateMachineSpec,
    /// Distinct group ids, in order of first appearance.
    groups: Vec<i64>,
    /// Each rule's index into `groups`.
    rule_group: Vec<usize>,
    workers: Vec<Worker>,
    /// The group of the current round.
    current_group: usize,
    /// Rounds begun so far.
    rounds: u64,
    /// Whether the current round had a rule rejected (at concurrency 1 it
    /// then does not count toward the budget).
    round_rejected: bool,
    /// Whether `next_group` said done.
    finished: bool,
}

impl StateMachine {
    /// A state machine of `rules` equal rules in one group, one worker:
    /// draws the swarm subset (protocol 0.16's `new_state_machine`).
    pub fn new(data: &mut TestData, rules: NonZeroUsize) -> Result<StateMachine, StopTest> {
        StateMachine::with_spec(data, StateMachineSpec::sequential(rules))
    }

    /// A state machine of `spec`: draws the concurrency level and each
    /// worker's swarm subset.
    pub fn with_spec(
        data: &mut TestData,
        spec: StateMachineSpec,
    ) -> Result<StateMachine, StopTest> {
        let mut groups: Vec<i64> = Vec::new();
        let rule_group = spec
            .rule_groups
            .iter()
            .map(|g| match groups.iter().position(|x| x == g) {
                Some(i) => i,
                None => {
                    groups.push(*g);
                    groups.len() - 1
                }
            })
            .collect::<Vec<_>>();
        let concurrency = if spec.min_concurrency == spec.max_concurrency {
            spec.min_concurrency
        } else {
            // The simplest choice is the most workers.
            let (min, max) = (spec.min_concurrency as i128, spec.max_concurrency as i128);
            data.draw_integer(IntegerConstraints {
                min: Some(min),
                max: Some(max),
                shrink_towards: max,
            })? as usize
        };
        let mut workers = Vec::with_capacity(concurrency.min(1 << 16));
        for _ in 0..concurrency {
            workers.push(Worker {
                enabled: swarm_subset(data, &rule_group, groups.len())?,
                pulled: 0,
                round_over: false,
                outstanding: None,
            });
        }
        Ok(StateMachine {
            spec,
            groups,
            rule_group,
            workers,
            current_group: 0,
            rounds: 0,
            round_rejected: false,
            finished: false,
        })
    }

    /// How many workers pull rules.
    pub fn concurrency(&self) -> usize {
        self.workers.len()
    }

    /// The rules worker 0 has enabled, by index, in ascending order.
    pub fn enabled_rules(&self) -> Vec<usize> {
        self.enabled_in(0, None)
    }

    fn enabled_in(&self, worker: usize, group: Option<usize>) -> Vec<usize> {
        self.workers[worker]
            .enabled
            .iter()
            .enumerate()
            .filter(|(rule, on)| **on && group.is_none_or(|g| self.rule_group[*rule] == g))
            .map(|(rule, _)| rule)
            .collect()
    }

    fn worker(&self, worker: i64) -> Result<usize, StateMachineError> {
        usize::try_from(worker)
            .ok()
            .filter(|w| *w < self.workers.len())
            .ok_or(StateMachineError::BadWorker {
                worker,
                concurrency: self.workers.len(),
            })
    }

    /// Starts the next round: `Some(group id)` if the machine goes on,
    /// `None` when it is done. Every test case runs at least one round and
    /// at most `step_count` counted ones.
    pub fn next_group(&mut self, data: &mut TestData) -> Result<Option<i64>, StopTest> {
        if self.finished {
            return Ok(None);
        }
        if self.round_rejected && self.workers.len() == 1 {
            self.rounds -= 1;
        }
        let p_continue = 1.0 - 1.0 / self.spec.step_count as f64;
        let go_on = if self.rounds == 0 {
            data.force_boolean(p_continue, true)?
        } else if self.rounds >= self.spec.step_count {
            data.force_boolean(p_continue, false)?
        } else {
            data.draw_boolean(p_continue)?
        };
        if !go_on {
            self.finished = true;
            return Ok(None);
        }
        self.rounds += 1;
        self.round_rejected = false;
        self.current_group = if self.groups.len() > 1 {
            data.draw_integer(IntegerConstraints::bounded(
                0,
                self.groups.len() as i128 - 1,
            ))? as usize
        } else {
            0
        };
        for worker in &mut self.workers {
            worker.pulled = 0;
            worker.round_over = false;
            worker.outstanding = None;
        }
        Ok(Some(self.groups[self.current_group]))
    }

    /// The rule `worker` runs next this round, or `None` when its round
    /// budget is spent (one rule at concurrency 1; at higher concurrency a
    /// drawn number of rules).
    pub fn next_rule(
        &mut self,
        data: &mut TestData,
        worker: i64,
    ) -> Result<Result<Option<usize>, StateMachineError>, StopTest> {
        let worker = match self.worker(worker) {
            Ok(w) => w,
            Err(e) => return Ok(Err(e)),
        };
        let w = &self.workers[worker];
        if w.round_over || self.finished {
            return Ok(Ok(None));
        }
        let another = if w.pulled == 0 {
            true
        } else if self.workers.len() == 1 {
            false
        } else {
            data.draw_boolean(0.5)?
        };
        if !another {
            let w = &mut self.workers[worker];
            w.round_over = true;
            w.outstanding = None;
            return Ok(Ok(None));
        }
        let rule = self.choose(data, worker, Some(self.current_group))?;
        let w = &mut self.workers[worker];
        w.pulled += 1;
        w.outstanding = Some(rule);
        Ok(Ok(Some(rule)))
    }

    /// The rule last returned to `worker` was rejected (an assumption
    /// failed): it does not count toward the budget.
    pub fn rule_rejected(&mut self, worker: i64) -> Result<(), StateMachineError> {
        let index = self.worker(worker)?;
        let w = &mut self.workers[index];
        if w.outstanding.take().is_none() {
            return Err(StateMachineError::NoOutstandingRule(index));
        }
        w.pulled -= 1;
        if self.workers.len() == 1 {
            self.round_rejected = true;
        }
        Ok(())
    }

    /// Whether to check invariant `index` at this join point: always for
    /// one registered as always checked, else with probability
    /// `1 / step_count`.
    pub fn should_check_invariant(
        &mut self,
        data: &mut TestData,
        index: i64,
    ) -> Result<Result<bool, StateMachineError>, StopTest> {
        let count = self.spec.invariant_always.len();
        let Some(always) = usize::try_from(index)
            .ok()
            .and_then(|i| self.spec.invariant_always.get(i))
        else {
            return Ok(Err(StateMachineError::BadInvariant { index, count }));
        };
        if *always {
            return Ok(Ok(true));
        }
        Ok(Ok(data.draw_boolean(1.0 / self.spec.step_count as f64)?))
    }

    /// One of worker 0's enabled rules, whatever the round (protocol 0.16:
    /// the client counts the steps). The simplest is the first enabled rule.
    pub fn pick_rule(&self, data: &mut TestData) -> Result<usize, StopTest> {
        self.choose(data, 0, None)
    }

    /// A rule of `group` (any, if `None`) among `worker`'s enabled ones.
    fn choose(
        &self,
        data: &mut TestData,
        worker: usize,
        group: Option<usize>,
    ) -> Result<usize, StopTest> {
        let enabled = self.enabled_in(worker, group);
        if enabled.len() == 1 {
            return Ok(enabled[0]);
        }
        match &self.spec.rule_weights {
            None => {
                let last = enabled.len() as i128 - 1;
                let choice = data.draw_integer(IntegerConstraints::bounded(0, last))?;
                Ok(enabled[choice as usize])
            }
            Some(weights) => {
                // One "pass over this rule?" per rule in turn, each with the
                // probability that the rule is not the one chosen, so rules
                // come out in proportion to their weights and the simplest
                // choice takes the first rule.
                let mut remaining: f64 = enabled.iter().map(|r| weights[*r]).sum();
                for rule in &enabled[..enabled.len() - 1] {
                    let p_pass = 1.0 - weights[*rule] / remaining;
                    if !data.draw_boolean(p_pass)? {
                        return Ok(*rule);
                    }
                    remaining -= weights[*rule];
                }
                Ok(enabled[enabled.len() - 1])
            }
        }
    }
}

/// A worker's swarm subset: a disable probability drawn for it, then each
/// rule disabled with that probability (the simplest choices, probability 0
/// and "keep", keep every rule), at least one rule kept per group (all of a
/// group's rules come back if none was kept).
fn swarm_subset(
    data: &mut TestData,
    rule_group: &[usize],
    groups: usize,
) -> Result<Vec<bool>, StopTest> {
    data.start_span(labels::TUPLE);
    let steps = data.draw_integer(IntegerConstraints::bounded(0, SWARM_DISABLE_STEPS))?;
    let p_disabled = steps as f64 / 255.0;
    let mut enabled = Vec::with_capacity(rule_group.len());
    for _ in rule_group {
        enabled.push(!data.draw_boolean(p_disabled)?);
    }
    data.stop_span(false);
    for group in 0..groups {
        let rules = || rule_group.iter().enumerate().filter(|(_, g)| **g == group);
        if !rules().any(|(rule, _)| enabled[rule]) {
            for (rule, _) in rules() {
                enabled[rule] = true;
            }
        }
    }
    Ok(enabled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Source;

    fn rules(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    fn generating(seed: u64) -> TestData {
        TestData::generating(Vec::new(), Source::from_seed(seed), 5000)
    }

    #[test]
    fn the_simplest_machine_enables_every_rule_and_runs_the_first() {
        let mut data = TestData::replaying(Vec::new(), 100);
        let machine = StateMachine::new(&mut data, rules(4)).unwrap();
        assert_eq!(machine.enabled_rules(), vec![0, 1, 2, 3]);
        assert_eq!(machine.pick_rule(&mut data), Ok(0));
    }

    #[test]
    fn swarm_subsets_vary_and_rules_come_only_from_them() {
        let mut subsets = std::collections::HashSet::new();
        for seed in 0..200 {
            let mut data = generating(seed);
            let machine = StateMachine::new(&mut data, rules(5)).unwrap();
            assert!(!machine.enabled_rules().is_empty());
            for _ in 0..20 {
                let rule = machine.pick_rule(&mut data).unwrap();
                assert!(machine.enabled_rules().contains(&rule));
            }
            subsets.insert(machine.enabled_rules());
        }
        assert!(subsets.len() > 5, "only {} distinct subsets", subsets.len());
        assert!(subsets.iter().any(|s| s.len() < 5));
    }

    #[test]
    fn bad_specs_are_refused() {
        let spec = |groups: Vec<i64>, weights, conc, steps| {
            StateMachineSpec::new(groups, weights, vec![], conc, steps)
        };
        assert_eq!(
            spec(vec![], None, (1, 1), 5),
            Err(StateMachineError::NoRules)
        );
        assert_eq!(
            spec(vec![0, DONE], None, (1, 1), 5),
            Err(StateMachineError::ReservedGroup(1))
        );
        assert!(matches!(
            spec(vec![0, 0], Some(vec![1.0, f64::NAN]), (1, 1), 5),
            Err(StateMachineError::BadWeight { rule: 1, .. })
        ));
        assert!(matches!(
            spec(vec![0], None, (2, 1), 5),
            Err(StateMachineError::BadConcurrency { .. })
        ));
        assert_eq!(
            spec(vec![0], None, (1, 1), 0),
            Err(StateMachineError::BadStepCount(0))
        );
    }

    #[test]
    fn rounds_run_one_rule_each_within_the_step_budget() {
        for seed in 0..50 {
            let mut data = generating(seed);
            let spec = StateMachineSpec::new(vec![7, 7, 9], None, vec![false], (1, 1), 10).unwrap();
            let mut machine = StateMachine::with_spec(&mut data, spec).unwrap();
            assert_eq!(machine.concurrency(), 1);
            let mut rounds = 0;
            while let Some(group) = machine.next_group(&mut data).unwrap() {
                rounds += 1;
                assert!(group == 7 || group == 9);
                let rule = machine.next_rule(&mut data, 0).unwrap().unwrap().unwrap();
                assert_eq!(group, [7, 7, 9][rule], "a rule of the round's group");
                assert_eq!(machine.next_rule(&mut data, 0).unwrap(), Ok(None));
                machine
                    .should_check_invariant(&mut data, 0)
                    .unwrap()
                    .unwrap();
            }
            assert!((1..=10).contains(&rounds), "{rounds} rounds");
            assert_eq!(machine.next_group(&mut data), Ok(None));
        }
    }

    #[test]
    fn a_rejected_rule_does_not_count_and_needs_an_outstanding_rule() {
        let mut data = TestData::replaying(Vec::new(), 1000);
        let spec = StateMachineSpec::new(vec![0], None, vec![], (1, 1), 2).unwrap();
        let mut machine = StateMachine::with_spec(&mut data, spec).unwrap();
        assert_eq!(
            machine.rule_rejected(0),
            Err(StateMachineError::NoOutstandingRule(0))
        );
        assert!(machine.next_group(&mut data).unwrap().is_some());
        assert_eq!(machine.next_rule(&mut data, 0).unwrap(), Ok(Some(0)));
        machine.rule_rejected(0).unwrap();
        assert_eq!(
            machine.rule_rejected(0),
            Err(StateMachineError::NoOutstandingRule(0))
        );
        // The rejected rule's slot is retried.
        assert_eq!(machine.next_rule(&mut data, 0).unwrap(), Ok(Some(0)));
        assert!(matches!(
            machine.next_rule(&mut data, 1).unwrap(),
            Err(StateMachineError::BadWorker { worker: 1, .. })
        ));
    }

    #[test]
    fn concurrency_leans_to_the_maximum_and_workers_pull_their_own_rules() {
        let mut levels = Vec::new();
        for seed in 0..100 {
            let mut data = generating(seed);
            let spec = StateMachineSpec::new(vec![0, 0, 0], None, vec![], (1, 4), 5).unwrap();
            let mut machine = StateMachine::with_spec(&mut data, spec).unwrap();
            levels.push(machine.concurrency());
            machine.next_group(&mut data).unwrap();
            for worker in 0..machine.concurrency() {
                let mut pulled = 0;
                while let Some(rule) = machine
                    .next_rule(&mut data, worker as i64)
                    .unwrap()
                    .unwrap()
                {
                    assert!(rule < 3);
                    pulled += 1;
                }
                assert!(pulled >= 1);
            }
        }
        let at_max = levels.iter().filter(|l| **l == 4).count();
        assert!(at_max > 20, "{levels:?}");
        assert!(levels.iter().all(|l| (1..=4).contains(l)));
        let mut data = TestData::replaying(Vec::new(), 100);
        let spec = StateMachineSpec::new(vec![0], None, vec![], (1, 4), 5).unwrap();
        assert_eq!(
            StateMachine::with_spec(&mut data, spec)
                .unwrap()
                .concurrency(),
            4
        );
    }

    #[test]
    fn weights_steer_the_choice() {
        let mut counts = [0u32; 2];
        for seed in 0..40 {
            let mut data = generating(seed);
            let spec =
                StateMachineSpec::new(vec![0, 0], Some(vec![1.0, 9.0]), vec![], (1, 1), 5).unwrap();
            let machine = StateMachine::with_spec(&mut data, spec).unwrap();
            if machine.enabled_rules().len() < 2 {
                continue;
            }
            for _ in 0..20 {
                counts[machine.pick_rule(&mut data).unwrap()] += 1;
            }
        }
        assert!(counts[1] > counts[0] * 3, "{counts:?}");
    }
}
