//! Tampered copies of real vectors, built at test time in a temporary
//! directory, must fail — and say where: the CID of a damaged block, the JSON
//! path of a bad field, the state root that is missing.

mod vectors_support;

use geist_vectors::check_file;
use serde_json::Value;
use vectors_support::{TRANSFER, car_of, check_value, read_json, sample, schemas, set_car};

#[test]
fn a_flipped_byte_in_a_block_fails_the_cid_check_naming_the_block() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let mut vector = read_json(&sample(TRANSFER));
    let mut archive = car_of(&vector);
    let victim = archive.blocks.len() / 2;
    let claimed = archive.blocks[victim].cid;
    let middle = archive.blocks[victim].data.len() / 2;
    archive.blocks[victim].data[middle] ^= 0x01;
    set_car(&mut vector, &archive);
    let report = check_value(dir.path(), "flipped.json", &vector, &schemas).report;
    assert!(!report.passed());
    let failure = report
        .failures
        .iter()
        .find(|f| f.message.starts_with("CID check failed"))
        .unwrap_or_else(|| panic!("no CID failure in {:?}", report.failures));
    assert!(failure.at.contains(&claimed.to_string()), "{failure}");
    assert!(failure.at.starts_with("/car block"), "{failure}");
    assert_eq!(report.stats.verified_blocks, report.stats.blocks - 1);
}

#[test]
fn a_missing_state_root_block_is_reported() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let mut vector = read_json(&sample(TRANSFER));
    let post_root = vector["postconditions"]["state_tree"]["root_cid"]["/"]
        .as_str()
        .unwrap()
        .to_string();
    let mut archive = car_of(&vector);
    let before = archive.blocks.len();
    archive.blocks.retain(|b| b.cid.to_string() != post_root);
    assert_eq!(
        archive.blocks.len(),
        before - 1,
        "the post-state root is a block of the CAR"
    );
    set_car(&mut vector, &archive);
    let report = check_value(dir.path(), "no-root.json", &vector, &schemas).report;
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.at == "/postconditions/state_tree/root_cid"
                && f.message == format!("post-state root {post_root} is not in the CAR")),
        "{:?}",
        report.failures
    );

    // A vector that names no pre-state root at all fails too.
    let mut vector = read_json(&sample(TRANSFER));
    vector["preconditions"]
        .as_object_mut()
        .unwrap()
        .remove("state_tree");
    let report = check_value(dir.path(), "no-pre-root.json", &vector, &schemas).report;
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.message.starts_with("no pre-state root")),
        "{:?}",
        report.failures
    );
}

#[test]
fn a_damaged_gzip_stream_fails() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let mut vector = read_json(&sample(TRANSFER));
    let mut gzipped =
        geist_vectors::payload::decode_base64(vector["car"].as_str().unwrap(), "/car").unwrap();
    let end = gzipped.len() - 3;
    gzipped[end] ^= 0xff; // inside the CRC/length trailer
    vector["car"] = Value::String(geist_vectors::payload::encode_base64(&gzipped));
    let report = check_value(dir.path(), "gzip.json", &vector, &schemas).report;
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.at == "/car" && f.message.starts_with("gzip stream is corrupt")),
        "{:?}",
        report.failures
    );
}

#[test]
fn schema_violations_and_bad_fields_name_their_json_path() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let mut vector = read_json(&sample(TRANSFER));
    vector["postconditions"]["receipts"][0]["exit_code"] = Value::String("zero".into());
    vector["apply_messages"][0]["bytes"] = Value::String("not base64!".into());
    let report = check_value(dir.path(), "fields.json", &vector, &schemas).report;
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.at == "/postconditions/receipts/0/exit_code"),
        "{:?}",
        report.failures
    );
    assert!(!report.passed());

    let mut vector = read_json(&sample(TRANSFER));
    vector["apply_messages"][0]["bytes"] = Value::String("not base64!".into());
    let report = check_value(dir.path(), "bytes.json", &vector, &schemas).report;
    assert!(
        report.failures.iter().any(|f| f
            .to_string()
            .starts_with("/apply_messages/0/bytes: invalid base64")),
        "{:?}",
        report.failures
    );
}

#[test]
fn a_receipt_count_that_differs_from_the_message_count_fails() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let mut vector = read_json(&sample(
        "test-vectors/multisig/basic--ok-add-signer--actorsv2.json",
    ));
    vector["postconditions"]["receipts"]
        .as_array_mut()
        .unwrap()
        .pop();
    let report = check_value(dir.path(), "receipts.json", &vector, &schemas).report;
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.at == "/postconditions/receipts"
                && f.message.starts_with("2 receipts for 3 messages")),
        "{:?}",
        report.failures
    );
}

#[test]
fn seed_format_errors_name_their_path_and_the_mock_stays_a_note() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let mut vector = read_json(&sample("seed-schema/oni-single_message.json"));
    vector["apply_messages"][0] = Value::String("0xZZ".into());
    vector["class"] = Value::String("message".into());
    let report = check_value(dir.path(), "seed.json", &vector, &schemas).report;
    let text: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|t| t.starts_with("/class: schema test-vector-schema.json")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.starts_with("/apply_messages/0: invalid hex")),
        "{text:?}"
    );
}

#[test]
fn base_fees_beyond_64_bits_are_kept_exactly() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(sample(TRANSFER)).unwrap();
    let huge = "312345678901234567890123456789012345";
    let patched = text.replacen(
        "\"preconditions\": {",
        &format!("\"preconditions\": {{\n    \"basefee\": {huge},"),
        1,
    );
    assert_ne!(patched, text);
    let path = dir.path().join("basefee.json");
    std::fs::write(&path, patched).unwrap();
    let checked = check_file(&path, &schemas);
    assert!(checked.report.passed(), "{:?}", checked.report.failures);
    let vector = checked.vector.unwrap();
    assert_eq!(vector.preconditions.basefee.unwrap().to_string(), huge);
}

#[test]
fn non_json_and_unreadable_files_fail_without_panicking() {
    let schemas = schemas();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(&path, b"{\"class\": \"message\", ").unwrap();
    let report = check_file(&path, &schemas).report;
    assert!(
        report.failures[0].message.starts_with("not JSON"),
        "{:?}",
        report.failures
    );
    let report = check_file(&dir.path().join("absent.json"), &schemas).report;
    assert!(
        report.failures[0].message.starts_with("cannot read"),
        "{:?}",
        report.failures
    );
}
