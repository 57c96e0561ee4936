#!/usr/bin/env bash
# libhegel's C ABI under the checkers that work here (issue 15, bad calls):
#   1. Miri (nightly's miri component; rustup installs it when missing) over
#      geist-hegel-c's unit tests and its bad-call tests: null, freed and
#      foreign handles, freed contexts, calls after a run ended, invalid
#      UTF-8. Under Miri the engine's pull-style run uses a thread instead of a
#      coroutine (crates/engine/src/pull.rs): Miri cannot switch stacks.
#   2. AddressSanitizer (stable compiler, RUSTC_BOOTSTRAP for -Zsanitizer)
#      over every geist-hegel-c test, the coroutine included.
# Each step builds into its own directory under target/ (cold: about 15
# minutes each on 2 cores). Not part of CI: run by hand after ABI changes.
#
# usage: scripts/sanitize-hegel-c.sh [miri|asan]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(miri asan)
host=$(rustc -vV | sed -n 's/^host: //p')
for step in "${steps[@]}"; do
    case "$step" in
    miri)
        if ! cargo +nightly miri --version >/dev/null 2>&1; then
            rustup toolchain install nightly --profile minimal --component miri,rust-src
        fi
        # Isolation off: the run loop reads the clock (deadlines, too_slow).
        # Permissive provenance: handles are integers cast to pointers, by
        # design (hegel.h's opaque handles are never dereferenced by C).
        CARGO_TARGET_DIR=target/miri \
            MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-permissive-provenance" \
            cargo +nightly miri test --locked -p geist-hegel-c --lib --test bad_calls
        ;;
    asan)
        CARGO_TARGET_DIR=target/asan RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" \
            cargo test --locked -p geist-hegel-c --target "$host"
        ;;
    *) echo "unknown step $step (miri or asan)" >&2; exit 2 ;;
    esac
done
