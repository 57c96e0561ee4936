//! The remote backend: a Hegel server drives the search over the protocol.
//!
//! [`Remote::start`] sends one `run_test` on the control stream of the
//! process' shared connection to the server (other threads run their own
//! properties on the same connection at the same time). The server then
//! sends, on the run's stream, a `test_case` event per test case: the client
//! registers the announced stream, acknowledges, and the run loop runs the
//! property with a [`RemoteCase`] on that stream, concluding with
//! `mark_complete`. Then `test_done` with the results, then one final replay
//! per failure (`is_final`), which the run loop records for the report.

use super::remote_case::RemoteCase;
use super::{CaseBackend, CaseEnd, Lent, RunBackend, RunCase, SearchEnd};
use crate::runner::RunSummary;
use crate::settings::{Settings, Verbosity};
use crate::transport::connection::{Connection, StreamHandle};
use crate::transport::{Transport, WireError};
use geist_protocol::{DatabaseChoice, Event, RunResults, RunTest};
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

/// A run on a Hegel server.
pub(crate) struct Remote {
    run_stream: StreamHandle,
    seed: u64,
    /// Final replays announced by `test_done` and not yet answered.
    finals_owed: u64,
    /// Test cases run (final replays excluded).
    test_cases: u64,
    /// Test cases run after the first failure (the server is shrinking).
    after_failure: u64,
    /// Whether a test case has failed yet.
    failed: bool,
}

impl Remote {
    /// Starts a run of `settings` on the server `transport` names, sharing
    /// the process' connection to it. Not for [`Transport::InProcess`].
    pub(crate) fn start(
        settings: &Settings,
        transport: &Transport,
        seed: u64,
    ) -> Result<Remote, String> {
        let what = describe(settings);
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
        Remote::start_on(&connection, settings, &server_name, seed)
    }

    /// Starts a run on `connection`; `server_name` names the server's
    /// example database directory.
    pub(crate) fn start_on(
        connection: &Arc<Connection>,
        settings: &Settings,
        server_name: &str,
        seed: u64,
    ) -> Result<Remote, String> {
        let what = describe(settings);
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
        Ok(Remote {
            run_stream,
            seed,
            finals_owed: 0,
            test_cases: 0,
            after_failure: 0,
            failed: false,
        })
    }

    /// The next event on the run's stream, with the message id to acknowledge.
    fn next_event(&self) -> Result<(u32, Event), WireError> {
        let request = self.run_stream.next_request()?;
        let message = request.message().map_err(|e| {
            WireError::Protocol(format!("event on stream {}: {e}", self.run_stream.id))
        })?;
        let event = Event::decode(&message).map_err(|e| WireError::Protocol(e.to_string()))?;
        Ok((request.message_id, event))
    }

    /// Registers the announced stream, acknowledges the event and hands the
    /// test case to the run loop.
    fn answer(
        &mut self,
        message_id: u32,
        stream_id: u32,
        is_final: bool,
        run_case: &mut RunCase<'_>,
    ) -> Result<(), WireError> {
        // Routed before the acknowledgement, after which the server may use it.
        let stream = self.run_stream.connection().open_stream(stream_id)?;
        // The acknowledgement leaves with the test case's first command.
        self.run_stream.reply_deferred(message_id, Cbor::Null)?;
        let mut case = CaseBackend::Remote(Box::new(RemoteCase::new(stream)));
        if !is_final {
            self.test_cases += 1;
            if self.failed {
                self.after_failure += 1;
            }
        }
        if run_case(Lent::Backend(&mut case), is_final)? == CaseEnd::Failed && !is_final {
            self.failed = true;
        }
        Ok(())
    }

    /// The search's end from the server's results.
    fn search_end(&self, results: RunResults) -> SearchEnd {
        SearchEnd {
            summary: RunSummary {
                seed: self.seed,
                test_cases: results.test_cases.unwrap_or(self.test_cases),
                valid_test_cases: results.valid_test_cases,
                invalid_test_cases: results.invalid_test_cases,
                shrink_calls: self.after_failure,
            },
            failures: usize::try_from(results.interesting_test_cases).unwrap_or(usize::MAX),
            passed: results.passed,
            error: results.error,
            health_check_failure: results.health_check_failure,
            flaky: results.flaky,
            warnings: Vec::new(),
            shrink_statistics: Vec::new(),
            over_the_wire: true,
        }
    }
}

impl RunBackend for Remote {
    fn search(&mut self, run_case: &mut RunCase<'_>) -> Result<SearchEnd, WireError> {
        loop {
            match self.next_event()? {
                (
                    message_id,
                    Event::TestCase {
                        stream_id,
                        is_final,
                    },
                ) => self.answer(message_id, stream_id, is_final, run_case)?,
                (message_id, Event::TestDone(results)) => {
                    self.run_stream.reply(message_id, Cbor::Bool(true))?;
                    self.finals_owed = results.interesting_test_cases;
                    return Ok(self.search_end(results));
                }
            }
        }
    }

    fn replay_failures(&mut self, run_case: &mut RunCase<'_>) -> Result<(), WireError> {
        while self.finals_owed > 0 {
            match self.next_event()? {
                (
                    message_id,
                    Event::TestCase {
                        stream_id,
                        is_final,
                    },
                ) => {
                    self.finals_owed -= 1;
                    self.answer(message_id, stream_id, is_final, run_case)?;
                }
                (_, Event::TestDone(_)) => {
                    return Err(WireError::Protocol(
                        "expected a final test_case after test_done, got another test_done".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, run_case: &mut RunCase<'_>) -> Result<(), WireError> {
        // The server replays its failures whatever the client's verdict;
        // each is answered (run, or concluded at once after a usage error).
        self.replay_failures(run_case)?;
        self.run_stream.close();
        Ok(())
    }
}

/// The property's name for messages.
fn describe(settings: &Settings) -> String {
    settings
        .name
        .as_deref()
        .map(|n| format!("property {n}"))
        .unwrap_or("the property".into())
}

/// Runs `test` as one `run_test` on `connection` (the scripted servers of
/// the tests).
#[cfg(test)]
pub(crate) fn run_on(
    connection: &Arc<Connection>,
    settings: &Settings,
    server_name: &str,
    test: &mut dyn FnMut(&mut crate::TestCase),
) -> Result<RunSummary, String> {
    let seed = settings.effective_seed();
    let mut remote = Remote::start_on(connection, settings, server_name, seed)?;
    crate::runner::run_on(&mut remote, settings, seed, test)
}

#[cfg(test)]
#[path = "remote_tests.rs"]
mod tests;
