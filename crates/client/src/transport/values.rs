//! Values on the wire: schemas out, generated values back.
//!
//! Schemas are built as engine values by the generators (the same maps the
//! engine parses in-process) and sent as CBOR with plain text strings. Replies
//! are decoded defensively: a value of the wrong type or out of the requested
//! bounds is a protocol error naming the command, never a panic. Values and
//! schemas go to and from CBOR through [`geist_protocol::values`], which
//! reads either Hegel string tag or plain text, whatever version the server
//! announced.

use geist_engine::choice::{FloatConstraints, IntegerConstraints};
use geist_wire::cbor::{self, Value as Cbor};

/// An integer beyond `i128`: a sign and a magnitude (wire values are choices
/// shifted by their shrink target, which can span 2^128).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WideInteger {
    /// Whether the value is below zero.
    pub(crate) negative: bool,
    /// The absolute value.
    pub(crate) magnitude: u128,
}

impl WideInteger {
    /// `a - b` exactly.
    pub(crate) fn difference(a: i128, b: i128) -> WideInteger {
        if a >= b {
            WideInteger {
                negative: false,
                magnitude: (a as u128).wrapping_sub(b as u128),
            }
        } else {
            WideInteger {
                negative: true,
                magnitude: (b as u128).wrapping_sub(a as u128),
            }
        }
    }

    /// `base + self`, if it fits an `i128`.
    pub(crate) fn offset(self, base: i128) -> Option<i128> {
        let sum = if self.negative {
            (base as u128).wrapping_sub(self.magnitude) as i128
        } else {
            (base as u128).wrapping_add(self.magnitude) as i128
        };
        // Wrapping arithmetic is exact when the true result is in range,
        // which holds iff moving from `base` went the right way.
        let consistent = if self.negative {
            sum <= base
        } else {
            sum >= base
        };
        (consistent && WideInteger::difference(sum, base) == self).then_some(sum)
    }

    /// As CBOR: a plain integer within 64 bits, a bignum beyond.
    pub(crate) fn to_cbor(self) -> Cbor {
        if self.negative {
            // CBOR negatives carry n = -1 - value = magnitude - 1.
            let n = self.magnitude - 1;
            if u64::try_from(n).is_ok() {
                // Within CBOR's native range: -2^64 <= value < 0.
                cbor::integer(-(self.magnitude as i128))
            } else {
                cbor::bignum(true, n)
            }
        } else {
            match u64::try_from(self.magnitude) {
                Ok(small) => Cbor::Integer(small.into()),
                Err(_) => cbor::bignum(false, self.magnitude),
            }
        }
    }

    /// From CBOR (plain or bignum), if it is an integer within ±2^128.
    pub(crate) fn from_cbor(value: &Cbor) -> Option<WideInteger> {
        match value {
            Cbor::Integer(i) => {
                let n = i128::from(*i);
                Some(WideInteger::difference(n, 0))
            }
            Cbor::Tag(tag @ (cbor::TAG_POSITIVE_BIGNUM | cbor::TAG_NEGATIVE_BIGNUM), inner) => {
                let Cbor::Bytes(bytes) = inner.as_ref() else {
                    return None;
                };
                let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
                let significant = &bytes[first..];
                if significant.len() > 16 {
                    return None;
                }
                let n = significant
                    .iter()
                    .fold(0u128, |acc, b| (acc << 8) | u128::from(*b));
                if *tag == cbor::TAG_POSITIVE_BIGNUM {
                    Some(WideInteger {
                        negative: false,
                        magnitude: n,
                    })
                } else {
                    // -1 - n: magnitude n + 1, which must fit.
                    n.checked_add(1).map(|magnitude| WideInteger {
                        negative: true,
                        magnitude,
                    })
                }
            }
            _ => None,
        }
    }
}

/// The `integer` schema for a choice: bounds relative to the shrink target,
/// so the server's "simplest is zero" is the engine's simplest value.
pub(crate) fn integer_schema(c: &IntegerConstraints) -> Cbor {
    let mut map = vec![("type", Cbor::Text("integer".into()))];
    if let Some(min) = c.min {
        map.push((
            "min_value",
            WideInteger::difference(min, c.shrink_towards).to_cbor(),
        ));
    }
    if let Some(max) = c.max {
        map.push((
            "max_value",
            WideInteger::difference(max, c.shrink_towards).to_cbor(),
        ));
    }
    cbor::text_map(map)
}

/// The choice a generated integer stands for, if it is one `c` permits.
pub(crate) fn integer_choice(c: &IntegerConstraints, value: &Cbor) -> Option<i128> {
    let choice = WideInteger::from_cbor(value)?.offset(c.shrink_towards)?;
    let in_bounds = c.min.is_none_or(|m| choice >= m) && c.max.is_none_or(|m| choice <= m);
    in_bounds.then_some(choice)
}

/// The `float` schema for a float choice: finite bounds are sent as bounds,
/// an infinite end as "infinity allowed".
pub(crate) fn float_schema(c: &FloatConstraints) -> Cbor {
    let mut map = vec![
        ("type", Cbor::Text("float".into())),
        ("width", cbor::integer(i128::from(c.width))),
        ("allow_nan", Cbor::Bool(c.allow_nan)),
        (
            "allow_infinity",
            Cbor::Bool(c.min == f64::NEG_INFINITY || c.max == f64::INFINITY),
        ),
    ];
    // Without infinity the engine bounds an unbounded float by the largest
    // finite value of its width; those are no bounds to send (Hypothesis
    // refuses NaN alongside any bound).
    let largest = if c.width == 32 {
        f64::from(f32::MAX)
    } else {
        f64::MAX
    };
    if c.min.is_finite() && c.min != -largest {
        map.push(("min_value", Cbor::Float(c.min)));
    }
    if c.max.is_finite() && c.max != largest {
        map.push(("max_value", Cbor::Float(c.max)));
    }
    cbor::text_map(map)
}

/// The `boolean` schema (`p` is sent when it is not one half).
pub(crate) fn boolean_schema(p: f64) -> Cbor {
    let mut schema = vec![("type", Cbor::Text("boolean".into()))];
    if p != 0.5 {
        schema.push(("p", Cbor::Float(p)));
    }
    cbor::text_map(schema)
}

/// Whether a generated float is one `c` permits.
pub(crate) fn float_permitted(c: &FloatConstraints, v: f64) -> bool {
    if v.is_nan() {
        return c.allow_nan;
    }
    v >= c.min && v <= c.max
}

/// Text from a generated string value (either tag, or plain text).
pub(crate) fn text_of(value: &Cbor) -> Option<String> {
    match value {
        Cbor::Text(t) => Some(t.clone()),
        Cbor::Tag(cbor::TAG_HEGEL_STRING | cbor::TAG_REFERENCE_STRING, inner) => {
            match inner.as_ref() {
                Cbor::Bytes(b) => String::from_utf8(b.clone()).ok(),
                Cbor::Text(t) => Some(t.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_integers_round_trip_through_cbor() {
        for (a, b) in [
            (0i128, 0i128),
            (5, -3),
            (-3, 5),
            (i128::MAX, i128::MIN),
            (i128::MIN, i128::MAX),
            (i128::MIN, 0),
            (u64::MAX as i128 + 1, 0),
            (-(u64::MAX as i128) - 1, 0),
            (-(u64::MAX as i128) - 2, 0),
        ] {
            let d = WideInteger::difference(a, b);
            let back = WideInteger::from_cbor(&d.to_cbor()).unwrap();
            assert_eq!(back, d, "{a} - {b}");
            assert_eq!(back.offset(b), Some(a), "{a} - {b}");
        }
    }

    #[test]
    fn u128_bounds_are_sent_as_their_values() {
        // u128 choices are shifted by 2^127 and shrink toward i128::MIN.
        let c = IntegerConstraints {
            min: Some(i128::MIN),
            max: Some(i128::MAX),
            shrink_towards: i128::MIN,
        };
        let schema = integer_schema(&c);
        assert_eq!(
            WideInteger::from_cbor(cbor::map_get(&schema, "min_value").unwrap()),
            Some(WideInteger::difference(0, 0))
        );
        let max = WideInteger::from_cbor(cbor::map_get(&schema, "max_value").unwrap()).unwrap();
        assert_eq!(max.magnitude, u128::MAX);
        assert_eq!(integer_choice(&c, &cbor::integer(0)), Some(i128::MIN));
    }

    #[test]
    fn out_of_bounds_and_wrong_types_are_refused() {
        let c = IntegerConstraints::bounded(0, 10);
        assert_eq!(integer_choice(&c, &cbor::integer(11)), None);
        assert_eq!(integer_choice(&c, &Cbor::Text("3".into())), None);
        assert_eq!(integer_choice(&c, &cbor::integer(10)), Some(10));
    }

    #[test]
    fn finite_unbounded_floats_send_no_bounds() {
        for (width, largest) in [(64u8, f64::MAX), (32, f64::from(f32::MAX))] {
            let c = FloatConstraints {
                min: -largest,
                max: largest,
                allow_nan: true,
                width,
            };
            let schema = float_schema(&c);
            assert_eq!(cbor::map_get(&schema, "min_value"), None);
            assert_eq!(cbor::map_get(&schema, "max_value"), None);
            assert_eq!(
                cbor::map_get(&schema, "allow_infinity"),
                Some(&Cbor::Bool(false))
            );
        }
        let bounded = FloatConstraints {
            min: 0.5,
            max: f64::INFINITY,
            allow_nan: false,
            width: 64,
        };
        let schema = float_schema(&bounded);
        assert_eq!(cbor::map_get(&schema, "min_value"), Some(&Cbor::Float(0.5)));
        assert_eq!(
            cbor::map_get(&schema, "allow_infinity"),
            Some(&Cbor::Bool(true))
        );
    }

    #[test]
    fn strings_decode_under_both_tags() {
        let bytes = Cbor::Bytes(b"hi".to_vec());
        for tag in [cbor::TAG_HEGEL_STRING, cbor::TAG_REFERENCE_STRING] {
            assert_eq!(
                text_of(&Cbor::Tag(tag, Box::new(bytes.clone()))).as_deref(),
                Some("hi")
            );
        }
        assert_eq!(text_of(&Cbor::Text("x".into())).as_deref(), Some("x"));
        assert_eq!(text_of(&Cbor::Integer(3.into())), None);
    }
}
