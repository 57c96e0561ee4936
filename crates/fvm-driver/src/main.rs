//! `geist-fvm-driver`: executes Filecoin test vectors on ref-fvm 3.x behind
//! geist's driver protocol (requests on standard input, responses on
//! standard output, one JSON line each). `geist vectors run --driver fvm`
//! starts it.
//!
//! `--bundle FILE` (repeatable) names the builtin-actors bundles to load;
//! by default every `*.tar.zst` of `filecoin-vectors/actor-bundles/` in the
//! shared data directory (`$GEIST_SHARED_DATA`, or `../shared/data` beside
//! the checkout).

use anyhow::Context as _;
use clap::Parser;
use geist_fvm_driver::bundle::{BundleSet, bundles_in};
use geist_fvm_driver::execute::Vm;
use std::path::PathBuf;

/// The bundles' directory inside the shared data.
const BUNDLES_DIR: &str = "filecoin-vectors/actor-bundles";

#[derive(Parser)]
#[command(
    name = "geist-fvm-driver",
    version,
    about = "Executes Filecoin test vectors on ref-fvm 3.x (geist-vectors-driver/1 on stdin/stdout)"
)]
struct Args {
    /// A builtin-actors bundle (.tar.zst) to load; repeatable. Default: the shared data's bundles.
    #[arg(long = "bundle")]
    bundles: Vec<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let paths = if args.bundles.is_empty() {
        let shared = geist_pack::data::shared_data_dir()
            .map_err(anyhow::Error::msg)
            .context("finding the actor bundles (or name them with --bundle)")?;
        let dir = shared.join(BUNDLES_DIR);
        bundles_in(&dir)
            .with_context(|| format!("listing the actor bundles in {}", dir.display()))?
    } else {
        args.bundles
    };
    let bundles = BundleSet::load(&paths)?;
    let vm = Vm::new(bundles);
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    geist_fvm_driver::serve::serve(&vm, stdin, stdout).context("serving requests")
}
