#!/usr/bin/env bash
# GenVM Calldata against the published SDK (issue 6): installs the pinned
# genlayer-js (scripts/genlayer/package-lock.json) into target/npm-genlayer and
# runs the differential test, plus the shared vectors through the CLI.
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in node npm cargo; do
    command -v "$tool" >/dev/null || { echo "genlayer stage: $tool is required but not installed" >&2; exit 1; }
done

prefix="target/npm-genlayer"
mkdir -p "$prefix"
cp scripts/genlayer/package.json scripts/genlayer/package-lock.json "$prefix/"
echo "-- installing genlayer-js (pinned) into $prefix"
npm ci --prefix "$prefix" --no-audit --no-fund --loglevel=error
test -f "$prefix/node_modules/genlayer-js/package.json" \
    || { echo "genlayer stage: genlayer-js did not install" >&2; exit 1; }

echo "-- shared Calldata vectors through the CLI"
. scripts/cargo-builds.sh
geist_debug_builds
"${CARGO_TARGET_DIR:-target}/debug/geist" calldata check ../shared/data/genvm/calldata-vectors.json

echo "-- differential test against genlayer-js"
GEIST_GENLAYER_JS_DIR="$PWD/$prefix" \
    geist_run_test crates/packs/genvm calldata_differential test --ignored --nocapture
