//! A `redis-server` of this machine's, started on a free loopback port.
//!
//! For tests of the Redis backend against the real server (Debian's package,
//! `apt-get install redis-server`): [`LocalRedis::start`] runs the binary with
//! no persistence, waits until it answers, and stops it when dropped. Tests
//! can kill it, or pause it to play a server too slow to answer.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a fresh server may take to answer its first `PING`.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `redis-server`, stopped on drop.
pub struct LocalRedis {
    child: Option<Child>,
    port: u16,
}

impl LocalRedis {
    /// Starts `redis-server` (the `GEIST_REDIS_SERVER` binary, else the one
    /// on `PATH`) on a free loopback port.
    pub fn start() -> io::Result<LocalRedis> {
        // A port just released can be taken by someone else before the
        // server binds it: try a few.
        let mut last_error = None;
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
            let mut server = LocalRedis { child: None, port };
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| io::Error::other("redis-server did not start")))
    }

    /// Starts the server again on the same port, empty (after [`kill`](Self::kill)).
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill()?;
        self.spawn()
    }

    fn spawn(&mut self) -> io::Result<()> {
        let binary =
            std::env::var_os("GEIST_REDIS_SERVER").unwrap_or_else(|| "redis-server".into());
        let child = Command::new(&binary)
            .args(["--bind", "127.0.0.1", "--port"])
            .arg(self.port.to_string())
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--protected-mode", "yes", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "starting {}: {e} (install Debian's redis-server, or set GEIST_REDIS_SERVER)",
                        binary.to_string_lossy()
                    ),
                )
            })?;
        self.child = Some(child);
        let answering = self.wait_until_answering();
        if answering.is_err() {
            let _ = self.kill();
        }
        answering
    }

    fn wait_until_answering(&mut self) -> io::Result<()> {
        let started = Instant::now();
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(io::Error::other(format!("redis-server exited: {status}")));
            }
            if self.ping().is_ok() {
                return Ok(());
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("redis-server on port {} did not answer", self.port),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `PING` and reads the answer (to tell that the server is up).
    pub fn ping(&self) -> io::Result<()> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(1)))?;
        stream.write_all(b"PING\r\n")?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line)?;
        if line.starts_with("+PONG") {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "unexpected answer to PING: {line:?}"
            )))
        }
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `redis://127.0.0.1:PORT/DB`.
    pub fn url(&self, db: u32) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }

    /// Kills the server at once (SIGKILL) and waits for it to go.
    pub fn kill(&mut self) -> io::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// Stops (`SIGSTOP`) or resumes (`SIGCONT`) the server: stopped, it
    /// accepts connections and never answers.
    pub fn pause(&self, paused: bool) -> io::Result<()> {
        let pid = self
            .pid()
            .ok_or_else(|| io::Error::other("redis-server is not running"))?;
        let status = Command::new("kill")
            .arg(if paused { "-STOP" } else { "-CONT" })
            .arg(pid.to_string())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill failed: {status}")))
        }
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        let _ = self.pause(false);
        let _ = self.kill();
    }
}
