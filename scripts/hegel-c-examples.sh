#!/usr/bin/env bash
# The C example programs that hegeltest-c 0.49.0 (libhegel) ships in
# examples/*.c, compiled against geist's header (crates/hegel-c/include/hegel.h,
# not libhegel's) and linked against geist's libhegel_c, both the shared
# (libhegel_c.so) and the static (libhegel_c.a) library. Each example checks
# its own documented behaviour and exits 0 when it holds (failing.c: the
# failure is found and reported with its origin; invalid_argument.c: bad
# arguments return HEGEL_E_INVALID_ARG with a message; custom_output.c: debug
# lines reach the output callback; ...), so any non-zero exit fails this
# script. The crate is fetched from crates.io (checksum pinned) into
# target/hegel-c-examples, never committed.
#
# usage: scripts/hegel-c-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=0.49.0
sha256=fff33a90b762226a4078760b9279082bfac33152e4e7d6cb0d789c88959f982c
work="$root/target/hegel-c-examples"
src="$work/hegeltest-c-$version"

if [ ! -f "$src/examples/hegel_check.h" ]; then
    mkdir -p "$work"
    echo "fetching hegeltest-c $version from crates.io"
    curl -sSfL --retry 3 -o "$work/hegeltest-c-$version.crate.tmp" \
        "https://static.crates.io/crates/hegeltest-c/hegeltest-c-$version.crate"
    echo "$sha256  $work/hegeltest-c-$version.crate.tmp" | sha256sum -c --quiet
    rm -rf "$src" && tar xzf "$work/hegeltest-c-$version.crate.tmp" -C "$work"
    rm -f "$work/hegeltest-c-$version.crate.tmp"
fi

echo "building geist's libhegel_c (release)"
. scripts/cargo-builds.sh
geist_release_builds
lib="${CARGO_TARGET_DIR:-$root/target}/release"
include="$root/crates/hegel-c/include"
out="$work/bin"
rm -rf "$out" && mkdir -p "$out"

# The examples include "hegel.h" and "hegel_check.h": the first must be
# geist's. Copy the examples without libhegel's include/ directory so no
# path can reach its header.
cp "$src"/examples/*.c "$src"/examples/hegel_check.h "$out/"
CC="${CC:-cc}"
cflags=(-Wall -Wextra -Werror -O0 -g -I"$include" -I"$out")

failed=()
count=0
for c in "$out"/*.c; do
    name=$(basename "$c" .c)
    "$CC" "${cflags[@]}" -o "$out/$name-shared" "$c" -L"$lib" -lhegel_c -Wl,-rpath,"$lib"
    "$CC" "${cflags[@]}" -o "$out/$name-static" "$c" "$lib/libhegel_c.a" -lpthread -ldl -lm -lrt
    for kind in shared static; do
        count=$((count + 1))
        # The shared build must load geist's library (rpath), never another.
        # (ldd's output is read whole: `ldd | grep -q` under pipefail fails
        # whenever grep exits before ldd has written everything.)
        if [ $kind = shared ] && [[ "$(ldd "$out/$name-shared")" != *"$lib/libhegel_c.so"* ]]; then
            echo "FAIL $name ($kind): not linked against $lib/libhegel_c.so"
            failed+=("$name-$kind")
            continue
        fi
        if (cd "$out" && timeout 120 "./$name-$kind" >"$name-$kind.log" 2>&1); then
            echo "ok   $name ($kind): $(tail -n 1 "$out/$name-$kind.log")"
        else
            echo "FAIL $name ($kind), exit status $?:"
            sed 's/^/    /' "$out/$name-$kind.log" | tail -n 20
            failed+=("$name-$kind")
        fi
    done
done
echo "hegeltest-c $version examples on geist: $((count - ${#failed[@]})) of $count pass"
[ ${#failed[@]} -eq 0 ]
