//! Filecoin addresses: their byte form (inside messages) and their text form.
//!
//! A vector's messages carry addresses as bytes: one protocol byte, then a
//! payload. People read them as text (`f0…`, `f1…`, `f2…`, `f3…`, `f4…`), whose
//! non-ID forms end in a 4-byte blake2b checksum of the byte form, so a text
//! address printed here can be pasted into any Filecoin explorer. Decoding
//! checks payload lengths per protocol, so a malformed address is reported
//! instead of printed wrongly.

use std::fmt;

/// Length of the payload of secp256k1 (protocol 1) and actor (protocol 2) addresses.
pub const HASH_PAYLOAD_LEN: usize = 20;
/// Length of the payload of BLS (protocol 3) addresses: a public key.
pub const BLS_PAYLOAD_LEN: usize = 48;
/// Longest sub-address a delegated (protocol 4) address may carry.
pub const MAX_SUBADDRESS_LEN: usize = 54;
/// Length of the checksum appended to the text form of non-ID addresses.
pub const CHECKSUM_LEN: usize = 4;

/// A Filecoin address, decoded from its byte form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Address {
    /// Protocol 0: an actor ID (`f0<id>`).
    Id(u64),
    /// Protocol 1: blake2b-160 of a secp256k1 public key.
    Secp256k1([u8; HASH_PAYLOAD_LEN]),
    /// Protocol 2: blake2b-160 of an actor's creation data.
    Actor([u8; HASH_PAYLOAD_LEN]),
    /// Protocol 3: a BLS public key.
    Bls(Box<[u8; BLS_PAYLOAD_LEN]>),
    /// Protocol 4: a namespace actor ID and a sub-address (e.g. an Ethereum address under 10).
    Delegated {
        /// The ID of the address manager actor.
        namespace: u64,
        /// The sub-address, at most [`MAX_SUBADDRESS_LEN`] bytes.
        subaddress: Vec<u8>,
    },
}

/// Why bytes are not a Filecoin address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// No bytes at all.
    #[error("empty address")]
    Empty,
    /// The first byte names no known protocol.
    #[error("unknown address protocol {0}")]
    UnknownProtocol(u8),
    /// The payload has the wrong length for its protocol.
    #[error("protocol {protocol} address payload has {found} bytes, expected {expected}")]
    PayloadLength {
        /// The protocol byte.
        protocol: u8,
        /// The payload length found.
        found: usize,
        /// What the protocol requires.
        expected: String,
    },
    /// A LEB128 varint (ID or namespace) is truncated, too long or not minimal.
    #[error("protocol {protocol} address has a malformed varint: {reason}")]
    Varint {
        /// The protocol byte.
        protocol: u8,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl Address {
    /// Decodes the byte form: protocol byte, then payload.
    pub fn from_bytes(bytes: &[u8]) -> Result<Address, AddressError> {
        let (&protocol, payload) = bytes.split_first().ok_or(AddressError::Empty)?;
        match protocol {
            0 => {
                let (id, rest) = read_varint(protocol, payload)?;
                if !rest.is_empty() {
                    return Err(AddressError::PayloadLength {
                        protocol,
                        found: payload.len(),
                        expected: format!("{} (one varint)", payload.len() - rest.len()),
                    });
                }
                Ok(Address::Id(id))
            }
            1 | 2 => {
                let hash: [u8; HASH_PAYLOAD_LEN] =
                    payload
                        .try_into()
                        .map_err(|_| AddressError::PayloadLength {
                            protocol,
                            found: payload.len(),
                            expected: HASH_PAYLOAD_LEN.to_string(),
                        })?;
                Ok(if protocol == 1 {
                    Address::Secp256k1(hash)
                } else {
                    Address::Actor(hash)
                })
            }
            3 => {
                let key: [u8; BLS_PAYLOAD_LEN] =
                    payload
                        .try_into()
                        .map_err(|_| AddressError::PayloadLength {
                            protocol,
                            found: payload.len(),
                            expected: BLS_PAYLOAD_LEN.to_string(),
                        })?;
                Ok(Address::Bls(Box::new(key)))
            }
            4 => {
                let (namespace, subaddress) = read_varint(protocol, payload)?;
                if subaddress.len() > MAX_SUBADDRESS_LEN {
                    return Err(AddressError::PayloadLength {
                        protocol,
                        found: subaddress.len(),
                        expected: format!("at most {MAX_SUBADDRESS_LEN} sub-address bytes"),
                    });
                }
                Ok(Address::Delegated {
                    namespace,
                    subaddress: subaddress.to_vec(),
                })
            }
            other => Err(AddressError::UnknownProtocol(other)),
        }
    }

    /// The protocol number (0 to 4).
    pub fn protocol(&self) -> u8 {
        match self {
            Address::Id(_) => 0,
            Address::Secp256k1(_) => 1,
            Address::Actor(_) => 2,
            Address::Bls(_) => 3,
            Address::Delegated { .. } => 4,
        }
    }

    /// The byte form: protocol byte, then payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.protocol()];
        match self {
            Address::Id(id) => write_varint(*id, &mut out),
            Address::Secp256k1(hash) | Address::Actor(hash) => out.extend_from_slice(hash),
            Address::Bls(key) => out.extend_from_slice(&key[..]),
            Address::Delegated {
                namespace,
                subaddress,
            } => {
                write_varint(*namespace, &mut out);
                out.extend_from_slice(subaddress);
            }
        }
        out
    }

    /// The 4-byte checksum of the text form: blake2b with a 4-byte digest over the byte form.
    pub fn checksum(&self) -> [u8; CHECKSUM_LEN] {
        let digest = blake2b_simd::Params::new()
            .hash_length(CHECKSUM_LEN)
            .hash(&self.to_bytes());
        let mut out = [0u8; CHECKSUM_LEN];
        out.copy_from_slice(digest.as_bytes());
        out
    }
}

/// The mainnet text form (`f…`).
impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let with_checksum = |payload: &[u8]| {
            let mut bytes = payload.to_vec();
            bytes.extend_from_slice(&self.checksum());
            data_encoding::BASE32_NOPAD
                .encode(&bytes)
                .to_ascii_lowercase()
        };
        match self {
            Address::Id(id) => write!(f, "f0{id}"),
            Address::Secp256k1(hash) => write!(f, "f1{}", with_checksum(hash)),
            Address::Actor(hash) => write!(f, "f2{}", with_checksum(hash)),
            Address::Bls(key) => write!(f, "f3{}", with_checksum(&key[..])),
            Address::Delegated {
                namespace,
                subaddress,
            } => {
                write!(f, "f4{namespace}f{}", with_checksum(subaddress))
            }
        }
    }
}

/// Reads one minimal unsigned LEB128 varint (a u64, so at most 10 bytes) and returns the rest.
fn read_varint(protocol: u8, bytes: &[u8]) -> Result<(u64, &[u8]), AddressError> {
    let mut value: u64 = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        if index == 9 && byte > 1 {
            return Err(AddressError::Varint {
                protocol,
                reason: "does not fit in 64 bits",
            });
        }
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            if byte == 0 && index > 0 {
                return Err(AddressError::Varint {
                    protocol,
                    reason: "not minimally encoded",
                });
            }
            return Ok((value, &bytes[index + 1..]));
        }
    }
    Err(AddressError::Varint {
        protocol,
        reason: "truncated",
    })
}

fn write_varint(mut value: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_addresses_print_as_f0_and_round_trip() {
        let address = Address::from_bytes(&[0x00, 0x64]).unwrap();
        assert_eq!(address, Address::Id(100));
        assert_eq!(address.to_string(), "f0100");
        let big = Address::Id(1_234_567);
        assert_eq!(Address::from_bytes(&big.to_bytes()).unwrap(), big);
    }

    /// Pairs of text form and byte form from the Filecoin spec's address test vectors.
    const SPEC_VECTORS: &[(&str, &str)] = &[
        ("f00", "0000"),
        ("f018446744073709551615", "00ffffffffffffffffff01"),
        (
            "f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy",
            "01fd1d0f4dfcd7e99afcb99a8326b7dc459d32c628",
        ),
        (
            "f24vg6ut43yw2h2jqydgbg2xq7x6f4kub3bg6as6i",
            "02e54dea4f9bc5b47d261819826d5e1fbf8bc5503b",
        ),
        (
            "f3vvmn62lofvhjd2ugzca6sof2j2ubwok6cj4xxbfzz4yuxfkgobpihhd2thlanmsh3w2ptld2gqkn2jvlss4a",
            "03ad58df696e2d4e91ea86c881e938ba4ea81b395e12797b84b9cf314b9546705e839c7a99d606b247ddb4f9ac7a3414dd",
        ),
        (
            "f410feot7hrogmplrcupubsdbbqarkdewmb4vkwc5qqq",
            "040a23a7f3c5c663d71151f40c8610c01150c9660795",
        ),
    ];

    #[test]
    fn every_protocol_prints_the_spec_text_form_and_round_trips() {
        for (text, hex_bytes) in SPEC_VECTORS {
            let bytes = hex::decode(hex_bytes).unwrap();
            let address = Address::from_bytes(&bytes).unwrap();
            assert_eq!(&address.to_string(), text, "bytes {hex_bytes}");
            assert_eq!(address.to_bytes(), bytes, "{text}");
        }
    }

    #[test]
    fn malformed_addresses_are_rejected_with_the_rule_broken() {
        assert_eq!(Address::from_bytes(&[]), Err(AddressError::Empty));
        assert_eq!(
            Address::from_bytes(&[9]),
            Err(AddressError::UnknownProtocol(9))
        );
        assert!(matches!(
            Address::from_bytes(&[1, 2, 3]),
            Err(AddressError::PayloadLength {
                protocol: 1,
                found: 2,
                ..
            })
        ));
        assert!(matches!(
            Address::from_bytes(&[0, 0x80]),
            Err(AddressError::Varint { .. })
        ));
        assert!(matches!(
            Address::from_bytes(&[0, 0x80, 0x00]),
            Err(AddressError::Varint { .. })
        ));
    }
}
