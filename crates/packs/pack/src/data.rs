//! Locating the shared data directory (`../shared/data` beside the checkout).
//!
//! Tests and benchmarks read fixtures and vectors from there and never copy them
//! into the repository; this is the one place that knows where to look.

use std::path::{Path, PathBuf};

/// The environment variable that overrides where the shared data lives.
pub const SHARED_DATA_ENV: &str = "GEIST_SHARED_DATA";

/// The root of the checkout this crate was built from (`crates/packs/pack` -> root).
///
/// Scripts and installed peers (`scripts/`, `target/npm-genlayer`) are found from here.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(3)
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

/// The candidate directories searched for the shared data, in order.
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(dir) = std::env::var(SHARED_DATA_ENV) {
        out.push(PathBuf::from(dir));
    }
    out.push(workspace_root().join("../shared/data"));
    if let Ok(cwd) = std::env::current_dir() {
        out.push(cwd.join("../shared/data"));
    }
    out
}

/// The shared data directory, or an error naming every place that was searched.
pub fn shared_data_dir() -> Result<PathBuf, String> {
    let candidates = candidates();
    for dir in &candidates {
        if dir.is_dir() {
            return Ok(dir.canonicalize().unwrap_or_else(|_| dir.clone()));
        }
    }
    let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "shared data directory not found; looked in: {} (set {SHARED_DATA_ENV} to override)",
        looked.join(", ")
    ))
}

/// A path inside the shared data directory; panics with the searched places if it is missing.
///
/// Meant for tests and benchmarks, where a missing data set is a setup error that must
/// say where it looked.
pub fn shared_path(relative: &str) -> PathBuf {
    match shared_data_dir() {
        Ok(dir) => {
            let path = dir.join(relative);
            assert!(
                path.exists(),
                "shared data file {} not found under {}",
                relative,
                dir.display()
            );
            path
        }
        Err(message) => panic!("{message}"),
    }
}
