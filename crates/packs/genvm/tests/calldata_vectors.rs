//! The shared Calldata vectors: every valid case encodes to its exact bytes and
//! decodes back; every invalid case is refused by the strict decoder.

use geist_genvm::calldata::vectors::{CaseKind, failures, run_file};
use geist_pack::data::shared_path;

#[test]
fn every_shared_vector_passes() {
    let outcomes =
        run_file(&shared_path("genvm/calldata-vectors.json")).expect("vectors file readable");
    let failures = failures(&outcomes);
    assert!(
        failures.is_empty(),
        "failing vectors:\n{}",
        failures.join("\n")
    );
    let valid = outcomes
        .iter()
        .filter(|o| o.kind == CaseKind::Valid)
        .count();
    let invalid = outcomes.len() - valid;
    assert!(
        valid >= 20 && invalid >= 10,
        "only {valid} valid and {invalid} invalid cases ran"
    );
}

#[test]
fn invalid_vectors_are_refused_for_the_stated_reason() {
    let outcomes =
        run_file(&shared_path("genvm/calldata-vectors.json")).expect("vectors file readable");
    let expect = [
        ("non_minimal_uleb", "minimal"),
        ("unsorted_keys", "strictly increasing"),
        ("duplicate_keys", "duplicate"),
        ("trailing_byte", "trailing"),
        ("reserved_type_7", "reserved"),
        ("unknown_special", "special"),
        ("truncated_string", "truncated"),
        ("truncated_address", "address needs 20 bytes"),
        ("invalid_utf8_string", "UTF-8"),
        ("empty_input", "empty"),
    ];
    for (name, phrase) in expect {
        let outcome = outcomes
            .iter()
            .find(|o| o.name == name)
            .unwrap_or_else(|| panic!("no vector {name}"));
        let message = outcome
            .result
            .as_ref()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            message.contains(phrase),
            "{name}: {message:?} does not mention {phrase:?}"
        );
    }
}
