//! The fixture runner on the shared lazily suite and on tampered copies of it.
//!
//! Tampered copies are made in a temporary directory at test time; the shared
//! data is never copied into the repository.

use geist_fixtures::{Runner, record_fixture};
use geist_lazily::LazilyPack;
use geist_pack::data::shared_path;
use std::path::{Path, PathBuf};

fn runner() -> Runner {
    Runner::new().with_pack(LazilyPack)
}

fn suite() -> PathBuf {
    shared_path("lazily-conformance")
}

fn read(name: &str) -> String {
    let path = suite().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Writes `text` into a temp dir as `name`, checks it, and returns the problems as text.
fn check_tampered(dir: &Path, name: &str, text: &str) -> (bool, String) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|error| panic!("{error}"));
    let report = runner().check_paths(&[path]);
    let lines = report.to_text_lines();
    (report.failed() == 0, lines.join("\n"))
}

/// Replaces the one occurrence of `from` by `to`, failing loudly if the fixture changed.
fn tamper(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "`{from}` must occur exactly once"
    );
    text.replacen(from, to, 1)
}

#[test]
fn the_shared_suite_passes_byte_for_byte() {
    let report = runner().check_paths(&[suite()]);
    let lines = report.to_text_lines();
    assert_eq!(report.outcomes.len(), 8, "{lines:#?}");
    assert_eq!(report.failed(), 0, "{lines:#?}");
    assert_eq!(lines.last().map(String::as_str), Some("8 passed, 0 failed"));
    for outcome in &report.outcomes {
        assert!(
            outcome.comparisons_checked >= 1,
            "{}: nothing compared",
            outcome.fixture
        );
        assert!(
            outcome.assertions_checked >= 4,
            "{}: too few assertions",
            outcome.fixture
        );
    }
}

#[test]
fn one_byte_changes_in_wire_fail_and_say_where() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let cases = [
        // A value covered by an assertion.
        (
            "delta_sequential.json",
            "\"epoch\": 41,\n      \"ops\"",
            "\"epoch\": 42,\n      \"ops\"",
            "$.assertions.epoch",
        ),
        // A key: unknown field.
        (
            "delta_sequential.json",
            "{ \"node\": 3 }",
            "{ \"nodx\": 3 }",
            "$.wire.Delta.ops[2].Invalidate.nodx",
        ),
        // A byte out of range.
        (
            "snapshot_minimal.json",
            "[1, 2, 3, 4]",
            "[1, 2, 3, 400]",
            "$.wire.Snapshot.nodes[0].state.Payload[3]",
        ),
        // Not canonical: an integer written as a float.
        (
            "snapshot_multi_node.json",
            "240, 63",
            "240, 6.3",
            "$.wire.Snapshot.nodes[1].state.Payload[7]",
        ),
        // An unknown variant.
        (
            "snapshot_multi_node.json",
            "\"state\": \"Opaque\"",
            "\"state\": \"Opaqux\"",
            "$.wire.Snapshot.nodes[2].state",
        ),
        // An unknown backend.
        (
            "delta_zero_copy_arrow.json",
            "\"backend\": \"arrow\"",
            "\"backend\": \"arroz\"",
            "$.wire.Delta.ops[0].SlotValue.payload.SharedBlob.backend",
        ),
        // Broken JSON.
        (
            "delta_non_sequential.json",
            "\"ops\": []",
            "\"ops\": [}",
            "$.wire.Delta.ops",
        ),
        // A checksum byte in the expected arena header: the arena computes the real one.
        (
            "arena_blob.json",
            "141, 17, 111",
            "141, 17, 112",
            "$.expected.header_bytes[34]",
        ),
    ];
    for (name, from, to, where_) in cases {
        let (passed, report) = check_tampered(dir.path(), name, &tamper(&read(name), from, to));
        assert!(!passed, "{name} with `{to}` passed:\n{report}");
        assert!(
            report.contains(where_),
            "{name} with `{to}`: expected the report to name {where_}:\n{report}"
        );
        assert!(report.ends_with("0 passed, 1 failed"), "{report}");
    }
}

#[test]
fn key_order_and_canonical_form_are_part_of_the_wire() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let text = read("snapshot_shared_blob.json");
    let swapped = tamper(
        &text,
        "\"offset\": 0,\n              \"len\": 16,",
        "\"len\": 16,\n              \"offset\": 0,",
    );
    let (passed, report) = check_tampered(dir.path(), "swapped.json", &swapped);
    assert!(!passed);
    assert!(
        report.contains("$.wire.Snapshot.nodes[0].state.SharedBlob.len"),
        "{report}"
    );
    assert!(report.contains("at byte"), "{report}");

    let explicit_default = tamper(
        &read("delta_shared_blob.json"),
        "\"checksum\": 987654321",
        "\"checksum\": 987654321, \"backend\": \"shm\"",
    );
    let (passed, report) = check_tampered(dir.path(), "shm.json", &explicit_default);
    assert!(
        !passed,
        "an explicit default backend is not the canonical wire form"
    );
    assert!(report.contains("re-encoded bytes differ"), "{report}");
}

#[test]
fn wrong_or_unknown_assertions_fail_and_say_which() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let cases = [
        (
            "snapshot_multi_node.json",
            "\"opaque_node_id\": 3",
            "\"opaque_node_id\": 2",
            "$.assertions.opaque_node_id",
        ),
        (
            "delta_non_sequential.json",
            "\"resync_after_epoch_10\": true",
            "\"resync_after_epoch_10\": false",
            "$.assertions.resync_after_epoch_10",
        ),
        (
            "arena_blob.json",
            "\"magic\": \"LZSH\"",
            "\"magic\": \"LZSX\"",
            "$.assertions.magic",
        ),
        (
            "snapshot_minimal.json",
            "\"root_count\": 1,",
            "\"root_count\": 1, \"rot_count\": 1,",
            "unknown assertion key `rot_count`",
        ),
        (
            "snapshot_minimal.json",
            "\"root_count\": 1,",
            "\"root_count\": 1, \"blob_len\": 1,",
            "does not apply",
        ),
        (
            "delta_shared_blob.json",
            "\"epoch\": 9,\n    \"op_count\"",
            "\"epoch\": 9, \"epoch\": 9,\n    \"op_count\"",
            "duplicate key `epoch`",
        ),
    ];
    for (name, from, to, expected) in cases {
        let (passed, report) = check_tampered(dir.path(), name, &tamper(&read(name), from, to));
        assert!(!passed, "{name} with `{to}` passed:\n{report}");
        assert!(
            report.contains(expected),
            "{name}: expected `{expected}` in:\n{report}"
        );
    }
}

#[test]
fn bad_fixtures_do_not_stop_the_run() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let write = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap_or_else(|e| panic!("{e}"))
    };
    write("a_good.json", &read("snapshot_minimal.json"));
    write("b_not_json.json", "{\"description\": ");
    write(
        "c_no_kind.json",
        "{\"description\": \"x\", \"protocol_version\": 1, \"assertions\": {}, \"wire\": {}}",
    );
    write(
        "d_unknown_kind.json",
        "{\"description\": \"x\", \"protocol_version\": 1, \"kind\": \"Gossip\", \"assertions\": {}, \"wire\": {}}",
    );
    write(
        "e_big_node.json",
        &tamper(
            &read("snapshot_minimal.json"),
            "\"roots\": [1]",
            "\"roots\": [9007199254740993]",
        ),
    );
    write(
        "f_version.json",
        &tamper(
            &read("snapshot_minimal.json"),
            "\"protocol_version\": 1",
            "\"protocol_version\": 2",
        ),
    );
    write(
        "g_extra_section.json",
        &tamper(
            &read("snapshot_minimal.json"),
            "\"kind\": \"Snapshot\",",
            "\"kind\": \"Snapshot\", \"input\": {},",
        ),
    );
    write(
        "h_kind_mismatch.json",
        &tamper(
            &read("snapshot_minimal.json"),
            "\"kind\": \"Snapshot\"",
            "\"kind\": \"Delta\"",
        ),
    );
    let report = runner().check_paths(&[dir.path().to_path_buf()]);
    let text = report.to_text_lines().join("\n");
    assert_eq!(report.passed(), 1, "{text}");
    assert_eq!(report.failed(), 6, "{text}");
    assert_eq!(report.skipped(), 1, "{text}");
    for expected in [
        "b_not_json.json [?]: $.description: line 1, column 17",
        "missing required key `kind`",
        "[Gossip]: no pack handles kind `Gossip`",
        "1 passed, 6 failed, 1 skipped",
        "$.wire.Snapshot.roots[0]: node id 9007199254740993 is beyond 2^53 - 1",
        "$.protocol_version",
        "unexpected top-level key `input`",
        "the wire holds a Snapshot but the fixture's kind is Delta",
    ] {
        assert!(text.contains(expected), "expected `{expected}` in:\n{text}");
    }
    let json = report.to_json();
    assert_eq!(json["passed"], 1);
    assert_eq!(json["failed"], 6);
    assert_eq!(json["skipped"], 1);
}

#[test]
fn recorded_fixtures_reproduce_the_shared_assertions() {
    // Recording a shared fixture's wire yields (at least) its assertions, with the same values.
    let runner = runner();
    for name in [
        "snapshot_minimal.json",
        "snapshot_multi_node.json",
        "delta_sequential.json",
        "delta_zero_copy_arrow.json",
    ] {
        let original =
            geist_fixtures::Fixture::load(&suite().join(name)).unwrap_or_else(|e| panic!("{e}"));
        let Some(wire) = original.section("wire") else {
            panic!("{name} has no wire")
        };
        let recorded = record_fixture(
            &runner,
            name,
            &original.description,
            &original.kind,
            1,
            vec![("wire".into(), wire.clone())],
        )
        .unwrap_or_else(|error| panic!("{error}"));
        for (key, value) in &original.assertions {
            if key == "resync_after_epoch_10" {
                continue;
            }
            let mine = recorded
                .assertion(key)
                .unwrap_or_else(|| panic!("{name}: `{key}` not recorded"));
            assert!(
                mine.same_value(value),
                "{name}: `{key}` recorded as {mine}, fixture says {value}"
            );
        }
    }
}
