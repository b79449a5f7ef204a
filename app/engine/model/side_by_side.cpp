#include "side_by_side.h"

#include <format.h>
#include <input_spec.h>
#include <scratch_file.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace scriptscope {

namespace {

// The model's forward runs and keeps the example inputs it was exported with.
bool keepsSampleInputs(const ModelInfo& info) {
    return info.lacks(Capability::Run).empty() && !info.modules.empty() &&
           !info.modules.front().methods.empty() &&
           info.modules.front().methods.front().sampleInputs;
}

} // namespace

Expected<SideBySide> runSideBySide(const RunRequest& given, Model& a, Model& b,
                                   const Criterion& criterion) {
    RunRequest request = given;
    request.valuesLimit = std::max(request.valuesLimit, kComparedOutputValues);
    SideBySide out;
    out.outputs.note = "outputs not compared: give inputs to run both on the same inputs";
    // No inputs given (or 'sample' for each): both run on the example inputs one of them keeps
    // (a .pt2's), if any.
    std::optional<ScratchFile> samples;
    if (onSampleInputs(request)) {
        for (Model* side : {&a, &b}) {
            if (!keepsSampleInputs(side->info())) {
                continue;
            }
            samples.emplace("outputs-samples");
            if (auto error = side->saveSampleInputs(samples->path())) {
                out.outputs.note = "outputs not compared: " + error->message;
            } else {
                request.inputsFile = samples->path();
                request.inputs.clear();
            }
            break;
        }
    }
    const bool runs = !onSampleInputs(request); // given inputs, or the samples written above
    const std::string cannotRun =
        !a.info().lacks(Capability::Run).empty()
            ? "'" + a.info().path + "': " + a.info().lacks(Capability::Run)
        : !b.info().lacks(Capability::Run).empty()
            ? "'" + b.info().path + "': " + b.info().lacks(Capability::Run)
            : std::string();
    if (runs && !cannotRun.empty()) {
        out.outputs.note = "outputs not compared: " + cannotRun;
    } else if (runs) {
        auto first = a.run(request);
        auto second = first ? b.run(request) : Expected<RunResult>(first.error());
        if (!second) {
            return second.error();
        }
        out.runA = std::move(first).value();
        out.runB = std::move(second).value();
        out.outputs = compareOutputs(out.runA->output, out.runB->output, criterion);
    }
    return out;
}

std::string valuesUnseen(const Model& model) {
    const std::string why = model.info().lacks(Capability::Activations);
    return why.empty() || !model.info().lacks(Capability::Run).empty()
               ? std::string()
               : "'" + model.info().path + "': " + why;
}

Expected<ActivationReport> activationsOrOutputs(Model& model, const ActivationRequest& request) {
    if (request.referenceModel.empty()) {
        return model.activations(request);
    }
    std::string why = valuesUnseen(model);
    std::unique_ptr<Model> other;
    if (why.empty()) {
        auto recorded = model.activations(request);
        if (recorded) {
            return recorded;
        }
        // The other model's values cannot be seen (its module outputs were not recorded)?
        auto opened = openReferenceModel(request);
        if (!opened || (why = valuesUnseen(**opened)).empty()) {
            return recorded;
        }
        other = std::move(opened).value();
    } else {
        auto opened = openReferenceModel(request);
        if (!opened) {
            return opened.error();
        }
        other = std::move(opened).value();
    }
    auto sides = runSideBySide(request.run, model, *other, request.criterion);
    if (!sides) {
        return sides.error();
    }
    ActivationReport report;
    report.model = model.info().path;
    report.method = request.run.method;
    report.comparison = "the outputs of " + request.referenceModel;
    report.criterion = request.criterion;
    report.outputsOnly.why = why;
    report.outputsOnly.outputs = sides->outputs;
    if (sides->runA && sides->runB) {
        report.device = sides->runA->device;
        report.outputsOnly.p50Ms = sides->runA->stats.p50;
        report.outputsOnly.otherP50Ms = sides->runB->stats.p50;
        report.outputsOnly.runs = static_cast<int>(sides->runA->samplesMs.size());
    }
    return report;
}

} // namespace scriptscope
