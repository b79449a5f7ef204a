#!/usr/bin/env bash
# Builds and runs the benchmarks; each line prints a ratio measured side by side in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh bench_scriptscope
[ -f build/bench/resnet18.pt ] || /usr/bin/python3 tests/benchmarks/make_bench_models.py build/bench
build/bin/bench_scriptscope build/bench/resnet18.pt
