#!/usr/bin/env bash
# Installs what is missing on Debian 12 (apt), then configures and builds ScriptScope in build/.
#   scripts/setup.sh [TARGET...]     (default: everything, tests included)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential cmake ccache pkg-config file clang libclang-rt-14-dev
    libtorch-dev libopencv-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
    qt6-base-dev libqcustomplot-dev libgraphviz-dev
    lintian desktop-file-utils appstream librsvg2-bin libxml2-utils
    python3-torch python3-torchvision python3-numpy python3-opencv
)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "==> Installing: ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc 2>/dev/null || echo 2)
echo "==> Configuring build/"
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCRIPTSCOPE_BUILD_TESTS=ON >build/configure.log 2>&1 ||
    { cat build/configure.log; exit 1; }
echo "==> Building with $jobs jobs (the LibTorch files take a while)"
if (($#)); then
    cmake --build build -j "$jobs" --target "$@"
else
    cmake --build build -j "$jobs"
fi
