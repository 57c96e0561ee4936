#!/usr/bin/env bash
# How reliably the engine finds bugs: runs hegeltest 0.16's test_find_quality
# (each test plants a bug and expects it found within its budget) N times
# against geist-server and, for comparison, against hegel-core 0.9.0 (PyPI,
# installed into target/client-conformance-venv as the client-conformance
# stage pins it), and prints how many runs passed and which tests failed.
#
# usage: scripts/find-stability.sh N [geist|hegel-core|both]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. "$root/scripts/hegel-core-venv.sh"
runs=${1:?usage: scripts/find-stability.sh N [geist|hegel-core|both]}
which=${2:-both}
version=0.16.0
work="$root/target/hegeltest"
src="$work/hegeltest-$version"
target="${CARGO_TARGET_DIR:-$root/target}"

"$root/scripts/fetch-hegeltest.sh" "$version" >/dev/null

servers=()
if [ "$which" = geist ] || [ "$which" = both ]; then
    . "$root/scripts/cargo-builds.sh"
    (cd "$root" && geist_debug_builds)
    servers+=("geist-server=$target/debug/geist-server")
fi
if [ "$which" = hegel-core ] || [ "$which" = both ]; then
    hegel_core_venv "$root"
    servers+=("hegel-core=$venv/bin/hegel")
fi
[ ${#servers[@]} -gt 0 ] || { echo "unknown server set: $which" >&2; exit 2; }

cd "$src"
export CARGO_TARGET_DIR="$work/target" RUST_BACKTRACE=0
cargo test --quiet --locked --test test_find_quality --no-run 2>/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for entry in "${servers[@]}"; do
    name=${entry%%=*}
    export HEGEL_SERVER_COMMAND=${entry#*=}
    passed=0
    declare -A failed=()
    for ((i = 1; i <= runs; i++)); do
        if cargo test --quiet --locked --test test_find_quality -- --test-threads=2 >"$log" 2>&1; then
            passed=$((passed + 1))
        else
            while read -r test; do
                failed[$test]=$((${failed[$test]:-0} + 1))
            done < <(sed -n 's/^    \([a-z_:0-9]*\)$/\1/p' "$log" | sort -u)
        fi
        echo "$name: run $i/$runs, $passed passed so far" >&2
    done
    echo "$name: $passed of $runs runs of test_find_quality passed"
    for test in "${!failed[@]}"; do
        echo "  $test failed in ${failed[$test]} runs"
    done
    unset failed
done
