//! Standalone value shrinkers: given one value and a predicate that says
//! whether a candidate still fails, find a simpler value that does.
//!
//! They know nothing of choice sequences or test cases (as Hypothesis'
//! `shrinking/` package): the shrink passes wrap a choice position in a
//! [`Predicate`] and hand its value over. That keeps each one small, tested
//! on its own, and usable for any value of its kind.

pub mod collection;
pub mod float;
pub mod integer;
pub mod text;

/// What a value shrinker asks about its candidates.
pub trait Predicate<V: ?Sized> {
    /// Whether `candidate` still fails; if it does, it is the new current value.
    fn holds(&mut self, candidate: &V) -> bool;

    /// Whether the budget is spent: every later candidate would be refused,
    /// so the shrinker may as well stop.
    fn stopped(&self) -> bool {
        false
    }
}

impl<V: ?Sized, F: FnMut(&V) -> bool> Predicate<V> for F {
    fn holds(&mut self, candidate: &V) -> bool {
        self(candidate)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A predicate that counts its calls, for the value shrinkers' tests.

    use super::Predicate;
    use std::collections::HashSet;
    use std::hash::Hash;

    /// Wraps a property of values; counts distinct candidates asked about.
    pub struct Counting<V, F> {
        pub property: F,
        pub asked: HashSet<V>,
        pub calls: usize,
    }

    impl<V, F> Counting<V, F> {
        pub fn new(property: F) -> Self {
            Counting {
                property,
                asked: HashSet::new(),
                calls: 0,
            }
        }
    }

    impl<V: Clone + Eq + Hash, F: FnMut(&V) -> bool> Predicate<V> for Counting<V, F> {
        fn holds(&mut self, candidate: &V) -> bool {
            if self.asked.insert(candidate.clone()) {
                self.calls += 1;
            }
            (self.property)(candidate)
        }
    }
}
