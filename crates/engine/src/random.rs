//! Random generation of single choices.
//!
//! Uniform randomness finds few bugs: most are at boundaries, at small values,
//! at equal values, or need sizes that vary over orders of magnitude. Each
//! generator here mixes those in, always within the choice's constraints.

use crate::choice::{ChoiceValue, Constraints, FloatConstraints, IntegerConstraints};
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The random source of a test run.
#[derive(Clone, Debug)]
pub struct Source {
    rng: Xoshiro256PlusPlus,
}

impl Source {
    /// A source seeded from a 64-bit seed.
    pub fn from_seed(seed: u64) -> Source {
        Source {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// A source seeded from a 128-bit seed (as Hegel seeds may be).
    pub fn from_seed128(seed: u128) -> Source {
        let mut bytes = [0u8; 32];
        bytes[..16].copy_from_slice(&seed.to_le_bytes());
        bytes[16..].copy_from_slice(&(!seed).to_le_bytes());
        Source {
            rng: Xoshiro256PlusPlus::from_seed(bytes),
        }
    }

    /// A fresh source derived from this one (for one test case).
    pub fn split(&mut self) -> Source {
        Source::from_seed(self.rng.next_u64())
    }

    /// A uniformly random u64.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.random::<f64>() < p
    }

    /// A uniform integer in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.rng.random_range(0..n)
    }

    /// A uniform u128 in `0..=n`.
    pub fn up_to_u128(&mut self, n: u128) -> u128 {
        if n == u128::MAX {
            return (u128::from(self.rng.next_u64()) << 64) | u128::from(self.rng.next_u64());
        }
        self.rng.random_range(0..=n)
    }

    /// A uniform f64 in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }
}

/// Magnitude widths for integers over ranges too wide to draw uniformly, and
/// how often each is picked: mostly values of a nibble to two bytes around
/// the simplest value, now and then anything up to 128 bits. (Hypothesis
/// weighs 8/16/32/64/128 bits 4/8/1/1/0.5; with those, and a uniform draw
/// one time in eight, the shrinking challenges over 200 seeds took 629
/// shrink executions in all, 552 with these; the difference challenges,
/// over 1..=2^31-1, twice as many with Hypothesis' sizes.)
const INTEGER_BITS: [(u32, f64); 6] = [
    (4, 0.25),
    (8, 0.3),
    (16, 0.15),
    (32, 0.12),
    (64, 0.12),
    (127, 0.06),
];

/// Ranges of at most this many bits are drawn uniformly: every value as
/// likely as any other, so a bug that needs a value above a few hundred in
/// `0..=10000` is as easy to find as one below.
const UNIFORM_BITS: u32 = 24;

/// How often an integer reuses one drawn earlier in the test case (equal values).
const P_RECENT: f64 = 0.03;
/// How often an integer is a boundary: a bound, one inside it, or the simplest value.
const P_BOUNDARY: f64 = 0.05;

fn pick_bits(source: &mut Source) -> u32 {
    let total: f64 = INTEGER_BITS.iter().map(|(_, w)| w).sum();
    let mut r = source.unit() * total;
    for (bits, weight) in INTEGER_BITS {
        if r < weight {
            return bits;
        }
        r -= weight;
    }
    64
}

/// Generates an integer choice.
pub fn integer(source: &mut Source, c: &Constraints, recent: &[i128]) -> ChoiceValue {
    let Constraints::Integer(ic) = c else {
        return c.simplest();
    };
    ChoiceValue::Integer(integer_value(source, ic, recent))
}

fn integer_value(source: &mut Source, c: &IntegerConstraints, recent: &[i128]) -> i128 {
    let roll = source.unit();
    if roll < P_RECENT && !recent.is_empty() {
        let v = recent[source.below(recent.len() as u64) as usize];
        if c.permits(v) {
            return v;
        }
    }
    if roll < P_RECENT + P_BOUNDARY {
        let candidates = [
            c.min,
            c.max,
            Some(c.simplest()),
            c.min.and_then(|m| m.checked_add(1)),
            c.max.and_then(|m| m.checked_sub(1)),
        ];
        let k = source.below(candidates.len() as u64) as usize;
        if let Some(v) = candidates[k]
            && c.permits(v)
        {
            return v;
        }
    }
    let uniform = |source: &mut Source, min: i128, max: i128| {
        min.wrapping_add(source.up_to_u128(max.wrapping_sub(min) as u128) as i128)
    };
    if let (Some(min), Some(max)) = (c.min, c.max) {
        let span = max.wrapping_sub(min) as u128;
        // A narrow range uniformly; a wide one uniformly one time in four,
        // else by magnitude around the simplest value (below).
        if span < (1u128 << UNIFORM_BITS) || source.chance(0.25) {
            return uniform(source, min, max);
        }
    }
    let s = c.simplest();
    for _ in 0..8 {
        let bits = pick_bits(source);
        let magnitude = source.up_to_u128((1u128 << bits) - 1);
        let negative = source.chance(0.5);
        let v = if negative {
            s.checked_sub_unsigned(magnitude)
        } else {
            s.checked_add_unsigned(magnitude)
        };
        if let Some(v) = v
            && c.permits(v)
        {
            return v;
        }
    }
    match (c.min, c.max) {
        (Some(min), Some(max)) => uniform(source, min, max),
        _ => s,
    }
}

/// Generates a choice of any kind, as generation draws it (no earlier values to reuse).
pub fn any(source: &mut Source, c: &Constraints) -> ChoiceValue {
    match c {
        Constraints::Integer(_) => integer(source, c, &[]),
        Constraints::Float(_) => float(source, c, &[]),
        Constraints::Boolean { .. } => boolean(source, c, &[]),
        Constraints::Bytes(_) => bytes(source, c, &[]),
        Constraints::String { .. } => string(source, c, &[]),
    }
}

/// Generates a boolean choice.
pub fn boolean(source: &mut Source, c: &Constraints, _recent: &[i128]) -> ChoiceValue {
    let p = match c {
        Constraints::Boolean { p } => *p,
        _ => 0.5,
    };
    ChoiceValue::Boolean(source.chance(p))
}

fn nasty_floats(c: &FloatConstraints) -> [f64; 24] {
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        5e-324,
        -5e-324,
        1.1,
        1e-5,
        c.min,
        c.max,
        c.min.next_up(),
        c.max.next_down(),
    ]
}

fn fit_width(v: f64, width: u8) -> f64 {
    crate::choice::round_to_width(v, width)
}

/// Generates a float choice.
pub fn float(source: &mut Source, c: &Constraints, _recent: &[i128]) -> ChoiceValue {
    let Constraints::Float(fc) = c else {
        return c.simplest();
    };
    for _ in 0..16 {
        let v = fit_width(float_candidate(source, fc), fc.width);
        if fc.permits(v) {
            return ChoiceValue::Float(v);
        }
    }
    ChoiceValue::Float(fc.simplest())
}

fn float_candidate(source: &mut Source, c: &FloatConstraints) -> f64 {
    let roll = source.unit();
    if roll < 0.2 {
        let nasty = nasty_floats(c);
        return nasty[source.below(nasty.len() as u64) as usize];
    }
    if roll < 0.45 {
        let bits = 1 + source.below(52) as u32;
        let magnitude = source.up_to_u128((1u128 << bits) - 1) as f64;
        let v = if source.chance(0.5) {
            -magnitude
        } else {
            magnitude
        };
        if c.min.is_finite() && c.max.is_finite() && !(c.min..=c.max).contains(&v) {
            return c.min + (c.max - c.min) * source.unit();
        }
        return v;
    }
    if roll < 0.7 && c.min.is_finite() && c.max.is_finite() {
        let v = c.min + (c.max - c.min) * source.unit();
        return if v.is_finite() {
            v
        } else {
            c.min / 2.0 + c.max / 2.0
        };
    }
    if roll < 0.8 {
        // Fractions with few significant bits: readable and often boundary-ish.
        let numerator = source.below(1 << 12) as f64;
        let denominator = (1u64 << source.below(12)) as f64;
        let v = numerator / denominator;
        return if source.chance(0.5) { -v } else { v };
    }
    let v = f64::from_bits(source.next_u64());
    if v.is_nan() && !c.allow_nan {
        return c.simplest();
    }
    if !c.permits(v) && c.min.is_finite() && c.max.is_finite() {
        return c.min + (c.max - c.min) * source.unit();
    }
    if !c.permits(v) && c.min.is_finite() && v < c.min {
        return c.min + v.abs().min(f64::MAX / 2.0);
    }
    if !c.permits(v) && c.max.is_finite() && v > c.max {
        return c.max - v.abs().min(f64::MAX / 2.0);
    }
    v
}

/// A length in `min..=max` averaging about min + 5 with a long tail.
pub fn length(source: &mut Source, min: usize, max: usize) -> usize {
    if min >= max {
        return min;
    }
    let extra_cap = max - min;
    let average = if source.chance(0.1) { 40.0 } else { 5.0 };
    let p = 1.0 - 1.0 / (1.0 + average);
    let mut n = 0usize;
    while n < extra_cap && source.chance(p) {
        n += 1;
    }
    min + n
}

/// Generates a byte-string choice.
pub fn bytes(source: &mut Source, c: &Constraints, _recent: &[i128]) -> ChoiceValue {
    let Constraints::Bytes(size) = c else {
        return c.simplest();
    };
    let n = length(source, size.min_size, size.max_size);
    let mode = source.below(4);
    let v = (0..n)
        .map(|_| match mode {
            0 => [0u8, 0xFF, 1, 0x7F, 0x80][source.below(5) as usize],
            _ => source.below(256) as u8,
        })
        .collect();
    ChoiceValue::Bytes(v)
}

/// Generates a string choice.
pub fn string(source: &mut Source, c: &Constraints, _recent: &[i128]) -> ChoiceValue {
    let Constraints::String { alphabet, size } = c else {
        return c.simplest();
    };
    if alphabet.is_empty() {
        return c.simplest();
    }
    let n = length(source, size.min_size, size.max_size);
    let len = alphabet.len();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let roll = source.unit();
        let index = if roll < 0.55 {
            source.below(len.min(96))
        } else if roll < 0.8 {
            source.below(len.min(0x1000))
        } else {
            source.below(len)
        };
        if let Some(ch) = alphabet.char_at_shrink_index(index) {
            out.push(ch);
        }
    }
    ChoiceValue::String(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_integers_fit_bounds_and_vary() {
        let mut source = Source::from_seed(1);
        let c = Constraints::Integer(IntegerConstraints::bounded(-1000, 1_000_000));
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let v = integer(&mut source, &c, &[]);
            assert!(c.permits(&v));
            seen.insert(v);
        }
        assert!(seen.len() > 100);
        assert!(seen.contains(&ChoiceValue::Integer(-1000)));
        assert!(seen.contains(&ChoiceValue::Integer(1_000_000)));
    }

    /// The draws alone, without the run's steering away from repeats
    /// (tests/distribution.rs measures a whole run).
    #[test]
    fn a_narrow_range_is_drawn_nearly_uniformly() {
        let mut source = Source::from_seed(3);
        let c = Constraints::Integer(IntegerConstraints::bounded(0, 10_000));
        let values: Vec<ChoiceValue> = (0..1000).map(|_| integer(&mut source, &c, &[])).collect();
        let distinct: std::collections::HashSet<_> = values.iter().collect();
        let small = values
            .iter()
            .filter(|v| matches!(v, ChoiceValue::Integer(x) if *x <= 255))
            .count();
        // Uniform draws would give about 950 distinct values and 2.6% <= 255.
        assert!(distinct.len() >= 850, "{} distinct", distinct.len());
        assert!(small <= 80, "{small} <= 255");
    }

    #[test]
    fn generated_floats_fit_bounds() {
        let mut source = Source::from_seed(2);
        for (min, max, width) in [
            (0.0, 1.0, 64u8),
            (-1e300, 5.0, 64),
            (1.0, f64::INFINITY, 32),
        ] {
            let c = Constraints::Float(FloatConstraints {
                min,
                max,
                allow_nan: false,
                width,
            });
            for _ in 0..1000 {
                let v = float(&mut source, &c, &[]);
                assert!(c.permits(&v), "{v:?} in {min}..{max}");
            }
        }
    }
}
