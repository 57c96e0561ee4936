//! GenVM Calldata: the value model, its canonical encoding and a strict decoder.
//!
//! Calldata is how GenVM passes values between contracts, the host and modules.
//! Every value starts with one ULEB128 head whose low 3 bits are the type and
//! whose other bits are the payload: 0 special (null, false, true, address + 20
//! bytes), 1 integer `>= 0`, 2 integer `< 0` (payload `-v-1`), 3 bytes, 4 UTF-8
//! string, 5 array, 6 map (keys strictly increasing by UTF-8 bytes), 7 reserved.
//!
//! Consensus hashes cover encoded values, so this pack insists on one encoding
//! per value: [`encode`] writes the canonical form and [`decode`] refuses every
//! other one, naming the byte offset and the rule broken; [`decode_ref`] applies
//! the same rules but borrows strings and byte strings from the input.
//!
//! Around the codec: [`text`] is a human-readable form (for the CLI and error
//! reports), [`typed_json`] the typed JSON notation of the shared vectors file,
//! [`serde`](mod@self::ser) support so user types derive to and from Calldata, [`vectors`] runs a
//! vectors file, [`peer`] drives the published `genlayer-js` SDK for
//! differential checks, and [`generators`] draws values with geist's engine.

mod de;
mod decode;
mod encode;
pub mod generators;
mod integer;
pub mod peer;
mod ser;
pub mod text;
pub mod typed_json;
mod uleb128;
mod value;
mod value_ref;
pub mod vectors;

pub use de::{from_bytes, from_value};
pub use decode::{
    DEFAULT_MAX_DEPTH, DecodeError, DecodeOptions, DecodeRule, decode, decode_ref, decode_ref_with,
    decode_with,
};
pub use encode::{encode, encode_into};
pub use integer::{Integer, ParseIntegerError};
pub use ser::{SerdeError, to_bytes, to_value};
pub use value::{ADDRESS_LEN, Address, Map, MapIntoIter, Value};
pub use value_ref::{MapRef, ValueRef};
