//! hegel-core's `HEGEL_PROTOCOL_TEST_MODE`: a server that misbehaves on
//! purpose, so that a client's own test suite can check how it handles a
//! crash, a `StopTest` error at each place one can come, an error reply, and
//! a run without test cases.
//!
//! With the variable set, geist-server answers the first `run_test` as
//! hegel-core's test server does (hegel-core 0.6's `hegel/test_server.py`,
//! the release whose clients' suites use it): no engine, a fixed script per
//! mode, then `test_done`, and the server exits, so the client starts a
//! fresh one for its next test. The crash modes exit right after the
//! handshake.

use geist_protocol::{Connection, ErrorKind, ErrorReply, Event, Stream};
use geist_wire::cbor::{self, Value as Cbor};
use std::sync::Arc;
use std::time::Duration;

/// The environment variable that selects a mode.
pub const TEST_MODE_VARIABLE: &str = "HEGEL_PROTOCOL_TEST_MODE";

/// Why the connection ends after a mode's script (the server then exits).
pub const FINISHED: &str = "the HEGEL_PROTOCOL_TEST_MODE script is over";

/// How long a mode waits, after an error it sent, for a client that wrongly
/// goes on, before it closes the stream (as hegel-core's test server does).
const GRACE: Duration = Duration::from_millis(100);

/// A step of a script: a client that goes away, or sends something else
/// than the script expects, ends it (the reason is only for debugging).
type Step<T> = Result<T, String>;

/// One misbehaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestMode {
    /// Exit (status 1) right after the handshake.
    CrashAfterHandshake,
    /// Write an error line to stderr, then exit right after the handshake.
    CrashAfterHandshakeWithStderr,
    /// A normal first test case; `StopTest` in reply to the second one's
    /// first `generate`.
    StopTestOnGenerate,
    /// `StopTest` in reply to `mark_complete`.
    StopTestOnMarkComplete,
    /// `StopTest` in reply to the first `collection_more`.
    StopTestOnCollectionMore,
    /// `StopTest` in reply to `new_collection`.
    StopTestOnNewCollection,
    /// An error reply (`RequestError`) to the first `generate`.
    ErrorResponse,
    /// `test_done` at once, with no test case.
    EmptyTest,
}

impl TestMode {
    /// Every mode with its name.
    const NAMED: [(&'static str, TestMode); 8] = [
        ("crash_after_handshake", TestMode::CrashAfterHandshake),
        (
            "crash_after_handshake_with_stderr",
            TestMode::CrashAfterHandshakeWithStderr,
        ),
        ("stop_test_on_generate", TestMode::StopTestOnGenerate),
        (
            "stop_test_on_mark_complete",
            TestMode::StopTestOnMarkComplete,
        ),
        (
            "stop_test_on_collection_more",
            TestMode::StopTestOnCollectionMore,
        ),
        (
            "stop_test_on_new_collection",
            TestMode::StopTestOnNewCollection,
        ),
        ("error_response", TestMode::ErrorResponse),
        ("empty_test", TestMode::EmptyTest),
    ];

    /// The mode with this name, or an error listing the known ones.
    pub fn parse(name: &str) -> Result<TestMode, String> {
        TestMode::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, mode)| *mode)
            .ok_or_else(|| {
                let known: Vec<&str> = TestMode::NAMED.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown {TEST_MODE_VARIABLE} {name:?}; known modes: {}",
                    known.join(", ")
                )
            })
    }

    /// Whether the mode ends the server right after the handshake.
    pub fn crashes(self) -> bool {
        matches!(
            self,
            TestMode::CrashAfterHandshake | TestMode::CrashAfterHandshakeWithStderr
        )
    }
}

/// Plays `mode` on the run whose `run_test` opened `test_stream`.
pub(crate) fn run(mode: TestMode, connection: &Arc<Connection>, test_stream: Stream) {
    // A client that goes away ends the script; there is nobody to tell.
    let _ = play(mode, connection, &test_stream);
}

fn play(mode: TestMode, connection: &Arc<Connection>, test_stream: &Stream) -> Step<()> {
    match mode {
        TestMode::CrashAfterHandshake | TestMode::CrashAfterHandshakeWithStderr => {}
        TestMode::EmptyTest => {}
        TestMode::StopTestOnGenerate => {
            let first = test_case(connection, test_stream)?;
            answer_generate(&first)?;
            let id = expect(&first, "mark_complete")?;
            first.reply(id, Cbor::Null).map_err(|e| e.to_string())?;
            first.close();
            let second = test_case(connection, test_stream)?;
            let id = expect(&second, "generate")?;
            stop_test(&second, id);
        }
        TestMode::StopTestOnMarkComplete => {
            let case = test_case(connection, test_stream)?;
            answer_generate(&case)?;
            let id = expect(&case, "mark_complete")?;
            stop_test(&case, id);
        }
        TestMode::StopTestOnCollectionMore => {
            let case = test_case(connection, test_stream)?;
            let id = answer_until(&case, "collection_more")?;
            stop_test(&case, id);
        }
        TestMode::StopTestOnNewCollection => {
            let case = test_case(connection, test_stream)?;
            let id = answer_until(&case, "new_collection")?;
            stop_test(&case, id);
        }
        TestMode::ErrorResponse => {
            let case = test_case(connection, test_stream)?;
            let id = expect(&case, "generate")?;
            case.reply_error(
                id,
                &ErrorReply::new(
                    ErrorKind::Other("RequestError".into()),
                    "Simulated error for testing",
                ),
            );
            // The client should still conclude the test case.
            if let Ok(request) = case.next_request() {
                let _ = case.reply(request.message_id, Cbor::Null);
            }
            case.close();
        }
    }
    test_done(test_stream)
}

/// Opens a test case's stream and announces it.
fn test_case(connection: &Arc<Connection>, test_stream: &Stream) -> Step<Stream> {
    let case = connection.new_stream().map_err(|e| e.to_string())?;
    test_stream
        .request(
            &Event::TestCase {
                stream_id: case.id,
                is_final: false,
            }
            .encode(),
        )
        .map_err(|e| e.to_string())?;
    Ok(case)
}

/// The next request's id, after checking it is the `command` expected.
fn expect(case: &Stream, command: &str) -> Step<u32> {
    let request = case.next_request().map_err(|e| e.to_string())?;
    let message = request.message().map_err(|e| e.to_string())?;
    let name = cbor::map_get(&message, "command").and_then(cbor::as_text);
    if name != Some(command) {
        return Err(format!("expected {command}, got {name:?}"));
    }
    Ok(request.message_id)
}

/// Answers a `generate` with `true` (what the modes' clients draw: a boolean).
fn answer_generate(case: &Stream) -> Step<()> {
    let id = expect(case, "generate")?;
    case.reply(id, Cbor::Bool(true)).map_err(|e| e.to_string())
}

/// Answers every command simply until `command` comes; returns its id.
fn answer_until(case: &Stream, command: &str) -> Step<u32> {
    let mut collections = 0i128;
    loop {
        let request = case.next_request().map_err(|e| e.to_string())?;
        let message = request.message().map_err(|e| e.to_string())?;
        match cbor::map_get(&message, "command").and_then(cbor::as_text) {
            Some(name) if name == command => return Ok(request.message_id),
            Some("new_collection") => {
                case.reply(request.message_id, cbor::integer(collections))
                    .map_err(|e| e.to_string())?;
                collections += 1;
            }
            _ => case
                .reply(request.message_id, Cbor::Null)
                .map_err(|e| e.to_string())?,
        }
    }
}

/// Replies `StopTest`, waits for a client that wrongly goes on, closes.
fn stop_test(case: &Stream, id: u32) {
    case.reply_error(id, &ErrorReply::new(ErrorKind::StopTest, "StopTest"));
    std::thread::sleep(GRACE);
    case.close();
}

/// The run's end: passed, nothing run.
fn test_done(test_stream: &Stream) -> Step<()> {
    let results = cbor::text_map([
        ("passed", Cbor::Bool(true)),
        ("examples_run", cbor::integer(0)),
        ("valid_test_cases", cbor::integer(0)),
        ("invalid_test_cases", cbor::integer(0)),
        ("interesting_test_cases", cbor::integer(0)),
    ]);
    test_stream
        .request(&cbor::text_map([
            ("event", Cbor::Text("test_done".into())),
            ("results", results),
        ]))
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_named_as_hegel_core_names_them() {
        assert_eq!(TestMode::parse("empty_test"), Ok(TestMode::EmptyTest));
        assert!(TestMode::parse("crash_after_handshake").unwrap().crashes());
        let error = TestMode::parse("explode").unwrap_err();
        assert!(error.contains("stop_test_on_generate"), "{error}");
    }
}
