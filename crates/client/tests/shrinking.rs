//! Shrinking quality through the client: failures shrink to the minimal
//! example a person would write down.

use geist::generators::{self as gs, Generator};
use geist::{Settings, TestCase, run_property};
use std::fmt::Debug;

/// The value the final (minimal) replay of a failing property drew.
fn minimal<G: Generator>(seed: u64, generator: G, fails: impl Fn(&G::Output) -> bool) -> G::Output
where
    G::Output: Debug + Clone,
{
    let mut found = None;
    let settings = Settings::new()
        .test_cases(1000)
        .seed(Some(seed))
        .database(None::<&str>);
    let result = run_property(&settings, &mut |tc: &mut TestCase| {
        let v = tc.draw(&generator);
        let failed = fails(&v);
        if tc.is_final() {
            found = Some(v);
        }
        assert!(!failed);
    });
    assert!(result.is_err(), "the property never failed");
    match found {
        Some(v) => v,
        None => panic!("no final replay happened: {result:?}"),
    }
}

#[test]
fn vec_with_large_sum_shrinks_to_single_element() {
    for seed in [1, 2, 3] {
        let v = minimal(seed, gs::vecs(gs::integers::<i64>()), |xs: &Vec<i64>| {
            xs.iter().map(|x| i128::from(*x)).sum::<i128>() > 100
        });
        assert_eq!(v, vec![101], "seed {seed}");
    }
}

#[test]
fn integer_threshold_shrinks_to_boundary() {
    let v = minimal(4, gs::integers::<u32>(), |x| *x > 1000);
    assert_eq!(v, 1001);
    let v = minimal(5, gs::integers::<i32>(), |x| *x < -50);
    assert_eq!(v, -51);
    let v = minimal(6, gs::integers::<u128>(), |x| *x >= 1 << 100);
    assert_eq!(v, 1 << 100);
}

#[test]
fn bounded_integers_shrink_toward_the_bound_nearest_zero() {
    let v = minimal(
        7,
        gs::integers::<i64>().min_value(10).max_value(1000),
        |x| *x >= 500,
    );
    assert_eq!(v, 500);
    let v = minimal(
        7,
        gs::integers::<i64>().min_value(-1000).max_value(-10),
        |x| *x <= -500,
    );
    assert_eq!(v, -500);
}

#[test]
fn long_vec_shrinks_to_exact_length_of_zeros() {
    let v = minimal(8, gs::vecs(gs::integers::<u8>()), |xs| xs.len() >= 5);
    assert_eq!(v, vec![0; 5]);
}

#[test]
fn text_shrinks_to_simplest_characters() {
    let v = minimal(9, gs::text(), |s| s.chars().count() >= 3);
    assert_eq!(v, "000");
}

#[test]
fn tuple_parts_shrink_independently() {
    let v = minimal(
        10,
        (gs::integers::<i32>(), gs::integers::<i32>()),
        |(a, b)| *a > 10 && *b > 20,
    );
    assert_eq!(v, (11, 21));
}

#[test]
fn mapped_and_filtered_values_shrink() {
    let evens = gs::integers::<u32>().max_value(1_000_000).map(|x| x * 2);
    assert_eq!(minimal(11, evens, |x| *x > 300), 302);
    let small = gs::integers::<u32>().filter(|x| *x < 1_000_000);
    assert_eq!(minimal(12, small, |x| *x > 50), 51);
}

#[test]
fn filter_with_gaps_shrinks_to_smallest_accepted_value() {
    let odd = gs::integers::<u32>().filter(|x| x % 2 == 1);
    assert_eq!(minimal(12, odd, |x| *x > 50), 51);
}

#[test]
fn one_of_shrinks_to_the_first_branch_that_fails() {
    let g = gs::one_of(vec![
        gs::integers::<i64>().min_value(0).max_value(10).boxed(),
        gs::integers::<i64>().min_value(1000).boxed(),
    ]);
    assert_eq!(minimal(13, g, |x| *x >= 5), 5);
}

#[test]
fn optional_shrinks_to_some_minimal_value() {
    let v = minimal(14, gs::optional(gs::integers::<u16>()), |x| x.is_some());
    assert_eq!(v, Some(0));
}

#[test]
fn sets_and_maps_shrink_to_minimal_size() {
    let v = minimal(15, gs::btreesets(gs::integers::<u8>()), |s| s.len() >= 3);
    assert_eq!(v.into_iter().collect::<Vec<_>>(), vec![0, 1, 2]);
    let v = minimal(
        16,
        gs::btreemaps(gs::integers::<u8>(), gs::booleans()),
        |m| m.values().filter(|b| **b).count() >= 2,
    );
    assert_eq!(
        v.into_iter().collect::<Vec<_>>(),
        vec![(0, true), (1, true)]
    );
}

#[test]
fn floats_shrink_to_simple_values() {
    let v = minimal(17, gs::floats::<f64>().allow_nan(false), |x| *x > 1.5);
    assert_eq!(v, 2.0);
}

#[test]
fn dependent_draws_shrink_through_flat_map() {
    let g = gs::integers::<usize>()
        .min_value(1)
        .max_value(10)
        .flat_map(|n| gs::vecs(gs::booleans()).min_size(n).max_size(n));
    let v = minimal(18, g, |xs| xs.iter().any(|b| *b));
    assert_eq!(v, vec![true]);
}
