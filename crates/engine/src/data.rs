//! One test case: the choices it makes, the spans over them, and its outcome.
//!
//! A [`TestData`] either replays a prefix of choices (falling back to the
//! simplest permitted value when a recorded choice no longer fits) or draws
//! fresh choices at random. Everything the test case does is recorded, so any
//! test case can be reproduced exactly from its choice values.

use crate::charset::CharSet;
use crate::choice::{
    ChoiceNode, ChoiceValue, CompactIntegerConstraints, Constraints, FloatConstraints,
    IntegerConstraints, PreparedIntegerConstraints, SizeConstraints,
};
use crate::random::Source;
use std::sync::Arc;

/// How a test case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// It tried to make more choices than allowed (or replay ran out).
    Overrun,
    /// It was rejected (an assumption failed, a filter gave up, or spans
    /// nested deeper than [`MAX_SPAN_DEPTH`]).
    Invalid,
    /// It passed.
    Valid,
    /// It failed.
    Interesting,
}

/// The signal that a test case cannot continue (it overran its choice budget
/// or was already concluded). Callers unwind and report the test case as done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopTest;

/// A labelled range of choices, `start..end` in the choice sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// What kind of structure this is (list, element, tuple, client label ...).
    pub label: u64,
    /// Index of the first choice.
    pub start: usize,
    /// One past the last choice.
    pub end: usize,
    /// Nesting depth when it was opened.
    pub depth: usize,
    /// Whether the client discarded it (e.g. a rejected filter attempt).
    pub discarded: bool,
}

/// Span labels the engine uses for its own structures.
pub mod labels {
    /// A whole list, set, dict or string collection.
    pub const COLLECTION: u64 = 0x6765_6973_7401;
    /// One element of a collection, with the choice that decided to draw it.
    pub const COLLECTION_ELEMENT: u64 = 0x6765_6973_7402;
    /// A tuple.
    pub const TUPLE: u64 = 0x6765_6973_7403;
    /// A one_of: the branch index and the branch's value.
    pub const ONE_OF: u64 = 0x6765_6973_7404;
    /// One generated value from a schema.
    pub const SCHEMA_VALUE: u64 = 0x6765_6973_7405;
    /// A pool variable draw.
    pub const POOL_VARIABLE: u64 = 0x6765_6973_7406;
    /// A dict entry.
    pub const DICT_ENTRY: u64 = 0x6765_6973_7407;
    /// An independent stream's marker and choices (see [`TestData::fork_stream`]).
    pub const STREAM: u64 = 0x6765_6973_7408;

    /// Whether `label` names a kind of structure rather than one generator:
    /// the engine's labels above and its generators' (`0x6765_6973_74xx`),
    /// geist's clients' (`0x6765_6973_75xx`), and the small numbers the
    /// Hegel protocol's clients use (hegeltest 0.16: 1 for a list to 15 for
    /// an enum variant). Every list of a schema has the label
    /// [`COLLECTION`], so a list of lists nests it without any generator
    /// drawing itself; a frontend that labels each generator (hegeltest
    /// 0.51's hashed, combined labels) repeats a label only in a recursion.
    pub fn is_kind(label: u64) -> bool {
        label < 1 << 16 || label >> 16 == 0x6765_6973
    }
}

mod stream;

/// Where the choices of a test case come from.
enum Mode {
    /// Random generation after the prefix.
    Generate(Source),
    /// Replay the prefix; after it, simplest values (up to the choice budget).
    Replay,
    /// Replay the prefix; after it, values far from the simplest
    /// ([`Constraints::far_value`]).
    ReplayFar,
}

/// The state of one test case.
pub struct TestData {
    prefix: Values,
    mode: Mode,
    /// Values to generate next, in order (a copy of an earlier element's
    /// choices; see [`Collection::more`]), while they fit their constraints.
    splice: std::collections::VecDeque<ChoiceValue>,
    /// The choices made so far.
    pub nodes: Nodes,
    /// Spans opened and closed so far (closed ones have their end set).
    pub spans: Vec<Span>,
    open_spans: Vec<usize>,
    /// The labels of the open spans nested fewer than [`SHALLOW_SPANS`]
    /// deep, by depth (entries at and past `open_spans.len()` are stale).
    shallow_labels: [u64; SHALLOW_SPANS],
    /// How many spans with each label are open [`SHALLOW_SPANS`] or more
    /// deep.
    open_labels: OpenLabels,
    /// How many open spans are nested inside an open span with the same
    /// label (see [`TestData::recursion_depth`]).
    recursion_depth: usize,
    /// The part of `recursion_depth` whose repeated labels name generators,
    /// not kinds ([`labels::is_kind`]): how deep inside a value that a
    /// generator draws of itself the next choice is.
    generator_recursion_depth: usize,
    /// The spans (indices into `spans`, `usize::MAX` for the whole test
    /// case) inside which a recursive value sized by a
    /// [`crate::recursion::Recursion`] scope is drawn, outermost first.
    sized_recursions: Vec<usize>,
    max_choices: usize,
    /// The serialized size of the choices so far ([`ChoiceValue::serialized_size`]).
    length: usize,
    /// The most `length` may reach before the test case overruns.
    max_length: usize,
    /// The outcome, once concluded.
    pub status: Option<Status>,
    /// For failures: where the failure came from (distinct origins are distinct bugs).
    pub origin: Option<String>,
    /// Targeting observations (label, value).
    pub target_observations: Vec<(String, f64)>,
    /// Whether a replayed choice did not fit and was replaced.
    pub misaligned: bool,
    /// Seconds the caller spent generating this test case's data (drawing
    /// values, not running the test), as it measured them: the input of the
    /// `too_slow` health check. The engine itself keeps no clock.
    pub draw_seconds: f64,
    /// Whether it was rejected for nesting spans deeper than
    /// [`MAX_SPAN_DEPTH`] (runaway recursion): the run never mutates it.
    pub too_deep: bool,
    /// Whether the run asks its caller to keep what this test case prints:
    /// a failure report may be made of it (the replays that check and
    /// confirm a failure; see [`crate::run`]'s nondeterministic handling).
    pub stamped: bool,
    /// Recently drawn integers, reused now and then to provoke equal-value bugs.
    recent_integers: Vec<i128>,
    /// An empty vector for the next [`Collection`] that keeps copy sources
    /// (a finished collection leaves its own here for the next).
    spare_copy_sources: Vec<(usize, usize)>,
}

/// How many open spans carry each label, for the spans nested
/// [`SHALLOW_SPANS`] or more deep: whether a span opens inside one with its
/// label is a scan of at most [`SHALLOW_SPANS`] labels and one lookup,
/// however deep the spans nest (a scan of all the open spans made deep
/// recursive values quadratic).
type OpenLabels = std::collections::HashMap<u64, u32, std::hash::BuildHasherDefault<LabelHasher>>;

/// How many of the outermost open spans have their labels in a plain array
/// rather than counted in [`OpenLabels`]: most spans open only a few deep
/// (a state machine's step and the value drawn in it), where a scan of the
/// few labels costs less than a hash table's entry and removal.
const SHALLOW_SPANS: usize = 8;

/// Hashes a span label with one multiplication: labels are already hashes
/// (or the engine's constants, whose high bits a multiplication spreads).
#[derive(Default)]
struct LabelHasher(u64);

impl std::hash::Hasher for LabelHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, label: u64) {
        self.0 = label.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The most spans a test case may have open at once; opening one more
/// rejects it. A guard against runaway recursion (a recursive generator
/// headed for a stack overflow, a loop that only opens spans), far above
/// the depth real values reach: every combinator layer opens a span, so a
/// recursive value nests several per level.
///
/// The choice budget bounds a test case's size, not its depth: a recursive
/// generator whose levels expect more than one sub-value each (a deferred
/// JSON value: a one_of of five, two of them collections of itself with
/// five elements on average) is a supercritical branching process, and
/// generated depth-first its first unending branch descends until a limit
/// stops it; under a lifted budget (hegel-c's million choices) that was the
/// frontend's stack. (Collections now shrink with the recursion depth, so
/// such a generator ends on its own; one that recurses without collections
/// may still run away.) hegeltest 0.51's frontend uses about 140 to 210 bytes
/// of stack per open span in a release build and 530 to 700 in a debug one
/// (measured 2026-11-25 through libhegel_c.so), so 1000 spans stay under
/// 0.7 MiB of a test thread's 2 MiB.
///
/// It is rejected (invalid), as Hypothesis and libhegel (limit 1000 too)
/// reject it: a frontend classifies such a test case as invalid
/// (hegeltest 0.51's test_concurrent_stateful expects the filter_too_much
/// health check when every test case nests too deep, and Unsatisfiable when
/// it is suppressed). It is marked [`TestData::too_deep`] and never becomes
/// the base of a mutation chain, nor a link of one (a mutation of a runaway
/// value copies a subtree onto another and runs away again: every other
/// runaway was followed by two more of some 5500 choices each).
pub const MAX_SPAN_DEPTH: usize = 1000;

/// The most streams deep a test case may fork streams from streams
/// ([`TestData::fork_stream`]); a caller rejects the test case past it, as
/// spans nested too deep do.
pub const MAX_STREAM_DEPTH: usize = 100;

/// The largest number of choices one test case may make.
pub const DEFAULT_MAX_CHOICES: usize = 8 * 1024;

/// The largest serialized size of one integer choice
/// ([`ChoiceValue::serialized_size`] of `i128::MIN`).
const MAX_INTEGER_SIZE: usize = 18;

/// The largest serialized size of one test case's choices, in bytes as
/// Hypothesis counts them (its `BUFFER_SIZE`, the "maximum allowed entropy"):
/// 500 strings of 50 characters overrun it, though they are 500 choices.
/// A test case given a choice budget above [`DEFAULT_MAX_CHOICES`] (a lifted
/// budget: `single_test_case`, hegel-c's unbounded runs) has no size limit,
/// as hegel-core lifts both for `single_test_case`.
pub const DEFAULT_MAX_LENGTH: usize = 8 * 1024;

/// The largest serialized size of a test case with a budget of
/// `max_choices` choices (see [`DEFAULT_MAX_LENGTH`]).
fn max_length_for(max_choices: usize) -> usize {
    if max_choices > DEFAULT_MAX_CHOICES {
        usize::MAX
    } else {
        DEFAULT_MAX_LENGTH
    }
}

impl TestData {
    /// A test case that replays `prefix` then generates at random from `source`.
    pub fn generating(prefix: Vec<ChoiceValue>, source: Source, max_choices: usize) -> TestData {
        TestData::new(prefix, Mode::Generate(source), max_choices)
    }

    /// A test case that replays `choices` exactly, then makes simplest choices.
    pub fn replaying(choices: Vec<ChoiceValue>, max_choices: usize) -> TestData {
        TestData::new(choices, Mode::Replay, max_choices)
    }

    /// A test case that replays `choices` exactly, then makes choices far
    /// from the simplest ([`Constraints::far_value`]): the shrinker's guess
    /// at a continuation that crosses a threshold from above.
    pub fn replaying_far(choices: Vec<ChoiceValue>, max_choices: usize) -> TestData {
        TestData::new(choices, Mode::ReplayFar, max_choices)
    }

    fn new(prefix: Vec<ChoiceValue>, mode: Mode, max_choices: usize) -> TestData {
        TestData {
            prefix: Values::from_vec(prefix),
            mode,
            splice: std::collections::VecDeque::new(),
            nodes: Nodes::default(),
            spans: Vec::new(),
            open_spans: Vec::new(),
            shallow_labels: [0; SHALLOW_SPANS],
            open_labels: OpenLabels::default(),
            recursion_depth: 0,
            generator_recursion_depth: 0,
            sized_recursions: Vec::new(),
            max_choices,
            length: 0,
            max_length: max_length_for(max_choices),
            status: None,
            origin: None,
            target_observations: Vec::new(),
            misaligned: false,
            draw_seconds: 0.0,
            too_deep: false,
            stamped: false,
            recent_integers: Vec::new(),
            spare_copy_sources: Vec::new(),
        }
    }

    /// Makes this test case a new one that replays `prefix` then generates
    /// at random from `source` (what [`TestData::generating`] makes), in
    /// place: its vectors keep their allocations, so a run that restarts
    /// one test case for each it generates writes their choices into
    /// memory already in cache, and moves and frees nothing. Returns the
    /// old prefix's vector, emptied.
    pub fn restart_generating(
        &mut self,
        prefix: Values,
        source: Source,
        max_choices: usize,
    ) -> Values {
        // Every field, so that one added later is not forgotten here.
        let TestData {
            prefix: old_prefix,
            mode,
            splice,
            nodes,
            spans,
            open_spans,
            shallow_labels: _,
            open_labels,
            recursion_depth,
            generator_recursion_depth,
            sized_recursions,
            max_choices: old_max_choices,
            length,
            max_length,
            status,
            origin,
            target_observations,
            misaligned,
            draw_seconds,
            too_deep,
            stamped,
            recent_integers,
            spare_copy_sources: _,
        } = self;
        let mut old_prefix = std::mem::replace(old_prefix, prefix);
        old_prefix.clear_all();
        *mode = Mode::Generate(source);
        splice.clear();
        nodes.clear_all();
        spans.clear();
        open_spans.clear();
        open_labels.clear();
        *recursion_depth = 0;
        *generator_recursion_depth = 0;
        sized_recursions.clear();
        *old_max_choices = max_choices;
        *length = 0;
        *max_length = max_length_for(max_choices);
        *status = None;
        *origin = None;
        target_observations.clear();
        *misaligned = false;
        *draw_seconds = 0.0;
        *too_deep = false;
        *stamped = false;
        recent_integers.clear();
        old_prefix
    }

    /// Takes the prefix's vector, emptied (for the caller to build the next
    /// test case's prefix in).
    pub fn take_prefix(&mut self) -> Values {
        let mut prefix = std::mem::take(&mut self.prefix);
        prefix.clear_all();
        prefix
    }

    /// The choice values made so far (what replays this test case).
    pub fn choices(&self) -> Vec<ChoiceValue> {
        self.nodes.iter().map(|n| n.value.clone()).collect()
    }

    /// Whether the test case is still running.
    pub fn is_active(&self) -> bool {
        self.status.is_none()
    }

    /// The most choices this test case may make before it overruns.
    pub fn max_choices(&self) -> usize {
        self.max_choices
    }

    /// The serialized size of the choices made so far, as Hypothesis counts
    /// it ([`ChoiceValue::serialized_size`]).
    pub fn length(&self) -> usize {
        self.length
    }

    /// The most [`TestData::length`] may reach before the test case overruns
    /// ([`DEFAULT_MAX_LENGTH`]).
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// Whether choices past the prefix are random (generation) rather than simplest (replay).
    pub fn is_generating(&self) -> bool {
        matches!(self.mode, Mode::Generate(_))
    }

    /// The random source, when generating (also while a generated test case
    /// still follows its prefix, for decisions that are not choices).
    pub fn source(&mut self) -> Option<&mut Source> {
        match &mut self.mode {
            Mode::Generate(s) => Some(s),
            Mode::Replay | Mode::ReplayFar => None,
        }
    }

    /// Concludes the test case. Later conclusions are ignored.
    pub fn conclude(&mut self, status: Status, origin: Option<String>) {
        if self.status.is_none() {
            self.status = Some(status);
            self.origin = origin;
            let end = self.nodes.len();
            while let Some(i) = self.open_spans.pop() {
                self.spans[i].end = end;
            }
            self.open_labels.clear();
            self.recursion_depth = 0;
            self.generator_recursion_depth = 0;
        }
    }

    /// Marks the test case invalid and returns the stop signal.
    pub fn reject(&mut self) -> StopTest {
        self.conclude(Status::Invalid, None);
        StopTest
    }

    /// Opens a span. A span nested [`MAX_SPAN_DEPTH`] deep rejects the
    /// test case instead ([`TestData::too_deep`]): spans that deep come from
    /// runaway recursion.
    #[inline]
    pub fn start_span(&mut self, label: u64) {
        // Spans open a few deep (nearly all) in line; the rest, and a
        // concluded test case's, out of line.
        let depth = self.open_spans.len();
        if self.status.is_some() || depth >= SHALLOW_SPANS {
            return self.start_deep_span(label);
        }
        let repeated = self.shallow_labels[..depth].contains(&label);
        self.shallow_labels[depth] = label;
        self.push_open_span(label, depth, repeated);
    }

    /// [`TestData::start_span`] of a span [`SHALLOW_SPANS`] or more deep
    /// (or of a concluded test case: nothing).
    #[inline(never)]
    fn start_deep_span(&mut self, label: u64) {
        if self.status.is_some() {
            return;
        }
        let depth = self.open_spans.len();
        if depth >= MAX_SPAN_DEPTH {
            self.too_deep = true;
            self.conclude(Status::Invalid, None);
            return;
        }
        let open = self.open_labels.entry(label).or_insert(0);
        let repeated = *open > 0 || self.shallow_labels.contains(&label);
        *open += 1;
        self.push_open_span(label, depth, repeated);
    }

    /// Records a span opened `depth` deep, `repeated` when a span with its
    /// label is open further out.
    #[inline(always)]
    fn push_open_span(&mut self, label: u64, depth: usize, repeated: bool) {
        if repeated {
            self.recursion_depth += 1;
            if !labels::is_kind(label) {
                self.generator_recursion_depth += 1;
            }
        }
        let index = self.spans.len();
        self.spans.push(Span {
            label,
            start: self.nodes.len(),
            end: usize::MAX,
            depth,
            discarded: false,
        });
        self.open_spans.push(index);
    }

    /// Closes the innermost open span. Returns false if none was open.
    #[inline]
    pub fn stop_span(&mut self, discard: bool) -> bool {
        let Some(i) = self.open_spans.pop() else {
            return false;
        };
        let end = self.nodes.len();
        let span = &mut self.spans[i];
        span.end = end;
        span.discarded = discard;
        let label = span.label;
        // The span closed was open at this depth; whether another with its
        // label is still open, further out.
        let depth = self.open_spans.len();
        let still_open = if depth < SHALLOW_SPANS {
            self.shallow_labels[..depth].contains(&label)
        } else {
            self.close_deep_label(label)
        };
        if still_open {
            self.recursion_depth -= 1;
            if !labels::is_kind(label) {
                self.generator_recursion_depth -= 1;
            }
        }
        true
    }

    /// Counts out a span with `label` closed [`SHALLOW_SPANS`] or more
    /// deep; whether another with its label is still open.
    #[inline(never)]
    fn close_deep_label(&mut self, label: u64) -> bool {
        let deep = self.open_labels.get_mut(&label).is_some_and(|open| {
            *open -= 1;
            *open > 0
        });
        deep || self.shallow_labels.contains(&label)
    }

    /// How many spans are open.
    pub fn open_span_count(&self) -> usize {
        self.open_spans.len()
    }

    /// How deep inside a recursive value the next choice is: the number of
    /// open spans that are nested inside an open span with the same label
    /// (a generator drawing itself again, at any remove). 0 outside any
    /// recursion and at a recursive value's top level.
    ///
    /// Generation's variety heuristics hold back inside a recursion (see
    /// [`Collection`] and [`Source`]'s swarm subsets): each skews one
    /// value's distribution, which at the top of a test case is the point,
    /// but a recursive generator meets it again at every level, where it
    /// multiplies the branching. A swarm subset that leaves out a
    /// `one_of`'s leaves, or a list ten times its usual length, turns a
    /// generator whose values end (each level expecting fewer sub-values
    /// than one) into one whose values grow until a budget stops them.
    /// Inside a recursion, draws follow the generator's own distribution,
    /// but for collections, which shrink with the depth ([`Collection`]):
    /// a generator whose levels expect more than one sub-value each still
    /// makes values that end.
    pub fn recursion_depth(&self) -> usize {
        self.recursion_depth
    }

    /// Marks what is drawn from here to the end of the innermost open span
    /// (of the test case, if none is open) as a recursive value sized by a
    /// [`crate::recursion::Recursion`] scope: its collections keep their
    /// usual sizes, since the scope sizes the value ([`Collection`]).
    pub fn begin_sized_recursion(&mut self) {
        let span = self.open_spans.last().copied().unwrap_or(usize::MAX);
        self.sized_recursions.push(span);
    }

    /// Whether a sized recursive value ([`TestData::begin_sized_recursion`])
    /// is being drawn: the span it began in is still open.
    fn in_sized_recursion(&mut self) -> bool {
        while let Some(&span) = self.sized_recursions.last() {
            if span == usize::MAX || self.spans.get(span).is_some_and(|s| s.end == usize::MAX) {
                return true;
            }
            self.sized_recursions.pop();
        }
        false
    }

    /// Records a span over already-made choices (used by collections, whose
    /// element ranges need not nest with client spans).
    pub fn record_span(&mut self, label: u64, start: usize, end: usize) {
        if start < end {
            self.spans.push(Span {
                label,
                start,
                end,
                depth: self.open_spans.len(),
                discarded: false,
            });
        }
    }

    /// Whether the next choice may be made (the test case is running and
    /// below its choice budget); past the budget, the test case overruns.
    #[inline]
    fn begin_choice(&mut self) -> Result<(), StopTest> {
        if self.status.is_some() {
            return Err(StopTest);
        }
        if self.nodes.len() >= self.max_choices {
            self.conclude(Status::Overrun, None);
            return Err(StopTest);
        }
        Ok(())
    }

    /// The random source when the next choice is drawn from it afresh: while
    /// generating, past the prefix, with nothing spliced in (see
    /// [`TestData::choose`]); the recent integers come with it.
    #[inline]
    fn fresh_source(&mut self) -> Option<(&mut Source, &[i128])> {
        match &mut self.mode {
            Mode::Generate(source)
                if self.nodes.len() >= self.prefix.len() && self.splice.is_empty() =>
            {
                Some((source, &self.recent_integers))
            }
            _ => None,
        }
    }

    /// Records a choice made (its value permitted), unless its size takes
    /// the test case past its size limit (it then overruns). Inlined into
    /// each draw, where the kind of value is known: its size and whether it
    /// is an integer are then decided at compile time.
    #[inline(always)]
    fn push_choice(
        &mut self,
        constraints: Constraints,
        value: ChoiceValue,
        forced: bool,
    ) -> Result<&ChoiceValue, StopTest> {
        self.push_choice_with::<true>(value, forced, || constraints)
    }

    /// [`TestData::push_choice`], with the constraints made by `constraints`
    /// once there is room for the node. `CHECKED` false leaves out the
    /// size limit's check, for a caller that has made sure the value fits
    /// ([`Collection::integers`]' elements within the budgets).
    #[inline(always)]
    fn push_choice_with<const CHECKED: bool>(
        &mut self,
        value: ChoiceValue,
        forced: bool,
        constraints: impl FnOnce() -> Constraints,
    ) -> Result<&ChoiceValue, StopTest> {
        let size = value.serialized_size();
        if CHECKED && self.length + size > self.max_length {
            self.conclude(Status::Overrun, None);
            return Err(StopTest);
        }
        debug_assert!(self.length + size <= self.max_length);
        self.length += size;
        if let ChoiceValue::Integer(v) = value
            && self.recent_integers.len() < 16
        {
            self.recent_integers.push(v);
        }
        // The node is written straight into the vector's room, field by
        // field: a `push` of it builds it on the stack twice (around the call
        // that may grow the vector) and copies it each time.
        let nodes = &mut self.nodes.vec;
        if nodes.len() == nodes.capacity() {
            nodes.reserve(1);
        }
        let constraints = constraints();
        // Whether the node may own memory, from its parts before they are
        // written (in line, where their kinds are mostly known: nothing is
        // left to test for a boolean, the compact form's kind for an integer).
        if !(constraints.owns_nothing() && value.owns_nothing()) {
            self.nodes.may_own = true;
        }
        let nodes = &mut self.nodes.vec;
        let index = nodes.len();
        // SAFETY: `slot` points to the first spare element (`index` is below
        // the capacity, reserved above), in the vector's allocation and not
        // aliased; each field is written in place (no node is built
        // elsewhere and copied), so after the three writes the element is
        // initialised, and so are the first `index + 1`.
        unsafe {
            let slot = nodes.as_mut_ptr().add(index);
            std::ptr::addr_of_mut!((*slot).constraints).write(constraints);
            std::ptr::addr_of_mut!((*slot).value).write(value);
            std::ptr::addr_of_mut!((*slot).forced).write(forced);
            nodes.set_len(index + 1);
        }
        Ok(&nodes[index].value)
    }

    /// Makes one choice: replays the prefix if it fits, else generates (or, in
    /// replay mode, takes the simplest value). `forced` values are recorded but
    /// never come from the prefix or the random source.
    fn choose(
        &mut self,
        constraints: Constraints,
        forced: Option<ChoiceValue>,
        generate: impl FnOnce(&mut Source, &Constraints, &[i128]) -> ChoiceValue,
    ) -> Result<&ChoiceValue, StopTest> {
        self.begin_choice()?;
        let index = self.nodes.len();
        let is_forced = forced.is_some();
        let value = if let Some(forced) = forced {
            self.splice.pop_front();
            forced
        } else if let Some(recorded) = self.prefix.get_mut(index) {
            self.splice.pop_front();
            if constraints.permits(recorded) {
                // Moved out, not cloned (a string's or bytes' buffer): the
                // prefix is read only at the next choice's index from now on
                // (`prefix_value`, `fork_stream`), never at one already made.
                std::mem::replace(recorded, ChoiceValue::Boolean(false))
            } else {
                self.misaligned = true;
                constraints.simplest()
            }
        } else {
            match &mut self.mode {
                Mode::Generate(source) => {
                    source.suspend_swarm(self.recursion_depth > 0);
                    let copied = self.splice.pop_front().filter(|v| constraints.permits(v));
                    if copied.is_none() && !self.splice.is_empty() {
                        self.splice.clear();
                    }
                    let v = match copied {
                        Some(v) => v,
                        None => generate(source, &constraints, &self.recent_integers),
                    };
                    debug_assert!(constraints.permits(&v), "{v:?} under {constraints:?}");
                    if constraints.permits(&v) {
                        v
                    } else {
                        constraints.simplest()
                    }
                }
                Mode::Replay => constraints.simplest(),
                Mode::ReplayFar => constraints.far_value(),
            }
        };
        self.push_choice(constraints, value, is_forced)
    }

    /// Draws a boolean that is the simplest (`false`) past the prefix of
    /// any replay, also one far from the simplest values.
    fn draw_boolean_ending_replay(&mut self, p: f64) -> Result<bool, StopTest> {
        if !matches!(self.mode, Mode::ReplayFar) {
            return self.draw_boolean(p);
        }
        self.mode = Mode::Replay;
        let drawn = self.draw_boolean(p);
        self.mode = Mode::ReplayFar;
        drawn
    }

    /// The prefix's value for the next choice, when it is there (a value
    /// replayed as [`TestData::choose`] replays it, for the draws' fast
    /// paths: the caller checks that it fits).
    #[inline]
    fn prefix_value(&self) -> Option<&ChoiceValue> {
        if self.status.is_some() || self.nodes.len() >= self.max_choices {
            return None;
        }
        self.prefix.get(self.nodes.len())
    }

    /// Draws an integer.
    pub fn draw_integer(&mut self, c: IntegerConstraints) -> Result<i128, StopTest> {
        self.draw_integer_with::<true>(&c, || compact_integer(&c))
    }

    /// Draws an integer with constraints prepared for it (a schema's, or a
    /// caller's that draws with the same ones many times): nothing is
    /// converted per draw. In line: a collection's loop calls it for every
    /// element, and the call cost a tenth of the draw.
    #[inline(always)]
    pub fn draw_prepared_integer(
        &mut self,
        c: &PreparedIntegerConstraints,
    ) -> Result<i128, StopTest> {
        self.draw_integer_with::<true>(c.constraints(), || c.compact().clone())
    }

    /// [`TestData::draw_prepared_integer`] for a caller that has made sure
    /// the test case is running, below its choice budget, and has room for
    /// [`MAX_INTEGER_SIZE`] more of its size limit: the same choice,
    /// without those checks.
    #[inline(always)]
    fn draw_prepared_integer_in_budget(
        &mut self,
        c: &PreparedIntegerConstraints,
    ) -> Result<i128, StopTest> {
        debug_assert!(self.is_active() && self.nodes.len() < self.max_choices);
        debug_assert!(self.length + MAX_INTEGER_SIZE <= self.max_length);
        self.draw_integer_with::<false>(c.constraints(), || c.compact().clone())
    }

    /// Draws an integer under `c`, recorded with `compact()`'s form of it.
    /// `CHECKED` false leaves out the checks of the test case's state and
    /// budgets ([`TestData::draw_prepared_integer_in_budget`]).
    #[inline(always)]
    fn draw_integer_with<const CHECKED: bool>(
        &mut self,
        c: &IntegerConstraints,
        compact: impl FnOnce() -> CompactIntegerConstraints,
    ) -> Result<i128, StopTest> {
        // The common cases first: a fresh draw, which is always permitted,
        // and a replayed value that fits (as `choose` makes them); both are
        // recorded by the one push below.
        let in_budget = !CHECKED || (self.is_active() && self.nodes.len() < self.max_choices);
        let v = if in_budget && let Some((source, recent)) = self.fresh_source() {
            let v = crate::random::integer_value(source, c, recent);
            debug_assert!(c.permits(v), "{v} under {c:?}");
            v
        } else if let Some(&ChoiceValue::Integer(v)) = if CHECKED {
            self.prefix_value()
        } else {
            self.prefix.get(self.nodes.len())
        } && c.permits(v)
        {
            self.splice.pop_front();
            v
        } else if let Some(v) = self.spliced_integer::<CHECKED>(c) {
            v
        } else {
            return match self.choose(
                Constraints::Integer(compact()),
                None,
                crate::random::integer,
            )? {
                ChoiceValue::Integer(v) => Ok(*v),
                _ => unreachable!("integer constraints produce integers"),
            };
        };
        self.push_choice_with::<CHECKED>(ChoiceValue::Integer(v), false, || {
            Constraints::Integer(compact())
        })?;
        Ok(v)
    }

    /// The next spliced value (a copy of an earlier element's choices: see
    /// [`Collection::more`]), taken as [`TestData::choose`] takes it while
    /// generating past the prefix, when it is an integer `c` permits.
    /// (`CHECKED` false: the caller has checked the test case's state and
    /// budget.)
    #[inline(always)]
    fn spliced_integer<const CHECKED: bool>(&mut self, c: &IntegerConstraints) -> Option<i128> {
        if (CHECKED && (!self.is_active() || self.nodes.len() >= self.max_choices))
            || self.nodes.len() < self.prefix.len()
        {
            return None;
        }
        let Mode::Generate(source) = &mut self.mode else {
            return None;
        };
        match self.splice.front() {
            Some(&ChoiceValue::Integer(v)) if c.permits(v) => {
                source.suspend_swarm(self.recursion_depth > 0);
                self.splice.pop_front();
                Some(v)
            }
            _ => None,
        }
    }

    /// Records a forced integer choice.
    pub fn force_integer(&mut self, c: IntegerConstraints, v: i128) -> Result<i128, StopTest> {
        let compact = compact_integer(&c);
        self.choose(
            Constraints::Integer(compact),
            Some(ChoiceValue::Integer(v)),
            crate::random::integer,
        )?;
        Ok(v)
    }

    /// Draws a float.
    pub fn draw_float(&mut self, c: FloatConstraints) -> Result<f64, StopTest> {
        match self.choose(Constraints::Float(c), None, crate::random::float)? {
            ChoiceValue::Float(v) => Ok(*v),
            _ => unreachable!("float constraints produce floats"),
        }
    }

    /// Draws a boolean that is true with probability `p` during generation.
    pub fn draw_boolean(&mut self, p: f64) -> Result<bool, StopTest> {
        if p <= 0.0 {
            return self.force_boolean(p, false);
        }
        if p >= 1.0 {
            return self.force_boolean(p, true);
        }
        if self.is_active()
            && self.nodes.len() < self.max_choices
            && let Some((source, _)) = self.fresh_source()
        {
            let v = crate::random::boolean_value(source, p);
            self.push_choice(Constraints::Boolean { p }, ChoiceValue::Boolean(v), false)?;
            return Ok(v);
        }
        // Strictly between 0 and 1, `p` permits either value.
        if let Some(&ChoiceValue::Boolean(v)) = self.prefix_value() {
            self.splice.pop_front();
            self.push_choice(Constraints::Boolean { p }, ChoiceValue::Boolean(v), false)?;
            return Ok(v);
        }
        match self.choose(Constraints::Boolean { p }, None, crate::random::boolean)? {
            ChoiceValue::Boolean(v) => Ok(*v),
            _ => unreachable!("boolean constraints produce booleans"),
        }
    }

    /// Records a forced boolean choice. (Inlined into [`Collection::more`],
    /// where every element of a collection with a minimum size forces one.)
    #[inline(always)]
    pub fn force_boolean(&mut self, p: f64, v: bool) -> Result<bool, StopTest> {
        // As `choose` records a forced value, without its other cases.
        self.begin_choice()?;
        if !self.splice.is_empty() {
            self.splice.pop_front();
        }
        self.push_choice(Constraints::Boolean { p }, ChoiceValue::Boolean(v), true)?;
        Ok(v)
    }

    /// Draws a byte string.
    pub fn draw_bytes(&mut self, size: SizeConstraints) -> Result<Vec<u8>, StopTest> {
        match self.choose(Constraints::Bytes(size), None, crate::random::bytes)? {
            ChoiceValue::Bytes(v) => Ok(v.clone()),
            _ => unreachable!("bytes constraints produce bytes"),
        }
    }

    /// Draws a string over `alphabet`, as code points.
    pub fn draw_string(
        &mut self,
        alphabet: Arc<CharSet>,
        size: SizeConstraints,
    ) -> Result<Vec<u32>, StopTest> {
        self.draw_string_with(alphabet, size, <[u32]>::to_vec)
    }

    /// Draws a string over `alphabet` and returns `f` of its code points,
    /// read where the choice is recorded (no copy of them is made).
    pub fn draw_string_with<R>(
        &mut self,
        alphabet: Arc<CharSet>,
        size: SizeConstraints,
        f: impl FnOnce(&[u32]) -> R,
    ) -> Result<R, StopTest> {
        match self.choose(
            Constraints::String { alphabet, size },
            None,
            crate::random::string,
        )? {
            ChoiceValue::String(v) => Ok(f(v)),
            _ => unreachable!("string constraints produce strings"),
        }
    }
}

std::thread_local! {
    /// The integer constraints too wide to be held in line that this thread
    /// last drew with: the next choice drawn with the same ones shares them
    /// ([`CompactIntegerConstraints::Wide`]) rather than allocating again (a
    /// thread-local, not a field of [`TestData`], which a client swaps in
    /// and out of its test cases by value).
    static LAST_WIDE_INTEGER: std::cell::RefCell<Option<Arc<IntegerConstraints>>> =
        const { std::cell::RefCell::new(None) };
}

/// `c` as a choice records it: in line when it fits, else shared with
/// the last choice drawn on this thread with the same wide constraints.
#[inline]
fn compact_integer(c: &IntegerConstraints) -> CompactIntegerConstraints {
    match CompactIntegerConstraints::narrow(c) {
        Some(narrow) => narrow,
        None => wide_integer(c),
    }
}

/// `c`, too wide to be held in line, behind an `Arc` shared with the last
/// choice this thread drew with the same constraints.
#[cold]
fn wide_integer(c: &IntegerConstraints) -> CompactIntegerConstraints {
    let shared = LAST_WIDE_INTEGER.with_borrow_mut(|last| match last {
        Some(last) if **last == *c => last.clone(),
        _ => {
            let new = Arc::new(*c);
            *last = Some(new.clone());
            new
        }
    });
    CompactIntegerConstraints::Wide(shared)
}

/// What a [`Marked`] vector holds: a choice node or value, which knows
/// whether it owns memory (a string's or bytes' buffer, shared constraints).
pub trait MayOwn {
    /// Whether dropping it frees nothing.
    fn owns_nothing(&self) -> bool;
}

impl MayOwn for ChoiceNode {
    #[inline(always)]
    fn owns_nothing(&self) -> bool {
        ChoiceNode::owns_nothing(self)
    }
}

impl MayOwn for ChoiceValue {
    #[inline(always)]
    fn owns_nothing(&self) -> bool {
        ChoiceValue::owns_nothing(self)
    }
}

/// A vector that knows whether any of its elements may own memory, so that
/// emptying it for the next test case skips the destructors without
/// looking at each (nearly every choice is a number or a boolean, which
/// owns nothing; a scan of them was 3% of a generated list of 100
/// integers' instructions).
///
/// Reads go through `Deref` to the vector. A change through `DerefMut` (any
/// `&mut` use from outside: a push, an element replaced, a swap of the
/// vectors) marks it as maybe owning memory, so its next emptying runs the
/// destructors; only writers that say what they write keep the mark clear
/// ([`TestData`]'s own pushes of nodes, [`Marked::append_with`]). The mark
/// travels with the vector when a whole `Marked` is moved or swapped.
#[derive(Clone, Debug)]
pub struct Marked<T> {
    vec: Vec<T>,
    /// False only when no element owns memory ([`MayOwn::owns_nothing`]).
    may_own: bool,
}

/// A test case's choices.
pub type Nodes = Marked<ChoiceNode>;

/// A vector of choice values: a test case's prefix, a mutation's choices (a
/// mutation's prefix copies every choice of the test case it mutates,
/// hundreds, nearly all numbers and booleans).
pub type Values = Marked<ChoiceValue>;

impl<T: MayOwn> Marked<T> {
    /// Elements of `vec` (which may own memory).
    pub fn from_vec(vec: Vec<T>) -> Marked<T> {
        Marked { vec, may_own: true }
    }

    /// The vector.
    pub fn into_vec(self) -> Vec<T> {
        self.vec
    }

    /// Whether no element owns memory, as marked: when true, every element
    /// is sure to own nothing (unsafe code may rely on it: the mark is set
    /// by any write that may own memory and any `&mut` use of the vector,
    /// and cleared only with the vector emptied).
    #[inline]
    pub fn owns_nothing(&self) -> bool {
        !self.may_own
    }

    /// Elements of `vec`, marked as owning nothing when none does (a scan).
    pub fn scanned(vec: Vec<T>) -> Marked<T> {
        let may_own = !vec.iter().all(T::owns_nothing);
        Marked { vec, may_own }
    }

    /// Whether an element may own memory (false only when none does).
    #[cfg(test)]
    pub(crate) fn may_own(&self) -> bool {
        self.may_own
    }

    /// Appends elements by `write`, which returns whether it appended one
    /// that may own memory (false only when none does).
    #[inline]
    pub fn append_with(&mut self, write: impl FnOnce(&mut Vec<T>) -> bool) {
        // Marked first: should `write` panic midway, what it appended is
        // still dropped properly.
        let may_own = self.may_own;
        self.may_own = true;
        let owns = write(&mut self.vec);
        self.may_own = may_own || owns;
    }

    /// Empties it, keeping its allocation; the destructors run only when an
    /// element may own memory.
    #[inline]
    pub fn clear_all(&mut self) {
        if self.may_own {
            self.vec.clear();
            self.may_own = false;
        } else {
            debug_assert!(self.vec.iter().all(T::owns_nothing));
            // SAFETY: a length of zero exposes no element, initialised or
            // not; and no element let go of without its destructor owns
            // memory (`may_own` is false: every element came from a write
            // that said so), so nothing leaks.
            unsafe { self.vec.set_len(0) }
        }
    }
}

impl<T> Default for Marked<T> {
    /// Empty, owning nothing.
    fn default() -> Marked<T> {
        Marked {
            vec: Vec::new(),
            may_own: false,
        }
    }
}

impl<T> std::ops::Deref for Marked<T> {
    type Target = Vec<T>;

    #[inline]
    fn deref(&self) -> &Vec<T> {
        &self.vec
    }
}

impl<T> std::ops::DerefMut for Marked<T> {
    /// Whatever the caller does with the vector, its elements may own
    /// memory after.
    #[inline]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        self.may_own = true;
        &mut self.vec
    }
}

impl<'a, T> IntoIterator for &'a Marked<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.vec.iter()
    }
}

impl<T: MayOwn> From<Vec<T>> for Marked<T> {
    fn from(vec: Vec<T>) -> Marked<T> {
        Marked::from_vec(vec)
    }
}

/// Sizing of a variable-length collection by a sequence of "one more?" choices.
///
/// The expected size is `average_size`; below `min_size` the choice is forced
/// true and at `max_size` forced false, so shrinking deletes elements by
/// deleting choices. Each element's range, including its deciding choice, is
/// recorded as a span so the shrinker can delete or reorder whole elements.
#[derive(Clone, Debug)]
pub struct Collection {
    min_size: usize,
    max_size: usize,
    p_continue: f64,
    count: usize,
    rejections: usize,
    element_start: Option<usize>,
    /// Each finished element's choices, after its "more" choice.
    elements: Vec<(usize, usize)>,
    finished: bool,
    /// Whether the size scale for generation has been drawn yet.
    scaled: bool,
    average: f64,
}

impl Collection {
    /// A collection with Hypothesis' standard average size: min(max(2*min, min+5), (min+max)/2).
    pub fn new(min_size: usize, max_size: Option<usize>) -> Collection {
        let max = max_size.unwrap_or(usize::MAX);
        let average =
            ((min_size * 2).max(min_size + 5) as f64).min(0.5 * (min_size as f64 + max as f64));
        Collection::with_average(min_size, max, average)
    }

    /// A collection with an explicit average size.
    pub fn with_average(min_size: usize, max_size: usize, average: f64) -> Collection {
        let p_continue = continue_probability(average - min_size as f64, max_size - min_size);
        Collection {
            min_size,
            max_size,
            p_continue,
            count: 0,
            rejections: 0,
            element_start: None,
            elements: Vec::new(),
            finished: false,
            scaled: false,
            average,
        }
    }

    /// Keeps the usual average size even when generating (for repetitions whose
    /// checks grow costly with length, like regex matching).
    pub fn without_scaling(mut self) -> Collection {
        self.scaled = true;
        self
    }

    /// Number of elements accepted so far.
    pub fn count(&self) -> usize {
        self.count
    }

    #[inline(always)]
    fn close_element(&mut self, data: &mut TestData) {
        if !data.splice.is_empty() {
            data.splice.clear();
        }
        if let Some(start) = self.element_start.take() {
            let end = data.nodes.len();
            data.record_span(labels::COLLECTION_ELEMENT, start, end);
            if start < end && self.elements.len() < MAX_COPY_SOURCES {
                if self.elements.is_empty() {
                    self.first_copy_source(data);
                }
                self.elements.push((start + 1, end));
            }
        }
    }

    /// Readies the vector of copy sources for the first: the vector an
    /// earlier collection left (without its allocation, fewer regrowths
    /// than from the default of four, and none for the elements a minimum
    /// size promises).
    #[cold]
    #[inline(never)]
    fn first_copy_source(&mut self, data: &mut TestData) {
        if self.elements.capacity() == 0 {
            self.elements = std::mem::take(&mut data.spare_copy_sources);
        }
        self.elements
            .reserve(self.min_size.clamp(16, MAX_COPY_SOURCES));
    }

    /// Now and then, while generating, an element starts as a copy of an
    /// earlier one (Hypothesis copies spans that share a label): equal
    /// elements are what many bugs need (a duplicate in a list, two equal
    /// keys) and are rare at random. The decision comes from the random
    /// source, not a choice; the copied values are ordinary choices.
    #[inline(always)]
    fn maybe_copy_element(&mut self, data: &mut TestData) {
        if self.elements.is_empty() {
            return;
        }
        let Some(source) = data.source() else { return };
        if !source.unit_below(COPY_END) {
            return;
        }
        self.copy_element(data);
    }

    /// Starts the next element as a copy of an earlier one, drawn from the
    /// random source (see [`Collection::maybe_copy_element`]).
    #[cold]
    #[inline(never)]
    fn copy_element(&self, data: &mut TestData) {
        let Some(source) = data.source() else { return };
        let (start, end) = self.elements[source.below(self.elements.len() as u64) as usize];
        // Generated next, in order, as long as each fits the choice it is
        // offered to (a prefix still takes precedence over them, position
        // by position); recorded as ordinary choices, so shrinking treats
        // them like any.
        // (Pushed one by one: an element is one choice or a few, which an
        // `extend` through an iterator costs more to set up than to copy.)
        data.splice.clear();
        for node in &data.nodes[start..end] {
            data.splice.push_back(node.value.clone());
        }
    }

    /// Sizes that vary find more bugs than sizes that are always small: when
    /// generating, a collection is now and then large, [`SCALE`] times its
    /// usual extra elements (beyond the minimum), at most half its room. How
    /// often is set by what that costs: large collections add at most
    /// [`SCALE_BUDGET`] of the usual extra elements to the expected length,
    /// and at most one collection in [`P_SCALE_MAX`]`^-1` is large. A
    /// collection with little room (large is at most 5.6 times usual: a
    /// `max_size` of 20, or a state machine's 50 steps, 25 large for the
    /// usual 5 or 10) is large at that most; an unbounded one (50 extra
    /// elements for the usual 5) one time in 15, so its lengths keep
    /// Hypothesis' average (5) within 60% while one in 25 reaches 30
    /// elements (hegel-cpp's CanProduceLongLists). That is the length of
    /// a collection generated at random; a run's test cases are longer on
    /// average, by the run's own design, not this one's (measured
    /// 2026-11-26 for an unbounded list of integers, 20,000 test cases x 5
    /// seeds, generation only: 10.3 elements per test case). The 52% of
    /// them generated after the tree's novel prefix average 9.3, not 8.0:
    /// the empty list ends the simplest test case and is then exhausted, so
    /// the prefix never draws it again (1.5 expected; the rest of the
    /// prefix takes 0.2 back). The 48% that are mutations average 11.4:
    /// their bases are the longer test cases, and a copy of an element's
    /// "more" choice onto the final one lengthens the list, generation
    /// going on past it. The
    /// scale comes from the random source, not a choice, so replay is
    /// unaffected; the roll is drawn for every collection, so a collection
    /// whose scale changes nothing draws the same random values as one whose
    /// scale does.
    ///
    /// Inside a recursive value ([`TestData::recursion_depth`] `> 0`) a
    /// collection is never scaled up, and `d` levels inside a value that a
    /// generator draws of itself (repeated labels that name generators, not
    /// kinds: [`labels::is_kind`]) it expects `1 / (1 + d)` of its usual
    /// extra elements (see [`nested_extra`]), unless a
    /// [`crate::recursion::Recursion`] scope sizes the value (then it keeps
    /// its usual size: the scope steers the value's size by its branches).
    fn draw_scale(&mut self, data: &mut TestData) {
        self.scaled = true;
        if data.recursion_depth > 0 {
            let depth = data.generator_recursion_depth;
            if depth > 0 && !data.in_sized_recursion() {
                let extra = nested_extra(self.average - self.min_size as f64, depth);
                self.p_continue = continue_probability(extra, self.max_size - self.min_size);
            }
            return;
        }
        let Some(source) = data.source() else { return };
        let roll = source.unit();
        let usual = (self.average - self.min_size as f64).max(1.0);
        let room = self.max_size - self.min_size;
        let large = if room == usize::MAX {
            usual * SCALE
        } else {
            (usual * SCALE).min(room as f64 / 2.0)
        };
        if large <= usual || roll >= scale_probability(usual, large) {
            return;
        }
        self.p_continue = continue_probability(large, room);
    }

    /// Whether to produce another element.
    ///
    /// In line, for the commonest case: an element a minimum size forces,
    /// with room for its forced choice (every element of a list of fixed
    /// size); [`Collection::more_at_large`] does the rest, and does the
    /// same for this case.
    #[inline]
    pub fn more(&mut self, data: &mut TestData) -> Result<bool, StopTest> {
        self.more_in_line(data)
    }

    /// [`Collection::more`], always in line.
    #[inline(always)]
    fn more_in_line(&mut self, data: &mut TestData) -> Result<bool, StopTest> {
        if self.scaled
            && !self.finished
            && self.count < self.min_size
            && data.status.is_none()
            && data.nodes.len() < data.max_choices
            && data.length < data.max_length
        {
            self.forced_element(data);
            return Ok(true);
        }
        self.more_at_large(data)
    }

    /// Starts an element that the minimum size forces, in a test case that
    /// is running, below its choice budget and below its size limit (what
    /// [`Collection::more_at_large`] does then).
    #[inline(always)]
    fn forced_element(&mut self, data: &mut TestData) {
        self.close_element(data);
        // As `force_boolean` records it (the splice is empty: closing
        // the element emptied it), and can: there is room (a boolean's
        // size is 1).
        let start = data.nodes.len();
        let p = self.p_continue;
        let _ = data.push_choice_with::<false>(ChoiceValue::Boolean(true), true, || {
            Constraints::Boolean { p }
        });
        self.count += 1;
        self.element_start = Some(start);
        self.maybe_copy_element(data);
    }

    /// How many of the elements the minimum size still forces surely fit
    /// the test case's budgets, each a forced boolean and one integer
    /// ([`Collection::integers`]): none unless the next element would be
    /// started by [`Collection::more_in_line`]'s forced case.
    #[inline(always)]
    fn forced_in_budget(&self, data: &TestData) -> usize {
        if !self.scaled || self.finished || self.count >= self.min_size || data.status.is_some() {
            return 0;
        }
        let by_choices = data.max_choices.saturating_sub(data.nodes.len()) / 2;
        let by_length = data.max_length.saturating_sub(data.length) / (1 + MAX_INTEGER_SIZE);
        (self.min_size - self.count).min(by_choices).min(by_length)
    }

    /// [`Collection::more`], every case.
    #[inline(never)]
    fn more_at_large(&mut self, data: &mut TestData) -> Result<bool, StopTest> {
        self.close_element(data);
        if !self.scaled {
            self.draw_scale(data);
        }
        if self.finished {
            return Ok(false);
        }
        let start = data.nodes.len();
        let more = if self.count < self.min_size {
            data.force_boolean(self.p_continue, true)?
        } else if self.count >= self.max_size {
            data.force_boolean(self.p_continue, false)?
        } else {
            // In replay mode past the prefix the simplest choice (false) ends
            // the collection, so shrinking never grows collections; so does
            // a replay far from the simplest values (a collection going on
            // would only run past the choices the shrinker allows).
            data.draw_boolean_ending_replay(self.p_continue)?
        };
        if more {
            self.count += 1;
            self.element_start = Some(start);
            self.maybe_copy_element(data);
        } else {
            self.finished = true;
            // Its copy sources are done with: the vector goes to the next
            // collection.
            if self.elements.capacity() > data.spare_copy_sources.capacity() {
                self.elements.clear();
                data.spare_copy_sources = std::mem::take(&mut self.elements);
            }
        }
        Ok(more)
    }

    /// `while self.more(data)? { each(data.draw_prepared_integer(c)?) }`:
    /// the elements of a collection of integers drawn under `c` (the
    /// commonest collection), in a loop of their own.
    #[inline(never)]
    pub fn integers(
        &mut self,
        data: &mut TestData,
        c: &PreparedIntegerConstraints,
        mut each: impl FnMut(i128),
    ) -> Result<(), StopTest> {
        loop {
            // The elements the minimum size forces, as many as surely fit
            // the test case's budgets (a list of fixed size: all but the
            // first), without checks of those budgets: nothing they do can
            // conclude the test case. The same choices as `more` and
            // `draw_prepared_integer` make.
            let forced = self.forced_in_budget(data);
            if forced > 0 {
                for _ in 0..forced {
                    self.forced_element(data);
                    each(data.draw_prepared_integer_in_budget(c)?);
                }
                continue;
            }
            if !self.more_in_line(data)? {
                return Ok(());
            }
            each(data.draw_prepared_integer(c)?);
        }
    }

    /// The last element was not kept (e.g. a duplicate in a unique collection).
    /// After too many rejections the collection stops; below `min_size` that
    /// makes the test case invalid.
    pub fn reject(&mut self, data: &mut TestData) -> Result<(), StopTest> {
        self.count = self.count.saturating_sub(1);
        // A rejected copy counts like any other rejection: whether an element
        // was a copy comes from the random source, and what the collection
        // does next must depend on the choices alone (the same choices must
        // ask for the same things, or replay reports the test as flaky).
        self.rejections += 1;
        if self.rejections > (2 * self.count).max(3) {
            if self.count < self.min_size {
                return Err(data.reject());
            }
            self.finished = true;
        }
        Ok(())
    }
}

/// The extra elements (beyond the minimum) a collection expects `depth`
/// levels inside a recursive value, of `extra` at the top.
///
/// A recursive generator whose values hold collections of themselves (a
/// deferred JSON value: a one_of of five, two of them collections of
/// itself) expects `b * m` sub-values per value, `b` the chance it is a
/// collection and `m` the collection's mean length; at `b = 2/5, m = 5`
/// that is 2, a supercritical branching process: a fifth of its values
/// never end, and each is generated until the span depth limit rejects it
/// (30% of the test cases of hegeltest 0.51's recursive find test). The
/// values that do end are small: conditioned on ending, that process's
/// values are collections one time in four, of mean length 2. Shrinking the
/// collections with the depth makes every such generator end on its own,
/// without giving up the top level's sizes (nor the variety a recursive
/// value has below it: a collection at depth 1 still expects half its
/// usual length). Depth counts nested spans that repeat a label, so one
/// level of a recursive value is typically two to four of them.
fn nested_extra(extra: f64, depth: usize) -> f64 {
    extra / (1.0 + depth as f64)
}

/// A large generated collection's extra elements, in multiples of its usual
/// extra elements ([`Collection::draw_scale`]).
const SCALE: f64 = 10.0;
/// The most large collections may add to a collection's expected extra
/// elements, as a fraction of the usual extra elements.
const SCALE_BUDGET: f64 = 0.6;
/// How often at most a generated collection is large.
const P_SCALE_MAX: f64 = 0.13;

/// How often a generated collection whose usual extra elements are `usual`
/// is large (`large` extra elements, more than `usual`): as often as
/// [`SCALE_BUDGET`] allows, at most [`P_SCALE_MAX`].
fn scale_probability(usual: f64, large: f64) -> f64 {
    (SCALE_BUDGET * usual / (large - usual)).min(P_SCALE_MAX)
}

/// How often a generated element starts as a copy of an earlier one.
const COPY_PROBABILITY: f64 = 0.1;
/// [`COPY_PROBABILITY`] as an end of the unit float's top bits
/// ([`crate::random::unit_end`]).
const COPY_END: u64 = crate::random::unit_end(COPY_PROBABILITY);
/// The earlier elements a collection remembers as copy sources.
const MAX_COPY_SOURCES: usize = 64;

/// The probability of continuing that gives the desired average number of
/// extra elements. A bounded collection's is solved for (50 bisection steps),
/// so the last few answers are kept per thread: a test draws the same few
/// collections in every test case.
fn continue_probability(desired_extra: f64, max_extra: usize) -> f64 {
    type Solved = [(u64, usize, f64); 8];
    thread_local! {
        static SOLVED: std::cell::Cell<(Solved, usize)> =
            const { std::cell::Cell::new(([(u64::MAX, 0, 0.0); 8], 0)) };
    }
    if desired_extra <= 0.0 || max_extra == 0 || max_extra == usize::MAX {
        return solve_continue_probability(desired_extra, max_extra);
    }
    let key = (desired_extra.to_bits(), max_extra);
    let (mut solved, next) = SOLVED.get();
    if let Some(&(_, _, p)) = solved.iter().find(|(d, m, _)| (*d, *m) == key) {
        return p;
    }
    let p = solve_continue_probability(desired_extra, max_extra);
    solved[next] = (key.0, key.1, p);
    SOLVED.set((solved, (next + 1) % solved.len()));
    p
}

fn solve_continue_probability(desired_extra: f64, max_extra: usize) -> f64 {
    if desired_extra <= 0.0 || max_extra == 0 {
        return 0.0;
    }
    if max_extra == usize::MAX {
        return 1.0 - 1.0 / (1.0 + desired_extra);
    }
    // For a bounded collection, solve for p such that the expected length of a
    // truncated geometric distribution equals desired_extra (bisection).
    let expected = |p: f64| -> f64 {
        let n = max_extra as f64;
        if p >= 1.0 {
            return n;
        }
        // E = sum_{k=1..n} p^k = p(1-p^n)/(1-p)
        p * (1.0 - p.powf(n)) / (1.0 - p)
    };
    if desired_extra >= max_extra as f64 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..50 {
        let mid = (lo + hi) / 2.0;
        if expected(mid) < desired_extra {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo.clamp(0.0, 0.999)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test case of a prefix, a choice budget and a seed.
    type Restart = fn(Vec<ChoiceValue>, usize, u64) -> TestData;

    /// [`MAX_INTEGER_SIZE`] is the largest size an integer choice has.
    #[test]
    fn max_integer_size_is_the_largest() {
        let sizes = [i128::MIN, i128::MAX, i128::from(i64::MIN), 0]
            .map(|v| ChoiceValue::Integer(v).serialized_size());
        assert_eq!(sizes.iter().max(), Some(&MAX_INTEGER_SIZE));
    }

    /// [`Collection::integers`] (whose forced elements within the budgets
    /// skip the budgets' checks) makes the same choices, spans, values and
    /// outcome as the general loop of `more` and `draw_prepared_integer`,
    /// generating and replaying, also where a test case runs out of
    /// choices or of size in the middle of a list.
    #[test]
    fn integers_loop_makes_the_general_loops_choices() {
        let general = |data: &mut TestData, c: &PreparedIntegerConstraints, min, max| {
            data.start_span(labels::COLLECTION);
            let mut collection = Collection::new(min, max);
            let mut out = Vec::new();
            let result = (|| {
                while collection.more(data)? {
                    out.push(data.draw_prepared_integer(c)?);
                }
                Ok(())
            })();
            data.stop_span(false);
            (result, out)
        };
        let fast = |data: &mut TestData, c: &PreparedIntegerConstraints, min, max| {
            data.start_span(labels::COLLECTION);
            let mut collection = Collection::new(min, max);
            let mut out = Vec::new();
            let result = collection.integers(data, c, |v| out.push(v));
            data.stop_span(false);
            (result, out)
        };
        let seen = |data: &TestData| {
            (
                format!("{:?}", &*data.nodes),
                data.spans.clone(),
                data.status,
                data.length(),
                data.misaligned,
            )
        };
        let constraints = [
            PreparedIntegerConstraints::new(IntegerConstraints::UNBOUNDED),
            PreparedIntegerConstraints::new(IntegerConstraints::bounded(-3, 3)),
            // Wide, 19 bytes an element: 600 overrun the size limit.
            PreparedIntegerConstraints::new(IntegerConstraints::bounded(i128::MIN, i128::MIN + 9)),
        ];
        let sizes = [
            (0, None),
            (3, Some(3)),
            (100, Some(100)),
            (20, Some(40)),
            (600, None),
        ];
        // Under Miri (for the unsafe writes of the nodes), a few: small
        // lists, overrunning the choice budget, and one seed.
        let (sizes, budgets, seeds) = if cfg!(miri) {
            (&sizes[1..2], &[7, 201][..], 1)
        } else {
            (&sizes[..], &[7, 50, 201, DEFAULT_MAX_CHOICES][..], 6)
        };
        for c in &constraints {
            for &(min, max) in sizes {
                for &max_choices in budgets {
                    for seed in 0..seeds {
                        let mut a =
                            TestData::generating(Vec::new(), Source::from_seed(seed), max_choices);
                        let mut b =
                            TestData::generating(Vec::new(), Source::from_seed(seed), max_choices);
                        let (ra, oa) = general(&mut a, c, min, max);
                        let (rb, ob) = fast(&mut b, c, min, max);
                        assert_eq!(
                            (ra, &oa),
                            (rb, &ob),
                            "{c:?} {min} {max:?} {max_choices} {seed}"
                        );
                        assert_eq!(seen(&a), seen(&b));
                        // Replays of a prefix of those choices (with one
                        // changed), then generation or simplest values.
                        let mut prefix = a.choices();
                        prefix.truncate(prefix.len() / 2);
                        if let Some(last) = prefix.last_mut() {
                            *last = ChoiceValue::Boolean(false);
                        }
                        let modes: [Restart; 3] = [
                            |p, m, seed| TestData::generating(p, Source::from_seed(seed + 99), m),
                            |p, m, _| TestData::replaying(p, m),
                            |p, m, _| TestData::replaying_far(p, m),
                        ];
                        for mode in modes {
                            let mut a = mode(prefix.clone(), max_choices, seed);
                            let mut b = mode(prefix.clone(), max_choices, seed);
                            let (ra, oa) = general(&mut a, c, min, max);
                            let (rb, ob) = fast(&mut b, c, min, max);
                            assert_eq!((ra, &oa), (rb, &ob));
                            assert_eq!(seen(&a), seen(&b));
                        }
                    }
                }
            }
        }
    }

    /// A vector of values is emptied without its destructors only while
    /// every write into it said it owns nothing; one through `DerefMut`, a
    /// write that owns memory, or a vector from outside runs them (under
    /// Miri a value let go of without its destructor is a leak).
    #[test]
    fn values_free_what_they_own() {
        let mut values = Values::default();
        values.append_with(|v| {
            v.extend([ChoiceValue::Integer(3), ChoiceValue::Boolean(true)]);
            false
        });
        assert!(!values.may_own);
        values.clear_all();
        assert!(values.is_empty() && !values.may_own);
        values.append_with(|v| {
            v.push(ChoiceValue::Bytes(vec![1, 2]));
            true
        });
        // A later write that owns nothing keeps the mark.
        values.append_with(|v| {
            v.push(ChoiceValue::Float(1.5));
            false
        });
        assert!(values.may_own && values.len() == 2);
        values.clear_all();
        assert!(values.is_empty() && !values.may_own);
        values.push(ChoiceValue::String(vec![0x41]));
        assert!(values.may_own);
        let moved = std::mem::take(&mut values);
        assert!(moved.may_own && !values.may_own);
        let mut outside = Values::from(vec![ChoiceValue::Bytes(vec![9])]);
        assert!(outside.may_own);
        outside.clear_all();
        assert_eq!(moved.into_vec(), vec![ChoiceValue::String(vec![0x41])]);
        // Through a restart, a prefix from outside is freed too.
        let mut data =
            TestData::generating(vec![ChoiceValue::Bytes(vec![7])], Source::from_seed(1), 10);
        let old = data.restart_generating(Values::default(), Source::from_seed(2), 10);
        assert!(old.is_empty() && !old.may_own);
        assert!(data.take_prefix().is_empty());
    }

    /// A restarted test case lets go of its nodes' memory (strings, bytes,
    /// shared wide integer bounds) whether they were drawn or put there from
    /// outside, and of nodes that own nothing without their destructors:
    /// under Miri a node let go of without its destructor is a leak.
    #[test]
    fn restart_frees_what_nodes_own() {
        let wide = IntegerConstraints::bounded(0, i128::from(u64::MAX));
        let size = SizeConstraints {
            min_size: 1,
            max_size: 4,
        };
        let mut data = TestData::generating(Vec::new(), Source::from_seed(3), 100);
        for round in 0..4 {
            data.draw_integer(IntegerConstraints::UNBOUNDED).unwrap();
            data.draw_boolean(0.5).unwrap();
            assert!(data.nodes.iter().all(ChoiceNode::owns_nothing));
            assert!(!data.nodes.may_own, "plain draws keep the mark clear");
            match round {
                0 => {
                    data.draw_bytes(size).unwrap();
                }
                1 => {
                    data.draw_integer(wide).unwrap();
                }
                2 => {
                    // From outside, through `DerefMut`.
                    data.nodes.push(ChoiceNode {
                        constraints: Constraints::Bytes(size),
                        value: ChoiceValue::Bytes(vec![1, 2]),
                        forced: false,
                    });
                }
                _ => {}
            }
            assert_eq!(data.nodes.may_own, round < 3);
            let old = data.restart_generating(Values::default(), Source::from_seed(round), 100);
            assert!(old.is_empty());
            assert!(data.nodes.is_empty() && !data.nodes.may_own);
        }
        // A vector moved in whole keeps its mark; one swapped in through
        // `DerefMut` is marked.
        data.draw_bytes(size).unwrap();
        let mut taken = std::mem::take(&mut data.nodes);
        assert!(taken.may_own && !data.nodes.may_own);
        std::mem::swap(&mut *data.nodes, &mut *taken);
        assert!(data.nodes.may_own);
        data.restart_generating(Values::default(), Source::from_seed(9), 100);
        taken.clear_all();
        assert!(data.nodes.is_empty() && taken.is_empty());
    }

    /// Integer constraints are recorded in line when they fit an `i64`; wider
    /// ones behind an `Arc` that consecutive draws with them share, and the
    /// values drawn are permitted either way.
    #[test]
    fn wide_integer_constraints_are_shared_by_consecutive_draws() {
        let wide = IntegerConstraints::bounded(0, i128::from(u64::MAX));
        let narrow = IntegerConstraints::bounded(-5, 5);
        let mut data = TestData::generating(Vec::new(), Source::from_seed(7), 100);
        for c in [wide, wide, narrow, wide] {
            let v = data.draw_integer(c).expect("room for four choices");
            assert!(c.permits(v), "{v} under {c:?}");
        }
        let recorded: Vec<&CompactIntegerConstraints> = data
            .nodes
            .iter()
            .map(|node| match &node.constraints {
                Constraints::Integer(c) => c,
                other => panic!("{other:?}"),
            })
            .collect();
        let shared = |a: &CompactIntegerConstraints, b: &CompactIntegerConstraints| match (a, b) {
            (CompactIntegerConstraints::Wide(a), CompactIntegerConstraints::Wide(b)) => {
                Arc::ptr_eq(a, b)
            }
            _ => false,
        };
        assert!(shared(recorded[0], recorded[1]));
        assert!(shared(recorded[1], recorded[3]));
        assert!(matches!(
            recorded[2],
            CompactIntegerConstraints::Narrow { .. }
        ));
        assert_eq!(recorded[2].get(), narrow);
        assert_eq!(recorded[3].get(), wide);
        // Replayed, the same values come back under the same constraints.
        let mut replay = TestData::replaying(data.choices(), 100);
        for (c, node) in [wide, wide, narrow, wide]
            .into_iter()
            .zip(data.nodes.iter())
        {
            let ChoiceValue::Integer(v) = node.value else {
                panic!("{:?}", node.value)
            };
            assert_eq!(replay.draw_integer(c), Ok(v));
        }
    }

    #[test]
    fn spans_nested_too_deep_reject_the_test_case() {
        let mut data = TestData::replaying(Vec::new(), 100);
        for _ in 0..MAX_SPAN_DEPTH {
            data.start_span(1);
        }
        assert!(data.is_active());
        assert_eq!(data.draw_boolean(0.5), Ok(false));
        assert!(!data.too_deep);
        data.start_span(1);
        assert_eq!(data.status, Some(Status::Invalid));
        assert!(data.too_deep);
        assert_eq!(data.draw_boolean(0.5), Err(StopTest));
    }

    /// hegel-core 0.10's test_data_too_large_detected: 500 strings of 50
    /// characters are 500 choices but 26,000 bytes serialized, past
    /// Hypothesis' 8 KiB; as many booleans fit.
    #[test]
    fn the_budget_counts_serialized_size_as_hypothesis_does() {
        let digits = Arc::new(crate::charset::CharSet::from_intervals(vec![(0x30, 0x39)]));
        let size = SizeConstraints {
            min_size: 50,
            max_size: 100,
        };
        let mut data = TestData::generating(vec![], Source::from_seed(3), DEFAULT_MAX_CHOICES);
        let mut drawn = 0;
        while data.draw_string(digits.clone(), size).is_ok() {
            drawn += 1;
        }
        assert_eq!(data.status, Some(Status::Overrun));
        assert!((70..=160).contains(&drawn), "{drawn} strings");
        assert!(data.length() <= DEFAULT_MAX_LENGTH, "{}", data.length());

        let mut data = TestData::generating(vec![], Source::from_seed(3), DEFAULT_MAX_CHOICES);
        for _ in 0..DEFAULT_MAX_CHOICES {
            data.draw_boolean(0.5).unwrap();
        }
        assert_eq!(data.length(), DEFAULT_MAX_LENGTH);
        assert!(data.draw_boolean(0.5).is_err());

        // A lifted choice budget lifts the size limit with it.
        let mut data = TestData::replaying(vec![], DEFAULT_MAX_CHOICES * 2);
        for _ in 0..500 {
            data.draw_string(digits.clone(), size).unwrap();
        }
        assert_eq!(data.length(), 500 * 52);
    }

    #[test]
    fn replay_reproduces_choices() {
        let mut first = TestData::generating(vec![], Source::from_seed(7), DEFAULT_MAX_CHOICES);
        let a = first.draw_integer(IntegerConstraints::UNBOUNDED).unwrap();
        let b = first.draw_boolean(0.5).unwrap();
        let mut again = TestData::replaying(first.choices(), DEFAULT_MAX_CHOICES);
        assert_eq!(
            again.draw_integer(IntegerConstraints::UNBOUNDED).unwrap(),
            a
        );
        assert_eq!(again.draw_boolean(0.5).unwrap(), b);
        // Past the prefix, replay takes the simplest value.
        assert_eq!(
            again
                .draw_integer(IntegerConstraints::bounded(3, 9))
                .unwrap(),
            3
        );
    }

    #[test]
    fn misfit_choice_falls_back_to_simplest() {
        let mut data = TestData::replaying(vec![ChoiceValue::Integer(100)], DEFAULT_MAX_CHOICES);
        assert_eq!(
            data.draw_integer(IntegerConstraints::bounded(-5, 5))
                .unwrap(),
            0
        );
        assert!(data.misaligned);
    }

    #[test]
    fn overrun_stops_the_test_case() {
        let mut data = TestData::replaying(vec![], 2);
        assert!(data.draw_boolean(0.5).is_ok());
        assert!(data.draw_boolean(0.5).is_ok());
        assert_eq!(data.draw_boolean(0.5), Err(StopTest));
        assert_eq!(data.status, Some(Status::Overrun));
    }

    #[test]
    fn generated_sizes_have_a_long_tail_at_a_bounded_cost() {
        let seeds = 4000;
        let mut sizes = Vec::new();
        for seed in 0..seeds {
            let mut data =
                TestData::generating(vec![], Source::from_seed(seed), DEFAULT_MAX_CHOICES);
            let mut c = Collection::new(0, None);
            let mut n = 0;
            while c.more(&mut data).unwrap() {
                n += 1;
            }
            sizes.push(n);
        }
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        let largest = sizes[sizes.len() - 1];
        let mean = sizes.iter().sum::<usize>() as f64 / seeds as f64;
        let long = sizes.iter().filter(|n| **n >= 30).count() as f64 / seeds as f64;
        // Hypothesis' average (5) plus at most SCALE_BUDGET of it (8 expected).
        assert!((7.0..=9.0).contains(&mean), "mean {mean}");
        // One in 25 expected: 6.7% large (30+ elements 55% of the time),
        // 0.4% of the others.
        assert!((0.03..=0.055).contains(&long), "P(>= 30) {long}");
        assert!(median <= 5, "median {median}");
        assert!(largest >= 150, "largest {largest}");
    }

    #[test]
    fn collections_with_little_room_are_large_as_often_as_allowed() {
        // A max_size of 20 (5 usual extra elements, 10 large) and a state
        // machine's 50 steps (10 usual, 25 large in process; over the wire
        // the server sizes it as any max_size of 50: 5 usual, 25 large):
        // the most often.
        assert_eq!(scale_probability(5.0, 10.0), P_SCALE_MAX);
        assert_eq!(scale_probability(10.0, 25.0), P_SCALE_MAX);
        assert_eq!(scale_probability(5.0, 25.0), P_SCALE_MAX);
        // Unbounded: 50 large costs 45 more, one time in 15.
        assert!((scale_probability(5.0, 50.0) - 1.0 / 15.0).abs() < 1e-12);
    }

    /// The mean length of unbounded collections drawn inside `depth + 1`
    /// nested spans of one label (recursion depth `depth`), over `seeds`
    /// test cases; `sized` marks the outermost span as a sized recursion.
    /// A label that names one generator, as a frontend's hashed labels do.
    const GENERATOR: u64 = 0x5eed_0000_0001;

    fn mean_nested_length(depth: usize, sized: bool, seeds: u64) -> f64 {
        let mut total = 0;
        for seed in 0..seeds {
            let mut data = TestData::generating(vec![], Source::from_seed(seed), 1 << 20);
            data.start_span(GENERATOR);
            if sized {
                data.begin_sized_recursion();
            }
            for _ in 0..depth {
                data.start_span(GENERATOR);
            }
            assert_eq!(data.recursion_depth(), depth);
            let mut c = Collection::new(0, None);
            while c.more(&mut data).unwrap() {
                total += 1;
            }
        }
        total as f64 / seeds as f64
    }

    #[test]
    fn collections_shrink_with_the_recursion_depth() {
        // Expected 5 / (1 + depth) elements (no scaling inside a recursion).
        let one = mean_nested_length(1, false, 4000);
        let three = mean_nested_length(3, false, 4000);
        assert!((2.2..2.8).contains(&one), "depth 1: mean {one}");
        assert!((1.05..1.45).contains(&three), "depth 3: mean {three}");
        // A scope that sizes the recursive value keeps the usual size.
        let sized = mean_nested_length(3, true, 4000);
        assert!((4.6..5.4).contains(&sized), "sized recursion: mean {sized}");
    }

    #[test]
    fn nested_kind_labels_keep_the_usual_size() {
        // A list of lists of a schema nests COLLECTION: no generator draws
        // itself, so the inner list keeps its usual size (5 on average).
        let mut total = 0;
        for seed in 0..4000 {
            let mut data = TestData::generating(vec![], Source::from_seed(seed), 1 << 20);
            data.start_span(labels::COLLECTION);
            data.start_span(labels::COLLECTION);
            assert_eq!(data.recursion_depth(), 1);
            let mut c = Collection::new(0, None);
            while c.more(&mut data).unwrap() {
                total += 1;
            }
        }
        let mean = total as f64 / 4000.0;
        assert!((4.6..5.4).contains(&mean), "mean {mean}");
        assert!(labels::is_kind(1) && labels::is_kind(labels::DICT_ENTRY));
        assert!(!labels::is_kind(0x9e37_79b9_7f4a_7c15));
    }

    #[test]
    fn a_sized_recursion_ends_with_the_span_it_began_in() {
        let mut data = TestData::generating(vec![], Source::from_seed(1), 1 << 20);
        data.start_span(GENERATOR);
        data.begin_sized_recursion();
        data.start_span(GENERATOR);
        assert!(data.in_sized_recursion());
        data.stop_span(false);
        data.stop_span(false);
        data.start_span(GENERATOR);
        data.start_span(GENERATOR);
        assert!(!data.in_sized_recursion());
    }

    /// One value of a deferred JSON-like generator (a one_of of null, a
    /// number, a list of itself, a map of itself, a string; spans as a
    /// frontend opens them): whether it ended.
    fn json_like(data: &mut TestData) -> Result<(), StopTest> {
        data.start_span(GENERATOR);
        let branch = data.draw_integer(IntegerConstraints::bounded(0, 4))?;
        if branch >= 3 {
            data.start_span(GENERATOR + branch as u64);
            let mut c = Collection::new(0, None);
            while c.more(data)? {
                if branch == 4 {
                    data.draw_integer(IntegerConstraints::UNBOUNDED)?;
                }
                json_like(data)?;
            }
            data.stop_span(false);
        } else if branch > 0 {
            data.draw_integer(IntegerConstraints::UNBOUNDED)?;
        }
        data.stop_span(false);
        if data.is_active() {
            Ok(())
        } else {
            Err(StopTest)
        }
    }

    #[test]
    fn a_recursive_value_of_collections_ends_on_its_own() {
        // Two branches in five hold a collection of the value itself: with
        // collections of their usual size (5 on average) every value would
        // expect two sub-values, and a fifth of them would grow until the
        // span depth limit rejects them.
        let mut largest = 0;
        for seed in 0..300 {
            let mut data = TestData::generating(vec![], Source::from_seed(seed), 1 << 20);
            assert!(
                json_like(&mut data).is_ok(),
                "seed {seed}: {:?}",
                data.status
            );
            assert!(!data.too_deep);
            largest = largest.max(data.nodes.len());
        }
        assert!(largest >= 30, "the largest value made {largest} choices");
    }

    #[test]
    fn collections_respect_bounds() {
        for seed in 0..50 {
            let mut data =
                TestData::generating(vec![], Source::from_seed(seed), DEFAULT_MAX_CHOICES);
            let mut c = Collection::new(2, Some(4));
            let mut n = 0;
            while c.more(&mut data).unwrap() {
                n += 1;
            }
            assert!((2..=4).contains(&n), "{n}");
        }
    }

    /// The recursion depths kept as spans open and close agree with a count
    /// over the open spans, below and past the depth where labels move from
    /// the array to the table ([`SHALLOW_SPANS`]).
    #[test]
    fn recursion_depths_count_repeated_open_labels_at_any_depth() {
        let kinds = [labels::COLLECTION, labels::TUPLE];
        let all = [kinds[0], kinds[1], GENERATOR, GENERATOR + 1, GENERATOR + 2];
        let mut rng = Source::from_seed(11);
        let mut deepest = 0;
        for _ in 0..200 {
            let mut data = TestData::generating(vec![], Source::from_seed(0), 1 << 20);
            let mut open: Vec<u64> = Vec::new();
            for _ in 0..400 {
                let deeper = open.len() < 3 * SHALLOW_SPANS && rng.below(100) < 55;
                if deeper || open.is_empty() {
                    let label = all[rng.below(all.len() as u64) as usize];
                    data.start_span(label);
                    open.push(label);
                    deepest = deepest.max(open.len());
                } else {
                    assert!(data.stop_span(false));
                    open.pop();
                }
                let repeated: Vec<u64> = (0..open.len())
                    .filter(|i| open[..*i].contains(&open[*i]))
                    .map(|i| open[i])
                    .collect();
                assert_eq!(data.recursion_depth(), repeated.len());
                let generators = repeated.iter().filter(|l| !labels::is_kind(**l)).count();
                assert_eq!(data.generator_recursion_depth, generators);
            }
        }
        assert_eq!(deepest, 3 * SHALLOW_SPANS);
    }
}
