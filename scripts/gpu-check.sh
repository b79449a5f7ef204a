#!/usr/bin/env bash
# ScriptScope's checks on a CUDA GPU: one prepared script for a machine that has one.
#
#   scripts/gpu-check.sh --prepare   on the development machine (Debian 12): packs what the GPU
#                                    machine lacks into build-gpu-check/carry.tar.xz (OpenCV's core
#                                    and imgproc headers and libraries, a scripted torchvision
#                                    classifier) and prints the device call to make.
#   scripts/gpu-check.sh             on the GPU machine (or here): builds the operator library
#                                    against that machine's own PyTorch with nvcc, then runs
#                                    scripts/gpu_check.py (the CUDA kernel against the CPU kernel,
#                                    devices, the demo model and the classifier on cuda:0 against
#                                    the CPU) and, where ScriptScope itself can be built or is
#                                    built, the CLI's `devices` and `run --device cuda:0`.
#
# It prints one summary table and writes everything to $OUT/gpu-check.log (the device tool's
# output folder; ./build-gpu-check/ when OUT is not set). Exit status: 0 all passed, 1 a check
# failed, 77 no usable CUDA device (nothing a GPU would measure was measured).
#
# The GPU machine this is written for: PyTorch 2.x with CUDA at python3, nvcc, g++, no Qt, no
# OpenCV C++ and no network. PYTHON=... picks another Python.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
work="$root/build-gpu-check"
mkdir -p "$work"

if [[ "${1:-}" == "--prepare" ]]; then
    set -e
    stage="$work/stage"
    rm -rf "$stage" && mkdir -p "$stage/opencv/lib" "$stage/models"
    # OpenCV's core and imgproc, as Debian builds them, with what they load.
    cp -r /usr/include/opencv4 "$stage/opencv/include"
    cp -r /usr/include/x86_64-linux-gnu/opencv4/opencv2/* "$stage/opencv/include/opencv2/"
    for lib in libopencv_core.so.406 libopencv_imgproc.so.406 libtbb.so.12 libblas.so.3 \
               liblapack.so.3 libgfortran.so.5 libquadmath.so.0 libGLX.so.0 libGLdispatch.so.0; do
        cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$stage/opencv/lib/"
    done
    ln -s libopencv_core.so.406 "$stage/opencv/lib/libopencv_core.so"
    ln -s libopencv_imgproc.so.406 "$stage/opencv/lib/libopencv_imgproc.so"
    # A torchvision classifier, scripted and saved by Debian's PyTorch 1.13 (which every 2.x
    # loads); its weights are random: the check compares devices, not accuracy.
    /usr/bin/python3 - "$stage/models/mobilenet_v3_small.pt" <<'EOF'
import sys, torch, torchvision
torch.manual_seed(0)
torch.jit.script(torchvision.models.mobilenet_v3_small().eval()).save(sys.argv[1])
EOF
    tar -C "$stage" -cJf "$work/carry.tar.xz" opencv models
    rm -rf "$stage"
    echo "packed $(du -h "$work/carry.tar.xz" | cut -f1) into build-gpu-check/carry.tar.xz"
    echo "device call: run(command=\"scripts/gpu-check.sh\", carry=[\"build-gpu-check/carry.tar.xz\"], timeout_s=540)"
    exit 0
fi

out="${OUT:-$work}"
mkdir -p "$out"
log="$out/gpu-check.log"
exec > >(tee "$log") 2>&1
started=$(date +%s)
summary=()
note() { summary+=("$(printf '%-34s %-5s %s' "$1" "$2" "$3")"); echo "== $1: $2 $3"; }

# The Python whose torch the library is built against: PYTHON, the GPU machine's python3, or this
# repository's default venv when python3 has no torch.
# shellcheck source=scripts/common.sh
source scripts/common.sh
python="${PYTHON:-python3}"
if ! "$python" -c "import torch" 2>/dev/null; then
    python="$(scriptscope_cache)/torch-$SCRIPTSCOPE_DEFAULT_TORCH/bin/python"
fi
"$python" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" || {
    echo "no Python with torch found (set PYTHON=...)"; exit 1; }
echo "machine: $(uname -srm), $(nproc) cores; nvcc: $(nvcc --version 2>/dev/null | tail -1)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null ||
    echo "nvidia-smi: no GPU visible"

# OpenCV: the system's, or the carried one.
opencv_include=/usr/include/opencv4
opencv_lib=""
if [[ ! -f "$opencv_include/opencv2/imgproc.hpp" || -n "${GPU_CHECK_CARRIED_OPENCV:-}" ]]; then
    if [[ ! -f build-gpu-check/carry.tar.xz ]]; then
        echo "no OpenCV headers here and no build-gpu-check/carry.tar.xz: run scripts/gpu-check.sh --prepare first"
        exit 1
    fi
    tar -C "$work" -xJf build-gpu-check/carry.tar.xz
    opencv_include="$work/opencv/include"
    opencv_lib="$work/opencv/lib"
fi
classifier=""
[[ -f build-gpu-check/carry.tar.xz && ! -d "$work/models" ]] && tar -C "$work" -xJf build-gpu-check/carry.tar.xz models
[[ -f "$work/models/mobilenet_v3_small.pt" ]] && classifier="$work/models/mobilenet_v3_small.pt"

# The operator library, built the way ops/CMakeLists.txt builds it, without CMake: nvcc for the
# kernel (for this machine's GPU, or the default architectures), g++ for the rest.
# Sets torch_includes (an array), torch_lib, torch_abi, cxx_std and gpu_arch.
torch_includes=() torch_lib="" torch_abi=1 cxx_std=c++17 gpu_arch=""
eval "$("$python" - <<'EOF'
import os, torch
from torch.utils import cpp_extension
print("torch_includes=(%s)" % " ".join("'-I%s'" % p for p in cpp_extension.include_paths()))
print("torch_lib='%s'" % os.path.join(os.path.dirname(torch.__file__), "lib"))
print("torch_abi=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI))
major, minor = (int(v) for v in torch.__version__.split(".")[:2])
print("cxx_std=%s" % ("c++20" if (major, minor) >= (2, 14) else "c++17"))
arch = ""
if torch.cuda.is_available():
    cc = torch.cuda.get_device_capability(0)
    arch = "%d%d" % cc
print("gpu_arch='%s'" % arch)
EOF
)"
cuda_home="$(dirname "$(dirname "$(command -v nvcc)")")"
if [[ -n "$gpu_arch" ]]; then
    gencode=(-gencode "arch=compute_$gpu_arch,code=[sm_$gpu_arch,compute_$gpu_arch]")
else
    gencode=(-gencode "arch=compute_90,code=sm_90" -gencode "arch=compute_120,code=compute_120")
fi
lib="$work/libwarp_perspective.so"
build_started=$(date +%s)
if nvcc -std=c++17 -O2 -Xcompiler -fPIC "${gencode[@]}" -Iops -c ops/warp_cuda.cu -o "$work/warp_cuda.o" &&
   g++ -std="$cxx_std" -O2 -w -fPIC -shared -D_GLIBCXX_USE_CXX11_ABI="$torch_abi" -DMY_OPS_WITH_CUDA=1 \
       -Iops "${torch_includes[@]}" -I"$cuda_home/include" -I"$opencv_include" \
       ops/warp_perspective.cpp ops/warp_perspective_cuda.cpp "$work/warp_cuda.o" -o "$lib" \
       -L"$torch_lib" -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda \
       ${opencv_lib:+-L"$opencv_lib"} -lopencv_core -lopencv_imgproc -L"$cuda_home/lib64" -lcudart \
       -Wl,-rpath,"$torch_lib"${opencv_lib:+:"$opencv_lib"}; then
    note "operator library (nvcc + g++)" pass "built in $(($(date +%s) - build_started)) s against torch's own LibTorch"
else
    note "operator library (nvcc + g++)" FAIL "did not build"
    printf '%s\n' "${summary[@]}"
    exit 1
fi
export LD_LIBRARY_PATH="${opencv_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

"$python" scripts/gpu_check.py "$lib" --demo resources/demo_model.pt ${classifier:+--classifier "$classifier"}
python_status=$?
case $python_status in
    0) note "operator and models (gpu_check.py)" pass "table above" ;;
    77) note "operator and models (gpu_check.py)" skip "no usable CUDA device: nothing GPU-side was measured" ;;
    *) note "operator and models (gpu_check.py)" FAIL "table above" ;;
esac

# The CLI: the one built here (a ScriptScope build against a CUDA LibTorch), or none where Qt and
# OpenCV's other modules are missing (the GPU machine): then it says so.
cli=""
for candidate in build-torch*/bin/scriptscope-cli; do
    [[ -x "$candidate" ]] && cli="$candidate"
done
cli_status=0
if [[ -z "$cli" ]]; then
    note "CLI devices / run --device cuda:0" skip "no ScriptScope build here (needs Qt 6 and OpenCV's imgcodecs and videoio, which this machine lacks)"
else
    echo "== $cli devices"
    "$cli" devices || cli_status=1
    echo "== $cli run resources/demo_model.pt --device cuda:0 --iterations 30"
    if "$cli" run resources/demo_model.pt --input image:resources/demo.png,size=640x480,scale=1/255 --device cuda:0 --iterations 30; then
        note "CLI devices / run --device cuda:0" pass "timing above"
    elif [[ $python_status == 77 ]]; then
        note "CLI devices / run --device cuda:0" skip "refused as expected without a CUDA device (message above)"
    else
        note "CLI devices / run --device cuda:0" FAIL "see above"
        cli_status=1
    fi
fi

echo
echo "GPU check summary ($(($(date +%s) - started)) s; log: $log)"
printf '  %s\n' "${summary[@]}"
if [[ $python_status != 0 && $python_status != 77 ]] || [[ $cli_status != 0 ]]; then
    exit 1
fi
exit "$python_status"
