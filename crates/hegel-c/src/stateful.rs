//! Stateful generation through the C ABI: variable pools, rule-based state
//! machines and recursive values, each drawn through engine choices so they
//! replay and shrink like any other draw.
//!
//! Pools, state machines and recursions are the engine's
//! ([`geist_engine::pool`], [`geist_engine::state_machine`]: the same
//! implementation geist-server serves over the protocol;
//! [`geist_engine::recursion`]: a recursive value's target size, leaf budget,
//! retries and give-up rule); this module maps the ABI's calls, handles and
//! error codes onto them.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{self, Reusable, Slots, handled};
use crate::test_case::{handle, hegel_test_case_t, with_handle};
use crate::text;
use geist_engine::TestData;
use geist_engine::recursion;
use geist_engine::state_machine::{self, StateMachineError, StateMachineSpec};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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

/// A state machine's handle: which of its test case's machines it is. The
/// machine itself lives in the test case (see
/// [`TestCaseHandle::draw_with_machines`]), under the lock its draws take
/// anyway; the handle lives in place in [`MACHINES`] (a machine makes
/// several calls per step: finding it is a bounds check and a load).
#[derive(Default)]
pub struct StateMachine {
    /// The id of the test case it was made in ([`crate::test_case::Family::id`]; 0 while the
    /// slot is vacant).
    family: AtomicU64,
    /// Its index among the test case's machines.
    index: AtomicUsize,
}

impl Reusable for StateMachine {
    fn reset(&self) {
        self.family.store(0, Ordering::Relaxed);
        self.index.store(0, Ordering::Relaxed);
    }
}

/// The kind tag of state machine handles.
const MACHINE_KIND: u8 = 14;
const MACHINE_NAME: &str = "state machine";

/// Every state machine handle.
static MACHINES: Slots<StateMachine> = Slots::new();

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
        let family = tc.family.id;
        let (handle, concurrency) = tc.draw_with_machines(|machines, data| {
            let machine = state_machine::StateMachine::with_spec(data, spec)?;
            let concurrency = i64::try_from(machine.concurrency()).unwrap_or(i64::MAX);
            let index = machines.len();
            let handle = MACHINES
                .insert(MACHINE_KIND, |machine| {
                    machine.family.store(family, Ordering::Relaxed);
                    machine.index.store(index, Ordering::Relaxed);
                })
                .ok_or_else(|| AbiError::too_many_handles("state machine"))?;
            machines.push((machine, handle));
            Ok((handle, concurrency))
        })?;
        write(
            out_state_machine,
            handle as *mut hegel_state_machine_t,
            "out_state_machine",
        )?;
        write(out_concurrency, concurrency, "out_concurrency")
    })
}

/// Runs `f` on a state machine and its test case's data. The handles are
/// looked up without copying them out (see [`with_handle`]): a machine
/// makes several of these calls per step. The machine's handle is checked
/// once, in its slot; what the slot says (its family and index) may be a
/// reuse's if the handle is freed meanwhile, so the machine found there
/// must have been handed out under this very handle.
#[inline(always)]
fn with_machine<T>(
    tc: *mut hegel_test_case_t,
    machine: *mut hegel_state_machine_t,
    f: impl FnOnce(&mut state_machine::StateMachine, &mut TestData) -> AbiResult<T>,
) -> AbiResult<T> {
    with_handle(
        tc,
        #[inline(always)]
        |tc| {
            let raw = machine as usize;
            let slot = MACHINES.find(machine, MACHINE_KIND, MACHINE_NAME)?;
            let family = slot.family.load(Ordering::Relaxed);
            let index = slot.index.load(Ordering::Relaxed);
            if family != tc.family.id {
                return Err(foreign_machine());
            }
            tc.draw_with_machines(
                #[inline(always)]
                |machines, data| match machines.get_mut(index) {
                    Some((state, handle)) if *handle == raw => f(state, data),
                    _ => Err(foreign_machine()),
                },
            )
        },
    )
}

/// A state machine used with a handle of another test case.
#[cold]
fn foreign_machine() -> AbiError {
    AbiError::InvalidHandle("the state machine belongs to another test case".into())
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
        MACHINES.release(state_machine, MACHINE_KIND, MACHINE_NAME)
    })
}

// ------------------------------------------------------------ recursion

/// A recursive value's scope: the engine's recursion behind a handle.
pub struct Recursion {
    state: Mutex<recursion::Recursion>,
}
handled!(Recursion, 15, "recursion");

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
        let state = tc.draw(|data| Ok(recursion::Recursion::new(data, max_depth, max_leaves)?))?;
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
        let branch = tc.draw(|data| Ok(state.branch(data, depth)?))?;
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
        match state.leaf() {
            recursion::Leaf::Draw => Ok(()),
            recursion::Leaf::Retry => Err(AbiError::Retry(format!(
                "the recursive value outgrew its budget of {} leaves: unwind and call \
                 hegel_recursion_retry",
                state.max_leaves()
            ))),
        }
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
        tc.draw(|data| match state.retry(data)? {
            recursion::Retry::Again => Ok(()),
            recursion::Retry::GiveUp => Err(AbiError::Assume(format!(
                "no recursive value fitted its leaf budget in {} attempts",
                recursion::ATTEMPTS
            ))),
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
        tc.draw(|data| match state.finish(data)? {
            recursion::Finish::Accept => Ok(()),
            recursion::Finish::Again => Err(AbiError::Retry(
                "the value came out far smaller than it aimed for: draw it again from the root"
                    .into(),
            )),
        })
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
