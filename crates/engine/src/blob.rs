//! Reproduction blobs: a failure's choices as text a user can paste back.
//!
//! A blob is the example database's encoding of the choice sequence
//! ([`crate::database::encode_choices`]) in standard base64, so it survives a
//! terminal, a CI log or a JSON field. Replaying its choices reproduces the
//! test case exactly. The server's `failure_blobs` and the C ABI's blobs are
//! both this form.
//!
//! A blob printed by libhegel (hegeltest-c 0.49) also decodes, so a
//! `reproduce_failure` pasted from a run on libhegel keeps working when the
//! frontend moves onto geist's `libhegel_c.so`. Its form, as libhegel's
//! documentation gives it: base64 of a prefix byte and a payload, where
//! prefix 0 is a serialized choice sequence and 1 the zlib compression of
//! one (the serialization: [`crate::database::format`]'s
//! `decode_libhegel_choices`). Prefixes 2 and 3 carry libhegel's
//! nondeterministic replay state, which geist does not have, and are refused
//! with that reason. hegel.h promises a blob only to the version that made
//! it, so replaying a libhegel blob reproduces the failure exactly when
//! geist's generators make the same choices as libhegel's (as a repeat loop
//! does), and otherwise replays as far as the choices fit.

use crate::choice::ChoiceValue;
use base64::Engine;

/// Why a blob could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlobError {
    /// The text is not base64.
    #[error("the blob is not base64: {0}")]
    NotBase64(String),
    /// The bytes are not an encoded choice sequence.
    #[error("the blob is not a choice sequence: {0}")]
    NotChoices(String),
}

/// The blob of a choice sequence.
pub fn encode_blob(choices: &[ChoiceValue]) -> String {
    base64::engine::general_purpose::STANDARD.encode(crate::database::encode_choices(choices))
}

/// The most bytes a compressed libhegel blob may inflate to: a blob is
/// pasted text, and a small one must not unpack into gigabytes.
const MAX_INFLATED: u64 = 64 << 20;

/// The choices in a blob (surrounding whitespace is ignored): a geist blob,
/// or one printed by libhegel.
pub fn decode_blob(blob: &str) -> Result<Vec<ChoiceValue>, BlobError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .map_err(|e| BlobError::NotBase64(e.to_string()))?;
    let not_choices = |e: crate::database::EntryError| BlobError::NotChoices(e.to_string());
    match bytes.split_first() {
        _ if bytes.starts_with(crate::database::format::MAGIC) => {
            crate::database::decode_choices(&bytes).map_err(not_choices)
        }
        Some((0, raw)) => {
            crate::database::format::decode_libhegel_choices(raw).map_err(not_choices)
        }
        Some((1, compressed)) => {
            crate::database::format::decode_libhegel_choices(&inflate(compressed)?)
                .map_err(not_choices)
        }
        Some((prefix @ (2 | 3), _)) => Err(BlobError::NotChoices(format!(
            "a libhegel blob with prefix {prefix} holds libhegel's nondeterministic replay \
             state, which geist cannot replay"
        ))),
        _ => Err(BlobError::NotChoices(
            "neither a geist blob (it starts with GEDB) nor a libhegel blob (prefix 0 or 1)".into(),
        )),
    }
}

/// A libhegel blob's zlib payload, inflated up to [`MAX_INFLATED`] bytes.
fn inflate(compressed: &[u8]) -> Result<Vec<u8>, BlobError> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(compressed)
        .take(MAX_INFLATED + 1)
        .read_to_end(&mut out)
        .map_err(|e| BlobError::NotChoices(format!("a libhegel blob's zlib payload: {e}")))?;
    if out.len() as u64 > MAX_INFLATED {
        return Err(BlobError::NotChoices(format!(
            "a libhegel blob's zlib payload inflates past {MAX_INFLATED} bytes"
        )));
    }
    Ok(out)
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
        for blob in ["Ag==", "Aw==", "BA==", "AXicAAAA"] {
            assert!(
                matches!(decode_blob(blob), Err(BlobError::NotChoices(_))),
                "{blob}"
            );
        }
    }

    /// libhegel's blob of a repeat loop that failed on its second
    /// iteration, as hegeltest 0.51's test_loop replays it: the loop's
    /// minimum (0), "one more?" yes, 50, yes, 100, and the failure marker.
    #[test]
    fn a_compressed_libhegel_blob_decodes() {
        assert_eq!(
            decode_blob("AXicY2MAAi5GEMnICGEYwRgpjAwABskAww=="),
            Ok(vec![
                ChoiceValue::Integer(0),
                ChoiceValue::Boolean(true),
                ChoiceValue::Integer(50),
                ChoiceValue::Boolean(true),
                ChoiceValue::Integer(100),
                ChoiceValue::Boolean(false),
            ])
        );
    }

    /// A raw libhegel blob, written here by its documented layout: every
    /// kind of value, integers at both ends of i128 and sign-extended past it.
    #[test]
    fn a_raw_libhegel_blob_decodes_every_kind() {
        let mut raw = vec![0u8];
        raw.extend_from_slice(&7u32.to_le_bytes());
        let mut integer = |bytes: &[u8]| {
            raw.extend_from_slice(&[0, 10]);
            raw.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            raw.extend_from_slice(bytes);
        };
        integer(&[]);
        integer(&i128::MIN.to_le_bytes());
        let mut long = (-2i128).to_le_bytes().to_vec();
        long.extend_from_slice(&[0xFF; 4]);
        integer(&long);
        raw.extend_from_slice(&[1, 1]);
        raw.push(2);
        raw.extend_from_slice(&(-0.0f64).to_bits().to_le_bytes());
        raw.push(3);
        raw.extend_from_slice(&2u32.to_le_bytes());
        raw.extend_from_slice(&[0, 255]);
        raw.push(4);
        raw.extend_from_slice(&1u32.to_le_bytes());
        raw.extend_from_slice(&0x1F600u32.to_le_bytes());
        let blob = base64::engine::general_purpose::STANDARD.encode(&raw);
        assert_eq!(
            decode_blob(&blob),
            Ok(vec![
                ChoiceValue::Integer(0),
                ChoiceValue::Integer(i128::MIN),
                ChoiceValue::Integer(-2),
                ChoiceValue::Boolean(true),
                ChoiceValue::Float(-0.0),
                ChoiceValue::Bytes(vec![0, 255]),
                ChoiceValue::String(vec![0x1F600]),
            ])
        );
        // An integer past 128 bits, a clone value, an old width sub-tag and
        // every truncation are refused.
        let refused = |raw: &[u8]| {
            let blob = base64::engine::general_purpose::STANDARD.encode(raw);
            matches!(decode_blob(&blob), Err(BlobError::NotChoices(_)))
        };
        let mut wide = vec![0u8, 1, 0, 0, 0, 0, 10, 17, 0, 0, 0];
        wide.extend_from_slice(&[0; 16]);
        wide.push(1);
        assert!(refused(&wide));
        assert!(refused(&[0, 1, 0, 0, 0, 5, 0, 0, 0, 0]));
        assert!(refused(&[0, 1, 0, 0, 0, 0, 3, 7]));
        for cut in 1..raw.len() {
            assert!(refused(&raw[..cut]), "prefix of {cut} bytes");
        }
    }

    /// Damaged blobs of both forms (bytes flipped, cut, inserted) and random
    /// bytes never panic, and whatever decodes survives a round trip
    /// through geist's own blob.
    #[test]
    fn damaged_blobs_are_refused_or_round_trip() {
        use rand::{Rng, SeedableRng};
        let engine = base64::engine::general_purpose::STANDARD;
        let seeds: Vec<Vec<u8>> = [
            encode_blob(&[
                ChoiceValue::Integer(-3),
                ChoiceValue::Float(1.5),
                ChoiceValue::String(vec![0x41, 0x1F600]),
            ]),
            "AXicY2MAAi5GEMnICGEYwRgpjAwABskAww==".to_string(),
            "AAIAAAAACgEAAAAHAQE=".to_string(),
        ]
        .iter()
        .map(|b| engine.decode(b).unwrap())
        .collect();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(15);
        for round in 0..20_000 {
            let mut bytes = seeds[round % seeds.len()].clone();
            for _ in 0..rng.random_range(1..4) {
                let at = rng.random_range(0..=bytes.len());
                match rng.random_range(0..4) {
                    0 if at < bytes.len() => bytes[at] ^= 1 << rng.random_range(0..8),
                    1 => bytes.truncate(at),
                    2 => bytes.insert(at, rng.random()),
                    _ => bytes = (0..rng.random_range(0..24)).map(|_| rng.random()).collect(),
                }
            }
            if let Ok(choices) = decode_blob(&engine.encode(&bytes)) {
                assert_eq!(decode_blob(&encode_blob(&choices)), Ok(choices));
            }
        }
    }
}
