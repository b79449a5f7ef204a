// What runs a .pt2 with LibTorch: its AOTInductor model or ScriptScope's interpreter of its graph.
#pragma once

#include "error.h"
#include "exported_program.h"
#include "numerics_types.h"
#include "run_types.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace scriptscope {

// What runs a .pt2, with the same inputs, timing and results as a TorchScript method: the model
// AOTInductor compiled into it (torch._inductor.aoti_compile_and_package), through LibTorch's
// AOTIModelPackageLoader (LibTorch 2.6 and later; in other builds open() says why not), or, for a
// plain exported program, ScriptScope's interpreter of its graph (both builds). Loading a compiled
// model runs the code it holds: only the worker and the CLI's engine process do.
class ExportedRunner {
public:
    ExportedRunner();
    ~ExportedRunner();
    ExportedRunner(const ExportedRunner&) = delete;
    ExportedRunner& operator=(const ExportedRunner&) = delete;

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
Expected<RunResult> runExported(const ExportedProgram& program, ExportedRunner& compiled,
                                const RunRequest& request);
// Opens the .pt2's compiled model (or its program, to interpret) into `compiled` (once), with what
// it expects of its inputs and where its sample inputs are.
Status openExported(const ExportedProgram& program, ExportedRunner& compiled);

} // namespace scriptscope
