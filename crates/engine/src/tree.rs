//! The tree of choice paths seen so far in a run.
//!
//! Every test case walks the tree along its choice values. At each node the
//! tree remembers what the choice there permitted; a later test case that
//! reaches the same node by the same earlier choices but makes a different
//! kind of choice there (another type, other bounds) proves the test's data
//! generation is non-deterministic — it depends on something other than the
//! choices, such as global state — and the run reports it as flaky rather
//! than shrinking nonsense.

use crate::choice::{ChoiceNode, ChoiceValue, Constraints};
use std::collections::HashMap;

#[derive(Default)]
struct TreeNode {
    constraints: Option<Constraints>,
    children: HashMap<ChoiceValue, usize>,
    /// Whether some test case ended exactly here.
    ends_here: bool,
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

fn same_kind(a: &Constraints, b: &Constraints) -> bool {
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
    pub fn record(&mut self, nodes: &[ChoiceNode]) -> Result<bool, String> {
        let mut at = 0usize;
        for (i, node) in nodes.iter().enumerate() {
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
        self.nodes[at].ends_here = true;
        Ok(new)
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
        assert!(tree.record(&[int(0, 5), int(0, 1)]).unwrap());
        assert!(tree.record(&[int(0, 5), int(0, 2)]).unwrap());
        assert!(tree.record(&[int(0, 6)]).unwrap());
        // A repeat, and a prefix of an earlier path, are told apart.
        assert!(!tree.record(&[int(0, 5), int(0, 1)]).unwrap());
        assert!(tree.record(&[int(0, 5)]).unwrap());
        assert!(!tree.record(&[int(0, 5)]).unwrap());
        let error = tree.record(&[int(1, 5)]).unwrap_err();
        assert!(error.contains("choice 1"), "{error}");
        let error = tree.record(&[int(0, 5), int(3, 9)]).unwrap_err();
        assert!(error.contains("choice 2"), "{error}");
    }
}
