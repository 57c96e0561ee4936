//! `geist-server`: the Hegel server executable. Protocol on stdin/stdout, logs on stderr.

use geist_server::{DEFAULT_VERSION, ProtocolVersion, SUPPORTED_VERSIONS, ServerConfig, serve};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: geist-server [--stdio] [--verbosity quiet|normal|verbose|debug] [--protocol-version V] [--version]";

fn standard_files() -> std::io::Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::AsFd;
    let input = std::io::stdin().as_fd().try_clone_to_owned()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned()?;
    Ok((std::fs::File::from(input), std::fs::File::from(output)))
}

fn main() -> ExitCode {
    let mut config = ServerConfig::default();
    let mut version_text = std::env::var("GEIST_PROTOCOL_VERSION").ok();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        match flag.as_str() {
            "--stdio" => {}
            "--version" | "-V" => {
                println!(
                    "geist-server {} (Hegel protocol versions {}; default {})",
                    env!("CARGO_PKG_VERSION"),
                    SUPPORTED_VERSIONS.join(", "),
                    DEFAULT_VERSION
                );
                return ExitCode::SUCCESS;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "--verbosity" | "--protocol-version" => {
                let Some(value) = inline.or_else(|| args.next()) else {
                    eprintln!("geist-server: {flag} needs a value\n{USAGE}");
                    return ExitCode::from(2);
                };
                if flag == "--verbosity" {
                    match value.as_str() {
                        "quiet" | "normal" => {}
                        "verbose" => config.verbose = true,
                        "debug" => {
                            config.verbose = true;
                            config.debug = true;
                        }
                        other => {
                            eprintln!("geist-server: unknown verbosity {other:?}\n{USAGE}");
                            return ExitCode::from(2);
                        }
                    }
                } else {
                    version_text = Some(value);
                }
            }
            other => {
                eprintln!("geist-server: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(text) = version_text {
        match ProtocolVersion::parse(&text) {
            Ok(v) => config.version = v,
            Err(e) => {
                eprintln!("geist-server: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Ok(timeout) = std::env::var("HEGEL_STREAM_TIMEOUT")
        && let Ok(seconds) = timeout.parse::<f64>()
        && seconds > 0.0
    {
        config.stream_timeout = Duration::from_secs_f64(seconds);
    }
    if std::env::var("HEGEL_PROTOCOL_DEBUG")
        .is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
    {
        config.debug = true;
    }
    // Plain files on the standard descriptors: no global locks, no line
    // buffering (which would flush at every 0x0A byte inside a payload); the
    // connection writes each packet whole and flushes once.
    let (input, output) = match standard_files() {
        Ok(files) => files,
        Err(e) => {
            eprintln!("geist-server: cannot use stdin/stdout: {e}");
            return ExitCode::FAILURE;
        }
    };
    match serve(
        input,
        std::io::BufWriter::with_capacity(1 << 16, output),
        config,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("geist-server: {e}");
            ExitCode::FAILURE
        }
    }
}
