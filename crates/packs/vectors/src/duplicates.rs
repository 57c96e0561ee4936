//! Duplicate object keys: JSON parsers keep one of them silently (serde_json the
//! last), so a vector with two `class` keys would be checked as one of two
//! documents without a word. [`duplicate_keys`] finds them all, with the JSON
//! pointer of the object holding each.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// A key that occurs more than once in one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateKey {
    /// JSON pointer of the object (`""` for the root).
    pub object: String,
    /// The key.
    pub key: String,
}

/// Every duplicate key in a JSON text (empty when the text is not JSON: other checks say so).
pub fn duplicate_keys(text: &[u8]) -> Vec<DuplicateKey> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let _ = Walker {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut deserializer);
    found
}

struct Walker<'a> {
    path: String,
    found: &'a mut Vec<DuplicateKey>,
}

impl<'de> DeserializeSeed<'de> for Walker<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl<'de> Visitor<'de> for Walker<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            let seed = Walker {
                path: format!("{}/{index}", self.path),
                found: &mut *self.found,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let seed = Walker {
                path: format!("{}/{}", self.path, escape(&key)),
                found: &mut *self.found,
            };
            map.next_value_seed(seed)?;
            if !keys.insert(key.clone()) {
                self.found.push(DuplicateKey {
                    object: self.path.clone(),
                    key,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_duplicates_at_any_depth() {
        let text = br#"{"class": "message", "a": [{"x": 1, "x": 2}], "class": "tipset"}"#;
        assert_eq!(
            duplicate_keys(text),
            vec![
                DuplicateKey {
                    object: "/a/0".to_string(),
                    key: "x".to_string()
                },
                DuplicateKey {
                    object: String::new(),
                    key: "class".to_string()
                },
            ]
        );
        assert!(duplicate_keys(br#"{"a": {"a": 1}, "b": [1, 2]}"#).is_empty());
        assert!(duplicate_keys(b"not json").is_empty());
    }
}
