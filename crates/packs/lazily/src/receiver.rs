//! The receiving end of a lazily IPC stream: a mirror of the sender's graph.
//!
//! The epoch contract makes lossy transports safe: a `Snapshot` replaces the
//! mirror; a `Delta` whose `base_epoch` equals the receiver's last epoch is
//! applied as an ordered fold, all or nothing, and advances the epoch; one whose
//! `base_epoch` is below it is a re-delivery and is ignored; one above it means
//! frames were lost, so it is not applied and the receiver asks for a resync
//! (`ResyncRequest {from_epoch}`), answered by the next `Snapshot`.
//!
//! The mirror holds what the wire can say: each node's type tag and last
//! published body, the edges and the roots. `Invalidate` publishes no value, so
//! it leaves the body as it was (a snapshot taken afterwards would carry the
//! same); it still requires the node to exist. An op that names a node the
//! mirror does not have, or adds one it already has, makes the whole delta
//! inconsistent: nothing is applied and a resync is requested.

use crate::message::{
    Delta, DeltaOp, EdgeSnapshot, IpcMessage, IpcValue, NodeId, NodeKey, NodeSnapshot, NodeState,
    ResyncRequest, Snapshot,
};
use std::collections::{BTreeMap, BTreeSet};

/// One node as the mirror knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorNode {
    /// Its type tag.
    pub type_tag: String,
    /// Its last published body.
    pub state: NodeState,
    /// Its keyed address, as the snapshot gave it (deltas do not change it).
    pub key: Option<NodeKey>,
}

/// The receiver's copy of the graph.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mirror {
    /// The nodes by id.
    pub nodes: BTreeMap<NodeId, MirrorNode>,
    /// The dependency edges.
    pub edges: BTreeSet<EdgeSnapshot>,
    /// The root nodes.
    pub roots: BTreeSet<NodeId>,
}

/// Why a snapshot or delta does not fit the mirror.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    /// A snapshot lists a node twice.
    #[error("snapshot lists node {node} twice (nodes[{index}])")]
    DuplicateNode {
        /// Position in `nodes`.
        index: usize,
        /// The node.
        node: NodeId,
    },
    /// A snapshot edge or root names a node it does not list.
    #[error("snapshot {place} names node {node}, which it does not list")]
    DanglingReference {
        /// Where (`edges[3]`, `roots[0]`).
        place: String,
        /// The node.
        node: NodeId,
    },
    /// A delta op names a node the mirror does not have.
    #[error("ops[{op_index}] ({op}) names node {node}, which the mirror does not have")]
    UnknownNode {
        /// Position in `ops`.
        op_index: usize,
        /// The op's variant.
        op: &'static str,
        /// The node.
        node: NodeId,
    },
    /// A `NodeAdd` names a node the mirror already has.
    #[error("ops[{op_index}] (NodeAdd) adds node {node}, which the mirror already has")]
    NodeExists {
        /// Position in `ops`.
        op_index: usize,
        /// The node.
        node: NodeId,
    },
}

impl Mirror {
    /// The mirror a snapshot describes.
    pub fn from_snapshot(snapshot: &Snapshot) -> Result<Mirror, MirrorError> {
        let mut mirror = Mirror::default();
        for (index, node) in snapshot.nodes.iter().enumerate() {
            let entry = MirrorNode {
                type_tag: node.type_tag.clone(),
                state: node.state.clone(),
                key: node.key.clone(),
            };
            if mirror.nodes.insert(node.node, entry).is_some() {
                return Err(MirrorError::DuplicateNode {
                    index,
                    node: node.node,
                });
            }
        }
        for (index, edge) in snapshot.edges.iter().enumerate() {
            for node in [edge.dependent, edge.dependency] {
                if !mirror.nodes.contains_key(&node) {
                    return Err(MirrorError::DanglingReference {
                        place: format!("edges[{index}]"),
                        node,
                    });
                }
            }
            mirror.edges.insert(*edge);
        }
        for (index, root) in snapshot.roots.iter().enumerate() {
            if !mirror.nodes.contains_key(root) {
                return Err(MirrorError::DanglingReference {
                    place: format!("roots[{index}]"),
                    node: *root,
                });
            }
            mirror.roots.insert(*root);
        }
        Ok(mirror)
    }

    /// A snapshot of this mirror at `epoch`, in canonical (sorted) order.
    pub fn to_snapshot(&self, epoch: u64) -> Snapshot {
        Snapshot {
            epoch,
            nodes: self
                .nodes
                .iter()
                .map(|(id, node)| NodeSnapshot {
                    node: *id,
                    type_tag: node.type_tag.clone(),
                    state: node.state.clone(),
                    key: node.key.clone(),
                })
                .collect(),
            edges: self.edges.iter().copied().collect(),
            roots: self.roots.iter().copied().collect(),
        }
    }

    /// Applies a delta's ops in order, all or nothing.
    pub fn apply(&mut self, delta: &Delta) -> Result<(), MirrorError> {
        let mut next = self.clone();
        for (op_index, op) in delta.ops.iter().enumerate() {
            next.apply_op(op_index, op)?;
        }
        *self = next;
        Ok(())
    }

    fn require(&self, op_index: usize, op: &DeltaOp, node: NodeId) -> Result<(), MirrorError> {
        if self.nodes.contains_key(&node) {
            Ok(())
        } else {
            Err(MirrorError::UnknownNode {
                op_index,
                op: op.kind(),
                node,
            })
        }
    }

    fn apply_op(&mut self, op_index: usize, op: &DeltaOp) -> Result<(), MirrorError> {
        match op {
            DeltaOp::CellSet { node, payload } | DeltaOp::SlotValue { node, payload } => {
                let Some(entry) = self.nodes.get_mut(node) else {
                    return Err(MirrorError::UnknownNode {
                        op_index,
                        op: op.kind(),
                        node: *node,
                    });
                };
                entry.state = match payload {
                    IpcValue::Inline(bytes) => NodeState::Payload(bytes.clone()),
                    IpcValue::SharedBlob(blob) => NodeState::SharedBlob(*blob),
                };
            }
            DeltaOp::Invalidate { node } => self.require(op_index, op, *node)?,
            DeltaOp::NodeAdd {
                node,
                type_tag,
                state,
            } => {
                if self.nodes.contains_key(node) {
                    return Err(MirrorError::NodeExists {
                        op_index,
                        node: *node,
                    });
                }
                self.nodes.insert(
                    *node,
                    MirrorNode {
                        type_tag: type_tag.clone(),
                        state: state.clone(),
                        key: None,
                    },
                );
            }
            DeltaOp::NodeRemove { node } => {
                self.require(op_index, op, *node)?;
                self.nodes.remove(node);
                self.roots.remove(node);
                self.edges
                    .retain(|edge| edge.dependent != *node && edge.dependency != *node);
            }
            DeltaOp::EdgeAdd {
                dependent,
                dependency,
            }
            | DeltaOp::EdgeRemove {
                dependent,
                dependency,
            } => {
                self.require(op_index, op, *dependent)?;
                self.require(op_index, op, *dependency)?;
                let edge = EdgeSnapshot {
                    dependent: *dependent,
                    dependency: *dependency,
                };
                if matches!(op, DeltaOp::EdgeAdd { .. }) {
                    self.edges.insert(edge);
                } else {
                    self.edges.remove(&edge);
                }
            }
        }
        Ok(())
    }
}

/// Why a receiver asked for a resync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResyncReason {
    /// A delta arrived before any snapshot.
    NoSnapshot,
    /// Frames were lost: the delta starts after the receiver's epoch.
    Gap {
        /// The receiver's epoch.
        last_epoch: u64,
        /// The delta's base epoch.
        base_epoch: u64,
    },
    /// The delta does not advance the epoch (`epoch <= base_epoch`).
    BackwardEpoch {
        /// The delta's base epoch.
        base_epoch: u64,
        /// The delta's epoch.
        epoch: u64,
    },
    /// The delta does not fit the mirror.
    Inconsistent(MirrorError),
}

/// Why a receiver ignored a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoreReason {
    /// The delta was applied already.
    Redelivery {
        /// The receiver's epoch.
        last_epoch: u64,
        /// The delta's base epoch.
        base_epoch: u64,
    },
    /// A resync is outstanding; deltas wait for its snapshot.
    AwaitingSnapshot,
    /// The message travels the other way (a `ResyncRequest`).
    NotForReceiver,
}

/// What a receiver did with a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receipt {
    /// A snapshot replaced the mirror.
    Replaced {
        /// The new epoch.
        epoch: u64,
    },
    /// A delta was applied.
    Applied {
        /// The new epoch.
        epoch: u64,
    },
    /// The message changed nothing.
    Ignored(IgnoreReason),
    /// The delta was not applied; send this request to the sender.
    ResyncRequested {
        /// The request to send.
        request: ResyncRequest,
        /// Why.
        reason: ResyncReason,
    },
    /// An invalid snapshot was refused; the receiver keeps its state.
    Rejected(MirrorError),
}

/// A receiver: the mirror, its epoch, and any outstanding resync request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Receiver {
    mirror: Mirror,
    last_epoch: Option<u64>,
    awaiting: Option<ResyncRequest>,
}

impl Receiver {
    /// A receiver that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A receiver synchronised to an empty graph at `epoch`.
    pub fn at_epoch(epoch: u64) -> Self {
        Self {
            mirror: Mirror::default(),
            last_epoch: Some(epoch),
            awaiting: None,
        }
    }

    /// The mirror.
    pub fn mirror(&self) -> &Mirror {
        &self.mirror
    }

    /// The epoch of the last snapshot or delta applied.
    pub fn last_epoch(&self) -> Option<u64> {
        self.last_epoch
    }

    /// The resync request waiting for its snapshot, if any.
    pub fn awaiting_resync(&self) -> Option<ResyncRequest> {
        self.awaiting
    }

    /// Handles one incoming message.
    pub fn receive(&mut self, message: &IpcMessage) -> Receipt {
        match message {
            IpcMessage::Snapshot(snapshot) => match Mirror::from_snapshot(snapshot) {
                Ok(mirror) => {
                    self.mirror = mirror;
                    self.last_epoch = Some(snapshot.epoch);
                    self.awaiting = None;
                    Receipt::Replaced {
                        epoch: snapshot.epoch,
                    }
                }
                Err(error) => Receipt::Rejected(error),
            },
            IpcMessage::Delta(delta) => self.receive_delta(delta),
            IpcMessage::ResyncRequest(_) => Receipt::Ignored(IgnoreReason::NotForReceiver),
        }
    }

    fn request_resync(&mut self, reason: ResyncReason) -> Receipt {
        let request = ResyncRequest {
            from_epoch: self.last_epoch.unwrap_or(0),
        };
        self.awaiting = Some(request);
        Receipt::ResyncRequested { request, reason }
    }

    fn receive_delta(&mut self, delta: &Delta) -> Receipt {
        let Some(last_epoch) = self.last_epoch else {
            if self.awaiting.is_some() {
                return Receipt::Ignored(IgnoreReason::AwaitingSnapshot);
            }
            return self.request_resync(ResyncReason::NoSnapshot);
        };
        if delta.base_epoch < last_epoch {
            return Receipt::Ignored(IgnoreReason::Redelivery {
                last_epoch,
                base_epoch: delta.base_epoch,
            });
        }
        if self.awaiting.is_some() {
            return Receipt::Ignored(IgnoreReason::AwaitingSnapshot);
        }
        if delta.base_epoch > last_epoch {
            return self.request_resync(ResyncReason::Gap {
                last_epoch,
                base_epoch: delta.base_epoch,
            });
        }
        if delta.epoch <= delta.base_epoch {
            return self.request_resync(ResyncReason::BackwardEpoch {
                base_epoch: delta.base_epoch,
                epoch: delta.epoch,
            });
        }
        match self.mirror.apply(delta) {
            Ok(()) => {
                self.last_epoch = Some(delta.epoch);
                Receipt::Applied { epoch: delta.epoch }
            }
            Err(error) => self.request_resync(ResyncReason::Inconsistent(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> NodeId {
        NodeId::new(n).unwrap()
    }

    fn delta(base_epoch: u64, ops: Vec<DeltaOp>) -> IpcMessage {
        IpcMessage::Delta(Delta {
            base_epoch,
            epoch: base_epoch + 1,
            ops,
        })
    }

    #[test]
    fn epochs_gaps_and_redelivery() {
        let mut receiver = Receiver::new();
        assert!(matches!(
            receiver.receive(&delta(0, vec![])),
            Receipt::ResyncRequested {
                reason: ResyncReason::NoSnapshot,
                ..
            }
        ));
        let snapshot = Snapshot {
            epoch: 10,
            nodes: vec![NodeSnapshot {
                node: id(1),
                type_tag: "i32".into(),
                state: NodeState::Opaque,
                key: None,
            }],
            edges: vec![],
            roots: vec![id(1)],
        };
        assert_eq!(
            receiver.receive(&IpcMessage::Snapshot(snapshot.clone())),
            Receipt::Replaced { epoch: 10 }
        );
        let set = DeltaOp::CellSet {
            node: id(1),
            payload: IpcValue::Inline(vec![5]),
        };
        assert_eq!(
            receiver.receive(&delta(10, vec![set.clone()])),
            Receipt::Applied { epoch: 11 }
        );
        assert_eq!(
            receiver.mirror().nodes[&id(1)].state,
            NodeState::Payload(vec![5])
        );
        assert!(matches!(
            receiver.receive(&delta(10, vec![set])),
            Receipt::Ignored(IgnoreReason::Redelivery { .. })
        ));
        let receipt = receiver.receive(&delta(12, vec![]));
        assert_eq!(
            receipt,
            Receipt::ResyncRequested {
                request: ResyncRequest { from_epoch: 11 },
                reason: ResyncReason::Gap {
                    last_epoch: 11,
                    base_epoch: 12
                }
            }
        );
        assert_eq!(
            receiver.receive(&delta(11, vec![])),
            Receipt::Ignored(IgnoreReason::AwaitingSnapshot)
        );
        assert_eq!(
            receiver.receive(&IpcMessage::Snapshot(Snapshot {
                epoch: 13,
                ..snapshot
            })),
            Receipt::Replaced { epoch: 13 }
        );
        assert_eq!(receiver.awaiting_resync(), None);
    }

    #[test]
    fn inconsistent_delta_changes_nothing() {
        let mut receiver = Receiver::at_epoch(1);
        let add = DeltaOp::NodeAdd {
            node: id(2),
            type_tag: "t".into(),
            state: NodeState::Payload(vec![1]),
        };
        let remove_unknown = DeltaOp::NodeRemove { node: id(3) };
        let before = receiver.mirror().clone();
        let receipt = receiver.receive(&delta(1, vec![add, remove_unknown]));
        assert!(matches!(
            receipt,
            Receipt::ResyncRequested {
                reason: ResyncReason::Inconsistent(MirrorError::UnknownNode { op_index: 1, .. }),
                ..
            }
        ));
        assert_eq!(receiver.mirror(), &before);
        assert_eq!(receiver.last_epoch(), Some(1));
    }

    #[test]
    fn node_remove_drops_edges_and_roots() {
        let mut receiver = Receiver::at_epoch(0);
        let ops = vec![
            DeltaOp::NodeAdd {
                node: id(1),
                type_tag: "a".into(),
                state: NodeState::Opaque,
            },
            DeltaOp::NodeAdd {
                node: id(2),
                type_tag: "b".into(),
                state: NodeState::Opaque,
            },
            DeltaOp::EdgeAdd {
                dependent: id(2),
                dependency: id(1),
            },
        ];
        assert_eq!(
            receiver.receive(&delta(0, ops)),
            Receipt::Applied { epoch: 1 }
        );
        assert_eq!(receiver.mirror().edges.len(), 1);
        assert_eq!(
            receiver.receive(&delta(1, vec![DeltaOp::NodeRemove { node: id(1) }])),
            Receipt::Applied { epoch: 2 }
        );
        assert!(receiver.mirror().edges.is_empty());
        let snapshot = receiver.mirror().to_snapshot(2);
        assert_eq!(
            Mirror::from_snapshot(&snapshot).unwrap(),
            *receiver.mirror()
        );
    }
}
