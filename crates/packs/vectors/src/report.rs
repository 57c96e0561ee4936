//! What checking one vector found: failures, notes and statistics.
//!
//! A failure means the vector is broken (schema violation, undecodable field,
//! a block whose bytes do not match its CID, a state root missing from the
//! CAR); a note is a fact worth knowing that real corpora exhibit on purpose
//! (partial state trees, non-UTF-8 strings, the seed sample's mock CAR). Both
//! say where: a JSON pointer, or a block's CID and byte offset in the CAR.

use crate::schema::FormatVersion;
use serde::Serialize;
use std::fmt;

/// One problem or remark, located in the vector.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Where: a JSON pointer (`/postconditions/receipts/0`), or a CAR block (`/car block bafy… at byte 120`).
    pub at: String,
    /// What.
    pub message: String,
}

impl Finding {
    /// A finding at a location.
    pub fn new(at: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            at: at.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.at, self.message)
        }
    }
}

/// Sizes and counts of one vector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VectorStats {
    /// Size of the JSON document.
    pub json_bytes: usize,
    /// Size of the gzipped CAR (after hex/base64 decoding).
    pub car_gzip_bytes: usize,
    /// Size of the uncompressed CAR.
    pub car_bytes: usize,
    /// Blocks in the CAR.
    pub blocks: usize,
    /// Blocks whose CID was recomputed and matched.
    pub verified_blocks: usize,
    /// Links found in DAG-CBOR blocks.
    pub links: usize,
    /// Distinct linked blocks the CAR does not hold.
    pub missing_links: usize,
    /// Messages applied (over all tipsets for the tipset class).
    pub messages: usize,
    /// Expected receipts.
    pub receipts: usize,
    /// Protocol variants.
    pub variants: usize,
}

/// The result of checking one vector file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VectorReport {
    /// The file (or name) checked.
    pub path: String,
    /// `_meta.id`, if any.
    pub id: Option<String>,
    /// The recognised format version.
    pub format: Option<FormatVersion>,
    /// The class as written.
    pub class: Option<String>,
    /// Problems: any of them fails the vector.
    pub failures: Vec<Finding>,
    /// Remarks that do not fail the vector.
    pub notes: Vec<Finding>,
    /// Sizes and counts.
    pub stats: VectorStats,
}

impl VectorReport {
    /// An empty report for a file.
    pub fn new(path: impl Into<String>) -> VectorReport {
        VectorReport {
            path: path.into(),
            id: None,
            format: None,
            class: None,
            failures: Vec::new(),
            notes: Vec::new(),
            stats: VectorStats::default(),
        }
    }

    /// Whether the vector passed (no failures; notes are fine).
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Records a failure.
    pub fn fail(&mut self, at: impl Into<String>, message: impl Into<String>) {
        self.failures.push(Finding::new(at, message));
    }

    /// Records a note.
    pub fn note(&mut self, at: impl Into<String>, message: impl Into<String>) {
        self.notes.push(Finding::new(at, message));
    }
}

/// One line per vector: `ok   path  [format class] id — note; note` or `FAIL path ...: first failure (+N more)`.
impl fmt::Display for VectorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = if self.passed() { "ok  " } else { "FAIL" };
        write!(f, "{status} {}", self.path)?;
        let format = self
            .format
            .map(FormatVersion::label)
            .unwrap_or("unrecognised");
        let class = self.class.as_deref().unwrap_or("?");
        write!(f, "  [{format}, {class}")?;
        if self.stats.blocks > 0 {
            write!(
                f,
                ", {} blocks verified of {}",
                self.stats.verified_blocks, self.stats.blocks
            )?;
        }
        write!(f, ", {} msg]", self.stats.messages)?;
        if let Some(first) = self.failures.first() {
            write!(f, ": {first}")?;
            if self.failures.len() > 1 {
                write!(f, " (+{} more)", self.failures.len() - 1)?;
            }
        }
        if !self.notes.is_empty() {
            let notes: Vec<String> = self.notes.iter().map(ToString::to_string).collect();
            write!(f, " — note: {}", notes.join("; note: "))?;
        }
        Ok(())
    }
}

/// Totals over a set of checked vectors.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CheckSummary {
    /// Vectors without failures.
    pub passed: usize,
    /// Vectors with at least one failure.
    pub failed: usize,
    /// Total JSON bytes read.
    pub json_bytes: usize,
    /// Total uncompressed CAR bytes decoded.
    pub car_bytes: usize,
    /// Total blocks verified.
    pub verified_blocks: usize,
}

impl CheckSummary {
    /// Sums the reports.
    pub fn of(reports: &[VectorReport]) -> CheckSummary {
        let mut summary = CheckSummary::default();
        for report in reports {
            if report.passed() {
                summary.passed += 1;
            } else {
                summary.failed += 1;
            }
            summary.json_bytes += report.stats.json_bytes;
            summary.car_bytes += report.stats.car_bytes;
            summary.verified_blocks += report.stats.verified_blocks;
        }
        summary
    }
}

/// The closing line every check command prints: `N passed, M failed`.
impl fmt::Display for CheckSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)
    }
}
