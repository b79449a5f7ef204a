// The ScriptScope engine: everything below the GUI, without Qt. LibTorch stays behind this header
// (pImpl), so code that includes it compiles fast.
#pragma once

#include "error.h"
#include "exported_program.h"
#include "format.h"
#include "graph_model.h"
#include "model_info.h"
#include "numerics_types.h"
#include "run_types.h"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

// Reads a file's structure without executing anything: what kind of file it is, its records, its
// serialization version, extra files and the operators its code calls (and whether each is
// registered in this process now).
ProbeResult probeArchive(const std::string& path);

// True when the operator ("ns::name") has a registered implementation in this process.
bool isOperatorRegistered(const std::string& qualifiedName);

std::string libtorchVersion();

// What this program was built with and what it finds: "LibTorch 2.14.1", whether CUDA is compiled
// in and usable (or why not), "OpenCV 4.6.0". For --version, the About dialog and bug reports.
std::vector<std::string> buildDescription();

std::vector<DeviceInfo> listDevices();

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

// What runs a .pt2, with the same inputs, timing and results as a TorchScript method: the model
// AOTInductor compiled into it (torch._inductor.aoti_compile_and_package), through LibTorch's
// AOTIModelPackageLoader (LibTorch 2.6 and later; in other builds open() says why not), or, for a
// plain exported program, ScriptScope's interpreter of its graph (both builds). Loading a compiled
// model runs the code it holds: only the worker and the CLI's engine process do.
class CompiledModel {
public:
    CompiledModel();
    ~CompiledModel();
    CompiledModel(const CompiledModel&) = delete;
    CompiledModel& operator=(const CompiledModel&) = delete;

    static bool supported();
    // The package's model `name`, compiled for `device` ("cpu", "cuda"): its metadata's
    // AOTI_DEVICE_KEY.
    Status open(const std::string& path, const std::string& name, const std::string& device);
    bool opened() const;
    // No compiled model: the program's graph is interpreted (exported_interpreter.h) on whatever
    // device a run asks for.
    void interpret(const ExportedProgram& program);
    bool interprets() const;
    double loadMilliseconds() const;
    // What the compiled code assumes of its inputs: it does not check them itself, and a tensor of
    // another shape would be read out of bounds. Checked before every run.
    struct ExpectedInput {
        std::string name;  // "x"
        std::string dtype; // "float32"; "" when unknown (then only the count is checked)
        std::vector<std::string> sizes;                            // "224", or a symbol ("s77")
        std::map<std::string, std::pair<int64_t, int64_t>> ranges; // symbol -> [min, max]
    };
    void expectInputs(std::vector<ExpectedInput> inputs);
    // The archive's example inputs (a torch.save of (args, kwargs) at `record` in the .pt2 at
    // `path`), read on first use: a run with no inputs takes them all, a `sample` spec one
    // argument of them.
    void sampleInputsFrom(const std::string& path, const std::string& record);
    // Writes the sample inputs' positional arguments as one torch.save tuple (a file a TorchScript
    // twin's run takes as its inputs).
    Status saveSampleInputs(const std::string& path);
    // request.method must be forward; inputs are tensors (specs, images, a file, the samples).
    Expected<RunResult> run(const RunRequest& request);
    // Every value of one run, and the module outputs another model is compared with: a plain
    // program's, through the interpreter (compiled code runs as one call and shows none).
    Expected<ActivationReport> activations(const ActivationRequest& request);
    Expected<std::shared_ptr<const ModuleValues>> moduleOutputs(const RunRequest& request);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A run of a .pt2: its compiled model (opened into `compiled` on first use, on the device it was
// compiled for), else its program's graph, interpreted on the run's device.
Expected<RunResult> runExported(const ExportedProgram& program, CompiledModel& compiled,
                                const RunRequest& request);
// Opens the .pt2's compiled model (or its program, to interpret) into `compiled` (once), with what
// it expects of its inputs and where its sample inputs are.
Status openExported(const ExportedProgram& program, CompiledModel& compiled);

// Warps an image file with my_ops::warp_perspective and writes the result.
struct WarpFileRequest {
    std::string input;
    std::string output;
    std::vector<double> matrix; // 9 values, row-major, source -> output pixels
    // Or: where the image's corners (TL, TR, BR, BL) go, x0,y0,...,x3,y3.
    std::optional<std::array<double, 8>> corners;
    int width = 0; // 0: the input's size
    int height = 0;
    std::string interpolation = "linear";
    std::string border = "constant";
    double borderValue = 0;
    bool inverse = false;
};
Status warpImageFile(const WarpFileRequest& request);

} // namespace scriptscope
