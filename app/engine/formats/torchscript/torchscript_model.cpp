// TorchScript archives as a Model: the Session (session.h) behind the interface.
#include "format_models.h"

#include <algorithm>

namespace scriptscope::formats {

Expected<std::unique_ptr<Model>> TorchScriptModel::open(const std::string& path, ProbeResult probe,
                                                        const OpenOptions& options) {
    auto model = std::make_unique<TorchScriptModel>();
    LoadOptions load;
    load.device = options.device;
    load.includeCode = options.includeCode;
    load.includeInlinedGraph = options.includeInlinedGraph;
    auto info = model->session_.load(path, std::move(probe), load);
    if (!info) {
        return info.error();
    }
    model->info_ = std::move(info).value();
    model->info_.format = "TorchScript";
    model->info_.lacking[Capability::RecordedProfile] = kNoRecordedProfile;
    return std::unique_ptr<Model>(std::move(model));
}

Status TorchScriptModel::openable(const ProbeResult& p) {
    if (p.version < 0 || p.version > p.maxSupportedVersion) {
        return Error{ErrorKind::Version, p.versionText.empty()
                                             ? "its version record is missing"
                                             : "serialization version " + p.versionText +
                                                   ", this LibTorch reads up to " +
                                                   std::to_string(p.maxSupportedVersion)};
    }
    if (!p.damage.empty()) {
        return Error{ErrorKind::Format, "damaged: " + p.damage};
    }
    const auto missing = std::find_if(p.operators.begin(), p.operators.end(),
                                      [](const OperatorUse& op) { return !op.registered; });
    if (missing != p.operators.end()) {
        return Error{ErrorKind::MissingOperator, missing->name + " is not registered"};
    }
    return std::nullopt;
}

FileDetails TorchScriptModel::details(const ProbeResult& p) {
    FileDetails details;
    details.text = "Archive     " + p.archiveName + "/\n" + "Version     " +
                   (p.versionText.empty() ? std::string("(missing)") : p.versionText) +
                   " (this LibTorch " + libtorchVersion() + " reads up to " +
                   std::to_string(p.maxSupportedVersion) + ")\n";
    return details;
}

Expected<std::string> TorchScriptModel::code(const std::string& modulePath,
                                             const std::string& method) const {
    return session_.code(modulePath, method);
}

Expected<std::string> TorchScriptModel::graph(const std::string& modulePath,
                                              const std::string& method, bool inlined) const {
    return session_.graph(modulePath, method, inlined);
}

Expected<GraphModel> TorchScriptModel::graphModel(const std::string& modulePath,
                                                  const std::string& method, bool inlined) const {
    return session_.graphModel(modulePath, method, inlined);
}

Expected<RunResult> TorchScriptModel::run(const RunRequest& request) {
    if (auto error = refuseRecordedProfile(request, info_)) {
        return *error;
    }
    return session_.run(request);
}

Expected<ActivationReport> TorchScriptModel::activations(const ActivationRequest& request) {
    return withReference(*this, request,
                         [this](const ActivationRequest& r) { return session_.activations(r); });
}

Expected<std::shared_ptr<const ModuleValues>>
TorchScriptModel::moduleOutputs(const RunRequest& request) {
    return session_.moduleOutputs(request);
}

Expected<OptimizeResult> TorchScriptModel::optimize(const OptimizeRequest& request) {
    return session_.optimize(request);
}

Expected<std::vector<OutputValue>>
TorchScriptModel::tensorStatistics(const std::string& modulePath) const {
    return session_.tensorStatistics(modulePath);
}

} // namespace scriptscope::formats
