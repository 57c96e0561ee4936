#!/usr/bin/env bash
# The same frontend, hegeltest 0.51.0, on libhegel (hegeltest-c 0.49.0) and on
# geist's libhegel_c.so, side by side in one run (issue 15): test cases per
# second for one i64, a Vec<i64>, a String and a state machine
# (bench/hegel-c-abi), and the wall time of hegeltest 0.51.0's own
# test_shrink_quality and test_find_quality test files. Everything is built
# in release: geist's library, libhegel (built by hegeltest's build script
# when the bench builds), the bench and the two test files. The engines
# alternate round by round; the table shows medians and ratios.
#
# usage: scripts/bench-hegel-c.sh [--rounds N] [--test-cases N] [--suite-rounds N] [--only PROPERTY]
#   GEIST_BENCH_NO_SUITES=1   skip the two test files
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/target/hegel-c-bench"
export CARGO_TARGET_DIR="$work/target"

echo "building geist's libhegel_c.so (release)" >&2
(unset CARGO_TARGET_DIR; cargo build --release --locked -p geist-hegel-c)
geist_dir="$root/target/release"

echo "building the bench and libhegel (release)" >&2
# HEGEL_C_LIB_DIR unset: hegeltest's build script builds libhegel.
(cd bench/hegel-c-abi && env -u HEGEL_C_LIB_DIR cargo build --release --locked)
lib=$(ls -t "$CARGO_TARGET_DIR"/release/build/hegeltest-*/out/lib/libhegel_c.so | head -n 1)
libhegel_dir=$(dirname "$lib")

suites=()
src=""
if [ "${GEIST_BENCH_NO_SUITES:-0}" != 1 ]; then
    src=$(bash scripts/fetch-hegeltest.sh 0.51.0)
    echo "building hegeltest 0.51.0's test_shrink_quality and test_find_quality (release)" >&2
    # HEGEL_C_LIB_DIR set: no second libhegel build; the bench names the
    # engine of every run explicitly anyway.
    (cd "$src" && HEGEL_C_LIB_DIR="$libhegel_dir" cargo test --release --locked --no-run \
        --test test_shrink_quality --test test_find_quality --message-format=json \
        >"$work/suites.json" 2>"$work/suites.log") || { tail -n 30 "$work/suites.log" >&2; exit 1; }
    for t in test_shrink_quality test_find_quality; do
        exe=$(python3 "$root/scripts/hegeltest_051.py" executables "$work/suites.json" | awk -v n="$t" '$1 == n { print $2 }')
        [ -n "$exe" ] || { echo "$t did not build" >&2; exit 1; }
        suites+=(--suite "$t=$exe")
    done
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
LIBHEGEL_LIB_DIR="$libhegel_dir" GEIST_LIB_DIR="$geist_dir" \
    "$CARGO_TARGET_DIR/release/hegel-c-abi" "$@" ${src:+--suite-dir "$src"} "${suites[@]}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
