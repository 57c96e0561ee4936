//! `geist vectors`: validate, inspect and run VM conformance test vectors.
//!
//! `check` validates, decodes and verifies vector files (directories are
//! searched recursively), one line per vector and a closing `N passed, M
//! failed`; `inspect` explains one vector; `run` drives an external VM through
//! the driver protocol; `replay-driver` (hidden) is the test driver that
//! answers with a vector's own expectations.

use anyhow::Context as _;
use clap::{Subcommand, ValueEnum};
use geist_vectors::{
    self as vectors, CheckSummary, SchemaSet,
    driver::{self, ProcessDriver, RunOptions},
    replay::{self, Perturbation},
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `geist vectors`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct SchemaArgs {
    /// The seed schema (draft-07); default: ../shared/spec/test-vector-schema.json.
    #[arg(long, requires = "later_schema")]
    schema: Option<PathBuf>,
    /// The schema for later format versions; default: the corpus' schema-v0.0.5.json in the shared data.
    #[arg(long, requires = "schema")]
    later_schema: Option<PathBuf>,
}

/// How large input may be.
#[derive(clap::Args)]
struct LimitArgs {
    /// The largest vector file read (bytes, or with a K, M or G suffix); larger files fail.
    #[arg(long, value_parser = geist_pack::input::parse_size, default_value = "64M")]
    max_file_size: u64,
    /// The largest CAR a vector's gzip may inflate to (bytes, or with K, M or G).
    #[arg(long, value_parser = geist_pack::input::parse_size, default_value = "128M")]
    max_car_size: u64,
}

impl LimitArgs {
    fn limits(&self) -> vectors::Limits {
        vectors::Limits {
            max_file_size: self.max_file_size,
            max_car_size: self.max_car_size,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Validate, decode and verify vectors: one line per vector, then `N passed, M failed`.
    Check {
        /// Vector files or directories (searched recursively for *.json, skipping schema*.json).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format; with json the closing line goes to standard error.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Print failures one per line under their vector.
        #[arg(long, short)]
        verbose: bool,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        #[command(flatten)]
        schemas: SchemaArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Explain one vector: meta, variants, messages, receipts, state roots, CAR statistics.
    Inspect {
        /// The vector file.
        file: PathBuf,
        /// Print the check report as JSON instead.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        #[command(flatten)]
        schemas: SchemaArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Run vectors against a VM through a driver program (see docs/vectors.md for the protocol).
    Run {
        /// The driver command line, run with `sh -c`; `fvm` runs geist's ref-fvm driver.
        #[arg(long)]
        driver: String,
        /// Vector files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seconds to wait for each answer before the driver is considered hung.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
        /// Compare plainly, ignoring `incorrect` and `negate` hints.
        #[arg(long)]
        ignore_hints: bool,
        /// Show the driver's execution trace of the message that differs.
        #[arg(long)]
        trace: bool,
        /// Output format; with json the closing line goes to standard error.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        #[command(flatten)]
        schemas: SchemaArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// The replay test driver: answers each request with the vector's own postconditions.
    #[command(hide = true)]
    ReplayDriver {
        /// Answer wrongly on purpose: gas, exit-code, return, state-root, drop-receipt.
        #[arg(long)]
        perturb: Option<Perturbation>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Human-readable lines.
    Text,
    /// One JSON document.
    Json,
}

/// Runs `geist vectors`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Check {
            paths,
            format,
            verbose,
            jobs,
            schemas,
            limits,
        } => check(&paths, format, verbose, jobs, &schemas, &limits.limits()),
        Command::Inspect {
            file,
            format,
            schemas,
            limits,
        } => inspect(&file, format, &schemas, &limits.limits()),
        Command::Run {
            driver,
            paths,
            timeout,
            ignore_hints,
            trace,
            format,
            schemas,
            limits,
        } => run_driver(
            &crate::known_drivers::command_line(&driver)?,
            &paths,
            Duration::from_secs(timeout),
            RunOptions {
                ignore_hints,
                trace,
            },
            format,
            &schemas,
            &limits.limits(),
        ),
        Command::ReplayDriver { perturb } => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            replay::serve(stdin, stdout, perturb).context("replay driver")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn load_schemas(args: &SchemaArgs) -> anyhow::Result<SchemaSet> {
    let set = match (&args.schema, &args.later_schema) {
        (Some(seed), Some(later)) => SchemaSet::load(seed, Some(later))?,
        _ => SchemaSet::from_shared_dir()
            .context("loading the vector schemas (use --schema and --later-schema)")?,
    };
    for note in &set.notes {
        eprintln!("note: {note}");
    }
    Ok(set)
}

fn check(
    paths: &[PathBuf],
    format: Format,
    verbose: bool,
    jobs: Option<usize>,
    schemas: &SchemaArgs,
    limits: &vectors::Limits,
) -> anyhow::Result<ExitCode> {
    let schemas = load_schemas(schemas)?;
    let (files, unreadable) = collect(paths)?;
    let started = Instant::now();
    let mut reports = vectors::check_files_limited(
        &files,
        &schemas,
        jobs.unwrap_or_else(vectors::check::default_workers),
        limits,
    );
    reports.extend(unreadable);
    let elapsed = started.elapsed();
    let summary = CheckSummary::of(&reports);
    match format {
        Format::Text => {
            for report in &reports {
                outln!("{report}")?;
                if verbose && report.failures.len() > 1 {
                    for failure in &report.failures {
                        outln!("       {failure}")?;
                    }
                }
            }
            eprintln!(
                "checked {} vectors ({:.1} MB JSON, {:.1} MB CAR, {} blocks) in {:.2} s",
                reports.len(),
                summary.json_bytes as f64 / 1e6,
                summary.car_bytes as f64 / 1e6,
                summary.verified_blocks,
                elapsed.as_secs_f64()
            );
            outln!("{summary}")?;
        }
        Format::Json => {
            let document = serde_json::json!({ "vectors": reports, "summary": summary });
            outln!("{}", serde_json::to_string_pretty(&document)?)?;
            eprintln!("{summary}");
        }
    }
    Ok(if summary.failed == 0 && !reports.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The vector files under `paths`; skipped special files and link cycles are
/// noted on standard error, and directories that cannot be read come back as
/// failed reports (the rest of the run goes on).
fn collect(paths: &[PathBuf]) -> anyhow::Result<(Vec<PathBuf>, Vec<vectors::VectorReport>)> {
    let walk = vectors::collect_vector_files(paths)?;
    let mut unreadable = Vec::new();
    for note in walk.notes {
        if note.error {
            let mut report = vectors::VectorReport::new(note.path.display().to_string());
            report.fail("", note.message);
            unreadable.push(report);
        } else {
            eprintln!("note: {note}");
        }
    }
    Ok((walk.files, unreadable))
}

fn inspect(
    file: &Path,
    format: Format,
    schemas: &SchemaArgs,
    limits: &vectors::Limits,
) -> anyhow::Result<ExitCode> {
    let schemas = load_schemas(schemas)?;
    let checked = vectors::check_file_limited(file, &schemas, limits);
    match format {
        Format::Text => out!("{}", vectors::inspect::render(&checked))?,
        Format::Json => outln!("{}", serde_json::to_string_pretty(&checked.report)?)?,
    }
    Ok(if checked.report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn run_driver(
    command: &str,
    paths: &[PathBuf],
    timeout: Duration,
    options: RunOptions,
    format: Format,
    schemas: &SchemaArgs,
    limits: &vectors::Limits,
) -> anyhow::Result<ExitCode> {
    let schemas = load_schemas(schemas)?;
    let (files, unreadable) = collect(paths)?;
    for report in &unreadable {
        eprintln!("{report}");
    }
    let mut process = ProcessDriver::new(command, timeout);
    let mut next_request = 1;
    let mut outcomes = Vec::new();
    for file in &files {
        let checked = vectors::check_file_limited(file, &schemas, limits);
        let results = driver::run_vector(&checked, &mut process, options, &mut next_request);
        if format == Format::Text {
            for outcome in &results {
                outln!("{outcome}")?;
            }
        }
        outcomes.extend(results);
    }
    drop(process);
    let (passed, failed, skipped) = driver::tally(&outcomes);
    let closing = if skipped > 0 {
        format!("{passed} passed, {failed} failed, {skipped} skipped")
    } else {
        format!("{passed} passed, {failed} failed")
    };
    match format {
        Format::Text => outln!("{closing}")?,
        Format::Json => {
            let document = serde_json::json!({ "runs": outcomes, "passed": passed, "failed": failed, "skipped": skipped });
            outln!("{}", serde_json::to_string_pretty(&document)?)?;
            eprintln!("{closing}");
        }
    }
    Ok(if failed == 0 && passed > 0 && unreadable.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
