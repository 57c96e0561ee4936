//! Two floats whose magnitudes are coupled (`|b - a|` must overflow, a sum
//! must pass a bound): shrinking the first, more significant one further
//! needs the second's magnitude raised, which no single-value move does and
//! [`super::choices::redistribute_pairs`] (a fixed sum) does not either.
//! Each pair of neighbouring float choices is first mirrored (both signs
//! flipped, when the first is negative: the same magnitudes, a simpler
//! first value), then the second goes to the end of its range on its side
//! while the first is shrunk against it (Hypothesis' shrinker scales such
//! pairs the same way). Polish round only: floats coupled like this are
//! rare and the search costs a float shrink per pair.

use super::Attempts;
use crate::choice::{ChoiceValue, Constraints, FloatConstraints};
use crate::shrink::Shrinker;
use crate::shrink::values::float::shrink_float;

/// Mirrors and scales each pair of neighbouring free float choices (no
/// float between them) of the best example.
pub(in crate::shrink) fn scale_float_pairs(s: &mut Shrinker) {
    if !s.polish {
        return;
    }
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        if let Some(j) = next_float(s, i) {
            mirror(s, i, j);
            scale(s, i, j);
        }
        i += 1;
    }
}

/// A free float choice's value and constraints.
fn float_at(s: &Shrinker, i: usize) -> Option<(f64, FloatConstraints)> {
    let node = s.best.nodes.get(i)?;
    match (&node.value, &node.constraints) {
        (ChoiceValue::Float(v), Constraints::Float(c)) if !node.forced && !v.is_nan() => {
            Some((*v, *c))
        }
        _ => None,
    }
}

/// If choice `i` is a free float, the next free float choice after it.
fn next_float(s: &Shrinker, i: usize) -> Option<usize> {
    float_at(s, i)?;
    (i + 1..s.best.nodes.len()).find(|&j| float_at(s, j).is_some())
}

/// Flips the signs of both floats, if the first is negative and both
/// constraints permit the flipped values.
fn mirror(s: &mut Shrinker, i: usize, j: usize) {
    let (Some((a, ca)), Some((b, cb))) = (float_at(s, i), float_at(s, j)) else {
        return;
    };
    if a.is_sign_negative() && a != 0.0 && ca.permits(-a) && cb.permits(-b) {
        let mut candidate = s.best.choices();
        candidate[i] = ChoiceValue::Float(-a);
        candidate[j] = ChoiceValue::Float(-b);
        s.consider(candidate);
    }
}

/// Sets the second float to the finite end of its range on its side of
/// zero and shrinks the first against it.
fn scale(s: &mut Shrinker, i: usize, j: usize) {
    let (Some((a, ca)), Some((b, cb))) = (float_at(s, i), float_at(s, j)) else {
        return;
    };
    let Some(extreme) = extreme(b, &cb) else {
        return;
    };
    if extreme.to_bits() == b.to_bits() {
        return;
    }
    shrink_float(
        a,
        ca,
        &mut Attempts::new(s, |s, x: &f64| {
            let mut candidate = s.best.choices();
            if j >= candidate.len() {
                return false;
            }
            candidate[i] = ChoiceValue::Float(*x);
            candidate[j] = ChoiceValue::Float(extreme);
            s.consider(candidate)
        }),
    );
}

/// The end of `c`'s range on `b`'s side of zero, the largest finite float
/// if that end is infinite (for 64-bit floats; none for narrower ones).
fn extreme(b: f64, c: &FloatConstraints) -> Option<f64> {
    let bound = if b.is_sign_negative() { c.min } else { c.max };
    let value = if bound.is_finite() {
        bound
    } else if c.width == 64 {
        f64::MAX.copysign(bound)
    } else {
        return None;
    };
    (c.permits(value) && value.is_sign_negative() == b.is_sign_negative()).then_some(value)
}
