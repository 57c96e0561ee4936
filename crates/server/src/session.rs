//! Test runs on a connection: `run_test` and `single_test_case`.
//!
//! A run drives the engine with a test function that, for each test case,
//! opens a server stream, announces it to the client with a `test_case` event,
//! and answers the client's commands (`generate`, spans, collections, pools,
//! `target`) from the engine until `mark_complete`. When the engine is done it
//! sends `test_done` and replays each failure with `is_final: true`.

use crate::connection::{Connection, Stream, StreamError};
use crate::convert::{from_cbor, to_cbor};
use geist_engine::data::Collection;
use geist_engine::database::DirectoryDatabase;
use geist_engine::generate::{Schema, SchemaError, generate};
use geist_engine::pool::Pool;
use geist_engine::run::{DatabaseHandle, HealthCheck, Phases, RunSettings, run_with_database};
use geist_engine::state_machine::StateMachine;
use geist_engine::{Status, TestData};
use geist_wire::cbor::{self, Value as Cbor};
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::Arc;

/// A validated `run_test` request.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// Number of valid test cases wanted.
    pub test_cases: u64,
    /// Explicit seed.
    pub seed: Option<u128>,
    /// Derive the seed from the database key.
    pub derandomize: bool,
    /// The database key.
    pub database_key: Option<Vec<u8>>,
    /// Health checks to suppress (names as sent).
    pub suppress_health_check: Vec<String>,
    /// Phases to run (names as sent), if restricted.
    pub phases: Option<Vec<String>>,
    /// Report every distinct failure.
    pub report_multiple_failures: bool,
    /// The example database directory: `None` when disabled (`database: null`).
    pub database: Option<String>,
    /// A failure to replay instead of a run (from an earlier `failure_blobs`).
    pub failure_blob: Option<String>,
}

/// A failure's choices as a blob a client can store and send back.
pub fn encode_blob(choices: &[geist_engine::choice::ChoiceValue]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .encode(geist_engine::database::encode_choices(choices))
}

/// The choices in a blob, or why it is not one.
pub fn decode_blob(blob: &str) -> Result<Vec<geist_engine::choice::ChoiceValue>, String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .map_err(|e| format!("failure_blob is not base64: {e}"))?;
    geist_engine::database::decode_choices(&bytes).map_err(|e| format!("failure_blob: {e}"))
}

/// Where the database lives when the client does not say (as hegel-core: `.hegel/examples`).
pub const DEFAULT_DATABASE: &str = ".hegel/examples";

fn field<'a>(message: &'a Cbor, key: &str) -> Option<&'a Cbor> {
    match cbor::map_get(message, key) {
        Some(Cbor::Null) | None => None,
        Some(v) => Some(v),
    }
}

fn text_list(message: &Cbor, key: &str) -> Result<Vec<String>, String> {
    match field(message, key) {
        None => Ok(Vec::new()),
        Some(Cbor::Array(items)) => items
            .iter()
            .map(|v| {
                cbor::as_text(v)
                    .map(str::to_string)
                    .ok_or_else(|| format!("{key} must be a list of strings"))
            })
            .collect(),
        Some(_) => Err(format!("{key} must be a list of strings")),
    }
}

impl RunRequest {
    /// Parses the fields of a `run_test` command.
    pub fn parse(message: &Cbor) -> Result<RunRequest, String> {
        let test_cases = field(message, "test_cases")
            .and_then(cbor::as_i128)
            .ok_or("run_test requires an integer test_cases")?;
        let test_cases =
            u64::try_from(test_cases).map_err(|_| "test_cases must be non-negative")?;
        let seed = match field(message, "seed") {
            None => None,
            Some(v) => Some(
                cbor::as_i128(v)
                    .map(|s| s as u128)
                    .ok_or("seed must be an integer")?,
            ),
        };
        let database_key = match field(message, "database_key") {
            None => None,
            Some(Cbor::Bytes(b)) => Some(b.clone()),
            Some(v) => cbor::as_text(v).map(|t| t.as_bytes().to_vec()),
        };
        let phases = match field(message, "phases") {
            None => None,
            Some(_) => Some(text_list(message, "phases")?),
        };
        let database = match cbor::map_get(message, "database") {
            None => Some(DEFAULT_DATABASE.to_string()),
            Some(Cbor::Null) => None,
            Some(v) => Some(
                cbor::as_text(v)
                    .map(str::to_string)
                    .ok_or("database must be a path string or null")?,
            ),
        };
        let failure_blob = match field(message, "failure_blob") {
            None => None,
            Some(Cbor::Bytes(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            Some(v) => Some(
                cbor::as_text(v)
                    .map(str::to_string)
                    .ok_or("failure_blob must be a string")?,
            ),
        };
        Ok(RunRequest {
            failure_blob,
            database,
            test_cases,
            seed,
            derandomize: matches!(field(message, "derandomize"), Some(Cbor::Bool(true))),
            database_key,
            suppress_health_check: text_list(message, "suppress_health_check")?,
            phases,
            report_multiple_failures: !matches!(
                field(message, "report_multiple_failures"),
                Some(Cbor::Bool(false))
            ),
        })
    }
}

/// A fresh random seed for runs that did not ask for one.
pub fn random_seed() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    let mut a = state.build_hasher();
    a.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let mut b = state.build_hasher();
    b.write_u64(a.finish());
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

fn seed_from_key(key: Option<&[u8]>) -> u128 {
    let Some(key) = key else { return 0 };
    if key.len() <= 16 {
        key.iter().fold(0u128, |acc, b| (acc << 8) | u128::from(*b))
    } else {
        // Fold longer keys (FNV-1a over 128 bits) so every byte counts.
        let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
        for b in key {
            h ^= u128::from(*b);
            h = h.wrapping_mul(0x0000000001000000000000000000013B);
        }
        h
    }
}

type SchemaCache = HashMap<Vec<u8>, Result<Arc<Schema>, SchemaError>>;

/// Per-test-case state the client's commands refer to.
#[derive(Default)]
struct CaseState {
    collections: Vec<Collection>,
    pools: Vec<Pool>,
    state_machines: Vec<StateMachine>,
}

/// Why a test case ended early on the server's side.
enum CaseEnd {
    /// The client marked it complete.
    Completed,
    /// The engine stopped it (overrun or rejection) and told the client.
    Stopped,
}

fn int_arg(message: &Cbor, key: &str) -> Result<i128, String> {
    field(message, key)
        .and_then(cbor::as_i128)
        .ok_or_else(|| format!("missing or non-integer field {key:?}"))
}

fn handle_command(
    message: &Cbor,
    data: &mut TestData,
    state: &mut CaseState,
    cache: &mut SchemaCache,
    connection: &Connection,
) -> Result<Result<Cbor, (String, &'static str)>, geist_engine::StopTest> {
    let Some(command) = field(message, "command").and_then(cbor::as_text) else {
        return Ok(Err((
            "request has no \"command\" text".into(),
            "ValueError",
        )));
    };
    let bad = |e: String| Ok(Err((e, "ValueError")));
    match command {
        "generate" => {
            let Some(schema_value) = field(message, "schema") else {
                return bad("generate requires a \"schema\" map".into());
            };
            let key = cbor::encode(schema_value);
            let schema = cache
                .entry(key)
                .or_insert_with(|| Schema::parse(&from_cbor(schema_value)).map(Arc::new))
                .clone();
            match schema {
                Ok(schema) => {
                    let value = generate(&schema, data)?;
                    Ok(Ok(to_cbor(&value, connection.version)))
                }
                Err(e) => Ok(Err((
                    format!("InvalidArgument: {}", e.message),
                    "InvalidArgument",
                ))),
            }
        }
        "start_span" => {
            let label = field(message, "label").and_then(cbor::as_i128).unwrap_or(0);
            data.start_span(label as u64);
            Ok(Ok(Cbor::Null))
        }
        "stop_span" => {
            let discard = matches!(field(message, "discard"), Some(Cbor::Bool(true)));
            data.stop_span(discard);
            Ok(Ok(Cbor::Null))
        }
        "target" => {
            let value = field(message, "value").and_then(cbor::as_f64);
            let label = field(message, "label")
                .map(|l| {
                    cbor::as_text(l)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("{l:?}"))
                })
                .unwrap_or_default();
            match value {
                Some(v) => {
                    data.target_observations.push((label, v));
                    Ok(Ok(Cbor::Null))
                }
                None => bad("target requires a numeric \"value\"".into()),
            }
        }
        "new_collection" => {
            let min = field(message, "min_size")
                .and_then(cbor::as_i128)
                .unwrap_or(0)
                .max(0) as usize;
            let max = field(message, "max_size")
                .and_then(cbor::as_i128)
                .map(|m| m.max(0) as usize);
            if max.is_some_and(|m| m < min) {
                return Ok(Err((
                    format!(
                        "InvalidArgument: Cannot have max_size < min_size (min_size={min}, max_size={max:?})"
                    ),
                    "InvalidArgument",
                )));
            }
            state.collections.push(Collection::new(min, max));
            Ok(Ok(cbor::integer(state.collections.len() as i128 - 1)))
        }
        "collection_more" | "collection_reject" => {
            let id = match int_arg(message, "collection_id") {
                Ok(id) => id,
                Err(e) => return bad(e),
            };
            let Some(collection) = usize::try_from(id)
                .ok()
                .and_then(|i| state.collections.get_mut(i))
            else {
                return bad(format!("unknown collection {id}"));
            };
            if command == "collection_more" {
                Ok(Ok(Cbor::Bool(collection.more(data)?)))
            } else {
                collection.reject(data)?;
                Ok(Ok(Cbor::Null))
            }
        }
        "new_pool" => {
            state.pools.push(Pool::new());
            Ok(Ok(cbor::integer(state.pools.len() as i128 - 1)))
        }
        "pool_add" | "pool_generate" | "pool_consume" => {
            let id = match int_arg(message, "pool_id") {
                Ok(id) => id,
                Err(e) => return bad(e),
            };
            let Some(pool) = usize::try_from(id)
                .ok()
                .and_then(|i| state.pools.get_mut(i))
            else {
                return bad(format!("unknown pool {id}"));
            };
            match command {
                "pool_add" => Ok(Ok(cbor::integer(i128::from(pool.add())))),
                "pool_consume" => {
                    let variable = match int_arg(message, "variable_id") {
                        Ok(v) => v,
                        Err(e) => return bad(e),
                    };
                    if let Ok(variable) = i64::try_from(variable) {
                        pool.consume(variable);
                    }
                    Ok(Ok(Cbor::Null))
                }
                _ => {
                    let consume = matches!(field(message, "consume"), Some(Cbor::Bool(true)));
                    let variable = pool.draw(data, consume)?;
                    Ok(Ok(cbor::integer(i128::from(variable))))
                }
            }
        }
        "new_state_machine" if connection.version.minor >= 16 => {
            let rules = match field(message, "rule_names") {
                Some(Cbor::Array(names)) => NonZeroUsize::new(names.len()),
                _ => None,
            };
            let Some(rules) = rules else {
                return Ok(Err((
                    "InvalidArgument: new_state_machine requires a non-empty rule_names list"
                        .into(),
                    "InvalidArgument",
                )));
            };
            let machine = StateMachine::new(data, rules)?;
            state.state_machines.push(machine);
            Ok(Ok(cbor::integer(state.state_machines.len() as i128 - 1)))
        }
        "state_machine_next_rule" if connection.version.minor >= 16 => {
            let id = match int_arg(message, "state_machine_id") {
                Ok(id) => id,
                Err(e) => return bad(e),
            };
            let Some(machine) = usize::try_from(id)
                .ok()
                .and_then(|i| state.state_machines.get(i))
            else {
                return bad(format!("unknown state machine {id}"));
            };
            Ok(Ok(cbor::integer(machine.next_rule(data)? as i128)))
        }
        other => bad(format!("Unknown command: {other}")),
    }
}

/// Runs one test case over the protocol.
fn execute_case(
    connection: &Arc<Connection>,
    test_stream: &Stream,
    data: &mut TestData,
    is_final: bool,
    cache: &mut SchemaCache,
) -> Result<CaseEnd, StreamError> {
    let case_stream = connection.new_server_stream();
    test_stream.request(&cbor::text_map([
        ("event", Cbor::Text("test_case".into())),
        ("stream_id", cbor::integer(i128::from(case_stream.id))),
        ("is_final", Cbor::Bool(is_final)),
    ]))?;
    let mut state = CaseState::default();
    loop {
        let packet = match case_stream.receive() {
            Ok(p) => p,
            Err(StreamError::StreamClosed(_)) => {
                // Closed without mark_complete: nothing to conclude but a rejection.
                data.conclude(Status::Invalid, None);
                return Ok(CaseEnd::Stopped);
            }
            Err(e) => return Err(e),
        };
        if packet.is_reply {
            continue;
        }
        let message = match cbor::decode(&packet.payload) {
            Ok(m) => m,
            Err(e) => {
                case_stream.reply_error(packet.message_id, &e.to_string(), "ProtocolError");
                continue;
            }
        };
        if field(&message, "command").and_then(cbor::as_text) == Some("mark_complete") {
            let status = field(&message, "status")
                .and_then(cbor::as_text)
                .unwrap_or("");
            let origin = field(&message, "origin")
                .and_then(cbor::as_text)
                .map(str::to_string);
            let status = match status {
                "VALID" => Status::Valid,
                "INVALID" => Status::Invalid,
                "INTERESTING" => Status::Interesting,
                "OVERRUN" => Status::Overrun,
                other => {
                    case_stream.reply_error(
                        packet.message_id,
                        &format!("Unexpected mark_complete status: {other:?}"),
                        "ValueError",
                    );
                    continue;
                }
            };
            let origin = if status == Status::Interesting {
                Some(origin.unwrap_or_else(|| "<unknown origin>".into()))
            } else {
                None
            };
            data.conclude(status, origin);
            case_stream.complete();
            case_stream.reply_deferred(packet.message_id, Cbor::Null)?;
            return Ok(CaseEnd::Completed);
        }
        // Time spent answering commands is generation time (the too_slow
        // health check); the client's own time between commands is not.
        let started = std::time::Instant::now();
        let handled = handle_command(&message, data, &mut state, cache, connection);
        data.draw_seconds += started.elapsed().as_secs_f64();
        match handled {
            Ok(Ok(result)) => case_stream.reply(packet.message_id, result)?,
            Ok(Err((error, error_type))) => {
                case_stream.reply_error(packet.message_id, &error, error_type)
            }
            Err(_stop) => {
                let why = match data.status {
                    Some(Status::Overrun) => "StopTest: the test case exceeded its choice budget",
                    _ => "StopTest: the engine rejected this test case",
                };
                case_stream.complete();
                case_stream.reply_error(packet.message_id, why, "StopTest");
                return Ok(CaseEnd::Stopped);
            }
        }
    }
}

fn test_done(stream: &Stream, results: Vec<(&str, Cbor)>) -> Result<(), StreamError> {
    stream.request(&cbor::text_map([
        ("event", Cbor::Text("test_done".into())),
        ("results", cbor::text_map(results)),
    ]))?;
    Ok(())
}

fn error_results(message: String, seed: u128) -> Vec<(&'static str, Cbor)> {
    vec![
        ("passed", Cbor::Bool(false)),
        ("test_cases", cbor::integer(0)),
        ("valid_test_cases", cbor::integer(0)),
        ("invalid_test_cases", cbor::integer(0)),
        ("interesting_test_cases", cbor::integer(0)),
        ("seed", Cbor::Text(seed.to_string())),
        ("error", Cbor::Text(message)),
    ]
}

/// Runs a whole `run_test` on its stream. Errors are logged; the run simply ends.
pub fn run_test(connection: Arc<Connection>, stream: Stream, request: RunRequest) {
    // However the run ends (a panic included), a deferred reply leaves.
    let _flush = FlushOnDrop(Arc::clone(&connection));
    if let Err(e) = run_test_inner(&connection, &stream, &request) {
        eprintln!("geist-server: test run on stream {} ended: {e}", stream.id);
    }
}

/// Flushes the connection's deferred packet when dropped.
struct FlushOnDrop(Arc<Connection>);

impl Drop for FlushOnDrop {
    fn drop(&mut self) {
        let _ = self.0.flush_deferred();
    }
}

fn run_test_inner(
    connection: &Arc<Connection>,
    stream: &Stream,
    request: &RunRequest,
) -> Result<(), StreamError> {
    let seed = match (request.seed, request.derandomize) {
        (Some(seed), _) => seed,
        (None, true) => seed_from_key(request.database_key.as_deref()),
        (None, false) => random_seed(),
    };
    let mut suppress = Vec::new();
    for name in &request.suppress_health_check {
        match HealthCheck::from_name(name) {
            Some(h) => suppress.push(h),
            None => {
                return test_done(
                    stream,
                    error_results(
                        format!(
                            "Unknown health check: {name:?}. Valid health checks are: [\"test_cases_too_large\", \"filter_too_much\", \"too_slow\", \"large_initial_test_case\"]"
                        ),
                        seed,
                    ),
                );
            }
        }
    }
    let mut phases = Phases::default();
    if let Some(names) = &request.phases {
        phases = Phases {
            reuse: false,
            generate: false,
            target: false,
            shrink: false,
        };
        for name in names {
            match name.as_str() {
                "explicit" => {}
                "reuse" => phases.reuse = true,
                "generate" => phases.generate = true,
                "target" => phases.target = true,
                "shrink" => phases.shrink = true,
                other => {
                    return test_done(
                        stream,
                        error_results(
                            format!(
                                "Unknown phase: {other:?}. Valid phases are: [\"explicit\", \"reuse\", \"generate\", \"target\", \"shrink\", \"explain\"]"
                            ),
                            seed,
                        ),
                    );
                }
            }
        }
    }
    let settings = RunSettings {
        test_cases: request.test_cases,
        seed,
        phases,
        report_multiple_failures: request.report_multiple_failures,
        suppress_health_checks: suppress,
        ..RunSettings::default()
    };
    if let Some(blob) = &request.failure_blob {
        return replay_blob(connection, stream, blob, seed);
    }
    let directory = match (&request.database, &request.database_key) {
        (Some(path), Some(key)) => Some((DirectoryDatabase::new(path), key.clone())),
        _ => None,
    };
    let database = directory.as_ref().map(|(db, key)| DatabaseHandle {
        database: db as &dyn geist_engine::database::ExampleDatabase,
        key: key.clone(),
    });
    let mut cache = SchemaCache::new();
    let mut failure: Option<StreamError> = None;
    let result = run_with_database(&settings, database, &mut |data| {
        if failure.is_some() {
            data.conclude(Status::Overrun, None);
            return false;
        }
        match execute_case(connection, stream, data, false, &mut cache) {
            Ok(_) => true,
            Err(e) => {
                data.conclude(Status::Overrun, None);
                failure = Some(e);
                false
            }
        }
    });
    for warning in &result.warnings {
        eprintln!("geist-server: example database: {warning}");
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let mut results = vec![
        ("passed", Cbor::Bool(result.passed())),
        ("test_cases", cbor::integer(i128::from(result.test_cases))),
        (
            "valid_test_cases",
            cbor::integer(i128::from(result.valid_test_cases)),
        ),
        (
            "invalid_test_cases",
            cbor::integer(i128::from(result.invalid_test_cases)),
        ),
        (
            "interesting_test_cases",
            cbor::integer(result.failures.len() as i128),
        ),
        ("seed", Cbor::Text(seed.to_string())),
    ];
    results.push((
        "failure_blobs",
        Cbor::Array(
            result
                .failures
                .iter()
                .map(|f| Cbor::Text(encode_blob(&f.choices)))
                .collect(),
        ),
    ));
    if let Some(message) = &result.flaky {
        results.push(("flaky", Cbor::Text(message.clone())));
    }
    if let Some(message) = &result.health_check_failure {
        results.push(("health_check_failure", Cbor::Text(message.clone())));
    }
    test_done(stream, results)?;
    for failure in &result.failures {
        let mut data = TestData::replaying(failure.choices.clone(), settings.max_choices);
        execute_case(connection, stream, &mut data, true, &mut cache)?;
    }
    Ok(())
}

/// The `test_done` results of a run made of one test case.
fn single_case_results(status: Status, seed: u128) -> Vec<(&'static str, Cbor)> {
    let count = |wanted: Status| cbor::integer(i128::from(status == wanted));
    vec![
        ("passed", Cbor::Bool(status != Status::Interesting)),
        ("test_cases", cbor::integer(1)),
        ("valid_test_cases", count(Status::Valid)),
        ("invalid_test_cases", count(Status::Invalid)),
        ("interesting_test_cases", count(Status::Interesting)),
        ("seed", Cbor::Text(seed.to_string())),
    ]
}

/// Replays one failure blob: a single test case, then (if it still fails) its final replay.
fn replay_blob(
    connection: &Arc<Connection>,
    stream: &Stream,
    blob: &str,
    seed: u128,
) -> Result<(), StreamError> {
    let choices = match decode_blob(blob) {
        Ok(c) => c,
        Err(e) => return test_done(stream, error_results(e, seed)),
    };
    let max_choices = geist_engine::data::DEFAULT_MAX_CHOICES;
    let mut cache = SchemaCache::new();
    let mut data = TestData::replaying(choices.clone(), max_choices);
    execute_case(connection, stream, &mut data, false, &mut cache)?;
    let status = data.status.unwrap_or(Status::Valid);
    let interesting = status == Status::Interesting;
    let blobs = if interesting {
        vec![Cbor::Text(blob.to_string())]
    } else {
        Vec::new()
    };
    let mut results = single_case_results(status, seed);
    results.push(("failure_blobs", Cbor::Array(blobs)));
    test_done(stream, results)?;
    if interesting {
        let mut data = TestData::replaying(choices, max_choices);
        execute_case(connection, stream, &mut data, true, &mut cache)?;
    }
    Ok(())
}

/// Runs a `single_test_case`: one randomly generated, final test case.
pub fn single_test_case(connection: Arc<Connection>, stream: Stream, seed: Option<u128>) {
    let _flush = FlushOnDrop(Arc::clone(&connection));
    let seed = seed.unwrap_or_else(random_seed);
    let mut data = TestData::generating(
        Vec::new(),
        geist_engine::random::Source::from_seed128(seed),
        geist_engine::data::DEFAULT_MAX_CHOICES,
    );
    let mut cache = SchemaCache::new();
    let outcome = execute_case(&connection, &stream, &mut data, true, &mut cache);
    if let Err(e) = outcome {
        eprintln!(
            "geist-server: single test case on stream {} ended: {e}",
            stream.id
        );
        return;
    }
    let status = data.status.unwrap_or(Status::Valid);
    let results = single_case_results(status, seed);
    if let Err(e) = test_done(&stream, results) {
        eprintln!(
            "geist-server: single test case on stream {} ended: {e}",
            stream.id
        );
    }
}
