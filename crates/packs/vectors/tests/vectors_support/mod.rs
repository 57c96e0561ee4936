//! Helpers shared by the vectors integration tests: the shared schemas and
//! corpus, and building tampered copies of real vectors in a temporary directory.

#![allow(dead_code)]

pub mod generate;

use geist_pack::data::shared_path;
use geist_vectors::car::CarArchive;
use geist_vectors::payload;
use geist_vectors::{CheckedVector, SchemaSet, check_file};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The schemas, loaded from the shared specs (fails loudly if they are missing).
pub fn schemas() -> SchemaSet {
    SchemaSet::from_shared_dir().unwrap_or_else(|error| panic!("{error}"))
}

/// The sample corpus directory.
pub fn corpus() -> PathBuf {
    shared_path("filecoin-vectors")
}

/// A vector of the sample by its path relative to `filecoin-vectors/`.
pub fn sample(relative: &str) -> PathBuf {
    shared_path(&format!("filecoin-vectors/{relative}"))
}

/// A small, real, later-format vector with a complete state tree.
pub const TRANSFER: &str =
    "test-vectors/transfer/self_transfer--id-to-secp-addresses--actorsv2.json";

/// Reads a JSON document.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Writes a JSON document into `dir` and checks it.
pub fn check_value(dir: &Path, name: &str, value: &Value, schemas: &SchemaSet) -> CheckedVector {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    check_file(&path, schemas)
}

/// The CAR of a later-format vector, parsed.
pub fn car_of(value: &Value) -> CarArchive {
    let gzipped = payload::decode_base64(value["car"].as_str().unwrap(), "/car").unwrap();
    CarArchive::parse(&payload::gunzip(&gzipped, "/car").unwrap()).unwrap()
}

/// Replaces the CAR of a later-format vector.
pub fn set_car(value: &mut Value, archive: &CarArchive) {
    let blocks: Vec<_> = archive
        .blocks
        .iter()
        .map(|b| (b.cid, b.data.clone()))
        .collect();
    let bytes = CarArchive::write(&archive.roots, &blocks);
    value["car"] = Value::String(payload::encode_base64(&payload::gzip(&bytes)));
}
