//! A driver for geist's vector runner that executes Filecoin VM test vectors
//! on ref-fvm (the `fvm` crate, 3.x line: network versions 18 to 20).
//!
//! It speaks the line-JSON protocol `geist-vectors-driver/1`
//! (`geist_vectors::driver`): for each request it loads the
//! vector's CAR and the builtin-actors bundles into one blockstore
//! ([`store`], [`bundle`]), builds a machine at the vector's epoch, network
//! version, base fee and circulating supply, with externs that replay the
//! randomness the vector recorded ([`externs`]) and a kernel that accepts the
//! proofs the chain accepted ([`kernel`]), applies each message
//! ([`execute`]) and answers with the receipts, the flushed state root and,
//! when asked, the execution traces ([`trace`]). [`serve`] is the protocol
//! loop; the program is `geist-fvm-driver`, and
//! `geist vectors run --driver fvm` finds and starts it.
//!
//! The crate is outside geist's workspace so that nobody else compiles
//! wasmtime and the proofs libraries ref-fvm brings.

pub mod bundle;
pub mod execute;
pub mod externs;
pub mod kernel;
pub mod serve;
pub mod store;
pub mod trace;
