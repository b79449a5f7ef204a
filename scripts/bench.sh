#!/usr/bin/env bash
# Builds and runs the benchmarks; each line prints a ratio measured side by side in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh bench_scriptscope bench_gui bench_warp bench_run bench_diagram bench_numerics \
    bench_pipeline bench_cli
/usr/bin/python3 tests/benchmarks/make_bench_models.py build/bench # makes what is missing
build/bin/bench_scriptscope build/bench/resnet18.pt
build/bin/bench_gui build/bench/vit_b_16.pt
build/bin/bench_warp
build/bin/bench_run build/bench/resnet18.pt
# A .pt2 of ResNet-50 needs PyTorch 2.x: made with the venv of setup.sh --torch-venv, if there is one.
exported=()
venv_python=$(find "${XDG_CACHE_HOME:-$HOME/.cache}/scriptscope" -maxdepth 3 -path '*/torch-*/bin/python' \
    2>/dev/null | sort | tail -1)
if [ -n "$venv_python" ]; then
    "$venv_python" tests/benchmarks/make_bench_models.py build/bench resnet50.pt2
    exported=(build/bench/resnet50.pt2)
fi
build/bin/bench_diagram --op-library "$(cat "$(cat build/fixtures-dir.txt)/torchvision_library.txt")" \
    build/bench/resnet50.pt build/bench/fasterrcnn.pt "${exported[@]}" \
    build/bench/encoder12.pt build/bench/encoder48.pt
build/bin/bench_numerics build/bench/resnet18.pt build/bench/resnet50.pt build/bench/resnet50_other.pt
build/bin/bench_pipeline build/bench/resnet18.pt
build/bin/bench_cli build/bin/scriptscope-cli build/bin/raw_graph "$(cat build/fixtures-dir.txt)/compute.pt"
# A plain .pt2 through the interpreter against ep.module() and its TorchScript twin: the 2.x build's
# CLI (scripts/setup.sh --torch-venv), where there is one.
if [ -n "$venv_python" ]; then
    version=$(basename "$(dirname "$(dirname "$venv_python")")")
    cli=build-${version/-/}/bin/scriptscope-cli
    if [ -x "$cli" ]; then
        "$venv_python" tests/benchmarks/bench_exported.py "$venv_python" "$cli" build/bench/exported
        # A .pte through ExecuTorch's runtime in ScriptScope against ExecuTorch's Python runtime.
        if "$venv_python" -c "import executorch" 2>/dev/null; then
            "$venv_python" tests/benchmarks/bench_pte.py "$venv_python" "$cli" build/bench/pte
        fi
    else
        echo "bench_exported: no $cli (scripts/setup.sh --torch-venv builds it)"
    fi
fi
