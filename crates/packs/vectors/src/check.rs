//! Checking vectors: schema, decoding, integrity and structure, file by file.
//!
//! [`check_document`] runs every check on one document and keeps what it
//! decoded (for `inspect` and the runner); [`check_paths`] walks files and
//! directories and checks them on all cores. The order of checks follows the
//! layers of a vector: JSON, schema of its format version, typed fields, the
//! gzipped CAR and its blocks, the state roots, the messages, and the rules
//! that tie them together (one receipt per message).

use crate::car::CarArchive;
use crate::integrity::{self, IntegrityReport};
use crate::message::{Message, MessageError, MessageForm};
use crate::model::{TestVector, VectorClass};
use crate::payload::{self, PayloadError};
use crate::report::VectorReport;
use crate::schema::{FormatVersion, SchemaSet, detect_format};
use cid::Cid;
pub use geist_pack::input::{DEFAULT_MAX_FILE_SIZE, Walk};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Everything decoded from one vector, beside its report.
#[derive(Clone, Debug)]
pub struct CheckedVector {
    /// The report: failures, notes, statistics.
    pub report: VectorReport,
    /// The typed vector, if its fields loaded.
    pub vector: Option<TestVector>,
    /// The uncompressed CAR bytes, if they decoded.
    pub car: Option<Vec<u8>>,
    /// The parsed CAR, if it parsed.
    pub archive: Option<CarArchive>,
    /// Integrity of the CAR's blocks, if parsed.
    pub integrity: Option<IntegrityReport>,
    /// Each applied message with its JSON pointer, decoded or not.
    pub messages: Vec<(String, Result<Message, MessageError>)>,
}

impl CheckedVector {
    /// A report with nothing decoded yet.
    fn nothing_decoded(report: VectorReport) -> CheckedVector {
        CheckedVector {
            report,
            vector: None,
            car: None,
            archive: None,
            integrity: None,
            messages: Vec::new(),
        }
    }
}

/// How many example CIDs a note lists.
const EXAMPLES: usize = 3;

/// The sizes input may reach before a check refuses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest vector file read, in bytes.
    pub max_file_size: u64,
    /// The largest inflated CAR, in bytes.
    pub max_car_size: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            max_car_size: payload::DEFAULT_MAX_CAR_SIZE,
        }
    }
}

/// Checks one vector document; `name` is what reports call it (usually its path).
pub fn check_document(name: &str, text: &[u8], schemas: &SchemaSet) -> CheckedVector {
    check_document_limited(name, text, schemas, &Limits::default())
}

/// [`check_document`] with limits.
pub fn check_document_limited(
    name: &str,
    text: &[u8],
    schemas: &SchemaSet,
    limits: &Limits,
) -> CheckedVector {
    let mut report = VectorReport::new(name);
    report.stats.json_bytes = text.len();
    let mut checked = CheckedVector::nothing_decoded(report);
    let report = &mut checked.report;

    let document: serde_json::Value = match serde_json::from_slice(text) {
        Ok(document) => document,
        Err(error) => {
            report.fail("", format!("not JSON: {error}"));
            return checked;
        }
    };
    for duplicate in crate::duplicates::duplicate_keys(text) {
        let at = if duplicate.object.is_empty() {
            "/".to_string()
        } else {
            duplicate.object.clone()
        };
        report.fail(
            at,
            format!(
                "duplicate key {:?} (JSON readers keep one of them silently)",
                duplicate.key
            ),
        );
    }
    let format = detect_format(&document);
    report.format = Some(format);
    report.class = document
        .get("class")
        .and_then(|c| c.as_str())
        .map(str::to_string);
    report.id = document
        .pointer("/_meta/id")
        .and_then(|c| c.as_str())
        .map(str::to_string);
    match schemas.for_format(format) {
        Some(schema) => {
            for violation in schema.violations(&document) {
                let at = if violation.path.is_empty() {
                    "/".to_string()
                } else {
                    violation.path.clone()
                };
                report.fail(
                    at,
                    format!(
                        "schema {}: {} (at {})",
                        schema.name, violation.message, violation.schema_path
                    ),
                );
            }
        }
        None => report.note(
            "",
            "no schema loaded for later format versions: checked structurally only",
        ),
    }
    drop(document);

    let vector = match TestVector::from_json(text, format) {
        Ok(vector) => vector,
        Err(errors) => {
            for error in errors {
                report.fail(error.path(), error.detail());
            }
            return checked;
        }
    };
    report.stats.variants = vector.preconditions.variants.len();
    report.stats.receipts = vector.postconditions.receipts.len();
    check_structure(&vector, report);
    check_hints(&vector, report);

    checked.messages = vector
        .all_messages()
        .into_iter()
        .map(|(path, bytes)| (path, Message::decode(bytes)))
        .collect();
    report.stats.messages = checked.messages.len();
    check_messages(&checked.messages, report);

    if let Some(car) = unpack_car(&vector, report, limits.max_car_size) {
        report.stats.car_bytes = car.len();
        match CarArchive::parse(&car) {
            Ok(archive) => {
                let integrity = integrity::check_archive(&archive);
                check_integrity(&vector, &archive, &integrity, report);
                checked.archive = Some(archive);
                checked.integrity = Some(integrity);
            }
            // A gzip stream that inflates to something other than a whole CAR
            // is broken in every format: the seed sample's mock is not gzip at all.
            Err(error) => report.fail(vector.car_path(), error.to_string()),
        }
        checked.car = Some(car);
    }
    checked.vector = Some(vector);
    checked
}

/// Rules that tie fields together and that the schemas do not (or cannot) express.
fn check_structure(vector: &TestVector, report: &mut VectorReport) {
    match vector.class {
        VectorClass::Message => {
            let messages = vector.apply_messages.len();
            let receipts = vector.postconditions.receipts.len();
            if messages != receipts {
                report.fail(
                    "/postconditions/receipts",
                    format!("{receipts} receipts for {messages} messages: a message-class vector needs one receipt per message"),
                );
            }
            if messages == 0 {
                report.fail(
                    "/apply_messages",
                    "a message-class vector applies no message",
                );
            }
            for (index, receipt) in vector.postconditions.receipts.iter().enumerate() {
                if receipt.is_none() {
                    report.note(
                        format!("/postconditions/receipts/{index}"),
                        "null receipt (message expected not to apply)",
                    );
                }
            }
        }
        VectorClass::Tipset if vector.format == FormatVersion::Later => {
            if vector.apply_tipsets.is_empty() {
                report.fail("/apply_tipsets", "a tipset-class vector applies no tipset");
            }
        }
        // The seed schema names tipset, block and chain classes but defines no inputs for them.
        VectorClass::Tipset | VectorClass::Block | VectorClass::Chain | VectorClass::BlockSeq => {
            report.note("/class", "no corpus uses this class; its inputs are not defined by the schema, so only the CAR is checked");
        }
    }
    if vector.format == FormatVersion::Later {
        if vector.preconditions.variants.is_empty() && vector.preconditions.epoch.is_none() {
            report.fail(
                "/preconditions",
                "neither variants nor an epoch: the driver cannot know when to run",
            );
        }
        for (index, message) in vector.apply_messages.iter().enumerate() {
            if message.epoch.is_some() && message.epoch_offset.is_none() {
                report.note(
                    format!("/apply_messages/{index}"),
                    "absolute `epoch` (schema v0.0.5 wording) instead of `epoch_offset` (what the corpora write)",
                );
            }
        }
    }
}

fn check_hints(vector: &TestVector, report: &mut VectorReport) {
    if !vector.hints.is_empty() {
        report.note("/hints", format!("{} (see docs/vectors.md: a driver run expects these postconditions NOT to hold when negated)", vector.hints.join(", ")));
    }
}

fn check_messages(messages: &[(String, Result<Message, MessageError>)], report: &mut VectorReport) {
    let mut signed = 0;
    for (path, message) in messages {
        match message {
            Ok(message) => match message.form {
                MessageForm::LegacyGasPrice => report.note(
                    path.clone(),
                    "9-field pre-EIP-1559 message (gas price instead of fee cap and premium)",
                ),
                MessageForm::Signed => signed += 1,
                MessageForm::Unsigned => {}
            },
            Err(error) => report.fail(path.clone(), format!("message does not decode: {error}")),
        }
    }
    if signed > 0 {
        report.note(
            "",
            format!("{signed} signed message(s) ([message, signature])"),
        );
    }
}

/// Decodes hex/base64 and gunzips the CAR; failures and notes go into the report.
fn unpack_car(vector: &TestVector, report: &mut VectorReport, limit: u64) -> Option<Vec<u8>> {
    let path = vector.car_path();
    let Some(gzipped) = &vector.car_gzip else {
        if vector.format == FormatVersion::Later {
            report.fail("/car", "no CAR: the vector carries no state tree");
        } else {
            report.note("/car_bytes", "no CAR: state trees not checked");
        }
        return None;
    };
    report.stats.car_gzip_bytes = gzipped.len();
    match payload::gunzip_limited(gzipped, path, limit) {
        Ok(car) => Some(car),
        Err(error @ PayloadError::NotGzip { .. }) if vector.format == FormatVersion::Seed => {
            let detail = error.to_string();
            let detail = detail
                .strip_prefix(&format!("{path}: "))
                .unwrap_or(&detail)
                .to_string();
            report.note(path, format!("not a real CAR: {detail}; the seed schema's sample carries a mock, so state trees are not checked"));
            None
        }
        Err(error) => {
            let text = error.to_string();
            let detail = text
                .strip_prefix(&format!("{path}: "))
                .unwrap_or(&text)
                .to_string();
            report.fail(path, detail);
            None
        }
    }
}

fn check_integrity(
    vector: &TestVector,
    archive: &CarArchive,
    integrity: &IntegrityReport,
    report: &mut VectorReport,
) {
    let car = vector.car_path();
    report.stats.blocks = archive.blocks.len();
    report.stats.verified_blocks = integrity.verified;
    report.stats.links = integrity.links;
    report.stats.missing_links = integrity.missing_links.len();
    for mismatch in &integrity.mismatches {
        report.fail(
            format!(
                "{car} block {} at CAR byte {}",
                mismatch.claimed, mismatch.offset
            ),
            format!(
                "CID check failed: the block's bytes hash to {}",
                mismatch.computed
            ),
        );
    }
    for (cid, offset, reason) in &integrity.undecodable {
        report.fail(
            format!("{car} block {cid} at CAR byte {offset}"),
            format!("not DAG-CBOR: {reason}"),
        );
    }
    for (cid, code) in &integrity.unverifiable {
        report.note(
            format!("{car} block {cid}"),
            format!("hash function 0x{code:x} not supported: block not verified"),
        );
    }
    if !integrity.duplicates.is_empty() {
        report.note(
            car,
            format!(
                "{} block(s) appear twice (e.g. {})",
                integrity.duplicates.len(),
                examples(&integrity.duplicates)
            ),
        );
    }
    if !integrity.missing_links.is_empty() {
        report.note(
            car,
            format!(
                "partial state tree: {} linked block(s) not in the CAR (e.g. {})",
                integrity.missing_links.len(),
                examples(&integrity.missing_links)
            ),
        );
    }
    if !integrity.non_utf8_blocks.is_empty() {
        report.note(
            car,
            format!(
                "{} DAG-CBOR block(s) hold strings that are not valid UTF-8 (e.g. {}); links read leniently",
                integrity.non_utf8_blocks.len(),
                examples(&integrity.non_utf8_blocks)
            ),
        );
    }
    if integrity.opaque_blocks > 0 {
        report.note(
            car,
            format!(
                "{} block(s) of codecs other than DAG-CBOR and raw: links not followed",
                integrity.opaque_blocks
            ),
        );
    }

    let held: HashSet<&Cid> = archive.blocks.iter().map(|block| &block.cid).collect();
    let header_roots: HashSet<&Cid> = archive.roots.iter().collect();
    let roots = [
        (
            "/preconditions/state_tree/root_cid",
            "pre-state root",
            vector.preconditions.state_root.as_ref(),
        ),
        (
            "/postconditions/state_tree/root_cid",
            "post-state root",
            vector.postconditions.state_root.as_ref(),
        ),
    ];
    for (path, what, root) in roots {
        match root {
            None => report.fail(
                path,
                format!("no {what}: the vector must name both state roots"),
            ),
            Some(root) if !held.contains(root) && root.hash().code() != integrity::IDENTITY => {
                report.fail(path, format!("{what} {root} is not in the CAR"));
            }
            Some(root) if !header_roots.contains(root) => {
                report.note(
                    path,
                    format!("{what} {root} is in the CAR but not among its header roots"),
                );
            }
            Some(_) => {}
        }
    }
}

fn examples(cids: &[Cid]) -> String {
    let mut text: Vec<String> = cids
        .iter()
        .take(EXAMPLES)
        .map(ToString::to_string)
        .collect();
    if cids.len() > EXAMPLES {
        text.push("…".to_string());
    }
    text.join(", ")
}

/// Reads and checks one file within `limits`.
pub fn check_file_limited(path: &Path, schemas: &SchemaSet, limits: &Limits) -> CheckedVector {
    let name = path.display().to_string();
    match geist_pack::input::read_file(path, limits.max_file_size) {
        Ok(text) => check_document_limited(&name, &text, schemas, limits),
        Err(error) => {
            let mut report = VectorReport::new(name);
            report.fail("", error.to_string());
            CheckedVector::nothing_decoded(report)
        }
    }
}

/// Reads and checks one file (of at most [`DEFAULT_MAX_FILE_SIZE`] bytes).
pub fn check_file(path: &Path, schemas: &SchemaSet) -> CheckedVector {
    check_file_limited(path, schemas, &Limits::default())
}

/// Why the vector files could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path}: {source}")]
pub struct CollectError {
    /// The file or directory.
    pub path: PathBuf,
    /// The I/O error.
    pub source: std::io::Error,
}

/// Lists the vector files under the given paths: files as given, directories
/// recursively (`*.json`, skipping `schema*.json`, which are the corpora's
/// schemas), sorted, each once; link cycles end, special files are skipped and
/// unreadable directories noted (see [`geist_pack::input::collect_files`]).
/// Only a path given that does not exist is an error.
pub fn collect_vector_files(paths: &[PathBuf]) -> Result<Walk, CollectError> {
    let mut out = Walk::default();
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|source| CollectError {
            path: path.clone(),
            source,
        })?;
        if metadata.is_dir() {
            let walk = geist_pack::input::collect_files(path, &is_vector_file_name);
            out.files.extend(walk.files);
            out.notes.extend(walk.notes);
        } else {
            out.files.push(path.clone());
        }
    }
    Ok(out)
}

fn is_vector_file_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.ends_with(".json") && !name.starts_with("schema")
}

/// Checks files on `workers` threads (at least one), returning reports in file order.
pub fn check_files(files: &[PathBuf], schemas: &SchemaSet, workers: usize) -> Vec<VectorReport> {
    check_files_limited(files, schemas, workers, &Limits::default())
}

/// [`check_files`] with limits.
pub fn check_files_limited(
    files: &[PathBuf],
    schemas: &SchemaSet,
    workers: usize,
    limits: &Limits,
) -> Vec<VectorReport> {
    let workers = workers.clamp(1, files.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<VectorReport>> = vec![None; files.len()];
    let results = std::sync::Mutex::new(Vec::with_capacity(files.len()));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(file) = files.get(index) else { break };
                    let report = check_file_limited(file, schemas, limits).report;
                    if let Ok(mut results) = results.lock() {
                        results.push((index, report));
                    }
                }
            });
        }
    });
    for (index, report) in results.into_inner().unwrap_or_default() {
        slots[index] = Some(report);
    }
    slots
        .into_iter()
        .zip(files)
        .map(|(slot, file)| {
            slot.unwrap_or_else(|| {
                let mut report = VectorReport::new(file.display().to_string());
                report.fail("", "checker thread failed on this file");
                report
            })
        })
        .collect()
}

/// The number of worker threads to use by default: the machine's cores.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
