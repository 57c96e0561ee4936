//! Collections: Vec, HashSet, BTreeSet, HashMap, BTreeMap and fixed-size arrays.
//!
//! Variable-size collections are sized by the engine's "one more?" choices,
//! one per element, so shrinking deletes an element by deleting its span. A
//! duplicate in a set (or a repeated map key) is rejected and another
//! element drawn; after too many duplicates the collection stops.

use super::{Generator, WireSchema, labels};
use crate::backend::CollectionSizer;
use crate::test_case::{TestCase, usage_error};
use geist_engine::data::Collection;
use geist_wire::cbor::{self, Value as Cbor};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::Hash;

/// The most elements a vector reserves room for before it draws them
/// ([`Sizing::initial_capacity`]).
const SMALL_VEC: usize = 16;

/// Size bounds shared by the collection generators. The engine's
/// collection for them is built for each value drawn: properties usually
/// build their generators inside the test, once per test case, and the
/// engine remembers the continuation probabilities it solved, so a template
/// kept here would only add its own cost (a lazily filled `OnceLock` took
/// more than the engine's collection it held; cloning one costs about half
/// of building one).
#[derive(Clone, Copy, Debug)]
struct Sizing {
    min_size: usize,
    max_size: Option<usize>,
}

impl Sizing {
    fn new() -> Sizing {
        Sizing {
            min_size: 0,
            max_size: None,
        }
    }

    fn min(mut self, n: usize) -> Sizing {
        self.min_size = n;
        self
    }

    fn max(mut self, n: usize) -> Sizing {
        self.max_size = Some(n);
        self
    }

    /// Room to reserve for a vector's elements before drawing them: a
    /// small bounded vector's most (one allocation, where growing from
    /// nothing reallocates at 4 and 8 elements), else its fewest.
    fn initial_capacity(&self) -> usize {
        match self.max_size {
            Some(max) if max <= SMALL_VEC => max,
            _ => self.min_size.min(SMALL_VEC),
        }
    }

    fn start(&self, what: &str, tc: &mut TestCase) -> CollectionSizer {
        if let Some(max) = self.max_size
            && max < self.min_size
        {
            usage_error(format!(
                "{what}: max_size={max} < min_size={}",
                self.min_size
            ));
        }
        tc.new_collection(
            || Collection::new(self.min_size, self.max_size),
            self.min_size,
            self.max_size,
        )
    }
}

macro_rules! size_methods {
    () => {
        /// Fewest elements.
        pub fn min_size(mut self, n: usize) -> Self {
            self.sizing = self.sizing.min(n);
            self
        }

        /// Most elements.
        pub fn max_size(mut self, n: usize) -> Self {
            self.sizing = self.sizing.max(n);
            self
        }
    };
}

/// How a unique collection compares elements.
type Equality<T> = fn(&T, &T) -> bool;

/// Vectors of values from an element generator.
pub struct VecGenerator<G: Generator> {
    elements: G,
    sizing: Sizing,
    unique: Option<Equality<G::Output>>,
}

impl<G: Generator + Clone> Clone for VecGenerator<G> {
    fn clone(&self) -> Self {
        VecGenerator {
            elements: self.elements.clone(),
            sizing: self.sizing,
            unique: self.unique,
        }
    }
}

/// Vectors of elements from `elements` (by default of any length).
pub fn vecs<G: Generator>(elements: G) -> VecGenerator<G> {
    VecGenerator {
        elements,
        sizing: Sizing::new(),
        unique: None,
    }
}

impl<G: Generator> VecGenerator<G> {
    size_methods!();

    /// Whether the elements must be pairwise distinct.
    pub fn unique(mut self, unique: bool) -> Self
    where
        G::Output: PartialEq,
    {
        self.unique = unique.then_some(<G::Output as PartialEq>::eq as fn(&_, &_) -> bool);
        self
    }
}

impl<G: Generator> Generator for VecGenerator<G> {
    type Output = Vec<G::Output>;

    fn generate(&self, tc: &mut TestCase) -> Vec<G::Output> {
        if let Some(whole) = tc.draw_whole(self) {
            return whole;
        }
        let mut collection = self.sizing.start("vecs", tc);
        tc.start_span(labels::COLLECTION);
        let mut out = Vec::with_capacity(self.sizing.initial_capacity());
        while tc.collection_more(&mut collection) {
            let v = self.elements.generate(tc);
            match self.unique {
                Some(eq) if out.iter().any(|seen| eq(seen, &v)) => {
                    tc.collection_reject(&mut collection)
                }
                _ => out.push(v),
            }
        }
        tc.stop_span(false);
        out
    }

    /// A `list` schema when the elements have one. Unique vectors are left
    /// out: the server compares raw values, the client compares (possibly
    /// mapped) elements.
    fn wire_schema(&self) -> Option<WireSchema<'_, Vec<G::Output>>> {
        let (min, max) = (self.sizing.min_size, self.sizing.max_size);
        if self.unique.is_some() || max.is_some_and(|m| m < min) {
            return None;
        }
        let elements = self.elements.wire_schema()?;
        let mut schema = vec![
            ("type", Cbor::Text("list".into())),
            ("elements", elements.schema.clone()),
            ("min_size", cbor::integer(min as i128)),
        ];
        if let Some(max) = max {
            schema.push(("max_size", cbor::integer(max as i128)));
        }
        Some(WireSchema {
            requires: elements.requires.clone(),
            schema: cbor::text_map(schema),
            parse: Box::new(move |v| {
                let Cbor::Array(items) = v else { return None };
                if items.len() < min || max.is_some_and(|m| items.len() > m) {
                    return None;
                }
                items.iter().map(|item| (elements.parse)(item)).collect()
            }),
        })
    }
}

/// Hash sets of values from an element generator.
#[derive(Clone)]
pub struct HashSetGenerator<G> {
    elements: G,
    sizing: Sizing,
}

/// Hash sets of elements from `elements`.
pub fn hashsets<G: Generator>(elements: G) -> HashSetGenerator<G>
where
    G::Output: Hash + Eq,
{
    HashSetGenerator {
        elements,
        sizing: Sizing::new(),
    }
}

impl<G> HashSetGenerator<G> {
    size_methods!();
}

impl<G: Generator> Generator for HashSetGenerator<G>
where
    G::Output: Hash + Eq,
{
    type Output = HashSet<G::Output>;

    fn generate(&self, tc: &mut TestCase) -> HashSet<G::Output> {
        let mut collection = self.sizing.start("hashsets", tc);
        tc.start_span(labels::COLLECTION);
        let mut out = HashSet::new();
        while tc.collection_more(&mut collection) {
            if !out.insert(self.elements.generate(tc)) {
                tc.collection_reject(&mut collection);
            }
        }
        tc.stop_span(false);
        out
    }
}

/// Ordered sets of values from an element generator.
#[derive(Clone)]
pub struct BTreeSetGenerator<G> {
    elements: G,
    sizing: Sizing,
}

/// Ordered sets (`BTreeSet`) of elements from `elements`.
pub fn btreesets<G: Generator>(elements: G) -> BTreeSetGenerator<G>
where
    G::Output: Ord,
{
    BTreeSetGenerator {
        elements,
        sizing: Sizing::new(),
    }
}

impl<G> BTreeSetGenerator<G> {
    size_methods!();
}

impl<G: Generator> Generator for BTreeSetGenerator<G>
where
    G::Output: Ord,
{
    type Output = BTreeSet<G::Output>;

    fn generate(&self, tc: &mut TestCase) -> BTreeSet<G::Output> {
        let mut collection = self.sizing.start("btreesets", tc);
        tc.start_span(labels::COLLECTION);
        let mut out = BTreeSet::new();
        while tc.collection_more(&mut collection) {
            if !out.insert(self.elements.generate(tc)) {
                tc.collection_reject(&mut collection);
            }
        }
        tc.stop_span(false);
        out
    }
}

/// A map being filled with drawn entries.
trait Entries<K, V> {
    fn has_key(&self, k: &K) -> bool;
    fn put(&mut self, k: K, v: V);
}

impl<K: Hash + Eq, V> Entries<K, V> for HashMap<K, V> {
    fn has_key(&self, k: &K) -> bool {
        self.contains_key(k)
    }
    fn put(&mut self, k: K, v: V) {
        self.insert(k, v);
    }
}

impl<K: Ord, V> Entries<K, V> for BTreeMap<K, V> {
    fn has_key(&self, k: &K) -> bool {
        self.contains_key(k)
    }
    fn put(&mut self, k: K, v: V) {
        self.insert(k, v);
    }
}

/// Draws entries into a map-like collection: each entry is a span; a repeated
/// key discards its span (no value is drawn for it) and is rejected.
fn draw_entries<K: Generator, V: Generator, M: Entries<K::Output, V::Output>>(
    tc: &mut TestCase,
    sizing: &Sizing,
    what: &str,
    keys: &K,
    values: &V,
    out: &mut M,
) {
    let mut collection = sizing.start(what, tc);
    tc.start_span(labels::COLLECTION);
    while tc.collection_more(&mut collection) {
        tc.start_span(labels::ENTRY);
        let k = keys.generate(tc);
        if out.has_key(&k) {
            tc.stop_span(true);
            tc.collection_reject(&mut collection);
            continue;
        }
        let v = values.generate(tc);
        tc.stop_span(false);
        out.put(k, v);
    }
    tc.stop_span(false);
}

/// Hash maps from a key and a value generator.
#[derive(Clone)]
pub struct HashMapGenerator<K, V> {
    keys: K,
    values: V,
    sizing: Sizing,
}

/// Hash maps with keys from `keys` and values from `values`.
pub fn hashmaps<K: Generator, V: Generator>(keys: K, values: V) -> HashMapGenerator<K, V>
where
    K::Output: Hash + Eq,
{
    HashMapGenerator {
        keys,
        values,
        sizing: Sizing::new(),
    }
}

impl<K, V> HashMapGenerator<K, V> {
    size_methods!();
}

impl<K: Generator, V: Generator> Generator for HashMapGenerator<K, V>
where
    K::Output: Hash + Eq,
{
    type Output = HashMap<K::Output, V::Output>;

    fn generate(&self, tc: &mut TestCase) -> HashMap<K::Output, V::Output> {
        let mut out = HashMap::new();
        draw_entries(
            tc,
            &self.sizing,
            "hashmaps",
            &self.keys,
            &self.values,
            &mut out,
        );
        out
    }
}

/// Ordered maps from a key and a value generator.
#[derive(Clone)]
pub struct BTreeMapGenerator<K, V> {
    keys: K,
    values: V,
    sizing: Sizing,
}

/// Ordered maps (`BTreeMap`) with keys from `keys` and values from `values`.
pub fn btreemaps<K: Generator, V: Generator>(keys: K, values: V) -> BTreeMapGenerator<K, V>
where
    K::Output: Ord,
{
    BTreeMapGenerator {
        keys,
        values,
        sizing: Sizing::new(),
    }
}

impl<K, V> BTreeMapGenerator<K, V> {
    size_methods!();
}

impl<K: Generator, V: Generator> Generator for BTreeMapGenerator<K, V>
where
    K::Output: Ord,
{
    type Output = BTreeMap<K::Output, V::Output>;

    fn generate(&self, tc: &mut TestCase) -> BTreeMap<K::Output, V::Output> {
        let mut out = BTreeMap::new();
        draw_entries(
            tc,
            &self.sizing,
            "btreemaps",
            &self.keys,
            &self.values,
            &mut out,
        );
        out
    }
}

/// Fixed-size arrays.
#[derive(Clone, Debug)]
pub struct ArrayGenerator<G, const N: usize> {
    elements: G,
}

/// Arrays `[T; N]` with every element from `elements`.
pub fn arrays<G: Generator, const N: usize>(elements: G) -> ArrayGenerator<G, N> {
    ArrayGenerator { elements }
}

impl<G: Generator, const N: usize> Generator for ArrayGenerator<G, N> {
    type Output = [G::Output; N];

    fn generate(&self, tc: &mut TestCase) -> [G::Output; N] {
        tc.start_span(labels::TUPLE);
        let out = std::array::from_fn(|_| self.elements.generate(tc));
        tc.stop_span(false);
        out
    }
}
