//! The packet: header, payload, terminator, and the CRC-32 that binds them.

use std::io::{self, BufRead, BufReader, Read, Write};

/// `HEGL` in ASCII, the first four bytes of every packet.
pub const MAGIC: u32 = 0x4845_474C;
/// The byte that ends every packet.
pub const TERMINATOR: u8 = 0x0A;
/// Size of the fixed header: magic, checksum, stream id, message id, length.
pub const HEADER_LEN: usize = 20;
/// Set in the message id field of a reply.
pub const REPLY_BIT: u32 = 1 << 31;
/// The payload of a `stream_close` packet (not valid CBOR, so never confused with one).
pub const CLOSE_STREAM_PAYLOAD: [u8; 1] = [0xFE];
/// The message id of every `stream_close` packet.
pub const CLOSE_STREAM_MESSAGE_ID: u32 = (1 << 31) - 1;
/// The largest payload accepted unless a reader is configured otherwise (64 MiB).
pub const DEFAULT_MAX_PAYLOAD: u32 = 64 << 20;

/// One Hegel packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The stream this packet belongs to (low bit: who created the stream).
    pub stream_id: u32,
    /// The message id, without the reply bit.
    pub message_id: u32,
    /// Whether this packet answers a request with the same message id.
    pub is_reply: bool,
    /// The payload bytes (CBOR for most packets).
    pub payload: Vec<u8>,
}

/// What was wrong with bytes that claimed to be a packet.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    /// The first four bytes were not `HEGL`.
    #[error("bad magic: expected 0x{MAGIC:08X} (\"HEGL\"), got 0x{found:08X}")]
    BadMagic {
        /// The four bytes found instead, big-endian.
        found: u32,
    },
    /// The payload length exceeds the configured limit.
    #[error("payload length {length} exceeds the limit of {limit} bytes")]
    PayloadTooLarge {
        /// The length the header announced.
        length: u32,
        /// The limit in force.
        limit: u32,
    },
    /// The byte after the payload was not `0x0A`.
    #[error("bad terminator: expected 0x0A, got 0x{found:02X}")]
    BadTerminator {
        /// The byte found instead.
        found: u8,
    },
    /// The checksum does not match the header and payload.
    #[error(
        "checksum mismatch on stream {stream_id}, message {message_id}: header says 0x{expected:08X}, computed 0x{computed:08X}"
    )]
    BadChecksum {
        /// Stream id from the (untrusted) header.
        stream_id: u32,
        /// Message id from the (untrusted) header, without the reply bit.
        message_id: u32,
        /// Whether the (untrusted) header had the reply bit.
        is_reply: bool,
        /// The checksum in the header.
        expected: u32,
        /// The checksum computed over the bytes received.
        computed: u32,
    },
    /// The input ended inside a packet.
    #[error("truncated packet: needed {needed} bytes, only {available} available")]
    Truncated {
        /// Bytes the packet needs in all.
        needed: usize,
        /// Bytes that were there.
        available: usize,
    },
}

/// An error from [`PacketReader::read_packet`].
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The bytes were not a valid packet.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The underlying transport failed.
    #[error("transport error: {0}")]
    Io(#[from] io::Error),
}

/// The CRC-32 (IEEE) of a packet: over the header with the checksum zeroed, then the payload.
pub fn checksum(stream_id: u32, wire_message_id: u32, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&header_bytes(
        0,
        stream_id,
        wire_message_id,
        payload.len() as u32,
    ));
    hasher.update(payload);
    hasher.finalize()
}

fn header_bytes(checksum: u32, stream_id: u32, wire_message_id: u32, length: u32) -> [u8; 20] {
    let mut header = [0u8; HEADER_LEN];
    header[0..4].copy_from_slice(&MAGIC.to_be_bytes());
    header[4..8].copy_from_slice(&checksum.to_be_bytes());
    header[8..12].copy_from_slice(&stream_id.to_be_bytes());
    header[12..16].copy_from_slice(&wire_message_id.to_be_bytes());
    header[16..20].copy_from_slice(&length.to_be_bytes());
    header
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

impl Packet {
    /// A request packet.
    pub fn request(stream_id: u32, message_id: u32, payload: Vec<u8>) -> Packet {
        Packet {
            stream_id,
            message_id,
            is_reply: false,
            payload,
        }
    }

    /// A reply to `message_id` on `stream_id`.
    pub fn reply(stream_id: u32, message_id: u32, payload: Vec<u8>) -> Packet {
        Packet {
            stream_id,
            message_id,
            is_reply: true,
            payload,
        }
    }

    /// The `stream_close` packet for a stream.
    pub fn stream_close(stream_id: u32) -> Packet {
        Packet::request(
            stream_id,
            CLOSE_STREAM_MESSAGE_ID,
            CLOSE_STREAM_PAYLOAD.to_vec(),
        )
    }

    /// Whether this is a `stream_close` (right payload and message id).
    pub fn is_stream_close(&self) -> bool {
        !self.is_reply
            && self.message_id == CLOSE_STREAM_MESSAGE_ID
            && self.payload == CLOSE_STREAM_PAYLOAD
    }

    /// The message id field as it appears on the wire (with the reply bit).
    pub fn wire_message_id(&self) -> u32 {
        if self.is_reply {
            self.message_id | REPLY_BIT
        } else {
            self.message_id
        }
    }

    /// Appends the packet's wire form to `out`.
    ///
    /// # Panics
    /// If the payload is 4 GiB or more, which no caller in geist produces.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let length = u32::try_from(self.payload.len()).expect("payload under 4 GiB");
        let wire_id = self.wire_message_id();
        let sum = checksum(self.stream_id, wire_id, &self.payload);
        out.reserve(HEADER_LEN + self.payload.len() + 1);
        out.extend_from_slice(&header_bytes(sum, self.stream_id, wire_id, length));
        out.extend_from_slice(&self.payload);
        out.push(TERMINATOR);
    }

    /// The packet's wire form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Writes the packet in one `write_all` (so concurrent writers that hold a
    /// lock around this call never interleave packets).
    pub fn write_to<W: Write>(&self, writer: &mut W) -> io::Result<()> {
        writer.write_all(&self.to_bytes())
    }
}

/// Decodes one packet from the front of `buf`.
///
/// Returns the packet and the number of bytes it used. Checks run in the order
/// the bytes arrive: magic, length limit, terminator, checksum; a short buffer
/// is [`DecodeError::Truncated`].
pub fn decode_packet(buf: &[u8], max_payload: u32) -> Result<(Packet, usize), DecodeError> {
    if buf.len() < 4 {
        return Err(DecodeError::Truncated {
            needed: HEADER_LEN,
            available: buf.len(),
        });
    }
    let magic = be_u32(&buf[0..4]);
    if magic != MAGIC {
        return Err(DecodeError::BadMagic { found: magic });
    }
    if buf.len() < HEADER_LEN {
        return Err(DecodeError::Truncated {
            needed: HEADER_LEN,
            available: buf.len(),
        });
    }
    let length = be_u32(&buf[16..20]);
    if length > max_payload {
        return Err(DecodeError::PayloadTooLarge {
            length,
            limit: max_payload,
        });
    }
    let total = HEADER_LEN + length as usize + 1;
    if buf.len() < total {
        return Err(DecodeError::Truncated {
            needed: total,
            available: buf.len(),
        });
    }
    let header: [u8; HEADER_LEN] = buf[..HEADER_LEN].try_into().expect("length checked");
    let payload = &buf[HEADER_LEN..total - 1];
    let packet = finish_packet(&header, payload.to_vec(), buf[total - 1])?;
    Ok((packet, total))
}

fn finish_packet(
    header: &[u8; HEADER_LEN],
    payload: Vec<u8>,
    terminator: u8,
) -> Result<Packet, DecodeError> {
    if terminator != TERMINATOR {
        return Err(DecodeError::BadTerminator { found: terminator });
    }
    let expected = be_u32(&header[4..8]);
    let stream_id = be_u32(&header[8..12]);
    let wire_id = be_u32(&header[12..16]);
    let computed = checksum(stream_id, wire_id, &payload);
    if computed != expected {
        return Err(DecodeError::BadChecksum {
            stream_id,
            message_id: wire_id & !REPLY_BIT,
            is_reply: wire_id & REPLY_BIT != 0,
            expected,
            computed,
        });
    }
    Ok(Packet {
        stream_id,
        message_id: wire_id & !REPLY_BIT,
        is_reply: wire_id & REPLY_BIT != 0,
        payload,
    })
}

/// Reads packets one at a time from a byte stream.
///
/// A clean end of input between packets is `Ok(None)`; an end inside a packet
/// is [`DecodeError::Truncated`]. The payload buffer is allocated only after the
/// length has passed the limit, and filled as bytes arrive.
pub struct PacketReader<R: Read> {
    reader: BufReader<R>,
    max_payload: u32,
}

impl<R: Read> PacketReader<R> {
    /// A reader with the default payload limit.
    pub fn new(reader: R) -> PacketReader<R> {
        PacketReader::with_limit(reader, DEFAULT_MAX_PAYLOAD)
    }

    /// A reader that rejects payloads longer than `max_payload` bytes.
    pub fn with_limit(reader: R, max_payload: u32) -> PacketReader<R> {
        PacketReader {
            reader: BufReader::with_capacity(64 * 1024, reader),
            max_payload,
        }
    }

    /// Reads the next packet, `Ok(None)` at a clean end of input.
    ///
    /// After a [`DecodeError::BadChecksum`] the stream is still in step (the
    /// whole packet was consumed); after any other decode error the framing is
    /// lost and the caller should close the connection.
    pub fn read_packet(&mut self) -> Result<Option<Packet>, ReadError> {
        let mut header = [0u8; HEADER_LEN];
        let got = read_up_to(&mut self.reader, &mut header)?;
        if got == 0 {
            return Ok(None);
        }
        if got >= 4 {
            let magic = be_u32(&header[0..4]);
            if magic != MAGIC {
                return Err(DecodeError::BadMagic { found: magic }.into());
            }
        }
        if got < HEADER_LEN {
            return Err(DecodeError::Truncated {
                needed: HEADER_LEN,
                available: got,
            }
            .into());
        }
        let length = be_u32(&header[16..20]);
        if length > self.max_payload {
            return Err(DecodeError::PayloadTooLarge {
                length,
                limit: self.max_payload,
            }
            .into());
        }
        let needed = length as usize + 1;
        let mut rest = Vec::new();
        let got = (&mut self.reader)
            .take(needed as u64)
            .read_to_end(&mut rest)?;
        if got < needed {
            return Err(DecodeError::Truncated {
                needed: HEADER_LEN + needed,
                available: HEADER_LEN + got,
            }
            .into());
        }
        let terminator = rest.pop().expect("at least the terminator was read");
        Ok(Some(finish_packet(&header, rest, terminator)?))
    }

    /// Whether bytes are already buffered (so a read will not block).
    pub fn has_buffered(&self) -> bool {
        !self.reader.buffer().is_empty()
    }
}

fn read_up_to<R: BufRead>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Packet {
        Packet::request(3, 7, vec![0xA1, 0x61, 0x61, 0x01])
    }

    #[test]
    fn round_trips_through_bytes_and_reader() {
        let packets = vec![
            sample(),
            Packet::reply(3, 7, vec![]),
            Packet::stream_close(4),
        ];
        let mut bytes = Vec::new();
        for p in &packets {
            p.encode_into(&mut bytes);
        }
        let mut reader = PacketReader::new(&bytes[..]);
        for p in &packets {
            assert_eq!(reader.read_packet().unwrap().as_ref(), Some(p));
        }
        assert!(reader.read_packet().unwrap().is_none());
        let (first, used) = decode_packet(&bytes, DEFAULT_MAX_PAYLOAD).unwrap();
        assert_eq!(first, packets[0]);
        assert_eq!(used, HEADER_LEN + 4 + 1);
    }

    #[test]
    fn known_layout() {
        let bytes = Packet::reply(0, 1, b"Hegel/0.15".to_vec()).to_bytes();
        assert_eq!(&bytes[0..4], b"HEGL");
        assert_eq!(&bytes[8..12], &[0, 0, 0, 0]);
        assert_eq!(&bytes[12..16], &[0x80, 0, 0, 1]);
        assert_eq!(&bytes[16..20], &[0, 0, 0, 10]);
        assert_eq!(*bytes.last().unwrap(), 0x0A);
        // The checksum is CRC-32/IEEE of the zeroed header and the payload.
        let mut zeroed = bytes[..bytes.len() - 1].to_vec();
        zeroed[4..8].fill(0);
        assert_eq!(
            &bytes[4..8],
            &crc32fast::hash(&zeroed).to_be_bytes(),
            "checksum field"
        );
    }

    #[test]
    fn rejects_each_kind_of_damage() {
        let good = sample().to_bytes();
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        assert!(matches!(
            decode_packet(&bad_magic, DEFAULT_MAX_PAYLOAD),
            Err(DecodeError::BadMagic { .. })
        ));
        let mut bad_sum = good.clone();
        bad_sum[HEADER_LEN] ^= 1;
        assert!(matches!(
            decode_packet(&bad_sum, DEFAULT_MAX_PAYLOAD),
            Err(DecodeError::BadChecksum {
                stream_id: 3,
                message_id: 7,
                ..
            })
        ));
        let mut bad_term = good.clone();
        *bad_term.last_mut().unwrap() = 0;
        assert_eq!(
            decode_packet(&bad_term, DEFAULT_MAX_PAYLOAD),
            Err(DecodeError::BadTerminator { found: 0 })
        );
        assert!(matches!(
            decode_packet(&good[..good.len() - 1], DEFAULT_MAX_PAYLOAD),
            Err(DecodeError::Truncated { .. })
        ));
        let mut huge = good.clone();
        huge[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            decode_packet(&huge, DEFAULT_MAX_PAYLOAD),
            Err(DecodeError::PayloadTooLarge { .. })
        ));
        let mut reader = PacketReader::new(&huge[..]);
        assert!(matches!(
            reader.read_packet(),
            Err(ReadError::Decode(DecodeError::PayloadTooLarge { .. }))
        ));
        let mut reader = PacketReader::new(&good[..10]);
        assert!(matches!(
            reader.read_packet(),
            Err(ReadError::Decode(DecodeError::Truncated { .. }))
        ));
    }

    #[test]
    fn stream_close_is_recognised_only_when_exact() {
        assert!(Packet::stream_close(2).is_stream_close());
        assert!(!Packet::request(2, 5, CLOSE_STREAM_PAYLOAD.to_vec()).is_stream_close());
    }
}
