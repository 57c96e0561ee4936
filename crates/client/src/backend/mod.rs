//! Backends: where a run's test cases come from and where their choices go.
//!
//! The client has one run loop ([`crate::runner`]): it reads the settings,
//! runs the property on each test case, classifies how the test case ended,
//! replays the failures with recording on and writes the report. What
//! differs between running in process and running on a Hegel server sits
//! behind two abstractions here:
//!
//! - [`RunBackend`], one per run: who drives the search. In process it is
//!   the engine's run loop (`geist_engine::run_with_database`, with the
//!   example database) calling back for each test case ([`local`]); over
//!   the wire it is the server, whose `test_case` events arrive on the run's
//!   stream after a `run_test` ([`remote`]). Either way the run loop hands
//!   in one function that runs one test case, and gets back a
//!   [`SearchEnd`] worded the same for both.
//! - [`CaseBackend`], one per test case: where the property's choices go.
//!   [`crate::TestCase`] holds one and calls it for every primitive choice,
//!   span, collection, target and verdict; it never asks which kind it has.
//!
//! `CaseBackend` is an enum of two variants rather than a trait object.
//! The set of backends is closed (the engine in process, a server over the
//! protocol) and private to the crate, so nothing is gained by opening it;
//! and the in-process path is the hot one: a `dyn` call per choice would
//! stop `TestData::draw_integer` and friends from being inlined into the
//! generators, where a `match` on a two-variant enum costs the one
//! predictable branch the client had before. Making `TestCase` generic over
//! its backend instead would change the public `TestCase` type that every
//! property, generator and pack names. Each method below is the single place
//! where the two kinds differ for that operation, including the decisions
//! that used to be `is_remote` checks in the generators: whether a whole
//! generator is drawn as one schema ([`CaseBackend::whole`]), who builds a
//! string's alphabet ([`CaseBackend::text`]), how a schema the server needs
//! spelled differently is sent (`ip_address` without a version).

pub(crate) mod local;
pub(crate) mod remote;
pub(crate) mod remote_case;

use crate::generators::{CharacterOptions, Generator, WireSchema};
use crate::runner::RunSummary;
use crate::test_case::{RemoteFailure, stop, usage_error};
use crate::transport::WireError;
use geist_engine::charset::CharSet;
use geist_engine::choice::{
    FloatConstraints, IntegerConstraints, PreparedIntegerConstraints, SizeConstraints,
};
use geist_engine::data::Collection;
use geist_engine::generate::Schema;
use geist_engine::{Status, StopTest, TestData, Value};
use geist_protocol::CaseStatus;
use local::LocalCase;
use remote_case::{CaseError, RemoteCase, RemoteCollection};
use std::sync::Arc;

/// How the run loop classified a test case's ending, as a backend needs it
/// for its own bookkeeping (counting passes, test cases after a failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CaseEnd {
    /// It returned normally.
    Passed,
    /// It was rejected or stopped.
    Stopped,
    /// It failed (panicked, exceeded the deadline, or ended on a server error).
    Failed,
    /// It misused the API: the run ends with a usage error.
    Usage,
}

/// The verdict a test case is concluded with.
#[derive(Clone, Debug)]
pub(crate) enum Verdict {
    /// It passed.
    Valid,
    /// It was rejected, stopped, or not run.
    Invalid,
    /// It failed; the origin tells distinct failures apart.
    Interesting(String),
}

impl Verdict {
    /// Concludes in-process data with this verdict. The engine concludes a
    /// passing test case itself; `conclude` keeps the first verdict (a stop
    /// the engine made stands).
    pub(crate) fn conclude_local(self, data: &mut TestData) {
        match self {
            Verdict::Valid => {}
            Verdict::Invalid => data.conclude(Status::Invalid, None),
            Verdict::Interesting(origin) => data.conclude(Status::Interesting, Some(origin)),
        }
    }
}

/// Runs one test case on the backend it is lent (`true`: a final replay,
/// recorded for the report). `Err` is a transport failure: the run ends.
pub(crate) type RunCase<'a> = dyn FnMut(Lent<'_>, bool) -> Result<CaseEnd, WireError> + 'a;

/// What a backend lends the run loop for one test case: a whole
/// [`CaseBackend`], swapped into the `TestCase` and back, or, in process,
/// just the engine's `TestData`, which the run loop lends on by pointer to
/// the in-process backend the `TestCase` holds for the whole run
/// ([`local::Lender::lend`]). The engine's data is 400-odd bytes and every
/// test case of a search lends it: pointing at it copies nothing, where
/// swapping it into the `TestCase` and back copied it twice.
pub(crate) enum Lent<'a> {
    /// A test case's whole backend (over the wire; a final replay).
    Backend(&'a mut CaseBackend),
    /// The engine's data of an in-process test case, and whether its
    /// outermost draws are timed (see `local::TIMED_PASSES`).
    Engine {
        data: &'a mut TestData,
        time_draws: bool,
    },
}

/// How a search ended, the same for both backends.
#[derive(Debug)]
pub(crate) struct SearchEnd {
    /// Counts.
    pub(crate) summary: RunSummary,
    /// Distinct failures found; each is replayed once more, final.
    pub(crate) failures: usize,
    /// Whether the backend says the property passed.
    pub(crate) passed: bool,
    /// The server could not run the property (over the wire only).
    pub(crate) error: Option<String>,
    /// A failed health check.
    pub(crate) health_check_failure: Option<String>,
    /// Why the run is flaky.
    pub(crate) flaky: Option<String>,
    /// Warnings about the example database.
    pub(crate) warnings: Vec<String>,
    /// The shrinker's per-pass statistics (shown at verbosity debug).
    pub(crate) shrink_statistics: Vec<String>,
    /// Whether the run went over the wire (said in the verbose summary).
    pub(crate) over_the_wire: bool,
}

/// Who drives one run's search (see the module docs).
pub(crate) trait RunBackend {
    /// Runs the search (database replay, generation, shrinking), calling
    /// `run_case` for each test case.
    fn search(&mut self, run_case: &mut RunCase<'_>) -> Result<SearchEnd, WireError>;

    /// Replays each failure the search found once more, final.
    fn replay_failures(&mut self, run_case: &mut RunCase<'_>) -> Result<(), WireError>;

    /// Ends the run: whatever the backend still owes or is owed is settled
    /// (over the wire, final replays not yet answered are answered).
    fn finish(&mut self, run_case: &mut RunCase<'_>) -> Result<(), WireError>;
}

/// One test case's backend: the engine's record of its choices in process,
/// or its stream to the server (see the module docs for why an enum).
pub(crate) enum CaseBackend {
    /// In process: the engine's `TestData`, lent for each test case.
    Local(LocalCase),
    /// Over the wire: a test case the server announced.
    Remote(Box<RemoteCase>),
}

/// How a collection is sized: by the engine in process, or by the server's
/// collection over the wire.
pub(crate) enum CollectionSizer {
    /// The engine's "one more?" choices, drawn in process.
    Local(Collection),
    /// A collection the server created with `new_collection`.
    Remote(RemoteCollection),
}

/// The value of an in-process choice, or the quiet unwinding that stops the
/// test case.
#[inline]
fn local<T>(result: Result<T, StopTest>) -> T {
    match result {
        Ok(v) => v,
        Err(StopTest) => stop(),
    }
}

/// The value of a remote command, or the unwinding its error calls for: the
/// server stopping the test case stops it quietly; anything else ends it
/// with a [`RemoteFailure`].
#[inline(never)]
fn remote<T>(result: Result<T, CaseError>) -> T {
    match result {
        Ok(v) => v,
        Err(CaseError::Stopped) => stop(),
        Err(CaseError::Usage(message)) => usage_error(message),
        Err(other) => std::panic::resume_unwind(Box::new(RemoteFailure(other))),
    }
}

impl CaseBackend {
    /// An integer choice.
    #[inline]
    pub(crate) fn integer(&mut self, constraints: IntegerConstraints) -> i128 {
        match self {
            CaseBackend::Local(case) => local(case.data().draw_integer(constraints)),
            CaseBackend::Remote(case) => remote(case.integer(constraints)),
        }
    }

    /// An integer choice with constraints already in the form the engine
    /// records (no conversion per draw in process).
    #[inline]
    pub(crate) fn prepared_integer(&mut self, constraints: &PreparedIntegerConstraints) -> i128 {
        match self {
            CaseBackend::Local(case) => local(case.data().draw_prepared_integer(constraints)),
            CaseBackend::Remote(case) => remote(case.integer(*constraints.constraints())),
        }
    }

    /// A float choice.
    #[inline]
    pub(crate) fn float(&mut self, constraints: FloatConstraints) -> f64 {
        match self {
            CaseBackend::Local(case) => local(case.data().draw_float(constraints)),
            CaseBackend::Remote(case) => remote(case.float(constraints)),
        }
    }

    /// A boolean choice, true with probability `p`.
    #[inline]
    pub(crate) fn boolean(&mut self, p: f64) -> bool {
        match self {
            CaseBackend::Local(case) => local(case.data().draw_boolean(p)),
            CaseBackend::Remote(case) => remote(case.boolean(p)),
        }
    }

    /// A byte string choice.
    #[inline]
    pub(crate) fn bytes(&mut self, size: SizeConstraints) -> Vec<u8> {
        match self {
            CaseBackend::Local(case) => local(case.data().draw_bytes(size)),
            CaseBackend::Remote(case) => remote(case.bytes(size)),
        }
    }

    /// A string over the characters `options` allow. In process the client
    /// builds the alphabet (once per generator) and makes one string choice;
    /// over the wire the options go to the server, which builds it. `what`
    /// names the generator in usage errors.
    #[inline]
    pub(crate) fn text(
        &mut self,
        options: &CharacterOptions,
        size: SizeConstraints,
        what: &str,
    ) -> String {
        match self {
            CaseBackend::Local(case) => {
                let alphabet: Arc<CharSet> = options.alphabet(what);
                if alphabet.is_empty() {
                    if size.min_size > 0 {
                        usage_error(format!(
                            "{what}: no characters satisfy the character options, so no string \
                             of min_size={} exists",
                            size.min_size
                        ));
                    }
                    return String::new();
                }
                let points = local(case.data().draw_string(alphabet, size));
                points.iter().filter_map(|c| char::from_u32(*c)).collect()
            }
            CaseBackend::Remote(case) => remote(case.text(options.spec(), size)),
        }
    }

    /// A value of an engine schema (formats, regexes, JSON Schemas); `wire`
    /// builds the same schema as a Hegel schema map, sent over the wire.
    pub(crate) fn schema(&mut self, schema: &Schema, wire: &dyn Fn() -> Value) -> Value {
        match self {
            CaseBackend::Local(case) => {
                local(geist_engine::generate::generate(schema, case.data()))
            }
            CaseBackend::Remote(case) => remote(case.schema(wire())),
        }
    }

    /// Over the wire, `generator`'s whole value as one `generate` of its
    /// schema, when it has one the server can answer (Hegel clients draw a
    /// list of integers or a `one_of` of plain values in one round trip).
    /// In process: `None`, and the generator draws piece by piece, so that
    /// the engine sees (and shrinks) every choice.
    #[inline]
    pub(crate) fn whole<G: Generator + ?Sized>(&mut self, generator: &G) -> Option<G::Output> {
        match self {
            CaseBackend::Local(_) => None,
            CaseBackend::Remote(case) => {
                let whole: WireSchema<'_, G::Output> = generator.wire_schema()?;
                if !case.answers(&whole) {
                    return None;
                }
                Some(remote(case.whole(&whole)))
            }
        }
    }

    /// Rejects the test case (it then neither passes nor fails).
    pub(crate) fn reject(&mut self) -> ! {
        if let CaseBackend::Local(case) = self {
            let _ = case.data().reject();
        }
        stop()
    }

    /// Reports a score to maximise under `label`.
    pub(crate) fn target(&mut self, value: f64, label: &str) {
        match self {
            CaseBackend::Local(case) => case
                .data()
                .target_observations
                .push((label.to_string(), value)),
            CaseBackend::Remote(case) => remote(case.target(value, label)),
        }
    }

    /// Opens a span.
    #[inline]
    pub(crate) fn start_span(&mut self, label: u64) {
        match self {
            CaseBackend::Local(case) => {
                case.data().start_span(label);
                // Past the engine's span depth limit the test case is
                // rejected: stop before a recursive generator goes deeper.
                if !case.data().is_active() {
                    stop()
                }
            }
            CaseBackend::Remote(case) => remote(case.start_span(label)),
        }
    }

    /// Closes the innermost span.
    #[inline]
    pub(crate) fn stop_span(&mut self, discard: bool) {
        match self {
            CaseBackend::Local(case) => {
                case.data().stop_span(discard);
            }
            CaseBackend::Remote(case) => remote(case.stop_span(discard)),
        }
    }

    /// Starts sizing a collection of `min..=max` elements: in process from
    /// the engine collection `template` builds, remotely with `new_collection`.
    #[inline]
    pub(crate) fn new_collection(
        &mut self,
        template: impl FnOnce() -> Collection,
        min_size: usize,
        max_size: Option<usize>,
    ) -> CollectionSizer {
        match self {
            CaseBackend::Local(_) => CollectionSizer::Local(template()),
            CaseBackend::Remote(case) => {
                CollectionSizer::Remote(remote(case.new_collection(min_size, max_size)))
            }
        }
    }

    /// Whether the collection gets another element.
    #[inline]
    pub(crate) fn collection_more(&mut self, collection: &mut CollectionSizer) -> bool {
        match (self, collection) {
            (CaseBackend::Local(case), CollectionSizer::Local(c)) => local(c.more(case.data())),
            (CaseBackend::Remote(case), CollectionSizer::Remote(c)) => {
                remote(case.collection_more(c))
            }
            // A collection started in another test case: nothing sensible to do.
            _ => stop(),
        }
    }

    /// The last element was not kept.
    #[inline]
    pub(crate) fn collection_reject(&mut self, collection: &mut CollectionSizer) {
        match (self, collection) {
            (CaseBackend::Local(case), CollectionSizer::Local(c)) => local(c.reject(case.data())),
            (CaseBackend::Remote(case), CollectionSizer::Remote(c)) => {
                remote(case.collection_reject(c))
            }
            _ => stop(),
        }
    }

    /// Whether outermost draws are timed (in process, for the engine's
    /// `too_slow` health check, during the first test cases only).
    #[inline]
    pub(crate) fn times_draws(&self) -> bool {
        matches!(self, CaseBackend::Local(case) if case.time_draws())
    }

    /// Adds the time an outermost draw took.
    pub(crate) fn add_draw_time(&mut self, seconds: f64) {
        if let CaseBackend::Local(case) = self {
            case.data().draw_seconds += seconds;
        }
    }

    /// Concludes the test case with `verdict`: in process on the engine's
    /// data (unless the engine already concluded it, as when it stopped the
    /// test case), over the wire with `mark_complete`. Only a transport
    /// failure is an error. In line: a passing in-process test case, the
    /// common one, has nothing to conclude.
    #[inline]
    pub(crate) fn conclude(&mut self, verdict: Verdict) -> Result<(), WireError> {
        match self {
            CaseBackend::Local(_) if matches!(verdict, Verdict::Valid) => Ok(()),
            CaseBackend::Local(case) => {
                verdict.conclude_local(case.data());
                Ok(())
            }
            CaseBackend::Remote(case) => Self::complete(case, verdict),
        }
    }

    /// [`CaseBackend::conclude`] over the wire: `mark_complete`.
    #[inline(never)]
    fn complete(case: &mut RemoteCase, verdict: Verdict) -> Result<(), WireError> {
        match verdict {
            Verdict::Valid => case.complete(CaseStatus::Valid, None),
            Verdict::Invalid => case.complete(CaseStatus::Invalid, None),
            Verdict::Interesting(origin) => case.complete(CaseStatus::Interesting, Some(&origin)),
        }
    }

    /// How a stopped test case stopped, for the debug log.
    pub(crate) fn stop_description(&self) -> &'static str {
        match self {
            CaseBackend::Local(case) if case.data_ref().status == Some(Status::Overrun) => {
                "stopped (too many choices)"
            }
            CaseBackend::Remote(case) if case.stopped => "stopped by the server",
            _ => "rejected",
        }
    }

    /// Choices made so far (in process; 0 over the wire, where the server keeps them).
    pub(crate) fn choice_count(&self) -> usize {
        match self {
            CaseBackend::Local(case) => case.data_ref().nodes.len(),
            CaseBackend::Remote(_) => 0,
        }
    }
}
