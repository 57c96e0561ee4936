//! Stateful generation: variable pools, rule-based state machines and
//! recursive values, each drawn through engine choices so they replay and
//! shrink like any other draw.
//!
//! - A **pool** hands out variable ids. An id is a choice recorded by value
//!   (deleting an earlier addition never renumbers the later ones), and a
//!   drawn variable is recorded as the id itself, not as an index into the
//!   pool's current contents.
//! - A **state machine** draws its concurrency level (weighted toward the
//!   maximum) and per worker a swarm of enabled rules (at least one per
//!   group), then runs in rounds: a continue decision per round (the
//!   simplest value stops, so the shrinker truncates at any round), the
//!   round's group, and each worker's rules, weighted among its enabled
//!   rules of that group.
//! - A **recursion** steers a recursive value toward a target number of
//!   leaves (one, or one drawn up to the budget), enforces the leaf budget by
//!   retrying attempts that outgrow it, and gives up after
//!   `HEGEL_RECURSION_ATTEMPTS` attempts.
//!
//! These live here, on the engine's public API, until the engine owns them
//! (issue 15, item 1); the ABI then calls the engine's.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{self, handled};
use crate::test_case::{Bookkeeping, handle, hegel_test_case_t};
use crate::text;
use geist_engine::choice::IntegerConstraints;
use geist_engine::{Status, TestData};
use std::sync::{Arc, Mutex, MutexGuard};

/// Opaque to C: `hegel_pool_t`.
pub enum hegel_pool_t {}
/// Opaque to C: `hegel_state_machine_t`.
pub enum hegel_state_machine_t {}
/// Opaque to C: `hegel_recursion_t`.
pub enum hegel_recursion_t {}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Draws an index in `[0, weights.len())` with probability proportional to
/// the weights; index 0 is the simplest.
fn weighted_index(data: &mut TestData, weights: &[f64]) -> AbiResult<usize> {
    let n = weights.len();
    if n <= 1 {
        return Ok(0);
    }
    if weights.iter().all(|w| *w == weights[0]) {
        return Ok(data.draw_integer(IntegerConstraints::bounded(0, n as i128 - 1))? as usize);
    }
    // One integer choice mapped through the cumulative weights: generation
    // follows the weights and shrinking moves toward the first index.
    const SCALE: i128 = 1 << 24;
    let total: f64 = weights.iter().sum();
    let u = data.draw_integer(IntegerConstraints::bounded(0, SCALE - 1))? as f64 / SCALE as f64;
    let mut cumulative = 0.0;
    for (i, w) in weights.iter().enumerate() {
        cumulative += w / total;
        if u < cumulative {
            return Ok(i);
        }
    }
    Ok(weights.iter().rposition(|w| *w > 0.0).unwrap_or(n - 1))
}

// ----------------------------------------------------------------- pools

/// A pool's variables.
#[derive(Default)]
pub struct Pool {
    state: Mutex<PoolState>,
}
handled!(Pool, 13, "pool");

#[derive(Default)]
struct PoolState {
    /// Every variable added, in order.
    variables: Vec<i64>,
    /// Consumed ones.
    consumed: std::collections::BTreeSet<i64>,
}

/// A fresh variable id: a choice in a small window above the ids in use;
/// one that collides (a replay after shrinking) becomes the smallest unused.
fn fresh_id(data: &mut TestData, book: &mut Bookkeeping) -> AbiResult<i64> {
    let used = &book.variable_ids;
    let top = used.iter().next_back().map_or(1, |m| m + 2);
    let drawn = data.draw_integer(IntegerConstraints::bounded(0, i128::from(top)))? as i64;
    let id = if used.contains(&drawn) {
        (0..).find(|i| !used.contains(i)).unwrap_or(top + 1)
    } else {
        drawn
    };
    book.variable_ids.insert(id);
    Ok(id)
}

/// Starts a pool.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_new_pool(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    out_pool: *mut *mut hegel_pool_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_pool, "out_pool")?;
        tc.draw(|_| Ok(()))?;
        write(
            out_pool,
            handles::insert(Arc::new(Pool::default()))?,
            "out_pool",
        )
    })
}

/// Adds a variable; writes its id.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_pool_add(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    pool: *mut hegel_pool_t,
    out_variable_id: *mut i64,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let pool = handles::get::<Pool, _>(pool)?;
        require(out_variable_id, "out_variable_id")?;
        let mut state = locked(&pool.state);
        let id = tc.draw_keeping(|data, book| {
            data.start_span(geist_engine::data::labels::POOL_VARIABLE);
            let id = fresh_id(data, book);
            data.stop_span(false);
            id
        })?;
        state.variables.push(id);
        write(out_variable_id, id, "out_variable_id")
    })
}

/// Draws a variable (recorded by id), optionally consuming it.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_pool_generate(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    pool: *mut hegel_pool_t,
    consume: bool,
    out_variable_id: *mut i64,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let pool = handles::get::<Pool, _>(pool)?;
        require(out_variable_id, "out_variable_id")?;
        let mut state = locked(&pool.state);
        let active: Vec<i64> = state
            .variables
            .iter()
            .copied()
            .filter(|v| !state.consumed.contains(v))
            .collect();
        if active.is_empty() {
            return Err(AbiError::Assume("the pool has no variables to draw".into()));
        }
        let id = tc.draw(|data| {
            data.start_span(geist_engine::data::labels::POOL_VARIABLE);
            let lo = active.iter().copied().min().unwrap_or(0);
            let hi = active.iter().copied().max().unwrap_or(0);
            let c = IntegerConstraints::bounded(i128::from(lo), i128::from(hi));
            let drawn = data.draw_integer(c);
            data.stop_span(false);
            let drawn = drawn? as i64;
            // The recorded id, or the active variable nearest it.
            let id = active
                .iter()
                .copied()
                .min_by_key(|v| (v.abs_diff(drawn), *v))
                .unwrap_or(drawn);
            Ok(id)
        })?;
        if consume {
            state.consumed.insert(id);
        }
        write(out_variable_id, id, "out_variable_id")
    })
}

/// Puts back a consumed variable.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_pool_restore(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    pool: *mut hegel_pool_t,
    variable_id: i64,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let pool = handles::get::<Pool, _>(pool)?;
        tc.draw(|_| Ok(()))?;
        if locked(&pool.state).consumed.remove(&variable_id) {
            Ok(())
        } else {
            Err(AbiError::arg(format!(
                "variable {variable_id} is not a consumed variable of the pool"
            )))
        }
    })
}

/// Frees a pool; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_pool_free(
    ctx: *mut hegel_context_t,
    pool: *mut hegel_pool_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<Pool, _>(pool).map(drop))
}

// ------------------------------------------------------- state machines

/// Probability of another round when the machine is free to choose: the
/// stop side exists so the shrinker can truncate, not to set the length
/// (the step count does that).
const P_CONTINUE: f64 = 1.0 - 1.0 / 4_294_967_296.0;
/// Attempts allowed per successful unit of work (rounds, and rules per round).
const ATTEMPT_MULTIPLIER: i64 = 10;
/// Round attempts allowed while no rule has succeeded.
const MIN_ATTEMPTS_WITHOUT_SUCCESS: i64 = 1000;
/// Most rules one worker runs in a round at concurrency above 1.
const MAX_ROUND_RULES: i64 = 5;
/// Probability the concurrency level is the maximum outright.
const P_MAX_CONCURRENCY: f64 = 0.75;

/// A worker's swarm: which rules it runs, decided lazily, at least one per group.
struct Swarm {
    p_disabled: f64,
    disabled: Vec<Option<bool>>,
    /// Per group: the rules still able to be its last enabled one.
    last_chance: Vec<Vec<usize>>,
}

impl Swarm {
    fn is_enabled(&mut self, data: &mut TestData, group: usize, rule: usize) -> AbiResult<bool> {
        let candidates = &self.last_chance[group];
        let forced = if candidates.len() == 1 && candidates[0] == rule {
            Some(false)
        } else {
            self.disabled[rule]
        };
        let disabled = match forced {
            Some(v) => data.force_boolean(self.p_disabled, v)?,
            None => data.draw_boolean(self.p_disabled)?,
        };
        self.disabled[rule] = Some(disabled);
        if disabled {
            self.last_chance[group].retain(|r| *r != rule);
        } else {
            self.last_chance[group].clear();
        }
        Ok(!disabled)
    }
}

struct Worker {
    swarm: Swarm,
    drawn: i64,
    rejected: i64,
    outstanding: bool,
    retrying: bool,
}

/// A state machine's state.
pub struct StateMachine {
    state: Mutex<Machine>,
}
handled!(StateMachine, 14, "state machine");

struct Machine {
    groups: Vec<Vec<usize>>,
    group_ids: Vec<i64>,
    weights: Vec<f64>,
    concurrency: i64,
    current_group: usize,
    rounds_started: i64,
    rounds_rejected: i64,
    step_count: i64,
    always_check: Vec<bool>,
    workers: Vec<Worker>,
}

impl Machine {
    fn worker(&self, index: i64) -> AbiResult<usize> {
        usize::try_from(index)
            .ok()
            .filter(|w| *w < self.workers.len())
            .ok_or_else(|| {
                AbiError::arg(format!(
                    "worker_index must be in [0, {}), got {index}",
                    self.concurrency
                ))
            })
    }

    fn next_group(&mut self, data: &mut TestData) -> AbiResult<i64> {
        let counted = self.rounds_started - self.rounds_rejected;
        let cap = if counted == 0 {
            self.step_count
                .saturating_mul(ATTEMPT_MULTIPLIER)
                .max(MIN_ATTEMPTS_WITHOUT_SUCCESS)
        } else {
            self.step_count.saturating_mul(ATTEMPT_MULTIPLIER)
        };
        let more = if counted >= self.step_count || self.rounds_started >= cap {
            data.force_boolean(P_CONTINUE, false)?
        } else if self.rounds_started == 0 {
            data.force_boolean(P_CONTINUE, true)?
        } else {
            data.draw_boolean(P_CONTINUE)?
        };
        if !more {
            return Ok(HEGEL_STATE_MACHINE_DONE);
        }
        let group = if self.groups.len() == 1 {
            0
        } else {
            data.draw_integer(IntegerConstraints::bounded(
                0,
                self.groups.len() as i128 - 1,
            ))? as usize
        };
        for w in &mut self.workers {
            w.drawn = 0;
            w.rejected = 0;
            w.outstanding = false;
            w.retrying = false;
        }
        self.current_group = group;
        self.rounds_started += 1;
        Ok(self.group_ids[group])
    }

    fn next_rule(&mut self, data: &mut TestData, worker: i64) -> AbiResult<i64> {
        let w = self.worker(worker)?;
        if self.rounds_started == 0 {
            return Err(AbiError::arg(
                "a rule was requested before the first hegel_state_machine_next_group",
            ));
        }
        if self.concurrency == 1 {
            if self.workers[w].drawn >= 1 {
                return Ok(HEGEL_STATE_MACHINE_DONE);
            }
        } else {
            let state = &self.workers[w];
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
            if !data.draw_boolean(p)? {
                return Ok(HEGEL_STATE_MACHINE_DONE);
            }
        }
        let rule = self.select(data, w)?;
        let state = &mut self.workers[w];
        state.drawn += 1;
        state.outstanding = true;
        state.retrying = false;
        Ok(rule as i64)
    }

    fn select(&mut self, data: &mut TestData, w: usize) -> AbiResult<usize> {
        let group = self.current_group;
        let members = self.groups[group].clone();
        let mut weights: Vec<f64> = members.iter().map(|r| self.weights[*r]).collect();
        let swarm = &mut self.workers[w].swarm;
        for _ in 0..3 {
            let k = weighted_index(data, &weights)?;
            if weights[k] > 0.0 {
                if swarm.is_enabled(data, group, members[k])? {
                    return Ok(members[k]);
                }
                weights[k] = 0.0;
            }
        }
        let mut allowed = Vec::new();
        let mut allowed_weights = Vec::new();
        for (k, rule) in members.iter().enumerate() {
            if weights[k] > 0.0 && swarm.is_enabled(data, group, *rule)? {
                allowed.push(k);
                allowed_weights.push(weights[k]);
            }
        }
        if allowed.is_empty() {
            return Err(AbiError::Internal(
                "a swarm left a group with no enabled rule".into(),
            ));
        }
        let k = allowed[weighted_index(data, &allowed_weights)?];
        // Record the choice made, so that shrinking sees it as one value.
        data.force_integer(
            IntegerConstraints::bounded(0, members.len() as i128 - 1),
            k as i128,
        )?;
        Ok(members[k])
    }

    fn rule_rejected(&mut self, worker: i64) -> AbiResult {
        let w = self.worker(worker)?;
        let state = &mut self.workers[w];
        if !state.outstanding {
            return Err(AbiError::arg(format!(
                "worker {worker} has no outstanding rule to reject this round"
            )));
        }
        state.outstanding = false;
        state.rejected += 1;
        state.retrying = true;
        if self.concurrency == 1 {
            self.rounds_rejected += 1;
        }
        Ok(())
    }

    fn should_check_invariant(&mut self, data: &mut TestData, index: i64) -> AbiResult<bool> {
        let always = usize::try_from(index)
            .ok()
            .and_then(|i| self.always_check.get(i).copied())
            .ok_or_else(|| {
                AbiError::arg(format!(
                    "invariant_index must be in [0, {}), got {index}",
                    self.always_check.len()
                ))
            })?;
        if always {
            return Ok(true);
        }
        Ok(data.draw_boolean(1.0 / self.step_count as f64)?)
    }
}

/// Registers a state machine; draws its concurrency level and swarms.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_new_state_machine(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    rule_names: *const hegel_string_t,
    rule_groups: *const i64,
    rule_weights: *const f64,
    num_rules: usize,
    invariant_names: *const hegel_string_t,
    invariant_always_check: *const bool,
    num_invariants: usize,
    min_concurrency: i64,
    max_concurrency: i64,
    step_count: i64,
    out_state_machine: *mut *mut hegel_state_machine_t,
    out_concurrency: *mut i64,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_state_machine, "out_state_machine")?;
        require(out_concurrency, "out_concurrency")?;
        if num_rules == 0 {
            return Err(AbiError::arg("a state machine needs at least one rule"));
        }
        // SAFETY: `num_rules` and `num_invariants` views, by the caller's contract.
        unsafe {
            text::text_array(rule_names, num_rules, "rule_names")?;
            text::text_array(invariant_names, num_invariants, "invariant_names")?;
        }
        if rule_groups.is_null() {
            return Err(AbiError::arg("rule_groups is NULL"));
        }
        // SAFETY: `num_rules` readable group ids, by the caller's contract.
        let groups_in = unsafe { std::slice::from_raw_parts(rule_groups, num_rules) };
        let weights = if rule_weights.is_null() {
            vec![1.0; num_rules]
        } else {
            // SAFETY: `num_rules` readable weights, by the caller's contract.
            unsafe { std::slice::from_raw_parts(rule_weights, num_rules) }.to_vec()
        };
        let always_check = if invariant_always_check.is_null() || num_invariants == 0 {
            vec![false; num_invariants]
        } else {
            // SAFETY: `num_invariants` readable flags, by the caller's contract.
            unsafe { std::slice::from_raw_parts(invariant_always_check, num_invariants) }.to_vec()
        };
        if let Some(i) = groups_in
            .iter()
            .position(|g| *g == HEGEL_STATE_MACHINE_DONE)
        {
            return Err(AbiError::arg(format!(
                "rule_groups[{i}] is HEGEL_STATE_MACHINE_DONE, which next_group reserves"
            )));
        }
        if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w > 0.0)) {
            return Err(AbiError::arg(format!(
                "rule_weights[{i}] is {}, not finite and positive",
                weights[i]
            )));
        }
        if min_concurrency < 1 || max_concurrency < min_concurrency {
            return Err(AbiError::arg(format!(
                "concurrency bounds must satisfy 1 <= min <= max, got [{min_concurrency}, {max_concurrency}]"
            )));
        }
        if step_count < 1 {
            return Err(AbiError::arg(format!(
                "step_count must be at least 1, got {step_count}"
            )));
        }
        let mut group_ids: Vec<i64> = Vec::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (rule, id) in groups_in.iter().enumerate() {
            let g = match group_ids.iter().position(|g| g == id) {
                Some(g) => g,
                None => {
                    group_ids.push(*id);
                    groups.push(Vec::new());
                    groups.len() - 1
                }
            };
            groups[g].push(rule);
        }
        let machine = tc.draw(|data| {
            let concurrency =
                if min_concurrency == max_concurrency || data.draw_boolean(P_MAX_CONCURRENCY)? {
                    max_concurrency
                } else {
                    data.draw_integer(IntegerConstraints::bounded(
                        i128::from(min_concurrency),
                        i128::from(max_concurrency),
                    ))? as i64
                };
            let mut workers = Vec::new();
            for _ in 0..concurrency {
                let raw = data.draw_integer(IntegerConstraints::bounded(0, 254))?;
                workers.push(Worker {
                    swarm: Swarm {
                        p_disabled: raw as f64 / 255.0,
                        disabled: vec![None; num_rules],
                        last_chance: groups.clone(),
                    },
                    drawn: 0,
                    rejected: 0,
                    outstanding: false,
                    retrying: false,
                });
            }
            Ok(Machine {
                groups: groups.clone(),
                group_ids: group_ids.clone(),
                weights: weights.clone(),
                concurrency,
                current_group: 0,
                rounds_started: 0,
                rounds_rejected: 0,
                step_count,
                always_check: always_check.clone(),
                workers,
            })
        })?;
        let concurrency = machine.concurrency;
        let handle = handles::insert(Arc::new(StateMachine {
            state: Mutex::new(machine),
        }))?;
        write(out_state_machine, handle, "out_state_machine")?;
        write(out_concurrency, concurrency, "out_concurrency")
    })
}

fn with_machine<T>(
    tc: *mut hegel_test_case_t,
    machine: *mut hegel_state_machine_t,
    f: impl FnOnce(&mut Machine, &mut TestData) -> AbiResult<T>,
) -> AbiResult<T> {
    let tc = handle(tc)?;
    let machine = handles::get::<StateMachine, _>(machine)?;
    let mut state = locked(&machine.state);
    tc.draw(|data| f(&mut state, data))
}

/// Starts the next round; writes its group id or `HEGEL_STATE_MACHINE_DONE`.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_state_machine_next_group(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    state_machine: *mut hegel_state_machine_t,
    out_group_id: *mut i64,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_group_id, "out_group_id")?;
        let group = with_machine(tc, state_machine, |m, data| m.next_group(data))?;
        write(out_group_id, group, "out_group_id")
    })
}

/// The next rule for a worker, or `HEGEL_STATE_MACHINE_DONE`.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_state_machine_next_rule(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    state_machine: *mut hegel_state_machine_t,
    worker_index: i64,
    out_rule_index: *mut i64,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_rule_index, "out_rule_index")?;
        let rule = with_machine(tc, state_machine, |m, data| m.next_rule(data, worker_index))?;
        write(out_rule_index, rule, "out_rule_index")
    })
}

/// The worker's last rule was rejected.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_state_machine_rule_rejected(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    state_machine: *mut hegel_state_machine_t,
    worker_index: i64,
) -> hegel_result_t {
    guard(ctx, || {
        with_machine(tc, state_machine, |m, _| m.rule_rejected(worker_index))
    })
}

/// Whether to check an invariant at this join point.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_state_machine_should_check_invariant(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    state_machine: *mut hegel_state_machine_t,
    invariant_index: i64,
    out_should_check: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_should_check, "out_should_check")?;
        let check = with_machine(tc, state_machine, |m, data| {
            m.should_check_invariant(data, invariant_index)
        })?;
        write(out_should_check, check, "out_should_check")
    })
}

/// Frees a state machine; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_state_machine_free(
    ctx: *mut hegel_context_t,
    state_machine: *mut hegel_state_machine_t,
) -> hegel_result_t {
    guard(ctx, || {
        handles::free::<StateMachine, _>(state_machine).map(drop)
    })
}

// ------------------------------------------------------------ recursion

/// Probability a recursive value aims for more than one leaf.
const P_LARGE_TARGET: f64 = 0.5;
/// Branch probability while a value grows toward its target.
const P_GROW: f64 = 0.9;
/// Prior mean number of children per branch, and its weight in branches.
const PRIOR_ARITY: f64 = 2.0;
const PRIOR_WEIGHT: f64 = 2.0;
/// Completed attempts discarded as far too small, at most, per value.
const MAX_REDRAWS: u64 = 2;

/// One recursive value's budget and steering.
pub struct Recursion {
    state: Mutex<RecursionState>,
}
handled!(Recursion, 15, "recursion");

struct RecursionState {
    max_depth: u64,
    max_leaves: u64,
    target: u64,
    attempt: u64,
    leaves: u64,
    redraws: u64,
    base_span_depth: usize,
    /// Children seen over closed branches, and their number.
    children: u64,
    branches: u64,
    /// Branches still receiving children: (depth, children so far).
    open: Vec<(u64, u64)>,
}

impl RecursionState {
    fn arity(&self) -> f64 {
        (PRIOR_ARITY * PRIOR_WEIGHT + self.children as f64) / (PRIOR_WEIGHT + self.branches as f64)
    }

    /// The leaf count the attempt aims for: halved by each overrun.
    fn aim(&self) -> u64 {
        (self.target >> self.attempt.min(63)).max(1)
    }

    /// Branch probability just below criticality for an expected `leaves`.
    fn subcritical(&self, leaves: u64) -> f64 {
        let k = (self.arity() + self.attempt as f64).max(1.0);
        let budget = leaves.clamp(2, 1 << 32) as f64;
        ((budget - 1.0) / (budget * k - 1.0)).min(P_GROW)
    }

    fn branch_probability(&self, depth: u64) -> f64 {
        if depth >= self.max_depth {
            return 0.0;
        }
        let aim = self.aim();
        if aim == 1 {
            return self.subcritical(2);
        }
        // Grow hard until the expected leaves reach the aim, then wind down.
        let k = self.arity().max(1.01);
        let grow_depth = ((aim as f64).ln() / k.ln()).ceil().max(0.0) as u64;
        if depth < grow_depth {
            P_GROW
        } else {
            self.subcritical(2)
        }
    }

    fn observe(&mut self, depth: u64) {
        while self.open.last().is_some_and(|(d, _)| *d >= depth) {
            if let Some((_, children)) = self.open.pop() {
                self.children += children;
                self.branches += 1;
            }
        }
        if depth > 0
            && let Some(parent) = self.open.last_mut()
        {
            parent.1 += 1;
        }
    }
}

fn close_attempt_spans(data: &mut TestData, book: &mut Bookkeeping, base: usize) {
    while book.span_depth > base {
        if !data.stop_span(true) {
            book.span_depth = base;
            break;
        }
        book.span_depth -= 1;
    }
}

/// Opens a recursive generation scope.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_new_recursion(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    max_depth: u64,
    max_leaves: u64,
    out_recursion: *mut *mut hegel_recursion_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_recursion, "out_recursion")?;
        let state = tc.draw_keeping(|data, book| {
            let target = if max_leaves < 2 || !data.draw_boolean(P_LARGE_TARGET)? {
                1
            } else {
                data.draw_integer(IntegerConstraints::bounded(2, i128::from(max_leaves)))? as u64
            };
            Ok(RecursionState {
                max_depth,
                max_leaves,
                target,
                attempt: 0,
                leaves: 0,
                redraws: 0,
                base_span_depth: book.span_depth,
                children: 0,
                branches: 0,
                open: Vec::new(),
            })
        })?;
        let handle = handles::insert(Arc::new(Recursion {
            state: Mutex::new(state),
        }))?;
        write(out_recursion, handle, "out_recursion")
    })
}

/// Draws the leaf-or-branch decision for a sub-value at `depth`.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_recursion_branch(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    recursion: *mut hegel_recursion_t,
    depth: u64,
    out_branch: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let recursion = handles::get::<Recursion, _>(recursion)?;
        require(out_branch, "out_branch")?;
        let mut state = locked(&recursion.state);
        state.observe(depth);
        let p = state.branch_probability(depth);
        let branch = tc.draw(|data| Ok(data.draw_boolean(p)?))?;
        if branch {
            state.open.push((depth, 0));
        }
        write(out_branch, branch, "out_branch")
    })
}

/// Counts a leaf; `HEGEL_E_RETRY` once the attempt outgrows its budget.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_recursion_leaf(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    recursion: *mut hegel_recursion_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let recursion = handles::get::<Recursion, _>(recursion)?;
        tc.draw(|_| Ok(()))?;
        let mut state = locked(&recursion.state);
        if state.leaves >= state.max_leaves {
            return Err(AbiError::Retry(format!(
                "the recursive value outgrew its budget of {} leaves: unwind and call \
                 hegel_recursion_retry",
                state.max_leaves
            )));
        }
        state.leaves += 1;
        Ok(())
    })
}

/// Discards an attempt that outgrew its budget; `HEGEL_E_ASSUME` once the
/// attempts are used up.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_recursion_retry(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    recursion: *mut hegel_recursion_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let recursion = handles::get::<Recursion, _>(recursion)?;
        let mut state = locked(&recursion.state);
        let base = state.base_span_depth;
        state.open.clear();
        state.leaves = 0;
        state.attempt += 1;
        let exhausted = state.attempt >= u64::from(HEGEL_RECURSION_ATTEMPTS);
        tc.draw_keeping(|data, book| {
            close_attempt_spans(data, book, base);
            if exhausted {
                data.conclude(Status::Invalid, None);
                return Err(AbiError::Assume(format!(
                    "no recursive value fitted its leaf budget in {HEGEL_RECURSION_ATTEMPTS} attempts"
                )));
            }
            Ok(())
        })
    })
}

/// The value is complete: accepted, or `HEGEL_E_RETRY` when it came out
/// far smaller than it aimed for and is drawn again.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_recursion_finish(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    recursion: *mut hegel_recursion_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let recursion = handles::get::<Recursion, _>(recursion)?;
        let mut state = locked(&recursion.state);
        while let Some((_, children)) = state.open.pop() {
            state.children += children;
            state.branches += 1;
        }
        let aim = state.aim();
        let far_too_small = aim >= 4 && state.leaves.saturating_mul(4) < aim && state.max_depth > 1;
        if state.redraws >= MAX_REDRAWS || !far_too_small {
            return tc.draw(|_| Ok(()));
        }
        state.redraws += 1;
        state.leaves = 0;
        let base = state.base_span_depth;
        tc.draw_keeping(|data, book| {
            close_attempt_spans(data, book, base);
            Ok(())
        })?;
        Err(AbiError::Retry(
            "the value came out far smaller than it aimed for: draw it again from the root".into(),
        ))
    })
}

/// Frees a recursion scope; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_recursion_free(
    ctx: *mut hegel_context_t,
    recursion: *mut hegel_recursion_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<Recursion, _>(recursion).map(drop))
}
