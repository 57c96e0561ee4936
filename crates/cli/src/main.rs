//! `geist`: the command line over geist's libraries.
//!
//! Thin by design: each subcommand parses its arguments and calls a library;
//! errors are reported with context and a non-zero exit code.

mod bench;
mod calldata;
mod fixtures;
mod genvm;
mod vectors;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "geist",
    version,
    about = "Property-based and conformance testing for wire protocols"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run and record language-agnostic conformance fixture suites.
    Fixtures(fixtures::Args),
    /// Encode, decode and check GenVM Calldata.
    Calldata(calldata::Args),
    /// Decode GenVM sub-VM and module results.
    Genvm(genvm::Args),
    /// Validate, inspect and run VM conformance test vectors.
    Vectors(vectors::Args),
    /// Run geist's benchmarks and print their tables.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fixtures(args) => fixtures::run(args),
        Command::Calldata(args) => calldata::run(args),
        Command::Genvm(args) => genvm::run(args),
        Command::Vectors(args) => vectors::run(args),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("geist: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
