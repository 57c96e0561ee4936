//! Hegel protocol packets: framing, CRC-32, CBOR payloads, stream and message ids.
//!
//! This crate knows the bytes of the Hegel wire format and nothing of testing. A
//! [`Packet`] is a 20-byte header (magic `HEGL`, CRC-32 over the header with the
//! checksum zeroed plus the payload, stream id, message id with the reply bit,
//! payload length), the payload, and a `0x0A` terminator. Payloads are CBOR
//! ([`cbor`]) except for the handshake (ASCII) and `stream_close` (`0xFE`).
//!
//! Decoding is defensive: every malformed input is a typed [`DecodeError`] that
//! says what was wrong, lengths are capped before anything is allocated, and a
//! reader never blocks waiting for bytes that a header has not promised.

pub mod cbor;
mod packet;
mod stream_id;

pub use packet::{
    CLOSE_STREAM_MESSAGE_ID, CLOSE_STREAM_PAYLOAD, DEFAULT_MAX_PAYLOAD, DecodeError, HEADER_LEN,
    MAGIC, Packet, PacketReader, REPLY_BIT, ReadError, TERMINATOR, checksum, decode_packet,
};
pub use stream_id::{MessageCounter, StreamIdAllocator, StreamOrigin};

/// The ASCII payload a client sends to open a connection.
pub const HANDSHAKE_REQUEST: &[u8] = b"hegel_handshake_start";

/// The handshake reply for a protocol version, e.g. `Hegel/0.15`.
pub fn handshake_reply(version: &str) -> Vec<u8> {
    format!("Hegel/{version}").into_bytes()
}
