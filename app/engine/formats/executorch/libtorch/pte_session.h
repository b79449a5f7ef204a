// A .pte run by ExecuTorch's runtime (PteRuntime), its inputs built and its outputs described as
// every other run's are, with LibTorch: what ExecuTorchModel runs. Built where CMake found
// ExecuTorch (SCRIPTSCOPE_HAS_EXECUTORCH). No LibTorch or ExecuTorch header here.
#pragma once

#include <error.h>
#include <etrecord_reader.h>
#include <executorch_program.h>
#include <numerics_types.h>
#include <run_types.h>

#include <memory>
#include <string>

namespace scriptscope {

struct PteTrace;

class PteSession {
public:
    // record: the program's ETRecord, when there is one (its profile's modules are the model's).
    PteSession(const ExecuTorchProgram& program, const EtRecord* record);
    ~PteSession();

    // Timed runs of a method on the CPU; with request.profile, the warm-up and iterations again in
    // a runtime with ExecuTorch's event tracer (ETDump) on: the mean of the traced iterations'
    // times per instruction is the profile, their p50 its wall time.
    Expected<RunResult> run(const RunRequest& request);

    // One traced run on the request's inputs: the ETDump, with every instruction's output in the
    // debug buffer when debugBufferBytes > 0 (intermediate outputs).
    Expected<PteTrace> trace(const RunRequest& request, size_t debugBufferBytes);

    // Every value of one traced run (ExecuTorch's intermediate outputs), the first NaN or Inf, and
    // comparisons with values saved from Python or another model's module outputs, matched by the
    // ETRecord's modules (a delegate at its boundary).
    Expected<ActivationReport> activations(const ActivationRequest& request);
    Expected<std::shared_ptr<const ModuleValues>> moduleOutputs(const RunRequest& request);
    // The inputs the method's plan gives (random, seeded), as one torch.save tuple.
    Status saveSampleInputs(const std::string& path, const std::string& method);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace scriptscope
