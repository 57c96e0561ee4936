//! `geist vectors`: not implemented yet.

use std::process::ExitCode;

/// Arguments of `geist vectors`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `geist vectors`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("geist vectors is not implemented yet")
}
