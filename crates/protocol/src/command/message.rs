//! What every command map has: a name, fields, and the error a command can
//! be refused with.

use crate::reply::{ErrorKind, ErrorReply};
use crate::version::{Behaviour, ProtocolVersion};
use geist_wire::cbor::{self, Value as Cbor};

/// The name of every command, as it travels in the `command` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommandName {
    /// Start a run of many test cases (control stream).
    RunTest,
    /// Run one randomly generated, final test case (control stream).
    SingleTestCase,
    /// Draw a value of a schema.
    Generate,
    /// Open a span.
    StartSpan,
    /// Close the innermost span.
    StopSpan,
    /// Record a targeting observation.
    Target,
    /// Start sizing a collection.
    NewCollection,
    /// Ask whether a collection gets another element.
    CollectionMore,
    /// Say a collection's last element was not kept.
    CollectionReject,
    /// Create a variable pool.
    NewPool,
    /// Add a variable to a pool.
    PoolAdd,
    /// Draw a variable from a pool.
    PoolGenerate,
    /// Remove a variable from a pool.
    PoolConsume,
    /// Create an engine-owned state machine.
    NewStateMachine,
    /// Draw a state machine's next rule.
    StateMachineNextRule,
    /// Conclude the test case.
    MarkComplete,
}

impl CommandName {
    /// Every command name.
    pub const ALL: &'static [CommandName] = &[
        CommandName::RunTest,
        CommandName::SingleTestCase,
        CommandName::Generate,
        CommandName::StartSpan,
        CommandName::StopSpan,
        CommandName::Target,
        CommandName::NewCollection,
        CommandName::CollectionMore,
        CommandName::CollectionReject,
        CommandName::NewPool,
        CommandName::PoolAdd,
        CommandName::PoolGenerate,
        CommandName::PoolConsume,
        CommandName::NewStateMachine,
        CommandName::StateMachineNextRule,
        CommandName::MarkComplete,
    ];

    /// The name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            CommandName::RunTest => "run_test",
            CommandName::SingleTestCase => "single_test_case",
            CommandName::Generate => "generate",
            CommandName::StartSpan => "start_span",
            CommandName::StopSpan => "stop_span",
            CommandName::Target => "target",
            CommandName::NewCollection => "new_collection",
            CommandName::CollectionMore => "collection_more",
            CommandName::CollectionReject => "collection_reject",
            CommandName::NewPool => "new_pool",
            CommandName::PoolAdd => "pool_add",
            CommandName::PoolGenerate => "pool_generate",
            CommandName::PoolConsume => "pool_consume",
            CommandName::NewStateMachine => "new_state_machine",
            CommandName::StateMachineNextRule => "state_machine_next_rule",
            CommandName::MarkComplete => "mark_complete",
        }
    }

    /// The command of a wire name.
    pub fn from_name(name: &str) -> Option<CommandName> {
        CommandName::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == name)
    }

    /// Whether `version` has this command.
    pub fn exists_in(self, version: ProtocolVersion) -> bool {
        match self {
            CommandName::SingleTestCase => version.has(Behaviour::SingleTestCase),
            CommandName::NewStateMachine | CommandName::StateMachineNextRule => {
                version.has(Behaviour::EngineStateMachines)
            }
            _ => true,
        }
    }
}

impl std::fmt::Display for CommandName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a command was refused; it becomes the error reply.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    /// What was wrong, naming the field.
    pub message: String,
    /// The reply's error type.
    pub kind: ErrorKind,
}

impl CommandError {
    /// A `ValueError`: a field is missing or of the wrong type.
    pub fn value(message: impl Into<String>) -> CommandError {
        CommandError {
            message: message.into(),
            kind: ErrorKind::ValueError,
        }
    }

    /// An `InvalidArgument`: the fields are well formed but not a valid request.
    pub fn invalid(message: impl Into<String>) -> CommandError {
        CommandError {
            message: format!("InvalidArgument: {}", message.into()),
            kind: ErrorKind::InvalidArgument,
        }
    }

    /// The error reply carrying this error.
    pub fn reply(&self) -> ErrorReply {
        ErrorReply::new(self.kind.clone(), self.message.clone())
    }
}

/// The fields of a command map, for typed reads.
pub(crate) struct Fields(Vec<(Cbor, Cbor)>);

impl Fields {
    /// The fields of a map (a non-map has none).
    pub(crate) fn of(message: Cbor) -> Fields {
        match message {
            Cbor::Map(entries) => Fields(entries),
            _ => Fields(Vec::new()),
        }
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.0
            .iter()
            .position(|(k, _)| matches!(k, Cbor::Text(t) if t == key))
    }

    /// The value under `key`, null counting as absent.
    pub(crate) fn get(&self, key: &str) -> Option<&Cbor> {
        match self.position(key).map(|i| &self.0[i].1) {
            Some(Cbor::Null) | None => None,
            Some(v) => Some(v),
        }
    }

    /// The value under `key` as sent (null included).
    pub(crate) fn raw(&self, key: &str) -> Option<&Cbor> {
        self.position(key).map(|i| &self.0[i].1)
    }

    /// Takes the value under `key` out, null counting as absent.
    pub(crate) fn take(&mut self, key: &str) -> Option<Cbor> {
        match self.position(key).map(|i| self.0.swap_remove(i).1) {
            Some(Cbor::Null) | None => None,
            Some(v) => Some(v),
        }
    }

    /// An integer field, if present and an integer.
    pub(crate) fn integer(&self, key: &str) -> Option<i128> {
        self.get(key).and_then(cbor::as_i128)
    }

    /// A required integer field.
    pub(crate) fn required_integer(&self, key: &str) -> Result<i128, CommandError> {
        self.integer(key)
            .ok_or_else(|| CommandError::value(format!("missing or non-integer field {key:?}")))
    }

    /// Whether a field is `true`.
    pub(crate) fn is_true(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Cbor::Bool(true)))
    }

    /// A text field, if present and text.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(cbor::as_text)
    }

    /// A list of strings (absent is empty).
    pub(crate) fn text_list(&self, key: &str) -> Result<Vec<String>, CommandError> {
        let bad = || CommandError::value(format!("{key} must be a list of strings"));
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Cbor::Array(items)) => items
                .iter()
                .map(|v| cbor::as_text(v).map(str::to_string).ok_or_else(bad))
                .collect(),
            Some(_) => Err(bad()),
        }
    }
}

/// The command name of a message, checked against `version`.
pub(crate) fn command_name(
    fields: &Fields,
    version: ProtocolVersion,
) -> Result<CommandName, CommandError> {
    let Some(name) = fields.text("command") else {
        return Err(CommandError::value("request has no \"command\" text"));
    };
    CommandName::from_name(name)
        .filter(|c| c.exists_in(version))
        .ok_or_else(|| CommandError::value(format!("Unknown command: {name}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in CommandName::ALL {
            assert_eq!(CommandName::from_name(name.as_str()), Some(*name));
        }
        assert_eq!(CommandName::from_name("nope"), None);
    }
}
