//! Near-miss inputs: a valid message's JSON with one thing changed.
//!
//! Decoders disagree at the edges of the grammar (a missing field, an extra
//! one, a number out of range, an unknown tag), so the differential test feeds
//! both implementations such near misses and compares whether they decode.
//! Where the reference implementation is knowingly more lenient than geist's
//! strict model, [`lazily_leniency`] names the leniency, so that a test can
//! accept exactly those differences and nothing else.

use crate::generate::Choices;
use crate::message::{IpcMessage, MAX_NODE_ID, encode};
use geist_fixtures::json::{self, Json, JsonPath, Segment};

/// The one change made to a message's JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// A member was removed from the object at `path`.
    DropMember {
        /// The object.
        path: JsonPath,
        /// The member.
        key: String,
    },
    /// A member was added to the object at `path`.
    AddMember {
        /// The object.
        path: JsonPath,
        /// The new key.
        key: String,
        /// Its value.
        value: Json,
    },
    /// A member of the object at `path` was renamed.
    RenameMember {
        /// The object.
        path: JsonPath,
        /// The old key.
        from: String,
        /// The new key.
        to: String,
    },
    /// The value at `path` was replaced.
    ReplaceValue {
        /// The value.
        path: JsonPath,
        /// The replacement.
        value: Json,
    },
}

/// A way in which lazily 0.61 accepts input that geist's model rejects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Leniency {
    /// A node id above 2^53 - 1: lazily reads all of `u64`.
    NodeIdBeyondSafeInteger,
    /// Unknown members of `Snapshot`, `NodeSnapshot`, `EdgeSnapshot`, `ShmBlobRef` or
    /// `ResyncRequest` are ignored (only `Delta` and its ops deny unknown fields).
    UnknownFieldIgnored,
    /// A newer protocol feature lazily knows: a `key` on `NodeAdd`, the queue ops,
    /// other message kinds. (`"backend": null` and a node snapshot's `key`,
    /// once leniencies, are read by geist as lazily reads them.)
    ProtocolExtension,
}

fn number(text: &str) -> Json {
    match json::parse(text.as_bytes()) {
        Ok(value) => value,
        Err(_) => Json::Null,
    }
}

fn all_paths(value: &Json, path: &mut JsonPath, out: &mut Vec<JsonPath>) {
    out.push(path.clone());
    match value {
        Json::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(Segment::Index(index));
                all_paths(item, path, out);
                path.pop();
            }
        }
        Json::Object(members) => {
            for (key, item) in members {
                path.push(Segment::Key(key.clone()));
                all_paths(item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(value: &'a mut Json, path: &JsonPath) -> Option<&'a mut Json> {
    let mut current = value;
    for segment in path.segments() {
        current = match (segment, current) {
            (Segment::Key(key), Json::Object(members)) => {
                members.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)?
            }
            (Segment::Index(index), Json::Array(items)) => items.get_mut(*index)?,
            _ => return None,
        };
    }
    Some(current)
}

const REPLACEMENT_NUMBERS: [&str; 10] = [
    "-1",
    "1.5",
    "256",
    "9007199254740991",
    "9007199254740992",
    "9007199254740993",
    "18446744073709551615",
    "18446744073709551616",
    "1e3",
    "0",
];

const ADDED_KEYS: [&str; 4] = ["extra", "key", "backend", "node"];
const RENAMES: [&str; 6] = [
    "QueuePush",
    "QueuePop",
    "QueueClose",
    "CrdtSync",
    "OutboxAck",
    "Bogus",
];

/// Draws one mutation of `message`'s JSON and applies it.
pub fn draw_mutation(c: &mut impl Choices, message: &IpcMessage) -> (Json, Mutation) {
    let mut document = json::parse(&encode(message)).unwrap_or(Json::Null);
    let mut paths = Vec::new();
    all_paths(&document, &mut JsonPath::root(), &mut paths);
    let path = paths[c.index(paths.len())].clone();
    let Some(target) = at_mut(&mut document, &path) else {
        return (
            document,
            Mutation::ReplaceValue {
                path,
                value: Json::Null,
            },
        );
    };
    let mutation = match target {
        Json::Object(members) if !members.is_empty() && c.integer(0, 2) == 0 => {
            let index = c.index(members.len());
            let (key, _) = members.remove(index);
            Mutation::DropMember { path, key }
        }
        Json::Object(members) if !members.is_empty() && c.boolean() => {
            let index = c.index(members.len());
            let from = members[index].0.clone();
            let to = if c.boolean() {
                RENAMES[c.index(RENAMES.len())].to_string()
            } else {
                format!("{from}_")
            };
            if members.iter().any(|(k, _)| *k == to) {
                return (
                    document,
                    Mutation::ReplaceValue {
                        path,
                        value: Json::Null,
                    },
                );
            }
            members[index].0 = to.clone();
            Mutation::RenameMember { path, from, to }
        }
        Json::Object(members) => {
            let key = ADDED_KEYS[c.index(ADDED_KEYS.len())].to_string();
            let value = match c.integer(0, 4) {
                0 => Json::Null,
                1 => Json::String("a/b".into()),
                2 => Json::String(["shm", "arrow", "in_process", "disk"][c.index(4)].into()),
                3 => number("7"),
                _ => Json::Object(Vec::new()),
            };
            // An existing key is duplicated on purpose: it probes duplicate handling.
            members.push((key.clone(), value.clone()));
            Mutation::AddMember { path, key, value }
        }
        Json::Array(items) if !items.is_empty() && c.boolean() => {
            items.remove(c.index(items.len()));
            Mutation::ReplaceValue {
                path,
                value: target.clone(),
            }
        }
        Json::String(_) => {
            let value = match c.integer(0, 3) {
                0 => Json::String("Opaqu".into()),
                1 => Json::String(["shm", "arrow", "in_process", "disk"][c.index(4)].into()),
                2 => Json::Null,
                _ => number("0"),
            };
            *target = value.clone();
            Mutation::ReplaceValue { path, value }
        }
        _ => {
            let value = match c.integer(0, 5) {
                0 => Json::Null,
                1 => Json::String("1".into()),
                2 => Json::Array(Vec::new()),
                _ => number(REPLACEMENT_NUMBERS[c.index(REPLACEMENT_NUMBERS.len())]),
            };
            *target = value.clone();
            Mutation::ReplaceValue { path, value }
        }
    };
    (document, mutation)
}

/// What the object at `path` is in the message model.
fn object_type(path: &JsonPath) -> &'static str {
    let segments = path.segments();
    let key_at = |i: usize| match segments.get(i) {
        Some(Segment::Key(key)) => Some(key.as_str()),
        _ => None,
    };
    let last = segments.len().checked_sub(1);
    let last_key = last.and_then(key_at);
    let parent_key = last.and_then(|l| l.checked_sub(1)).and_then(key_at);
    match (segments.len(), last_key, parent_key) {
        (0, _, _) => "IpcMessage",
        (1, Some("Snapshot"), _) => "Snapshot",
        (1, Some("Delta"), _) => "Delta",
        (1, Some("ResyncRequest"), _) => "ResyncRequest",
        (_, Some("SharedBlob"), _) => "ShmBlobRef",
        (_, Some("NodeAdd"), _) => "NodeAdd",
        (_, None, Some("nodes")) => "NodeSnapshot",
        (_, None, Some("edges")) => "EdgeSnapshot",
        _ => "other",
    }
}

fn is_node_id_position(path: &JsonPath) -> bool {
    let segments = path.segments();
    match segments.last() {
        Some(Segment::Key(key)) => matches!(key.as_str(), "node" | "dependent" | "dependency"),
        Some(Segment::Index(_)) => {
            matches!(segments.get(segments.len().wrapping_sub(2)), Some(Segment::Key(key)) if key == "roots")
        }
        None => false,
    }
}

fn valid_node_key(value: &Json) -> bool {
    match value {
        Json::Null => true,
        Json::String(text) => {
            !text.is_empty()
                && text.len() <= 1024
                && text.split('/').count() <= 32
                && text.split('/').all(|s| !s.is_empty())
        }
        _ => false,
    }
}

/// The known leniency of lazily that explains it accepting this mutation, if any.
///
/// Used to check that every disagreement on decode success is one of these.
pub fn lazily_leniency(mutation: &Mutation) -> Option<Leniency> {
    match mutation {
        Mutation::ReplaceValue {
            path,
            value: Json::Number(number),
        } if is_node_id_position(path) => {
            let beyond = number.as_u64().is_some_and(|n| n > MAX_NODE_ID);
            beyond.then_some(Leniency::NodeIdBeyondSafeInteger)
        }
        Mutation::AddMember { path, key, value } => match (object_type(path), key.as_str()) {
            ("NodeAdd", "key") if valid_node_key(value) => Some(Leniency::ProtocolExtension),
            ("Snapshot" | "NodeSnapshot" | "EdgeSnapshot" | "ShmBlobRef" | "ResyncRequest", _) => {
                Some(Leniency::UnknownFieldIgnored)
            }
            _ => None,
        },
        Mutation::RenameMember { path, from, to } => {
            let lenient_holder = matches!(
                object_type(path),
                "Snapshot" | "NodeSnapshot" | "EdgeSnapshot" | "ShmBlobRef" | "ResyncRequest"
            );
            // Renaming `backend` away is the same as leaving it out, plus an unknown field.
            if lenient_holder && from == "backend" {
                return Some(Leniency::UnknownFieldIgnored);
            }
            matches!(
                to.as_str(),
                "QueuePush" | "QueuePop" | "QueueClose" | "CrdtSync"
            )
            .then_some(Leniency::ProtocolExtension)
        }
        Mutation::DropMember { .. } | Mutation::ReplaceValue { .. } => None,
    }
}
