// The shapes that flowed along a method's values in one run (graph_builder.h), recorded by
// PyTorch's own profiling interpreter.
#include "graph_builder.h"

#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/runtime/profiling_record.h>

#include <functional>

namespace scriptscope::detail {

using torch::jit::Node;

std::map<std::string, std::string> recordValueShapes(const torch::jit::Module& owner,
                                                     const torch::jit::Method& method,
                                                     const std::vector<c10::IValue>& inputs) {
    auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    torch::jit::Inline(*graph); // the same copy and inlining as buildGraphModel: the same names
    auto record = torch::jit::ProfilingRecord::instrumentGraph(graph);
    std::shared_ptr<torch::jit::Graph> profiled = record->profiled_graph_;
    torch::jit::Code code(profiled, method.name());
    torch::jit::Stack stack;
    stack.push_back(owner._ivalue());
    stack.insert(stack.end(), inputs.begin(), inputs.end());
    // The arguments left out take their defaults, as a call of the method would give them.
    method.function().getSchema().checkAndNormalizeInputs(stack, {});
    torch::jit::InterpreterState(code).run(stack);
    std::map<std::string, std::string> shapes;
    auto tensorShape = [](const c10::IValue& v) -> std::string {
        if (!v.isTensor() || !v.toTensor().defined()) {
            return "";
        }
        std::string text;
        for (const int64_t size : v.toTensor().sizes()) {
            text += (text.empty() ? "" : "x") + std::to_string(size);
        }
        return text.empty() ? "scalar" : text;
    };
    // The graph's own inputs and outputs have no profiled use: their values tell.
    const auto graphInputs = profiled->inputs();
    for (size_t i = 0; i < inputs.size() && i + 1 < graphInputs.size(); ++i) {
        if (const std::string shape = tensorShape(inputs[i]); !shape.empty()) {
            shapes.emplace(graphInputs[i + 1]->debugName(), shape);
        }
    }
    // (By the uninstrumented copy's names: the instrumented graph may return profiled copies.)
    const auto graphOutputs = graph->outputs();
    for (size_t i = 0; i < graphOutputs.size() && i < stack.size(); ++i) {
        if (const std::string shape = tensorShape(stack[i]); !shape.empty()) {
            shapes.emplace(graphOutputs[i]->debugName(), shape);
        }
    }
    std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* block) {
        for (Node* node : block->nodes()) {
            for (torch::jit::Block* inner : node->blocks()) {
                walk(inner);
            }
            if (node->kind() != c10::prim::profile ||
                !node->hasAttribute(c10::attr::profiled_type)) {
                continue;
            }
            const auto type = node->ty(c10::attr::profiled_type)->cast<c10::TensorType>();
            const auto sizes = type ? type->symbolic_sizes().sizes() : c10::nullopt;
            if (!sizes) {
                continue;
            }
            std::string text;
            for (const auto& dim : *sizes) {
                text += (text.empty() ? "" : "x") +
                        (dim.is_static() ? std::to_string(dim.static_size()) : std::string("?"));
            }
            if (text.empty()) {
                text = "scalar";
            }
            shapes.emplace(node->input(0)->debugName(), text);
        }
    };
    walk(profiled->block());
    return shapes;
}

} // namespace scriptscope::detail
