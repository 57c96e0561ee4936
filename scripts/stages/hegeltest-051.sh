#!/usr/bin/env bash
# libhegel's C ABI on geist (issue 15): a sample of the published hegeltest
# 0.51.0 test files, each run on hegeltest's own libhegel (hegeltest-c 0.49.0,
# built by its build script) and on geist's libhegel_c.so. Fails when a test
# passes on libhegel and fails on geist. The whole suite (64 files, about an
# hour per engine on 2 cores) is `scripts/hegeltest-051.sh` with no arguments.
# First, the C examples hegeltest-c ships (scripts/hegel-c-examples.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)
python3 scripts/hegel_header.py --check
# hegeltest-c 0.49.0's own C examples against geist's header and library.
bash scripts/hegel-c-examples.sh
sample=(test_stateful test_integers test_health_check test_flaky_replay test_reject
    test_unsatisfiable test_hegel_test test_explicit_test_case test_recursive
    test_targeting test_database_key test_tuples)
bash scripts/hegeltest-051.sh "${sample[@]}"
echo "hegeltest-051: done in $(( $(date +%s) - started )) s"
