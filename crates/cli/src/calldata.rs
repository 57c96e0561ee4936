//! `geist calldata`: encode, decode and check GenVM Calldata.
//!
//! `encode` reads the text form (or, with `--json`, the typed JSON notation of
//! the vectors file) and prints canonical hex; `decode` reads hex (or a raw
//! file) and prints the text form; `check` runs a vectors file, one line per case.

use anyhow::{Context, bail};
use clap::{Subcommand, ValueEnum};
use geist_genvm::calldata::{
    self, DecodeOptions, text, typed_json,
    vectors::{self, CaseKind},
};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geist calldata`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encode a value given in the text form (or typed JSON with --json) to canonical hex.
    Encode {
        /// The value; `-` or nothing reads standard input.
        value: Option<String>,
        /// Read the typed JSON notation ({"int": "1"}, {"bytes": "00ff"}, ...) instead of the text form.
        #[arg(long)]
        json: bool,
        /// Write the raw bytes instead of hex.
        #[arg(long)]
        raw: bool,
        #[command(flatten)]
        limit: InputLimit,
    },
    /// Decode canonical Calldata (strictly) and print it.
    Decode {
        /// Hex (optionally 0x-prefixed, whitespace ignored); `-` or nothing reads standard input.
        hex: Option<String>,
        /// Read raw bytes from this file instead of hex.
        #[arg(long, conflicts_with = "hex")]
        file: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
        /// Deepest nesting of arrays and maps accepted (at most 10000).
        #[arg(
            long,
            default_value_t = calldata::DEFAULT_MAX_DEPTH as u64,
            value_parser = clap::value_parser!(u64).range(1..=MAX_DEPTH_LIMIT as u64)
        )]
        max_depth: u64,
        #[command(flatten)]
        limit: InputLimit,
    },
    /// Run a vectors file: valid values with exact hex, and inputs that must be refused.
    Check {
        /// The vectors file, e.g. ../shared/data/genvm/calldata-vectors.json.
        file: PathBuf,
        #[command(flatten)]
        limit: InputLimit,
    },
}

/// The deepest `--max-depth` accepted: decoding, printing and dropping a value
/// recurse once per level, and 10000 levels fit the main thread's stack with
/// room to spare (measured in `tests/bad_input.rs`).
pub(crate) const MAX_DEPTH_LIMIT: usize = 10_000;

/// The largest input read from a file or standard input.
#[derive(clap::Args)]
pub(crate) struct InputLimit {
    /// The largest input read, from a file or standard input (bytes, or with K, M or G).
    #[arg(long, value_parser = geist_pack::input::parse_size, default_value = "16M")]
    pub(crate) max_file_size: u64,
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    /// The human-readable text form.
    Text,
    /// The typed JSON notation.
    Json,
}

/// Runs `geist calldata`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Encode {
            value,
            json,
            raw,
            limit,
        } => {
            let input = argument_or_stdin(value, limit.max_file_size)?;
            let value = if json {
                let document: serde_json::Value =
                    serde_json::from_str(&input).context("the input is not JSON")?;
                typed_json::from_typed_json(&document, "$")?
            } else {
                text::parse_text(&input).context("the input is not in the Calldata text form")?
            };
            let bytes = calldata::encode(&value);
            if raw {
                std::io::stdout().lock().write_all(&bytes)?;
            } else {
                outln!("{}", hex::encode(bytes))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Decode {
            hex,
            file,
            output,
            max_depth,
            limit,
        } => {
            let bytes = match file {
                Some(path) => geist_pack::input::read_file(&path, limit.max_file_size)?,
                None => parse_hex(&argument_or_stdin(hex, limit.max_file_size)?)?,
            };
            let max_depth = usize::try_from(max_depth).unwrap_or(MAX_DEPTH_LIMIT);
            let value = calldata::decode_with(&bytes, &DecodeOptions { max_depth })
                .context("not canonical Calldata")?;
            match output {
                Output::Text => outln!("{}", text::to_text(&value))?,
                Output::Json => outln!("{}", typed_json::to_typed_json(&value))?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { file, limit } => {
            let outcomes = vectors::run_file_limited(&file, limit.max_file_size)?;
            let mut failed = 0;
            for outcome in &outcomes {
                let kind = match outcome.kind {
                    CaseKind::Valid => "valid",
                    CaseKind::Invalid => "invalid",
                };
                match &outcome.result {
                    Ok(detail) => outln!("ok   {kind} {}: {detail}", outcome.name)?,
                    Err(reason) => {
                        failed += 1;
                        outln!("FAIL {kind} {}: {reason}", outcome.name)?;
                    }
                }
            }
            outln!("{} passed, {failed} failed", outcomes.len() - failed)?;
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

/// The argument, or standard input (at most `limit` bytes) when it is absent or `-`.
pub(crate) fn argument_or_stdin(argument: Option<String>, limit: u64) -> anyhow::Result<String> {
    match argument {
        Some(text) if text != "-" => Ok(text),
        _ => {
            let bytes =
                geist_pack::input::read_stream(std::io::stdin().lock(), "standard input", limit)?;
            String::from_utf8(bytes).context("standard input is not UTF-8 text")
        }
    }
}

/// Hex with an optional `0x` prefix; ASCII whitespace anywhere is ignored.
pub(crate) fn parse_hex(text: &str) -> anyhow::Result<Vec<u8>> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let digits = compact.strip_prefix("0x").unwrap_or(&compact);
    match hex::decode(digits) {
        Ok(bytes) => Ok(bytes),
        Err(hex::FromHexError::OddLength) => bail!("odd number of hex digits ({})", digits.len()),
        Err(hex::FromHexError::InvalidHexCharacter { c, index }) => {
            bail!("not a hex digit: {c:?} at hex digit {index}")
        }
        Err(other) => bail!("bad hex: {other}"),
    }
}
