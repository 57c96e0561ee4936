//! Engine values to and from CBOR payload values, once for both sides.
//!
//! Reading is lenient about strings: plain text and either Hegel string tag
//! (6 over UTF-8 in the reference document, 91 over WTF-8 bytes from
//! protocol 0.10) become strings. Bignums within 128 bits become integers;
//! wider ones, and any other tag, pass through as tagged values. Writing
//! chooses how strings go out: generated values carry the version's string
//! tag (surrogates survive), schemas go as plain text.

use crate::version::{Behaviour, ProtocolVersion};
use geist_engine::{HealthCheck, Value};
use geist_wire::cbor::{self, Value as Cbor};

/// How strings are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringForm {
    /// CBOR text (invalid UTF-8, i.e. surrogates, is replaced): for schemas,
    /// which every version reads as text.
    Text,
    /// The given tag over a byte string of the string's WTF-8 bytes: for
    /// generated values (see [`StringForm::generated`]).
    Tagged(u64),
}

impl StringForm {
    /// How `version` writes generated strings.
    pub fn generated(version: ProtocolVersion) -> StringForm {
        if version.has(Behaviour::HegelStringTag) {
            StringForm::Tagged(cbor::TAG_HEGEL_STRING)
        } else {
            StringForm::Tagged(cbor::TAG_REFERENCE_STRING)
        }
    }
}

/// A CBOR value as an engine value.
pub fn from_cbor(value: &Cbor) -> Value {
    match value {
        Cbor::Null => Value::Null,
        Cbor::Bool(b) => Value::Bool(*b),
        Cbor::Integer(i) => Value::Integer(i128::from(*i)),
        Cbor::Float(f) => Value::Float(*f),
        Cbor::Bytes(b) => Value::Bytes(b.clone()),
        Cbor::Text(t) => Value::String(t.as_bytes().to_vec()),
        Cbor::Array(items) => Value::Array(items.iter().map(from_cbor).collect()),
        Cbor::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| (from_cbor(k), from_cbor(v)))
                .collect(),
        ),
        Cbor::Tag(tag @ (cbor::TAG_POSITIVE_BIGNUM | cbor::TAG_NEGATIVE_BIGNUM), inner) => {
            match cbor::as_big_integer(value) {
                Some(n) => Value::from_big_integer(n),
                None => Value::Tagged(*tag, Box::new(from_cbor(inner))),
            }
        }
        Cbor::Tag(cbor::TAG_HEGEL_STRING | cbor::TAG_REFERENCE_STRING, inner) => {
            match inner.as_ref() {
                Cbor::Bytes(b) => Value::String(b.clone()),
                Cbor::Text(t) => Value::String(t.as_bytes().to_vec()),
                other => from_cbor(other),
            }
        }
        Cbor::Tag(tag, inner) => Value::Tagged(*tag, Box::new(from_cbor(inner))),
        _ => Value::Null,
    }
}

/// An engine value as CBOR, strings written as `strings` says.
pub fn to_cbor(value: &Value, strings: StringForm) -> Cbor {
    match value {
        Value::Null => Cbor::Null,
        Value::Bool(b) => Cbor::Bool(*b),
        Value::Integer(n) => cbor::integer(*n),
        Value::BigInteger(n) => cbor::big_integer(n),
        Value::Float(f) => Cbor::Float(*f),
        Value::Bytes(b) => Cbor::Bytes(b.clone()),
        Value::String(b) => match strings {
            StringForm::Text => Cbor::Text(String::from_utf8_lossy(b).into_owned()),
            StringForm::Tagged(tag) => Cbor::Tag(tag, Box::new(Cbor::Bytes(b.clone()))),
        },
        Value::Array(items) => Cbor::Array(items.iter().map(|v| to_cbor(v, strings)).collect()),
        Value::Map(entries) => Cbor::Map(
            entries
                .iter()
                .map(|(k, v)| (to_cbor(k, strings), to_cbor(v, strings)))
                .collect(),
        ),
        Value::Tagged(tag, inner) => Cbor::Tag(*tag, Box::new(to_cbor(inner, strings))),
    }
}

/// The Hegel name of a health check (what `suppress_health_check` lists and
/// what a failed run's `health_check_failure` names).
pub fn health_check_name(check: HealthCheck) -> &'static str {
    match check {
        HealthCheck::FilterTooMuch => "filter_too_much",
        HealthCheck::TooSlow => "too_slow",
        HealthCheck::TestCasesTooLarge => "test_cases_too_large",
        HealthCheck::LargeInitialTestCase => "large_initial_test_case",
    }
}

/// The health check with a Hegel name.
pub fn health_check_named(name: &str) -> Option<HealthCheck> {
    HealthCheck::ALL
        .into_iter()
        .find(|check| health_check_name(*check) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        Value::Map(vec![
            (Value::text("n"), Value::Integer(-(1 << 100))),
            (
                Value::text("xs"),
                Value::Array(vec![
                    Value::Null,
                    Value::Bool(true),
                    Value::Float(0.5),
                    Value::Bytes(vec![1, 2]),
                ]),
            ),
            (Value::text("s"), Value::String(vec![0xED, 0xA0, 0x80])),
        ])
    }

    #[test]
    fn generated_values_round_trip_in_every_version() {
        for version in crate::version::SUPPORTED_VERSIONS {
            let form = StringForm::generated(*version);
            let wire = cbor::decode(&cbor::encode(&to_cbor(&sample(), form))).unwrap();
            assert_eq!(from_cbor(&wire), sample(), "{version}");
        }
    }

    #[test]
    fn string_tags_follow_the_version_and_schemas_are_text() {
        let s = Value::text("a");
        let old = ProtocolVersion::parse("0.1").unwrap();
        let new = ProtocolVersion::parse("0.15").unwrap();
        assert!(matches!(
            to_cbor(&s, StringForm::generated(old)),
            Cbor::Tag(cbor::TAG_REFERENCE_STRING, _)
        ));
        assert!(matches!(
            to_cbor(&s, StringForm::generated(new)),
            Cbor::Tag(cbor::TAG_HEGEL_STRING, _)
        ));
        assert_eq!(to_cbor(&s, StringForm::Text), Cbor::Text("a".into()));
    }

    #[test]
    fn wide_bignums_round_trip_and_unknown_tags_pass_through() {
        let wide = cbor::bignum(false, u128::MAX);
        let value = from_cbor(&wide);
        assert!(matches!(value, Value::BigInteger(_)), "{value:?}");
        assert_eq!(to_cbor(&value, StringForm::Text), wide);
        let tagged = Cbor::Tag(1, Box::new(Cbor::Integer(5.into())));
        let value = from_cbor(&tagged);
        assert_eq!(to_cbor(&value, StringForm::Text), tagged);
    }
}
