//! `geist calldata`: not implemented yet.

use std::process::ExitCode;

/// Arguments of `geist calldata`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `geist calldata`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("geist calldata is not implemented yet")
}
