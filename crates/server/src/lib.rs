//! geist-server: a native Hegel protocol server, a drop-in replacement for hegel-core.
//!
//! The server speaks the Hegel wire protocol on a byte stream (stdin/stdout
//! when run as `geist-server`): a handshake announcing the protocol version,
//! then any number of concurrent test runs, each on its own thread (at most
//! [`ServerConfig::max_runs`] at once), each driving geist's engine with a
//! test function that relays choices to the client. Messages, versions and
//! the connection are [`geist_protocol`]'s; generating and shrinking are the
//! engine's; this crate dispatches one to the other.

pub mod session;
pub mod test_mode;

use geist_protocol::connection::{Connection, ConnectionConfig, ReaderEnd, Role, Stream};
use geist_protocol::{Behaviour, CommandError, ControlCommand, ErrorKind, ErrorReply, RunTest};
use geist_wire::cbor::Value as Cbor;
use geist_wire::{HANDSHAKE_REQUEST, StreamOrigin};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub use geist_protocol::version::{DEFAULT_VERSION, ProtocolVersion, SUPPORTED_VERSIONS};

/// How many runs one connection may have going at once unless told otherwise.
pub const DEFAULT_MAX_RUNS: usize = 64;

/// How a server behaves.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The protocol version to announce.
    pub version: ProtocolVersion,
    /// How long to wait for the client on a stream before giving up.
    pub stream_timeout: Duration,
    /// Log every packet to stderr.
    pub debug: bool,
    /// Log lifecycle events to stderr.
    pub verbose: bool,
    /// The most runs (`run_test`, `single_test_case`) going at once; one
    /// more is refused with an error reply naming this limit.
    pub max_runs: usize,
    /// The limits on what one `generate` may produce.
    pub limits: session::GenerateLimits,
    /// hegel-core's `HEGEL_PROTOCOL_TEST_MODE`: misbehave on purpose
    /// ([`test_mode`]), for clients' own test suites.
    pub test_mode: Option<test_mode::TestMode>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            version: DEFAULT_VERSION,
            stream_timeout: Duration::from_secs(30),
            debug: false,
            verbose: false,
            max_runs: DEFAULT_MAX_RUNS,
            limits: session::GenerateLimits::default(),
            test_mode: None,
        }
    }
}

/// Why serving a connection ended abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client's first packet was not a handshake.
    #[error("bad handshake: {0}")]
    Handshake(String),
    /// The byte stream stopped being packets.
    #[error("protocol framing error: {0}")]
    Framing(#[from] geist_wire::DecodeError),
    /// The transport failed.
    #[error("transport error: {0}")]
    Io(#[from] std::io::Error),
    /// A control message this protocol version answers by ending the
    /// connection (see [`Behaviour::UnknownControlCommandEndsConnection`]).
    #[error("{0}; the connection ends (as hegel-core's does)")]
    ControlRefused(String),
    /// `HEGEL_PROTOCOL_TEST_MODE` asked for a crash after the handshake.
    #[error("{0} (HEGEL_PROTOCOL_TEST_MODE)")]
    TestModeCrash(&'static str),
}

/// Serves one connection until the client closes it.
pub fn serve<R, W>(input: R, output: W, config: ServerConfig) -> Result<(), ServeError>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let connection = Connection::new(
        Box::new(output),
        ConnectionConfig {
            role: Role::Server,
            timeout: config.stream_timeout,
            log_packets: config.debug.then(|| "geist-server".to_string()),
        },
    );
    let control = connection
        .open_stream(0)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let reader = connection.spawn_reader("geist-server-reader", input)?;

    let server = Server {
        connection,
        config,
        live_runs: Arc::new(AtomicUsize::new(0)),
    };
    let mut handshake_done = false;
    while let Ok(request) = control.next_request_without_timeout() {
        if !handshake_done {
            if request.payload != HANDSHAKE_REQUEST {
                let message = format!(
                    "expected {:?}, got {:?}",
                    String::from_utf8_lossy(HANDSHAKE_REQUEST),
                    String::from_utf8_lossy(&request.payload)
                );
                control.reply_error(
                    request.message_id,
                    &ErrorReply::protocol(format!("Bad handshake: {message}")),
                );
                return Err(ServeError::Handshake(message));
            }
            let reply = geist_wire::Packet::reply(
                0,
                request.message_id,
                server.config.version.handshake_reply(),
            );
            if server.connection.send(&reply).is_err() {
                return Ok(());
            }
            handshake_done = true;
            match server.config.test_mode {
                Some(test_mode::TestMode::CrashAfterHandshakeWithStderr) => {
                    return Err(ServeError::TestModeCrash(
                        "FakeServerError: intentional crash for testing",
                    ));
                }
                Some(mode) if mode.crashes() => {
                    return Err(ServeError::TestModeCrash("crashed after the handshake"));
                }
                _ => {}
            }
            continue;
        }
        if let Err(reason) = server.handle_control(&control, &request) {
            // As hegel-core: the connection ends, runs in progress with it,
            // and the server says why and exits with an error status.
            server.connection.end(reason.clone());
            return Err(ServeError::ControlRefused(reason));
        }
    }
    if server.connection.end_reason().as_deref() == Some(test_mode::FINISHED) {
        // Not waiting for the client to close its side: hegel-core's test
        // server exits here, and the client notices that.
        return Ok(());
    }
    match reader.join() {
        Ok(ReaderEnd::Eof) | Err(_) => Ok(()),
        Ok(ReaderEnd::Framing(e)) => Err(ServeError::Framing(e)),
        Ok(ReaderEnd::Io(e)) => Err(ServeError::Io(e)),
    }
}

/// One connection's server: its settings and the runs it has going.
struct Server {
    connection: Arc<Connection>,
    config: ServerConfig,
    live_runs: Arc<AtomicUsize>,
}

/// What a run thread does.
enum RunKind {
    Run(RunTest),
    Single { seed: Option<u128> },
}

/// Decrements the live-run count when the run's thread ends (a panic included).
struct RunSlot(Arc<AtomicUsize>);

impl Drop for RunSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Server {
    /// Answers one control-stream request. `Err` (with the reason) when the
    /// version says the connection must end (see
    /// [`Behaviour::UnknownControlCommandEndsConnection`]).
    fn handle_control(
        &self,
        control: &Stream,
        request: &geist_protocol::Request,
    ) -> Result<(), String> {
        let version = self.config.version;
        let ends = version.has(Behaviour::UnknownControlCommandEndsConnection);
        let refuse = |error: ErrorReply| {
            control.reply_error(request.message_id, &error);
            Ok(())
        };
        if request.payload == HANDSHAKE_REQUEST {
            let why = "the handshake was already done: after it the control stream takes CBOR \
                       commands (run_test, single_test_case)";
            if ends {
                return Err(why.to_string());
            }
            return refuse(ErrorReply::protocol(why));
        }
        let message = match request.message() {
            Ok(m) => m,
            Err(e) if ends => return Err(format!("a control message that is not CBOR: {e}")),
            Err(e) => return refuse(ErrorReply::protocol(e.to_string())),
        };
        if ends && !ControlCommand::is_named_in(&message, version) {
            return Err(match geist_wire::cbor::map_get(&message, "command") {
                Some(Cbor::Text(name)) => format!("Unknown command: {name}"),
                _ => "a control message without a \"command\" text".to_string(),
            });
        }
        let (stream_id, kind) = match ControlCommand::decode(message, self.config.version) {
            Ok(ControlCommand::RunTest(run)) => (run.stream_id, RunKind::Run(run)),
            Ok(ControlCommand::SingleTestCase { stream_id, seed }) => {
                (stream_id, RunKind::Single { seed })
            }
            Err(CommandError { message, kind }) => return refuse(ErrorReply::new(kind, message)),
        };
        let name = match kind {
            RunKind::Run(_) => "run_test",
            RunKind::Single { .. } => "single_test_case",
        };
        let Some(id) = stream_id.and_then(|i| u32::try_from(i).ok()) else {
            return refuse(ErrorReply::protocol(format!(
                "{name} requires an integer stream_id"
            )));
        };
        if StreamOrigin::of(id) != StreamOrigin::Client {
            return refuse(ErrorReply::protocol(format!(
                "Client stream id must be odd, got {id}"
            )));
        }
        let max = self.config.max_runs;
        if self.live_runs.fetch_add(1, Ordering::AcqRel) >= max {
            self.live_runs.fetch_sub(1, Ordering::AcqRel);
            return refuse(ErrorReply::new(
                ErrorKind::ValueError,
                format!(
                    "too many runs at once: this server runs at most {max} at a time \
                     (geist-server --max-runs); wait for one to finish"
                ),
            ));
        }
        let slot = RunSlot(Arc::clone(&self.live_runs));
        let stream = match self.connection.open_stream(id) {
            Ok(stream) => stream,
            Err(e) => return refuse(ErrorReply::protocol(e.to_string())),
        };
        if let RunKind::Run(run) = &kind
            && self.config.verbose
        {
            eprintln!(
                "geist-server: run_test on stream {} ({} test cases)",
                stream.id, run.test_cases
            );
        }
        // The thread starts first and waits for the go-ahead, so a thread
        // the OS refuses is an error reply rather than an accepted run
        // that never starts.
        let (go, wait_for_go) = std::sync::mpsc::channel::<()>();
        let test_mode = self.config.test_mode;
        let run = session::Run {
            connection: Arc::clone(&self.connection),
            version: self.config.version,
            limits: self.config.limits,
            debug: self.config.debug,
        };
        let started = std::thread::Builder::new()
            .name(format!("geist-run-{id}"))
            .spawn(move || {
                let _slot = slot;
                if wait_for_go.recv().is_err() {
                    return;
                }
                match (kind, test_mode) {
                    (RunKind::Run(_), Some(mode)) => {
                        // hegel-core's test server plays one run, then
                        // closes the connection: the client starts a new
                        // server for its next test.
                        test_mode::run(mode, &run.connection, stream);
                        run.connection.end(test_mode::FINISHED.to_string());
                    }
                    (RunKind::Run(request), None) => run.run_test(stream, request),
                    (RunKind::Single { seed }, _) => run.single_test_case(stream, seed),
                }
            });
        match started {
            Ok(_) => {
                let ok = geist_wire::Packet::reply(
                    0,
                    request.message_id,
                    geist_protocol::reply::encode_result(Cbor::Bool(true)),
                );
                let _ = self.connection.send(&ok);
                let _ = go.send(());
                Ok(())
            }
            Err(e) => refuse(ErrorReply::new(
                ErrorKind::ValueError,
                format!("cannot start a thread for the {name} on stream {id}: {e}"),
            )),
        }
    }
}
