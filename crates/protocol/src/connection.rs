//! One multiplexed Hegel connection, the same for a server and a client.
//!
//! A reader (one thread, [`Connection::spawn_reader`]) decodes packets and
//! routes each to its stream's channel; writers take a lock and write whole
//! packets. A request on a stream nobody has open, or on one already
//! completed, is answered with an error reply at once, so the peer never
//! waits on it; a packet with a bad checksum is answered the same way and
//! skipped. Every wait on a stream has a timeout, and when the input ends
//! every waiting stream learns at once.
//!
//! Two things keep a test case's round trips cheap. A stream waiting for
//! the peer polls briefly before sleeping while the machine has a core to
//! spare ([`crate::spin`]). And a packet may be written without a flush
//! ([`Connection::send_deferred`]): it leaves with the next packet or before
//! any stream waits, so the reply that ends one test case and the event that
//! starts the next share one write.

use crate::reply::{ErrorReply, decode_reply, encode_result};
use crate::spin::SpinPolicy;
use geist_wire::cbor::{self, Value as Cbor};
use geist_wire::{DecodeError, MessageCounter, Packet, PacketReader, ReadError, StreamIdAllocator};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// Which side of the protocol this end of a connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The server: creates even streams (test cases), answers commands.
    Server,
    /// The client: creates odd streams (runs), sends commands.
    Client,
}

impl Role {
    /// This side's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Client => "client",
        }
    }

    /// The other side's name, for messages.
    pub fn peer(self) -> &'static str {
        match self {
            Role::Server => "client",
            Role::Client => "server",
        }
    }
}

/// How a connection behaves.
#[derive(Clone, Debug)]
pub struct ConnectionConfig {
    /// Which side this is.
    pub role: Role,
    /// The longest wait for the peer on any stream.
    pub timeout: Duration,
    /// Log every packet to stderr, each line starting with this prefix.
    pub log_packets: Option<String>,
}

/// Why a stream operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConnectionError {
    /// The connection ended (the peer exited, or the transport failed).
    #[error("the connection ended{0}")]
    Ended(String),
    /// The peer closed this stream.
    #[error("stream {0} was closed by the peer")]
    StreamClosed(u32),
    /// Nothing arrived in time.
    #[error("no packet within {0:?} on stream {1}")]
    Timeout(Duration, u32),
    /// The peer answered a request with an error.
    #[error("error reply: {0}")]
    ErrorReply(ErrorReply),
    /// A reply's payload was not CBOR.
    #[error("a reply on stream {stream} is not CBOR: {message}")]
    BadReply {
        /// The stream.
        stream: u32,
        /// What the decoder said.
        message: String,
    },
}

/// Why a stream could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The stream is already open.
    #[error("Stream {0} is already registered")]
    AlreadyOpen(u32),
    /// The connection has ended.
    #[error("the connection ended{0}")]
    Ended(String),
}

/// What ended a connection's reader.
#[derive(Debug)]
pub enum ReaderEnd {
    /// The peer closed its end cleanly.
    Eof,
    /// The bytes stopped making sense as packets.
    Framing(DecodeError),
    /// The transport failed.
    Io(std::io::Error),
}

struct Route {
    sender: Sender<Packet>,
    /// Concluded by this side: later requests get an error reply, and the
    /// peer's `stream_close` is absorbed.
    completed: bool,
}

struct Routes {
    streams: HashMap<u32, Route>,
    /// Why the connection ended, once it has (may be empty).
    ended: Option<String>,
}

/// Locks a mutex, ignoring poisoning (a panicking property must not break
/// the connection for other threads).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One end of a connection.
pub struct Connection {
    writer: Mutex<Box<dyn Write + Send>>,
    routes: Mutex<Routes>,
    own_streams: StreamIdAllocator,
    config: ConnectionConfig,
    spin: SpinPolicy,
    /// Whether a written packet awaits a flush.
    deferred: AtomicBool,
}

impl Connection {
    /// A connection writing to `writer`; feed it with [`Connection::spawn_reader`].
    pub fn new(writer: Box<dyn Write + Send>, config: ConnectionConfig) -> Arc<Connection> {
        let own_streams = match config.role {
            Role::Server => StreamIdAllocator::server(),
            Role::Client => StreamIdAllocator::client(),
        };
        Arc::new(Connection {
            writer: Mutex::new(writer),
            routes: Mutex::new(Routes {
                streams: HashMap::new(),
                ended: None,
            }),
            own_streams,
            config,
            spin: SpinPolicy::new(),
            deferred: AtomicBool::new(false),
        })
    }

    /// Which side this is.
    pub fn role(&self) -> Role {
        self.config.role
    }

    /// The longest wait for the peer.
    pub fn timeout(&self) -> Duration {
        self.config.timeout
    }

    /// Writes one packet whole and flushes.
    pub fn send(&self, packet: &Packet) -> Result<(), ConnectionError> {
        self.write_packet(packet, true)
    }

    /// Writes one packet without flushing: it leaves with the next packet
    /// sent, or before any stream waits for the peer (so the peer never
    /// waits on it).
    pub fn send_deferred(&self, packet: &Packet) -> Result<(), ConnectionError> {
        self.write_packet(packet, false)
    }

    /// Flushes a packet left by [`Connection::send_deferred`], if any.
    pub fn flush_deferred(&self) -> Result<(), ConnectionError> {
        if !self.deferred.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let mut writer = lock(&self.writer);
        writer.flush().map_err(|e| self.write_failed(e))
    }

    fn write_failed(&self, error: std::io::Error) -> ConnectionError {
        ConnectionError::Ended(format!(
            ": writing to the {} failed ({error})",
            self.config.role.peer()
        ))
    }

    fn write_packet(&self, packet: &Packet, flush: bool) -> Result<(), ConnectionError> {
        if let Some(prefix) = &self.config.log_packets {
            log_packet(prefix, "send", packet);
        }
        let bytes = packet.to_bytes();
        let mut writer = lock(&self.writer);
        writer.write_all(&bytes).map_err(|e| self.write_failed(e))?;
        if flush {
            self.deferred.store(false, Ordering::Release);
            writer.flush().map_err(|e| self.write_failed(e))
        } else {
            self.deferred.store(true, Ordering::Release);
            Ok(())
        }
    }

    /// Sends an error reply (a failure to send is the reader's to notice).
    pub fn send_error(&self, stream_id: u32, message_id: u32, error: &ErrorReply) {
        let _ = self.send(&Packet::reply(stream_id, message_id, error.encode()));
    }

    /// Registers a stream and returns the handle that receives its packets.
    pub fn open_stream(self: &Arc<Self>, stream_id: u32) -> Result<Stream, OpenError> {
        let (sender, receiver) = mpsc::channel();
        let mut routes = lock(&self.routes);
        if let Some(reason) = &routes.ended {
            return Err(OpenError::Ended(reason.clone()));
        }
        if routes.streams.contains_key(&stream_id) {
            return Err(OpenError::AlreadyOpen(stream_id));
        }
        routes.streams.insert(
            stream_id,
            Route {
                sender,
                completed: false,
            },
        );
        Ok(Stream {
            id: stream_id,
            receiver,
            messages: MessageCounter::default(),
            connection: Arc::clone(self),
        })
    }

    /// Opens a fresh stream of this side's own (even for a server, odd for a client).
    pub fn new_stream(self: &Arc<Self>) -> Result<Stream, OpenError> {
        loop {
            match self.open_stream(self.own_streams.allocate()) {
                Err(OpenError::AlreadyOpen(_)) => continue,
                other => return other,
            }
        }
    }

    /// Marks the connection ended (keeping the first reason) and wakes every
    /// waiting stream.
    pub fn end(&self, reason: String) {
        let mut routes = lock(&self.routes);
        if routes.ended.is_none() {
            routes.ended = Some(reason);
        }
        routes.streams.clear();
    }

    /// Why the connection ended, once it has.
    pub fn end_reason(&self) -> Option<String> {
        lock(&self.routes).ended.clone()
    }

    /// Whether the connection has ended.
    pub fn has_ended(&self) -> bool {
        lock(&self.routes).ended.is_some()
    }

    fn complete_stream(&self, stream_id: u32) {
        if let Some(route) = lock(&self.routes).streams.get_mut(&stream_id) {
            route.completed = true;
        }
    }

    fn forget_stream(&self, stream_id: u32) {
        lock(&self.routes).streams.remove(&stream_id);
    }

    /// Delivers a packet to its stream, or answers it if nobody listens.
    fn route(&self, packet: Packet) {
        let mut routes = lock(&self.routes);
        let refusal = match routes.streams.get(&packet.stream_id) {
            None => Some(format!("stream {} is not registered", packet.stream_id)),
            Some(route) if route.completed => {
                if packet.is_stream_close() {
                    routes.streams.remove(&packet.stream_id);
                }
                Some(format!("stream {} is closed", packet.stream_id))
            }
            Some(route) => {
                let is_close = packet.is_stream_close();
                let stream_id = packet.stream_id;
                if route.sender.send(packet).is_err() || is_close {
                    routes.streams.remove(&stream_id);
                }
                return;
            }
        };
        drop(routes);
        if let Some(message) = refusal
            && !packet.is_reply
            && !packet.is_stream_close()
        {
            self.send_error(
                packet.stream_id,
                packet.message_id,
                &ErrorReply::protocol(message),
            );
        }
    }
    /// Starts the thread that reads packets from `input` until it ends,
    /// routing each to its stream, then ends the connection. The thread
    /// holds the connection only while routing a packet: once every other
    /// handle is gone it stops at the next packet.
    pub fn spawn_reader<R: Read + Send + 'static>(
        self: &Arc<Self>,
        name: &str,
        input: R,
    ) -> std::io::Result<std::thread::JoinHandle<ReaderEnd>> {
        let connection = Arc::downgrade(self);
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || read_packets(&connection, input))
    }
}

/// The reader loop of [`Connection::spawn_reader`].
fn read_packets<R: Read>(connection: &Weak<Connection>, input: R) -> ReaderEnd {
    let mut reader = PacketReader::new(input);
    let end = loop {
        let read = reader.read_packet();
        let Some(connection) = connection.upgrade() else {
            return ReaderEnd::Eof;
        };
        match read {
            Ok(None) => break ReaderEnd::Eof,
            Ok(Some(packet)) => {
                if let Some(prefix) = &connection.config.log_packets {
                    log_packet(prefix, "recv", &packet);
                }
                connection.route(packet);
            }
            Err(ReadError::Decode(DecodeError::BadChecksum {
                stream_id,
                message_id,
                is_reply,
                expected,
                computed,
            })) => {
                let message = format!(
                    "packet checksum mismatch: header says 0x{expected:08X}, computed 0x{computed:08X}"
                );
                if let Some(prefix) = &connection.config.log_packets {
                    eprintln!("{prefix}: dropped a packet on stream {stream_id}: {message}");
                }
                if !is_reply {
                    connection.send_error(stream_id, message_id, &ErrorReply::protocol(message));
                }
            }
            Err(ReadError::Decode(e)) => break ReaderEnd::Framing(e),
            Err(ReadError::Io(e)) => break ReaderEnd::Io(e),
        }
    };
    if let Some(connection) = connection.upgrade() {
        let peer = connection.config.role.peer();
        connection.end(match &end {
            ReaderEnd::Eof => String::new(),
            ReaderEnd::Framing(e) => {
                format!(": the {peer} sent bytes that are not Hegel packets ({e})")
            }
            ReaderEnd::Io(e) => format!(": reading from the {peer} failed ({e})"),
        });
    }
    end
}

fn log_packet(prefix: &str, direction: &str, packet: &Packet) {
    let payload = match cbor::decode(&packet.payload) {
        Ok(v) => format!("{v:?}"),
        Err(_) => format!("{:?}", String::from_utf8_lossy(&packet.payload)),
    };
    eprintln!(
        "{prefix}: {direction} stream={} id={} reply={} {payload}",
        packet.stream_id, packet.message_id, packet.is_reply
    );
}

/// A request the peer sent on a stream.
#[derive(Debug)]
pub struct Request {
    /// Its message id, to reply to.
    pub message_id: u32,
    /// Its payload as sent.
    pub payload: Vec<u8>,
}

impl Request {
    /// The payload as CBOR, or why it is not.
    pub fn message(&self) -> Result<Cbor, cbor::CborError> {
        cbor::decode(&self.payload)
    }
}

/// This side's handle on one stream: its packets, and the ids of its messages.
pub struct Stream {
    /// The stream id.
    pub id: u32,
    receiver: Receiver<Packet>,
    messages: MessageCounter,
    connection: Arc<Connection>,
}

impl Stream {
    /// The connection this stream belongs to.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    fn ended(&self) -> ConnectionError {
        ConnectionError::Ended(self.connection.end_reason().unwrap_or_default())
    }

    /// Waits (within the connection's timeout) for the next packet; the
    /// peer's `stream_close` is [`ConnectionError::StreamClosed`].
    pub fn receive(&self) -> Result<Packet, ConnectionError> {
        self.connection.flush_deferred()?;
        let timeout = self.connection.config.timeout;
        // The peer usually answers within microseconds: poll briefly before
        // sleeping when that is the faster way to wait (see `spin`).
        let received = self.connection.spin.wait(
            || match self.receiver.try_recv() {
                Ok(packet) => Some(Ok(packet)),
                Err(TryRecvError::Disconnected) => Some(Err(RecvTimeoutError::Disconnected)),
                Err(TryRecvError::Empty) => None,
            },
            || self.receiver.recv_timeout(timeout),
        );
        match received {
            Ok(packet) if packet.is_stream_close() => Err(ConnectionError::StreamClosed(self.id)),
            Ok(packet) => Ok(packet),
            Err(RecvTimeoutError::Timeout) => Err(ConnectionError::Timeout(timeout, self.id)),
            Err(RecvTimeoutError::Disconnected) => Err(self.ended()),
        }
    }

    /// Waits, however long it takes, for the next packet (the server's
    /// control stream, which is quiet between runs).
    pub fn receive_without_timeout(&self) -> Result<Packet, ConnectionError> {
        self.connection.flush_deferred()?;
        match self.receiver.recv() {
            Ok(packet) if packet.is_stream_close() => Err(ConnectionError::StreamClosed(self.id)),
            Ok(packet) => Ok(packet),
            Err(_) => Err(self.ended()),
        }
    }

    /// Waits for the next request (replies to nothing are skipped).
    pub fn next_request(&self) -> Result<Request, ConnectionError> {
        loop {
            let packet = self.receive()?;
            if !packet.is_reply {
                return Ok(Request {
                    message_id: packet.message_id,
                    payload: packet.payload,
                });
            }
        }
    }

    /// Waits, however long it takes, for the next request (the server's
    /// control stream); `Err` once the connection has ended.
    pub fn next_request_without_timeout(&self) -> Result<Request, ConnectionError> {
        loop {
            let packet = self.receive_without_timeout()?;
            if !packet.is_reply {
                return Ok(Request {
                    message_id: packet.message_id,
                    payload: packet.payload,
                });
            }
        }
    }

    /// Sends a request with a raw payload and returns its message id.
    pub fn send_request(&self, payload: Vec<u8>) -> Result<u32, ConnectionError> {
        let id = self.messages.next_id();
        self.connection
            .send(&Packet::request(self.id, id, payload))?;
        Ok(id)
    }

    /// Waits for the reply to message `id`. Requests from the peer meanwhile
    /// are answered with an error, so it is never left waiting.
    pub fn await_reply(&self, id: u32) -> Result<Packet, ConnectionError> {
        loop {
            let packet = self.receive()?;
            if packet.is_reply {
                if packet.message_id == id {
                    return Ok(packet);
                }
                continue;
            }
            let role = self.connection.config.role.name();
            self.reply_error(
                packet.message_id,
                &ErrorReply::protocol(format!(
                    "unexpected request while the {role} awaits a reply"
                )),
            );
        }
    }

    /// Sends a CBOR request and waits for its reply's `result`.
    pub fn request(&self, message: &Cbor) -> Result<Cbor, ConnectionError> {
        let id = self.send_request(cbor::encode(message))?;
        let packet = self.await_reply(id)?;
        let payload = cbor::decode(&packet.payload).map_err(|e| ConnectionError::BadReply {
            stream: self.id,
            message: e.to_string(),
        })?;
        decode_reply(payload).map_err(ConnectionError::ErrorReply)
    }

    /// Replies `{"result": value}`.
    pub fn reply(&self, message_id: u32, value: Cbor) -> Result<(), ConnectionError> {
        self.connection
            .send(&Packet::reply(self.id, message_id, encode_result(value)))
    }

    /// Replies `{"result": value}`, leaving the flush to the next packet
    /// sent or wait (see [`Connection::send_deferred`]).
    pub fn reply_deferred(&self, message_id: u32, value: Cbor) -> Result<(), ConnectionError> {
        self.connection
            .send_deferred(&Packet::reply(self.id, message_id, encode_result(value)))
    }

    /// Replies with an error.
    pub fn reply_error(&self, message_id: u32, error: &ErrorReply) {
        self.connection.send_error(self.id, message_id, error);
    }

    /// Stops accepting requests on this stream: later ones get an error
    /// reply and the peer's close is absorbed.
    pub fn complete(&self) {
        self.connection.complete_stream(self.id);
    }

    /// Sends `stream_close` and forgets the stream.
    pub fn close(&self) {
        let _ = self.connection.send(&Packet::stream_close(self.id));
        self.connection.forget_stream(self.id);
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // A completed stream stays routed, to absorb the peer's close.
        let mut routes = lock(&self.connection.routes);
        if routes.streams.get(&self.id).is_some_and(|r| !r.completed) {
            routes.streams.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    fn pair(timeout: Duration) -> (Arc<Connection>, Arc<Connection>) {
        let (a, b) = UnixStream::pair().unwrap();
        let make = |socket: UnixStream, role| {
            let connection = Connection::new(
                Box::new(socket.try_clone().unwrap()),
                ConnectionConfig {
                    role,
                    timeout,
                    log_packets: None,
                },
            );
            connection.spawn_reader("test-reader", socket).unwrap();
            connection
        };
        (make(a, Role::Server), make(b, Role::Client))
    }

    #[test]
    fn requests_and_replies_travel_between_the_two_sides() {
        let (server, client) = pair(Duration::from_secs(5));
        let client_stream = client.new_stream().unwrap();
        assert_eq!(client_stream.id % 2, 1);
        let server_stream = server.open_stream(client_stream.id).unwrap();
        let answering = std::thread::spawn(move || {
            let request = server_stream.next_request().unwrap();
            let message = request.message().unwrap();
            server_stream
                .reply(
                    request.message_id,
                    cbor::map_get(&message, "x").unwrap().clone(),
                )
                .unwrap();
            let request = server_stream.next_request().unwrap();
            server_stream.reply_error(request.message_id, &ErrorReply::protocol("no"));
        });
        let x = cbor::text_map([("x", cbor::integer(7))]);
        assert_eq!(client_stream.request(&x), Ok(cbor::integer(7)));
        assert_eq!(
            client_stream.request(&x),
            Err(ConnectionError::ErrorReply(ErrorReply::protocol("no")))
        );
        answering.join().unwrap();
    }

    #[test]
    fn requests_on_unknown_streams_are_answered_with_an_error() {
        let (_server, client) = pair(Duration::from_secs(5));
        let stream = client.new_stream().unwrap();
        let reply = stream.request(&Cbor::Null).unwrap_err();
        assert_eq!(
            reply,
            ConnectionError::ErrorReply(ErrorReply::protocol(format!(
                "stream {} is not registered",
                stream.id
            )))
        );
    }

    #[test]
    fn a_silent_peer_times_out_and_a_vanished_one_ends_every_stream() {
        let (server, client) = pair(Duration::from_millis(100));
        let stream = client.new_stream().unwrap();
        let _listening = server.open_stream(stream.id).unwrap();
        let id = stream.send_request(cbor::encode(&Cbor::Null)).unwrap();
        assert!(matches!(
            stream.await_reply(id),
            Err(ConnectionError::Timeout(_, _))
        ));
        drop(server);
        client.end(": gone".into());
        assert_eq!(
            stream.receive(),
            Err(ConnectionError::Ended(": gone".into()))
        );
        assert!(matches!(client.new_stream(), Err(OpenError::Ended(_))));
    }
}
