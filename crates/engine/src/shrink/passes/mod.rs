//! The shrink passes, by family. Each pass is small and independent, works
//! on the shrinker's current best example, and re-reads it after every
//! success (indices may have moved). [`super::schedule`] decides when each
//! runs.

pub(super) mod characters;
pub(super) mod choices;
pub(super) mod deletion;
pub(super) mod duplicates;
pub(super) mod element_pairs;
pub(super) mod float_pairs;
pub(super) mod regeneration;
pub(super) mod reordering;
pub(super) mod reshaping;
pub(super) mod simplification;

use super::Shrinker;
use super::values::Predicate;
pub(super) use crate::shrink::search::find_integer;
use std::marker::PhantomData;

/// The spans with `label` and `depth` that follow each other from `at`
/// (forwards: each starting where the last ended) or lead up to it
/// (backwards: each ending where the next starts), as the positions where
/// they end (forwards) or start (backwards), nearest first.
fn sibling_chain(s: &Shrinker, label: u64, depth: usize, at: usize, forwards: bool) -> Vec<usize> {
    let mut next: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for sp in &s.best.spans {
        if sp.label == label && sp.depth == depth && sp.start < sp.end {
            if forwards {
                next.entry(sp.start).or_insert(sp.end);
            } else {
                next.entry(sp.end).or_insert(sp.start);
            }
        }
    }
    let mut chain = Vec::new();
    let mut at = at;
    while let Some(&to) = next.get(&at) {
        chain.push(to);
        at = to;
    }
    chain
}

/// Whether choice `i` of the best example decides whether a collection
/// draws another element: it starts an element, or it is the "no more"
/// choice right after one. (The "no more" choice of an empty collection has
/// no element next to it to tell it apart.)
fn decides_element(s: &Shrinker, i: usize) -> bool {
    s.best.spans.iter().any(|sp| {
        sp.label == crate::data::labels::COLLECTION_ELEMENT && (sp.start == i || sp.end == i)
    })
}

/// Whether choice `i` of the best example is a collection's closing "no
/// more" choice (the last choice of a collection's span): raising it only
/// draws another element. Unlike [`decides_element`], this also knows the
/// "no more" of an empty collection.
fn closes_collection(s: &Shrinker, i: usize) -> bool {
    matches!(
        s.best.nodes.get(i).map(|n| &n.value),
        Some(crate::choice::ChoiceValue::Boolean(false))
    ) && s
        .best
        .spans
        .iter()
        .any(|sp| sp.label == crate::data::labels::COLLECTION && sp.end == i + 1)
}

/// Whether an integer with these bounds may count something drawn after it
/// (a length drawn before the elements, a `flat_map`'s size): bounded and
/// never negative. The moves that lower a count together with deleting what
/// it counts skip other integers (a value in -32768..=32767 counts nothing).
fn may_count(c: &crate::choice::CompactIntegerConstraints) -> bool {
    let c = c.get();
    c.min.is_some_and(|min| min >= 0) && c.max.is_some()
}

/// A free integer choice one step simpler, if there is one.
fn lower_once(node: &crate::choice::ChoiceNode) -> Option<crate::choice::ChoiceValue> {
    use crate::choice::{ChoiceValue, Constraints};
    match (&node.value, &node.constraints) {
        (ChoiceValue::Integer(v), Constraints::Integer(c)) if !node.forced => {
            let index = c.index_of(*v);
            if index == 0 {
                return None;
            }
            c.value_at(index - 1).map(ChoiceValue::Integer)
        }
        _ => None,
    }
}

/// A free integer choice one further from its simplest value (on the side
/// it is on; above it when at it), if the bounds permit that.
fn raise_once(node: &crate::choice::ChoiceNode) -> Option<crate::choice::ChoiceValue> {
    use crate::choice::{ChoiceValue, Constraints};
    match (&node.value, &node.constraints) {
        (ChoiceValue::Integer(v), Constraints::Integer(c)) if !node.forced => {
            let raised = if *v >= c.simplest() {
                v.checked_add(1)
            } else {
                v.checked_sub(1)
            }?;
            c.permits(raised).then_some(ChoiceValue::Integer(raised))
        }
        _ => None,
    }
}

/// Which choices decided to draw a collection element, for the current best
/// example (recomputed when it changes).
#[derive(Default)]
struct ElementStarts {
    improvements: Option<usize>,
    at: Vec<bool>,
}

impl ElementStarts {
    fn get(&mut self, s: &Shrinker, i: usize) -> bool {
        if self.improvements != Some(s.improvements) {
            self.improvements = Some(s.improvements);
            self.at = vec![false; s.best.nodes.len()];
            for sp in &s.best.spans {
                if sp.label == crate::data::labels::COLLECTION_ELEMENT && sp.start < self.at.len() {
                    self.at[sp.start] = true;
                }
            }
        }
        self.at.get(i).copied().unwrap_or(false)
    }
}

/// Candidates of one kind (an integer, a distance, ...) as a value shrinker's
/// [`Predicate`]: `attempt` builds the candidate example and has the
/// shrinker consider it; the shrinker's budget says when to stop.
pub(super) struct Attempts<'s, 'a, V: ?Sized, F> {
    shrinker: &'s mut Shrinker<'a>,
    attempt: F,
    value: PhantomData<fn(&V)>,
}

impl<'s, 'a, V: ?Sized, F: FnMut(&mut Shrinker<'a>, &V) -> bool> Attempts<'s, 'a, V, F> {
    pub(super) fn new(shrinker: &'s mut Shrinker<'a>, attempt: F) -> Self {
        Attempts {
            shrinker,
            attempt,
            value: PhantomData,
        }
    }
}

impl<'a, V: ?Sized, F: FnMut(&mut Shrinker<'a>, &V) -> bool> Predicate<V>
    for Attempts<'_, 'a, V, F>
{
    fn holds(&mut self, candidate: &V) -> bool {
        (self.attempt)(self.shrinker, candidate)
    }

    fn stopped(&self) -> bool {
        self.shrinker.exhausted()
    }
}
