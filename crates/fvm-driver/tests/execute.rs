//! The driver on real vectors: the shared fvm-test-vectors sample executed on
//! ref-fvm must reproduce every receipt and state root; traces show calls and
//! outcomes; unsupported vectors are skipped with their reason; bad requests
//! are errors that name the field, never a crash.

use geist_pack::data::shared_path;
use geist_vectors::driver::{self, DriverRequest, PROTOCOL};
use geist_vectors::{SchemaSet, check_file, collect_vector_files};
use geist_fvm_driver::bundle::{BundleSet, bundles_in};
use geist_fvm_driver::execute::{ExecuteError, Outcome, Vm};
use geist_fvm_driver::serve;
use std::path::PathBuf;
use std::sync::OnceLock;

const SAMPLE: &str = "filecoin-vectors/fvm-test-vectors";
const PROPOSE: &str = "filecoin-vectors/fvm-test-vectors/extracted/0002-hygge-01/fil_10_multisig/Propose/Ok/ext-0002-fil_10_multisig-Propose-Ok-1.json";

fn bundle_paths() -> Vec<PathBuf> {
    bundles_in(&shared_path("filecoin-vectors/actor-bundles")).unwrap()
}

/// One VM for all tests: compiling the actors' Wasm is the expensive part.
fn vm() -> &'static Vm {
    static VM: OnceLock<Vm> = OnceLock::new();
    VM.get_or_init(|| Vm::new(BundleSet::load(&bundle_paths()).unwrap()))
}

fn schemas() -> &'static SchemaSet {
    static SCHEMAS: OnceLock<SchemaSet> = OnceLock::new();
    SCHEMAS.get_or_init(|| SchemaSet::from_shared_dir().unwrap())
}

/// The first request of a vector in the shared data, with the checked vector.
fn request(relative: &str) -> (geist_vectors::CheckedVector, DriverRequest) {
    let checked = check_file(&shared_path(relative), schemas());
    let request = driver::requests_for(&checked, 1).unwrap().remove(0);
    (checked, request)
}

fn executed(outcome: Outcome) -> geist_fvm_driver::execute::Execution {
    match outcome {
        Outcome::Executed(execution) => execution,
        Outcome::Skipped(reason) => panic!("skipped: {reason}"),
    }
}

#[test]
fn shared_sample_vectors_reproduce_their_receipts_and_state_roots() {
    let files = collect_vector_files(&[shared_path(SAMPLE)]).unwrap().files;
    assert!(files.len() >= 6, "{files:?}");
    for file in files {
        let checked = check_file(&file, schemas());
        for request in driver::requests_for(&checked, 1).unwrap() {
            let response = serve::answer(vm(), &request);
            assert_eq!(response.error, None, "{}", file.display());
            let differences = driver::compare(checked.vector.as_ref().unwrap(), &response);
            assert!(
                differences.is_empty(),
                "{}: {differences:?}",
                file.display()
            );
        }
    }
}

#[test]
fn traces_show_the_calls_and_the_receipt() {
    let (_, mut request) = request(PROPOSE);
    request.trace = true;
    let execution = executed(vm().execute(&request).unwrap());
    let traces = execution.traces.expect("traces when asked for");
    assert_eq!(traces.len(), 1, "one per message");
    let lines = &traces[0];
    assert!(
        lines[0].starts_with("gas OnChainMessage"),
        "{:?}",
        &lines[..3]
    );
    assert!(lines.iter().any(|l| l.starts_with("call f0")));
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("invoke f0"))
    );
    let receipt = format!(
        "receipt: exit 0, return {} B, gas used {}",
        execution.receipts[0].return_data.len(),
        execution.receipts[0].gas_used
    );
    assert!(
        lines.contains(&receipt),
        "{receipt} in {:?}",
        &lines[lines.len() - 3..]
    );

    request.trace = false;
    let untraced = executed(vm().execute(&request).unwrap());
    assert_eq!(untraced.traces, None);
    assert_eq!(
        untraced.receipts, execution.receipts,
        "tracing changes nothing"
    );
    assert_eq!(untraced.post_state_root, execution.post_state_root);
}

#[test]
fn unsupported_network_versions_and_classes_are_skipped_with_the_reason() {
    let (_, request) = request(PROPOSE);
    for (nv, expected) in [
        (
            Some(17),
            "network version 17: ref-fvm 3.x executes network versions 18 to 20",
        ),
        (
            Some(21),
            "network version 21: ref-fvm 3.x executes network versions 18 to 20",
        ),
        (None, "the vector names no network version (no variants)"),
    ] {
        let mut request = request.clone();
        request.network_version = nv;
        assert_eq!(
            vm().execute(&request).unwrap(),
            Outcome::Skipped(expected.to_string())
        );
    }
    let mut tipset = request.clone();
    tipset.class = "tipset".to_string();
    let Outcome::Skipped(reason) = vm().execute(&tipset).unwrap() else {
        panic!("a tipset vector must be skipped")
    };
    assert!(reason.contains("message-class vectors only"), "{reason}");
    let mut chaos = request;
    chaos.selector = Some(serde_json::json!({"chaos_actor": "true"}));
    let Outcome::Skipped(reason) = vm().execute(&chaos).unwrap() else {
        panic!("a chaos-actor vector must be skipped")
    };
    assert!(reason.contains("chaos actor"), "{reason}");
}

#[test]
fn actors_of_no_loaded_bundle_are_skipped_as_a_missing_bundle() {
    // The sample's pre-states run actors v10; load only the v11 bundle.
    let v11: Vec<PathBuf> = bundle_paths()
        .into_iter()
        .filter(|p| p.ends_with("v11.tar.zst"))
        .collect();
    assert_eq!(v11.len(), 1);
    let vm = Vm::new(BundleSet::load(&v11).unwrap());
    let (_, request) = request(PROPOSE);
    let Outcome::Skipped(reason) = vm.execute(&request).unwrap() else {
        panic!("must be skipped")
    };
    assert!(
        reason.starts_with("missing bundle: the pre-state's actors bafy")
            && reason.ends_with("are in none of the loaded bundles (v11.tar.zst)"),
        "{reason}"
    );
}

#[test]
fn bad_requests_are_errors_naming_what_is_wrong() {
    let (_, request) = request(PROPOSE);
    let cases: Vec<(Box<dyn Fn(&mut DriverRequest)>, &str)> = vec![
        (
            Box::new(|r| r.base_fee = Some("12x".into())),
            "request field base_fee: \"12x\" is not a decimal integer",
        ),
        (Box::new(|r| r.car = "%%%".into()), "request field car:"),
        (Box::new(|r| r.epoch = None), "request field epoch: absent"),
        (
            Box::new(|r| r.pre_state_root = Some("bafy-not".into())),
            "request field pre_state_root: not a CID",
        ),
        (
            Box::new(|r| r.messages[0].bytes = "AAAA".into()),
            "message 0: not a message",
        ),
        (
            Box::new(|r| {
                r.randomness = Some(serde_json::json!([{"on": ["chain", 1], "ret": "AAAA"}]))
            }),
            "request field randomness: randomness[0]: \"ret\" has 3 bytes, not 32",
        ),
    ];
    for (damage, expected) in cases {
        let mut bad = request.clone();
        damage(&mut bad);
        let error = vm().execute(&bad).unwrap_err().to_string();
        assert!(error.starts_with(expected), "{error} (expected {expected})");
    }
    // A pre-state root the CAR does not hold.
    let mut bad = request.clone();
    bad.pre_state_root =
        Some("bafy2bzaceamp42wmmgr2g2ymg46euououzfyck7szknvfacqscohrvaikwfqy".into());
    assert!(matches!(
        vm().execute(&bad),
        Err(ExecuteError::PreState { .. })
    ));
}

#[test]
fn the_protocol_loop_answers_every_line() {
    let (_, request) = request(PROPOSE);
    let mut wrong_protocol = request.clone();
    wrong_protocol.protocol = "other/9".into();
    wrong_protocol.request = 2;
    let input = format!(
        "{}\nnot json\n{}\n",
        serde_json::to_string(&request).unwrap(),
        serde_json::to_string(&wrong_protocol).unwrap()
    );
    let mut output = Vec::new();
    serve::serve(vm(), input.as_bytes(), &mut output).unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["request"], 1);
    assert_eq!(lines[0]["receipts"][0]["exit_code"], 0);
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("not a request")
    );
    assert_eq!(lines[2]["request"], 2);
    assert_eq!(
        lines[2]["error"],
        format!("protocol \"other/9\": this driver speaks {PROTOCOL}")
    );
}
