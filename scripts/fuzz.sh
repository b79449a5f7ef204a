#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-fuzz/ and runs each for a bounded time.
#   scripts/fuzz.sh [SECONDS_PER_TARGET [SEED_DIR]]   by hand, e.g. scripts/fuzz.sh 600
#   scripts/fuzz.sh --runs N [SEED_DIR]               the test suite's check (test_fuzz): N inputs
#                                                     per target from a fixed seed and a fresh
#                                                     corpus, so that the result does not depend
#                                                     on the machine's speed or on earlier runs
# Seeds come from SEED_DIR (the test fixtures, default build/fixtures); new inputs that reach new
# code are kept in build-fuzz/corpus/<target>/. A crash stops with the input that caused it saved
# as build-fuzz/crash-* (libFuzzer's artifact) and a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
limit="-max_total_time=${1:-8}"
fresh=""
if [ "${1:-}" = "--runs" ]; then
    limit="-runs=${2:?--runs needs a count}"
    fresh=1
    shift 2
else
    shift $(($# > 0 ? 1 : 0))
fi
seeds=${1:-build/fixtures}
command -v clang++ >/dev/null || { echo "clang++ is missing: sudo apt-get install clang libclang-rt-14-dev"; exit 1; }
mkdir -p build-fuzz
# The fuzz targets include no LibTorch: one build serves every PyTorch the suite runs with.
unset SCRIPTSCOPE_PYTHON
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSCRIPTSCOPE_FUZZ=ON \
    -DSCRIPTSCOPE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >build-fuzz/configure.log 2>&1 ||
    { cat build-fuzz/configure.log; exit 1; }
cmake --build build-fuzz -j"$(nproc)" --target fuzz_matrix fuzz_protocol fuzz_archive fuzz_delegate fuzz_image >build-fuzz/build.log 2>&1 ||
    { tail -50 build-fuzz/build.log; exit 1; }

# Seed corpora from the fixtures: matrix files, archives, images; the protocol starts from nothing.
declare -A patterns=(
    [fuzz_matrix]="*.json *.npy *.xml *.yml"
    [fuzz_archive]="*.pt *.zip *.ptl *.pt2 *.pte *.etdp"
    [fuzz_delegate]="*.pte"
    [fuzz_image]="*.png *.tif"
    [fuzz_protocol]=""
)
status=0
for target in fuzz_matrix fuzz_protocol fuzz_archive fuzz_delegate fuzz_image; do
    corpus="build-fuzz/corpus/$target"
    seed="build-fuzz/seeds/$target"
    if [ -n "$fresh" ]; then
        corpus="build-fuzz/check-corpus/$target"
        rm -rf "$corpus"
    fi
    mkdir -p "$corpus" "$seed"
    if [ -d "$seeds" ]; then
        for pattern in ${patterns[$target]}; do
            # Matrix files are small: the large JSON printouts of the model fixtures would only
            # slow each run down.
            limit_size=-2M
            [ "$target" = fuzz_matrix ] && limit_size=-64k
            find "$seeds" -maxdepth 2 -name "$pattern" -size "$limit_size" -exec cp -t "$seed" {} + 2>/dev/null || true
            # The torch.export archives PyTorch 2.x saved, and the ExecuTorch programs, are committed.
            if [ "$target" = fuzz_archive ] || [ "$target" = fuzz_delegate ]; then
                find tests/fixtures/saved_by -name "$pattern" -size "$limit_size" -exec cp -t "$seed" {} + 2>/dev/null || true
            fi
        done
    fi
    # Inputs that once found a bug stay in the corpus (tests/fuzz/regressions/<target>/).
    regressions=""
    [ -d "tests/fuzz/regressions/$target" ] && regressions="../tests/fuzz/regressions/$target"
    echo "==> $target ($limit)"
    if ! (cd build-fuzz && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "bin/$target" "$limit" -seed=1 -timeout=20 -rss_limit_mb=3072 \
        -print_final_stats=1 "${corpus#build-fuzz/}" "seeds/$target" $regressions 2>&1 | tail -15); then
        status=1
    fi
done
exit $status
