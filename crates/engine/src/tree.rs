//! The tree of choice paths seen so far in a run.
//!
//! Every test case walks the tree along its choice values. At each node the
//! tree remembers what the choice there permitted; a later test case that
//! reaches the same node by the same earlier choices but makes a different
//! kind of choice there (another type, other bounds) proves the test's data
//! generation is non-deterministic — it depends on something other than the
//! choices, such as global state — and the run reports it as flaky rather
//! than shrinking nonsense.
//!
//! The tree knows when it is exhausted: a node where a test case ended is
//! exhausted, and so is a node whose every permitted value (a forced choice
//! has one, a boolean two, a bounded integer its range) leads to an exhausted
//! node. When the root is exhausted every test case the run could generate
//! has run, and generation stops (Hypothesis's `DataTree.is_exhausted`).
//!
//! A span the test discarded (a filter attempt it rejected) kills the node
//! where it stopped: whatever follows those choices is not worth exploring
//! again, so that node counts as exhausted (Hypothesis's `kill_branch`). A
//! filter that rejects everything over a small space then exhausts the tree.
//! Generation asks the tree for a novel prefix ([`DataTree::novel_prefix`]):
//! a path of known choices down to a value no test case made there, avoiding
//! exhausted branches, so a small space is enumerated rather than re-drawn.
//!
//! The tree also answers, without running the test, what a replayed choice
//! sequence would do when every step of it is already known: the shrinker
//! skips such candidates (their outcome was seen when the path first ran).
//!
//! Most of a generated test case's path is new: past the first value no
//! earlier test case made, every choice is. Such a run of new choices is
//! kept as a *tail*, the choices in a row in one arena, rather than a node
//! per choice (Hypothesis' tree compresses the same way): a node that owns
//! a tail stands for each of its choices in turn, at a [`Position`] inside
//! it. A later test case that only follows a tail reads it; one that leaves
//! it (another value, another kind of choice) or changes what is known
//! along it first turns the tail's choices up to there into nodes.

use crate::choice::{
    ChoiceNode, ChoiceValue, CompactIntegerConstraints, Constraints, IntegerConstraints,
};
use crate::random::Source;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// How test cases made the choice at a node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Forcing {
    /// No test case has made it yet.
    #[default]
    Unknown,
    /// Freely (from the prefix, the random source or the simplest value).
    Free,
    /// Forced, always to the same value: the key of the node's only child
    /// (no child when the tree had stopped growing).
    Forced,
    /// Differently by different test cases (not deterministic).
    Mixed,
}

/// Whether test cases ended at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// None did.
    No,
    /// Some did (none is known to have passed).
    Yes,
    /// Some did, one at least without failing.
    Passing,
}

/// A node's index in the tree's arena.
type NodeId = u32;

/// Interned constraints' index (see [`DataTree::intern`]); [`UNKNOWN`] when
/// no test case has made the node's choice yet.
type ConstraintsId = u32;
const UNKNOWN: ConstraintsId = u32::MAX;

/// A fast, deterministic hash (iteration order never depends on a random
/// seed).
type FixedState = foldhash::fast::FixedState;

/// A branching node's children by value. Integers that fit in 64 bits
/// (nearly all) are keyed by that, in 16-byte entries rather than a
/// [`ChoiceValue`]'s 48: a node drawing an unbounded integer gains a child
/// per test case, and each test case looks one up in the map twice (the
/// novel prefix, the record), each time a cache miss in a map of megabytes.
/// Every other value (a string, bytes) is kept with its hash, computed
/// once for the record's lookup and insertion, and never again when the
/// map grows: each slot holds the same hash as a map hashing the value
/// itself would, so the children are laid out, and iterated, alike.
#[derive(Default)]
struct ChildMap {
    /// Integer children that fit in an `i64`.
    integers: HashMap<i64, NodeId, FixedState>,
    /// Every other child.
    others: HashMap<HashedValue, NodeId, PassHash>,
}

/// A child's value with its hash ([`FixedState`]'s, of the value).
struct HashedValue {
    hash: u64,
    value: ChoiceValue,
}

/// What the children's map of other values is searched by: a hash and a
/// value, owned ([`HashedValue`]) or borrowed ([`ValueQuery`]).
trait ValueKey {
    fn hash(&self) -> u64;
    fn value(&self) -> &ChoiceValue;
}

impl ValueKey for HashedValue {
    fn hash(&self) -> u64 {
        self.hash
    }
    fn value(&self) -> &ChoiceValue {
        &self.value
    }
}

/// A value searched for, with its hash, without a copy of it.
struct ValueQuery<'v> {
    hash: u64,
    value: &'v ChoiceValue,
}

impl ValueKey for ValueQuery<'_> {
    fn hash(&self) -> u64 {
        self.hash
    }
    fn value(&self) -> &ChoiceValue {
        self.value
    }
}

impl<'a> std::borrow::Borrow<dyn ValueKey + 'a> for HashedValue {
    fn borrow(&self) -> &(dyn ValueKey + 'a) {
        self
    }
}

impl std::hash::Hash for dyn ValueKey + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(ValueKey::hash(self));
    }
}

impl PartialEq for dyn ValueKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
    }
}

impl Eq for dyn ValueKey + '_ {}

impl std::hash::Hash for HashedValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl PartialEq for HashedValue {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for HashedValue {}

/// Hashes a [`HashedValue`] (or its query) to the hash it holds.
#[derive(Clone, Copy, Default)]
struct PassHash;

/// The hasher of [`PassHash`]: the last word written is the hash.
#[derive(Default)]
struct PassHasher(u64);

impl std::hash::Hasher for PassHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _bytes: &[u8]) {
        unreachable!("a child's value is hashed by its word");
    }
    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

impl std::hash::BuildHasher for PassHash {
    type Hasher = PassHasher;
    fn build_hasher(&self) -> PassHasher {
        PassHasher(0)
    }
}

impl ChildMap {
    /// The compact key of an integer that fits in 64 bits.
    fn integer_key(value: &ChoiceValue) -> Option<i64> {
        match value {
            ChoiceValue::Integer(v) => i64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// The hash of a value the map of other values keys by.
    fn hash_of(value: &ChoiceValue) -> u64 {
        use std::hash::BuildHasher;
        FixedState::default().hash_one(value)
    }

    /// The child of another value (not an integer in 64 bits), whose hash
    /// is `hash`.
    fn other(&self, hash: u64, value: &ChoiceValue) -> Option<NodeId> {
        let query = ValueQuery { hash, value };
        self.others.get(&query as &dyn ValueKey).copied()
    }

    fn get(&self, value: &ChoiceValue) -> Option<NodeId> {
        match ChildMap::integer_key(value) {
            Some(key) => self.integers.get(&key).copied(),
            None => self.other(ChildMap::hash_of(value), value),
        }
    }

    fn insert(&mut self, value: ChoiceValue, child: NodeId) {
        match ChildMap::integer_key(&value) {
            Some(key) => {
                self.integers.insert(key, child);
            }
            None => self.insert_other(ChildMap::hash_of(&value), value, child),
        }
    }

    /// Adds (or replaces) the child of another value, whose hash is `hash`.
    fn insert_other(&mut self, hash: u64, value: ChoiceValue, child: NodeId) {
        self.others.insert(HashedValue { hash, value }, child);
    }

    fn len(&self) -> usize {
        self.integers.len() + self.others.len()
    }

    /// The children, with the values chosen for them (integers first, each
    /// map in its own fixed order).
    fn iter(&self) -> impl Iterator<Item = (Cow<'_, ChoiceValue>, NodeId)> {
        let integers = self
            .integers
            .iter()
            .map(|(&v, &c)| (Cow::Owned(ChoiceValue::Integer(i128::from(v))), c));
        let others = self
            .others
            .iter()
            .map(|(v, &c)| (Cow::Borrowed(&v.value), c));
        integers.chain(others)
    }

    /// The child where `value` was chosen, made by `fresh` when there is
    /// none and `grow` allows (`None` when it does not): one hash of the
    /// value. A number (`cheap`: a copy costs nothing) is looked up through
    /// the map's entry, which makes room for one more child when there is
    /// none whether or not one is added; another value (a string) is
    /// looked up first and copied only when it is added, with no room made
    /// otherwise: so each map grows, and orders its children, as it always
    /// has.
    fn entry(
        &mut self,
        value: &ChoiceValue,
        grow: bool,
        cheap: bool,
        fresh: impl FnOnce() -> NodeId,
    ) -> Option<NodeId> {
        use std::collections::hash_map::Entry;
        match ChildMap::integer_key(value) {
            Some(key) => match self.integers.entry(key) {
                Entry::Occupied(entry) => Some(*entry.get()),
                Entry::Vacant(entry) if grow => Some(*entry.insert(fresh())),
                Entry::Vacant(_) => None,
            },
            None if cheap => {
                let hash = ChildMap::hash_of(value);
                match self.others.entry(HashedValue {
                    hash,
                    value: value.clone(),
                }) {
                    Entry::Occupied(entry) => Some(*entry.get()),
                    Entry::Vacant(entry) if grow => Some(*entry.insert(fresh())),
                    Entry::Vacant(_) => None,
                }
            }
            None => {
                let hash = ChildMap::hash_of(value);
                if let Some(child) = self.other(hash, value) {
                    return Some(child);
                }
                grow.then(|| {
                    let child = fresh();
                    self.insert_other(hash, value.clone(), child);
                    child
                })
            }
        }
    }
}

/// What is below a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Below {
    /// At most one child: `first` holds its value, `child` its node.
    Plain,
    /// Several children, in the map [`DataTree::branches`]`[child]`.
    Branching,
    /// The node stands for the choices of the tail [`DataTree::tails`]`[child]`,
    /// from its choice `exhausted_children` on (see [`Tail`]).
    Tail,
}

/// One choice position reached by some test case. Kept small (the tree
/// holds up to a million of them, 48 bytes each): constraints are interned,
/// the first child is kept inline (most nodes of a run's tree have one) and
/// a branching node's children move to a map beside the nodes; the forced
/// value is the only child's key; and exhausted children are counted as
/// they become exhausted rather than recounted.
struct TreeNode {
    /// The value of the node's only child; `None` when it has none or
    /// several (`Below::Branching`), or owns a tail.
    first: Option<ChoiceValue>,
    /// The only child's node, the index of the children's map in
    /// [`DataTree::branches`], or of the tail in [`DataTree::tails`].
    child: NodeId,
    /// What the choice here permitted (interned), as the first test case
    /// that made it asked.
    constraints: ConstraintsId,
    /// How many children are exhausted; for a node owning a tail, which
    /// of the tail's choices is the node's.
    exhausted_children: u32,
    /// Whether the choice here was forced (a collection below its minimum
    /// size or at its maximum).
    forcing: Forcing,
    /// Where the children are.
    below: Below,
    /// Whether and how test cases ended exactly here.
    ended: Ended,
    /// Every path through this node has been run.
    exhausted: bool,
}

impl TreeNode {
    /// Whether some test case ended exactly here.
    fn ends_here(&self) -> bool {
        self.ended != Ended::No
    }

    fn new() -> TreeNode {
        TreeNode {
            first: None,
            child: 0,
            constraints: UNKNOWN,
            exhausted_children: 0,
            forcing: Forcing::Unknown,
            below: Below::Plain,
            ended: Ended::No,
            exhausted: false,
        }
    }

    /// Whether no test case has made a choice here or ended here.
    fn is_fresh(&self) -> bool {
        self.constraints == UNKNOWN
            && !self.ends_here()
            && self.below == Below::Plain
            && self.first.is_none()
    }
}

/// Choices made in a row by one test case, past every path known then:
/// `len` choices from `base` in [`DataTree::tail_values`] (their values,
/// one word each: see [`TailWord`]) and [`DataTree::tail_kinds`] (their
/// interned constraints, with [`FORCED`] set for a forced choice and the
/// word's encoding in [`TAG_MASK`]). A node owning the tail from its
/// choice `start` on stands for choice `start`; the position after the
/// last choice is where the test case ended (`ended`) or was cut short.
struct Tail {
    base: u32,
    len: u32,
    /// Whether the test case ended after the last choice.
    ended: bool,
    /// Whether one that ended there did not fail (see
    /// [`DataTree::note_outcome`]).
    passed: bool,
    /// The first choice from which every path is exhausted: each choice
    /// from there on permits one value, and the test case ended; `len + 1`
    /// (none) otherwise.
    exhausted_from: u32,
}

/// Where a recorded test case ended: at a node, or after the last choice
/// of a tail.
#[derive(Clone, Copy, Debug)]
enum EndAt {
    Node(NodeId),
    Tail(u32),
}

/// How many interned constraints [`DataTree::intern`] looks at before it
/// hashes: the kinds of choice a state machine's step makes, and then some.
const RECENT_CONSTRAINTS: usize = 8;

/// The bit of a tail choice's kind that says it was forced.
const FORCED: u32 = 1 << 31;

/// The bits of a tail choice's kind that say how its value is encoded in
/// its word of [`DataTree::tail_values`] (see [`TailWord`]).
const TAG_MASK: u32 = 0b11 << 29;
/// The bits of a tail choice's kind that hold its interned constraints.
const ID_MASK: u32 = !(FORCED | TAG_MASK);

/// How a tail choice's value is kept in one word, so that a tail costs 12
/// bytes a choice instead of a [`ChoiceValue`]'s 32 (a run's tree holds
/// up to a million tail choices, each one written, paged in and freed):
/// an integer that fits in 64 bits, a boolean and a float in the word
/// itself; any other value in [`DataTree::tail_spilled`], at the word's
/// index. The encoding is in the choice's kind ([`TAG_MASK`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum TailWord {
    Integer = 0,
    Boolean = 1,
    Float = 2,
    Spilled = 3,
}

impl TailWord {
    const SHIFT: u32 = 29;

    fn of(kind: u32) -> TailWord {
        match (kind & TAG_MASK) >> TailWord::SHIFT {
            0 => TailWord::Integer,
            1 => TailWord::Boolean,
            2 => TailWord::Float,
            _ => TailWord::Spilled,
        }
    }

    fn bits(self) -> u32 {
        (self as u32) << TailWord::SHIFT
    }
}

/// Writes the words and kinds of the longest prefix of `nodes` made of
/// integers under the constraints `integer` holds (those wider than a word
/// pushed on `spilled`, as [`DataTree::spill`] does) and booleans
/// whose probability has the bits `boolean` holds, each kind with its id (an
/// `UNKNOWN` id matches nothing); returns how many it wrote. `values` and
/// `kinds` are at least as long as `nodes`' prefix.
#[inline(never)]
fn record_run(
    nodes: &[ChoiceNode],
    values: &mut [u64],
    kinds: &mut [u32],
    spilled: &mut Vec<ChoiceValue>,
    integer: &(CompactIntegerConstraints, ConstraintsId),
    boolean: (u64, ConstraintsId),
) -> usize {
    let integer_kind = integer.1 | TailWord::Integer.bits();
    let boolean_kind = boolean.1 | TailWord::Boolean.bits();
    let spilled_kind = integer.1 | TailWord::Spilled.bits();
    let mut written = 0;
    for (node, (word_slot, kind_slot)) in nodes.iter().zip(values.iter_mut().zip(kinds)) {
        let (word, kind) = match (&node.constraints, &node.value) {
            (Constraints::Integer(c), &ChoiceValue::Integer(v))
                if integer.1 != UNKNOWN && integer.0 == *c =>
            {
                if v as i64 as i128 == v {
                    (v as u64, integer_kind)
                } else {
                    // Wider than a word: held in `spilled`, at the word's
                    // index (as `DataTree::spill` holds it).
                    (spill_integer(spilled, v), spilled_kind)
                }
            }
            (Constraints::Boolean { p }, &ChoiceValue::Boolean(v))
                if boolean.1 != UNKNOWN && boolean.0 == p.to_bits() =>
            {
                (u64::from(v), boolean_kind)
            }
            _ => break,
        };
        *word_slot = word;
        *kind_slot = kind | if node.forced { FORCED } else { 0 };
        written += 1;
    }
    written
}

/// Pushes integer `v` on `spilled`; returns its index.
#[cold]
#[inline(never)]
fn spill_integer(spilled: &mut Vec<ChoiceValue>, v: i128) -> u64 {
    spilled.push(ChoiceValue::Integer(v));
    (spilled.len() - 1) as u64
}

/// A place in the tree: a node, or (`offset` > 0) a choice `offset` steps
/// into the tail the node owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Position {
    node: NodeId,
    offset: u32,
}

impl Position {
    fn at(node: NodeId) -> Position {
        Position { node, offset: 0 }
    }
}

/// What the tree knows of the choice at a position.
struct Known {
    constraints: ConstraintsId,
    forcing: Forcing,
    ends_here: bool,
    exhausted: bool,
    exhausted_children: u32,
}

/// What interning tells constraints apart by: exactly equal constraints
/// (the same alphabet object for strings) share one entry.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum ConstraintsKey {
    Integer(Option<i128>, Option<i128>, i128),
    Float(u64, u64, bool, u8),
    Boolean(u64),
    Bytes(usize, usize),
    String(usize, usize, usize),
}

/// Whether `a` and `b` are interned alike (have the same [`key_of`]).
#[inline]
fn exactly_equal(a: &Constraints, b: &Constraints) -> bool {
    match (a, b) {
        (Constraints::Integer(x), Constraints::Integer(y)) => x == y,
        (Constraints::Boolean { p: x }, Constraints::Boolean { p: y }) => {
            x.to_bits() == y.to_bits()
        }
        (Constraints::Float(_), Constraints::Float(_))
        | (Constraints::Bytes(_), Constraints::Bytes(_))
        | (Constraints::String { .. }, Constraints::String { .. }) => key_of(a) == key_of(b),
        _ => false,
    }
}

fn key_of(c: &Constraints) -> ConstraintsKey {
    match c {
        Constraints::Integer(i) => {
            let i = i.get();
            ConstraintsKey::Integer(i.min, i.max, i.shrink_towards)
        }
        Constraints::Float(f) => {
            ConstraintsKey::Float(f.min.to_bits(), f.max.to_bits(), f.allow_nan, f.width)
        }
        Constraints::Boolean { p } => ConstraintsKey::Boolean(p.to_bits()),
        Constraints::Bytes(s) => ConstraintsKey::Bytes(s.min_size, s.max_size),
        // The table keeps the alphabet alive, so its address stays its own.
        Constraints::String { alphabet, size } => {
            ConstraintsKey::String(Arc::as_ptr(alphabet) as usize, size.min_size, size.max_size)
        }
    }
}

/// The paths of all test cases run so far.
pub struct DataTree {
    nodes: Vec<TreeNode>,
    /// Stop growing past this many nodes and tail choices (the check then
    /// covers known paths only).
    max_nodes: usize,
    /// The children of branching nodes, by value.
    branches: Vec<ChildMap>,
    /// Runs of new choices (see [`Tail`]).
    tails: Vec<Tail>,
    /// The values of the tails' choices, a word each (see [`TailWord`]).
    tail_values: Vec<u64>,
    /// The interned constraints of the tails' choices, with [`FORCED`]
    /// and their words' encoding ([`TAG_MASK`]).
    tail_kinds: Vec<u32>,
    /// The tails' values that do not fit in a word (see [`TailWord`]).
    tail_spilled: Vec<ChoiceValue>,
    /// Interned constraints, by [`ConstraintsId`].
    constraints: Vec<Constraints>,
    /// Whether each interned constraints' choice permits one value only.
    single_valued: Vec<bool>,
    /// How many values each interned constraints' choice permits, when few
    /// enough to count ([`permitted_values`]): asked each time a child is
    /// exhausted.
    permitted: Vec<Option<u128>>,
    interned: HashMap<ConstraintsKey, ConstraintsId, foldhash::fast::FixedState>,
    /// The constraints interned last (a test case draws the same few
    /// kinds over and over), compared as they are before any key is built
    /// and hashed; replaced in turn.
    recent: [ConstraintsId; RECENT_CONSTRAINTS],
    /// The slot of [`DataTree::recent`] replaced next.
    recent_next: usize,
    /// A reusable buffer for the path of the test case being recorded.
    path: Vec<NodeId>,
    /// The integer and the boolean kinds of choice (with their interned
    /// ids, [`UNKNOWN`] for none) [`DataTree::grow_tail`] met last: most
    /// tails are made of the kinds of the tail before.
    last_tail_kinds: (
        (CompactIntegerConstraints, ConstraintsId),
        (u64, ConstraintsId),
    ),
    /// Whether runs of new choices are kept as tails (always, but for the
    /// tests that check tails change nothing the tree answers).
    compress: bool,
    /// Where the last recorded test case ended, when it ran to its end on a
    /// path the tree holds (see [`DataTree::note_outcome`]).
    last_end: Option<EndAt>,
}

impl Default for DataTree {
    fn default() -> Self {
        DataTree {
            nodes: vec![TreeNode::new()],
            max_nodes: 1 << 20,
            branches: Vec::new(),
            tails: Vec::new(),
            tail_values: Vec::new(),
            tail_kinds: Vec::new(),
            tail_spilled: Vec::new(),
            constraints: Vec::new(),
            single_valued: Vec::new(),
            permitted: Vec::new(),
            interned: HashMap::default(),
            recent: [UNKNOWN; RECENT_CONSTRAINTS],
            recent_next: 0,
            path: Vec::new(),
            last_tail_kinds: (
                (CompactIntegerConstraints::UNBOUNDED, UNKNOWN),
                (0, UNKNOWN),
            ),
            compress: true,
            last_end: None,
        }
    }
}

/// How many values a choice with these constraints permits, when that is
/// few enough to run them all (otherwise the tree never counts it exhausted).
fn permitted_values(constraints: &Constraints) -> Option<u128> {
    const COUNTED: u128 = 1 << 16;
    let n = match constraints {
        Constraints::Boolean { .. } => 2,
        Constraints::Integer(c) => match c.get() {
            IntegerConstraints {
                min: Some(min),
                max: Some(max),
                ..
            } if max >= min => max.abs_diff(min).checked_add(1)?,
            _ => return None,
        },
        Constraints::Bytes(size) | Constraints::String { size, .. } if size.max_size == 0 => 1,
        _ => return None,
    };
    (n <= COUNTED).then_some(n)
}

/// The value a counted choice permits at `index` (see [`permitted_values`]).
fn value_at(constraints: &Constraints, index: u128) -> Option<ChoiceValue> {
    match constraints {
        Constraints::Boolean { .. } => Some(ChoiceValue::Boolean(index == 1)),
        Constraints::Integer(c) => c.value_at(index).map(ChoiceValue::Integer),
        Constraints::Bytes(_) | Constraints::String { .. } => Some(constraints.simplest()),
        Constraints::Float(_) => None,
    }
}

#[inline]
pub(crate) fn same_kind(a: &Constraints, b: &Constraints) -> bool {
    match (a, b) {
        (Constraints::Integer(x), Constraints::Integer(y)) => x == y,
        (Constraints::Float(x), Constraints::Float(y)) => {
            x.min.to_bits() == y.min.to_bits()
                && x.max.to_bits() == y.max.to_bits()
                && x.allow_nan == y.allow_nan
                && x.width == y.width
        }
        // Forced booleans record the collection's probability; any boolean matches a boolean.
        (Constraints::Boolean { .. }, Constraints::Boolean { .. }) => true,
        (Constraints::Bytes(x), Constraints::Bytes(y)) => x == y,
        (
            Constraints::String {
                alphabet: a1,
                size: s1,
            },
            Constraints::String {
                alphabet: a2,
                size: s2,
            },
        ) => s1 == s2 && (std::sync::Arc::ptr_eq(a1, a2) || a1 == a2),
        _ => false,
    }
}

fn describe(c: &Constraints) -> String {
    match c {
        Constraints::Integer(i) => {
            let i = i.get();
            format!("an integer in [{:?}, {:?}]", i.min, i.max)
        }
        Constraints::Float(f) => format!("a float in [{}, {}]", f.min, f.max),
        Constraints::Boolean { .. } => "a boolean".into(),
        Constraints::Bytes(s) => format!("bytes of length {}..={}", s.min_size, s.max_size),
        Constraints::String { size, .. } => {
            format!("a string of length {}..={}", size.min_size, size.max_size)
        }
    }
}

impl DataTree {
    fn node(&self, at: NodeId) -> &TreeNode {
        &self.nodes[at as usize]
    }

    fn node_mut(&mut self, at: NodeId) -> &mut TreeNode {
        &mut self.nodes[at as usize]
    }

    /// The tail node `at` owns and which of its choices is the node's.
    fn tail_of(&self, at: NodeId) -> Option<(&Tail, u32)> {
        let node = self.node(at);
        (node.below == Below::Tail)
            .then(|| (&self.tails[node.child as usize], node.exhausted_children))
    }

    /// What the tree knows of the choice at `at`.
    #[inline]
    fn known(&self, at: Position) -> Known {
        let node = self.node(at.node);
        let Some((tail, start)) = self.tail_of(at.node) else {
            return Known {
                constraints: node.constraints,
                forcing: node.forcing,
                ends_here: node.ends_here(),
                exhausted: node.exhausted,
                exhausted_children: node.exhausted_children,
            };
        };
        let index = start + at.offset;
        if index < tail.len {
            let kind = self.tail_kinds[(tail.base + index) as usize];
            Known {
                constraints: kind & ID_MASK,
                forcing: if kind & FORCED != 0 {
                    Forcing::Forced
                } else {
                    Forcing::Free
                },
                ends_here: false,
                exhausted: index >= tail.exhausted_from,
                exhausted_children: u32::from(index + 1 >= tail.exhausted_from),
            }
        } else {
            Known {
                constraints: UNKNOWN,
                forcing: Forcing::Unknown,
                ends_here: tail.ended,
                exhausted: tail.ended,
                exhausted_children: 0,
            }
        }
    }

    /// The index in [`DataTree::tail_values`] of the choice at a position
    /// inside a tail, and the position after it.
    fn tail_step(&self, at: Position) -> Option<(usize, Position)> {
        let (tail, start) = self.tail_of(at.node)?;
        let index = start + at.offset;
        (index < tail.len).then(|| {
            (
                (tail.base + index) as usize,
                Position {
                    node: at.node,
                    offset: at.offset + 1,
                },
            )
        })
    }

    /// The value of tail choice `index` (of [`DataTree::tail_values`]).
    fn tail_value(&self, index: usize) -> Cow<'_, ChoiceValue> {
        let word = self.tail_values[index];
        match TailWord::of(self.tail_kinds[index]) {
            TailWord::Integer => Cow::Owned(ChoiceValue::Integer(i128::from(word as i64))),
            TailWord::Boolean => Cow::Owned(ChoiceValue::Boolean(word != 0)),
            TailWord::Float => Cow::Owned(ChoiceValue::Float(f64::from_bits(word))),
            TailWord::Spilled => Cow::Borrowed(&self.tail_spilled[word as usize]),
        }
    }

    /// Whether tail choice `index` chose `value` (without building it).
    #[inline]
    fn tail_value_is(&self, index: usize, value: &ChoiceValue) -> bool {
        let word = self.tail_values[index];
        match (TailWord::of(self.tail_kinds[index]), value) {
            (TailWord::Integer, ChoiceValue::Integer(v)) => i128::from(word as i64) == *v,
            (TailWord::Boolean, ChoiceValue::Boolean(v)) => (word != 0) == *v,
            (TailWord::Float, ChoiceValue::Float(v)) => word == v.to_bits(),
            (TailWord::Spilled, _) => self.tail_spilled[word as usize] == *value,
            _ => false,
        }
    }

    fn spill(&mut self, value: &ChoiceValue) -> (u64, TailWord) {
        self.tail_spilled.push(value.clone());
        ((self.tail_spilled.len() - 1) as u64, TailWord::Spilled)
    }

    /// The child of `at` where `value` was chosen.
    #[inline]
    fn child(&self, at: Position, value: &ChoiceValue) -> Option<Position> {
        let node = self.node(at.node);
        match node.below {
            Below::Tail => self
                .tail_step(at)
                .and_then(|(index, next)| self.tail_value_is(index, value).then_some(next)),
            Below::Branching => self.branches[node.child as usize]
                .get(value)
                .map(Position::at),
            Below::Plain => match &node.first {
                Some(first) => (first == value).then_some(Position::at(node.child)),
                None => None,
            },
        }
    }

    /// The only child of `at` (the forced value's), if it has exactly one.
    fn only_child(&self, at: Position) -> Option<(Cow<'_, ChoiceValue>, Position)> {
        let node = self.node(at.node);
        match node.below {
            Below::Tail => self
                .tail_step(at)
                .map(|(index, next)| (self.tail_value(index), next)),
            Below::Branching => None,
            Below::Plain => node
                .first
                .as_ref()
                .map(|value| (Cow::Borrowed(value), Position::at(node.child))),
        }
    }

    /// How many children `at` has.
    fn child_count(&self, at: Position) -> usize {
        let node = self.node(at.node);
        match node.below {
            Below::Tail => usize::from(self.tail_step(at).is_some()),
            Below::Branching => self.branches[node.child as usize].len(),
            Below::Plain => usize::from(node.first.is_some()),
        }
    }

    /// The children of `at`, with the values chosen for them.
    fn children(&self, at: Position) -> impl Iterator<Item = (Cow<'_, ChoiceValue>, Position)> {
        let node = self.node(at.node);
        let (branching, only) = match node.below {
            Below::Branching => (Some(self.branches[node.child as usize].iter()), None),
            Below::Tail | Below::Plain => (None, self.only_child(at)),
        };
        branching
            .into_iter()
            .flatten()
            .map(|(v, c)| (v, Position::at(c)))
            .chain(only)
    }

    /// Adds `child` under node `at` (not owning a tail), where `value` was chosen.
    fn insert_child(&mut self, at: NodeId, value: ChoiceValue, child: NodeId) {
        let branches = self.branches.len() as NodeId;
        let node = &mut self.nodes[at as usize];
        if node.below == Below::Branching {
            self.branches[node.child as usize].insert(value, child);
        } else if let Some(first) = node.first.take() {
            let mut map = ChildMap::default();
            map.insert(first, node.child);
            map.insert(value, child);
            node.below = Below::Branching;
            node.child = branches;
            self.branches.push(map);
        } else {
            node.first = Some(value);
            node.child = child;
        }
    }

    /// For a branching node `at`, the child where `value` was chosen,
    /// added (a new node) when no test case chose it and the tree may grow
    /// (`Some(None)`: it may not); in one lookup of the children's map,
    /// which after many test cases is large and each lookup a cache miss,
    /// and one hash of a value (a string) that is not a number. `None` for
    /// other nodes.
    fn branch_entry(&mut self, at: NodeId, value: &ChoiceValue) -> Option<Option<NodeId>> {
        let node = self.node(at);
        if node.below != Below::Branching {
            return None;
        }
        // (Numbers were always looked up through the map's entry, which
        // makes room for a child whether or not one is added; other values
        // were not.)
        let cheap = matches!(
            value,
            ChoiceValue::Integer(_) | ChoiceValue::Boolean(_) | ChoiceValue::Float(_)
        );
        let map = node.child as usize;
        let grow = self.size() < self.max_nodes;
        let nodes = &mut self.nodes;
        Some(self.branches[map].entry(value, grow, cheap, || {
            nodes.push(TreeNode::new());
            (nodes.len() - 1) as NodeId
        }))
    }

    /// The constraints the choice at `at` was first made under (`None`
    /// when no test case has made it).
    fn constraints_of(&self, at: Position) -> Option<&Constraints> {
        self.constraints.get(self.known(at).constraints as usize)
    }

    /// The id of constraints equal to `c`, adding them when new.
    fn intern(&mut self, c: &Constraints) -> ConstraintsId {
        let recent = self.recent.iter().copied().find(|&id| {
            self.constraints
                .get(id as usize)
                .is_some_and(|known| exactly_equal(known, c))
        });
        if let Some(id) = recent {
            return id;
        }
        let key = key_of(c);
        let id = match self.interned.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.constraints.len() as ConstraintsId;
                self.constraints.push(c.clone());
                let permitted = permitted_values(c);
                self.single_valued.push(permitted == Some(1));
                self.permitted.push(permitted);
                self.interned.insert(key, id);
                id
            }
        };
        self.recent[self.recent_next] = id;
        self.recent_next = (self.recent_next + 1) % RECENT_CONSTRAINTS;
        id
    }

    /// Records a test case's choices. Returns whether the test case was new
    /// (no earlier one made the same choices); once the tree has stopped
    /// growing, unknown paths count as new. An error describes where its
    /// generation differed from an earlier test case with the same earlier choices.
    ///
    /// `ended` says whether the test case ended where its choices end; a test
    /// case cut short by a limit lower than the run's usual one (early small
    /// examples) did not, and a replay of its choices would go on.
    ///
    /// `kills` lists positions (numbers of choices made) where the test case
    /// stopped a discarded span: the node reached there is killed.
    pub fn record(
        &mut self,
        nodes: &[ChoiceNode],
        ended: bool,
        kills: &[usize],
    ) -> Result<bool, String> {
        self.record_streams(nodes, ended, kills, usize::MAX)
    }

    /// [`DataTree::record`] for a test case whose choices from position
    /// `streams_from` on may come from independent streams
    /// ([`TestData::fork_stream`](crate::TestData::fork_stream)) that
    /// shared state between threads: a different kind of choice there is
    /// the threads' race, not the test's generation going astray, and ends
    /// what the tree learns from the test case instead of failing the run.
    pub fn record_streams(
        &mut self,
        nodes: &[ChoiceNode],
        ended: bool,
        kills: &[usize],
        streams_from: usize,
    ) -> Result<bool, String> {
        self.last_end = None;
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let outcome = self.record_along(nodes, ended, kills, streams_from, &mut path);
        self.path = path;
        outcome
    }

    /// How many of `nodes` the tail owned by `at` repeats from its node's
    /// choice on: the same value, forced alike, under the same kind of
    /// constraints; and how many choices the tail has from there.
    fn tail_agreement(&self, at: NodeId, nodes: &[ChoiceNode]) -> (usize, usize) {
        let Some((tail, start)) = self.tail_of(at) else {
            return (0, 0);
        };
        let from = (tail.base + start) as usize;
        let remaining = (tail.len - start) as usize;
        let kinds = &self.tail_kinds[from..from + remaining];
        let values = &self.tail_values[from..from + remaining];
        let agreeing = nodes
            .iter()
            .zip(kinds.iter().zip(values))
            .take_while(|&(node, (&kind, &word))| {
                // Numbers and booleans (nearly all choices) compared here
                // in line, the rest as everywhere else.
                let value_is = match (TailWord::of(kind), &node.value) {
                    (TailWord::Integer, ChoiceValue::Integer(v)) => i128::from(word as i64) == *v,
                    (TailWord::Boolean, ChoiceValue::Boolean(v)) => (word != 0) == *v,
                    (TailWord::Float, ChoiceValue::Float(v)) => word == v.to_bits(),
                    (TailWord::Spilled, value) => self.tail_spilled[word as usize] == *value,
                    _ => false,
                };
                node.forced == (kind & FORCED != 0)
                    && value_is
                    && match (
                        &self.constraints[(kind & ID_MASK) as usize],
                        &node.constraints,
                    ) {
                        (Constraints::Integer(a), Constraints::Integer(b)) => a == b,
                        (Constraints::Boolean { .. }, Constraints::Boolean { .. }) => true,
                        (a, b) => same_kind(a, b),
                    }
            })
            .count();
        (agreeing, remaining)
    }

    /// Turns the first choice of the tail node `at` owns into the node
    /// itself; returns the node standing for the rest (a new node owning
    /// the tail's next choice on, or, past its last choice, a new node
    /// where the tail's test case ended).
    fn expand(&mut self, at: NodeId) -> NodeId {
        let node = self.node(at);
        let (tail_id, start) = (node.child, node.exhausted_children);
        let tail = &self.tails[tail_id as usize];
        let index = (tail.base + start) as usize;
        let (ended, exhausted_from, len) = (tail.ended, tail.exhausted_from, tail.len);
        let kind = self.tail_kinds[index];
        let value = self.tail_value(index).into_owned();
        let child = self.nodes.len() as NodeId;
        let mut below = TreeNode::new();
        if start + 1 < len {
            below.below = Below::Tail;
            below.child = tail_id;
            below.exhausted_children = start + 1;
            below.exhausted = start + 1 >= exhausted_from;
        } else {
            below.ended = match (ended, tail.passed) {
                (false, _) => Ended::No,
                (true, false) => Ended::Yes,
                (true, true) => Ended::Passing,
            };
            below.exhausted = ended;
        }
        let child_exhausted = below.exhausted;
        self.nodes.push(below);
        let node = self.node_mut(at);
        node.below = Below::Plain;
        node.first = Some(value);
        node.child = child;
        node.constraints = kind & ID_MASK;
        node.forcing = if kind & FORCED != 0 {
            Forcing::Forced
        } else {
            Forcing::Free
        };
        node.exhausted_children = u32::from(child_exhausted);
        node.exhausted = start >= exhausted_from;
        child
    }

    /// [`DataTree::expand`] `count` times over (at least once, at most to
    /// the tail's end): the tail's next `count` choices from node `at` on
    /// become nodes, each pushed on `path` as it is passed; returns the
    /// node standing for the rest. Each node is written once, in its final
    /// form.
    fn expand_run(&mut self, at: NodeId, count: usize, path: &mut Vec<NodeId>) -> NodeId {
        let node = self.node(at);
        let (tail_id, start) = (node.child, node.exhausted_children);
        let tail = &self.tails[tail_id as usize];
        let (base, len, exhausted_from) = (tail.base, tail.len, tail.exhausted_from);
        let end = start + count as u32;
        debug_assert!(
            count > 0 && end <= len,
            "{count} choices from {start} of {len}"
        );
        let ended = match (tail.ended, tail.passed) {
            (false, _) => Ended::No,
            (true, false) => Ended::Yes,
            (true, true) => Ended::Passing,
        };
        let first_new = self.nodes.len() as NodeId;
        let DataTree {
            nodes,
            tail_kinds,
            tail_values,
            tail_spilled,
            ..
        } = self;
        // The node for tail choice `c` (`at` for the first, then the nodes
        // from `first_new` on, in order): its choice's value, kind and
        // exhaustion, its child the next node.
        let made = |c: u32, kind: u32, word: u64| TreeNode {
            first: Some(match TailWord::of(kind) {
                TailWord::Integer => ChoiceValue::Integer(i128::from(word as i64)),
                TailWord::Boolean => ChoiceValue::Boolean(word != 0),
                TailWord::Float => ChoiceValue::Float(f64::from_bits(word)),
                TailWord::Spilled => tail_spilled[word as usize].clone(),
            }),
            child: first_new + (c - start),
            constraints: kind & ID_MASK,
            exhausted_children: u32::from(c + 1 >= exhausted_from),
            forcing: if kind & FORCED != 0 {
                Forcing::Forced
            } else {
                Forcing::Free
            },
            below: Below::Plain,
            ended: Ended::No,
            exhausted: c >= exhausted_from,
        };
        let range = (base + start) as usize..(base + end) as usize;
        let (kinds, words) = (&tail_kinds[range.clone()], &tail_values[range]);
        nodes[at as usize] = made(start, kinds[0], words[0]);
        nodes.extend((1..count).map(|k| made(start + k as u32, kinds[k], words[k])));
        // Each node is passed on the way: `at`, then the new ones but the
        // last (the last choice's node, where the rest goes on).
        path.push(at);
        path.extend(first_new..first_new + count as u32 - 1);
        let current = first_new + count as u32 - 1;
        // The rest: the tail from choice `end` on, or where its test case
        // ended (or was cut short).
        let mut rest = TreeNode::new();
        if end < len {
            rest.below = Below::Tail;
            rest.child = tail_id;
            rest.exhausted_children = end;
        } else {
            rest.ended = ended;
        }
        rest.exhausted = end >= exhausted_from;
        self.nodes.push(rest);
        current
    }

    /// Makes node `at` (fresh: nothing known of it) own a tail of `nodes`,
    /// which a test case made from there on.
    fn grow_tail(&mut self, at: NodeId, nodes: &[ChoiceNode], ended: bool, path: &[NodeId]) {
        let base = self.tail_values.len();
        // The tail's words and kinds are sized once and filled in place by
        // a loop without a capacity check per choice; the vectors are held
        // apart from `self` meanwhile, for `intern` and `spill`.
        let mut values = std::mem::take(&mut self.tail_values);
        let mut kinds = std::mem::take(&mut self.tail_kinds);
        values.resize(base + nodes.len(), 0);
        kinds.resize(base + nodes.len(), 0);
        // A test case draws the same few kinds of choice over and over (a
        // state machine's step cycles through more than two: go on?, rule,
        // swarm flags, the rule's draws): the last eight kinds are looked up
        // without building their keys.
        // Only the first `known` entries of `last` hold kinds.
        const UNUSED: &Constraints = &Constraints::Boolean { p: 0.0 };
        let mut last: [(&Constraints, ConstraintsId); 8] = [(UNUSED, UNKNOWN); 8];
        let mut known = 0;
        // Before those, the last integer's and the last boolean's kinds (a
        // collection of integers alternates the two), compared field by
        // field without a search; kept from tail to tail.
        let (mut last_integer, mut last_boolean) = std::mem::replace(
            &mut self.last_tail_kinds,
            (
                (CompactIntegerConstraints::UNBOUNDED, UNKNOWN),
                (0, UNKNOWN),
            ),
        );
        let mut done = 0;
        while done < nodes.len() {
            // Nearly every choice: an integer fitting a word, or a boolean,
            // of the last such kind, written by a loop of their own.
            done += record_run(
                &nodes[done..],
                &mut values[base + done..],
                &mut kinds[base + done..],
                &mut self.tail_spilled,
                &last_integer,
                last_boolean,
            );
            let Some(node) = nodes.get(done) else {
                break;
            };
            let (id, word, tag) = {
                // (No kind met yet: its id is `UNKNOWN`, as for no match.)
                let same = match &node.constraints {
                    Constraints::Integer(c) if last_integer.0 == *c => last_integer.1,
                    Constraints::Boolean { p } if last_boolean.0 == p.to_bits() => last_boolean.1,
                    _ => UNKNOWN,
                };
                let id = if same != UNKNOWN {
                    same
                } else {
                    let id = match last[..known]
                        .iter()
                        .find(|(c, _)| exactly_equal(c, &node.constraints))
                    {
                        Some(&(_, id)) => id,
                        None => {
                            let id = self.intern(&node.constraints);
                            last.rotate_right(1);
                            last[0] = (&node.constraints, id);
                            known = (known + 1).min(last.len());
                            id
                        }
                    };
                    match &node.constraints {
                        Constraints::Integer(c) => last_integer = (c.clone(), id),
                        Constraints::Boolean { p } => last_boolean = (p.to_bits(), id),
                        _ => {}
                    }
                    id
                };
                let (word, tag) = match node.value {
                    ChoiceValue::Integer(v) if v as i64 as i128 == v => {
                        (v as u64, TailWord::Integer)
                    }
                    ChoiceValue::Boolean(v) => (u64::from(v), TailWord::Boolean),
                    ChoiceValue::Float(v) => (v.to_bits(), TailWord::Float),
                    _ => self.spill(&node.value),
                };
                (id, word, tag)
            };
            debug_assert!(id <= ID_MASK, "{id} interned constraints");
            let forced = if node.forced { FORCED } else { 0 };
            values[base + done] = word;
            kinds[base + done] = id | forced | tag.bits();
            done += 1;
        }
        self.last_tail_kinds = (last_integer, last_boolean);
        let len = nodes.len() as u32;
        // Every path from the choice after the last free one that permits
        // more than one value is exhausted, when the test case ended.
        let exhausted_from = if ended {
            kinds[base..]
                .iter()
                .rposition(|&kind| {
                    kind & FORCED == 0 && !self.single_valued[(kind & ID_MASK) as usize]
                })
                .map_or(0, |i| i as u32 + 1)
        } else {
            len + 1
        };
        self.tail_values = values;
        self.tail_kinds = kinds;
        let base = base as u32;
        let tail = self.tails.len() as u32;
        self.tails.push(Tail {
            base,
            len,
            ended,
            passed: false,
            exhausted_from,
        });
        let node = self.node_mut(at);
        node.below = Below::Tail;
        node.child = tail;
        node.exhausted_children = 0;
        if exhausted_from == 0 {
            node.exhausted = false;
            self.mark_exhausted(at, path);
        }
    }

    /// Nodes and tail choices held: what [`DataTree::max_nodes`] bounds.
    fn size(&self) -> usize {
        self.nodes.len() + self.tail_values.len()
    }

    fn record_along(
        &mut self,
        nodes: &[ChoiceNode],
        ended: bool,
        kills: &[usize],
        streams_from: usize,
        path: &mut Vec<NodeId>,
    ) -> Result<bool, String> {
        let mut at: NodeId = 0;
        let mut i = 0;
        while i < nodes.len() {
            if self.node(at).below == Below::Tail {
                let (agreeing, remaining) = self.tail_agreement(at, &nodes[i..]);
                if i + agreeing == nodes.len() && kills.is_empty() {
                    // The test case follows the tail and stops on it: nothing
                    // changes unless it ended where no test case ended before.
                    let tail = self.node(at).child;
                    let end_known = agreeing == remaining && self.tails[tail as usize].ended;
                    if end_known && ended && nodes.len() <= streams_from {
                        self.last_end = Some(EndAt::Tail(tail));
                    }
                    if !ended || end_known {
                        return Ok(!end_known);
                    }
                }
                // What changes is at choice `agreeing` of the tail: the
                // choices up to there become nodes.
                if agreeing > 0 {
                    at = self.expand_run(at, agreeing, path);
                    i += agreeing;
                }
                if self.node(at).below == Below::Tail {
                    self.expand(at);
                }
                continue;
            }
            // A node with one child, that of the value made here, under the
            // same kind of constraints (a node along the path of an earlier
            // test case, the mutations' base): passed in line, what the
            // steps below would do for it.
            let here = &self.nodes[at as usize];
            let node = &nodes[i];
            if here.below == Below::Plain
                && let Some(first) = &here.first
                && *first == node.value
                && let Some(previous) = self.constraints.get(here.constraints as usize)
                && match (previous, &node.constraints) {
                    (Constraints::Integer(a), Constraints::Integer(b)) => a == b,
                    (Constraints::Boolean { .. }, Constraints::Boolean { .. }) => true,
                    (a, b) => same_kind(a, b),
                }
            {
                // Forced again, to the only child's value: still forced.
                let forcing = match (here.forcing, node.forced) {
                    (Forcing::Unknown, false) => Forcing::Free,
                    (Forcing::Unknown, true) => Forcing::Forced,
                    (Forcing::Free, true) | (Forcing::Forced, false) => Forcing::Mixed,
                    (other, _) => other,
                };
                let child = here.child;
                path.push(at);
                self.nodes[at as usize].forcing = forcing;
                at = child;
                i += 1;
                continue;
            }
            // Not at a killed node: a tail's position says it is exhausted
            // only when the tail's test case exhausted it.
            if self.compress
                && self.node(at).is_fresh()
                && !self.node(at).exhausted
                && kills.is_empty()
                && self.size() + (nodes.len() - i) <= self.max_nodes
            {
                self.grow_tail(at, &nodes[i..], ended, path);
                if ended && nodes.len() <= streams_from {
                    self.last_end = Some(EndAt::Tail(self.tails.len() as u32 - 1));
                }
                return Ok(true);
            }
            let node = &nodes[i];
            path.push(at);
            let known = self.node(at);
            let forcing = match (known.forcing, node.forced) {
                (Forcing::Unknown, false) => Forcing::Free,
                (Forcing::Unknown, true) => Forcing::Forced,
                (Forcing::Free, true) | (Forcing::Forced, false) => Forcing::Mixed,
                // Forced again: to the same value as before?
                (Forcing::Forced, true) => match self.only_child(Position::at(at)) {
                    Some((value, _)) if *value != node.value => Forcing::Mixed,
                    _ => Forcing::Forced,
                },
                (other, _) => other,
            };
            // A node owning no tail: its constraints are its own.
            match self.constraints.get(self.node(at).constraints as usize) {
                Some(previous) if same_kind(previous, &node.constraints) => {}
                Some(_) if i >= streams_from => {
                    self.node_mut(at).forcing = Forcing::Mixed;
                    return Ok(true);
                }
                Some(previous) => {
                    return Err(format!(
                        "choice {} asked for {} where an earlier test case with the same earlier choices asked for {}",
                        i + 1,
                        describe(&node.constraints),
                        describe(previous)
                    ));
                }
                None => {
                    let id = self.intern(&node.constraints);
                    self.node_mut(at).constraints = id;
                }
            }
            self.node_mut(at).forcing = forcing;
            if let Some(next) = self.branch_entry(at, &node.value) {
                at = match next {
                    Some(child) => child,
                    None => return Ok(true),
                };
                i += 1;
                continue;
            }
            at = match self.child(Position::at(at), &node.value) {
                Some(child) => child.node,
                None if self.size() < self.max_nodes => {
                    let child = self.nodes.len() as NodeId;
                    self.nodes.push(TreeNode::new());
                    self.insert_child(at, node.value.clone(), child);
                    child
                }
                None => return Ok(true),
            };
            i += 1;
        }
        if self.node(at).below == Below::Tail {
            // The test case ended on the first choice of a tail (after a
            // node, with nothing left to follow): that choice becomes a
            // node, where it ended.
            if !ended && kills.is_empty() {
                return Ok(true);
            }
            self.expand(at);
        }
        let new = self.node(at).ended == Ended::No;
        if ended {
            if new {
                self.node_mut(at).ended = Ended::Yes;
            }
            if nodes.len() <= streams_from {
                self.last_end = Some(EndAt::Node(at));
            }
            if self.child_count(Position::at(at)) == 0 {
                self.mark_exhausted(at, path);
            }
        }
        for &position in kills {
            match position.cmp(&path.len()) {
                std::cmp::Ordering::Less => self.mark_exhausted(path[position], &path[..position]),
                std::cmp::Ordering::Equal => self.mark_exhausted(at, path),
                std::cmp::Ordering::Greater => {}
            }
        }
        Ok(new)
    }

    /// Notes whether the test case just recorded failed; returns whether it
    /// failed where an earlier test case with the same choices ended without
    /// failing (Hypothesis's "inconsistent results from replaying a test
    /// case"): the test depends on something other than its choices. Says
    /// nothing for a test case that did not run to its end on a path the
    /// tree holds, or whose choices came from racing streams.
    pub fn note_outcome(&mut self, failed: bool) -> bool {
        match self.last_end.take() {
            None => false,
            Some(EndAt::Node(at)) => {
                let node = self.node_mut(at);
                if failed {
                    node.ended == Ended::Passing
                } else {
                    node.ended = Ended::Passing;
                    false
                }
            }
            Some(EndAt::Tail(tail)) => {
                let tail = &mut self.tails[tail as usize];
                if failed {
                    tail.passed
                } else {
                    tail.passed = true;
                    false
                }
            }
        }
    }

    /// Marks node `at` exhausted, then each ancestor (`path` leads from the
    /// root to `at`'s parent) whose every permitted value is now exhausted.
    fn mark_exhausted(&mut self, at: NodeId, path: &[NodeId]) {
        if self.node(at).exhausted {
            return;
        }
        self.node_mut(at).exhausted = true;
        for &parent in path.iter().rev() {
            // One more of the parent's children is exhausted.
            self.node_mut(parent).exhausted_children += 1;
            if self.node(parent).exhausted || !self.all_values_exhausted(parent) {
                break;
            }
            self.node_mut(parent).exhausted = true;
        }
    }

    /// Whether following `prefix` reaches an exhausted node (a killed one,
    /// or one under which everything has run): a test case starting with it
    /// explores nothing new.
    pub fn prefix_is_exhausted(&self, prefix: &[ChoiceValue]) -> bool {
        self.exhausted_along(Position::at(0), prefix)
    }

    /// [`DataTree::prefix_is_exhausted`] for the rest of a prefix, from
    /// position `at` on.
    fn exhausted_along(&self, mut at: Position, prefix: &[ChoiceValue]) -> bool {
        for value in prefix {
            let known = self.known(at);
            if known.exhausted {
                return true;
            }
            let next = match known.forcing {
                Forcing::Forced => self.only_child(at).map(|(_, child)| child),
                _ => self.child(at, value),
            };
            match next {
                Some(child) => at = child,
                None => return false,
            }
        }
        self.known(at).exhausted
    }

    /// A prefix for the next generated test case that leads somewhere new:
    /// from the root, at each node whose choice is known, a value drawn as
    /// generation would draw it, redrawn while it leads to an exhausted
    /// node; the walk ends at the first value no test case made there (or
    /// where the tree knows nothing, or cannot avoid an exhausted branch).
    /// Forced choices are followed as they were made.
    pub fn novel_prefix(&self, source: &mut Source) -> Vec<ChoiceValue> {
        let mut prefix = Vec::new();
        self.novel_prefix_into(source, &mut prefix);
        prefix
    }

    /// [`DataTree::novel_prefix`], written into `prefix` (emptied first):
    /// a run passes each test case's prefix vector on to the next.
    pub fn novel_prefix_into(&self, source: &mut Source, prefix: &mut Vec<ChoiceValue>) {
        const DRAWS: usize = 10;
        prefix.clear();
        let mut at = Position::at(0);
        loop {
            let known = self.known(at);
            if known.exhausted || known.ends_here {
                return;
            }
            let Some(constraints) = self.constraints.get(known.constraints as usize) else {
                return;
            };
            match known.forcing {
                Forcing::Forced => match self.only_child(at) {
                    Some((value, child)) => {
                        prefix.push(value.into_owned());
                        at = child;
                    }
                    None => return,
                },
                Forcing::Free => {
                    // The drawn value with its child, looked up once: a node
                    // with many children (an unbounded integer) keeps them
                    // in a large map, where each lookup is a cache miss.
                    let mut chosen = None;
                    for _ in 0..DRAWS {
                        let v = crate::random::any(source, constraints);
                        match self.child(at, &v) {
                            Some(child) if self.known(child).exhausted => continue,
                            next => {
                                chosen = Some((v, next));
                                break;
                            }
                        }
                    }
                    let chosen = chosen.or_else(|| {
                        self.unexhausted_value(at, source).map(|value| {
                            let next = self.child(at, &value);
                            (value, next)
                        })
                    });
                    let Some((value, next)) = chosen else {
                        return;
                    };
                    prefix.push(value);
                    match next {
                        Some(child) => at = child,
                        None => return,
                    }
                }
                Forcing::Unknown | Forcing::Mixed => return,
            }
        }
    }

    /// A value at `at` that does not lead to an exhausted node, when
    /// random draws kept hitting exhausted ones: one never made there (for
    /// a counted choice) or a known child that is not exhausted.
    fn unexhausted_value(&self, at: Position, source: &mut Source) -> Option<ChoiceValue> {
        let constraints = self.constraints_of(at)?;
        // Counted, not searched for: a node with many children (an
        // unbounded integer after thousands of test cases), all exhausted,
        // has none open, and costs nothing to ask.
        let open_children = self
            .child_count(at)
            .saturating_sub(self.known(at).exhausted_children as usize);
        let open: Vec<Cow<'_, ChoiceValue>> = if open_children > 0 {
            self.children(at)
                .filter(|(_, child)| !self.known(*child).exhausted)
                .map(|(v, _)| v)
                .collect()
        } else {
            Vec::new()
        };
        let unseen = permitted_values(constraints).and_then(|n| {
            let seen = self.child_count(at) as u128;
            if seen >= n {
                return None;
            }
            // Start at a random index and take the first value never made.
            let start = source.up_to_u128(n - 1);
            (0..n)
                .map(|k| value_at(constraints, (start + k) % n))
                .find(|v| v.as_ref().is_some_and(|v| self.child(at, v).is_none()))
                .flatten()
        });
        match unseen {
            Some(v) if open.is_empty() || source.chance(0.5) => Some(v),
            _ if !open.is_empty() => {
                // The value at a random place of the open values sorted by
                // simplicity (a stable sort: alike values in their order in
                // `open`), selected rather than sorted: a nearly exhausted
                // node has hundreds of open values, and asks on every
                // test case.
                let k = source.below(open.len() as u64) as usize;
                let mut ranked: Vec<(usize, &ChoiceValue)> =
                    open.iter().map(|v| v.as_ref()).enumerate().collect();
                let (_, &mut (_, value), _) = ranked.select_nth_unstable_by(k, |(i, a), (j, b)| {
                    a.simplicity_cmp(b, constraints).then(i.cmp(j))
                });
                Some(value.clone())
            }
            other => other,
        }
    }

    /// Whether every test case the run could generate has run.
    pub fn is_exhausted(&self) -> bool {
        self.known(Position::at(0)).exhausted
    }

    /// Whether each value the choice at node `at` permits leads to an exhausted node.
    fn all_values_exhausted(&self, at: NodeId) -> bool {
        let node = self.node(at);
        let permitted = match node.forcing {
            Forcing::Forced => Some(1),
            Forcing::Free => self
                .permitted
                .get(self.known(Position::at(at)).constraints as usize)
                .copied()
                .flatten(),
            _ => None,
        };
        permitted.is_some_and(|n| u128::from(node.exhausted_children) >= n)
    }

    /// Whether replaying `choices` (simplest values past them, as
    /// [`TestData::replaying`](crate::TestData::replaying) does) would only
    /// walk a path some earlier test case walked to its end: its outcome is
    /// then already known. False when any step is unknown or ambiguous.
    pub fn replay_is_known(&self, choices: &[ChoiceValue]) -> bool {
        self.known_replay_length(choices).is_some()
    }

    /// How many choices replaying `choices` makes, when the replay is known
    /// ([`DataTree::replay_is_known`]).
    pub fn known_replay_length(&self, choices: &[ChoiceValue]) -> Option<usize> {
        self.known_replay_from(Position::at(0), 0, choices)
    }

    /// [`DataTree::known_replay_length`] of a replay at position `at`
    /// after its first `i` choices.
    fn known_replay_from(
        &self,
        mut at: Position,
        mut i: usize,
        choices: &[ChoiceValue],
    ) -> Option<usize> {
        loop {
            if self.known(at).ends_here {
                // A deterministic test always ends here after these choices;
                // if some test case also went on from here, it is not.
                return (self.child_count(at) == 0).then_some(i);
            }
            at = self.replay_step(at, choices.get(i))?;
            i += 1;
        }
    }

    /// Whether a test case starting with `choices` would run nothing new:
    /// they lead to an exhausted node ([`DataTree::prefix_is_exhausted`])
    /// or replaying them is known ([`DataTree::replay_is_known`]). The
    /// same answer as asking both, in one walk of the tree while the two
    /// walks follow the same path (they part only at a value the choice
    /// does not permit, or where the tree knows less), and along a tail
    /// without building its positions' [`Known`]s: a run checks each
    /// mutation it makes, a whole test case long.
    pub fn runs_nothing_new(&self, choices: &[ChoiceValue]) -> bool {
        let (mut at, mut i) = (Position::at(0), 0usize);
        loop {
            // A run of nodes with one child each (nothing ends there, not
            // exhausted) that the choices follow: a forced choice, or a free
            // one (not a boolean's, whose child's value was made under any
            // boolean's constraints) that made the value offered. Passed in
            // line, where the steps below would go.
            while at.offset == 0
                && let Some(value) = choices.get(i)
            {
                let node = &self.nodes[at.node as usize];
                if node.below != Below::Plain || node.exhausted || node.ends_here() {
                    break;
                }
                let (Some(first), Some(constraints)) =
                    (&node.first, self.constraints.get(node.constraints as usize))
                else {
                    break;
                };
                let follows = match node.forcing {
                    Forcing::Forced => true,
                    Forcing::Free => {
                        !matches!(constraints, Constraints::Boolean { .. }) && first == value
                    }
                    Forcing::Unknown | Forcing::Mixed => false,
                };
                if !follows {
                    break;
                }
                at = Position::at(node.child);
                i += 1;
            }
            if let Some((tail, start)) = self.tail_of(at.node) {
                // Inside a tail nothing ends and nothing is unknown: a forced
                // choice goes on, a free one goes on when the value permitted
                // there is the tail's (another permitted value is a child no
                // test case made: neither walk knows it).
                let mut index = start + at.offset;
                while index < tail.len && i < choices.len() {
                    if index >= tail.exhausted_from {
                        return true;
                    }
                    let word = (tail.base + index) as usize;
                    let kind = self.tail_kinds[word];
                    // (The tail's own value is permitted there: checked
                    // first, it spares the test of the constraints.)
                    let same = match (TailWord::of(kind), &choices[i]) {
                        (TailWord::Integer, ChoiceValue::Integer(v)) => {
                            i128::from(self.tail_values[word] as i64) == *v
                        }
                        (TailWord::Boolean, ChoiceValue::Boolean(v)) => {
                            (self.tail_values[word] != 0) == *v
                        }
                        (_, value) => self.tail_value_is(word, value),
                    };
                    if kind & FORCED == 0 && !same {
                        if !self.constraints[(kind & ID_MASK) as usize].permits(&choices[i]) {
                            break;
                        }
                        return false;
                    }
                    index += 1;
                    at.offset += 1;
                    i += 1;
                }
            }
            let known = self.known(at);
            let Some(value) = choices.get(i) else {
                return known.exhausted || self.known_replay_from(at, i, choices).is_some();
            };
            if known.exhausted {
                return true;
            }
            if known.ends_here {
                return self.child_count(at) == 0 || self.exhausted_along(at, &choices[i..]);
            }
            let constraints = self.constraints.get(known.constraints as usize);
            // A free choice's child: its value was permitted there, under
            // these very constraints but for a boolean's (any boolean is a
            // boolean of the same kind), so only a value no test case chose
            // there needs the test of the constraints.
            let known_child = match (known.forcing, constraints) {
                (Forcing::Free, Some(c)) if !matches!(c, Constraints::Boolean { .. }) => {
                    self.child(at, value)
                }
                _ => None,
            };
            let next = match (known.forcing, constraints) {
                _ if known_child.is_some() => known_child,
                (Forcing::Forced, Some(_)) => self.only_child(at).map(|(_, child)| child),
                (Forcing::Free, Some(c)) if c.permits(value) => self.child(at, value),
                _ => {
                    // The walks part here: each goes on alone.
                    let replay = self
                        .replay_step(at, Some(value))
                        .and_then(|next| self.known_replay_from(next, i + 1, choices));
                    if replay.is_some() {
                        return true;
                    }
                    let next = match known.forcing {
                        Forcing::Forced => self.only_child(at).map(|(_, child)| child),
                        _ => self.child(at, value),
                    };
                    return next.is_some_and(|next| self.exhausted_along(next, &choices[i + 1..]));
                }
            };
            match next {
                Some(next) => at = next,
                None => return false,
            }
            i += 1;
        }
    }

    /// The constraints of the choice a replay of `choices` makes right after
    /// them, when the tree knows it (`None` when it does not, or when that
    /// replay may end there).
    pub fn constraints_after(&self, choices: &[ChoiceValue]) -> Option<&Constraints> {
        let mut at = Position::at(0);
        for value in choices {
            if self.known(at).ends_here {
                return None;
            }
            at = self.replay_step(at, Some(value))?;
        }
        if self.known(at).ends_here {
            return None;
        }
        self.constraints_of(at)
    }

    /// Whether replaying `choices` is known to need choices past their end:
    /// where they stop (after any forced choices, which need none), a test
    /// case went on drawing freely, and none ended there.
    pub fn replay_runs_past(&self, choices: &[ChoiceValue]) -> bool {
        let mut at = Position::at(0);
        for value in choices {
            if self.known(at).ends_here {
                return false;
            }
            match self.replay_step(at, Some(value)) {
                Some(child) => at = child,
                None => return false,
            }
        }
        loop {
            let known = self.known(at);
            if known.ends_here || known.constraints == UNKNOWN {
                return false;
            }
            match known.forcing {
                Forcing::Free => return true,
                Forcing::Forced => match self.replay_step(at, None) {
                    Some(child) => at = child,
                    None => return false,
                },
                _ => return false,
            }
        }
    }

    /// The position a replay moves to from `at` when the choice it offers
    /// there is `offered` (`None`: past the end of its choices): a forced
    /// choice ignores it, a misfit or a missing one is the simplest value.
    /// `None` when the tree cannot tell (nothing known, not deterministic,
    /// or a value no test case took there).
    fn replay_step(&self, at: Position, offered: Option<&ChoiceValue>) -> Option<Position> {
        let known = self.known(at);
        let constraints = self.constraints.get(known.constraints as usize)?;
        match (known.forcing, offered) {
            (Forcing::Forced, _) => self.only_child(at).map(|(_, child)| child),
            (Forcing::Unknown | Forcing::Mixed, _) => None,
            (Forcing::Free, Some(v)) if constraints.permits(v) => self.child(at, v),
            (Forcing::Free, Some(_)) => self.child(at, &constraints.simplest()),
            (Forcing::Free, None) => self.child(at, &constraints.simplest()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::IntegerConstraints;

    fn int(min: i128, v: i128) -> ChoiceNode {
        ChoiceNode {
            constraints: Constraints::integer(IntegerConstraints {
                min: Some(min),
                max: None,
                shrink_towards: 0,
            }),
            value: ChoiceValue::Integer(v),
            forced: false,
        }
    }

    #[test]
    fn consistent_generation_is_accepted_and_drift_is_caught() {
        let mut tree = DataTree::default();
        assert!(tree.record(&[int(0, 5), int(0, 1)], true, &[]).unwrap());
        assert!(tree.record(&[int(0, 5), int(0, 2)], true, &[]).unwrap());
        assert!(tree.record(&[int(0, 6)], true, &[]).unwrap());
        // A repeat, and a prefix of an earlier path, are told apart.
        assert!(!tree.record(&[int(0, 5), int(0, 1)], true, &[]).unwrap());
        assert!(tree.record(&[int(0, 5)], true, &[]).unwrap());
        assert!(!tree.record(&[int(0, 5)], true, &[]).unwrap());
        let error = tree.record(&[int(1, 5)], true, &[]).unwrap_err();
        assert!(error.contains("choice 1"), "{error}");
        let error = tree.record(&[int(0, 5), int(3, 9)], true, &[]).unwrap_err();
        assert!(error.contains("choice 2"), "{error}");
    }

    #[test]
    fn drift_inside_streams_ends_the_record_instead_of_failing() {
        let mut tree = DataTree::default();
        tree.record(&[int(0, 5), int(0, 1)], true, &[]).unwrap();
        assert!(tree.record(&[int(0, 5), int(3, 9)], true, &[]).is_err());
        assert!(
            tree.record_streams(&[int(0, 5), int(3, 9)], true, &[], 1)
                .unwrap()
        );
        // The node where the streams raced is known to be unpredictable.
        assert!(!tree.replay_is_known(&[i(5), i(1)]));
        // Before the first stream, drift is still the test's.
        assert!(tree.record_streams(&[int(1, 5)], true, &[], 1).is_err());
    }

    fn i(v: i128) -> ChoiceValue {
        ChoiceValue::Integer(v)
    }

    #[test]
    fn known_replays_follow_simplest_values_and_forced_choices() {
        let mut tree = DataTree::default();
        // The test draws x >= 0, and a second integer only when x > 0.
        tree.record(&[int(0, 0)], true, &[]).unwrap();
        tree.record(&[int(0, 3), int(0, 0)], true, &[]).unwrap();
        assert!(tree.replay_is_known(&[i(0)]));
        assert!(tree.replay_is_known(&[]), "the empty prefix replays as [0]");
        assert!(
            tree.replay_is_known(&[ChoiceValue::Boolean(true)]),
            "a misfit replays as the simplest value"
        );
        assert!(
            tree.replay_is_known(&[i(-7)]),
            "an out-of-bounds misfit replays as the simplest value"
        );
        assert!(
            tree.replay_is_known(&[i(3)]),
            "past the prefix: simplest values"
        );
        assert!(
            tree.replay_is_known(&[i(3), i(0), i(9)]),
            "the test ends before the extra choice"
        );
        assert!(!tree.replay_is_known(&[i(3), i(1)]));
        assert!(!tree.replay_is_known(&[i(4)]));
        // A forced choice ignores the prefix.
        let mut forced = int(0, 2);
        forced.forced = true;
        tree.record(&[int(0, 5), forced.clone()], true, &[])
            .unwrap();
        assert!(tree.replay_is_known(&[i(5), i(0)]));
        // A test case cut short by a lower limit did not end there.
        tree.record(&[int(0, 6)], false, &[]).unwrap();
        assert!(!tree.replay_is_known(&[i(6)]));
    }

    #[test]
    fn runs_past_only_where_a_free_choice_is_known_to_follow() {
        let mut tree = DataTree::default();
        tree.record(&[int(0, 0)], true, &[]).unwrap();
        tree.record(&[int(0, 3), int(0, 0)], true, &[]).unwrap();
        assert!(
            tree.replay_runs_past(&[i(3)]),
            "x = 3 draws a second integer"
        );
        assert!(!tree.replay_runs_past(&[i(0)]), "x = 0 ends there");
        assert!(!tree.replay_runs_past(&[i(4)]), "x = 4 was never run");
        assert!(!tree.replay_runs_past(&[i(3), i(0)]));
        // A forced choice next needs no value from the candidate.
        let mut forced = int(0, 2);
        forced.forced = true;
        tree.record(&[int(0, 5), forced], true, &[]).unwrap();
        assert!(!tree.replay_runs_past(&[i(5)]));
    }

    fn boolean(v: bool) -> ChoiceNode {
        ChoiceNode {
            constraints: Constraints::Boolean { p: 0.5 },
            value: ChoiceValue::Boolean(v),
            forced: false,
        }
    }

    #[test]
    fn a_run_of_wide_integers_and_booleans_is_recorded_as_drawn() {
        // Integers under bounds wider than a word (values in and out of a
        // word's range, the latter spilled) alternating with booleans: the
        // tail's run as `record_run` writes it.
        let wide = |v: i128| ChoiceNode {
            constraints: Constraints::integer(IntegerConstraints {
                min: Some(i128::MIN),
                max: Some(i128::MAX),
                shrink_towards: 0,
            }),
            value: ChoiceValue::Integer(v),
            forced: false,
        };
        let values = [3, i128::MAX, -7, i128::MIN + 1, 1 << 64, 0];
        let nodes: Vec<ChoiceNode> = values
            .iter()
            .flat_map(|&v| [boolean(true), wide(v)])
            .chain([boolean(false)])
            .collect();
        let mut tree = DataTree::default();
        assert!(tree.record(&nodes, true, &[]).unwrap());
        assert!(!tree.record(&nodes, true, &[]).unwrap());
        // Each value, in or out of a word, is told apart from another.
        for k in 0..values.len() {
            let mut other = nodes.clone();
            other[2 * k + 1] = wide(values[k] ^ 1);
            assert!(tree.record(&other, true, &[]).unwrap(), "choice {k}");
            assert!(!tree.record(&other, true, &[]).unwrap(), "choice {k}");
        }
        assert!(!tree.record(&nodes, true, &[]).unwrap());
    }

    #[test]
    fn a_test_without_choices_is_exhausted_after_one_test_case() {
        let mut tree = DataTree::default();
        assert!(!tree.is_exhausted());
        tree.record(&[], true, &[]).unwrap();
        assert!(tree.is_exhausted());
    }

    #[test]
    fn exhausted_once_every_permitted_value_has_run() {
        let mut tree = DataTree::default();
        tree.record(&[boolean(false)], true, &[]).unwrap();
        assert!(!tree.is_exhausted());
        tree.record(&[boolean(true), boolean(false)], true, &[])
            .unwrap();
        assert!(!tree.is_exhausted());
        tree.record(&[boolean(true), boolean(true)], true, &[])
            .unwrap();
        assert!(tree.is_exhausted());
    }

    #[test]
    fn unbounded_or_cut_short_paths_never_exhaust() {
        let mut tree = DataTree::default();
        tree.record(&[int(0, 1)], true, &[]).unwrap();
        assert!(!tree.is_exhausted(), "an integer bounded only below");
        let mut tree = DataTree::default();
        tree.record(&[], false, &[]).unwrap();
        assert!(!tree.is_exhausted(), "a test case cut short by a limit");
    }
    fn bounded(min: i128, max: i128, v: i128) -> ChoiceNode {
        ChoiceNode {
            constraints: Constraints::integer(IntegerConstraints::bounded(min, max)),
            value: ChoiceValue::Integer(v),
            forced: false,
        }
    }

    #[test]
    fn a_discarded_span_kills_its_branch() {
        let mut tree = DataTree::default();
        // Filter attempts over 0..=2, each discarded after its one choice.
        tree.record(&[bounded(0, 2, 1), bounded(0, 2, 1)], true, &[1, 2])
            .unwrap();
        tree.record(&[bounded(0, 2, 0), bounded(0, 2, 2)], true, &[1, 2])
            .unwrap();
        assert!(!tree.is_exhausted(), "2 was never the first attempt");
        tree.record(&[bounded(0, 2, 2), bounded(0, 2, 0)], true, &[1, 2])
            .unwrap();
        assert!(tree.is_exhausted());
        // Without the kills the same paths exhaust nothing.
        let mut tree = DataTree::default();
        for first in 0..3 {
            tree.record(&[bounded(0, 2, first), bounded(0, 2, 0)], true, &[])
                .unwrap();
        }
        assert!(!tree.is_exhausted());
    }

    /// A branch killed before any test case made a choice there stays
    /// exhausted when a later one runs on past it (making there new
    /// choices, which the tree keeps as a tail). Found by
    /// `tails_change_no_answer_of_the_tree` at seed 1258 of 5000.
    #[test]
    fn a_killed_branch_stays_killed_when_a_tail_grows_there() {
        for compress in [true, false] {
            let mut tree = DataTree {
                compress,
                ..DataTree::default()
            };
            // Cut short after one choice, its span discarded there.
            tree.record(&[bounded(0, 3, 1)], false, &[1]).unwrap();
            let past = [bounded(0, 3, 1), boolean(true), bounded(0, 2, 0)];
            tree.record(&past, true, &[]).unwrap();
            for prefix in [&[i(1)][..], &[i(1), ChoiceValue::Boolean(false)]] {
                assert!(
                    tree.prefix_is_exhausted(prefix),
                    "compress {compress}, {prefix:?}"
                );
            }
            assert!(!tree.prefix_is_exhausted(&[i(0)]), "compress {compress}");
        }
    }

    /// Values other than integers in a word are kept with their hashes:
    /// the map holds its children in the order a map hashing each value
    /// would (what the tree's walks meet first depends on it), and finds
    /// each of them.
    #[test]
    fn other_children_keep_the_order_of_a_map_of_values() {
        let value = |k: u32| match k % 4 {
            0 => ChoiceValue::String((0..=k % 13).map(|c| c + k).collect()),
            1 => ChoiceValue::Bytes(k.to_le_bytes().repeat(1 + (k % 7) as usize)),
            2 => ChoiceValue::Float(f64::from(k) / 3.0),
            _ => ChoiceValue::Integer(i128::MAX - i128::from(k)),
        };
        let mut children = ChildMap::default();
        let mut plain: HashMap<ChoiceValue, NodeId, FixedState> = HashMap::default();
        for k in 0..3000u32 {
            let v = value(k);
            // Half through the entry (numbers make room first, as a map's
            // entry does), half by insertion.
            if k % 2 == 0 {
                let cheap = !matches!(v, ChoiceValue::String(_) | ChoiceValue::Bytes(_));
                assert_eq!(children.entry(&v, true, cheap, || k), Some(k));
                assert_eq!(children.entry(&v, false, cheap, || 0), Some(k));
            } else {
                children.insert(v.clone(), k);
            }
            plain.insert(v, k);
        }
        assert_eq!(children.entry(&value(3001), false, true, || 0), None);
        plain.reserve(1);
        let ours: Vec<(ChoiceValue, NodeId)> =
            children.iter().map(|(v, c)| (v.into_owned(), c)).collect();
        let theirs: Vec<(ChoiceValue, NodeId)> =
            plain.iter().map(|(v, &c)| (v.clone(), c)).collect();
        assert_eq!(ours, theirs);
        for k in 0..3000u32 {
            assert_eq!(children.get(&value(k)), Some(k), "{k}");
        }
        assert_eq!(children.get(&value(3001)), None);
        assert_eq!(children.len(), 3000);
    }

    /// One string per test case: a node branching by strings records each
    /// new one once and tells repeats apart, as a full tree still does for
    /// strings it holds.
    #[test]
    fn string_children_are_recorded_once() {
        let string = |v: &str| ChoiceNode {
            constraints: Constraints::String {
                alphabet: Arc::new(crate::charset::CharSet::from_intervals(vec![(0, 0x10ffff)])),
                size: crate::choice::SizeConstraints {
                    min_size: 0,
                    max_size: 10,
                },
            },
            value: ChoiceValue::String(v.chars().map(u32::from).collect()),
            forced: false,
        };
        let mut tree = DataTree {
            max_nodes: 8,
            ..DataTree::default()
        };
        for v in ["a", "b", "c", "d", "e", "f", "g", "h", "i"] {
            assert!(tree.record(&[string(v)], true, &[]).unwrap(), "{v}");
        }
        assert!(!tree.record(&[string("b")], true, &[]).unwrap());
        assert!(tree.prefix_is_exhausted(&[ChoiceValue::String(vec![u32::from('c')])]));
        // Past the full tree's size, a string is new every time.
        assert!(tree.record(&[string("i")], true, &[]).unwrap());
        assert!(!tree.prefix_is_exhausted(&[ChoiceValue::String(vec![u32::from('i')])]));
    }

    #[test]
    fn nodes_stay_small() {
        // A million of them may be held: each byte is a megabyte.
        assert!(std::mem::size_of::<TreeNode>() <= 48);
    }

    #[test]
    fn novel_prefixes_avoid_exhausted_branches() {
        let mut tree = DataTree::default();
        let mut source = Source::from_seed(9);
        // One choice in 0..=99; 98 of the values have run.
        for v in 0..100 {
            if v != 17 && v != 60 {
                tree.record(&[bounded(0, 99, v)], true, &[]).unwrap();
            }
        }
        let mut seen = std::collections::HashSet::new();
        for _ in 0..50 {
            let prefix = tree.novel_prefix(&mut source);
            assert_eq!(prefix.len(), 1);
            seen.insert(prefix[0].clone());
        }
        let expected: std::collections::HashSet<_> = [i(17), i(60)].into_iter().collect();
        assert_eq!(seen, expected);
        // Below a known, open node the walk goes on to the new value.
        let mut tree = DataTree::default();
        tree.record(&[boolean(false)], true, &[]).unwrap();
        tree.record(&[boolean(true), boolean(false)], true, &[])
            .unwrap();
        for _ in 0..20 {
            let prefix = tree.novel_prefix(&mut source);
            assert_eq!(
                prefix,
                vec![ChoiceValue::Boolean(true), ChoiceValue::Boolean(true)]
            );
        }
    }

    /// A deterministic test over small choices, for comparing trees: what
    /// it asks for next depends only on the values chosen so far (unless
    /// `flaky`, which asks for something else at one place).
    fn program(
        values: &mut impl FnMut(&Constraints, bool) -> ChoiceValue,
        flaky: bool,
    ) -> Vec<ChoiceNode> {
        let mut nodes: Vec<ChoiceNode> = Vec::new();
        let mut sum = 0i128;
        let length = 2 + match values(
            &Constraints::integer(IntegerConstraints::bounded(0, 3)),
            false,
        ) {
            ChoiceValue::Integer(v) => v,
            _ => 0,
        };
        nodes.push(ChoiceNode {
            constraints: Constraints::integer(IntegerConstraints::bounded(0, 3)),
            value: ChoiceValue::Integer(length - 2),
            forced: false,
        });
        for depth in 0..length {
            let forced = (sum + depth) % 4 == 3;
            let constraints = if (sum + depth) % 3 == 0 {
                Constraints::Boolean { p: 0.5 }
            } else {
                let max = (sum % 3) + 1 + i128::from(flaky && depth == 2);
                Constraints::integer(IntegerConstraints::bounded(0, max))
            };
            let value = if forced {
                constraints.simplest()
            } else {
                values(&constraints, forced)
            };
            if let ChoiceValue::Integer(v) = value {
                sum += v;
            }
            if let ChoiceValue::Boolean(true) = value {
                sum += 1;
            }
            nodes.push(ChoiceNode {
                constraints,
                value,
                forced,
            });
        }
        nodes
    }

    #[test]
    fn a_full_tree_still_knows_its_branches_and_stops_growing() {
        let mut tree = DataTree {
            max_nodes: 8,
            ..DataTree::default()
        };
        // One choice per test case: the root branches, a node per value.
        for v in 0..20 {
            let new = tree.record(&[int(0, v)], true, &[]).unwrap();
            assert!(new, "value {v} is new");
        }
        let known = tree.nodes.len();
        assert!(tree.size() <= 8, "{} held", tree.size());
        // Values recorded before the tree filled up are known; later ones
        // are new every time, and nothing more is held.
        assert!(!tree.record(&[int(0, 0)], true, &[]).unwrap());
        assert!(tree.replay_is_known(&[i(1)]));
        assert!(tree.record(&[int(0, 19)], true, &[]).unwrap());
        assert!(!tree.replay_is_known(&[i(19)]));
        assert_eq!(tree.nodes.len(), known);
    }

    #[test]
    fn tail_words_keep_every_value_exactly() {
        use crate::choice::{FloatConstraints, SizeConstraints};
        let float = Constraints::Float(FloatConstraints {
            min: f64::NEG_INFINITY,
            max: f64::INFINITY,
            allow_nan: true,
            width: 64,
        });
        let values = [
            (Constraints::integer(IntegerConstraints::UNBOUNDED), i(0)),
            (Constraints::integer(IntegerConstraints::UNBOUNDED), i(-1)),
            (
                Constraints::integer(IntegerConstraints::UNBOUNDED),
                i(i64::MIN.into()),
            ),
            (
                Constraints::integer(IntegerConstraints::UNBOUNDED),
                i(i64::MAX.into()),
            ),
            (
                Constraints::integer(IntegerConstraints::UNBOUNDED),
                i(i128::from(i64::MAX) + 1),
            ),
            (
                Constraints::integer(IntegerConstraints::UNBOUNDED),
                i(i128::MIN),
            ),
            (Constraints::Boolean { p: 0.5 }, ChoiceValue::Boolean(true)),
            (Constraints::Boolean { p: 0.5 }, ChoiceValue::Boolean(false)),
            (float.clone(), ChoiceValue::Float(-0.0)),
            (
                float.clone(),
                ChoiceValue::Float(f64::from_bits(0x7ff8_0000_0000_0001)),
            ),
            (float, ChoiceValue::Float(1.5)),
            (
                Constraints::Bytes(SizeConstraints {
                    min_size: 0,
                    max_size: 9,
                }),
                ChoiceValue::Bytes(vec![1, 2]),
            ),
        ];
        let nodes: Vec<ChoiceNode> = values
            .iter()
            .map(|(constraints, value)| ChoiceNode {
                constraints: constraints.clone(),
                value: value.clone(),
                forced: false,
            })
            .collect();
        let mut tree = DataTree::default();
        assert!(tree.record(&nodes, true, &[]).unwrap());
        assert_eq!(tree.tail_values.len(), values.len());
        for (index, (_, value)) in values.iter().enumerate() {
            assert_eq!(*tree.tail_value(index), *value, "{value:?}");
            assert!(tree.tail_value_is(index, value), "{value:?}");
            let (_, other) = &values[(index + 1) % values.len()];
            assert!(
                !tree.tail_value_is(index, other),
                "{value:?} is not {other:?}"
            );
        }
        assert!(!tree.tail_value_is(8, &ChoiceValue::Float(0.0)));
        let choices: Vec<ChoiceValue> = values.iter().map(|(_, v)| v.clone()).collect();
        assert!(!tree.record(&nodes, true, &[]).unwrap(), "the same again");
        assert!(tree.replay_is_known(&choices));
    }

    #[test]
    fn tails_change_no_answer_of_the_tree() {
        for seed in 0..2000u64 {
            let mut compressed = DataTree::default();
            let mut plain = DataTree {
                compress: false,
                ..DataTree::default()
            };
            let mut source = Source::from_seed(seed);
            for step in 0..60 {
                // Either a random path, or a replay of a (perturbed) novel prefix.
                let prefix = compressed.novel_prefix(&mut source.clone());
                assert_eq!(
                    prefix,
                    plain.novel_prefix(&mut source.clone()),
                    "seed {seed} step {step}"
                );
                let use_prefix = source.chance(0.5);
                let mut k = 0;
                let mut values = |c: &Constraints, _forced: bool| {
                    k += 1;
                    match prefix.get(k - 1) {
                        Some(v) if use_prefix && c.permits(v) => v.clone(),
                        _ => crate::random::any(&mut source, c),
                    }
                };
                let flaky = seed % 7 == 0 && step == 30;
                let nodes = program(&mut values, flaky);
                let cut = if source.chance(0.1) {
                    source.below(nodes.len() as u64 + 1) as usize
                } else {
                    nodes.len()
                };
                let nodes = &nodes[..cut];
                let ended = cut == nodes.len() && !source.chance(0.1);
                let kills: Vec<usize> = if source.chance(0.15) {
                    vec![source.below(nodes.len() as u64 + 1) as usize]
                } else {
                    Vec::new()
                };
                let a = compressed.record(nodes, ended, &kills);
                let b = plain.record(nodes, ended, &kills);
                assert_eq!(a, b, "seed {seed} step {step}");
                assert_eq!(
                    compressed.is_exhausted(),
                    plain.is_exhausted(),
                    "seed {seed} step {step}"
                );
                for _ in 0..4 {
                    let mut query: Vec<ChoiceValue> =
                        nodes.iter().map(|n| n.value.clone()).collect();
                    let keep = source.below(query.len() as u64 + 1) as usize;
                    query.truncate(keep);
                    if source.chance(0.5) {
                        query.push(ChoiceValue::Integer(source.below(3) as i128));
                    }
                    // Also with another value (perhaps a misfit) partway.
                    let mut changed = query.clone();
                    if !changed.is_empty() {
                        let at = source.below(changed.len() as u64) as usize;
                        changed[at] = ChoiceValue::Integer(source.below(5) as i128);
                    }
                    for tree in [&compressed, &plain] {
                        for query in [&query, &changed] {
                            assert_eq!(
                                tree.runs_nothing_new(query),
                                tree.prefix_is_exhausted(query) || tree.replay_is_known(query),
                                "seed {seed} step {step} {query:?}"
                            );
                        }
                    }
                    assert_eq!(
                        compressed.replay_is_known(&query),
                        plain.replay_is_known(&query),
                        "seed {seed} step {step} {query:?}"
                    );
                    assert_eq!(
                        compressed.replay_runs_past(&query),
                        plain.replay_runs_past(&query),
                        "seed {seed} step {step} {query:?}"
                    );
                    assert_eq!(
                        compressed.prefix_is_exhausted(&query),
                        plain.prefix_is_exhausted(&query),
                        "seed {seed} step {step} {query:?}"
                    );
                }
                if compressed.is_exhausted() {
                    break;
                }
            }
        }
    }
}
