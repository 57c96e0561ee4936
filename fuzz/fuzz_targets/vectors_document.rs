//! Fuzz the vector checker (`geist vectors check`) on arbitrary bytes.
//!
//! The first byte chooses what the rest is: a vector document checked at every
//! layer (JSON, duplicate keys, schema, typed fields, messages, gzip, CAR,
//! blocks), a raw CAR archive with its integrity check, or a gzip stream.
//! Properties: no panic, and no allocation beyond the limits (the CAR's
//! inflated size is capped at 1 MiB here).

#![no_main]

use geist_vectors::{
    Limits, SchemaSet, car::CarArchive, check_document_limited, integrity, payload,
};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn schemas() -> &'static SchemaSet {
    static SCHEMAS: OnceLock<SchemaSet> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        SchemaSet::from_shared_dir().expect("the vector schemas in the shared data")
    })
}

const LIMITS: Limits = Limits {
    max_file_size: 1 << 20,
    max_car_size: 1 << 20,
};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let checked = check_document_limited("fuzz.json", rest, schemas(), &LIMITS);
            let _ = checked.report.to_string();
        }
        1 => {
            if let Ok(archive) = CarArchive::parse(rest) {
                let _ = integrity::check_archive(&archive);
            }
        }
        _ => {
            if let Ok(out) = payload::gunzip_limited(rest, "/car", 1 << 20) {
                assert!(out.len() <= 1 << 20);
            }
        }
    }
});
