#!/usr/bin/env bash
# hegel-typescript 0.1.5's own vitest suite (~453 tests) against hegel-core
# 0.6.0 (hypothesis 6.152.4) and geist-server announcing protocol 0.12, the
# version the client requires exactly. The client starts
# `$HEGEL_SERVER_COMMAND --verbosity normal`. npm installs its locked
# dependencies (package-lock.json) into the unpacked tree.
# See lib.sh for COMPAT_SERVERS and COMPAT_GEIST_RUNS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

compat_unpack hegel-typescript-0.1.5+3dcb5f5.tar.gz
client="$compat_work/hegel-typescript"
command -v npm >/dev/null || compat_fail "npm (Node.js) is needed for hegel-typescript"
if [ ! -f "$client/node_modules/.package-lock.json" ]; then
    echo "-- npm ci in $client"
    (cd "$client" && npm ci --no-audit --no-fund --loglevel=error)
fi
compat_wants hegel-core && compat_reference_server 0.6.0 6.152.4
compat_wants geist-server && compat_geist_server

# Two test files at a time (vitest's default is one per core less one: one on
# CI's two cores). The client waits 1 ms whenever a reply has not arrived yet,
# so a run is bound by those waits, not by CPU: on 2026-11-26 the suite took
# 73 s with one worker and 38 s with two (user time 19 s and 17 s; geist-server,
# load 5-7).
run_suite() {
    local command="$2" report="$3"
    (cd "$client" && NO_COLOR=1 GEIST_PROTOCOL_VERSION=0.12 HEGEL_SERVER_COMMAND="$command" \
        npx vitest run --maxWorkers=2 --reporter=default --reporter=junit --outputFile.junit="$report" >"${report%.*}.log" 2>&1)
    local status=$?
    grep -E "^ +Tests " "${report%.*}.log" | tail -n 1 || true
    return "$status"
}

compat_run typescript junit run_suite
