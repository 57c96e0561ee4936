//! geist's testing engine: choice sequences, generation from schemas, shrinking,
//! the example database, targeting and health checks ([`health`]), and the
//! pieces stateful tests and recursive values are made of ([`pool`],
//! [`state_machine`], [`recursion`], [`repeat`]) and reproduction [`blob`]s.
//!
//! Pure logic: no sockets, no processes, no protocol. A test case is a
//! [`data::TestData`] recording typed [`choice`]s; [`generate`] turns Hegel
//! schemas into values through those choices; [`run`] drives generation and
//! shrinking over a test function supplied by the caller (in-process code, or a
//! server relaying to a remote client); [`pull`] runs the same loop for a
//! caller that pulls test cases one at a time (a C ABI).

pub mod blob;
pub mod charset;
pub mod choice;
pub mod data;
pub mod database;
pub mod generate;
pub mod health;
pub mod mutate;
pub mod nondeterminism;
pub mod pool;
pub mod pull;
pub mod random;
pub mod recursion;
pub mod repeat;
pub mod value;

pub use data::{Status, StopTest, TestData};
pub use value::Value;
pub mod run;
pub mod shrink;
pub mod state_machine;
pub mod target;
pub mod tree;
pub mod unicode;

pub use health::{Flakiness, HealthCheck, HealthCheckFailure, StopReason};
pub use nondeterminism::{Nondeterminism, Replays, Standing};
pub use run::{DatabaseHandle, Failure, Phases, RunResult, RunSettings, run, run_with_database};
