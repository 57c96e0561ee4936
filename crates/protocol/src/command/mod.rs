//! Commands: what a client asks of a server, as types.
//!
//! Commands on the control stream ([`ControlCommand`]) start runs; commands
//! on a test case's stream ([`CaseCommand`]) draw values and conclude the
//! test case. Each is a CBOR map with a `command` name ([`CommandName`]) and
//! its fields. Decoding is as lenient as hegel-core where it costs nothing
//! (a missing `label` is 0, a negative size is 0) and otherwise refuses with
//! a [`CommandError`] that becomes the error reply, naming the field.

mod case;
mod control;
mod message;

pub use case::{CaseCommand, CaseStatus};
pub use control::{ControlCommand, DatabaseChoice, RunTest};
pub use message::{CommandError, CommandName};
