//! Fuzz geist-server's packet framing on arbitrary bytes.
//!
//! Properties: no panic and no runaway allocation (a header's length is
//! capped before anything is allocated); a packet the decoder accepts
//! re-encodes to exactly the bytes it was read from; the streaming reader
//! reads the same packets from the same bytes, whatever the input's pieces.

#![no_main]

use geist_wire::{DEFAULT_MAX_PAYLOAD, PacketReader, ReadError, decode_packet};
use libfuzzer_sys::fuzz_target;

/// Hands the reader its input a few bytes at a time.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let mut decoded = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        match decode_packet(rest, DEFAULT_MAX_PAYLOAD) {
            Ok((packet, used)) => {
                assert!(used > 0 && used <= rest.len());
                assert_eq!(packet.to_bytes(), &rest[..used], "not canonical");
                decoded.push(packet);
                rest = &rest[used..];
            }
            Err(_) => break,
        }
    }
    let step = 1 + data.first().map_or(0, |b| usize::from(*b % 7));
    let mut reader = PacketReader::new(Trickle { data, step });
    for expected in &decoded {
        match reader.read_packet() {
            Ok(Some(packet)) => assert_eq!(&packet, expected, "the reader reads another packet"),
            other => panic!("the reader stops early: {other:?}"),
        }
    }
    // After the whole packets, the reader ends or errs, never panics or spins.
    match reader.read_packet() {
        Ok(_) | Err(ReadError::Decode(_)) | Err(ReadError::Io(_)) => {}
    }
});
