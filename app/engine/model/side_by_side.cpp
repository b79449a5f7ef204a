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

// Every tensor leaf of an output, with where it sits ("output", "output[1]").
void tensorLeaves(const OutputValue& v, const std::string& where,
                  std::vector<std::pair<std::string, const OutputValue*>>& out) {
    if (v.kind == OutputValue::Kind::Tensor) {
        out.emplace_back(where, &v);
    }
    for (const OutputValue& child : v.children) {
        tensorLeaves(child, where + "[" + child.key + "]", out);
    }
}

// The model's forward runs and keeps the example inputs it was exported with.
bool keepsSampleInputs(const ModelInfo& info) {
    return info.lacks(Capability::Run).empty() && !info.modules.empty() &&
           !info.modules.front().methods.empty() &&
           info.modules.front().methods.front().sampleInputs;
}

} // namespace

OutputComparison compareOutputs(const OutputValue& a, const OutputValue& b) {
    std::vector<std::pair<std::string, const OutputValue*>> la, lb;
    tensorLeaves(a, "output", la);
    tensorLeaves(b, "output", lb);
    OutputComparison result;
    result.compared = true;
    if (la.size() != lb.size()) {
        result.note =
            std::to_string(la.size()) + " output tensors against " + std::to_string(lb.size());
        result.maxAbsDiff = std::numeric_limits<double>::infinity();
        return result;
    }
    for (size_t i = 0; i < la.size(); ++i) {
        const OutputValue& x = *la[i].second;
        const OutputValue& y = *lb[i].second;
        if (x.shape != y.shape || x.values.size() != y.values.size()) {
            result.maxAbsDiff = std::numeric_limits<double>::infinity();
            result.note =
                la[i].first + ": " + formatDims(x.shape) + " against " + formatDims(y.shape);
            return result;
        }
        for (size_t k = 0; k < x.values.size(); ++k) {
            const double d = std::abs(double(x.values[k]) - double(y.values[k]));
            if (d > result.maxAbsDiff || std::isnan(d)) {
                result.maxAbsDiff = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
                result.note = la[i].first + ", flat index " + std::to_string(k);
            }
        }
    }
    return result;
}

Expected<SideBySide> runSideBySide(const RunRequest& given, Model& a, Model& b) {
    RunRequest request = given;
    request.valuesLimit = std::max<size_t>(request.valuesLimit, size_t{16} << 20);
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
        out.outputs = compareOutputs(out.runA->output, out.runB->output);
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
    auto sides = runSideBySide(request.run, model, *other);
    if (!sides) {
        return sides.error();
    }
    ActivationReport report;
    report.model = model.info().path;
    report.method = request.run.method;
    report.comparison = "the outputs of " + request.referenceModel;
    report.tolerance = request.tolerance;
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
