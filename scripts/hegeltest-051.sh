#!/usr/bin/env bash
# Runs the test files of the published hegeltest 0.51.0 crate (the Rust
# frontend of Hegel, which loads libhegel's C ABI at run time) twice: on the
# libhegel its build script builds (hegeltest-c 0.49.0), and on geist's
# libhegel_c.so (HEGEL_C_LIB_DIR=target/release). The crate is fetched from
# crates.io into target/ (never committed); its test binaries are built once
# and serve both runs.
#
# It prints, per test file, how many tests pass on each engine, and lists the
# tests that pass on libhegel and fail on geist. It exits non-zero when that
# list holds a test that scripts/hegeltest-051-known-failures.txt does not
# name (each listed test is a known, open geist defect, with its reason).
#
# usage: scripts/hegeltest-051.sh [TEST_FILE ...]   (default: every test file that builds)
#   GEIST_HEGELTEST051_BUILD_ONLY=1   fetch and build, run nothing
#   GEIST_HEGELTEST051_ENGINE=geist   run only on geist (or: libhegel)
#   GEIST_HEGELTEST051_PROFILE=release   build the test binaries (and the
#                                     libhegel they build) in release, not debug
#   GEIST_HEGELTEST051_LIB_DIR=D      use geist's libhegel_c.so in D (a copy that
#                                     a rebuild cannot replace mid-run), no build
#   GEIST_HEGELTEST051_RESULTS=D      write the logs to D (default
#                                     target/hegeltest-051/results)
#   GEIST_HEGELTEST051_TIMEOUT=S      seconds one test file may run on one
#                                     engine (default 1800)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=0.51.0
work="$root/target/hegeltest-051"
src="$work/hegeltest-$version"
results="${GEIST_HEGELTEST051_RESULTS:-$work/results}"

# Test files left out: trybuild UI tests (compile-error snapshots, nothing of
# the engine), miri and Antithesis files (need their own toolchains or
# environments), and files that run fixture binaries the published crate
# leaves out (tests/fixtures is excluded from the package).
excluded=(test_ui test_derive_compile test_miri test_antithesis)

"$root/scripts/fetch-hegeltest.sh" "$version" "$work" >/dev/null

all_tests=()
while IFS= read -r name; do
    skip=0
    for e in "${excluded[@]}"; do [ "$name" = "$e" ] && skip=1; done
    [ $skip = 1 ] || all_tests+=("$name")
done < <(echo hegel; sed -n 's/^name = "\(test_[a-z0-9_]*\|chrono\|jiff\|rand\|serde_json\)"$/\1/p' "$src/Cargo.toml" | sort -u)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("${all_tests[@]}")

if [ -n "${GEIST_HEGELTEST051_LIB_DIR:-}" ]; then
    geist_dir="$GEIST_HEGELTEST051_LIB_DIR"
    [ -f "$geist_dir/libhegel_c.so" ] || { echo "no libhegel_c.so in $geist_dir" >&2; exit 1; }
else
    echo "building geist's libhegel_c.so (release)"
    . "$root/scripts/cargo-builds.sh"
    geist_release_builds
    geist_dir="${CARGO_TARGET_DIR:-$root/target}/release"
fi

# One build of the frontend's tests, with every optional feature the test
# files need. Its build script builds libhegel (hegeltest-c 0.49.0) into
# OUT_DIR and bakes that directory in as the loader's fallback.
echo "building hegeltest $version test binaries"
export CARGO_TARGET_DIR="$work/target"
# --keep-going: the files that need fixture binaries the package leaves out
# fail to compile; every other file still builds.
# Named files build alone (a CI sample needs only its own binaries).
profile=()
[ "${GEIST_HEGELTEST051_PROFILE:-debug}" = release ] && profile=(--release)
targets=(--tests)
if [ $# -gt 0 ]; then
    targets=()
    for t in "${tests[@]}"; do
        if [ "$t" = hegel ]; then targets+=(--lib); else targets+=(--test "$t"); fi
    done
fi
# Every optional feature but `static-engine`: that one links libhegel into
# the test binaries, which then never load a libhegel_c.so at all, and a
# "geist" run would be a second libhegel run.
features=$(python3 "$root/scripts/hegeltest_051.py" features "$src/Cargo.toml")
(cd "$src" && CARGO_INCREMENTAL=0 nice -n 5 cargo build --locked --features "$features" "${profile[@]}" "${targets[@]}" --keep-going \
    --message-format=json >"$work/build.$$.json" 2>"$work/build.log") || true
# Per invocation: a concurrent invocation (another profile, other files)
# must not change which binaries this one runs.
executables="$work/executables.$$.txt"
trap 'rm -f "$executables" "$work/build.$$.json"' EXIT
python3 "$root/scripts/hegeltest_051.py" executables "$work/build.$$.json" >"$executables"
echo "$(wc -l <"$executables") test binaries built; did not build: $(python3 "$root/scripts/hegeltest_051.py" failed "$work/build.$$.json")"
[ "${GEIST_HEGELTEST051_BUILD_ONLY:-0}" = 1 ] && exit 0

# The geist runs must run on geist: a test binary that links an engine in, or
# a loader that finds another library, would make them libhegel runs that
# pass. geist's library reports the version GEIST_HEGEL_ABI_VERSION names, so
# a binary that loads it refuses to start with that name in its message.
check_exe=$(awk 'NR == 1 { print $2 }' "$executables")
if [ -n "$check_exe" ]; then
    marker="0.0.0-geist-load-check"
    check=$(cd "$src" && HEGEL_C_LIB_DIR="$geist_dir" GEIST_HEGEL_ABI_VERSION="$marker" RUST_BACKTRACE=0 \
        timeout 120 "$check_exe" --test-threads=1 2>&1 || true)
    if ! grep -q "libhegel $marker" <<<"$check"; then
        echo "$(basename "$check_exe") did not load geist's libhegel_c.so from $geist_dir" >&2
        tail -n 20 <<<"$check" >&2
        exit 1
    fi
    echo "checked: the test binaries load geist's libhegel_c.so from $geist_dir"
fi

engines=(libhegel geist)
file_timeout="${GEIST_HEGELTEST051_TIMEOUT:-1800}"
[ -n "${GEIST_HEGELTEST051_ENGINE:-}" ] && engines=("$GEIST_HEGELTEST051_ENGINE")
rm -rf "$results" && mkdir -p "$results"
# The tests read fixtures relative to the crate root, as cargo test runs them.
cd "$src"
for t in "${tests[@]}"; do
    exe=$(awk -v n="$t" '$1 == n { print $2 }' "$executables")
    if [ -z "$exe" ]; then echo "$t: did not build, skipped"; continue; fi
    for engine in "${engines[@]}"; do
        out="$results/$t.$engine.log"
        start=$(date +%s)
        if [ "$engine" = geist ]; then
            HEGEL_C_LIB_DIR="$geist_dir" RUST_BACKTRACE=0 timeout "$file_timeout" "$exe" --test-threads=2 >"$out" 2>&1 || true
        else
            env -u HEGEL_C_LIB_DIR RUST_BACKTRACE=0 timeout "$file_timeout" "$exe" --test-threads=2 >"$out" 2>&1 || true
        fi
        echo "$t $engine $(( $(date +%s) - start ))s" >>"$results/times.txt"
    done
    python3 "$root/scripts/hegeltest_051.py" line "$results" "$t"
done
python3 "$root/scripts/hegeltest_051.py" summary "$results" "${tests[@]}"
