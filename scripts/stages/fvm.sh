#!/usr/bin/env bash
# Test vectors executed on a real VM (issue 18): builds geist's ref-fvm driver
# (crates/fvm-driver, outside the workspace, pinned by its own Cargo.lock)
# into target/fvm-driver, unpacks the fvm-test-vectors corpus from the shared
# data under target/, and runs a fixed sample of it through
# `geist vectors run --driver fvm`. Every sampled vector must end as
# scripts/fvm-expected.txt says (pass, skip, or a known failure), so a new
# failure and a new pass both fail the stage.
#   FVM_VECTORS=all   runs the whole corpus instead of the sample.
set -euo pipefail
cd "$(dirname "$0")/../.."

shared="${GEIST_SHARED_DATA:-../shared/data}"
corpus_tar="$shared/filecoin-vectors/fvm-test-vectors-91d0ef7-corpus.tar.gz"
corpus="target/fvm-vectors"
expected="scripts/fvm-expected.txt"
[ -f "$corpus_tar" ] || { echo "fvm stage: $corpus_tar not found (set GEIST_SHARED_DATA)" >&2; exit 1; }

echo "-- building geist-fvm-driver (release, target/fvm-driver)"
cargo build --release --locked --quiet \
    --manifest-path crates/fvm-driver/Cargo.toml --target-dir target/fvm-driver
echo "-- the driver's own tests"
cargo test --release --locked --quiet \
    --manifest-path crates/fvm-driver/Cargo.toml --target-dir target/fvm-driver
export GEIST_FVM_DRIVER="$PWD/target/fvm-driver/release/geist-fvm-driver"

if [ ! -d "$corpus/corpus" ]; then
    echo "-- unpacking the corpus into $corpus"
    rm -rf "$corpus" && mkdir -p "$corpus"
    tar -xzf "$corpus_tar" -C "$corpus" --strip-components=1
fi

. scripts/cargo-builds.sh
geist_debug_builds
geist=target/debug/geist

# The sample: the vectors marked "sample" in the expectations file.
if [ "${FVM_VECTORS:-sample}" = all ]; then
    mapfile -t vectors < <(awk '!/^#/ && NF {print "'"$corpus"'/" $2}' "$expected")
else
    mapfile -t vectors < <(awk '!/^#/ && $3 == "sample" {print "'"$corpus"'/" $2}' "$expected")
fi
echo "-- running ${#vectors[@]} vectors on ref-fvm"
results="target/fvm-run.json"
started=$(date +%s)
set +e
"$geist" vectors run --driver fvm --format json "${vectors[@]}" > "$results"
status=$?
set -e
echo "   ($(( $(date +%s) - started )) s, geist exit status $status)"

# Compare each run's status with the expectation.
python3 - "$results" "$expected" "$corpus/" <<'EOF'
import json, sys
results, expected_file, prefix = sys.argv[1:]
expected = {}
for line in open(expected_file):
    if line.startswith("#") or not line.strip():
        continue
    status, path = line.split()[:2]
    expected[path] = status
runs = json.load(open(results))["runs"]
wrong = []
for run in runs:
    path = run["path"].removeprefix(prefix)
    want = expected.get(path)
    got = {"passed": "pass", "failed": "fail", "error": "fail", "skipped": "skip"}[run["status"]]
    if want != got:
        detail = run.get("differences") or run.get("reason") or ""
        wrong.append(f"{path}: expected {want}, got {got} {detail}")
print(f"   {len(runs)} runs checked against {expected_file}")
for line in wrong:
    print("   UNEXPECTED " + line)
sys.exit(1 if wrong or not runs else 0)
EOF
