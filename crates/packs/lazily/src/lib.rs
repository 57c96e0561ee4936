//! The lazily IPC pack: the wire messages of lazily's cross-process protocol.
//!
//! lazily (a reactive-signals library with bindings in several languages)
//! mirrors a dependency graph across processes with two messages: a full
//! `Snapshot` and incremental `Delta`s, tied together by epochs, plus a
//! `ResyncRequest` going back when frames were lost. Large values travel out of
//! band in a shared-blob arena. This module holds the type model with its exact
//! wire form ([`message`]), the arena host ([`arena`]), the receiver that keeps
//! a mirror of the graph ([`receiver`]), and the fixture pack ([`pack`]).

pub mod arena;
pub mod generate;
pub mod message;
pub mod mutate;
pub mod pack;
pub mod receiver;

pub use message::{
    BlobBackend, DecodeError, Delta, DeltaOp, EdgeSnapshot, IpcMessage, IpcValue, NodeId, NodeKey,
    NodeSnapshot, NodeState, ResyncRequest, ShmBlobRef, Snapshot, decode, encode,
};
pub use pack::LazilyPack;
pub use receiver::{Mirror, Receipt, Receiver};
