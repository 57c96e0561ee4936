//! Differential test against lazily 0.61.0 driven by geist: a disagreement shrinks to a
//! minimal message, which is written as a fixture under `target/lazily-disagreements/`.

mod lazily_geist_support;

use geist::{Settings, TestCase, check};
use geist_fixtures::{Runner, json, record_fixture, write_fixture};
use geist_lazily::generate::draw_message;
use geist_lazily::mutate::{draw_mutation, lazily_leniency};
use geist_lazily::{IpcMessage, LazilyPack, decode, encode};
use lazily_geist_support::GeistChoices;
use std::path::PathBuf;

/// Writes `message` as a fixture; geist runs the shrunk example last, so the file left is minimal.
fn record(message: &IpcMessage, what: &str) -> String {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/lazily-disagreements");
    let path = dir.join(format!("minimal_{}.json", message.kind()));
    let Ok(wire) = json::parse(&encode(message)) else {
        return String::new();
    };
    let runner = Runner::new().with_pack(LazilyPack);
    let recorded = std::fs::create_dir_all(&dir).ok().and_then(|()| {
        record_fixture(
            &runner,
            &path.display().to_string(),
            what,
            message.kind(),
            1,
            vec![("wire".into(), wire)],
        )
        .ok()
    });
    match recorded.map(|fixture| write_fixture(&fixture, &path)) {
        Some(Ok(())) => format!("recorded as {}", path.display()),
        _ => "not recordable".to_string(),
    }
}

#[test]
fn generated_messages_encode_identically() {
    check(
        Settings::new().test_cases(10_000).seed(Some(3)),
        |tc: &mut TestCase| {
            let message = draw_message(&mut GeistChoices(tc));
            let ours = encode(&message);
            let theirs: Result<lazily::IpcMessage, _> = serde_json::from_slice(&ours);
            let theirs = theirs.map(|m| serde_json::to_vec(&m).unwrap_or_default());
            if theirs.as_ref().ok() != Some(&ours) {
                let where_ = record(
                    &message,
                    "lazily 0.61.0 decodes or encodes this message differently",
                );
                panic!(
                    "geist: {}\nlazily: {:?}\n{where_}",
                    String::from_utf8_lossy(&ours),
                    theirs.map(|b| String::from_utf8_lossy(&b).into_owned())
                );
            }
        },
    );
}

#[test]
fn near_misses_decode_alike_except_documented_leniencies() {
    check(
        Settings::new().test_cases(10_000).seed(Some(4)),
        |tc: &mut TestCase| {
            let mut choices = GeistChoices(tc);
            let message = draw_message(&mut choices);
            let (document, mutation) = draw_mutation(&mut choices, &message);
            let bytes = document.to_compact();
            tc.note(String::from_utf8_lossy(&bytes).into_owned());
            let ours = decode(&bytes).is_ok();
            let theirs = serde_json::from_slice::<lazily::IpcMessage>(&bytes).is_ok();
            if ours != theirs {
                assert!(
                    !ours && lazily_leniency(&mutation).is_some(),
                    "undocumented disagreement: {mutation:?}"
                );
            }
        },
    );
}
