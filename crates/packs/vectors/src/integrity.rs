//! Integrity of a CAR's blocks: content addresses recomputed, links followed.
//!
//! Every block's CID claims a hash of its bytes; this module recomputes it
//! (blake2b-256 and sha2-256 via `multihash-codetable`, identity by
//! comparison) so a flipped byte is caught and named by the CID it broke. It
//! then decodes DAG-CBOR blocks (`serde_ipld_dagcbor`, strict) to collect the
//! links between blocks: links to blocks the CAR does not hold mean the vector
//! ships a partial state tree, which real vectors do on purpose (the VM only
//! touches part of the state). Filecoin state also holds CBOR strings that are
//! not valid UTF-8 (go-cbor-gen never checked); such blocks are walked again
//! leniently with `ciborium-ll` so their links still count. Both are facts to
//! report, not failures.

use crate::car::{CarArchive, CarBlock};
use cid::Cid;
use ipld_core::ipld::Ipld;
use multihash_codetable::{Code, MultihashDigest as _};
use std::collections::{BTreeMap, HashSet};

/// Multicodec of DAG-CBOR blocks (Filecoin state).
pub const DAG_CBOR: u64 = 0x71;
/// Multicodec of raw blocks (e.g. actor Wasm bytecode).
pub const RAW: u64 = 0x55;
/// Multihash code of the identity "hash": the digest is the data itself.
pub const IDENTITY: u64 = 0x00;

/// A block whose bytes do not hash to its CID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CidMismatch {
    /// The CID the CAR claims for the block.
    pub claimed: Cid,
    /// The CID its bytes actually have (same version, codec and hash function).
    pub computed: Cid,
    /// Byte offset of the block's section in the uncompressed CAR.
    pub offset: usize,
}

/// What checking a CAR's blocks found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntegrityReport {
    /// Blocks whose CID was recomputed and matched.
    pub verified: usize,
    /// Blocks whose bytes hash to something else: integrity failures.
    pub mismatches: Vec<CidMismatch>,
    /// Blocks whose hash function is not supported here: (CID, multihash code).
    pub unverifiable: Vec<(Cid, u64)>,
    /// The same CID appearing in two sections.
    pub duplicates: Vec<Cid>,
    /// Number of blocks per multicodec.
    pub codecs: BTreeMap<u64, usize>,
    /// Links found inside DAG-CBOR blocks.
    pub links: usize,
    /// Distinct linked CIDs that no block of the CAR holds (identity CIDs excluded).
    pub missing_links: Vec<Cid>,
    /// DAG-CBOR blocks holding strings that are not valid UTF-8 (walked leniently).
    pub non_utf8_blocks: Vec<Cid>,
    /// DAG-CBOR blocks that do not decode even leniently: (CID, offset, reason).
    pub undecodable: Vec<(Cid, usize, String)>,
    /// Blocks of codecs whose links are not followed (neither DAG-CBOR nor raw).
    pub opaque_blocks: usize,
}

/// Recomputes one block's CID from its bytes, or says why it cannot.
pub fn recompute_cid(block: &CarBlock) -> Result<Cid, u64> {
    let hash = block.cid.hash();
    let code = hash.code();
    if code == IDENTITY {
        let digest =
            multihash_codetable::Multihash::wrap(IDENTITY, &block.data).map_err(|_| code)?;
        return Cid::new(block.cid.version(), block.cid.codec(), digest).map_err(|_| code);
    }
    let hasher = Code::try_from(code).map_err(|_| code)?;
    let digest = hasher.digest(&block.data);
    let digest = if digest.size() != hash.size() {
        // A truncated hash: compare on the claimed length.
        let cut = &digest.digest()[..usize::from(hash.size()).min(digest.digest().len())];
        multihash_codetable::Multihash::wrap(code, cut).map_err(|_| code)?
    } else {
        digest
    };
    Cid::new(block.cid.version(), block.cid.codec(), digest).map_err(|_| code)
}

/// Verifies every block of the archive and follows the links of DAG-CBOR blocks.
pub fn check_archive(archive: &CarArchive) -> IntegrityReport {
    let mut report = IntegrityReport::default();
    let mut held: HashSet<Cid> = HashSet::with_capacity(archive.blocks.len());
    let mut linked: Vec<Cid> = Vec::new();
    for block in &archive.blocks {
        if !held.insert(block.cid) {
            report.duplicates.push(block.cid);
        }
        *report.codecs.entry(block.cid.codec()).or_default() += 1;
        match recompute_cid(block) {
            Ok(computed) if computed == block.cid => report.verified += 1,
            Ok(computed) => report.mismatches.push(CidMismatch {
                claimed: block.cid,
                computed,
                offset: block.offset,
            }),
            Err(code) => report.unverifiable.push((block.cid, code)),
        }
        match block.cid.codec() {
            DAG_CBOR => match serde_ipld_dagcbor::from_slice::<Ipld>(&block.data) {
                Ok(ipld) => collect_links(&ipld, &mut linked),
                Err(error) => {
                    let not_utf8 =
                        matches!(error, serde_ipld_dagcbor::DecodeError::RequireUtf8 { .. });
                    match lenient_links(&block.data, &mut linked) {
                        Ok(()) if not_utf8 => report.non_utf8_blocks.push(block.cid),
                        Ok(()) => report.undecodable.push((
                            block.cid,
                            block.offset,
                            crate::car::describe_decode_error(&error),
                        )),
                        Err(reason) => report.undecodable.push((block.cid, block.offset, reason)),
                    }
                }
            },
            RAW => {}
            _ => report.opaque_blocks += 1,
        }
    }
    report.links = linked.len();
    let mut reported: HashSet<Cid> = HashSet::new();
    for cid in linked {
        if cid.hash().code() != IDENTITY && !held.contains(&cid) && reported.insert(cid) {
            report.missing_links.push(cid);
        }
    }
    report
}

fn collect_links(ipld: &Ipld, out: &mut Vec<Cid>) {
    match ipld {
        Ipld::Link(cid) => out.push(*cid),
        Ipld::List(items) => items.iter().for_each(|item| collect_links(item, out)),
        Ipld::Map(map) => map.values().for_each(|item| collect_links(item, out)),
        _ => {}
    }
}

/// A low-level CBOR error in words.
fn describe_ll<E: std::fmt::Debug>(error: &ciborium_ll::Error<E>) -> String {
    match error {
        ciborium_ll::Error::Io(_) => "the data ends early".to_string(),
        ciborium_ll::Error::Syntax(at) => format!("invalid CBOR item header at byte {at}"),
    }
}

/// Walks CBOR item headers without checking strings, collecting tag-42 links.
fn lenient_links(data: &[u8], out: &mut Vec<Cid>) -> Result<(), String> {
    use ciborium_ll::{Decoder, Header};
    let mut decoder = Decoder::from(data);
    let mut after_link_tag = false;
    let mut buffer = vec![0u8; 4096];
    while decoder.offset() < data.len() {
        let offset = decoder.offset();
        let header = decoder.pull().map_err(|error| {
            format!(
                "CBOR syntax error at block byte {offset}: {}",
                describe_ll(&error)
            )
        })?;
        let link_tag = after_link_tag;
        after_link_tag = false;
        match header {
            Header::Tag(42) => after_link_tag = true,
            Header::Bytes(len) | Header::Text(len) => {
                let Some(len) = len else {
                    return Err(format!(
                        "indefinite-length string at block byte {offset} (not DAG-CBOR)"
                    ));
                };
                // Text is read as bytes on purpose: its UTF-8 validity is what failed.
                let mut content = Vec::with_capacity(len);
                let mut segments = decoder.bytes(Some(len));
                while let Some(mut segment) = segments
                    .pull()
                    .map_err(|error| format!("at block byte {offset}: {}", describe_ll(&error)))?
                {
                    while let Some(chunk) = segment.pull(&mut buffer).map_err(|error| {
                        format!("at block byte {offset}: {}", describe_ll(&error))
                    })? {
                        content.extend_from_slice(chunk);
                    }
                }
                if link_tag {
                    let cid_bytes = content.strip_prefix(&[0u8]).ok_or(format!(
                        "link at block byte {offset} lacks the 0x00 multibase prefix"
                    ))?;
                    let cid = Cid::try_from(cid_bytes)
                        .map_err(|error| format!("link at block byte {offset}: {error}"))?;
                    out.push(cid);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dag_cbor_block(value: &Ipld) -> (Cid, Vec<u8>) {
        let data = serde_ipld_dagcbor::to_vec(value).unwrap();
        (Cid::new_v1(DAG_CBOR, Code::Blake2b256.digest(&data)), data)
    }

    #[test]
    fn intact_blocks_verify_and_missing_links_are_listed() {
        let leaf = dag_cbor_block(&Ipld::Integer(7));
        let absent = dag_cbor_block(&Ipld::Integer(8)).0;
        let root = dag_cbor_block(&Ipld::List(vec![Ipld::Link(leaf.0), Ipld::Link(absent)]));
        let bytes = CarArchive::write(&[root.0], &[root.clone(), leaf]);
        let report = check_archive(&CarArchive::parse(&bytes).unwrap());
        assert_eq!(report.verified, 2);
        assert!(report.mismatches.is_empty());
        assert_eq!(report.links, 2);
        assert_eq!(report.missing_links, vec![absent]);
    }

    #[test]
    fn a_flipped_byte_is_a_mismatch_naming_the_claimed_cid() {
        let block = dag_cbor_block(&Ipld::String("hello".into()));
        let mut tampered = block.1.clone();
        tampered[1] ^= 0x01;
        let bytes = CarArchive::write(&[block.0], &[(block.0, tampered)]);
        let report = check_archive(&CarArchive::parse(&bytes).unwrap());
        assert_eq!(report.verified, 0);
        assert_eq!(report.mismatches.len(), 1);
        assert_eq!(report.mismatches[0].claimed, block.0);
        assert_ne!(report.mismatches[0].computed, block.0);
    }

    #[test]
    fn non_utf8_strings_are_walked_leniently_and_their_links_kept() {
        let target = dag_cbor_block(&Ipld::Integer(1)).0;
        // [ "\xff", 42(h'00' ++ cid) ] written by hand: a text string with an invalid byte.
        let mut data = vec![0x82, 0x61, 0xff, 0xd8, 0x2a];
        let mut cid_bytes = vec![0u8];
        cid_bytes.extend_from_slice(&target.to_bytes());
        data.push(0x58);
        data.push(cid_bytes.len() as u8);
        data.extend_from_slice(&cid_bytes);
        let cid = Cid::new_v1(DAG_CBOR, Code::Blake2b256.digest(&data));
        let bytes = CarArchive::write(&[cid], &[(cid, data)]);
        let report = check_archive(&CarArchive::parse(&bytes).unwrap());
        assert_eq!(report.non_utf8_blocks, vec![cid]);
        assert_eq!(report.missing_links, vec![target]);
        assert!(report.undecodable.is_empty());
    }

    #[test]
    fn identity_cids_verify_by_comparison() {
        let data = b"fil/1/account".to_vec();
        let cid = Cid::new_v1(
            RAW,
            multihash_codetable::Multihash::wrap(IDENTITY, &data).unwrap(),
        );
        let block = CarBlock {
            cid,
            data: data.clone(),
            offset: 0,
        };
        assert_eq!(recompute_cid(&block), Ok(cid));
        let wrong = CarBlock {
            cid,
            data: b"fil/1/miner".to_vec(),
            offset: 0,
        };
        assert_ne!(recompute_cid(&wrong), Ok(cid));
    }
}
