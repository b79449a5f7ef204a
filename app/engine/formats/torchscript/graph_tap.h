// The value tap in a TorchScript method (graph_tap.cpp): a copy of its inlined graph with a tap
// after every tensor a node computes, run once through the interpreter.
#pragma once

#include "graph_model.h"
#include "value_tap.h"

#include <torch/script.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope::detail {

// The method's inlined graph with a tap after every tensor a node computes, and what each tap
// watches, with the GraphModel the records refer to.
struct Instrumented {
    std::shared_ptr<torch::jit::Graph> graph;
    std::optional<c10::FunctionSchema> schema; // the method's, for its arguments' defaults
    GraphModel model;
    std::vector<Site> sites;
    std::vector<std::vector<std::string>> siteModules; // per site: modules it is the output of
    int inputSites = 0;
};

// The tapped copy of a method: instrument() builds it, runInstrumented() runs it once.
Instrumented instrument(const torch::jit::Module& module, const torch::jit::Method& method);
// Runs the instrumented graph once through the interpreter (no graph executor, so no optimisation
// moves or removes anything), the taps reporting to `run`.
c10::IValue runInstrumented(const Instrumented& instrumented, const torch::jit::Module& module,
                            const std::vector<c10::IValue>& inputs, TapRun& run,
                            const torch::Device& device);

} // namespace scriptscope::detail
