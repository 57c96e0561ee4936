//! A connection to a Hegel server: spawn or connect, handshake, streams.
//!
//! The streams themselves are [`geist_protocol`]'s multiplexed connection,
//! the same one geist-server speaks through. What this module adds is the
//! server as a process: starting it, keeping the last lines of its stderr,
//! and, when it exits, telling every waiting thread at once with its exit
//! status and those lines instead of hanging. Connections are shared per
//! command line: the first property to need one spawns it, later ones (on
//! any thread) reuse it, and a dead one is replaced.
//!
//! A server the client spawned is also ended by it: when the process exits
//! (and when a connection is dropped), the server's standard input is
//! closed, which is the protocol's way to say "no more runs", and the
//! client waits for it to exit (killing it only after [`SHUTDOWN_GRACE`]).
//! The server's last words about a run, written after its last reply (such
//! as hegel-core's per-test-case conformance metrics, its observations, its
//! example database), are then on disk when the test process is gone;
//! before, under load the process could exit between the server's reply to
//! the last `mark_complete` and its writing the line for that test case.
//! Connections live in a static, whose destructors Rust never runs, so the
//! exit is caught with C's `atexit`.

use super::{ServerAddress, ServerCommand, WireError};
use geist_protocol::connection::{
    Connection as Wire, ConnectionConfig, ConnectionError, OpenError, Request, Role, Stream,
};
use geist_protocol::version::{ProtocolVersion, VersionError, supported_list};
use geist_wire::HANDSHAKE_REQUEST;
use geist_wire::cbor::Value as Cbor;
use std::collections::VecDeque;
use std::io::{BufRead, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};
use std::time::{Duration, Instant};

/// Lines of the server's stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// How long a spawned server is given to finish and exit once its input is
/// closed, before it is killed.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// A spawned server's standard input, which the client can close while the
/// connection still holds it as its writer (closing it ends the server).
#[derive(Clone)]
pub(crate) struct ServerInput(Arc<Mutex<Option<BufWriter<ChildStdin>>>>);

impl ServerInput {
    fn new(stdin: ChildStdin) -> ServerInput {
        // Buffered: a deferred packet (see `geist_protocol::connection`)
        // leaves in one write with the next.
        ServerInput(Arc::new(Mutex::new(Some(BufWriter::with_capacity(
            1 << 16,
            stdin,
        )))))
    }

    /// Flushes and closes the pipe: the server reads the end of its input.
    /// A write blocked on a server that no longer reads holds the pipe: after
    /// `grace` the pipe is left open (the server is then killed).
    fn close(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        loop {
            match self.0.try_lock() {
                Ok(mut input) => {
                    if let Some(mut input) = input.take() {
                        let _ = input.flush();
                    }
                    return;
                }
                Err(std::sync::TryLockError::Poisoned(e)) => {
                    e.into_inner().take();
                    return;
                }
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(std::sync::TryLockError::WouldBlock) => return,
            }
        }
    }
}

impl Write for ServerInput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match lock(&self.0).as_mut() {
            Some(input) => input.write(buf),
            None => Err(closed_input()),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match lock(&self.0).as_mut() {
            Some(input) => input.write_all(buf),
            None => Err(closed_input()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match lock(&self.0).as_mut() {
            Some(input) => input.flush(),
            None => Err(closed_input()),
        }
    }
}

fn closed_input() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the server's input was closed (the client is shutting it down)",
    )
}

/// A server process the client started, with its input.
pub(crate) struct Spawned {
    child: Child,
    input: ServerInput,
}

/// Locks a mutex, ignoring poisoning (a panicking property must not break
/// the connection for other threads).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The version a handshake reply announces, if geist speaks it.
pub(crate) fn version_from_handshake(reply: &[u8]) -> Result<ProtocolVersion, WireError> {
    ProtocolVersion::from_handshake_reply(reply).map_err(|e| match e {
        VersionError::Unsupported { version } => WireError::Handshake(format!(
            "the server speaks protocol version {version}; geist speaks {}",
            supported_list()
        )),
        other => WireError::Handshake(other.to_string()),
    })
}

/// A live connection to one server.
pub(crate) struct Connection {
    wire: Arc<Wire>,
    /// The control stream (0), shared by every run starting on this connection.
    control: Mutex<Option<Stream>>,
    /// The version the server announced (set by the handshake).
    version: OnceLock<ProtocolVersion>,
    /// The server process (none for a connection over given streams).
    child: Mutex<Option<Child>>,
    /// Its standard input (none for a connection over given streams).
    input: Option<ServerInput>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// The command line, for messages.
    pub(crate) command: String,
}

/// Connections by command line.
static CONNECTIONS: Mutex<Vec<(Vec<String>, Arc<Connection>)>> = Mutex::new(Vec::new());

impl Connection {
    /// The process-wide connection for `command`, spawning the server (and
    /// handshaking) if there is none or the previous one died.
    pub(crate) fn shared(command: &ServerCommand) -> Result<Arc<Connection>, WireError> {
        let mut connections = lock(&CONNECTIONS);
        connections.retain(|(_, c)| !c.has_ended());
        if let Some((_, connection)) = connections.iter().find(|(argv, _)| *argv == command.argv) {
            return Ok(Arc::clone(connection));
        }
        let connection = Connection::spawn(command)?;
        connections.push((command.argv.clone(), Arc::clone(&connection)));
        Ok(connection)
    }

    /// The process-wide connection to the server at `address`, connecting
    /// (and handshaking) if there is none or the previous one ended.
    pub(crate) fn shared_socket(address: &ServerAddress) -> Result<Arc<Connection>, WireError> {
        let key = vec![address.address.clone()];
        let mut connections = lock(&CONNECTIONS);
        connections.retain(|(_, c)| !c.has_ended());
        if let Some((_, connection)) = connections.iter().find(|(k, _)| *k == key) {
            return Ok(Arc::clone(connection));
        }
        let connection = Connection::connect(address)?;
        connections.push((key, Arc::clone(&connection)));
        Ok(connection)
    }

    /// Connects to a listening server and performs the handshake.
    pub(crate) fn connect(address: &ServerAddress) -> Result<Arc<Connection>, WireError> {
        let failed = |e: std::io::Error| WireError::Connect {
            address: address.address.clone(),
            message: e.to_string(),
        };
        let (reader, writer): (Box<dyn Read + Send>, Box<dyn Write + Send>) =
            match address.address.split_once(':') {
                #[cfg(unix)]
                Some(("unix", path)) => {
                    let stream = std::os::unix::net::UnixStream::connect(path).map_err(failed)?;
                    (
                        Box::new(stream.try_clone().map_err(failed)?),
                        Box::new(stream),
                    )
                }
                Some(("tcp", host)) => {
                    let stream = std::net::TcpStream::connect(host).map_err(failed)?;
                    // Packets are written whole; do not hold small ones back.
                    stream.set_nodelay(true).map_err(failed)?;
                    (
                        Box::new(stream.try_clone().map_err(failed)?),
                        Box::new(stream),
                    )
                }
                _ => return Err(WireError::BadAddress(address.address.clone())),
            };
        Connection::open(
            writer,
            reader,
            None,
            Arc::new(Mutex::new(VecDeque::new())),
            address.address.clone(),
            address.timeout,
        )
    }

    /// Starts the server and performs the handshake.
    pub(crate) fn spawn(command: &ServerCommand) -> Result<Arc<Connection>, WireError> {
        let (program, args) = command.argv.split_first().ok_or(WireError::EmptyCommand)?;
        let display = command.display();
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("PYTHONUNBUFFERED", "1")
            .spawn()
            .map_err(|e| WireError::Spawn {
                command: display.clone(),
                message: e.to_string(),
            })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(WireError::Spawn {
                command: display,
                message: "the child's standard streams were not captured".into(),
            });
        };
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr_tail);
        std::thread::Builder::new()
            .name("geist-server-stderr".into())
            .spawn(move || {
                for line in std::io::BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let mut tail = lock(&tail);
                    if tail.len() == STDERR_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            })
            .map_err(|e| WireError::Spawn {
                command: display.clone(),
                message: format!("cannot start the stderr reader: {e}"),
            })?;

        static SHUT_DOWN_AT_EXIT: Once = Once::new();
        SHUT_DOWN_AT_EXIT.call_once(|| {
            // SAFETY: `atexit` is ISO C, in every C library Rust links;
            // the handler is a plain `extern "C" fn` that does not unwind.
            // Should registration fail, servers are left to notice the end
            // of their input by themselves, as before.
            let _ = unsafe { atexit(shut_down_servers_at_exit) };
        });
        let input = ServerInput::new(stdin);
        Connection::open(
            Box::new(input.clone()),
            Box::new(stdout),
            Some(Spawned { child, input }),
            stderr_tail,
            display,
            command.timeout,
        )
    }

    /// A connection over the given byte streams (`child` is the server
    /// process behind them, if any): starts the reader and handshakes.
    pub(crate) fn open(
        writer: Box<dyn Write + Send>,
        reader: Box<dyn Read + Send>,
        server: Option<Spawned>,
        stderr_tail: Arc<Mutex<VecDeque<String>>>,
        display: String,
        timeout: Duration,
    ) -> Result<Arc<Connection>, WireError> {
        let (child, input) = match server {
            Some(Spawned { child, input }) => (Some(child), Some(input)),
            None => (None, None),
        };
        let wire = Wire::new(
            writer,
            ConnectionConfig {
                role: Role::Client,
                timeout,
                log_packets: None,
            },
        );
        let connection = Arc::new(Connection {
            wire: Arc::clone(&wire),
            control: Mutex::new(None),
            version: OnceLock::new(),
            child: Mutex::new(child),
            input,
            stderr_tail,
            command: display,
        });
        let fail = |connection: &Connection, e: WireError| {
            connection.kill();
            Err(e)
        };
        // The control stream is routed before anything is sent.
        let control = match wire.open_stream(0) {
            Ok(control) => control,
            Err(e) => return fail(&connection, WireError::Protocol(e.to_string())),
        };
        if let Err(e) = wire.spawn_reader("geist-server-reader", reader) {
            return fail(
                &connection,
                WireError::Protocol(format!("cannot start the reader thread: {e}")),
            );
        }
        let reply = control
            .send_request(HANDSHAKE_REQUEST.to_vec())
            .and_then(|id| control.await_reply(id));
        let version = match reply {
            Ok(packet) => version_from_handshake(&packet.payload),
            Err(ConnectionError::Ended(_)) | Err(ConnectionError::Timeout(..)) => Err(
                WireError::Handshake(format!("no reply{}", connection.exit_description())),
            ),
            Err(e) => Err(connection.error(e, "the handshake")),
        };
        match version {
            Ok(v) => {
                let _ = connection.version.set(v);
            }
            Err(e) => return fail(&connection, e),
        }
        *lock(&connection.control) = Some(control);
        Ok(connection)
    }

    /// The protocol version the server announced in the handshake.
    pub(crate) fn version(&self) -> ProtocolVersion {
        self.version
            .get()
            .copied()
            .unwrap_or(ProtocolVersion { major: 0, minor: 0 })
    }

    /// Whether the server is gone.
    pub(crate) fn has_ended(&self) -> bool {
        self.wire.has_ended()
    }

    fn kill(&self) {
        if let Some(child) = lock(&self.child).as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The exit status and last stderr lines of the server, for messages.
    pub(crate) fn exit_description(&self) -> String {
        let mut out = self.wire.end_reason().unwrap_or_default();
        // Give a dying process a moment to be reaped, so the status is known.
        let deadline = Instant::now() + Duration::from_millis(200);
        let status = loop {
            match lock(&self.child).as_mut().map(Child::try_wait) {
                Some(Ok(Some(status))) => break Some(status),
                Some(Ok(None)) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => break None,
            }
        };
        if let Some(status) = status {
            out.push_str(&format!(" ({status})"));
        }
        out.push_str(&format!(" [server: {}]", self.command));
        let tail = lock(&self.stderr_tail);
        if !tail.is_empty() {
            out.push_str("\nLast lines of the server's stderr:\n");
            for line in tail.iter() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// What a failure of the connection means for a run, `command` naming
    /// the request it happened in.
    fn error(&self, error: ConnectionError, command: &str) -> WireError {
        match error {
            ConnectionError::Ended(_) => WireError::ServerExited(self.exit_description()),
            ConnectionError::StreamClosed(id) => WireError::ErrorReply {
                command: command.to_string(),
                error_type: "StreamClosed".into(),
                message: format!("the server closed stream {id}"),
            },
            ConnectionError::Timeout(timeout, id) => WireError::Timeout(
                timeout,
                format!("waiting on stream {id}; server: {}", self.command),
            ),
            ConnectionError::ErrorReply(reply) => WireError::ErrorReply {
                command: command.to_string(),
                error_type: reply.kind.as_str().to_string(),
                message: reply.message,
            },
            ConnectionError::BadReply { stream, message } => {
                WireError::Protocol(format!("reply to {command} on stream {stream}: {message}"))
            }
        }
    }

    fn open_error(&self, error: OpenError) -> WireError {
        match error {
            OpenError::Ended(_) => WireError::ServerExited(self.exit_description()),
            OpenError::AlreadyOpen(id) => {
                WireError::Protocol(format!("stream {id} is already open"))
            }
        }
    }

    /// Registers a stream the server announced.
    pub(crate) fn open_stream(self: &Arc<Self>, id: u32) -> Result<StreamHandle, WireError> {
        let stream = self.wire.open_stream(id).map_err(|e| self.open_error(e))?;
        Ok(StreamHandle {
            id,
            stream,
            connection: Arc::clone(self),
        })
    }

    /// A fresh client-created (odd) stream.
    pub(crate) fn new_client_stream(self: &Arc<Self>) -> Result<StreamHandle, WireError> {
        let stream = self.wire.new_stream().map_err(|e| self.open_error(e))?;
        Ok(StreamHandle {
            id: stream.id,
            stream,
            connection: Arc::clone(self),
        })
    }

    /// Sends a request on the control stream and returns its `result`.
    pub(crate) fn control_request(&self, command: &str, message: &Cbor) -> Result<Cbor, WireError> {
        let control = lock(&self.control);
        match control.as_ref() {
            Some(stream) => stream.request(message).map_err(|e| self.error(e, command)),
            None => Err(WireError::Protocol("the control stream is not open".into())),
        }
    }

    /// Ends a spawned server: closes its input (the server finishes what
    /// it was doing and exits) and waits for it to exit, killing it if it
    /// is still running after `grace`. Nothing for a connection to a
    /// server the client did not start.
    pub(crate) fn shut_down(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        if let Some(input) = &self.input {
            input.close(grace);
        }
        let mut child = lock(&self.child);
        let Some(child) = child.as_mut() else { return };
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return;
                }
            }
        }
    }
}

unsafe extern "C" {
    fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
}

/// At process exit: ends every server this process spawned (see the module
/// docs). A thread still holding the registry at exit is not waited for.
extern "C" fn shut_down_servers_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let connections = match CONNECTIONS.try_lock() {
            Ok(connections) => connections,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        for (_, connection) in connections.iter() {
            connection.shut_down(SHUTDOWN_GRACE);
        }
    });
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.shut_down(SHUTDOWN_GRACE);
    }
}

/// The client's end of one stream.
pub(crate) struct StreamHandle {
    /// The stream id.
    pub(crate) id: u32,
    stream: Stream,
    connection: Arc<Connection>,
}

impl StreamHandle {
    /// The connection this stream belongs to.
    pub(crate) fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// Sends a CBOR request and waits for its reply's `result`. An error
    /// reply is [`WireError::ErrorReply`] naming `command`.
    pub(crate) fn request(&self, command: &str, message: &Cbor) -> Result<Cbor, WireError> {
        self.stream
            .request(message)
            .map_err(|e| self.connection.error(e, command))
    }

    /// Waits for the next request (an event) on this stream.
    pub(crate) fn next_request(&self) -> Result<Request, WireError> {
        self.stream.next_request().map_err(|e| match e {
            ConnectionError::StreamClosed(id) => WireError::Protocol(format!(
                "the server closed stream {id} in the middle of a run"
            )),
            other => self.connection.error(other, "an event"),
        })
    }

    /// Replies `{"result": value}`.
    pub(crate) fn reply(&self, message_id: u32, value: Cbor) -> Result<(), WireError> {
        self.stream
            .reply(message_id, value)
            .map_err(|e| self.connection.error(e, "a reply"))
    }

    /// Replies `{"result": value}`, leaving the write to go with the next
    /// packet sent.
    pub(crate) fn reply_deferred(&self, message_id: u32, value: Cbor) -> Result<(), WireError> {
        self.stream
            .reply_deferred(message_id, value)
            .map_err(|e| self.connection.error(e, "a reply"))
    }

    /// Sends `stream_close` (the stream is then forgotten).
    pub(crate) fn close(&self) {
        self.stream.close();
    }
}
