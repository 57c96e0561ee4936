#!/usr/bin/env bash
# libhegel's C ABI on geist (issue 15): every test file of the published
# hegeltest 0.51.0 that builds (63 of them), each run on hegeltest's own
# libhegel (hegeltest-c 0.49.0, built by its build script) and on geist's
# libhegel_c.so. Fails when a test passes on libhegel and fails on geist.
# The test binaries are built in release: with debug ones the suite takes
# about an hour per engine on 2 cores. Measured 2026-11-25 at load 12-20 on
# 2 cores: the release build of the test binaries and libhegel 797 s of CPU
# (2172 s wall), running the 63 files 234-296 s of wall on libhegel and
# 278-291 s on geist. A file past the timeout (600 s; the longest takes 70 s)
# counts its unfinished tests as failed, so a hang fails the stage.
# First, the C examples hegeltest-c ships (scripts/hegel-c-examples.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)
python3 scripts/hegel_header.py --check
# hegeltest-c 0.49.0's own C examples against geist's header and library.
bash scripts/hegel-c-examples.sh
GEIST_HEGELTEST051_PROFILE=release GEIST_HEGELTEST051_TIMEOUT=600 bash scripts/hegeltest-051.sh
echo "hegeltest-051: done in $(( $(date +%s) - started )) s"
