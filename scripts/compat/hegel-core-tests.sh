#!/usr/bin/env bash
# hegel-core 0.10.0's own server tests (its Python test client, tests/upstream
# of the 0.10.0 sdist: 67 tests) against hegel-core 0.10.0 and geist-server,
# each started as a subprocess per test on stdio (the archive's conftest.py).
# geist-server announces protocol 0.16, what hegel-core 0.10.0 speaks.
# See lib.sh for COMPAT_SERVERS and COMPAT_GEIST_RUNS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

compat_unpack hegel-core-0.10.0-tests.tar.gz
suite="$compat_work/hegel-core-0.10.0-tests"
# The test client imports hegel-core itself (its packet and CBOR helpers), so
# the suite always runs in the reference server's virtualenv, with pytest.
compat_venv hegel-core-0.10.0 hegel-core==0.10.0 hypothesis==6.152.4 pytest==9.2.0 \
    "${compat_common_pins[@]}"
python="$compat_work/venv-hegel-core-0.10.0/bin/python"
reference_server="$compat_work/venv-hegel-core-0.10.0/bin/hegel"
compat_wants geist-server && compat_geist_server

run_suite() {
    local label="$1" command="$2" report="$3"
    (cd "$suite" && GEIST_PROTOCOL_VERSION=0.16 HEGEL_SERVER_COMMAND="$command" \
        SERVER_LOG_DIR="$compat_work/results/hegel-core-tests/logs-$label" \
        "$python" -m pytest -q -p no:cacheprovider --junitxml="$report" tests/upstream \
        >"${report%.*}.log" 2>&1)
    local status=$?
    tail -n 1 "${report%.*}.log"
    return "$status"
}

compat_run hegel-core-tests junit run_suite
