//! A long-lived `genlayer-js` process, for differential checks and benchmarks.
//!
//! The published SDK is the reference most GenVM users actually run, so geist
//! checks its codec against it value by value. Spawning node per value would
//! dominate the run, so one process (`scripts/genlayer/calldata-peer.mjs`)
//! answers JSON lines over stdin/stdout. `scripts/stages/genlayer.sh` installs
//! the pinned SDK into `target/npm-genlayer`; [`GenlayerJs::spawn_default`]
//! finds it there (or where `GEIST_GENLAYER_JS_DIR` points).

use super::integer::Integer;
use super::value::{ADDRESS_LEN, Address, Value};
use serde_json::{Value as Json, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The genlayer-js version the differential checks are pinned to.
pub const PINNED_GENLAYER_JS_VERSION: &str = "1.2.0";

/// The environment variable naming the directory that holds `node_modules/genlayer-js`.
pub const GENLAYER_JS_DIR_ENV: &str = "GEIST_GENLAYER_JS_DIR";

/// A failure to talk to the peer (not a refusal by the SDK, which is an answer).
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The SDK or the peer script is not where it was looked for.
    #[error("genlayer-js peer not available: {0}")]
    Missing(String),
    /// Starting node or talking over its pipes failed.
    #[error("genlayer-js peer I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The peer answered something that is not a valid answer.
    #[error("genlayer-js peer protocol: {0}")]
    Protocol(String),
}

/// Rates measured inside the peer process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerRates {
    /// Megabytes of Calldata produced per second by `encode`.
    pub encode_mb_per_s: f64,
    /// Megabytes of Calldata consumed per second by `decode`.
    pub decode_mb_per_s: f64,
}

/// A running `node calldata-peer.mjs` process.
pub struct GenlayerJs {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    version: String,
}

impl GenlayerJs {
    /// Starts the peer from the workspace's script and installed SDK.
    pub fn spawn_default() -> Result<Self, PeerError> {
        let root = geist_pack::data::workspace_root();
        let modules = std::env::var_os(GENLAYER_JS_DIR_ENV)
            .map_or_else(|| root.join("target/npm-genlayer"), PathBuf::from);
        Self::spawn(&root.join("scripts/genlayer/calldata-peer.mjs"), &modules)
    }

    /// Starts `node <script> <modules>` and checks it answers.
    pub fn spawn(script: &Path, modules: &Path) -> Result<Self, PeerError> {
        if !script.is_file() {
            return Err(PeerError::Missing(format!(
                "no peer script at {}",
                script.display()
            )));
        }
        if !modules.join("node_modules/genlayer-js").is_dir() {
            return Err(PeerError::Missing(format!(
                "no node_modules/genlayer-js under {} (run scripts/stages/genlayer.sh, or set {GENLAYER_JS_DIR_ENV})",
                modules.display()
            )));
        }
        let mut child = Command::new("node")
            .arg(script)
            .arg(modules)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(PeerError::Protocol("node started without pipes".to_owned()));
        };
        let mut peer = GenlayerJs {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            version: String::new(),
        };
        let hello = peer
            .request(&json!({"op": "hello"}))?
            .map_err(PeerError::Protocol)?;
        peer.version = hello
            .get("version")
            .and_then(Json::as_str)
            .ok_or_else(|| PeerError::Protocol(format!("hello without a version: {hello}")))?
            .to_owned();
        Ok(peer)
    }

    /// The genlayer-js version the peer loaded.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Sends one request; `Ok(Err(message))` is the SDK refusing (throwing).
    fn request(&mut self, request: &Json) -> Result<Result<Json, String>, PeerError> {
        let mut line = request.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes())?;
        self.stdin.flush()?;
        let mut answer = String::new();
        if self.stdout.read_line(&mut answer)? == 0 {
            return Err(PeerError::Protocol("the peer exited".to_owned()));
        }
        let answer: Json = serde_json::from_str(&answer)
            .map_err(|e| PeerError::Protocol(format!("not JSON ({e}): {answer}")))?;
        if let Some(ok) = answer.get("ok") {
            return Ok(Ok(ok.clone()));
        }
        match answer.get("error").and_then(Json::as_str) {
            Some(message) => Ok(Err(message.to_owned())),
            None => Err(PeerError::Protocol(format!(
                "neither ok nor error: {answer}"
            ))),
        }
    }

    /// Encodes with the SDK; `Ok(Err(_))` when the SDK throws.
    pub fn encode(&mut self, value: &Value) -> Result<Result<Vec<u8>, String>, PeerError> {
        let answer = self.request(&json!({"op": "encode", "value": to_peer(value)}))?;
        Ok(match answer {
            Ok(Json::String(text)) => Ok(hex::decode(&text)
                .map_err(|e| PeerError::Protocol(format!("bad hex from the peer: {e}")))?),
            Ok(other) => return Err(PeerError::Protocol(format!("encode answered {other}"))),
            Err(message) => Err(message),
        })
    }

    /// Decodes with the SDK; `Ok(Err(_))` when the SDK throws.
    ///
    /// The SDK's map keeps wire order and collapses repeated keys; this returns
    /// the entries as the SDK holds them, so callers can see what it let through.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<Result<PeerValue, String>, PeerError> {
        let answer = self.request(&json!({"op": "decode", "hex": hex::encode(bytes)}))?;
        Ok(match answer {
            Ok(json) => Ok(from_peer(&json)?),
            Err(message) => Err(message),
        })
    }

    /// Whether the SDK decodes `bytes` without throwing (no value comes back, so
    /// this works for nesting deeper than a JSON parser allows).
    pub fn accepts(&mut self, bytes: &[u8]) -> Result<Result<(), String>, PeerError> {
        let answer = self.request(&json!({"op": "accepts", "hex": hex::encode(bytes)}))?;
        Ok(answer.map(|_| ()))
    }

    /// Measures the SDK's encode and decode rates over `inputs` (canonical Calldata).
    pub fn bench(&mut self, inputs: &[Vec<u8>], seconds: f64) -> Result<PeerRates, PeerError> {
        let hexes: Vec<String> = inputs.iter().map(hex::encode).collect();
        let answer = self
            .request(&json!({"op": "bench", "inputs": hexes, "seconds": seconds}))?
            .map_err(PeerError::Protocol)?;
        let rate = |key: &str| {
            answer
                .get(key)
                .and_then(Json::as_f64)
                .ok_or_else(|| PeerError::Protocol(format!("bench answer without {key}: {answer}")))
        };
        Ok(PeerRates {
            encode_mb_per_s: rate("encode_mb_per_s")?,
            decode_mb_per_s: rate("decode_mb_per_s")?,
        })
    }
}

impl Drop for GenlayerJs {
    fn drop(&mut self) {
        // The peer holds no state worth a graceful end.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A value as the SDK decoded it: like [`Value`], but maps keep the SDK's entry order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerValue {
    /// Any non-map value.
    Scalar(Value),
    /// An array whose elements may contain maps.
    Array(Vec<PeerValue>),
    /// A map's entries in the order the SDK holds them.
    Map(Vec<(String, PeerValue)>),
}

impl PeerValue {
    /// The value with maps sorted; `None` if the SDK held keys out of canonical order.
    pub fn to_canonical(&self) -> Option<Value> {
        match self {
            PeerValue::Scalar(value) => Some(value.clone()),
            PeerValue::Array(items) => items
                .iter()
                .map(PeerValue::to_canonical)
                .collect::<Option<Vec<_>>>()
                .map(Value::Array),
            PeerValue::Map(entries) => {
                if entries.windows(2).any(|w| w[0].0 >= w[1].0) {
                    return None;
                }
                let mut map = super::value::Map::with_capacity(entries.len());
                for (key, item) in entries {
                    map.insert(key.clone(), item.to_canonical()?);
                }
                Some(Value::Map(map))
            }
        }
    }
}

fn to_peer(value: &Value) -> Json {
    match value {
        Value::Null => json!(["null"]),
        Value::Bool(b) => json!(["bool", b]),
        Value::Int(i) => json!(["int", i.to_string()]),
        Value::Bytes(bytes) => json!(["bytes", hex::encode(bytes)]),
        Value::Str(text) => json!(["str", text]),
        Value::Address(address) => json!(["address", hex::encode(address.as_bytes())]),
        Value::Array(items) => json!(["array", items.iter().map(to_peer).collect::<Vec<_>>()]),
        Value::Map(map) => json!([
            "map",
            map.iter()
                .map(|(k, v)| json!([k, to_peer(v)]))
                .collect::<Vec<_>>()
        ]),
    }
}

fn from_peer(json: &Json) -> Result<PeerValue, PeerError> {
    let bad = || PeerError::Protocol(format!("not a tagged value: {json}"));
    let tag = json.get(0).and_then(Json::as_str).ok_or_else(bad)?;
    let inner = json.get(1);
    let text = || inner.and_then(Json::as_str).ok_or_else(bad);
    let hex_bytes = || hex::decode(text()?).map_err(|_| bad());
    Ok(match tag {
        "null" => PeerValue::Scalar(Value::Null),
        "bool" => PeerValue::Scalar(Value::Bool(inner.and_then(Json::as_bool).ok_or_else(bad)?)),
        "int" => PeerValue::Scalar(Value::Int(text()?.parse::<Integer>().map_err(|_| bad())?)),
        "bytes" => PeerValue::Scalar(Value::Bytes(hex_bytes()?)),
        "str" => PeerValue::Scalar(Value::Str(text()?.to_owned())),
        "address" => {
            let array: [u8; ADDRESS_LEN] = hex_bytes()?.try_into().map_err(|_| bad())?;
            PeerValue::Scalar(Value::Address(Address(array)))
        }
        "array" => PeerValue::Array(
            inner
                .and_then(Json::as_array)
                .ok_or_else(bad)?
                .iter()
                .map(from_peer)
                .collect::<Result<_, _>>()?,
        ),
        "map" => {
            let pairs = inner.and_then(Json::as_array).ok_or_else(bad)?;
            let mut entries = Vec::with_capacity(pairs.len());
            for pair in pairs {
                let key = pair.get(0).and_then(Json::as_str).ok_or_else(bad)?;
                let item = pair.get(1).ok_or_else(bad)?;
                entries.push((key.to_owned(), from_peer(item)?));
            }
            PeerValue::Map(entries)
        }
        _ => return Err(bad()),
    })
}
