//! Generating seed-schema-shaped vectors from a source of choices.
//!
//! The generator is written against [`Choices`], a few primitive draws, so the
//! same code feeds the deterministic test here (a seeded [`SplitMix`]) and the
//! geist property test (a `TestCase`, see `vectors_pending/`). A generated
//! vector is consistent, not just schema-shaped: a real gzipped CAR holding
//! both state roots, messages that decode, one receipt per message.

use cid::Cid;
use geist_vectors::address::Address;
use geist_vectors::car::CarArchive;
use geist_vectors::message::{Message, MessageForm};
use geist_vectors::payload::{encode_hex, gzip};
use ipld_core::ipld::Ipld;
use multihash_codetable::{Code, MultihashDigest as _};
use num_bigint::BigInt;
use serde_json::{Value, json};

/// The primitive draws the generator needs.
pub trait Choices {
    /// An integer in `min..=max`.
    fn integer(&mut self, min: i64, max: i64) -> i64;
    /// Up to `max` bytes.
    fn bytes(&mut self, max: usize) -> Vec<u8>;
    /// A short printable string.
    fn text(&mut self, max: usize) -> String;
    /// A coin flip.
    fn boolean(&mut self) -> bool {
        self.integer(0, 1) == 1
    }
    /// One of the items.
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.integer(0, items.len() as i64 - 1) as usize]
    }
}

/// A seeded pseudo-random source (SplitMix64), for deterministic tests.
pub struct SplitMix(pub u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl Choices for SplitMix {
    fn integer(&mut self, min: i64, max: i64) -> i64 {
        let span = (max as i128 - min as i128 + 1) as u128;
        (min as i128 + (self.next() as u128 % span) as i128) as i64
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = self.integer(0, max as i64) as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }
    fn text(&mut self, max: usize) -> String {
        let len = self.integer(0, max as i64) as usize;
        (0..len)
            .map(|_| char::from(b' ' + (self.next() % 95) as u8))
            .chain(['é'].into_iter().take(len % 2))
            .collect()
    }
}

fn draw_address(choices: &mut impl Choices) -> Address {
    match choices.integer(0, 4) {
        0 => Address::Id(choices.integer(0, i64::MAX) as u64),
        1 => Address::Secp256k1(fixed(choices)),
        2 => Address::Actor(fixed(choices)),
        3 => {
            let mut key = [0u8; 48];
            for chunk in key.chunks_mut(20) {
                let part: [u8; 20] = fixed(choices);
                chunk.copy_from_slice(&part[..chunk.len()]);
            }
            Address::Bls(Box::new(key))
        }
        _ => {
            let mut subaddress = choices.bytes(54);
            subaddress.truncate(54);
            Address::Delegated {
                namespace: choices.integer(0, 1 << 20) as u64,
                subaddress,
            }
        }
    }
}

fn fixed(choices: &mut impl Choices) -> [u8; 20] {
    let mut out = [0u8; 20];
    for byte in &mut out {
        *byte = choices.integer(0, 255) as u8;
    }
    out
}

fn draw_amount(choices: &mut impl Choices) -> BigInt {
    // Up to ~2^128: beyond 64 bits on purpose.
    let high = choices.integer(0, i64::MAX);
    let low = choices.integer(0, i64::MAX);
    if choices.boolean() {
        BigInt::from(low)
    } else {
        (BigInt::from(high) << 64) + BigInt::from(low)
    }
}

/// An unsigned 10-field message.
pub fn draw_message(choices: &mut impl Choices) -> Message {
    Message {
        form: MessageForm::Unsigned,
        version: 0,
        to: draw_address(choices),
        from: draw_address(choices),
        nonce: choices.integer(0, i64::MAX) as u64,
        value: draw_amount(choices),
        gas_limit: choices.integer(0, i64::MAX),
        gas_fee_cap: draw_amount(choices),
        gas_premium: draw_amount(choices),
        method: choices.integer(0, 1 << 32) as u64,
        params: choices.bytes(64),
        signature: None,
    }
}

fn dag_cbor_block(value: &Ipld) -> (Cid, Vec<u8>) {
    let data = serde_ipld_dagcbor::to_vec(value).unwrap_or_default();
    (Cid::new_v1(0x71, Code::Blake2b256.digest(&data)), data)
}

/// A seed-schema vector: random class, meta, epoch, CAR with both roots, hex messages and receipts.
pub fn draw_seed_vector(choices: &mut impl Choices) -> Value {
    let class = choices.pick(&["messages", "block", "tipset", "chain"]);
    // The state trees: a leaf, a pre-state root and a post-state root linking to it.
    let leaf = dag_cbor_block(&Ipld::Bytes(choices.bytes(40)));
    let pre = dag_cbor_block(&Ipld::List(vec![
        Ipld::Link(leaf.0),
        Ipld::Integer(choices.integer(0, 1000).into()),
    ]));
    let post = dag_cbor_block(&Ipld::List(vec![
        Ipld::Link(leaf.0),
        Ipld::String(choices.text(12)),
    ]));
    let mut blocks = vec![pre.clone(), post.clone(), leaf];
    if choices.boolean() {
        blocks.push((
            Cid::new_v1(0x55, Code::Blake2b256.digest(b"raw")),
            b"raw".to_vec(),
        ));
    }
    let car = CarArchive::write(&[pre.0, post.0], &blocks);

    let mut vector = serde_json::Map::new();
    vector.insert("class".into(), json!(class));
    if choices.boolean() {
        vector.insert("selector".into(), json!(choices.text(20)));
    }
    if choices.boolean() {
        let mut meta = serde_json::Map::new();
        meta.insert("id".into(), json!(choices.text(16)));
        for key in ["version", "description", "comment"] {
            if choices.boolean() {
                meta.insert(key.into(), json!(choices.text(30)));
            }
        }
        if choices.boolean() {
            meta.insert(
                "gen".into(),
                json!({"source": choices.pick(&["lotus", "dsl"]), "version": choices.text(10)}),
            );
        }
        vector.insert("_meta".into(), Value::Object(meta));
    }
    vector.insert("car_bytes".into(), json!(encode_hex(&gzip(&car))));
    vector.insert(
        "preconditions".into(),
        json!({"epoch": choices.integer(0, i64::MAX), "state_tree": {"root_cid": {"/": pre.0.to_string()}}}),
    );
    let count = if class == "messages" {
        choices.integer(1, 4)
    } else {
        0
    };
    let messages: Vec<Value> = (0..count)
        .map(|_| json!(encode_hex(&draw_message(choices).encode())))
        .collect();
    let receipts: Vec<Value> = (0..count)
        .map(|_| {
            json!({
                "exit_code": choices.integer(0, 32),
                "return": encode_hex(&choices.bytes(16)),
                "gas_used": choices.integer(0, 1 << 40),
            })
        })
        .collect();
    if class == "messages" {
        vector.insert("apply_messages".into(), Value::Array(messages));
    }
    vector.insert(
        "postconditions".into(),
        json!({"state_tree": {"root_cid": {"/": post.0.to_string()}}, "receipts": receipts}),
    );
    Value::Object(vector)
}
