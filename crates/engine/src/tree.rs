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

/// How test cases made the choice at a node.
#[derive(Clone, Debug, Default, PartialEq)]
enum Forcing {
    /// No test case has made it yet.
    #[default]
    Unknown,
    /// Freely (from the prefix, the random source or the simplest value).
    Free,
    /// Forced to this value.
    To(ChoiceValue),
    /// Differently by different test cases (not deterministic).
    Mixed,
}

#[derive(Default)]
struct TreeNode {
    constraints: Option<Constraints>,
    /// Whether the choice here was forced (a collection below its minimum
    /// size or at its maximum) and to what.
    forcing: Forcing,
    children: HashMap<ChoiceValue, usize>,
    /// Whether some test case ended exactly here.
    ends_here: bool,
    /// Every path through this node has been run.
    exhausted: bool,
}

/// The paths of all test cases run so far.
pub struct DataTree {
    nodes: Vec<TreeNode>,
    /// Stop growing past this many nodes (the check then covers known paths only).
    max_nodes: usize,
}

impl Default for DataTree {
    fn default() -> Self {
        DataTree {
            nodes: vec![TreeNode::default()],
            max_nodes: 1 << 20,
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
        let mut at = 0usize;
        let mut path = Vec::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            path.push(at);
            let forcing = match node.forced {
                true => Forcing::To(node.value.clone()),
                false => Forcing::Free,
            };
            let known = &mut self.nodes[at].forcing;
            match known {
                Forcing::Unknown => *known = forcing,
                Forcing::Mixed => {}
                _ if *known != forcing => *known = Forcing::Mixed,
                _ => {}
            }
            match &self.nodes[at].constraints {
                Some(previous) if !same_kind(previous, &node.constraints) => {
                    return Err(format!(
                        "choice {} asked for {} where an earlier test case with the same earlier choices asked for {}",
                        i + 1,
                        describe(&node.constraints),
                        describe(previous)
                    ));
                }
                Some(_) => {}
                None => self.nodes[at].constraints = Some(node.constraints.clone()),
            }
            at = match self.nodes[at].children.get(&node.value) {
                Some(&child) => child,
                None if self.nodes.len() < self.max_nodes => {
                    let child = self.nodes.len();
                    self.nodes.push(TreeNode::default());
                    self.nodes[at].children.insert(node.value.clone(), child);
                    child
                }
                None => return Ok(true),
            };
        }
        let new = !self.nodes[at].ends_here;
        if ended {
            self.nodes[at].ends_here = true;
            if self.nodes[at].children.is_empty() {
                self.mark_exhausted(at, &path);
            }
        }
        for &position in kills {
            match position.cmp(&path.len()) {
                std::cmp::Ordering::Less => self.mark_exhausted(path[position], &path[..position]),
                std::cmp::Ordering::Equal => self.mark_exhausted(at, &path),
                std::cmp::Ordering::Greater => {}
            }
        }
        Ok(new)
    }

    /// Marks node `at` exhausted, then each ancestor (`path` leads from the
    /// root to `at`) whose every permitted value is now exhausted.
    fn mark_exhausted(&mut self, at: usize, path: &[usize]) {
        if self.nodes[at].exhausted {
            return;
        }
        self.nodes[at].exhausted = true;
        for &parent in path.iter().rev() {
            if self.nodes[parent].exhausted || !self.all_values_exhausted(parent) {
                break;
            }
            self.nodes[parent].exhausted = true;
        }
    }

    /// Whether following `prefix` reaches an exhausted node (a killed one,
    /// or one under which everything has run): a test case starting with it
    /// explores nothing new.
    pub fn prefix_is_exhausted(&self, prefix: &[ChoiceValue]) -> bool {
        let mut at = 0usize;
        for value in prefix {
            if self.nodes[at].exhausted {
                return true;
            }
            let value = match &self.nodes[at].forcing {
                Forcing::To(forced) => forced,
                _ => value,
            };
            match self.nodes[at].children.get(value) {
                Some(&child) => at = child,
                None => return false,
            }
        }
        self.nodes[at].exhausted
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
        let mut at = 0usize;
        loop {
            let node = &self.nodes[at];
            if node.exhausted || node.ends_here {
                return prefix;
            }
            let Some(constraints) = &node.constraints else {
                return prefix;
            };
            let value = match &node.forcing {
                Forcing::To(forced) => forced.clone(),
                Forcing::Free => {
                    let mut chosen = None;
                    for _ in 0..DRAWS {
                        let v = crate::random::any(source, constraints);
                        match node.children.get(&v) {
                            Some(&child) if self.nodes[child].exhausted => continue,
                            _ => {
                                chosen = Some(v);
                                break;
                            }
                        }
                    }
                    match chosen.or_else(|| self.unexhausted_value(at, source)) {
                        Some(v) => v,
                        None => return prefix,
                    }
                }
                Forcing::Unknown | Forcing::Mixed => return prefix,
            };
            prefix.push(value.clone());
            match node.children.get(&value) {
                Some(&child) => at = child,
                None => return prefix,
            }
        }
    }

    /// A value at node `at` that does not lead to an exhausted node, when
    /// random draws kept hitting exhausted ones: one never made there (for
    /// a counted choice) or a known child that is not exhausted.
    fn unexhausted_value(&self, at: usize, source: &mut Source) -> Option<ChoiceValue> {
        let node = &self.nodes[at];
        let constraints = node.constraints.as_ref()?;
        let open: Vec<&ChoiceValue> = node
            .children
            .iter()
            .filter(|&(_, &child)| !self.nodes[child].exhausted)
            .map(|(v, _)| v)
            .collect();
        let unseen = permitted_values(constraints).and_then(|n| {
            let seen = node.children.len() as u128;
            if seen >= n {
                return None;
            }
            // Start at a random index and take the first value never made.
            let start = source.up_to_u128(n - 1);
            (0..n)
                .map(|k| value_at(constraints, (start + k) % n))
                .find(|v| v.as_ref().is_some_and(|v| !node.children.contains_key(v)))
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
        self.nodes[0].exhausted
    }

    /// Whether each value the choice at `at` permits leads to an exhausted node.
    fn all_values_exhausted(&self, at: usize) -> bool {
        let node = &self.nodes[at];
        let permitted = match (&node.forcing, &node.constraints) {
            (Forcing::To(_), _) => Some(1),
            (Forcing::Free, Some(constraints)) => permitted_values(constraints),
            _ => None,
        };
        let exhausted = node
            .children
            .values()
            .filter(|&&child| self.nodes[child].exhausted)
            .count() as u128;
        permitted.is_some_and(|n| exhausted >= n)
    }

    /// Whether replaying `choices` (simplest values past them, as
    /// [`TestData::replaying`](crate::TestData::replaying) does) would only
    /// walk a path some earlier test case walked to its end: its outcome is
    /// then already known. False when any step is unknown or ambiguous.
    pub fn replay_is_known(&self, choices: &[ChoiceValue]) -> bool {
        let (mut at, mut i) = (0usize, 0usize);
        loop {
            let node = &self.nodes[at];
            if node.ends_here {
                // A deterministic test always ends here after these choices;
                // if some test case also went on from here, it is not.
                return node.children.is_empty();
            }
            match self.replay_step(at, choices.get(i)) {
                Some(child) => at = child,
                None => return false,
            }
            i += 1;
        }
    }

    /// Whether replaying `choices` is known to need choices past their end:
    /// where they stop (after any forced choices, which need none), a test
    /// case went on drawing freely, and none ended there.
    pub fn replay_runs_past(&self, choices: &[ChoiceValue]) -> bool {
        let mut at = 0usize;
        for value in choices {
            if self.nodes[at].ends_here {
                return false;
            }
            match self.replay_step(at, Some(value)) {
                Some(child) => at = child,
                None => return false,
            }
        }
        loop {
            let node = &self.nodes[at];
            if node.ends_here {
                return false;
            }
            match (&node.forcing, &node.constraints) {
                (Forcing::Free, Some(_)) => return true,
                (Forcing::To(_), Some(_)) => match self.replay_step(at, None) {
                    Some(child) => at = child,
                    None => return false,
                },
                _ => return false,
            }
        }
    }

    /// The node a replay moves to from node `at` when the choice it offers
    /// there is `offered` (`None`: past the end of its choices): a forced
    /// choice ignores it, a misfit or a missing one is the simplest value.
    /// `None` when the tree cannot tell (nothing known, not deterministic,
    /// or a value no test case took there).
    fn replay_step(&self, at: usize, offered: Option<&ChoiceValue>) -> Option<usize> {
        let node = &self.nodes[at];
        let constraints = node.constraints.as_ref()?;
        let value = match (&node.forcing, offered) {
            (Forcing::To(forced), _) => forced.clone(),
            (Forcing::Unknown | Forcing::Mixed, _) => return None,
            (Forcing::Free, Some(v)) if constraints.permits(v) => v.clone(),
            (Forcing::Free, _) => constraints.simplest(),
        };
        node.children.get(&value).copied()
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
            tree.replay_is_known(&[i(-7)]),
            "a misfit replays as the simplest value"
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
