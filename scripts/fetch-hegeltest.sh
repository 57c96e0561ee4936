#!/usr/bin/env bash
# Fetches the published hegeltest crate (Rust client of Hegel) from crates.io
# into DIR/hegeltest-VERSION (never committed; DIR defaults to
# target/hegeltest) and prints that directory. Used by hegeltest-suite.sh,
# hegeltest-051.sh, find-stability.sh, bench-hegel-c.sh and stages/redis.sh.
#
# usage: scripts/fetch-hegeltest.sh [VERSION [DIR]]   (default 0.16.0)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version="${1:-0.16.0}"
work="${2:-$root/target/hegeltest}"
src="$work/hegeltest-$version"

if [ ! -f "$src/Cargo.toml" ]; then
    echo "fetching hegeltest $version from crates.io" >&2
    mkdir -p "$work/fetch/src"
    cat > "$work/fetch/Cargo.toml" <<TOML
[package]
name = "fetch-hegeltest"
version = "0.0.0"
edition = "2021"
[dependencies]
hegeltest = "=$version"
[workspace]
TOML
    : > "$work/fetch/src/lib.rs"
    (cd "$work/fetch" && cargo fetch --quiet)
    registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
    found=$(find "$registry" -maxdepth 2 -type d -name "hegeltest-$version" | head -n 1)
    [ -n "$found" ] || { echo "hegeltest $version not found under $registry" >&2; exit 1; }
    rm -rf "$src.tmp" && cp -r "$found" "$src.tmp" && mv "$src.tmp" "$src"
fi
echo "$src"
