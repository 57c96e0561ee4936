#!/usr/bin/env bash
# libhegel's C ABI on geist (issue 15): every test file of the published
# hegeltest 0.51.0 that builds from the crate, release test binaries, each run
# on hegeltest's own libhegel (hegeltest-c 0.49.0, built by its build script)
# and on geist's libhegel_c.so. The script checks first that the binaries
# really load geist's library. Fails when a test passes on libhegel and fails
# on geist, unless scripts/hegeltest-051-known-failures.txt names it; a file
# that runs past 600 s on one engine counts as failing (a hang).
# First, the C examples hegeltest-c ships (scripts/hegel-c-examples.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)
python3 scripts/hegel_header.py --check
# hegeltest-c 0.49.0's own C examples against geist's header and library.
bash scripts/hegel-c-examples.sh
GEIST_HEGELTEST051_PROFILE=release GEIST_HEGELTEST051_TIMEOUT=600 bash scripts/hegeltest-051.sh
echo "hegeltest-051: done in $(( $(date +%s) - started )) s"
