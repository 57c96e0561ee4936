//! The contract between geist's conformance packs and the programs that run them.
//!
//! A pack (the fixture runner, lazily IPC, GenVM Calldata and results, Filecoin
//! test vectors) is a codec plus a set of cases to check it on. What is the same
//! for every pack lives here: where the shared data is ([`data`]), and how input files are read and
//! directories walked with limits ([`input`]).

pub mod data;
pub mod input;
