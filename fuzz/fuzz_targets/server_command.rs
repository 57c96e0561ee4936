//! Fuzz the decoding of what a client sends geist-server: commands on the
//! control stream and on a test case's stream, in every protocol version,
//! and the events and results a client reads back.
//!
//! Properties: no panic on any payload; a command that decodes re-encodes to
//! a message that decodes to the same command; so does an event.

#![no_main]

use geist_protocol::{CaseCommand, ControlCommand, Event, SUPPORTED_VERSIONS};
use geist_wire::cbor;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(message) = cbor::decode(data) else {
        return;
    };
    for version in SUPPORTED_VERSIONS {
        if let Ok(command) = CaseCommand::decode(message.clone(), *version) {
            let again = CaseCommand::decode(command.encode(), *version);
            assert_eq!(
                format!("{again:?}"),
                format!("{:?}", Ok::<_, ()>(command)),
                "a case command does not survive re-encoding"
            );
        }
        if let Ok(command) = ControlCommand::decode(message.clone(), *version) {
            let again = ControlCommand::decode(command.encode(), *version);
            assert_eq!(
                format!("{again:?}"),
                format!("{:?}", Ok::<_, ()>(command)),
                "a control command does not survive re-encoding"
            );
        }
    }
    if let Ok(event) = Event::decode(&message) {
        let again = Event::decode(&event.encode());
        assert_eq!(
            format!("{again:?}"),
            format!("{:?}", Ok::<_, ()>(event)),
            "an event does not survive re-encoding"
        );
    }
});
