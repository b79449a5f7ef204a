// torch.export archives (.pt2) as a Model: ExportedProgram (reader/) reads and draws them
// without LibTorch; an AOTInductor package's compiled model runs them, and a plain program's graph
// is interpreted (ExportedRunner, libtorch/exported_runner.h).
#include "format_models.h"

namespace scriptscope::formats {

namespace {

// What a .pt2 cannot do here, each with why: what ModelInfo::lacking carries to the views.
std::map<Capability, std::string> lackingOf(const ExportedProgram& program) {
    const std::string what =
        program.hasProgram() ? "a torch.export program" : "an AOTInductor package";
    std::map<Capability, std::string> lacking;
    // A compiled model runs where LibTorch has AOTInductor's loader; a program runs everywhere,
    // through the interpreter of its graph.
    if (program.compiled() && !ExportedRunner::supported()) {
        lacking[Capability::Run] = "this build's LibTorch " + libtorchVersion() +
                                   " has no AOTInductor package loader (PyTorch 2.6 and later)";
    }
    const bool runs = lacking.count(Capability::Run) == 0;
    if (!runs) {
        lacking[Capability::Profile] = "it does not run here, so it has no profile";
    } else if (program.compiled()) {
        lacking[Capability::Profile] =
            "AOTInductor's compiled code runs as one call: it has no per-operator profile here";
    }
    // A package without its program has nothing to draw.
    const std::string does = !program.hasProgram() ? (runs ? "shows and runs " : "shows ")
                             : runs                ? "shows, draws and runs "
                                                   : "shows and draws ";
    const std::string onlyTorchScript =
        " work on TorchScript archives only so far; ScriptScope " + does + what;
    lacking[Capability::Statistics] = "parameter statistics" + onlyTorchScript;
    if (!runs) {
        lacking[Capability::Activations] = "it does not run here, so it has no activations";
    } else if (program.compiled()) {
        // The interpreter shows every value; a package's compiled code runs as one call.
        lacking[Capability::Activations] =
            "AOTInductor's compiled code runs as one call: it has no values to inspect here";
    }
    lacking[Capability::Optimize] = "passes" + onlyTorchScript;
    lacking[Capability::RecordedProfile] = kNoRecordedProfile;
    if (!program.hasProgram()) {
        lacking[Capability::Diff] = "an AOTInductor package saved without its exported program "
                                    "has no module tree or weights to compare";
    }
    return lacking;
}

} // namespace

ExportedModel::ExportedModel(ExportedProgram program)
    : program_(std::move(program))
    , info_(program_.info()) {
    info_.format =
        program_.hasProgram() && !program_.compiled() ? "torch.export" : "AOTInductor package";
    info_.lacking = lackingOf(program_);
}

Expected<std::unique_ptr<Model>> ExportedModel::open(const std::string& path, ProbeResult probe) {
    auto program = ExportedProgram::open(path, std::move(probe));
    if (!program) {
        return program.error();
    }
    return std::unique_ptr<Model>(new ExportedModel(std::move(program).value()));
}

Status ExportedModel::openable(const ProbeResult& probe) {
    // Its JSON read and checked, as opening it would (no weights are read).
    auto program = ExportedProgram::open(probe.path, probe);
    return program ? Status() : Status(program.error());
}

Expected<std::string> ExportedModel::code(const std::string& modulePath,
                                          const std::string& method) const {
    return program_.code(modulePath, method);
}

Expected<std::string> ExportedModel::graph(const std::string& modulePath, const std::string& method,
                                           bool) const {
    return program_.graph(modulePath, method); // flat: inlined or not, the same graph
}

Expected<GraphModel> ExportedModel::graphModel(const std::string& modulePath,
                                               const std::string& method, bool) const {
    return program_.graphModel(modulePath, method);
}

Expected<RunResult> ExportedModel::run(const RunRequest& request) {
    if (auto error = refuseRecordedProfile(request, info_)) {
        return *error;
    }
    if (!info_.lacks(Capability::Run).empty()) {
        return lackingError(Capability::Run);
    }
    return runExported(program_, runner_, request);
}

Status ExportedModel::observable() {
    if (!info_.lacks(Capability::Activations).empty()) {
        return lackingError(Capability::Activations);
    }
    return openExported(program_, runner_);
}

Expected<ActivationReport> ExportedModel::activations(const ActivationRequest& request) {
    if (auto error = observable()) {
        return *error;
    }
    return withReference(*this, request,
                         [this](const ActivationRequest& r) { return runner_.activations(r); });
}

Expected<std::shared_ptr<const ModuleValues>>
ExportedModel::moduleOutputs(const RunRequest& request) {
    if (auto error = observable()) {
        return *error;
    }
    return runner_.moduleOutputs(request);
}

Status ExportedModel::saveSampleInputs(const std::string& path) {
    if (!program_.hasProgram() || !program_.program().sampleInputs) {
        return Model::saveSampleInputs(path);
    }
    if (auto error = openExported(program_, runner_)) {
        return error;
    }
    return runner_.saveSampleInputs(path);
}

} // namespace scriptscope::formats
