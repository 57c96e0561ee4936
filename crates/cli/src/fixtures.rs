//! `geist fixtures`: run and record language-agnostic conformance fixture suites.
//!
//! `check` prints one line per fixture and the closing line `N passed, M failed`
//! (or a JSON report with `--format json`) and exits non-zero when any fixture
//! fails. `record` turns a message into a new fixture in the same format, with
//! the assertions the pack computes, checked before it is written.

use anyhow::Context as _;
use geist_fixtures::Runner;
use geist_fixtures::json::{self, Json};
use geist_fixtures::record::{kind_of_wire, record_fixture, write_fixture};
use geist_lazily::LazilyPack;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geist fixtures`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Check fixture files (directories are searched for *.json).
    Check(CheckArgs),
    /// Write a new fixture for a message, with the assertions the pack computes.
    Record(RecordArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Fixture files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Count fixtures of kinds no pack handles as failures instead of skipping them.
    #[arg(long)]
    strict: bool,
    /// The largest fixture file read (bytes, or with a K, M or G suffix); larger files fail.
    /// Checking takes 165-250 bytes of memory per byte of fixture.
    #[arg(long, value_parser = geist_pack::input::parse_size, default_value = "1M")]
    max_file_size: u64,
}

#[derive(clap::Args)]
struct RecordArgs {
    /// A file holding the message's JSON wire form (`-` for standard input).
    #[arg(long)]
    wire: PathBuf,
    /// The fixture's description.
    #[arg(long)]
    description: String,
    /// The fixture kind; by default the wire's top-level key (`Snapshot`, `Delta`, ...).
    #[arg(long)]
    kind: Option<String>,
    /// The protocol version.
    #[arg(long, default_value_t = 1)]
    protocol_version: u64,
    /// Where to write the fixture (standard output when absent).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The largest wire file read (bytes, or with a K, M or G suffix).
    #[arg(long, value_parser = geist_pack::input::parse_size, default_value = "1M")]
    max_file_size: u64,
}

/// The runner with every pack that has fixture kinds.
pub(crate) fn runner() -> Runner {
    Runner::new().with_pack(LazilyPack)
}

/// Runs `geist fixtures`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Check(args) => check(args),
        Command::Record(args) => record(args),
    }
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let report = runner()
        .with_max_file_size(args.max_file_size)
        .check_paths(&args.paths);
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    match args.format {
        Format::Text => {
            for line in report.to_text_lines() {
                outln!("{line}")?;
            }
        }
        Format::Json => outln!("{}", serde_json::to_string_pretty(&report.to_json())?)?,
    }
    let skipped_fail = args.strict && report.skipped() > 0;
    if skipped_fail {
        eprintln!(
            "{} fixture(s) skipped: a failure with --strict",
            report.skipped()
        );
    }
    Ok(if report.failed() == 0 && !skipped_fail {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn record(args: RecordArgs) -> anyhow::Result<ExitCode> {
    let bytes = if args.wire.as_os_str() == "-" {
        geist_pack::input::read_stream(std::io::stdin().lock(), "<stdin>", args.max_file_size)?
    } else {
        geist_pack::input::read_file(&args.wire, args.max_file_size)?
    };
    let wire: Json =
        json::parse(&bytes).with_context(|| format!("parsing {}", args.wire.display()))?;
    let kind = match args.kind {
        Some(kind) => kind,
        None => kind_of_wire(&wire).map(str::to_string).with_context(
            || "the wire is not a single-key object; name the fixture kind with --kind",
        )?,
    };
    let source = args
        .out
        .as_ref()
        .map_or_else(|| "<stdout>".to_string(), |path| path.display().to_string());
    let fixture = record_fixture(
        &runner(),
        &source,
        &args.description,
        &kind,
        args.protocol_version,
        vec![("wire".to_string(), wire)],
    )?;
    match &args.out {
        Some(path) => {
            write_fixture(&fixture, path)?;
            eprintln!(
                "recorded {} ({} assertions)",
                path.display(),
                fixture.assertions.len()
            );
        }
        None => out!("{}", fixture.to_file_text())?,
    }
    Ok(ExitCode::SUCCESS)
}
