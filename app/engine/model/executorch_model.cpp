// ExecuTorch programs (.pte) as a Model: ExecuTorchProgram (executorch/) reads, shows and draws
// them without ExecuTorch; nothing runs them in this build.
#include "formats.h"

namespace scriptscope::formats {

namespace {

// What a .pte cannot do here, each with why: what ModelInfo::lacking carries to the views.
std::map<Capability, std::string> lackingOf(const std::string& path) {
    const std::string runtime =
        "this build reads ExecuTorch programs without ExecuTorch's runtime: it shows and draws "
        "them but does not run them. In Python: "
        "executorch.runtime.Runtime.get().load_program('" +
        path + "').load_method('forward').execute(inputs)";
    std::map<Capability, std::string> lacking;
    lacking[Capability::Run] = runtime;
    lacking[Capability::Profile] = "it does not run here, so it has no profile";
    lacking[Capability::Activations] = "it does not run here, so it has no activations";
    lacking[Capability::Optimize] =
        "an ExecuTorch program is already lowered: ScriptScope's passes work on TorchScript";
    lacking[Capability::Statistics] =
        "parameter statistics read TorchScript weights; a .pte's constants are listed with their "
        "shapes and sizes";
    lacking[Capability::InlinedGraph] = "an ExecuTorch method is one flat list of instructions";
    lacking[Capability::Diff] =
        "ExecuTorch programs are not compared with other models yet; the Graph tab lists every "
        "value and instruction";
    return lacking;
}

} // namespace

ExecuTorchModel::ExecuTorchModel(ExecuTorchProgram program)
    : program_(std::move(program))
    , info_(program_.info()) {
    info_.lacking = lackingOf(info_.path);
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
        return {};
    }
    return {"executorch", executorchDetailsText(program.value()),
            executorchDetailsJson(program.value())};
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

} // namespace scriptscope::formats
