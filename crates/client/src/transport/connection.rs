//! A connection to a Hegel server child process: spawn, handshake, streams.
//!
//! One reader thread decodes the server's packets and routes each to its
//! stream's channel; writers take a lock and write whole packets. Every wait
//! has a timeout, and when the server exits the reader drops every route, so a
//! waiting thread learns at once (with the exit status and the last lines the
//! server wrote to stderr) instead of hanging. Connections are shared per
//! command line: the first property to need one spawns it, later ones (on any
//! thread) reuse it, and a dead one is replaced.

use super::{ServerAddress, ServerCommand, WireError};
use geist_wire::cbor::{self, Value as Cbor};
use geist_wire::{
    HANDSHAKE_REQUEST, MessageCounter, Packet, PacketReader, ReadError, StreamIdAllocator,
};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The Hegel protocol versions the client speaks (those geist-server speaks).
pub const SUPPORTED_VERSIONS: &[&str] = &[
    "0.1", "0.10", "0.11", "0.12", "0.13", "0.14", "0.15", "0.16",
];

/// Lines of the server's stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// How long a waiting thread polls before sleeping: a server usually answers
/// within microseconds, and waking a sleeping thread costs more than that.
const SPIN: Duration = Duration::from_micros(50);

/// Locks a mutex, ignoring poisoning (a panicking property must not break
/// the connection for other threads).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The protocol version a server announced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProtocolVersion {
    /// Major version (0).
    pub(crate) major: u32,
    /// Minor version.
    pub(crate) minor: u32,
}

impl ProtocolVersion {
    /// Parses a handshake reply, `Hegel/<major>.<minor>`, accepting only
    /// versions in [`SUPPORTED_VERSIONS`].
    pub(crate) fn from_handshake(reply: &[u8]) -> Result<ProtocolVersion, WireError> {
        let text = String::from_utf8_lossy(reply);
        let version = text.strip_prefix("Hegel/").ok_or_else(|| {
            WireError::Handshake(format!("expected \"Hegel/<version>\", got {text:?}"))
        })?;
        if !SUPPORTED_VERSIONS.contains(&version.trim()) {
            return Err(WireError::Handshake(format!(
                "the server speaks protocol version {version}; geist speaks {}",
                SUPPORTED_VERSIONS.join(", ")
            )));
        }
        let (major, minor) = version
            .trim()
            .split_once('.')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .ok_or_else(|| WireError::Handshake(format!("bad version {version:?}")))?;
        Ok(ProtocolVersion { major, minor })
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Streams packets are routed to; `None` once the server is gone.
struct Routes {
    streams: HashMap<u32, Sender<Packet>>,
    /// Why the connection ended, once it has.
    ended: Option<String>,
}

/// A live connection to one server process.
pub(crate) struct Connection {
    writer: Mutex<Box<dyn Write + Send>>,
    routes: Mutex<Routes>,
    /// The control stream (0), shared by every run starting on this connection.
    control: Mutex<Option<StreamHandle>>,
    client_streams: StreamIdAllocator,
    /// The version the server announced (set by the handshake).
    version: OnceLock<ProtocolVersion>,
    /// The longest wait for any packet.
    pub(crate) timeout: Duration,
    /// The server process (none for a connection over given streams).
    child: Mutex<Option<Child>>,
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

        Connection::open(
            Box::new(stdin),
            Box::new(stdout),
            Some(child),
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
        child: Option<Child>,
        stderr_tail: Arc<Mutex<VecDeque<String>>>,
        display: String,
        timeout: Duration,
    ) -> Result<Arc<Connection>, WireError> {
        // The control stream is routed before anything is sent.
        let (control_tx, control_rx) = mpsc::channel();
        let mut streams = HashMap::new();
        streams.insert(0, control_tx);
        let connection = Arc::new(Connection {
            writer: Mutex::new(writer),
            routes: Mutex::new(Routes {
                streams,
                ended: None,
            }),
            control: Mutex::new(None),
            client_streams: StreamIdAllocator::client(),
            version: OnceLock::new(),
            timeout,
            child: Mutex::new(child),
            stderr_tail,
            command: display,
        });
        Connection::start_reader(&connection, reader);
        let control = StreamHandle {
            id: 0,
            receiver: control_rx,
            messages: MessageCounter::default(),
            connection: Arc::clone(&connection),
        };
        let version = match control.handshake() {
            Ok(reply) => ProtocolVersion::from_handshake(&reply),
            Err(WireError::ServerExited(_)) | Err(WireError::Timeout(..)) => Err(
                WireError::Handshake(format!("no reply{}", connection.exit_description())),
            ),
            Err(e) => Err(e),
        };
        match version {
            Ok(v) => {
                let _ = connection.version.set(v);
            }
            Err(e) => {
                connection.kill();
                return Err(e);
            }
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

    /// Starts the thread that routes the server's packets to streams.
    fn start_reader(connection: &Arc<Connection>, input: Box<dyn Read + Send>) {
        let weak = Arc::downgrade(connection);
        let _ = std::thread::Builder::new()
            .name("geist-server-reader".into())
            .spawn(move || {
                let mut reader = PacketReader::new(input);
                let reason = loop {
                    match reader.read_packet() {
                        Ok(Some(packet)) => {
                            let Some(connection) = weak.upgrade() else {
                                return;
                            };
                            connection.route(packet);
                        }
                        Ok(None) => break String::new(),
                        Err(ReadError::Decode(e)) => {
                            break format!(": it sent bytes that are not Hegel packets ({e})");
                        }
                        Err(ReadError::Io(e)) => {
                            break format!(": reading its output failed ({e})");
                        }
                    }
                };
                if let Some(connection) = weak.upgrade() {
                    connection.end(reason);
                }
            });
    }

    fn route(&self, packet: Packet) {
        let routes = lock(&self.routes);
        if let Some(sender) = routes.streams.get(&packet.stream_id) {
            // A receiver gone means its test case is over: drop the packet.
            let _ = sender.send(packet);
        }
    }

    /// Marks the connection ended and wakes every waiting stream.
    fn end(&self, reason: String) {
        let mut routes = lock(&self.routes);
        if routes.ended.is_none() {
            routes.ended = Some(reason);
        }
        routes.streams.clear();
    }

    /// Whether the server is gone.
    pub(crate) fn has_ended(&self) -> bool {
        lock(&self.routes).ended.is_some()
    }

    fn kill(&self) {
        if let Some(child) = lock(&self.child).as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The exit status and last stderr lines of the server, for messages.
    pub(crate) fn exit_description(&self) -> String {
        let mut out = String::new();
        if let Some(reason) = lock(&self.routes).ended.clone() {
            out.push_str(&reason);
        }
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

    /// Writes one packet whole.
    pub(crate) fn send(&self, packet: &Packet) -> Result<(), WireError> {
        let bytes = packet.to_bytes();
        let mut writer = lock(&self.writer);
        writer
            .write_all(&bytes)
            .and_then(|_| writer.flush())
            .map_err(|e| WireError::ServerExited(format!(": writing to it failed ({e})")))
    }

    /// Registers a stream (one the server announced, or a new client stream).
    pub(crate) fn open_stream(self: &Arc<Self>, id: u32) -> Result<StreamHandle, WireError> {
        let (sender, receiver) = mpsc::channel();
        {
            let mut routes = lock(&self.routes);
            if routes.ended.is_some() {
                drop(routes);
                return Err(WireError::ServerExited(self.exit_description()));
            }
            routes.streams.insert(id, sender);
        }
        Ok(StreamHandle {
            id,
            receiver,
            messages: MessageCounter::default(),
            connection: Arc::clone(self),
        })
    }

    /// A fresh client-created (odd) stream.
    pub(crate) fn new_client_stream(self: &Arc<Self>) -> Result<StreamHandle, WireError> {
        let id = self.client_streams.allocate();
        self.open_stream(id)
    }

    /// Sends a request on the control stream and returns its `result`.
    pub(crate) fn control_request(&self, command: &str, message: &Cbor) -> Result<Cbor, WireError> {
        let control = lock(&self.control);
        match control.as_ref() {
            Some(stream) => stream.request(command, message),
            None => Err(WireError::Protocol("the control stream is not open".into())),
        }
    }

    fn forget(&self, id: u32) {
        lock(&self.routes).streams.remove(&id);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Closing stdin asks the server to exit; kill it if it lingers.
        if let Some(child) = lock(&self.child).as_mut() {
            if let Ok(None) = child.try_wait() {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// The next packet for a stream, within the connection's timeout.
fn receive(
    connection: &Connection,
    receiver: &Receiver<Packet>,
    stream: u32,
) -> Result<Packet, WireError> {
    let spin_until = Instant::now() + SPIN;
    loop {
        match receiver.try_recv() {
            Ok(packet) => return Ok(packet),
            Err(TryRecvError::Disconnected) => {
                return Err(WireError::ServerExited(connection.exit_description()));
            }
            Err(TryRecvError::Empty) if Instant::now() < spin_until => std::thread::yield_now(),
            Err(TryRecvError::Empty) => break,
        }
    }
    match receiver.recv_timeout(connection.timeout) {
        Ok(packet) => Ok(packet),
        Err(RecvTimeoutError::Disconnected) => {
            Err(WireError::ServerExited(connection.exit_description()))
        }
        Err(RecvTimeoutError::Timeout) => Err(WireError::Timeout(
            connection.timeout,
            format!("waiting on stream {stream}; server: {}", connection.command),
        )),
    }
}

/// A CBOR request or event the server sent on a stream.
pub(crate) struct Incoming {
    /// Its message id (to reply to).
    pub(crate) message_id: u32,
    /// Its decoded payload.
    pub(crate) message: Cbor,
}

/// The client's end of one stream.
pub(crate) struct StreamHandle {
    /// The stream id.
    pub(crate) id: u32,
    receiver: Receiver<Packet>,
    messages: MessageCounter,
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
        let id = self.messages.next_id();
        self.connection
            .send(&Packet::request(self.id, id, cbor::encode(message)))?;
        loop {
            let packet = receive(&self.connection, &self.receiver, self.id)?;
            if packet.is_stream_close() {
                return Err(WireError::ErrorReply {
                    command: command.to_string(),
                    error_type: "StreamClosed".into(),
                    message: format!("the server closed stream {}", self.id),
                });
            }
            if !packet.is_reply {
                // The server only sends requests on this stream while it is
                // not waiting for us; answer so it is never left hanging.
                self.reply_error(
                    packet.message_id,
                    "unexpected request while the client awaits a reply",
                    "ProtocolError",
                );
                continue;
            }
            if packet.message_id != id {
                continue;
            }
            let value = cbor::decode(&packet.payload).map_err(|e| {
                WireError::Protocol(format!("reply to {command} on stream {}: {e}", self.id))
            })?;
            if let Some(error) = cbor::map_get(&value, "error") {
                let error_type = cbor::map_get(&value, "type")
                    .and_then(cbor::as_text)
                    .unwrap_or("Error")
                    .to_string();
                let message = cbor::as_text(error)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("{error:?}"));
                return Err(WireError::ErrorReply {
                    command: command.to_string(),
                    error_type,
                    message,
                });
            }
            return Ok(match value {
                Cbor::Map(_) => cbor::map_get(&value, "result")
                    .cloned()
                    .unwrap_or(Cbor::Null),
                // The control stream's run_test reply is a bare `true` in the spec.
                other => other,
            });
        }
    }

    /// Sends the handshake and returns the raw reply payload.
    fn handshake(&self) -> Result<Vec<u8>, WireError> {
        let id = self.messages.next_id();
        self.connection
            .send(&Packet::request(self.id, id, HANDSHAKE_REQUEST.to_vec()))?;
        loop {
            let packet = receive(&self.connection, &self.receiver, self.id)?;
            if packet.is_reply && packet.message_id == id {
                return Ok(packet.payload);
            }
        }
    }

    /// Waits for the next request (an event) on this stream.
    pub(crate) fn next_request(&self) -> Result<Incoming, WireError> {
        loop {
            let packet = receive(&self.connection, &self.receiver, self.id)?;
            if packet.is_stream_close() {
                return Err(WireError::Protocol(format!(
                    "the server closed stream {} in the middle of a run",
                    self.id
                )));
            }
            if packet.is_reply {
                continue;
            }
            let message = cbor::decode(&packet.payload)
                .map_err(|e| WireError::Protocol(format!("event on stream {}: {e}", self.id)))?;
            return Ok(Incoming {
                message_id: packet.message_id,
                message,
            });
        }
    }

    /// Replies `{"result": value}`.
    pub(crate) fn reply(&self, message_id: u32, value: Cbor) -> Result<(), WireError> {
        let payload = cbor::encode(&cbor::text_map([("result", value)]));
        self.connection
            .send(&Packet::reply(self.id, message_id, payload))
    }

    fn reply_error(&self, message_id: u32, error: &str, error_type: &str) {
        let payload = cbor::encode(&cbor::text_map([
            ("error", Cbor::Text(error.to_string())),
            ("type", Cbor::Text(error_type.to_string())),
        ]));
        let _ = self
            .connection
            .send(&Packet::reply(self.id, message_id, payload));
    }

    /// Sends `stream_close` (the stream is then forgotten).
    pub(crate) fn close(&self) {
        let _ = self.connection.send(&Packet::stream_close(self.id));
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        if self.id != 0 {
            self.connection.forget(self.id);
        }
    }
}
