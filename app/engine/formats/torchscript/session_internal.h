// Internal to TorchScript's session files (includes LibTorch): the loaded model behind Session.
// What every format's LibTorch part shares is engine_internal.h.
#pragma once

#include "engine_internal.h"
#include "session.h"

#include <torch/script.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace scriptscope {

struct Session::Impl {
    Expected<torch::jit::Method> method(const std::string& modulePath,
                                        const std::string& name) const;
    // The method's graph with every call inlined (Python's inlined_graph) and its text, made once
    // per function and kept: a 48-layer encoder's takes 0.6 s to inline and 0.2 s to print, and
    // the model's text, its diagram and the diagram again (a reload of the view) all read them.
    // Not to be changed: copy the graph to change it.
    struct Inlined {
        std::shared_ptr<torch::jit::Graph> graph;
        std::string text;
    };
    const Inlined& inlined(const torch::jit::Method& method) const;

    std::optional<torch::jit::Module> module;
    mutable std::map<const torch::jit::Function*, Inlined> inlinedGraphs;
    torch::Device device{torch::kCPU};
    std::string path;
};

namespace detail {

Expected<torch::jit::Method> findMethod(const torch::jit::Module& module, const std::string& path,
                                        const std::string& name);

// Python's method.code.
std::string methodCode(const torch::jit::Method& method);

// A run's arguments built from the request (files, specs), checked against the method's schema,
// on the request's device; the model moved there too.
struct PreparedRun {
    torch::Device device{torch::kCPU};
    std::vector<c10::IValue> inputs;
    std::vector<std::string> descriptions;
};
Expected<PreparedRun> prepareRun(torch::jit::Module& module, torch::Device& modelDevice,
                                 const torch::jit::Method& method, const RunRequest& request);

// packed_weights.cpp: the tensors inside a quantized module's packed parameters
// (LinearPackedParams, Conv2dPackedParams...), each with the attribute that holds it.
struct PackedTensor {
    std::string name; // "weight", "bias", as PyTorch's module names them
    torch::Tensor tensor;
};
std::vector<std::pair<std::string, PackedTensor>> packedTensors(const torch::jit::Module& module);

// x against y (moved to x's device): nullopt when they are equal (NaN equals NaN), else how they
// differ (shape, dtype, or values: how many and by how much at most).
std::optional<TensorChange> compareTensors(const std::string& name, bool buffer,
                                           const at::Tensor& x, const at::Tensor& y);

} // namespace detail
} // namespace scriptscope
