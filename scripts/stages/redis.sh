#!/usr/bin/env bash
# The example database shared through Redis (issue 17) and the directory
# database's durability (issue 16), against Debian's redis-server:
#   1. the ignored tests that need redis-server or strace: the Redis backend
#      (crates/database/tests/redis_server.rs), worker processes sharing
#      failures (crates/client/tests/shared_database.rs), `geist db`
#      (crates/cli/tests/db.rs), and the directory's fsync after a rename
#      (under strace). Each Rust test starts its own redis-server on a free
#      loopback port and stops it at its end.
#   2. the same scenario through geist-server with hegeltest 0.16 setting
#      `database` to a redis:// URL: a redis-server started here on a free
#      loopback port, killed mid-run in the last step, stopped at the end.
# Installs redis-server and strace (Debian packages) when they are missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
. "$root/scripts/cargo-builds.sh"
started=$(date +%s)

# Debian 12 ships redis-server 7.0.x; a different major.minor is refused so a
# silent upgrade cannot change what these tests measure.
want_redis="7.0."
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v strace >/dev/null || missing+=(strace)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} (Debian packages)"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || { $sudo apt-get update >/dev/null && $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
fi
version=$(redis-server --version | sed -n 's/.* v=\([0-9.]*\).*/\1/p')
case "$version" in
    "$want_redis"*) echo "redis-server $version, $(strace -V | head -n 1)" ;;
    *) echo "redis: redis-server $version is not $want_redis* (Debian 12's)" >&2; exit 1 ;;
esac

echo "-- tests that need redis-server or strace"
# The workspace tests' own binaries (geist-database's local-server feature is
# on there: the client's and the CLI's tests enable it).
geist_debug_builds
geist_run_test crates/engine geist_engine lib --ignored database::directory::tests::the_directory_is_synced_after_each_rename
geist_run_test crates/database redis_server test --ignored
geist_run_test crates/client shared_database test --ignored --test-threads 1
geist_run_test crates/cli db test --ignored

echo "-- hegeltest 0.16 through geist-server, database = redis://"
src=$("$root/scripts/fetch-hegeltest.sh" 0.16.0)
export HEGEL_SERVER_COMMAND="$target/debug/geist-server"
project="$root/target/redis-hegeltest"
rm -rf "$project"
mkdir -p "$project/tests"
cat > "$project/Cargo.toml" <<TOML
[package]
name = "redis-hegeltest"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
hegeltest = { path = "$src" }
[workspace]
TOML
cp "$src/Cargo.lock" "$project/Cargo.lock"
cp "$root/scripts/redis-hegeltest/shared.rs" "$project/tests/shared.rs"
# Shares compiled dependencies with scripts/hegeltest-suite.sh.
export CARGO_TARGET_DIR="$root/target/hegeltest/target"
(cd "$project" && cargo test --no-run --test shared --quiet 2>&1 | tail -n 5)
binary=$(cd "$project" && cargo test --no-run --test shared --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -x "$binary" ] || { echo "redis: the hegeltest scenario did not build" >&2; exit 1; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis_pid=""
pids=()
work=$(mktemp -d)
# kill_redis SIGNAL: signals the server and waits until it is gone.
kill_redis() {
    [ -n "$redis_pid" ] || return 0
    kill "-$1" "$redis_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$redis_pid" 2>/dev/null || break; sleep 0.05; done
    redis_pid=""
}
trap 'kill_redis TERM; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --loglevel warning \
    --daemonize yes --pidfile "$work/redis.pid" --logfile "$work/redis.log"
for _ in $(seq 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done
redis-cli -p "$port" ping >/dev/null || { echo "redis: redis-server did not start" >&2; cat "$work/redis.log" >&2; exit 1; }
redis_pid=$(cat "$work/redis.pid")
url="redis://127.0.0.1:$port/0"
echo "redis-server on port $port"

# run NAME DATABASE TEST...: runs the scenario's tests in a directory of its
# own (hegeltest writes .hegel/ there); the values each drew are in $work/NAME.
run() {
    local name=$1 database=$2
    shift 2
    mkdir -p "$work/$name/values"
    (cd "$work/$name" && SCENARIO_DATABASE="$database" VALUES_DIR="$work/$name/values" \
        "$binary" --exact --test-threads 1 "$@" >"$work/$name/out" 2>&1) || true
}
first() { head -n 1 "$work/$1/values/$2"; }
fail() { echo "redis: $*" >&2; exit 1; }

# Two workers fail on different properties, sharing through Redis.
run worker-a "$work/worker-a/examples,$url" property_a
run worker-b "$work/worker-b/examples,$url" property_b
grep -q "1 failed" "$work/worker-a/out" || fail "worker a did not fail: $(tail "$work/worker-a/out")"
grep -q "1 failed" "$work/worker-b/out" || fail "worker b did not fail: $(tail "$work/worker-b/out")"
# A new machine without the shared store searches: its first test case passes.
run alone "$work/alone/examples" property_a property_b
[ "$(first alone property_a)" -lt 1000 ] || fail "without Redis the first test case of a already failed"
# With it, each property's first test case is the failure found elsewhere.
run fresh "$work/fresh/examples,readonly:$url" property_a property_b
grep -q "2 failed" "$work/fresh/out" || fail "the fresh machine did not fail twice: $(tail "$work/fresh/out")"
[ "$(first fresh property_a)" = 1000 ] || fail "property_a did not replay 1000 first: $(head -n 3 "$work/fresh/values/property_a")"
[ "$(first fresh property_b)" = 2000 ] || fail "property_b did not replay 2000 first: $(head -n 3 "$work/fresh/values/property_b")"
echo "fresh machine replayed a=1000 and b=2000 first (alone: first test case $(first alone property_a))"

# 8 workers x 200 failing runs at once (Redis database 1, empty): every key
# holds its one minimal entry (100 + i for run i), none unreadable.
many_url="redis://127.0.0.1:$port/1"
for w in $(seq 0 7); do
    mkdir -p "$work/many-$w/values"
    (cd "$work/many-$w" && SCENARIO_DATABASE="$many_url" RUNS=200 WORKER="w$w" VALUES_DIR="$work/many-$w/values" \
        "$binary" --exact many_failures --nocapture >"$work/many-$w/out" 2>&1) &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a worker failed"; done
for w in $(seq 0 7); do
    n=$(grep -c '^DONE [0-9]* failed=true' "$work/many-$w/out" || true)
    [ "$n" = 200 ] || fail "worker $w completed $n of 200 failing runs: $(tail "$work/many-$w/out")"
done
"$target/debug/geist" db list "$many_url" --entries >"$work/many.list"
tail -n 1 "$work/many.list" | grep -q "^1600 keys, 1600 entries in " \
    || fail "expected 1600 keys with one entry each: $(tail -n 1 "$work/many.list")"
! grep -q "cannot be read" "$work/many.list" || fail "unreadable entries: $(grep "cannot be read" "$work/many.list" | head)"
bad=$(python3 - "$work/many.list" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
bad = []
for key_line, entry in zip(lines, lines[1:]):
    m = re.match(r'"w\d+-many-(\d+)"  1 entry$', key_line)
    if m and entry.strip() != "[%d]" % (100 + int(m.group(1))):
        bad.append(key_line + " " + entry.strip())
print(len(bad), *bad[:5])
PY
)
[ "$bad" = 0 ] || fail "entries that are not the minimal failure: $bad"
echo "8 workers x 200 failing runs: 1600 keys, each with its minimal entry"

# Redis killed after 20 of 100 runs: every run completes, one warning.
mkdir -p "$work/killed/values"
(cd "$work/killed" && SCENARIO_DATABASE="$work/killed/examples,$url" RUNS=100 VALUES_DIR="$work/killed/values" \
    "$binary" --exact many_failures --nocapture >"$work/killed/out" 2>&1) &
scenario=$!
for _ in $(seq 600); do
    [ "$(grep -c '^DONE' "$work/killed/out" 2>/dev/null || true)" -ge 20 ] && break
    sleep 0.1
done
kill_redis KILL
wait "$scenario" || fail "the run with Redis killed failed: $(tail "$work/killed/out")"
done_runs=$(grep -c '^DONE [0-9]* failed=true' "$work/killed/out" || true)
[ "$done_runs" = 100 ] || fail "$done_runs of 100 runs completed as failures: $(tail "$work/killed/out")"
warnings=$(cat "$work/killed/.hegel/"server.*.log 2>/dev/null | grep -c "example database" || true)
[ "$warnings" = 1 ] || fail "$warnings warnings instead of one: $(cat "$work/killed/.hegel/"server.*.log)"
grep -h "example database" "$work/killed/.hegel/"server.*.log
local_keys=$("$target/debug/geist" db list "$work/killed/examples" | tail -n 1)
case "$local_keys" in
    "100 keys, "*) echo "local part: $local_keys" ;;
    *) fail "the local part lost failures: $local_keys" ;;
esac

echo "redis: done in $(( $(date +%s) - started )) s"
