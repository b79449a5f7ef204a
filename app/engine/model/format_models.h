// The formats the registry (registry.cpp) knows, each an implementation of Model in its format's
// folder (app/engine/formats/<format>/<format>_model.cpp). Only the registry and those files
// include this header.
#pragma once

#include "model.h"

#include <etrecord_reader.h>
#include <executorch_program.h>
#include <exported_program.h>
#include <exported_runner.h>
#include <session.h>
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
#include <pte_session.h>
#endif

#include <functional>
#include <memory>
#include <optional>

namespace scriptscope::formats {

// A TorchScript archive (torch.jit.save), loaded by LibTorch: torchscript_model.cpp.
class TorchScriptModel final : public Model {
public:
    static Expected<std::unique_ptr<Model>> open(const std::string& path, ProbeResult probe,
                                                 const OpenOptions& options);
    // What keeps the archive from loading here (its version, damage, an operator not
    // registered), found by the probe alone.
    static Status openable(const ProbeResult& probe);
    // What `info` says beyond the probe's records: the archive's folder and its serialization
    // version against what this LibTorch reads.
    static FileDetails details(const ProbeResult& probe);

    const ModelInfo& info() const override { return info_; }
    Expected<std::string> code(const std::string& modulePath,
                               const std::string& method) const override;
    Expected<std::string> graph(const std::string& modulePath, const std::string& method,
                                bool inlined) const override;
    Expected<GraphModel> graphModel(const std::string& modulePath, const std::string& method,
                                    bool inlined) const override;
    Expected<RunResult> run(const RunRequest& request) override;
    Expected<ActivationReport> activations(const ActivationRequest& request) override;
    Expected<std::shared_ptr<const ModuleValues>> moduleOutputs(const RunRequest& request) override;
    Expected<OptimizeResult> optimize(const OptimizeRequest& request) override;
    Expected<std::vector<OutputValue>>
    tensorStatistics(const std::string& modulePath) const override;

    const Session& session() const { return session_; }

private:
    Session session_;
    ModelInfo info_;
};

// A torch.export archive (.pt2), read without LibTorch; what runs it is the AOTInductor model it
// compiles to, when the package holds one: exported_model.cpp.
class ExportedModel final : public Model {
public:
    static Expected<std::unique_ptr<Model>> open(const std::string& path, ProbeResult probe);
    static Status openable(const ProbeResult& probe);

    const ModelInfo& info() const override { return info_; }
    Expected<std::string> code(const std::string& modulePath,
                               const std::string& method) const override;
    Expected<std::string> graph(const std::string& modulePath, const std::string& method,
                                bool inlined) const override;
    Expected<GraphModel> graphModel(const std::string& modulePath, const std::string& method,
                                    bool inlined) const override;
    Expected<RunResult> run(const RunRequest& request) override;
    Expected<ActivationReport> activations(const ActivationRequest& request) override;
    Expected<std::shared_ptr<const ModuleValues>> moduleOutputs(const RunRequest& request) override;
    Status saveSampleInputs(const std::string& path) override;

    const ExportedProgram& program() const { return program_; }

private:
    explicit ExportedModel(ExportedProgram program);
    // Whether its values can be observed here (the interpreter opened), or why not.
    Status observable();

    ExportedProgram program_;
    ModelInfo info_;
    ExportedRunner runner_; // opened on the first run
};

// An ExecuTorch program (.pte), read without ExecuTorch, run by ExecuTorch's runtime where the
// build links one (PteSession): executorch_model.cpp.
class ExecuTorchModel final : public Model {
public:
    static Expected<std::unique_ptr<Model>> open(const std::string& path, ProbeResult probe);
    static Status openable(const ProbeResult& probe);
    static FileDetails details(const ProbeResult& probe);

    const ModelInfo& info() const override { return info_; }
    Expected<std::string> code(const std::string& modulePath,
                               const std::string& method) const override;
    Expected<std::string> graph(const std::string& modulePath, const std::string& method,
                                bool inlined) const override;
    Expected<GraphModel> graphModel(const std::string& modulePath, const std::string& method,
                                    bool inlined) const override;
    Expected<RunResult> run(const RunRequest& request) override;
    Expected<ActivationReport> activations(const ActivationRequest& request) override;
    Expected<std::shared_ptr<const ModuleValues>> moduleOutputs(const RunRequest& request) override;
    Status saveSampleInputs(const std::string& path) override;

private:
    explicit ExecuTorchModel(ExecuTorchProgram program);
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
    // The session of runs, opened on the first (an error when the model lacks `capability`).
    Expected<PteSession*> session(Capability capability);
#endif
    Expected<RunResult> recordedRun(const RunRequest& request) const;
    void addRecordedModules();

    ExecuTorchProgram program_;
    ModelInfo info_;
    // NAME.etrecord beside the file, when there is one: the modules a profile is grouped by.
    std::optional<EtRecord> etrecord_;
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
    std::unique_ptr<PteSession> session_; // opened on the first run
#endif
};

// Why a format has no recorded profile (Capability::RecordedProfile): an ETDump is the runs of an
// ExecuTorch program.
inline constexpr const char* kNoRecordedProfile =
    "an ETDump records the runs of an ExecuTorch program (.pte)";

// A recorded profile (RunRequest::etdumpPath) where the model lacks one is refused, with why.
inline Status refuseRecordedProfile(const RunRequest& request, const ModelInfo& info) {
    const std::string why = info.lacks(Capability::RecordedProfile);
    if (request.etdumpPath.empty() || why.empty()) {
        return std::nullopt;
    }
    return Error{ErrorKind::Input, "'" + request.etdumpPath + "' would be read as an ETDump: " +
                                       why + "; '" + info.path + "' is " + info.format};
}

// A model's activations compared with another model (request.referenceModel, any format): the
// reference opened through the registry and run on the same inputs first, its module outputs
// handed to `activations` in request.referenceValues. With no inputs given, both take the sample
// inputs one of the two keeps (a .pt2's). Without a reference model, `activations` alone.
Expected<ActivationReport> withReference(
    Model& model, ActivationRequest request,
    const std::function<Expected<ActivationReport>(const ActivationRequest&)>& activations);

// A format a format library adds (formats/added/format_library.h), described by its reader and
// not run: added_model.cpp.
class AddedModel final : public Model {
public:
    static Expected<std::unique_ptr<Model>> open(const std::string& path, ProbeResult probe);
    static Status openable(const ProbeResult& probe);

    const ModelInfo& info() const override { return info_; }
    Expected<std::string> code(const std::string& modulePath,
                               const std::string& method) const override;
    Expected<std::string> graph(const std::string& modulePath, const std::string& method,
                                bool inlined) const override;
    Expected<GraphModel> graphModel(const std::string& modulePath, const std::string& method,
                                    bool inlined) const override;

private:
    AddedModel() = default;
    Expected<const MethodInfo*> method(const std::string& modulePath,
                                       const std::string& name) const;

    ModelInfo info_;
};

} // namespace scriptscope::formats
