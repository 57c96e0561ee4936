//! A pull-style run: the caller asks for each test case and hands it back.
//!
//! [`crate::run`] calls the test function once per test case. A caller that
//! cannot be called back — a C ABI whose frontend loops on "next test case"
//! and "mark complete", say — needs the opposite shape. [`PullRun`] inverts
//! control without changing the run loop: the loop runs on its own stack (a
//! stackful coroutine), and its test function suspends the loop, handing the
//! test case's [`TestData`] to the caller; the caller draws from it, concludes
//! it, and hands it back with the next [`PullRun::resume`], which continues the
//! loop exactly where it stopped. A switch costs a few nanoseconds, and the
//! run is the same run [`crate::run_with_database`] performs, decision for
//! decision.

use crate::data::TestData;
use crate::database::ExampleDatabase;
use crate::run::{DatabaseHandle, RunResult, RunSettings, run_with_database};
#[cfg(not(miri))]
use corosensei::stack::DefaultStack;
#[cfg(not(miri))]
use corosensei::{Coroutine, CoroutineResult};
use std::fmt;
#[cfg(miri)]
use threaded::{Coroutine, CoroutineResult};

/// Stack of the run loop. Pages are committed only as they are touched, so a
/// generous size costs address space, not memory.
#[cfg(not(miri))]
const RUN_STACK_BYTES: usize = 8 << 20;

/// An example database a pull-style run owns, with the key of its test.
pub struct OwnedDatabase {
    /// The database.
    pub database: std::sync::Arc<dyn ExampleDatabase>,
    /// The key the test's examples are stored under.
    pub key: Vec<u8>,
}

/// What the caller hands back when resuming the run.
enum Handback {
    /// The test case, concluded (an unconcluded one counts as valid).
    Completed(Box<TestData>),
    /// Stop the run: report what was found so far.
    Abort,
}

/// What the run asks of its caller next.
pub enum Next {
    /// Run this test case, conclude it, and hand it back with
    /// [`PullRun::resume`]. Boxed: the test case passes from the run loop
    /// to the caller and back once per test case, as a pointer rather than
    /// a copy of the whole state.
    TestCase(Box<TestData>),
    /// The run is over.
    Finished(RunResult),
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Next::TestCase(data) => f
                .debug_struct("TestCase")
                .field("choices", &data.nodes.len())
                .finish(),
            Next::Finished(result) => f.debug_tuple("Finished").field(result).finish(),
        }
    }
}

/// Why a [`PullRun`] cannot do what was asked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PullError {
    /// A test case was handed back before the run started, or the run was
    /// resumed without one while a test case was out.
    #[error("the run was resumed out of turn: {0}")]
    OutOfTurn(&'static str),
    /// The run has already finished.
    #[error("the run has already finished")]
    Finished,
    /// The run loop's stack could not be allocated.
    #[error("could not allocate the run's stack: {0}")]
    Stack(String),
}

#[cfg(not(miri))]
type RunCoroutine = Coroutine<Handback, Box<TestData>, RunResult, DefaultStack>;
#[cfg(miri)]
type RunCoroutine = Coroutine;

/// A run whose test cases the caller pulls one at a time.
pub struct PullRun {
    coroutine: RunCoroutine,
    /// Whether a test case is out with the caller.
    outstanding: bool,
    finished: bool,
}

// SAFETY: the coroutine's stack holds only the run loop's state (settings,
// choice tree, failures, the owned database, which is `Send + Sync`) and the
// test function's captures below (the yielder and nothing else), all of which
// may move between threads. The loop keeps no thread-local reference across a
// suspension: it suspends only inside the test function.
unsafe impl Send for PullRun {}

impl PullRun {
    /// Sets up a run of `settings` (nothing runs until the first
    /// [`PullRun::start`]): with a database, its saved failures for the key
    /// are replayed first and new ones saved, as [`run_with_database`] does.
    pub fn new(
        settings: RunSettings,
        database: Option<OwnedDatabase>,
    ) -> Result<PullRun, PullError> {
        let body = move |suspend: &mut dyn FnMut(Box<TestData>) -> Handback, first: Handback| {
            if let Handback::Abort = first {
                return RunResult {
                    stop: Some(crate::health::StopReason::Aborted),
                    ..RunResult::default()
                };
            }
            // The box the last test case came back in, holding the
            // placeholder the loop's data held meanwhile: the next test case
            // goes out in it, swapped in and out, so no test case allocates
            // a box, frees one or builds a placeholder.
            let mut spare: Option<Box<TestData>> = None;
            let mut test = |data: &mut TestData| -> bool {
                let mut out = spare
                    .take()
                    .unwrap_or_else(|| Box::new(TestData::replaying(Vec::new(), 0)));
                std::mem::swap(data, &mut *out);
                match suspend(out) {
                    Handback::Completed(mut back) => {
                        std::mem::swap(data, &mut *back);
                        spare = Some(back);
                        true
                    }
                    Handback::Abort => false,
                }
            };
            let handle = database.as_ref().map(|owned| DatabaseHandle {
                database: owned.database.as_ref(),
                key: owned.key.clone(),
            });
            run_with_database(&settings, handle, &mut test)
        };
        #[cfg(not(miri))]
        let coroutine = {
            let stack =
                DefaultStack::new(RUN_STACK_BYTES).map_err(|e| PullError::Stack(e.to_string()))?;
            Coroutine::with_stack(stack, move |yielder, first: Handback| {
                body(&mut |data| yielder.suspend(data), first)
            })
        };
        #[cfg(miri)]
        let coroutine = Coroutine::new(body);
        Ok(PullRun {
            coroutine,
            outstanding: false,
            finished: false,
        })
    }

    /// Starts the run: the first test case, or the result if there is none.
    pub fn start(&mut self) -> Result<Next, PullError> {
        if self.coroutine.started() {
            return Err(PullError::OutOfTurn("the run has already started"));
        }
        Ok(self.step(Handback::Completed(Box::new(TestData::replaying(
            Vec::new(),
            0,
        )))))
    }

    /// Hands back the test case last handed out, concluded, and continues
    /// the run to its next test case or its end.
    pub fn resume(&mut self, completed: Box<TestData>) -> Result<Next, PullError> {
        if self.finished {
            return Err(PullError::Finished);
        }
        if !self.outstanding {
            return Err(PullError::OutOfTurn("no test case is out to hand back"));
        }
        Ok(self.step(Handback::Completed(completed)))
    }

    /// Stops the run where it is: the test case that is out (if any) is not
    /// run further, and the result reports what was found so far (with
    /// `aborted` set).
    pub fn abort(&mut self) -> Result<RunResult, PullError> {
        if self.finished {
            return Err(PullError::Finished);
        }
        match self.step(Handback::Abort) {
            Next::Finished(result) => Ok(result),
            // The loop aborts at the next test case it would run; a test
            // case it hands out while winding down (it never should) is
            // refused the same way.
            Next::TestCase(_) => self.abort(),
        }
    }

    /// Whether a test case is out with the caller.
    pub fn is_outstanding(&self) -> bool {
        self.outstanding
    }

    /// Whether the run is over.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn step(&mut self, handback: Handback) -> Next {
        match self.coroutine.resume(handback) {
            CoroutineResult::Yield(data) => {
                self.outstanding = true;
                Next::TestCase(data)
            }
            CoroutineResult::Return(result) => {
                self.outstanding = false;
                self.finished = true;
                Next::Finished(result)
            }
        }
    }
}

/// Under Miri, which cannot switch stacks (corosensei's inline assembly), the
/// run loop runs on a thread of its own instead, handing test cases over
/// channels: the same loop, decision for decision, so `cargo miri test` can
/// check the code that drives pull-style runs (the C ABI's among it).
#[cfg(miri)]
mod threaded {
    use super::{Handback, RunResult, TestData};
    use std::sync::mpsc::{Receiver, Sender, channel};

    /// What the run thread sends its caller.
    pub(super) enum CoroutineResult {
        Yield(Box<TestData>),
        Return(RunResult),
    }

    type Body =
        Box<dyn FnOnce(&mut dyn FnMut(Box<TestData>) -> Handback, Handback) -> RunResult + Send>;

    /// A run loop on its own thread, resumed like a coroutine.
    pub(super) struct Coroutine {
        body: Option<Body>,
        to_run: Option<Sender<Handback>>,
        from_run: Option<Receiver<CoroutineResult>>,
    }

    impl Coroutine {
        pub(super) fn new(
            body: impl FnOnce(&mut dyn FnMut(Box<TestData>) -> Handback, Handback) -> RunResult
            + Send
            + 'static,
        ) -> Coroutine {
            Coroutine {
                body: Some(Box::new(body)),
                to_run: None,
                from_run: None,
            }
        }

        pub(super) fn started(&self) -> bool {
            self.body.is_none()
        }

        pub(super) fn resume(&mut self, handback: Handback) -> CoroutineResult {
            if let Some(body) = self.body.take() {
                let (to_run, run_receives) = channel::<Handback>();
                let (run_sends, from_run) = channel::<CoroutineResult>();
                std::thread::spawn(move || {
                    let mut suspend = |data: Box<TestData>| -> Handback {
                        if run_sends.send(CoroutineResult::Yield(data)).is_err() {
                            return Handback::Abort;
                        }
                        run_receives.recv().unwrap_or(Handback::Abort)
                    };
                    let result = body(&mut suspend, handback);
                    let _ = run_sends.send(CoroutineResult::Return(result));
                });
                self.to_run = Some(to_run);
                self.from_run = Some(from_run);
            } else if let Some(to_run) = &self.to_run {
                // A run thread that has ended answers below with its result.
                let _ = to_run.send(handback);
            }
            match self.from_run.as_ref().map(Receiver::recv) {
                Some(Ok(step)) => step,
                _ => CoroutineResult::Return(RunResult::default()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::IntegerConstraints;
    use crate::data::Status;

    fn settings(seed: u128) -> RunSettings {
        RunSettings {
            seed,
            ..RunSettings::default()
        }
    }

    /// The property "x < 1000" over one integer in [0, 10000].
    fn conclude(data: &mut TestData) {
        match data.draw_integer(IntegerConstraints::bounded(0, 10_000)) {
            Ok(x) if x >= 1000 => data.conclude(Status::Interesting, Some("x >= 1000".into())),
            Ok(_) => data.conclude(Status::Valid, None),
            Err(_) => {}
        }
    }

    #[test]
    fn pulls_the_same_run_the_callback_loop_makes() {
        for seed in 0..20 {
            let mut pulled = PullRun::new(settings(seed), None).expect("stack");
            let mut next = pulled.start().expect("starts");
            let mut pulled_cases = 0;
            let result = loop {
                match next {
                    Next::TestCase(mut data) => {
                        pulled_cases += 1;
                        conclude(&mut data);
                        next = pulled.resume(data).expect("resumes");
                    }
                    Next::Finished(result) => break result,
                }
            };
            let mut called_cases = 0;
            let direct = crate::run(&settings(seed), &[], &mut |data| {
                called_cases += 1;
                conclude(data);
                true
            });
            assert_eq!(pulled_cases, called_cases, "seed {seed}");
            assert_eq!(result.failures.len(), direct.failures.len());
            assert_eq!(
                result
                    .failures
                    .iter()
                    .map(|f| f.choices.clone())
                    .collect::<Vec<_>>(),
                direct
                    .failures
                    .iter()
                    .map(|f| f.choices.clone())
                    .collect::<Vec<_>>(),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn the_shrunk_failure_is_the_minimal_one() {
        let mut pulled = PullRun::new(settings(7), None).expect("stack");
        let mut next = pulled.start().expect("starts");
        let result = loop {
            match next {
                Next::TestCase(mut data) => {
                    conclude(&mut data);
                    next = pulled.resume(data).expect("resumes");
                }
                Next::Finished(result) => break result,
            }
        };
        assert_eq!(result.failures.len(), 1);
        assert_eq!(
            result.failures[0].choices,
            vec![crate::choice::ChoiceValue::Integer(1000)]
        );
    }

    #[test]
    fn aborting_mid_run_reports_what_was_found() {
        let mut pulled = PullRun::new(settings(1), None).expect("stack");
        let Next::TestCase(data) = pulled.start().expect("starts") else {
            panic!("a run starts with a test case");
        };
        drop(data);
        let result = pulled.abort().expect("aborts");
        assert!(result.aborted(), "{:?}", result.stop);
        assert!(pulled.is_finished());
        assert_eq!(pulled.abort().unwrap_err(), PullError::Finished);
    }

    #[test]
    fn out_of_turn_calls_are_refused() {
        let mut pulled = PullRun::new(settings(1), None).expect("stack");
        let early = pulled.resume(Box::new(TestData::replaying(Vec::new(), 0)));
        assert!(matches!(early, Err(PullError::OutOfTurn(_))));
        assert!(pulled.start().is_ok());
        assert!(matches!(pulled.start(), Err(PullError::OutOfTurn(_))));
    }

    #[test]
    fn a_run_moves_between_threads_between_test_cases() {
        let mut pulled = PullRun::new(settings(3), None).expect("stack");
        let mut next = pulled.start().expect("starts");
        let mut cases = 0;
        loop {
            match next {
                Next::TestCase(mut data) => {
                    cases += 1;
                    conclude(&mut data);
                    let (run, step) = std::thread::spawn(move || {
                        let step = pulled.resume(data);
                        (pulled, step)
                    })
                    .join()
                    .expect("thread");
                    pulled = run;
                    next = step.expect("resumes");
                }
                Next::Finished(result) => {
                    assert_eq!(result.failures.len(), 1);
                    break;
                }
            }
        }
        assert!(cases > 1);
    }

    #[test]
    fn dropping_a_suspended_run_unwinds_its_stack() {
        let mut pulled = PullRun::new(settings(5), None).expect("stack");
        let Next::TestCase(_data) = pulled.start().expect("starts") else {
            panic!("a run starts with a test case");
        };
        drop(pulled);
    }
}
