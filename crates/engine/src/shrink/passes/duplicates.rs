//! Duplicated values shrunk together: strings, byte strings and floats that
//! occur at two or more choices with the same value (an element's start and
//! end tag, a key looked up again) usually fail because they are equal, so
//! shrinking one copy alone breaks the failure. Each group of copies goes
//! through its value shrinker once, every candidate set at all the copies
//! (Hypothesis' `minimize_duplicated_choices`; integers have their own,
//! [`super::choices::lower_integers_together`]).

use super::Attempts;
use crate::choice::{ChoiceValue, Constraints};
use crate::shrink::Shrinker;
use crate::shrink::values::{float::shrink_float, text};
use crate::tree::same_kind;

/// Shrinks each duplicated string, byte string or float value at all its
/// copies at once. Copies count when they are free choices of the same kind
/// and constraints as the first one, not already at their simplest value.
pub(in crate::shrink) fn shrink_duplicated_values(s: &mut Shrinker) {
    for value in duplicated_values(s) {
        if s.exhausted() {
            return;
        }
        let positions = copies(s, &value);
        let Some(&first) = positions.first() else {
            continue;
        };
        if positions.len() < 2 {
            continue;
        }
        let constraints = s.best.nodes[first].constraints.clone();
        let set_all = move |s: &mut Shrinker, value: ChoiceValue| -> bool {
            let mut candidate = s.best.choices();
            for &i in &positions {
                match candidate.get_mut(i) {
                    Some(slot) => *slot = value.clone(),
                    None => return false,
                }
            }
            s.consider(candidate)
        };
        match (&value, &constraints) {
            (ChoiceValue::String(points), Constraints::String { alphabet, size }) => {
                text::shrink_string(
                    points,
                    alphabet,
                    size.min_size,
                    &mut Attempts::new(s, |s, x: &Vec<u32>| {
                        set_all(s, ChoiceValue::String(x.clone()))
                    }),
                )
            }
            (ChoiceValue::Bytes(bytes), Constraints::Bytes(size)) => text::shrink_bytes(
                bytes,
                size.min_size,
                &mut Attempts::new(s, |s, x: &Vec<u8>| {
                    set_all(s, ChoiceValue::Bytes(x.clone()))
                }),
            ),
            (ChoiceValue::Float(v), Constraints::Float(c)) => shrink_float(
                *v,
                *c,
                &mut Attempts::new(s, |s, x: &f64| set_all(s, ChoiceValue::Float(*x))),
            ),
            _ => {}
        }
    }
}

/// The string, byte string and float values two or more free choices of
/// the best example hold, not at their simplest, in order of first
/// occurrence.
fn duplicated_values(s: &Shrinker) -> Vec<ChoiceValue> {
    let mut counts: std::collections::HashMap<&ChoiceValue, usize> =
        std::collections::HashMap::new();
    let mut order = Vec::new();
    for node in &s.best.nodes {
        let candidate = matches!(
            node.value,
            ChoiceValue::String(_) | ChoiceValue::Bytes(_) | ChoiceValue::Float(_)
        );
        if node.forced || !candidate || node.value == node.constraints.simplest() {
            continue;
        }
        let count = counts.entry(&node.value).or_insert(0);
        *count += 1;
        if *count == 2 {
            order.push(node.value.clone());
        }
    }
    order
}

/// The free choices of the best example that hold `value` under the
/// constraints of the first one that does.
fn copies(s: &Shrinker, value: &ChoiceValue) -> Vec<usize> {
    let mut positions = Vec::new();
    let mut first: Option<&Constraints> = None;
    for (i, node) in s.best.nodes.iter().enumerate() {
        if node.forced || node.value != *value {
            continue;
        }
        match first {
            None => first = Some(&node.constraints),
            Some(c) if !same_kind(c, &node.constraints) => continue,
            Some(_) => {}
        }
        positions.push(i);
    }
    positions
}
