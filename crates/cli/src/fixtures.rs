//! `geist fixtures`: not implemented yet.

use std::process::ExitCode;

/// Arguments of `geist fixtures`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `geist fixtures`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("geist fixtures is not implemented yet")
}
