//! What the VM asks of the node, answered from the vector: recorded randomness.
//!
//! Extracted vectors record every randomness draw the message made, as
//! `{"on": [kind, epoch], "ret": base64}` with kind `chain` (tickets) or
//! `beacon` (drand) — the digest for that epoch, before the VM mixes in the
//! actor's personalization and entropy (the network version 18 format). A
//! draw the vector did not record is answered with lotus' fixed fallback,
//! `i_am_random_____i_am_random_____`, and noted in the trace. The vector
//! format records no tipset CIDs, so asking for one is an error.
//! Consensus-fault verification never reaches the externs: the kernel
//! answers it ([`crate::kernel`]).

use fvm::externs::{Chain, Consensus, Externs, Rand};
use fvm_shared::clock::ChainEpoch;
use fvm_shared::consensus::ConsensusFault;
use geist_vectors::payload::decode_base64;
use std::cell::RefCell;

/// The randomness lotus answers with when a draw was not recorded.
pub const FALLBACK_RANDOMNESS: [u8; 32] = *b"i_am_random_____i_am_random_____";

/// Which chain a randomness draw comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomnessKind {
    /// The ticket chain (`get_chain_randomness`).
    Chain,
    /// The drand beacon (`get_beacon_randomness`).
    Beacon,
}

impl std::fmt::Display for RandomnessKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RandomnessKind::Chain => "chain",
            RandomnessKind::Beacon => "beacon",
        })
    }
}

/// One recorded draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedDraw {
    /// Ticket or beacon.
    pub kind: RandomnessKind,
    /// The epoch drawn at.
    pub epoch: ChainEpoch,
    /// The 32 bytes answered.
    pub digest: [u8; 32],
}

/// Why a vector's `randomness` cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("randomness[{index}]: {reason}")]
pub struct RandomnessError {
    /// The entry's position.
    pub index: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Reads a vector's `randomness` array (absent or `null` means none recorded).
pub fn parse_randomness(
    value: Option<&serde_json::Value>,
) -> Result<Vec<RecordedDraw>, RandomnessError> {
    let entries = match value {
        None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
        Some(serde_json::Value::Array(entries)) => entries,
        Some(other) => {
            return Err(RandomnessError {
                index: 0,
                reason: format!("expected an array of draws, got {other}"),
            });
        }
    };
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| parse_draw(entry).map_err(|reason| RandomnessError { index, reason }))
        .collect()
}

fn parse_draw(entry: &serde_json::Value) -> Result<RecordedDraw, String> {
    let on = entry
        .get("on")
        .and_then(|on| on.as_array())
        .ok_or("no \"on\" array")?;
    let [kind, epoch] = &on[..] else {
        return Err(format!(
            "\"on\" has {} items; network version 18 vectors record [kind, epoch]",
            on.len()
        ));
    };
    let kind = match kind.as_str() {
        Some("chain") => RandomnessKind::Chain,
        Some("beacon") => RandomnessKind::Beacon,
        _ => return Err(format!("kind {kind} is neither \"chain\" nor \"beacon\"")),
    };
    let epoch = epoch
        .as_i64()
        .ok_or_else(|| format!("epoch {epoch} is not an integer"))?;
    let ret = entry
        .get("ret")
        .and_then(|r| r.as_str())
        .ok_or("no \"ret\" string")?;
    let bytes = decode_base64(ret, "ret").map_err(|e| e.to_string())?;
    let digest: [u8; 32] = bytes
        .try_into()
        .map_err(|bytes: Vec<u8>| format!("\"ret\" has {} bytes, not 32", bytes.len()))?;
    Ok(RecordedDraw {
        kind,
        epoch,
        digest,
    })
}

/// The externs of one vector's execution.
#[derive(Debug, Default)]
pub struct VectorExterns {
    draws: Vec<RecordedDraw>,
    misses: RefCell<Vec<(RandomnessKind, ChainEpoch)>>,
}

impl VectorExterns {
    /// Externs replaying these draws.
    pub fn new(draws: Vec<RecordedDraw>) -> VectorExterns {
        VectorExterns {
            draws,
            misses: RefCell::new(Vec::new()),
        }
    }

    /// Draws asked for that the vector did not record (answered with the fallback), in order.
    pub fn take_misses(&self) -> Vec<(RandomnessKind, ChainEpoch)> {
        std::mem::take(&mut self.misses.borrow_mut())
    }

    fn draw(&self, kind: RandomnessKind, epoch: ChainEpoch) -> [u8; 32] {
        match self
            .draws
            .iter()
            .find(|d| d.kind == kind && d.epoch == epoch)
        {
            Some(draw) => draw.digest,
            None => {
                self.misses.borrow_mut().push((kind, epoch));
                FALLBACK_RANDOMNESS
            }
        }
    }
}

impl Rand for VectorExterns {
    fn get_chain_randomness(&self, round: ChainEpoch) -> anyhow::Result<[u8; 32]> {
        Ok(self.draw(RandomnessKind::Chain, round))
    }

    fn get_beacon_randomness(&self, round: ChainEpoch) -> anyhow::Result<[u8; 32]> {
        Ok(self.draw(RandomnessKind::Beacon, round))
    }
}

impl Consensus for VectorExterns {
    fn verify_consensus_fault(
        &self,
        _h1: &[u8],
        _h2: &[u8],
        _extra: &[u8],
    ) -> anyhow::Result<(Option<ConsensusFault>, i64)> {
        anyhow::bail!("consensus faults are judged by the driver's kernel, not the externs")
    }
}

impl Chain for VectorExterns {
    fn get_tipset_cid(&self, epoch: ChainEpoch) -> anyhow::Result<cid::Cid> {
        anyhow::bail!("the vector records no tipset CIDs (asked for epoch {epoch})")
    }
}

impl Externs for VectorExterns {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replays_recorded_draws_and_notes_misses() {
        let digest = [7u8; 32];
        let ret = geist_vectors::payload::encode_base64(&digest);
        let value = json!([{"on": ["chain", 10], "ret": ret}]);
        let externs = VectorExterns::new(parse_randomness(Some(&value)).unwrap());
        assert_eq!(externs.get_chain_randomness(10).unwrap(), digest);
        assert_eq!(
            externs.get_beacon_randomness(10).unwrap(),
            FALLBACK_RANDOMNESS
        );
        assert_eq!(externs.take_misses(), vec![(RandomnessKind::Beacon, 10)]);
    }

    #[test]
    fn older_draw_format_is_refused_with_its_index() {
        let value = json!([{"on": ["chain", 2, 10, "AAAA"], "ret": ""}]);
        let error = parse_randomness(Some(&value)).unwrap_err();
        assert_eq!(error.index, 0);
        assert!(error.reason.contains("[kind, epoch]"), "{error}");
    }

    #[test]
    fn short_digest_is_refused() {
        let value = json!([{"on": ["beacon", 1], "ret": "AAAA"}]);
        let error = parse_randomness(Some(&value)).unwrap_err();
        assert!(error.reason.contains("not 32"), "{error}");
    }
}
