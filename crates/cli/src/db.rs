//! `geist db`: look into example databases and move failures between them.
//!
//! Every DATABASE argument is a database setting, as `GEIST_DATABASE` takes
//! it: a directory, `redis://host:port/db`, `readonly:...`, or several
//! separated by commas. `list` shows keys (tests) and their entries; `export`
//! writes a whole database as one JSON file (a CI job's artifact), `import`
//! loads such a file into a database, and `merge` copies one database into
//! another. Entries are only ever added.

use anyhow::Context;
use clap::Subcommand;
use geist_database::archive::{self, Archive};
use geist_database::{ExampleDatabase, open};
use geist_engine::choice::ChoiceValue;
use geist_engine::database::{decode_choices, describe_key, is_shrunk_key};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `geist db`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the keys (one per test) with their number of entries.
    List {
        /// The database setting.
        database: String,
        /// Also print every entry's choices.
        #[arg(long)]
        entries: bool,
    },
    /// Write every key and entry as one JSON file.
    Export {
        /// The database setting.
        database: String,
        /// The file to write (standard output if not given).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Save the entries of an exported file into a database.
    Import {
        /// The file (`-` for standard input).
        file: PathBuf,
        /// The database setting.
        database: String,
        /// Refuse files larger than this many bytes.
        #[arg(long, default_value_t = archive::DEFAULT_MAX_SIZE)]
        max_size: u64,
    },
    /// Save every entry of one database into another.
    Merge {
        /// The database setting to copy from.
        from: String,
        /// The database setting to copy into.
        into: String,
    },
}

fn opened(setting: &str) -> anyhow::Result<std::sync::Arc<dyn ExampleDatabase>> {
    open(setting).with_context(|| format!("cannot open the database {setting:?}"))
}

/// Runs `geist db`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::List { database, entries } => list(&database, entries),
        Command::Export { database, output } => {
            let db = opened(&database)?;
            let exported = archive::export(db.as_ref())
                .with_context(|| format!("cannot read {}", db.location()))?;
            let text = exported.to_json();
            match &output {
                Some(path) => std::fs::write(path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => write_stdout(text.as_bytes())?,
            }
            eprintln!(
                "exported {} entries under {} keys from {}",
                exported.entry_count(),
                exported.keys.len(),
                db.location()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Import {
            file,
            database,
            max_size,
        } => {
            let read = if file.as_os_str() == "-" {
                Archive::read(std::io::stdin().lock(), max_size)
            } else {
                let handle = std::fs::File::open(&file)
                    .with_context(|| format!("cannot open {}", file.display()))?;
                Archive::read(handle, max_size)
            }
            .with_context(|| format!("cannot import {}", file.display()))?;
            let db = opened(&database)?;
            let copied = archive::import(&read, db.as_ref())
                .with_context(|| format!("cannot save into {}", db.location()))?;
            eprintln!(
                "imported {} entries under {} keys into {}",
                copied.entries,
                copied.keys,
                db.location()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { from, into } => {
            let (source, target) = (opened(&from)?, opened(&into)?);
            let copied = archive::merge(source.as_ref(), target.as_ref()).with_context(|| {
                format!(
                    "cannot merge {} into {}",
                    source.location(),
                    target.location()
                )
            })?;
            eprintln!(
                "merged {} entries under {} keys from {} into {}",
                copied.entries,
                copied.keys,
                source.location(),
                target.location()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(setting: &str, show_entries: bool) -> anyhow::Result<ExitCode> {
    let db = opened(setting)?;
    let mut listed =
        archive::export(db.as_ref()).with_context(|| format!("cannot read {}", db.location()))?;
    // The records of which failures were shrunk to their end are the
    // engine's bookkeeping, not tests: exported and imported, not listed.
    listed.keys.retain(|(key, _)| !is_shrunk_key(key));
    let mut out = String::new();
    for (key, entries) in &listed.keys {
        let noun = if entries.len() == 1 {
            "entry"
        } else {
            "entries"
        };
        out.push_str(&format!(
            "{}  {} {noun}\n",
            describe_key(key),
            entries.len()
        ));
        if show_entries {
            for entry in entries {
                let shown = match decode_choices(entry) {
                    Ok(choices) => describe_choices(&choices),
                    Err(e) => format!("(cannot be read: {e})"),
                };
                out.push_str(&format!("    {shown}\n"));
            }
        }
    }
    out.push_str(&format!(
        "{} keys, {} entries in {}\n",
        listed.keys.len(),
        listed.entry_count(),
        db.location()
    ));
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Writes to standard output; a closed pipe (`| head`) ends quietly.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}

/// A choice sequence as a person reads it: `[1000, true, b"00ff", "text"]`.
fn describe_choices(choices: &[ChoiceValue]) -> String {
    let shown: Vec<String> = choices
        .iter()
        .map(|choice| match choice {
            ChoiceValue::Integer(v) => v.to_string(),
            ChoiceValue::Float(v) => format!("{v:?}"),
            ChoiceValue::Boolean(v) => v.to_string(),
            ChoiceValue::Bytes(v) => {
                let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
                format!("b\"{hex}\"")
            }
            ChoiceValue::String(points) => {
                let text: String = points
                    .iter()
                    .map(|&p| {
                        char::from_u32(p).map_or_else(|| format!("\\u{{{p:x}}}"), String::from)
                    })
                    .collect();
                format!("{text:?}")
            }
        })
        .collect();
    format!("[{}]", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_shown_as_values() {
        let shown = describe_choices(&[
            ChoiceValue::Integer(-3),
            ChoiceValue::Float(1.5),
            ChoiceValue::Boolean(true),
            ChoiceValue::Bytes(vec![0, 255]),
            ChoiceValue::String(vec![0x61, 0xD800]),
        ]);
        assert_eq!(shown, r#"[-3, 1.5, true, b"00ff", "a\\u{d800}"]"#);
    }
}
