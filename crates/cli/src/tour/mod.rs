//! `geist tour`: the product at work on its built-in defaults.
//!
//! Two parts, each of which must hold for the tour to exit 0:
//! 1. every conformance pack compiled in checks its cases from the shared
//!    data (lazily IPC fixtures, GenVM Calldata vectors, Filecoin test
//!    vectors), as `geist fixtures|calldata|vectors check` would;
//! 2. a seeded property campaign: a round-trip property of a small codec
//!    ([`codec`]) passes on the correct build, and on the build with a
//!    planted bug geist finds a failure and shrinks it to the minimal
//!    example, which the tour knows in advance and checks (it also checks
//!    that the example's simpler neighbours pass). The seed is fixed, so
//!    the output is the same on every run.

mod codec;

use anyhow::Context as _;
use codec::{Field, ZigZag, round_trips};
use geist::generators as gs;
use geist::{Settings, TestCase, Transport, Verbosity, run_property};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// The campaign's seed: fixed, so that every tour finds and prints the same example.
const SEED: u64 = 20_261_124;

/// Test cases of the campaign (each run, before shrinking).
const TEST_CASES: u64 = 1_000;

/// Arguments of `geist tour` (none: the shared data is found as every pack
/// finds it, `GEIST_SHARED_DATA` or `../shared/data`).
#[derive(clap::Args)]
pub struct Args {}

/// Runs `geist tour`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let data = geist_pack::data::shared_data_dir().map_err(anyhow::Error::msg)?;
    outln!("geist tour: conformance packs on {}", data.display())?;
    let mut ok = true;
    ok &= packs(&data)?;
    outln!()?;
    outln!("geist tour: a seeded property campaign (seed {SEED})")?;
    ok &= campaign()?;
    outln!()?;
    let elapsed = started.elapsed().as_secs_f64();
    if ok {
        outln!("geist tour: all checks held ({elapsed:.1} s)")?;
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("geist tour: FAILED ({elapsed:.1} s)")?;
        Ok(ExitCode::FAILURE)
    }
}

/// One pack's closing line; failing cases are listed before it.
fn pack_line(
    name: &str,
    passed: usize,
    failed: usize,
    failures: &[String],
    started: Instant,
) -> std::io::Result<()> {
    for failure in failures {
        outln!("    {failure}")?;
    }
    let verdict = if failed == 0 && passed > 0 {
        "ok  "
    } else {
        "FAIL"
    };
    outln!(
        "  {verdict} {name}: {passed} passed, {failed} failed ({:.2} s)",
        started.elapsed().as_secs_f64()
    )
}

/// Checks every compiled-in pack on the shared data; whether all passed.
fn packs(data: &Path) -> anyhow::Result<bool> {
    #[cfg_attr(
        not(any(feature = "fixtures", feature = "genvm", feature = "vectors")),
        allow(unused_mut)
    )]
    let mut ok = true;
    #[cfg(feature = "fixtures")]
    {
        let started = Instant::now();
        let dir = data.join("lazily-conformance");
        let report = crate::fixtures::runner().check_paths(std::slice::from_ref(&dir));
        let failures: Vec<String> = report
            .to_text_lines()
            .into_iter()
            .filter(|line| line.starts_with("FAIL"))
            .collect();
        pack_line(
            "lazily IPC fixtures (byte-identical re-encoding, assertions)",
            report.passed(),
            report.failed(),
            &failures,
            started,
        )?;
        ok &= report.failed() == 0 && report.passed() > 0;
    }
    #[cfg(feature = "genvm")]
    {
        use geist_genvm::calldata::vectors;
        let started = Instant::now();
        let file = data.join("genvm/calldata-vectors.json");
        let outcomes = vectors::run_file(&file)?;
        let failures: Vec<String> = vectors::failures(&outcomes)
            .into_iter()
            .map(|failure| format!("FAIL {failure}"))
            .collect();
        pack_line(
            "GenVM Calldata vectors (exact hex, refused inputs)",
            outcomes.len() - failures.len(),
            failures.len(),
            &failures,
            started,
        )?;
        ok &= failures.is_empty() && !outcomes.is_empty();
    }
    #[cfg(feature = "vectors")]
    {
        use geist_vectors as vectors;
        let started = Instant::now();
        let schemas =
            vectors::SchemaSet::from_shared_dir().context("loading the Filecoin vector schemas")?;
        let files = vectors::collect_vector_files(&[data.join("filecoin-vectors")])?.files;
        let reports = vectors::check_files(&files, &schemas, vectors::check::default_workers());
        let summary = vectors::CheckSummary::of(&reports);
        let failures: Vec<String> = reports
            .iter()
            .filter(|r| !r.passed())
            .map(ToString::to_string)
            .collect();
        pack_line(
            &format!(
                "Filecoin test vectors (JSON Schema, CAR and CID, {} blocks verified)",
                summary.verified_blocks
            ),
            summary.passed,
            summary.failed,
            &failures,
            started,
        )?;
        ok &= summary.failed == 0 && summary.passed > 0;
    }
    #[cfg(not(all(feature = "fixtures", feature = "genvm", feature = "vectors")))]
    outln!("  (packs left out of this build are skipped)")?;
    let _ = data;
    Ok(ok)
}

/// The campaign's settings: in process, seeded, no database, quiet, whatever
/// the environment says (the tour's output must not depend on it).
fn settings(name: &str) -> Settings {
    Settings::new()
        .transport(Transport::InProcess)
        .seed(Some(SEED))
        .derandomize(false)
        .test_cases(TEST_CASES)
        .database(None::<&str>)
        .deadline(None)
        .verbosity(Verbosity::Normal)
        .name(name)
}

/// The round-trip property of the codec build `zigzag`, remembering the
/// fields of the final replay of a failure (the minimal example).
fn round_trip(zigzag: ZigZag, minimal: &mut Option<Vec<Field>>) -> impl FnMut(&mut TestCase) + '_ {
    move |tc: &mut TestCase| {
        let fields: Vec<Field> = tc.draw_named("fields", gs::vecs(gs::any::<Field>()).max_size(6));
        let bytes = codec::encode(&fields, zigzag);
        let decoded = codec::decode(&bytes);
        if tc.is_final() {
            *minimal = Some(fields.clone());
            tc.note(format!("encoded: {}", hex_of(&bytes)));
        }
        assert_eq!(
            decoded.as_deref(),
            Ok(fields.as_slice()),
            "decode(encode(fields)) != fields"
        );
    }
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs the campaign; whether it went as it must.
fn campaign() -> anyhow::Result<bool> {
    let mut ok = true;

    // The correct build: the property holds.
    let started = Instant::now();
    let mut unused = None;
    let settings_correct = settings("tour::round_trip_correct");
    match run_property(
        &settings_correct,
        &mut round_trip(ZigZag::Correct, &mut unused),
    ) {
        Ok(summary) => outln!(
            "  ok   correct codec: decode(encode(m)) == m held for {} test cases ({:.2} s)",
            summary.valid_test_cases,
            started.elapsed().as_secs_f64()
        )?,
        Err(report) => {
            outln!("  FAIL correct codec: the round trip should hold, but:\n{report}")?;
            ok = false;
        }
    }

    // The planted bug: found, shrunk to the known minimal example.
    let started = Instant::now();
    let mut minimal = None;
    let settings_planted = settings("tour::round_trip_planted");
    let result = run_property(
        &settings_planted,
        &mut round_trip(ZigZag::Planted, &mut minimal),
    );
    let elapsed = started.elapsed().as_secs_f64();
    let report = match result {
        Ok(summary) => {
            outln!("  FAIL planted bug not found in {summary}")?;
            return Ok(false);
        }
        Err(report) => report,
    };
    outln!("  codec with a planted bug (zig-zag with the 32-bit shift, n >> 31):")?;
    // The report's reproduction line names `cargo test`; the tour reproduces itself.
    for line in report.lines().filter(|l| !l.starts_with("Reproduce with:")) {
        outln!("    | {line}")?;
    }
    let expected = vec![Field {
        key: String::new(),
        value: 1 << 31,
    }];
    match minimal {
        Some(found) if found == expected => {
            // Minimal: every simpler message round-trips on the planted build.
            let simpler = [
                Vec::new(),
                vec![Field {
                    key: String::new(),
                    value: (1 << 31) - 1,
                }],
                vec![Field {
                    key: String::new(),
                    value: -(1 << 31),
                }],
            ];
            let all_pass = simpler.iter().all(|m| round_trips(m, ZigZag::Planted));
            let fails = !round_trips(&found, ZigZag::Planted);
            if all_pass && fails {
                outln!(
                    "  ok   planted bug found and shrunk to the minimal example {found:?} ({elapsed:.2} s): \
                     2^31 is the smallest value the 32-bit shift breaks; [], 2^31 - 1 and -2^31 round-trip"
                )?;
            } else {
                outln!("  FAIL the expected minimal example is not minimal on this build")?;
                ok = false;
            }
        }
        Some(found) => {
            outln!("  FAIL shrunk to {found:?}, not the minimal example {expected:?}")?;
            ok = false;
        }
        None => {
            outln!("  FAIL the failure was reported without a final replay")?;
            ok = false;
        }
    }
    Ok(ok)
}
