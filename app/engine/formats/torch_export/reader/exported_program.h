// A torch.export archive (.pt2) as the views see a model: the same plain values a TorchScript
// Session gives (ModelInfo, the graph's text and its GraphModel), read without LibTorch and without
// running anything. It sits beside Session: the worker and the CLI hold one or the other.
//
// The module tree is rebuilt from each node's nn_module_stack (and the parameters' and buffers'
// state-dict names); the root's one method, forward, has print(exported_program) as its code and
// str(exported_program.graph) as its graph; the diagram groups nodes by the same module stacks and
// labels edges with the values' shapes from the archive's tensor metadata.
#pragma once

#include "exported_text.h"

#include <error.h>
#include <graph_model.h>
#include <model_info.h>

#include <map>
#include <memory>
#include <string>

namespace scriptscope {

class ExportedProgram {
public:
    // Reads the archive the probe found to be an ExportedProgram.
    static Expected<ExportedProgram> open(const std::string& path, ProbeResult probe);

    const ModelInfo& info() const { return info_; }
    const Pt2Archive& archive() const { return archive_; }
    // The exported program; an AOTInductor package may hold only the compiled model (then
    // hasProgram() is false and graph() and graphModel() say so).
    bool hasProgram() const { return !archive_.models.empty(); }
    const Pt2Model& program() const { return archive_.models.front(); }
    // The compiled model that runs it (data/aotinductor/), or nullptr.
    const Pt2CompiledModel* compiled() const {
        return archive_.compiled.empty() ? nullptr : &archive_.compiled.front();
    }

    // print(exported_program) for the root's forward; str(exported_program.graph) for its graph
    // (inlined or not: an exported graph is flat).
    Expected<std::string> code(const std::string& modulePath, const std::string& method) const;
    Expected<std::string> graph(const std::string& modulePath, const std::string& method) const;
    // The diagram's graph (exported_diagram.cpp): the nodes by their module stacks, the graphs
    // control flow calls as blocks inside their nodes. Made once.
    Expected<GraphModel> graphModel(const std::string& modulePath, const std::string& method) const;
    // The diagram's node of a top-level node of the program, by its name ("cond"); -1 when none.
    int graphNodeOf(const std::string& nodeName) const;

private:
    Status check(const std::string& modulePath, const std::string& method) const;
    Status checkGraph(const std::string& modulePath, const std::string& method) const;

    Pt2Archive archive_;
    ModelInfo info_;
    struct Diagram {
        GraphModel model;
        std::map<std::string, int> topLevel;
    };
    mutable std::shared_ptr<const Diagram> diagram_;
};

namespace exported {
// The module a frame of an nn_module_stack names ("relu@1", a second call, is "relu").
std::string modulePathOf(const Pt2ModuleFrame& frame);
// "aten::conv2d" for "torch.ops.aten.conv2d.default".
std::string kindOf(const std::string& target);
} // namespace exported

// Bytes per element of a dtype as Python names it ("float32": 4), 0 when unknown.
int dtypeBytes(const std::string& dtype);

} // namespace scriptscope
