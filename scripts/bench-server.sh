#!/usr/bin/env bash
# Benchmark: geist-server against hegel-core 0.9.0, driven by the same client
# (the published Rust crate hegeltest 0.16.0), side by side in one run.
# Measures start-up (spawn to handshake reply) and test cases per second for a
# trivial one-integer property; prints medians of ROUNDS alternating runs.
#
# usage: scripts/bench-server.sh [TEST_CASES] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cases=${1:-2000}
rounds=${2:-5}

venv="$root/target/bench-venv"
if [ ! -x "$venv/bin/hegel" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "hegel-core==0.9.0"
fi
cargo build --quiet --release --locked -p geist-server
CARGO_TARGET_DIR="$root/target/bench-hegel" cargo build --quiet --release \
    --manifest-path bench/hegel-throughput/Cargo.toml
bench="$root/target/bench-hegel/release/hegel-throughput"

results=$(mktemp)
for round in $(seq "$rounds"); do
    for server in geist-server hegel-core; do
        case $server in
            geist-server) cmd="${CARGO_TARGET_DIR:-$root/target}/release/geist-server" ;;
            hegel-core) cmd="$venv/bin/hegel" ;;
        esac
        dir=$(mktemp -d)
        line=$(cd "$dir" && HEGEL_SERVER_COMMAND="$cmd" "$bench" "$cmd" "$cases")
        rm -rf "$dir"
        echo "$server $line" >> "$results"
        echo "round $round $server: $line" >&2
    done
done
python3 - "$results" <<'PY'
import sys, statistics, platform, os
rows = {}
for line in open(sys.argv[1]):
    name, startup, seconds, cases = line.split()
    rows.setdefault(name, []).append((float(startup), float(seconds), int(cases)))
def summary(name):
    r = rows[name]
    startup = statistics.median(x[0] for x in r)
    rate = statistics.median(x[2] / x[1] for x in r)
    return startup, rate
g, h = summary("geist-server"), summary("hegel-core")
cpu = "unknown"
try:
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            cpu = l.split(":", 1)[1].strip(); break
except OSError:
    pass
print(f"machine: {cpu}, {os.cpu_count()} cores; client: hegeltest 0.16.0; {len(rows['geist-server'])} rounds, medians")
print()
print("| server | start-up (ms) | test cases / s |")
print("|---|---:|---:|")
print(f"| geist-server | {g[0]*1000:.1f} | {g[1]:,.0f} |")
print(f"| hegel-core 0.9.0 | {h[0]*1000:.1f} | {h[1]:,.0f} |")
print(f"| ratio | {h[0]/g[0]:.0f}x faster start | {g[1]/h[1]:.1f}x throughput |")
PY
rm -f "$results"
