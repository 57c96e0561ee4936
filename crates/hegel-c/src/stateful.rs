//! Stateful generation through the C ABI: variable pools, rule-based state
//! machines and recursive values, each drawn through engine choices so they
//! replay and shrink like any other draw.
//!
//! Pools and state machines are the engine's ([`geist_engine::pool`],
//! [`geist_engine::state_machine`]: the same implementation geist-server
//! serves over the protocol); this module maps the ABI's calls, handles and
//! error codes onto them.
//!
//! A **recursion** steers a recursive value toward a target number of
//! leaves (one, or one drawn up to the budget), enforces the leaf budget by
//! retrying attempts that outgrow it, and gives up after
//! `HEGEL_RECURSION_ATTEMPTS` attempts. It is still this module's own, not
//! the engine's `recursion` module (issue 15, item 1).

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{self, handled};
use crate::test_case::{Bookkeeping, handle, hegel_test_case_t};
use crate::text;
use geist_engine::choice::IntegerConstraints;
use geist_engine::state_machine::{self, StateMachineError, StateMachineSpec};
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

// ----------------------------------------------------------------- pools

/// A pool's variables: the engine's pool behind a handle.
#[derive(Default)]
pub struct Pool {
    state: Mutex<geist_engine::pool::Pool>,
}
handled!(Pool, 13, "pool");

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
        let id = tc.draw(|data| Ok(state.add(data)?))?;
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
        // The ABI reports an empty pool as a failed assumption of the
        // caller's, not as a test case the engine ended.
        if state.is_empty() {
            return Err(AbiError::Assume("the pool has no variables to draw".into()));
        }
        let id = tc.draw(|data| Ok(state.draw(data, consume)?))?;
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
        locked(&pool.state)
            .restore(variable_id)
            .map_err(|e| AbiError::arg(e.to_string()))
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

/// A state machine: the engine's, behind a handle.
pub struct StateMachine {
    state: Mutex<state_machine::StateMachine>,
}
handled!(StateMachine, 14, "state machine");

/// A refused state-machine call: the ABI's invalid-argument error.
fn refused(e: StateMachineError) -> AbiError {
    AbiError::arg(e.to_string())
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
            return Err(refused(StateMachineError::NoRules));
        }
        // SAFETY: `num_rules` and `num_invariants` views, by the caller's contract.
        let names = unsafe {
            text::text_array(invariant_names, num_invariants, "invariant_names")?;
            text::text_array(rule_names, num_rules, "rule_names")?
        };
        if rule_groups.is_null() {
            return Err(AbiError::arg("rule_groups is NULL"));
        }
        // SAFETY: `num_rules` readable group ids, by the caller's contract.
        let groups = unsafe { std::slice::from_raw_parts(rule_groups, num_rules) }.to_vec();
        let weights = (!rule_weights.is_null()).then(|| {
            // SAFETY: `num_rules` readable weights, by the caller's contract.
            unsafe { std::slice::from_raw_parts(rule_weights, num_rules) }.to_vec()
        });
        let always_check = if invariant_always_check.is_null() || num_invariants == 0 {
            vec![false; num_invariants]
        } else {
            // SAFETY: `num_invariants` readable flags, by the caller's contract.
            unsafe { std::slice::from_raw_parts(invariant_always_check, num_invariants) }.to_vec()
        };
        let spec = StateMachineSpec::new(
            groups,
            weights,
            always_check,
            (min_concurrency, max_concurrency),
            step_count,
        )
        .map_err(|e| match e {
            // The caller knows its rules by name.
            StateMachineError::BadWeight { rule, weight } => AbiError::arg(format!(
                "rule weights must be finite and positive, but rule {rule} ({}) has weight \
                 {weight}",
                names[rule]
            )),
            e => refused(e),
        })?;
        let machine = tc.draw(|data| Ok(state_machine::StateMachine::with_spec(data, spec)?))?;
        let concurrency = i64::try_from(machine.concurrency()).unwrap_or(i64::MAX);
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
    f: impl FnOnce(&mut state_machine::StateMachine, &mut TestData) -> AbiResult<T>,
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
        let group = with_machine(tc, state_machine, |m, data| {
            Ok(m.next_group(data)?.unwrap_or(HEGEL_STATE_MACHINE_DONE))
        })?;
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
        let rule = with_machine(tc, state_machine, |m, data| {
            let rule = m.next_rule(data, worker_index)?.map_err(refused)?;
            Ok(rule.map_or(HEGEL_STATE_MACHINE_DONE, |r| r as i64))
        })?;
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
        with_machine(tc, state_machine, |m, _| {
            m.rule_rejected(worker_index).map_err(refused)
        })
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
            m.should_check_invariant(data, invariant_index)?
                .map_err(refused)
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
