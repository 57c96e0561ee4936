//! Values built from choices among or combinations of others: tuples,
//! `Option`, `Result`, constants, samples and alternatives.
//!
//! Alternatives are one index choice (shrinking toward the first) followed by
//! the chosen branch, in one span, so the shrinker can swap a branch for a
//! simpler one.

use super::{BoxedGenerator, Generator, WireSchema, labels};
use crate::test_case::{TestCase, usage_error};
use crate::transport::values;
use geist_engine::choice::IntegerConstraints;
use geist_protocol::Behaviour;
use geist_wire::cbor::{self, Value as Cbor};

macro_rules! tuple_generator {
    ($($g:ident $v:ident),+) => {
        impl<$($g: Generator),+> Generator for ($($g,)+) {
            type Output = ($($g::Output,)+);

            fn generate(&self, tc: &mut TestCase) -> Self::Output {
                let ($($v,)+) = self;
                tc.start_span(labels::TUPLE);
                let out = ($($v.generate(tc),)+);
                tc.stop_span(false);
                out
            }
        }
    };
}

tuple_generator!(A a);
tuple_generator!(A a, B b);
tuple_generator!(A a, B b, C c);
tuple_generator!(A a, B b, C c, D d);
tuple_generator!(A a, B b, C c, D d, E e);
tuple_generator!(A a, B b, C c, D d, E e, F f);

/// Tuples of values, one from each generator of a tuple of generators.
#[derive(Clone, Debug)]
pub struct TupleGenerator<T> {
    parts: T,
}

/// Tuples (up to 6 parts): `gs::tuples((gs::integers::<u8>(), gs::booleans()))`.
/// A tuple of generators is itself a generator; this names it.
pub fn tuples<T: Generator>(parts: T) -> TupleGenerator<T> {
    TupleGenerator { parts }
}

impl<T: Generator> Generator for TupleGenerator<T> {
    type Output = T::Output;

    fn generate(&self, tc: &mut TestCase) -> T::Output {
        self.parts.generate(tc)
    }
}

/// `Option`s of values.
#[derive(Clone, Debug)]
pub struct OptionalGenerator<G> {
    inner: G,
}

/// `None` or `Some` value from `inner` (shrinking toward `None`).
pub fn optional<G: Generator>(inner: G) -> OptionalGenerator<G> {
    OptionalGenerator { inner }
}

impl<G: Generator> Generator for OptionalGenerator<G> {
    type Output = Option<G::Output>;

    fn generate(&self, tc: &mut TestCase) -> Option<G::Output> {
        tc.start_span(labels::OPTION);
        let out = tc.choose_boolean(0.5).then(|| self.inner.generate(tc));
        tc.stop_span(false);
        out
    }
}

/// `Result`s of values.
#[derive(Clone, Debug)]
pub struct ResultGenerator<O, E> {
    ok: O,
    err: E,
}

/// `Ok` values from `ok` or `Err` values from `err` (shrinking toward `Ok`).
pub fn results<O: Generator, E: Generator>(ok: O, err: E) -> ResultGenerator<O, E> {
    ResultGenerator { ok, err }
}

impl<O: Generator, E: Generator> Generator for ResultGenerator<O, E> {
    type Output = Result<O::Output, E::Output>;

    fn generate(&self, tc: &mut TestCase) -> Self::Output {
        tc.start_span(labels::OPTION);
        let out = if tc.choose_boolean(0.5) {
            Err(self.err.generate(tc))
        } else {
            Ok(self.ok.generate(tc))
        };
        tc.stop_span(false);
        out
    }
}

/// Always the same value.
#[derive(Clone, Debug)]
pub struct Just<T> {
    value: T,
}

/// Always (a clone of) `value`; makes no choices.
pub fn just<T: Clone>(value: T) -> Just<T> {
    Just { value }
}

impl<T: Clone> Generator for Just<T> {
    type Output = T;

    fn generate(&self, _tc: &mut TestCase) -> T {
        self.value.clone()
    }
}

/// One of a list of values.
#[derive(Clone, Debug)]
pub struct SampledFrom<T> {
    values: Vec<T>,
}

/// One of `values` (shrinking toward the first). `values` must not be empty.
pub fn sampled_from<T: Clone>(values: impl Into<Vec<T>>) -> SampledFrom<T> {
    SampledFrom {
        values: values.into(),
    }
}

impl<T: Clone> Generator for SampledFrom<T> {
    type Output = T;

    fn generate(&self, tc: &mut TestCase) -> T {
        if self.values.is_empty() {
            usage_error("sampled_from: no values to sample from".to_string());
        }
        let i = tc.choose_index(self.values.len());
        self.values[i].clone()
    }

    fn wire_schema(&self) -> Option<WireSchema<'_, T>> {
        if self.values.is_empty() {
            return None;
        }
        let index = IntegerConstraints::bounded(0, self.values.len() as i128 - 1);
        Some(WireSchema {
            requires: Vec::new(),
            schema: values::integer_schema(&index),
            parse: Box::new(move |v| {
                let i = values::integer_choice(&index, v)?;
                self.values.get(usize::try_from(i).ok()?).cloned()
            }),
        })
    }
}

/// A value from one of several generators.
#[derive(Clone, Debug)]
pub struct OneOf<T> {
    branches: Vec<BoxedGenerator<T>>,
}

/// A value from one of `branches` (shrinking toward the first). Box each
/// branch with [`Generator::boxed`]: `gs::one_of(vec![a.boxed(), b.boxed()])`.
pub fn one_of<T>(branches: Vec<BoxedGenerator<T>>) -> OneOf<T> {
    OneOf { branches }
}

impl<T> Generator for OneOf<T> {
    type Output = T;

    fn generate(&self, tc: &mut TestCase) -> T {
        if self.branches.is_empty() {
            usage_error("one_of: no generators to choose from".to_string());
        }
        if let Some(whole) = tc.draw_whole(self) {
            return whole;
        }
        tc.start_span(labels::ONE_OF);
        let i = tc.choose_index(self.branches.len());
        let v = self.branches[i].generate(tc);
        tc.stop_span(false);
        v
    }

    /// A `one_of` schema when every branch has a schema; the server answers
    /// `[index, value]` (before protocol 0.11 it answers with the value
    /// alone, which does not say which branch's parser to use: such a
    /// server is not sent this schema).
    fn wire_schema(&self) -> Option<WireSchema<'_, T>> {
        if self.branches.is_empty() {
            return None;
        }
        let branches: Vec<WireSchema<'_, T>> = self
            .branches
            .iter()
            .map(|b| b.wire_schema())
            .collect::<Option<_>>()?;
        let schema = cbor::text_map([
            ("type", Cbor::Text("one_of".into())),
            (
                "generators",
                Cbor::Array(branches.iter().map(|b| b.schema.clone()).collect()),
            ),
        ]);
        let mut requires = vec![Behaviour::OneOfAnswersIndex];
        for branch in &branches {
            for behaviour in &branch.requires {
                if !requires.contains(behaviour) {
                    requires.push(*behaviour);
                }
            }
        }
        Some(WireSchema {
            requires,
            schema,
            parse: Box::new(move |v| {
                let Cbor::Array(pair) = v else { return None };
                let [index, value] = pair.as_slice() else {
                    return None;
                };
                let i = usize::try_from(cbor::as_i128(index)?).ok()?;
                (branches.get(i)?.parse)(value)
            }),
        })
    }
}
