// Internal to the engine's LibTorch files, whatever their format (includes LibTorch): devices,
// timing, operator profiles, and the values one model's run keeps for another's. TorchScript's own
// (its loaded module, prepared runs) are in formats/torchscript/session_internal.h.
#pragma once

#include "engine.h"
#include "numerics_types.h"
#include "run_types.h"

#include <torch/script.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

// One operator's output inside a module: its operator (as Site::op has it), the value and the
// node that made it.
struct PlacedValue {
    std::string op;
    at::Tensor value;
    int node = -1;
};

// One call's output of a module, as a float32 copy, and the node (of the records' graph of the
// model it came from) that made it; none for values from a file.
struct ModuleCall {
    at::Tensor value;
    int node = -1;
};

// What numerics_types.h declares opaque: a run's values for another model's run to be compared
// with.
struct ModuleValues {
    // Each module's outputs, every call's in the order they were made: a module called twice
    // (ResNet's block ReLU, a shared activation, a loop's body) has two, matched call by call.
    std::map<std::string, std::vector<ModuleCall>> outputs;
    // Values saved from Python (a dict a forward hook filled): one per module, its last call's.
    bool lastCallOnly = false;
    bool outputOverflow = false; // module outputs left out for their size
    // torch.export node names to their outputs (a .pt2's or .pte's run; TorchScript has none),
    // under every name a value has (a .pte's call: its edge node and the export node it was
    // lowered from), and whether some were left out for their size.
    std::map<std::string, at::Tensor> operatorOutputs;
    std::map<std::string, int> operatorNodes;
    // Each module's operators (as Site::op has them) and their outputs, in graph order.
    std::map<std::string, std::vector<PlacedValue>> moduleOperators;
    bool operatorOverflow = false;
    // The run's final output with its values, compared with the other model's whatever else
    // matched; Kind::None when there is none (values from a file).
    OutputValue finalOutput;
    bool hasFinalOutput = false;
    std::string model; // the file they came from
};

namespace detail {

Expected<torch::Device> parseDevice(const std::string& text);
std::string cudaDeviceName(int64_t index, uint64_t* memory);
// The library on this machine known to define an operator (torchvision's _C for torchvision::*),
// or empty.
std::string knownOperatorLibrary(const std::string& operatorName);

// Waits for the device's queued work (CUDA); nothing on the CPU.
void synchronize(const torch::Device& device);

double elapsedMs(std::chrono::steady_clock::time_point since);

// operator_profiler.cpp: runs call once with every operator call timed, by operator and by the
// module that made it; on CUDA (cudaDevice >= 0) the device is synchronized around each
// top-level call, so that its time is its kernels'.
RunProfile profileOperators(const std::function<void()>& call, int cudaDevice);
// The module the calls made now belong to, for code that is not TorchScript's (the exported
// program's interpreter sets each node's module path); nullptr: TorchScript's module hierarchy.
void setProfileScope(const std::string* modulePath);

} // namespace detail
} // namespace scriptscope
