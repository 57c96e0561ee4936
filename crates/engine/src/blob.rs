//! Reproduction blobs: a failure's choices as text a user can paste back.
//!
//! A blob is the example database's encoding of the choice sequence
//! ([`crate::database::encode_choices`]) in standard base64, so it survives a
//! terminal, a CI log or a JSON field. Replaying its choices reproduces the
//! test case exactly. The server's `failure_blobs` and the C ABI's blobs are
//! both this form.

use crate::choice::ChoiceValue;
use base64::Engine;

/// Why a blob could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlobError {
    /// The text is not base64.
    #[error("the blob is not base64: {0}")]
    NotBase64(String),
    /// The bytes are not an encoded choice sequence.
    #[error("the blob is not a geist choice sequence: {0}")]
    NotChoices(String),
}

/// The blob of a choice sequence.
pub fn encode_blob(choices: &[ChoiceValue]) -> String {
    base64::engine::general_purpose::STANDARD.encode(crate::database::encode_choices(choices))
}

/// The choices in a blob (surrounding whitespace is ignored).
pub fn decode_blob(blob: &str) -> Result<Vec<ChoiceValue>, BlobError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .map_err(|e| BlobError::NotBase64(e.to_string()))?;
    crate::database::decode_choices(&bytes).map_err(|e| BlobError::NotChoices(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_round_trips_its_choices() {
        let choices = vec![
            ChoiceValue::Integer(-3),
            ChoiceValue::Boolean(true),
            ChoiceValue::Bytes(vec![0, 255]),
        ];
        let blob = encode_blob(&choices);
        assert_eq!(decode_blob(&format!(" {blob}\n")), Ok(choices));
    }

    #[test]
    fn bad_blobs_say_what_is_wrong() {
        assert!(matches!(
            decode_blob("not base64!"),
            Err(BlobError::NotBase64(_))
        ));
        assert!(matches!(decode_blob("AAAA"), Err(BlobError::NotChoices(_))));
    }
}
