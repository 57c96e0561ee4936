//! Runs: the events of a run's stream, and its results.
//!
//! A run's stream carries events from the server: `test_case` announcing
//! each test case's stream, then `test_done` with the [`RunResults`], then
//! one final `test_case` per failure, replayed for the report.

use geist_wire::cbor::{self, Value as Cbor};

/// The results a `test_done` event carries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunResults {
    /// Whether no failure was found (absent counts as passed).
    pub passed: bool,
    /// Test cases run, if the server says.
    pub test_cases: Option<u64>,
    /// Valid test cases.
    pub valid_test_cases: u64,
    /// Invalid (rejected) test cases.
    pub invalid_test_cases: u64,
    /// Distinct failures found.
    pub interesting_test_cases: u64,
    /// The seed the run used.
    pub seed: Option<u128>,
    /// Why the run could not run (bad settings, a corrupt blob).
    pub error: Option<String>,
    /// Each failure as a reproduction blob, if the server sends them.
    pub failure_blobs: Option<Vec<String>>,
    /// Why the run is flaky.
    pub flaky: Option<String>,
    /// The health check that failed, and why.
    pub health_check_failure: Option<String>,
}

impl RunResults {
    /// The results of a run that could not run.
    pub fn error(message: String, seed: u128) -> RunResults {
        RunResults {
            passed: false,
            test_cases: Some(0),
            seed: Some(seed),
            error: Some(message),
            ..RunResults::default()
        }
    }

    /// The `results` map.
    pub fn encode(&self) -> Cbor {
        let count = |n: u64| cbor::integer(i128::from(n));
        let text = |s: &String| Cbor::Text(s.clone());
        let mut map = vec![("passed", Cbor::Bool(self.passed))];
        if let Some(n) = self.test_cases {
            map.push(("test_cases", count(n)));
        }
        map.push(("valid_test_cases", count(self.valid_test_cases)));
        map.push(("invalid_test_cases", count(self.invalid_test_cases)));
        map.push(("interesting_test_cases", count(self.interesting_test_cases)));
        if let Some(seed) = self.seed {
            map.push(("seed", Cbor::Text(seed.to_string())));
        }
        if let Some(error) = &self.error {
            map.push(("error", text(error)));
        }
        if let Some(blobs) = &self.failure_blobs {
            // Byte strings, as hegel-core sends Hypothesis's encode_failure
            // (base64 text as bytes) in every version.
            map.push((
                "failure_blobs",
                Cbor::Array(
                    blobs
                        .iter()
                        .map(|b| Cbor::Bytes(b.as_bytes().to_vec()))
                        .collect(),
                ),
            ));
        }
        if let Some(flaky) = &self.flaky {
            map.push(("flaky", text(flaky)));
        }
        if let Some(check) = &self.health_check_failure {
            map.push(("health_check_failure", text(check)));
        }
        cbor::text_map(map)
    }

    /// Reads a `results` map leniently: what is missing or malformed is absent.
    pub fn decode(results: &Cbor) -> RunResults {
        let count = |key: &str| {
            cbor::map_get(results, key)
                .and_then(cbor::as_i128)
                .and_then(|n| u64::try_from(n).ok())
        };
        let text = |key: &str| {
            cbor::map_get(results, key)
                .and_then(cbor::as_text)
                .map(str::to_string)
        };
        let seed = cbor::map_get(results, "seed").and_then(|s| {
            cbor::as_text(s)
                .and_then(|t| t.parse().ok())
                .or_else(|| cbor::as_i128(s).and_then(|n| u128::try_from(n).ok()))
        });
        let failure_blobs = match cbor::map_get(results, "failure_blobs") {
            Some(Cbor::Array(blobs)) => Some(
                blobs
                    .iter()
                    .filter_map(|b| match b {
                        Cbor::Bytes(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
                        other => cbor::as_text(other).map(str::to_string),
                    })
                    .collect(),
            ),
            _ => None,
        };
        RunResults {
            passed: !matches!(cbor::map_get(results, "passed"), Some(Cbor::Bool(false))),
            test_cases: count("test_cases"),
            valid_test_cases: count("valid_test_cases").unwrap_or(0),
            invalid_test_cases: count("invalid_test_cases").unwrap_or(0),
            interesting_test_cases: count("interesting_test_cases").unwrap_or(0),
            seed,
            error: text("error"),
            failure_blobs,
            flaky: text("flaky"),
            health_check_failure: text("health_check_failure"),
        }
    }
}

/// The name of every event, as it travels in the `event` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventName {
    /// A test case starts on a new stream.
    TestCase,
    /// The search is over.
    TestDone,
}

impl EventName {
    /// The name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            EventName::TestCase => "test_case",
            EventName::TestDone => "test_done",
        }
    }
}

/// An event on a run's stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A test case starts on stream `stream_id`.
    TestCase {
        /// The server-created stream of the test case.
        stream_id: u32,
        /// Whether this is the final replay of a failure (for the report).
        is_final: bool,
    },
    /// The search is over.
    TestDone(RunResults),
}

/// Why an event could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// An event with a name this side does not know.
    #[error("unexpected event {0:?} on the run's stream")]
    Unknown(String),
    /// A `test_case` event without a usable stream id.
    #[error("test_case event without an integer stream_id: {0}")]
    NoStream(String),
}

impl Event {
    /// The message for this event.
    pub fn encode(&self) -> Cbor {
        match self {
            Event::TestCase {
                stream_id,
                is_final,
            } => cbor::text_map([
                ("event", Cbor::Text(EventName::TestCase.as_str().into())),
                ("stream_id", cbor::integer(i128::from(*stream_id))),
                ("is_final", Cbor::Bool(*is_final)),
            ]),
            Event::TestDone(results) => cbor::text_map([
                ("event", Cbor::Text(EventName::TestDone.as_str().into())),
                ("results", results.encode()),
            ]),
        }
    }

    /// Reads an event message.
    pub fn decode(message: &Cbor) -> Result<Event, EventError> {
        let name = cbor::map_get(message, "event")
            .and_then(cbor::as_text)
            .unwrap_or("");
        if name == EventName::TestCase.as_str() {
            let stream_id = cbor::map_get(message, "stream_id")
                .and_then(cbor::as_i128)
                .and_then(|id| u32::try_from(id).ok())
                .ok_or_else(|| EventError::NoStream(format!("{message:?}")))?;
            Ok(Event::TestCase {
                stream_id,
                is_final: matches!(cbor::map_get(message, "is_final"), Some(Cbor::Bool(true))),
            })
        } else if name == EventName::TestDone.as_str() {
            Ok(Event::TestDone(RunResults::decode(
                cbor::map_get(message, "results").unwrap_or(&Cbor::Null),
            )))
        } else {
            Err(EventError::Unknown(name.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_results_round_trip() {
        let results = RunResults {
            passed: false,
            test_cases: Some(10),
            valid_test_cases: 8,
            invalid_test_cases: 1,
            interesting_test_cases: 1,
            seed: Some(u128::MAX),
            error: None,
            failure_blobs: Some(vec!["AAAA".into()]),
            flaky: Some("flaky".into()),
            health_check_failure: None,
        };
        for event in [
            Event::TestCase {
                stream_id: 4,
                is_final: true,
            },
            Event::TestDone(results.clone()),
        ] {
            let wire = cbor::decode(&cbor::encode(&event.encode())).unwrap();
            assert_eq!(Event::decode(&wire), Ok(event));
        }
        assert_eq!(
            Event::decode(&cbor::text_map([("event", Cbor::Text("nope".into()))])),
            Err(EventError::Unknown("nope".into()))
        );
    }
}
