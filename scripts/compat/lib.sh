# Shared steps of the client compatibility harnesses (scripts/compat/*.sh):
# unpack a client from ../shared/data/clients into target/compat, install a
# pinned hegel-core release into its own virtualenv, build geist-server
# (release), and compare the two runs of the client's suite (compare.py).
# Sourced, not run.
#
# Environment:
#   COMPAT_SERVERS      which servers to run: "hegel-core geist-server" (default)
#   COMPAT_GEIST_RUNS   how many times the suite runs on geist-server (default 1);
#                       a test counts as passed there only if it passed every time

compat_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
compat_target="${CARGO_TARGET_DIR:-$compat_root/target}"
compat_work="$compat_root/target/compat"
compat_clients="$compat_root/../shared/data/clients"
compat_started=$(date +%s)
mkdir -p "$compat_work"

# Pins shared by every reference server's virtualenv (hegel-core's own
# dependencies, fixed so that a run today matches a run next month).
compat_common_pins=(cbor2==5.9.0 click==8.5.1)

compat_fail() {
    echo "compat: $*" >&2
    exit 2
}

# compat_wants SERVER: whether this run includes SERVER (hegel-core | geist-server).
compat_wants() {
    case " ${COMPAT_SERVERS:-hegel-core geist-server} " in
    *" $1 "*) return 0 ;;
    *) return 1 ;;
    esac
}

# compat_unpack ARCHIVE: unpacks ../shared/data/clients/ARCHIVE into
# target/compat (once per archive; a stamp file records which archive).
compat_unpack() {
    local archive="$compat_clients/$1" stamp="$compat_work/.unpacked-$1"
    [ -f "$archive" ] || compat_fail "missing $archive (the shared client archives, see its README.md)"
    if [ ! -f "$stamp" ]; then
        echo "-- unpacking $1 into $compat_work"
        tar -xzf "$archive" -C "$compat_work"
        : >"$stamp"
    fi
}

# compat_venv NAME PIN...: a virtualenv target/compat/venv-NAME holding exactly
# these pins (pip-installed when any differs); prints nothing.
compat_venv() {
    local venv="$compat_work/venv-$1"
    shift
    if ! "$venv/bin/python" -c "
import importlib.metadata as m, sys
want = dict(p.split('==') for p in sys.argv[1:])
sys.exit(any(m.version(k) != v for k, v in want.items()))
" "$@" 2>/dev/null; then
        echo "-- installing $* into $venv"
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
    fi
}

# compat_reference_server VERSION HYPOTHESIS: installs hegel-core VERSION with
# its pinned Hypothesis; sets $reference_server to its `hegel` entry point.
compat_reference_server() {
    compat_venv "hegel-core-$1" "hegel-core==$1" "hypothesis==$2" "${compat_common_pins[@]}"
    reference_server="$compat_work/venv-hegel-core-$1/bin/hegel"
    [ -x "$reference_server" ] || compat_fail "$reference_server was not installed"
}

# compat_geist_server: builds geist-server (release, the shipped build); sets
# $geist_server to the binary.
compat_geist_server() {
    echo "-- building geist-server (release)"
    (cd "$compat_root" && . scripts/cargo-builds.sh && geist_release_builds)
    geist_server="$compat_target/release/geist-server"
    [ -x "$geist_server" ] || compat_fail "$geist_server missing after the build"
}

# compat_run SUITE FORMAT RUN_FUNCTION: runs the suite on each wanted server
# through RUN_FUNCTION SERVER_LABEL SERVER_COMMAND REPORT_PATH (which must
# write a JUnit XML or `go test -json` report at REPORT_PATH and may fail),
# then compares the reports. Exit status: compare.py's.
compat_run() {
    local suite_name="$1" form="$2" run="$3" results="$compat_work/results/$1" extension
    [ "$form" = gotest ] && extension=json || extension=xml
    mkdir -p "$results"
    local reference_report="$results/hegel-core.$extension"
    if compat_wants hegel-core; then
        echo "-- $suite_name against hegel-core ($reference_server)"
        rm -f "$reference_report"
        "$run" hegel-core "$reference_server" "$reference_report" || true
    fi
    local geist_reports=() runs="${COMPAT_GEIST_RUNS:-1}" i
    if compat_wants geist-server; then
        for ((i = 1; i <= runs; i++)); do
            local report="$results/geist-server-$i.$extension"
            echo "-- $suite_name against geist-server ($geist_server), run $i of $runs"
            rm -f "$report"
            "$run" geist-server "$geist_server" "$report" || true
            geist_reports+=("$report")
        done
    else
        for report in "$results"/geist-server-*."$extension"; do
            [ -e "$report" ] && geist_reports+=("$report")
        done
    fi
    echo "== $suite_name: hegel-core against geist-server"
    local status=0
    python3 "$compat_root/scripts/compat/compare.py" "$suite_name" "$form" "$reference_report" \
        "${geist_reports[@]}" || status=$?
    echo "$suite_name: done in $(($(date +%s) - compat_started)) s (reports in $results)"
    return "$status"
}
