//! Filecoin messages as vectors carry them: DAG-CBOR tuples.
//!
//! The unsigned message is a 10-field array: version, to, from, nonce, value,
//! gas limit, gas fee cap, gas premium, method number, params. Token amounts
//! are Filecoin big integers (a sign byte, then big-endian magnitude). Tipset
//! blocks may also carry signed messages (`[message, signature]`), and the
//! seed schema's one document predates EIP-1559 with a 9-field message (gas
//! price instead of fee cap and premium); both decode here too, marked as such.

use crate::address::{Address, AddressError};
use ipld_core::ipld::Ipld;
use num_bigint::{BigInt, Sign};
use std::fmt;

/// Which shape of message the bytes held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageForm {
    /// The 10-field unsigned message.
    Unsigned,
    /// `[unsigned message, signature]`.
    Signed,
    /// The 9-field pre-EIP-1559 message (a single gas price).
    LegacyGasPrice,
}

/// A decoded Filecoin message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The shape it was decoded from.
    pub form: MessageForm,
    /// Message format version (0 on mainnet).
    pub version: u64,
    /// Recipient.
    pub to: Address,
    /// Sender.
    pub from: Address,
    /// Sender's sequence number.
    pub nonce: u64,
    /// attoFIL transferred.
    pub value: BigInt,
    /// Gas limit.
    pub gas_limit: i64,
    /// Maximum base fee plus premium per gas unit (attoFIL); for legacy messages the gas price.
    pub gas_fee_cap: BigInt,
    /// Premium per gas unit paid to the miner (attoFIL); zero for legacy messages.
    pub gas_premium: BigInt,
    /// Method number invoked on the recipient (0 = plain transfer).
    pub method: u64,
    /// Method parameters (usually DAG-CBOR).
    pub params: Vec<u8>,
    /// Signature bytes of a signed message (type byte, then the signature).
    pub signature: Option<Vec<u8>>,
}

/// Why bytes are not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// Not DAG-CBOR at all.
    #[error("not DAG-CBOR: {0}")]
    Cbor(String),
    /// A CBOR value of the wrong shape.
    #[error("expected a 10-field message array (or [message, signature]), found {0}")]
    Shape(String),
    /// A field of the wrong type or range.
    #[error("field {index} ({name}): {reason}")]
    Field {
        /// Position in the tuple.
        index: usize,
        /// The field's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An address field that is not a valid address.
    #[error("field {index} ({name}): {source}")]
    Address {
        /// Position in the tuple.
        index: usize,
        /// The field's name.
        name: &'static str,
        /// The address error.
        source: AddressError,
    },
}

const UNSIGNED_FIELDS: [&str; 10] = [
    "version",
    "to",
    "from",
    "nonce",
    "value",
    "gas_limit",
    "gas_fee_cap",
    "gas_premium",
    "method",
    "params",
];
const LEGACY_FIELDS: [&str; 9] = [
    "version",
    "to",
    "from",
    "nonce",
    "value",
    "gas_price",
    "gas_limit",
    "method",
    "params",
];

impl Message {
    /// Decodes a message from its DAG-CBOR bytes.
    pub fn decode(bytes: &[u8]) -> Result<Message, MessageError> {
        let ipld: Ipld = serde_ipld_dagcbor::from_slice(bytes)
            .map_err(|error| MessageError::Cbor(crate::car::describe_decode_error(&error)))?;
        Message::from_ipld(&ipld)
    }

    fn from_ipld(ipld: &Ipld) -> Result<Message, MessageError> {
        let Ipld::List(fields) = ipld else {
            return Err(MessageError::Shape(kind(ipld).to_string()));
        };
        match fields.as_slice() {
            [inner @ Ipld::List(_), Ipld::Bytes(signature)] => {
                let mut message = Message::from_ipld(inner)?;
                message.form = MessageForm::Signed;
                message.signature = Some(signature.clone());
                Ok(message)
            }
            fields if fields.len() == UNSIGNED_FIELDS.len() => {
                let f = Fields {
                    fields,
                    names: &UNSIGNED_FIELDS,
                };
                Ok(Message {
                    form: MessageForm::Unsigned,
                    version: f.unsigned(0)?,
                    to: f.address(1)?,
                    from: f.address(2)?,
                    nonce: f.unsigned(3)?,
                    value: f.token_amount(4)?,
                    gas_limit: f.signed(5)?,
                    gas_fee_cap: f.token_amount(6)?,
                    gas_premium: f.token_amount(7)?,
                    method: f.unsigned(8)?,
                    params: f.bytes(9)?,
                    signature: None,
                })
            }
            fields if fields.len() == LEGACY_FIELDS.len() => {
                let f = Fields {
                    fields,
                    names: &LEGACY_FIELDS,
                };
                Ok(Message {
                    form: MessageForm::LegacyGasPrice,
                    version: f.unsigned(0)?,
                    to: f.address(1)?,
                    from: f.address(2)?,
                    nonce: f.unsigned(3)?,
                    value: f.token_amount(4)?,
                    gas_fee_cap: f.token_amount(5)?,
                    gas_limit: f.signed(6)?,
                    gas_premium: BigInt::from(0),
                    method: f.unsigned(7)?,
                    params: f.bytes(8)?,
                    signature: None,
                })
            }
            fields => Err(MessageError::Shape(format!(
                "an array of {} items",
                fields.len()
            ))),
        }
    }

    /// Encodes the message back to its DAG-CBOR bytes (unsigned 10-field form, or signed).
    pub fn encode(&self) -> Vec<u8> {
        let unsigned = Ipld::List(vec![
            Ipld::Integer(i128::from(self.version)),
            Ipld::Bytes(self.to.to_bytes()),
            Ipld::Bytes(self.from.to_bytes()),
            Ipld::Integer(i128::from(self.nonce)),
            Ipld::Bytes(token_amount_bytes(&self.value)),
            Ipld::Integer(i128::from(self.gas_limit)),
            Ipld::Bytes(token_amount_bytes(&self.gas_fee_cap)),
            Ipld::Bytes(token_amount_bytes(&self.gas_premium)),
            Ipld::Integer(i128::from(self.method)),
            Ipld::Bytes(self.params.clone()),
        ]);
        let value = match &self.signature {
            Some(signature) => Ipld::List(vec![unsigned, Ipld::Bytes(signature.clone())]),
            None => unsigned,
        };
        // Encoding integers, bytes and lists into a Vec cannot fail.
        serde_ipld_dagcbor::to_vec(&value).unwrap_or_default()
    }
}

/// A readable one-line form: `f0100 -> f0101 value 10 method 0 nonce 3 gas 1000000 fee cap 100 premium 1 params 0 B`.
impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {} value {} method {} nonce {} gas limit {} ",
            self.from, self.to, self.value, self.method, self.nonce, self.gas_limit
        )?;
        match self.form {
            MessageForm::LegacyGasPrice => write!(f, "gas price {}", self.gas_fee_cap)?,
            _ => write!(
                f,
                "fee cap {} premium {}",
                self.gas_fee_cap, self.gas_premium
            )?,
        }
        write!(f, " params {} B", self.params.len())?;
        if let Some(signature) = &self.signature {
            write!(f, " (signed, {} B signature)", signature.len())?;
        }
        Ok(())
    }
}

/// Decodes Filecoin's big-integer bytes: empty = 0, else sign byte (0 positive, 1 negative) and magnitude.
pub fn token_amount_from_bytes(bytes: &[u8]) -> Result<BigInt, String> {
    match bytes.split_first() {
        None => Ok(BigInt::from(0)),
        Some((0, magnitude)) => Ok(BigInt::from_bytes_be(Sign::Plus, magnitude)),
        Some((1, magnitude)) => Ok(-BigInt::from_bytes_be(Sign::Plus, magnitude)),
        Some((sign, _)) => Err(format!("big-integer sign byte is {sign}, expected 0 or 1")),
    }
}

/// Encodes a big integer in Filecoin's byte form (see [`token_amount_from_bytes`]).
pub fn token_amount_bytes(value: &BigInt) -> Vec<u8> {
    let (sign, magnitude) = value.to_bytes_be();
    match sign {
        Sign::NoSign => Vec::new(),
        Sign::Plus => [&[0u8][..], &magnitude].concat(),
        Sign::Minus => [&[1u8][..], &magnitude].concat(),
    }
}

fn kind(ipld: &Ipld) -> &'static str {
    match ipld {
        Ipld::Null => "null",
        Ipld::Bool(_) => "a boolean",
        Ipld::Integer(_) => "an integer",
        Ipld::Float(_) => "a float",
        Ipld::String(_) => "a string",
        Ipld::Bytes(_) => "bytes",
        Ipld::List(_) => "an array",
        Ipld::Map(_) => "a map",
        Ipld::Link(_) => "a link",
    }
}

struct Fields<'a> {
    fields: &'a [Ipld],
    names: &'a [&'static str],
}

impl Fields<'_> {
    fn error(&self, index: usize, reason: String) -> MessageError {
        MessageError::Field {
            index,
            name: self.names[index],
            reason,
        }
    }

    fn integer(&self, index: usize) -> Result<i128, MessageError> {
        match &self.fields[index] {
            Ipld::Integer(value) => Ok(*value),
            other => Err(self.error(index, format!("expected an integer, found {}", kind(other)))),
        }
    }

    fn unsigned(&self, index: usize) -> Result<u64, MessageError> {
        let value = self.integer(index)?;
        u64::try_from(value)
            .map_err(|_| self.error(index, format!("{value} is not an unsigned 64-bit integer")))
    }

    fn signed(&self, index: usize) -> Result<i64, MessageError> {
        let value = self.integer(index)?;
        i64::try_from(value)
            .map_err(|_| self.error(index, format!("{value} is not a signed 64-bit integer")))
    }

    fn bytes(&self, index: usize) -> Result<Vec<u8>, MessageError> {
        match &self.fields[index] {
            Ipld::Bytes(bytes) => Ok(bytes.clone()),
            other => Err(self.error(index, format!("expected bytes, found {}", kind(other)))),
        }
    }

    fn address(&self, index: usize) -> Result<Address, MessageError> {
        let bytes = self.bytes(index)?;
        Address::from_bytes(&bytes).map_err(|source| MessageError::Address {
            index,
            name: self.names[index],
            source,
        })
    }

    fn token_amount(&self, index: usize) -> Result<BigInt, MessageError> {
        let bytes = self.bytes(index)?;
        token_amount_from_bytes(&bytes).map_err(|reason| self.error(index, reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    #[test]
    fn the_corpus_transfer_message_decodes() {
        // apply_messages[0] of transfer/self_transfer--id-to-id-addresses--genesis.json.
        let bytes = base64::engine::general_purpose::STANDARD
            .decode("igBCAGRCAGQAQgAKGjuaygBCAMhCAAEAQA==")
            .unwrap();
        let message = Message::decode(&bytes).unwrap();
        assert_eq!(message.form, MessageForm::Unsigned);
        assert_eq!(message.to.to_string(), "f0100");
        assert_eq!(message.from.to_string(), "f0100");
        assert_eq!(message.value, BigInt::from(10));
        assert_eq!(message.gas_limit, 1_000_000_000);
        assert_eq!(message.gas_fee_cap, BigInt::from(200));
        assert_eq!(message.gas_premium, BigInt::from(1));
        assert_eq!(message.method, 0);
        assert_eq!(message.encode(), bytes);
    }

    #[test]
    fn token_amounts_round_trip_with_sign() {
        for value in [
            BigInt::from(0),
            BigInt::from(1),
            BigInt::from(-300),
            BigInt::from(10).pow(35),
        ] {
            assert_eq!(
                token_amount_from_bytes(&token_amount_bytes(&value)).unwrap(),
                value
            );
        }
        assert!(token_amount_from_bytes(&[2, 1]).is_err());
    }

    #[test]
    fn wrong_shapes_name_the_field() {
        let not_list = serde_ipld_dagcbor::to_vec(&Ipld::Integer(3)).unwrap();
        assert!(matches!(
            Message::decode(&not_list),
            Err(MessageError::Shape(_))
        ));
        let mut fields: Vec<Ipld> = (0..10).map(|_| Ipld::Integer(0)).collect();
        let bad = serde_ipld_dagcbor::to_vec(&Ipld::List(fields.clone())).unwrap();
        let error = Message::decode(&bad).unwrap_err();
        assert_eq!(
            error.to_string(),
            "field 1 (to): expected bytes, found an integer"
        );
        fields[1] = Ipld::Bytes(vec![7]);
        let bad = serde_ipld_dagcbor::to_vec(&Ipld::List(fields)).unwrap();
        assert!(matches!(
            Message::decode(&bad),
            Err(MessageError::Address { index: 1, .. })
        ));
    }
}
