//! Differential test: geist's lazily pack against the published `lazily` crate (0.61.0, feature `ipc`).
//!
//! For generated messages both implementations must write byte-identical JSON
//! and both must decode what the other wrote. For near-miss inputs (a valid
//! message with one thing changed) both must agree on whether it decodes,
//! except for the documented leniencies of lazily, which must each show up.
//! A disagreement is written out as a fixture (for messages geist accepts)
//! under `target/lazily-disagreements/` (or `$GEIST_RECORD_DIR`).
//!
//! Messages come from the pack's generators driven by a seeded choice stream;
//! `lazily_geist_differential.rs` holds the same checks driven by
//! `geist::check`, which also shrinks a disagreement to a minimal message.

use geist_fixtures::json::Json;
use geist_fixtures::{Runner, record_fixture, write_fixture};
use geist_lazily::generate::{SeededChoices, draw_message};
use geist_lazily::mutate::{Leniency, draw_mutation, lazily_leniency};
use geist_lazily::{IpcMessage, LazilyPack, decode, encode};
use std::collections::BTreeMap;
use std::path::PathBuf;

const MESSAGES: usize = 10_000;

fn record_dir() -> PathBuf {
    std::env::var_os("GEIST_RECORD_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/lazily-disagreements"),
        PathBuf::from,
    )
}

/// Writes a message both sides disagree on as a fixture, and says where.
fn record_disagreement(message: &IpcMessage, what: &str, index: usize) -> String {
    let dir = record_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return format!("(could not create {})", dir.display());
    }
    let path = dir.join(format!("disagreement_{index}.json"));
    let wire = match geist_fixtures::json::parse(&encode(message)) {
        Ok(wire) => wire,
        Err(error) => return format!("(not recordable: {error})"),
    };
    let runner = Runner::new().with_pack(LazilyPack);
    match record_fixture(
        &runner,
        &path.display().to_string(),
        &format!("Differential disagreement with lazily 0.61.0: {what}"),
        message.kind(),
        1,
        vec![("wire".to_string(), wire)],
    ) {
        Ok(fixture) => match write_fixture(&fixture, &path) {
            Ok(()) => format!("recorded as {}", path.display()),
            Err(error) => format!("({error})"),
        },
        Err(error) => format!("(not recordable: {error})"),
    }
}

#[test]
fn generated_messages_encode_identically_and_cross_decode() {
    let mut choices = SeededChoices::new(0x6c61_7a69);
    for index in 0..MESSAGES {
        let message = draw_message(&mut choices);
        let ours = encode(&message);
        let theirs_decoded = match lazily::IpcMessage::decode_json_for_test(&ours) {
            Ok(decoded) => decoded,
            Err(error) => panic!(
                "lazily rejects geist's encoding of message {index}: {error}\n{}\n{}",
                String::from_utf8_lossy(&ours),
                record_disagreement(&message, "lazily rejects geist's encoding", index)
            ),
        };
        let theirs = serde_json::to_vec(&theirs_decoded).unwrap_or_default();
        assert!(
            theirs == ours,
            "message {index}: lazily re-encodes differently\n geist:  {}\n lazily: {}\n{}",
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            record_disagreement(&message, "different bytes", index)
        );
        // And geist decodes lazily's bytes back to the same message.
        assert_eq!(decode(&theirs).as_ref(), Ok(&message), "message {index}");
    }
}

#[test]
fn near_miss_inputs_decode_alike_except_documented_leniencies() {
    let mut choices = SeededChoices::new(0x6e65_6172);
    let mut agreements = 0usize;
    let mut leniencies: BTreeMap<Leniency, usize> = BTreeMap::new();
    for index in 0..MESSAGES {
        let message = draw_message(&mut choices);
        let (document, mutation) = draw_mutation(&mut choices, &message);
        let bytes = document.to_compact();
        let ours = decode(&bytes);
        let theirs = lazily::IpcMessage::decode_json_for_test(&bytes);
        if ours.is_ok() == theirs.is_ok() {
            agreements += 1;
            if let (Ok(ours), Ok(theirs)) = (&ours, &theirs) {
                // Accepted by both: the canonical forms agree too.
                assert_eq!(
                    encode(ours),
                    serde_json::to_vec(theirs).unwrap_or_default(),
                    "input {index}"
                );
            }
            continue;
        }
        let explained = lazily_leniency(&mutation);
        match (explained, &ours, &theirs) {
            (Some(leniency), Err(_), Ok(_)) => *leniencies.entry(leniency).or_default() += 1,
            _ => panic!(
                "input {index}: geist {} but lazily {}; mutation {mutation:?}\n input: {}\n geist says: {:?}\n lazily says: {:?}",
                if ours.is_ok() { "accepts" } else { "rejects" },
                if theirs.is_ok() { "accepts" } else { "rejects" },
                String::from_utf8_lossy(&bytes),
                ours.as_ref().err(),
                theirs.as_ref().err().map(ToString::to_string),
            ),
        }
    }
    println!("agreements: {agreements}, documented leniencies: {leniencies:?}");
    for leniency in [
        Leniency::NodeIdBeyondSafeInteger,
        Leniency::UnknownFieldIgnored,
        Leniency::ProtocolExtension,
    ] {
        assert!(
            leniencies.contains_key(&leniency),
            "the documented leniency {leniency:?} was never observed: is it still true of lazily 0.61.0? ({leniencies:?})"
        );
    }
    assert!(
        agreements > MESSAGES / 2,
        "too few agreements: {agreements}"
    );
}

#[test]
fn fixture_wires_decode_alike_in_both() {
    let dir = geist_pack::data::shared_path("lazily-conformance");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        let Ok(document) = geist_fixtures::json::parse(&bytes) else {
            panic!("{} does not parse", entry.path().display());
        };
        let Some(wire) = document.get("wire") else {
            continue;
        };
        let wire: &Json = wire;
        let compact = wire.to_compact();
        let theirs = lazily::IpcMessage::decode_json_for_test(&compact)
            .map(|m| serde_json::to_vec(&m).unwrap_or_default());
        let ours = decode(&compact).map(|m| encode(&m));
        assert_eq!(theirs.ok(), ours.ok(), "{}", entry.path().display());
        checked += 1;
    }
    assert_eq!(checked, 7, "expected the 7 message fixtures");
}

/// lazily's JSON decoding entry point without its `ffi` feature: plain serde_json,
/// exactly what `IpcMessage::decode_json` does.
trait DecodeJsonForTest: Sized {
    fn decode_json_for_test(bytes: &[u8]) -> Result<Self, serde_json::Error>;
}

impl DecodeJsonForTest for lazily::IpcMessage {
    fn decode_json_for_test(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}
