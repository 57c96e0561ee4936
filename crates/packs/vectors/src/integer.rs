//! Exact integers from JSON number text.
//!
//! Vectors carry token amounts as JSON numbers far beyond 64 bits (a base fee
//! of ~3e35 attoFIL occurs in the public corpora). A float would silently round
//! them, so integers are read from the number's exact text (serde_json's raw
//! values) into a [`BigInt`]. Exponent and fraction forms are accepted only
//! when they denote an integer exactly (`1e3`, `1.50e2`), never rounded.

use num_bigint::BigInt;
use std::str::FromStr as _;

/// Why JSON number text is not an exact integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntegerError {
    /// The text is not a JSON number at all (e.g. a string or an object).
    #[error("{path}: expected an integer, found {found}")]
    NotANumber {
        /// JSON pointer of the field.
        path: String,
        /// The JSON text found (shortened).
        found: String,
    },
    /// A number with a fractional part (`1.5`, `15e-1`... that is not integral).
    #[error("{path}: {text} is not an integer")]
    Fractional {
        /// JSON pointer of the field.
        path: String,
        /// The number's text.
        text: String,
    },
    /// An exponent so large that the integer would not fit in memory sensibly.
    #[error("{path}: exponent of {text} is out of range")]
    ExponentOutOfRange {
        /// JSON pointer of the field.
        path: String,
        /// The number's text.
        text: String,
    },
    /// An integer that does not fit the field's machine type (e.g. an epoch beyond i64).
    #[error("{path}: {value} does not fit in {target}")]
    OutOfRange {
        /// JSON pointer of the field.
        path: String,
        /// The exact value.
        value: String,
        /// The type it had to fit.
        target: &'static str,
    },
}

impl IntegerError {
    /// JSON pointer of the field at fault.
    pub fn path(&self) -> &str {
        match self {
            IntegerError::NotANumber { path, .. }
            | IntegerError::Fractional { path, .. }
            | IntegerError::ExponentOutOfRange { path, .. }
            | IntegerError::OutOfRange { path, .. } => path,
        }
    }
}

/// The largest decimal exponent accepted; far above any token amount.
const MAX_EXPONENT: u32 = 1000;

/// Parses JSON number text (as serde_json's `RawValue` keeps it) into an exact integer.
pub fn parse_exact(text: &str, path: &str) -> Result<BigInt, IntegerError> {
    let text = text.trim();
    let not_a_number = || IntegerError::NotANumber {
        path: path.to_string(),
        found: text.chars().take(40).collect(),
    };
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || (mantissa.contains('.') && !all_digits(fraction)) {
        return Err(not_a_number());
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if !all_digits(digits) {
                return Err(not_a_number());
            }
            let magnitude: i64 = digits
                .parse()
                .map_err(|_| IntegerError::ExponentOutOfRange {
                    path: path.to_string(),
                    text: text.to_string(),
                })?;
            if e.starts_with('-') {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    // value = digits * 10^(exponent - len(fraction))
    let mut digits = format!("{whole}{fraction}");
    let shift = exponent - fraction.len() as i64;
    if shift < 0 {
        let drop = shift.unsigned_abs() as usize;
        let cut = digits.len().saturating_sub(drop);
        if digits[cut..].bytes().any(|b| b != b'0') {
            return Err(IntegerError::Fractional {
                path: path.to_string(),
                text: text.to_string(),
            });
        }
        digits.truncate(cut);
        if digits.is_empty() {
            digits.push('0');
        }
    } else if shift > 0 {
        if shift > i64::from(MAX_EXPONENT) {
            return Err(IntegerError::ExponentOutOfRange {
                path: path.to_string(),
                text: text.to_string(),
            });
        }
        digits.extend(std::iter::repeat_n('0', shift as usize));
    }
    let magnitude = BigInt::from_str(&digits).map_err(|_| not_a_number())?;
    Ok(if negative { -magnitude } else { magnitude })
}

/// Parses JSON number text into an exact `i64` (epochs, exit codes, gas).
pub fn parse_i64(text: &str, path: &str) -> Result<i64, IntegerError> {
    let value = parse_exact(text, path)?;
    i64::try_from(&value).map_err(|_| IntegerError::OutOfRange {
        path: path.to_string(),
        value: value.to_string(),
        target: "a 64-bit signed integer",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_beyond_64_bits_are_exact() {
        let basefee = "279014228834788509210911";
        assert_eq!(parse_exact(basefee, "/b").unwrap().to_string(), basefee);
        let huge = "300000000000000000000000000000000001";
        assert_eq!(parse_exact(huge, "/b").unwrap().to_string(), huge);
        assert_eq!(parse_exact("-42", "/b").unwrap(), BigInt::from(-42));
    }

    #[test]
    fn integral_exponent_and_fraction_forms_are_accepted_exactly() {
        assert_eq!(parse_exact("1e3", "/x").unwrap(), BigInt::from(1000));
        assert_eq!(parse_exact("1.50e2", "/x").unwrap(), BigInt::from(150));
        assert_eq!(
            parse_exact("3e35", "/x").unwrap().to_string(),
            format!("3{}", "0".repeat(35))
        );
        assert_eq!(parse_exact("2.0", "/x").unwrap(), BigInt::from(2));
        assert_eq!(parse_exact("0.0", "/x").unwrap(), BigInt::from(0));
    }

    #[test]
    fn fractions_and_non_numbers_are_errors_naming_the_path() {
        assert_eq!(
            parse_exact("1.5", "/preconditions/basefee")
                .unwrap_err()
                .to_string(),
            "/preconditions/basefee: 1.5 is not an integer"
        );
        assert!(matches!(
            parse_exact("15e-2", "/x"),
            Err(IntegerError::Fractional { .. })
        ));
        assert!(matches!(
            parse_exact("\"12\"", "/x"),
            Err(IntegerError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_exact("1e99999", "/x"),
            Err(IntegerError::ExponentOutOfRange { .. })
        ));
        assert!(matches!(
            parse_i64("9223372036854775808", "/x"),
            Err(IntegerError::OutOfRange { .. })
        ));
        assert_eq!(parse_i64("-9223372036854775808", "/x").unwrap(), i64::MIN);
    }
}
