#!/usr/bin/env bash
# Runs test files of the published hegeltest crate (Rust client of Hegel)
# against geist-server. The crate is fetched from crates.io into target/ (never
# committed; scripts/fetch-hegeltest.sh) and its own tests run with
# HEGEL_SERVER_COMMAND pointing at our server binary.
#
# usage: scripts/hegeltest-suite.sh [TEST_FILE ...]   (default: the foundation and engine sets)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=0.16.0
work="$root/target/hegeltest"
src="$work/hegeltest-$version"

# The foundation set (generators, schemas, usage) and the engine set (shrink
# and find quality, targeting, health checks, failures, database, stateful).
default_tests=(test_integers test_floats test_strings test_collections test_tuples
  test_combinators test_standard_generators test_arrays test_compose test_composite
  test_default test_reject test_validation test_usage_errors test_single_test_case
  test_shrink_quality test_find_quality test_targeting test_health_check
  test_multi_failure test_database_key test_reproduce_failure test_stateful
  test_phases test_flaky_global_state)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("${default_tests[@]}")

"$root/scripts/fetch-hegeltest.sh" "$version" >/dev/null

# The test profile's build (what `cargo test` already compiled, opt-level 1)
# serves the suite; GEIST_SERVER_PROFILE=release measures the shipped build.
profile="${GEIST_SERVER_PROFILE:-debug}"
. "$root/scripts/cargo-builds.sh"
if [ "$profile" = release ]; then
    geist_release_builds
else
    geist_debug_builds
fi
export HEGEL_SERVER_COMMAND="${CARGO_TARGET_DIR:-$root/target}/$profile/geist-server"

# Tests geist-server does not pass yet are listed, one full name per line, in
# scripts/hegeltest-known-failures.txt: skipped here so that CI guards every
# other test, and the list is the open work of the engine issues. Set
# GEIST_HEGELTEST_ALL=1 to run them too.
skips=()
if [ "${GEIST_HEGELTEST_ALL:-0}" != 1 ]; then
    while IFS= read -r line; do
        line="${line%%#*}"; line="${line// /}"
        [ -n "$line" ] && skips+=(--skip "$line")
    done < "$root/scripts/hegeltest-known-failures.txt"
fi

args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
cd "$src"
echo "running ${tests[*]} (skipping ${#skips[@]}/2 known failures)"
CARGO_TARGET_DIR="$work/target" RUST_BACKTRACE=0 cargo test --locked --no-fail-fast "${args[@]}" -- --test-threads=2 --exact "${skips[@]}"
