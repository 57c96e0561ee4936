//! Targeting: hill-climbing on the scores a test reports with `target`.
//!
//! For each label, the test case with the highest score so far is the
//! starting point. Each integer or boolean choice in it is pushed up and down
//! with exponentially growing steps while the score keeps improving, until no
//! single choice improves it (a local maximum) or the budget runs out. A
//! failure found on the way ends the climb; the run then shrinks it.

use crate::choice::{ChoiceNode, ChoiceValue, Constraints};
use crate::data::TestData;

/// The best test case seen for one label.
#[derive(Clone, Debug)]
pub struct TargetBest {
    /// Its score.
    pub score: f64,
    /// Its choices.
    pub nodes: Vec<ChoiceNode>,
}

/// The score a concluded test case reported for `label`.
pub fn score_of(data: &TestData, label: &str) -> Option<f64> {
    data.target_observations
        .iter()
        .rev()
        .find(|(l, _)| l == label)
        .map(|(_, v)| *v)
        .filter(|v| v.is_finite())
}

/// What the caller's executor says about a candidate.
pub enum Step {
    /// It ran; here is its score for the label (if any), and its choices.
    Ran(Option<f64>, Vec<ChoiceNode>),
    /// Stop climbing (a failure was found, or the budget is spent).
    Stop,
}

fn shifted(node: &ChoiceNode, direction: i128, step: u128) -> Option<ChoiceValue> {
    match (&node.value, &node.constraints) {
        (ChoiceValue::Integer(v), Constraints::Integer(c)) => {
            let candidate = if direction > 0 {
                v.checked_add_unsigned(step)?
            } else {
                v.checked_sub_unsigned(step)?
            };
            c.permits(candidate)
                .then_some(ChoiceValue::Integer(candidate))
        }
        (ChoiceValue::Boolean(b), _) if step == 1 && (direction > 0) != *b => {
            Some(ChoiceValue::Boolean(direction > 0))
        }
        _ => None,
    }
}

/// Climbs from `best` for `label`, calling `execute` on each candidate.
pub fn climb(
    mut best: TargetBest,
    execute: &mut dyn FnMut(Vec<ChoiceValue>) -> Step,
) -> TargetBest {
    loop {
        let mut improved = false;
        let mut i = 0;
        while i < best.nodes.len() {
            if best.nodes[i].forced {
                i += 1;
                continue;
            }
            for direction in [1i128, -1] {
                let mut step: u128 = 1;
                while let Some(value) = best.nodes.get(i).and_then(|n| shifted(n, direction, step))
                {
                    let mut candidate: Vec<ChoiceValue> =
                        best.nodes.iter().map(|n| n.value.clone()).collect();
                    candidate[i] = value;
                    match execute(candidate) {
                        Step::Stop => return best,
                        Step::Ran(Some(score), nodes) if score > best.score => {
                            best = TargetBest { score, nodes };
                            improved = true;
                            step = step.saturating_mul(2);
                        }
                        Step::Ran(..) => break,
                    }
                }
            }
            i += 1;
        }
        if !improved {
            return best;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::IntegerConstraints;

    #[test]
    fn climbs_to_the_maximum_of_a_concave_score() {
        let c = IntegerConstraints::bounded(0, 1000);
        let run = |choices: &[ChoiceValue]| -> (f64, Vec<ChoiceNode>) {
            let mut data = TestData::replaying(choices.to_vec(), 100);
            let m = data.draw_integer(c).unwrap();
            let n = data.draw_integer(c).unwrap();
            let score = -(((m - 500) * (m - 500) + (n - 500) * (n - 500)) as f64);
            (score, data.nodes.into_vec())
        };
        let (score, nodes) = run(&[ChoiceValue::Integer(3), ChoiceValue::Integer(990)]);
        let mut calls = 0;
        let best = climb(TargetBest { score, nodes }, &mut |candidate| {
            calls += 1;
            let (score, nodes) = run(&candidate);
            Step::Ran(Some(score), nodes)
        });
        assert_eq!(best.score, 0.0, "after {calls} calls");
        assert!(calls < 500, "{calls} calls");
    }
}
