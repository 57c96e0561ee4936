//! Searches over counts and distances that every shrinker shares: how far a
//! move can go when all that is known is that it works up to some point.
//!
//! Each asks a predicate about candidate numbers and relies on it holding up
//! to some point and failing after it; the probes are ordered so that the
//! common answers (nothing, or a little) cost few test cases.

/// The largest `n` for which `f(n)` holds, assuming `f(0)` does and that it
/// holds up to some point: a linear probe of 1..=4 (cheap when the answer is
/// small, the common case), then doubling, then binary search (Hypothesis's
/// `find_integer`). Returns 0 if `f(1)` fails.
pub fn find_integer(mut f: impl FnMut(u128) -> bool) -> u128 {
    for n in 1..=4 {
        if !f(n) {
            return n - 1;
        }
    }
    let (mut lo, mut hi) = (4u128, 5u128);
    while f(hi) {
        lo = hi;
        match hi.checked_mul(2) {
            Some(next) => hi = next,
            None => return lo,
        }
    }
    bisect(lo, hi, f).0
}

/// Binary search between `lo`, where `f` holds, and `hi`, where it does not:
/// the adjacent pair where it changes (for `f` true up to some point).
pub fn bisect(mut lo: u128, mut hi: u128, mut f: impl FnMut(u128) -> bool) -> (u128, u128) {
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if f(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

/// The most (below `full`, which failed) that `shift` can move: small amounts
/// probed first, as `find_integer` does; past 16, a binary search up to
/// `full`, which halves the probes that doubling from below would spend on
/// huge values (moving 2^100 costs about 100 probes, not 200).
pub fn move_most(full: u128, mut shift: impl FnMut(u128) -> bool) -> u128 {
    const SMALL: u128 = 16;
    let small = find_integer(|k| k <= SMALL && k < full && shift(k));
    if small < SMALL || full <= SMALL + 1 {
        return small;
    }
    bisect(SMALL, full, shift).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_integer_finds_the_edge_in_few_probes() {
        for edge in [0u128, 1, 3, 4, 5, 17, 1000, 1 << 40] {
            let mut probes = 0;
            let found = find_integer(|n| {
                probes += 1;
                n <= edge
            });
            assert_eq!(found, edge);
            let bits = 128 - edge.leading_zeros();
            assert!(probes <= 5 + 2 * bits as usize, "{edge}: {probes} probes");
        }
    }

    #[test]
    fn bisect_returns_the_adjacent_pair_where_the_predicate_changes() {
        assert_eq!(bisect(0, 100, |n| n < 37), (36, 37));
        assert_eq!(bisect(5, 6, |_| unreachable!()), (5, 6));
    }

    #[test]
    fn move_most_stays_below_the_full_amount() {
        assert_eq!(move_most(10, |k| k <= 3), 3);
        assert_eq!(move_most(1 << 100, |k| k < (1 << 99)), (1 << 99) - 1);
        assert_eq!(move_most(1000, |_| true), 999);
    }
}
