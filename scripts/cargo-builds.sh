# Sourced (not run) by every script that needs geist's binaries or one of its
# test binaries. Cargo picks dependency features from the packages a command
# selects, so after `cargo test --workspace` a `cargo build -p geist-server` or
# `cargo test -p geist --test shrinking` resolves other features and compiles
# a large part of the dependency graph again (a CI check on 2026-11-26 spent
# minutes per stage doing so). These functions always select the same
# packages, so the first call builds and every later one finds it done.
# Call them from the repository root.

# geist_debug_builds: the debug binaries (target/debug/geist, geist-server)
# and every test binary, exactly as `cargo test --workspace` builds them: a
# no-op right after the workspace tests.
geist_debug_builds() {
    cargo test --workspace --locked --no-run --quiet
}

# geist_release_builds: every release artifact the scripts use (geist-server,
# libhegel_c.so, the client-conformance binaries) in one selection.
geist_release_builds() {
    cargo build --release --locked --quiet \
        -p geist-server -p geist-hegel-c -p geist-client-conformance
}

# geist_test_binary CRATE_DIR TARGET [KIND]: prints the path of the test
# binary of CRATE_DIR's target TARGET (KIND "test" for tests/TARGET.rs, the
# default; "lib" for the library's unit tests, TARGET then being the library's
# name) as the workspace tests build it. Run it from CRATE_DIR, as cargo test
# does.
geist_test_binary() {
    local crate_dir kind="${3:-test}"
    crate_dir="$(cd "$1" && pwd)"
    cargo test --workspace --locked --no-run --message-format=json --quiet 2>/dev/null \
        | python3 -c '
import json, sys
manifest, name, kind = sys.argv[1:]
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    target = message.get("target") or {}
    if (message.get("reason") == "compiler-artifact" and message.get("executable")
            and message.get("manifest_path") == manifest
            and target.get("name") == name and kind in target.get("kind", [])):
        print(message["executable"])
        break
else:
    sys.exit(f"no {kind} target {name} in {manifest}")
' "$crate_dir/Cargo.toml" "$2" "$kind"
}

# geist_run_test CRATE_DIR TARGET KIND [ARGS...]: runs that test binary (see
# geist_test_binary) from CRATE_DIR with ARGS, as cargo test runs it.
geist_run_test() {
    local crate_dir="$1" binary
    binary=$(geist_test_binary "$crate_dir" "$2" "$3") || return
    shift 3
    (cd "$crate_dir" && "$binary" "$@")
}
