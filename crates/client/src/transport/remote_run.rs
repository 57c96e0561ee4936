//! Running a property over the wire: `run_test`, then answer the server's events.
//!
//! The server drives: it sends a `test_case` event per test case (the client
//! registers the announced stream, acknowledges, runs the property with a
//! remote [`TestCase`] and concludes with `mark_complete`), then `test_done`
//! with the results, then one final replay per failure (`is_final`), which the
//! client records to build the same report as an in-process run. Everything
//! happens on the calling thread; other threads run their own properties on
//! the same connection at the same time.

use super::case::{CaseError, RemoteCase};
use super::connection::{Connection, StreamHandle};
use super::{Transport, WireError};
use crate::panic_capture::{CaptureGuard, CapturedPanic};
use crate::runner::{
    DEADLINE_ORIGIN, Outcome, RunSummary, deadline_exceeded, failure_of, failure_section,
    format_report, run_caught,
};
use crate::settings::{Settings, Verbosity};
use crate::test_case::{RemoteFailure, StopSignal, TestCase, UsageError};
use geist_protocol::{CaseStatus, DatabaseChoice, Event, RunResults, RunTest};
use geist_wire::cbor::Value as Cbor;
use std::sync::Arc;

/// The `run_test` request for `settings`.
fn run_test_message(settings: &Settings, seed: u64, server_name: &str, stream: u32) -> Cbor {
    // Each server keeps its examples in its own format: under a directory of
    // its own, so they never meet the in-process database's files. Network
    // stores (Redis) are passed on as they are: only a server that reads
    // geist's setting strings (geist-server) can use them.
    let database = match (&settings.database, &settings.name) {
        (Some(setting), Some(_)) => DatabaseChoice::Directory(
            setting
                .map_directories(&|directory| directory.join(server_name))
                .to_string(),
        ),
        _ => DatabaseChoice::Disabled,
    };
    RunTest {
        stream_id: Some(i128::from(stream)),
        test_cases: settings.test_cases,
        seed: Some(u128::from(seed)),
        derandomize: settings.derandomize,
        database_key: settings.name.as_ref().map(|n| n.as_bytes().to_vec()),
        suppress_health_check: settings
            .suppress_health_checks
            .iter()
            .map(|c| geist_protocol::values::health_check_name(*c).to_string())
            .collect(),
        phases: None,
        report_multiple_failures: settings.report_multiple_failures,
        database,
        failure_blob: None,
    }
    .encode()
}

/// What the client saw while answering one run's test cases.
#[derive(Default)]
struct Observations {
    /// A usage error: later test cases are concluded invalid without running.
    usage: Option<String>,
    /// The first panic of the property (a run that passes despite it is flaky).
    first_panic: Option<CapturedPanic>,
    /// Error replies from the server that failed a test case.
    server_errors: Vec<String>,
    /// Test cases run (final replays excluded).
    test_cases: u64,
    /// Test cases run after the first failure (the server is shrinking).
    after_failure: u64,
    /// Report sections of the final replays.
    sections: Vec<String>,
}

/// The next event on a run's stream, with the message id to acknowledge.
fn next_event(run_stream: &StreamHandle) -> Result<(u32, Event), WireError> {
    let request = run_stream.next_request()?;
    let message = request
        .message()
        .map_err(|e| WireError::Protocol(format!("event on stream {}: {e}", run_stream.id)))?;
    let event = Event::decode(&message).map_err(|e| WireError::Protocol(e.to_string()))?;
    Ok((request.message_id, event))
}

/// Runs `test` as one `run_test` over the wire `transport` names (sharing
/// the process' connection to that server), and reports like an in-process
/// run. Not called for [`Transport::InProcess`].
pub(crate) fn run_remote(
    settings: &Settings,
    transport: &Transport,
    test: &mut dyn FnMut(&mut TestCase),
) -> Result<RunSummary, String> {
    let what = settings
        .name
        .as_deref()
        .map(|n| format!("property {n}"))
        .unwrap_or("the property".into());
    let (connection, server_name) = match transport {
        Transport::Server(command) => (Connection::shared(command), command.program_name()),
        Transport::Connect(address) => (Connection::shared_socket(address), "socket".into()),
        Transport::InProcess => (
            Err(WireError::Protocol("no server to run on".into())),
            String::new(),
        ),
    };
    let connection =
        connection.map_err(|e| format!("geist: {what} could not run over the wire: {e}"))?;
    run_on(&connection, settings, &server_name, test)
}

/// Runs `test` as one `run_test` on `connection`; `server_name` names the
/// server's example database directory.
pub(crate) fn run_on(
    connection: &Arc<Connection>,
    settings: &Settings,
    server_name: &str,
    test: &mut dyn FnMut(&mut TestCase),
) -> Result<RunSummary, String> {
    let seed = settings.effective_seed();
    let name = settings.name.as_deref();
    let what = name
        .map(|n| format!("property {n}"))
        .unwrap_or("the property".into());
    let transport_failure =
        |e: WireError| format!("geist: {what} could not run over the wire: {e}");
    let run_stream = connection.new_client_stream().map_err(transport_failure)?;
    connection
        .control_request(
            "run_test",
            &run_test_message(settings, seed, server_name, run_stream.id),
        )
        .map_err(transport_failure)?;
    if settings.verbosity >= Verbosity::Debug {
        eprintln!(
            "geist: {what}: run_test on stream {} of {} (protocol {})",
            run_stream.id,
            connection.command,
            connection.version()
        );
    }

    let _capture = CaptureGuard::start();
    let mut tc = TestCase::new();
    let mut seen = Observations::default();
    let mut answer = |message_id: u32, stream_id: u32, is_final: bool, seen: &mut Observations| {
        let case = CaseEvent {
            message_id,
            stream_id,
            is_final,
        };
        answer_test_case(&run_stream, case, &mut tc, test, seen, settings.deadline)
            .map_err(transport_failure)
    };
    let results = loop {
        match next_event(&run_stream).map_err(transport_failure)? {
            (
                message_id,
                Event::TestCase {
                    stream_id,
                    is_final,
                },
            ) => answer(message_id, stream_id, is_final, &mut seen)?,
            (message_id, Event::TestDone(results)) => {
                run_stream
                    .reply(message_id, Cbor::Bool(true))
                    .map_err(transport_failure)?;
                break results;
            }
        }
    };
    for _ in 0..results.interesting_test_cases {
        match next_event(&run_stream).map_err(transport_failure)? {
            (
                message_id,
                Event::TestCase {
                    stream_id,
                    is_final,
                },
            ) => answer(message_id, stream_id, is_final, &mut seen)?,
            (_, Event::TestDone(_)) => {
                return Err(transport_failure(WireError::Protocol(
                    "expected a final test_case after test_done, got another test_done".into(),
                )));
            }
        }
    }
    run_stream.close();
    report(settings, seed, results, seen)
}

/// A `test_case` event as received.
struct CaseEvent {
    /// The event's message id, to acknowledge.
    message_id: u32,
    /// The test case's stream.
    stream_id: u32,
    /// Whether it is the final replay of a failure.
    is_final: bool,
}

/// Registers the announced stream, acknowledges the event, runs the
/// property (unless a usage error already settled the run) and concludes
/// the test case. Only a transport failure is an error.
fn answer_test_case(
    run_stream: &StreamHandle,
    event: CaseEvent,
    tc: &mut TestCase,
    test: &mut dyn FnMut(&mut TestCase),
    seen: &mut Observations,
    deadline: Option<std::time::Duration>,
) -> Result<(), WireError> {
    let is_final = event.is_final;
    // Routed before the acknowledgement, after which the server may use it.
    let stream = run_stream.connection().open_stream(event.stream_id)?;
    // The acknowledgement leaves with the test case's first command.
    run_stream.reply_deferred(event.message_id, Cbor::Null)?;
    let mut case = RemoteCase::new(stream);
    if seen.usage.is_some() {
        return case.complete(CaseStatus::Invalid, None);
    }
    if !is_final {
        seen.test_cases += 1;
        if seen.first_panic.is_some() || !seen.server_errors.is_empty() {
            seen.after_failure += 1;
        }
    }

    tc.remote = Some(Box::new(case));
    tc.reset(is_final);
    let (outcome, elapsed) = run_caught(tc, test, deadline);
    let Some(mut case) = tc.remote.take() else {
        return Err(WireError::Protocol(
            "the remote test case went missing".into(),
        ));
    };
    let outcome = match outcome {
        Ok(()) => match deadline_exceeded(deadline, is_final, elapsed) {
            Some(panic) => {
                case.complete(CaseStatus::Interesting, Some(DEADLINE_ORIGIN))?;
                if seen.first_panic.is_none() {
                    seen.first_panic = Some(panic.clone());
                }
                Outcome::Failed(panic)
            }
            None => {
                case.complete(CaseStatus::Valid, None)?;
                Outcome::Passed
            }
        },
        Err(payload) => {
            if payload.is::<StopSignal>() {
                // Rejected by the property, or stopped by the server (then
                // nothing more is sent).
                case.complete(CaseStatus::Invalid, None)?;
                Outcome::Stopped
            } else if let Some(usage) = payload.downcast_ref::<UsageError>() {
                case.complete(CaseStatus::Invalid, None)?;
                seen.usage = Some(usage.0.clone());
                Outcome::Usage(usage.0.clone())
            } else if let Some(RemoteFailure(error)) = payload.downcast_ref::<RemoteFailure>() {
                if let CaseError::Transport(e) = error {
                    return Err(e.clone());
                }
                let message = error.describe();
                let origin = match error {
                    CaseError::Reply {
                        command,
                        error_type,
                        ..
                    } => format!("server error: {error_type} in reply to {command}"),
                    _ => format!("server error: {message}"),
                };
                case.complete(CaseStatus::Interesting, Some(&origin))?;
                seen.server_errors.push(message.clone());
                Outcome::Failed(CapturedPanic {
                    message,
                    location: None,
                })
            } else {
                let (panic, origin) = failure_of(payload.as_ref());
                case.complete(CaseStatus::Interesting, Some(&origin))?;
                if seen.first_panic.is_none() {
                    seen.first_panic = Some(panic.clone());
                }
                Outcome::Failed(panic)
            }
        }
    };
    if is_final {
        let recording = tc.take_recording().unwrap_or_default();
        seen.sections.push(failure_section(&recording, outcome));
    }
    Ok(())
}

/// The verdict of a run from the server's results and what the client saw,
/// worded as an in-process run's.
fn report(
    settings: &Settings,
    seed: u64,
    results: RunResults,
    seen: Observations,
) -> Result<RunSummary, String> {
    let name = settings.name.as_deref();
    let what = name
        .map(|n| format!("property {n}"))
        .unwrap_or("the property".into());
    let summary = RunSummary {
        seed,
        test_cases: results.test_cases.unwrap_or(seen.test_cases),
        valid_test_cases: results.valid_test_cases,
        invalid_test_cases: results.invalid_test_cases,
        shrink_calls: seen.after_failure,
    };
    if let Some(message) = seen.usage {
        return Err(format!("geist: invalid use of a generator: {message}"));
    }
    if settings.verbosity >= Verbosity::Verbose {
        eprintln!(
            "geist: {}{summary} (over the wire)",
            name.map(|n| format!("{n}: ")).unwrap_or_default()
        );
    }
    if let Some(error) = results.error {
        return Err(format!(
            "geist: the Hegel server failed to run {what}: {error}"
        ));
    }
    if let Some(message) = results.health_check_failure {
        return Err(format!("geist: health check failed: {message}"));
    }
    if let Some(message) = results.flaky {
        return Err(format!(
            "geist: {what} is flaky: {message}\nSearch ran {summary}"
        ));
    }
    if !seen.sections.is_empty() {
        return Err(format_report(name, seed, &summary, &seen.sections));
    }
    if !results.passed {
        return Err(format!(
            "geist: the Hegel server reported that {what} failed, but sent no failing example to replay.\nSearch ran {summary}"
        ));
    }
    if let Some(panic) = seen.first_panic {
        return Err(format!(
            "geist: {what} is flaky: a test case failed during the search but the server \
             found no failure to report (the property depends on something besides the \
             drawn values).\nThe failure seen:\n{}{}\nSearch ran {summary}",
            panic
                .location
                .map(|l| format!("panicked at {l}:\n"))
                .unwrap_or_default(),
            panic.message,
        ));
    }
    if let Some(error) = seen.server_errors.first()
        && settings.verbosity >= Verbosity::Normal
    {
        eprintln!(
            "geist: {what} passed, but {} test case(s) ended on a server error, e.g. {error}",
            seen.server_errors.len()
        );
    }
    Ok(summary)
}

#[cfg(test)]
#[path = "remote_run_tests.rs"]
mod tests;
