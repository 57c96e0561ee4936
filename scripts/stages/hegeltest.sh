#!/usr/bin/env bash
# hegeltest 0.16.0's own test files against geist-server (issue: foundation).
set -euo pipefail
exec "$(dirname "$0")/../hegeltest-suite.sh"
