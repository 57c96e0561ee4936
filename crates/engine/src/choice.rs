//! Choices: the typed, constrained decisions a test case is made of.
//!
//! Every test case is the sequence of choices it made. Each kind of choice has
//! a total simplicity order (its *index*: 0 is the simplest permitted value),
//! so shrinking is search toward sequences that are shorter, then smaller
//! choice by choice. Generation and replay both go through these types.

use crate::charset::CharSet;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The value of one choice.
#[derive(Debug)]
pub enum ChoiceValue {
    /// An integer.
    Integer(i128),
    /// A float (compared and hashed by bit pattern, so NaNs and -0.0 are distinct values).
    Float(f64),
    /// A boolean.
    Boolean(bool),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A string, as code points (surrogates allowed where the alphabet has them).
    String(Vec<u32>),
}

/// Written out to be inlined: values are cloned choice by choice (a
/// prefix, a mutation, a replay), and nearly all are numbers and booleans,
/// copied without a call.
impl Clone for ChoiceValue {
    #[inline]
    fn clone(&self) -> Self {
        match self {
            ChoiceValue::Integer(v) => ChoiceValue::Integer(*v),
            ChoiceValue::Float(v) => ChoiceValue::Float(*v),
            ChoiceValue::Boolean(v) => ChoiceValue::Boolean(*v),
            ChoiceValue::Bytes(v) => ChoiceValue::Bytes(v.clone()),
            ChoiceValue::String(v) => ChoiceValue::String(v.clone()),
        }
    }
}

impl PartialEq for ChoiceValue {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ChoiceValue::Integer(a), ChoiceValue::Integer(b)) => a == b,
            (ChoiceValue::Float(a), ChoiceValue::Float(b)) => a.to_bits() == b.to_bits(),
            (ChoiceValue::Boolean(a), ChoiceValue::Boolean(b)) => a == b,
            (ChoiceValue::Bytes(a), ChoiceValue::Bytes(b)) => a == b,
            (ChoiceValue::String(a), ChoiceValue::String(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for ChoiceValue {}

impl Hash for ChoiceValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            ChoiceValue::Integer(v) => {
                0u8.hash(state);
                v.hash(state)
            }
            ChoiceValue::Float(v) => {
                1u8.hash(state);
                v.to_bits().hash(state)
            }
            ChoiceValue::Boolean(v) => {
                2u8.hash(state);
                v.hash(state)
            }
            ChoiceValue::Bytes(v) => {
                3u8.hash(state);
                v.hash(state)
            }
            ChoiceValue::String(v) => {
                4u8.hash(state);
                v.hash(state)
            }
        }
    }
}

/// Constraints on an integer choice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegerConstraints {
    /// Smallest permitted value, if bounded below.
    pub min: Option<i128>,
    /// Largest permitted value, if bounded above.
    pub max: Option<i128>,
    /// The simplest value (clamped into the bounds).
    pub shrink_towards: i128,
}

/// Integer constraints as a recorded choice holds them ([`Constraints::Integer`]):
/// 32 bytes instead of [`IntegerConstraints`]' 80 (two `Option<i128>` and an
/// `i128`), so that a [`ChoiceNode`] is 80 bytes, not 128. Every choice a
/// test case makes is written into its record, read by the choice tree and
/// copied by mutations and the shrinker; nearly every integer's bounds fit
/// in an `i64` (a list's length, an index, an `i64` itself), and those are
/// held in line. Bounds wider than that (a `u64`'s maximum, `i128`s) are
/// held behind an [`Arc`], shared by the choices drawn with them.
///
/// The form is canonical (bounds that fit are always held in line, an
/// absent bound as zero), so two are equal exactly when the constraints
/// they hold are.
#[derive(Debug)]
pub enum CompactIntegerConstraints {
    /// Bounds and the simplest value that fit in an `i64`.
    Narrow {
        /// The smallest permitted value, if `bounds` has one (else 0).
        min: i64,
        /// The largest permitted value, if `bounds` has one (else 0).
        max: i64,
        /// The simplest value (clamped into the bounds).
        shrink_towards: i64,
        /// Which of `min` and `max` are bounds.
        bounds: IntegerBounds,
    },
    /// Constraints with a bound or simplest value outside the `i64` range.
    Wide(Arc<IntegerConstraints>),
}

/// Which bounds a [`CompactIntegerConstraints::Narrow`] has. One byte with
/// four values, so that the enum's tag fits in the rest of it: the whole
/// is 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum IntegerBounds {
    /// Unbounded.
    Neither = 0,
    /// Bounded below only.
    Min = 1,
    /// Bounded above only.
    Max = 2,
    /// Bounded on both sides.
    Both = 3,
}

impl IntegerBounds {
    #[inline]
    fn of(has_min: bool, has_max: bool) -> IntegerBounds {
        match (has_min, has_max) {
            (false, false) => IntegerBounds::Neither,
            (true, false) => IntegerBounds::Min,
            (false, true) => IntegerBounds::Max,
            (true, true) => IntegerBounds::Both,
        }
    }

    #[inline]
    fn has_min(self) -> bool {
        self as u8 & 1 != 0
    }

    #[inline]
    fn has_max(self) -> bool {
        self as u8 & 2 != 0
    }
}

impl CompactIntegerConstraints {
    /// Unbounded, shrinking toward zero.
    pub const UNBOUNDED: CompactIntegerConstraints = CompactIntegerConstraints::Narrow {
        min: 0,
        max: 0,
        shrink_towards: 0,
        bounds: IntegerBounds::Neither,
    };

    /// The in-line form of `c`, if its bounds and simplest value fit in an `i64`.
    #[inline]
    pub fn narrow(c: &IntegerConstraints) -> Option<CompactIntegerConstraints> {
        let (min, max) = (c.min.unwrap_or(0), c.max.unwrap_or(0));
        // Each fits when adding 2^63 leaves it below 2^64: one test of the
        // high words of all three.
        let offset = |v: i128| (v as u128).wrapping_add(1 << 63) >> 64;
        (offset(min) | offset(max) | offset(c.shrink_towards) == 0).then(|| {
            CompactIntegerConstraints::Narrow {
                min: min as i64,
                max: max as i64,
                shrink_towards: c.shrink_towards as i64,
                bounds: IntegerBounds::of(c.min.is_some(), c.max.is_some()),
            }
        })
    }

    /// The constraints held.
    #[inline]
    pub fn get(&self) -> IntegerConstraints {
        match self {
            CompactIntegerConstraints::Narrow {
                min,
                max,
                shrink_towards,
                bounds,
            } => IntegerConstraints {
                min: bounds.has_min().then_some(i128::from(*min)),
                max: bounds.has_max().then_some(i128::from(*max)),
                shrink_towards: i128::from(*shrink_towards),
            },
            CompactIntegerConstraints::Wide(c) => **c,
        }
    }

    /// The simplest permitted value ([`IntegerConstraints::simplest`]).
    #[inline]
    pub fn simplest(&self) -> i128 {
        self.get().simplest()
    }

    /// Whether `v` is permitted ([`IntegerConstraints::permits`]).
    #[inline]
    pub fn permits(&self, v: i128) -> bool {
        self.get().permits(v)
    }

    /// Position of `v` in simplicity order ([`IntegerConstraints::index_of`]).
    #[inline]
    pub fn index_of(&self, v: i128) -> u128 {
        self.get().index_of(v)
    }

    /// The value at `index` in simplicity order ([`IntegerConstraints::value_at`]).
    #[inline]
    pub fn value_at(&self, index: u128) -> Option<i128> {
        self.get().value_at(index)
    }
}

/// Written out: every recorded integer choice clones its constraints, and
/// the derived clone copies the in-line form field by field.
impl PartialEq for CompactIntegerConstraints {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        use CompactIntegerConstraints::{Narrow, Wide};
        match (self, other) {
            (
                Narrow {
                    min,
                    max,
                    shrink_towards,
                    bounds,
                },
                Narrow {
                    min: other_min,
                    max: other_max,
                    shrink_towards: other_shrink_towards,
                    bounds: other_bounds,
                },
            ) => {
                min == other_min
                    && max == other_max
                    && shrink_towards == other_shrink_towards
                    && bounds == other_bounds
            }
            // Wide constraints drawn with over and over are one allocation
            // shared by their choices: the same pointer is equal without
            // reading the bounds (which are integers only, so equality is
            // reflexive).
            (Wide(a), Wide(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => false,
        }
    }
}

impl Clone for CompactIntegerConstraints {
    #[inline]
    fn clone(&self) -> Self {
        match self {
            // SAFETY: the in-line form holds only integers and a fieldless
            // enum: a copy of its bytes is an equal value that owns nothing
            // the original also owns.
            CompactIntegerConstraints::Narrow { .. } => unsafe { std::ptr::read(self) },
            CompactIntegerConstraints::Wide(c) => CompactIntegerConstraints::Wide(c.clone()),
        }
    }
}

/// Integer constraints prepared to be drawn with many times (a schema's):
/// as the generator reads them and in the form a choice records them
/// ([`CompactIntegerConstraints`]), made once, so that a draw converts
/// nothing ([`crate::data::TestData::draw_prepared_integer`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedIntegerConstraints {
    constraints: IntegerConstraints,
    compact: CompactIntegerConstraints,
}

impl PreparedIntegerConstraints {
    /// `c`, prepared.
    pub fn new(c: IntegerConstraints) -> PreparedIntegerConstraints {
        PreparedIntegerConstraints {
            constraints: c,
            compact: c.into(),
        }
    }

    /// Bounded on both sides by `i64`s, shrinking toward zero (clamped):
    /// [`IntegerConstraints::bounded`]'s, prepared without a conversion.
    #[inline]
    pub fn bounded_i64(min: i64, max: i64) -> PreparedIntegerConstraints {
        PreparedIntegerConstraints {
            constraints: IntegerConstraints::bounded(i128::from(min), i128::from(max)),
            compact: CompactIntegerConstraints::Narrow {
                min,
                max,
                shrink_towards: 0,
                bounds: IntegerBounds::Both,
            },
        }
    }

    /// The constraints.
    #[inline]
    pub fn constraints(&self) -> &IntegerConstraints {
        &self.constraints
    }

    /// Their recorded form.
    #[inline]
    pub fn compact(&self) -> &CompactIntegerConstraints {
        &self.compact
    }
}

impl From<IntegerConstraints> for CompactIntegerConstraints {
    fn from(c: IntegerConstraints) -> CompactIntegerConstraints {
        CompactIntegerConstraints::narrow(&c)
            .unwrap_or_else(|| CompactIntegerConstraints::Wide(Arc::new(c)))
    }
}

/// Constraints on a float choice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatConstraints {
    /// Smallest permitted value (may be -inf).
    pub min: f64,
    /// Largest permitted value (may be +inf).
    pub max: f64,
    /// Whether NaN is permitted.
    pub allow_nan: bool,
    /// 16, 32 or 64: values must be exactly representable at this width.
    pub width: u8,
}

/// Constraints on a bytes or string choice's length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeConstraints {
    /// Minimum length.
    pub min_size: usize,
    /// Maximum length.
    pub max_size: usize,
}

/// The kind of a choice and what values it permits.
#[derive(Clone, Debug)]
pub enum Constraints {
    /// An integer within bounds.
    Integer(CompactIntegerConstraints),
    /// A float within bounds.
    Float(FloatConstraints),
    /// A boolean that is true with probability `p` when generated.
    Boolean {
        /// Probability of `true` during generation.
        p: f64,
    },
    /// A byte string.
    Bytes(SizeConstraints),
    /// A string over an alphabet.
    String {
        /// The permitted characters.
        alphabet: Arc<CharSet>,
        /// Length bounds in code points.
        size: SizeConstraints,
    },
}

/// One recorded choice.
#[derive(Clone, Debug)]
pub struct ChoiceNode {
    /// What the choice permitted.
    pub constraints: Constraints,
    /// What was chosen.
    pub value: ChoiceValue,
    /// Whether the value was forced (the shrinker leaves forced choices alone).
    pub forced: bool,
}

impl ChoiceNode {
    /// Whether dropping the node frees nothing: its value is a number or a
    /// boolean and its constraints hold no alphabet.
    #[inline]
    pub fn owns_nothing(&self) -> bool {
        self.constraints.owns_nothing() && self.value.owns_nothing()
    }
}

impl Constraints {
    /// Whether dropping them frees nothing (they hold no alphabet and no
    /// shared wide integer bounds).
    #[inline(always)]
    pub fn owns_nothing(&self) -> bool {
        // Every variant named, so that a new one is decided here.
        match self {
            Constraints::Integer(CompactIntegerConstraints::Narrow { .. })
            | Constraints::Float(_)
            | Constraints::Boolean { .. }
            | Constraints::Bytes(_) => true,
            Constraints::Integer(CompactIntegerConstraints::Wide(_))
            | Constraints::String { .. } => false,
        }
    }
}

impl ChoiceValue {
    /// Whether dropping it frees nothing (a number or a boolean).
    #[inline(always)]
    pub fn owns_nothing(&self) -> bool {
        match self {
            ChoiceValue::Integer(_) | ChoiceValue::Float(_) | ChoiceValue::Boolean(_) => true,
            ChoiceValue::Bytes(_) | ChoiceValue::String(_) => false,
        }
    }
}

impl IntegerConstraints {
    /// Unbounded, shrinking toward zero.
    pub const UNBOUNDED: IntegerConstraints = IntegerConstraints {
        min: None,
        max: None,
        shrink_towards: 0,
    };

    /// Bounded on both sides, shrinking toward zero (clamped).
    pub fn bounded(min: i128, max: i128) -> IntegerConstraints {
        IntegerConstraints {
            min: Some(min),
            max: Some(max),
            shrink_towards: 0,
        }
    }

    /// The simplest permitted value.
    pub fn simplest(&self) -> i128 {
        let mut s = self.shrink_towards;
        if let Some(min) = self.min {
            s = s.max(min);
        }
        if let Some(max) = self.max {
            s = s.min(max);
        }
        s
    }

    /// Whether `v` is permitted.
    pub fn permits(&self, v: i128) -> bool {
        self.min.is_none_or(|m| v >= m) && self.max.is_none_or(|m| v <= m)
    }

    /// Position of `v` in simplicity order: the simplest value first, then
    /// alternately above and below it (above first), skipping values outside
    /// the bounds.
    pub fn index_of(&self, v: i128) -> u128 {
        let s = self.simplest();
        let above = v.wrapping_sub(s) as u128;
        let below = s.wrapping_sub(v) as u128;
        let (distance, is_above) = if v >= s {
            (above, true)
        } else {
            (below, false)
        };
        if distance == 0 {
            return 0;
        }
        // How many values exist on each side of s.
        let room_above = self.max.map(|m| m.wrapping_sub(s) as u128);
        let room_below = self.min.map(|m| s.wrapping_sub(m) as u128);
        match (is_above, room_above, room_below) {
            (true, _, Some(rb)) if rb < distance => rb.saturating_add(distance),
            (false, Some(ra), _) if ra < distance => ra.saturating_add(distance),
            (true, _, _) => distance.saturating_mul(2).saturating_sub(1),
            (false, _, _) => distance.saturating_mul(2),
        }
    }

    /// The value at position `index` in simplicity order, if there is one.
    pub fn value_at(&self, index: u128) -> Option<i128> {
        let s = self.simplest();
        if index == 0 {
            return Some(s);
        }
        let room_above = self.max.map(|m| m.wrapping_sub(s) as u128);
        let room_below = self.min.map(|m| s.wrapping_sub(m) as u128);
        let shared = match (room_above, room_below) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => u128::MAX,
        };
        let (distance, above) = if index <= shared.saturating_mul(2) {
            (index.div_ceil(2), index % 2 == 1)
        } else {
            let distance = index - shared;
            let above = room_above.is_none_or(|a| a > shared);
            (distance, above)
        };
        let v = if above {
            s.checked_add_unsigned(distance)?
        } else {
            s.checked_sub_unsigned(distance)?
        };
        self.permits(v).then_some(v)
    }
}

impl FloatConstraints {
    /// Whether `v` is permitted.
    pub fn permits(&self, v: f64) -> bool {
        if v.is_nan() {
            return self.allow_nan;
        }
        if self.width < 64 && round_to_width(v, self.width) != v {
            return false;
        }
        if v < self.min || v > self.max {
            return false;
        }
        // Signed zero bounds: min = 0.0 excludes -0.0, max = -0.0 excludes 0.0.
        if v == 0.0 {
            if self.min == 0.0 && self.min.is_sign_positive() && v.is_sign_negative() {
                return false;
            }
            if self.max == 0.0 && self.max.is_sign_negative() && v.is_sign_positive() {
                return false;
            }
        }
        true
    }

    /// The simplest permitted value.
    pub fn simplest(&self) -> f64 {
        for candidate in [0.0, 1.0, -0.0, -1.0] {
            if self.permits(candidate) {
                return candidate;
            }
        }
        // Smallest-magnitude integer inside the range, or the bound nearest zero.
        let lo = self.min;
        let hi = self.max;
        if lo > 0.0 {
            let c = lo.ceil();
            if self.permits(c) {
                return c;
            }
            return self.narrow(lo);
        }
        if hi < 0.0 {
            let c = hi.floor();
            if self.permits(c) {
                return c;
            }
            return self.narrow(hi);
        }
        if self.permits(lo) {
            lo
        } else if self.allow_nan {
            f64::NAN
        } else {
            hi
        }
    }

    fn narrow(&self, v: f64) -> f64 {
        if self.width < 64 {
            let mut candidate = round_to_width(v, self.width);
            if !self.permits(candidate) {
                candidate = if candidate < self.min {
                    next_up_at_width(candidate, self.width)
                } else {
                    next_down_at_width(candidate, self.width)
                };
            }
            candidate
        } else {
            v
        }
    }
}

/// `v` at the precision of a float of `width` bits (16, 32 or 64), rounded
/// to nearest (past the width's largest finite value: infinity).
pub fn round_to_width(v: f64, width: u8) -> f64 {
    match width {
        16 => half::f16::from_f64(v).to_f64(),
        32 => (v as f32) as f64,
        _ => v,
    }
}

/// The next float of `width` bits above `v` (a value of that width); NaN and
/// infinity stay as they are.
pub fn next_up_at_width(v: f64, width: u8) -> f64 {
    match width {
        16 => {
            let h = half::f16::from_f64(v);
            if h.is_nan() || h == half::f16::INFINITY {
                return v;
            }
            let bits = h.to_bits();
            let up = if h.to_f64() == 0.0 {
                1 // the smallest positive subnormal, from either zero
            } else if h.is_sign_positive() {
                bits + 1
            } else {
                bits - 1
            };
            half::f16::from_bits(up).to_f64()
        }
        32 => (v as f32).next_up() as f64,
        _ => v.next_up(),
    }
}

/// The next float of `width` bits below `v` (see [`next_up_at_width`]).
pub fn next_down_at_width(v: f64, width: u8) -> f64 {
    -next_up_at_width(-v, width)
}

/// The largest finite float of `width` bits.
pub fn max_at_width(width: u8) -> f64 {
    match width {
        16 => half::f16::MAX.to_f64(),
        32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// The simplicity order of floats: non-negative before negative, then NaN last;
/// within a sign, integral values below 2^56 in numeric order first, then other
/// values with exponents near 1 before extreme ones and fewer fractional bits first.
pub fn float_key(v: f64) -> (u8, u64) {
    if v.is_nan() {
        return (2, v.to_bits() & 0x000F_FFFF_FFFF_FFFF);
    }
    let sign = u8::from(v.is_sign_negative());
    (sign, float_magnitude_key(v.abs()))
}

fn exponent_rank(biased: u64) -> u64 {
    if biased == 0x7FF {
        0x7FF
    } else if biased >= 1023 {
        biased - 1023
    } else {
        1024 + (1022 - biased)
    }
}

fn exponent_from_rank(rank: u64) -> u64 {
    if rank == 0x7FF {
        0x7FF
    } else if rank <= 1023 {
        rank + 1023
    } else {
        1022 - (rank - 1024)
    }
}

/// Reverses the fractional bits of the mantissa (an involution): for a value
/// with unbiased exponent e, the low 52 - e bits are fractional, and fewer of
/// them set (lower in reversed order) means a simpler number.
fn reorder_mantissa(unbiased_exponent: i64, mantissa: u64) -> u64 {
    const MASK: u64 = (1 << 52) - 1;
    if unbiased_exponent <= 0 {
        (mantissa.reverse_bits() >> 12) & MASK
    } else if unbiased_exponent <= 51 {
        let fractional = 52 - unbiased_exponent as u32;
        let low_mask = (1u64 << fractional) - 1;
        let low = mantissa & low_mask;
        let reversed = low.reverse_bits() >> (64 - fractional);
        (mantissa & !low_mask) | reversed
    } else {
        mantissa
    }
}

fn float_magnitude_key(a: f64) -> u64 {
    if a.fract() == 0.0 && a < (1u64 << 56) as f64 {
        return a as u64;
    }
    let bits = a.to_bits();
    let biased = (bits >> 52) & 0x7FF;
    let mantissa = bits & ((1 << 52) - 1);
    (1u64 << 63) | (exponent_rank(biased) << 52) | reorder_mantissa(biased as i64 - 1023, mantissa)
}

/// The non-negative float at a position of the simplicity order (inverse of the
/// magnitude part of [`float_key`]).
pub fn float_from_magnitude_key(key: u64) -> f64 {
    if key < (1u64 << 63) {
        return key as f64;
    }
    let rank = (key >> 52) & 0x7FF;
    let biased = exponent_from_rank(rank);
    let mantissa = reorder_mantissa(biased as i64 - 1023, key & ((1 << 52) - 1));
    f64::from_bits((biased << 52) | mantissa)
}

/// The magnitude part of a float's simplicity key.
pub fn float_magnitude_index(v: f64) -> u64 {
    float_magnitude_key(v.abs())
}

impl ChoiceValue {
    /// The size of this choice as Hypothesis counts it against a test case's
    /// budget (`choices_size`: the length of its database serialization,
    /// `choices_to_bytes`): one header byte, then for payloads of 31 bytes or
    /// more their length as LEB128, then the payload. A boolean is the header
    /// alone; a float 8 bytes; an integer its shortest two's-complement form
    /// (`1 + bit_length // 8` bytes); bytes themselves; a string its UTF-8
    /// (surrogates as 3 bytes each, as `surrogatepass` encodes them).
    pub fn serialized_size(&self) -> usize {
        let payload = match self {
            ChoiceValue::Boolean(_) => return 1,
            ChoiceValue::Float(_) => 8,
            ChoiceValue::Integer(i) => {
                // An integer that fits an `i64` (nearly all) in 64-bit arithmetic.
                let bit_length = match i64::try_from(*i) {
                    Ok(small) => 64 - small.unsigned_abs().leading_zeros() as usize,
                    Err(_) => 128 - i.unsigned_abs().leading_zeros() as usize,
                };
                1 + bit_length / 8
            }
            ChoiceValue::Bytes(bytes) => bytes.len(),
            ChoiceValue::String(points) => crate::value::wtf8_len(points),
        };
        let length_bytes = if payload < 0b11111 {
            0
        } else {
            let bits = usize::BITS - payload.leading_zeros();
            bits.div_ceil(7) as usize
        };
        1 + length_bytes + payload
    }

    /// Compares two values of the same kind by simplicity (smaller is simpler).
    ///
    /// Values of different kinds compare by kind, which only happens when
    /// comparing misaligned sequences.
    pub fn simplicity_cmp(&self, other: &ChoiceValue, constraints: &Constraints) -> Ordering {
        match (self, other, constraints) {
            (ChoiceValue::Integer(a), ChoiceValue::Integer(b), Constraints::Integer(c)) => {
                let c = c.get();
                c.index_of(*a).cmp(&c.index_of(*b))
            }
            (ChoiceValue::Integer(a), ChoiceValue::Integer(b), _) => IntegerConstraints::UNBOUNDED
                .index_of(*a)
                .cmp(&IntegerConstraints::UNBOUNDED.index_of(*b)),
            (ChoiceValue::Float(a), ChoiceValue::Float(b), _) => float_key(*a).cmp(&float_key(*b)),
            (ChoiceValue::Boolean(a), ChoiceValue::Boolean(b), _) => a.cmp(b),
            (ChoiceValue::Bytes(a), ChoiceValue::Bytes(b), _) => {
                a.len().cmp(&b.len()).then_with(|| a.cmp(b))
            }
            (ChoiceValue::String(a), ChoiceValue::String(b), constraints) => {
                a.len().cmp(&b.len()).then_with(|| match constraints {
                    Constraints::String { alphabet, .. } => {
                        for (x, y) in a.iter().zip(b) {
                            let o = alphabet.shrink_index(*x).cmp(&alphabet.shrink_index(*y));
                            if o != Ordering::Equal {
                                return o;
                            }
                        }
                        Ordering::Equal
                    }
                    _ => a.cmp(b),
                })
            }
            _ => self.kind_rank().cmp(&other.kind_rank()),
        }
    }

    fn kind_rank(&self) -> u8 {
        match self {
            ChoiceValue::Boolean(_) => 0,
            ChoiceValue::Integer(_) => 1,
            ChoiceValue::Float(_) => 2,
            ChoiceValue::Bytes(_) => 3,
            ChoiceValue::String(_) => 4,
        }
    }
}

impl Constraints {
    /// Integer constraints, in the form a recorded choice holds them.
    #[inline]
    pub fn integer(c: IntegerConstraints) -> Constraints {
        Constraints::Integer(c.into())
    }

    /// Whether `value` is of this kind and permitted.
    pub fn permits(&self, value: &ChoiceValue) -> bool {
        match (self, value) {
            (Constraints::Integer(c), ChoiceValue::Integer(v)) => c.get().permits(*v),
            (Constraints::Float(c), ChoiceValue::Float(v)) => c.permits(*v),
            (Constraints::Boolean { p }, ChoiceValue::Boolean(v)) => {
                if *v {
                    *p > 0.0
                } else {
                    *p < 1.0
                }
            }
            (Constraints::Bytes(s), ChoiceValue::Bytes(v)) => {
                v.len() >= s.min_size && v.len() <= s.max_size
            }
            (Constraints::String { alphabet, size }, ChoiceValue::String(v)) => {
                v.len() >= size.min_size
                    && v.len() <= size.max_size
                    && v.iter().all(|c| alphabet.contains(*c))
            }
            _ => false,
        }
    }

    /// The simplest permitted value.
    pub fn simplest(&self) -> ChoiceValue {
        match self {
            Constraints::Integer(c) => ChoiceValue::Integer(c.get().simplest()),
            Constraints::Float(c) => ChoiceValue::Float(c.simplest()),
            Constraints::Boolean { p } => ChoiceValue::Boolean(*p >= 1.0),
            Constraints::Bytes(s) => ChoiceValue::Bytes(vec![0; s.min_size]),
            Constraints::String { alphabet, size } => {
                let c = alphabet.char_at_shrink_index(0).unwrap_or(0x30);
                ChoiceValue::String(vec![c; size.min_size])
            }
        }
    }
}

impl Constraints {
    /// A value far from the simplest, where one stands out: a bounded
    /// integer's least simple value (its farther bound), a float's largest
    /// finite magnitude, a boolean's `true` (a collection's decision to go on
    /// is not drawn this way: see [`crate::data::Collection::more`]). Other
    /// kinds take their simplest value.
    pub fn far_value(&self) -> ChoiceValue {
        match self {
            Constraints::Boolean { p } if *p > 0.0 => Some(ChoiceValue::Boolean(true)),
            Constraints::Integer(c) => match c.get() {
                c @ IntegerConstraints {
                    min: Some(min),
                    max: Some(max),
                    ..
                } => c.value_at(max.abs_diff(min)).map(ChoiceValue::Integer),
                _ => None,
            },
            Constraints::Float(c) => [c.max, c.min, f64::MAX, f64::MIN]
                .into_iter()
                .find(|&v| v.is_finite() && v != 0.0 && c.permits(v))
                .map(ChoiceValue::Float),
            _ => None,
        }
        .unwrap_or_else(|| self.simplest())
    }
}

/// Compares two choice sequences in shortlex order: fewer choices first, then
/// choice by choice in simplicity order. This is the order shrinking descends.
pub fn sequence_cmp(a: &[ChoiceNode], b: &[ChoiceNode]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| {
        for (x, y) in a.iter().zip(b) {
            let o = x.value.simplicity_cmp(&y.value, &x.constraints);
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes as Hypothesis 6.152.4's `choices_to_bytes([value])` measures them.
    #[test]
    fn serialized_sizes_match_hypothesis() {
        let string = |s: &str| ChoiceValue::String(s.chars().map(u32::from).collect());
        let cases = [
            (ChoiceValue::Boolean(true), 1),
            (ChoiceValue::Integer(0), 2),
            (ChoiceValue::Integer(127), 2),
            (ChoiceValue::Integer(128), 3),
            (ChoiceValue::Integer(-128), 3),
            (ChoiceValue::Integer(-129), 3),
            (ChoiceValue::Integer(1 << 63), 10),
            (ChoiceValue::Integer(i128::MIN), 18),
            (ChoiceValue::Float(1.5), 9),
            (ChoiceValue::Bytes(vec![]), 1),
            (ChoiceValue::Bytes(vec![7; 30]), 31),
            (ChoiceValue::Bytes(vec![7; 31]), 33),
            (ChoiceValue::Bytes(vec![7; 200]), 203),
            (string(&"a".repeat(30)), 31),
            (string(&"\u{e9}".repeat(16)), 34),
            (ChoiceValue::String(vec![0xD800]), 4),
            (string("\u{1F600}"), 5),
            (string(&"a".repeat(128)), 131),
            (string(&"a".repeat(20000)), 20004),
        ];
        for (value, size) in cases {
            assert_eq!(value.serialized_size(), size, "{value:?}");
        }
    }

    /// The point of [`CompactIntegerConstraints`]: a recorded choice is
    /// 80 bytes (it was 128 with the integer constraints held as they are
    /// drawn).
    #[test]
    fn a_choice_node_is_80_bytes() {
        assert_eq!(std::mem::size_of::<CompactIntegerConstraints>(), 32);
        assert_eq!(std::mem::size_of::<ChoiceNode>(), 80);
    }

    /// Bounds and simplest values that fit an `i64` are held in line, others
    /// behind an `Arc`; either way the constraints come back as they went in.
    #[test]
    fn compact_integer_constraints_hold_what_they_are_given() {
        let wide = i128::from(i64::MAX) + 1;
        for (min, max, shrink_towards, narrow) in [
            (None, None, 0, true),
            (Some(-5), Some(9), 3, true),
            (
                Some(i128::from(i64::MIN)),
                Some(i128::from(i64::MAX)),
                0,
                true,
            ),
            (Some(0), None, 0, true),
            (None, Some(-1), -7, true),
            (Some(0), Some(wide), 0, false),
            (Some(-wide - 1), None, 0, false),
            (None, None, wide, false),
            (Some(i128::MIN), Some(i128::MAX), 0, false),
        ] {
            let c = IntegerConstraints {
                min,
                max,
                shrink_towards,
            };
            let compact = CompactIntegerConstraints::from(c);
            assert_eq!(
                matches!(compact, CompactIntegerConstraints::Narrow { .. }),
                narrow,
                "{c:?}"
            );
            assert_eq!(compact.get(), c);
            assert_eq!(compact, CompactIntegerConstraints::from(c));
            // The in-line form is cloned as bytes, the other through its Arc.
            let cloned = compact.clone();
            assert_eq!(cloned, compact);
            assert_eq!(cloned.get(), c);
        }
        assert_eq!(
            PreparedIntegerConstraints::bounded_i64(i64::MIN, 7),
            PreparedIntegerConstraints::new(IntegerConstraints::bounded(i128::from(i64::MIN), 7))
        );
        assert_ne!(
            CompactIntegerConstraints::from(IntegerConstraints::bounded(0, 1)),
            CompactIntegerConstraints::from(IntegerConstraints::bounded(0, 2))
        );
        assert_ne!(
            CompactIntegerConstraints::from(IntegerConstraints {
                min: Some(0),
                max: None,
                shrink_towards: 0
            }),
            CompactIntegerConstraints::from(IntegerConstraints::UNBOUNDED)
        );
    }

    #[test]
    fn integer_order_is_zero_then_positive_before_negative() {
        let c = IntegerConstraints::UNBOUNDED;
        let order: Vec<i128> = (0..7).map(|i| c.value_at(i).unwrap()).collect();
        assert_eq!(order, [0, 1, -1, 2, -2, 3, -3]);
        for v in -50..50 {
            assert_eq!(c.value_at(c.index_of(v)), Some(v));
        }
    }

    #[test]
    fn bounded_integer_order_is_a_bijection() {
        for (min, max, towards) in [(-3, 10, 0), (5, 9, 0), (-9, -2, 0), (-4, 4, 2), (0, 0, 0)] {
            let c = IntegerConstraints {
                min: Some(min),
                max: Some(max),
                shrink_towards: towards,
            };
            let n = (max - min + 1) as u128;
            let mut seen: Vec<i128> = (0..n).map(|i| c.value_at(i).unwrap()).collect();
            assert_eq!(c.value_at(n), None, "{min}..{max}");
            for (i, v) in seen.iter().enumerate() {
                assert_eq!(c.index_of(*v), i as u128);
            }
            seen.sort();
            assert_eq!(seen, (min..=max).collect::<Vec<_>>());
        }
    }

    #[test]
    fn floats_prefer_small_integers() {
        let mut values = vec![
            0.5,
            1.0,
            0.0,
            -1.0,
            2.0,
            1.5,
            1e-300,
            f64::INFINITY,
            1e300,
            f64::NAN,
        ];
        values.sort_by_key(|v| float_key(*v));
        assert_eq!(values[0], 0.0);
        assert_eq!(values[1], 1.0);
        assert_eq!(values[2], 2.0);
        assert!(values.last().unwrap().is_nan());
        for v in [
            1.5,
            1e-300,
            1e300,
            f64::MAX,
            5e-324,
            0.1,
            3.0,
            f64::INFINITY,
        ] {
            assert_eq!(
                float_from_magnitude_key(float_magnitude_index(v)).to_bits(),
                v.to_bits(),
                "{v}"
            );
        }
        let pos_1_5 = values.iter().position(|v| *v == 1.5).unwrap();
        let pos_tiny = values.iter().position(|v| *v == 1e-300).unwrap();
        assert!(pos_1_5 < pos_tiny);
    }

    #[test]
    fn float_constraints_respect_signed_zero() {
        let c = FloatConstraints {
            min: 0.0,
            max: 1.0,
            allow_nan: false,
            width: 64,
        };
        assert!(c.permits(0.0));
        assert!(!c.permits(-0.0));
        assert_eq!(c.simplest(), 0.0);
        let c = FloatConstraints {
            min: 1.5,
            max: 7.5,
            allow_nan: false,
            width: 64,
        };
        assert_eq!(c.simplest(), 2.0);
    }
}
