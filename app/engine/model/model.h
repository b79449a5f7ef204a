// One model, whatever format it came in: what the worker, the CLI and (through the protocol) the
// views hold. A format is an implementation of Model plus one line in the registry
// (registry.cpp), the only code that knows which formats exist; docs/ARCHITECTURE.md says what
// adding one takes. No LibTorch in this header.
#pragma once

#include <error.h>
#include <graph_model.h>
#include <model_info.h>
#include <numerics_types.h>
#include <run_types.h>

#include <memory>
#include <string>
#include <vector>

namespace scriptscope {

struct OpenOptions {
    std::string device = "cpu";       // where a TorchScript archive's parameters are mapped
    bool includeCode = true;          // each method's code and graph text in ModelInfo
    bool includeInlinedGraph = false; // Python's str(model.inlined_graph) in ModelInfo
};

class Model {
public:
    virtual ~Model() = default;

    // The tree, the methods, the format's name and what this model lacks here
    // (info().lacking; every call below that it lacks answers an error with that reason).
    virtual const ModelInfo& info() const = 0;

    // The method's code and graph as Python prints them; inlined: str(model.inlined_graph).
    virtual Expected<std::string> code(const std::string& modulePath,
                                       const std::string& method) const = 0;
    virtual Expected<std::string> graph(const std::string& modulePath, const std::string& method,
                                        bool inlined) const = 0;
    // The method's graph as the diagram draws it.
    virtual Expected<GraphModel> graphModel(const std::string& modulePath,
                                            const std::string& method, bool inlined) const = 0;

    // Timed runs of a method (with its profile when request.profile asks and the model can).
    virtual Expected<RunResult> run(const RunRequest& request);
    // Every value of one run, the first NaN or Inf, comparisons.
    virtual Expected<ActivationReport> activations(const ActivationRequest& request);
    // The output of every module in one run (a forward hook's view), held for another model's
    // activations to be compared with (ActivationRequest::referenceValues).
    virtual Expected<std::shared_ptr<const ModuleValues>> moduleOutputs(const RunRequest& request);
    // Passes applied to a copy, both timed and compared.
    virtual Expected<OptimizeResult> optimize(const OptimizeRequest& request);
    // Statistics of one module's own parameters and buffers.
    virtual Expected<std::vector<OutputValue>>
    tensorStatistics(const std::string& modulePath) const;

    // The example inputs the model keeps (a .pt2's sample inputs) written as one torch.save
    // tuple, the inputs file any other model's run takes; an error when it keeps none.
    virtual Status saveSampleInputs(const std::string& path);

protected:
    // The error a call the model lacks answers: ModelInfo::lacking's reason, kind Format.
    Error lackingError(Capability capability) const;
};

// The operator library (torchvision's _C, a custom op) dlopen()ed into this process, checked first
// against this LibTorch: every model opened after it sees its operators.
Status loadOperatorLibrary(const std::string& path);

// Probes the file once (nothing executed) and opens it with the format that claims it. The
// error says what the file is when no format opens it (a state dict, an ONNX file).
Expected<std::unique_ptr<Model>> openModel(const std::string& path,
                                           const OpenOptions& options = {});
// The model a comparison names (request.referenceModel), opened without its code after the
// operator libraries it may need; an error names its file.
Expected<std::unique_ptr<Model>> openReferenceModel(const ActivationRequest& request);
// What the probe found, and whether a format opens it here; the reason when it does not (for
// scriptscope-cli info's exit status and the GUI's preview).
Status openable(const ProbeResult& probe);

// What a file's format says of it beyond the probe, read without running anything (a .pt2's
// programs, signatures and weights): text for a person, and the same as a JSON object that
// scriptscope-cli info --json puts under `key`. Empty for formats with nothing to add.
struct FileDetails {
    std::string key;
    std::string text;
    std::string json;
    // What the format's reader found damaged where the probe did not look (a .pte's segment
    // that ends past the file); empty when nothing is.
    std::string damage;
};
FileDetails fileDetails(const ProbeResult& probe);

// The two models compared: modules, parameters and buffers, and where both formats have them,
// attributes, code, graphs and extra files. `a` is the diff's first side.
Expected<ArchiveDiff> diffModels(const Model& a, const Model& b);

} // namespace scriptscope
