//! Replies: `{"result": value}` or `{"error": message, "type": kind}`.

use geist_wire::cbor::{self, Value as Cbor};

/// The `type` of an error reply.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A field is missing or of the wrong type, or the command is unknown.
    ValueError,
    /// The fields are well formed but not a valid request (a bad schema).
    InvalidArgument,
    /// The engine stopped the test case (an overrun or a rejection): the
    /// client ends it quietly.
    StopTest,
    /// The message broke the protocol (bad CBOR, a bad stream).
    ProtocolError,
    /// Any other type a peer sends (hegel-core's `FlakyReplay`, ...).
    Other(String),
}

impl ErrorKind {
    /// The type on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorKind::ValueError => "ValueError",
            ErrorKind::InvalidArgument => "InvalidArgument",
            ErrorKind::StopTest => "StopTest",
            ErrorKind::ProtocolError => "ProtocolError",
            ErrorKind::Other(other) => other,
        }
    }

    /// The kind of a wire type.
    pub fn from_name(name: &str) -> ErrorKind {
        match name {
            "ValueError" => ErrorKind::ValueError,
            "InvalidArgument" => ErrorKind::InvalidArgument,
            "StopTest" => ErrorKind::StopTest,
            "ProtocolError" => ErrorKind::ProtocolError,
            other => ErrorKind::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error reply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ErrorReply {
    /// Its type.
    pub kind: ErrorKind,
    /// What went wrong.
    pub message: String,
}

impl ErrorReply {
    /// An error reply of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ErrorReply {
        ErrorReply {
            kind,
            message: message.into(),
        }
    }

    /// A `ProtocolError` reply.
    pub fn protocol(message: impl Into<String>) -> ErrorReply {
        ErrorReply::new(ErrorKind::ProtocolError, message)
    }

    /// The reply's payload.
    pub fn encode(&self) -> Vec<u8> {
        cbor::encode(&cbor::text_map([
            ("error", Cbor::Text(self.message.clone())),
            ("type", Cbor::Text(self.kind.as_str().to_string())),
        ]))
    }
}

/// The payload of a successful reply.
pub fn encode_result(value: Cbor) -> Vec<u8> {
    cbor::encode(&cbor::text_map([("result", value)]))
}

/// A decoded reply payload: the `result` (a reply that is not a map is its
/// own result: the spec's bare `true` to `run_test`), or the error.
pub fn decode_reply(payload: Cbor) -> Result<Cbor, ErrorReply> {
    let Cbor::Map(entries) = payload else {
        return Ok(payload);
    };
    let mut result = Cbor::Null;
    let mut error = None;
    let mut kind = None;
    for (key, value) in entries {
        match key {
            Cbor::Text(k) if k == "result" => result = value,
            Cbor::Text(k) if k == "error" => error = Some(value),
            Cbor::Text(k) if k == "type" => kind = Some(value),
            _ => {}
        }
    }
    match error {
        None => Ok(result),
        Some(error) => Err(ErrorReply {
            kind: ErrorKind::from_name(kind.as_ref().and_then(cbor::as_text).unwrap_or("Error")),
            message: cbor::as_text(&error)
                .map(str::to_string)
                .unwrap_or_else(|| format!("{error:?}")),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_round_trip() {
        let ok = cbor::decode(&encode_result(cbor::integer(3))).unwrap();
        assert_eq!(decode_reply(ok), Ok(cbor::integer(3)));
        let error = ErrorReply::new(ErrorKind::Other("FlakyReplay".into()), "no");
        let wire = cbor::decode(&error.encode()).unwrap();
        assert_eq!(decode_reply(wire), Err(error));
        assert_eq!(decode_reply(Cbor::Bool(true)), Ok(Cbor::Bool(true)));
    }
}
