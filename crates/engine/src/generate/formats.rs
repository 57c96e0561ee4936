//! Standard string formats: emails, URLs, domains, IP addresses, dates, times,
//! datetimes and UUIDs. (Being written; see the engine issue.)

use super::schema::SchemaError;
use crate::data::{StopTest, TestData};
use crate::value::Value;

/// A format schema.
#[derive(Clone, Debug)]
pub enum FormatSchema {
    /// An email address (RFC 5322 addr-spec).
    Email,
}

impl FormatSchema {
    /// Parses a format schema of type `kind`; `Ok(None)` if `kind` is not a format.
    pub fn parse(kind: &str, _map: &Value) -> Result<Option<FormatSchema>, SchemaError> {
        match kind {
            "email" => Ok(Some(FormatSchema::Email)),
            _ => Ok(None),
        }
    }

    /// Generates a value.
    pub fn generate(&self, data: &mut TestData) -> Result<Value, StopTest> {
        Err(data.reject())
    }
}
