//! Combinators: map, filter, flat_map, and generators from plain functions.
//!
//! Each wraps its inner draws in a span, so the shrinker sees a mapped value,
//! a filter attempt or a dependent draw as one unit (a rejected filter
//! attempt is a discarded span).

use super::{Generator, WireSchema, labels};
use crate::test_case::TestCase;

/// How many times a filter tries before rejecting the test case.
const FILTER_ATTEMPTS: usize = 3;

/// See [`Generator::map`].
#[derive(Clone, Debug)]
pub struct Map<G, F> {
    inner: G,
    f: F,
}

impl<G, F> Map<G, F> {
    pub(crate) fn new(inner: G, f: F) -> Self {
        Map { inner, f }
    }
}

impl<G: Generator, U, F: Fn(G::Output) -> U> Generator for Map<G, F> {
    type Output = U;

    #[inline]
    fn generate(&self, tc: &mut TestCase) -> U {
        if let Some(whole) = tc.draw_whole(self) {
            return whole;
        }
        tc.start_span(labels::MAP);
        let v = self.inner.generate(tc);
        tc.stop_span(false);
        (self.f)(v)
    }

    fn wire_schema(&self) -> Option<WireSchema<'_, U>> {
        let inner = self.inner.wire_schema()?;
        Some(WireSchema {
            requires: inner.requires,
            schema: inner.schema,
            parse: Box::new(move |v| (inner.parse)(v).map(&self.f)),
        })
    }
}

/// See [`Generator::filter`].
#[derive(Clone, Debug)]
pub struct Filter<G, F> {
    inner: G,
    predicate: F,
}

impl<G, F> Filter<G, F> {
    pub(crate) fn new(inner: G, predicate: F) -> Self {
        Filter { inner, predicate }
    }
}

impl<G: Generator, F: Fn(&G::Output) -> bool> Generator for Filter<G, F> {
    type Output = G::Output;

    fn generate(&self, tc: &mut TestCase) -> G::Output {
        for _ in 0..FILTER_ATTEMPTS {
            tc.start_span(labels::FILTER);
            let v = self.inner.generate(tc);
            if (self.predicate)(&v) {
                tc.stop_span(false);
                return v;
            }
            tc.stop_span(true);
        }
        tc.reject()
    }
}

/// See [`Generator::flat_map`].
#[derive(Clone, Debug)]
pub struct FlatMap<G, F> {
    inner: G,
    f: F,
}

impl<G, F> FlatMap<G, F> {
    pub(crate) fn new(inner: G, f: F) -> Self {
        FlatMap { inner, f }
    }
}

impl<G: Generator, H: Generator, F: Fn(G::Output) -> H> Generator for FlatMap<G, F> {
    type Output = H::Output;

    fn generate(&self, tc: &mut TestCase) -> H::Output {
        tc.start_span(labels::FLAT_MAP);
        let first = self.inner.generate(tc);
        let next = (self.f)(first);
        let v = next.generate(tc);
        tc.stop_span(false);
        v
    }
}

/// A generator from a function of the test case (a composite generator).
#[derive(Clone, Debug)]
pub struct FromFn<F> {
    f: F,
}

/// A generator that runs `f` to build each value, drawing from other
/// generators through the test case; its draws form one span.
///
/// ```
/// use geist::generators as gs;
/// let pairs = gs::from_fn(|tc| {
///     let low = tc.draw_silent(gs::integers::<u8>());
///     let high = tc.draw_silent(gs::integers::<u8>().min_value(low));
///     (low, high)
/// });
/// ```
pub fn from_fn<T, F: Fn(&mut TestCase) -> T>(f: F) -> FromFn<F> {
    FromFn { f }
}

impl<T, F: Fn(&mut TestCase) -> T> Generator for FromFn<F> {
    type Output = T;

    fn generate(&self, tc: &mut TestCase) -> T {
        tc.start_span(labels::COMPOSITE);
        let v = (self.f)(tc);
        tc.stop_span(false);
        v
    }
}
