//! The typed model of a test vector, loaded from JSON in either format version.
//!
//! One model covers the seed schema and the later versions: binary fields are
//! decoded (hex or base64), numbers are read exactly from their JSON text
//! (token amounts exceed 64 bits), state roots are parsed as CIDs. Every load
//! error names the JSON pointer of the field at fault, and all field errors of
//! a document are reported together. [`TestVector::to_json`] writes a vector
//! back in its own format, so loading and writing round-trip.

use crate::integer::{IntegerError, parse_exact, parse_i64};
use crate::payload::{BinaryText, PayloadError, decode_binary, encode_base64, encode_hex};
use crate::schema::FormatVersion;
use cid::Cid;
use num_bigint::BigInt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// The class of a vector: what kind of input the VM is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorClass {
    /// A sequence of messages applied one by one (`messages` in the seed schema, `message` later).
    Message,
    /// Tipsets of blocks of messages.
    Tipset,
    /// A block (seed schema only; never used by a corpus).
    Block,
    /// A chain (seed schema only; never used by a corpus).
    Chain,
    /// A sequence of blocks (later schema only; never used by a corpus).
    BlockSeq,
}

impl VectorClass {
    /// The class as written in a document of the given format.
    pub fn as_text(self, format: FormatVersion) -> &'static str {
        match (self, format) {
            (VectorClass::Message, FormatVersion::Seed) => "messages",
            (VectorClass::Message, FormatVersion::Later) => "message",
            (VectorClass::Tipset, _) => "tipset",
            (VectorClass::Block, _) => "block",
            (VectorClass::Chain, _) => "chain",
            (VectorClass::BlockSeq, _) => "blockseq",
        }
    }

    fn parse(text: &str) -> Option<VectorClass> {
        Some(match text {
            "messages" | "message" => VectorClass::Message,
            "tipset" => VectorClass::Tipset,
            "block" => VectorClass::Block,
            "chain" => VectorClass::Chain,
            "blockseq" => VectorClass::BlockSeq,
            _ => return None,
        })
    }
}

/// Metadata about a vector (informational; drivers ignore it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorMeta {
    /// Unique identifier.
    pub id: Option<String>,
    /// Version of the vector.
    pub version: Option<String>,
    /// What it tests.
    pub description: Option<String>,
    /// Applicability, hints, rationale.
    pub comment: Option<String>,
    /// Generation metadata: (source, version) pairs (one object in the seed schema, a list later).
    pub generation: Vec<(Option<String>, Option<String>)>,
    /// Grouping tags.
    pub tags: Vec<String>,
    /// Whether `gen` was a single object (seed schema) rather than a list.
    pub generation_is_object: bool,
}

/// One protocol variant a vector applies to (later formats).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    /// Codename of the protocol version (`genesis`, `actorsv2`, ...).
    pub id: Option<String>,
    /// Epoch at which to run.
    pub epoch: Option<i64>,
    /// Network version.
    pub nv: Option<i64>,
}

/// What must hold before execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// Epoch (seed schema).
    pub epoch: Option<i64>,
    /// Protocol variants (later formats).
    pub variants: Vec<Variant>,
    /// Root of the state tree to start from.
    pub state_root: Option<Cid>,
    /// Base fee in attoFIL (exact).
    pub basefee: Option<BigInt>,
    /// Circulating supply in attoFIL (exact).
    pub circ_supply: Option<BigInt>,
}

/// One message to apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyMessage {
    /// The message's DAG-CBOR bytes.
    pub bytes: Vec<u8>,
    /// Epoch offset from the variant's epoch (later formats; the seed schema has bare strings).
    pub epoch_offset: Option<i64>,
    /// The absolute epoch (the v0.0.5 schema's `epoch` key; corpora write `epoch_offset`).
    pub epoch: Option<i64>,
}

/// One block of a tipset to apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TipsetBlock {
    /// Miner address (text form).
    pub miner_addr: String,
    /// Election win count.
    pub win_count: i64,
    /// The block's messages (DAG-CBOR bytes).
    pub messages: Vec<Vec<u8>>,
}

/// One tipset to apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyTipset {
    /// Epoch offset from the variant's epoch.
    pub epoch_offset: Option<i64>,
    /// Base fee in attoFIL (exact).
    pub basefee: Option<BigInt>,
    /// The blocks.
    pub blocks: Vec<TipsetBlock>,
}

/// One expected message receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// Exit code of the message.
    pub exit_code: i64,
    /// Return bytes.
    #[serde(serialize_with = "serialize_base64")]
    pub return_data: Vec<u8>,
    /// Gas used.
    pub gas_used: i64,
}

/// What must hold after execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Postconditions {
    /// Root of the resulting state tree.
    pub state_root: Option<Cid>,
    /// Expected receipts; `None` entries are `null` (allowed by the later schema).
    pub receipts: Vec<Option<Receipt>>,
    /// Expected receipts roots per applied tipset.
    pub receipts_roots: Vec<Cid>,
    /// Indexes of messages expected to fail to apply.
    pub apply_message_failures: Vec<i64>,
}

/// A test vector, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestVector {
    /// The format version it was written in.
    pub format: FormatVersion,
    /// How its binary fields are written.
    pub binary_text: BinaryText,
    /// Its class.
    pub class: VectorClass,
    /// Metadata.
    pub meta: VectorMeta,
    /// Selector (a string in the seed schema, a string map later).
    pub selector: Option<Value>,
    /// Hints to the driver (`incorrect`, `negate`).
    pub hints: Vec<String>,
    /// The gzipped CAR bytes (after hex/base64 decoding), if present.
    pub car_gzip: Option<Vec<u8>>,
    /// Preconditions.
    pub preconditions: Preconditions,
    /// Messages to apply (message class).
    pub apply_messages: Vec<ApplyMessage>,
    /// Tipsets to apply (tipset class).
    pub apply_tipsets: Vec<ApplyTipset>,
    /// Postconditions.
    pub postconditions: Postconditions,
    /// Randomness to replay, kept as JSON for the driver.
    pub randomness: Option<Value>,
    /// Execution diagnostics, kept as JSON.
    pub diagnostics: Option<Value>,
    /// Which optional sections the document had, so writing it back adds none.
    pub sections: Sections,
}

/// Which optional sections a vector document contained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    /// A `preconditions` object.
    pub preconditions: bool,
    /// A `postconditions` object.
    pub postconditions: bool,
    /// A `postconditions.receipts` array.
    pub receipts: bool,
    /// A `_meta` object (possibly empty).
    pub meta: bool,
}

/// A field of a vector that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The text is not JSON.
    #[error("not JSON: {message} at line {line} column {column}")]
    Json {
        /// The parser's message.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// A field of the wrong JSON type.
    #[error("{path}: {message}")]
    Shape {
        /// JSON pointer.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A binary field that does not decode.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// A number that is not an exact integer of the right range.
    #[error(transparent)]
    Integer(#[from] IntegerError),
    /// A string that is not a CID.
    #[error("{path}: not a CID: {reason}")]
    Cid {
        /// JSON pointer.
        path: String,
        /// The parser's message.
        reason: String,
    },
}

impl ModelError {
    /// JSON pointer of the field at fault (`""` for the document as a whole).
    pub fn path(&self) -> &str {
        match self {
            ModelError::Json { .. } => "",
            ModelError::Shape { path, .. } | ModelError::Cid { path, .. } => path,
            ModelError::Payload(error) => error.path(),
            ModelError::Integer(error) => error.path(),
        }
    }

    /// The error without its leading path, for reports that show the path apart.
    pub fn detail(&self) -> String {
        let text = self.to_string();
        let path = self.path();
        if path.is_empty() {
            return text;
        }
        text.strip_prefix(&format!("{path}: "))
            .map(str::to_string)
            .unwrap_or(text)
    }
}

// ---- raw, borrowed view of the JSON: numbers kept as their exact text ----

#[derive(Deserialize)]
struct RawVector<'a> {
    class: Option<String>,
    #[serde(rename = "_meta")]
    meta: Option<Value>,
    selector: Option<Value>,
    hints: Option<Vec<String>>,
    car_bytes: Option<String>,
    car: Option<String>,
    #[serde(borrow)]
    preconditions: Option<RawPreconditions<'a>>,
    #[serde(borrow)]
    apply_messages: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    apply_tipsets: Option<Vec<RawTipset<'a>>>,
    #[serde(borrow)]
    postconditions: Option<RawPostconditions<'a>>,
    randomness: Option<Value>,
    diagnostics: Option<Value>,
}

#[derive(Deserialize)]
struct RawPreconditions<'a> {
    #[serde(borrow)]
    epoch: Option<&'a RawValue>,
    #[serde(borrow)]
    variants: Option<Vec<RawVariant<'a>>>,
    state_tree: Option<RawStateTree>,
    #[serde(borrow)]
    basefee: Option<&'a RawValue>,
    #[serde(borrow)]
    circ_supply: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawVariant<'a> {
    id: Option<String>,
    #[serde(borrow)]
    epoch: Option<&'a RawValue>,
    #[serde(borrow)]
    nv: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawStateTree {
    root_cid: RawCid,
}

#[derive(Deserialize)]
struct RawCid {
    #[serde(rename = "/")]
    cid: String,
}

#[derive(Deserialize)]
struct RawMessageObject<'a> {
    bytes: String,
    #[serde(borrow)]
    epoch_offset: Option<&'a RawValue>,
    #[serde(borrow)]
    epoch: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawTipset<'a> {
    #[serde(borrow)]
    epoch_offset: Option<&'a RawValue>,
    #[serde(borrow)]
    basefee: Option<&'a RawValue>,
    #[serde(default)]
    blocks: Vec<RawBlock<'a>>,
}

#[derive(Deserialize)]
struct RawBlock<'a> {
    miner_addr: String,
    #[serde(borrow)]
    win_count: &'a RawValue,
    #[serde(default)]
    messages: Vec<String>,
}

#[derive(Deserialize)]
struct RawPostconditions<'a> {
    state_tree: Option<RawStateTree>,
    #[serde(borrow)]
    receipts: Option<Vec<Option<RawReceipt<'a>>>>,
    receipts_roots: Option<Vec<RawCid>>,
    #[serde(borrow)]
    apply_message_failures: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct RawReceipt<'a> {
    #[serde(borrow)]
    exit_code: &'a RawValue,
    #[serde(rename = "return")]
    return_data: String,
    #[serde(borrow)]
    gas_used: &'a RawValue,
}

/// Collects field errors so one pass reports all of them.
struct Loader {
    binary: BinaryText,
    errors: Vec<ModelError>,
}

impl Loader {
    fn record<T>(&mut self, result: Result<T, ModelError>) -> Option<T> {
        result.map_err(|error| self.errors.push(error)).ok()
    }

    fn binary(&mut self, text: &str, path: &str) -> Vec<u8> {
        self.record(decode_binary(text, self.binary, path).map_err(ModelError::from))
            .unwrap_or_default()
    }

    fn i64(&mut self, raw: Option<&RawValue>, path: &str) -> Option<i64> {
        raw.and_then(|raw| self.record(parse_i64(raw.get(), path).map_err(ModelError::from)))
    }

    fn big(&mut self, raw: Option<&RawValue>, path: &str) -> Option<BigInt> {
        raw.and_then(|raw| self.record(parse_exact(raw.get(), path).map_err(ModelError::from)))
    }

    fn cid(&mut self, text: &str, path: &str) -> Option<Cid> {
        self.record(Cid::try_from(text).map_err(|error| ModelError::Cid {
            path: path.to_string(),
            reason: error.to_string(),
        }))
    }
}

impl TestVector {
    /// Loads a vector document written in `format`.
    pub fn from_json(text: &[u8], format: FormatVersion) -> Result<TestVector, Vec<ModelError>> {
        let mut deserializer = serde_json::Deserializer::from_slice(text);
        let raw: RawVector<'_> =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
                let path = pointer_from_serde_path(&error.path().to_string());
                let inner = error.into_inner();
                if inner.is_syntax() || inner.is_eof() {
                    vec![ModelError::Json {
                        message: inner
                            .to_string()
                            .split(" at line")
                            .next()
                            .unwrap_or_default()
                            .to_string(),
                        line: inner.line(),
                        column: inner.column(),
                    }]
                } else {
                    let message = inner
                        .to_string()
                        .split(" at line")
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    vec![ModelError::Shape { path, message }]
                }
            })?;
        let binary = match format {
            FormatVersion::Seed => BinaryText::Hex,
            FormatVersion::Later => BinaryText::Base64,
        };
        let mut loader = Loader {
            binary,
            errors: Vec::new(),
        };
        let class = match raw.class.as_deref() {
            Some(text) => {
                loader.record(VectorClass::parse(text).ok_or_else(|| ModelError::Shape {
                    path: "/class".into(),
                    message: format!("unknown class {text:?}"),
                }))
            }
            None => loader.record(Err(ModelError::Shape {
                path: "".into(),
                message: "missing required class".into(),
            })),
        };
        let meta = raw
            .meta
            .as_ref()
            .map(|meta| load_meta(meta, &mut loader))
            .unwrap_or_default();
        let car_gzip = match (&raw.car_bytes, &raw.car) {
            (Some(text), _) => Some(decode_binary(text, BinaryText::Hex, "/car_bytes")),
            (None, Some(text)) => Some(decode_binary(text, BinaryText::Base64, "/car")),
            (None, None) => None,
        }
        .and_then(|result| loader.record(result.map_err(ModelError::from)));

        let mut preconditions = Preconditions::default();
        if let Some(pre) = &raw.preconditions {
            preconditions.epoch = loader.i64(pre.epoch, "/preconditions/epoch");
            preconditions.basefee = loader.big(pre.basefee, "/preconditions/basefee");
            preconditions.circ_supply = loader.big(pre.circ_supply, "/preconditions/circ_supply");
            if let Some(tree) = &pre.state_tree {
                preconditions.state_root =
                    loader.cid(&tree.root_cid.cid, "/preconditions/state_tree/root_cid/~1");
            }
            for (index, variant) in pre.variants.iter().flatten().enumerate() {
                let path = format!("/preconditions/variants/{index}");
                preconditions.variants.push(Variant {
                    id: variant.id.clone(),
                    epoch: loader.i64(variant.epoch, &format!("{path}/epoch")),
                    nv: loader.i64(variant.nv, &format!("{path}/nv")),
                });
            }
        }

        let mut apply_messages = Vec::new();
        for (index, raw_message) in raw.apply_messages.iter().flatten().enumerate() {
            let path = format!("/apply_messages/{index}");
            let text = raw_message.get();
            if text.starts_with('"') {
                let Some(string) =
                    loader.record(serde_json::from_str::<String>(text).map_err(|error| {
                        ModelError::Shape {
                            path: path.clone(),
                            message: error.to_string(),
                        }
                    }))
                else {
                    continue;
                };
                let bytes = loader.binary(&string, &path);
                apply_messages.push(ApplyMessage {
                    bytes,
                    epoch_offset: None,
                    epoch: None,
                });
            } else {
                let Some(object) =
                    loader.record(serde_json::from_str::<RawMessageObject<'_>>(text).map_err(
                        |error| ModelError::Shape {
                            path: path.clone(),
                            message: format!(
                            "expected a message string or {{bytes, epoch_offset}}: {}",
                            error.to_string().split(" at line").next().unwrap_or_default()
                        ),
                        },
                    ))
                else {
                    continue;
                };
                let bytes = loader.binary(&object.bytes, &format!("{path}/bytes"));
                let epoch_offset = loader.i64(object.epoch_offset, &format!("{path}/epoch_offset"));
                let epoch = loader.i64(object.epoch, &format!("{path}/epoch"));
                apply_messages.push(ApplyMessage {
                    bytes,
                    epoch_offset,
                    epoch,
                });
            }
        }

        let mut apply_tipsets = Vec::new();
        for (index, tipset) in raw.apply_tipsets.iter().flatten().enumerate() {
            let path = format!("/apply_tipsets/{index}");
            let mut blocks = Vec::new();
            for (block_index, block) in tipset.blocks.iter().enumerate() {
                let block_path = format!("{path}/blocks/{block_index}");
                let win_count = loader
                    .i64(Some(block.win_count), &format!("{block_path}/win_count"))
                    .unwrap_or_default();
                let messages = block
                    .messages
                    .iter()
                    .enumerate()
                    .map(|(m, text)| loader.binary(text, &format!("{block_path}/messages/{m}")))
                    .collect();
                blocks.push(TipsetBlock {
                    miner_addr: block.miner_addr.clone(),
                    win_count,
                    messages,
                });
            }
            apply_tipsets.push(ApplyTipset {
                epoch_offset: loader.i64(tipset.epoch_offset, &format!("{path}/epoch_offset")),
                basefee: loader.big(tipset.basefee, &format!("{path}/basefee")),
                blocks,
            });
        }

        let sections = Sections {
            meta: raw.meta.is_some(),
            preconditions: raw.preconditions.is_some(),
            postconditions: raw.postconditions.is_some(),
            receipts: raw
                .postconditions
                .as_ref()
                .is_some_and(|post| post.receipts.is_some()),
        };
        let mut postconditions = Postconditions::default();
        if let Some(post) = &raw.postconditions {
            if let Some(tree) = &post.state_tree {
                postconditions.state_root =
                    loader.cid(&tree.root_cid.cid, "/postconditions/state_tree/root_cid/~1");
            }
            for (index, receipt) in post.receipts.iter().flatten().enumerate() {
                let path = format!("/postconditions/receipts/{index}");
                postconditions
                    .receipts
                    .push(receipt.as_ref().map(|receipt| {
                        Receipt {
                            exit_code: loader
                                .i64(Some(receipt.exit_code), &format!("{path}/exit_code"))
                                .unwrap_or_default(),
                            return_data: loader
                                .binary(&receipt.return_data, &format!("{path}/return")),
                            gas_used: loader
                                .i64(Some(receipt.gas_used), &format!("{path}/gas_used"))
                                .unwrap_or_default(),
                        }
                    }));
            }
            for (index, root) in post.receipts_roots.iter().flatten().enumerate() {
                if let Some(cid) = loader.cid(
                    &root.cid,
                    &format!("/postconditions/receipts_roots/{index}/~1"),
                ) {
                    postconditions.receipts_roots.push(cid);
                }
            }
            for (index, failure) in post.apply_message_failures.iter().flatten().enumerate() {
                if let Some(value) = loader.i64(
                    Some(failure),
                    &format!("/postconditions/apply_message_failures/{index}"),
                ) {
                    postconditions.apply_message_failures.push(value);
                }
            }
        }

        if !loader.errors.is_empty() {
            return Err(loader.errors);
        }
        Ok(TestVector {
            format,
            binary_text: binary,
            class: class.unwrap_or(VectorClass::Message),
            meta,
            selector: raw.selector,
            hints: raw.hints.unwrap_or_default(),
            car_gzip,
            preconditions,
            apply_messages,
            apply_tipsets,
            postconditions,
            randomness: raw.randomness,
            diagnostics: raw.diagnostics,
            sections,
        })
    }

    /// The JSON pointer of the CAR field in this vector's format.
    pub fn car_path(&self) -> &'static str {
        match self.format {
            FormatVersion::Seed => "/car_bytes",
            FormatVersion::Later => "/car",
        }
    }

    /// Every message the vector applies, in order, with its JSON pointer.
    pub fn all_messages(&self) -> Vec<(String, &[u8])> {
        let mut out: Vec<(String, &[u8])> = self
            .apply_messages
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("/apply_messages/{i}"), m.bytes.as_slice()))
            .collect();
        for (t, tipset) in self.apply_tipsets.iter().enumerate() {
            for (b, block) in tipset.blocks.iter().enumerate() {
                for (m, bytes) in block.messages.iter().enumerate() {
                    out.push((
                        format!("/apply_tipsets/{t}/blocks/{b}/messages/{m}"),
                        bytes.as_slice(),
                    ));
                }
            }
        }
        out
    }

    /// Writes the vector back as JSON text in its own format (numbers exact).
    pub fn to_json(&self) -> String {
        let binary = |bytes: &[u8]| match self.binary_text {
            BinaryText::Hex => encode_hex(bytes),
            BinaryText::Base64 => encode_base64(bytes),
        };
        let number = |text: String| RawValue::from_string(text).ok();
        let cid = |cid: &Cid| OutCid {
            cid: cid.to_string(),
        };
        let meta = (self.sections.meta || self.meta != VectorMeta::default()).then(|| {
            let mut map = serde_json::Map::new();
            for (key, value) in [
                ("id", &self.meta.id),
                ("version", &self.meta.version),
                ("description", &self.meta.description),
                ("comment", &self.meta.comment),
            ] {
                if let Some(value) = value {
                    map.insert(key.into(), Value::String(value.clone()));
                }
            }
            let entries: Vec<Value> = self
                .meta
                .generation
                .iter()
                .map(|(source, version)| {
                    let mut entry = serde_json::Map::new();
                    if let Some(source) = source {
                        entry.insert("source".into(), Value::String(source.clone()));
                    }
                    if let Some(version) = version {
                        entry.insert("version".into(), Value::String(version.clone()));
                    }
                    Value::Object(entry)
                })
                .collect();
            if self.meta.generation_is_object {
                if let Some(first) = entries.into_iter().next() {
                    map.insert("gen".into(), first);
                }
            } else if !entries.is_empty() {
                map.insert("gen".into(), Value::Array(entries));
            }
            if !self.meta.tags.is_empty() {
                map.insert("tags".into(), Value::from(self.meta.tags.clone()));
            }
            Value::Object(map)
        });
        let car = self.car_gzip.as_ref().map(|bytes| binary(bytes));
        let pre = &self.preconditions;
        let out = OutVector {
            class: self.class.as_text(self.format),
            selector: self.selector.clone(),
            hints: (!self.hints.is_empty()).then(|| self.hints.clone()),
            meta,
            car_bytes: if self.format == FormatVersion::Seed {
                car.clone()
            } else {
                None
            },
            car: if self.format == FormatVersion::Later {
                car
            } else {
                None
            },
            preconditions: self.sections.preconditions.then(|| OutPreconditions {
                epoch: pre.epoch,
                variants: (!pre.variants.is_empty()).then(|| pre.variants.clone()),
                state_tree: pre.state_root.as_ref().map(|root| OutStateTree {
                    root_cid: cid(root),
                }),
                basefee: pre.basefee.as_ref().and_then(|v| number(v.to_string())),
                circ_supply: pre.circ_supply.as_ref().and_then(|v| number(v.to_string())),
            }),
            apply_messages: (!self.apply_messages.is_empty() || self.class == VectorClass::Message)
                .then(|| {
                    self.apply_messages
                        .iter()
                        .map(|m| match self.format {
                            FormatVersion::Seed => Value::String(binary(&m.bytes)),
                            FormatVersion::Later => {
                                let mut object = serde_json::Map::new();
                                object.insert("bytes".into(), Value::String(binary(&m.bytes)));
                                if let Some(offset) = m.epoch_offset {
                                    object.insert("epoch_offset".into(), Value::from(offset));
                                }
                                if let Some(epoch) = m.epoch {
                                    object.insert("epoch".into(), Value::from(epoch));
                                }
                                Value::Object(object)
                            }
                        })
                        .collect()
                }),
            apply_tipsets: (!self.apply_tipsets.is_empty()).then(|| {
                self.apply_tipsets
                    .iter()
                    .map(|t| OutTipset {
                        epoch_offset: t.epoch_offset,
                        basefee: t.basefee.as_ref().and_then(|v| number(v.to_string())),
                        blocks: t
                            .blocks
                            .iter()
                            .map(|b| OutBlock {
                                miner_addr: b.miner_addr.clone(),
                                win_count: b.win_count,
                                messages: b.messages.iter().map(|m| binary(m)).collect(),
                            })
                            .collect(),
                    })
                    .collect()
            }),
            postconditions: self.sections.postconditions.then(|| OutPostconditions {
                state_tree: self
                    .postconditions
                    .state_root
                    .as_ref()
                    .map(|root| OutStateTree {
                        root_cid: cid(root),
                    }),
                receipts: self.sections.receipts.then(|| {
                    self.postconditions
                        .receipts
                        .iter()
                        .map(|r| {
                            r.as_ref().map(|r| OutReceipt {
                                exit_code: r.exit_code,
                                return_data: binary(&r.return_data),
                                gas_used: r.gas_used,
                            })
                        })
                        .collect()
                }),
                receipts_roots: (!self.postconditions.receipts_roots.is_empty())
                    .then(|| self.postconditions.receipts_roots.iter().map(cid).collect()),
                apply_message_failures: (!self.postconditions.apply_message_failures.is_empty())
                    .then(|| self.postconditions.apply_message_failures.clone()),
            }),
            randomness: self.randomness.clone(),
            diagnostics: self.diagnostics.clone(),
        };
        // Every field is a string, integer, raw number or JSON value: serializing cannot fail.
        serde_json::to_string_pretty(&out).unwrap_or_default()
    }
}

fn load_meta(meta: &Value, loader: &mut Loader) -> VectorMeta {
    let text = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_string);
    let entry = |value: &Value| {
        (
            value
                .get("source")
                .and_then(Value::as_str)
                .map(str::to_string),
            value
                .get("version")
                .and_then(Value::as_str)
                .map(str::to_string),
        )
    };
    let (generation, generation_is_object) = match meta.get("gen") {
        Some(Value::Array(items)) => (items.iter().map(entry).collect(), false),
        Some(object @ Value::Object(_)) => (vec![entry(object)], true),
        Some(_) => {
            loader.errors.push(ModelError::Shape {
                path: "/_meta/gen".into(),
                message: "expected an object or an array of {source, version}".into(),
            });
            (Vec::new(), false)
        }
        None => (Vec::new(), false),
    };
    let tags = meta
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    VectorMeta {
        id: text("id"),
        version: text("version"),
        description: text("description"),
        comment: text("comment"),
        generation,
        tags,
        generation_is_object,
    }
}

/// serde_path_to_error writes `a.b[0].c`; reports use JSON pointers (`/a/b/0/c`).
fn pointer_from_serde_path(path: &str) -> String {
    if path == "." || path.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for part in path.split('.') {
        let mut rest = part;
        while let Some(open) = rest.find('[') {
            if open > 0 {
                out.push('/');
                out.push_str(&rest[..open]);
            }
            let close = rest[open..].find(']').map_or(rest.len(), |c| open + c);
            out.push('/');
            out.push_str(&rest[open + 1..close]);
            rest = rest.get(close + 1..).unwrap_or_default();
        }
        if !rest.is_empty() {
            out.push('/');
            out.push_str(rest);
        }
    }
    out
}

fn serialize_base64<S: serde::Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&encode_base64(bytes))
}

#[derive(Serialize)]
struct OutVector {
    class: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    selector: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hints: Option<Vec<String>>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    car_bytes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    car: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preconditions: Option<OutPreconditions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    apply_messages: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    apply_tipsets: Option<Vec<OutTipset>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    postconditions: Option<OutPostconditions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    randomness: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnostics: Option<Value>,
}

#[derive(Serialize)]
struct OutPreconditions {
    #[serde(skip_serializing_if = "Option::is_none")]
    epoch: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    variants: Option<Vec<Variant>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state_tree: Option<OutStateTree>,
    #[serde(skip_serializing_if = "Option::is_none")]
    basefee: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    circ_supply: Option<Box<RawValue>>,
}

#[derive(Serialize)]
struct OutStateTree {
    root_cid: OutCid,
}

#[derive(Serialize)]
struct OutCid {
    #[serde(rename = "/")]
    cid: String,
}

#[derive(Serialize)]
struct OutTipset {
    #[serde(skip_serializing_if = "Option::is_none")]
    epoch_offset: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    basefee: Option<Box<RawValue>>,
    blocks: Vec<OutBlock>,
}

#[derive(Serialize)]
struct OutBlock {
    miner_addr: String,
    win_count: i64,
    messages: Vec<String>,
}

#[derive(Serialize)]
struct OutPostconditions {
    #[serde(skip_serializing_if = "Option::is_none")]
    state_tree: Option<OutStateTree>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipts: Option<Vec<Option<OutReceipt>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipts_roots: Option<Vec<OutCid>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    apply_message_failures: Option<Vec<i64>>,
}

#[derive(Serialize)]
struct OutReceipt {
    exit_code: i64,
    #[serde(rename = "return")]
    return_data: String,
    gas_used: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = r#"{"class":"messages","_meta":{"id":"x","gen":{"source":"dsl"}},"car_bytes":"0x1f8b",
        "preconditions":{"epoch":100,"state_tree":{"root_cid":{"/":"bafy2bzacebbxsepazfgwepawspvzenb2x64pmqjyan3wgtfpxu5nxez33wzkc"}}},
        "apply_messages":["0x8a00"],
        "postconditions":{"receipts":[{"exit_code":10,"gas_used":1000,"return":"0x"}]}}"#;

    #[test]
    fn seed_documents_load_and_round_trip() {
        let vector = TestVector::from_json(SEED.as_bytes(), FormatVersion::Seed).unwrap();
        assert_eq!(vector.class, VectorClass::Message);
        assert_eq!(vector.apply_messages[0].bytes, vec![0x8a, 0x00]);
        assert_eq!(
            vector.postconditions.receipts[0]
                .as_ref()
                .unwrap()
                .exit_code,
            10
        );
        assert!(vector.meta.generation_is_object);
        let again =
            TestVector::from_json(vector.to_json().as_bytes(), FormatVersion::Seed).unwrap();
        assert_eq!(again, vector);
    }

    #[test]
    fn big_numbers_survive_loading_and_writing_exactly() {
        let text = r#"{"class":"message","car":"","preconditions":{"basefee":300000000000000000000000000000000001,"circ_supply":463973544302560247587615610},"apply_messages":[]}"#;
        let vector = TestVector::from_json(text.as_bytes(), FormatVersion::Later).unwrap();
        assert_eq!(
            vector.preconditions.basefee.as_ref().unwrap().to_string(),
            "300000000000000000000000000000000001"
        );
        let written = vector.to_json();
        assert!(
            written.contains("300000000000000000000000000000000001"),
            "{written}"
        );
        assert_eq!(
            TestVector::from_json(written.as_bytes(), FormatVersion::Later).unwrap(),
            vector
        );
    }

    #[test]
    fn every_bad_field_is_reported_with_its_path() {
        let text = r#"{"class":"messages","car_bytes":"0xzz","preconditions":{"epoch":1.5},
            "apply_messages":["0x00","nothex"],"postconditions":{"receipts":[{"exit_code":0,"return":"0xGG","gas_used":1}]}}"#;
        let errors = TestVector::from_json(text.as_bytes(), FormatVersion::Seed).unwrap_err();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        for path in [
            "/car_bytes",
            "/preconditions/epoch",
            "/apply_messages/1",
            "/postconditions/receipts/0/return",
        ] {
            assert!(
                text.iter().any(|t| t.starts_with(path)),
                "{path} missing from {text:?}"
            );
        }
    }

    #[test]
    fn wrong_json_types_name_their_path() {
        let errors = TestVector::from_json(br#"{"class":"message","postconditions":{"receipts":[{"exit_code":0,"return":5,"gas_used":1}]}}"#, FormatVersion::Later).unwrap_err();
        assert!(
            matches!(&errors[0], ModelError::Shape { path, .. } if path == "/postconditions/receipts/0/return"),
            "{errors:?}"
        );
        let errors = TestVector::from_json(b"{\"class\": ", FormatVersion::Later).unwrap_err();
        assert!(matches!(errors[0], ModelError::Json { line: 1, .. }));
    }

    #[test]
    fn serde_paths_become_json_pointers() {
        assert_eq!(
            pointer_from_serde_path("postconditions.receipts[0].return"),
            "/postconditions/receipts/0/return"
        );
        assert_eq!(pointer_from_serde_path("."), "");
    }
}
