#!/usr/bin/env bash
# Benchmark: the classic shrinking challenges, geist's engine against Hypothesis,
# same definitions, same seeds, in one run; prints both tables and a side-by-side
# table with the ratio of mean executions (geist / Hypothesis; below 1 = geist
# needs fewer).
#
# usage: scripts/bench-shrinking.sh [SEEDS]
#   SEEDS defaults to $GEIST_BENCH_SEEDS or 50. GEIST_BENCH_ONLY=a,b limits the
#   challenges. Hypothesis is installed (pinned) into target/bench-venv-hyp.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export GEIST_BENCH_SEEDS=${1:-${GEIST_BENCH_SEEDS:-50}}

# The Hypothesis version hegel-core 0.9.0 runs on, so the comparison is with
# the engine behind the reference Hegel server.
hypothesis_version=6.152.4
venv="$root/target/bench-venv-hyp"
if ! "$venv/bin/python" -c "import hypothesis, sys; sys.exit(hypothesis.__version__ != '$hypothesis_version')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "hypothesis==$hypothesis_version"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "running geist ($GEIST_BENCH_SEEDS seeds per challenge)..." >&2
cargo bench --quiet --locked -p geist-engine --bench shrinking_challenges > "$out/geist.md"
echo "running Hypothesis $hypothesis_version ($GEIST_BENCH_SEEDS seeds per challenge)..." >&2
"$venv/bin/python" bench/hypothesis-challenges/challenges.py > "$out/hypothesis.md"

engine_state=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- crates/engine/src 2>/dev/null || engine_state="$engine_state + uncommitted engine changes"
echo "geist engine at $engine_state"
echo
cat "$out/geist.md"
echo
cat "$out/hypothesis.md"
echo
python3 - "$out/geist.md" "$out/hypothesis.md" <<'PY'
import sys, platform, os

def table(path):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 10 or cells[0] in ("challenge", "---"):
            continue
        name, found, top, share, distinct, smean, smed, after, runs, ms = cells
        rows[name] = dict(found=found, top=top, share=share, distinct=distinct,
                          smean=float(smean), after=float(after), ms=float(ms))
    return rows

g, h = table(sys.argv[1]), table(sys.argv[2])

def ratio(a, b):
    return f"{a / b:.2f}" if b else "n/a"

cpu = "unknown"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
print(f"Side by side ({os.cpu_count()} cores, {cpu}); ratios are geist / Hypothesis.\n")
print("| challenge | geist final (share) | Hypothesis final (share) | same | "
      "shrink execs geist | Hypothesis | ratio | execs from 1st failure geist | Hypothesis | ratio | "
      "CPU ms/run geist | Hypothesis | speed-up |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, a in g.items():
    b = h.get(name)
    if b is None:
        continue
    same = "yes" if a["top"] == b["top"] else "**no**"
    speedup = f"{b['ms'] / a['ms']:.0f}x" if a["ms"] else "n/a"
    print(f"| {name} | {a['top']} ({a['share']}) | {b['top']} ({b['share']}) | {same} | "
          f"{a['smean']:.1f} | {b['smean']:.1f} | {ratio(a['smean'], b['smean'])} | "
          f"{a['after']:.1f} | {b['after']:.1f} | {ratio(a['after'], b['after'])} | "
          f"{a['ms']:.2f} | {b['ms']:.2f} | {speedup} |")
PY
