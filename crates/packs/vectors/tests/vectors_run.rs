//! The runner against drivers: the replay driver in process (whose answers
//! must pass, or differ exactly where perturbed), and driver programs that
//! misbehave (hang, exit, answer nonsense, decline).

mod vectors_support;

use geist_vectors::driver::{self, Driver, ProcessDriver, RunOptions, RunOutcome, RunStatus};
use geist_vectors::replay::{Perturbation, ReplayDriver};
use geist_vectors::{check_file, collect_vector_files};
use std::time::Duration;
use vectors_support::{TRANSFER, corpus, sample, schemas};

fn run_all(driver: &mut dyn Driver, options: RunOptions) -> Vec<RunOutcome> {
    let schemas = schemas();
    let mut next = 1;
    let mut outcomes = Vec::new();
    for file in collect_vector_files(&[corpus()]).unwrap().files {
        outcomes.extend(driver::run_vector(
            &check_file(&file, &schemas),
            driver,
            options,
            &mut next,
        ));
    }
    outcomes
}

fn run_one(relative: &str, driver: &mut dyn Driver) -> Vec<RunOutcome> {
    let mut next = 1;
    driver::run_vector(
        &check_file(&sample(relative), &schemas()),
        driver,
        RunOptions::default(),
        &mut next,
    )
}

fn differences(outcome: &RunOutcome) -> Vec<String> {
    match &outcome.status {
        RunStatus::Failed { differences } => differences.clone(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn replaying_expectations_passes_every_runnable_variant() {
    let outcomes = run_all(
        &mut ReplayDriver { perturbation: None },
        RunOptions {
            ignore_hints: true,
            ..RunOptions::default()
        },
    );
    let (passed, failed, skipped) = driver::tally(&outcomes);
    assert_eq!(
        failed,
        0,
        "{:?}",
        outcomes
            .iter()
            .filter(|o| !matches!(o.status, RunStatus::Passed))
            .collect::<Vec<_>>()
    );
    assert_eq!(skipped, 1, "only the seed sample (mock CAR) is skipped");
    assert!(passed > 100, "one run per variant: {passed}");
}

#[test]
fn negated_vectors_fail_when_the_driver_agrees_with_them() {
    let outcomes = run_all(
        &mut ReplayDriver { perturbation: None },
        RunOptions::default(),
    );
    let failed: Vec<&RunOutcome> = outcomes
        .iter()
        .filter(|o| matches!(o.status, RunStatus::Failed { .. }))
        .collect();
    assert!(!failed.is_empty());
    for outcome in failed {
        assert!(
            outcome.path.contains("/x--"),
            "only the corpus' negated (x--) vectors fail: {outcome}"
        );
        assert!(
            differences(outcome)[0].starts_with("negated vector"),
            "{outcome}"
        );
    }
}

#[test]
fn every_perturbation_shows_as_a_precise_difference() {
    let cases = [
        (
            Perturbation::GasUsed,
            "receipt 0 gas_used: expected 335268, got 335269 (+1)",
        ),
        (
            Perturbation::ExitCode,
            "receipt 0 exit_code: expected 0, got 1",
        ),
        (
            Perturbation::Return,
            "receipt 0 return: expected 0x, got 0xff",
        ),
        (Perturbation::DropReceipt, "receipts: expected 1, got 0"),
    ];
    for (perturbation, expected) in cases {
        let outcomes = run_one(
            TRANSFER,
            &mut ReplayDriver {
                perturbation: Some(perturbation),
            },
        );
        assert_eq!(outcomes.len(), 3, "one run per variant");
        for outcome in &outcomes {
            assert_eq!(
                differences(outcome),
                vec![expected.to_string()],
                "{perturbation:?}"
            );
        }
    }
    let outcomes = run_one(
        TRANSFER,
        &mut ReplayDriver {
            perturbation: Some(Perturbation::StateRoot),
        },
    );
    let lines = differences(&outcomes[0]);
    assert!(
        lines[0].starts_with("post-state root: expected bafy"),
        "{lines:?}"
    );
}

#[test]
fn one_run_per_variant_at_the_variant_epoch() {
    let checked = check_file(
        &sample("test-vectors/transfer/basic--fail-balance-under-gaslimit--genesis.json"),
        &schemas(),
    );
    let requests = driver::requests_for(&checked, 7).unwrap();
    let vector = checked.vector.as_ref().unwrap();
    assert_eq!(requests.len(), vector.preconditions.variants.len());
    for (request, variant) in requests.iter().zip(&vector.preconditions.variants) {
        assert_eq!(request.epoch, variant.epoch);
        assert_eq!(request.messages[0].epoch, variant.epoch, "epoch offset 0");
        assert_eq!(request.protocol, driver::PROTOCOL);
    }
    assert_eq!(requests[0].request, 7);
    // The CAR travels uncompressed, base64.
    let car = geist_vectors::payload::decode_base64(&requests[0].car, "car").unwrap();
    assert_eq!(Some(&car), checked.car.as_ref());
}

fn shell_driver(script: &str, timeout_ms: u64) -> ProcessDriver {
    ProcessDriver::new(script, Duration::from_millis(timeout_ms))
}

/// Runs the three variants of the transfer vector; all must end the same way.
fn single_status(driver: &mut ProcessDriver) -> RunStatus {
    let outcomes = run_one(TRANSFER, driver);
    assert_eq!(outcomes.len(), 3);
    for outcome in &outcomes[1..] {
        assert_eq!(
            std::mem::discriminant(&outcome.status),
            std::mem::discriminant(&outcomes[0].status),
            "{outcomes:?}"
        );
    }
    outcomes[0].status.clone()
}

#[test]
fn a_driver_program_that_declines_is_a_skip() {
    let mut driver = shell_driver(
        r#"while read line; do echo '{"skip": "no VM here"}'; done"#,
        10_000,
    );
    assert_eq!(
        single_status(&mut driver),
        RunStatus::Skipped {
            reason: "driver: no VM here".into()
        }
    );
}

#[test]
fn a_driver_program_answering_nonsense_or_exiting_is_an_error() {
    let mut driver = shell_driver("while read line; do echo nonsense; done", 10_000);
    let RunStatus::Error { reason } = single_status(&mut driver) else {
        panic!("expected an error")
    };
    assert!(reason.contains("not a response"), "{reason}");

    let mut driver = shell_driver("exit 0", 10_000);
    let RunStatus::Error { reason } = single_status(&mut driver) else {
        panic!("expected an error")
    };
    assert!(
        reason.contains("exited before answering") || reason.contains("stopped reading"),
        "{reason}"
    );

    let mut driver = shell_driver(
        r#"while read line; do echo '{"request": 99, "receipts": []}'; done"#,
        10_000,
    );
    let RunStatus::Error { reason } = single_status(&mut driver) else {
        panic!("expected an error")
    };
    assert!(reason.contains("answered request 99"), "{reason}");
}

#[test]
fn a_hung_driver_program_times_out() {
    let started = std::time::Instant::now();
    let mut driver = shell_driver("sleep 30", 300);
    let RunStatus::Error { reason } = single_status(&mut driver) else {
        panic!("expected an error")
    };
    assert!(reason.contains("did not answer"), "{reason}");
    drop(driver);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the runner must not wait for the hung driver"
    );
}

/// The replay driver, perturbed, answering with one trace per message when asked.
struct TracingDriver {
    inner: ReplayDriver,
    asked_for_traces: Vec<bool>,
}

impl Driver for TracingDriver {
    fn exchange(
        &mut self,
        request: &driver::DriverRequest,
    ) -> Result<driver::DriverResponse, driver::DriverError> {
        self.asked_for_traces.push(request.trace);
        let mut response = self.inner.exchange(request)?;
        if request.trace {
            response.traces = Some(vec![vec![format!("call of request {}", request.request)]]);
        }
        Ok(response)
    }
}

#[test]
fn trace_of_the_differing_message_is_kept_only_when_asked_and_failing() {
    let checked = check_file(&sample(TRANSFER), &schemas());
    for (perturbation, trace) in [
        (Some(Perturbation::GasUsed), true),
        (Some(Perturbation::GasUsed), false),
        (None, true),
    ] {
        let mut driver = TracingDriver {
            inner: ReplayDriver { perturbation },
            asked_for_traces: Vec::new(),
        };
        let options = RunOptions {
            trace,
            ..RunOptions::default()
        };
        let outcomes = driver::run_vector(&checked, &mut driver, options, &mut 1);
        assert_eq!(
            driver.asked_for_traces,
            vec![trace; 3],
            "every variant asks"
        );
        for (index, outcome) in outcomes.iter().enumerate() {
            let failed = matches!(outcome.status, RunStatus::Failed { .. });
            assert_eq!(failed, perturbation.is_some());
            if failed && trace {
                let lines = outcome.trace.as_ref().expect("a trace for the failure");
                assert_eq!(
                    lines,
                    &vec![
                        "trace of message 0:".to_string(),
                        format!("call of request {}", index + 1)
                    ]
                );
                assert!(
                    outcome.to_string().contains("| call of request"),
                    "{outcome}"
                );
            } else {
                assert_eq!(outcome.trace, None, "{outcome}");
            }
        }
    }
}
