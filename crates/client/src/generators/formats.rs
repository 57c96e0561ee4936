//! Formatted strings from the engine's format schemas: emails, URLs, domains,
//! IP addresses, ISO dates, times and datetimes, UUIDs.
//!
//! The engine builds each value from choices with the structure of the
//! format (labels of a domain, fields of a date), so they shrink to simple,
//! valid values such as `0@A.com` or `2000-01-01`.

use super::Generator;
use crate::test_case::TestCase;
use geist_engine::Value;
use geist_engine::generate::Schema;
use std::sync::OnceLock;

/// Strings of one format.
#[derive(Clone, Debug)]
pub struct FormatGenerator {
    kind: &'static str,
    options: Vec<(&'static str, i128)>,
    schema: OnceLock<Result<Schema, String>>,
}

fn format(kind: &'static str) -> FormatGenerator {
    FormatGenerator {
        kind,
        options: Vec::new(),
        schema: OnceLock::new(),
    }
}

/// Email addresses (RFC 5322 addr-spec with a dot-atom local part).
pub fn emails() -> FormatGenerator {
    format("email")
}

/// `http` and `https` URLs (RFC 3986).
pub fn urls() -> FormatGenerator {
    format("url")
}

/// Domain names (RFC 1035); see [`FormatGenerator::max_length`].
pub fn domains() -> FormatGenerator {
    format("domain")
}

/// IP addresses as text, v4 or v6; see [`FormatGenerator::version`].
pub fn ip_addresses() -> FormatGenerator {
    format("ip_address")
}

/// ISO 8601 dates, `YYYY-MM-DD`.
pub fn dates() -> FormatGenerator {
    format("date")
}

/// ISO 8601 times, `HH:MM:SS[.ffffff]`.
pub fn times() -> FormatGenerator {
    format("time")
}

/// ISO 8601 datetimes, `YYYY-MM-DDTHH:MM:SS[.ffffff]`.
pub fn datetimes() -> FormatGenerator {
    format("datetime")
}

/// UUIDs as text (lower-case, hyphenated); see [`FormatGenerator::version`].
pub fn uuids() -> FormatGenerator {
    format("uuid")
}

impl FormatGenerator {
    fn option(mut self, key: &'static str, value: i128) -> Self {
        self.options.retain(|(k, _)| *k != key);
        self.options.push((key, value));
        self.schema = OnceLock::new();
        self
    }

    /// Domains: longest name (4 to 255).
    pub fn max_length(self, n: usize) -> Self {
        self.option("max_length", n as i128)
    }

    /// Domains: longest label (1 to 63).
    pub fn max_element_length(self, n: usize) -> Self {
        self.option("max_element_length", n as i128)
    }

    /// IP addresses: 4 or 6; UUIDs: 1 to 5.
    pub fn version(self, version: u8) -> Self {
        self.option("version", i128::from(version))
    }

    /// The Hegel schema map of this format.
    fn schema_map(&self) -> Value {
        let mut map = vec![(Value::text("type"), Value::text(self.kind))];
        for (key, value) in &self.options {
            map.push((Value::text(key), Value::Integer(*value)));
        }
        Value::Map(map)
    }

    fn build(&self) -> Result<Schema, String> {
        Schema::parse(&self.schema_map()).map_err(|e| format!("{}: {e}", self.kind))
    }
}

impl Generator for FormatGenerator {
    type Output = String;

    fn generate(&self, tc: &mut TestCase) -> String {
        super::text::draw_string(
            tc,
            self.schema.get_or_init(|| self.build()),
            &|| self.schema_map(),
            self.kind,
        )
    }
}
