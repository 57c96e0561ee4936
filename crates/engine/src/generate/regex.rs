//! Strings matching a regular expression. (Being written; see the engine issue.)

use super::schema::SchemaError;
use crate::charset::CharSet;
use crate::data::{StopTest, TestData};
use crate::value::Value;
use std::sync::Arc;

/// A parsed regex schema.
#[derive(Debug)]
pub struct RegexSchema {
    _fullmatch: bool,
}

impl RegexSchema {
    /// Parses a pattern.
    pub fn parse(
        _pattern: &str,
        fullmatch: bool,
        _alphabet: Option<Arc<CharSet>>,
    ) -> Result<RegexSchema, SchemaError> {
        Ok(RegexSchema { _fullmatch: fullmatch })
    }

    /// Generates a matching string.
    pub fn generate(&self, data: &mut TestData) -> Result<Value, StopTest> {
        Err(data.reject())
    }
}
