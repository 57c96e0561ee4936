//! A connection: one reader thread routing packets to streams, one locked writer.
//!
//! Each stream has a channel; the reader thread decodes packets and delivers
//! them to the stream's channel, answering requests on unknown or closed
//! streams with an error reply. Threads working on a stream block on its
//! channel with a timeout, so a silent client can never hang the server.

use crate::ProtocolVersion;
use crate::spin::SpinPolicy;
use geist_wire::cbor::{self, Value};
use geist_wire::{DecodeError, MessageCounter, Packet, PacketReader, ReadError, StreamIdAllocator};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why a stream operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The connection closed (client exited or transport failed).
    #[error("connection closed")]
    Closed,
    /// The peer closed this stream.
    #[error("stream {0} was closed by the client")]
    StreamClosed(u32),
    /// Nothing arrived in time.
    #[error("timed out after {0:?} waiting for the client on stream {1}")]
    Timeout(Duration, u32),
    /// A reply carried an error.
    #[error("client replied with an error: {0}")]
    ErrorReply(String),
    /// A payload was not valid CBOR.
    #[error("{0}")]
    BadPayload(String),
}

struct StreamSlot {
    sender: Sender<Packet>,
    completed: bool,
}

/// The shared state of a connection.
pub struct Connection {
    writer: Mutex<Box<dyn Write + Send>>,
    streams: Mutex<HashMap<u32, StreamSlot>>,
    server_ids: StreamIdAllocator,
    /// The protocol version this connection speaks.
    pub version: ProtocolVersion,
    /// How long to wait for the client on any stream.
    pub timeout: Duration,
    /// Whether to log protocol traffic to stderr.
    pub debug: bool,
    /// When streams poll for packets before sleeping.
    spin: SpinPolicy,
    /// Whether a written packet awaits a flush.
    deferred: std::sync::atomic::AtomicBool,
}

impl Connection {
    /// A connection writing to `writer`.
    pub fn new(
        writer: Box<dyn Write + Send>,
        version: ProtocolVersion,
        timeout: Duration,
        debug: bool,
    ) -> Arc<Connection> {
        Arc::new(Connection {
            writer: Mutex::new(writer),
            streams: Mutex::new(HashMap::new()),
            server_ids: StreamIdAllocator::server(),
            version,
            timeout,
            debug,
            spin: SpinPolicy::new(),
            deferred: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Writes one packet (whole, under the writer lock) and flushes.
    pub fn send(&self, packet: &Packet) -> Result<(), StreamError> {
        self.write_packet(packet, true)
    }

    /// Writes one packet without flushing: it leaves with the next packet
    /// sent, or before any stream waits for the client (so the client never
    /// waits on it). The reply that ends a test case goes this way and
    /// shares one write with the next `test_case` event.
    pub fn send_deferred(&self, packet: &Packet) -> Result<(), StreamError> {
        self.write_packet(packet, false)
    }

    /// Flushes a packet left by [`Connection::send_deferred`], if any.
    pub fn flush_deferred(&self) -> Result<(), StreamError> {
        if !self
            .deferred
            .swap(false, std::sync::atomic::Ordering::AcqRel)
        {
            return Ok(());
        }
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        writer.flush().map_err(|_| StreamError::Closed)
    }

    fn write_packet(&self, packet: &Packet, flush: bool) -> Result<(), StreamError> {
        if self.debug {
            eprintln!(
                "geist-server: send stream={} id={} reply={} {}",
                packet.stream_id,
                packet.message_id,
                packet.is_reply,
                describe(&packet.payload)
            );
        }
        let bytes = packet.to_bytes();
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        writer.write_all(&bytes).map_err(|_| StreamError::Closed)?;
        if flush {
            self.deferred
                .store(false, std::sync::atomic::Ordering::Release);
            writer.flush().map_err(|_| StreamError::Closed)
        } else {
            self.deferred
                .store(true, std::sync::atomic::Ordering::Release);
            Ok(())
        }
    }

    /// Sends an error reply.
    pub fn send_error(&self, stream_id: u32, message_id: u32, error: &str, error_type: &str) {
        let payload = cbor::encode(&cbor::text_map([
            ("error", Value::Text(error.to_string())),
            ("type", Value::Text(error_type.to_string())),
        ]));
        let _ = self.send(&Packet::reply(stream_id, message_id, payload));
    }

    /// Registers a stream and returns the handle that receives its packets.
    pub fn open_stream(self: &Arc<Self>, stream_id: u32) -> Option<Stream> {
        let (sender, receiver) = mpsc::channel();
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        if streams.contains_key(&stream_id) {
            return None;
        }
        streams.insert(
            stream_id,
            StreamSlot {
                sender,
                completed: false,
            },
        );
        Some(Stream {
            id: stream_id,
            receiver,
            messages: MessageCounter::default(),
            connection: Arc::clone(self),
        })
    }

    /// Opens a fresh server-created (even) stream.
    pub fn new_server_stream(self: &Arc<Self>) -> Stream {
        loop {
            let id = self.server_ids.allocate();
            if let Some(stream) = self.open_stream(id) {
                return stream;
            }
        }
    }

    fn complete_stream(&self, stream_id: u32) {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = streams.get_mut(&stream_id) {
            slot.completed = true;
        }
    }

    fn forget_stream(&self, stream_id: u32) {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&stream_id);
    }

    /// Delivers a packet that arrived for a non-control stream.
    fn route(&self, packet: Packet) {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        match streams.get(&packet.stream_id) {
            None => {
                drop(streams);
                if !packet.is_reply && !packet.is_stream_close() {
                    self.send_error(
                        packet.stream_id,
                        packet.message_id,
                        &format!("stream {} is not registered", packet.stream_id),
                        "ProtocolError",
                    );
                }
            }
            Some(slot) if slot.completed => {
                if packet.is_stream_close() {
                    streams.remove(&packet.stream_id);
                } else if !packet.is_reply {
                    drop(streams);
                    self.send_error(
                        packet.stream_id,
                        packet.message_id,
                        &format!("stream {} is closed", packet.stream_id),
                        "ProtocolError",
                    );
                }
            }
            Some(slot) => {
                let is_close = packet.is_stream_close();
                let stream_id = packet.stream_id;
                if slot.sender.send(packet).is_err() || is_close {
                    streams.remove(&stream_id);
                }
            }
        }
    }

    /// Closes every stream (their receivers see the connection end).
    fn close_all(&self) {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

/// One side's view of a stream: its id, incoming packets and outgoing message ids.
pub struct Stream {
    /// The stream id.
    pub id: u32,
    receiver: Receiver<Packet>,
    messages: MessageCounter,
    connection: Arc<Connection>,
}

impl Stream {
    /// Waits for the next packet on this stream.
    pub fn receive(&self) -> Result<Packet, StreamError> {
        self.connection.flush_deferred()?;
        // The client usually answers within microseconds: poll briefly before
        // sleeping when that is the faster way to wait (see `spin`).
        let received = self.connection.spin.wait(
            || match self.receiver.try_recv() {
                Ok(packet) => Some(Ok(packet)),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    Some(Err(RecvTimeoutError::Disconnected))
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => None,
            },
            || self.receiver.recv_timeout(self.connection.timeout),
        );
        match received {
            Ok(packet) if packet.is_stream_close() => Err(StreamError::StreamClosed(self.id)),
            Ok(packet) => Ok(packet),
            Err(RecvTimeoutError::Timeout) => {
                Err(StreamError::Timeout(self.connection.timeout, self.id))
            }
            Err(RecvTimeoutError::Disconnected) => Err(StreamError::Closed),
        }
    }

    /// Sends a CBOR request and waits for its reply's `result`.
    pub fn request(&self, payload: &Value) -> Result<Value, StreamError> {
        let id = self.messages.next_id();
        self.connection
            .send(&Packet::request(self.id, id, cbor::encode(payload)))?;
        loop {
            let packet = self.receive()?;
            if packet.is_reply && packet.message_id == id {
                let value = cbor::decode(&packet.payload)
                    .map_err(|e| StreamError::BadPayload(e.to_string()))?;
                if let Some(error) = cbor::map_get(&value, "error") {
                    return Err(StreamError::ErrorReply(format!("{error:?}")));
                }
                return Ok(cbor::map_get(&value, "result")
                    .cloned()
                    .unwrap_or(Value::Null));
            }
            if !packet.is_reply {
                self.connection.send_error(
                    self.id,
                    packet.message_id,
                    "unexpected request while the server awaits a reply",
                    "ProtocolError",
                );
            }
        }
    }

    /// Replies `{"result": value}` to a request.
    pub fn reply(&self, message_id: u32, value: Value) -> Result<(), StreamError> {
        let payload = cbor::encode(&cbor::text_map([("result", value)]));
        self.connection
            .send(&Packet::reply(self.id, message_id, payload))
    }

    /// Replies `{"result": value}`, leaving the flush to the next packet
    /// sent or wait (see [`Connection::send_deferred`]).
    pub fn reply_deferred(&self, message_id: u32, value: Value) -> Result<(), StreamError> {
        let payload = cbor::encode(&cbor::text_map([("result", value)]));
        self.connection
            .send_deferred(&Packet::reply(self.id, message_id, payload))
    }

    /// Replies with an error.
    pub fn reply_error(&self, message_id: u32, error: &str, error_type: &str) {
        self.connection
            .send_error(self.id, message_id, error, error_type);
    }

    /// Stops accepting requests on this stream (later requests get an error reply;
    /// the client's close is absorbed).
    pub fn complete(&self) {
        self.connection.complete_stream(self.id);
    }

    /// Sends `stream_close` and forgets the stream.
    pub fn close(&self) {
        let _ = self.connection.send(&Packet::stream_close(self.id));
        self.connection.forget_stream(self.id);
    }

    /// The connection this stream belongs to.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Keep the slot only if completed (to absorb the client's close).
        let streams = self.connection.streams.lock();
        if let Ok(mut streams) = streams
            && streams.get(&self.id).is_some_and(|s| !s.completed)
        {
            streams.remove(&self.id);
        }
    }
}

fn describe(payload: &[u8]) -> String {
    match cbor::decode(payload) {
        Ok(v) => format!("{v:?}"),
        Err(_) => format!("{:?}", String::from_utf8_lossy(payload)),
    }
}

/// What ended the reader loop.
pub enum ReaderEnd {
    /// The client closed its end cleanly.
    Eof,
    /// The bytes stopped making sense as packets.
    Framing(DecodeError),
    /// The transport failed.
    Io(std::io::Error),
}

/// Reads packets until the input ends, delivering control-stream packets to
/// `control` and everything else to its stream. Bad checksums are answered with
/// an error reply and skipped; other framing errors end the connection.
pub fn reader_loop<R: Read>(
    connection: &Arc<Connection>,
    input: R,
    control: Sender<Packet>,
) -> ReaderEnd {
    let mut reader = PacketReader::new(input);
    let end = loop {
        match reader.read_packet() {
            Ok(None) => break ReaderEnd::Eof,
            Ok(Some(packet)) => {
                if connection.debug {
                    eprintln!(
                        "geist-server: recv stream={} id={} reply={} {}",
                        packet.stream_id,
                        packet.message_id,
                        packet.is_reply,
                        describe(&packet.payload)
                    );
                }
                if packet.stream_id == 0 {
                    if control.send(packet).is_err() {
                        break ReaderEnd::Eof;
                    }
                } else {
                    connection.route(packet);
                }
            }
            Err(ReadError::Decode(DecodeError::BadChecksum {
                stream_id,
                message_id,
                is_reply,
                expected,
                computed,
            })) => {
                eprintln!(
                    "geist-server: dropped packet with bad checksum on stream {stream_id} (header 0x{expected:08X}, computed 0x{computed:08X})"
                );
                if !is_reply {
                    connection.send_error(
                        stream_id,
                        message_id,
                        &format!(
                            "packet checksum mismatch: header says 0x{expected:08X}, computed 0x{computed:08X}"
                        ),
                        "ProtocolError",
                    );
                }
            }
            Err(ReadError::Decode(e)) => break ReaderEnd::Framing(e),
            Err(ReadError::Io(e)) => break ReaderEnd::Io(e),
        }
    };
    connection.close_all();
    end
}
