//! Default generators by type: the [`Generate`] trait, `#[derive(Generate)]`'s target.
//!
//! A type that implements [`Generate`] can be drawn with
//! `tc.draw(gs::any::<T>())`. The standard types implement it with their
//! unconstrained generators; structs and enums derive it field by field.

use crate::generators::{self as gs, Generator, labels};
use crate::test_case::TestCase;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::Hash;
use std::marker::PhantomData;

/// Types with a default generator. Derive it with `#[derive(geist::Generate)]`
/// (fields may name their own generator with `#[geist(with = ...)]`).
pub trait Generate: Sized {
    /// Builds one value from the test case's choices.
    fn generate_value(tc: &mut TestCase) -> Self;
}

/// The default generator of `T`.
pub struct Any<T> {
    marker: PhantomData<fn() -> T>,
}

impl<T> Clone for Any<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Any<T> {}

impl<T> std::fmt::Debug for Any<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "any::<{}>()", std::any::type_name::<T>())
    }
}

/// Values of `T` from its [`Generate`] implementation.
pub fn any<T: Generate>() -> Any<T> {
    Any {
        marker: PhantomData,
    }
}

impl<T: Generate> Generator for Any<T> {
    type Output = T;

    #[inline]
    fn generate(&self, tc: &mut TestCase) -> T {
        T::generate_value(tc)
    }
}

macro_rules! generate_with {
    ($($t:ty => $g:expr),* $(,)?) => {$(
        impl Generate for $t {
            #[inline]
            fn generate_value(tc: &mut TestCase) -> Self {
                $g.generate(tc)
            }
        }
    )*};
}

generate_with!(
    i8 => gs::integers::<i8>(), i16 => gs::integers::<i16>(), i32 => gs::integers::<i32>(),
    i64 => gs::integers::<i64>(), i128 => gs::integers::<i128>(), isize => gs::integers::<isize>(),
    u8 => gs::integers::<u8>(), u16 => gs::integers::<u16>(), u32 => gs::integers::<u32>(),
    u64 => gs::integers::<u64>(), u128 => gs::integers::<u128>(), usize => gs::integers::<usize>(),
    f32 => gs::floats::<f32>(), f64 => gs::floats::<f64>(),
    bool => gs::booleans(), char => gs::characters(), String => gs::text(),
);

impl Generate for () {
    fn generate_value(_tc: &mut TestCase) -> Self {}
}

impl<T: Generate> Generate for Box<T> {
    fn generate_value(tc: &mut TestCase) -> Self {
        Box::new(T::generate_value(tc))
    }
}

impl<T: Generate> Generate for Option<T> {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::optional(any::<T>()).generate(tc)
    }
}

impl<T: Generate, E: Generate> Generate for Result<T, E> {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::results(any::<T>(), any::<E>()).generate(tc)
    }
}

impl<T: Generate> Generate for Vec<T> {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::vecs(any::<T>()).generate(tc)
    }
}

impl<T: Generate + Hash + Eq> Generate for HashSet<T> {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::hashsets(any::<T>()).generate(tc)
    }
}

impl<T: Generate + Ord> Generate for BTreeSet<T> {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::btreesets(any::<T>()).generate(tc)
    }
}

impl<K: Generate + Hash + Eq, V: Generate> Generate for HashMap<K, V> {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::hashmaps(any::<K>(), any::<V>()).generate(tc)
    }
}

impl<K: Generate + Ord, V: Generate> Generate for BTreeMap<K, V> {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::btreemaps(any::<K>(), any::<V>()).generate(tc)
    }
}

impl<T: Generate, const N: usize> Generate for [T; N] {
    fn generate_value(tc: &mut TestCase) -> Self {
        gs::arrays::<_, N>(any::<T>()).generate(tc)
    }
}

macro_rules! generate_tuple {
    ($($t:ident),+) => {
        impl<$($t: Generate),+> Generate for ($($t,)+) {
            fn generate_value(tc: &mut TestCase) -> Self {
                ($(any::<$t>(),)+).generate(tc)
            }
        }
    };
}

generate_tuple!(A);
generate_tuple!(A, B);
generate_tuple!(A, B, C);
generate_tuple!(A, B, C, D);
generate_tuple!(A, B, C, D, E);
generate_tuple!(A, B, C, D, E, F);

/// Support for the derive macro; not a stable API.
#[doc(hidden)]
pub mod private {
    use super::*;

    /// Builds a struct's fields inside one span.
    pub fn composite<T>(tc: &mut TestCase, build: impl FnOnce(&mut TestCase) -> T) -> T {
        tc.start_span(labels::TUPLE);
        let v = build(tc);
        tc.stop_span(false);
        v
    }

    /// Chooses one of `count` variants (shrinking toward the first) and builds it, in one span.
    pub fn variant<T>(
        tc: &mut TestCase,
        count: usize,
        build: impl FnOnce(&mut TestCase, usize) -> T,
    ) -> T {
        tc.start_span(labels::ONE_OF);
        let index = tc.choose_index(count);
        let v = build(tc, index);
        tc.stop_span(false);
        v
    }
}
