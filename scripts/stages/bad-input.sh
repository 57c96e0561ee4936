#!/usr/bin/env bash
# Bad input against the CLI and geist-server (issue 16): at least 30 cases,
# each under `timeout 10` and `/usr/bin/time -v` (see scripts/bad-input.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/bad-input.sh
