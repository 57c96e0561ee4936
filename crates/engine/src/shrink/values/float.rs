//! Floats: shrink along the float simplicity order (see
//! [`float_key`](crate::choice::float_key)): a few likely candidates first
//! (the simplest value, 0, ±1, the value truncated, rounded or negated), then
//! a binary search on the position in that order within the same sign, then
//! the sign itself.

use super::Predicate;
use crate::choice::{FloatConstraints, float_from_magnitude_key, float_key, float_magnitude_index};

/// Shrinks a float `v` permitted by `c`; the predicate's successes become the
/// current value.
pub fn shrink_float(v: f64, c: FloatConstraints, predicate: &mut dyn Predicate<f64>) {
    let current_key = float_key(v);
    let mut candidates = vec![c.simplest(), 0.0, 1.0, -1.0];
    if v.is_nan() || v.is_infinite() {
        candidates.extend([f64::MAX, -f64::MAX, f64::INFINITY, f64::NEG_INFINITY]);
    }
    if v.is_finite() {
        candidates.extend([v.trunc(), v.floor(), v.ceil(), -v]);
    }
    candidates.retain(|x| c.permits(*x) && float_key(*x) < current_key);
    candidates.sort_by_key(|x| float_key(*x));
    candidates.dedup_by(|a, b| a.to_bits() == b.to_bits());
    let mut v = v;
    for candidate in candidates {
        if predicate.holds(&candidate) {
            v = candidate;
            break;
        }
    }
    if v.is_nan() {
        return;
    }
    let negative = v.is_sign_negative();
    let signed = |m: f64| if negative { -m } else { m };
    let mut lo = 0u64;
    let mut hi = float_magnitude_index(v);
    while lo < hi && !predicate.stopped() {
        let mid = lo + (hi - lo) / 2;
        let candidate = signed(float_from_magnitude_key(mid));
        if c.permits(candidate) && !candidate.is_nan() && predicate.holds(&candidate) {
            hi = mid;
            v = candidate;
        } else {
            lo = mid + 1;
        }
    }
    if v.is_sign_negative() && c.permits(-v) {
        predicate.holds(&-v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: FloatConstraints = FloatConstraints {
        min: f64::NEG_INFINITY,
        max: f64::INFINITY,
        allow_nan: true,
        width: 64,
    };

    fn shrunk(v: f64, c: FloatConstraints, mut property: impl FnMut(f64) -> bool) -> f64 {
        let mut current = v;
        shrink_float(v, c, &mut |x: &f64| {
            let ok = property(*x);
            if ok {
                current = *x;
            }
            ok
        });
        current
    }

    #[test]
    fn floats_shrink_to_simple_values() {
        assert_eq!(shrunk(1234.5678, ANY, |_| true), 0.0);
        assert_eq!(shrunk(1234.5678, ANY, |x| x > 1.0), 2.0);
        assert_eq!(shrunk(-1234.5678, ANY, |x| x < -1.0), -2.0);
        assert!(shrunk(f64::NAN, ANY, |x| x.is_nan()).is_nan());
        assert_eq!(shrunk(f64::NAN, ANY, |x| !x.is_finite()), f64::INFINITY);
    }

    #[test]
    fn fractions_keep_few_bits() {
        let v = shrunk(7.123456, ANY, |x| x.fract() != 0.0 && x > 1.0);
        assert_eq!(v, 1.5);
    }

    #[test]
    fn bounds_are_respected() {
        let c = FloatConstraints {
            min: 2.5,
            max: 10.0,
            allow_nan: false,
            width: 64,
        };
        let v = shrunk(9.75, c, |_| true);
        assert_eq!(v, 3.0);
    }
}
