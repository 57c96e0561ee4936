//! The lazily pack: which fixture kinds it reads and what its assertion keys mean.
//!
//! Message kinds (`Snapshot`, `Delta`, `ResyncRequest`) carry a `wire` section:
//! it is decoded strictly, re-encoded, and compared byte for byte. The `Arena`
//! kind carries `input` (capacity, epoch, payload) and `expected` (descriptor,
//! header bytes, payload region): the pack performs the write on a fresh
//! arena and compares what it produced byte for byte. Every assertion key
//! below is computed from the decoded data; the runner fails any other key.
//!
//! | kind | keys |
//! |---|---|
//! | Snapshot | `epoch`, `node_count`, `edge_count`, `root_count`, `first_node_type_tag`, `first_node_state_kind`, `has_opaque_node`, `opaque_node_id`, `blob_offset`, `blob_len`, `blob_generation`, `blob_epoch`, `blob_checksum`, `blob_backend` (the `blob_*` keys describe the first node whose state is a `SharedBlob`) |
//! | Delta | `base_epoch`, `epoch`, `op_count`, `is_sequential`, `has_all_op_variants`, `first_op_kind`, `first_op_payload_kind`, `first_op_payload_backend`, `resync_after_epoch_10` (a receiver at epoch 10 requests a resync for this delta) |
//! | ResyncRequest | `from_epoch` |
//! | Arena | `capacity`, `epoch`, `header_len`, `magic`, `payload_len`, `descriptor` |

use crate::arena::{self, HEADER_LEN, ShmBlobArena};
use crate::message::{
    DELTA_OP_VARIANTS, Delta, IpcMessage, IpcValue, NodeState, ResyncRequest, ShmBlobRef, Snapshot,
    encode,
};
use crate::receiver::{Receipt, Receiver};
use geist_fixtures::Fixture;
use geist_fixtures::json::{self, Json, JsonPath};
use geist_fixtures::pack::{
    ByteComparison, Evaluation, Fact, Pack, Problem, decode_value, encode_compact,
};
use serde::Deserialize;

/// The lazily IPC conformance pack.
#[derive(Debug, Clone, Copy, Default)]
pub struct LazilyPack;

/// The fixture kinds of the lazily pack.
pub const KINDS: [&str; 4] = ["Snapshot", "Delta", "ResyncRequest", "Arena"];

impl Pack for LazilyPack {
    fn name(&self) -> &'static str {
        "lazily"
    }

    fn kinds(&self) -> &'static [&'static str] {
        &KINDS
    }

    fn protocol_versions(&self) -> &'static [u64] {
        &[1]
    }

    fn sections(&self, kind: &str) -> &'static [&'static str] {
        match kind {
            "Arena" => &["input", "expected"],
            _ => &["wire"],
        }
    }

    fn evaluate(&self, fixture: &Fixture) -> Result<Evaluation, Vec<Problem>> {
        if fixture.kind == "Arena" {
            return evaluate_arena(fixture);
        }
        let path = JsonPath::root().key("wire");
        let Some(wire) = fixture.section("wire") else {
            return Err(vec![Problem::new(JsonPath::root(), "missing `wire`")]);
        };
        let message: IpcMessage = decode_value(&path, wire).map_err(|problem| vec![problem])?;
        if message.kind() != fixture.kind {
            return Err(vec![Problem::new(
                path,
                format!(
                    "the wire holds a {} but the fixture's kind is {}",
                    message.kind(),
                    fixture.kind
                ),
            )]);
        }
        Ok(Evaluation {
            facts: message_facts(&message),
            comparisons: vec![ByteComparison {
                path,
                actual: encode(&message),
            }],
        })
    }
}

/// Every fact the pack knows about a message (its assertion vocabulary for that kind).
pub fn message_facts(message: &IpcMessage) -> Vec<Fact> {
    match message {
        IpcMessage::Snapshot(snapshot) => snapshot_facts(snapshot),
        IpcMessage::Delta(delta) => delta_facts(delta),
        IpcMessage::ResyncRequest(request) => resync_facts(request),
    }
}

fn count(n: usize) -> Json {
    Json::from_u64(n as u64)
}

fn text(s: &str) -> Json {
    Json::String(s.to_string())
}

fn state_kind(state: &NodeState) -> &'static str {
    match state {
        NodeState::Payload(_) => "Payload",
        NodeState::SharedBlob(_) => "SharedBlob",
        NodeState::Opaque => "Opaque",
    }
}

fn snapshot_facts(snapshot: &Snapshot) -> Vec<Fact> {
    let mut facts = vec![
        Fact::recorded("epoch", Json::from_u64(snapshot.epoch)),
        Fact::recorded("node_count", count(snapshot.nodes.len())),
        Fact::recorded("edge_count", count(snapshot.edges.len())),
        Fact::recorded("root_count", count(snapshot.roots.len())),
    ];
    match snapshot.nodes.first() {
        Some(first) => {
            facts.push(Fact::recorded("first_node_type_tag", text(&first.type_tag)));
            facts.push(Fact::recorded(
                "first_node_state_kind",
                text(state_kind(&first.state)),
            ));
        }
        None => {
            facts.push(Fact::not_applicable(
                "first_node_type_tag",
                "the snapshot has no nodes",
            ));
            facts.push(Fact::not_applicable(
                "first_node_state_kind",
                "the snapshot has no nodes",
            ));
        }
    }
    let opaque = snapshot
        .nodes
        .iter()
        .find(|node| node.state == NodeState::Opaque);
    facts.push(Fact::recorded(
        "has_opaque_node",
        Json::Bool(opaque.is_some()),
    ));
    facts.push(match opaque {
        Some(node) => Fact::recorded("opaque_node_id", Json::from_u64(node.node.get())),
        None => Fact::not_applicable("opaque_node_id", "the snapshot has no opaque node"),
    });
    let blob = snapshot.nodes.iter().find_map(|node| match &node.state {
        NodeState::SharedBlob(blob) => Some(*blob),
        _ => None,
    });
    facts.extend(blob_facts(
        blob.as_ref(),
        "the snapshot has no shared-blob node",
    ));
    facts
}

/// How one `blob_*` assertion key reads a descriptor.
type BlobField = fn(&ShmBlobRef) -> Json;

fn blob_facts(blob: Option<&ShmBlobRef>, absent: &str) -> Vec<Fact> {
    let fields: [(&'static str, BlobField); 6] = [
        ("blob_offset", |b| Json::from_u64(b.offset)),
        ("blob_len", |b| Json::from_u64(b.len)),
        ("blob_generation", |b| Json::from_u64(b.generation)),
        ("blob_epoch", |b| Json::from_u64(b.epoch)),
        ("blob_checksum", |b| Json::from_u64(b.checksum)),
        ("blob_backend", |b| text(b.backend.as_str())),
    ];
    fields
        .iter()
        .map(|(key, value)| match blob {
            Some(blob) => Fact::recorded(key, value(blob)),
            None => Fact::not_applicable(key, absent),
        })
        .collect()
}

/// Whether a receiver synchronised at epoch 10 asks for a resync when given this delta.
pub fn requests_resync_at(last_epoch: u64, delta: &Delta) -> bool {
    let mut receiver = Receiver::at_epoch(last_epoch);
    matches!(
        receiver.receive(&IpcMessage::Delta(delta.clone())),
        Receipt::ResyncRequested { .. }
    )
}

fn delta_facts(delta: &Delta) -> Vec<Fact> {
    let mut facts = vec![
        Fact::recorded("base_epoch", Json::from_u64(delta.base_epoch)),
        Fact::recorded("epoch", Json::from_u64(delta.epoch)),
        Fact::recorded("op_count", count(delta.ops.len())),
        Fact::recorded("is_sequential", Json::Bool(delta.is_sequential())),
        Fact::recorded(
            "has_all_op_variants",
            Json::Bool(
                DELTA_OP_VARIANTS
                    .iter()
                    .all(|variant| delta.ops.iter().any(|op| op.kind() == *variant)),
            ),
        ),
        Fact::checked_only(
            "resync_after_epoch_10",
            Json::Bool(requests_resync_at(10, delta)),
        ),
    ];
    let first = delta.ops.first();
    facts.push(match first {
        Some(op) => Fact::recorded("first_op_kind", text(op.kind())),
        None => Fact::not_applicable("first_op_kind", "the delta has no ops"),
    });
    let payload = first.and_then(|op| op.payload());
    facts.push(match payload {
        Some(IpcValue::Inline(_)) => Fact::recorded("first_op_payload_kind", text("Inline")),
        Some(IpcValue::SharedBlob(_)) => {
            Fact::recorded("first_op_payload_kind", text("SharedBlob"))
        }
        None => Fact::not_applicable("first_op_payload_kind", "the first op carries no payload"),
    });
    facts.push(match payload {
        Some(IpcValue::SharedBlob(blob)) => {
            Fact::recorded("first_op_payload_backend", text(blob.backend.as_str()))
        }
        _ => Fact::not_applicable(
            "first_op_payload_backend",
            "the first op carries no shared-blob payload",
        ),
    });
    facts
}

fn resync_facts(request: &ResyncRequest) -> Vec<Fact> {
    vec![Fact::recorded(
        "from_epoch",
        Json::from_u64(request.from_epoch),
    )]
}

/// The `input` section of an `Arena` fixture.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArenaInput {
    /// Arena size in bytes.
    pub capacity: usize,
    /// The epoch the blob is written for.
    pub epoch: u64,
    /// The payload written.
    pub payload: Vec<u8>,
}

/// The `expected` section of an `Arena` fixture (decoded to check its shape; compared as bytes).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArenaExpected {
    /// The descriptor the write returns.
    pub descriptor: ShmBlobRef,
    /// The 40 header bytes.
    pub header_bytes: Vec<u8>,
    /// The payload bytes as stored after the header.
    pub payload_region: Vec<u8>,
}

fn to_json<T: serde::Serialize>(path: &JsonPath, value: &T) -> Result<Json, Problem> {
    let bytes = encode_compact(path, value)?;
    json::parse(&bytes).map_err(|error| Problem::new(path.clone(), error.to_string()))
}

fn evaluate_arena(fixture: &Fixture) -> Result<Evaluation, Vec<Problem>> {
    let root = JsonPath::root();
    let input_path = root.key("input");
    let expected_path = root.key("expected");
    let missing = |name: &str| vec![Problem::new(root.clone(), format!("missing `{name}`"))];
    let input: ArenaInput = decode_value(
        &input_path,
        fixture.section("input").ok_or_else(|| missing("input"))?,
    )
    .map_err(|p| vec![p])?;
    let _shape: ArenaExpected = decode_value(
        &expected_path,
        fixture
            .section("expected")
            .ok_or_else(|| missing("expected"))?,
    )
    .map_err(|p| vec![p])?;
    let mut arena = ShmBlobArena::with_capacity(input.capacity)
        .map_err(|error| vec![Problem::new(input_path.key("capacity"), error.to_string())])?;
    let descriptor = arena
        .write_blob(input.epoch, &input.payload)
        .map_err(|error| vec![Problem::new(input_path.key("payload"), error.to_string())])?;
    let read_back = arena.read_blob(&descriptor).map_err(|error| {
        vec![Problem::new(
            input_path.clone(),
            format!("written blob does not read back: {error}"),
        )]
    })?;
    if read_back != input.payload.as_slice() {
        return Err(vec![Problem::new(
            input_path.key("payload"),
            "written blob reads back different bytes",
        )]);
    }
    let offset = descriptor.offset as usize;
    let header = arena.header_at(offset).unwrap_or_default().to_vec();
    let region = read_back.to_vec();
    let header_len = header
        .get(6..8)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    let magic = header
        .get(0..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_be_bytes())
        .map(|word| String::from_utf8_lossy(&word).into_owned())
        .unwrap_or_default();
    let descriptor_json =
        to_json(&expected_path.key("descriptor"), &descriptor).map_err(|p| vec![p])?;
    let comparisons = vec![
        ByteComparison {
            path: expected_path.key("descriptor"),
            actual: encode_compact(&expected_path, &descriptor).map_err(|p| vec![p])?,
        },
        ByteComparison {
            path: expected_path.key("header_bytes"),
            actual: Json::from_bytes(&header).to_compact(),
        },
        ByteComparison {
            path: expected_path.key("payload_region"),
            actual: Json::from_bytes(&region).to_compact(),
        },
    ];
    debug_assert_eq!(header.len(), HEADER_LEN);
    debug_assert_eq!(arena::magic_text(), "LZSH");
    Ok(Evaluation {
        facts: vec![
            Fact::recorded("capacity", Json::from_u64(arena.capacity() as u64)),
            Fact::recorded("epoch", Json::from_u64(descriptor.epoch)),
            Fact::recorded("header_len", Json::from_u64(u64::from(header_len))),
            Fact::recorded("magic", Json::String(magic)),
            Fact::recorded("payload_len", Json::from_u64(descriptor.len)),
            Fact::recorded("descriptor", descriptor_json),
        ],
        comparisons,
    })
}
