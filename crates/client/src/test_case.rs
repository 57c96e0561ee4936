//! One test case as the property sees it: draw values, reject, note, target.
//!
//! Every value a [`TestCase`] hands out is built from choices, so the engine
//! (in process or in the server) can replay and shrink it. When a
//! test case must stop early (it ran out of choices, or was rejected) the
//! client unwinds with a private payload the runner recognises; that unwinding
//! is never reported as a failure.
//!
//! The choices themselves go to the test case's backend
//! ([`crate::backend::CaseBackend`]): the engine's `TestData` in process, or
//! the test case's stream to a Hegel server over the wire. The `TestCase`
//! never asks which; it only keeps what the property sees (the recording of
//! the final replay, the depth of nested draws, state machine steps).

use crate::backend::remote_case::CaseError;
use crate::backend::{CaseBackend, CollectionSizer};
use crate::generators::{CharacterOptions, Generator};
use geist_engine::Value;
use geist_engine::choice::{
    FloatConstraints, IntegerConstraints, PreparedIntegerConstraints, SizeConstraints,
};
use geist_engine::data::Collection;
use geist_engine::generate::Schema;
use std::fmt::Debug;

/// The unwinding payload that stops a test case without failing it.
pub(crate) struct StopSignal;

/// The unwinding payload of a misuse of the API (an invalid generator): it
/// ends the whole run with this message rather than being shrunk as a failure.
pub(crate) struct UsageError(pub(crate) String);

/// Stops the current test case (it is over or was rejected).
#[cold]
#[inline(never)]
pub(crate) fn stop() -> ! {
    std::panic::resume_unwind(Box::new(StopSignal))
}

/// Ends the run with a usage error.
#[cold]
#[inline(never)]
pub(crate) fn usage_error(message: String) -> ! {
    std::panic::resume_unwind(Box::new(UsageError(message)))
}

/// The unwinding payload of a remote test case that cannot go on: the server
/// replied with an error (the test case fails with it), or the connection
/// failed (the whole run ends).
pub(crate) struct RemoteFailure(pub(crate) CaseError);

/// What the final replay of a failure records for the report.
#[derive(Debug, Default)]
pub(crate) struct Recording {
    /// Drawn values and notes, in the order they happened.
    pub(crate) lines: Vec<String>,
}

/// One test case: the handle a property uses to draw values.
pub struct TestCase {
    /// Where the choices go: lent by the run loop for each test case.
    pub(crate) backend: CaseBackend,
    recording: Option<Recording>,
    /// How many `draw` calls are open (only outermost draws are reported).
    depth: u32,
    draws: u32,
    /// State machine steps run so far.
    steps: u32,
    /// While a state machine step runs (and recording): its line in the
    /// recording, its rule and the values it drew so far.
    step: Option<(usize, String, Vec<String>)>,
}

impl TestCase {
    /// A test case on `backend` (a run's lease, idle between test cases).
    pub(crate) fn new(backend: CaseBackend) -> TestCase {
        TestCase {
            backend,
            recording: None,
            depth: 0,
            draws: 0,
            steps: 0,
            step: None,
        }
    }

    /// Prepares for the next test case, recording draws and notes if asked.
    #[inline]
    pub(crate) fn reset(&mut self, record: bool) {
        self.recording = record.then(Recording::default);
        self.depth = 0;
        self.draws = 0;
        self.steps = 0;
        self.step = None;
    }

    pub(crate) fn take_recording(&mut self) -> Option<Recording> {
        self.recording.take()
    }

    /// Draws a value from `generator`. In the final replay of a failure the
    /// value is printed as `draw N = value`.
    pub fn draw<G: Generator>(&mut self, generator: G) -> G::Output
    where
        G::Output: Debug,
    {
        self.draw_labelled(None, generator)
    }

    /// Draws a value, printed under `name` in a failure report.
    pub fn draw_named<G: Generator>(&mut self, name: &str, generator: G) -> G::Output
    where
        G::Output: Debug,
    {
        self.draw_labelled(Some(name), generator)
    }

    /// Draws a value that is not printed (for types without `Debug`).
    pub fn draw_silent<G: Generator>(&mut self, generator: G) -> G::Output {
        self.generate_timed(generator)
    }

    /// Runs a generator one draw deeper, timing outermost draws when asked.
    #[inline]
    fn generate_timed<G: Generator>(&mut self, generator: G) -> G::Output {
        let started = (self.depth == 0 && self.backend.times_draws()).then(std::time::Instant::now);
        self.depth += 1;
        let value = generator.generate(self);
        self.depth -= 1;
        if let Some(started) = started {
            self.backend.add_draw_time(started.elapsed().as_secs_f64());
        }
        value
    }

    #[inline]
    fn draw_labelled<G: Generator>(&mut self, name: Option<&str>, generator: G) -> G::Output
    where
        G::Output: Debug,
    {
        let value = self.generate_timed(generator);
        if self.depth == 0 {
            self.draws += 1;
            if self.step.is_some() {
                self.step_argument(match name {
                    Some(name) => format!("{name} = {value:?}"),
                    None => format!("{value:?}"),
                });
            } else if let Some(recording) = &mut self.recording {
                let line = match name {
                    Some(name) => format!("{name} = {value:?}"),
                    None => format!("draw {} = {value:?}", self.draws),
                };
                recording.lines.push(line);
            }
        }
        value
    }

    /// Rejects the test case unless `condition` holds (it then counts as
    /// neither passing nor failing).
    pub fn assume(&mut self, condition: bool) {
        if !condition {
            self.reject();
        }
    }

    /// Rejects the test case.
    pub fn reject(&mut self) -> ! {
        self.backend.reject()
    }

    /// Attaches a message shown only in the report of the final failing example.
    pub fn note(&mut self, message: impl std::fmt::Display) {
        if let Some(recording) = &mut self.recording {
            recording.lines.push(message.to_string());
        }
    }

    /// Reports a score to maximise: the engine steers generation toward test
    /// cases with higher values under the same label.
    pub fn target(&mut self, value: f64, label: &str) {
        self.backend.target(value, label)
    }

    /// Whether this is the replay of a failure being reported (draws and notes are recorded).
    pub fn is_final(&self) -> bool {
        self.recording.is_some()
    }

    // State machine steps: a step's draws are shown as its arguments.

    /// Starts a step of `rule`; its line is recorded at once, so a step that
    /// panics still appears in the report.
    pub(crate) fn begin_step(&mut self, rule: &str) {
        self.steps += 1;
        if let Some(recording) = &mut self.recording {
            recording
                .lines
                .push(format!("step {}: {rule}()", self.steps));
            self.step = Some((recording.lines.len() - 1, rule.to_string(), Vec::new()));
        }
    }

    pub(crate) fn step_argument(&mut self, argument: String) {
        if let (Some((line, rule, arguments)), Some(recording)) =
            (&mut self.step, &mut self.recording)
        {
            arguments.push(argument);
            recording.lines[*line] =
                format!("step {}: {rule}({})", self.steps, arguments.join(", "));
        }
    }

    pub(crate) fn end_step(&mut self) {
        self.step = None;
    }

    // Primitive choices, for the generators: each is one call on the test
    // case's backend, which makes the choice in process or sends it to the
    // server (and stops the test case when it must stop).

    #[inline]
    pub(crate) fn choose_integer(&mut self, constraints: IntegerConstraints) -> i128 {
        self.backend.integer(constraints)
    }

    /// An integer choice with prepared constraints (see
    /// [`PreparedIntegerConstraints`]): in process, nothing is converted.
    #[inline]
    pub(crate) fn choose_prepared_integer(
        &mut self,
        constraints: &PreparedIntegerConstraints,
    ) -> i128 {
        self.backend.prepared_integer(constraints)
    }

    #[inline]
    pub(crate) fn choose_float(&mut self, constraints: FloatConstraints) -> f64 {
        self.backend.float(constraints)
    }

    #[inline]
    pub(crate) fn choose_boolean(&mut self, p: f64) -> bool {
        self.backend.boolean(p)
    }

    #[inline]
    pub(crate) fn choose_bytes(&mut self, size: SizeConstraints) -> Vec<u8> {
        self.backend.bytes(size)
    }

    /// A string of characters `options` allow (`what` names the generator
    /// in usage errors).
    #[inline]
    pub(crate) fn choose_text(
        &mut self,
        options: &CharacterOptions,
        size: SizeConstraints,
        what: &str,
    ) -> String {
        self.backend.text(options, size, what)
    }

    /// A value of an engine schema (formats, regexes, JSON Schemas). `wire`
    /// builds the same schema as a Hegel schema map, for a server.
    pub(crate) fn choose_schema(&mut self, schema: &Schema, wire: &dyn Fn() -> Value) -> Value {
        self.backend.schema(schema, wire)
    }

    /// `generator`'s whole value in one draw, when the backend prefers that
    /// (see `CaseBackend::whole`); `None`: draw it piece by piece.
    #[inline]
    pub(crate) fn draw_whole<G: Generator + ?Sized>(&mut self, generator: &G) -> Option<G::Output> {
        self.backend.whole(generator)
    }

    /// An index in `0..n` (n > 0), simplest first.
    #[inline]
    pub(crate) fn choose_index(&mut self, n: usize) -> usize {
        match i64::try_from(n - 1) {
            Ok(max) => self
                .choose_prepared_integer(&PreparedIntegerConstraints::bounded_i64(0, max))
                as usize,
            Err(_) => self.choose_integer(IntegerConstraints::bounded(0, n as i128 - 1)) as usize,
        }
    }

    #[inline]
    pub(crate) fn start_span(&mut self, label: u64) {
        self.backend.start_span(label)
    }

    #[inline]
    pub(crate) fn stop_span(&mut self, discard: bool) {
        self.backend.stop_span(discard)
    }

    /// Starts sizing a collection of `min..=max` elements (`template`
    /// builds the engine's collection, for in-process test cases).
    #[inline]
    pub(crate) fn new_collection(
        &mut self,
        template: impl FnOnce() -> Collection,
        min_size: usize,
        max_size: Option<usize>,
    ) -> CollectionSizer {
        self.backend.new_collection(template, min_size, max_size)
    }

    #[inline]
    pub(crate) fn collection_more(&mut self, collection: &mut CollectionSizer) -> bool {
        self.backend.collection_more(collection)
    }

    #[inline]
    pub(crate) fn collection_reject(&mut self, collection: &mut CollectionSizer) {
        self.backend.collection_reject(collection)
    }
}

impl Debug for TestCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCase")
            .field("choices", &self.backend.choice_count())
            .field("final", &self.is_final())
            .finish()
    }
}
