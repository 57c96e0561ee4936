//! `geist`: the command line over geist's libraries.
//!
//! Thin by design: each subcommand parses its arguments and calls a library;
//! errors are reported with context and a non-zero exit code.

// First: its macros are used by the modules below.
#[macro_use]
mod output;

#[cfg(feature = "genvm")]
mod calldata;
mod db;
#[cfg(feature = "fixtures")]
mod fixtures;
#[cfg(feature = "genvm")]
mod genvm;
#[cfg(feature = "vectors")]
mod known_drivers;
mod tour;
#[cfg(feature = "vectors")]
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
    /// Show geist at work on its built-in defaults: check the bundled packs on
    /// the shared data, then find a planted codec bug and shrink it (seeded).
    Tour(tour::Args),
    #[cfg(feature = "fixtures")]
    /// Run and record language-agnostic conformance fixture suites.
    Fixtures(fixtures::Args),
    #[cfg(feature = "genvm")]
    /// Encode, decode and check GenVM Calldata.
    Calldata(calldata::Args),
    #[cfg(feature = "genvm")]
    /// Decode GenVM sub-VM and module results.
    Genvm(genvm::Args),
    #[cfg(feature = "vectors")]
    /// Validate, inspect and run VM conformance test vectors.
    Vectors(vectors::Args),
    /// List, export, import and merge example databases.
    Db(db::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        #[cfg(feature = "fixtures")]
        Command::Fixtures(args) => fixtures::run(args),
        #[cfg(feature = "genvm")]
        Command::Calldata(args) => calldata::run(args),
        #[cfg(feature = "genvm")]
        Command::Genvm(args) => genvm::run(args),
        #[cfg(feature = "vectors")]
        Command::Vectors(args) => vectors::run(args),
        Command::Db(args) => db::run(args),
        Command::Tour(args) => tour::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) if output::is_broken_pipe(&error) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("geist: error: {}", describe(&error));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes in one line, each said once: many error types
/// already write their cause into their own message, so a cause whose text is
/// already there is not repeated.
fn describe(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let said = cause.to_string();
        if text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}
