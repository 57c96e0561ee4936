//! Measures a Hegel server through hegeltest: start-up (spawn to handshake
//! reply) and test cases per second for a trivial one-integer property.
//!
//! usage: hegel-throughput SERVER_COMMAND TEST_CASES
//! The server is given through HEGEL_SERVER_COMMAND for the throughput part.

use hegel::generators as gs;
use hegel::{Hegel, Settings};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

fn handshake_packet() -> Vec<u8> {
    let payload = b"hegel_handshake_start";
    let mut header = Vec::new();
    for field in [0x4845_474Cu32, 0, 0, 1, payload.len() as u32] {
        header.extend_from_slice(&field.to_be_bytes());
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&header);
    hasher.update(payload);
    header[4..8].copy_from_slice(&hasher.finalize().to_be_bytes());
    header.extend_from_slice(payload);
    header.push(0x0A);
    header
}

/// Seconds from spawning the server to reading its handshake reply.
fn startup_seconds(command: &str) -> f64 {
    let start = Instant::now();
    let mut child = Command::new(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    stdin.write_all(&handshake_packet()).expect("write handshake");
    stdin.flush().expect("flush");
    let mut header = [0u8; 20];
    stdout.read_exact(&mut header).expect("read reply header");
    let length = u32::from_be_bytes([header[16], header[17], header[18], header[19]]) as usize;
    let mut rest = vec![0u8; length + 1];
    stdout.read_exact(&mut rest).expect("read reply");
    let elapsed = start.elapsed().as_secs_f64();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    elapsed
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let command = args.get(1).expect("usage: hegel-throughput SERVER_COMMAND TEST_CASES");
    let test_cases: u64 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let startup = startup_seconds(command);
    // Warm the session (spawn + handshake happen on first use) so the timed
    // run measures test cases, not start-up.
    Hegel::new(|tc| {
        let _: i64 = tc.draw(gs::integers::<i64>());
    })
    .settings(Settings::new().test_cases(10).database(None))
    .run();
    let start = Instant::now();
    Hegel::new(|tc| {
        let x: i64 = tc.draw(gs::integers::<i64>());
        assert_eq!(x.wrapping_add(0), x);
    })
    .settings(Settings::new().test_cases(test_cases).database(None).seed(Some(1)))
    .run();
    let seconds = start.elapsed().as_secs_f64();
    println!("{startup:.6} {seconds:.6} {test_cases}");
}
