//! Builtin-actors bundles: the actors' Wasm code the VM executes.
//!
//! A release bundle, as lotus ships it, is a zstd-compressed tar holding one
//! CAR per network (`builtin-actors-mainnet.car`, `-calibrationnet`, ...).
//! A CAR's root is the bundle manifest, the DAG-CBOR pair `[version,
//! actors]`, where `actors` links the list of `[name, code CID]` that a state
//! tree's system actor records as its `builtin_actors`. Every block is
//! verified against its CID when loaded.

use crate::store::SharedBlocks;
use cid::Cid;
use geist_vectors::car::{CarArchive, CarError};
use geist_vectors::integrity::recompute_cid;
use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One network's actors in a loaded bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleManifest {
    /// Where it came from: `v10.tar.zst:builtin-actors-mainnet.car`.
    pub source: String,
    /// The CAR's root: the manifest `[version, actors]`.
    pub root: Cid,
    /// The manifest's version (1 for every released bundle).
    pub version: u32,
    /// The actors list a state tree's system actor names (`builtin_actors`).
    pub actors: Cid,
}

/// All loaded bundles: their blocks and manifests.
#[derive(Clone, Debug, Default)]
pub struct BundleSet {
    /// Every block of every bundle, by CID.
    pub blocks: SharedBlocks,
    /// One manifest per CAR, in load order.
    pub manifests: Vec<BundleManifest>,
}

/// Why a bundle could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The file could not be read or decompressed, or the tar is damaged.
    #[error("actor bundle {path}: {source}")]
    Read {
        /// The bundle file.
        path: PathBuf,
        /// The I/O, zstd or tar error.
        source: std::io::Error,
    },
    /// A member of the tar is not a CARv1 archive.
    #[error("actor bundle {path}, {entry}: {source}")]
    Car {
        /// The bundle file.
        path: PathBuf,
        /// The tar member.
        entry: String,
        /// What is wrong with the archive.
        source: CarError,
    },
    /// A block whose bytes do not hash to its CID (or whose hash is unknown).
    #[error("actor bundle {path}, {entry}: block {cid} does not match its CID")]
    BadBlock {
        /// The bundle file.
        path: PathBuf,
        /// The tar member.
        entry: String,
        /// The CID the block claims.
        cid: Cid,
    },
    /// The CAR's root is not a `[version, actors]` manifest held by the CAR.
    #[error("actor bundle {path}, {entry}: no manifest: {reason}")]
    Manifest {
        /// The bundle file.
        path: PathBuf,
        /// The tar member.
        entry: String,
        /// What is missing or malformed.
        reason: String,
    },
    /// The tar holds no CAR at all.
    #[error("actor bundle {0}: holds no .car file")]
    Empty(PathBuf),
}

impl BundleSet {
    /// Loads bundles (`.tar.zst` files), verifying every block.
    pub fn load(paths: &[PathBuf]) -> Result<BundleSet, BundleError> {
        let mut blocks = HashMap::new();
        let mut manifests = Vec::new();
        for path in paths {
            manifests.extend(load_bundle(path, &mut blocks)?);
        }
        Ok(BundleSet {
            blocks: Arc::new(blocks),
            manifests,
        })
    }

    /// The bundle whose actors list is `actors`, if one is loaded.
    pub fn find(&self, actors: &Cid) -> Option<&BundleManifest> {
        self.manifests.iter().find(|m| &m.actors == actors)
    }

    /// The loaded bundles' files, for messages: `v10.tar.zst, v11.tar.zst`.
    pub fn describe(&self) -> String {
        let mut files: Vec<&str> = self
            .manifests
            .iter()
            .filter_map(|m| m.source.split(':').next())
            .collect();
        files.dedup();
        if files.is_empty() {
            "none".to_string()
        } else {
            files.join(", ")
        }
    }
}

/// The bundles in a directory: its `*.tar.zst` files, sorted by name.
pub fn bundles_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.to_string_lossy().ends_with(".tar.zst") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

fn load_bundle(
    path: &Path,
    blocks: &mut HashMap<Cid, Vec<u8>>,
) -> Result<Vec<BundleManifest>, BundleError> {
    let read_error = |source| BundleError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let decoder = zstd::stream::read::Decoder::new(file).map_err(read_error)?;
    let mut archive = tar::Archive::new(decoder);
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut manifests = Vec::new();
    for entry in archive.entries().map_err(read_error)? {
        let mut entry = entry.map_err(read_error)?;
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(read_error)?;
        if !name.ends_with(".car") {
            continue;
        }
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(read_error)?;
        let car = CarArchive::parse(&bytes).map_err(|source| BundleError::Car {
            path: path.to_path_buf(),
            entry: name.clone(),
            source,
        })?;
        manifests.push(load_car(path, &file_name, &name, car, blocks)?);
    }
    if manifests.is_empty() {
        return Err(BundleError::Empty(path.to_path_buf()));
    }
    Ok(manifests)
}

fn load_car(
    path: &Path,
    file_name: &str,
    entry: &str,
    car: CarArchive,
    blocks: &mut HashMap<Cid, Vec<u8>>,
) -> Result<BundleManifest, BundleError> {
    let manifest_error = |reason: String| BundleError::Manifest {
        path: path.to_path_buf(),
        entry: entry.to_string(),
        reason,
    };
    let [root] = car.roots[..] else {
        return Err(manifest_error(format!(
            "the CAR has {} roots, a bundle has one",
            car.roots.len()
        )));
    };
    let mut manifest = None;
    for block in car.blocks {
        if recompute_cid(&block).ok() != Some(block.cid) {
            return Err(BundleError::BadBlock {
                path: path.to_path_buf(),
                entry: entry.to_string(),
                cid: block.cid,
            });
        }
        if block.cid == root {
            manifest = Some(
                fvm_ipld_encoding::from_slice::<(u32, Cid)>(&block.data).map_err(|e| {
                    manifest_error(format!("root {root} is not [version, actors]: {e}"))
                })?,
            );
        }
        blocks.insert(block.cid, block.data);
    }
    let (version, actors) =
        manifest.ok_or_else(|| manifest_error(format!("root {root} is not in the CAR")))?;
    if !blocks.contains_key(&actors) {
        return Err(manifest_error(format!(
            "the actors list {actors} is not in the CAR"
        )));
    }
    Ok(BundleManifest {
        source: format!("{file_name}:{entry}"),
        root,
        version,
        actors,
    })
}
