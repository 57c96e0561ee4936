//! Random generation of single choices.
//!
//! Uniform randomness finds few bugs: most are at boundaries, at small values,
//! at equal values, or need sizes that vary over orders of magnitude. Each
//! generator here mixes those in, always within the choice's constraints.

use crate::charset::CharSet;
use crate::choice::{ChoiceValue, Constraints, FloatConstraints, IntegerConstraints};
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The random source of a test run (or of one test case, [`Source::split`]).
#[derive(Clone, Debug)]
pub struct Source {
    rng: Xoshiro256PlusPlus,
    /// This source's swarm subsets of small integer ranges, drawn on first use.
    swarm: Option<Swarm>,
    /// Whether the next draws ignore the swarm subsets (inside a recursive
    /// value: see [`crate::TestData::recursion_depth`]).
    swarm_suspended: bool,
    /// Whether this test case's integers drawn by magnitude leave out the
    /// smallest magnitudes ([`P_LARGE_MAGNITUDES`]); drawn on first use.
    large_magnitudes: Option<bool>,
}

/// Swarm testing for small integer ranges (a rule's index, a branch of
/// `one_of`, an item of a short `sampled_from`): in half the test cases,
/// each range of at most [`SWARM_MAX_VALUES`] values draws, after its first
/// draw, only from a random subset of its values that keeps the first
/// value, each other value left out with a probability drawn for the test
/// case (as Hypothesis' feature flags leave out rules,
/// and the engine's state machines their rules). A subset of one value
/// gives a long run of one rule, which drawing every index afresh almost
/// never does. Decided by the random source, not by choices: replay and
/// shrinking see only the values.
#[derive(Clone, Debug)]
struct Swarm {
    /// The probability a value is left out; `None` when this test case has no swarm.
    p_disabled: Option<f64>,
    /// The subset of each range met so far: (min, max, bit i set when min + i is in it).
    subsets: Vec<(i128, i128, u16)>,
}

/// The largest integer range that swarm testing subsets.
const SWARM_MAX_VALUES: i128 = 8;

impl Source {
    /// A source seeded from a 64-bit seed.
    pub fn from_seed(seed: u64) -> Source {
        Source {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            swarm: None,
            swarm_suspended: false,
            large_magnitudes: None,
        }
    }

    /// A source seeded from a 128-bit seed (as Hegel seeds may be).
    pub fn from_seed128(seed: u128) -> Source {
        let mut bytes = [0u8; 32];
        bytes[..16].copy_from_slice(&seed.to_le_bytes());
        bytes[16..].copy_from_slice(&(!seed).to_le_bytes());
        Source {
            rng: Xoshiro256PlusPlus::from_seed(bytes),
            swarm: None,
            swarm_suspended: false,
            large_magnitudes: None,
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
        if let Ok(n) = u64::try_from(n)
            && n < u64::MAX
        {
            let rng = &mut self.rng;
            return u128::from(up_to_u64_from_words(n, || rng.next_u64()));
        }
        self.rng.random_range(0..=n)
    }

    /// A uniform u128 below `2^bits` (`bits` at most 127): the value
    /// `up_to_u128((1 << bits) - 1)` draws, from the same random words,
    /// without its general range arithmetic. `rand` draws a u128 (the low
    /// word first) and takes the high half of its product with the range
    /// size; for a size of `2^bits` that is its top `bits` bits, and the low
    /// half (a multiple of `2^bits`) never exceeds the bias threshold
    /// (`2^128 - 2^bits`), so no second draw is made.
    pub fn below_power_of_two(&mut self, bits: u32) -> u128 {
        debug_assert!(bits <= 127, "{bits} bits");
        let low = self.rng.next_u64();
        let high = self.rng.next_u64();
        if bits == 0 {
            0
        } else {
            top_bits(low, high, bits)
        }
    }

    /// `chance(0.5)`, from the same random word: `rand`'s unit float is the
    /// word's top 53 bits times `2^-53`, below a half exactly when the
    /// word's top bit is clear.
    #[inline]
    fn half(&mut self) -> bool {
        self.rng.next_u64() >> 63 == 0
    }

    /// `unit() < p`, from the same random word, for `end` = [`unit_end`]`(p)`
    /// (compared as an integer).
    #[inline]
    pub(crate) fn unit_below(&mut self, end: u64) -> bool {
        self.rng.next_u64() >> 11 < end
    }

    /// A uniform f64 in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    /// Makes the draws that follow ignore the swarm subsets (or heed them
    /// again): a swarm subset that leaves out a recursive `one_of`'s leaves
    /// would make every level branch.
    pub fn suspend_swarm(&mut self, suspended: bool) {
        self.swarm_suspended = suspended;
    }

    /// A value of the small range `min..=max` from this source's swarm
    /// subset of it; `None` when this test case has no swarm, the range is
    /// too wide, or this is its first draw in the test case.
    fn swarm_value(&mut self, min: i128, max: i128) -> Option<i128> {
        let swarm = self.swarm.as_ref()?;
        swarm.p_disabled?;
        let bits = swarm
            .subsets
            .iter()
            .find(|(lo, hi, _)| (*lo, *hi) == (min, max))
            .map(|(_, _, bits)| *bits)?;
        let k = self.below(u64::from(bits.count_ones()));
        // The `k`th member (from `min` up): the lowest set bit once the `k`
        // below it are cleared (a subset sets no bit past its width).
        let mut rest = bits;
        for _ in 0..k {
            rest &= rest - 1;
        }
        (rest != 0).then(|| min + i128::from(rest.trailing_zeros()))
    }

    /// After the first draw `v` of the small range `min..=max` in this test
    /// case (drawn as usual, so that one draw alone is distributed as
    /// without swarms): its swarm subset, which keeps `v`.
    fn swarm_record(&mut self, min: i128, max: i128, v: i128) {
        let Some(width) = max.checked_sub(min).and_then(|w| w.checked_add(1)) else {
            return;
        };
        if !(2..=SWARM_MAX_VALUES).contains(&width) {
            return;
        }
        if self.swarm.is_none() {
            let p_disabled = self.chance(0.5).then(|| self.unit());
            self.swarm = Some(Swarm {
                p_disabled,
                subsets: Vec::new(),
            });
        }
        let Some(p_disabled) = self.swarm.as_ref().and_then(|swarm| swarm.p_disabled) else {
            return;
        };
        let mut bits = 1u16 << (v - min);
        for i in 0..width {
            if !self.chance(p_disabled) {
                bits |= 1 << i;
            }
        }
        if let Some(swarm) = self.swarm.as_mut() {
            swarm.subsets.push((min, max, bits));
        }
    }
}

/// What `rand`'s `random_range(0..=n)` over u128 draws for an `n` below
/// `u64::MAX`, from the same random words, in 64-bit arithmetic: a u128
/// (the low word first) times the range size `r = n + 1`, whose high half
/// is the value; when the low half exceeds `2^128 - r` (only when its high
/// word is all ones) a second u128's high half times `r` is added to it,
/// and a carry out of that sum adds one.
#[inline]
fn up_to_u64_from_words(n: u64, mut word: impl FnMut() -> u64) -> u64 {
    let r = n + 1;
    let wide = |low: u64, high: u64| {
        let a = u128::from(low) * u128::from(r);
        let b = u128::from(high) * u128::from(r);
        let mid = (b as u64 as u128) + (a >> 64);
        // The high half (below r) and the low half's two words.
        ((b >> 64) as u64 + (mid >> 64) as u64, mid as u64, a as u64)
    };
    let (low, high) = (word(), word());
    let (mut value, mid, bottom) = wide(low, high);
    if mid == u64::MAX && bottom > r.wrapping_neg() {
        let (low, high) = (word(), word());
        let (more, _, _) = wide(low, high);
        value += u64::from(bottom.checked_add(more).is_none());
    }
    value
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
/// How often an integer is a boundary: a bound (2 in 7 each), one inside a
/// bound or the simplest value (1 in 7 each). A bound is then about 2% of
/// draws, as Hypothesis weighs them for bounded ranges.
const P_BOUNDARY: f64 = 0.07;

/// How often a test case's integers of bounded ranges wider than 64 bits
/// drawn by magnitude are all at least a byte wide: a test that needs many
/// values none of them tiny (every element of a list at least its index)
/// almost never gets them when each value is tiny one time in four on its
/// own. Narrower and unbounded ranges keep every class: there the tiny
/// values' ties and small starts pay (measured with the mode on every range
/// it applies to here: binheap's unbounded keys took 21 more shrink
/// executions over 200 seeds; on bounded ranges, find power's
/// unsorted_after_sort_bug over `i64` went from 344 to 335 of 400 runs).
const P_LARGE_MAGNITUDES: f64 = 0.25;

/// The sum of `classes`' weights, added in order as an iterator's `sum`
/// adds them (so the same float).
const fn total_weight(classes: &[(u32, f64)]) -> f64 {
    let mut total = -0.0;
    let mut i = 0;
    while i < classes.len() {
        total += classes[i].1;
        i += 1;
    }
    total
}

/// The magnitude widths of a test case that leaves out the smallest ones.
const LARGE_INTEGER_BITS: &[(u32, f64)] = INTEGER_BITS.split_at(1).1;

/// The magnitude widths [`pick_bits`] picks from in this test case, for a
/// range of `span` + 1 values (`None`: unbounded), with their total weight.
fn magnitude_classes(source: &mut Source, span: Option<u128>) -> (&'static [(u32, f64)], f64) {
    const ALL: f64 = total_weight(&INTEGER_BITS);
    const LARGE: f64 = total_weight(LARGE_INTEGER_BITS);
    if span.is_none_or(|span| span <= u128::from(u64::MAX)) {
        return (&INTEGER_BITS, ALL);
    }
    let large = match source.large_magnitudes {
        Some(large) => large,
        None => {
            let large = source.chance(P_LARGE_MAGNITUDES);
            source.large_magnitudes = Some(large);
            large
        }
    };
    if large {
        (LARGE_INTEGER_BITS, LARGE)
    } else {
        (&INTEGER_BITS, ALL)
    }
}

/// The top `bits` bits (1 to 127) of the 128-bit word `high:low`; at most
/// 64 from the high word alone (no u128 shift).
#[inline(always)]
fn top_bits(low: u64, high: u64, bits: u32) -> u128 {
    if bits <= 64 {
        u128::from(high >> (64 - bits))
    } else {
        ((u128::from(high) << 64) | u128::from(low)) >> (128 - bits)
    }
}

/// `rand`'s unit float of a random word: its top 53 bits times `2^-53`.
#[inline(always)]
const fn unit_of(word: u64) -> f64 {
    (1.0 / (1u64 << 53) as f64) * ((word >> 11) as f64)
}

/// The index of the class [`pick_bits`] picks from `classes` (of total
/// weight `total`) for a unit float of top bits `x` (`classes.len()`: none,
/// [`pick_bits`]' fallback), by the same float steps.
const fn class_of(x: u64, classes: &[(u32, f64)], total: f64) -> usize {
    let mut r = unit_of(x << 11) * total;
    let mut i = 0;
    while i < classes.len() {
        if r < classes[i].1 {
            return i;
        }
        r -= classes[i].1;
        i += 1;
    }
    classes.len()
}

/// The smallest top bits `x` (of 53) whose class under [`class_of`] is
/// past `k` (`2^53` when there is none). The class only grows with `x`:
/// each float step (a product, then differences) is monotone.
const fn class_end(k: usize, classes: &[(u32, f64)], total: f64) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 53);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if class_of(mid, classes, total) > k {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// [`INTEGER_BITS`]' classes' ends under [`class_end`]: the class
/// [`pick_bits`] picks among all classes is the first whose end is above
/// the unit float's top bits.
const INTEGER_BITS_ENDS: [u64; INTEGER_BITS.len()] = {
    let total = total_weight(&INTEGER_BITS);
    let mut ends = [0; INTEGER_BITS.len()];
    let mut k = 0;
    while k < ends.len() {
        ends[k] = class_end(k, &INTEGER_BITS, total);
        k += 1;
    }
    ends
};

/// `below_power_of_two(pick_bits(None))`, from the same random words: the
/// class picked by comparing the unit float's top bits with
/// [`INTEGER_BITS_ENDS`], each class's shift a constant.
#[inline(always)]
fn any_magnitude(source: &mut Source) -> u128 {
    let x = source.rng.next_u64() >> 11;
    let low = source.rng.next_u64();
    let high = source.rng.next_u64();
    let top = |bits: u32| top_bits(low, high, bits);
    const _: () = assert!(INTEGER_BITS.len() == 6, "one branch per class");
    if x < INTEGER_BITS_ENDS[0] {
        top(INTEGER_BITS[0].0)
    } else if x < INTEGER_BITS_ENDS[1] {
        top(INTEGER_BITS[1].0)
    } else if x < INTEGER_BITS_ENDS[2] {
        top(INTEGER_BITS[2].0)
    } else if x < INTEGER_BITS_ENDS[3] {
        top(INTEGER_BITS[3].0)
    } else if x < INTEGER_BITS_ENDS[4] {
        top(INTEGER_BITS[4].0)
    } else if x < INTEGER_BITS_ENDS[5] {
        top(INTEGER_BITS[5].0)
    } else {
        top(64)
    }
}

/// The unit floats below `p` are those whose top bits (of 53) are below
/// this (the comparison only changes once as they grow).
pub(crate) const fn unit_end(p: f64) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 53);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if unit_of(mid << 11) < p {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The unit floats below `P_RECENT + P_BOUNDARY` ([`unit_end`]).
const RECENT_OR_BOUNDARY_END: u64 = unit_end(P_RECENT + P_BOUNDARY);

fn pick_bits(source: &mut Source, span: Option<u128>) -> u32 {
    let (classes, total) = magnitude_classes(source, span);
    let mut r = source.unit() * total;
    for &(bits, weight) in classes {
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
    ChoiceValue::Integer(integer_value(source, &ic.get(), recent))
}

/// An integer the constraints permit, drawn as [`integer`] draws it.
#[inline]
pub(crate) fn integer_value(source: &mut Source, c: &IntegerConstraints, recent: &[i128]) -> i128 {
    if c.min.is_none() && c.max.is_none() {
        return unbounded_integer(source, c, recent);
    }
    bounded_integer_value(source, c, recent)
}

/// [`unswarmed_integer`] for a range with no bounds: the same draws, with
/// the rare roll and the magnitude's width compared as integers.
#[inline(always)]
fn unbounded_integer(source: &mut Source, c: &IntegerConstraints, recent: &[i128]) -> i128 {
    let word = source.rng.next_u64();
    if word >> 11 < RECENT_OR_BOUNDARY_END
        && let Some(v) = recent_or_boundary(source, c, recent, unit_of(word))
    {
        return v;
    }
    unbounded_by_magnitude(source, c.shrink_towards)
}

/// [`integer_value`] for a range with at least one bound.
fn bounded_integer_value(source: &mut Source, c: &IntegerConstraints, recent: &[i128]) -> i128 {
    let (Some(min), Some(max)) = (c.min, c.max) else {
        return unswarmed_integer(source, c, recent);
    };
    if source.swarm_suspended {
        return unswarmed_integer(source, c, recent);
    }
    if let Some(v) = source.swarm_value(min, max) {
        return v;
    }
    let v = unswarmed_integer(source, c, recent);
    source.swarm_record(min, max, v);
    v
}

fn unswarmed_integer(source: &mut Source, c: &IntegerConstraints, recent: &[i128]) -> i128 {
    let roll = source.unit();
    if roll < P_RECENT + P_BOUNDARY
        && let Some(v) = recent_or_boundary(source, c, recent, roll)
    {
        return v;
    }
    if c.min.is_none() && c.max.is_none() {
        return unbounded_by_magnitude(source, c.shrink_towards);
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
    let span = c
        .min
        .zip(c.max)
        .map(|(min, max)| max.wrapping_sub(min) as u128);
    for _ in 0..8 {
        let bits = pick_bits(source, span);
        let magnitude = source.below_power_of_two(bits);
        let negative = source.half();
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

/// One time in ten (`roll` below [`P_RECENT`] + [`P_BOUNDARY`]): an
/// integer drawn earlier in the test case, or a boundary, if the one picked
/// is permitted; else the draw goes on as usual.
#[cold]
fn recent_or_boundary(
    source: &mut Source,
    c: &IntegerConstraints,
    recent: &[i128],
    roll: f64,
) -> Option<i128> {
    if roll < P_RECENT && !recent.is_empty() {
        let v = recent[source.below(recent.len() as u64) as usize];
        if c.permits(v) {
            return Some(v);
        }
    }
    let candidates = [
        c.min,
        c.min,
        c.max,
        c.max,
        Some(c.simplest()),
        c.min.and_then(|m| m.checked_add(1)),
        c.max.and_then(|m| m.checked_sub(1)),
    ];
    let k = source.below(candidates.len() as u64) as usize;
    candidates[k].filter(|&v| c.permits(v))
}

/// An unbounded integer by magnitude around `s`, the simplest value (as
/// [`unswarmed_integer`] draws one for any range too wide to draw
/// uniformly; every value is permitted, so only an overflow draws again).
#[inline(always)]
fn unbounded_by_magnitude(source: &mut Source, s: i128) -> i128 {
    match magnitude_around(source, s) {
        Some(v) => v,
        None => unbounded_again(source, s),
    }
}

/// One try of [`unbounded_by_magnitude`]: `s` plus or minus a magnitude,
/// `None` when that overflows.
#[inline(always)]
fn magnitude_around(source: &mut Source, s: i128) -> Option<i128> {
    let magnitude = any_magnitude(source);
    if source.half() {
        s.checked_sub_unsigned(magnitude)
    } else {
        s.checked_add_unsigned(magnitude)
    }
}

/// [`unbounded_by_magnitude`]'s tries after an overflow (up to 8 in all).
#[cold]
#[inline(never)]
fn unbounded_again(source: &mut Source, s: i128) -> i128 {
    for _ in 1..8 {
        if let Some(v) = magnitude_around(source, s) {
            return v;
        }
    }
    s
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
    ChoiceValue::Boolean(boolean_value(source, p))
}

/// A boolean, true with probability `p`, drawn as [`boolean`] draws it.
pub(crate) fn boolean_value(source: &mut Source, p: f64) -> bool {
    source.chance(p)
}

/// Floats that often matter and that a uniform draw almost never meets
/// (each is drawn with either sign): rounding edges (1.1, 1/3, 1 - 1e-5),
/// the largest and smallest values of each width, subnormals of several
/// sizes, machine epsilons, where integers stop being exact.
const FLOAT_CONSTANTS: [f64; 27] = [
    0.5,
    1.1,
    1.5,
    1.9,
    1.0 / 3.0,
    1e7,
    1e-5,
    1.0 - 1e-5,
    2.0 + 1e-5,
    9_007_199_254_740_992.0,
    f64::MAX,
    f64::MIN_POSITIVE,
    f64::EPSILON,
    5e-324,
    f64::MIN_POSITIVE / 2.0,
    f64::MIN_POSITIVE / 10.0,
    f64::MIN_POSITIVE / 1e3,
    f64::MIN_POSITIVE / 1e5,
    f32::MAX as f64,
    f32::MIN_POSITIVE as f64,
    f32::EPSILON as f64,
    1.401_298_464_324_817e-45,
    65504.0,
    6.103_515_625e-5,
    5.960_464_477_539_063e-8,
    9.765_625e-4,
    1e-7,
];

/// How often a float is one of [`FLOAT_CONSTANTS`] (when one is permitted).
const P_FLOAT_CONSTANT: f64 = 0.15;
/// How often a float is one of the special values of [`special_float`].
const P_FLOAT_SPECIAL: f64 = 0.1;

/// A constant, with a random sign, that the constraints permit; `None`
/// when a few tries find none (bounds that exclude most of them).
fn constant_float(source: &mut Source, c: &FloatConstraints) -> Option<f64> {
    for _ in 0..8 {
        let v = FLOAT_CONSTANTS[source.below(FLOAT_CONSTANTS.len() as u64) as usize];
        let v = if source.chance(0.5) { -v } else { v };
        let v = fit_width(v, c.width);
        if c.permits(v) {
            return Some(v);
        }
    }
    None
}

/// One of the zeros, infinities, NaNs (quiet and signalling, either sign),
/// the bounds, the values next to them and one in from them that the
/// constraints permit; `None` when none is.
fn special_float(source: &mut Source, c: &FloatConstraints) -> Option<f64> {
    const QUIET_NAN: u64 = 0x7ff8_0000_0000_0000;
    const SIGNALLING_NAN: u64 = 0x7ff0_0000_0000_0001;
    let sign = 1u64 << 63;
    let candidates = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(QUIET_NAN),
        f64::from_bits(QUIET_NAN | sign),
        f64::from_bits(SIGNALLING_NAN),
        f64::from_bits(SIGNALLING_NAN | sign),
        c.min,
        c.min.next_up(),
        c.min + 1.0,
        c.max - 1.0,
        c.max.next_down(),
        c.max,
    ];
    let mut permitted = [0.0; 14];
    let mut n = 0;
    for v in candidates {
        let v = if v.is_nan() { v } else { fit_width(v, c.width) };
        if c.permits(v) {
            permitted[n] = v;
            n += 1;
        }
    }
    (n > 0).then(|| permitted[source.below(n as u64) as usize])
}

fn fit_width(v: f64, width: u8) -> f64 {
    crate::choice::round_to_width(v, width)
}

/// A candidate at the constraints' width. A finite candidate too large
/// for a narrow width (it would round to infinity) is mapped into the
/// width's finite part of the range instead, at the fraction of the range
/// its own mantissa bits give, as Hypothesis maps out-of-range floats
/// (`make_float_clamper`): large finite values, the ones that find overflow
/// bugs, stay common rather than nearly half of all candidates collapsing
/// to infinity.
fn narrow(v: f64, c: &FloatConstraints) -> f64 {
    let fitted = fit_width(v, c.width);
    if c.width >= 64 || !v.is_finite() || fitted.is_finite() {
        return fitted;
    }
    let largest = crate::choice::max_at_width(c.width);
    let (lo, hi) = (c.min.max(-largest), c.max.min(largest));
    if lo > hi {
        return fitted;
    }
    const MANTISSA: u64 = (1 << 52) - 1;
    let fraction = (v.to_bits() & MANTISSA) as f64 / MANTISSA as f64;
    fit_width(lo + (hi - lo) * fraction, c.width).clamp(lo, hi)
}

/// Generates a float choice.
pub fn float(source: &mut Source, c: &Constraints, _recent: &[i128]) -> ChoiceValue {
    let Constraints::Float(fc) = c else {
        return c.simplest();
    };
    for _ in 0..16 {
        let v = narrow(float_candidate(source, fc), fc);
        if fc.permits(v) {
            return ChoiceValue::Float(v);
        }
    }
    ChoiceValue::Float(fc.simplest())
}

fn float_candidate(source: &mut Source, c: &FloatConstraints) -> f64 {
    let roll = source.unit();
    if roll < P_FLOAT_CONSTANT
        && let Some(v) = constant_float(source, c)
    {
        return v;
    }
    if (P_FLOAT_CONSTANT..P_FLOAT_CONSTANT + P_FLOAT_SPECIAL).contains(&roll)
        && let Some(v) = special_float(source, c)
    {
        return v;
    }
    let roll = source.unit();
    if roll < 0.3 {
        let bits = 1 + source.below(52) as u32;
        let magnitude = source.below_power_of_two(bits) as f64;
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
    if roll < 0.6 && c.min.is_finite() && c.max.is_finite() {
        let v = c.min + (c.max - c.min) * source.unit();
        return if v.is_finite() {
            v
        } else {
            c.min / 2.0 + c.max / 2.0
        };
    }
    if roll < 0.75 {
        // Fractions with few significant bits: readable and often boundary-ish.
        let numerator = source.below(1 << 12) as f64;
        let denominator = (1u64 << source.below(12)) as f64;
        let v = numerator / denominator;
        return if source.chance(0.5) { -v } else { v };
    }
    let mut bits = source.next_u64();
    // One in eight is subnormal (exponent zero): bugs in code that assumes
    // floats are normal are common, and a random exponent is zero one time
    // in 2,048.
    if source.chance(0.125) {
        bits &= !(0x7ffu64 << 52);
    }
    let v = f64::from_bits(bits);
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

/// How often a string draws its characters as Hypothesis does.
const P_LATIN_STRING: f64 = 0.35;
/// How often a string has no ASCII character.
const P_BEYOND_ASCII_STRING: f64 = 0.1;

/// Where a string's characters come from, chosen once per string: most
/// strings are readable text, but code that assumes ASCII, or one byte per
/// character, fails only on strings with none of it, which characters drawn
/// one by one almost never give (ten in a row past ASCII, one string in
/// 3,000).
#[derive(Clone, Copy)]
enum CharSource {
    /// Mostly the first 96 of shrink order (digits, letters, punctuation,
    /// whitespace); else the first 4,096; else anywhere.
    Readable,
    /// As Hypothesis draws them: the first 256 of shrink order (ASCII and
    /// Latin-1) four times in five, else anywhere.
    Latin,
    /// Only code points past ASCII (from natural index `start` on): the
    /// first 4,096 of them four times in five, else any.
    BeyondAscii { start: u64 },
}

impl CharSource {
    fn choose(source: &mut Source, alphabet: &CharSet) -> CharSource {
        let roll = source.unit();
        let start = alphabet.members_below(0x80);
        if roll < P_BEYOND_ASCII_STRING && start < alphabet.len() {
            CharSource::BeyondAscii { start }
        } else if roll < P_BEYOND_ASCII_STRING + P_LATIN_STRING {
            CharSource::Latin
        } else {
            CharSource::Readable
        }
    }

    /// One character of `alphabet` (not empty).
    fn draw(self, source: &mut Source, alphabet: &CharSet) -> Option<u32> {
        let len = alphabet.len();
        let roll = source.unit();
        match self {
            CharSource::BeyondAscii { start } => {
                let beyond = len - start;
                let n = if roll < 0.8 {
                    beyond.min(0x1000)
                } else {
                    beyond
                };
                alphabet.char_at(start + source.below(n))
            }
            CharSource::Latin => {
                let n = if roll < 0.8 { len.min(256) } else { len };
                alphabet.char_at_shrink_index(source.below(n))
            }
            CharSource::Readable => {
                let n = if roll < 0.55 {
                    len.min(96)
                } else if roll < 0.8 {
                    len.min(0x1000)
                } else {
                    len
                };
                alphabet.char_at_shrink_index(source.below(n))
            }
        }
    }
}

/// How often a string is one of [`STRING_CONSTANTS`] (when the one picked
/// fits the alphabet and size).
const P_STRING_CONSTANT: f64 = 0.05;

/// Strings that break code which handles text, each a known source of bugs
/// and next to impossible to draw character by character: words that parse
/// as something else, numbers' edge spellings, characters whose case
/// mapping or normalization changes the length, invisible and
/// direction-changing characters, combining sequences, scripts other than
/// Latin, emoji sequences, reserved file names. Text in the mathematical
/// alphabets is made by [`styled_pangrams`].
const STRING_CONSTANTS: [&str; 52] = [
    "null",
    "NULL",
    "nil",
    "None",
    "undefined",
    "true",
    "False",
    "NaN",
    "-Infinity",
    "inf",
    "-0",
    "0.0",
    "1e309",
    "0x1F",
    "00",
    "٣",
    "１２３",
    "9223372036854775808",
    " ",
    "\t\n",
    "\r\n",
    "\u{a0}",
    "\u{200b}",
    "\u{feff}",
    "\u{2028}",
    "\u{0}",
    "\u{202e}abc",
    "'\"",
    "%s%n",
    "${x}",
    "<script>",
    "../",
    "C:\\",
    "CON",
    "NUL",
    "e\u{301}",
    "ß",
    "ﬁ",
    "İ",
    "Ⱥ",
    "ǅ",
    "\u{fffd}",
    "\u{10ffff}",
    "Z\u{324}\u{354}\u{367}a\u{308}\u{356}l\u{36e}g\u{30c}o\u{319}",
    "مرحبا",
    "שלום",
    "你好",
    "한국어",
    "नमस्ते",
    "👍🏽",
    "🇯🇵",
    "👨\u{200d}👩\u{200d}👧",
];

/// A sentence with every Latin letter, the text [`styled_pangrams`] styles.
const PANGRAM: &str = "The quick brown fox jumps over the lazy dog";

/// The first code points of the capital and small letters of the
/// mathematical alphabets without gaps (bold, bold italic, bold script,
/// bold fraktur, sans-serif, sans-serif bold, monospace): text that reads
/// as Latin but is not ASCII, and normalizes (NFKC) to ASCII.
const MATH_ALPHABETS: [(u32, u32); 7] = [
    (0x1D400, 0x1D41A),
    (0x1D468, 0x1D482),
    (0x1D4D0, 0x1D4EA),
    (0x1D56C, 0x1D586),
    (0x1D5A0, 0x1D5BA),
    (0x1D5D4, 0x1D5EE),
    (0x1D670, 0x1D68A),
];

/// [`PANGRAM`] in each of [`MATH_ALPHABETS`].
fn styled_pangrams() -> impl Iterator<Item = Vec<u32>> {
    MATH_ALPHABETS.iter().map(|&(capital, small)| {
        PANGRAM
            .chars()
            .map(|ch| match ch {
                'A'..='Z' => capital + (ch as u32 - 'A' as u32),
                'a'..='z' => small + (ch as u32 - 'a' as u32),
                _ => ch as u32,
            })
            .collect()
    })
}

/// The `k`th string constant: [`STRING_CONSTANTS`], then [`styled_pangrams`].
fn string_constant(k: usize) -> Vec<u32> {
    match STRING_CONSTANTS.get(k) {
        Some(s) => s.chars().map(u32::from).collect(),
        None => styled_pangrams()
            .nth(k - STRING_CONSTANTS.len())
            .unwrap_or_default(),
    }
}

/// A string constant that fits `alphabet` and `size`, now and then: one
/// is picked at random and kept only if it fits, so a narrow alphabet
/// costs a few checks and gets none.
fn maybe_string_constant(
    source: &mut Source,
    alphabet: &CharSet,
    size: &crate::choice::SizeConstraints,
) -> Option<Vec<u32>> {
    if !source.chance(P_STRING_CONSTANT) {
        return None;
    }
    let count = STRING_CONSTANTS.len() + MATH_ALPHABETS.len();
    let s = string_constant(source.below(count as u64) as usize);
    let fits = (size.min_size..=size.max_size).contains(&s.len())
        && s.iter().all(|&ch| alphabet.contains(ch));
    fits.then_some(s)
}

/// Generates a string choice: now and then a constant
/// ([`maybe_string_constant`]), else its length, where its characters come
/// from (see [`CharSource`]), then each character.
pub fn string(source: &mut Source, c: &Constraints, _recent: &[i128]) -> ChoiceValue {
    let Constraints::String { alphabet, size } = c else {
        return c.simplest();
    };
    if alphabet.is_empty() {
        return c.simplest();
    }
    if let Some(s) = maybe_string_constant(source, alphabet, size) {
        return ChoiceValue::String(s);
    }
    let n = length(source, size.min_size, size.max_size);
    let from = CharSource::choose(source, alphabet);
    // Sized once: collecting a filtered iterator regrows the vector.
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        if let Some(c) = from.draw(source, alphabet) {
            out.push(c);
        }
    }
    ChoiceValue::String(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words handed out in order, as a generator would.
    struct Words(Vec<u64>, usize);

    impl RngCore for Words {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.1 += 1;
            self.0[self.1 - 1]
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {
            unreachable!()
        }
    }

    /// `up_to_u64_from_words` draws what `rand`'s u128 range draws, from
    /// the same words and as many: random words and sizes, and words that
    /// take its second draw (a low half past `2^128 - r`) with and without
    /// a carry.
    #[test]
    fn small_u128_ranges_draw_what_rand_draws() {
        let check = |n: u64, words: Vec<u64>| {
            let mut theirs = Words(words.clone(), 0);
            let expected = theirs.random_range(0..=u128::from(n));
            let mut ours = Words(words, 0);
            let got = up_to_u64_from_words(n, || ours.next_u64());
            assert_eq!(u128::from(got), expected, "n {n}");
            assert_eq!(ours.1, theirs.1, "words used, n {n}");
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for i in 0..200_000u64 {
            let n = match i % 4 {
                0 => rng.next_u64() % 16,
                1 => rng.next_u64() >> (rng.next_u64() % 64),
                2 => u64::MAX - 1 - rng.next_u64() % 4,
                _ => rng.next_u64().min(u64::MAX - 1),
            };
            let words = (0..4).map(|_| rng.next_u64()).collect();
            check(n, words);
        }
        // r = 3: the u128 (2^128 - 1) / 3 times 3 leaves a low half of
        // 2^128 - 1, past 2^128 - 3; then a small and a large second draw.
        let third = u128::MAX / 3;
        for second in [0, u64::MAX, 1 << 62, 3 << 62] {
            check(2, vec![third as u64, (third >> 64) as u64, 0, second]);
            check(2, vec![third as u64, (third >> 64) as u64, second, second]);
        }
        for n in [0, 1, 2, 5, u64::MAX / 3, u64::MAX - 1] {
            let r = u128::from(n) + 1;
            // Words all ones or zeros, and u128s next to multiples of r.
            for v in [
                u128::MAX,
                0,
                u128::MAX / r,
                u128::MAX / r * r,
                (u128::MAX / r).wrapping_mul(r).wrapping_sub(1),
            ] {
                for second in [0, u64::MAX] {
                    check(n, vec![v as u64, (v >> 64) as u64, second, second]);
                }
            }
        }
    }

    /// The integer comparisons pick what the float steps pick, at and next
    /// to every class end and for random words.
    #[test]
    fn integer_thresholds_pick_what_the_floats_pick() {
        let floats = |word: u64| {
            let mut r = unit_of(word) * total_weight(&INTEGER_BITS);
            for &(bits, weight) in &INTEGER_BITS {
                if r < weight {
                    return bits;
                }
                r -= weight;
            }
            64
        };
        let integers = |word: u64| {
            let x = word >> 11;
            INTEGER_BITS_ENDS
                .iter()
                .position(|&end| x < end)
                .map_or(64, |k| INTEGER_BITS[k].0)
        };
        let mut words = vec![0, u64::MAX];
        for &end in INTEGER_BITS_ENDS.iter().chain([&RECENT_OR_BOUNDARY_END]) {
            for x in [end.saturating_sub(1), end, end + 1] {
                words.push((x << 11) | 0x7ff);
                words.push(x << 11);
            }
        }
        let mut source = Source::from_seed(5);
        words.extend((0..100_000).map(|_| source.next_u64()));
        for word in words {
            assert_eq!(floats(word), integers(word), "{word:#x}");
            assert_eq!(
                unit_of(word) < P_RECENT + P_BOUNDARY,
                word >> 11 < RECENT_OR_BOUNDARY_END,
                "{word:#x}"
            );
            let mut general = Source::from_seed(word);
            let mut shortcut = Source::from_seed(word);
            let bits = pick_bits(&mut general, None);
            assert_eq!(
                general.below_power_of_two(bits),
                any_magnitude(&mut shortcut)
            );
            assert_eq!(general.next_u64(), shortcut.next_u64());
        }
    }

    /// `unit_below(unit_end(p))` is `unit() < p`, from the same random word.
    #[test]
    fn unit_below_is_unit_compared() {
        for p in [0.0, 0.1, P_RECENT + P_BOUNDARY, 0.25, 0.5, 1.0] {
            let end = unit_end(p);
            let mut words: Vec<u64> = [end.saturating_sub(1), end, end + 1]
                .iter()
                .flat_map(|&x| [x << 11, (x << 11) | 0x7ff])
                .collect();
            let mut source = Source::from_seed(3);
            words.extend((0..10_000).map(|_| source.next_u64()));
            for word in words {
                let mut general = Source::from_seed(word);
                let mut shortcut = Source::from_seed(word);
                assert_eq!(
                    general.unit() < p,
                    shortcut.unit_below(end),
                    "{p} {word:#x}"
                );
            }
        }
    }

    /// `half` is `chance(0.5)`, from the same random word.
    #[test]
    fn half_is_an_even_chance() {
        let mut general = Source::from_seed(11);
        let mut shortcut = Source::from_seed(11);
        for _ in 0..20_000 {
            assert_eq!(general.chance(0.5), shortcut.half());
        }
        assert_eq!(general.next_u64(), shortcut.next_u64());
    }

    /// The shortcut draws what `rand`'s range sampling draws, from as many
    /// random words (so the choices of a seed are unchanged).
    #[test]
    fn a_power_of_two_range_draws_what_the_general_range_draws() {
        let mut general = Source::from_seed(7);
        let mut shortcut = Source::from_seed(7);
        for round in 0..20_000u32 {
            let bits = round % 128;
            let n = if bits == 0 { 0 } else { (1u128 << bits) - 1 };
            assert_eq!(
                general.up_to_u128(n),
                shortcut.below_power_of_two(bits),
                "{bits} bits"
            );
        }
        assert_eq!(general.next_u64(), shortcut.next_u64());
    }

    #[test]
    fn generated_integers_fit_bounds_and_vary() {
        let mut source = Source::from_seed(1);
        let c = Constraints::integer(IntegerConstraints::bounded(-1000, 1_000_000));
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
        let c = Constraints::integer(IntegerConstraints::bounded(0, 10_000));
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

    /// `draws` floats of an unbounded range of `width` bits (NaN allowed)
    /// from `seed`.
    fn unbounded_floats(seed: u64, width: u8, draws: usize) -> Vec<f64> {
        let mut source = Source::from_seed(seed);
        let unbounded = Constraints::Float(FloatConstraints {
            min: f64::NEG_INFINITY,
            max: f64::INFINITY,
            allow_nan: true,
            width,
        });
        (0..draws)
            .map(|_| match float(&mut source, &unbounded, &[]) {
                ChoiceValue::Float(v) => v,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    /// The share of `values` for which `f` holds.
    fn share_of(values: &[f64], f: impl Fn(f64) -> bool) -> f64 {
        values.iter().filter(|&&v| f(v)).count() as f64 / values.len() as f64
    }

    /// Unbounded 32-bit floats: candidates too large for the width land in
    /// its finite range rather than at infinity, so values above half of
    /// `f32::MAX` are common and infinities stay a small share (hegeltest's
    /// `f32_unbounded_is_mostly_finite_with_extreme_magnitudes`).
    #[test]
    fn unbounded_narrow_floats_are_mostly_finite_with_large_magnitudes() {
        let values = unbounded_floats(7, 32, 20_000);
        assert!(
            values
                .iter()
                .all(|v| v.is_nan() || f64::from(*v as f32) == *v)
        );
        let half_max = f64::from(f32::MAX) / 2.0;
        let large = share_of(&values, |v| v.is_finite() && v.abs() > half_max);
        let infinite = share_of(&values, |v| v.is_infinite());
        assert!(large > 0.02, "near-max {large}");
        assert!((0.005..0.1).contains(&infinite), "infinite {infinite}");
    }

    /// The special values are drawn often enough that 100 test cases meet
    /// each (Hypothesis' provider, read from its code: NaN about 1.4% of
    /// draws, -inf 0.4%, subnormals about 3%).
    #[test]
    fn special_floats_are_common_but_not_concentrated() {
        let draws = 20_000;
        let values = unbounded_floats(4, 64, draws);
        let share = |f: &dyn Fn(f64) -> bool| share_of(&values, f);
        let nan = share(&|v| v.is_nan());
        let negative_infinity = share(&|v| v == f64::NEG_INFINITY);
        let negative_zero = share(&|v| v == 0.0 && v.is_sign_negative());
        let subnormal = share(&|v| v.is_subnormal());
        assert!((0.015..0.05).contains(&nan), "NaN {nan}");
        assert!(
            (0.005..0.03).contains(&negative_infinity),
            "-inf {negative_infinity}"
        );
        assert!(
            (0.005..0.03).contains(&negative_zero),
            "-0.0 {negative_zero}"
        );
        assert!((0.03..0.1).contains(&subnormal), "subnormal {subnormal}");
        let distinct: std::collections::HashSet<u64> = values.iter().map(|v| v.to_bits()).collect();
        assert!(
            distinct.len() > draws * 6 / 10,
            "{} distinct",
            distinct.len()
        );

        // Bounded: each bound about 2-3% of draws, never out of bounds.
        let mut source = Source::from_seed(5);
        let unit = Constraints::Float(FloatConstraints {
            min: 0.0,
            max: 1.0,
            allow_nan: false,
            width: 64,
        });
        let values: Vec<f64> = (0..draws)
            .map(|_| match float(&mut source, &unit, &[]) {
                ChoiceValue::Float(v) => v,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(
            values
                .iter()
                .all(|v| (0.0..=1.0).contains(v) && !v.is_sign_negative())
        );
        let ones = values.iter().filter(|&&v| v == 1.0).count() as f64 / draws as f64;
        assert!((0.015..0.08).contains(&ones), "1.0 {ones}");
    }

    /// Swarms: in some test cases a small range draws from a subset of its
    /// values (long runs of one value), while one draw alone is as before.
    #[test]
    fn small_ranges_are_swarmed_per_test_case() {
        let c = Constraints::integer(IntegerConstraints::bounded(0, 2));
        let (mut one_value, mut all_values) = (0, 0);
        let mut first = [0u32; 3];
        for seed in 0..1000 {
            let mut source = Source::from_seed(seed);
            let draws: Vec<i128> = (0..20)
                .map(|_| match integer(&mut source, &c, &[]) {
                    ChoiceValue::Integer(v) => v,
                    other => panic!("{other:?}"),
                })
                .collect();
            first[draws[0] as usize] += 1;
            let distinct: std::collections::HashSet<_> = draws.iter().collect();
            match distinct.len() {
                1 => one_value += 1,
                3 => all_values += 1,
                _ => {}
            }
        }
        // Without swarms 20 draws of three values are one value 3 in 3^19.
        assert!(
            (100..400).contains(&one_value),
            "{one_value} with one value"
        );
        assert!(all_values > 500, "{all_values} with every value");
        assert!(first.iter().all(|&n| (280..400).contains(&n)), "{first:?}");
    }

    /// An alphabet and the constraints of a string over it.
    fn string_constraints(
        spec: &crate::charset::CharSetSpec,
        min_size: usize,
        max_size: usize,
    ) -> (std::sync::Arc<CharSet>, Constraints) {
        let alphabet = std::sync::Arc::new(CharSet::from_spec(spec).unwrap());
        let size = crate::choice::SizeConstraints { min_size, max_size };
        let c = Constraints::String {
            alphabet: alphabet.clone(),
            size,
        };
        (alphabet, c)
    }

    /// Some strings have no ASCII at all, some are Latin-1 heavy, many are
    /// mostly ASCII; every character is in the alphabet, whatever it holds.
    #[test]
    fn strings_choose_where_their_characters_come_from() {
        use crate::charset::CharSetSpec;
        let strings = |spec: CharSetSpec, seed: u64| {
            let (alphabet, c) = string_constraints(&spec, 5, 20);
            let mut source = Source::from_seed(seed);
            (0..2000)
                .map(|_| match string(&mut source, &c, &[]) {
                    ChoiceValue::String(points) => {
                        assert!(points.iter().all(|p| alphabet.contains(*p)));
                        assert!((5..=20).contains(&points.len()));
                        points
                    }
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        let all = strings(CharSetSpec::default(), 5);
        let share = |f: &dyn Fn(&Vec<u32>) -> bool| all.iter().filter(|s| f(s)).count();
        let no_ascii = share(&|s| s.iter().all(|p| *p >= 0x80));
        let mostly_ascii = share(&|s| 2 * s.iter().filter(|p| **p < 0x80).count() >= s.len());
        let latin = share(&|s| s.iter().filter(|p| (0x80..0x100).contains(*p)).count() >= 3);
        // 10% by choice (characters drawn one by one almost never give it).
        assert!(
            (150..=300).contains(&no_ascii),
            "{no_ascii} of 2000 without ASCII"
        );
        assert!(
            mostly_ascii >= 800,
            "{mostly_ascii} of 2000 at least half ASCII"
        );
        assert!(latin >= 300, "{latin} of 2000 with 3+ Latin-1 characters");
        // Alphabets with nothing past ASCII, or nothing in it, still work.
        let ascii = CharSetSpec {
            codec: Some("ascii".into()),
            ..CharSetSpec::default()
        };
        assert!(strings(ascii, 6).iter().flatten().all(|p| *p < 0x80));
        let high = CharSetSpec {
            min_codepoint: Some(0x3000),
            ..CharSetSpec::default()
        };
        assert!(strings(high, 7).iter().flatten().all(|p| *p >= 0x3000));
    }

    #[test]
    fn strings_are_now_and_then_a_constant_that_fits() {
        use crate::charset::CharSetSpec;
        let constants: Vec<Vec<u32>> = (0..STRING_CONSTANTS.len() + MATH_ALPHABETS.len())
            .map(string_constant)
            .collect();
        let draw_constants = |spec: CharSetSpec| {
            let (alphabet, c) = string_constraints(&spec, 0, 100);
            let mut source = Source::from_seed(3);
            (0..4000)
                .filter_map(|_| match string(&mut source, &c, &[]) {
                    ChoiceValue::String(s) => {
                        assert!(s.iter().all(|p| alphabet.contains(*p)));
                        constants.contains(&s).then_some(s)
                    }
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        let all = draw_constants(CharSetSpec::default());
        assert!((120..=320).contains(&all.len()), "{} constants", all.len());
        // Text in a mathematical alphabet, and plain words, both turn up.
        assert!(
            all.iter()
                .any(|s| s.iter().all(|p| *p >= 0x1D400 || *p == 0x20))
        );
        assert!(all.iter().any(|s| s.iter().all(|p| *p < 0x80)));
        // Only constants that fit: none past ASCII in an ASCII alphabet.
        let ascii = CharSetSpec {
            codec: Some("ascii".into()),
            ..CharSetSpec::default()
        };
        let ascii_constants = draw_constants(ascii);
        assert!(!ascii_constants.is_empty());
        assert!(ascii_constants.iter().flatten().all(|p| *p < 0x80));
    }

    #[test]
    fn some_test_cases_draw_no_tiny_magnitudes() {
        // Twenty values of a wide range, none below 16: about one test
        // case in 300 when each value is tiny one time in four on its own.
        let c = Constraints::integer(IntegerConstraints::bounded(0, 1 << 120));
        let mut run = Source::from_seed(4);
        let none_tiny = (0..400)
            .filter(|_| {
                let mut source = run.split();
                (0..20).all(
                    |_| matches!(integer(&mut source, &c, &[]), ChoiceValue::Integer(v) if v >= 16),
                )
            })
            .count();
        assert!(none_tiny >= 10, "{none_tiny} of 400 test cases");
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
