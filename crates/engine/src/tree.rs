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

use crate::choice::{ChoiceNode, ChoiceValue, Constraints};
use crate::random::Source;
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

/// A node's index in the tree's arena.
type NodeId = u32;

/// Interned constraints' index (see [`DataTree::intern`]); [`UNKNOWN`] when
/// no test case has made the node's choice yet.
type ConstraintsId = u32;
const UNKNOWN: ConstraintsId = u32::MAX;

/// Children by value: a fast, deterministic hash (iteration order never
/// depends on a random seed).
type ChildMap = HashMap<ChoiceValue, NodeId, foldhash::fast::FixedState>;

/// One choice position reached by some test case. Kept small (the tree
/// holds up to a million of them, 48 bytes each): constraints are interned,
/// the first child is kept inline (most nodes of a run's tree have one: a
/// path of fresh random choices) and a branching node's children move to a
/// map beside the nodes; the forced value is the only child's key; and
/// exhausted children are counted as they become exhausted rather than
/// recounted.
struct TreeNode {
    /// The value of the node's only child; `None` when it has none or
    /// several (`branching`).
    first: Option<ChoiceValue>,
    /// The only child's node, or the index of the children's map in
    /// [`DataTree::branches`] when `branching`.
    child: NodeId,
    /// What the choice here permitted (interned), as the first test case
    /// that made it asked.
    constraints: ConstraintsId,
    /// How many children are exhausted.
    exhausted_children: u32,
    /// Whether the choice here was forced (a collection below its minimum
    /// size or at its maximum).
    forcing: Forcing,
    /// Whether the children are in a map of [`DataTree::branches`].
    branching: bool,
    /// Whether some test case ended exactly here.
    ends_here: bool,
    /// Every path through this node has been run.
    exhausted: bool,
}

impl TreeNode {
    fn new() -> TreeNode {
        TreeNode {
            first: None,
            child: 0,
            constraints: UNKNOWN,
            exhausted_children: 0,
            forcing: Forcing::Unknown,
            branching: false,
            ends_here: false,
            exhausted: false,
        }
    }
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

fn key_of(c: &Constraints) -> ConstraintsKey {
    match c {
        Constraints::Integer(i) => ConstraintsKey::Integer(i.min, i.max, i.shrink_towards),
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
    /// Stop growing past this many nodes (the check then covers known paths only).
    max_nodes: usize,
    /// The children of branching nodes, by value.
    branches: Vec<ChildMap>,
    /// Interned constraints, by [`ConstraintsId`].
    constraints: Vec<Constraints>,
    interned: HashMap<ConstraintsKey, ConstraintsId, foldhash::fast::FixedState>,
    /// The last two interned (a test case often alternates between two).
    recent: [(ConstraintsKey, ConstraintsId); 2],
    /// A reusable buffer for the path of the test case being recorded.
    path: Vec<NodeId>,
}

impl Default for DataTree {
    fn default() -> Self {
        let none = (ConstraintsKey::Bytes(usize::MAX, 0), UNKNOWN);
        DataTree {
            nodes: vec![TreeNode::new()],
            max_nodes: 1 << 20,
            branches: Vec::new(),
            constraints: Vec::new(),
            interned: HashMap::default(),
            recent: [none, none],
            path: Vec::new(),
        }
    }
}

/// How many values a choice with these constraints permits, when that is
/// few enough to run them all (otherwise the tree never counts it exhausted).
fn permitted_values(constraints: &Constraints) -> Option<u128> {
    const COUNTED: u128 = 1 << 16;
    let n = match constraints {
        Constraints::Boolean { .. } => 2,
        Constraints::Integer(c) => match (c.min, c.max) {
            (Some(min), Some(max)) if max >= min => max.abs_diff(min).checked_add(1)?,
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
        Constraints::Integer(i) => format!("an integer in [{:?}, {:?}]", i.min, i.max),
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

    /// The child of node `at` where `value` was chosen.
    fn child(&self, at: NodeId, value: &ChoiceValue) -> Option<NodeId> {
        let node = self.node(at);
        match &node.first {
            Some(first) => (first == value).then_some(node.child),
            None if node.branching => self.branches[node.child as usize].get(value).copied(),
            None => None,
        }
    }

    /// The only child of node `at` (the forced value's), if it has exactly one.
    fn only_child(&self, at: NodeId) -> Option<(&ChoiceValue, NodeId)> {
        let node = self.node(at);
        node.first.as_ref().map(|value| (value, node.child))
    }

    /// Adds `child` under node `at`, where `value` was chosen.
    fn insert_child(&mut self, at: NodeId, value: ChoiceValue, child: NodeId) {
        let branches = self.branches.len() as NodeId;
        let node = &mut self.nodes[at as usize];
        if node.branching {
            self.branches[node.child as usize].insert(value, child);
        } else if let Some(first) = node.first.take() {
            let mut map = ChildMap::with_capacity_and_hasher(4, Default::default());
            map.insert(first, node.child);
            map.insert(value, child);
            node.branching = true;
            node.child = branches;
            self.branches.push(map);
        } else {
            node.first = Some(value);
            node.child = child;
        }
    }

    /// How many children node `at` has.
    fn child_count(&self, at: NodeId) -> usize {
        let node = self.node(at);
        match node.first {
            Some(_) => 1,
            None if node.branching => self.branches[node.child as usize].len(),
            None => 0,
        }
    }

    /// Node `at`'s children, with the values chosen for them.
    fn children(&self, at: NodeId) -> Vec<(&ChoiceValue, NodeId)> {
        let node = self.node(at);
        match &node.first {
            Some(first) => vec![(first, node.child)],
            None if node.branching => self.branches[node.child as usize]
                .iter()
                .map(|(v, c)| (v, *c))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The constraints a node's choice was first made under (`None` when no
    /// test case has made it).
    fn constraints_of(&self, at: NodeId) -> Option<&Constraints> {
        self.constraints.get(self.node(at).constraints as usize)
    }

    /// The id of constraints equal to `c`, adding them when new.
    fn intern(&mut self, c: &Constraints) -> ConstraintsId {
        let key = key_of(c);
        if let Some(&(_, id)) = self.recent.iter().find(|(k, _)| *k == key) {
            return id;
        }
        let id = match self.interned.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.constraints.len() as ConstraintsId;
                self.constraints.push(c.clone());
                self.interned.insert(key, id);
                id
            }
        };
        self.recent = [(key, id), self.recent[0]];
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
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let outcome = self.record_along(nodes, ended, kills, streams_from, &mut path);
        self.path = path;
        outcome
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
        for (i, node) in nodes.iter().enumerate() {
            path.push(at);
            let known = self.node(at);
            let forcing = match (known.forcing, node.forced) {
                (Forcing::Unknown, false) => Forcing::Free,
                (Forcing::Unknown, true) => Forcing::Forced,
                (Forcing::Free, true) | (Forcing::Forced, false) => Forcing::Mixed,
                // Forced again: to the same value as before?
                (Forcing::Forced, true) => match self.only_child(at) {
                    Some((value, _)) if *value != node.value => Forcing::Mixed,
                    _ => Forcing::Forced,
                },
                (other, _) => other,
            };
            match self.constraints_of(at) {
                Some(previous) if !same_kind(previous, &node.constraints) && i >= streams_from => {
                    self.node_mut(at).forcing = Forcing::Mixed;
                    return Ok(true);
                }
                Some(previous) if !same_kind(previous, &node.constraints) => {
                    return Err(format!(
                        "choice {} asked for {} where an earlier test case with the same earlier choices asked for {}",
                        i + 1,
                        describe(&node.constraints),
                        describe(previous)
                    ));
                }
                Some(_) => {}
                None => {
                    let id = self.intern(&node.constraints);
                    self.node_mut(at).constraints = id;
                }
            }
            self.node_mut(at).forcing = forcing;
            at = match self.child(at, &node.value) {
                Some(child) => child,
                None if self.nodes.len() < self.max_nodes => {
                    let child = self.nodes.len() as NodeId;
                    self.nodes.push(TreeNode::new());
                    self.insert_child(at, node.value.clone(), child);
                    child
                }
                None => return Ok(true),
            };
        }
        let new = !self.node(at).ends_here;
        if ended {
            self.node_mut(at).ends_here = true;
            if self.child_count(at) == 0 {
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
        let mut at: NodeId = 0;
        for value in prefix {
            let node = self.node(at);
            if node.exhausted {
                return true;
            }
            let next = match node.forcing {
                Forcing::Forced => self.only_child(at).map(|(_, child)| child),
                _ => self.child(at, value),
            };
            match next {
                Some(child) => at = child,
                None => return false,
            }
        }
        self.node(at).exhausted
    }

    /// A prefix for the next generated test case that leads somewhere new:
    /// from the root, at each node whose choice is known, a value drawn as
    /// generation would draw it, redrawn while it leads to an exhausted
    /// node; the walk ends at the first value no test case made there (or
    /// where the tree knows nothing, or cannot avoid an exhausted branch).
    /// Forced choices are followed as they were made.
    pub fn novel_prefix(&self, source: &mut Source) -> Vec<ChoiceValue> {
        const DRAWS: usize = 10;
        let mut prefix = Vec::new();
        let mut at: NodeId = 0;
        loop {
            let node = self.node(at);
            if node.exhausted || node.ends_here {
                return prefix;
            }
            let Some(constraints) = self.constraints_of(at) else {
                return prefix;
            };
            match node.forcing {
                Forcing::Forced => match self.only_child(at) {
                    Some((value, child)) => {
                        prefix.push(value.clone());
                        at = child;
                    }
                    None => return prefix,
                },
                Forcing::Free => {
                    let mut chosen = None;
                    for _ in 0..DRAWS {
                        let v = crate::random::any(source, constraints);
                        match self.child(at, &v) {
                            Some(child) if self.node(child).exhausted => continue,
                            _ => {
                                chosen = Some(v);
                                break;
                            }
                        }
                    }
                    let Some(value) = chosen.or_else(|| self.unexhausted_value(at, source)) else {
                        return prefix;
                    };
                    let next = self.child(at, &value);
                    prefix.push(value);
                    match next {
                        Some(child) => at = child,
                        None => return prefix,
                    }
                }
                Forcing::Unknown | Forcing::Mixed => return prefix,
            }
        }
    }

    /// A value at node `at` that does not lead to an exhausted node, when
    /// random draws kept hitting exhausted ones: one never made there (for
    /// a counted choice) or a known child that is not exhausted.
    fn unexhausted_value(&self, at: NodeId, source: &mut Source) -> Option<ChoiceValue> {
        let constraints = self.constraints_of(at)?;
        // Counted, not searched for: a node with many children (an
        // unbounded integer after thousands of test cases), all exhausted,
        // has none open, and costs nothing to ask.
        let open_children = self
            .child_count(at)
            .saturating_sub(self.node(at).exhausted_children as usize);
        let children = if open_children > 0 {
            self.children(at)
        } else {
            Vec::new()
        };
        let open: Vec<&ChoiceValue> = children
            .into_iter()
            .filter(|&(_, child)| !self.node(child).exhausted)
            .map(|(v, _)| v)
            .collect();
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
                let mut open = open;
                open.sort_by(|a, b| a.simplicity_cmp(b, constraints));
                Some(open[source.below(open.len() as u64) as usize].clone())
            }
            other => other,
        }
    }

    /// Whether every test case the run could generate has run.
    pub fn is_exhausted(&self) -> bool {
        self.node(0).exhausted
    }

    /// Whether each value the choice at `at` permits leads to an exhausted node.
    fn all_values_exhausted(&self, at: NodeId) -> bool {
        let node = self.node(at);
        let permitted = match node.forcing {
            Forcing::Forced => Some(1),
            Forcing::Free => self.constraints_of(at).and_then(permitted_values),
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
        let (mut at, mut i) = (0, 0usize);
        loop {
            let node = self.node(at);
            if node.ends_here {
                // A deterministic test always ends here after these choices;
                // if some test case also went on from here, it is not.
                return (self.child_count(at) == 0).then_some(i);
            }
            at = self.replay_step(at, choices.get(i))?;
            i += 1;
        }
    }

    /// Whether replaying `choices` is known to need choices past their end:
    /// where they stop (after any forced choices, which need none), a test
    /// case went on drawing freely, and none ended there.
    pub fn replay_runs_past(&self, choices: &[ChoiceValue]) -> bool {
        let mut at: NodeId = 0;
        for value in choices {
            if self.node(at).ends_here {
                return false;
            }
            match self.replay_step(at, Some(value)) {
                Some(child) => at = child,
                None => return false,
            }
        }
        loop {
            let node = self.node(at);
            if node.ends_here || node.constraints == UNKNOWN {
                return false;
            }
            match node.forcing {
                Forcing::Free => return true,
                Forcing::Forced => match self.replay_step(at, None) {
                    Some(child) => at = child,
                    None => return false,
                },
                _ => return false,
            }
        }
    }

    /// The node a replay moves to from node `at` when the choice it offers
    /// there is `offered` (`None`: past the end of its choices): a forced
    /// choice ignores it, a misfit is its stand-in
    /// ([`Constraints::stand_in`]) and a missing one the simplest value.
    /// `None` when the tree cannot tell (nothing known, not deterministic,
    /// or a value no test case took there).
    fn replay_step(&self, at: NodeId, offered: Option<&ChoiceValue>) -> Option<NodeId> {
        let node = self.node(at);
        let constraints = self.constraints_of(at)?;
        match (node.forcing, offered) {
            (Forcing::Forced, _) => self.only_child(at).map(|(_, child)| child),
            (Forcing::Unknown | Forcing::Mixed, _) => None,
            (Forcing::Free, Some(v)) if constraints.permits(v) => self.child(at, v),
            (Forcing::Free, Some(v)) => self.child(at, &constraints.stand_in(v)),
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
            constraints: Constraints::Integer(IntegerConstraints {
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
            tree.replay_is_known(&[ChoiceValue::Boolean(false)]),
            "a trivial misfit replays as the simplest value"
        );
        assert!(
            tree.replay_is_known(&[i(-7)]),
            "an out-of-bounds misfit replays as the simplest value"
        );
        assert!(
            !tree.replay_is_known(&[ChoiceValue::Boolean(true)]),
            "a non-trivial misfit of another kind replays as the value next to the simplest (1)"
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
            constraints: Constraints::Integer(IntegerConstraints::bounded(min, max)),
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
}
