#!/usr/bin/env bash
# Installs what is missing on Debian 12 (apt), then configures and builds ScriptScope.
#   scripts/setup.sh [TARGET...]                        Debian's LibTorch 1.13, in build/
#   scripts/setup.sh --torch-venv [VERSION] [TARGET...] PyTorch VERSION (default: common.sh's) from
#                                                       PyPI in a venv in ~/.cache/scriptscope,
#                                                       in build-torchVERSION/
#   SCRIPTSCOPE_PYTHON=/path/to/python scripts/setup.sh the PyTorch already in that Python (a venv
#                                                       of your own), in build-torchVERSION/
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

scriptscope_apt_install \
    build-essential cmake ccache pkg-config file clang libclang-rt-14-dev \
    libtorch-dev libopencv-dev nlohmann-json3-dev libcli11-dev zlib1g-dev \
    qt6-base-dev libqcustomplot-dev libgraphviz-dev \
    lintian desktop-file-utils appstream librsvg2-bin libxml2-utils \
    python3-torch python3-torchvision python3-numpy python3-opencv
scriptscope_take_torch_venv "$@"
shift "$SCRIPTSCOPE_ARGS_USED"

# ccache keeps its cache outside the clone; two LibTorch builds and their sanitizer builds need
# more than its default 5 GB.
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
jobs=$(nproc 2>/dev/null || echo 2)
build=$(scriptscope_build_dir)
python=${SCRIPTSCOPE_PYTHON:-/usr/bin/python3}
echo "==> Configuring $build/ (PyTorch of $python)"
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCRIPTSCOPE_BUILD_TESTS=ON \
    -DSCRIPTSCOPE_PYTHON="$python" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 1; }
echo "==> Building with $jobs jobs (the LibTorch files take a while)"
if (($#)); then
    cmake --build "$build" -j "$jobs" --target "$@"
else
    cmake --build "$build" -j "$jobs"
fi
