# shellcheck shell=bash
# Sourced by setup.sh, test.sh and run-demo.sh: which PyTorch a build uses, where it builds, and the
# PyTorch 2.x virtual environment kept in a cache outside the clone.
#
#   SCRIPTSCOPE_PYTHON=/path/to/python   build against that Python's torch (its LibTorch) and make
#                                        every fixture with it; unset: Debian's packages
#   SCRIPTSCOPE_CACHE=DIR                where the venvs and the fixture cache live
#                                        (default: ~/.cache/scriptscope)

# The torch/torchvision pair --torch-venv installs by default: the newest that installs here and
# whose CUDA (13.0) is the system toolkit's, which its CMake package compiles against.
SCRIPTSCOPE_DEFAULT_TORCH=2.14.1

scriptscope_cache() {
    echo "${SCRIPTSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scriptscope}"
}

scriptscope_sudo() {
    if [ "$(id -u)" -ne 0 ]; then echo sudo; fi
}

# Installs the Debian packages among "$@" that are missing.
scriptscope_apt_install() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$package")
    done
    if ((${#missing[@]})); then
        echo "==> Installing: ${missing[*]}"
        $(scriptscope_sudo) apt-get update -q
        DEBIAN_FRONTEND=noninteractive $(scriptscope_sudo) apt-get install -y -q \
            --no-install-recommends "${missing[@]}"
    fi
}

# torchvision's release that matches a torch release (2.N pairs with 0.(N+15)).
scriptscope_torchvision_for() {
    local minor
    minor=$(echo "$1" | cut -d. -f2)
    echo "0.$((minor + 15)).*"
}

# The executorch release built against a torch release (its C++ runtime and the .pte fixtures):
# 1.5.1 for torch 2.14.1, none known for others (the .pte reader needs none; tests then use the
# committed programs).
scriptscope_executorch_for() {
    case "$1" in
    2.14.1) echo "executorch==1.5.1" ;;
    esac
}

# Makes (once) a venv with torch VERSION, its torchvision, NumPy, OpenCV and onnx in the cache and
# prints its Python. Later clones and CI reuse it (installing what a newer list adds); pip's own
# cache keeps the wheels.
scriptscope_torch_venv() {
    local version=${1:-$SCRIPTSCOPE_DEFAULT_TORCH}
    local venv
    venv="$(scriptscope_cache)/torch-$version"
    # OpenCV 4 as Debian's; onnx for the fixture of an ONNX file (torch.onnx.export); the CUDA
    # wheel's nvidia-* packages come along with torch.
    local requirements=("torch==$version" "torchvision==$(scriptscope_torchvision_for "$version")"
                        numpy "opencv-python-headless<5" onnx)
    local executorch
    executorch=$(scriptscope_executorch_for "$version")
    if [ -n "$executorch" ]; then requirements+=("$executorch"); fi
    if [ "$(cat "$venv/.scriptscope-ready" 2>/dev/null)" != "${requirements[*]}" ]; then
        if [ ! -x "$venv/bin/python" ]; then
            local base=${SCRIPTSCOPE_VENV_BASE_PYTHON:-python3}
            if ! "$base" -c "import venv, ensurepip" 2>/dev/null; then
                scriptscope_apt_install python3-venv >&2
            fi
            echo "==> Making a Python with torch $version in $venv (a few GB of wheels, once)" >&2
            mkdir -p "$(dirname "$venv")"
            "$base" -m venv "$venv" >&2
        fi
        "$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}" >&2
        "$venv/bin/python" -c "import torch, torchvision, numpy, cv2, onnx" >&2
        echo "${requirements[*]}" >"$venv/.scriptscope-ready"
    fi
    echo "$venv/bin/python"
}

# The build folder of the PyTorch that SCRIPTSCOPE_PYTHON picks: build/ for Debian's, and
# build-torchX.Y.Z/ for another, so that the two builds live side by side.
scriptscope_build_dir() {
    if [ -n "${SCRIPTSCOPE_BUILD_DIR:-}" ]; then
        echo "$SCRIPTSCOPE_BUILD_DIR"
    elif [ -z "${SCRIPTSCOPE_PYTHON:-}" ] || [ "$SCRIPTSCOPE_PYTHON" = /usr/bin/python3 ]; then
        echo build
    else
        echo "build-torch$("$SCRIPTSCOPE_PYTHON" -c 'import torch; print(torch.__version__.split("+")[0])')"
    fi
}

# Reads --torch-venv [VERSION] from the front of the arguments: makes the venv and exports
# SCRIPTSCOPE_PYTHON. Sets SCRIPTSCOPE_ARGS_USED to how many arguments it took (for the caller's
# shift).
# shellcheck disable=SC2034
scriptscope_take_torch_venv() {
    SCRIPTSCOPE_ARGS_USED=0
    if [ "${1:-}" = --torch-venv ]; then
        local version=$SCRIPTSCOPE_DEFAULT_TORCH
        SCRIPTSCOPE_ARGS_USED=1
        if [[ "${2:-}" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]]; then
            version=$2
            SCRIPTSCOPE_ARGS_USED=2
        fi
        SCRIPTSCOPE_PYTHON=$(scriptscope_torch_venv "$version")
        export SCRIPTSCOPE_PYTHON
    fi
}
