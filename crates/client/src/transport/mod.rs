//! Where a property's test cases are generated: in-process or by a Hegel server.
//!
//! The default [`Transport::InProcess`] links geist's engine: no process, no
//! serialization. [`Transport::Server`] spawns a Hegel server (geist-server,
//! hegel-core's `hegel`, any implementation of the protocol) and runs each
//! property as a `run_test` over its standard input and output: the server
//! generates and shrinks, the client runs the property and turns every draw
//! into a command. One connection per server command is shared by every
//! property of the process, including properties running at the same time on
//! other threads (each run and each test case has its own stream).
//!
//! [`Transport::Connect`] connects to a server that is already running, on a
//! Unix socket or TCP, instead of spawning one.
//!
//! `GEIST_SERVER_COMMAND` (or `GEIST_SERVER_ADDRESS`) selects the wire
//! transport from the environment
//! (`HEGEL_SERVER_COMMAND` is deliberately not read: the hegeltest suite sets
//! it for its own runs, and geist's in-process tests must stay in-process).

pub(crate) mod connection;
pub(crate) mod values;

use std::time::Duration;

/// How long the client waits for any packet from the server before giving up.
pub const DEFAULT_SERVER_TIMEOUT: Duration = Duration::from_secs(60);

/// Where test cases come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// geist's engine, linked into the test process (the default).
    #[default]
    InProcess,
    /// A Hegel server spawned as a child process, spoken to over its stdio.
    Server(ServerCommand),
    /// A Hegel server already listening on a socket.
    Connect(ServerAddress),
}

impl Transport {
    /// The wire transport to the server started by `command`: a program
    /// followed by its arguments, separated by whitespace (e.g.
    /// `"target/debug/geist-server --protocol-version 0.1"`).
    pub fn server(command: &str) -> Transport {
        Transport::Server(ServerCommand::parse(command))
    }
}

/// A command that starts a Hegel server speaking the protocol on its stdio.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program and its arguments.
    pub(crate) argv: Vec<String>,
    /// The longest wait for the server before the run fails.
    pub(crate) timeout: Duration,
}

impl ServerCommand {
    /// `program` with no arguments.
    pub fn new(program: impl Into<String>) -> ServerCommand {
        ServerCommand {
            argv: vec![program.into()],
            timeout: DEFAULT_SERVER_TIMEOUT,
        }
    }

    /// A whitespace-separated command line (no quoting).
    pub fn parse(command: &str) -> ServerCommand {
        ServerCommand {
            argv: command.split_whitespace().map(str::to_string).collect(),
            timeout: DEFAULT_SERVER_TIMEOUT,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> ServerCommand {
        self.argv.push(arg.into());
        self
    }

    /// The longest wait for any reply or event from the server (default 60 s);
    /// past it the run fails rather than hangs.
    pub fn timeout(mut self, timeout: Duration) -> ServerCommand {
        self.timeout = timeout;
        self
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        self.argv.join(" ")
    }

    /// The program's file name (`hegel`, `geist-server`), used to keep each
    /// server's example database apart from the in-process one.
    pub(crate) fn program_name(&self) -> String {
        self.argv
            .first()
            .and_then(|p| std::path::Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "server".to_string())
    }
}

/// Where a running Hegel server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerAddress {
    /// `unix:<path>` or `tcp:<host>:<port>`.
    pub(crate) address: String,
    /// The longest wait for the server before the run fails.
    pub(crate) timeout: Duration,
}

impl ServerAddress {
    /// A Unix domain socket.
    pub fn unix(path: impl AsRef<std::path::Path>) -> ServerAddress {
        ServerAddress {
            address: format!("unix:{}", path.as_ref().display()),
            timeout: DEFAULT_SERVER_TIMEOUT,
        }
    }

    /// A TCP address, `host:port`.
    pub fn tcp(address: &str) -> ServerAddress {
        ServerAddress {
            address: format!("tcp:{address}"),
            timeout: DEFAULT_SERVER_TIMEOUT,
        }
    }

    /// `unix:<path>` or `tcp:<host>:<port>` (what `GEIST_SERVER_ADDRESS` holds).
    pub fn parse(text: &str) -> Result<ServerAddress, WireError> {
        let text = text.trim();
        match text.split_once(':') {
            Some(("unix", path)) if !path.is_empty() => Ok(ServerAddress::unix(path)),
            Some(("tcp", address)) if address.contains(':') => Ok(ServerAddress::tcp(address)),
            _ => Err(WireError::BadAddress(text.to_string())),
        }
    }

    /// The longest wait for any reply or event from the server (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> ServerAddress {
        self.timeout = timeout;
        self
    }

    /// The address, for messages.
    pub fn display(&self) -> &str {
        &self.address
    }
}

/// Why talking to a Hegel server failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WireError {
    /// The command was empty.
    #[error("the server command is empty")]
    EmptyCommand,
    /// A server address that is neither `unix:<path>` nor `tcp:<host>:<port>`.
    #[error("bad server address {0:?}: expected unix:<path> or tcp:<host>:<port>")]
    BadAddress(String),
    /// Connecting to a running server failed.
    #[error("cannot connect to the Hegel server at {address}: {message}")]
    Connect {
        /// The address.
        address: String,
        /// The operating system's reason.
        message: String,
    },
    /// The server process could not be started.
    #[error("cannot start the Hegel server `{command}`: {message}")]
    Spawn {
        /// The command line.
        command: String,
        /// The operating system's reason.
        message: String,
    },
    /// The handshake reply was not `Hegel/<version>` of a version geist speaks.
    #[error("bad handshake from the Hegel server: {0}")]
    Handshake(String),
    /// The server exited or closed its output.
    #[error("the Hegel server exited unexpectedly{0}")]
    ServerExited(String),
    /// Nothing arrived in time.
    #[error("no answer from the Hegel server within {0:?} ({1})")]
    Timeout(Duration, String),
    /// The server sent something that is not the protocol.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The server replied with an error to a request the run cannot do without.
    #[error("the Hegel server replied to {command} with {error_type}: {message}")]
    ErrorReply {
        /// The request that failed.
        command: String,
        /// The error's type (`ValueError`, `StopTest`, ...).
        error_type: String,
        /// The error message.
        message: String,
    },
}
