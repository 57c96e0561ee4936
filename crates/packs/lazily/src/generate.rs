//! Generators for lazily IPC messages and for consistent message streams.
//!
//! Generators are written once against [`Choices`], the handful of primitive
//! draws they need. geist's `TestCase` drives them in property tests (so a
//! failure shrinks to a minimal message); [`SeededChoices`] drives them where a
//! plain reproducible stream is wanted, such as the benchmark, whose figure
//! must measure the codec rather than the engine.
//!
//! Messages are drawn to reach the corners of the wire form: node ids up to
//! exactly 2^53 - 1, epochs and checksums across all of `u64`, empty and long
//! byte strings, and type tags with quotes, backslashes, control characters
//! and characters outside the Basic Multilingual Plane.

use crate::message::{
    BlobBackend, Delta, DeltaOp, EdgeSnapshot, IpcMessage, IpcValue, MAX_NODE_ID, NodeId,
    NodeSnapshot, NodeState, ResyncRequest, ShmBlobRef, Snapshot,
};
use crate::receiver::Mirror;

/// The primitive draws message generators are built from.
pub trait Choices {
    /// An integer in `min..=max`.
    fn integer(&mut self, min: u64, max: u64) -> u64;

    /// A byte string of at most `max_len` bytes.
    fn bytes(&mut self, max_len: usize) -> Vec<u8>;

    /// A string of at most `max_len` characters.
    fn text(&mut self, max_len: usize) -> String;

    /// A coin flip.
    fn boolean(&mut self) -> bool {
        self.integer(0, 1) == 1
    }

    /// An index below `n` (`n` > 0).
    fn index(&mut self, n: usize) -> usize {
        self.integer(0, n.saturating_sub(1) as u64) as usize
    }
}

/// A reproducible stream of choices from a seed (SplitMix64).
#[derive(Debug, Clone)]
pub struct SeededChoices {
    state: u64,
}

impl SeededChoices {
    /// A stream for `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Characters that stress JSON string escaping, mixed into generated text.
const AWKWARD_CHARS: [char; 12] = [
    '"', '\\', '/', '\n', '\t', '\u{0}', '\u{1f}', '\u{7f}', 'é', '\u{2028}', '\u{FFFF}', '😀',
];

impl Choices for SeededChoices {
    fn integer(&mut self, min: u64, max: u64) -> u64 {
        if min >= max {
            return min;
        }
        let span = max - min;
        if span == u64::MAX {
            return self.next();
        }
        min + self.next() % (span + 1)
    }

    fn bytes(&mut self, max_len: usize) -> Vec<u8> {
        let len = self.index(max_len + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }

    fn text(&mut self, max_len: usize) -> String {
        let len = self.index(max_len + 1);
        (0..len)
            .map(|_| match self.integer(0, 9) {
                0..=5 => char::from(b'a' + self.integer(0, 25) as u8),
                6 => AWKWARD_CHARS[self.index(AWKWARD_CHARS.len())],
                7 => char::from_u32(self.integer(0x20, 0x7e) as u32).unwrap_or('?'),
                8 => char::from_u32(self.integer(0xa0, 0xd7ff) as u32).unwrap_or('?'),
                _ => char::from_u32(self.integer(0x1_0000, 0x10_ffff) as u32).unwrap_or('?'),
            })
            .collect()
    }
}

/// A `u64` biased toward the edges: small values, powers of two near 2^53, and `u64::MAX`.
pub fn draw_u64(c: &mut impl Choices) -> u64 {
    match c.integer(0, 7) {
        0..=3 => c.integer(0, 64),
        4 => c.integer(0, u64::MAX),
        5 => [0, 1, MAX_NODE_ID, MAX_NODE_ID + 1, u64::MAX - 1, u64::MAX][c.index(6)],
        _ => c.integer(0, u32::MAX as u64),
    }
}

/// A node id: mostly small (so ids repeat and graphs connect), sometimes up to exactly 2^53 - 1.
pub fn draw_node_id(c: &mut impl Choices) -> NodeId {
    let value = match c.integer(0, 9) {
        0 => MAX_NODE_ID - c.integer(0, 2),
        1 => c.integer(0, MAX_NODE_ID),
        _ => c.integer(0, 16),
    };
    NodeId::saturating(value)
}

/// A blob descriptor, with any backend.
pub fn draw_blob(c: &mut impl Choices) -> ShmBlobRef {
    ShmBlobRef {
        offset: draw_u64(c),
        len: draw_u64(c),
        generation: draw_u64(c),
        epoch: draw_u64(c),
        checksum: draw_u64(c),
        backend: [BlobBackend::Shm, BlobBackend::Arrow, BlobBackend::InProcess][c.index(3)],
    }
}

/// A type tag.
pub fn draw_type_tag(c: &mut impl Choices) -> String {
    match c.integer(0, 3) {
        0 => c.text(12),
        _ => ["i32", "u64", "f64", "text/plain", "opaque-type", ""][c.index(6)].to_string(),
    }
}

/// A node body.
pub fn draw_node_state(c: &mut impl Choices) -> NodeState {
    match c.integer(0, 2) {
        0 => NodeState::Payload(c.bytes(16)),
        1 => NodeState::SharedBlob(draw_blob(c)),
        _ => NodeState::Opaque,
    }
}

/// A delta op value.
pub fn draw_value(c: &mut impl Choices) -> IpcValue {
    if c.boolean() {
        IpcValue::Inline(c.bytes(16))
    } else {
        IpcValue::SharedBlob(draw_blob(c))
    }
}

/// Any delta op (not necessarily consistent with a graph).
pub fn draw_op(c: &mut impl Choices) -> DeltaOp {
    match c.integer(0, 6) {
        0 => DeltaOp::CellSet {
            node: draw_node_id(c),
            payload: draw_value(c),
        },
        1 => DeltaOp::SlotValue {
            node: draw_node_id(c),
            payload: draw_value(c),
        },
        2 => DeltaOp::Invalidate {
            node: draw_node_id(c),
        },
        3 => DeltaOp::NodeAdd {
            node: draw_node_id(c),
            type_tag: draw_type_tag(c),
            state: draw_node_state(c),
        },
        4 => DeltaOp::NodeRemove {
            node: draw_node_id(c),
        },
        5 => DeltaOp::EdgeAdd {
            dependent: draw_node_id(c),
            dependency: draw_node_id(c),
        },
        _ => DeltaOp::EdgeRemove {
            dependent: draw_node_id(c),
            dependency: draw_node_id(c),
        },
    }
}

fn draw_list<T, C: Choices>(c: &mut C, max: usize, mut element: impl FnMut(&mut C) -> T) -> Vec<T> {
    let len = c.index(max + 1);
    (0..len).map(|_| element(c)).collect()
}

/// Any snapshot (not necessarily self-consistent).
pub fn draw_snapshot(c: &mut impl Choices) -> Snapshot {
    Snapshot {
        epoch: draw_u64(c),
        nodes: draw_list(c, 5, |c| NodeSnapshot {
            node: draw_node_id(c),
            type_tag: draw_type_tag(c),
            state: draw_node_state(c),
            key: None,
        }),
        edges: draw_list(c, 4, |c| EdgeSnapshot {
            dependent: draw_node_id(c),
            dependency: draw_node_id(c),
        }),
        roots: draw_list(c, 3, draw_node_id),
    }
}

/// Any delta (not necessarily consistent with a graph).
pub fn draw_delta(c: &mut impl Choices) -> Delta {
    let base_epoch = draw_u64(c);
    let epoch = if c.integer(0, 3) > 0 {
        base_epoch.wrapping_add(1)
    } else {
        draw_u64(c)
    };
    Delta {
        base_epoch,
        epoch,
        ops: draw_list(c, 8, draw_op),
    }
}

/// Any message.
pub fn draw_message(c: &mut impl Choices) -> IpcMessage {
    match c.integer(0, 4) {
        0 | 1 => IpcMessage::Snapshot(draw_snapshot(c)),
        2 | 3 => IpcMessage::Delta(draw_delta(c)),
        _ => IpcMessage::ResyncRequest(ResyncRequest {
            from_epoch: draw_u64(c),
        }),
    }
}

/// A self-consistent graph: unique node ids, edges and roots between listed nodes.
pub fn draw_graph(c: &mut impl Choices) -> Mirror {
    let mut graph = Mirror::default();
    let count = c.integer(0, 6);
    for _ in 0..count {
        let id = NodeId::saturating(c.integer(0, 24));
        graph
            .nodes
            .entry(id)
            .or_insert_with(|| crate::receiver::MirrorNode {
                type_tag: draw_type_tag(c),
                state: draw_node_state(c),
                key: None,
            });
    }
    let ids: Vec<NodeId> = graph.nodes.keys().copied().collect();
    if !ids.is_empty() {
        for _ in 0..c.integer(0, 5) {
            graph.edges.insert(EdgeSnapshot {
                dependent: ids[c.index(ids.len())],
                dependency: ids[c.index(ids.len())],
            });
        }
        for _ in 0..c.integer(0, 3) {
            graph.roots.insert(ids[c.index(ids.len())]);
        }
    }
    graph
}

/// An op that applies to `graph` (names only nodes it has, adds only nodes it lacks).
pub fn draw_consistent_op(c: &mut impl Choices, graph: &Mirror) -> DeltaOp {
    let ids: Vec<NodeId> = graph.nodes.keys().copied().collect();
    // A drawn id if it is free, else one past the largest: always terminates.
    let fresh = |c: &mut _| {
        let id = NodeId::saturating(Choices::integer(c, 0, 40));
        if graph.nodes.contains_key(&id) {
            let largest = graph.nodes.keys().next_back().map_or(0, |id| id.get());
            NodeId::saturating(largest + 1)
        } else {
            id
        }
    };
    if ids.is_empty() {
        return DeltaOp::NodeAdd {
            node: fresh(c),
            type_tag: draw_type_tag(c),
            state: draw_node_state(c),
        };
    }
    let pick = |c: &mut _| ids[Choices::index(c, ids.len())];
    match c.integer(0, 6) {
        0 => DeltaOp::CellSet {
            node: pick(c),
            payload: draw_value(c),
        },
        1 => DeltaOp::SlotValue {
            node: pick(c),
            payload: draw_value(c),
        },
        2 => DeltaOp::Invalidate { node: pick(c) },
        3 => DeltaOp::NodeAdd {
            node: fresh(c),
            type_tag: draw_type_tag(c),
            state: draw_node_state(c),
        },
        4 => DeltaOp::NodeRemove { node: pick(c) },
        5 => DeltaOp::EdgeAdd {
            dependent: pick(c),
            dependency: pick(c),
        },
        _ => match graph.edges.iter().nth(c.index(graph.edges.len().max(1))) {
            Some(edge) => DeltaOp::EdgeRemove {
                dependent: edge.dependent,
                dependency: edge.dependency,
            },
            None => DeltaOp::EdgeRemove {
                dependent: pick(c),
                dependency: pick(c),
            },
        },
    }
}

/// A sender's stream: an initial snapshot and consistent sequential deltas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The snapshot the receiver starts from.
    pub snapshot: Snapshot,
    /// The deltas that follow, each applying to the graph the previous ones left.
    pub deltas: Vec<Delta>,
    /// The sender's graph after each delta (`graphs[i]` after `deltas[i]`).
    pub graphs: Vec<Mirror>,
}

/// A consistent session of up to `max_deltas` deltas.
pub fn draw_session(c: &mut impl Choices, max_deltas: usize) -> Session {
    let mut graph = draw_graph(c);
    let start = c.integer(0, 1_000);
    let snapshot = graph.to_snapshot(start);
    let mut deltas = Vec::new();
    let mut graphs = Vec::new();
    for step in 0..c.index(max_deltas + 1) as u64 {
        let mut ops = Vec::new();
        let mut next = graph.clone();
        for _ in 0..c.integer(0, 4) {
            let op = draw_consistent_op(c, &next);
            let single = Delta {
                base_epoch: 0,
                epoch: 1,
                ops: vec![op.clone()],
            };
            if next.apply(&single).is_ok() {
                ops.push(op);
            }
        }
        let delta = Delta {
            base_epoch: start + step,
            epoch: start + step + 1,
            ops,
        };
        graph = next;
        deltas.push(delta);
        graphs.push(graph.clone());
    }
    Session {
        snapshot,
        deltas,
        graphs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{decode, encode};

    #[test]
    fn seeded_messages_round_trip() {
        let mut c = SeededChoices::new(7);
        for _ in 0..500 {
            let message = draw_message(&mut c);
            let bytes = encode(&message);
            assert_eq!(
                decode(&bytes).as_ref(),
                Ok(&message),
                "{}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    #[test]
    fn sessions_are_consistent() {
        let mut c = SeededChoices::new(3);
        for _ in 0..200 {
            let session = draw_session(&mut c, 6);
            let mut mirror = Mirror::from_snapshot(&session.snapshot).unwrap();
            for (delta, graph) in session.deltas.iter().zip(&session.graphs) {
                mirror.apply(delta).unwrap();
                assert_eq!(&mirror, graph);
            }
        }
    }
}
