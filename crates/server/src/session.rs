//! Test runs on a connection: `run_test` and `single_test_case`.
//!
//! A run drives the engine with a test function that, for each test case,
//! opens a server stream, announces it to the client with a `test_case` event,
//! and answers the client's commands ([`CaseCommand`]: draws, spans,
//! collections, pools, state machines, `target`) from the engine until
//! `mark_complete`. When the engine is done it sends `test_done` and replays
//! each failure with `is_final: true`. A run that cannot go on (the client
//! went silent, answered an event with an error or with bytes that are not
//! CBOR) still ends with a `test_done` carrying the error, and its stream is
//! closed, so the client is never left waiting.

use geist_database::DatabaseSetting;
use geist_engine::blob::{decode_blob, encode_blob};
use geist_engine::data::Collection;
use geist_engine::generate::{Schema, SchemaError, generate};
use geist_engine::pool::Pool;
use geist_engine::run::{DatabaseHandle, Phases, RunSettings, run_with_database};
use geist_engine::state_machine::StateMachine;
use geist_engine::{Status, TestData};
use geist_protocol::connection::{Connection, ConnectionError, OpenError, Stream};
use geist_protocol::values::{StringForm, from_cbor, health_check_named, to_cbor};
use geist_protocol::version::Behaviour;
use geist_protocol::{
    CaseCommand, CaseStatus, CommandError, DatabaseChoice, ErrorKind, ErrorReply, Event,
    ProtocolVersion, RunResults, RunTest,
};
use geist_wire::cbor::{self, Value as Cbor};
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// A name as hegel-core's messages quote it (Python's `repr` of a string),
/// so that clients matching hegel-core's wording match geist's.
fn python_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Where the database lives when the client does not say (as hegel-core: `.hegel/examples`).
pub const DEFAULT_DATABASE: &str = ".hegel/examples";

/// The example database a `run_test` asks for: its `database` field read as
/// geist's one database setting (a directory, `redis://...`, `readonly:X`, or
/// several comma-separated), `None` when it is `null`. An absent field means
/// [`DEFAULT_DATABASE`]; an empty or malformed setting is refused with the
/// reason, so a run never writes its examples somewhere it was not asked to.
fn database_setting(choice: &DatabaseChoice) -> Result<Option<DatabaseSetting>, String> {
    match choice {
        DatabaseChoice::Default => Ok(Some(DatabaseSetting::Directory(DEFAULT_DATABASE.into()))),
        DatabaseChoice::Disabled => Ok(None),
        DatabaseChoice::Directory(text) => DatabaseSetting::parse(text)
            .map(Some)
            .map_err(|e| format!("database: {e}")),
    }
}

/// The default of [`GenerateLimits::max_size`].
pub const DEFAULT_MAX_GENERATED_SIZE: usize = 1_000_000;

/// Bounds on what one `generate` may produce, so that a request cannot make
/// the server allocate without limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenerateLimits {
    /// The most characters in a string, bytes in a binary, and elements,
    /// characters and bytes in the smallest value a schema permits. A larger
    /// `max_size` is lowered to it; a schema whose smallest value is larger
    /// is refused with an error reply naming this limit.
    pub max_size: usize,
}

impl Default for GenerateLimits {
    fn default() -> Self {
        GenerateLimits {
            max_size: DEFAULT_MAX_GENERATED_SIZE,
        }
    }
}

impl GenerateLimits {
    /// Lowers string and binary `max_size` to the limit and refuses a schema
    /// whose smallest value is over it.
    fn apply(&self, schema: &mut Schema) -> Result<(), SchemaError> {
        self.lower_max_sizes(schema);
        let smallest = smallest_size(schema);
        if smallest > self.max_size as u128 {
            return Err(SchemaError::new(format!(
                "the smallest value of this schema holds {smallest} characters, bytes or \
                 elements, over geist-server's limit of {} per generate \
                 (geist-server --max-generated-size N)",
                self.max_size
            )));
        }
        Ok(())
    }

    fn lower_max_sizes(&self, schema: &mut Schema) {
        let limit = self.max_size;
        match schema {
            Schema::String { max_size, .. } | Schema::Binary { max_size, .. }
                if max_size.is_some_and(|m| m > limit) =>
            {
                *max_size = Some(limit);
            }
            Schema::List { elements, .. } => self.lower_max_sizes(elements),
            Schema::Dict { keys, values, .. } => {
                self.lower_max_sizes(keys);
                self.lower_max_sizes(values);
            }
            Schema::Tuple(parts) | Schema::OneOf(parts) | Schema::OneOfBare(parts) => {
                parts.iter_mut().for_each(|p| self.lower_max_sizes(p))
            }
            _ => {}
        }
    }
}

/// The size of the smallest value a schema permits: characters, bytes and
/// elements (an element counts at least one).
fn smallest_size(schema: &Schema) -> u128 {
    match schema {
        Schema::String { min_size, .. } | Schema::Binary { min_size, .. } => *min_size as u128,
        Schema::List {
            elements, min_size, ..
        } => (*min_size as u128).saturating_mul(smallest_size(elements).max(1)),
        Schema::Dict {
            keys,
            values,
            min_size,
            ..
        } => (*min_size as u128).saturating_mul(
            smallest_size(keys)
                .saturating_add(smallest_size(values))
                .max(1),
        ),
        Schema::Tuple(parts) => parts
            .iter()
            .fold(0u128, |sum, p| sum.saturating_add(smallest_size(p))),
        Schema::OneOf(branches) | Schema::OneOfBare(branches) => {
            branches.iter().map(smallest_size).min().unwrap_or(0)
        }
        _ => 1,
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

/// Parsed schemas by their canonical CBOR ([`schema_key`]): clients send the
/// same few schemas over and over, and parsing one can be costly (a character
/// set by Unicode category walks the code points).
type SchemaCache = HashMap<Vec<u8>, Result<Arc<Schema>, SchemaError>>;

/// The cache key of a schema: its CBOR with every map's entries ordered by
/// their encoded keys (a stable sort, so repeated keys keep their order).
///
/// The bytes as sent are no key: a client may encode a map's entries in any
/// order, and hegel-go's encoder follows Go's map iteration, which is random,
/// so two `generate` commands of one schema rarely carry the same bytes
/// (keyed by them, a run of hegel-go's `OneOf(Text(), Text())` parsed its
/// schema again for nearly every draw).
fn schema_key(schema: &Cbor) -> Vec<u8> {
    fn canonical(value: &Cbor) -> Cbor {
        match value {
            Cbor::Map(entries) => {
                let mut keyed: Vec<(Vec<u8>, Cbor, Cbor)> = entries
                    .iter()
                    .map(|(k, v)| {
                        let k = canonical(k);
                        (cbor::encode(&k), k, canonical(v))
                    })
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0));
                Cbor::Map(keyed.into_iter().map(|(_, k, v)| (k, v)).collect())
            }
            Cbor::Array(items) => Cbor::Array(items.iter().map(canonical).collect()),
            Cbor::Tag(tag, inner) => Cbor::Tag(*tag, Box::new(canonical(inner))),
            other => other.clone(),
        }
    }
    cbor::encode(&canonical(schema))
}

/// Per-test-case state the client's commands refer to by id.
#[derive(Default)]
struct CaseState {
    collections: Vec<Collection>,
    pools: Vec<Pool>,
    state_machines: Vec<StateMachine>,
}

/// What one run needs: the connection, the version it speaks, its limits.
pub struct Run {
    /// The connection the run's streams belong to.
    pub connection: Arc<Connection>,
    /// The protocol version announced.
    pub version: ProtocolVersion,
    /// Bounds on generated values.
    pub limits: GenerateLimits,
    /// Print the shrinker's per-pass statistics after each run (verbosity debug).
    pub debug: bool,
}

/// The entry of `ids` a command names.
fn by_id<'a, T>(ids: &'a mut [T], id: i128, what: &str) -> Result<&'a mut T, CommandError> {
    usize::try_from(id)
        .ok()
        .and_then(|i| ids.get_mut(i))
        .ok_or_else(|| CommandError::value(format!("unknown {what} {id}")))
}

fn new_id(count: usize) -> Cbor {
    cbor::integer(count as i128 - 1)
}

/// A command's answer: its result, an error reply, or the engine's stop.
type Answer = Result<Result<Cbor, CommandError>, geist_engine::StopTest>;

fn opened(result: Result<Stream, OpenError>) -> Result<Stream, ConnectionError> {
    result.map_err(|e| ConnectionError::Ended(format!(": {e}")))
}

impl Run {
    fn answer(
        &self,
        command: CaseCommand,
        data: &mut TestData,
        state: &mut CaseState,
        cache: &mut SchemaCache,
    ) -> Answer {
        Ok(Ok(match command {
            CaseCommand::Generate { schema } => {
                let key = schema_key(&schema);
                let parsed = match cache.get(&key) {
                    Some(parsed) => parsed.clone(),
                    None => {
                        let parsed = Schema::parse(&from_cbor(&schema)).and_then(|mut s| {
                            if !self.version.has(Behaviour::OneOfAnswersIndex) {
                                s.report_one_of_bare();
                            }
                            self.limits.apply(&mut s).map(|()| Arc::new(s))
                        });
                        cache.insert(key, parsed.clone());
                        parsed
                    }
                };
                match parsed {
                    Ok(schema) => {
                        let value = generate(&schema, data)?;
                        to_cbor(&value, StringForm::generated(self.version))
                    }
                    Err(e) => return Ok(Err(CommandError::invalid(e.message))),
                }
            }
            CaseCommand::StartSpan { label } => {
                data.start_span(label);
                Cbor::Null
            }
            CaseCommand::StopSpan { discard } => {
                data.stop_span(discard);
                Cbor::Null
            }
            CaseCommand::Target { value, label } => {
                data.target_observations.push((label, value));
                Cbor::Null
            }
            CaseCommand::NewCollection { min_size, max_size } => {
                state.collections.push(Collection::new(min_size, max_size));
                new_id(state.collections.len())
            }
            CaseCommand::CollectionMore { collection_id } => {
                match by_id(&mut state.collections, collection_id, "collection") {
                    Ok(collection) => Cbor::Bool(collection.more(data)?),
                    Err(e) => return Ok(Err(e)),
                }
            }
            CaseCommand::CollectionReject { collection_id } => {
                match by_id(&mut state.collections, collection_id, "collection") {
                    Ok(collection) => {
                        collection.reject(data)?;
                        Cbor::Null
                    }
                    Err(e) => return Ok(Err(e)),
                }
            }
            CaseCommand::NewPool => {
                state.pools.push(Pool::new());
                new_id(state.pools.len())
            }
            CaseCommand::PoolAdd { pool_id } => match by_id(&mut state.pools, pool_id, "pool") {
                Ok(pool) => cbor::integer(i128::from(pool.add(data)?)),
                Err(e) => return Ok(Err(e)),
            },
            CaseCommand::PoolGenerate { pool_id, consume } => {
                match by_id(&mut state.pools, pool_id, "pool") {
                    Ok(pool) => cbor::integer(i128::from(pool.draw(data, consume)?)),
                    Err(e) => return Ok(Err(e)),
                }
            }
            CaseCommand::PoolConsume {
                pool_id,
                variable_id,
            } => match by_id(&mut state.pools, pool_id, "pool") {
                Ok(pool) => {
                    if let Ok(variable) = i64::try_from(variable_id) {
                        pool.consume(variable);
                    }
                    Cbor::Null
                }
                Err(e) => return Ok(Err(e)),
            },
            CaseCommand::NewStateMachine { rule_names } => {
                let Some(rules) = NonZeroUsize::new(rule_names.len()) else {
                    return Ok(Err(CommandError::invalid(
                        "new_state_machine requires a non-empty rule_names list",
                    )));
                };
                state.state_machines.push(StateMachine::new(data, rules)?);
                new_id(state.state_machines.len())
            }
            CaseCommand::StateMachineNextRule { state_machine_id } => {
                match by_id(&mut state.state_machines, state_machine_id, "state machine") {
                    Ok(machine) => cbor::integer(machine.pick_rule(data)? as i128),
                    Err(e) => return Ok(Err(e)),
                }
            }
            // Concluding is the case loop's: it never gets here.
            CaseCommand::MarkComplete { .. } => Cbor::Null,
        }))
    }

    /// Runs one test case over the protocol.
    fn execute_case(
        &self,
        test_stream: &Stream,
        data: &mut TestData,
        is_final: bool,
        cache: &mut SchemaCache,
    ) -> Result<(), ConnectionError> {
        let case_stream = opened(self.connection.new_stream())?;
        test_stream.request(
            &Event::TestCase {
                stream_id: case_stream.id,
                is_final,
            }
            .encode(),
        )?;
        let mut state = CaseState::default();
        loop {
            let request = match case_stream.next_request() {
                Ok(request) => request,
                Err(ConnectionError::StreamClosed(_)) => {
                    // Closed without mark_complete: nothing to conclude but a rejection.
                    data.conclude(Status::Invalid, None);
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            let reply_error =
                |error: &ErrorReply| case_stream.reply_error(request.message_id, error);
            let message = match request.message() {
                Ok(m) => m,
                Err(e) => {
                    reply_error(&ErrorReply::protocol(e.to_string()));
                    continue;
                }
            };
            let command = match CaseCommand::decode(message, self.version) {
                Ok(command) => command,
                Err(e) => {
                    reply_error(&e.reply());
                    continue;
                }
            };
            if let CaseCommand::MarkComplete { status, origin } = command {
                let status = match status {
                    CaseStatus::Valid => Status::Valid,
                    CaseStatus::Invalid => Status::Invalid,
                    CaseStatus::Interesting => Status::Interesting,
                    CaseStatus::Overrun => Status::Overrun,
                };
                let origin = (status == Status::Interesting)
                    .then(|| origin.unwrap_or_else(|| "<unknown origin>".into()));
                data.conclude(status, origin);
                case_stream.complete();
                case_stream.reply_deferred(request.message_id, Cbor::Null)?;
                return Ok(());
            }
            // Time spent answering commands is generation time (the too_slow
            // health check); the client's own time between commands is not.
            let started = std::time::Instant::now();
            let answer = self.answer(command, data, &mut state, cache);
            data.draw_seconds += started.elapsed().as_secs_f64();
            match answer {
                Ok(Ok(result)) => case_stream.reply(request.message_id, result)?,
                Ok(Err(error)) => reply_error(&error.reply()),
                Err(_stop) => {
                    let why = match data.status {
                        Some(Status::Overrun) => {
                            "StopTest: the test case exceeded its choice budget"
                        }
                        _ => "StopTest: the engine rejected this test case",
                    };
                    case_stream.complete();
                    reply_error(&ErrorReply::new(ErrorKind::StopTest, why));
                    return Ok(());
                }
            }
        }
    }

    /// Runs a whole `run_test` on its stream. However it ends, the client
    /// hears of it: a run the server cannot finish sends `test_done` with
    /// the error, and the stream is closed.
    pub fn run_test(&self, stream: Stream, request: RunTest) {
        let seed = match (request.seed, request.derandomize) {
            (Some(seed), _) => seed,
            (None, true) => seed_from_key(request.database_key.as_deref()),
            (None, false) => random_seed(),
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| self.search(&stream, &request, seed)));
        self.finish(stream, outcome, seed, "test run");
    }

    /// Ends a run: on an error, tells the client with a `test_done` it need
    /// not acknowledge, and closes the stream; flushes what is left.
    fn finish(
        &self,
        stream: Stream,
        outcome: std::thread::Result<Result<(), ConnectionError>>,
        seed: u128,
        what: &str,
    ) {
        let error = match outcome {
            Ok(Ok(())) => None,
            // Nobody is left to tell.
            Ok(Err(ConnectionError::Ended(reason))) => {
                eprintln!(
                    "geist-server: {what} on stream {} ended: the connection ended{reason}",
                    stream.id
                );
                None
            }
            Ok(Err(e)) => Some(e.to_string()),
            Err(panic) => Some(format!(
                "geist-server failed: {}",
                panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into())
            )),
        };
        if let Some(error) = error {
            eprintln!(
                "geist-server: {what} on stream {} ended: {error}",
                stream.id
            );
            let results = RunResults::error(
                format!("the {what} ended on the server's side: {error}"),
                seed,
            );
            // Sent without waiting for the acknowledgement: the client may be
            // the reason the run ended.
            let _ = stream.send_request(cbor::encode(&Event::TestDone(results).encode()));
            stream.close();
        }
        let _ = self.connection.flush_deferred();
    }

    fn test_done(&self, stream: &Stream, results: RunResults) -> Result<(), ConnectionError> {
        stream.request(&Event::TestDone(results).encode())?;
        Ok(())
    }

    fn search(
        &self,
        stream: &Stream,
        request: &RunTest,
        seed: u128,
    ) -> Result<(), ConnectionError> {
        let mut suppress = Vec::new();
        for name in &request.suppress_health_check {
            match health_check_named(name) {
                Some(h) => suppress.push(h),
                None => {
                    return self.test_done(
                        stream,
                        RunResults::error(
                            format!(
                                "Unknown health check: {}. Valid health checks are: ['test_cases_too_large', 'filter_too_much', 'too_slow', 'large_initial_test_case']",
                                python_repr(name)
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
                        return self.test_done(
                            stream,
                            RunResults::error(
                                format!(
                                    "Unknown phase: {}. Valid phases are: ['explicit', 'reuse', 'generate', 'target', 'shrink', 'explain']",
                                    python_repr(other)
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
            return self.replay_blob(stream, blob, seed);
        }
        let setting = match database_setting(&request.database) {
            Ok(setting) => setting,
            Err(e) => return self.test_done(stream, RunResults::error(e, seed)),
        };
        let opened = match (&setting, &request.database_key) {
            (Some(setting), Some(key)) => match setting.open() {
                Ok(database) => Some((database, key.clone())),
                Err(e) => {
                    eprintln!("geist-server: example database: {e}; this run goes on without it");
                    None
                }
            },
            _ => None,
        };
        let database = opened.as_ref().map(|(db, key)| DatabaseHandle {
            database: db.as_ref(),
            key: key.clone(),
        });
        let mut cache = SchemaCache::new();
        let mut failure: Option<ConnectionError> = None;
        let result = run_with_database(&settings, database, &mut |data| {
            if failure.is_some() {
                data.conclude(Status::Overrun, None);
                return false;
            }
            match self.execute_case(stream, data, false, &mut cache) {
                Ok(()) => true,
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
        if self.debug {
            for pass in &result.shrink_statistics {
                eprintln!("geist-server: shrink pass {pass}");
            }
        }
        let results = RunResults {
            passed: result.passed(),
            test_cases: Some(result.test_cases),
            valid_test_cases: result.valid_test_cases,
            invalid_test_cases: result.invalid_test_cases,
            interesting_test_cases: result.failures.len() as u64,
            seed: Some(seed),
            error: None,
            failure_blobs: Some(
                result
                    .failures
                    .iter()
                    .map(|f| encode_blob(&f.choices))
                    .collect(),
            ),
            flaky: result.flakiness().map(|f| f.to_string()),
            health_check_failure: result.health_check_failure().map(|f| f.to_string()),
        };
        self.test_done(stream, results)?;
        for failure in &result.failures {
            let mut data = TestData::replaying(failure.choices.clone(), settings.max_choices);
            self.execute_case(stream, &mut data, true, &mut cache)?;
        }
        Ok(())
    }

    /// Replays one failure blob: a single test case, then (if it still fails) its final replay.
    fn replay_blob(&self, stream: &Stream, blob: &str, seed: u128) -> Result<(), ConnectionError> {
        let choices = match decode_blob(blob) {
            Ok(c) => c,
            Err(e) => {
                return self.test_done(
                    stream,
                    RunResults::error(format!("failure_blob: {e}"), seed),
                );
            }
        };
        let max_choices = geist_engine::data::DEFAULT_MAX_CHOICES;
        let mut cache = SchemaCache::new();
        let mut data = TestData::replaying(choices.clone(), max_choices);
        self.execute_case(stream, &mut data, false, &mut cache)?;
        let status = data.status.unwrap_or(Status::Valid);
        let interesting = status == Status::Interesting;
        let results = RunResults {
            failure_blobs: Some(if interesting {
                vec![blob.to_string()]
            } else {
                Vec::new()
            }),
            ..single_case_results(status, seed)
        };
        self.test_done(stream, results)?;
        if interesting {
            let mut data = TestData::replaying(choices, max_choices);
            self.execute_case(stream, &mut data, true, &mut cache)?;
        }
        Ok(())
    }

    /// Runs a `single_test_case`: one randomly generated, final test case.
    pub fn single_test_case(&self, stream: Stream, seed: Option<u128>) {
        let seed = seed.unwrap_or_else(random_seed);
        let mut data = TestData::generating(
            Vec::new(),
            geist_engine::random::Source::from_seed128(seed),
            SINGLE_TEST_CASE_MAX_CHOICES,
        );
        let mut cache = SchemaCache::new();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.execute_case(&stream, &mut data, true, &mut cache)
                .and_then(|()| {
                    let status = data.status.unwrap_or(Status::Valid);
                    self.test_done(&stream, single_case_results(status, seed))
                })
        }));
        self.finish(stream, outcome, seed, "single test case");
    }
}

/// The choice budget of a `single_test_case`: far above a run's (8,192), as
/// hegel-core lifts Hypothesis's entropy limit for it, yet bounded (about
/// 100 MB of recorded choices at most).
const SINGLE_TEST_CASE_MAX_CHOICES: usize = 1 << 20;

/// The `test_done` results of a run made of one test case.
fn single_case_results(status: Status, seed: u128) -> RunResults {
    let count = |wanted: Status| u64::from(status == wanted);
    RunResults {
        passed: status != Status::Interesting,
        test_cases: Some(1),
        valid_test_cases: count(Status::Valid),
        invalid_test_cases: count(Status::Invalid),
        interesting_test_cases: count(Status::Interesting),
        seed: Some(seed),
        ..RunResults::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geist_protocol::ControlCommand;
    use geist_protocol::version::DEFAULT_VERSION;

    /// The database a `run_test` with this `database` field asks for.
    fn run_test(database: Option<Cbor>) -> Result<Option<DatabaseSetting>, String> {
        let mut fields = vec![
            ("command", Cbor::Text("run_test".into())),
            ("test_cases", cbor::integer(10)),
        ];
        if let Some(database) = database {
            fields.push(("database", database));
        }
        match ControlCommand::decode(cbor::text_map(fields), DEFAULT_VERSION) {
            Ok(ControlCommand::RunTest(run)) => database_setting(&run.database),
            Ok(other) => panic!("decoded as {other:?}"),
            Err(e) => Err(format!("{e:?}")),
        }
    }

    /// Issue 16: `"database": ""` used to store entries in the working directory.
    #[test]
    fn an_empty_database_setting_is_refused() {
        let error = run_test(Some(Cbor::Text(String::new()))).unwrap_err();
        assert!(error.contains("the database setting is empty"), "{error}");
    }

    #[test]
    fn the_database_field_takes_every_setting_form() {
        let default = run_test(None).unwrap();
        assert_eq!(
            default,
            Some(DatabaseSetting::Directory(DEFAULT_DATABASE.into()))
        );
        assert_eq!(run_test(Some(Cbor::Null)).unwrap(), None);
        let shared = ".hegel/examples,readonly:redis://127.0.0.1:6379/0";
        let parsed = run_test(Some(Cbor::Text(shared.into()))).unwrap();
        assert_eq!(parsed.map(|s| s.to_string()).as_deref(), Some(shared));
        let error = run_test(Some(Cbor::Text("redis://h/0?colour=blue".into()))).unwrap_err();
        assert!(error.contains("unknown option \"colour\""), "{error}");
        assert!(run_test(Some(Cbor::Integer(3.into()))).is_err());
    }

    /// hegel-go sends one schema with its map entries in a different order
    /// from one command to the next: the cache must see one schema.
    #[test]
    fn a_schema_is_one_cache_key_whatever_the_order_of_its_map_entries() {
        let text = |entries: &[(&str, Cbor)]| cbor::text_map(entries.iter().cloned());
        let short = [
            ("type", Cbor::Text("string".into())),
            ("min_size", cbor::integer(1)),
            ("max_size", cbor::integer(3)),
            (
                "exclude_categories",
                Cbor::Array(vec![Cbor::Text("Cs".into())]),
            ),
        ];
        let mut reversed = short.clone();
        reversed.reverse();
        let one_of = |a: Cbor, b: Cbor| {
            cbor::text_map([
                ("generators", Cbor::Array(vec![a, b])),
                ("type", Cbor::Text("one_of".into())),
            ])
        };
        let long = text(&[
            ("type", Cbor::Text("string".into())),
            ("min_size", cbor::integer(10)),
        ]);
        let first = one_of(text(&short), long.clone());
        let second = cbor::text_map([
            ("type", Cbor::Text("one_of".into())),
            (
                "generators",
                Cbor::Array(vec![text(&reversed), long.clone()]),
            ),
        ]);
        assert_ne!(cbor::encode(&first), cbor::encode(&second));
        assert_eq!(schema_key(&first), schema_key(&second));
        // Different schemas stay different keys: a value, and the order of
        // an array's items, count.
        let mut wider = short.clone();
        wider[2].1 = cbor::integer(4);
        assert_ne!(
            schema_key(&first),
            schema_key(&one_of(text(&wider), long.clone()))
        );
        assert_ne!(schema_key(&first), schema_key(&one_of(long, text(&short))));
    }

    #[test]
    fn names_are_quoted_as_hegel_core_quotes_them() {
        assert_eq!(python_repr("not_a_real_check"), "'not_a_real_check'");
        assert_eq!(python_repr("it's"), "\"it's\"");
        assert_eq!(python_repr("a'\"b\n"), "'a\\'\"b\\n'");
    }
}
