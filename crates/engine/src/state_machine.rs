//! Engine-owned state machines: the engine chooses which rule runs next.
//!
//! A stateful test registers its rules (each in a concurrency group, with a
//! weight) and invariants; the engine draws every decision from the choice
//! sequence, so the sequence of steps shrinks like any other choices. One
//! implementation serves every frontend: geist-server's protocol 0.16
//! (`new_state_machine`, `state_machine_next_rule`: [`StateMachine::new`]
//! and [`StateMachine::pick_rule`]) and libhegel's C ABI
//! (`hegel_new_state_machine` and the `hegel_state_machine_*` calls:
//! [`StateMachine::with_spec`], [`StateMachine::next_group`],
//! [`StateMachine::next_rule`], [`StateMachine::rule_rejected`],
//! [`StateMachine::should_check_invariant`]).
//!
//! - At creation, the concurrency level (how many workers pull rules: the
//!   maximum outright with probability 3/4, since concurrency bugs need
//!   concurrency, else drawn in the bounds) and per worker the disable
//!   probability of its swarm subset (a draw of 0 to 254, over 255, as
//!   Hypothesis's feature flags draw it).
//! - Then each worker's swarm subset, before any step: per group of more
//!   than one rule, one boolean per rule says whether the rule is disabled
//!   for the worker for the whole test case; when every rule of a group came
//!   out disabled, one more choice picks the one that stays enabled, so
//!   every group keeps a rule. Rules that mask each other's bugs are
//!   sometimes apart, and a subset of one rule runs long stretches of it.
//!   Drawn before the first round, the subset is no step's choice: the
//!   shrinker deletes any step without moving the subset.
//! - Per round ([`StateMachine::next_group`]), whether to go on (at least
//!   one round; at most `step_count` counted ones; the stop side exists so
//!   that the shrinker can truncate, so most test cases run the full count)
//!   and which group's rules run. Rounds whose rule was rejected do not
//!   count at concurrency 1, but attempts are capped (ten per step, and at
//!   least a thousand while nothing succeeded), so a machine whose rules
//!   always reject still ends.
//! - Per pull ([`StateMachine::next_rule`]), whether the worker runs another
//!   rule this round (one at concurrency 1; up to five otherwise, the first
//!   worker at least one in the first round, so that every test case runs a
//!   rule) and which rule of the round's group: one choice per rule run, an
//!   index into the group's rules in proportion to the weights (none for a
//!   group of one rule). An index that lands on a rule the worker's subset
//!   disabled runs one of its enabled rules instead (the disabled rules of
//!   a group are dealt out among the enabled ones in turn). A step's
//!   choices are the same whatever the subset, so re-enabling a rule while
//!   shrinking moves no step's choices, and a step whose index named an
//!   enabled rule runs it still.
//! - Per join point, whether a sampled invariant is checked
//!   ([`StateMachine::should_check_invariant`]).
//!
//! The simplest choices keep every rule and pick the first, so shrinking
//! re-enables rules and moves steps toward the first rule.

use crate::choice::{IntegerConstraints, PreparedIntegerConstraints};
use crate::data::{StopTest, TestData};
use std::num::NonZeroUsize;

/// The largest draw of the per-subset disable probability, which is that
/// draw over 255 (as Hypothesis's feature flags draw it).
const SWARM_DISABLE_STEPS: i128 = 254;
/// Probability of another round when the machine is free to choose: the
/// stop side exists so the shrinker can truncate, not to set the length
/// (the step count does that).
const P_CONTINUE: f64 = 1.0 - 1.0 / 4_294_967_296.0;
/// Attempts allowed per successful unit of work (rounds, and rules per round).
const ATTEMPT_MULTIPLIER: u64 = 10;
/// Round attempts allowed while no round has counted.
const MIN_ATTEMPTS_WITHOUT_SUCCESS: u64 = 1000;
/// Most rules one worker completes in a round at concurrency above 1.
const MAX_ROUND_RULES: u64 = 5;
/// Probability the concurrency level is the maximum outright.
const P_MAX_CONCURRENCY: f64 = 0.75;
/// The resolution of a weighted choice among rules of unequal weights.
const WEIGHT_SCALE: i128 = 1 << 24;
/// The step count of protocol 0.16's machines (the client counts steps, so
/// it only sets how often sampled invariants would be checked).
const SEQUENTIAL_STEP_COUNT: i64 = 50;

/// The group id [`StateMachine::next_group`] and [`StateMachine::next_rule`]
/// use for "done" in the C ABI; no group may have it.
pub const DONE: i64 = i64::MIN;

/// Why a state machine could not be created or driven.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StateMachineError {
    /// A state machine needs at least one rule.
    #[error("cannot run a state machine with no rules")]
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
    #[error("rule {0}'s group is {DONE}, the value that says the machine is done")]
    ReservedGroup(usize),
    /// A weight that is not finite and positive.
    #[error("rule weights must be finite and positive, but rule {rule} has weight {weight}")]
    BadWeight {
        /// The rule.
        rule: usize,
        /// Its weight.
        weight: f64,
    },
    /// Concurrency bounds that are not `1 <= min <= max`.
    #[error("concurrency bounds must satisfy 1 <= min <= max, got [{min}, {max}]")]
    BadConcurrency {
        /// The lower bound.
        min: i64,
        /// The upper bound.
        max: i64,
    },
    /// A step count below 1.
    #[error("state machine step count must be at least 1, got {0}")]
    BadStepCount(i64),
    /// A worker index outside `0..concurrency`.
    #[error("worker index must be in [0, {concurrency}), got {worker}")]
    BadWorker {
        /// The index given.
        worker: i64,
        /// The machine's concurrency.
        concurrency: usize,
    },
    /// A rule was asked for before the first round began.
    #[error("a rule was requested before the first round began (call next_group first)")]
    NoRound,
    /// `rule_rejected` for a worker with no rule outstanding.
    #[error("worker {0} has no outstanding rule to reject this round")]
    NoOutstandingRule(usize),
    /// An invariant index outside the registered ones.
    #[error("invariant index must be in [0, {count}), got {index}")]
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
    min_concurrency: u64,
    max_concurrency: u64,
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
            step_count: SEQUENTIAL_STEP_COUNT as u64,
        }
    }

    /// A machine as the C ABI's `hegel_new_state_machine` describes it:
    /// each rule's group and (optionally) weight, per invariant whether it
    /// is checked at every join point, the concurrency bounds and the step
    /// count.
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
            min_concurrency: min as u64,
            max_concurrency: max as u64,
            step_count: step_count as u64,
        })
    }

    fn weight(&self, rule: usize) -> f64 {
        self.rule_weights.as_ref().map_or(1.0, |w| w[rule])
    }
}

/// A worker's swarm subset, decided at the machine's creation.
#[derive(Clone, Debug)]
struct Swarm {
    /// Per rule: whether the subset leaves it out.
    disabled: Vec<bool>,
    /// Per group, per position among the group's rules: the rule an index
    /// landing there runs (the rule itself when enabled, else one of the
    /// group's enabled rules, dealt out in turn).
    targets: Vec<Vec<usize>>,
}

impl Swarm {
    /// Draws a worker's subset: the disable probability (a draw of 0 to
    /// 254, over 255), then per group of more than one rule a boolean per
    /// rule, and when all came out disabled, which one stays enabled.
    fn draw(data: &mut TestData, rules: usize, groups: &[Vec<usize>]) -> Result<Swarm, StopTest> {
        let steps = data.draw_integer(IntegerConstraints::bounded(0, SWARM_DISABLE_STEPS))?;
        let p_disabled = steps as f64 / 255.0;
        let mut disabled = vec![false; rules];
        let mut targets = Vec::with_capacity(groups.len());
        for members in groups {
            if members.len() > 1 {
                for rule in members {
                    disabled[*rule] = data.draw_boolean(p_disabled)?;
                }
                if members.iter().all(|r| disabled[*r]) {
                    let keep = data
                        .draw_integer(IntegerConstraints::bounded(0, members.len() as i128 - 1))?
                        as usize;
                    disabled[members[keep]] = false;
                }
            }
            if !members.iter().any(|r| disabled[*r]) {
                targets.push(members.clone());
                continue;
            }
            let enabled: Vec<usize> = members.iter().copied().filter(|r| !disabled[*r]).collect();
            let mut dealt = 0;
            targets.push(
                members
                    .iter()
                    .map(|rule| {
                        if disabled[*rule] {
                            dealt += 1;
                            enabled[(dealt - 1) % enabled.len()]
                        } else {
                            *rule
                        }
                    })
                    .collect(),
            );
        }
        Ok(Swarm { disabled, targets })
    }
}

/// One worker's view: its swarm subset and its place in the current round.
#[derive(Clone, Debug)]
struct Worker {
    swarm: Swarm,
    /// Rules handed out this round, rejected ones included.
    drawn: u64,
    /// Rules rejected this round.
    rejected: u64,
    /// Whether the rule last handed out may still be rejected.
    outstanding: bool,
    /// Whether the last rule was rejected (the next pull retries its slot).
    retrying: bool,
}

impl Worker {
    #[inline]
    fn new_round(&mut self) {
        self.drawn = 0;
        self.rejected = 0;
        self.outstanding = false;
        self.retrying = false;
    }
}

/// One state machine in one test case.
#[derive(Clone, Debug)]
pub struct StateMachine {
    spec: StateMachineSpec,
    /// Distinct group ids, in order of first appearance.
    group_ids: Vec<i64>,
    /// Each group's rules, in registration order.
    groups: Vec<Vec<usize>>,
    workers: Vec<Worker>,
    /// The group of the current round.
    current_group: usize,
    /// Rounds begun so far.
    rounds_started: u64,
    /// Rounds that had a rule rejected at concurrency 1 (they do not count).
    rounds_rejected: u64,
    /// Per group, how its rule is drawn, prepared once for every step.
    draws: Vec<RuleDraw>,
}

/// How [`StateMachine::select`] draws a rule of one group.
#[derive(Clone, Debug)]
enum RuleDraw {
    /// A group of one rule: no choice.
    One,
    /// Rules of equal weights: an index, as
    /// `IntegerConstraints::bounded(0, n - 1)` draws it.
    Uniform(PreparedIntegerConstraints),
    /// Rules whose weights differ: an integer below [`WEIGHT_SCALE`] and the
    /// cumulative weights as bounds on it, one per rule (the last is the
    /// scale itself).
    Weighted(PreparedIntegerConstraints, Vec<i128>),
}

impl RuleDraw {
    fn new(spec: &StateMachineSpec, members: &[usize]) -> RuleDraw {
        if members.len() == 1 {
            return RuleDraw::One;
        }
        match weight_bounds(spec, members) {
            Some(bounds) => RuleDraw::Weighted(
                PreparedIntegerConstraints::bounded_i64(0, WEIGHT_SCALE as i64 - 1),
                bounds,
            ),
            None => RuleDraw::Uniform(PreparedIntegerConstraints::bounded_i64(
                0,
                i64::try_from(members.len()).unwrap_or(i64::MAX) - 1,
            )),
        }
    }
}

impl StateMachine {
    /// A state machine of `rules` equal rules in one group, one worker
    /// (protocol 0.16's `new_state_machine`).
    pub fn new(data: &mut TestData, rules: NonZeroUsize) -> Result<StateMachine, StopTest> {
        StateMachine::with_spec(data, StateMachineSpec::sequential(rules))
    }

    /// A state machine of `spec`: draws the concurrency level and each
    /// worker's swarm subset.
    pub fn with_spec(
        data: &mut TestData,
        spec: StateMachineSpec,
    ) -> Result<StateMachine, StopTest> {
        let mut group_ids: Vec<i64> = Vec::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (rule, id) in spec.rule_groups.iter().enumerate() {
            let group = match group_ids.iter().position(|g| g == id) {
                Some(g) => g,
                None => {
                    group_ids.push(*id);
                    groups.push(Vec::new());
                    groups.len() - 1
                }
            };
            groups[group].push(rule);
        }
        let (min, max) = (spec.min_concurrency, spec.max_concurrency);
        let concurrency = if min == max || data.draw_boolean(P_MAX_CONCURRENCY)? {
            max
        } else {
            data.draw_integer(IntegerConstraints::bounded(
                i128::from(min),
                i128::from(max),
            ))? as u64
        };
        let mut workers = Vec::new();
        for _ in 0..concurrency {
            workers.push(Worker {
                swarm: Swarm::draw(data, spec.rule_groups.len(), &groups)?,
                drawn: 0,
                rejected: 0,
                outstanding: false,
                retrying: false,
            });
        }
        let draws = groups
            .iter()
            .map(|members| RuleDraw::new(&spec, members))
            .collect();
        Ok(StateMachine {
            spec,
            group_ids,
            groups,
            workers,
            current_group: 0,
            rounds_started: 0,
            rounds_rejected: 0,
            draws,
        })
    }

    /// How many workers pull rules.
    pub fn concurrency(&self) -> usize {
        self.workers.len()
    }

    /// The rules worker 0's swarm subset enables, by index, in ascending
    /// order.
    pub fn enabled_rules(&self) -> Vec<usize> {
        self.decided(0, false)
    }

    /// The rules worker 0's swarm subset disables.
    pub fn disabled_rules(&self) -> Vec<usize> {
        self.decided(0, true)
    }

    fn decided(&self, worker: usize, disabled: bool) -> Vec<usize> {
        self.workers[worker]
            .swarm
            .disabled
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == disabled)
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
    /// at most `step_count` counted ones, within the attempt cap.
    pub fn next_group(&mut self, data: &mut TestData) -> Result<Option<i64>, StopTest> {
        let step_count = self.spec.step_count;
        let counted = self.rounds_started - self.rounds_rejected;
        let cap = if counted == 0 {
            step_count
                .saturating_mul(ATTEMPT_MULTIPLIER)
                .max(MIN_ATTEMPTS_WITHOUT_SUCCESS)
        } else {
            step_count.saturating_mul(ATTEMPT_MULTIPLIER)
        };
        let more = if counted >= step_count || self.rounds_started >= cap {
            data.force_boolean(P_CONTINUE, false)?
        } else if self.rounds_started == 0 {
            data.force_boolean(P_CONTINUE, true)?
        } else {
            data.draw_boolean(P_CONTINUE)?
        };
        if !more {
            return Ok(None);
        }
        let group = if self.groups.len() == 1 {
            0
        } else {
            data.draw_integer(IntegerConstraints::bounded(
                0,
                self.groups.len() as i128 - 1,
            ))? as usize
        };
        // (One worker, the common case, without the loop's set-up.)
        if let [only] = self.workers.as_mut_slice() {
            only.new_round();
        } else {
            for worker in &mut self.workers {
                worker.new_round();
            }
        }
        self.current_group = group;
        self.rounds_started += 1;
        Ok(Some(self.group_ids[group]))
    }

    /// The rule `worker` runs next this round, or `None` when its round is
    /// over (one rule at concurrency 1; at higher concurrency a drawn
    /// number, at most five completed and fifty handed out).
    #[inline]
    pub fn next_rule(
        &mut self,
        data: &mut TestData,
        worker: i64,
    ) -> Result<Result<Option<usize>, StateMachineError>, StopTest> {
        // Every step of a machine of one worker asks twice: first for its
        // one rule of the round, then to hear that its round is over (that
        // answer decided in line). Both as `pull_rule` decides them.
        if let [only] = self.workers.as_slice()
            && worker == 0
            && self.rounds_started > 0
        {
            if only.drawn >= 1 {
                return Ok(Ok(None));
            }
            return self.one_worker_rule(data).map(Ok);
        }
        self.pull_rule(data, worker)
    }

    /// The one rule of the round of a machine of one worker, whose round
    /// has handed none out yet ([`StateMachine::pull_rule`]'s answer).
    fn one_worker_rule(&mut self, data: &mut TestData) -> Result<Option<usize>, StopTest> {
        let rule = self.select(data, 0, self.current_group)?;
        let state = &mut self.workers[0];
        state.drawn += 1;
        state.outstanding = true;
        state.retrying = false;
        Ok(Some(rule))
    }

    /// [`StateMachine::next_rule`] but for its answer in line.
    fn pull_rule(
        &mut self,
        data: &mut TestData,
        worker: i64,
    ) -> Result<Result<Option<usize>, StateMachineError>, StopTest> {
        let w = match self.worker(worker) {
            Ok(w) => w,
            Err(e) => return Ok(Err(e)),
        };
        if self.rounds_started == 0 {
            return Ok(Err(StateMachineError::NoRound));
        }
        let state = &self.workers[w];
        if self.workers.len() == 1 {
            if state.drawn >= 1 {
                return Ok(Ok(None));
            }
        } else {
            let completed = state.drawn - state.rejected;
            let p = if state.drawn >= MAX_ROUND_RULES * ATTEMPT_MULTIPLIER
                || completed >= MAX_ROUND_RULES
            {
                0.0
            } else if state.retrying {
                1.0
            } else {
                (MAX_ROUND_RULES - completed) as f64 / (MAX_ROUND_RULES - completed + 1) as f64
            };
            // The first worker's first pull of the first round always runs
            // a rule, so that every test case runs at least one, as it does
            // at concurrency 1.
            let first = self.rounds_started == 1 && w == 0 && state.drawn == 0;
            let more = if first {
                data.force_boolean(p, true)?
            } else {
                data.draw_boolean(p)?
            };
            if !more {
                return Ok(Ok(None));
            }
        }
        let rule = self.select(data, w, self.current_group)?;
        let state = &mut self.workers[w];
        state.drawn += 1;
        state.outstanding = true;
        state.retrying = false;
        Ok(Ok(Some(rule)))
    }

    /// The rule last handed to `worker` was rejected (an assumption
    /// failed): at concurrency 1 its round does not count toward the steps,
    /// at higher concurrency its slot is retried.
    pub fn rule_rejected(&mut self, worker: i64) -> Result<(), StateMachineError> {
        let w = self.worker(worker)?;
        let state = &mut self.workers[w];
        if !state.outstanding {
            return Err(StateMachineError::NoOutstandingRule(w));
        }
        state.outstanding = false;
        state.rejected += 1;
        state.retrying = true;
        if self.workers.len() == 1 {
            self.rounds_rejected += 1;
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

    /// One of worker 0's enabled rules of the current round's group (every
    /// rule, for a machine of one group, as protocol 0.16's are), whatever
    /// the round: protocol 0.16's client counts the steps itself. The
    /// simplest is the first rule.
    pub fn pick_rule(&mut self, data: &mut TestData) -> Result<usize, StopTest> {
        self.select(data, 0, self.current_group)
    }

    /// A rule of `group` among `worker`'s enabled ones: one index into the
    /// group's rules, in proportion to the weights (no choice for a group of
    /// one rule), mapped onto the worker's subset. (In line: a step's rule
    /// is drawn in [`StateMachine::one_worker_rule`].)
    #[inline(always)]
    fn select(
        &mut self,
        data: &mut TestData,
        worker: usize,
        group: usize,
    ) -> Result<usize, StopTest> {
        let targets = &self.workers[worker].swarm.targets[group];
        let k = match &self.draws[group] {
            RuleDraw::One => 0,
            RuleDraw::Uniform(c) => data.draw_prepared_integer(c)? as usize,
            // One integer mapped through the cumulative weights: generation
            // follows the weights and shrinking moves toward the first rule.
            RuleDraw::Weighted(c, bounds) => {
                let u = data.draw_prepared_integer(c)?;
                bounds
                    .iter()
                    .position(|b| u < *b)
                    .unwrap_or(bounds.len() - 1)
            }
        };
        Ok(targets[k])
    }
}

/// The bounds [`StateMachine::select`] maps a weighted draw through, for a
/// group whose rules' weights differ (`None` when they are all equal).
fn weight_bounds(spec: &StateMachineSpec, members: &[usize]) -> Option<Vec<i128>> {
    spec.rule_weights.as_ref()?;
    let weights: Vec<f64> = members.iter().map(|r| spec.weight(*r)).collect();
    if weights.iter().all(|w| *w == weights[0]) {
        return None;
    }
    let total: f64 = weights.iter().sum();
    let mut cumulative = 0.0;
    let mut bounds: Vec<i128> = weights
        .iter()
        .map(|w| {
            cumulative += w / total;
            (cumulative * WEIGHT_SCALE as f64).ceil() as i128
        })
        .collect();
    if let Some(last) = bounds.last_mut() {
        *last = WEIGHT_SCALE;
    }
    Some(bounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::ChoiceValue;
    use crate::random::Source;

    fn rules(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    fn generating(seed: u64) -> TestData {
        TestData::generating(Vec::new(), Source::from_seed(seed), 100_000)
    }

    fn spec(groups: Vec<i64>, concurrency: (i64, i64), steps: i64) -> StateMachineSpec {
        StateMachineSpec::new(groups, None, vec![false], concurrency, steps).unwrap()
    }

    #[test]
    fn the_simplest_machine_keeps_every_rule_and_runs_the_first_once() {
        let mut data = TestData::replaying(Vec::new(), 100);
        let mut machine = StateMachine::new(&mut data, rules(4)).unwrap();
        assert_eq!(machine.pick_rule(&mut data), Ok(0));
        assert_eq!(machine.enabled_rules(), vec![0, 1, 2, 3]);
        let mut data = TestData::replaying(Vec::new(), 100);
        let mut machine = StateMachine::with_spec(&mut data, spec(vec![0, 0], (1, 1), 9)).unwrap();
        assert_eq!(machine.next_group(&mut data), Ok(Some(0)));
        assert_eq!(machine.next_rule(&mut data, 0), Ok(Ok(Some(0))));
        assert_eq!(machine.next_rule(&mut data, 0), Ok(Ok(None)));
        // The simplest "go on?" is no: the shrinker can cut after any round.
        assert_eq!(machine.next_group(&mut data), Ok(None));
    }

    #[test]
    fn swarm_subsets_vary_and_rules_come_only_from_them() {
        let mut subsets = std::collections::HashSet::new();
        let mut some_disabled = false;
        for seed in 0..200 {
            let mut data = generating(seed);
            let mut machine = StateMachine::new(&mut data, rules(5)).unwrap();
            let mut picked = std::collections::BTreeSet::new();
            for _ in 0..30 {
                let rule = machine.pick_rule(&mut data).unwrap();
                assert!(rule < 5);
                assert!(!machine.disabled_rules().contains(&rule), "seed {seed}");
                picked.insert(rule);
            }
            some_disabled |= !machine.disabled_rules().is_empty();
            subsets.insert(picked);
        }
        assert!(subsets.len() > 5, "only {} distinct subsets", subsets.len());
        assert!(some_disabled);
        assert!(subsets.iter().any(|s| s.len() < 5));
    }

    #[test]
    fn every_group_keeps_an_enabled_rule() {
        for seed in 0..300 {
            let mut data = generating(seed);
            let groups = vec![1, 1, 1, 2, 2, 3];
            let mut machine =
                StateMachine::with_spec(&mut data, spec(groups.clone(), (1, 1), 40)).unwrap();
            let mut seen = std::collections::HashSet::new();
            while let Some(group) = machine.next_group(&mut data).unwrap() {
                let rule = machine.next_rule(&mut data, 0).unwrap().unwrap().unwrap();
                assert_eq!(
                    groups[rule], group,
                    "seed {seed}: a rule of the round's group"
                );
                assert!(!machine.disabled_rules().contains(&rule));
                seen.insert(group);
            }
            let disabled = machine.disabled_rules();
            for g in [1, 2, 3] {
                let all_off = (0..groups.len())
                    .filter(|r| groups[*r] == g)
                    .all(|r| disabled.contains(&r));
                assert!(!all_off, "seed {seed}: group {g} lost every rule");
            }
        }
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
            spec(vec![0, 0], Some(vec![1.0]), (1, 1), 5),
            Err(StateMachineError::WeightCount { .. })
        ));
        assert!(matches!(
            spec(vec![0], None, (2, 1), 5),
            Err(StateMachineError::BadConcurrency { .. })
        ));
        assert!(matches!(
            spec(vec![0], None, (0, 1), 5),
            Err(StateMachineError::BadConcurrency { .. })
        ));
        assert_eq!(
            spec(vec![0], None, (1, 1), 0),
            Err(StateMachineError::BadStepCount(0))
        );
    }

    #[test]
    fn rounds_run_one_rule_each_and_most_test_cases_run_every_step() {
        let mut full = 0;
        for seed in 0..50 {
            let mut data = generating(seed);
            let mut machine =
                StateMachine::with_spec(&mut data, spec(vec![7, 7, 9], (1, 1), 10)).unwrap();
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
            full += usize::from(rounds == 10);
            assert_eq!(machine.next_group(&mut data), Ok(None));
        }
        assert!(full >= 45, "{full} of 50 ran the full step count");
    }

    #[test]
    fn a_rejected_rule_does_not_count_and_needs_an_outstanding_rule() {
        let mut data = generating(3);
        let mut machine = StateMachine::with_spec(&mut data, spec(vec![0], (1, 1), 2)).unwrap();
        assert_eq!(
            machine.next_rule(&mut data, 0),
            Ok(Err(StateMachineError::NoRound))
        );
        assert_eq!(
            machine.rule_rejected(0),
            Err(StateMachineError::NoOutstandingRule(0))
        );
        let mut rounds = 0;
        let mut rejected = 0;
        while machine.next_group(&mut data).unwrap().is_some() {
            rounds += 1;
            assert_eq!(machine.next_rule(&mut data, 0).unwrap(), Ok(Some(0)));
            if rounds <= 3 {
                machine.rule_rejected(0).unwrap();
                rejected += 1;
                assert_eq!(
                    machine.rule_rejected(0),
                    Err(StateMachineError::NoOutstandingRule(0))
                );
            }
        }
        // Two counted rounds, after the three rejected ones.
        assert_eq!((rounds, rejected), (5, 3));
        assert!(matches!(
            machine.next_rule(&mut data, 1),
            Ok(Err(StateMachineError::BadWorker { worker: 1, .. }))
        ));
    }

    #[test]
    fn a_machine_whose_rules_always_reject_still_ends() {
        for (steps, cap) in [(1, 1000), (5, 1000), (500, 5000)] {
            let mut data = generating(steps as u64);
            let mut machine =
                StateMachine::with_spec(&mut data, spec(vec![0, 1], (1, 1), steps)).unwrap();
            let mut rounds = 0;
            while machine.next_group(&mut data).unwrap().is_some() {
                rounds += 1;
                machine.next_rule(&mut data, 0).unwrap().unwrap().unwrap();
                machine.rule_rejected(0).unwrap();
            }
            assert_eq!(rounds, cap, "step_count {steps}");
        }
    }

    #[test]
    fn concurrency_leans_to_the_maximum_and_workers_pull_their_own_rules() {
        let mut levels = Vec::new();
        for seed in 0..100 {
            let mut data = generating(seed);
            let mut machine =
                StateMachine::with_spec(&mut data, spec(vec![0, 0, 0], (1, 4), 5)).unwrap();
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
                assert!(pulled <= MAX_ROUND_RULES, "{pulled} rules in a round");
            }
        }
        let at_max = levels.iter().filter(|l| **l == 4).count();
        assert!(at_max > 60, "{levels:?}");
        assert!(levels.iter().any(|l| *l < 4), "{levels:?}");
        assert!(levels.iter().all(|l| (1..=4).contains(l)));
        let mut data = TestData::replaying(Vec::new(), 100);
        let simplest = StateMachine::with_spec(&mut data, spec(vec![0], (1, 4), 5)).unwrap();
        // Shrinking moves toward the fewest workers: the simplest failure.
        assert_eq!(simplest.concurrency(), 1);
    }

    #[test]
    fn every_test_case_runs_a_rule_at_any_concurrency() {
        // The simplest choices after a prefix that picks three workers: no
        // worker would pull a rule of its own accord.
        let mut data = TestData::replaying(vec![ChoiceValue::Boolean(true)], 1000);
        let mut machine = StateMachine::with_spec(&mut data, spec(vec![0, 0], (1, 3), 5)).unwrap();
        assert_eq!(machine.concurrency(), 3);
        let mut rules = 0;
        while machine.next_group(&mut data).unwrap().is_some() {
            for worker in 0..3 {
                while machine
                    .next_rule(&mut data, worker)
                    .unwrap()
                    .unwrap()
                    .is_some()
                {
                    rules += 1;
                }
            }
        }
        assert_eq!(rules, 1);
    }

    #[test]
    fn a_worker_retries_a_rejected_slot_at_higher_concurrency() {
        let mut data = generating(11);
        let mut machine = StateMachine::with_spec(&mut data, spec(vec![0, 0], (2, 2), 5)).unwrap();
        machine.next_group(&mut data).unwrap();
        let mut handed_out = 0;
        while let Some(_rule) = machine.next_rule(&mut data, 1).unwrap().unwrap() {
            handed_out += 1;
            machine.rule_rejected(1).unwrap();
        }
        // Every rule rejected: the worker retries until its attempts run out.
        assert_eq!(handed_out, MAX_ROUND_RULES * ATTEMPT_MULTIPLIER);
    }

    #[test]
    fn weights_steer_the_choice() {
        let mut counts = [0u32; 2];
        for seed in 0..40 {
            let mut data = generating(seed);
            let spec =
                StateMachineSpec::new(vec![0, 0], Some(vec![1.0, 9.0]), vec![], (1, 1), 5).unwrap();
            let mut machine = StateMachine::with_spec(&mut data, spec).unwrap();
            let mut picked = [0u32; 2];
            for _ in 0..20 {
                picked[machine.pick_rule(&mut data).unwrap()] += 1;
            }
            if picked.iter().all(|n| *n > 0) {
                counts[0] += picked[0];
                counts[1] += picked[1];
            }
        }
        assert!(counts[1] > counts[0] * 3, "{counts:?}");
    }

    #[test]
    fn invariants_are_always_checked_or_sampled() {
        let spec = StateMachineSpec::new(vec![0], None, vec![true, false], (1, 1), 4).unwrap();
        let mut sampled = 0;
        for seed in 0..50 {
            let mut data = generating(seed);
            let mut machine = StateMachine::with_spec(&mut data, spec.clone()).unwrap();
            let before = data.choices().len();
            assert_eq!(machine.should_check_invariant(&mut data, 0), Ok(Ok(true)));
            assert_eq!(
                data.choices().len(),
                before,
                "an always-checked one draws nothing"
            );
            sampled += usize::from(
                machine
                    .should_check_invariant(&mut data, 1)
                    .unwrap()
                    .unwrap(),
            );
            assert_eq!(
                machine.should_check_invariant(&mut data, 2),
                Ok(Err(StateMachineError::BadInvariant { index: 2, count: 2 }))
            );
            assert!(matches!(
                machine.should_check_invariant(&mut data, -1),
                Ok(Err(StateMachineError::BadInvariant { .. }))
            ));
        }
        // Probability 1/4 each.
        assert!((3..30).contains(&sampled), "{sampled} of 50");
    }

    #[test]
    fn replaying_a_test_case_replays_its_program() {
        let program = |data: &mut TestData| {
            let spec = StateMachineSpec::new(
                vec![0, 0, 1, 1],
                Some(vec![1.0, 2.0, 3.0, 4.0]),
                vec![false],
                (1, 3),
                20,
            )
            .unwrap();
            let mut machine = StateMachine::with_spec(data, spec).unwrap();
            let mut steps = Vec::new();
            while let Some(group) = machine.next_group(data).unwrap() {
                for worker in 0..machine.concurrency() as i64 {
                    while let Some(rule) = machine.next_rule(data, worker).unwrap().unwrap() {
                        steps.push((group, worker, rule));
                    }
                }
            }
            steps
        };
        for seed in 0..20 {
            let mut data = generating(seed);
            let steps = program(&mut data);
            let mut again = TestData::replaying(data.choices(), 100_000);
            assert_eq!(program(&mut again), steps, "seed {seed}");
        }
    }

    /// The rules a program of `spec` runs, by step, and where its steps'
    /// choices begin (after the machine's creation).
    fn run_steps(data: &mut TestData, spec: &StateMachineSpec) -> (Vec<usize>, usize) {
        let mut machine = StateMachine::with_spec(data, spec.clone()).unwrap();
        let created = data.choices().len();
        let mut steps = Vec::new();
        while machine.next_group(data).unwrap().is_some() {
            steps.push(machine.next_rule(data, 0).unwrap().unwrap().unwrap());
            assert_eq!(machine.next_rule(data, 0), Ok(Ok(None)));
        }
        (steps, created)
    }

    #[test]
    fn the_subset_is_drawn_before_the_first_step_and_a_step_is_two_choices() {
        let one_group = spec(vec![0, 0, 0], (1, 1), 10);
        let two_groups = spec(vec![0, 0, 5], (1, 1), 10);
        for seed in 0..100 {
            for (spec, per_step) in [(&one_group, 2), (&two_groups, 3)] {
                let mut data = generating(seed);
                let (steps, created) = run_steps(&mut data, spec);
                let group_zero = steps.iter().filter(|r| **r < 2).count();
                // "Go on?" and the rule's index per step (and the group,
                // with two; a group of one rule takes no index), and the
                // last "go on?".
                let expected = if per_step == 2 {
                    2 * steps.len()
                } else {
                    2 * steps.len() + group_zero
                };
                assert_eq!(data.choices().len() - created, expected + 1, "seed {seed}");
            }
        }
    }

    #[test]
    fn deleting_a_step_leaves_the_other_steps_their_rules() {
        let spec = spec(vec![0, 0, 0], (1, 1), 10);
        for seed in 0..100 {
            let mut data = generating(seed);
            let (steps, created) = run_steps(&mut data, &spec);
            if steps.len() < 2 {
                continue;
            }
            let mut choices = data.choices();
            choices.drain(created..created + 2);
            let mut again = TestData::replaying(choices, 100_000);
            assert_eq!(run_steps(&mut again, &spec).0, steps[1..], "seed {seed}");
        }
    }

    #[test]
    fn re_enabling_a_rule_keeps_the_steps_that_named_enabled_rules() {
        let spec = spec(vec![0, 0, 0, 0], (1, 1), 20);
        let mut tried = 0;
        for seed in 0..300 {
            let mut data = generating(seed);
            let disabled = StateMachine::with_spec(&mut data, spec.clone())
                .unwrap()
                .disabled_rules();
            if disabled.is_empty() || disabled.len() == 4 {
                continue;
            }
            let mut data = generating(seed);
            let (steps, created) = run_steps(&mut data, &spec);
            let mut choices = data.choices();
            // The creation's choices: the disable probability, then a flag
            // per rule (and, when all four came out disabled, which one
            // stays enabled: re-enabling another would drop that choice).
            if created != 5 {
                continue;
            }
            choices[1 + disabled[0]] = ChoiceValue::Boolean(false);
            let mut again = TestData::replaying(choices.clone(), 100_000);
            let (rerun, _) = run_steps(&mut again, &spec);
            assert_eq!(rerun.len(), steps.len(), "seed {seed}");
            for (i, rule) in steps.iter().enumerate() {
                let ChoiceValue::Integer(k) = choices[created + 2 * i + 1] else {
                    panic!("seed {seed}: step {i}'s index is an integer");
                };
                if !disabled.contains(&(k as usize)) {
                    assert_eq!(rerun[i], *rule, "seed {seed}, step {i}");
                }
            }
            tried += 1;
        }
        assert!(tried > 20, "{tried} seeds had a partial subset");
    }
}
