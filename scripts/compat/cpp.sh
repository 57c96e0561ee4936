#!/usr/bin/env bash
# hegel-cpp 0.2.0's own googletest suite (284 tests, run by ctest) against
# hegel-core 0.4.3 (hypothesis 6.152.1) and geist-server announcing protocol
# 0.10, the version the client requires exactly. hegel-cpp compiles its
# server's path in at cmake time and runs `SERVER --stdio --verbosity X`; here
# that path is a wrapper script that runs $COMPAT_SERVER, so one build serves
# both servers. Its C++ dependencies (reflect-cpp, googletest, nlohmann/json)
# come from the shared archive; cmake from Debian (installed with apt-get when
# missing). The build is cached in target/compat/hegel-cpp-build.
# See lib.sh for COMPAT_SERVERS and COMPAT_GEIST_RUNS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

compat_unpack hegel-cpp-0.2.0+fc63e72.tar.gz
compat_unpack cpp-deps-googletest-1.14.0-nlohmann-json-3.11.3-reflect-cpp-0.22.0.tar.gz
if ! command -v cmake >/dev/null; then
    echo "-- installing Debian's cmake"
    apt-get install -y -q cmake >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q cmake >/dev/null; }
fi
command -v g++ >/dev/null || compat_fail "g++ is needed for hegel-cpp"

wrapper="$compat_work/bin/hegel-server"
mkdir -p "$(dirname "$wrapper")"
cat >"$wrapper" <<'WRAPPER'
#!/bin/sh
exec "${COMPAT_SERVER:?COMPAT_SERVER names the server hegel-cpp runs}" "$@"
WRAPPER
chmod +x "$wrapper"

build="$compat_work/hegel-cpp-build"
echo "-- building hegel-cpp and its tests in $build"
cmake -S "$compat_work/hegel-cpp" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DHEGEL_ON_PATH="$wrapper" -DHEGEL_BUILD_CONFORMANCE=OFF \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DFETCHCONTENT_SOURCE_DIR_REFLECTCPP="$compat_work/reflectcpp" \
    -DFETCHCONTENT_SOURCE_DIR_NLOHMANN_JSON="$compat_work/nlohmann_json" \
    -DFETCHCONTENT_SOURCE_DIR_GOOGLETEST="$compat_work/googletest" >"$compat_work/hegel-cpp-cmake.log"
cmake --build "$build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" >"$compat_work/hegel-cpp-build.log" ||
    { tail -n 30 "$compat_work/hegel-cpp-build.log"; compat_fail "hegel-cpp did not build"; }

compat_wants hegel-core && compat_reference_server 0.4.3 6.152.1
compat_wants geist-server && compat_geist_server

run_suite() {
    local command="$2" report="$3"
    GEIST_PROTOCOL_VERSION=0.10 COMPAT_SERVER="$command" ctest --test-dir "$build/tests" -j 2 \
        --timeout 600 --output-junit "$report" >"${report%.*}.log" 2>&1
    local status=$?
    grep -E "tests passed" "${report%.*}.log" | tail -n 1 || true
    return "$status"
}

compat_run cpp junit run_suite
