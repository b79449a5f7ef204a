// A format a format library adds, as a Model: what its reader gave (added_formats.h), described
// and not run.
#include "format_models.h"

#include <added_formats.h>
#include <parameter_counts.h>

namespace scriptscope::formats {

namespace {

// What a format that is described and not run lacks, each with why.
std::map<Capability, std::string> lackingOf(const AddedFormat& format) {
    const std::string described = format.reader.patterns.name + " are read by the format library " +
                                  format.library + ", which describes them: ScriptScope does not ";
    std::map<Capability, std::string> lacking;
    lacking[Capability::InlinedGraph] = described + "inline their graphs";
    lacking[Capability::Run] = described + "run them";
    lacking[Capability::Profile] = described + "run them, so they have no profile";
    lacking[Capability::Statistics] = described + "read their weights' values";
    lacking[Capability::Activations] = described + "run them, so they have no activations";
    lacking[Capability::Optimize] = described + "optimise them";
    lacking[Capability::Diff] = described + "diff them";
    lacking[Capability::RecordedProfile] = described + "read recorded runs over them";
    return lacking;
}

// A reader is the library's code: what it throws is its error, not this process's end.
bool readSafely(const AddedFormat& format, const std::string& path, ModelInfo& info,
                std::string& error) {
    try {
        return format.reader.read(path, info, error);
    } catch (const std::exception& e) {
        error = std::string("its reader threw: ") + e.what();
    } catch (...) {
        error = "its reader threw";
    }
    return false;
}

} // namespace

Expected<std::unique_ptr<Model>> AddedModel::open(const std::string& path, ProbeResult probe) {
    const AddedFormat* format = addedFormatOf(probe);
    if (!format) {
        return Error{ErrorKind::Format,
                     "'" + path + "': no format library reads " +
                         (probe.addedFormat.empty() ? std::string("it") : probe.addedFormat)};
    }
    auto model = std::unique_ptr<AddedModel>(new AddedModel());
    ModelInfo& info = model->info_;
    std::string error;
    if (!readSafely(*format, path, info, error)) {
        return Error{ErrorKind::Format, "'" + path + "' is " + format->reader.patterns.one +
                                            " that " + format->library + " cannot read: " +
                                            (error.empty() ? "it gave no reason" : error)};
    }
    if (info.modules.empty()) {
        info.modules.emplace_back(); // the root, which every tree has
    }
    info.path = path;
    if (info.format.empty()) {
        info.format = format->reader.patterns.name;
    }
    info.probe = std::move(probe);
    // The counts are ScriptScope's, from the tensors the reader listed.
    info.parameterCount = info.parameterBytes = info.bufferBytes = info.methodCount = 0;
    for (ModuleInfo& module : info.modules) {
        countOwnParameters(module);
        module.totalParameterCount = module.totalBytes = 0;
    }
    info.sumTotals();
    info.lacking = lackingOf(*format);
    return std::unique_ptr<Model>(std::move(model));
}

Status AddedModel::openable(const ProbeResult& probe) {
    if (!addedFormatOf(probe)) {
        return Error{ErrorKind::Format, "'" + probe.path + "': no format library reads it"};
    }
    return std::nullopt;
}

Expected<const MethodInfo*> AddedModel::method(const std::string& modulePath,
                                               const std::string& name) const {
    const ModuleInfo* module = info_.findModule(modulePath);
    if (!module) {
        return Error{ErrorKind::Input, "'" + info_.path + "' has no module '" + modulePath + "'"};
    }
    for (const MethodInfo& method : module->methods) {
        if (method.name == name) {
            return &method;
        }
    }
    return Error{ErrorKind::Input, "module '" + (modulePath.empty() ? "(root)" : modulePath) +
                                       "' of '" + info_.path + "' has no method '" + name + "'"};
}

Expected<std::string> AddedModel::code(const std::string& modulePath,
                                       const std::string& name) const {
    auto found = method(modulePath, name);
    if (!found) {
        return found.error();
    }
    return (*found)->code;
}

Expected<std::string> AddedModel::graph(const std::string& modulePath, const std::string& name,
                                        bool inlined) const {
    if (inlined) {
        return lackingError(Capability::InlinedGraph);
    }
    auto found = method(modulePath, name);
    if (!found) {
        return found.error();
    }
    return (*found)->graph;
}

Expected<GraphModel> AddedModel::graphModel(const std::string& modulePath, const std::string& name,
                                            bool) const {
    auto found = method(modulePath, name);
    if (!found) {
        return found.error();
    }
    return Error{ErrorKind::Format, "'" + info_.path + "': " + info_.format +
                                        " are described by a format library, which gives the "
                                        "graph as text and not as a drawing"};
}

} // namespace scriptscope::formats
