//! Generator schemas: parsing and validating the Hegel schema maps.
//!
//! Validation follows Hypothesis' argument rules (bounds ordered, NaN and
//! infinity only where they can occur, sizes consistent) so that a client sees
//! the same usage errors whichever server it talks to. Errors name the schema
//! field and are reported to the client as `InvalidArgument`.

use super::formats::FormatSchema;
use super::regex::RegexSchema;
use crate::charset::{CharSet, CharSetSpec};
use crate::choice::{
    FloatConstraints, IntegerConstraints, PreparedIntegerConstraints, max_at_width,
    next_down_at_width, next_up_at_width, round_to_width,
};
use crate::value::Value;
use std::sync::Arc;

/// A schema the client sent that cannot be used.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{message}")]
pub struct SchemaError {
    /// What was wrong, naming the field.
    pub message: String,
}

impl SchemaError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> SchemaError {
        SchemaError {
            message: message.into(),
        }
    }
}

/// A parsed, validated schema.
#[derive(Clone, Debug)]
pub enum Schema {
    /// Always this value.
    Constant(Value),
    /// One of these values.
    SampledFrom(Vec<Value>),
    /// A value from one of these schemas, reported as `[index, value]`.
    OneOf(Vec<Schema>),
    /// A value from one of these schemas, reported bare (the value alone):
    /// what `one_of` answered before `[index, value]` (see
    /// [`Schema::report_one_of_bare`]).
    OneOfBare(Vec<Schema>),
    /// Null.
    Null,
    /// A boolean, true with probability `p` during generation.
    Boolean {
        /// Probability of true.
        p: f64,
    },
    /// An integer (its constraints prepared to be drawn with).
    Integer(PreparedIntegerConstraints),
    /// A non-negative integer whose upper bound lies beyond i128 (up to
    /// 2^128 - 1): drawn as a choice shifted down by 2^127, so that the
    /// choice's simplest value is still the integer 0 (or the lower bound).
    WideInteger(IntegerConstraints),
    /// A float.
    Float(FloatConstraints),
    /// A string.
    String {
        /// Permitted characters.
        alphabet: Arc<CharSet>,
        /// Minimum length in code points.
        min_size: usize,
        /// Maximum length in code points.
        max_size: Option<usize>,
    },
    /// A byte string.
    Binary {
        /// Minimum length.
        min_size: usize,
        /// Maximum length.
        max_size: Option<usize>,
    },
    /// A string matching a regular expression.
    Regex(Arc<RegexSchema>),
    /// A list.
    List {
        /// Element schema.
        elements: Box<Schema>,
        /// Minimum length.
        min_size: usize,
        /// Maximum length.
        max_size: Option<usize>,
        /// Whether elements are distinct.
        unique: bool,
    },
    /// A dict, reported as `[[k, v], ...]` with distinct keys.
    Dict {
        /// Key schema.
        keys: Box<Schema>,
        /// Value schema.
        values: Box<Schema>,
        /// Minimum entries.
        min_size: usize,
        /// Maximum entries.
        max_size: Option<usize>,
    },
    /// A fixed-length array, one schema per position.
    Tuple(Vec<Schema>),
    /// Emails, URLs, domains, IP addresses, dates, times, datetimes, UUIDs.
    Format(FormatSchema),
    /// A fraction `[numerator, denominator]`.
    Fraction {
        /// Lower bound as (numerator, denominator).
        min: Option<(i128, i128)>,
        /// Upper bound as (numerator, denominator).
        max: Option<(i128, i128)>,
        /// Largest denominator.
        max_denominator: Option<i128>,
    },
    /// A value valid under a JSON Schema.
    JsonSchema(Arc<super::json_schema::JsonSchema>),
    /// A complex number `[real, imag]`.
    Complex {
        /// Largest magnitude.
        max_magnitude: Option<f64>,
        /// Smallest magnitude.
        min_magnitude: f64,
        /// Whether NaN parts may appear.
        allow_nan: bool,
        /// Whether infinite parts may appear.
        allow_infinity: bool,
        /// 32, 64 or 128 (total width of both parts).
        width: u8,
        /// Whether a part may be subnormal (at its width).
        allow_subnormal: bool,
    },
}

fn field<'a>(map: &'a Value, key: &str) -> Option<&'a Value> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(v) => Some(v),
    }
}

fn int_field(map: &Value, key: &str) -> Result<Option<i128>, SchemaError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::Integer(i)) => Ok(Some(*i)),
        Some(Value::Float(f)) if f.fract() == 0.0 && f.abs() < 1e30 => Ok(Some(*f as i128)),
        Some(Value::BigInteger(_)) => Err(SchemaError::new(format!(
            "{key} is outside the 128-bit range geist supports for integer bounds"
        ))),
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be an integer, got {}",
            other.type_name()
        ))),
    }
}

/// A non-negative integer bound beyond `i128` that fits in 128 unsigned bits.
fn wide_bound(map: &Value, key: &str) -> Option<u128> {
    match field(map, key) {
        Some(Value::BigInteger(n)) => u128::try_from(n).ok(),
        _ => None,
    }
}

/// The offset between a wide integer and its choice.
pub const WIDE_OFFSET: u128 = 1 << 127;

fn parse_wide_integer(map: &Value) -> Result<Option<Schema>, SchemaError> {
    let Some(max) = wide_bound(map, "max_value") else {
        return Ok(None);
    };
    if max <= i128::MAX as u128 {
        return Ok(None);
    }
    let min: u128 = match field(map, "min_value") {
        Some(Value::Integer(i)) if *i >= 0 => *i as u128,
        Some(Value::Integer(i)) => {
            return Err(SchemaError::new(format!(
                "min_value={i} with max_value={max}: ranges wider than 2^128 are not supported yet"
            )));
        }
        Some(_) => match wide_bound(map, "min_value") {
            Some(m) => m,
            None => return Err(SchemaError::new("min_value must be an integer")),
        },
        None => {
            return Err(SchemaError::new(format!(
                "max_value={max} with no min_value: ranges wider than 2^128 are not supported yet"
            )));
        }
    };
    if max < min {
        return Err(SchemaError::new(format!(
            "Cannot have max_value < min_value (min_value={min}, max_value={max})"
        )));
    }
    let shift = |v: u128| v.wrapping_sub(WIDE_OFFSET) as i128;
    Ok(Some(Schema::WideInteger(IntegerConstraints {
        min: Some(shift(min)),
        max: Some(shift(max)),
        shrink_towards: shift(min),
    })))
}

fn size_field(map: &Value, key: &str) -> Result<Option<usize>, SchemaError> {
    match int_field(map, key)? {
        None => Ok(None),
        Some(n) if n < 0 => Err(SchemaError::new(format!("{key}={n} must be non-negative"))),
        Some(n) => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
    }
}

fn float_field(map: &Value, key: &str) -> Result<Option<f64>, SchemaError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::Float(f)) => Ok(Some(*f)),
        Some(Value::Integer(i)) => Ok(Some(*i as f64)),
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be a number, got {}",
            other.type_name()
        ))),
    }
}

fn bool_field(map: &Value, key: &str) -> Result<Option<bool>, SchemaError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be a boolean, got {}",
            other.type_name()
        ))),
    }
}

fn text_field(map: &Value, key: &str) -> Result<Option<String>, SchemaError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::String(b)) => String::from_utf8(b.clone())
            .map(Some)
            .map_err(|_| SchemaError::new(format!("{key} must be valid UTF-8"))),
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be a string, got {}",
            other.type_name()
        ))),
    }
}

fn text_list_field(map: &Value, key: &str) -> Result<Option<Vec<String>>, SchemaError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| SchemaError::new(format!("{key} must be a list of strings")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be a list of strings, got {}",
            other.type_name()
        ))),
    }
}

fn sizes(map: &Value) -> Result<(usize, Option<usize>), SchemaError> {
    let min = size_field(map, "min_size")?.unwrap_or(0);
    let max = size_field(map, "max_size")?;
    if let Some(max) = max
        && max < min
    {
        return Err(SchemaError::new(format!(
            "Cannot have max_size < min_size (min_size={min}, max_size={max})"
        )));
    }
    Ok((min, max))
}

fn schema_field(map: &Value, key: &str) -> Result<Schema, SchemaError> {
    match map.get(key) {
        Some(v) => Schema::parse(v),
        None => Err(SchemaError::new(format!("missing required field {key:?}"))),
    }
}

fn schema_list(map: &Value, key: &str) -> Result<Vec<Schema>, SchemaError> {
    match map.get(key) {
        Some(Value::Array(items)) => items.iter().map(Schema::parse).collect(),
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be an array of schemas, got {}",
            other.type_name()
        ))),
        None => Err(SchemaError::new(format!("missing required field {key:?}"))),
    }
}

/// Parses the character options of a string schema (or a regex alphabet).
pub fn parse_charset(map: &Value) -> Result<CharSet, SchemaError> {
    let to_u32 = |v: Option<i128>, key: &str| -> Result<Option<u32>, SchemaError> {
        v.map(|n| {
            u32::try_from(n)
                .ok()
                .filter(|n| *n <= crate::charset::MAX_CODEPOINT)
                .ok_or_else(|| SchemaError::new(format!("{key}={n} is not a valid code point")))
        })
        .transpose()
    };
    let spec = CharSetSpec {
        codec: text_field(map, "codec")?,
        min_codepoint: to_u32(int_field(map, "min_codepoint")?, "min_codepoint")?,
        max_codepoint: to_u32(int_field(map, "max_codepoint")?, "max_codepoint")?,
        categories: text_list_field(map, "categories")?,
        exclude_categories: text_list_field(map, "exclude_categories")?,
        include_characters: text_field(map, "include_characters")?,
        exclude_characters: text_field(map, "exclude_characters")?,
        unicode_version: text_field(map, "unicode_version")?
            .map(|v| crate::unicode::UnicodeVersion::parse(&v))
            .transpose()
            .map_err(|e| SchemaError::new(e.to_string()))?,
    };
    if let (Some(include), Some(exclude)) = (&spec.include_characters, &spec.exclude_characters) {
        let mut both: Vec<char> = include.chars().filter(|c| exclude.contains(*c)).collect();
        both.sort_unstable();
        both.dedup();
        if !both.is_empty() {
            let both: String = both.into_iter().collect();
            return Err(SchemaError::new(format!(
                "Characters {both:?} are present in both include_characters and exclude_characters"
            )));
        }
    }
    if let Some(cats) = &spec.categories
        && cats.iter().any(|c| c == "Cs" || c == "C")
    {
        let which = if cats.iter().any(|c| c == "Cs") {
            "Cs"
        } else {
            "C"
        };
        return Err(SchemaError::new(format!(
            "categories={cats:?}: {which:?} includes surrogate codepoints, which are not valid in strings"
        )));
    }
    CharSet::from_spec(&spec).map_err(|e| SchemaError::new(e.to_string()))
}

fn parse_float(map: &Value) -> Result<Schema, SchemaError> {
    let width = match int_field(map, "width")? {
        None | Some(64) => 64u8,
        Some(32) => 32,
        Some(16) => 16,
        Some(w) => {
            return Err(SchemaError::new(format!("width={w} must be 16, 32 or 64")));
        }
    };
    FloatSpec {
        width,
        min: float_field(map, "min_value")?,
        max: float_field(map, "max_value")?,
        exclude_min: bool_field(map, "exclude_min")?.unwrap_or(false),
        exclude_max: bool_field(map, "exclude_max")?.unwrap_or(false),
        allow_nan: bool_field(map, "allow_nan")?,
        allow_infinity: bool_field(map, "allow_infinity")?,
    }
    .constraints()
    .map(Schema::Float)
}

/// The fields of a float schema, typed: what a caller with the arguments in
/// hand (the C ABI's `hegel_generate_float`) validates without building and
/// parsing a schema map on every draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatSpec {
    /// 16, 32 or 64.
    pub width: u8,
    /// `min_value`, if given.
    pub min: Option<f64>,
    /// `max_value`, if given.
    pub max: Option<f64>,
    /// `exclude_min`.
    pub exclude_min: bool,
    /// `exclude_max`.
    pub exclude_max: bool,
    /// `allow_nan`, if given (else: only when unbounded).
    pub allow_nan: Option<bool>,
    /// `allow_infinity`, if given (else: unless both bounds are given).
    pub allow_infinity: Option<bool>,
}

impl FloatSpec {
    /// Validates the fields by Hypothesis' rules and returns the choice
    /// constraints they describe: exactly what parsing the same fields as a
    /// `{"type": "float", ...}` schema gives.
    pub fn constraints(&self) -> Result<FloatConstraints, SchemaError> {
        let FloatSpec {
            width,
            min,
            max,
            exclude_min,
            exclude_max,
            allow_nan,
            allow_infinity,
        } = *self;
        if !matches!(width, 16 | 32 | 64) {
            return Err(SchemaError::new(format!(
                "width={width} must be 16, 32 or 64"
            )));
        }
        if min.is_some_and(f64::is_nan) || max.is_some_and(f64::is_nan) {
            return Err(SchemaError::new(format!(
                "Cannot have max_value < min_value: NaN bounds (min_value={min:?}, max_value={max:?})"
            )));
        }
        if let (Some(lo), Some(hi)) = (min, max)
            && (hi < lo
                || (lo == 0.0 && hi == 0.0 && lo.is_sign_positive() && hi.is_sign_negative()))
        {
            return Err(SchemaError::new(format!(
                "Cannot have max_value < min_value (min_value={lo:?}, max_value={hi:?})"
            )));
        }
        let allow_nan = match allow_nan {
            Some(true) if min.is_some() || max.is_some() => {
                return Err(SchemaError::new(format!(
                    "Cannot have allow_nan=true with min_value or max_value (min_value={min:?}, max_value={max:?})"
                )));
            }
            Some(b) => b,
            None => min.is_none() && max.is_none(),
        };
        let both_finite = min.is_some_and(f64::is_finite) && max.is_some_and(f64::is_finite);
        let allow_infinity = match allow_infinity {
            Some(true) if both_finite => {
                return Err(SchemaError::new(format!(
                    "Cannot have allow_infinity=true with both min_value and max_value (min_value={min:?}, max_value={max:?})"
                )));
            }
            Some(b) => b,
            None => !(min.is_some() && max.is_some()),
        };
        let limit = max_at_width(width);
        let mut lo = min.unwrap_or(if allow_infinity {
            f64::NEG_INFINITY
        } else {
            -limit
        });
        let mut hi = max.unwrap_or(if allow_infinity { f64::INFINITY } else { limit });
        if !allow_infinity {
            if lo == f64::NEG_INFINITY {
                lo = -limit;
            }
            if hi == f64::INFINITY {
                hi = limit;
            }
            if lo == f64::INFINITY || hi == f64::NEG_INFINITY {
                return Err(SchemaError::new(format!(
                    "allow_infinity=false excludes the only value in [{lo:?}, {hi:?}]"
                )));
            }
        }
        if width < 64 {
            // Round the bounds inward to values representable at this width.
            if lo.is_finite() {
                let rounded = round_to_width(lo, width);
                lo = if rounded < lo {
                    next_up_at_width(rounded, width)
                } else {
                    rounded
                };
            }
            if hi.is_finite() {
                let rounded = round_to_width(hi, width);
                hi = if rounded > hi {
                    next_down_at_width(rounded, width)
                } else {
                    rounded
                };
            }
        }
        if exclude_min {
            if min.is_none() {
                return Err(SchemaError::new(
                    "Cannot have exclude_min=true with no min_value",
                ));
            }
            lo = next_up_at_width(lo, width);
        }
        if exclude_max {
            if max.is_none() {
                return Err(SchemaError::new(
                    "Cannot have exclude_max=true with no max_value",
                ));
            }
            hi = next_down_at_width(hi, width);
        }
        if hi < lo || (lo == 0.0 && hi == 0.0 && lo.is_sign_positive() && hi.is_sign_negative()) {
            return Err(SchemaError::new(format!(
                "There are no {width}-bit floats in the interval (min_value={min:?}, max_value={max:?}, exclude_min={exclude_min}, exclude_max={exclude_max})"
            )));
        }
        Ok(FloatConstraints {
            min: lo,
            max: hi,
            allow_nan,
            width,
        })
    }
}

fn parse_fraction_bound(map: &Value, key: &str) -> Result<Option<(i128, i128)>, SchemaError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::Integer(i)) => Ok(Some((*i, 1))),
        Some(Value::Array(parts)) if parts.len() == 2 => match (&parts[0], &parts[1]) {
            (Value::Integer(n), Value::Integer(d)) if *d > 0 => Ok(Some((*n, *d))),
            _ => Err(SchemaError::new(format!(
                "{key} must be [numerator, denominator] with a positive denominator"
            ))),
        },
        Some(Value::Float(f)) if f.is_finite() => {
            // Exact binary fraction of the float.
            let mut d: i128 = 1;
            let mut n = *f;
            while n.fract() != 0.0 && d < (1 << 60) {
                n *= 2.0;
                d *= 2;
            }
            Ok(Some((n as i128, d)))
        }
        Some(Value::String(s)) => {
            let text = String::from_utf8_lossy(s).to_string();
            let parse = |t: &str| t.trim().parse::<i128>().ok();
            match text.split_once('/') {
                Some((a, b)) => match (parse(a), parse(b)) {
                    (Some(n), Some(d)) if d > 0 => Ok(Some((n, d))),
                    _ => Err(SchemaError::new(format!(
                        "{key}={text:?} is not a fraction"
                    ))),
                },
                None => parse(&text)
                    .map(|n| Some((n, 1)))
                    .ok_or_else(|| SchemaError::new(format!("{key}={text:?} is not a fraction"))),
            }
        }
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be a number or fraction, got {}",
            other.type_name()
        ))),
    }
}

impl Schema {
    /// Makes every `one_of` in this schema, however deeply nested, report
    /// its value alone instead of `[index, value]` (for peers that expect the
    /// older reply shape; generation and shrinking are the same).
    pub fn report_one_of_bare(&mut self) {
        match self {
            Schema::OneOf(branches) => {
                branches.iter_mut().for_each(Schema::report_one_of_bare);
                *self = Schema::OneOfBare(std::mem::take(branches));
            }
            Schema::OneOfBare(parts) | Schema::Tuple(parts) => {
                parts.iter_mut().for_each(Schema::report_one_of_bare)
            }
            Schema::List { elements, .. } => elements.report_one_of_bare(),
            Schema::Dict { keys, values, .. } => {
                keys.report_one_of_bare();
                values.report_one_of_bare();
            }
            _ => {}
        }
    }

    /// Parses and validates a schema map.
    pub fn parse(value: &Value) -> Result<Schema, SchemaError> {
        let Value::Map(_) = value else {
            return Err(SchemaError::new(format!(
                "a schema must be a map, got {}",
                value.type_name()
            )));
        };
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| SchemaError::new("schema has no \"type\" string"))?;
        match kind {
            "constant" => {
                Ok(Schema::Constant(value.get("value").cloned().ok_or_else(
                    || SchemaError::new("constant schema requires \"value\""),
                )?))
            }
            "null" | "none" => Ok(Schema::Null),
            "sampled_from" => match value.get("values") {
                Some(Value::Array(items)) if items.is_empty() => {
                    Err(SchemaError::new("sampled_from cannot be empty"))
                }
                Some(Value::Array(items)) => Ok(Schema::SampledFrom(items.clone())),
                _ => Err(SchemaError::new("sampled_from requires a \"values\" array")),
            },
            "one_of" => {
                let generators = schema_list(value, "generators")?;
                if generators.is_empty() {
                    return Err(SchemaError::new("one_of requires at least one generator"));
                }
                Ok(Schema::OneOf(generators))
            }
            "boolean" => {
                let p = float_field(value, "p")?.unwrap_or(0.5);
                if !(0.0..=1.0).contains(&p) {
                    return Err(SchemaError::new(format!("p={p} must be between 0 and 1")));
                }
                Ok(Schema::Boolean { p })
            }
            "integer" => {
                if let Some(wide) = parse_wide_integer(value)? {
                    return Ok(wide);
                }
                let min = int_field(value, "min_value")?;
                let max = int_field(value, "max_value")?;
                if let (Some(lo), Some(hi)) = (min, max)
                    && hi < lo
                {
                    return Err(SchemaError::new(format!(
                        "Cannot have max_value < min_value (min_value={lo}, max_value={hi})"
                    )));
                }
                Ok(Schema::Integer(PreparedIntegerConstraints::new(
                    IntegerConstraints {
                        min,
                        max,
                        shrink_towards: 0,
                    },
                )))
            }
            "float" => parse_float(value),
            "string" => {
                let (min_size, max_size) = sizes(value)?;
                let alphabet = parse_charset(value)?;
                if alphabet.is_empty() && min_size > 0 {
                    return Err(SchemaError::new(format!(
                        "InvalidArgument: no characters satisfy the character options, so no string of min_size={min_size} exists"
                    )));
                }
                Ok(Schema::String {
                    alphabet: Arc::new(alphabet),
                    min_size,
                    max_size,
                })
            }
            "binary" => {
                let (min_size, max_size) = sizes(value)?;
                Ok(Schema::Binary { min_size, max_size })
            }
            "regex" => {
                let pattern = text_field(value, "pattern")?
                    .ok_or_else(|| SchemaError::new("regex schema requires \"pattern\""))?;
                let fullmatch = bool_field(value, "fullmatch")?.unwrap_or(false);
                let alphabet = match field(value, "alphabet") {
                    Some(a @ Value::Map(_)) => Some(Arc::new(parse_charset(a)?)),
                    Some(other) => {
                        return Err(SchemaError::new(format!(
                            "alphabet must be a map of character options, got {}",
                            other.type_name()
                        )));
                    }
                    None => None,
                };
                let mut regex = RegexSchema::parse(&pattern, fullmatch, alphabet)?;
                match field(value, "padding_alphabet") {
                    Some(padding @ Value::Map(_)) => {
                        regex = regex.with_padding(&parse_charset(padding)?);
                    }
                    Some(other) => {
                        return Err(SchemaError::new(format!(
                            "padding_alphabet must be a map of character options, got {}",
                            other.type_name()
                        )));
                    }
                    None => {}
                }
                Ok(Schema::Regex(Arc::new(regex)))
            }
            "list" => {
                let (min_size, max_size) = sizes(value)?;
                let unique = bool_field(value, "unique")?.unwrap_or(false);
                Ok(Schema::List {
                    elements: Box::new(schema_field(value, "elements")?),
                    min_size,
                    max_size,
                    unique,
                })
            }
            "dict" => {
                let (min_size, max_size) = sizes(value)?;
                Ok(Schema::Dict {
                    keys: Box::new(schema_field(value, "keys")?),
                    values: Box::new(schema_field(value, "values")?),
                    min_size,
                    max_size,
                })
            }
            "tuple" => Ok(Schema::Tuple(schema_list(value, "elements")?)),
            "fraction" => {
                let min = parse_fraction_bound(value, "min_value")?;
                let max = parse_fraction_bound(value, "max_value")?;
                let max_denominator = int_field(value, "max_denominator")?;
                if max_denominator.is_some_and(|d| d < 1) {
                    return Err(SchemaError::new("max_denominator must be at least 1"));
                }
                if let (Some((a, b)), Some((c, d))) = (min, max)
                    && a * d > c * b
                {
                    return Err(SchemaError::new(
                        "Cannot have max_value < min_value for fractions",
                    ));
                }
                Ok(Schema::Fraction {
                    min,
                    max,
                    max_denominator,
                })
            }
            "json_schema" => {
                let schema = value
                    .get("schema")
                    .ok_or_else(|| SchemaError::new("json_schema requires a \"schema\""))?;
                Ok(Schema::JsonSchema(Arc::new(
                    super::json_schema::JsonSchema::parse(schema)?,
                )))
            }
            "complex" => {
                let max_magnitude = float_field(value, "max_magnitude")?;
                let min_magnitude = float_field(value, "min_magnitude")?.unwrap_or(0.0);
                if min_magnitude < 0.0 {
                    return Err(SchemaError::new("min_magnitude must be non-negative"));
                }
                if let Some(m) = max_magnitude
                    && m < min_magnitude
                {
                    return Err(SchemaError::new(
                        "Cannot have max_magnitude < min_magnitude",
                    ));
                }
                let allow_infinity =
                    bool_field(value, "allow_infinity")?.unwrap_or(max_magnitude.is_none());
                let allow_nan = bool_field(value, "allow_nan")?.unwrap_or(max_magnitude.is_none());
                let width = match int_field(value, "width")? {
                    None | Some(128) => 128,
                    Some(64) => 64,
                    Some(32) => 32,
                    Some(w) => {
                        return Err(SchemaError::new(format!("width={w} must be 32, 64 or 128")));
                    }
                };
                let allow_subnormal = bool_field(value, "allow_subnormal")?.unwrap_or(true);
                Ok(Schema::Complex {
                    max_magnitude,
                    min_magnitude,
                    allow_nan,
                    allow_infinity,
                    width,
                    allow_subnormal,
                })
            }
            other => match FormatSchema::parse(other, value)? {
                Some(format) => Ok(Schema::Format(format)),
                None => Err(SchemaError::new(format!(
                    "Unsupported schema type {other:?}"
                ))),
            },
        }
    }
}
