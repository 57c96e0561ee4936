//! One test case as the property sees it: draw values, reject, note, target.
//!
//! A [`TestCase`] wraps the engine's record of the test case's choices. Every
//! value is built from choices, so the engine can replay and shrink it. When a
//! test case must stop early (it ran out of choices, or was rejected) the
//! client unwinds with a private payload the runner recognises; that unwinding
//! is never reported as a failure.
//!
//! Over the wire transport the same [`TestCase`] carries a remote test case
//! instead: every primitive choice below checks for it first (one predictable
//! branch on the in-process hot path) and becomes a Hegel command.

use crate::generators::{Generator, WireSchema};
use crate::transport::case::{CaseError, RemoteCase, RemoteCollection};
use geist_engine::charset::CharSet;
use geist_engine::charset::CharSetSpec;
use geist_engine::choice::{FloatConstraints, IntegerConstraints, SizeConstraints};
use geist_engine::data::{Collection, DEFAULT_MAX_CHOICES};
use geist_engine::generate::Schema;
use geist_engine::{StopTest, TestData, Value};
use std::fmt::Debug;
use std::sync::Arc;

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
    pub(crate) data: TestData,
    /// Set while a test case runs over the wire: choices go to the server.
    pub(crate) remote: Option<Box<RemoteCase>>,
    recording: Option<Recording>,
    /// How many `draw` calls are open (only outermost draws are reported).
    depth: u32,
    draws: u32,
    /// State machine steps run so far.
    steps: u32,
    /// While a state machine step runs (and recording): its line in the
    /// recording, its rule and the values it drew so far.
    step: Option<(usize, String, Vec<String>)>,
    /// Whether outermost draws are timed, for the engine's `too_slow` health
    /// check (only its first test cases need it, so the clock is not read
    /// on every draw of a run).
    pub(crate) time_draws: bool,
}

impl TestCase {
    pub(crate) fn new() -> TestCase {
        TestCase {
            data: TestData::replaying(Vec::new(), DEFAULT_MAX_CHOICES),
            remote: None,
            recording: None,
            depth: 0,
            draws: 0,
            steps: 0,
            step: None,
            time_draws: false,
        }
    }

    /// Prepares for the next test case, recording draws and notes if asked.
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
        let started = (self.time_draws && self.depth == 0).then(std::time::Instant::now);
        self.depth += 1;
        let value = generator.generate(self);
        self.depth -= 1;
        if let Some(started) = started {
            self.data.draw_seconds += started.elapsed().as_secs_f64();
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
        if self.remote.is_none() {
            let _ = self.data.reject();
        }
        stop()
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
        if let Some(remote) = &mut self.remote {
            let r = remote.target(value, label);
            return remote_check(r);
        }
        self.data
            .target_observations
            .push((label.to_string(), value));
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

    // Primitive choices, for the generators. Each checks for a remote test
    // case first; the remote branch is out of line so the in-process path
    // stays as small as before.

    #[inline]
    fn check<T>(&mut self, result: Result<T, StopTest>) -> T {
        match result {
            Ok(v) => v,
            Err(StopTest) => stop(),
        }
    }

    /// Whether this test case runs over the wire.
    #[inline]
    pub(crate) fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// Whether this is a remote test case whose server's protocol version
    /// has `behaviour`.
    pub(crate) fn remote_has(&self, behaviour: geist_protocol::Behaviour) -> bool {
        self.remote.as_ref().is_some_and(|r| r.has(behaviour))
    }

    #[inline]
    pub(crate) fn choose_integer(&mut self, constraints: IntegerConstraints) -> i128 {
        if let Some(remote) = &mut self.remote {
            return remote_check(remote.integer(constraints));
        }
        let r = self.data.draw_integer(constraints);
        self.check(r)
    }

    #[inline]
    pub(crate) fn choose_float(&mut self, constraints: FloatConstraints) -> f64 {
        if let Some(remote) = &mut self.remote {
            return remote_check(remote.float(constraints));
        }
        let r = self.data.draw_float(constraints);
        self.check(r)
    }

    #[inline]
    pub(crate) fn choose_boolean(&mut self, p: f64) -> bool {
        if let Some(remote) = &mut self.remote {
            return remote_check(remote.boolean(p));
        }
        let r = self.data.draw_boolean(p);
        self.check(r)
    }

    #[inline]
    pub(crate) fn choose_bytes(&mut self, size: SizeConstraints) -> Vec<u8> {
        if let Some(remote) = &mut self.remote {
            return remote_check(remote.bytes(size));
        }
        let r = self.data.draw_bytes(size);
        self.check(r)
    }

    #[inline]
    pub(crate) fn choose_string(
        &mut self,
        alphabet: Arc<CharSet>,
        size: SizeConstraints,
    ) -> Vec<u32> {
        let r = self.data.draw_string(alphabet, size);
        self.check(r)
    }

    /// A string over the characters `spec` describes, drawn by the server
    /// (only for remote test cases: in-process the generator builds the
    /// alphabet and calls [`TestCase::choose_string`]).
    pub(crate) fn choose_remote_text(
        &mut self,
        spec: &CharSetSpec,
        size: SizeConstraints,
    ) -> String {
        match &mut self.remote {
            Some(remote) => remote_check(remote.text(spec, size)),
            None => usage_error("a remote string draw outside a remote test case".to_string()),
        }
    }

    /// A value of an engine schema (formats, regexes). `wire` is the same
    /// schema as a Hegel schema map, sent when the test case is remote.
    pub(crate) fn choose_schema(&mut self, schema: &Schema, wire: &dyn Fn() -> Value) -> Value {
        if let Some(remote) = &mut self.remote {
            return remote_check(remote.schema(&wire()));
        }
        let r = geist_engine::generate::generate(schema, &mut self.data);
        self.check(r)
    }

    /// A whole value from its generator's single schema (remote test cases only).
    pub(crate) fn choose_whole<T>(&mut self, whole: WireSchema<'_, T>) -> T {
        match &mut self.remote {
            Some(remote) => remote_check(remote.whole(&whole)),
            None => usage_error("a whole-schema draw outside a remote test case".to_string()),
        }
    }

    /// An index in `0..n` (n > 0), simplest first.
    #[inline]
    pub(crate) fn choose_index(&mut self, n: usize) -> usize {
        self.choose_integer(IntegerConstraints::bounded(0, n as i128 - 1)) as usize
    }

    #[inline]
    pub(crate) fn start_span(&mut self, label: u64) {
        if let Some(remote) = &mut self.remote {
            return remote_check(remote.start_span(label));
        }
        self.data.start_span(label);
    }

    #[inline]
    pub(crate) fn stop_span(&mut self, discard: bool) {
        if let Some(remote) = &mut self.remote {
            return remote_check(remote.stop_span(discard));
        }
        self.data.stop_span(discard);
    }

    /// Starts sizing a collection of `min..=max` elements: in-process from
    /// the engine collection `local` builds, remotely with `new_collection`.
    #[inline]
    pub(crate) fn new_collection(
        &mut self,
        local: impl FnOnce() -> Collection,
        min_size: usize,
        max_size: Option<usize>,
    ) -> CollectionSizer {
        if let Some(remote) = &mut self.remote {
            return CollectionSizer::Remote(remote_check(
                remote.new_collection(min_size, max_size),
            ));
        }
        CollectionSizer::Local(local())
    }

    #[inline]
    pub(crate) fn collection_more(&mut self, collection: &mut CollectionSizer) -> bool {
        match collection {
            CollectionSizer::Local(collection) => {
                let r = collection.more(&mut self.data);
                self.check(r)
            }
            CollectionSizer::Remote(collection) => match &mut self.remote {
                Some(remote) => remote_check(remote.collection_more(collection)),
                None => stop(),
            },
        }
    }

    #[inline]
    pub(crate) fn collection_reject(&mut self, collection: &mut CollectionSizer) {
        match collection {
            CollectionSizer::Local(collection) => {
                let r = collection.reject(&mut self.data);
                self.check(r)
            }
            CollectionSizer::Remote(collection) => match &mut self.remote {
                Some(remote) => remote_check(remote.collection_reject(collection)),
                None => stop(),
            },
        }
    }
}

/// How a collection is sized: by the engine in-process, or by the server's
/// collection over the wire.
pub(crate) enum CollectionSizer {
    /// The engine's "one more?" choices, drawn in-process.
    Local(Collection),
    /// A collection the server created with `new_collection`.
    Remote(RemoteCollection),
}

/// The value of a remote command, or the unwinding its error calls for: the
/// server stopping the test case stops it quietly; anything else ends it
/// with a [`RemoteFailure`].
#[inline(never)]
fn remote_check<T>(result: Result<T, CaseError>) -> T {
    match result {
        Ok(v) => v,
        Err(CaseError::Stopped) => stop(),
        Err(CaseError::Usage(message)) => usage_error(message),
        Err(other) => std::panic::resume_unwind(Box::new(RemoteFailure(other))),
    }
}

impl Debug for TestCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCase")
            .field("choices", &self.data.nodes.len())
            .field("final", &self.is_final())
            .finish()
    }
}
