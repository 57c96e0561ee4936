//! Protocol tests: a scripted client drives `serve` over a socket pair through
//! the whole lifecycle, every command, every schema and the bad inputs.

use geist_server::{ProtocolVersion, ServerConfig, serve};
use geist_wire::cbor::{self, Value};
use geist_wire::{Packet, PacketReader};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;
use std::time::Duration;

struct Client {
    writer: UnixStream,
    reader: PacketReader<UnixStream>,
    backlog: std::collections::VecDeque<Packet>,
    next_id: u32,
    server: Option<JoinHandle<Result<(), geist_server::ServeError>>>,
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    cbor::text_map(entries)
}

fn int(n: i128) -> Value {
    cbor::integer(n)
}

impl Client {
    fn start(config: ServerConfig) -> Client {
        let (ours, theirs) = UnixStream::pair().unwrap();
        ours.set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let input = theirs.try_clone().unwrap();
        let server = std::thread::spawn(move || serve(input, theirs, config));
        Client {
            reader: PacketReader::new(ours.try_clone().unwrap()),
            writer: ours,
            backlog: Default::default(),
            next_id: 1,
            server: Some(server),
        }
    }

    fn connected() -> Client {
        let mut c = Client::start(ServerConfig::default());
        let reply = c.handshake();
        assert_eq!(reply, b"Hegel/0.15");
        c
    }

    fn send(&mut self, packet: &Packet) {
        self.writer.write_all(&packet.to_bytes()).unwrap();
    }

    fn request(&mut self, stream: u32, payload: Vec<u8>) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&Packet::request(stream, id, payload));
        id
    }

    /// The next packet: one kept aside while awaiting a reply, else from the wire.
    fn read(&mut self) -> Option<Packet> {
        self.backlog
            .pop_front()
            .or_else(|| self.reader.read_packet().ok().flatten())
    }

    /// Waits for the reply to `id` on `stream`, keeping other packets for later.
    fn await_reply(&mut self, stream: u32, id: u32) -> Packet {
        loop {
            let p = self.reader.read_packet().ok().flatten().expect("reply");
            if p.is_reply && p.message_id == id && p.stream_id == stream {
                return p;
            }
            self.backlog.push_back(p);
        }
    }

    fn handshake(&mut self) -> Vec<u8> {
        self.request(0, b"hegel_handshake_start".to_vec());
        self.read().expect("handshake reply").payload
    }

    /// Sends a CBOR request and returns the decoded reply payload.
    fn call(&mut self, stream: u32, message: Value) -> Value {
        let id = self.request(stream, cbor::encode(&message));
        let p = self.await_reply(stream, id);
        cbor::decode(&p.payload).unwrap()
    }

    fn reply(&mut self, to: &Packet, value: Value) {
        let payload = cbor::encode(&map(vec![("result", value)]));
        self.send(&Packet::reply(to.stream_id, to.message_id, payload));
    }

    fn start_run(&mut self, stream: u32, extra: Vec<(&str, Value)>) {
        let mut fields = vec![
            ("command", text("run_test")),
            ("stream_id", int(stream as i128)),
            ("test_cases", int(20)),
            ("database", Value::Null),
            ("seed", int(1)),
        ];
        // Fields given by the test replace the defaults (a map has one entry per key).
        fields.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
        fields.extend(extra);
        let reply = self.call(0, map(fields));
        assert_eq!(
            cbor::map_get(&reply, "result"),
            Some(&Value::Bool(true)),
            "{reply:?}"
        );
    }

    /// Waits for the next event on a test stream and acknowledges it.
    fn next_event(&mut self) -> (String, Value) {
        let p = self.read().expect("event");
        assert!(!p.is_reply, "expected an event, got {p:?}");
        let v = cbor::decode(&p.payload).unwrap();
        let event = cbor::as_text(cbor::map_get(&v, "event").unwrap())
            .unwrap()
            .to_string();
        let ack = if event == "test_done" {
            Value::Bool(true)
        } else {
            Value::Null
        };
        self.reply(&p, ack);
        (event, v)
    }

    /// Runs test cases until test_done, answering each with `body`, and returns test_done.
    fn drive(&mut self, mut body: impl FnMut(&mut Client, u32, bool) -> &'static str) -> Value {
        loop {
            let (event, v) = self.next_event();
            if event == "test_done" {
                return cbor::map_get(&v, "results").unwrap().clone();
            }
            let case = case_stream(&v);
            let is_final = cbor::map_get(&v, "is_final") == Some(&Value::Bool(true));
            let status = body(self, case, is_final);
            if status == "STOPPED" {
                continue;
            }
            let mut fields = vec![("command", text("mark_complete")), ("status", text(status))];
            if status == "INTERESTING" {
                fields.push(("origin", text("test.rs:1")));
            }
            let reply = self.call(case, map(fields));
            assert_eq!(cbor::map_get(&reply, "result"), Some(&Value::Null));
            self.send(&Packet::stream_close(case));
        }
    }

    fn finish(mut self) -> Result<(), geist_server::ServeError> {
        let _ = self.writer.shutdown(std::net::Shutdown::Both);
        self.server.take().unwrap().join().unwrap()
    }
}

/// The test case stream a `test_case` event announces.
fn case_stream(event: &Value) -> u32 {
    cbor::as_i128(cbor::map_get(event, "stream_id").expect("stream_id")).expect("integer") as u32
}

fn generate(c: &mut Client, case: u32, schema: Value) -> Value {
    c.call(
        case,
        map(vec![("command", text("generate")), ("schema", schema)]),
    )
}

fn result(reply: &Value) -> &Value {
    cbor::map_get(reply, "result").unwrap_or_else(|| panic!("no result in {reply:?}"))
}

fn error_type(reply: &Value) -> Option<&str> {
    cbor::map_get(reply, "type").and_then(cbor::as_text)
}

#[test]
fn handshake_announces_the_chosen_version() {
    let mut c = Client::start(ServerConfig {
        version: ProtocolVersion::parse("0.12").unwrap(),
        ..ServerConfig::default()
    });
    assert_eq!(c.handshake(), b"Hegel/0.12");
    c.finish().unwrap();
    assert!(ProtocolVersion::parse("0.9").is_err());
    assert!(ProtocolVersion::parse("banana").is_err());
}

#[test]
fn bad_handshake_is_refused() {
    let mut c = Client::start(ServerConfig::default());
    c.request(0, b"hello".to_vec());
    let reply = c.read().unwrap();
    let v = cbor::decode(&reply.payload).unwrap();
    assert!(format!("{v:?}").contains("Bad handshake"));
    assert!(c.finish().is_err());
}

#[test]
fn a_passing_run_counts_its_test_cases() {
    let mut c = Client::connected();
    c.start_run(1, vec![]);
    let mut cases = 0;
    let done = c.drive(|c, case, _| {
        cases += 1;
        let v = generate(
            c,
            case,
            map(vec![
                ("type", text("integer")),
                ("min_value", int(0)),
                ("max_value", int(9)),
            ]),
        );
        let n = cbor::as_i128(result(&v)).unwrap();
        assert!((0..=9).contains(&n));
        "VALID"
    });
    assert_eq!(cbor::map_get(&done, "passed"), Some(&Value::Bool(true)));
    let count = cbor::as_i128(cbor::map_get(&done, "test_cases").unwrap()).unwrap();
    assert_eq!(count, cases);
    assert!(
        cases <= 20,
        "a 10-value space is exhausted early, ran {cases}"
    );
    for field in [
        "valid_test_cases",
        "invalid_test_cases",
        "interesting_test_cases",
        "seed",
    ] {
        assert!(cbor::map_get(&done, field).is_some(), "{field} missing");
    }
    c.finish().unwrap();
}

#[test]
fn a_failure_is_shrunk_then_replayed_as_final() {
    let mut c = Client::connected();
    c.start_run(3, vec![("test_cases", int(200))]);
    let mut finals = Vec::new();
    let done = c.drive(|c, case, is_final| {
        let v = generate(c, case, map(vec![("type", text("integer"))]));
        let n = cbor::as_i128(result(&v)).unwrap();
        if is_final {
            finals.push(n);
        }
        if n >= 1000 { "INTERESTING" } else { "VALID" }
    });
    assert_eq!(cbor::map_get(&done, "passed"), Some(&Value::Bool(false)));
    assert_eq!(
        cbor::as_i128(cbor::map_get(&done, "interesting_test_cases").unwrap()),
        Some(1)
    );
    // After test_done the final replay comes: drive it.
    let (event, v) = c.next_event();
    assert_eq!(event, "test_case");
    assert_eq!(cbor::map_get(&v, "is_final"), Some(&Value::Bool(true)));
    let case = case_stream(&v);
    assert_eq!(case % 2, 0, "server streams are even");
    let n = cbor::as_i128(result(&generate(
        &mut c,
        case,
        map(vec![("type", text("integer"))]),
    )))
    .unwrap();
    assert_eq!(n, 1000, "shrunk to the boundary");
    assert!(finals.is_empty());
    c.finish().unwrap();
}

/// Whether a generated value has the shape its schema promises.
type ShapeCheck = fn(&Value) -> bool;

#[test]
fn every_schema_generates_the_documented_shape() {
    let mut c = Client::connected();
    c.start_run(5, vec![("test_cases", int(1))]);
    let (event, v) = c.next_event();
    assert_eq!(event, "test_case");
    let case = case_stream(&v);
    let schema = |kind: &str, extra: Vec<(&str, Value)>| {
        let mut fields = vec![("type", text(kind))];
        fields.extend(extra);
        map(fields)
    };
    let cases: Vec<(Value, ShapeCheck)> = vec![
        (schema("constant", vec![("value", int(7))]), |v| {
            cbor::as_i128(v) == Some(7)
        }),
        (
            schema(
                "sampled_from",
                vec![("values", Value::Array(vec![text("a"), text("b")]))],
            ),
            |v| matches!(cbor::as_text(v), Some("a" | "b")),
        ),
        (
            schema(
                "one_of",
                vec![(
                    "generators",
                    Value::Array(vec![schema("null", vec![]), schema("boolean", vec![])]),
                )],
            ),
            |v| matches!(v, Value::Array(pair) if pair.len() == 2),
        ),
        (schema("null", vec![]), |v| *v == Value::Null),
        (schema("boolean", vec![("p", Value::Float(1.0))]), |v| {
            *v == Value::Bool(true)
        }),
        (
            schema(
                "integer",
                vec![("min_value", int(1 << 70)), ("max_value", int(1 << 71))],
            ),
            |v| matches!(v, Value::Tag(2, _)) && cbor::as_i128(v).is_some_and(|n| n >= 1 << 70),
        ),
        (
            schema(
                "float",
                vec![
                    ("min_value", Value::Float(0.0)),
                    ("max_value", Value::Float(1.0)),
                    ("exclude_max", Value::Bool(true)),
                ],
            ),
            |v| cbor::as_f64(v).is_some_and(|f| (0.0..1.0).contains(&f)),
        ),
        (schema("float", vec![("width", int(32))]), |v| {
            cbor::as_f64(v).is_some_and(|f| f.is_nan() || (f as f32) as f64 == f)
        }),
        (
            schema(
                "string",
                vec![
                    ("min_size", int(2)),
                    ("max_size", int(2)),
                    ("codec", text("ascii")),
                ],
            ),
            |v| matches!(v, Value::Tag(91, b) if matches!(b.as_ref(), Value::Bytes(bytes) if bytes.len() == 2)),
        ),
        (
            schema("binary", vec![("min_size", int(3)), ("max_size", int(3))]),
            |v| matches!(v, Value::Bytes(b) if b.len() == 3),
        ),
        (
            schema(
                "regex",
                vec![
                    ("pattern", text("[a-c]{3}")),
                    ("fullmatch", Value::Bool(true)),
                ],
            ),
            |v| {
                cbor::as_text(v)
                    .is_some_and(|s| s.len() == 3 && s.chars().all(|c| ('a'..='c').contains(&c)))
            },
        ),
        (
            schema(
                "list",
                vec![
                    ("elements", schema("boolean", vec![])),
                    ("min_size", int(2)),
                    ("max_size", int(2)),
                ],
            ),
            |v| matches!(v, Value::Array(items) if items.len() == 2),
        ),
        (
            schema(
                "list",
                vec![
                    (
                        "elements",
                        schema(
                            "integer",
                            vec![("min_value", int(0)), ("max_value", int(3))],
                        ),
                    ),
                    ("min_size", int(4)),
                    ("unique", Value::Bool(true)),
                ],
            ),
            |v| {
                let Value::Array(items) = v else { return false };
                let mut xs: Vec<i128> = items.iter().filter_map(cbor::as_i128).collect();
                xs.sort();
                xs == [0, 1, 2, 3]
            },
        ),
        (
            schema(
                "dict",
                vec![
                    ("keys", schema("integer", vec![])),
                    ("values", schema("null", vec![])),
                    ("min_size", int(1)),
                ],
            ),
            |v| matches!(v, Value::Array(entries) if !entries.is_empty() && entries.iter().all(|e| matches!(e, Value::Array(kv) if kv.len() == 2))),
        ),
        (
            schema(
                "tuple",
                vec![(
                    "elements",
                    Value::Array(vec![schema("null", vec![]), schema("boolean", vec![])]),
                )],
            ),
            |v| matches!(v, Value::Array(items) if items.len() == 2 && items[0] == Value::Null),
        ),
        (schema("email", vec![]), |v| {
            cbor::as_text(v).is_some_and(|s| s.contains('@'))
        }),
        (schema("url", vec![]), |v| {
            cbor::as_text(v).is_some_and(|s| s.starts_with("http"))
        }),
        (schema("domain", vec![("max_length", int(20))]), |v| {
            cbor::as_text(v).is_some_and(|s| s.len() <= 20 && s.contains('.'))
        }),
        (schema("ipv4", vec![]), |v| {
            cbor::as_text(v).is_some_and(|s| s.parse::<std::net::Ipv4Addr>().is_ok())
        }),
        (schema("ipv6", vec![]), |v| {
            cbor::as_text(v).is_some_and(|s| s.parse::<std::net::Ipv6Addr>().is_ok())
        }),
        (schema("ip_address", vec![("version", int(4))]), |v| {
            cbor::as_text(v).is_some_and(|s| s.parse::<std::net::Ipv4Addr>().is_ok())
        }),
        (schema("date", vec![]), |v| {
            cbor::as_text(v).is_some_and(|s| s.len() == 10 && &s[4..5] == "-")
        }),
        (schema("time", vec![]), |v| {
            cbor::as_text(v).is_some_and(|s| &s[2..3] == ":")
        }),
        (schema("datetime", vec![]), |v| {
            cbor::as_text(v).is_some_and(|s| s.contains('T'))
        }),
        (schema("uuid", vec![("version", int(4))]), |v| {
            cbor::as_text(v).is_some_and(|s| s.len() == 36 && &s[14..15] == "4")
        }),
        (
            schema(
                "fraction",
                vec![("min_value", int(0)), ("max_value", int(1))],
            ),
            |v| {
                let Value::Array(p) = v else { return false };
                let (n, d) = (cbor::as_i128(&p[0]).unwrap(), cbor::as_i128(&p[1]).unwrap());
                d > 0 && n >= 0 && n <= d
            },
        ),
        (
            schema(
                "json_schema",
                vec![(
                    "schema",
                    map(vec![("type", text("integer")), ("minimum", int(5))]),
                )],
            ),
            |v| cbor::as_i128(v).is_some_and(|n| n >= 5),
        ),
        (
            schema("complex", vec![("max_magnitude", Value::Float(2.0))]),
            |v| {
                let Value::Array(p) = v else { return false };
                let (re, im) = (cbor::as_f64(&p[0]).unwrap(), cbor::as_f64(&p[1]).unwrap());
                re.hypot(im) <= 2.0 + 1e-9
            },
        ),
    ];
    for (schema, check) in cases {
        let reply = generate(&mut c, case, schema.clone());
        let value = result(&reply);
        assert!(check(value), "{schema:?} gave {value:?}");
    }
    // Invalid schemas are InvalidArgument errors, and the stream carries on.
    for bad in [
        schema(
            "integer",
            vec![("min_value", int(5)), ("max_value", int(1))],
        ),
        schema("sampled_from", vec![("values", Value::Array(vec![]))]),
        schema("one_of", vec![("generators", Value::Array(vec![]))]),
        schema("string", vec![("min_size", int(3)), ("max_size", int(1))]),
        schema(
            "float",
            vec![
                ("min_value", Value::Float(0.0)),
                ("allow_nan", Value::Bool(true)),
            ],
        ),
        schema("regex", vec![("pattern", text("("))]),
        schema("no_such_type", vec![]),
        text("not a map"),
    ] {
        let reply = generate(&mut c, case, bad.clone());
        assert!(
            cbor::map_get(&reply, "error").is_some(),
            "{bad:?} gave {reply:?}"
        );
        assert_eq!(error_type(&reply), Some("InvalidArgument"), "{bad:?}");
    }
    let reply = c.call(
        case,
        map(vec![
            ("command", text("mark_complete")),
            ("status", text("VALID")),
        ]),
    );
    assert_eq!(result(&reply), &Value::Null);
    let (event, v) = c.next_event();
    assert_eq!(event, "test_done", "{v:?}");
    c.finish().unwrap();
}

#[test]
fn the_reference_version_tags_strings_with_6() {
    let mut c = Client::start(ServerConfig {
        version: ProtocolVersion::parse("0.1").unwrap(),
        ..ServerConfig::default()
    });
    assert_eq!(c.handshake(), b"Hegel/0.1");
    c.start_run(1, vec![("test_cases", int(1))]);
    let (_, v) = c.next_event();
    let case = case_stream(&v);
    let reply = generate(
        &mut c,
        case,
        map(vec![("type", text("string")), ("min_size", int(1))]),
    );
    assert!(matches!(result(&reply), Value::Tag(6, _)));
}

/// hegel-core 0.4.x (protocol 0.10) answers `one_of` with the value alone;
/// `[index, value]` began with protocol 0.11 (hegel-core 0.5.0), nested
/// `one_of`s included.
#[test]
fn one_of_answers_the_bare_value_before_protocol_0_11() {
    let branch = |n: i128| {
        map(vec![
            ("type", text("integer")),
            ("min_value", int(n)),
            ("max_value", int(n)),
        ])
    };
    let one_of = map(vec![
        ("type", text("one_of")),
        ("generators", Value::Array(vec![branch(10), branch(11)])),
    ]);
    let schema = map(vec![
        ("type", text("list")),
        ("elements", one_of.clone()),
        ("min_size", int(4)),
        ("max_size", int(4)),
    ]);
    for (version, indexed) in [("0.10", false), ("0.11", true), ("0.16", true)] {
        let mut c = Client::start(ServerConfig {
            version: ProtocolVersion::parse(version).unwrap(),
            ..ServerConfig::default()
        });
        c.handshake();
        c.start_run(1, vec![("test_cases", int(1))]);
        let (_, v) = c.next_event();
        let case = case_stream(&v);
        for reply in [
            generate(&mut c, case, schema.clone()),
            generate(
                &mut c,
                case,
                map(vec![
                    ("type", text("tuple")),
                    ("elements", Value::Array(vec![one_of.clone()])),
                ]),
            ),
        ] {
            let Value::Array(items) = result(&reply) else {
                panic!("{version}: not an array: {reply:?}")
            };
            assert!(!items.is_empty());
            for item in items {
                let value = if indexed {
                    let Value::Array(pair) = item else {
                        panic!("{version}: {item:?} is not [index, value]")
                    };
                    assert_eq!(pair.len(), 2, "{version}: {pair:?}");
                    let index = cbor::as_i128(&pair[0]).expect("an integer index");
                    let value = cbor::as_i128(&pair[1]).expect("an integer value");
                    assert_eq!(value, 10 + index, "{version}: {pair:?}");
                    value
                } else {
                    cbor::as_i128(item).unwrap_or_else(|| panic!("{version}: {item:?} is not bare"))
                };
                assert!((10..=11).contains(&value), "{version}: {value}");
            }
        }
    }
}

#[test]
fn spans_targets_collections_and_pools() {
    let mut c = Client::connected();
    c.start_run(7, vec![("test_cases", int(5))]);
    let mut first = true;
    let done = c.drive(|c, case, _| {
        let ok = |v: &Value| assert_eq!(result(v), &Value::Null, "{v:?}");
        ok(&c.call(
            case,
            map(vec![("command", text("start_span")), ("label", int(42))]),
        ));
        ok(&c.call(
            case,
            map(vec![
                ("command", text("stop_span")),
                ("discard", Value::Bool(false)),
            ]),
        ));
        ok(&c.call(
            case,
            map(vec![
                ("command", text("target")),
                ("value", Value::Float(1.5)),
                ("label", text("x")),
            ]),
        ));
        let id = result(&c.call(
            case,
            map(vec![
                ("command", text("new_collection")),
                ("min_size", int(2)),
                ("max_size", int(3)),
            ]),
        ))
        .clone();
        let mut n = 0;
        while result(&c.call(
            case,
            map(vec![
                ("command", text("collection_more")),
                ("collection_id", id.clone()),
            ]),
        )) == &Value::Bool(true)
        {
            n += 1;
            assert!(n <= 3);
        }
        assert!(n >= 2);
        let pool = result(&c.call(case, map(vec![("command", text("new_pool"))]))).clone();
        let a = result(&c.call(
            case,
            map(vec![
                ("command", text("pool_add")),
                ("pool_id", pool.clone()),
            ]),
        ))
        .clone();
        let drawn = result(&c.call(
            case,
            map(vec![
                ("command", text("pool_generate")),
                ("pool_id", pool.clone()),
                ("consume", Value::Bool(true)),
            ]),
        ))
        .clone();
        assert_eq!(drawn, a);
        if std::mem::take(&mut first) {
            // The pool is now empty: drawing from it stops the test case.
            let reply = c.call(
                case,
                map(vec![("command", text("pool_generate")), ("pool_id", pool)]),
            );
            assert_eq!(error_type(&reply), Some("StopTest"), "{reply:?}");
            return "STOPPED";
        }
        "VALID"
    });
    assert_eq!(cbor::map_get(&done, "passed"), Some(&Value::Bool(true)));
    c.finish().unwrap();
}

/// A `run_test` on an even stream id: the server refuses it with a reply
/// (a way to see that the connection still serves the control stream).
fn refused_run(c: &mut Client) -> &'static str {
    let reply = c.call(
        0,
        map(vec![
            ("command", text("run_test")),
            ("stream_id", int(2)),
            ("test_cases", int(1)),
        ]),
    );
    assert!(format!("{reply:?}").contains("must be odd"), "{reply:?}");
    "must be odd"
}

/// hegel-core (every release, protocol 0.10 to 0.16) ends the connection on
/// a control message that is not one of its control commands (0.10.0's
/// test_unknown_command); the reference version (0.1) answers it with an
/// error and goes on.
#[test]
fn an_unknown_control_command_ends_the_connection_as_hegel_core_does() {
    let messages: [(&str, Vec<u8>); 4] = [
        (
            "unknown",
            cbor::encode(&map(vec![("command", text("frobnicate"))])),
        ),
        (
            "no command",
            cbor::encode(&map(vec![("stream_id", int(1))])),
        ),
        ("not CBOR", vec![0xFF, 0x00]),
        // single_test_case began with protocol 0.13.
        (
            "single_test_case",
            cbor::encode(&map(vec![
                ("command", text("single_test_case")),
                ("stream_id", int(1)),
            ])),
        ),
    ];
    for version in ["0.1", "0.10", "0.12", "0.16"] {
        for (what, payload) in &messages {
            let mut c = Client::start(ServerConfig {
                version: ProtocolVersion::parse(version).unwrap(),
                ..ServerConfig::default()
            });
            c.handshake();
            let id = c.request(0, payload.clone());
            if version == "0.1" || (*what == "single_test_case" && version == "0.16") {
                let p = c.read().expect("a reply");
                assert_eq!(p.message_id, id, "{version} {what}");
                if *what != "single_test_case" {
                    let reply = cbor::decode(&p.payload).unwrap();
                    assert!(
                        cbor::map_get(&reply, "error").is_some(),
                        "{version} {what}: {reply:?}"
                    );
                }
                continue;
            }
            // serve returns at once (in geist-server the process exits) ...
            let server = c.server.take().unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !server.is_finished() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{version} {what}: the server goes on serving the connection"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            // ... with an error naming why (geist-server prints it and exits 1).
            let outcome = server.join().unwrap();
            match outcome {
                Err(geist_server::ServeError::ControlRefused(reason)) => assert!(
                    [
                        "Unknown command: frobnicate",
                        "without a \"command\"",
                        "not CBOR",
                        "Unknown command: single_test_case"
                    ]
                    .iter()
                    .any(|w| reason.contains(w)),
                    "{version} {what}: {reason}"
                ),
                other => panic!("{version} {what}: {other:?}"),
            }
            // ... having sent nothing: once our side closes, the socket is at its end.
            c.writer.shutdown(std::net::Shutdown::Write).unwrap();
            let after = c.read();
            assert!(
                after.is_none(),
                "{version} {what}: the server replied {after:?}"
            );
        }
    }
}

#[test]
fn unknown_commands_and_usage_errors_get_error_replies() {
    let mut c = Client::connected();
    // An even (server-side) stream id for run_test is refused.
    let reply = c.call(
        0,
        map(vec![
            ("command", text("run_test")),
            ("stream_id", int(2)),
            ("test_cases", int(1)),
        ]),
    );
    assert!(format!("{reply:?}").contains("must be odd"), "{reply:?}");
    // Missing test_cases.
    let reply = c.call(
        0,
        map(vec![("command", text("run_test")), ("stream_id", int(9))]),
    );
    assert!(cbor::map_get(&reply, "error").is_some());
    // A request on a stream nobody opened.
    let reply = c.call(77, map(vec![("command", text("generate"))]));
    assert!(format!("{reply:?}").contains("not registered"), "{reply:?}");
    // Unknown phases and health checks end the run with an error result.
    c.start_run(
        11,
        vec![(
            "phases",
            Value::Array(vec![text("generate"), text("dance")]),
        )],
    );
    let (event, v) = c.next_event();
    assert_eq!(event, "test_done");
    assert!(format!("{v:?}").contains("Unknown phase"));
    c.start_run(
        13,
        vec![("suppress_health_check", Value::Array(vec![text("nope")]))],
    );
    let (_, v) = c.next_event();
    assert!(format!("{v:?}").contains("Unknown health check"));
    c.finish().unwrap();
}

#[test]
fn a_bad_checksum_is_answered_and_the_connection_continues() {
    let mut c = Client::connected();
    let mut bytes =
        Packet::request(0, 50, cbor::encode(&map(vec![("command", text("x"))]))).to_bytes();
    bytes[4] ^= 0xFF;
    c.writer.write_all(&bytes).unwrap();
    let p = c.read().unwrap();
    assert!(format!("{:?}", cbor::decode(&p.payload).unwrap()).contains("checksum"));
    // Still alive.
    assert_eq!(refused_run(&mut c), "must be odd");
    c.finish().unwrap();
}

#[test]
fn framing_errors_close_the_connection_cleanly() {
    for damage in ["magic", "length", "truncated", "terminator"] {
        let mut c = Client::connected();
        let mut bytes = Packet::request(0, 9, vec![0xA0]).to_bytes();
        match damage {
            "magic" => bytes[0] = b'X',
            "length" => bytes[16..20].copy_from_slice(&u32::MAX.to_be_bytes()),
            "truncated" => bytes.truncate(12),
            _ => *bytes.last_mut().unwrap() = 0,
        }
        c.writer.write_all(&bytes).unwrap();
        if damage == "truncated" {
            c.writer.shutdown(std::net::Shutdown::Write).unwrap();
        }
        assert!(
            c.read().is_none(),
            "{damage}: the server closes without replying"
        );
        let outcome = c.server.take().unwrap().join().unwrap();
        assert!(
            outcome.is_err(),
            "{damage}: serve reports the framing error"
        );
    }
}

#[test]
fn a_silent_client_times_out_and_a_vanished_one_ends_the_run() {
    let mut c = Client::start(ServerConfig {
        stream_timeout: Duration::from_millis(200),
        ..ServerConfig::default()
    });
    c.handshake();
    c.start_run(1, vec![]);
    // Read the test_case event but never answer it: the run gives up.
    let p = c.read().unwrap();
    assert!(!p.is_reply);
    std::thread::sleep(Duration::from_millis(400));
    // The connection still serves other commands.
    assert_eq!(refused_run(&mut c), "must be odd");
    // Start another run, take one test case, then vanish mid test case.
    c.start_run(3, vec![]);
    let _ = c.read().unwrap();
    c.finish().unwrap();
}

#[test]
fn concurrent_runs_share_one_connection() {
    let mut c = Client::connected();
    c.start_run(1, vec![("test_cases", int(10))]);
    c.start_run(3, vec![("test_cases", int(10))]);
    // Both runs send test_case events concurrently; the client keeps packets
    // that arrive while it awaits a reply and handles them in order.
    let mut done = 0;
    let mut pending_cases: Vec<u32> = Vec::new();
    while done < 2 {
        let p = c.read().expect("packet");
        let v = cbor::decode(&p.payload).unwrap();
        match cbor::map_get(&v, "event").and_then(cbor::as_text) {
            Some("test_done") => {
                c.reply(&p, Value::Bool(true));
                done += 1;
            }
            Some("test_case") => {
                c.reply(&p, Value::Null);
                let case = case_stream(&v);
                pending_cases.push(case);
                let reply = generate(&mut c, case, map(vec![("type", text("boolean"))]));
                assert!(matches!(result(&reply), Value::Bool(_)));
                let reply = c.call(
                    case,
                    map(vec![
                        ("command", text("mark_complete")),
                        ("status", text("VALID")),
                    ]),
                );
                assert_eq!(result(&reply), &Value::Null);
                c.send(&Packet::stream_close(case));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    pending_cases.sort();
    pending_cases.dedup();
    assert!(pending_cases.len() >= 4, "both runs ran test cases");
    c.finish().unwrap();
}

#[test]
fn failure_blobs_replay_the_failure() {
    let mut c = Client::connected();
    c.start_run(1, vec![("test_cases", int(200))]);
    let failing = |c: &mut Client, case: u32, _| {
        let v = generate(c, case, map(vec![("type", text("integer"))]));
        if cbor::as_i128(result(&v)).unwrap() >= 1000 {
            "INTERESTING"
        } else {
            "VALID"
        }
    };
    let done = c.drive(failing);
    let Some(Value::Array(blobs)) = cbor::map_get(&done, "failure_blobs") else {
        panic!("no failure_blobs in {done:?}")
    };
    assert_eq!(blobs.len(), 1);
    let blob = blobs[0].clone();
    // The final replay of the first run.
    let (_, v) = c.next_event();
    let case = case_stream(&v);
    generate(&mut c, case, map(vec![("type", text("integer"))]));
    c.call(
        case,
        map(vec![
            ("command", text("mark_complete")),
            ("status", text("INTERESTING")),
            ("origin", text("o")),
        ]),
    );
    // A second run given the blob replays exactly that failure once.
    c.start_run(3, vec![("failure_blob", blob)]);
    let mut seen = Vec::new();
    let done = c.drive(|c, case, _| {
        let v = generate(c, case, map(vec![("type", text("integer"))]));
        let n = cbor::as_i128(result(&v)).unwrap();
        seen.push(n);
        if n >= 1000 { "INTERESTING" } else { "VALID" }
    });
    assert_eq!(seen, vec![1000]);
    assert_eq!(cbor::map_get(&done, "passed"), Some(&Value::Bool(false)));
    // Its final replay.
    let (event, v) = c.next_event();
    assert_eq!(event, "test_case");
    assert_eq!(cbor::map_get(&v, "is_final"), Some(&Value::Bool(true)));
    let case = case_stream(&v);
    let v = generate(&mut c, case, map(vec![("type", text("integer"))]));
    assert_eq!(cbor::as_i128(result(&v)), Some(1000));
    c.call(
        case,
        map(vec![
            ("command", text("mark_complete")),
            ("status", text("INTERESTING")),
            ("origin", text("o")),
        ]),
    );
    // A corrupt blob is an error result, not a crash.
    c.start_run(5, vec![("failure_blob", text("bm90IGEgYmxvYg=="))]);
    let (event, v) = c.next_event();
    assert_eq!(event, "test_done");
    assert!(format!("{v:?}").contains("failure_blob"), "{v:?}");
    c.finish().unwrap();
}

#[test]
fn state_machines_pick_rules_in_protocol_0_16() {
    let mut c = Client::start(ServerConfig {
        version: ProtocolVersion::parse("0.16").unwrap(),
        ..ServerConfig::default()
    });
    assert_eq!(c.handshake(), b"Hegel/0.16");
    c.start_run(1, vec![("test_cases", int(20))]);
    let mut seen = std::collections::HashSet::new();
    let done = c.drive(|c, case, _| {
        let names = Value::Array(vec![text("push"), text("pop"), text("peek")]);
        let reply = c.call(
            case,
            map(vec![
                ("command", text("new_state_machine")),
                ("rule_names", names),
                ("invariant_names", Value::Array(vec![])),
            ]),
        );
        let id = result(&reply).clone();
        for _ in 0..5 {
            let reply = c.call(
                case,
                map(vec![
                    ("command", text("state_machine_next_rule")),
                    ("state_machine_id", id.clone()),
                ]),
            );
            let rule = cbor::as_i128(result(&reply)).unwrap();
            assert!((0..3).contains(&rule));
            seen.insert(rule);
        }
        let empty = c.call(
            case,
            map(vec![
                ("command", text("new_state_machine")),
                ("rule_names", Value::Array(vec![])),
            ]),
        );
        assert_eq!(error_type(&empty), Some("InvalidArgument"));
        "VALID"
    });
    assert_eq!(cbor::map_get(&done, "passed"), Some(&Value::Bool(true)));
    assert_eq!(seen.len(), 3, "every rule gets picked");
    c.finish().unwrap();
}

/// The error message of an error reply, if it is one.
fn error_message(reply: &Value) -> String {
    cbor::map_get(reply, "error")
        .and_then(cbor::as_text)
        .unwrap_or_else(|| panic!("not an error reply: {reply:?}"))
        .to_string()
}

#[test]
fn a_run_the_server_cannot_finish_ends_with_test_done_and_a_closed_stream() {
    for how in ["error reply", "not CBOR", "silence"] {
        let mut c = Client::start(ServerConfig {
            stream_timeout: Duration::from_millis(300),
            ..ServerConfig::default()
        });
        c.handshake();
        c.start_run(1, vec![]);
        let event = c.read().unwrap();
        assert!(!event.is_reply && event.stream_id == 1, "{how}: {event:?}");
        match how {
            "error reply" => {
                let payload = cbor::encode(&map(vec![
                    ("error", text("the client could not run it")),
                    ("type", text("ValueError")),
                ]));
                c.send(&Packet::reply(1, event.message_id, payload));
            }
            "not CBOR" => c.send(&Packet::reply(1, event.message_id, vec![0xFF, 0x00])),
            _ => {}
        }
        let done = c.read().expect("a test_done after the failure");
        assert!(!done.is_reply && done.stream_id == 1, "{how}: {done:?}");
        let done = cbor::decode(&done.payload).unwrap();
        assert_eq!(
            cbor::map_get(&done, "event").and_then(cbor::as_text),
            Some("test_done"),
            "{how}: {done:?}"
        );
        let results = cbor::map_get(&done, "results").unwrap();
        assert_eq!(cbor::map_get(results, "passed"), Some(&Value::Bool(false)));
        let error = cbor::map_get(results, "error")
            .and_then(cbor::as_text)
            .unwrap_or_else(|| panic!("{how}: no error in {results:?}"));
        assert!(
            error.contains("ended on the server's side"),
            "{how}: {error}"
        );
        let close = c.read().expect("the run's stream is closed");
        assert!(
            close.is_stream_close() && close.stream_id == 1,
            "{how}: {close:?}"
        );
        c.finish().unwrap();
    }
}

#[test]
fn runs_beyond_the_limit_are_refused_naming_it() {
    let mut c = Client::start(ServerConfig {
        max_runs: 1,
        ..ServerConfig::default()
    });
    c.handshake();
    c.start_run(1, vec![("test_cases", int(3))]);
    let second = map(vec![
        ("command", text("run_test")),
        ("stream_id", int(3)),
        ("test_cases", int(3)),
        ("database", Value::Null),
    ]);
    let reply = c.call(0, second.clone());
    let message = error_message(&reply);
    assert!(
        message.contains("at most 1") && message.contains("--max-runs"),
        "{message}"
    );
    let done = c.drive(|_, _, _| "VALID");
    assert_eq!(cbor::map_get(&done, "passed"), Some(&Value::Bool(true)));
    // Once the first run's thread is done, the slot is free again.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let reply = c.call(0, second.clone());
        if cbor::map_get(&reply, "result") == Some(&Value::Bool(true)) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{reply:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    let done = c.drive(|_, _, _| "VALID");
    assert_eq!(cbor::map_get(&done, "passed"), Some(&Value::Bool(true)));
    c.finish().unwrap();
}

#[test]
fn huge_generate_requests_are_refused_naming_the_limit() {
    let mut c = Client::connected();
    c.start_run(1, vec![("test_cases", int(1))]);
    let (_, event) = c.next_event();
    let case = case_stream(&event);
    let sized = |kind: &str, min: i128| map(vec![("type", text(kind)), ("min_size", int(min))]);
    let started = std::time::Instant::now();
    for schema in [
        sized("string", 1_000_000_000),
        sized("binary", 1_000_000_000),
        // Each part is small; together they are not.
        map(vec![
            ("type", text("list")),
            ("min_size", int(1000)),
            ("elements", sized("binary", 10_000)),
        ]),
    ] {
        let reply = generate(&mut c, case, schema.clone());
        assert_eq!(error_type(&reply), Some("InvalidArgument"), "{reply:?}");
        let message = error_message(&reply);
        assert!(
            message.contains("1000000") && message.contains("--max-generated-size"),
            "{message}"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    // A large max_size is lowered to the limit, not refused.
    let reply = generate(
        &mut c,
        case,
        map(vec![
            ("type", text("binary")),
            ("max_size", int(1_000_000_000_000)),
        ]),
    );
    assert!(matches!(result(&reply), Value::Bytes(_)), "{reply:?}");
    c.finish().unwrap();
}

#[test]
fn misleading_messages_say_what_is_wrong() {
    let mut c = Client::connected();
    // test_cases of 2^64 is too large, not negative.
    let reply = c.call(
        0,
        map(vec![
            ("command", text("run_test")),
            ("stream_id", int(1)),
            ("test_cases", int(1 << 64)),
        ]),
    );
    let message = error_message(&reply);
    assert!(
        message.contains("at most") && !message.contains("non-negative"),
        "{message}"
    );
    c.finish().unwrap();
    // A second handshake is named as such, not as trailing bytes (where the
    // server answers rather than closing: the reference version).
    let mut c = Client::start(ServerConfig {
        version: ProtocolVersion::parse("0.1").unwrap(),
        ..ServerConfig::default()
    });
    c.handshake();
    let id = c.request(0, b"hegel_handshake_start".to_vec());
    let reply = c.await_reply(0, id);
    let message = error_message(&cbor::decode(&reply.payload).unwrap());
    assert!(message.contains("handshake was already done"), "{message}");
    c.finish().unwrap();
}
