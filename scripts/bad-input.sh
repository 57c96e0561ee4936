#!/usr/bin/env bash
# Bad input against the geist CLI and geist-server (issue 16).
#
# Every case runs under `timeout 10` and `/usr/bin/time -v` and must end
# within 10 s, under 512 MB of maximum resident memory, with exit status 1 or
# 2 (never 101 = panic, 134 = abort, 124 = timeout) and a message that names
# what was wrong (a substring per case). One line per case, then a summary;
# the script fails when any case does.
#
# Server cases go through scripts/bad_input_client.py, a misbehaving client
# that starts geist-server on stdin/stdout: its exit status is the server's
# when that is not 0, else 1 when the server answered with an error reply (see
# the client's docstring). Inputs are made in a temporary directory; the
# shared data (../shared/data) is read, never copied into the repository.
#
#   scripts/bad-input.sh            # build (debug) and run every case
#   scripts/bad-input.sh gzip       # only the cases whose name contains "gzip"
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
only="${1:-}"
started=$(date +%s)

if [ ! -x /usr/bin/time ]; then
    echo "installing time (Debian package)"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq time >/dev/null
fi
for tool in python3 mkfifo setpriv; do
    command -v "$tool" >/dev/null || { echo "bad-input: $tool is missing" >&2; exit 2; }
done

. "$root/scripts/cargo-builds.sh"
geist_debug_builds || exit 2
geist="$target/debug/geist"
server="$target/debug/geist-server"
client="$root/scripts/bad_input_client.py"
data="${GEIST_SHARED_DATA:-$root/../shared/data}"
[ -d "$data/filecoin-vectors" ] || { echo "bad-input: no shared data at $data" >&2; exit 2; }

work="$(mktemp -d)"
chmod 755 "$work"
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT

# ---- inputs ----
transfer="$data/filecoin-vectors/test-vectors/transfer/self_transfer--id-to-secp-addresses--actorsv2.json"
seed="$data/filecoin-vectors/seed-schema/oni-single_message.json"
fixture="$data/lazily-conformance/snapshot_minimal.json"
python3 - "$work" "$transfer" "$seed" <<'PY'
import base64, gzip, json, os, sys, zlib
work, transfer, seed = sys.argv[1:4]
def gz(data):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()
def bomb(total):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    out = b"".join(c.compress(chunk) for _ in range(total >> 20))
    return out + c.flush()
later = json.load(open(transfer))
v = dict(later); v["car"] = base64.b64encode(bomb(400 << 20)).decode()
json.dump(v, open(f"{work}/bomb.json", "w"))
car = gzip.decompress(base64.b64decode(later["car"]))
s = json.load(open(seed)); s["car_bytes"] = "0x" + gz(car[: len(car) // 2]).hex()
json.dump(s, open(f"{work}/seed-truncated.json", "w"))
text = open(transfer).read().lstrip()
open(f"{work}/duplicate-class.json", "w").write('{"class": "tipset",' + text[1:])
open(f"{work}/big.json", "w").write(" " * (3 << 20))
# 50,000 nested Calldata arrays (0x0d = array of one), around an empty array (0x05).
open(f"{work}/deep.hex", "w").write("0d" * 50_000 + "05")
os.makedirs(f"{work}/many")
for i in range(3000):
    open(f"{work}/many/{i:04}.json", "w").write("{}")
os.makedirs(f"{work}/kinds")
open(f"{work}/kinds/collection.json", "w").write('{"description": "x", "kind": "Collection", "input": []}')
PY
mkfifo "$work/pipe.json"
mkdir -p "$work/fifo-dir" "$work/cycle/sub/deeper" "$work/vcycle/sub/deeper" "$work/closed/locked"
mkfifo "$work/fifo-dir/pipe.json"
echo '{}' >"$work/fifo-dir/broken.json"
cp "$fixture" "$work/cycle/one.json"
echo '{}' >"$work/cycle/sub/broken.json"
ln -s .. "$work/cycle/sub/up"
ln -s ../.. "$work/cycle/sub/deeper/upup"
cp "$transfer" "$work/vcycle/sub/transfer.json"
echo '{}' >"$work/vcycle/broken.json"
ln -s .. "$work/vcycle/sub/up"
ln -s ../.. "$work/vcycle/sub/deeper/upup"
cp "$fixture" "$work/closed/one.json"
cp "$fixture" "$work/closed/locked/two.json"
chmod -R a+rX "$work"
chmod 000 "$work/closed/locked"
cp "$fixture" "$work/kinds/lazily.json"
unprivileged=()
[ "$(id -u)" = 0 ] && unprivileged=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# ---- the runner ----
passed=0
failed=0
# case NAME 'SUBSTRING' COMMAND...
case_() {
    local name="$1" want="$2"
    shift 2
    if [ -n "$only" ] && [[ "$name" != *"$only"* ]]; then return; fi
    local out="$work/$name.out" timing="$work/$name.time" t0 t1 status rss secs problem=""
    t0=$(date +%s%N)
    timeout 10 /usr/bin/time -v -o "$timing" "$@" >"$out" 2>&1 </dev/null
    status=$?
    t1=$(date +%s%N)
    secs=$(( (t1 - t0) / 1000000 ))
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$timing" 2>/dev/null)
    rss="${rss:-0}"
    if [ "$status" -eq 124 ] || [ "$secs" -ge 10000 ]; then
        problem="did not end within 10 s"
    elif [ "$status" -ne 1 ] && [ "$status" -ne 2 ]; then
        problem="exit status $status"
    elif [ "$rss" -gt 524288 ]; then
        problem="max RSS $((rss / 1024)) MB over 512 MB"
    elif ! grep -qF -- "$want" "$out"; then
        problem="no \`$want\` in its output"
    elif grep -qE "panicked|RUST_BACKTRACE| \{ name: " "$out"; then
        problem="a panic or Rust debug text in its output"
    fi
    if [ -z "$problem" ]; then
        passed=$((passed + 1))
        printf 'ok   %-28s exit %s, %5d ms, %4d MB\n' "$name" "$status" "$secs" "$((rss / 1024))"
    else
        failed=$((failed + 1))
        printf 'FAIL %-28s %s (exit %s, %d ms, %d MB)\n' "$name" "$problem" "$status" "$secs" "$((rss / 1024))"
        sed 's/^/       | /' "$out" | head -n 8
    fi
}

# ---- CLI ----
case_ gzip-bomb 'inflates past the 134217728-byte limit on the CAR' "$geist" vectors check "$work/bomb.json"
case_ vectors-file-limit 'larger than the 1048576-byte input limit' "$geist" vectors check "$work/big.json" --max-file-size 1M
case_ vectors-inspect-limit 'larger than the 1048576-byte input limit' "$geist" vectors inspect "$work/big.json" --max-file-size 1M
case_ fixtures-default-limit 'larger than the 1048576-byte input limit' "$geist" fixtures check "$work/big.json"
case_ calldata-check-limit 'larger than the 1048576-byte input limit' "$geist" calldata check "$work/big.json" --max-file-size 1M
case_ calldata-decode-limit 'larger than the 1048576-byte input limit' "$geist" calldata decode --file "$work/big.json" --max-file-size 1M
case_ genvm-decode-limit 'larger than the 1048576-byte input limit' "$geist" genvm decode-result --file "$work/big.json" --max-file-size 1M
case_ record-wire-limit 'larger than the 1048576-byte input limit' "$geist" fixtures record --wire "$work/big.json" --description d
case_ vectors-fifo 'not a regular file (a FIFO)' "$geist" vectors check "$work/pipe.json"
case_ fixtures-fifo 'not a regular file (a FIFO)' "$geist" fixtures check "$work/pipe.json"
case_ calldata-fifo 'not a regular file (a FIFO)' "$geist" calldata check "$work/pipe.json"
case_ fixtures-fifo-in-dir 'not a regular file (a FIFO): skipped' "$geist" fixtures check "$work/fifo-dir"
case_ vectors-fifo-in-dir 'not a regular file (a FIFO): skipped' "$geist" vectors check "$work/fifo-dir"
case_ fixtures-symlink-cycle '1 passed, 1 failed' "$geist" fixtures check "$work/cycle"
case_ vectors-symlink-cycle '1 passed, 1 failed' "$geist" vectors check "$work/vcycle"
case_ closed-stdout '[?]' bash -c '"$0" fixtures check "$1" | head -n 1; exit "${PIPESTATUS[0]}"' "$geist" "$work/many"
case_ closed-stdout-vectors 'FAIL' bash -c '"$0" vectors check "$1" | head -n 1; exit "${PIPESTATUS[0]}"' "$geist" "$work/many"
case_ calldata-max-depth-flag '10000000 is not in 1..=10000' "$geist" calldata decode --max-depth 10000000 --file "$work/deep.hex"
case_ calldata-deep-nesting 'nesting deeper than the limit of 10000' bash -c '"$0" calldata decode --max-depth 10000 <"$1"' "$geist" "$work/deep.hex"
case_ seed-truncated-car 'runs past the end' "$geist" vectors check "$work/seed-truncated.json"
case_ duplicate-json-key 'duplicate key "class"' "$geist" vectors check "$work/duplicate-class.json"
case_ unreadable-subdirectory 'Permission denied' "${unprivileged[@]}" "$geist" fixtures check "$work/closed"
case_ unhandled-kind-strict 'skipped: a failure with --strict' "$geist" fixtures check --strict "$work/kinds"
case_ unknown-vm-error 'unknown public code "nonsense"' "$geist" genvm decode-result 026e6f6e73656e7365
case_ calldata-bad-hex 'not a hex digit' "$geist" calldata decode 0xzz
case_ missing-file 'No such file or directory' "$geist" vectors check "$work/absent.json"

# ---- geist-server ----
server_case() {
    local name="$1" want="$2"
    case_ "server-$name" "$want" python3 "$client" "$server" "$name"
}
server_case bad-handshake 'bad handshake'
server_case no-handshake 'handshake'
server_case bad-magic 'magic'
server_case oversized-packet 'exceeds'
server_case huge-length 'exceeds'
server_case truncated-packet 'truncated'
server_case bad-terminator 'terminator'
server_case bad-checksum 'checksum'
server_case invalid-cbor 'CBOR'
server_case deep-cbor 'nest'
server_case second-handshake 'handshake was already done'
server_case unknown-command 'frobnicate'
server_case test-cases-2-64 'at most'
server_case even-stream 'must be odd'
server_case empty-database 'database setting is empty'
server_case unregistered-stream 'not registered'
server_case too-many-runs '--max-runs'
server_case huge-string '--max-generated-size'
server_case huge-binary '--max-generated-size'
server_case huge-list '--max-generated-size'
server_case unknown-schema 'tesseract'
server_case inverted-bounds 'min_value'

echo "bad input: $passed passed, $failed failed in $(( $(date +%s) - started )) s"
[ "$failed" -eq 0 ]
