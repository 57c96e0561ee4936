//! Protocol versions and the one table of what differs between them.
//!
//! A Hegel client cannot announce its version: the server announces one in
//! its handshake reply (`Hegel/0.15`) and both sides then behave as that
//! version says. Every behaviour that some versions have and others lack is
//! one [`Behaviour`] with one entry in [`CHANGES`], saying from which version
//! (and, if it was later dropped, until which) it holds. Code asks
//! [`ProtocolVersion::has`]; it never compares version numbers itself, so a
//! new difference is one variant, one table entry and the code that reads it.

use std::fmt;

/// A Hegel protocol version, `major.minor` (`0.1` sorts before `0.10`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion {
    /// Major version (0 so far).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

const fn v(major: u32, minor: u32) -> ProtocolVersion {
    ProtocolVersion { major, minor }
}

/// The versions geist speaks (server and client alike), oldest first.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    v(0, 1),
    v(0, 10),
    v(0, 11),
    v(0, 12),
    v(0, 13),
    v(0, 14),
    v(0, 15),
    v(0, 16),
];

/// The version geist-server announces unless told otherwise (what
/// hegeltest 0.16.0 and hegel-ocaml require).
pub const DEFAULT_VERSION: ProtocolVersion = v(0, 15);

/// The prefix of a handshake reply, before the version.
const HANDSHAKE_PREFIX: &str = "Hegel/";

/// Why a version (or a handshake reply naming one) was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not of the form `MAJOR.MINOR`.
    #[error("protocol version {0:?} is not of the form MAJOR.MINOR")]
    Malformed(String),
    /// A version geist does not speak.
    #[error(
        "protocol version {version} is not one geist speaks ({})",
        supported_list()
    )]
    Unsupported {
        /// The version as given.
        version: String,
    },
    /// A handshake reply that is not `Hegel/<version>`.
    #[error("expected \"Hegel/<version>\", got {0:?}")]
    NotAHandshakeReply(String),
}

/// The supported versions, comma separated, for messages.
pub fn supported_list() -> String {
    SUPPORTED_VERSIONS
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ProtocolVersion {
    /// Parses `major.minor`, accepting only versions geist speaks.
    pub fn parse(text: &str) -> Result<ProtocolVersion, VersionError> {
        let trimmed = text.trim();
        let (major, minor) = trimmed
            .split_once('.')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .ok_or_else(|| VersionError::Malformed(text.to_string()))?;
        let version = v(major, minor);
        if !SUPPORTED_VERSIONS.contains(&version) {
            return Err(VersionError::Unsupported {
                version: trimmed.to_string(),
            });
        }
        Ok(version)
    }

    /// The handshake reply that announces this version.
    pub fn handshake_reply(self) -> Vec<u8> {
        format!("{HANDSHAKE_PREFIX}{self}").into_bytes()
    }

    /// The version a handshake reply announces, if geist speaks it.
    pub fn from_handshake_reply(reply: &[u8]) -> Result<ProtocolVersion, VersionError> {
        let text = String::from_utf8_lossy(reply);
        let version = text
            .strip_prefix(HANDSHAKE_PREFIX)
            .ok_or_else(|| VersionError::NotAHandshakeReply(text.to_string()))?;
        ProtocolVersion::parse(version)
    }

    /// Whether this version has `behaviour` (see [`CHANGES`]).
    #[inline]
    pub fn has(self, behaviour: Behaviour) -> bool {
        let change = &CHANGES[behaviour as usize];
        self >= change.since && change.until.is_none_or(|last| self <= last)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A behaviour some protocol versions have and others lack. Each has exactly
/// one entry in [`CHANGES`], at the index of its discriminant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Behaviour {
    /// Generated strings are CBOR tag 91 over a byte string of UTF-8 that may
    /// hold surrogates; without it, tag 6 over UTF-8 (the reference document).
    HegelStringTag,
    /// The control stream accepts `single_test_case`.
    SingleTestCase,
    /// Engine-owned state machines: `new_state_machine` and
    /// `state_machine_next_rule`.
    EngineStateMachines,
    /// `mark_complete` with status `OVERRUN` is refused ("Unexpected
    /// mark_complete status"); before, it ended the test case as an overrun.
    RefusesOverrunStatus,
    /// `one_of` answers `[index, value]` (the branch's index, then its
    /// value); before, the value alone.
    OneOfAnswersIndex,
    /// A control-stream message that is not a control command of the
    /// version (an unknown or missing `command`, or not CBOR) ends the
    /// connection, unanswered; without it, it gets an error reply.
    UnknownControlCommandEndsConnection,
}

impl Behaviour {
    /// Every behaviour, in table order.
    pub const ALL: &'static [Behaviour] = &[
        Behaviour::HegelStringTag,
        Behaviour::SingleTestCase,
        Behaviour::EngineStateMachines,
        Behaviour::RefusesOverrunStatus,
        Behaviour::OneOfAnswersIndex,
        Behaviour::UnknownControlCommandEndsConnection,
    ];
}

/// One entry of the table: a behaviour and the versions that have it.
#[derive(Clone, Copy, Debug)]
pub struct Change {
    /// What differs.
    pub behaviour: Behaviour,
    /// The first version that has it.
    pub since: ProtocolVersion,
    /// The last version that has it, if a later one dropped it.
    pub until: Option<ProtocolVersion>,
    /// The hegel-core release that introduced it (the reference for its
    /// exact shape), or where else it comes from.
    pub source: &'static str,
}

/// The table of protocol behaviour by version: one entry per [`Behaviour`],
/// in the order of [`Behaviour::ALL`].
pub const CHANGES: &[Change] = &[
    Change {
        behaviour: Behaviour::HegelStringTag,
        since: v(0, 10),
        until: None,
        source: "hegel-core 0.4 (protocol 0.10)",
    },
    Change {
        behaviour: Behaviour::SingleTestCase,
        since: v(0, 13),
        until: None,
        source: "hegel-core 0.7 (protocol 0.13)",
    },
    Change {
        behaviour: Behaviour::EngineStateMachines,
        since: v(0, 16),
        until: None,
        source: "hegel-core 0.10 (protocol 0.16)",
    },
    Change {
        behaviour: Behaviour::RefusesOverrunStatus,
        since: v(0, 12),
        until: None,
        // hegel-core 0.4.3's server.py concludes any status it can name;
        // 0.6.0's raises for OVERRUN (0.5.x, protocol 0.11, not checked).
        source: "hegel-core 0.6.0 (protocol 0.12)",
    },
    Change {
        behaviour: Behaviour::OneOfAnswersIndex,
        since: v(0, 11),
        until: None,
        // hegel-core 0.4.3's schema.py: `st.one_of([...branches])`; 0.5.0's
        // wraps each branch in `st.tuples(st.just(i), branch)`.
        source: "hegel-core 0.5.0 (protocol 0.11)",
    },
    Change {
        behaviour: Behaviour::UnknownControlCommandEndsConnection,
        since: v(0, 10),
        until: None,
        // Every release from 0.4.3 to 0.10.0: run_server_on_connection
        // raises `ValueError("Unknown command: ...")` out of its loop, prints
        // the traceback and closes the connection (0.10.0's own test
        // test_unknown_command expects a ConnectionError). The reference
        // document (0.1) says nothing; geist answers with an error there.
        source: "hegel-core 0.4.3 (protocol 0.10)",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_entry_per_behaviour_at_its_index() {
        assert_eq!(CHANGES.len(), Behaviour::ALL.len());
        for (index, behaviour) in Behaviour::ALL.iter().enumerate() {
            assert_eq!(
                *behaviour as usize, index,
                "{behaviour:?} is out of order in ALL"
            );
            assert_eq!(CHANGES[index].behaviour, *behaviour, "CHANGES[{index}]");
            let change = CHANGES[index];
            assert!(SUPPORTED_VERSIONS.contains(&change.since), "{behaviour:?}");
            if let Some(until) = change.until {
                assert!(until >= change.since, "{behaviour:?}");
            }
        }
    }

    #[test]
    fn versions_parse_order_and_gate_behaviours() {
        let reference = ProtocolVersion::parse("0.1").unwrap();
        let latest = ProtocolVersion::parse(" 0.16 ").unwrap();
        assert!(reference < ProtocolVersion::parse("0.10").unwrap());
        assert!(!reference.has(Behaviour::HegelStringTag));
        assert!(latest.has(Behaviour::EngineStateMachines));
        assert!(!DEFAULT_VERSION.has(Behaviour::EngineStateMachines));
        assert!(DEFAULT_VERSION.has(Behaviour::SingleTestCase));
        assert!(matches!(
            ProtocolVersion::parse("0.9"),
            Err(VersionError::Unsupported { .. })
        ));
        assert!(matches!(
            ProtocolVersion::parse("zero"),
            Err(VersionError::Malformed(_))
        ));
    }

    #[test]
    fn handshake_replies_round_trip() {
        for version in SUPPORTED_VERSIONS {
            let reply = version.handshake_reply();
            assert_eq!(ProtocolVersion::from_handshake_reply(&reply), Ok(*version));
        }
        assert!(matches!(
            ProtocolVersion::from_handshake_reply(b"Hegel/0.2"),
            Err(VersionError::Unsupported { .. })
        ));
        assert!(matches!(
            ProtocolVersion::from_handshake_reply(b"hello"),
            Err(VersionError::NotAHandshakeReply(_))
        ));
    }
}
