//! Test cases as the caller sees them: a family of handles onto one test
//! case (the root, its clones and blocks), the choices it makes, its print
//! document, and its completion.
//!
//! A family owns the engine's [`TestData`] while the caller runs the test
//! case: one per stream, the root's and one per clone
//! (`hegel_test_case_clone`), each forked from its source's at the point of
//! the clone ([`TestData::fork_stream`]), so that what a thread draws through
//! its clone depends on its own calls only, never on how the threads
//! interleaved. Every draw goes through [`TestCaseHandle::draw`], which
//! refuses a handle another thread is using (`HEGEL_E_CONCURRENT_USE`) and a
//! test case already completed; the first stream the engine ends (an overrun,
//! a rejection) ends them all. `hegel_mark_complete` joins the streams back
//! into one choice sequence, concludes it and hands it back to the run (see
//! [`crate::run`]) through the family's [`Handback`].

use crate::abi::*;
use crate::collection::Collections;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{Pinned, Recent, Slots};
use crate::printer::{Document, Target};
use crate::text;
use geist_engine::data::MAX_STREAM_DEPTH;
use geist_engine::state_machine::StateMachine;
use geist_engine::{Status, TestData};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// Opaque to C: `hegel_test_case_t`.
pub enum hegel_test_case_t {}

/// Statistics a test case recorded (`hegel_event`, `hegel_event_value`).
#[derive(Clone, Debug, Default)]
pub struct Observations {
    /// Labels recorded with `hegel_event`.
    pub events: Vec<String>,
    /// Values recorded with `hegel_event_value`.
    pub values: Vec<(String, f64)>,
}

/// A completed test case on its way back to the run.
pub struct Completed {
    /// The concluded data (boxed: it moves back to the run loop as a pointer).
    pub data: Box<TestData>,
    /// Its observations.
    pub observations: Observations,
    /// Wall-clock seconds from hand-out to completion.
    pub seconds: f64,
}

/// Where a family's completed data goes: the run's slot.
pub type Handback = Arc<Mutex<Option<Completed>>>;

/// The state every handle of one test case shares.
pub struct Family {
    /// Distinct for every family the library makes: handles kept in place
    /// ([`Slots`]) name their test case by it.
    pub id: u64,
    state: FamilyLock<FamilyState>,
    completed: AtomicBool,
    handback: Option<Handback>,
    capture: bool,
    /// The print document of drawn values and notes, made when first
    /// needed (most test cases print nothing): see [`Family::document`].
    document: OnceLock<Arc<Document>>,
    /// Whether a printer has fixed the document's width.
    width_configured: Mutex<Option<u64>>,
    started: Instant,
}

struct FamilyState {
    /// The root stream first, then each clone's in the order they were made.
    streams: Vec<Stream>,
    /// The first status the engine concluded a stream with: every stream
    /// ends with it, and it overrides the caller's verdict.
    concluded: Option<Status>,
    observations: Observations,
    /// Target labels already recorded (each at most once per test case).
    target_labels: Vec<String>,
    /// The test case's state machines, each with the handle it was handed
    /// out under (their handles name them by index, and a call checks that
    /// the machine at that index is its handle's): guarded by the family's
    /// lock, as the choices they draw are.
    machines: Vec<(StateMachine, usize)>,
    /// The test case's collections' sizing (their handles name them by
    /// index; see [`crate::collection`]): guarded by the family's lock, as
    /// the choices they draw are, so a collection's call takes no lock of
    /// its own.
    collections: Collections,
}

/// One stream of a test case: its data and where it was forked.
struct Stream {
    data: Box<TestData>,
    /// The stream it was forked from and the position of the fork there
    /// (`None` for the root).
    fork: Option<(usize, usize)>,
    /// How many forks deep it is (0 for the root).
    depth: usize,
}

impl FamilyState {
    /// Joins every stream back into the root's data and returns it: the
    /// latest first, so that a stream's own streams are already in it
    /// (a stream is always made after the one it was forked from).
    fn join_streams(&mut self) -> Box<TestData> {
        // Almost every test case has its root stream alone: nothing to join,
        // and no per-test-case bookkeeping vectors to build and free.
        if self.streams.len() == 1
            && let Some(root) = self.streams.pop()
        {
            return root.data;
        }
        let mut children: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.streams.len()];
        for (index, stream) in self.streams.iter().enumerate() {
            if let Some((source, at)) = stream.fork
                && source < index
            {
                children[source].push((at, index));
            }
        }
        let mut joined: Vec<Option<Box<TestData>>> = Vec::with_capacity(self.streams.len());
        joined.resize_with(self.streams.len(), || None);
        for (index, stream) in self.streams.drain(..).enumerate().rev() {
            let mut data = stream.data;
            let forks = children[index]
                .iter()
                .filter_map(|&(at, child)| joined[child].take().map(|d| (at, *d)))
                .collect();
            data.join_streams(forks);
            joined[index] = Some(data);
        }
        joined
            .into_iter()
            .next()
            .flatten()
            .unwrap_or_else(|| Box::new(TestData::replaying(Vec::new(), 0)))
    }
}

/// A new family's id: distinct for every family the library makes.
fn next_family_id() -> u64 {
    // Starts at 1: 0 names no family.
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl Family {
    /// A family around `data`; `handback` is where the run wants it back.
    pub fn new(data: Box<TestData>, handback: Option<Handback>, capture: bool) -> Arc<Family> {
        Arc::new(Family {
            id: next_family_id(),
            state: FamilyLock::new(FamilyState {
                streams: vec![Stream {
                    data,
                    fork: None,
                    depth: 0,
                }],
                concluded: None,
                observations: Observations::default(),
                target_labels: Vec::new(),
                machines: Vec::new(),
                collections: Collections::default(),
            }),
            completed: AtomicBool::new(false),
            handback,
            capture,
            document: OnceLock::new(),
            width_configured: Mutex::new(None),
            started: Instant::now(),
        })
    }

    /// Makes this family, which nothing else refers to, a new one around
    /// `data`, as [`Family::new`] would (a new id, nothing drawn, printed or
    /// recorded), in place: its allocation and its streams' vector are
    /// reused (see [`hand_out_new_root`]).
    fn renew(&mut self, data: Box<TestData>, handback: Option<Handback>, capture: bool) {
        // Every field, so that one added later is not forgotten here.
        let Family {
            id,
            state,
            completed,
            handback: old_handback,
            capture: old_capture,
            document,
            width_configured,
            started,
        } = self;
        let FamilyState {
            streams,
            concluded,
            observations,
            target_labels,
            machines,
            collections,
        } = state.get_mut();
        *id = next_family_id();
        streams.clear();
        streams.push(Stream {
            data,
            fork: None,
            depth: 0,
        });
        *concluded = None;
        *observations = Observations::default();
        target_labels.clear();
        machines.clear();
        *collections = Collections::default();
        *completed.get_mut() = false;
        *old_handback = handback;
        *old_capture = capture;
        *document = OnceLock::new();
        *width_configured
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()) = None;
        *started = Instant::now();
    }

    fn lock(&self) -> Locked<'_, FamilyState> {
        self.state.lock()
    }

    /// The print document of drawn values and notes.
    pub fn document(&self) -> &Arc<Document> {
        self.document.get_or_init(Document::new)
    }

    /// Whether the test case has been completed.
    pub fn is_completed(&self) -> bool {
        self.completed.load(Ordering::Acquire)
    }

    /// Concludes the test case (first caller wins) and hands it back. A
    /// status the engine concluded a stream with wins over `status`: a
    /// failure reported after the engine ended the test case (a worker
    /// panicking once another's draw overran) is not the test's.
    pub fn complete(&self, status: Status, origin: Option<String>) {
        let mut state = self.lock();
        if self.completed.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut data = state.join_streams();
        match state.concluded {
            Some(engine) => data.conclude(engine, None),
            None => data.conclude(status, origin),
        }
        let observations = std::mem::take(&mut state.observations);
        drop(state);
        if let Some(handback) = &self.handback {
            *handback.lock().unwrap_or_else(|e| e.into_inner()) = Some(Completed {
                data,
                observations,
                seconds: self.started.elapsed().as_secs_f64(),
            });
        }
    }

    /// The time since the test case started, for worker line prefixes.
    pub fn elapsed_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }
}

/// One handle onto a test case.
pub struct TestCaseHandle {
    /// The test case.
    pub family: Arc<Family>,
    /// This handle's print region.
    pub region: Target,
    /// The worker its lines are attributed to (-1 for none); printers
    /// fetched from the handle follow it.
    pub worker: AtomicI64,
    /// Which choice stream of the family it draws from, by index in the
    /// family (blocks share their source's, clones get their own).
    pub stream: u64,
    busy: AtomicBool,
    completed_here: AtomicBool,
}

/// The kind tag of test case handles.
const TEST_CASE_KIND: u8 = 3;
const TEST_CASE_NAME: &str = "test case";

/// Every test case handle, in place ([`Pinned`]): a state machine makes
/// and frees a block handle at every step, and names a handle in every
/// call.
static TEST_CASES: Slots<Pinned<TestCaseHandle>> = Slots::new();

std::thread_local! {
    /// The test case handles this thread used last.
    static RECENT: std::cell::RefCell<Recent<TestCaseHandle>> = const { Recent::new() };
}

/// Hands `handle` out to the caller.
fn hand_out(handle: TestCaseHandle) -> AbiResult<*mut hegel_test_case_t> {
    hand_out_shared(Arc::new(handle))
}

/// Hands a new handle onto `family` out to the caller, in the allocation
/// of a handle freed on this thread when there is one (a state machine's
/// frontend makes and frees a block at every step; see
/// [`hegel_test_case_free`]), its fields set in place. What the allocation
/// held (a reference to its old family) is let go of here.
#[inline(always)]
fn hand_out_reusing(
    family: Arc<Family>,
    region: Target,
    worker: i64,
    stream: u64,
) -> AbiResult<*mut hegel_test_case_t> {
    TEST_CASES
        .insert_shared_with(
            &RECENT,
            TEST_CASE_KIND,
            #[inline(always)]
            |spare| {
                if let Some(mut object) = spare.take()
                    && let Some(place) = Arc::get_mut(&mut object)
                {
                    let old = std::mem::replace(&mut place.family, family);
                    place.reset(region, worker, stream);
                    return (object, Some(old));
                }
                let handle = TestCaseHandle::new(family, region, worker, stream);
                (Arc::new(handle), None)
            },
        )
        .map_or_else(test_case_table_full, test_case_pointer)
}

fn hand_out_shared(object: Arc<TestCaseHandle>) -> AbiResult<*mut hegel_test_case_t> {
    TEST_CASES
        .insert_shared(&RECENT, TEST_CASE_KIND, object)
        .map_or_else(test_case_table_full, test_case_pointer)
}

/// A test case handle's pointer, from the address its table handed out.
fn test_case_pointer(raw: usize) -> AbiResult<*mut hegel_test_case_t> {
    Ok(raw as *mut hegel_test_case_t)
}

/// The error when no test case handle could be handed out.
fn test_case_table_full() -> AbiResult<*mut hegel_test_case_t> {
    Err(AbiError::too_many_handles("test case"))
}

/// Releases a handle's busy flag when a draw ends.
struct Busy<'a>(&'a AtomicBool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl TestCaseHandle {
    fn new(family: Arc<Family>, region: Target, worker: i64, stream: u64) -> TestCaseHandle {
        TestCaseHandle {
            family,
            region,
            worker: AtomicI64::new(worker),
            stream,
            busy: AtomicBool::new(false),
            completed_here: AtomicBool::new(false),
        }
    }

    /// Makes this handle, which nothing else refers to, what
    /// [`TestCaseHandle::new`] makes, onto the family it holds (the caller
    /// has put the new one there): in place, with no new allocation. Every
    /// field is named, so one added later is not forgotten here.
    #[inline(always)]
    fn reset(&mut self, region: Target, worker: i64, stream: u64) {
        let TestCaseHandle {
            family: _,
            region: old_region,
            worker: old_worker,
            stream: old_stream,
            busy,
            completed_here,
        } = self;
        *old_region = region;
        *old_worker.get_mut() = worker;
        *old_stream = stream;
        *busy.get_mut() = false;
        *completed_here.get_mut() = false;
    }

    #[inline(always)]
    fn claim(&self) -> AbiResult<Busy<'_>> {
        if self.busy.swap(true, Ordering::Acquire) {
            return Err(in_use());
        }
        Ok(Busy(&self.busy))
    }

    /// Claims the handle and locks its family, for one call: one atomic
    /// read-modify-write fewer than [`TestCaseHandle::claim`] and then the
    /// lock. When the lock is free, no call on the family is under way (a
    /// call holds the lock all through), so none on this handle either:
    /// the handle is marked busy with a plain store while the lock is held.
    /// Otherwise it is claimed first, as before, and a call under way on it
    /// (marked busy) is refused.
    #[inline(always)]
    fn claim_and_lock(&self) -> AbiResult<(Busy<'_>, Locked<'_, FamilyState>)> {
        let Some(state) = self.family.state.try_lock() else {
            return self.claim_then_lock();
        };
        self.busy.store(true, Ordering::Relaxed);
        Ok((Busy(&self.busy), state))
    }

    /// [`TestCaseHandle::claim_and_lock`] while another call holds the lock.
    #[inline(never)]
    fn claim_then_lock(&self) -> AbiResult<(Busy<'_>, Locked<'_, FamilyState>)> {
        let busy = self.claim()?;
        Ok((busy, self.family.lock()))
    }

    /// Runs `f` on the test case's data: refused while another thread uses
    /// this handle, once the test case is complete, and (as `StopTest`, or a
    /// failed assumption when it was rejected) once its data is concluded:
    /// out of choices, nested too deep, or rejected.
    #[inline(always)]
    pub fn draw<T>(&self, f: impl FnOnce(&mut TestData) -> AbiResult<T>) -> AbiResult<T> {
        self.draw_in_family(
            #[inline(always)]
            |data, _, _| f(data),
        )
    }

    /// [`TestCaseHandle::draw`], with the family's state machines and
    /// collections beside the data (all under the family's lock).
    #[inline(always)]
    fn draw_in_family<T>(
        &self,
        f: impl FnOnce(&mut TestData, &mut Vec<(StateMachine, usize)>, &mut Collections) -> AbiResult<T>,
    ) -> AbiResult<T> {
        self.on_stream(
            #[inline(always)]
            |state, stream| {
                let FamilyState {
                    streams,
                    machines,
                    collections,
                    ..
                } = state;
                // A concluded test case takes nothing more, even a call that
                // makes no choice: `on_stream` runs this only on a stream the
                // engine has not ended (the caller unwinds at once rather
                // than finishing a value on a dead stream).
                f(&mut streams[stream].data, machines, collections)
            },
        )
    }

    /// Runs `f` on the family's state and this handle's stream index, with
    /// the checks of [`TestCaseHandle::draw`]: a stream the engine ended
    /// ends the others, and a rejection is a failed assumption. Inlined, as
    /// [`TestCaseHandle::draw`] is, into every drawing call.
    #[inline(always)]
    fn on_stream<T>(
        &self,
        f: impl FnOnce(&mut FamilyState, usize) -> AbiResult<T>,
    ) -> AbiResult<T> {
        let (_busy, mut state) = self.claim_and_lock()?;
        if self.family.is_completed() {
            return Err(already_complete());
        }
        let Some(stream) = usize::try_from(self.stream)
            .ok()
            .filter(|i| *i < state.streams.len())
        else {
            return Err(foreign_stream());
        };
        // A test case the engine already ended (out of choices, or
        // rejected; this stream or another) refuses every call, spans and
        // bookkeeping included, not only the draws: the caller must unwind
        // whatever it calls next.
        if (state.concluded.is_some() || state.streams[stream].data.status.is_some())
            && let Some(refusal) = stream_ended(&mut state, stream)
        {
            return Err(refusal);
        }
        let result = f(&mut state, stream);
        let status = state.streams[stream].data.status;
        if status.is_none() {
            return result;
        }
        ended(&mut state, status, result)
    }

    /// [`TestCaseHandle::draw`], with the test case's state machines too.
    #[inline(always)]
    pub fn draw_with_machines<T>(
        &self,
        f: impl FnOnce(&mut Vec<(StateMachine, usize)>, &mut TestData) -> AbiResult<T>,
    ) -> AbiResult<T> {
        self.draw_in_family(
            #[inline(always)]
            |data, machines, _| f(machines, data),
        )
    }

    /// [`TestCaseHandle::draw`], with the test case's collections too.
    #[inline(always)]
    pub fn draw_with_collections<T>(
        &self,
        f: impl FnOnce(&mut Collections, &mut TestData) -> AbiResult<T>,
    ) -> AbiResult<T> {
        self.draw_in_family(|data, _, collections| f(collections, data))
    }

    /// Forks a new stream from this handle's at its current position;
    /// returns its index.
    fn fork(&self) -> AbiResult<u64> {
        self.on_stream(|state, source| {
            let depth = state.streams[source].depth + 1;
            if depth > MAX_STREAM_DEPTH {
                // Clones of clones this deep come from runaway recursion.
                return Err(state.streams[source].data.reject().into());
            }
            let (at, data) = state.streams[source].data.fork_stream()?;
            state.streams.push(Stream {
                data: Box::new(data),
                fork: Some((source, at)),
                depth,
            });
            Ok(state.streams.len() as u64 - 1)
        })
    }

    /// The prefix of lines this handle records, when attributed to a worker.
    pub fn line_prefix(&self) -> Option<String> {
        worker_prefix(&self.family, self.worker.load(Ordering::Acquire))
    }
}

/// [`TestCaseHandle::on_stream`] on a test case with a stream ended: another
/// stream's end ends this one too, and a call on an ended stream is refused
/// (with the error [`ended`] makes of `StopTest`); `None` if this stream
/// has not ended after all.
#[cold]
#[inline(never)]
fn stream_ended(state: &mut FamilyState, stream: usize) -> Option<AbiError> {
    if let Some(status) = state.concluded {
        state.streams[stream].data.conclude(status, None);
    }
    let status = state.streams[stream].data.status;
    status?;
    ended::<()>(state, status, Err(AbiError::StopTest)).err()
}

/// The end of [`TestCaseHandle::on_stream`] once a stream has ended (with
/// `status`, this call's stream's): the first status the engine concluded
/// a stream with is the family's, and a draw that concluded the test case
/// invalid is a failed assumption to the caller.
#[cold]
#[inline(never)]
fn ended<T>(state: &mut FamilyState, status: Option<Status>, result: AbiResult<T>) -> AbiResult<T> {
    if state.concluded.is_none() {
        state.concluded = status;
    }
    match result {
        // A draw that concluded the test case invalid (a rejection
        // inside the engine) is a failed assumption to the caller.
        Err(AbiError::StopTest) if status == Some(Status::Invalid) => Err(AbiError::Assume(
            "the draw rejected the test case as a failed assumption".into(),
        )),
        other => other,
    }
}

/// A handle used by two threads at once.
#[cold]
fn in_use() -> AbiError {
    AbiError::ConcurrentUse(
        "the test case handle is in use on another thread: give each thread its own \
         hegel_test_case_clone"
            .into(),
    )
}

/// A call on a test case already completed.
#[cold]
fn already_complete() -> AbiError {
    AbiError::AlreadyComplete("the test case was already completed".into())
}

/// A handle whose stream its family does not have (an internal error).
#[cold]
fn foreign_stream() -> AbiError {
    AbiError::arg("the handle's stream is not its test case's")
}

/// `[worker N +X.XXXms] ` for an attributed worker.
pub fn worker_prefix(family: &Family, worker: i64) -> Option<String> {
    (worker >= 0).then(|| format!("[worker {worker} +{:.3}ms] ", family.elapsed_ms()))
}

/// The handle behind a pointer.
pub fn handle(tc: *const hegel_test_case_t) -> AbiResult<Arc<TestCaseHandle>> {
    TEST_CASES.with_shared(&RECENT, tc, TEST_CASE_KIND, TEST_CASE_NAME, Arc::clone)
}

/// Runs `f` on the handle behind a pointer, without copying it out: the
/// per-draw path, inlined.
#[inline(always)]
pub fn with_handle<R>(
    tc: *const hegel_test_case_t,
    f: impl FnOnce(&TestCaseHandle) -> AbiResult<R>,
) -> AbiResult<R> {
    TEST_CASES.try_with_shared(
        &RECENT,
        tc,
        TEST_CASE_KIND,
        TEST_CASE_NAME,
        #[inline(always)]
        |tc| f(tc),
    )
}

/// Hands a new root handle onto `family` to the caller.
pub fn hand_out_root(family: Arc<Family>) -> AbiResult<*mut hegel_test_case_t> {
    hand_out(TestCaseHandle::new(family, Target::Main, -1, 0))
}

/// Hands the root handle of a new family around `data` to the caller, and
/// returns the family beside it: as [`Family::new`] and then
/// [`hand_out_root`] would (`None` only if no family was made), but in the allocation of the handle freed last
/// on this thread when there is one (a run's frontend frees each test case
/// before it asks for the next), and in that handle's family when nothing
/// else refers to it any more (renewed in place, see [`Family::renew`]).
pub fn hand_out_new_root(
    data: Box<TestData>,
    handback: Option<Handback>,
    capture: bool,
) -> (Option<Arc<Family>>, AbiResult<*mut hegel_test_case_t>) {
    let mut made = None;
    let raw = TEST_CASES
        .insert_shared_with(&RECENT, TEST_CASE_KIND, |spare| {
            if let Some(mut object) = spare.take()
                && let Some(place) = Arc::get_mut(&mut object)
            {
                let old = match Arc::get_mut(&mut place.family) {
                    Some(family) => {
                        family.renew(data, handback, capture);
                        None
                    }
                    None => Some(std::mem::replace(
                        &mut place.family,
                        Family::new(data, handback, capture),
                    )),
                };
                place.reset(Target::Main, -1, 0);
                made = Some(Arc::clone(&place.family));
                return (object, old);
            }
            let family = Family::new(data, handback, capture);
            made = Some(Arc::clone(&family));
            (
                Arc::new(TestCaseHandle::new(family, Target::Main, -1, 0)),
                None,
            )
        })
        .map_or_else(test_case_table_full, test_case_pointer);
    // `make` runs once, whether or not a slot is found after.
    (made, raw)
}

/// Fixes the family document's width, or checks it agrees with the one fixed.
pub fn configure_width(family: &Family, width: Option<u64>) -> AbiResult {
    let Some(width) = width else { return Ok(()) };
    let mut configured = family
        .width_configured
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    match *configured {
        Some(existing) if existing != width => Err(AbiError::arg(format!(
            "the test case's document is already laid out at width {existing}, not {width}"
        ))),
        _ => {
            *configured = Some(width);
            family.document().set_width(width);
            Ok(())
        }
    }
}

/// Frees a test-case handle; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_test_case_free(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
) -> hegel_result_t {
    guard(ctx, || {
        // This thread keeps the handle's allocation, when nothing else
        // refers to it, for its next block (see `hand_out_reusing`).
        TEST_CASES.release_shared_keeping(&RECENT, tc, TEST_CASE_KIND, TEST_CASE_NAME)?;
        Ok(())
    })
}

/// Whether the engine stamped this test case for capture.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_test_case_should_capture(
    ctx: *mut hegel_context_t,
    tc: *const hegel_test_case_t,
    out_should_capture: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| {
            write(out_should_capture, tc.family.capture, "out_should_capture")
        })
    })
}

/// A new handle onto an independent stream of the same test case.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_test_case_clone(
    ctx: *mut hegel_context_t,
    tc: *const hegel_test_case_t,
    out_test_case: *mut *mut hegel_test_case_t,
) -> hegel_result_t {
    guard(ctx, || {
        let source = handle(tc)?;
        require(out_test_case, "out_test_case")?;
        let stream = source.fork()?;
        let region = source
            .family
            .document()
            .deferred(source.region)
            .unwrap_or(Target::Dead);
        let clone = TestCaseHandle::new(
            Arc::clone(&source.family),
            region,
            source.worker.load(Ordering::Acquire),
            stream,
        );
        write(out_test_case, hand_out(clone)?, "out_test_case")
    })
}

/// A new handle onto the same stream, printing into an indented block.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_test_case_block(
    ctx: *mut hegel_context_t,
    tc: *const hegel_test_case_t,
    indent: u64,
    out_test_case: *mut *mut hegel_test_case_t,
) -> hegel_result_t {
    guard(ctx, || {
        // The source is looked up without copying it out: a state machine
        // makes a block at every step.
        let (family, region, worker, stream) = with_handle(
            tc,
            #[inline(always)]
            |source| {
                require(out_test_case, "out_test_case")?;
                let indent = usize::try_from(indent)
                    .map_err(|_| AbiError::arg(format!("indent {indent} is too large")))?;
                let region = source
                    .family
                    .document()
                    .block(source.region, indent)
                    .unwrap_or(Target::Dead);
                Ok((
                    Arc::clone(&source.family),
                    region,
                    source.worker.load(Ordering::Acquire),
                    source.stream,
                ))
            },
        )?;
        let block = hand_out_reusing(family, region, worker, stream)?;
        write(out_test_case, block, "out_test_case")
    })
}

/// Attributes the handle's lines to a concurrent worker.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_test_case_set_worker(
    ctx: *mut hegel_context_t,
    tc: *const hegel_test_case_t,
    worker_index: i64,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        if worker_index < 0 {
            return Err(AbiError::arg(format!(
                "worker_index must be non-negative, got {worker_index}"
            )));
        }
        tc.worker.store(worker_index, Ordering::Release);
        Ok(())
    })
}

/// Opens a span.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_start_span(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    label: u64,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(
            tc,
            #[inline(always)]
            |tc| {
                tc.draw(|data| {
                    data.start_span(label);
                    // Past the engine's span depth limit the test case is
                    // rejected (a failed assumption to the caller): unwind now,
                    // before the caller descends further.
                    if data.is_active() {
                        Ok(())
                    } else {
                        Err(AbiError::StopTest)
                    }
                })
            },
        )
    })
}

/// Closes the innermost open span.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_stop_span(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    discard: bool,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(
            tc,
            #[inline(always)]
            |tc| {
                tc.draw(|data| {
                    data.stop_span(discard);
                    Ok(())
                })
            },
        )
    })
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The label of a generator named `name`: FNV-1a (64 bits) of its bytes.
pub fn label_from_name(name: &[u8]) -> u64 {
    fnv1a(FNV_OFFSET, name)
}

/// The label of a generator built from others: FNV-1a over each label's
/// little-endian bytes, in order.
pub fn combine_labels(labels: &[u64]) -> u64 {
    labels
        .iter()
        .fold(FNV_OFFSET, |hash, label| fnv1a(hash, &label.to_le_bytes()))
}

/// Names this thread labelled last, with their labels: a frontend asks
/// for the label of the same few generator names (type names, tens of
/// bytes long) at every draw, and comparing a name is cheaper than hashing
/// it.
struct LabelCache {
    entries: [(Vec<u8>, u64); LABELS_CACHED],
    /// The entry the next name goes to.
    next: usize,
}

const LABELS_CACHED: usize = 4;
/// Longer names are hashed every time (a cache entry keeps its name).
const LABEL_NAME_CACHED_MAX: usize = 256;

std::thread_local! {
    static LABELS: std::cell::RefCell<LabelCache> = const {
        std::cell::RefCell::new(LabelCache {
            entries: [const { (Vec::new(), 0) }; LABELS_CACHED],
            next: 0,
        })
    };
}

/// [`label_from_name`], through this thread's [`LabelCache`].
fn cached_label_from_name(name: &[u8]) -> u64 {
    if name.is_empty() || name.len() > LABEL_NAME_CACHED_MAX {
        return label_from_name(name);
    }
    LABELS
        .try_with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            if let Some((_, label)) = cache.entries.iter().find(|(n, _)| n.as_slice() == name) {
                return Some(*label);
            }
            let label = label_from_name(name);
            let next = cache.next;
            cache.next = (next + 1) % LABELS_CACHED;
            let entry = &mut cache.entries[next];
            entry.0.clear();
            entry.0.extend_from_slice(name);
            entry.1 = label;
            Some(label)
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| label_from_name(name))
}

/// The span label for a generator name.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_label_from_name(
    ctx: *mut hegel_context_t,
    name: hegel_string_t,
    out_label: *mut u64,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let name = unsafe { text::bytes(name, "name")? };
        write(out_label, cached_label_from_name(name), "out_label")
    })
}

/// The span label for a generator built from others.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_label_combine(
    ctx: *mut hegel_context_t,
    labels: *const u64,
    len: usize,
    out_label: *mut u64,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_label, "out_label")?;
        let labels = if len == 0 {
            &[][..]
        } else if labels.is_null() {
            return Err(AbiError::arg(format!("labels is NULL with len {len}")));
        } else {
            // SAFETY: `len` readable labels, by the caller's contract.
            unsafe { std::slice::from_raw_parts(labels, len) }
        };
        write(out_label, combine_labels(labels), "out_label")
    })
}

/// Records a targeting observation.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_target(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    value: f64,
    label: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let label = unsafe { text::text(label, "label")? };
        if !value.is_finite() {
            return Err(AbiError::arg(format!(
                "hegel_target needs a finite score, got {value}"
            )));
        }
        let tc = handle(tc)?;
        let _busy = tc.claim()?;
        let mut state = tc.family.lock();
        if tc.family.is_completed() {
            return Err(already_complete());
        }
        if state.target_labels.iter().any(|l| l == label) {
            return Err(AbiError::arg(format!(
                "target label {label:?} was recorded twice: each label may be recorded at \
                 most once per test case"
            )));
        }
        state.target_labels.push(label.to_string());
        if let Some(root) = state.streams.first_mut() {
            root.data
                .target_observations
                .push((label.to_string(), value));
        }
        Ok(())
    })
}

fn observe(tc: *mut hegel_test_case_t, record: impl FnOnce(&mut Observations)) -> AbiResult {
    let tc = handle(tc)?;
    let mut state = tc.family.lock();
    if tc.family.is_completed() {
        return Err(already_complete());
    }
    record(&mut state.observations);
    Ok(())
}

/// Records an event for the statistics report.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_event(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    label: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let label = unsafe { text::text(label, "label")? };
        observe(tc, |o| {
            if !o.events.iter().any(|e| e == label) {
                o.events.push(label.to_string());
            }
        })
    })
}

/// Records a numeric observation for the statistics report.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_event_value(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    value: f64,
    label: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        // SAFETY: the caller's view.
        let label = unsafe { text::text(label, "label")? };
        if !value.is_finite() {
            return Err(AbiError::arg(format!(
                "hegel_event_value needs a finite value, got {value}"
            )));
        }
        observe(tc, |o| o.values.push((label.to_string(), value)))
    })
}

/// Appends a note to the handle's print region.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_note(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    text_: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        // SAFETY: the caller's view.
        let note = unsafe { text::text(text_, "text")? };
        let prefix = tc.line_prefix();
        tc.family
            .document()
            .note(tc.region, note, prefix.as_deref())
            .map_err(crate::printer::to_abi)
    })
}

/// Concludes the test case (first caller wins).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_mark_complete(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    status: u32,
    origin: *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| mark_complete(tc, status, origin))
    })
}

/// [`hegel_mark_complete`] on the handle looked up.
fn mark_complete(tc: &TestCaseHandle, status: u32, origin: *const hegel_string_t) -> AbiResult {
    let status = match status {
        STATUS_VALID => Status::Valid,
        STATUS_INVALID => Status::Invalid,
        STATUS_OVERRUN => Status::Overrun,
        STATUS_INTERESTING => Status::Interesting,
        other => return Err(AbiError::arg(format!("unknown test case status {other}"))),
    };
    let origin = if status == Status::Interesting {
        // SAFETY: the caller's optional view.
        let origin = unsafe { text::optional_text(origin, "origin")? };
        Some(origin.unwrap_or("Panic at <unknown>").to_string())
    } else {
        None
    };
    if tc.completed_here.swap(true, Ordering::AcqRel) {
        return Err(AbiError::AlreadyComplete(
            "hegel_mark_complete was already called on this handle".into(),
        ));
    }
    // Another thread mid-draw on this handle finishes first.
    while tc.busy.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    tc.family.complete(status, origin);
    Ok(())
}

/// The lock of a family's state: taken once by every call on the test
/// case, and almost never contended (only clones used on several threads
/// at once contend), so a spin lock that yields while contended: taking it
/// is one compare-and-swap and releasing it one store, where a `Mutex`
/// releases with a swap too (to find waiters to wake). A panic under the
/// lock releases it as its guard unwinds (the state stays usable, as a
/// poisoned `Mutex`'s was, into_inner, everywhere).
type FamilyLock<T> = spin::mutex::SpinMutex<T, spin::relax::Yield>;

/// A held [`FamilyLock`]: the value, until dropped.
type Locked<'a, T> = spin::mutex::SpinMutexGuard<'a, T, spin::relax::Yield>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's next root, handed out after the last one was completed and
    /// freed, renews that family in place: a new id and nothing of the old
    /// test case (completion, capture, streams), and the freed root stays
    /// refused.
    #[test]
    fn a_root_after_a_freed_one_renews_its_family() {
        let ctx: *mut hegel_context_t = std::ptr::null_mut();
        let handback: Handback = Arc::new(Mutex::new(None));
        let data = || Box::new(TestData::replaying(Vec::new(), 100));
        let (first, root) = hand_out_new_root(data(), Some(Arc::clone(&handback)), false);
        let (first, root) = (first.unwrap(), root.unwrap());
        let (first_id, first_at) = (first.id, Arc::as_ptr(&first) as usize);
        drop(first);
        assert_eq!(hegel_start_span(ctx, root, 1), hegel_result_t::HEGEL_OK);
        assert_eq!(hegel_stop_span(ctx, root, false), hegel_result_t::HEGEL_OK);
        assert_eq!(
            hegel_mark_complete(ctx, root, 0, std::ptr::null()),
            hegel_result_t::HEGEL_OK
        );
        assert!(handback.lock().unwrap().take().is_some());
        assert_eq!(hegel_test_case_free(ctx, root), hegel_result_t::HEGEL_OK);
        let (second, next) = hand_out_new_root(data(), Some(Arc::clone(&handback)), true);
        let (second, next) = (second.unwrap(), next.unwrap());
        assert_eq!(Arc::as_ptr(&second) as usize, first_at, "renewed in place");
        assert_ne!(second.id, first_id);
        assert!(!second.is_completed());
        assert!(second.capture);
        assert_eq!(second.lock().streams.len(), 1);
        assert_ne!(hegel_start_span(ctx, root, 1), hegel_result_t::HEGEL_OK);
        assert_eq!(hegel_start_span(ctx, next, 1), hegel_result_t::HEGEL_OK);
        assert_eq!(hegel_stop_span(ctx, next, false), hegel_result_t::HEGEL_OK);
        assert_eq!(
            hegel_mark_complete(ctx, next, 0, std::ptr::null()),
            hegel_result_t::HEGEL_OK
        );
        let completed = handback.lock().unwrap().take().expect("handed back");
        assert_eq!(completed.data.status, Some(Status::Valid));
        // A family something else still refers to is not renewed.
        drop(second);
        assert_eq!(hegel_test_case_free(ctx, next), hegel_result_t::HEGEL_OK);
        let (third, last) = hand_out_new_root(data(), None, false);
        let (third, last) = (third.unwrap(), last.unwrap());
        let (held, last_free) = (Arc::clone(&third), last);
        drop(third);
        assert_eq!(
            hegel_test_case_free(ctx, last_free),
            hegel_result_t::HEGEL_OK
        );
        let (fourth, fourth_root) = hand_out_new_root(data(), None, false);
        let fourth = fourth.unwrap();
        assert!(
            !Arc::ptr_eq(&fourth, &held),
            "a shared family is not reused"
        );
        assert_eq!(
            fourth_root.map(|r| hegel_test_case_free(ctx, r)),
            Ok(hegel_result_t::HEGEL_OK)
        );
    }

    /// A block made after another was freed may take its allocation: it is
    /// a new handle onto its own family, and the freed one stays refused.
    #[test]
    fn a_block_in_a_freed_blocks_allocation_is_a_new_handle() {
        let ctx: *mut hegel_context_t = std::ptr::null_mut();
        let family = |n| Family::new(Box::new(TestData::replaying(Vec::new(), n)), None, false);
        let (a, b) = (family(100), family(100));
        let root_a = hand_out_root(Arc::clone(&a)).unwrap();
        let root_b = hand_out_root(Arc::clone(&b)).unwrap();
        let mut previous: *mut hegel_test_case_t = std::ptr::null_mut();
        for round in 0..6 {
            let root = if round % 3 == 2 { root_b } else { root_a };
            let mut block: *mut hegel_test_case_t = std::ptr::null_mut();
            assert_eq!(
                hegel_test_case_block(ctx, root, 2, &mut block),
                hegel_result_t::HEGEL_OK
            );
            let owner = with_handle(block, |h| Ok(Arc::clone(&h.family))).unwrap();
            assert!(Arc::ptr_eq(&owner, if root == root_b { &b } else { &a }));
            assert_eq!(hegel_start_span(ctx, block, 1), hegel_result_t::HEGEL_OK);
            assert_eq!(hegel_stop_span(ctx, block, false), hegel_result_t::HEGEL_OK);
            if !previous.is_null() {
                assert_ne!(
                    hegel_start_span(ctx, previous, 1),
                    hegel_result_t::HEGEL_OK,
                    "a freed block is refused"
                );
            }
            assert_eq!(hegel_test_case_free(ctx, block), hegel_result_t::HEGEL_OK);
            previous = block;
        }
        for root in [root_a, root_b] {
            assert_eq!(hegel_test_case_free(ctx, root), hegel_result_t::HEGEL_OK);
        }
    }

    #[test]
    fn cached_labels_are_the_names_hashes() {
        let long = vec![b'x'; LABEL_NAME_CACHED_MAX + 1];
        let mut names: Vec<Vec<u8>> = (0..3 * LABELS_CACHED)
            .map(|i| format!("hegel::generators::Generator<{i}>").into_bytes())
            .collect();
        names.push(Vec::new());
        names.push(long);
        // Twice round, and each name right after itself: hits, misses and
        // evictions all give the name's own hash.
        for _ in 0..2 {
            for name in &names {
                assert_eq!(cached_label_from_name(name), label_from_name(name));
                assert_eq!(cached_label_from_name(name), label_from_name(name));
            }
        }
        // A name that only shares a prefix with a cached one.
        assert_eq!(
            cached_label_from_name(b"hegel::generators"),
            label_from_name(b"hegel::generators")
        );
    }

    #[test]
    fn the_family_lock_excludes_other_threads_and_a_panic_releases_it() {
        let lock = Arc::new(FamilyLock::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        *lock.lock() += 1;
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("joins");
        }
        assert_eq!(*lock.lock(), 200);
        {
            let _held = lock.try_lock().expect("free");
            assert!(lock.try_lock().is_none());
        }
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = lock.lock();
            panic!("a panic under the family lock");
        }));
        assert!(unwound.is_err());
        assert_eq!(*lock.try_lock().expect("released by the unwind"), 200);
    }
}
