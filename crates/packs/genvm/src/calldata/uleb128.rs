//! ULEB128 numbers, the only number format Calldata uses.
//!
//! Every value head, length and count is one unsigned LEB128 number: 7 bits per
//! byte, least significant group first, the high bit set on every byte but the
//! last. The canonical form is the shortest one, so a strict reader refuses a
//! final zero group (`80 00` for 0). Heads of integers can be arbitrarily long;
//! lengths and counts must fit in 64 bits.

use num_bigint::BigUint;

/// Appends `value` in minimal ULEB128.
#[inline]
pub(crate) fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `value` in minimal ULEB128.
#[inline]
pub(crate) fn write_u128(out: &mut Vec<u8>, mut value: u128) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `value` in minimal ULEB128.
pub(crate) fn write_biguint(out: &mut Vec<u8>, value: &BigUint) {
    let digits = value.to_radix_le(128);
    let last = digits.len().saturating_sub(1);
    for (index, digit) in digits.iter().enumerate() {
        out.push(if index < last { digit | 0x80 } else { *digit });
    }
}

/// A ULEB128 number that has been scanned but not yet widened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scanned<'a> {
    /// The bytes of the number, the last one without a continuation bit.
    pub bytes: &'a [u8],
    /// The value, if it fits in 64 bits.
    pub small: Option<u64>,
}

/// Why a ULEB128 number could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// The input ended before a byte without a continuation bit.
    Unterminated,
    /// The number ends with a zero group, so a shorter form exists.
    NonMinimal,
}

/// Scans one minimal ULEB128 number starting at `input[0]`.
#[inline(always)]
pub(crate) fn scan(input: &[u8]) -> Result<Scanned<'_>, ScanError> {
    // Fast path, inlined: one byte, which is every small head and length.
    match input.first() {
        Some(&byte) if byte < 0x80 => Ok(Scanned {
            bytes: &input[..1],
            small: Some(u64::from(byte)),
        }),
        _ => scan_long(input),
    }
}

/// The rest of [`scan`]: numbers of two bytes or more, and the errors.
#[inline(never)]
fn scan_long(input: &[u8]) -> Result<Scanned<'_>, ScanError> {
    // Up to 9 bytes (63 bits) widen as they are read: every length and almost
    // every integer head. Longer numbers and errors take the general path.
    let mut value = 0u64;
    for (index, &byte) in input.iter().take(9).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte < 0x80 {
            if byte == 0 && index > 0 {
                return Err(ScanError::NonMinimal);
            }
            return Ok(Scanned {
                bytes: &input[..=index],
                small: Some(value),
            });
        }
    }
    scan_wide(input)
}

/// Numbers of ten bytes or more, and unterminated input.
#[cold]
#[inline(never)]
fn scan_wide(input: &[u8]) -> Result<Scanned<'_>, ScanError> {
    let Some(end) = input.iter().position(|&byte| byte < 0x80) else {
        return Err(ScanError::Unterminated);
    };
    let bytes = &input[..=end];
    if bytes[end] == 0 {
        return Err(ScanError::NonMinimal);
    }
    let small = if bytes.len() <= 9 {
        let mut value = 0u64;
        for (index, byte) in bytes.iter().enumerate() {
            value |= u64::from(byte & 0x7f) << (7 * index);
        }
        Some(value)
    } else if bytes.len() == 10 && bytes[9] == 1 {
        // 9 full groups (63 bits) plus a final group holding only bit 63.
        let mut value = 0u64;
        for (index, byte) in bytes[..9].iter().enumerate() {
            value |= u64::from(byte & 0x7f) << (7 * index);
        }
        Some(value | (1 << 63))
    } else {
        None
    };
    Ok(Scanned { bytes, small })
}

/// Widens a scanned number of any length.
pub(crate) fn to_biguint(bytes: &[u8]) -> BigUint {
    let digits: Vec<u8> = bytes.iter().map(|byte| byte & 0x7f).collect();
    BigUint::from_radix_le(&digits, 128).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_boundaries() {
        for value in [0u64, 1, 127, 128, 16383, 16384, u64::MAX >> 1, u64::MAX] {
            let mut out = Vec::new();
            write_u64(&mut out, value);
            let scanned = scan(&out).unwrap();
            assert_eq!(scanned.bytes.len(), out.len());
            assert_eq!(scanned.small, Some(value), "{value}");
            assert_eq!(to_biguint(&out), BigUint::from(value));
            let mut wide = Vec::new();
            write_biguint(&mut wide, &BigUint::from(value));
            assert_eq!(wide, out);
        }
    }

    #[test]
    fn beyond_64_bits_is_not_small() {
        let mut out = Vec::new();
        write_u128(&mut out, 1u128 << 64);
        let scanned = scan(&out).unwrap();
        assert_eq!(scanned.small, None);
        assert_eq!(to_biguint(scanned.bytes), BigUint::from(1u128 << 64));
    }

    #[test]
    fn refuses_non_minimal_and_unterminated() {
        assert_eq!(scan(&[0x80, 0x00]).unwrap_err(), ScanError::NonMinimal);
        assert_eq!(scan(&[0xff, 0x80]).unwrap_err(), ScanError::Unterminated);
        assert_eq!(scan(&[]).unwrap_err(), ScanError::Unterminated);
        assert_eq!(scan(&[0x00]).unwrap().small, Some(0));
    }
}
