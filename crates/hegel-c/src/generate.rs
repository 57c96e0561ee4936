//! The primitive draws: booleans, integers (64-bit and wide), floats, bytes,
//! dates and times, UUIDs and IP addresses. Each is one or a few engine
//! choices, so it replays exactly and shrinks with the engine's shrinker.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::test_case::{handle, hegel_test_case_t, with_handle};
use crate::text;
use geist_engine::TestData;
use geist_engine::choice::{IntegerConstraints, PreparedIntegerConstraints, SizeConstraints};
use geist_engine::generate::FloatSpec;

/// The default maximum of text and bytes for a minimum size.
pub fn default_max_size(min_size: u64) -> u64 {
    if min_size > 100 { min_size + 100 } else { 100 }
}

/// Resolves a `max_size` argument (`HEGEL_MAX_SIZE_DEFAULT`, `UINT64_MAX`
/// for none, else explicit) and checks it against `min_size`.
pub fn size_bounds(min_size: u64, max_size: u64) -> AbiResult<(usize, usize)> {
    let max = match max_size {
        HEGEL_MAX_SIZE_DEFAULT => default_max_size(min_size),
        other => other,
    };
    if max < min_size {
        return Err(AbiError::arg(format!(
            "max_size {max} is below min_size {min_size}"
        )));
    }
    let min = usize::try_from(min_size)
        .map_err(|_| AbiError::arg(format!("min_size {min_size} is too large")))?;
    Ok((min, usize::try_from(max).unwrap_or(usize::MAX)))
}

fn draw_u64(data: &mut TestData) -> AbiResult<u64> {
    Ok(data.draw_integer(IntegerConstraints::bounded(0, i128::from(u64::MAX)))? as u64)
}

/// Draws a boolean.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_boolean(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    p: f64,
    forced: bool,
    has_forced: bool,
    out_value: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| {
            require(out_value, "out_value")?;
            if !(0.0..=1.0).contains(&p) {
                return Err(AbiError::arg(format!("p must be in [0, 1], got {p}")));
            }
            let value = tc.draw(|data| {
                Ok(if has_forced {
                    data.force_boolean(p, forced)?
                } else {
                    data.draw_boolean(p)?
                })
            })?;
            write(out_value, value, "out_value")
        })
    })
}

/// Draws an integer in `[min_value, max_value]`.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_integer(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min_value: i64,
    max_value: i64,
    out_value: *mut i64,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(
            tc,
            #[inline(always)]
            |tc| {
                require(out_value, "out_value")?;
                if max_value < min_value {
                    return Err(AbiError::arg(format!(
                        "max_value {max_value} is below min_value {min_value}"
                    )));
                }
                let c = PreparedIntegerConstraints::bounded_i64(min_value, max_value);
                let value = tc.draw(
                    #[inline(always)]
                    |data| Ok(data.draw_prepared_integer(&c)? as i64),
                )?;
                write(out_value, value, "out_value")
            },
        )
    })
}

/// A wide integer bound: in `[-2^127, 2^128)`, held as i128 when it fits and
/// as u128 above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wide {
    Signed(i128),
    High(u128),
}

/// Reads a two's-complement little-endian integer.
fn read_wide(bytes: &[u8], what: &str) -> AbiResult<Wide> {
    if bytes.is_empty() {
        return Err(AbiError::arg(format!("{what} is empty")));
    }
    let negative = bytes[bytes.len() - 1] & 0x80 != 0;
    let fill = if negative { 0xff } else { 0x00 };
    // Significant bytes: strip sign fill from the top.
    let mut len = bytes.len();
    while len > 1 && bytes[len - 1] == fill && (bytes[len - 2] & 0x80 != 0) == negative {
        len -= 1;
    }
    let too_wide = || {
        AbiError::arg(format!(
            "{what} is outside [-2^127, 2^128): geist's engine draws integers of at most 128 bits"
        ))
    };
    if len > 17 || (len == 17 && (negative || bytes[16] != 0)) {
        return Err(too_wide());
    }
    let mut buf = [fill; 16];
    buf[..len.min(16)].copy_from_slice(&bytes[..len.min(16)]);
    let unsigned = u128::from_le_bytes(buf);
    if negative {
        Ok(Wide::Signed(unsigned as i128))
    } else if unsigned > i128::MAX as u128 {
        Ok(Wide::High(unsigned))
    } else {
        Ok(Wide::Signed(unsigned as i128))
    }
}

/// Writes `value` as two's complement, sign-filled to the buffer's end;
/// returns the minimal length.
fn write_wide(value: Wide, out: &mut [u8]) -> AbiResult<usize> {
    let (bytes, negative) = match value {
        Wide::Signed(v) => (v.to_le_bytes(), v < 0),
        Wide::High(v) => (v.to_le_bytes(), false),
    };
    let fill = if negative { 0xff } else { 0x00 };
    let mut len = 16;
    while len > 1 && bytes[len - 1] == fill && (bytes[len - 2] & 0x80 != 0) == negative {
        len -= 1;
    }
    // A positive value with its top bit set needs a zero byte above it.
    let needs_extra = !negative && bytes[len - 1] & 0x80 != 0;
    let minimal = len + usize::from(needs_extra);
    if out.len() < minimal {
        return Err(AbiError::arg(format!(
            "out_value_cap {} is below the drawn value's {minimal} bytes",
            out.len()
        )));
    }
    out[..len].copy_from_slice(&bytes[..len]);
    for b in &mut out[len..] {
        *b = fill;
    }
    Ok(minimal)
}

const HIGH_SHIFT: u128 = 1 << 127;

/// Draws an integer whose bounds may lie outside the 64-bit range.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_integer_big(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min_value: *const u8,
    min_value_len: usize,
    max_value: *const u8,
    max_value_len: usize,
    out_value: *mut u8,
    out_value_cap: usize,
    out_value_len: *mut usize,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_value_len, "out_value_len")?;
        require(out_value, "out_value")?;
        let slice = |p: *const u8, len: usize, what: &str| -> AbiResult<&[u8]> {
            if p.is_null() {
                return Err(AbiError::arg(format!("{what} is NULL")));
            }
            // SAFETY: `len` readable bytes, by the caller's contract.
            Ok(unsafe { std::slice::from_raw_parts(p, len) })
        };
        let min = read_wide(slice(min_value, min_value_len, "min_value")?, "min_value")?;
        let max = read_wide(slice(max_value, max_value_len, "max_value")?, "max_value")?;
        let value = match (min, max) {
            (Wide::Signed(lo), Wide::Signed(hi)) => {
                if hi < lo {
                    return Err(AbiError::arg("max_value is below min_value"));
                }
                let c = IntegerConstraints::bounded(lo, hi);
                Wide::Signed(tc.draw(|data| Ok(data.draw_integer(c)?))?)
            }
            (Wide::High(_), Wide::Signed(_)) => {
                return Err(AbiError::arg("max_value is below min_value"));
            }
            (Wide::Signed(lo), Wide::High(_)) if lo < 0 => {
                return Err(AbiError::arg(
                    "the range spans more than 2^128 values, beyond geist's 128-bit integer choices",
                ));
            }
            (lo, Wide::High(hi)) => {
                let lo = match lo {
                    Wide::Signed(v) => v as u128,
                    Wide::High(v) => v,
                };
                if hi < lo {
                    return Err(AbiError::arg("max_value is below min_value"));
                }
                // Shift the range down by 2^127 so that it fits in i128; the
                // simplest choice is still the lower bound.
                let shift = |v: u128| (v ^ HIGH_SHIFT) as i128;
                let c = IntegerConstraints {
                    min: Some(shift(lo)),
                    max: Some(shift(hi)),
                    shrink_towards: shift(lo),
                };
                let choice = tc.draw(|data| Ok(data.draw_integer(c)?))?;
                let v = (choice as u128) ^ HIGH_SHIFT;
                if v > i128::MAX as u128 {
                    Wide::High(v)
                } else {
                    Wide::Signed(v as i128)
                }
            }
        };
        // SAFETY: `out_value_cap` writable bytes, by the caller's contract.
        let out = unsafe { std::slice::from_raw_parts_mut(out_value, out_value_cap) };
        let len = write_wide(value, out)?;
        write(out_value_len, len, "out_value_len")
    })
}

/// The inclusive range `hegel_generate_float` draws from, as its
/// documentation reads the arguments: an exclusive bound steps to the next
/// float of the width inward (an excluded infinity to the largest finite
/// float), then without `allow_infinity` an infinite end is the largest
/// finite float of that sign. A range with no float in it is refused.
fn float_range(
    width: u8,
    min_value: f64,
    max_value: f64,
    allow_infinity: bool,
    exclude_min: bool,
    exclude_max: bool,
) -> AbiResult<(f64, f64)> {
    use geist_engine::choice::{max_at_width, next_down_at_width, next_up_at_width};
    let mut lo = min_value;
    let mut hi = max_value;
    if exclude_min {
        if lo == f64::INFINITY {
            return Err(AbiError::arg(
                "InvalidArgument: an exclusive min_value of +infinity leaves no float",
            ));
        }
        lo = next_up_at_width(lo, width);
    }
    if exclude_max {
        if hi == f64::NEG_INFINITY {
            return Err(AbiError::arg(
                "InvalidArgument: an exclusive max_value of -infinity leaves no float",
            ));
        }
        hi = next_down_at_width(hi, width);
    }
    if !allow_infinity {
        if lo == f64::INFINITY || hi == f64::NEG_INFINITY {
            return Err(AbiError::arg(format!(
                "InvalidArgument: allow_infinity=false leaves no float in [{lo}, {hi}]"
            )));
        }
        lo = lo.max(-max_at_width(width));
        hi = hi.min(max_at_width(width));
    }
    if hi < lo || (lo == 0.0 && hi == 0.0 && lo.is_sign_positive() && hi.is_sign_negative()) {
        return Err(AbiError::arg(format!(
            "InvalidArgument: there are no {width}-bit floats in [{min_value}, {max_value}] \
             (exclude_min={exclude_min}, exclude_max={exclude_max})"
        )));
    }
    Ok((lo, hi))
}

/// Draws a float.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_float(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    width: u32,
    min_value: f64,
    max_value: f64,
    allow_nan: bool,
    allow_infinity: bool,
    exclude_min: bool,
    exclude_max: bool,
    smallest_nonzero_magnitude: f64,
    out_value: *mut f64,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| {
            require(out_value, "out_value")?;
            if width != 32 && width != 64 {
                return Err(AbiError::arg(format!(
                    "width must be 32 or 64, got {width}"
                )));
            }
            if !(smallest_nonzero_magnitude > 0.0 && smallest_nonzero_magnitude.is_finite()) {
                return Err(AbiError::arg(format!(
                    "smallest_nonzero_magnitude must be positive and finite, got {smallest_nonzero_magnitude}"
                )));
            }
            if min_value.is_nan() || max_value.is_nan() {
                return Err(AbiError::arg("float bounds must not be NaN"));
            }
            if width == 32 {
                for (bound, name) in [(min_value, "min_value"), (max_value, "max_value")] {
                    if bound.is_finite() && f64::from(bound as f32) != bound {
                        return Err(AbiError::arg(format!(
                            "{name} {bound} is not exactly representable as a 32-bit float"
                        )));
                    }
                }
            }
            let (lo, hi) = float_range(
                width as u8,
                min_value,
                max_value,
                allow_infinity,
                exclude_min,
                exclude_max,
            )?;
            // An infinite end goes as no bound, with infinities allowed.
            let unbounded = !lo.is_finite() || !hi.is_finite();
            let constraints = FloatSpec {
                width: width as u8,
                min: (lo != f64::NEG_INFINITY).then_some(lo),
                max: (hi != f64::INFINITY).then_some(hi),
                exclude_min: false,
                exclude_max: false,
                allow_nan: Some(allow_nan && lo == f64::NEG_INFINITY && hi == f64::INFINITY),
                allow_infinity: Some(unbounded),
            }
            .constraints()
            .map_err(|e| AbiError::arg(e.to_string()))?;
            let value = tc.draw(|data| Ok(data.draw_float(constraints)?))?;
            let value = if value != 0.0 && value.abs() < smallest_nonzero_magnitude {
                // Magnitudes below the smallest permitted one round to zero
                // when it is in range, else out to the smallest magnitude.
                if constraints.min <= 0.0 && 0.0 <= constraints.max {
                    0.0_f64.copysign(value)
                } else {
                    smallest_nonzero_magnitude.copysign(value)
                }
            } else {
                value
            };
            write(out_value, value, "out_value")
        })
    })
}

/// Draws a byte string.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_bytes(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min_size: u64,
    max_size: u64,
    out_result: *mut hegel_generate_bytes_result_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_result, "out_result")?;
        let (min_size, max_size) = size_bounds(min_size, max_size)?;
        let bytes = tc.draw(|data| Ok(data.draw_bytes(SizeConstraints { min_size, max_size })?))?;
        let (data, len) = text::hand_out(bytes);
        write(
            out_result,
            hegel_generate_bytes_result_t { data, len },
            "out_result",
        )
    })
}

/// Frees drawn bytes and zeroes the struct.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_bytes_result_free(
    ctx: *mut hegel_context_t,
    result: *mut hegel_generate_bytes_result_t,
) -> hegel_result_t {
    guard(ctx, || {
        if result.is_null() {
            return Ok(());
        }
        // SAFETY: non-null, pointing at the caller's struct.
        let r = unsafe { &mut *result };
        text::take_back(r.data, r.len, "result")?;
        r.data = std::ptr::null_mut();
        r.len = 0;
        Ok(())
    })
}

/// Frees an owned string and zeroes the struct.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_owned_string_free(
    ctx: *mut hegel_context_t,
    result: *mut hegel_owned_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        if result.is_null() {
            return Ok(());
        }
        // SAFETY: non-null, pointing at the caller's struct.
        let r = unsafe { &mut *result };
        text::take_back(r.data as *mut u8, r.len, "result")?;
        r.data = std::ptr::null();
        r.len = 0;
        Ok(())
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

fn date_days(d: hegel_date_t, what: &str) -> AbiResult<i64> {
    let year = i64::from(d.year);
    if !(-999_999..=999_999).contains(&year)
        || !(1..=12).contains(&d.month)
        || d.day == 0
        || d.day > days_in_month(year, d.month)
    {
        return Err(AbiError::arg(format!(
            "{what} {}-{:02}-{:02} is not a date with year in [-999999, 999999]",
            d.year, d.month, d.day
        )));
    }
    Ok(days_from_civil(year, i64::from(d.month), i64::from(d.day)))
}

fn date_of(days: i64) -> hegel_date_t {
    let (year, month, day) = civil_from_days(days);
    hegel_date_t {
        year: year as i32,
        month,
        day,
    }
}

const NANOS_PER_DAY: i128 = 86_400 * 1_000_000_000;

fn time_nanos(t: hegel_time_t, what: &str) -> AbiResult<i128> {
    if t.hour > 23 || t.minute > 59 || t.second > 59 || t.nanosecond > 999_999_999 {
        return Err(AbiError::arg(format!(
            "{what} {:02}:{:02}:{:02}.{:09} is not a time of day",
            t.hour, t.minute, t.second, t.nanosecond
        )));
    }
    Ok(
        ((i128::from(t.hour) * 60 + i128::from(t.minute)) * 60 + i128::from(t.second))
            * 1_000_000_000
            + i128::from(t.nanosecond),
    )
}

fn time_of(nanos: i128) -> hegel_time_t {
    let seconds = nanos / 1_000_000_000;
    hegel_time_t {
        hour: (seconds / 3600) as u8,
        minute: (seconds / 60 % 60) as u8,
        second: (seconds % 60) as u8,
        nanosecond: (nanos % 1_000_000_000) as u32,
    }
}

/// 2000-01-01, what dates shrink toward.
const Y2K_DAYS: i64 = 10_957;

/// Draws a date.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_date(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min_value: hegel_date_t,
    max_value: hegel_date_t,
    out_value: *mut hegel_date_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_value, "out_value")?;
        let (lo, hi) = (
            date_days(min_value, "min_value")?,
            date_days(max_value, "max_value")?,
        );
        if hi < lo {
            return Err(AbiError::arg("max_value is before min_value"));
        }
        let c = IntegerConstraints {
            min: Some(i128::from(lo)),
            max: Some(i128::from(hi)),
            shrink_towards: i128::from(Y2K_DAYS),
        };
        let days = tc.draw(|data| Ok(data.draw_integer(c)? as i64))?;
        write(out_value, date_of(days), "out_value")
    })
}

/// Draws a time of day.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_time(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min_value: hegel_time_t,
    max_value: hegel_time_t,
    out_value: *mut hegel_time_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_value, "out_value")?;
        let (lo, hi) = (
            time_nanos(min_value, "min_value")?,
            time_nanos(max_value, "max_value")?,
        );
        if hi < lo {
            return Err(AbiError::arg("max_value is before min_value"));
        }
        let nanos = tc.draw(|data| Ok(data.draw_integer(IntegerConstraints::bounded(lo, hi))?))?;
        write(out_value, time_of(nanos), "out_value")
    })
}

/// Draws a naive datetime.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_datetime(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min_value: hegel_datetime_t,
    max_value: hegel_datetime_t,
    out_value: *mut hegel_datetime_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_value, "out_value")?;
        let instant = |v: hegel_datetime_t, what: &str| -> AbiResult<i128> {
            Ok(i128::from(date_days(v.date, what)?) * NANOS_PER_DAY + time_nanos(v.time, what)?)
        };
        let (lo, hi) = (
            instant(min_value, "min_value")?,
            instant(max_value, "max_value")?,
        );
        if hi < lo {
            return Err(AbiError::arg("max_value is before min_value"));
        }
        let c = IntegerConstraints {
            min: Some(lo),
            max: Some(hi),
            shrink_towards: i128::from(Y2K_DAYS) * NANOS_PER_DAY,
        };
        let nanos = tc.draw(|data| Ok(data.draw_integer(c)?))?;
        let days = nanos.div_euclid(NANOS_PER_DAY) as i64;
        let value = hegel_datetime_t {
            date: date_of(days),
            time: time_of(nanos.rem_euclid(NANOS_PER_DAY)),
        };
        write(out_value, value, "out_value")
    })
}

fn write_bytes(out: *mut u8, bytes: &[u8], what: &str) -> AbiResult {
    require(out, what)?;
    // SAFETY: `bytes.len()` writable bytes, by the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
    Ok(())
}

/// Draws a UUID (16 big-endian bytes).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_uuid(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    version: u8,
    has_version: bool,
    out_bytes: *mut u8,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_bytes, "out_bytes")?;
        if has_version && version > 15 {
            return Err(AbiError::arg(format!(
                "version must be a hex nibble (0..=15), got {version}"
            )));
        }
        let (high, low) = tc.draw(|data| Ok((draw_u64(data)?, draw_u64(data)?)))?;
        let mut value = (u128::from(high) << 64) | u128::from(low);
        if has_version {
            value = (value & !(0xf << 76)) | (u128::from(version) << 76);
            value = (value & !(0b11 << 62)) | (0b10 << 62);
        } else if value == 0 {
            value = 1;
        }
        write_bytes(out_bytes, &value.to_be_bytes(), "out_bytes")
    })
}

/// Draws an IPv4 address (4 network-order bytes).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_ipv4(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    out_bytes: *mut u8,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_bytes, "out_bytes")?;
        let c = IntegerConstraints::bounded(0, i128::from(u32::MAX));
        let v = tc.draw(|data| Ok(data.draw_integer(c)? as u32))?;
        write_bytes(out_bytes, &v.to_be_bytes(), "out_bytes")
    })
}

/// Draws an IPv6 address (16 network-order bytes).
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_ipv6(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    out_bytes: *mut u8,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_bytes, "out_bytes")?;
        let (high, low) = tc.draw(|data| Ok((draw_u64(data)?, draw_u64(data)?)))?;
        let v = (u128::from(high) << 64) | u128::from(low);
        write_bytes(out_bytes, &v.to_be_bytes(), "out_bytes")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_integers_round_trip() {
        for v in [
            0i128,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            i128::MAX,
            i128::MIN,
            1 << 70,
        ] {
            let mut out = [0u8; 17];
            let len = write_wide(Wide::Signed(v), &mut out).expect("fits");
            assert_eq!(
                read_wide(&out[..len], "v").expect("reads"),
                Wide::Signed(v),
                "{v}"
            );
            assert_eq!(read_wide(&out, "v").expect("reads"), Wide::Signed(v), "{v}");
        }
        let mut out = [0u8; 17];
        let len = write_wide(Wide::High(u128::MAX), &mut out).expect("fits");
        assert_eq!(len, 17);
        assert_eq!(read_wide(&out, "v").expect("reads"), Wide::High(u128::MAX));
        assert!(read_wide(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "v").is_err());
    }

    #[test]
    fn dates_convert_both_ways() {
        for days in [-719_468 * 2, -1, 0, Y2K_DAYS, 20_000, 2_932_896] {
            let d = date_of(days);
            assert_eq!(date_days(d, "d").expect("valid"), days);
        }
        assert_eq!(
            date_of(Y2K_DAYS),
            hegel_date_t {
                year: 2000,
                month: 1,
                day: 1
            }
        );
        assert!(
            date_days(
                hegel_date_t {
                    year: 2023,
                    month: 2,
                    day: 29
                },
                "d"
            )
            .is_err()
        );
    }
}
