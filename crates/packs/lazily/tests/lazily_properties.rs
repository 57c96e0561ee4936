//! Properties of the lazily pack over generated messages and sessions.
//!
//! - decode(encode(m)) == m, and encoding is byte-stable;
//! - a receiver fed a session with dropped and re-delivered frames, answering
//!   its resync requests with snapshots, ends with the same mirror and epoch as
//!   one fed the session without loss;
//! - any generated message recorded as a fixture passes the runner.
//!
//! Driven by a seeded choice stream; `lazily_geist_properties.rs` holds the
//! same properties driven by `geist::check`.

use geist_fixtures::json;
use geist_fixtures::{Runner, record_fixture};
use geist_lazily::generate::{Choices, SeededChoices, Session, draw_message, draw_session};
use geist_lazily::{IpcMessage, LazilyPack, Receipt, Receiver, decode, encode};

const CASES: usize = 10_000;

#[test]
fn decode_inverts_encode_and_encoding_is_stable() {
    let mut choices = SeededChoices::new(1);
    for index in 0..CASES {
        let message = draw_message(&mut choices);
        let bytes = encode(&message);
        let decoded = decode(&bytes).unwrap_or_else(|error| {
            panic!(
                "message {index} does not decode: {error}\n{}",
                String::from_utf8_lossy(&bytes)
            )
        });
        assert_eq!(decoded, message, "message {index}");
        assert_eq!(
            encode(&decoded),
            bytes,
            "message {index}: re-encoding differs"
        );
        assert_eq!(
            encode(&message.clone()),
            bytes,
            "message {index}: encoding is not deterministic"
        );
    }
}

/// Delivers a session over a lossy channel: each delta may be dropped or delivered twice;
/// a resync request is answered with a snapshot of the sender's graph at its current epoch.
/// The sender finishes with an empty heartbeat delta that always arrives, so that a loss
/// at the end is detected too.
fn deliver(session: &Session, choices: &mut impl Choices, lossy: bool) -> (Receiver, usize) {
    let mut receiver = Receiver::new();
    let mut resyncs = 0;
    let mut sender_epoch = session.snapshot.epoch;
    let mut sender_graph = geist_lazily::Mirror::from_snapshot(&session.snapshot)
        .unwrap_or_else(|error| panic!("generated snapshot is invalid: {error}"));
    let mut frames: Vec<IpcMessage> = vec![IpcMessage::Snapshot(session.snapshot.clone())];
    frames.extend(session.deltas.iter().cloned().map(IpcMessage::Delta));
    let heartbeat_base = session.snapshot.epoch + session.deltas.len() as u64;
    frames.push(IpcMessage::Delta(geist_lazily::Delta {
        base_epoch: heartbeat_base,
        epoch: heartbeat_base + 1,
        ops: vec![],
    }));
    let last = frames.len() - 1;
    for (index, frame) in frames.iter().enumerate() {
        if let IpcMessage::Delta(delta) = frame {
            sender_epoch = delta.epoch;
            if let Some(graph) = session.graphs.get(index - 1) {
                sender_graph = graph.clone();
            }
        }
        let copies = if lossy && index != last {
            choices.integer(0, 2)
        } else {
            1
        };
        for _ in 0..copies {
            if let Receipt::ResyncRequested { request, .. } = receiver.receive(frame) {
                assert!(request.from_epoch <= sender_epoch, "resync from the future");
                resyncs += 1;
                let answer = IpcMessage::Snapshot(sender_graph.to_snapshot(sender_epoch));
                assert_eq!(
                    receiver.receive(&answer),
                    Receipt::Replaced {
                        epoch: sender_epoch
                    }
                );
            }
        }
    }
    (receiver, resyncs)
}

#[test]
fn lossy_delivery_with_resync_converges_to_lossless() {
    let mut choices = SeededChoices::new(2);
    let mut total_resyncs = 0;
    for index in 0..CASES {
        let session = draw_session(&mut choices, 8);
        let (lossless, resyncs) = deliver(&session, &mut choices, false);
        assert_eq!(
            resyncs, 0,
            "session {index}: lossless delivery needed a resync"
        );
        let (lossy, resyncs) = deliver(&session, &mut choices, true);
        total_resyncs += resyncs;
        assert_eq!(lossy.last_epoch(), lossless.last_epoch(), "session {index}");
        assert_eq!(
            lossy.mirror(),
            lossless.mirror(),
            "session {index}: {session:?}"
        );
        let expected = session.graphs.last().cloned().unwrap_or_else(|| {
            geist_lazily::Mirror::from_snapshot(&session.snapshot).unwrap_or_default()
        });
        assert_eq!(
            lossless.mirror(),
            &expected,
            "session {index}: mirror differs from the sender's graph"
        );
    }
    // The channel must actually lose frames for this property to mean anything.
    assert!(
        total_resyncs > CASES / 4,
        "only {total_resyncs} resyncs in {CASES} sessions"
    );
}

#[test]
fn generated_messages_record_as_passing_fixtures() {
    let runner = Runner::new().with_pack(LazilyPack);
    let mut choices = SeededChoices::new(3);
    for index in 0..500 {
        let message = draw_message(&mut choices);
        let wire = json::parse(&encode(&message)).unwrap_or_else(|error| panic!("{error}"));
        let fixture = record_fixture(
            &runner,
            &format!("generated_{index}.json"),
            "generated",
            message.kind(),
            1,
            vec![("wire".to_string(), wire)],
        )
        .unwrap_or_else(|error| panic!("message {index}: {error}"));
        let text = fixture.to_file_text();
        let outcome = runner.check_bytes("recorded", text.as_bytes());
        assert!(
            outcome.passed(),
            "message {index}: {:?}\n{text}",
            outcome.problems
        );
        assert!(outcome.assertions_checked >= 1);
    }
}
