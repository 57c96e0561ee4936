//! Commands on a test case's stream: draws, spans, collections, pools,
//! state machines, targets, and the verdict.

use super::message::{CommandError, CommandName, Fields, command_name};
use crate::version::{Behaviour, ProtocolVersion};
use geist_wire::cbor::{self, Value as Cbor};

/// How a test case ended, as the client reports it in `mark_complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseStatus {
    /// It passed.
    Valid,
    /// It was rejected.
    Invalid,
    /// It failed.
    Interesting,
    /// It ran out of data.
    Overrun,
}

impl CaseStatus {
    /// The status on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Valid => "VALID",
            CaseStatus::Invalid => "INVALID",
            CaseStatus::Interesting => "INTERESTING",
            CaseStatus::Overrun => "OVERRUN",
        }
    }

    fn from_name(name: &str) -> Option<CaseStatus> {
        [
            CaseStatus::Valid,
            CaseStatus::Invalid,
            CaseStatus::Interesting,
            CaseStatus::Overrun,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// A command on a test case's stream.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseCommand {
    /// Draw a value of `schema`.
    Generate {
        /// The schema map, as sent.
        schema: Cbor,
    },
    /// Open a span with a label.
    StartSpan {
        /// The span's label (0 when absent).
        label: u64,
    },
    /// Close the innermost span.
    StopSpan {
        /// Whether its choices did not contribute (a rejected attempt).
        discard: bool,
    },
    /// Record a score to maximise.
    Target {
        /// The score.
        value: f64,
        /// The label it is recorded under.
        label: String,
    },
    /// Start sizing a collection.
    NewCollection {
        /// The fewest elements.
        min_size: usize,
        /// The most elements, if bounded.
        max_size: Option<usize>,
    },
    /// Ask whether collection `id` gets another element.
    CollectionMore {
        /// The id `new_collection` returned.
        collection_id: i128,
    },
    /// Say collection `id`'s last element was not kept.
    CollectionReject {
        /// The id `new_collection` returned.
        collection_id: i128,
    },
    /// Create a variable pool.
    NewPool,
    /// Add a variable to a pool.
    PoolAdd {
        /// The id `new_pool` returned.
        pool_id: i128,
    },
    /// Let the engine choose a variable of a pool.
    PoolGenerate {
        /// The id `new_pool` returned.
        pool_id: i128,
        /// Whether the variable leaves the pool.
        consume: bool,
    },
    /// Remove a variable from a pool.
    PoolConsume {
        /// The id `new_pool` returned.
        pool_id: i128,
        /// The variable.
        variable_id: i128,
    },
    /// Create an engine-owned state machine (protocol 0.16).
    NewStateMachine {
        /// The rules' names (at least one).
        rule_names: Vec<String>,
    },
    /// Draw the next rule of a state machine (protocol 0.16).
    StateMachineNextRule {
        /// The id `new_state_machine` returned.
        state_machine_id: i128,
    },
    /// Conclude the test case.
    MarkComplete {
        /// How it ended.
        status: CaseStatus,
        /// Where a failure came from (distinct origins are distinct bugs).
        origin: Option<String>,
    },
}

impl CaseCommand {
    /// Decodes a test case's command in `version`.
    pub fn decode(message: Cbor, version: ProtocolVersion) -> Result<CaseCommand, CommandError> {
        let mut fields = Fields::of(message);
        let name = command_name(&fields, version)?;
        Ok(match name {
            CommandName::Generate => CaseCommand::Generate {
                schema: fields
                    .take("schema")
                    .ok_or_else(|| CommandError::value("generate requires a \"schema\" map"))?,
            },
            CommandName::StartSpan => CaseCommand::StartSpan {
                label: fields.integer("label").unwrap_or(0) as u64,
            },
            CommandName::StopSpan => CaseCommand::StopSpan {
                discard: fields.is_true("discard"),
            },
            CommandName::Target => {
                let value = fields
                    .get("value")
                    .and_then(cbor::as_f64)
                    .ok_or_else(|| CommandError::value("target requires a numeric \"value\""))?;
                let label = fields
                    .get("label")
                    .map(|l| {
                        cbor::as_text(l)
                            .map(str::to_string)
                            .unwrap_or_else(|| format!("{l:?}"))
                    })
                    .unwrap_or_default();
                CaseCommand::Target { value, label }
            }
            CommandName::NewCollection => {
                let min_size = fields.integer("min_size").unwrap_or(0).max(0) as usize;
                let max_size = fields.integer("max_size").map(|m| m.max(0) as usize);
                if max_size.is_some_and(|m| m < min_size) {
                    return Err(CommandError::invalid(format!(
                        "Cannot have max_size < min_size (min_size={min_size}, max_size={max_size:?})"
                    )));
                }
                CaseCommand::NewCollection { min_size, max_size }
            }
            CommandName::CollectionMore => CaseCommand::CollectionMore {
                collection_id: fields.required_integer("collection_id")?,
            },
            CommandName::CollectionReject => CaseCommand::CollectionReject {
                collection_id: fields.required_integer("collection_id")?,
            },
            CommandName::NewPool => CaseCommand::NewPool,
            CommandName::PoolAdd => CaseCommand::PoolAdd {
                pool_id: fields.required_integer("pool_id")?,
            },
            CommandName::PoolGenerate => CaseCommand::PoolGenerate {
                pool_id: fields.required_integer("pool_id")?,
                consume: fields.is_true("consume"),
            },
            CommandName::PoolConsume => CaseCommand::PoolConsume {
                pool_id: fields.required_integer("pool_id")?,
                variable_id: fields.required_integer("variable_id")?,
            },
            CommandName::NewStateMachine => {
                // hegel-core 0.10 (protocol 0.16) sends `rules: [{"name": ..}]`
                // and `invariants: [{"name": ..}]` (the invariants are the
                // client's to run; the server only names them); earlier
                // drafts sent `rule_names: [..]`, still read.
                let named = |item: &Cbor| match item {
                    Cbor::Map(_) => cbor::map_get(item, "name")
                        .and_then(cbor::as_text)
                        .map(str::to_string),
                    other => cbor::as_text(other).map(str::to_string),
                };
                let rule_names: Vec<String> = match fields.get("rules").or(fields.get("rule_names"))
                {
                    Some(Cbor::Array(rules)) => rules
                        .iter()
                        .enumerate()
                        .map(|(i, r)| {
                            named(r).ok_or_else(|| {
                                CommandError::invalid(format!(
                                    "new_state_machine: rule {} has no name: {r:?}",
                                    i + 1
                                ))
                            })
                        })
                        .collect::<Result<_, _>>()?,
                    _ => Vec::new(),
                };
                if rule_names.is_empty() {
                    return Err(CommandError::invalid(
                        "new_state_machine requires a non-empty rules list",
                    ));
                }
                CaseCommand::NewStateMachine { rule_names }
            }
            CommandName::StateMachineNextRule => CaseCommand::StateMachineNextRule {
                state_machine_id: fields.required_integer("state_machine_id")?,
            },
            CommandName::MarkComplete => {
                let status = fields.text("status").unwrap_or("");
                let status = CaseStatus::from_name(status)
                    .filter(|s| {
                        *s != CaseStatus::Overrun || !version.has(Behaviour::RefusesOverrunStatus)
                    })
                    .ok_or_else(|| {
                        CommandError::value(format!("Unexpected mark_complete status: {status:?}"))
                    })?;
                CaseCommand::MarkComplete {
                    status,
                    origin: fields.text("origin").map(str::to_string),
                }
            }
            CommandName::RunTest | CommandName::SingleTestCase => {
                return Err(CommandError::value(format!("Unknown command: {name}")));
            }
        })
    }

    /// The command's name.
    pub fn name(&self) -> CommandName {
        match self {
            CaseCommand::Generate { .. } => CommandName::Generate,
            CaseCommand::StartSpan { .. } => CommandName::StartSpan,
            CaseCommand::StopSpan { .. } => CommandName::StopSpan,
            CaseCommand::Target { .. } => CommandName::Target,
            CaseCommand::NewCollection { .. } => CommandName::NewCollection,
            CaseCommand::CollectionMore { .. } => CommandName::CollectionMore,
            CaseCommand::CollectionReject { .. } => CommandName::CollectionReject,
            CaseCommand::NewPool => CommandName::NewPool,
            CaseCommand::PoolAdd { .. } => CommandName::PoolAdd,
            CaseCommand::PoolGenerate { .. } => CommandName::PoolGenerate,
            CaseCommand::PoolConsume { .. } => CommandName::PoolConsume,
            CaseCommand::NewStateMachine { .. } => CommandName::NewStateMachine,
            CaseCommand::StateMachineNextRule { .. } => CommandName::StateMachineNextRule,
            CaseCommand::MarkComplete { .. } => CommandName::MarkComplete,
        }
    }

    /// The message for this command.
    pub fn encode(&self) -> Cbor {
        let mut map: Vec<(&str, Cbor)> = vec![("command", Cbor::Text(self.name().as_str().into()))];
        match self {
            CaseCommand::Generate { schema } => map.push(("schema", schema.clone())),
            CaseCommand::StartSpan { label } => {
                map.push(("label", cbor::integer(i128::from(*label))))
            }
            CaseCommand::StopSpan { discard } => map.push(("discard", Cbor::Bool(*discard))),
            CaseCommand::Target { value, label } => {
                map.push(("value", Cbor::Float(*value)));
                map.push(("label", Cbor::Text(label.clone())));
            }
            CaseCommand::NewCollection { min_size, max_size } => {
                map.push(("min_size", cbor::integer(*min_size as i128)));
                if let Some(max) = max_size {
                    map.push(("max_size", cbor::integer(*max as i128)));
                }
            }
            CaseCommand::CollectionMore { collection_id }
            | CaseCommand::CollectionReject { collection_id } => {
                map.push(("collection_id", cbor::integer(*collection_id)))
            }
            CaseCommand::NewPool => {}
            CaseCommand::PoolAdd { pool_id } => map.push(("pool_id", cbor::integer(*pool_id))),
            CaseCommand::PoolGenerate { pool_id, consume } => {
                map.push(("pool_id", cbor::integer(*pool_id)));
                map.push(("consume", Cbor::Bool(*consume)));
            }
            CaseCommand::PoolConsume {
                pool_id,
                variable_id,
            } => {
                map.push(("pool_id", cbor::integer(*pool_id)));
                map.push(("variable_id", cbor::integer(*variable_id)));
            }
            CaseCommand::NewStateMachine { rule_names } => map.push((
                "rules",
                Cbor::Array(
                    rule_names
                        .iter()
                        .map(|n| cbor::text_map([("name", Cbor::Text(n.clone()))]))
                        .collect(),
                ),
            )),
            CaseCommand::StateMachineNextRule { state_machine_id } => {
                map.push(("state_machine_id", cbor::integer(*state_machine_id)))
            }
            CaseCommand::MarkComplete { status, origin } => {
                map.push(("status", Cbor::Text(status.as_str().into())));
                map.push((
                    "origin",
                    origin
                        .as_ref()
                        .map_or(Cbor::Null, |o| Cbor::Text(o.clone())),
                ));
            }
        }
        cbor::text_map(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::ErrorKind;
    use crate::version::{DEFAULT_VERSION, SUPPORTED_VERSIONS};

    fn latest() -> ProtocolVersion {
        *SUPPORTED_VERSIONS.last().unwrap()
    }

    #[test]
    fn case_commands_round_trip() {
        let commands = vec![
            CaseCommand::Generate {
                schema: cbor::text_map([("type", Cbor::Text("boolean".into()))]),
            },
            CaseCommand::StartSpan { label: 7 },
            CaseCommand::StopSpan { discard: true },
            CaseCommand::Target {
                value: 1.5,
                label: "score".into(),
            },
            CaseCommand::NewCollection {
                min_size: 1,
                max_size: Some(3),
            },
            CaseCommand::NewCollection {
                min_size: 0,
                max_size: None,
            },
            CaseCommand::CollectionMore { collection_id: 0 },
            CaseCommand::CollectionReject { collection_id: 2 },
            CaseCommand::NewPool,
            CaseCommand::PoolAdd { pool_id: 0 },
            CaseCommand::PoolGenerate {
                pool_id: 1,
                consume: true,
            },
            CaseCommand::PoolConsume {
                pool_id: 1,
                variable_id: 4,
            },
            CaseCommand::NewStateMachine {
                rule_names: vec!["push".into(), "pop".into()],
            },
            CaseCommand::StateMachineNextRule {
                state_machine_id: 0,
            },
            CaseCommand::MarkComplete {
                status: CaseStatus::Interesting,
                origin: Some("here".into()),
            },
            CaseCommand::MarkComplete {
                status: CaseStatus::Valid,
                origin: None,
            },
        ];
        for command in commands {
            let wire = cbor::decode(&cbor::encode(&command.encode())).unwrap();
            assert_eq!(CaseCommand::decode(wire, latest()), Ok(command));
        }
    }

    #[test]
    fn bad_commands_name_what_is_wrong() {
        let decode = |entries: Vec<(&str, Cbor)>| {
            CaseCommand::decode(cbor::text_map(entries), DEFAULT_VERSION).unwrap_err()
        };
        let text = |s: &str| Cbor::Text(s.into());
        assert_eq!(decode(vec![]).message, "request has no \"command\" text");
        assert_eq!(
            decode(vec![("command", text("frobnicate"))]).message,
            "Unknown command: frobnicate"
        );
        // State machines are protocol 0.16's; run_test belongs on the control stream.
        assert_eq!(
            decode(vec![("command", text("new_state_machine"))]).message,
            "Unknown command: new_state_machine"
        );
        assert_eq!(
            decode(vec![("command", text("run_test"))]).message,
            "Unknown command: run_test"
        );
        let e = decode(vec![("command", text("collection_more"))]);
        assert_eq!(e.message, "missing or non-integer field \"collection_id\"");
        assert_eq!(e.kind, ErrorKind::ValueError);
        let e = decode(vec![
            ("command", text("new_collection")),
            ("min_size", cbor::integer(3)),
            ("max_size", cbor::integer(1)),
        ]);
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert!(e.message.contains("max_size < min_size"), "{}", e.message);
        let e = decode(vec![
            ("command", text("mark_complete")),
            ("status", text("MAYBE")),
        ]);
        assert_eq!(e.message, "Unexpected mark_complete status: \"MAYBE\"");
        let e = decode(vec![("command", text("generate")), ("schema", Cbor::Null)]);
        assert_eq!(e.message, "generate requires a \"schema\" map");
    }

    #[test]
    fn new_state_machine_reads_hegel_core_0_10_rules_and_older_rule_names() {
        let rule = |n: &str| cbor::text_map([("name", Cbor::Text(n.into()))]);
        let v16 = ProtocolVersion::parse("0.16").unwrap();
        let current = CaseCommand::decode(
            cbor::text_map([
                ("command", Cbor::Text("new_state_machine".into())),
                ("rules", Cbor::Array(vec![rule("push"), rule("pop")])),
                ("invariants", Cbor::Array(vec![rule("sorted")])),
            ]),
            v16,
        )
        .unwrap();
        let older = CaseCommand::decode(
            cbor::text_map([
                ("command", Cbor::Text("new_state_machine".into())),
                (
                    "rule_names",
                    Cbor::Array(vec![Cbor::Text("push".into()), Cbor::Text("pop".into())]),
                ),
            ]),
            v16,
        )
        .unwrap();
        let expected = CaseCommand::NewStateMachine {
            rule_names: vec!["push".into(), "pop".into()],
        };
        assert_eq!(current, expected);
        assert_eq!(older, expected);
    }

    #[test]
    fn overrun_is_refused_from_protocol_0_12() {
        let mark = |version: &str| {
            CaseCommand::decode(
                cbor::text_map([
                    ("command", Cbor::Text("mark_complete".into())),
                    ("status", Cbor::Text("OVERRUN".into())),
                ]),
                ProtocolVersion::parse(version).unwrap(),
            )
        };
        let refused = mark("0.12").unwrap_err();
        assert!(
            format!("{refused:?}").contains("Unexpected mark_complete status"),
            "{refused:?}"
        );
        assert!(mark("0.16").is_err());
        assert!(matches!(
            mark("0.10"),
            Ok(CaseCommand::MarkComplete {
                status: CaseStatus::Overrun,
                ..
            })
        ));
    }
}
