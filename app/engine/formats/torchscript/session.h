// A TorchScript archive (torch.jit.save) loaded by LibTorch: the Session that inspects and runs it.
// LibTorch stays behind this header (pImpl). What the engine does for every format is engine.h.
#pragma once

#include "engine.h"
#include "error.h"
#include "format.h"
#include "graph_model.h"
#include "model_info.h"
#include "numerics_types.h"
#include "run_types.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

class ExportedProgram;

struct LoadOptions {
    std::string device = "cpu"; // where parameters are mapped while loading
    bool includeCode = true;    // .code and graph text for every method
    // Python's str(model.inlined_graph) in ModelInfo. Off by default: inlining a whole network
    // costs about half a load (ResNet-18), and Session::graph(..., true) gives it on request.
    bool includeInlinedGraph = false;
};

// Owns one loaded model. Not thread-safe: one session per thread (or process).
class Session {
public:
    Session();
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // dlopen()s a library that registers operators (e.g. torchvision's _C), before loading: into
    // the process, so every session after it sees its operators.
    static Status loadOperatorLibrary(const std::string& path);

    // Probes, then loads and inspects. The project's warp operator is always registered.
    Expected<ModelInfo> load(const std::string& path, const LoadOptions& options = {});
    // The same with the file's probe already made (the format registry probes once).
    Expected<ModelInfo> load(const std::string& path, ProbeResult probe,
                             const LoadOptions& options = {});
    bool loaded() const;

    // Python's model.PATH.NAME.code and str(model.PATH.NAME.graph); inlined:
    // str(model.inlined_graph).
    Expected<std::string> code(const std::string& modulePath, const std::string& method) const;
    Expected<std::string> graph(const std::string& modulePath, const std::string& method,
                                bool inlined) const;

    // The method's graph as a diagram sees it (graph_model.h); inlined: the inlined graph, with
    // each node's module from its call stack.
    Expected<GraphModel> graphModel(const std::string& modulePath, const std::string& method,
                                    bool inlined) const;
    Expected<RunResult> run(const RunRequest& request);

    // One run of the method through a copy of its inlined graph with a probe after every node:
    // statistics of every tensor value in execution order, the first NaN or Inf, and, on request,
    // a comparison with another device, values saved from Python or another archive.
    Expected<ActivationReport> activations(const ActivationRequest& request);

    // The output of every module in one run of the method (the last, when a module runs twice):
    // what another model's activations are compared with.
    Expected<std::shared_ptr<const ModuleValues>> moduleOutputs(const RunRequest& request);

    // Passes applied in order to a copy of the model; both timed and their outputs compared.
    Expected<OptimizeResult> optimize(const OptimizeRequest& request);

    // This model against another loaded one: modules, tensors, attributes, code, graphs, extra
    // files.
    Expected<ArchiveDiff> diff(const Session& other) const;
    // This TorchScript model against its torch.export twin: the module trees (types by class
    // name: __torch__.Net and __main__.Net are one class) and every parameter and buffer by its
    // state-dict name, values read from the .pt2's weight records. Code, graphs and attributes
    // differ by nature and are not compared.
    Expected<ArchiveDiff> diff(const ExportedProgram& other) const;

    // min/max/mean/std and NaN/Inf counts of the module's own parameters and buffers, computed on
    // request (they read every value). Each value's key is the tensor's name.
    Expected<std::vector<OutputValue>> tensorStatistics(const std::string& modulePath) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace scriptscope
