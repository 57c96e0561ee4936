//! What the client's benchmarks share: where the servers they drive are.

use std::path::PathBuf;

/// geist-server (`GEIST_BENCH_GEIST_SERVER`, else the one built beside the
/// benchmark binary, if any) and hegel-core's `hegel` (`GEIST_BENCH_HEGEL`,
/// else the client-conformance stage's virtualenv under `target/`).
pub fn server_paths() -> (Option<PathBuf>, PathBuf) {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("geist-server")));
    let geist_server = std::env::var("GEIST_BENCH_GEIST_SERVER")
        .map(PathBuf::from)
        .ok()
        .or(beside);
    let hegel = std::env::var("GEIST_BENCH_HEGEL")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/client-conformance-venv/bin/hegel")
        });
    (geist_server, hegel)
}
