//! One test case run over the wire: the property's draws become commands.
//!
//! A [`RemoteCase`] owns the test case's stream. Every primitive choice the
//! generators make is one request: integers, floats, booleans, byte strings
//! and strings are `generate` with a schema (strings keep their character
//! options, so the server builds the alphabet); formats, regexes and JSON
//! Schemas send their schema map; spans, collections and `target` have their
//! own commands. A `StopTest` error reply means the server is done with the
//! test case: it ends quietly and the client sends nothing more on the stream.

use crate::generators::{WireSchema, spec_schema};
use crate::transport::WireError;
use crate::transport::connection::StreamHandle;
use crate::transport::values;
use geist_engine::Value;
use geist_engine::charset::CharSetSpec;
use geist_engine::choice::{FloatConstraints, IntegerConstraints, SizeConstraints};
use geist_protocol::values::{StringForm, from_cbor, to_cbor};
use geist_protocol::{CaseCommand, CaseStatus};
use geist_wire::cbor::{self, Value as Cbor};

/// Why a remote command did not produce a value.
#[derive(Debug, Clone)]
pub(crate) enum CaseError {
    /// The server stopped the test case (`StopTest`, an overrun, a closed stream).
    Stopped,
    /// The server replied with another error: the test case fails with it.
    Reply {
        /// The command that failed.
        command: String,
        /// The error's type.
        error_type: String,
        /// The error message.
        message: String,
    },
    /// The client cannot express this over the wire.
    Usage(String),
    /// The connection failed: the whole run ends.
    Transport(WireError),
}

impl CaseError {
    /// A message for the failure report.
    pub(crate) fn describe(&self) -> String {
        match self {
            CaseError::Stopped => "the server stopped the test case".into(),
            CaseError::Reply {
                command,
                error_type,
                message,
            } => format!("the Hegel server replied to {command} with {error_type}: {message}"),
            CaseError::Usage(message) => message.clone(),
            CaseError::Transport(e) => e.to_string(),
        }
    }
}

impl From<WireError> for CaseError {
    fn from(error: WireError) -> CaseError {
        match error {
            WireError::ErrorReply {
                command,
                error_type,
                message,
            } => {
                // hegel-core raises Hypothesis' StopTest (overruns included)
                // and its flaky-replay errors; geist-server says StopTest;
                // a closed stream means the same.
                let stopped = matches!(
                    error_type.as_str(),
                    "StopTest" | "StreamClosed" | "FlakyStrategyDefinition" | "FlakyReplay"
                ) || message.contains("StopTest")
                    || message.contains("overflow");
                if stopped {
                    CaseError::Stopped
                } else {
                    CaseError::Reply {
                        command,
                        error_type,
                        message,
                    }
                }
            }
            other => CaseError::Transport(other),
        }
    }
}

/// A collection the server sizes.
pub(crate) struct RemoteCollection {
    /// The id `new_collection` returned.
    id: i128,
    /// Set once `collection_more` said no.
    finished: bool,
}

/// The client's side of one remote test case.
pub(crate) struct RemoteCase {
    stream: StreamHandle,
    /// Set when the server stopped the test case: nothing more may be sent.
    pub(crate) stopped: bool,
    /// Labels already targeted (each may be observed once per test case).
    targeted: Vec<String>,
}

type CaseResult<T> = Result<T, CaseError>;

fn protocol(command: &str, what: &str, got: &Cbor) -> CaseError {
    CaseError::Transport(WireError::Protocol(format!(
        "the reply to {command} should be {what}, got {got:?}"
    )))
}

impl RemoteCase {
    /// Whether the server's protocol version answers `whole`'s schema in
    /// the form its parser reads (a `one_of` answered with its branch index
    /// only from protocol 0.11 on).
    pub(crate) fn answers<T>(&self, whole: &WireSchema<'_, T>) -> bool {
        let version = self.stream.connection().version();
        whole.requires.iter().all(|b| version.has(*b))
    }

    /// A test case on the stream the server announced.
    pub(crate) fn new(stream: StreamHandle) -> RemoteCase {
        RemoteCase {
            stream,
            stopped: false,
            targeted: Vec::new(),
        }
    }

    /// Sends a command and returns its result; a stop is remembered.
    fn command(&mut self, command: CaseCommand) -> CaseResult<Cbor> {
        if self.stopped {
            return Err(CaseError::Stopped);
        }
        match self
            .stream
            .request(command.name().as_str(), &command.encode())
        {
            Ok(v) => Ok(v),
            Err(e) => {
                let e = CaseError::from(e);
                if matches!(e, CaseError::Stopped) {
                    self.stopped = true;
                }
                Err(e)
            }
        }
    }

    fn generate(&mut self, schema: Cbor) -> CaseResult<Cbor> {
        self.command(CaseCommand::Generate { schema })
    }

    /// An integer choice.
    #[inline(never)]
    pub(crate) fn integer(&mut self, c: IntegerConstraints) -> CaseResult<i128> {
        let value = self.generate(values::integer_schema(&c))?;
        values::integer_choice(&c, &value)
            .ok_or_else(|| protocol("generate", "an integer within the bounds", &value))
    }

    /// A float choice.
    #[inline(never)]
    pub(crate) fn float(&mut self, c: FloatConstraints) -> CaseResult<f64> {
        let value = self.generate(values::float_schema(&c))?;
        match cbor::as_f64(&value) {
            Some(v) if values::float_permitted(&c, v) => Ok(v),
            _ => Err(protocol("generate", "a float within the bounds", &value)),
        }
    }

    /// A boolean choice (`p` is sent when it is not one half).
    #[inline(never)]
    pub(crate) fn boolean(&mut self, p: f64) -> CaseResult<bool> {
        match self.generate(values::boolean_schema(p))? {
            Cbor::Bool(b) => Ok(b),
            other => Err(protocol("generate", "a boolean", &other)),
        }
    }

    /// A byte string.
    #[inline(never)]
    pub(crate) fn bytes(&mut self, size: SizeConstraints) -> CaseResult<Vec<u8>> {
        let value = self.generate(sized("binary", size, Vec::new()))?;
        match value {
            Cbor::Bytes(b) if size_permits(size, b.len()) => Ok(b),
            other => Err(protocol(
                "generate",
                "a byte string of the requested size",
                &other,
            )),
        }
    }

    /// A string of characters `spec` permits (surrogates excluded).
    #[inline(never)]
    pub(crate) fn text(&mut self, spec: &CharSetSpec, size: SizeConstraints) -> CaseResult<String> {
        let Value::Map(options) = spec_schema(spec) else {
            return Err(CaseError::Usage("text: bad character options".into()));
        };
        let options = options
            .iter()
            .map(|(k, v)| (to_cbor(k, StringForm::Text), to_cbor(v, StringForm::Text)))
            .collect();
        let value = self.generate(sized("string", size, options))?;
        match values::text_of(&value) {
            Some(t) if size_permits(size, t.chars().count()) => Ok(t),
            _ => Err(protocol(
                "generate",
                "a string of the requested size",
                &value,
            )),
        }
    }

    /// A value of a schema map (formats, regexes, JSON Schema).
    ///
    /// hegel-core requires the version of an `ip_address` schema; one
    /// without is sent as two draws: the version first (4, the simpler, or
    /// 6), then an address of that version.
    #[inline(never)]
    pub(crate) fn schema(&mut self, schema: Value) -> CaseResult<Value> {
        let schema = match schema {
            Value::Map(mut map)
                if map
                    .iter()
                    .any(|(k, v)| *k == Value::text("type") && *v == Value::text("ip_address"))
                    && !map.iter().any(|(k, _)| *k == Value::text("version")) =>
            {
                let v6 = self.integer(IntegerConstraints::bounded(0, 1))? == 1;
                map.push((
                    Value::text("version"),
                    Value::Integer(if v6 { 6 } else { 4 }),
                ));
                Value::Map(map)
            }
            other => other,
        };
        let value = self.generate(to_cbor(&schema, StringForm::Text))?;
        Ok(from_cbor(&value))
    }

    /// A whole value of a generator that has one schema.
    #[inline(never)]
    pub(crate) fn whole<T>(&mut self, whole: &WireSchema<'_, T>) -> CaseResult<T> {
        let value = self.generate(whole.schema.clone())?;
        (whole.parse)(&value)
            .ok_or_else(|| protocol("generate", "a value of the schema sent", &value))
    }

    /// Opens a span.
    #[inline(never)]
    pub(crate) fn start_span(&mut self, label: u64) -> CaseResult<()> {
        self.command(CaseCommand::StartSpan { label })?;
        Ok(())
    }

    /// Closes the innermost span.
    #[inline(never)]
    pub(crate) fn stop_span(&mut self, discard: bool) -> CaseResult<()> {
        self.command(CaseCommand::StopSpan { discard })?;
        Ok(())
    }

    /// Starts a collection of `min..=max` elements.
    #[inline(never)]
    pub(crate) fn new_collection(
        &mut self,
        min_size: usize,
        max_size: Option<usize>,
    ) -> CaseResult<RemoteCollection> {
        let id = self.command(CaseCommand::NewCollection { min_size, max_size })?;
        match cbor::as_i128(&id) {
            Some(id) => Ok(RemoteCollection {
                id,
                finished: false,
            }),
            None => Err(protocol("new_collection", "a collection id", &id)),
        }
    }

    /// Whether the collection gets another element.
    #[inline(never)]
    pub(crate) fn collection_more(
        &mut self,
        collection: &mut RemoteCollection,
    ) -> CaseResult<bool> {
        if collection.finished {
            return Ok(false);
        }
        match self.command(CaseCommand::CollectionMore {
            collection_id: collection.id,
        })? {
            Cbor::Bool(more) => {
                collection.finished = !more;
                Ok(more)
            }
            other => Err(protocol("collection_more", "a boolean", &other)),
        }
    }

    /// The last element was not kept.
    #[inline(never)]
    pub(crate) fn collection_reject(
        &mut self,
        collection: &mut RemoteCollection,
    ) -> CaseResult<()> {
        self.command(CaseCommand::CollectionReject {
            collection_id: collection.id,
        })?;
        Ok(())
    }

    /// Records a targeting observation.
    #[inline(never)]
    pub(crate) fn target(&mut self, value: f64, label: &str) -> CaseResult<()> {
        if !value.is_finite() {
            return Err(CaseError::Usage(format!(
                "target({value}, {label:?}): the score must be finite"
            )));
        }
        if self.targeted.iter().any(|l| l == label) {
            // Over the wire a label holds one observation per test case; keep the first.
            return Ok(());
        }
        self.targeted.push(label.to_string());
        self.command(CaseCommand::Target {
            value,
            label: label.to_string(),
        })?;
        Ok(())
    }

    /// Concludes the test case with `mark_complete` (unless the server
    /// already stopped it) and closes the stream.
    pub(crate) fn complete(
        &mut self,
        status: CaseStatus,
        origin: Option<&str>,
    ) -> Result<(), WireError> {
        if self.stopped {
            return Ok(());
        }
        let command = CaseCommand::MarkComplete {
            status,
            origin: origin.map(str::to_string),
        };
        match self.command(command) {
            Ok(_) | Err(CaseError::Stopped) => {}
            // The verdict was delivered; an error reply to it is the server's
            // business (it shows in test_done if it matters).
            Err(CaseError::Reply { .. }) | Err(CaseError::Usage(_)) => {}
            Err(CaseError::Transport(e)) => return Err(e),
        }
        if !self.stopped {
            self.stream.close();
        }
        Ok(())
    }
}

/// A `binary` or `string` schema with size bounds and extra fields.
fn sized(kind: &str, size: SizeConstraints, extra: Vec<(Cbor, Cbor)>) -> Cbor {
    let mut map = vec![
        (Cbor::Text("type".into()), Cbor::Text(kind.into())),
        (
            Cbor::Text("min_size".into()),
            cbor::integer(size.min_size as i128),
        ),
    ];
    if size.max_size != usize::MAX {
        map.push((
            Cbor::Text("max_size".into()),
            cbor::integer(size.max_size as i128),
        ));
    }
    map.extend(extra);
    Cbor::Map(map)
}

fn size_permits(size: SizeConstraints, n: usize) -> bool {
    n >= size.min_size && n <= size.max_size
}
