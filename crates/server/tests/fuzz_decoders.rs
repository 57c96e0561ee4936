//! Property-based fuzzing of the decoders that face the network, driven by
//! geist's own engine: arbitrary and mutated bytes never panic, never hang,
//! and whatever decodes re-encodes to the same thing.

use geist_engine::choice::{IntegerConstraints, SizeConstraints};
use geist_engine::run::{RunSettings, run};
use geist_engine::{Status, TestData};
use geist_wire::cbor;
use geist_wire::{DEFAULT_MAX_PAYLOAD, Packet, PacketReader, decode_packet};

fn settings(seed: u128) -> RunSettings {
    RunSettings {
        test_cases: 10_000,
        seed,
        ..RunSettings::default()
    }
}

fn bytes(data: &mut TestData, max: usize) -> Option<Vec<u8>> {
    data.draw_bytes(SizeConstraints {
        min_size: 0,
        max_size: max,
    })
    .ok()
}

fn fail(data: &mut TestData, why: String) {
    data.conclude(Status::Interesting, Some(why));
}

/// Runs a property and panics with the shrunk failure if there is one.
fn check(name: &str, seed: u128, property: &mut dyn FnMut(&mut TestData)) {
    let result = run(&settings(seed), &[], &mut |data| {
        property(data);
        true
    });
    assert!(
        result.failures.is_empty(),
        "{name}: {:?} (choices {:?})",
        result.failures[0].origin,
        result.failures[0].choices
    );
    assert!(
        result.valid_test_cases >= 1000 || result.test_cases >= 10_000,
        "{name} ran too few cases"
    );
}

#[test]
fn packet_decoder_accepts_only_what_it_can_reencode() {
    check("arbitrary packet bytes", 1, &mut |data| {
        let Some(input) = bytes(data, 64) else { return };
        // Half the time, start from a valid header so deeper checks are reached.
        let input = if data.draw_boolean(0.5).unwrap_or(false) {
            let mut framed = Packet::request(3, 1, input.clone()).to_bytes();
            let Ok(at) =
                data.draw_integer(IntegerConstraints::bounded(0, framed.len() as i128 - 1))
            else {
                return;
            };
            let Ok(flip) = data.draw_integer(IntegerConstraints::bounded(0, 255)) else {
                return;
            };
            framed[at as usize] ^= flip as u8;
            framed
        } else {
            input
        };
        if let Ok((packet, used)) = decode_packet(&input, DEFAULT_MAX_PAYLOAD)
            && packet.to_bytes() != input[..used]
        {
            fail(
                data,
                format!("decoded {packet:?} does not re-encode to its bytes"),
            );
        }
        // The streaming reader agrees and always terminates.
        let mut reader = PacketReader::new(&input[..]);
        for _ in 0..=input.len() {
            match reader.read_packet() {
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => break,
            }
        }
    });
}

#[test]
fn cbor_decoder_never_panics_and_round_trips() {
    check("arbitrary CBOR", 2, &mut |data| {
        let Some(input) = bytes(data, 48) else { return };
        if let Ok(value) = cbor::decode(&input) {
            // Compare encodings, not values: NaN is not equal to itself.
            let encoded = cbor::encode(&value);
            match cbor::decode(&encoded) {
                Ok(again) if cbor::encode(&again) == encoded => {}
                other => fail(
                    data,
                    format!("{value:?} does not survive encode/decode: {other:?}"),
                ),
            }
        }
    });
}

#[test]
fn serve_survives_garbage_after_the_handshake() {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;
    check("garbage after handshake", 3, &mut |data| {
        let Some(garbage) = bytes(data, 64) else {
            return;
        };
        let (mut ours, theirs) = UnixStream::pair().expect("socket pair");
        ours.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let input = theirs.try_clone().expect("clone");
        let server = std::thread::spawn(move || {
            geist_server::serve(input, theirs, geist_server::ServerConfig::default())
        });
        let _ =
            ours.write_all(&Packet::request(0, 1, b"hegel_handshake_start".to_vec()).to_bytes());
        let _ = ours.write_all(&garbage);
        let _ = ours.shutdown(std::net::Shutdown::Write);
        // Drain whatever the server says until it closes its end.
        let mut reader = PacketReader::new(ours);
        while let Ok(Some(_)) = reader.read_packet() {}
        if server.join().is_err() {
            fail(data, "server thread panicked".into());
        }
    });
}
