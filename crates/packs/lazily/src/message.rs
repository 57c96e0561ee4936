//! The lazily IPC messages, with their exact JSON wire form.
//!
//! The wire form is a property of serialization (serde with `serde_json`):
//! enums are externally tagged (`{"Delta": {...}}`, `"Opaque"`), byte strings
//! are arrays of integers (not base64), struct fields appear in declaration
//! order, and a blob's `backend` is omitted when it is the default `shm`.
//! Decoding is strict: unknown fields and variants, missing fields, bytes
//! outside 0..=255 and node ids beyond 2^53 - 1 are rejected, so anything that
//! decodes re-encodes to a canonical form.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest node id every binding represents exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_NODE_ID: u64 = geist_fixtures::json::MAX_SAFE_INTEGER;

/// A wire-stable node identifier, at most [`MAX_NODE_ID`] so that JavaScript peers read it exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct NodeId(u64);

impl NodeId {
    /// A node id, if `value` is at most [`MAX_NODE_ID`].
    pub fn new(value: u64) -> Option<NodeId> {
        (value <= MAX_NODE_ID).then_some(NodeId(value))
    }

    /// The node id `value`, or [`MAX_NODE_ID`] when `value` is beyond it.
    pub fn saturating(value: u64) -> NodeId {
        NodeId(value.min(MAX_NODE_ID))
    }

    /// The id as a number.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// A node id beyond [`MAX_NODE_ID`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "node id {0} is beyond 2^53 - 1 (9007199254740991): a JSON reader backed by doubles cannot represent it exactly"
)]
pub struct NodeIdOutOfRange(pub u64);

impl TryFrom<u64> for NodeId {
    type Error = NodeIdOutOfRange;

    fn try_from(value: u64) -> Result<Self, Self::Error> {
        NodeId::new(value).ok_or(NodeIdOutOfRange(value))
    }
}

impl From<NodeId> for u64 {
    fn from(id: NodeId) -> u64 {
        id.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One IPC frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum IpcMessage {
    /// A full graph image, sent on connect and in answer to a resync request.
    Snapshot(Snapshot),
    /// An incremental change set from `base_epoch` to `epoch`.
    Delta(Delta),
    /// Receiver to sender: a gap was detected, send a snapshot at or after `from_epoch`.
    ResyncRequest(ResyncRequest),
}

impl IpcMessage {
    /// The variant name, which is also the fixture kind.
    pub fn kind(&self) -> &'static str {
        match self {
            IpcMessage::Snapshot(_) => "Snapshot",
            IpcMessage::Delta(_) => "Delta",
            IpcMessage::ResyncRequest(_) => "ResyncRequest",
        }
    }
}

/// A full graph image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// The epoch this image is at.
    pub epoch: u64,
    /// The visible nodes.
    pub nodes: Vec<NodeSnapshot>,
    /// The dependency edges.
    pub edges: Vec<EdgeSnapshot>,
    /// The root (source) nodes.
    pub roots: Vec<NodeId>,
}

/// One node of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSnapshot {
    /// Its id.
    pub node: NodeId,
    /// Producer-defined tag saying how to decode `state`.
    pub type_tag: String,
    /// Its value.
    pub state: NodeState,
    /// Its wire-stable keyed address (a collection entry's path), if it has one;
    /// absent and `null` both mean none, and none is omitted on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<NodeKey>,
}

/// The longest [`NodeKey`] in bytes (lazily's `NODE_KEY_MAX_LEN`).
pub const NODE_KEY_MAX_LEN: usize = 1024;
/// The most `/`-separated segments in a [`NodeKey`] (lazily's `NODE_KEY_MAX_SEGMENTS`).
pub const NODE_KEY_MAX_SEGMENTS: usize = 32;

/// A node's keyed address: a `/`-joined path (`scores/alice`) of at most
/// [`NODE_KEY_MAX_LEN`] bytes and [`NODE_KEY_MAX_SEGMENTS`] non-empty segments.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct NodeKey(String);

impl NodeKey {
    /// The path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for NodeKey {
    type Error = String;

    fn try_from(path: String) -> Result<NodeKey, String> {
        if path.is_empty() {
            return Err("node key path is empty".to_string());
        }
        if path.len() > NODE_KEY_MAX_LEN {
            return Err(format!(
                "node key path is {} bytes, exceeds {NODE_KEY_MAX_LEN}",
                path.len()
            ));
        }
        let segments = path.split('/').count();
        if segments > NODE_KEY_MAX_SEGMENTS {
            return Err(format!(
                "node key has {segments} segments, exceeds {NODE_KEY_MAX_SEGMENTS}"
            ));
        }
        if path.split('/').any(str::is_empty) {
            return Err("node key path has an empty segment".to_string());
        }
        Ok(NodeKey(path))
    }
}

impl From<NodeKey> for String {
    fn from(key: NodeKey) -> String {
        key.0
    }
}

/// A dependency edge: `dependent` reads `dependency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeSnapshot {
    /// The node that reads.
    pub dependent: NodeId,
    /// The node read.
    pub dependency: NodeId,
}

/// A node's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeState {
    /// Serialized value bytes.
    Payload(Vec<u8>),
    /// A value stored in a blob backend.
    SharedBlob(ShmBlobRef),
    /// A visible node whose value cannot be serialized.
    Opaque,
}

/// A value carried by a delta op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum IpcValue {
    /// Serialized value bytes, inline.
    Inline(Vec<u8>),
    /// A value stored in a blob backend.
    SharedBlob(ShmBlobRef),
}

/// Where a blob's bytes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum BlobBackend {
    /// POSIX shared memory: the default, omitted on the wire.
    #[default]
    #[serde(rename = "shm")]
    Shm,
    /// An Apache Arrow buffer.
    #[serde(rename = "arrow")]
    Arrow,
    /// An arena in the same process.
    #[serde(rename = "in_process")]
    InProcess,
}

impl BlobBackend {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            BlobBackend::Shm => "shm",
            BlobBackend::Arrow => "arrow",
            BlobBackend::InProcess => "in_process",
        }
    }

    fn is_default(&self) -> bool {
        *self == BlobBackend::Shm
    }
}

/// A descriptor of a payload held in a blob backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShmBlobRef {
    /// Offset of the blob's header from the start of the arena.
    pub offset: u64,
    /// Payload length, header excluded.
    pub len: u64,
    /// Per-write generation, to reject stale descriptors after wraparound.
    pub generation: u64,
    /// The epoch of the message that published the blob.
    pub epoch: u64,
    /// FNV-1a-64 of the payload.
    pub checksum: u64,
    /// The backend; omitted on the wire when it is the default `shm`, and an
    /// explicit `null` reads as `shm` too (as lazily reads it).
    #[serde(
        default,
        deserialize_with = "backend_null_is_shm",
        skip_serializing_if = "BlobBackend::is_default"
    )]
    pub backend: BlobBackend,
}

fn backend_null_is_shm<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BlobBackend, D::Error> {
    Ok(Option::<BlobBackend>::deserialize(deserializer)?.unwrap_or_default())
}

/// An incremental change set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delta {
    /// The epoch this delta applies to: must equal the receiver's last epoch.
    pub base_epoch: u64,
    /// The epoch after applying it.
    pub epoch: u64,
    /// The operations, applied in order.
    pub ops: Vec<DeltaOp>,
}

impl Delta {
    /// Whether this is the ordinary single-step delta (`epoch == base_epoch + 1`).
    pub fn is_sequential(&self) -> bool {
        self.base_epoch.checked_add(1) == Some(self.epoch)
    }
}

/// One graph mutation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum DeltaOp {
    /// A source cell was set.
    CellSet {
        /// The cell.
        node: NodeId,
        /// Its new value.
        payload: IpcValue,
    },
    /// A recomputed slot published a value.
    SlotValue {
        /// The slot.
        node: NodeId,
        /// Its value.
        payload: IpcValue,
    },
    /// A node was dirtied without a value.
    Invalidate {
        /// The node.
        node: NodeId,
    },
    /// A node became visible.
    NodeAdd {
        /// The new node.
        node: NodeId,
        /// Its type tag.
        type_tag: String,
        /// Its initial body.
        state: NodeState,
    },
    /// A node was removed.
    NodeRemove {
        /// The node.
        node: NodeId,
    },
    /// A dependency edge was added.
    EdgeAdd {
        /// The node that reads.
        dependent: NodeId,
        /// The node read.
        dependency: NodeId,
    },
    /// A dependency edge was removed.
    EdgeRemove {
        /// The node that reads.
        dependent: NodeId,
        /// The node read.
        dependency: NodeId,
    },
}

/// The names of the [`DeltaOp`] variants, in declaration order.
pub const DELTA_OP_VARIANTS: [&str; 7] = [
    "CellSet",
    "SlotValue",
    "Invalidate",
    "NodeAdd",
    "NodeRemove",
    "EdgeAdd",
    "EdgeRemove",
];

impl DeltaOp {
    /// The variant name.
    pub fn kind(&self) -> &'static str {
        match self {
            DeltaOp::CellSet { .. } => "CellSet",
            DeltaOp::SlotValue { .. } => "SlotValue",
            DeltaOp::Invalidate { .. } => "Invalidate",
            DeltaOp::NodeAdd { .. } => "NodeAdd",
            DeltaOp::NodeRemove { .. } => "NodeRemove",
            DeltaOp::EdgeAdd { .. } => "EdgeAdd",
            DeltaOp::EdgeRemove { .. } => "EdgeRemove",
        }
    }

    /// The value the op carries, for `CellSet` and `SlotValue`.
    pub fn payload(&self) -> Option<&IpcValue> {
        match self {
            DeltaOp::CellSet { payload, .. } | DeltaOp::SlotValue { payload, .. } => Some(payload),
            _ => None,
        }
    }
}

/// A receiver's request for a snapshot after it detected a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResyncRequest {
    /// The receiver's last epoch; the answer is a snapshot at or after it.
    pub from_epoch: u64,
}

/// Why bytes did not decode as an [`IpcMessage`]: the JSON path and the rule broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DecodeError {
    /// Where in the message (`$.Delta.ops[2].CellSet.node`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Encodes a message in its compact JSON wire form.
pub fn encode(message: &IpcMessage) -> Vec<u8> {
    // Serializing these types cannot fail: no maps with non-string keys, no
    // custom serializers that error.
    serde_json::to_vec(message).unwrap_or_default()
}

/// Decodes a message from JSON bytes, strictly.
pub fn decode(bytes: &[u8]) -> Result<IpcMessage, DecodeError> {
    geist_fixtures::pack::decode_bytes(&geist_fixtures::JsonPath::root(), bytes).map_err(
        |problem| DecodeError {
            path: problem.path.to_string(),
            message: problem.message,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_forms() {
        let message = IpcMessage::Snapshot(Snapshot {
            epoch: 1,
            nodes: vec![NodeSnapshot {
                node: NodeId(1),
                type_tag: "i32".into(),
                state: NodeState::Opaque,
                key: None,
            }],
            edges: vec![],
            roots: vec![NodeId(1)],
        });
        assert_eq!(
            encode(&message),
            br#"{"Snapshot":{"epoch":1,"nodes":[{"node":1,"type_tag":"i32","state":"Opaque"}],"edges":[],"roots":[1]}}"#
        );
        let blob = ShmBlobRef {
            offset: 0,
            len: 1,
            generation: 1,
            epoch: 1,
            checksum: u64::MAX,
            backend: BlobBackend::InProcess,
        };
        assert_eq!(
            serde_json::to_string(&blob).unwrap(),
            r#"{"offset":0,"len":1,"generation":1,"epoch":1,"checksum":18446744073709551615,"backend":"in_process"}"#
        );
    }

    #[test]
    fn strict_decoding() {
        let node_too_big = br#"{"Delta":{"base_epoch":1,"epoch":2,"ops":[{"Invalidate":{"node":9007199254740992}}]}}"#;
        let error = decode(node_too_big).unwrap_err();
        assert_eq!(error.path, "$.Delta.ops[0].Invalidate.node");
        assert!(error.message.contains("2^53"), "{error}");
        assert!(decode(br#"{"Delta":{"base_epoch":1,"epoch":2,"ops":[{"Invalidate":{"node":9007199254740991}}]}}"#).is_ok());

        for bad in [
            &br#"{"Delta":{"base_epoch":1,"epoch":2,"ops":[],"x":1}}"#[..],
            br#"{"Delta":{"base_epoch":1,"epoch":2}}"#,
            br#"{"Nope":{}}"#,
            br#"{"Snapshot":{"epoch":1,"nodes":[{"node":1,"type_tag":"t","state":{"Payload":[256]}}],"edges":[],"roots":[]}}"#,
            br#"{"Snapshot":{"epoch":1,"nodes":[{"node":1,"type_tag":"t","state":{"SharedBlob":{"offset":0,"len":0,"generation":0,"epoch":0,"checksum":0,"backend":"disk"}}}],"edges":[],"roots":[]}}"#,
            br#"{"ResyncRequest":{"from_epoch":-1}}"#,
            br#"{"ResyncRequest":{"from_epoch":1}} x"#,
        ] {
            assert!(decode(bad).is_err(), "{} decoded", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn backend_null_reads_as_shm_and_keys_may_be_absent_null_or_present() {
        let blob = |backend: &str| {
            format!(
                r#"{{"Snapshot":{{"epoch":1,"nodes":[{{"node":1,"type_tag":"t","state":{{"SharedBlob":{{"offset":0,"len":0,"generation":0,"epoch":0,"checksum":0{backend}}}}}}}],"edges":[],"roots":[]}}}}"#
            )
        };
        let absent = decode(blob("").as_bytes()).unwrap();
        assert_eq!(
            decode(blob(r#","backend":null"#).as_bytes()).unwrap(),
            absent
        );
        assert_eq!(
            encode(&decode(blob(r#","backend":"shm""#).as_bytes()).unwrap()),
            blob("").into_bytes()
        );

        let node = |key: &str| {
            format!(
                r#"{{"Snapshot":{{"epoch":1,"nodes":[{{"node":1,"type_tag":"t","state":"Opaque"{key}}}],"edges":[],"roots":[]}}}}"#
            )
        };
        let without = decode(node("").as_bytes()).unwrap();
        assert_eq!(decode(node(r#","key":null"#).as_bytes()).unwrap(), without);
        let with = decode(node(r#","key":"scores/alice""#).as_bytes()).unwrap();
        let IpcMessage::Snapshot(snapshot) = &with else {
            panic!("{with:?}")
        };
        assert_eq!(
            snapshot.nodes[0].key.as_ref().map(NodeKey::as_str),
            Some("scores/alice")
        );
        assert_eq!(encode(&with), node(r#","key":"scores/alice""#).into_bytes());
        assert_eq!(encode(&without), node("").into_bytes());
        for bad in [r#","key":"""#, r#","key":"a//b""#, r#","key":7"#] {
            assert!(decode(node(bad).as_bytes()).is_err(), "{bad}");
        }
        let deep = format!(r#","key":"{}""#, vec!["s"; 33].join("/"));
        assert!(decode(node(&deep).as_bytes()).is_err());
    }
}
