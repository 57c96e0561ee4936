//! The client's side of the protocol against a scripted server on pipes:
//! the exact commands and statuses it sends, what it does on `StopTest`,
//! and how it refuses replies that are not what it asked for.

use super::*;
use crate::TestCase;
use crate::generators::{self as gs, Generator};
use crate::transport::ServerAddress;
use crate::transport::connection::version_from_handshake;
use geist_wire::PacketReader;
use geist_wire::cbor;
use geist_wire::{HANDSHAKE_REQUEST, Packet};
use std::collections::VecDeque;
use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

/// The server's end of the pipes, with helpers to follow a script.
struct Script {
    input: PacketReader<Box<dyn std::io::Read + Send>>,
    output: Box<dyn Write + Send>,
    next_id: u32,
}

impl Script {
    fn next(&mut self) -> Packet {
        match self.input.read_packet() {
            Ok(Some(p)) => p,
            other => panic!("the client hung up: {other:?}"),
        }
    }

    fn send(&mut self, packet: Packet) {
        self.output
            .write_all(&packet.to_bytes())
            .expect("the client reads");
    }

    /// The next request, which must be on `stream` (stream closes skipped).
    fn request_on(&mut self, stream: u32) -> (u32, Cbor) {
        loop {
            let p = self.next();
            if p.is_stream_close() || p.is_reply {
                continue;
            }
            assert_eq!(p.stream_id, stream, "a request on the wrong stream");
            let message = cbor::decode(&p.payload).expect("CBOR");
            return (p.message_id, message);
        }
    }

    fn reply(&mut self, stream: u32, id: u32, result: Cbor) {
        let payload = cbor::encode(&cbor::text_map([("result", result)]));
        self.send(Packet::reply(stream, id, payload));
    }

    fn reply_error(&mut self, stream: u32, id: u32, error: &str, error_type: &str) {
        let payload = cbor::encode(&cbor::text_map([
            ("error", Cbor::Text(error.into())),
            ("type", Cbor::Text(error_type.into())),
        ]));
        self.send(Packet::reply(stream, id, payload));
    }

    /// Sends an event on `stream` and waits for the client's reply to it.
    fn event(&mut self, stream: u32, entries: Vec<(&str, Cbor)>) {
        self.next_id += 1;
        let id = self.next_id;
        self.send(Packet::request(
            stream,
            id,
            cbor::encode(&cbor::text_map(entries)),
        ));
        loop {
            let p = self.next();
            if p.is_stream_close() {
                continue;
            }
            assert!(
                p.is_reply && p.stream_id == stream && p.message_id == id,
                "expected the reply to event {id} on stream {stream}, got {p:?}"
            );
            return;
        }
    }

    /// Accepts `run_test` and returns its stream and message.
    fn run_test(&mut self) -> (u32, Cbor) {
        let (id, message) = self.request_on(0);
        assert_eq!(
            cbor::map_get(&message, "command").and_then(cbor::as_text),
            Some("run_test")
        );
        self.reply(0, id, Cbor::Bool(true));
        let stream = cbor::map_get(&message, "stream_id")
            .and_then(cbor::as_i128)
            .expect("a stream id") as u32;
        (stream, message)
    }

    fn test_case(&mut self, run: u32, case: u32, is_final: bool) {
        self.event(
            run,
            vec![
                ("event", Cbor::Text("test_case".into())),
                ("stream_id", cbor::integer(i128::from(case))),
                ("is_final", Cbor::Bool(is_final)),
            ],
        );
    }

    fn test_done(&mut self, run: u32, passed: bool, interesting: i128) {
        self.event(
            run,
            vec![
                ("event", Cbor::Text("test_done".into())),
                (
                    "results",
                    cbor::text_map([
                        ("passed", Cbor::Bool(passed)),
                        ("test_cases", cbor::integer(3)),
                        ("valid_test_cases", cbor::integer(1)),
                        ("invalid_test_cases", cbor::integer(1)),
                        ("interesting_test_cases", cbor::integer(interesting)),
                    ]),
                ),
            ],
        );
    }

    /// Answers one `generate` on `case` with `value`; returns the schema.
    fn generate(&mut self, case: u32, value: Cbor) -> Cbor {
        let (id, message) = self.request_on(case);
        assert_eq!(command(&message), "generate", "{message:?}");
        self.reply(case, id, value);
        cbor::map_get(&message, "schema")
            .cloned()
            .expect("a schema")
    }

    /// Answers every command on `case` up to `mark_complete` (a `generate`
    /// with an empty list, a collection with no elements) and returns the
    /// commands' names.
    fn commands_until_complete(&mut self, case: u32) -> Vec<String> {
        let mut names = Vec::new();
        loop {
            let (id, message) = self.request_on(case);
            let name = command(&message).to_string();
            let result = match name.as_str() {
                "generate" => Cbor::Array(Vec::new()),
                "new_collection" => cbor::integer(1),
                "collection_more" => Cbor::Bool(false),
                _ => Cbor::Null,
            };
            self.reply(case, id, result);
            names.push(name);
            if names.last().is_some_and(|n| n == "mark_complete") {
                return names;
            }
        }
    }

    /// Answers `mark_complete` on `case`; returns its status and origin.
    fn mark_complete(&mut self, case: u32) -> (String, Option<String>) {
        let (id, message) = self.request_on(case);
        assert_eq!(command(&message), "mark_complete", "{message:?}");
        self.reply(case, id, Cbor::Null);
        let text = |k| {
            cbor::map_get(&message, k)
                .and_then(cbor::as_text)
                .map(str::to_string)
        };
        (text("status").unwrap_or_default(), text("origin"))
    }
}

fn command(message: &Cbor) -> &str {
    cbor::map_get(message, "command")
        .and_then(cbor::as_text)
        .unwrap_or("")
}

/// A connection to a scripted server announcing `version`; the script runs
/// on its own thread after the handshake.
fn scripted(
    version: &str,
    script: impl FnOnce(&mut Script) + Send + 'static,
) -> (
    Result<Arc<Connection>, WireError>,
    std::thread::JoinHandle<()>,
) {
    let (client_reads, server_writes) = std::io::pipe().expect("a pipe");
    let (server_reads, client_writes) = std::io::pipe().expect("a pipe");
    let reply = format!("Hegel/{version}").into_bytes();
    let server = std::thread::spawn(move || {
        serve(
            Box::new(server_reads),
            Box::new(server_writes),
            &reply,
            script,
        )
    });
    let connection = Connection::open(
        Box::new(client_writes),
        Box::new(client_reads),
        None,
        Arc::new(Mutex::new(VecDeque::new())),
        "scripted server".into(),
        Duration::from_secs(5),
    );
    (connection, server)
}

/// Answers the handshake with `reply`, then follows `script`.
fn serve(
    input: Box<dyn std::io::Read + Send>,
    output: Box<dyn Write + Send>,
    reply: &[u8],
    script: impl FnOnce(&mut Script),
) {
    let mut s = Script {
        input: PacketReader::new(input),
        output,
        next_id: 0,
    };
    let hello = s.next();
    assert_eq!(hello.payload, HANDSHAKE_REQUEST);
    s.send(Packet::reply(0, hello.message_id, reply.to_vec()));
    script(&mut s);
}

fn settings() -> Settings {
    Settings::new()
        .seed(Some(3))
        .test_cases(3)
        .database(None::<&str>)
        .name("scripted")
}

#[test]
fn statuses_origins_and_the_final_replay_follow_the_protocol() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let (connection, server) = scripted("0.16", move |s| {
        let (run, message) = s.run_test();
        let field = |k| cbor::map_get(&message, k).cloned();
        assert_eq!(field("seed"), Some(cbor::integer(3)));
        assert_eq!(field("test_cases"), Some(cbor::integer(3)));
        assert_eq!(field("database"), Some(Cbor::Null));
        assert_eq!(
            field("database_key"),
            Some(Cbor::Bytes(b"scripted".to_vec()))
        );
        for (case, value) in [(2u32, 5), (4, 3), (6, 7)] {
            s.test_case(run, case, false);
            let schema = s.generate(case, cbor::integer(value));
            assert_eq!(
                cbor::map_get(&schema, "max_value"),
                Some(&cbor::integer(100))
            );
            log.lock().unwrap().push(s.mark_complete(case));
        }
        s.test_done(run, false, 1);
        s.test_case(run, 8, true);
        s.generate(8, cbor::integer(7));
        log.lock().unwrap().push(s.mark_complete(8));
    });
    let connection = connection.expect("the handshake succeeds");
    assert_eq!(connection.version().minor, 16);
    let report = run_on(
        &connection,
        &settings(),
        "scripted",
        &mut |tc: &mut TestCase| {
            let n = tc.draw(gs::integers::<u8>().max_value(100));
            tc.assume(n != 3);
            assert!(n != 7, "seven");
        },
    )
    .expect_err("the scripted run fails");
    server.join().expect("the script ran to its end");
    assert!(
        report.contains("Minimal failing example:\n  draw 1 = 7\n"),
        "{report}"
    );
    assert!(report.contains("seven"), "{report}");
    let seen = seen.lock().unwrap();
    let statuses: Vec<&str> = seen.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(statuses, ["VALID", "INVALID", "INTERESTING", "INTERESTING"]);
    let origin = seen[2].1.as_deref().expect("an origin for a failure");
    assert!(origin.contains("remote_tests.rs:"), "{origin}");
    assert_eq!(seen[2].1, seen[3].1, "the replay has the same origin");
}

#[test]
fn after_stop_test_nothing_more_is_sent_on_the_test_case() {
    let (connection, server) = scripted("0.15", |s| {
        let (run, _) = s.run_test();
        s.test_case(run, 2, false);
        let (id, message) = s.request_on(2);
        assert_eq!(command(&message), "new_collection");
        s.reply(2, id, cbor::integer(0));
        let (id, message) = s.request_on(2);
        assert_eq!(command(&message), "start_span");
        s.reply(2, id, Cbor::Null);
        let (id, message) = s.request_on(2);
        assert_eq!(command(&message), "collection_more");
        s.reply(2, id, Cbor::Bool(true));
        // The element: a composite span, then the boolean.
        let (id, message) = s.request_on(2);
        assert_eq!(command(&message), "start_span");
        s.reply(2, id, Cbor::Null);
        let (id, message) = s.request_on(2);
        assert_eq!(command(&message), "generate");
        s.reply_error(2, id, "StopTest", "StopTest");
        // Were the client to send mark_complete (or anything) on stream 2,
        // the next packet would not be the reply to test_done.
        s.test_done(run, true, 0);
    });
    let connection = connection.expect("the handshake succeeds");
    let summary = run_on(
        &connection,
        &settings(),
        "scripted",
        &mut |tc: &mut TestCase| {
            // Elements drawn one by one: a collection, not one list schema.
            let element = gs::from_fn(|tc| tc.draw_silent(gs::booleans()));
            let _ = tc.draw(gs::vecs(element));
            panic!("the test case should have stopped");
        },
    )
    .expect("a stopped test case is not a failure");
    server.join().expect("the script ran to its end");
    assert_eq!(summary.test_cases, 3);
}

#[test]
fn replies_of_the_wrong_type_or_out_of_bounds_are_protocol_errors() {
    for (bad, what) in [
        (Cbor::Text("12".into()), "an integer within the bounds"),
        (cbor::integer(101), "an integer within the bounds"),
        (Cbor::Null, "an integer within the bounds"),
    ] {
        let (connection, server) = scripted("0.1", move |s| {
            let (run, _) = s.run_test();
            s.test_case(run, 2, false);
            s.generate(2, bad);
        });
        let connection = connection.expect("the handshake succeeds");
        let report = run_on(
            &connection,
            &settings(),
            "scripted",
            &mut |tc: &mut TestCase| {
                let _ = tc.draw(gs::integers::<u8>().max_value(100));
            },
        )
        .expect_err("a bad reply ends the run");
        server.join().expect("the script ran to its end");
        assert!(report.contains("protocol error"), "{report}");
        assert!(report.contains(what), "{report}");
    }
}

#[test]
fn an_error_reply_fails_the_test_case_with_the_servers_message() {
    let (connection, server) = scripted("0.15", |s| {
        let (run, _) = s.run_test();
        s.test_case(run, 2, false);
        let (id, _) = s.request_on(2);
        s.reply_error(2, id, "Unsupported schema", "ValueError");
        let (status, origin) = s.mark_complete(2);
        assert_eq!(status, "INTERESTING");
        assert_eq!(
            origin.as_deref(),
            Some("server error: ValueError in reply to generate")
        );
        s.test_done(run, false, 1);
        s.test_case(run, 4, true);
        let (id, _) = s.request_on(4);
        s.reply_error(4, id, "Unsupported schema", "ValueError");
        s.mark_complete(4);
    });
    let connection = connection.expect("the handshake succeeds");
    let report = run_on(
        &connection,
        &settings(),
        "scripted",
        &mut |tc: &mut TestCase| {
            let _ = tc.draw(gs::uuids());
        },
    )
    .expect_err("the failure is reported");
    server.join().expect("the script ran to its end");
    assert!(
        report.contains("the Hegel server replied to generate with ValueError: Unsupported schema"),
        "{report}"
    );
}

#[test]
fn unsupported_versions_and_bad_handshakes_are_refused() {
    for (reply, expected) in [
        ("0.9", "speaks protocol version 0.9"),
        ("1.0", "speaks protocol version 1.0"),
    ] {
        let (connection, server) = scripted(reply, |_| {});
        let error = connection
            .err()
            .expect("the version is refused")
            .to_string();
        assert!(error.contains(expected), "{error}");
        server.join().expect("the script ran");
    }
    assert!(matches!(
        version_from_handshake(b"HTTP/1.1 200 OK"),
        Err(WireError::Handshake(_))
    ));
    assert_eq!(
        version_from_handshake(b"Hegel/0.13").map(|v| v.minor).ok(),
        Some(13)
    );
}

/// A one-integer property passing on a scripted server behind `listener`.
fn passes_through_a_socket<L, S>(listener: L, accept: fn(&L) -> S, transport: Transport)
where
    L: Send + 'static,
    S: std::io::Read + Write + Send + 'static,
    S: TryCloneStream,
{
    let server = std::thread::spawn(move || {
        let stream = accept(&listener);
        let input = stream.try_clone_stream();
        serve(Box::new(input), Box::new(stream), b"Hegel/0.15", |s| {
            let (run, _) = s.run_test();
            s.test_case(run, 2, false);
            s.generate(2, cbor::integer(4));
            assert_eq!(s.mark_complete(2).0, "VALID");
            s.test_done(run, true, 0);
        })
    });
    let settings = settings().transport(transport);
    let summary = crate::run_property(&settings, &mut |tc: &mut TestCase| {
        assert_eq!(tc.draw(gs::integers::<u8>()), 4);
    })
    .expect("the scripted run passes");
    server.join().expect("the script ran to its end");
    assert_eq!(summary.test_cases, 3);
}

/// Streams whose two directions can be used from two places.
trait TryCloneStream: Sized {
    fn try_clone_stream(&self) -> Self;
}

impl TryCloneStream for std::os::unix::net::UnixStream {
    fn try_clone_stream(&self) -> Self {
        self.try_clone().expect("a second handle")
    }
}

impl TryCloneStream for std::net::TcpStream {
    fn try_clone_stream(&self) -> Self {
        self.try_clone().expect("a second handle")
    }
}

#[test]
fn a_running_server_is_reached_on_a_unix_socket_or_tcp() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("hegel.sock");
    let unix = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    passes_through_a_socket(
        unix,
        |l| l.accept().expect("accept").0,
        Transport::Connect(ServerAddress::unix(&path)),
    );
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = tcp.local_addr().expect("an address").to_string();
    passes_through_a_socket(
        tcp,
        |l| l.accept().expect("accept").0,
        Transport::Connect(ServerAddress::tcp(&address)),
    );
    let refused = crate::run_property(
        &settings().transport(Transport::Connect(ServerAddress::unix(
            dir.path().join("nobody"),
        ))),
        &mut |_tc: &mut TestCase| {},
    )
    .expect_err("nobody listens");
    assert!(
        refused.contains("cannot connect to the Hegel server at unix:"),
        "{refused}"
    );
}

#[test]
fn a_one_of_of_plain_generators_is_one_generate() {
    let (connection, server) = scripted("0.15", |s| {
        let (run, _) = s.run_test();
        s.test_case(run, 2, false);
        // The server draws the branch's integer; the client maps it.
        let schema = s.generate(2, Cbor::Array(vec![cbor::integer(1), cbor::integer(15)]));
        assert_eq!(
            cbor::map_get(&schema, "type").and_then(cbor::as_text),
            Some("one_of")
        );
        let Some(Cbor::Array(branches)) = cbor::map_get(&schema, "generators") else {
            panic!("no generators in {schema:?}");
        };
        assert_eq!(branches.len(), 3);
        assert_eq!(s.mark_complete(2).0, "VALID");
        s.test_done(run, true, 0);
    });
    let connection = connection.expect("the handshake succeeds");
    let mut seen = Vec::new();
    run_on(
        &connection,
        &settings(),
        "scripted",
        &mut |tc: &mut TestCase| {
            let v = tc.draw(gs::one_of(vec![
                gs::sampled_from(vec![100i64, 200]).boxed(),
                gs::integers::<i64>()
                    .min_value(10)
                    .max_value(20)
                    .map(|x| -x)
                    .boxed(),
                gs::booleans().map(i64::from).boxed(),
            ]));
            seen.push(v);
        },
    )
    .expect("the scripted run passes");
    server.join().expect("the script ran to its end");
    assert_eq!(seen, [-15]);
}

/// A list of `one_of`s is one `generate` of a list schema on a server that
/// answers a `one_of` with its branch's index (protocol 0.11 on), and is
/// drawn piece by piece on one that does not: the backend checks what a
/// whole schema needs, nested ones included.
#[test]
fn a_whole_schema_is_sent_only_to_a_server_that_answers_it() {
    for (version, expected) in [
        ("0.15", vec!["generate", "mark_complete"]),
        (
            "0.10",
            vec![
                "new_collection",
                "start_span",
                "collection_more",
                "stop_span",
                "mark_complete",
            ],
        ),
    ] {
        let commands = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&commands);
        let (connection, server) = scripted(version, move |s| {
            let (run, _) = s.run_test();
            s.test_case(run, 2, false);
            *log.lock().unwrap() = s.commands_until_complete(2);
            s.test_done(run, true, 0);
        });
        let connection = connection.expect("the handshake succeeds");
        run_on(
            &connection,
            &settings(),
            "scripted",
            &mut |tc: &mut TestCase| {
                let xs = tc.draw(gs::vecs(gs::one_of(vec![
                    gs::integers::<i64>().max_value(5).boxed(),
                    gs::booleans().map(i64::from).boxed(),
                ])));
                assert!(xs.is_empty());
            },
        )
        .expect("the scripted run passes");
        server.join().expect("the script ran to its end");
        assert_eq!(*commands.lock().unwrap(), expected, "protocol {version}");
    }
}
