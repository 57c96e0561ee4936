#!/usr/bin/env bash
# Find power: how often geist (geist-server, and in process) and hegel-core
# 0.9.0 find each of the planted bugs of crates/client/benches/find_power.rs
# within 100 test cases, through the same client (geist's), 100 runs each
# with a seed per run. hegel-core is installed, pinned as the
# client-conformance stage pins it, into target/client-conformance-venv.
#
# usage: scripts/bench-find-power.sh [--runs N] [--only SUBSTRING]
#            [--engines geist-server,hegel-core,in-process]
# Set FIND_POWER_PROFILE=debug to use debug builds (faster to build, same
# choices: the table does not depend on the build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. "$root/scripts/hegel-core-venv.sh"
target="${CARGO_TARGET_DIR:-$root/target}"
hegel_core_venv "$root"

profile=${FIND_POWER_PROFILE:-release}
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD), $profile build, load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
if [ "$profile" = release ]; then
    cargo build --quiet --locked --release -p geist-server
    GEIST_BENCH_GEIST_SERVER="$target/release/geist-server" GEIST_BENCH_HEGEL="$venv/bin/hegel" \
        cargo bench --quiet --locked -p geist --bench find_power -- "$@"
else
    # The workspace tests' selection (scripts/cargo-builds.sh): no
    # dependency is rebuilt with other features.
    . "$root/scripts/cargo-builds.sh"
    geist_debug_builds
    cargo build --quiet --locked --workspace --bench find_power
    bench=$(ls -t "$target"/debug/deps/find_power-* | grep -v '\.d$' | head -1)
    GEIST_BENCH_GEIST_SERVER="$target/debug/geist-server" GEIST_BENCH_HEGEL="$venv/bin/hegel" \
        "$bench" "$@"
fi
echo "# done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
