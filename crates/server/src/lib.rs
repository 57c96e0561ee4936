//! geist-server: a native Hegel protocol server, a drop-in replacement for hegel-core.
//!
//! The server speaks the Hegel wire protocol on a byte stream (stdin/stdout
//! when run as `geist-server`): a handshake announcing the protocol version,
//! then any number of concurrent test runs, each on its own thread, each
//! driving geist's engine with a test function that relays choices to the
//! client. Nothing here knows how to generate or shrink; that is the engine's.

pub mod connection;
pub mod convert;
pub mod session;
pub mod spin;

use connection::{Connection, ReaderEnd, reader_loop};
use geist_wire::cbor::{self, Value as Cbor};
use geist_wire::{HANDSHAKE_REQUEST, StreamOrigin, handshake_reply};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

/// A Hegel protocol version this server can speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtocolVersion {
    /// Major version (0 today).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// The protocol versions geist-server speaks, oldest first.
pub const SUPPORTED_VERSIONS: &[&str] = &[
    "0.1", "0.10", "0.11", "0.12", "0.13", "0.14", "0.15", "0.16",
];

/// The version announced when none is chosen (what hegeltest 0.16.0 and hegel-ocaml require).
pub const DEFAULT_VERSION: ProtocolVersion = ProtocolVersion {
    major: 0,
    minor: 15,
};

impl ProtocolVersion {
    /// Parses `major.minor`, accepting only versions this server speaks.
    pub fn parse(text: &str) -> Result<ProtocolVersion, String> {
        let (major, minor) = text
            .trim()
            .split_once('.')
            .ok_or_else(|| format!("protocol version {text:?} is not of the form MAJOR.MINOR"))?;
        let version = ProtocolVersion {
            major: major
                .parse()
                .map_err(|_| format!("bad major version in {text:?}"))?,
            minor: minor
                .parse()
                .map_err(|_| format!("bad minor version in {text:?}"))?,
        };
        if version.major != 0 || !(version.minor == 1 || (10..=16).contains(&version.minor)) {
            return Err(format!(
                "geist-server does not speak protocol version {text}; it speaks {}",
                SUPPORTED_VERSIONS.join(", ")
            ));
        }
        Ok(version)
    }

    /// The CBOR tag of generated strings: 91 from 0.10 on, 6 in the reference document (0.1).
    pub fn string_tag(self) -> u64 {
        if self.minor >= 10 {
            cbor::TAG_HEGEL_STRING
        } else {
            cbor::TAG_REFERENCE_STRING
        }
    }

    /// Whether `single_test_case` exists in this version.
    pub fn has_single_test_case(self) -> bool {
        self.minor >= 13
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

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
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            version: DEFAULT_VERSION,
            stream_timeout: Duration::from_secs(30),
            debug: false,
            verbose: false,
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
}

/// Serves one connection until the client closes it.
pub fn serve<R, W>(input: R, output: W, config: ServerConfig) -> Result<(), ServeError>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let connection = Connection::new(
        Box::new(output),
        config.version,
        config.stream_timeout,
        config.debug,
    );
    let (control_tx, control_rx) = mpsc::channel();
    let reader_connection = Arc::clone(&connection);
    let reader = std::thread::spawn(move || reader_loop(&reader_connection, input, control_tx));

    let mut handshake_done = false;
    while let Ok(packet) = control_rx.recv() {
        if packet.is_reply {
            continue;
        }
        if !handshake_done {
            if packet.payload != HANDSHAKE_REQUEST {
                let message = format!(
                    "expected {:?}, got {:?}",
                    String::from_utf8_lossy(HANDSHAKE_REQUEST),
                    String::from_utf8_lossy(&packet.payload)
                );
                connection.send_error(
                    0,
                    packet.message_id,
                    &format!("Bad handshake: {message}"),
                    "ProtocolError",
                );
                return Err(ServeError::Handshake(message));
            }
            let reply = geist_wire::Packet::reply(
                0,
                packet.message_id,
                handshake_reply(&config.version.to_string()),
            );
            if connection.send(&reply).is_err() {
                return Ok(());
            }
            handshake_done = true;
            continue;
        }
        handle_control(&connection, packet, &config);
    }
    match reader.join() {
        Ok(ReaderEnd::Eof) | Err(_) => Ok(()),
        Ok(ReaderEnd::Framing(e)) => Err(ServeError::Framing(e)),
        Ok(ReaderEnd::Io(e)) => Err(ServeError::Io(e)),
    }
}

fn handle_control(connection: &Arc<Connection>, packet: geist_wire::Packet, config: &ServerConfig) {
    let message = match cbor::decode(&packet.payload) {
        Ok(m) => m,
        Err(e) => {
            connection.send_error(0, packet.message_id, &e.to_string(), "ProtocolError");
            return;
        }
    };
    let command = cbor::map_get(&message, "command")
        .and_then(cbor::as_text)
        .unwrap_or("");
    let reply_ok = |connection: &Arc<Connection>| {
        let payload = cbor::encode(&cbor::text_map([("result", Cbor::Bool(true))]));
        let _ = connection.send(&geist_wire::Packet::reply(0, packet.message_id, payload));
    };
    let stream_id = cbor::map_get(&message, "stream_id").and_then(cbor::as_i128);
    let open = |connection: &Arc<Connection>| -> Option<connection::Stream> {
        let Some(id) = stream_id.and_then(|i| u32::try_from(i).ok()) else {
            connection.send_error(
                0,
                packet.message_id,
                &format!("{command} requires an integer stream_id"),
                "ProtocolError",
            );
            return None;
        };
        if StreamOrigin::of(id) != StreamOrigin::Client {
            connection.send_error(
                0,
                packet.message_id,
                &format!("Client stream id must be odd, got {id}"),
                "ProtocolError",
            );
            return None;
        }
        let stream = connection.open_stream(id);
        if stream.is_none() {
            connection.send_error(
                0,
                packet.message_id,
                &format!("Stream {id} is already registered"),
                "ProtocolError",
            );
        }
        stream
    };
    match command {
        "run_test" => {
            let request = match session::RunRequest::parse(&message) {
                Ok(r) => r,
                Err(e) => {
                    connection.send_error(0, packet.message_id, &e, "ValueError");
                    return;
                }
            };
            let Some(stream) = open(connection) else {
                return;
            };
            if config.verbose {
                eprintln!(
                    "geist-server: run_test on stream {} ({} test cases)",
                    stream.id, request.test_cases
                );
            }
            reply_ok(connection);
            let connection = Arc::clone(connection);
            std::thread::spawn(move || session::run_test(connection, stream, request));
        }
        "single_test_case" if config.version.has_single_test_case() => {
            let seed = cbor::map_get(&message, "seed")
                .and_then(cbor::as_i128)
                .map(|s| s as u128);
            let Some(stream) = open(connection) else {
                return;
            };
            reply_ok(connection);
            let connection = Arc::clone(connection);
            std::thread::spawn(move || session::single_test_case(connection, stream, seed));
        }
        other => connection.send_error(
            0,
            packet.message_id,
            &format!("Unknown command: {other}"),
            "ValueError",
        ),
    }
}
