//! Integers: shrink toward the simplest value by shrinking the distance to it.
//!
//! The moves are Hypothesis's: distance 1; a wide distance's top or bottom
//! byte; masking high bits; shifting right; subtracting multiples of two and
//! of one, each probing small steps first so that a value that cannot move
//! costs a handful of test cases.

use super::Predicate;
use crate::choice::IntegerConstraints;
use crate::shrink::search::find_integer;

/// Lowers a distance (from an integer's simplest value) by Hypothesis's
/// integer moves. `d` is the current distance, whose attempt at 0 has
/// already failed; `attempt` tries a distance and tells whether it became
/// the current one.
pub fn shrink_distance(d: u128, attempt: &mut dyn Predicate<u128>) {
    let mut d = d;
    if d > 1 && attempt.holds(&1) {
        return;
    }
    // A wide value: into one byte at once if it can go (its top or bottom
    // eight bits), as Hypothesis's integer shrinker does first.
    {
        let bits = 128 - d.leading_zeros();
        if bits > 8 {
            for squeezed in [d >> (bits - 8), d & 0xFF] {
                if squeezed < d && attempt.holds(&squeezed) {
                    d = squeezed;
                    break;
                }
            }
        }
    }
    let bits = u128::from(128 - d.leading_zeros());
    let base = d;
    let masked = find_integer(|k| {
        k < bits && !attempt.stopped() && attempt.holds(&(base & ((1u128 << (bits - k)) - 1)))
    });
    if masked > 0 {
        d = base & ((1u128 << (bits - masked)) - 1);
    }
    loop {
        let before = d;
        let base = d;
        let k = find_integer(|k| k < 128 && !attempt.stopped() && attempt.holds(&(base >> k)));
        d = base >> k;
        let base = d;
        let n = find_integer(|n| {
            n.checked_mul(2).is_some_and(|m| m <= base)
                && !attempt.stopped()
                && attempt.holds(&(base - 2 * n))
        });
        d = base - 2 * n;
        let base = d;
        let n = find_integer(|n| n <= base && !attempt.stopped() && attempt.holds(&(base - n)));
        d = base - n;
        d = shrink_decimal(d, attempt);
        if d == before || attempt.stopped() {
            return;
        }
    }
}

/// Decimal moves for a distance that is a multiple of 100 (a value a test
/// builds from decimal units: multiples of 1000, an amount in cents): the
/// binary moves (halving, masking bits) leave its decimal structure, so
/// `15_625_000` (a multiple of 1000) cannot reach `1000` by them, nor
/// `10_500` (500 past a multiple of 1000) reach `500`. It divides by 5 and
/// 2 while that works, then keeps only the lowest decimal digits (the
/// distance modulo 1000, 10 000, ...). Returns the new distance.
fn shrink_decimal(d: u128, attempt: &mut dyn Predicate<u128>) -> u128 {
    let mut d = d;
    if d == 0 || !d.is_multiple_of(100) {
        return d;
    }
    for factor in [5, 2] {
        while d.is_multiple_of(factor) && !attempt.stopped() && attempt.holds(&(d / factor)) {
            d /= factor;
        }
    }
    let mut unit = 1000u128;
    while unit < d && !attempt.stopped() {
        let low = d % unit;
        if low != 0 && attempt.holds(&low) {
            d = low;
            break;
        }
        match unit.checked_mul(10) {
            Some(next) => unit = next,
            None => break,
        }
    }
    d
}

/// Shrinks an integer `v` permitted by `c` toward its simplest value: the
/// simplest value; below it, one above it and then the same distance above
/// it (both simpler); then the distance moves of [`shrink_distance`] on its
/// side, and, above the simplest value, smaller distances below it.
///
/// Like Hypothesis, it does not search every distance just below the current
/// one: a predicate that is not monotone (`x % 7 == 0` in 10..=1000) may stop
/// above its smallest failing value (21, not 14). Probing 2..=16 steps below
/// every stuck integer cost 4-15 executions each on every example, a third
/// of all shrinking on the difference challenges, to help only such
/// predicates.
pub fn shrink_integer(v: i128, c: IntegerConstraints, predicate: &mut dyn Predicate<i128>) {
    let target = c.simplest();
    if v == target || predicate.holds(&target) {
        return;
    }
    let mut toward = Toward {
        predicate,
        constraints: c,
        target,
        current: (v.abs_diff(target), v > target),
    };
    let (d, above) = toward.current;
    if !above {
        // Below the target: one above it is the simplest value left, and
        // the same distance above it is simpler.
        if d > 1 && toward.try_distance(1, true) {
            return;
        }
        toward.try_distance(d, true);
    }
    let (d, above) = toward.current;
    shrink_distance(
        d,
        &mut OnSide {
            toward: &mut toward,
            above,
        },
    );
    // Above the target, the other side's smaller distances are simpler too.
    if let (d, true) = toward.current
        && d >= 2
        && toward.try_distance(d - 1, false)
    {
        shrink_distance(
            d - 1,
            &mut OnSide {
                toward: &mut toward,
                above: false,
            },
        );
    }
}

/// An integer being shrunk toward its simplest value, by distance and side.
struct Toward<'p> {
    predicate: &'p mut dyn Predicate<i128>,
    constraints: IntegerConstraints,
    target: i128,
    /// The current distance and side (true: above the target).
    current: (u128, bool),
}

impl Toward<'_> {
    /// Tries the value at distance `d` on one side; true if it became current.
    fn try_distance(&mut self, d: u128, above: bool) -> bool {
        let candidate = if above {
            self.target.checked_add_unsigned(d)
        } else {
            self.target.checked_sub_unsigned(d)
        };
        match candidate {
            Some(x)
                if self.constraints.permits(x)
                    && (d, above) != self.current
                    && self.predicate.holds(&x) =>
            {
                self.current = (d, above);
                true
            }
            _ => false,
        }
    }
}

/// Distances on one side of the simplest value, as a predicate.
struct OnSide<'t, 'p> {
    toward: &'t mut Toward<'p>,
    above: bool,
}

impl Predicate<u128> for OnSide<'_, '_> {
    fn holds(&mut self, d: &u128) -> bool {
        self.toward.try_distance(*d, self.above)
    }

    fn stopped(&self) -> bool {
        self.toward.predicate.stopped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shrink::values::testing::Counting;

    fn shrunk(v: i128, c: IntegerConstraints, property: impl FnMut(&i128) -> bool) -> i128 {
        let mut current = v;
        let mut property = property;
        shrink_integer(v, c, &mut |x: &i128| {
            let ok = property(x);
            if ok {
                current = *x;
            }
            ok
        });
        current
    }

    #[test]
    fn thresholds_shrink_to_their_boundary() {
        let c = IntegerConstraints::UNBOUNDED;
        assert_eq!(shrunk(123_456_789, c, |x| *x >= 1000), 1000);
        assert_eq!(shrunk(-123_456_789, c, |x| *x <= -1000), -1000);
        assert_eq!(shrunk(i128::MAX, c, |x| *x > 5), 6);
        assert_eq!(shrunk(77, c, |_| true), 0);
    }

    #[test]
    fn a_negative_value_tries_the_positive_side_first() {
        let c = IntegerConstraints::UNBOUNDED;
        assert_eq!(shrunk(-50, c, |x| x.abs() >= 10), 10);
        assert_eq!(shrunk(-50, c, |x| *x <= -10), -10);
    }

    #[test]
    fn bounds_and_shrink_targets_are_respected() {
        let c = IntegerConstraints {
            min: Some(10),
            max: Some(1000),
            shrink_towards: 500,
        };
        assert_eq!(shrunk(900, c, |x| *x > 600), 601);
        assert_eq!(shrunk(20, c, |x| *x < 100), 99);
        assert_eq!(shrunk(20, c, |x| *x < 500), 499);
    }

    #[test]
    fn a_value_that_cannot_move_costs_few_calls() {
        let c = IntegerConstraints::UNBOUNDED;
        let mut counting = Counting::new(|x: &i128| *x == 1 << 70);
        shrink_integer(1 << 70, c, &mut counting);
        assert!(counting.calls <= 12, "{} calls", counting.calls);
    }

    #[test]
    fn decimal_values_shrink_by_dividing_and_keeping_low_digits() {
        let c = IntegerConstraints::bounded(0, 1_000_000_000);
        let multiple_of_1000 = |x: &i128| *x > 0 && x % 1000 == 0;
        assert_eq!(shrunk(15_625_000, c, multiple_of_1000), 1000);
        assert_eq!(shrunk(250_000, c, multiple_of_1000), 1000);
        let upper_half = |x: &i128| x % 1000 >= 500;
        assert_eq!(shrunk(10_500, c, upper_half), 500);
        assert_eq!(shrunk(33_000_500, c, upper_half), 500);
    }

    #[test]
    fn distances_shrink_by_masking_shifting_and_subtracting() {
        let mut d = 1u128 << 90 | 12345;
        shrink_distance(d, &mut |x: &u128| {
            let ok = *x % 2 == 1 && *x >= 7;
            if ok {
                d = *x;
            }
            ok
        });
        assert_eq!(d, 7);
    }
}
