//! A round-trip property of a small codec: decoding inverts encoding.
//!
//! `cargo run -p geist --example codec_roundtrip` checks a length-prefixed
//! key/value encoding over 1,000 generated records and prints the summary.

use geist::generators as gs;
use geist::{Generate, Settings, TestCase, run_property};

/// A record: a name and some tagged values.
#[derive(Debug, Clone, PartialEq, Generate)]
struct Record {
    #[geist(with = gs::text().max_size(20))]
    name: String,
    values: Vec<(u8, i64)>,
    flag: Option<bool>,
}

fn encode(record: &Record) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(record.name.len() as u32).to_le_bytes());
    out.extend_from_slice(record.name.as_bytes());
    out.extend_from_slice(&(record.values.len() as u32).to_le_bytes());
    for (tag, value) in &record.values {
        out.push(*tag);
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.push(match record.flag {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    });
    out
}

fn decode(bytes: &[u8]) -> Result<Record, String> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], String> {
        let part = bytes
            .get(at..at + n)
            .ok_or(format!("truncated at byte {at}"))?;
        at += n;
        Ok(part)
    };
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let name_len = word(take(4)?);
    let name = String::from_utf8(take(name_len)?.to_vec()).map_err(|e| e.to_string())?;
    let count = word(take(4)?);
    let mut values = Vec::new();
    for _ in 0..count {
        let tag = take(1)?[0];
        let mut raw = [0u8; 8];
        raw.copy_from_slice(take(8)?);
        values.push((tag, i64::from_le_bytes(raw)));
    }
    let flag = match take(1)?[0] {
        0 => None,
        1 => Some(false),
        2 => Some(true),
        other => return Err(format!("bad flag {other}")),
    };
    Ok(Record { name, values, flag })
}

fn main() {
    let settings = Settings::new().test_cases(1000).database(None::<&str>);
    let result = run_property(&settings, &mut |tc: &mut TestCase| {
        let record: Record = tc.draw(gs::any::<Record>());
        let bytes = encode(&record);
        tc.note(format!("{} bytes", bytes.len()));
        assert_eq!(decode(&bytes), Ok(record));
    });
    match result {
        Ok(summary) => println!("round trip holds: {summary}"),
        Err(report) => {
            println!("{report}");
            std::process::exit(1);
        }
    }
}
