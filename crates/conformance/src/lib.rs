//! Conformance packs for real wire formats.
//!
//! Each pack pairs a codec (one type model per protocol, its wire form a property
//! of serialization, tested byte for byte) with a runner for canonical fixtures or
//! test vectors, and with generators so that properties can be checked on inputs
//! nobody wrote down. Packs use geist's public client API, never engine internals.

pub mod calldata;
pub mod data;
pub mod fixtures;
pub mod genvm;
pub mod lazily;
pub mod vectors;
