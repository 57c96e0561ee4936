//! VM conformance test vectors: validate, decode, verify, inspect and run them.
//!
//! A vector (`../shared/spec/test-vector-schema.json` and its later versions)
//! describes one execution of the Filecoin VM: a gzipped CAR holding the pre-
//! and post-state trees, the messages (or tipsets) to apply, and the receipts
//! and final state root expected. This pack checks a vector at every layer —
//! JSON Schema of its format version ([`schema`]), typed fields with exact big
//! integers ([`model`], [`integer`], [`payload`]), the CAR and every block's
//! CID ([`car`], [`integrity`]), messages and addresses ([`message`],
//! [`address`]) — and reports failures and notes that name where ([`report`],
//! [`check`]). [`inspect`] explains a vector to a person; [`driver`] runs
//! vectors against an external VM, and [`replay`] is a driver that answers
//! with a vector's own expectations, to test the runner itself.
//!
//! Executing Filecoin actors needs a real VM (ref-fvm, lotus) behind the
//! driver protocol; geist does not execute actors.

pub mod address;
pub mod car;
pub mod check;
pub mod driver;
pub mod duplicates;
pub mod inspect;
pub mod integer;
pub mod integrity;
pub mod message;
pub mod model;
pub mod payload;
pub mod replay;
pub mod report;
pub mod schema;

pub use check::{
    CheckedVector, Limits, check_document, check_document_limited, check_file, check_file_limited,
    check_files, check_files_limited, collect_vector_files,
};
pub use model::TestVector;
pub use report::{CheckSummary, Finding, VectorReport};
pub use schema::{FormatVersion, SchemaSet};
