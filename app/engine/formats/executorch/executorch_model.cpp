// ExecuTorch programs (.pte) as a Model: ExecuTorchProgram (executorch/) reads, shows and draws
// them without ExecuTorch; where the build links ExecuTorch's runtime, PteSession runs them.
#include "format_models.h"

#include <algorithm>
#include <map>
#include <string>

#include <etdump_profile.h>
#include <etdump_reader.h>
#include <stats.h>

namespace scriptscope::formats {

namespace {

// What a .pte cannot do here, each with why: what ModelInfo::lacking carries to the views.
std::map<Capability, std::string> lackingOf(const std::string& path) {
    std::map<Capability, std::string> lacking;
#ifndef SCRIPTSCOPE_HAS_EXECUTORCH
    lacking[Capability::Run] =
        "this build has no ExecuTorch runtime: it shows and draws ExecuTorch programs but does "
        "not run them. Build ScriptScope with a Python that has executorch (scripts/setup.sh "
        "--torch-venv installs it), or in Python: "
        "executorch.runtime.Runtime.get().load_program('" +
        path + "').load_method('forward').execute(inputs)";
    lacking[Capability::Profile] =
        "it does not run here; an ETDump recorded where it ran opens over it (scriptscope-cli "
        "run --etdump, or the Run workspace's Open ETDump)";
#else
    (void)path;
#endif
#ifndef SCRIPTSCOPE_HAS_EXECUTORCH
    lacking[Capability::Activations] = "it does not run here, so it has no activations";
#endif
    lacking[Capability::Optimize] =
        "an ExecuTorch program is already lowered: ScriptScope's passes work on TorchScript";
    lacking[Capability::Statistics] =
        "parameter statistics read TorchScript weights; a .pte's constants are listed with their "
        "shapes and sizes";
    lacking[Capability::InlinedGraph] = "an ExecuTorch method is one flat list of instructions";
    lacking[Capability::Diff] =
        "an ExecuTorch program has no module tree or weights to diff; compare runs it against "
        "another model (its export, a .pt) value by value";
    return lacking;
}

} // namespace

ExecuTorchModel::ExecuTorchModel(ExecuTorchProgram program)
    : program_(std::move(program))
    , info_(program_.info()) {
    info_.lacking = lackingOf(info_.path);
    if (auto record = readEtRecordBeside(info_.path)) {
        etrecord_ = std::move(record).value();
        addRecordedModules();
    }
}

// The model's modules the ETRecord names, as rows under each method's row ("forward.conv1"):
// where a profile grouped by them puts its times, and where a comparison's modules are.
void ExecuTorchModel::addRecordedModules() {
    for (const auto& [method, modules] : etrecord_->moduleTypes) {
        const auto owner = std::find_if(info_.modules.begin(), info_.modules.end(),
                                        [&](const ModuleInfo& m) { return m.path == method; });
        if (owner == info_.modules.end()) {
            continue;
        }
        const size_t ownerIndex = static_cast<size_t>(owner - info_.modules.begin());
        std::map<std::string, size_t> rows; // path -> index in info_.modules
        for (const auto& [path, type] : modules) {
            // Every module on the way down has a row, whether or not a node named it.
            for (size_t dot = path.find('.');; dot = path.find('.', dot + 1)) {
                const std::string prefix = path.substr(0, dot);
                if (!rows.count(prefix)) {
                    const size_t parent = prefix.rfind('.');
                    ModuleInfo row;
                    row.path = method + "." + prefix;
                    row.name = parent == std::string::npos ? prefix : prefix.substr(parent + 1);
                    const auto known = modules.find(prefix);
                    row.type = known != modules.end() ? known->second : "";
                    row.attributes.push_back(
                        {"from", "ETRecord", "nn_module_stack of the exported program"});
                    const size_t parentIndex = parent == std::string::npos
                                                   ? ownerIndex
                                                   : rows.at(prefix.substr(0, parent));
                    info_.modules[parentIndex].children.push_back(row.path);
                    rows[prefix] = info_.modules.size();
                    info_.modules.push_back(std::move(row));
                }
                if (dot == std::string::npos) {
                    break;
                }
            }
        }
    }
}

Expected<std::unique_ptr<Model>> ExecuTorchModel::open(const std::string& path, ProbeResult probe) {
    auto program = ExecuTorchProgram::open(path, std::move(probe));
    if (!program) {
        return program.error();
    }
    return std::unique_ptr<Model>(new ExecuTorchModel(std::move(program).value()));
}

Status ExecuTorchModel::openable(const ProbeResult& probe) {
    auto program = readPteFile(probe.path);
    if (!program) {
        return Error{ErrorKind::Format, "'" + probe.path +
                                            "' is an ExecuTorch program that cannot be read: " +
                                            program.error().message};
    }
    return std::nullopt;
}

FileDetails ExecuTorchModel::details(const ProbeResult& probe) {
    auto program = readPteFile(probe.path);
    if (!program) {
        // As a run says it: what in the file is damaged.
        FileDetails damaged;
        damaged.damage = program.error().message;
        return damaged;
    }
    return {"executorch",
            executorchDetailsText(program.value()),
            executorchDetailsJson(program.value()),
            {}};
}

Expected<std::string> ExecuTorchModel::code(const std::string&, const std::string& method) const {
    return program_.code(method);
}

Expected<std::string> ExecuTorchModel::graph(const std::string&, const std::string& method,
                                             bool) const {
    return program_.graph(method);
}

Expected<GraphModel> ExecuTorchModel::graphModel(const std::string&, const std::string& method,
                                                 bool) const {
    return program_.graphModel(method);
}

// Runs recorded elsewhere (an ETDump): read, not run, so every build has them.
Expected<RunResult> ExecuTorchModel::recordedRun(const RunRequest& request) const {
    auto dump = readEtdumpFile(request.etdumpPath);
    if (!dump) {
        return dump.error();
    }
    auto profiled =
        profileOfEtdump(*dump, program_, request.method, 0, etrecord_ ? &*etrecord_ : nullptr);
    if (!profiled) {
        Error error = profiled.error();
        error.message = "'" + request.etdumpPath + "': " + error.message;
        return error;
    }
    RunResult result;
    result.model = info_.path;
    result.method = request.method;
    result.device = "recorded";
    result.deviceName = "the runs an ETDump recorded";
    result.samplesMs = profiled->runsMs;
    result.stats = computeStats(result.samplesMs);
    result.inputDescriptions.push_back("the " + std::to_string(profiled->runs) + " run" +
                                       (profiled->runs == 1 ? "" : "s") + " recorded in " +
                                       request.etdumpPath);
    for (const std::string& note : profiled->notes) {
        result.inputDescriptions.push_back(note);
    }
    result.output.kind = OutputValue::Kind::Other;
    result.output.text = "none: an ETDump keeps the runs' times, not their outputs";
    result.profile = std::move(profiled->profile);
    result.profile.runs = static_cast<int64_t>(profiled->runs);
    result.profiled = true;
    return result;
}

Expected<RunResult> ExecuTorchModel::run(const RunRequest& request) {
    if (!request.etdumpPath.empty()) {
        return recordedRun(request);
    }
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
    auto runs = session(Capability::Run);
    if (!runs) {
        return runs.error();
    }
    return (*runs)->run(request);
#else
    return lackingError(Capability::Run);
#endif
}

Expected<ActivationReport> ExecuTorchModel::activations(const ActivationRequest& request) {
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
    auto runs = session(Capability::Activations);
    if (!runs) {
        return runs.error();
    }
    PteSession* pte = *runs;
    return withReference(*this, request,
                         [pte](const ActivationRequest& r) { return pte->activations(r); });
#else
    (void)request;
    return lackingError(Capability::Activations);
#endif
}

Expected<std::shared_ptr<const ModuleValues>>
ExecuTorchModel::moduleOutputs(const RunRequest& request) {
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
    auto runs = session(Capability::Activations);
    if (!runs) {
        return runs.error();
    }
    return (*runs)->moduleOutputs(request);
#else
    (void)request;
    return lackingError(Capability::Activations);
#endif
}

Status ExecuTorchModel::saveSampleInputs(const std::string& path) {
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
    auto runs = session(Capability::Run);
    if (runs) {
        return (*runs)->saveSampleInputs(path, "forward");
    }
#endif
    return Model::saveSampleInputs(path);
}

#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
Expected<PteSession*> ExecuTorchModel::session(Capability capability) {
    if (!info_.lacks(capability).empty()) {
        return lackingError(capability);
    }
    if (!session_) {
        session_ = std::make_unique<PteSession>(program_, etrecord_ ? &*etrecord_ : nullptr);
    }
    return session_.get();
}
#endif

} // namespace scriptscope::formats
