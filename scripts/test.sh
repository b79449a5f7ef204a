#!/usr/bin/env bash
# Sets up (see setup.sh), builds everything and runs the whole test suite; then builds the Qt-free
# parts (engine, archive, protocol and worker, operator, matrix files, CLI) again with
# AddressSanitizer and UndefinedBehaviorSanitizer in <build>-asan/ and runs their tests there.
#   scripts/test.sh                          Debian's LibTorch 1.13 (build/)
#   scripts/test.sh --torch-venv [VERSION]   PyPI's PyTorch VERSION in a cached venv (setup.sh)
#   SCRIPTSCOPE_PYTHON=PY scripts/test.sh    the PyTorch of that Python
#   SCRIPTSCOPE_NO_ASAN=1 scripts/test.sh    skips the sanitizer step
#   scripts/test.sh --under-load [...]       the same while two busy loops keep both cores busy:
#                                            the manual check that slow is not broken
# Ends with one line per step and "N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
if [ "${1:-}" = --under-load ]; then
    shift
    echo "==> Under load: $(nproc) busy loops run until the suite ends"
    load=()
    for _ in $(seq "$(nproc)"); do
        (while :; do :; done) &
        load+=($!)
    done
    trap 'kill "${load[@]}" 2>/dev/null || true' EXIT
fi
scriptscope_take_torch_venv "$@"
shift "$SCRIPTSCOPE_ARGS_USED"

jobs=$(nproc 2>/dev/null || echo 2)
export QT_QPA_PLATFORM=offscreen
summary=()
passed=0
failed=0
status=0

# Runs ctest with "$@", adds its counts to the totals and a line to the summary.
run_suite() {
    local name=$1 dir=$2
    shift 2
    local log="$dir/ctest-summary.log" start=$SECONDS rc=0
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" 2>&1 | tee "$log" || rc=$?
    local line total bad
    line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1 || true)
    total=$(echo "$line" | sed -nE 's/.* out of ([0-9]+).*/\1/p')
    bad=$(echo "$line" | sed -nE 's/.*passed, ([0-9]+) tests? failed.*/\1/p')
    if [ -z "$total" ]; then
        summary+=("$name: ctest printed no result (exit $rc) in $((SECONDS - start)) s")
        failed=$((failed + 1))
        status=1
        return
    fi
    passed=$((passed + total - bad))
    failed=$((failed + bad))
    summary+=("$name: $((total - bad)) of $total passed in $((SECONDS - start)) s")
    [ "$rc" -eq 0 ] || status=1
}

start=$SECONDS
scripts/setup.sh
build=$(scriptscope_build_dir)
summary+=("build ($build/, PyTorch of ${SCRIPTSCOPE_PYTHON:-/usr/bin/python3}): $((SECONDS - start)) s")
run_suite "default suite" "$build"

if [ "${SCRIPTSCOPE_NO_ASAN:-0}" = 1 ]; then
    summary+=("sanitizer step: skipped (SCRIPTSCOPE_NO_ASAN=1)")
else
    echo "==> AddressSanitizer + UBSan: building the Qt-free parts in $build-asan/"
    start=$SECONDS
    mkdir -p "$build-asan"
    # The fixtures are $build/'s (the same bytes; making them again would take minutes).
    cmake -S . -B "$build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCRIPTSCOPE_BUILD_TESTS=ON \
        -DSCRIPTSCOPE_SANITIZE=ON -DSCRIPTSCOPE_PYTHON="${SCRIPTSCOPE_PYTHON:-/usr/bin/python3}" \
        -DSCRIPTSCOPE_FIXTURES_FROM="$(cat "$build/fixtures-dir.txt")" \
        >"$build-asan/configure.log" 2>&1 || { cat "$build-asan/configure.log"; exit 1; }
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
    cmake --build "$build-asan" -j "$jobs" --target scriptscope_qt_free_tests
    summary+=("sanitizer build ($build-asan/): $((SECONDS - start)) s")
    run_suite "sanitizer step" "$build-asan" -L qt_free
fi

echo
echo "==> Summary"
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
exit "$status"
