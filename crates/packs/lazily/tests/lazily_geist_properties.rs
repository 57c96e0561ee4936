//! The lazily pack's properties driven by geist: 10,000 cases each, shrinking on failure.

mod lazily_geist_support;

use geist::{Settings, TestCase, check};
use geist_lazily::generate::{draw_message, draw_session};
use geist_lazily::{IpcMessage, Mirror, Receipt, Receiver, decode, encode};
use lazily_geist_support::GeistChoices;

#[test]
fn decode_inverts_encode_and_encoding_is_stable() {
    check(
        Settings::new().test_cases(10_000).seed(Some(1)),
        |tc: &mut TestCase| {
            let message = draw_message(&mut GeistChoices(tc));
            let bytes = encode(&message);
            tc.note(String::from_utf8_lossy(&bytes).into_owned());
            let decoded = decode(&bytes);
            assert_eq!(decoded.as_ref(), Ok(&message));
            assert_eq!(encode(&message), bytes);
        },
    );
}

#[test]
fn lossy_delivery_with_resync_converges_to_lossless() {
    check(
        Settings::new().test_cases(10_000).seed(Some(2)),
        |tc: &mut TestCase| {
            let session = draw_session(&mut GeistChoices(tc), 8);
            tc.note(format!("{session:?}"));
            let mut frames = vec![IpcMessage::Snapshot(session.snapshot.clone())];
            frames.extend(session.deltas.iter().cloned().map(IpcMessage::Delta));
            let last = frames.len() - 1;
            let mut lossless = Receiver::new();
            let mut lossy = Receiver::new();
            let mut sender_graph = Mirror::from_snapshot(&session.snapshot).unwrap_or_default();
            let mut sender_epoch = session.snapshot.epoch;
            for (index, frame) in frames.iter().enumerate() {
                if index > 0 {
                    sender_graph = session.graphs[index - 1].clone();
                    sender_epoch += 1;
                }
                lossless.receive(frame);
                // Drop, deliver once or deliver twice; the final frame always arrives.
                let copies: u64 = if index == last {
                    1
                } else {
                    tc.draw(
                        &geist::generators::integers::<u64>()
                            .min_value(0)
                            .max_value(2),
                    )
                };
                for _ in 0..copies {
                    if let Receipt::ResyncRequested { .. } = lossy.receive(frame) {
                        lossy.receive(&IpcMessage::Snapshot(
                            sender_graph.to_snapshot(sender_epoch),
                        ));
                    }
                }
            }
            // A last frame that was a snapshot, or a delta after a gap, leaves both in step.
            assert_eq!(lossy.last_epoch(), lossless.last_epoch());
            assert_eq!(lossy.mirror(), lossless.mirror());
        },
    );
}
