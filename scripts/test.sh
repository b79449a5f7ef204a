#!/usr/bin/env bash
# Sets up (see setup.sh), builds everything and runs the whole test suite; then builds the Qt-free
# parts (engine, archive, protocol and worker, operator, matrix files, CLI) again with
# AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/ and runs their tests there.
#   SCRIPTSCOPE_NO_ASAN=1 scripts/test.sh     skips the sanitizer step
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
export QT_QPA_PLATFORM=offscreen
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${SCRIPTSCOPE_NO_ASAN:-0}" = 1 ]; then
    echo "==> SCRIPTSCOPE_NO_ASAN=1: the sanitizer step is skipped"
    exit 0
fi
echo "==> AddressSanitizer + UBSan: building the Qt-free parts in build-asan/"
mkdir -p build-asan
# The fixtures are build/'s (the same bytes; making them again would take minutes).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCRIPTSCOPE_BUILD_TESTS=ON \
    -DSCRIPTSCOPE_SANITIZE=ON -DSCRIPTSCOPE_FIXTURES_FROM="$PWD/build/fixtures" \
    >build-asan/configure.log 2>&1 || { cat build-asan/configure.log; exit 1; }
cmake --build build-asan -j "$jobs" --target scriptscope_qt_free_tests
ctest --test-dir build-asan -L qt_free --output-on-failure -j "$jobs"
