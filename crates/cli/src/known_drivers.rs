//! Vector drivers known by name: `geist vectors run --driver fvm`.
//!
//! Any other `--driver` value is a shell command line, run as given. `fvm`
//! names geist's ref-fvm driver (`crates/fvm-driver`, the `geist-fvm-driver`
//! program), which is built outside the workspace because it compiles
//! wasmtime. It is looked for, in order: at `$GEIST_FVM_DRIVER`; beside the
//! `geist` executable; in `target/fvm-driver/release/` when `geist` runs from
//! `target/<profile>/` (where `scripts/stages/fvm.sh` builds it); on `PATH`.

use anyhow::bail;
use std::path::{Path, PathBuf};

/// The environment variable naming the ref-fvm driver program.
pub const FVM_DRIVER_ENV: &str = "GEIST_FVM_DRIVER";

/// The program name of the ref-fvm driver.
const FVM_DRIVER_PROGRAM: &str = "geist-fvm-driver";

/// How to build the ref-fvm driver where `geist` finds it.
const FVM_DRIVER_BUILD: &str = "cargo build --release --locked --manifest-path crates/fvm-driver/Cargo.toml --target-dir target/fvm-driver";

/// The shell command line for a `--driver` value: a known name resolved to its
/// program, anything else unchanged.
pub fn command_line(driver: &str) -> anyhow::Result<String> {
    if driver != "fvm" {
        return Ok(driver.to_string());
    }
    if let Some(path) = std::env::var_os(FVM_DRIVER_ENV) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            bail!(
                "{FVM_DRIVER_ENV} names {}, which is not a file",
                path.display()
            );
        }
        return Ok(shell_quote(&path));
    }
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join(FVM_DRIVER_PROGRAM));
        if let Some(target) = dir.parent() {
            candidates.push(target.join("fvm-driver/release").join(FVM_DRIVER_PROGRAM));
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&paths).map(|dir| dir.join(FVM_DRIVER_PROGRAM)));
    }
    match candidates.iter().find(|path| path.is_file()) {
        Some(path) => Ok(shell_quote(path)),
        None => bail!(
            "the ref-fvm driver ({FVM_DRIVER_PROGRAM}) is not built; build it with `{FVM_DRIVER_BUILD}` \
             or set {FVM_DRIVER_ENV} to the program (looked in: {})",
            candidates
                .iter()
                .take(2)
                .map(|p| p.display().to_string())
                .chain(std::iter::once("PATH".to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A path as one `sh` word, single-quoted.
fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_drivers_are_command_lines_unchanged() {
        let line = "geist vectors replay-driver --perturb gas";
        assert_eq!(command_line(line).unwrap(), line);
    }

    #[test]
    fn quoting_survives_spaces_and_quotes() {
        assert_eq!(shell_quote(Path::new("/a b/it's")), r"'/a b/it'\''s'");
    }
}
