//! `geist bench`: not implemented yet.

use std::process::ExitCode;

/// Arguments of `geist bench`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `geist bench`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("geist bench is not implemented yet")
}
