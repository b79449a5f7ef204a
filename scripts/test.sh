#!/usr/bin/env bash
# Sets up (see setup.sh), builds everything and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export QT_QPA_PLATFORM=offscreen
ctest --test-dir build --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
