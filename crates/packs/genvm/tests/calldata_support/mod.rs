//! What the differential test needs to know about genlayer-js beyond its answers.
//!
//! The SDK's decoder reads past the end of its input as zero bytes, so some
//! damaged inputs make it loop for minutes; the test must not send those.

/// Whether genlayer-js 1.2.0's decoder would spend more than `budget` steps on
/// `bytes`: it reads past the end as zero bytes (nulls), so a damaged array or map
/// count of 2^40 makes it loop 2^40 times before it notices the input ended.
/// This walk mirrors its control flow, counting declared elements.
pub fn sdk_would_spin(bytes: &[u8], budget: u64) -> bool {
    let mut position = 0usize;
    let mut steps = 0u64;
    walk(bytes, &mut position, &mut steps, budget, 0).is_err()
}

struct TooMuch;

fn sdk_uleb(bytes: &[u8], position: &mut usize) -> (u128, bool) {
    // Returns the value (saturated) and whether it exceeds 64 bits.
    let mut value: u128 = 0;
    let mut shift = 0u32;
    let mut huge = false;
    loop {
        let byte = bytes.get(*position).copied().unwrap_or(0);
        *position = position.saturating_add(1);
        if shift < 120 {
            value |= u128::from(byte & 0x7f) << shift;
        } else if byte & 0x7f != 0 {
            huge = true;
        }
        shift += 7;
        if byte < 0x80 {
            break;
        }
    }
    (value, huge || value > u128::from(u64::MAX))
}

fn walk(
    bytes: &[u8],
    position: &mut usize,
    steps: &mut u64,
    budget: u64,
    depth: usize,
) -> Result<(), TooMuch> {
    *steps += 1;
    if *steps > budget || depth > 5_000 {
        return Err(TooMuch);
    }
    if *position >= bytes.len() {
        // Past the end the SDK reads a zero byte: a null. The loops above count them.
        *position = position.saturating_add(1);
        return Ok(());
    }
    let (head, huge) = sdk_uleb(bytes, position);
    match head {
        0 | 8 | 16 => return Ok(()),
        24 => {
            *position = position.saturating_add(20);
            return Ok(());
        }
        _ => {}
    }
    let rest = head >> 3;
    match head & 7 {
        1 | 2 => Ok(()),
        3 | 4 => {
            *position = position.saturating_add(usize::try_from(rest).unwrap_or(usize::MAX));
            Ok(())
        }
        5 => {
            if huge || rest > u128::from(budget) {
                return Err(TooMuch);
            }
            for _ in 0..rest {
                walk(bytes, position, steps, budget, depth + 1)?;
            }
            Ok(())
        }
        6 => {
            if huge || rest > u128::from(budget) {
                return Err(TooMuch);
            }
            for _ in 0..rest {
                *steps += 1;
                let (length, _) = sdk_uleb(bytes, position);
                *position = position.saturating_add(usize::try_from(length).unwrap_or(usize::MAX));
                walk(bytes, position, steps, budget, depth + 1)?;
            }
            Ok(())
        }
        // The SDK throws on these: it stops at once.
        _ => Ok(()),
    }
}
