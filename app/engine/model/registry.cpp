// The registry of formats: the one place that knows which formats exist. Each row names the
// probe's kind a format claims, how it is opened, and what keeps a file of it from opening here.
// A new format is a folder of its own, app/engine/formats/<format>/ (its Model declared in
// format_models.h), and one row below (docs/ARCHITECTURE.md, "Formats").
#include "exported_details.h"
#include "format_models.h"

#include <input_spec.h>
#include <probe.h>
#include <scratch_file.h>

#include <algorithm>
#include <iterator>
#include <optional>

namespace scriptscope {

namespace {

struct Format {
    FileKind kind;
    Expected<std::unique_ptr<Model>> (*open)(const std::string& path, ProbeResult probe,
                                             const OpenOptions& options);
    Status (*openable)(const ProbeResult& probe);
    FileDetails (*details)(const ProbeResult& probe); // nullptr: nothing beyond the probe
};

const Format kFormats[] = {
    {FileKind::TorchScript, &formats::TorchScriptModel::open, &formats::TorchScriptModel::openable,
     &formats::TorchScriptModel::details},
    {FileKind::ExportedProgram,
     [](const std::string& path, ProbeResult probe, const OpenOptions&) {
         return formats::ExportedModel::open(path, std::move(probe));
     },
     &formats::ExportedModel::openable, &formats::exportedDetails},
    {FileKind::ExecuTorch,
     [](const std::string& path, ProbeResult probe, const OpenOptions&) {
         return formats::ExecuTorchModel::open(path, std::move(probe));
     },
     &formats::ExecuTorchModel::openable, &formats::ExecuTorchModel::details},
    // What format libraries add (formats/added/): the probe names which one claimed the file.
    {FileKind::Added,
     [](const std::string& path, ProbeResult probe, const OpenOptions&) {
         return formats::AddedModel::open(path, std::move(probe));
     },
     &formats::AddedModel::openable, nullptr},
};

const Format* formatOf(const ProbeResult& probe) {
    for (const Format& format : kFormats) {
        if (format.kind == probe.kind) {
            return &format;
        }
    }
    return nullptr;
}

} // namespace

Expected<RunResult> Model::run(const RunRequest&) {
    return lackingError(Capability::Run);
}

Expected<ActivationReport> Model::activations(const ActivationRequest&) {
    return lackingError(Capability::Activations);
}

Expected<std::shared_ptr<const ModuleValues>> Model::moduleOutputs(const RunRequest&) {
    return lackingError(Capability::Activations);
}

Expected<OptimizeResult> Model::optimize(const OptimizeRequest&) {
    return lackingError(Capability::Optimize);
}

Expected<std::vector<OutputValue>> Model::tensorStatistics(const std::string&) const {
    return lackingError(Capability::Statistics);
}

Status Model::saveSampleInputs(const std::string&) {
    return Error{ErrorKind::Input, "'" + info().path + "' keeps no example inputs"};
}

Error Model::lackingError(Capability capability) const {
    std::string why = info().lacks(capability);
    if (why.empty()) {
        why = std::string("this format does not offer ") + toString(capability);
    }
    return Error{ErrorKind::Format, "'" + info().path + "': " + why};
}

Status loadOperatorLibrary(const std::string& path) {
    return Session::loadOperatorLibrary(path);
}

Expected<std::unique_ptr<Model>> openModel(const std::string& path, const OpenOptions& options) {
    ProbeResult probe = probeArchive(path);
    const Format* format = formatOf(probe);
    if (!format) {
        return unopenedError(probe);
    }
    return format->open(path, std::move(probe), options);
}

Status openable(const ProbeResult& probe) {
    const Format* format = formatOf(probe);
    return format ? format->openable(probe) : Status(unopenedError(probe));
}

FileDetails fileDetails(const ProbeResult& probe) {
    const Format* format = formatOf(probe);
    return format && format->details ? format->details(probe) : FileDetails{};
}

Expected<ArchiveDiff> diffModels(const Model& a, const Model& b) {
    using formats::ExportedModel;
    using formats::TorchScriptModel;
    for (const Model* side : {&a, &b}) {
        if (const std::string why = side->info().lacks(Capability::Diff); !why.empty()) {
            return Error{ErrorKind::Input, "'" + side->info().path + "': " + why};
        }
    }
    const auto* scriptedA = dynamic_cast<const TorchScriptModel*>(&a);
    const auto* scriptedB = dynamic_cast<const TorchScriptModel*>(&b);
    const auto* exportedA = dynamic_cast<const ExportedModel*>(&a);
    const auto* exportedB = dynamic_cast<const ExportedModel*>(&b);
    Expected<ArchiveDiff> diff = Error{ErrorKind::Internal, "not compared"};
    if (scriptedA && scriptedB) {
        diff = scriptedA->session().diff(scriptedB->session());
    } else if (scriptedA && exportedB) {
        diff = scriptedA->session().diff(exportedB->program());
    } else if (exportedA && scriptedB) {
        diff = scriptedB->session().diff(exportedA->program());
        if (diff) {
            diff = reversed(std::move(diff).value());
        }
    } else {
        return Error{ErrorKind::Input, "a " + a.info().format + " archive and a " +
                                           b.info().format +
                                           " archive are not compared yet: compare each with its "
                                           "TorchScript twin"};
    }
    if (diff) {
        diff.value().formatA = a.info().format;
        diff.value().formatB = b.info().format;
        diff.value().treeAndTensorsOnly = !(scriptedA && scriptedB);
    }
    return diff;
}

Expected<std::unique_ptr<Model>> openReferenceModel(const ActivationRequest& request) {
    // Already loaded with the open model (the CLI's --op-library, the GUI's remembered ones); one
    // refused then was said then, and is no reason to refuse the comparison: the reference names
    // an operator it lacks.
    for (const std::string& library : request.referenceOperatorLibraries) {
        (void)loadOperatorLibrary(library);
    }
    OpenOptions options;
    options.includeCode = false;
    auto reference = openModel(request.referenceModel, options);
    if (!reference) {
        Error error = reference.error();
        error.message = request.referenceModel + ": " + error.message;
        return error;
    }
    return reference;
}

namespace formats {

Expected<ActivationReport> withReference(
    Model& model, ActivationRequest request,
    const std::function<Expected<ActivationReport>(const ActivationRequest&)>& activations) {
    if (request.referenceModel.empty() || request.referenceValues) {
        return activations(request);
    }
    const auto fromReference = [&request](Error error) {
        error.message = request.referenceModel + ": " + error.message;
        return error;
    };
    auto reference = openReferenceModel(request);
    if (!reference) {
        return reference.error();
    }
    // Both run on the same inputs: with none given, or 'sample' for each (each model's own
    // example inputs, which two exports need not share: a .pte's plan gives seeded random ones, a
    // .pt2 keeps what torch.export was given), the sample inputs one of them keeps, the open
    // model's first.
    const bool someSamples =
        std::any_of(request.run.inputs.begin(), request.run.inputs.end(),
                    [](const InputSpec& spec) { return spec.kind == InputSpec::Kind::Sample; });
    const bool onSamples = onSampleInputs(request.run);
    if (someSamples && !onSamples) {
        return Error{ErrorKind::Input,
                     "two models are compared on the same inputs, and 'sample' is each model's "
                     "own example: give every input, or 'sample' for all of them"};
    }
    std::optional<ScratchFile> samples;
    if (onSamples) {
        samples.emplace("compare");
        if (!model.saveSampleInputs(samples->path()) ||
            !(*reference)->saveSampleInputs(samples->path())) {
            request.run.inputsFile = samples->path();
            request.run.inputs.clear();
        }
    }
    auto values = (*reference)->moduleOutputs(request.run);
    if (!values) {
        return fromReference(values.error());
    }
    request.referenceValues = std::move(values).value();
    return activations(request);
}

} // namespace formats

} // namespace scriptscope
