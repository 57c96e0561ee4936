//! `geist genvm`: decode GenVM sub-VM results and module results.
//!
//! `decode-result` reads a `[result_code][data]` blob (hex, or a raw file) and
//! prints `return <value>`, `user_error "<message>"` or `vm_error <string>`;
//! `decode-module` reads a module's Calldata answer for a given operation.

use crate::calldata::{InputLimit, argument_or_stdin, parse_hex};
use anyhow::Context;
use clap::Subcommand;
use geist_genvm::results::{ModuleResult, Operation, SubVmResult};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geist genvm`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode a sub-VM result `[code][data]`: 0 return, 1 user_error, 2 vm_error.
    DecodeResult {
        #[command(flatten)]
        input: Input,
    },
    /// Decode a module result ({"ok": ...} / {"error": ...}) and check the operation's shape.
    DecodeModule {
        /// The operation: web-render-text, web-render-html, web-render-screenshot,
        /// web-request, exec-prompt-text, exec-prompt-json,
        /// exec-prompt-template-bool, exec-prompt-template-text.
        #[arg(long)]
        operation: Operation,
        #[command(flatten)]
        input: Input,
    },
}

#[derive(clap::Args)]
struct Input {
    /// Hex (optionally 0x-prefixed, whitespace ignored); `-` or nothing reads standard input.
    hex: Option<String>,
    /// Read raw bytes from this file instead of hex.
    #[arg(long, conflicts_with = "hex")]
    file: Option<PathBuf>,
    #[command(flatten)]
    limit: InputLimit,
}

impl Input {
    fn bytes(self) -> anyhow::Result<Vec<u8>> {
        match self.file {
            Some(path) => Ok(geist_pack::input::read_file(
                &path,
                self.limit.max_file_size,
            )?),
            None => parse_hex(&argument_or_stdin(self.hex, self.limit.max_file_size)?),
        }
    }
}

/// Runs `geist genvm`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::DecodeResult { input } => {
            let result = SubVmResult::decode(&input.bytes()?).context("not a sub-VM result")?;
            outln!("{result}")?;
        }
        Command::DecodeModule { operation, input } => {
            let result = ModuleResult::decode(&input.bytes()?, operation)
                .with_context(|| format!("not a {} module result", operation.name()))?;
            outln!("{result}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
