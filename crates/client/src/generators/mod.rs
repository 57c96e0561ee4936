//! Generators: descriptions of how to build a value from a test case's choices.
//!
//! A [`Generator`] draws its value through the [`TestCase`], so every value
//! is replayable and shrinks by shrinking choices. Combinators and
//! collections open spans around their parts so the shrinker can delete,
//! simplify and reorder whole elements. Import as `use geist::generators as gs;`.

mod collections;
mod combinators;
mod composite;
mod formats;
mod json_schema;
mod numeric;
mod text;

pub use crate::generate::{Any, any};
pub use collections::{
    ArrayGenerator, BTreeMapGenerator, BTreeSetGenerator, HashMapGenerator, HashSetGenerator,
    VecGenerator, arrays, btreemaps, btreesets, hashmaps, hashsets, vecs,
};
pub use combinators::{Filter, FlatMap, FromFn, Map, from_fn};
pub use composite::{
    Just, OneOf, OptionalGenerator, ResultGenerator, SampledFrom, TupleGenerator, just, one_of,
    optional, results, sampled_from, tuples,
};
pub use formats::{
    FormatGenerator, dates, datetimes, domains, emails, ip_addresses, times, urls, uuids,
};
pub use json_schema::{JsonSchemaGenerator, json_schema};
pub use numeric::{
    BooleanGenerator, FloatGenerator, FloatType, IntegerGenerator, IntegerType, booleans, floats,
    integers,
};
pub use text::{
    BinaryGenerator, CharacterGenerator, RegexGenerator, TextGenerator, binary, characters,
    from_regex, text,
};
pub(crate) use text::{CharacterOptions, spec_schema};

use crate::test_case::TestCase;
use geist_protocol::Behaviour;
use geist_wire::cbor::Value as Cbor;
use std::sync::Arc;

/// Over the wire, a generator's whole value as one Hegel schema: the schema
/// and how to read the generated value back (`None` for a value the schema
/// cannot have produced), and the protocol behaviours a server needs to
/// answer it in that form. Generators built from plain values (integers,
/// floats, booleans, `sampled_from`, maps and `one_of`s of those) have one, so
/// a `one_of` of them is a single `generate` of a `one_of` schema, as
/// Hegel clients do. Whether it is used is the backend's decision (see
/// `TestCase::draw_whole`). Not part of the stable API.
#[doc(hidden)]
pub struct WireSchema<'a, T> {
    pub(crate) schema: Cbor,
    pub(crate) parse: ParseWire<'a, T>,
    pub(crate) requires: Vec<Behaviour>,
}

impl<'a, T> WireSchema<'a, T> {
    /// A schema any server answers in the form `parse` reads.
    pub(crate) fn new(schema: Cbor, parse: ParseWire<'a, T>) -> WireSchema<'a, T> {
        WireSchema {
            schema,
            parse,
            requires: Vec::new(),
        }
    }
}

/// Reads a generated value back (`None` if the schema cannot have produced it).
pub(crate) type ParseWire<'a, T> = Box<dyn Fn(&Cbor) -> Option<T> + 'a>;

/// Span labels the client places (the engine's own labels cover collections,
/// elements, tuples and one_of).
pub(crate) mod labels {
    /// A mapped value.
    pub(crate) const MAP: u64 = 0x6765_6973_7501;
    /// One attempt of a filter (discarded when rejected).
    pub(crate) const FILTER: u64 = 0x6765_6973_7502;
    /// A flat_map: the first value and the generator it chose.
    pub(crate) const FLAT_MAP: u64 = 0x6765_6973_7503;
    /// An optional or result value.
    pub(crate) const OPTION: u64 = 0x6765_6973_7504;
    /// A map entry.
    pub(crate) const ENTRY: u64 = geist_engine::data::labels::DICT_ENTRY;
    /// A collection.
    pub(crate) const COLLECTION: u64 = geist_engine::data::labels::COLLECTION;
    /// A tuple, struct or array.
    pub(crate) const TUPLE: u64 = geist_engine::data::labels::TUPLE;
    /// A one_of or enum variant.
    pub(crate) const ONE_OF: u64 = geist_engine::data::labels::ONE_OF;
    /// A user-defined generator built with `from_fn` or derived.
    pub(crate) const COMPOSITE: u64 = 0x6765_6973_7505;
}

/// Something that builds values of type `Output` from a test case's choices.
///
/// Implement it for your own generators by drawing from other generators:
///
/// ```
/// use geist::generators::{self as gs, Generator};
/// use geist::TestCase;
///
/// struct Points;
/// impl Generator for Points {
///     type Output = (i32, i32);
///     fn generate(&self, tc: &mut TestCase) -> (i32, i32) {
///         let x = tc.draw_silent(gs::integers::<i32>().min_value(0));
///         let y = tc.draw_silent(gs::integers::<i32>().min_value(x));
///         (x, y)
///     }
/// }
/// ```
pub trait Generator {
    /// The type of the values built.
    type Output;

    /// Builds one value (unwinds with a private payload if the test case must stop).
    fn generate(&self, tc: &mut TestCase) -> Self::Output;

    /// Values transformed by `f` (shrinking the input shrinks the output).
    fn map<U, F: Fn(Self::Output) -> U>(self, f: F) -> Map<Self, F>
    where
        Self: Sized,
    {
        Map::new(self, f)
    }

    /// Only values satisfying `predicate`: a few attempts, then the test case is rejected.
    fn filter<F: Fn(&Self::Output) -> bool>(self, predicate: F) -> Filter<Self, F>
    where
        Self: Sized,
    {
        Filter::new(self, predicate)
    }

    /// Values of the generator `f` builds from a first value.
    fn flat_map<G: Generator, F: Fn(Self::Output) -> G>(self, f: F) -> FlatMap<Self, F>
    where
        Self: Sized,
    {
        FlatMap::new(self, f)
    }

    /// Over the wire: this generator's value as a single schema, if it has
    /// one (see [`WireSchema`]); composite generators draw piece by piece.
    #[doc(hidden)]
    fn wire_schema(&self) -> Option<WireSchema<'_, Self::Output>> {
        None
    }

    /// This generator behind a shareable, type-erased handle.
    fn boxed(self) -> BoxedGenerator<Self::Output>
    where
        Self: Sized + Send + Sync + 'static,
    {
        BoxedGenerator {
            inner: Arc::new(self),
        }
    }
}

impl<G: Generator + ?Sized> Generator for &G {
    type Output = G::Output;

    #[inline]
    fn generate(&self, tc: &mut TestCase) -> G::Output {
        (**self).generate(tc)
    }

    fn wire_schema(&self) -> Option<WireSchema<'_, G::Output>> {
        (**self).wire_schema()
    }
}

/// A type-erased generator (cheap to clone; shareable between threads).
pub struct BoxedGenerator<T> {
    inner: Arc<dyn Generator<Output = T> + Send + Sync>,
}

impl<T> Clone for BoxedGenerator<T> {
    fn clone(&self) -> Self {
        BoxedGenerator {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Generator for BoxedGenerator<T> {
    type Output = T;

    #[inline]
    fn generate(&self, tc: &mut TestCase) -> T {
        self.inner.generate(tc)
    }

    fn wire_schema(&self) -> Option<WireSchema<'_, T>> {
        self.inner.wire_schema()
    }

    fn boxed(self) -> BoxedGenerator<T> {
        self
    }
}

impl<T> std::fmt::Debug for BoxedGenerator<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxedGenerator")
    }
}
