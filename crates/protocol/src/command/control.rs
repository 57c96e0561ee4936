//! Commands on the control stream: `run_test` and `single_test_case`.

use super::message::{CommandError, CommandName, Fields, command_name};
use crate::version::ProtocolVersion;
use geist_wire::cbor::{self, Value as Cbor};

/// Where the example database lives, as a `run_test` asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatabaseChoice {
    /// The field is absent: the server's default directory.
    Default,
    /// `null`: no database.
    Disabled,
    /// The field's text: a directory, or any of geist's database settings
    /// (`redis://...`, `readonly:X`, several comma-separated), which
    /// geist-server reads with `geist_database::DatabaseSetting::parse`.
    Directory(String),
}

/// A `run_test` command.
#[derive(Clone, Debug, PartialEq)]
pub struct RunTest {
    /// The stream the client opened for the run, as sent.
    pub stream_id: Option<i128>,
    /// Number of valid test cases wanted.
    pub test_cases: u64,
    /// An explicit seed.
    pub seed: Option<u128>,
    /// Derive the seed from the database key.
    pub derandomize: bool,
    /// The database key.
    pub database_key: Option<Vec<u8>>,
    /// Health checks to suppress (names as sent).
    pub suppress_health_check: Vec<String>,
    /// Phases to run (names as sent), if restricted.
    pub phases: Option<Vec<String>>,
    /// Report every distinct failure (the default) or only the first.
    pub report_multiple_failures: bool,
    /// The example database.
    pub database: DatabaseChoice,
    /// A failure to replay instead of a search (from an earlier `failure_blobs`).
    pub failure_blob: Option<String>,
}

impl RunTest {
    /// The fields of a `run_test` command.
    pub(crate) fn decode(fields: &Fields) -> Result<RunTest, CommandError> {
        let test_cases = fields
            .integer("test_cases")
            .ok_or_else(|| CommandError::value("run_test requires an integer test_cases"))?;
        let test_cases = u64::try_from(test_cases).map_err(|_| {
            CommandError::value(if test_cases < 0 {
                format!("test_cases must be non-negative, got {test_cases}")
            } else {
                format!(
                    "test_cases must be at most {} (2^64 - 1), got {test_cases}",
                    u64::MAX
                )
            })
        })?;
        let seed = match fields.get("seed") {
            None => None,
            Some(v) => Some(
                cbor::as_i128(v)
                    .map(|s| s as u128)
                    .ok_or_else(|| CommandError::value("seed must be an integer"))?,
            ),
        };
        let database_key = match fields.get("database_key") {
            None => None,
            Some(Cbor::Bytes(b)) => Some(b.clone()),
            Some(v) => cbor::as_text(v).map(|t| t.as_bytes().to_vec()),
        };
        let phases = match fields.get("phases") {
            None => None,
            Some(_) => Some(fields.text_list("phases")?),
        };
        let database = match fields.raw("database") {
            None => DatabaseChoice::Default,
            Some(Cbor::Null) => DatabaseChoice::Disabled,
            Some(v) => DatabaseChoice::Directory(
                cbor::as_text(v)
                    .map(str::to_string)
                    .ok_or_else(|| CommandError::value("database must be a path string or null"))?,
            ),
        };
        let failure_blob = match fields.get("failure_blob") {
            None => None,
            Some(Cbor::Bytes(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            Some(v) => Some(
                cbor::as_text(v)
                    .map(str::to_string)
                    .ok_or_else(|| CommandError::value("failure_blob must be a string"))?,
            ),
        };
        Ok(RunTest {
            stream_id: fields.integer("stream_id"),
            test_cases,
            seed,
            derandomize: fields.is_true("derandomize"),
            database_key,
            suppress_health_check: fields.text_list("suppress_health_check")?,
            phases,
            report_multiple_failures: !matches!(
                fields.get("report_multiple_failures"),
                Some(Cbor::Bool(false))
            ),
            database,
            failure_blob,
        })
    }

    /// The message for this command.
    pub fn encode(&self) -> Cbor {
        let mut map = vec![("command", Cbor::Text(CommandName::RunTest.as_str().into()))];
        if let Some(id) = self.stream_id {
            map.push(("stream_id", cbor::integer(id)));
        }
        map.push(("test_cases", cbor::integer(i128::from(self.test_cases))));
        if let Some(seed) = self.seed {
            map.push(("seed", cbor::integer(seed as i128)));
        }
        map.push(("derandomize", Cbor::Bool(self.derandomize)));
        map.push((
            "database_key",
            self.database_key
                .as_ref()
                .map_or(Cbor::Null, |k| Cbor::Bytes(k.clone())),
        ));
        match &self.database {
            DatabaseChoice::Default => {}
            DatabaseChoice::Disabled => map.push(("database", Cbor::Null)),
            DatabaseChoice::Directory(path) => map.push(("database", Cbor::Text(path.clone()))),
        }
        map.push((
            "suppress_health_check",
            Cbor::Array(
                self.suppress_health_check
                    .iter()
                    .map(|n| Cbor::Text(n.clone()))
                    .collect(),
            ),
        ));
        if let Some(phases) = &self.phases {
            map.push((
                "phases",
                Cbor::Array(phases.iter().map(|n| Cbor::Text(n.clone())).collect()),
            ));
        }
        map.push((
            "report_multiple_failures",
            Cbor::Bool(self.report_multiple_failures),
        ));
        if let Some(blob) = &self.failure_blob {
            map.push(("failure_blob", Cbor::Text(blob.clone())));
        }
        cbor::text_map(map)
    }
}

/// A command on the control stream.
#[derive(Clone, Debug, PartialEq)]
pub enum ControlCommand {
    /// `run_test`: run many test cases on a new stream.
    RunTest(RunTest),
    /// `single_test_case`: run one final test case on a new stream.
    SingleTestCase {
        /// The stream the client opened for it.
        stream_id: Option<i128>,
        /// The seed, if the client chose one.
        seed: Option<u128>,
    },
}

impl ControlCommand {
    /// Whether `message` names a control command `version` has (`run_test`;
    /// `single_test_case` from 0.13), whatever its other fields.
    pub fn is_named_in(message: &Cbor, version: ProtocolVersion) -> bool {
        let Some(Cbor::Text(name)) = cbor::map_get(message, "command") else {
            return false;
        };
        matches!(
            CommandName::from_name(name).filter(|c| c.exists_in(version)),
            Some(CommandName::RunTest | CommandName::SingleTestCase)
        )
    }

    /// Decodes a control-stream message in `version`.
    pub fn decode(message: Cbor, version: ProtocolVersion) -> Result<ControlCommand, CommandError> {
        let fields = Fields::of(message);
        match command_name(&fields, version)? {
            CommandName::RunTest => RunTest::decode(&fields).map(ControlCommand::RunTest),
            CommandName::SingleTestCase => Ok(ControlCommand::SingleTestCase {
                stream_id: fields.integer("stream_id"),
                seed: fields.integer("seed").map(|s| s as u128),
            }),
            other => Err(CommandError::value(format!("Unknown command: {other}"))),
        }
    }

    /// The message for this command.
    pub fn encode(&self) -> Cbor {
        match self {
            ControlCommand::RunTest(run) => run.encode(),
            ControlCommand::SingleTestCase { stream_id, seed } => {
                let mut map = vec![(
                    "command",
                    Cbor::Text(CommandName::SingleTestCase.as_str().into()),
                )];
                if let Some(id) = stream_id {
                    map.push(("stream_id", cbor::integer(*id)));
                }
                if let Some(seed) = seed {
                    map.push(("seed", cbor::integer(*seed as i128)));
                }
                cbor::text_map(map)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::DEFAULT_VERSION;

    fn run_test() -> RunTest {
        RunTest {
            stream_id: Some(3),
            test_cases: 100,
            seed: Some(42),
            derandomize: false,
            database_key: Some(b"key".to_vec()),
            suppress_health_check: vec!["too_slow".into()],
            phases: Some(vec!["generate".into()]),
            report_multiple_failures: false,
            database: DatabaseChoice::Disabled,
            failure_blob: None,
        }
    }

    #[test]
    fn run_test_round_trips() {
        for database in [
            DatabaseChoice::Default,
            DatabaseChoice::Disabled,
            DatabaseChoice::Directory("db".into()),
        ] {
            let run = RunTest {
                database,
                ..run_test()
            };
            let wire = cbor::decode(&cbor::encode(&run.encode())).unwrap();
            assert_eq!(
                ControlCommand::decode(wire, DEFAULT_VERSION),
                Ok(ControlCommand::RunTest(run))
            );
        }
    }

    #[test]
    fn test_cases_out_of_range_say_which_way() {
        let decode = |n: i128| {
            let mut message = run_test().encode();
            if let Cbor::Map(entries) = &mut message {
                for (k, v) in entries.iter_mut() {
                    if *k == Cbor::Text("test_cases".into()) {
                        *v = cbor::integer(n);
                    }
                }
            }
            ControlCommand::decode(message, DEFAULT_VERSION)
                .unwrap_err()
                .message
        };
        assert!(decode(-1).contains("non-negative"), "{}", decode(-1));
        let huge = decode(1 << 64);
        assert!(huge.contains("at most 18446744073709551615"), "{huge}");
        assert!(!huge.contains("non-negative"), "{huge}");
    }
}
