// The engine-wide calls (engine.h): probing a file, whether an operator is registered, the
// versions built in, and the devices a run can use: the CPU, and the CUDA devices this LibTorch
// can reach, with the reason in words when it can reach none.
#include "engine.h"
#include "engine_internal.h"
#include "probe.h"

#include <added_formats.h>

#include <warp_perspective.h>

#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
#include <pte_runtime.h>
#endif

#include <caffe2/serialize/versions.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <opencv2/core/version.hpp>

#include <glob.h>

// Set by CMake when the LibTorch found was built with CUDA (CPU builds install these headers too,
// without the library behind them).
#ifdef SCRIPTSCOPE_LIBTORCH_HAS_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace scriptscope {
namespace {

// Why CUDA cannot be used here, in words; empty when it can.
std::string cudaUnavailableReason() {
#ifndef SCRIPTSCOPE_LIBTORCH_HAS_CUDA
    return "this LibTorch " + libtorchVersion() +
           " was built without CUDA (to run on a GPU, build ScriptScope against PyTorch 2.x "
           "from PyPI, which has CUDA: scripts/setup.sh --torch-venv)";
#else
    if (torch::cuda::is_available() && torch::cuda::device_count() > 0) {
        return {};
    }
    // CUDA's own reason ("Found no NVIDIA driver on your system. ..."), first sentence.
    std::string why = "no NVIDIA driver, no GPU, or CUDA_VISIBLE_DEVICES hides them";
    try {
        c10::cuda::device_count_ensure_non_zero();
    } catch (const c10::Error& error) {
        why = error.what_without_backtrace();
        why = why.substr(0, why.find_first_of(".\n"));
    } catch (const std::exception& error) {
        why = error.what();
    }
    return "LibTorch has CUDA, but no CUDA device is usable: " + why;
#endif
}

} // namespace

namespace detail {

Expected<torch::Device> parseDevice(const std::string& text) {
    torch::Device device(torch::kCPU);
    try {
        device = torch::Device(text == "gpu" ? std::string("cuda") : text);
    } catch (const std::exception&) {
        return Error{ErrorKind::Device, "'" + text + "' is not a device; use cpu, cuda or cuda:N"};
    }
    if (device.is_cpu()) {
        return device;
    }
    if (!device.is_cuda()) {
        return Error{ErrorKind::Device,
                     "device '" + text + "' is not supported; use cpu, cuda or cuda:N"};
    }
    const std::string reason = cudaUnavailableReason();
    if (!reason.empty()) {
        return Error{ErrorKind::Device, "cannot run on " + text + ": " + reason};
    }
    const auto count = static_cast<int64_t>(torch::cuda::device_count());
    const int64_t index = device.has_index() ? device.index() : 0;
    if (index >= count) {
        return Error{ErrorKind::Device,
                     "cannot run on " + text + ": this machine has " + std::to_string(count) +
                         " CUDA device(s), cuda:0 to cuda:" + std::to_string(count - 1),
                     {}};
    }
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string cudaDeviceName(int64_t index, uint64_t* memory) {
#ifdef SCRIPTSCOPE_LIBTORCH_HAS_CUDA
    const auto* properties = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
    if (memory) {
        *memory = properties->totalGlobalMem;
    }
    return properties->name;
#else
    (void)memory;
    return "CUDA device " + std::to_string(index);
#endif
}

void synchronize(const torch::Device& device) {
    if (device.is_cuda()) {
        torch::cuda::synchronize(device.index());
    }
}

} // namespace detail

std::vector<std::string> buildDescription() {
    std::vector<std::string> lines;
    lines.push_back("LibTorch " + libtorchVersion());
#ifdef SCRIPTSCOPE_LIBTORCH_CUDA_VERSION
    std::string cuda = "CUDA: compiled in (CUDA " SCRIPTSCOPE_LIBTORCH_CUDA_VERSION ")";
    const std::string reason = cudaUnavailableReason();
    if (reason.empty()) {
        const auto count = static_cast<size_t>(torch::cuda::device_count());
        cuda += "; available: " + std::to_string(count) + (count == 1 ? " device" : " devices");
        for (size_t i = 0; i < count; ++i) {
            cuda +=
                (i == 0 ? " (" : ", ") + detail::cudaDeviceName(static_cast<int64_t>(i), nullptr);
        }
        cuda += ")";
    } else {
        cuda += "; not available: " + reason;
    }
    lines.push_back(cuda);
#else
    lines.push_back("CUDA: not compiled in (this LibTorch is CPU-only)");
#endif
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
    lines.push_back("ExecuTorch " + PteRuntime::version() +
                    " runtime: runs .pte files (portable, optimized and quantized kernels, "
                    "XNNPACK)");
#else
    lines.push_back("ExecuTorch: not linked (.pte files open and draw; recorded ETDumps read; "
                    "nothing runs them)");
#endif
    lines.push_back("OpenCV " CV_VERSION);
    return lines;
}

std::vector<DeviceInfo> listDevices() {
    std::vector<DeviceInfo> devices;
    devices.push_back({"cpu", "CPU", 0, true, std::string()});
    const std::string reason = cudaUnavailableReason();
    if (!reason.empty()) {
        devices.push_back({"cuda", "CUDA", 0, false, reason});
        return devices;
    }
    for (size_t i = 0; i < static_cast<size_t>(torch::cuda::device_count()); ++i) {
        DeviceInfo info;
        info.id = "cuda:" + std::to_string(i);
        info.name = detail::cudaDeviceName(static_cast<int64_t>(i), &info.memoryBytes);
        devices.push_back(info);
    }
    return devices;
}

namespace {

int64_t maxSupportedFileFormatVersion() {
    return static_cast<int64_t>(caffe2::serialize::kMaxSupportedFileFormatVersion);
}

} // namespace

bool isOperatorRegistered(const std::string& qualifiedName) {
    if (qualifiedName.find("::") == std::string::npos) {
        return false;
    }
    try {
        my_ops::ensureRegistered();
        return !torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(qualifiedName)).empty();
    } catch (const std::exception&) {
        return false;
    }
}

std::string libtorchVersion() {
    return TORCH_VERSION;
}

ProbeResult probeArchive(const std::string& path) {
    ProbeEnvironment environment;
    environment.maxSupportedVersion = maxSupportedFileFormatVersion();
    environment.isRegistered = isOperatorRegistered;
    ProbeResult probe = probeArchive(path, environment);
    claimByAddedFormat(probe); // what no format of ScriptScope's own opens, a format library may
    return probe;
}

namespace detail {

// The library on this machine that defines operators people commonly need: torchvision's _C
// (_C_stable from 0.29) for torchvision::*, from the torchvision that matches this LibTorch
// (python3-torchvision for Debian's; the one beside SCRIPTSCOPE_PYTHON's torch otherwise: CMake
// says where). Empty when none is known or installed.
std::string knownOperatorLibrary(const std::string& operatorName) {
    if (operatorName.rfind("torchvision::", 0) != 0) {
        return {};
    }
    std::string library;
    glob_t found{};
    if (::glob(SCRIPTSCOPE_TORCHVISION_DIR "/_C*.so", 0, nullptr, &found) == 0 &&
        found.gl_pathc > 0) {
        library = found.gl_pathv[0];
    }
    ::globfree(&found);
    return library;
}

} // namespace detail

} // namespace scriptscope
