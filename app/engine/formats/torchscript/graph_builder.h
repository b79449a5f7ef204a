// Builds the GraphModel (graph_model.h) of a method: the engine's only LibTorch part of the
// graph view.
#pragma once

#include "graph_model.h"

#include <torch/script.h>

#include <map>
#include <string>
#include <vector>

namespace scriptscope::detail {

// The method's own graph (calls not inlined), `owner` being the module the method belongs to at
// `ownerPath` in the loaded model.
GraphModel buildGraphModel(const torch::jit::Module& owner, const std::string& ownerPath,
                           const torch::jit::Method& method);

// The same for a graph the caller holds, copied and inlined as wanted (the session keeps each
// method's inlined graph, Python's inlined_graph: Session::Impl::inlined); nodes[id] is the
// graph's node behind GraphModel node `id`. `irText`, when given, is graph.toString() already
// made (a 48-layer encoder's takes a tenth of a second to print).
GraphModel buildGraphModel(const torch::jit::Module& owner, const std::string& ownerPath,
                           const std::string& method, torch::jit::Graph& graph, bool inlined,
                           std::vector<torch::jit::Node*>& nodes,
                           const std::string* irText = nullptr);

// The shapes of the tensors that flowed along each value of the method's inlined graph in one
// run with `inputs` (self excluded), by the value's debug name as GraphModel edges name it:
// "1x64x56x56", a "?" for a size that changed between uses (in a loop). PyTorch's own
// ProfilingRecord instruments a copy of the graph, which the interpreter runs once.
std::map<std::string, std::string> recordValueShapes(const torch::jit::Module& owner,
                                                     const torch::jit::Method& method,
                                                     const std::vector<c10::IValue>& inputs);

} // namespace scriptscope::detail
