# Sourced, not run: the virtualenv with the hegel-core 0.9.0 that the
# client-conformance stage, scripts/find-stability.sh and
# scripts/bench-find-power.sh drive (the release hegeltest 0.16 speaks),
# pinned with its test dependencies, in target/client-conformance-venv.
#
#   hegel_core_venv ROOT   sets $venv, installing or reinstalling the pins
#                          when the virtualenv does not hold exactly them.
hegel_core_pins=(hegel-core==0.9.0 hypothesis==6.152.4 cbor2==5.9.0 pytest==9.2.0 pytest-subtests==0.15.0)

hegel_core_venv() {
    venv="$1/target/client-conformance-venv"
    if ! "$venv/bin/python" -c "
import importlib.metadata as m, sys
want = dict(p.split('==') for p in sys.argv[1:])
sys.exit(any(m.version(k) != v for k, v in want.items()))
" "${hegel_core_pins[@]}" 2>/dev/null; then
        echo "installing ${hegel_core_pins[*]} into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "${hegel_core_pins[@]}"
    fi
}
