//! The Hegel protocol above the bytes, once for both sides.
//!
//! [`geist_wire`] knows packets and CBOR; this crate knows what they mean:
//! commands ([`command`]) and events and results of runs ([`run`]) as types,
//! replies ([`reply`]), the table of what differs between protocol versions
//! ([`version`]), engine values to and from CBOR ([`values`]), and the
//! multiplexed [`connection`] that geist-server and the `geist` client both
//! speak through. Nothing here generates or shrinks: that is the engine's.
//!
//! ```text
//! server ─┐                ┌─ command / run / reply / values (what messages mean)
//!         ├─ geist-protocol┤
//! client ─┘                └─ connection (streams over one byte pipe) ── geist-wire (packets, CBOR)
//! ```

pub mod command;
pub mod connection;
pub mod reply;
pub mod run;
pub mod spin;
pub mod values;
pub mod version;

pub use command::{
    CaseCommand, CaseStatus, CommandError, CommandName, ControlCommand, DatabaseChoice, RunTest,
};
pub use connection::{
    Connection, ConnectionConfig, ConnectionError, OpenError, ReaderEnd, Request, Role, Stream,
};
pub use reply::{ErrorKind, ErrorReply};
pub use run::{Event, EventError, RunResults};
pub use version::{Behaviour, DEFAULT_VERSION, ProtocolVersion, SUPPORTED_VERSIONS, VersionError};
