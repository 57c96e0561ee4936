//! `geist genvm`: not implemented yet.

use std::process::ExitCode;

/// Arguments of `geist genvm`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `geist genvm`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("geist genvm is not implemented yet")
}
