//! Calldata integers: arbitrary size, but cheap when small.
//!
//! Calldata integers have no size limit, yet almost every integer in real
//! calldata fits in 64 bits. [`Integer`] keeps those inline and only falls back to
//! a heap-allocated [`BigInt`] for the rest, so decoding small nested values does
//! not allocate per number. The representation is normalised (a value that fits
//! in `i64` is always stored inline), so derived equality is value equality.

use num_bigint::{BigInt, BigUint, Sign};
use std::fmt;
use std::str::FromStr;

/// An integer of any size, as carried by Calldata types 1 (`>= 0`) and 2 (`< 0`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Integer(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    /// Every value that fits in an `i64`.
    Small(i64),
    /// Only values outside the `i64` range; boxed so that every [`Value`](super::Value)
    /// stays small (32 bytes).
    Big(Box<BigInt>),
}

/// The text was not a decimal integer (`-?[0-9]+`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a decimal integer: {text:?}")]
pub struct ParseIntegerError {
    /// The text that failed to parse.
    pub text: String,
}

impl Integer {
    /// The integer zero.
    pub const ZERO: Integer = Integer(Repr::Small(0));

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        match &self.0 {
            Repr::Small(v) => Some(*v),
            Repr::Big(_) => None,
        }
    }

    /// The value as a `u64`, if it fits.
    pub fn to_u64(&self) -> Option<u64> {
        match &self.0 {
            Repr::Small(v) => u64::try_from(*v).ok(),
            Repr::Big(b) => u64::try_from(b.as_ref()).ok(),
        }
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        match &self.0 {
            Repr::Small(v) => Some(i128::from(*v)),
            Repr::Big(b) => i128::try_from(b.as_ref()).ok(),
        }
    }

    /// The value as a `u128`, if it fits.
    pub fn to_u128(&self) -> Option<u128> {
        match &self.0 {
            Repr::Small(v) => u128::try_from(*v).ok(),
            Repr::Big(b) => u128::try_from(b.as_ref()).ok(),
        }
    }

    /// The value as a [`BigInt`].
    pub fn to_bigint(&self) -> BigInt {
        match &self.0 {
            Repr::Small(v) => BigInt::from(*v),
            Repr::Big(b) => b.as_ref().clone(),
        }
    }

    /// Whether the value is negative (Calldata type 2).
    pub fn is_negative(&self) -> bool {
        match &self.0 {
            Repr::Small(v) => *v < 0,
            Repr::Big(b) => b.sign() == Sign::Minus,
        }
    }

    /// The Calldata payload: `v` for `v >= 0`, `-v - 1` for `v < 0`, if it fits in `u64`.
    pub(crate) fn small_payload(&self) -> Option<u64> {
        match &self.0 {
            // For negative v, -v-1 == !v, which is non-negative and fits.
            Repr::Small(v) if *v < 0 => Some(!*v as u64),
            Repr::Small(v) => Some(*v as u64),
            Repr::Big(_) => None,
        }
    }

    /// The Calldata payload as a big unsigned number.
    pub(crate) fn big_payload(&self) -> BigUint {
        match &self.0 {
            Repr::Small(_) => BigUint::from(self.small_payload().unwrap_or_default()),
            Repr::Big(b) => {
                if b.sign() == Sign::Minus {
                    // -v - 1 == |v| - 1 for v < 0.
                    b.magnitude() - 1u32
                } else {
                    b.magnitude().clone()
                }
            }
        }
    }

    /// Builds the integer from a Calldata payload and its sign.
    pub(crate) fn from_payload(payload: BigUint, negative: bool) -> Integer {
        if negative {
            Integer::from(-BigInt::from(payload) - 1)
        } else {
            Integer::from(BigInt::from(payload))
        }
    }
}

impl From<BigInt> for Integer {
    fn from(value: BigInt) -> Self {
        match i64::try_from(&value) {
            Ok(small) => Integer(Repr::Small(small)),
            Err(_) => Integer(Repr::Big(Box::new(value))),
        }
    }
}

impl From<&Integer> for BigInt {
    fn from(value: &Integer) -> Self {
        value.to_bigint()
    }
}

macro_rules! from_small {
    ($($t:ty),*) => {$(
        impl From<$t> for Integer {
            fn from(value: $t) -> Self {
                Integer(Repr::Small(i64::from(value)))
            }
        }
    )*};
}
from_small!(i8, i16, i32, i64, u8, u16, u32);

macro_rules! from_wide {
    ($($t:ty),*) => {$(
        impl From<$t> for Integer {
            fn from(value: $t) -> Self {
                match i64::try_from(value) {
                    Ok(small) => Integer(Repr::Small(small)),
                    Err(_) => Integer(Repr::Big(Box::new(BigInt::from(value)))),
                }
            }
        }
    )*};
}
from_wide!(u64, i128, u128, usize, isize);

impl FromStr for Integer {
    type Err = ParseIntegerError;

    /// Parses `-?[0-9]+` (no `+`, no spaces, no underscores).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseIntegerError {
                text: text.to_owned(),
            });
        }
        if let Ok(small) = text.parse::<i64>() {
            return Ok(Integer(Repr::Small(small)));
        }
        BigInt::from_str(text)
            .map(Integer::from)
            .map_err(|_| ParseIntegerError {
                text: text.to_owned(),
            })
    }
}

impl fmt::Display for Integer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Small(v) => fmt::Display::fmt(v, f),
            Repr::Big(b) => fmt::Display::fmt(b, f),
        }
    }
}

impl fmt::Debug for Integer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representation_is_normalised() {
        let via_big = Integer::from(BigInt::from(-5));
        assert_eq!(via_big, Integer::from(-5i32));
        assert_eq!(Integer::from(u64::MAX).to_u64(), Some(u64::MAX));
        assert_eq!(Integer::from(u64::MAX).to_i64(), None);
        assert_eq!(Integer::from(i64::MIN as i128), Integer::from(i64::MIN));
    }

    #[test]
    fn payload_of_negative_values_is_minus_v_minus_one() {
        assert_eq!(Integer::from(-1).small_payload(), Some(0));
        assert_eq!(
            Integer::from(i64::MIN).small_payload(),
            Some(i64::MAX as u64)
        );
        let big = Integer::from(-(1i128 << 64));
        assert_eq!(big.big_payload(), BigUint::from(u64::MAX));
        assert_eq!(Integer::from_payload(BigUint::from(u64::MAX), true), big);
    }

    #[test]
    fn parses_and_prints_decimal() {
        for text in [
            "0",
            "-1",
            "18446744073709551616",
            "-340282366920938463463374607431768211457",
        ] {
            let value: Integer = text.parse().unwrap();
            assert_eq!(value.to_string(), text);
        }
        for bad in ["", "-", "+1", "1.0", " 1", "0x10"] {
            assert!(bad.parse::<Integer>().is_err(), "{bad:?} parsed");
        }
    }
}
