//! Schemas to values: every Hegel generator schema, generated through choices.
//!
//! Generation never touches randomness directly: each value is built from
//! choices on a [`TestData`], so it replays exactly and shrinks by shrinking
//! its choices. Composite values open spans so the shrinker sees structure.

pub mod formats;
pub mod json_schema;
pub mod regex;
pub mod schema;

pub use schema::{FloatSpec, Schema, SchemaError};

use crate::choice::{FloatConstraints, IntegerConstraints, SizeConstraints};
use crate::data::{Collection, StopTest, TestData, labels};
use crate::value::Value;

/// The most elements a list reserves room for before it is drawn (its
/// minimum size, up to this).
const MIN_SIZE_RESERVED: usize = 1024;

/// Generates one element of a collection: [`generate`], with the
/// commonest element schemas drawn here, inlined into the collection's loop
/// (a call of `generate` costs more than the integer draw it makes).
#[inline(always)]
fn generate_element(schema: &Schema, data: &mut TestData) -> Result<Value, StopTest> {
    match schema {
        Schema::Integer(c) => Ok(Value::Integer(data.draw_prepared_integer(c)?)),
        other => generate(other, data),
    }
}

/// Generates one value of `schema`.
pub fn generate(schema: &Schema, data: &mut TestData) -> Result<Value, StopTest> {
    match schema {
        Schema::Constant(v) => Ok(v.clone()),
        Schema::Null => Ok(Value::Null),
        Schema::SampledFrom(values) => {
            let i = data.draw_integer(IntegerConstraints::bounded(0, values.len() as i128 - 1))?;
            Ok(values[i as usize].clone())
        }
        Schema::OneOf(schemas) | Schema::OneOfBare(schemas) => {
            data.start_span(labels::ONE_OF);
            let i = data.draw_integer(IntegerConstraints::bounded(0, schemas.len() as i128 - 1))?;
            let v = generate(&schemas[i as usize], data)?;
            data.stop_span(false);
            Ok(match schema {
                Schema::OneOfBare(_) => v,
                _ => Value::Array(vec![Value::Integer(i), v]),
            })
        }
        Schema::Boolean { p } => Ok(Value::Bool(data.draw_boolean(*p)?)),
        Schema::Integer(c) => Ok(Value::Integer(data.draw_prepared_integer(c)?)),
        Schema::WideInteger(c) => {
            let choice = data.draw_integer(*c)?;
            let v = (choice as u128).wrapping_add(schema::WIDE_OFFSET);
            Ok(Value::from_big_integer(num_bigint::BigInt::from(v)))
        }
        Schema::Float(c) => Ok(Value::Float(data.draw_float(*c)?)),
        Schema::String {
            alphabet,
            min_size,
            max_size,
        } => {
            let points = data.draw_string(
                alphabet.clone(),
                SizeConstraints {
                    min_size: *min_size,
                    max_size: max_size.unwrap_or(usize::MAX),
                },
            )?;
            Ok(Value::from_code_points(&points))
        }
        Schema::Binary { min_size, max_size } => {
            Ok(Value::Bytes(data.draw_bytes(SizeConstraints {
                min_size: *min_size,
                max_size: max_size.unwrap_or(usize::MAX),
            })?))
        }
        Schema::Regex(regex) => regex.generate(data),
        Schema::List {
            elements,
            min_size,
            max_size,
            unique: true,
        } if finite_values(elements).is_some() => {
            let values = finite_values(elements).unwrap_or_default();
            unique_sample(data, values, *min_size, *max_size)
        }
        Schema::List {
            elements,
            min_size,
            max_size,
            unique,
        } => {
            data.start_span(labels::COLLECTION);
            let mut collection = Collection::new(*min_size, *max_size);
            let mut out: Vec<Value> = Vec::with_capacity((*min_size).min(MIN_SIZE_RESERVED));
            // The commonest list, of integers not unique, in a loop of its own
            // (the same draws, with no `Result` of a `Value` in between).
            if let (Schema::Integer(c), false) = (&**elements, *unique) {
                collection.integers(data, c, |v| out.push(Value::Integer(v)))?;
            } else {
                while collection.more(data)? {
                    let v = generate_element(elements, data)?;
                    if *unique && out.iter().any(|seen| seen.same_as(&v)) {
                        collection.reject(data)?;
                    } else {
                        out.push(v);
                    }
                }
            }
            data.stop_span(false);
            Ok(Value::Array(out))
        }
        Schema::Dict {
            keys,
            values,
            min_size,
            max_size,
        } => {
            data.start_span(labels::COLLECTION);
            let mut collection = Collection::new(*min_size, *max_size);
            let mut out: Vec<Value> = Vec::new();
            while collection.more(data)? {
                data.start_span(labels::DICT_ENTRY);
                let k = generate(keys, data)?;
                let duplicate = out.iter().any(|entry| match entry {
                    Value::Array(kv) => kv[0].same_as(&k),
                    _ => false,
                });
                if duplicate {
                    data.stop_span(true);
                    collection.reject(data)?;
                    continue;
                }
                let v = generate(values, data)?;
                data.stop_span(false);
                out.push(Value::Array(vec![k, v]));
            }
            data.stop_span(false);
            Ok(Value::Array(out))
        }
        Schema::Tuple(schemas) => {
            data.start_span(labels::TUPLE);
            let mut out = Vec::with_capacity(schemas.len());
            for s in schemas {
                out.push(generate(s, data)?);
            }
            data.stop_span(false);
            Ok(Value::Array(out))
        }
        Schema::Format(format) => format.generate(data),
        Schema::JsonSchema(schema) => schema.generate(data),
        Schema::Fraction {
            min,
            max,
            max_denominator,
        } => fraction(data, *min, *max, *max_denominator),
        Schema::Complex {
            max_magnitude,
            min_magnitude,
            allow_nan,
            allow_infinity,
            width,
            allow_subnormal,
        } => {
            let part_width = width / 2;
            let limit = max_magnitude.unwrap_or(f64::INFINITY);
            let part = FloatConstraints {
                min: if limit.is_finite() {
                    -limit
                } else if *allow_infinity {
                    f64::NEG_INFINITY
                } else {
                    -f64::MAX
                },
                max: if limit.is_finite() {
                    limit
                } else if *allow_infinity {
                    f64::INFINITY
                } else {
                    f64::MAX
                },
                allow_nan: *allow_nan,
                width: part_width,
            };
            data.start_span(labels::TUPLE);
            let mut re = data.draw_float(part)?;
            let mut im = data.draw_float(part)?;
            data.stop_span(false);
            let magnitude = re.hypot(im);
            if limit.is_finite() && magnitude > limit {
                let scale = limit / magnitude;
                re *= scale;
                im *= scale;
            }
            if *min_magnitude > 0.0 && re.hypot(im) < *min_magnitude {
                if re == 0.0 && im == 0.0 {
                    re = *min_magnitude;
                } else {
                    let scale = *min_magnitude / re.hypot(im);
                    re *= scale;
                    im *= scale;
                }
            }
            if !allow_subnormal {
                re = without_subnormal(re, part_width, limit);
                im = without_subnormal(im, part_width, limit);
            }
            Ok(Value::Array(vec![Value::Float(re), Value::Float(im)]))
        }
    }
}

/// `v`, or when it is subnormal at `width` bits (non-zero and below the
/// smallest normal magnitude) the nearest value that is not: the smallest
/// normal of its sign when that stays within `max_magnitude`, else zero of its
/// sign. (Hypothesis' `complex_numbers(allow_subnormal=False)` draws parts
/// from `floats(allow_subnormal=False)`; a part that rounding or the magnitude
/// scaling makes subnormal is moved out of that range here.)
fn without_subnormal(v: f64, width: u8, max_magnitude: f64) -> f64 {
    let smallest_normal = match width {
        16 => half::f16::MIN_POSITIVE.to_f64(),
        32 => f32::MIN_POSITIVE as f64,
        _ => f64::MIN_POSITIVE,
    };
    if v == 0.0 || !v.is_finite() || v.abs() >= smallest_normal {
        v
    } else if smallest_normal <= max_magnitude {
        smallest_normal.copysign(v)
    } else {
        0.0f64.copysign(v)
    }
}

/// Largest finite element domain sampled without replacement.
const MAX_SAMPLED_DOMAIN: i128 = 4096;

/// The values of a small finite element schema, simplest first: a
/// `sampled_from`, or a bounded integer range of at most 4096 values.
fn finite_values(schema: &Schema) -> Option<Vec<Value>> {
    match schema {
        Schema::SampledFrom(values) => {
            // Distinct values only (sampled_from may repeat itself).
            let mut distinct: Vec<Value> = Vec::with_capacity(values.len());
            for v in values {
                if !distinct.iter().any(|seen| seen.same_as(v)) {
                    distinct.push(v.clone());
                }
            }
            Some(distinct)
        }
        Schema::Integer(c) => {
            let c = c.constraints();
            let (min, max) = (c.min?, c.max?);
            if max.checked_sub(min)? >= MAX_SAMPLED_DOMAIN {
                return None;
            }
            let n = (max - min + 1) as u128;
            Some(
                (0..n)
                    .filter_map(|i| c.value_at(i))
                    .map(Value::Integer)
                    .collect(),
            )
        }
        _ => None,
    }
}

/// A unique list drawn from a finite set of values: each element is chosen
/// among the values not yet used, so large unique samples need no rejection.
fn unique_sample(
    data: &mut TestData,
    values: Vec<Value>,
    min_size: usize,
    max_size: Option<usize>,
) -> Result<Value, StopTest> {
    let mut remaining = values;
    if min_size > remaining.len() {
        return Err(data.reject());
    }
    let cap = max_size.unwrap_or(usize::MAX).min(remaining.len());
    data.start_span(labels::COLLECTION);
    let mut collection = Collection::new(min_size, Some(cap));
    let mut out = Vec::new();
    while collection.more(data)? {
        let i = data.draw_integer(IntegerConstraints::bounded(0, remaining.len() as i128 - 1))?;
        out.push(remaining.remove(i as usize));
    }
    data.stop_span(false);
    Ok(Value::Array(out))
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

fn fraction(
    data: &mut TestData,
    min: Option<(i128, i128)>,
    max: Option<(i128, i128)>,
    max_denominator: Option<i128>,
) -> Result<Value, StopTest> {
    data.start_span(labels::TUPLE);
    let denominator_cap = max_denominator.unwrap_or(1 << 20);
    let d = data.draw_integer(IntegerConstraints {
        min: Some(1),
        max: Some(denominator_cap),
        shrink_towards: 1,
    })?;
    // Numerator bounds: ceil(min * d) ..= floor(max * d).
    let lo = min.map(|(n, m)| (n * d).div_euclid(m) + i128::from((n * d).rem_euclid(m) != 0));
    let hi = max.map(|(n, m)| (n * d).div_euclid(m));
    let n = match (lo, hi) {
        (Some(a), Some(b)) if a > b => {
            data.stop_span(false);
            return Err(data.reject());
        }
        _ => data.draw_integer(IntegerConstraints {
            min: lo,
            max: hi,
            shrink_towards: 0,
        })?,
    };
    data.stop_span(false);
    let g = gcd(n, d);
    Ok(Value::Array(vec![
        Value::Integer(n / g),
        Value::Integer(d / g),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::ChoiceValue;
    use crate::data::DEFAULT_MAX_CHOICES;
    use crate::random::Source;

    fn schema(text: &str) -> Schema {
        let mut fields = Vec::new();
        for part in text.split(',') {
            let (key, value) = part.split_once('=').expect("key=value");
            let value = match value {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                v => match v.parse::<i128>() {
                    Ok(i) => Value::Integer(i),
                    Err(_) => match v.parse::<f64>() {
                        Ok(f) => Value::Float(f),
                        Err(_) => Value::String(v.as_bytes().to_vec()),
                    },
                },
            };
            fields.push((Value::String(key.as_bytes().to_vec()), value));
        }
        Schema::parse(&Value::Map(fields)).expect("a valid schema")
    }

    fn values(schema: &Schema, seeds: u64) -> Vec<Value> {
        (0..seeds)
            .map(|seed| {
                let mut data =
                    TestData::generating(vec![], Source::from_seed(seed), DEFAULT_MAX_CHOICES);
                generate(schema, &mut data).expect("a value")
            })
            .collect()
    }

    /// hegel-core generates `float` with `width: 16`: every value is a
    /// half-precision float within the bounds (rounded inward).
    #[test]
    fn width_16_floats_are_half_precision_within_their_bounds() {
        let half = |f: f64| half::f16::from_f64(f).to_f64() == f;
        let unbounded = schema("type=float,width=16");
        let mut seen_fraction = false;
        for v in values(&unbounded, 300) {
            let Value::Float(f) = v else { panic!("{v:?}") };
            assert!(f.is_nan() || half(f), "{f} is not a 16-bit float");
            seen_fraction |= f.is_finite() && f.fract() != 0.0;
        }
        assert!(seen_fraction);
        let bounded = schema("type=float,width=16,min_value=0.1,max_value=0.2");
        for v in values(&bounded, 300) {
            let Value::Float(f) = v else { panic!("{v:?}") };
            assert!(half(f) && (0.1..=0.2).contains(&f), "{f}");
        }
        let finite = schema("type=float,width=16,allow_infinity=false,allow_nan=false");
        for v in values(&finite, 300) {
            let Value::Float(f) = v else { panic!("{v:?}") };
            assert!(f.is_finite() && f.abs() <= 65504.0, "{f}");
        }
        assert!(
            Schema::parse(&Value::Map(vec![
                (
                    Value::String(b"type".to_vec()),
                    Value::String(b"float".to_vec())
                ),
                (Value::String(b"width".to_vec()), Value::Integer(16)),
                (Value::String(b"min_value".to_vec()), Value::Float(70000.0)),
                (
                    Value::String(b"allow_infinity".to_vec()),
                    Value::Bool(false)
                ),
            ]))
            .is_err(),
            "no finite 16-bit float is at least 70000"
        );
    }

    /// `complex` honours `allow_subnormal: false` (Hypothesis'
    /// `complex_numbers`), at every width: choices that make both parts
    /// subnormal give parts that are not.
    #[test]
    fn complex_parts_are_never_subnormal_when_told() {
        for (width, smallest_normal) in [
            (32, half::f16::MIN_POSITIVE.to_f64()),
            (64, f32::MIN_POSITIVE as f64),
            (128, f64::MIN_POSITIVE),
        ] {
            let tiny = smallest_normal / 2.0;
            for allow in [true, false] {
                let s = schema(&format!(
                    "type=complex,width={width},allow_subnormal={allow},max_magnitude=1.0"
                ));
                let choices = vec![ChoiceValue::Float(tiny), ChoiceValue::Float(-tiny)];
                let mut data = TestData::replaying(choices, DEFAULT_MAX_CHOICES);
                let value = generate(&s, &mut data).expect("a value");
                let Value::Array(parts) = value else {
                    panic!("{value:?}")
                };
                let expected = if allow {
                    [tiny, -tiny]
                } else {
                    [smallest_normal, -smallest_normal]
                };
                assert_eq!(
                    parts,
                    expected.map(Value::Float).to_vec(),
                    "width {width}, allow_subnormal={allow}"
                );
            }
        }
    }
}
