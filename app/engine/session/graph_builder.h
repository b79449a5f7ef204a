// Builds the GraphModel (graph_model.h) of a method: the engine's only LibTorch part of the
// graph view.
#pragma once

#include "graph_model.h"

#include <torch/script.h>

#include <string>

namespace scriptscope::detail {

// The method's graph (inlined: as Python's inlined_graph), `owner` being the module the method
// belongs to at `ownerPath` in the loaded model.
GraphModel buildGraphModel(const torch::jit::Module& owner, const std::string& ownerPath,
                           const torch::jit::Method& method, bool inlined);

} // namespace scriptscope::detail
