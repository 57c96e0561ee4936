//! `geist-server`: the Hegel server executable. Protocol on stdin/stdout, logs on stderr.

use geist_protocol::spin::SpinPolicy;
use geist_protocol::version::supported_list;
use geist_server::{DEFAULT_VERSION, ProtocolVersion, ServerConfig, serve};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: geist-server [--stdio] [--verbosity quiet|normal|verbose|debug] [--protocol-version V] [--max-runs N] [--max-generated-size N] [--version]";

/// Standard input read without sleeping for the first microseconds of each
/// wait while that pays (see `geist_server::spin`): the descriptor is
/// non-blocking, a read that finds nothing polls again for a short while,
/// then sleeps in `poll(2)` until data arrives.
struct SpinningInput {
    file: std::fs::File,
    spin: SpinPolicy,
}

impl SpinningInput {
    fn new(file: std::fs::File) -> std::io::Result<SpinningInput> {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this struct owns; no memory is passed.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(SpinningInput {
            file,
            spin: SpinPolicy::new(),
        })
    }
}

impl std::io::Read for SpinningInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let fd = self.file.as_raw_fd();
        let file = std::cell::RefCell::new((&mut self.file, buf));
        let attempt = || {
            let mut borrowed = file.borrow_mut();
            let (file, buf) = &mut *borrowed;
            match std::io::Read::read(file, buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
                other => Some(other),
            }
        };
        self.spin.wait(attempt, || {
            loop {
                let mut poll = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, length 1, no timeout.
                let ready = unsafe { libc::poll(&mut poll, 1, -1) };
                if ready < 0 {
                    let error = std::io::Error::last_os_error();
                    if error.kind() != std::io::ErrorKind::Interrupted {
                        return Err(error);
                    }
                    continue;
                }
                let mut borrowed = file.borrow_mut();
                let (file, buf) = &mut *borrowed;
                match std::io::Read::read(file, buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    other => return other,
                }
            }
        })
    }
}

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
                    supported_list(),
                    DEFAULT_VERSION
                );
                return ExitCode::SUCCESS;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "--verbosity" | "--protocol-version" | "--max-runs" | "--max-generated-size" => {
                let Some(value) = inline.or_else(|| args.next()) else {
                    eprintln!("geist-server: {flag} needs a value\n{USAGE}");
                    return ExitCode::from(2);
                };
                if flag == "--max-runs" || flag == "--max-generated-size" {
                    let Some(n) = value.parse::<usize>().ok().filter(|n| *n > 0) else {
                        eprintln!(
                            "geist-server: {flag} needs a positive whole number, got {value:?}\n{USAGE}"
                        );
                        return ExitCode::from(2);
                    };
                    if flag == "--max-runs" {
                        config.max_runs = n;
                    } else {
                        config.limits.max_size = n;
                    }
                } else if flag == "--verbosity" {
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
    if let Ok(mode) = std::env::var(geist_server::test_mode::TEST_MODE_VARIABLE)
        && !mode.is_empty()
    {
        match geist_server::test_mode::TestMode::parse(&mode) {
            Ok(mode) => config.test_mode = Some(mode),
            Err(e) => {
                eprintln!("geist-server: {e}");
                return ExitCode::from(2);
            }
        }
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
    let input = match SpinningInput::new(input) {
        Ok(input) => input,
        Err(e) => {
            eprintln!("geist-server: cannot set up stdin: {e}");
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
