//! The sample corpora check clean: every vector of `../shared/data/filecoin-vectors`
//! passes, later vectors are recognised as such, and the seed sample passes
//! with a note that its CAR is a mock.

mod vectors_support;

use geist_vectors::schema::{FormatVersion, NamedSchema, SEED_SCHEMA};
use geist_vectors::{CheckSummary, check_file, check_files, collect_vector_files};
use vectors_support::{corpus, read_json, sample, schemas};

#[test]
fn every_vector_of_the_sample_passes() {
    let schemas = schemas();
    let files = collect_vector_files(&[corpus()]).unwrap().files;
    let json_files = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .count();
    assert_eq!(files.len(), json_files);
    assert!(
        files.len() >= 60,
        "expected the whole sample, found {} files",
        files.len()
    );
    assert!(files.iter().all(|f| {
        !f.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("schema")
    }));
    let reports = check_files(&files, &schemas, 2);
    let failures: Vec<String> = reports
        .iter()
        .filter(|r| !r.passed())
        .map(|r| format!("{}: {:?}", r.path, r.failures))
        .collect();
    assert!(
        failures.is_empty(),
        "failing vectors:\n{}",
        failures.join("\n")
    );
    let summary = CheckSummary::of(&reports);
    assert_eq!(
        summary.to_string(),
        format!("{} passed, 0 failed", files.len())
    );
    assert!(summary.verified_blocks > 1000);
}

#[test]
fn the_seed_sample_is_schema_valid_with_a_note_about_its_mock_car() {
    let report = check_file(&sample("seed-schema/oni-single_message.json"), &schemas()).report;
    assert!(report.passed(), "{:?}", report.failures);
    assert_eq!(report.format, Some(FormatVersion::Seed));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.at == "/car_bytes" && n.message.contains("not a real CAR")),
        "{:?}",
        report.notes
    );
}

#[test]
fn later_vectors_are_recognised_and_fail_the_seed_schema() {
    let schemas = schemas();
    let path = sample(vectors_support::TRANSFER);
    let report = check_file(&path, &schemas).report;
    assert_eq!(report.format, Some(FormatVersion::Later));
    assert_eq!(report.stats.blocks, report.stats.verified_blocks);
    // The seed schema itself rejects the later format, at the offending paths.
    let seed = NamedSchema::load(&geist_pack::data::shared_path("..").join(SEED_SCHEMA)).unwrap();
    let violations = seed.violations(&read_json(&path));
    assert!(
        violations.iter().any(|v| v.path == "/class"),
        "{violations:?}"
    );
    assert!(
        violations.iter().any(|v| v.path == "/_meta/gen"),
        "{violations:?}"
    );
}

#[test]
fn the_corpus_head_schema_is_reported_unparsable_not_fatal() {
    let schemas = schemas();
    assert!(schemas.later.is_some());
    assert!(
        schemas
            .notes
            .iter()
            .any(|n| n.contains("schema-head.json") && n.contains("line 114")),
        "{:?}",
        schemas.notes
    );
}

#[test]
fn tipset_vectors_decode_every_message_of_every_block() {
    let checked = check_file(
        &sample("test-vectors/msg_application/duplicates--messages-deduplicated--actorsv2.json"),
        &schemas(),
    );
    assert!(checked.report.passed(), "{:?}", checked.report.failures);
    assert_eq!(checked.messages.len(), 18);
    assert!(checked.messages.iter().all(|(_, m)| m.is_ok()));
    assert!(
        checked.messages[0]
            .0
            .starts_with("/apply_tipsets/0/blocks/0/messages/0")
    );
}
