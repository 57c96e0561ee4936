#!/usr/bin/env bash
# Prints the code point ranges Unicode 18.0 assigned, as the Rust table
# `ADDED_IN_18_0` of crates/engine/src/unicode.rs: the general categories of
# icu_properties 2.3 (Unicode 17.0) and 2.4 (Unicode 18.0), dumped by two
# throwaway crates (fetched from crates.io into a temporary directory) and
# compared. It fails if a category changed other than by a new assignment
# (the engine's tables only emulate assignments).
#
# usage: scripts/unicode-added.sh > /tmp/added.txt
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for minor in 3 4; do
    dir="$work/gc$minor"
    mkdir -p "$dir/src"
    cat > "$dir/Cargo.toml" <<TOML
[package]
name = "gc$minor"
version = "0.0.0"
edition = "2021"
[dependencies]
icu_properties = "~2.$minor.0"
[workspace]
TOML
    cat > "$dir/src/main.rs" <<'RS'
use icu_properties::{CodePointMapData, props::GeneralCategory};
fn main() {
    for r in CodePointMapData::<GeneralCategory>::new().iter_ranges() {
        println!("{} {} {:?}", r.range.start(), r.range.end(), r.value);
    }
}
RS
    (cd "$dir" && cargo run --quiet --release > "$work/gc$minor.txt")
done
python3 - "$work/gc3.txt" "$work/gc4.txt" <<'PY'
import sys

def load(path):
    table = [None] * 0x110000
    for line in open(path):
        a, b, category = line.split()
        for c in range(int(a), int(b) + 1):
            table[c] = category
    return table

old, new = load(sys.argv[1]), load(sys.argv[2])
runs = []
for c in range(0x110000):
    if old[c] == new[c]:
        continue
    if old[c] != "Unassigned":
        sys.exit(f"U+{c:04X} changed from {old[c]} to {new[c]}: not a new assignment")
    if runs and runs[-1][1] == c - 1:
        runs[-1][1] = c
    else:
        runs.append([c, c])
line = "   "
for a, b in runs:
    item = f" (0x{a:X}, 0x{b:X}),"
    if len(line) + len(item) > 100:
        print(line)
        line = "   "
    line += item
print(line)
PY
