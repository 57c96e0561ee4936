//! A readable account of one vector, for `geist vectors inspect`.
//!
//! Meta, selector and hints, variants, the state roots, CAR statistics (blocks
//! by codec, links, what is missing), every message decoded with addresses in
//! text form, and the expected receipts — followed by the check's failures and
//! notes, so a person sees both what the vector says and what is wrong with it.

use crate::check::CheckedVector;
use crate::integrity::{DAG_CBOR, RAW};
use crate::payload::encode_hex;
use std::fmt::Write as _;

/// Renders the human-readable summary of a checked vector.
pub fn render(checked: &CheckedVector) -> String {
    let mut out = String::new();
    let report = &checked.report;
    let _ = writeln!(out, "vector      {}", report.path);
    let format = report.format.map(|f| f.label()).unwrap_or("unrecognised");
    let _ = writeln!(out, "format      {format}");
    let _ = writeln!(
        out,
        "class       {}",
        report.class.as_deref().unwrap_or("?")
    );
    let Some(vector) = &checked.vector else {
        write_findings(&mut out, checked);
        return out;
    };
    let meta = &vector.meta;
    for (label, value) in [
        ("id", &meta.id),
        ("version", &meta.version),
        ("description", &meta.description),
        ("comment", &meta.comment),
    ] {
        if let Some(value) = value {
            let _ = writeln!(out, "{label:<11} {value}");
        }
    }
    for (source, version) in &meta.generation {
        let _ = writeln!(
            out,
            "generated   {}{}",
            source.as_deref().unwrap_or("?"),
            version
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default()
        );
    }
    if let Some(selector) = &vector.selector {
        let _ = writeln!(out, "selector    {selector}");
    }
    if !vector.hints.is_empty() {
        let _ = writeln!(out, "hints       {}", vector.hints.join(", "));
    }

    let pre = &vector.preconditions;
    let _ = writeln!(out, "\npreconditions");
    if let Some(epoch) = pre.epoch {
        let _ = writeln!(out, "  epoch         {epoch}");
    }
    for variant in &pre.variants {
        let _ = writeln!(
            out,
            "  variant       {} epoch {} network version {}",
            variant.id.as_deref().unwrap_or("?"),
            variant.epoch.map_or("?".into(), |e| e.to_string()),
            variant.nv.map_or("?".into(), |n| n.to_string())
        );
    }
    if let Some(basefee) = &pre.basefee {
        let _ = writeln!(out, "  base fee      {basefee} attoFIL");
    }
    if let Some(supply) = &pre.circ_supply {
        let _ = writeln!(out, "  circ. supply  {supply} attoFIL");
    }
    let _ = writeln!(
        out,
        "  state root    {}",
        pre.state_root.map_or("(none)".into(), |c| c.to_string())
    );

    let _ = writeln!(out, "\nCAR");
    let stats = &report.stats;
    if stats.car_gzip_bytes > 0 {
        let _ = writeln!(out, "  gzipped       {} bytes", stats.car_gzip_bytes);
    }
    match (&checked.archive, &checked.integrity) {
        (Some(archive), Some(integrity)) => {
            let _ = writeln!(
                out,
                "  uncompressed  {} bytes, {} blocks ({} bytes of block data)",
                archive.len,
                archive.blocks.len(),
                archive.block_bytes()
            );
            let roots: Vec<String> = archive.roots.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "  header roots  {}", roots.join(", "));
            let codecs: Vec<String> = integrity
                .codecs
                .iter()
                .map(|(codec, count)| {
                    let name = match *codec {
                        DAG_CBOR => "dag-cbor".to_string(),
                        RAW => "raw".to_string(),
                        other => format!("0x{other:x}"),
                    };
                    format!("{count} {name}")
                })
                .collect();
            let _ = writeln!(out, "  codecs        {}", codecs.join(", "));
            let _ = writeln!(
                out,
                "  CIDs          {} verified, {} mismatched, {} unverifiable",
                integrity.verified,
                integrity.mismatches.len(),
                integrity.unverifiable.len()
            );
            let _ = writeln!(
                out,
                "  links         {} ({} distinct targets not in the CAR)",
                integrity.links,
                integrity.missing_links.len()
            );
            if !integrity.non_utf8_blocks.is_empty() {
                let _ = writeln!(
                    out,
                    "  non-UTF-8     {} block(s) with invalid strings",
                    integrity.non_utf8_blocks.len()
                );
            }
        }
        _ => {
            let _ = writeln!(out, "  (not decoded; see notes and failures)");
        }
    }

    let _ = writeln!(out, "\nmessages ({})", checked.messages.len());
    let offsets: Vec<Option<i64>> = vector
        .apply_messages
        .iter()
        .map(|m| m.epoch_offset)
        .collect();
    for (index, (path, message)) in checked.messages.iter().enumerate() {
        let offset = offsets
            .get(index)
            .copied()
            .flatten()
            .map(|o| format!(" epoch offset {o}"))
            .unwrap_or_default();
        match message {
            Ok(message) => {
                let _ = writeln!(out, "  {path}{offset}\n    {message}");
                if !message.params.is_empty() {
                    let shown = &message.params[..message.params.len().min(32)];
                    let more = if message.params.len() > 32 { "…" } else { "" };
                    let _ = writeln!(out, "    params {}{more}", encode_hex(shown));
                }
            }
            Err(error) => {
                let _ = writeln!(out, "  {path}: undecodable: {error}");
            }
        }
    }
    for (index, tipset) in vector.apply_tipsets.iter().enumerate() {
        let _ = writeln!(
            out,
            "  tipset {index}: epoch offset {} base fee {} , {} block(s): {}",
            tipset.epoch_offset.map_or("?".into(), |o| o.to_string()),
            tipset
                .basefee
                .as_ref()
                .map_or("?".into(), |b| b.to_string()),
            tipset.blocks.len(),
            tipset
                .blocks
                .iter()
                .map(|b| format!(
                    "{} (win count {}, {} msg)",
                    b.miner_addr,
                    b.win_count,
                    b.messages.len()
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    let post = &vector.postconditions;
    let _ = writeln!(out, "\npostconditions");
    let _ = writeln!(
        out,
        "  state root    {}",
        post.state_root.map_or("(none)".into(), |c| c.to_string())
    );
    for (index, receipt) in post.receipts.iter().enumerate() {
        match receipt {
            Some(receipt) => {
                let _ = writeln!(
                    out,
                    "  receipt {index:<4} exit code {} gas used {} return {}",
                    receipt.exit_code,
                    receipt.gas_used,
                    if receipt.return_data.is_empty() {
                        "(empty)".to_string()
                    } else {
                        encode_hex(&receipt.return_data)
                    }
                );
            }
            None => {
                let _ = writeln!(out, "  receipt {index:<4} null (not applied)");
            }
        }
    }
    for root in &post.receipts_roots {
        let _ = writeln!(out, "  receipts root {root}");
    }
    write_findings(&mut out, checked);
    out
}

fn write_findings(out: &mut String, checked: &CheckedVector) {
    let report = &checked.report;
    let _ = writeln!(
        out,
        "\ncheck       {}",
        if report.passed() { "passed" } else { "FAILED" }
    );
    for failure in &report.failures {
        let _ = writeln!(out, "  failure: {failure}");
    }
    for note in &report.notes {
        let _ = writeln!(out, "  note: {note}");
    }
}
