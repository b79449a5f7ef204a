// An ExecuTorch program (.pte) as the views see a model: ModelInfo, each method's text and its
// GraphModel, read by the torch-free reader (pte_reader.h) without running anything.
//
// The tree is the program with its methods (execution plans) as children, and each method's
// delegates as theirs. A method's code is its instructions written as calls
// ("v7 = aten::convolution.out(v6, v0, ...)"); its graph is the plan as the file holds it (every
// value, then every chain's instructions). The diagram's nodes are the kernel and delegate calls,
// its edges the values between them; each delegate call is a group of its backend. The memory plan
// (MethodInfo::memoryPlan) places every planned tensor in its buffer over the instructions that
// make it and last use it.
#pragma once

#include <error.h>
#include <graph_model.h>
#include <model_info.h>
#include <pte_reader.h>

#include <string>

namespace scriptscope {

class ExecuTorchProgram {
public:
    // Reads the file the probe found to be an ExecuTorch program.
    static Expected<ExecuTorchProgram> open(const std::string& path, ProbeResult probe);

    const ModelInfo& info() const { return info_; }
    const PteProgram& program() const { return program_; }

    // The method named `method` (an execution plan), wherever in the tree it was asked for.
    Expected<std::string> code(const std::string& method) const;
    Expected<std::string> graph(const std::string& method) const;
    Expected<GraphModel> graphModel(const std::string& method) const;

    // The kernel and delegate calls of a method in the order they run: each is the diagram's node
    // of the same index (graphModel), where a run's events (an ETDump's instruction ids) land.
    struct Call {
        size_t chain = 0, instruction = 0;
        std::string kind;   // "aten::convolution.out", "delegate::XnnpackBackend"
        std::string module; // the method, or its delegate's path ("forward.delegate_0")
        bool delegate = false;
    };
    Expected<std::vector<Call>> calls(const std::string& method) const;
    // The method's execution plan; an error naming the file when it has none of that name.
    Expected<const PtePlan*> plan(const std::string& method) const;

private:
    const MethodInfo& methodInfo(const std::string& method) const; // one plan() found

    PteProgram program_;
    ModelInfo info_;
};

// What scriptscope-cli info adds for a .pte: the program's methods, operators, delegates,
// segments and memory plans, as text and as JSON.
std::string executorchDetailsText(const PteProgram& program);
std::string executorchDetailsJson(const PteProgram& program);

} // namespace scriptscope
