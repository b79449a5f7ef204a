// Where numbers go wrong in a TorchScript method: every value one run computes (its graph's taps,
// graph_tap.h), its first NaN or Inf, and a second run or another model compared value by value
// (value_compare.cpp).
#include "graph_tap.h"
#include "session.h"
#include "session_internal.h"
#include "stats.h"
#include "torch_values.h"
#include "value_tap.h"
#include "verdict.h"

#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace scriptscope {

namespace {

using detail::instrument;
using detail::Instrumented;
using detail::OccurrenceKey;
using detail::placedModule;
using detail::runInstrumented;
using detail::shapeText;
using detail::TapRun;
using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

} // namespace

Expected<ActivationReport> Session::activations(const ActivationRequest& request) {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    if (request.bins < 1 || request.bins > 4096) {
        return Error{ErrorKind::Input, "the histogram takes 1 to 4096 bins"};
    }
    auto method = detail::findMethod(*impl_->module, "", request.run.method);
    if (!method) {
        return method.error();
    }
    auto prepared = detail::prepareRun(*impl_->module, impl_->device, *method, request.run);
    if (!prepared) {
        return prepared.error();
    }
    ActivationReport report;
    report.model = impl_->path;
    report.method = request.run.method;
    report.device = prepared->device.str();
    report.criterion = request.criterion;
    const int compareModes =
        (request.compareDevice.empty() ? 0 : 1) + (request.compareRun ? 1 : 0) +
        (request.referenceFile.empty() ? 0 : 1) + (request.referenceModel.empty() ? 0 : 1);
    if (compareModes > 1) {
        return Error{ErrorKind::Input,
                     "compare with one thing at a time: a device, other inputs, a file of "
                     "values or a model"};
    }
    if (!request.referenceModel.empty() && !request.referenceValues) {
        return Error{ErrorKind::Internal, "the reference model " + request.referenceModel +
                                              " is opened and run by the model layer "
                                              "(Model::activations), not by a Session"};
    }
    try {
        Instrumented instrumented = instrument(*impl_->module, *method);
        // The pins, and references by module path: from a file, or from another model's run.
        std::shared_ptr<const ModuleValues> reference;
        if (auto error = detail::prepareRecording(request, instrumented.sites,
                                                  instrumented.siteModules, report, reference)) {
            return *error;
        }
        TapRun run;
        run.reference = reference.get();
        run.bins = request.bins;
        run.pinBudget = request.pinBytes;
        // A second run to compare with, node by node: on another device, or with other inputs.
        std::optional<RunRequest> second;
        std::string secondName;
        if (!request.compareDevice.empty()) {
            auto device = detail::parseDevice(request.compareDevice);
            if (!device) {
                return device.error();
            }
            second = request.run;
            second->device = device->str();
            secondName = device->str();
            report.comparison = "the same run on " + device->str();
        } else if (request.compareRun) {
            second = *request.compareRun;
            second->method = request.run.method;
            secondName = "the other inputs";
            report.comparison = "the run with the other inputs";
        }
        if (second) {
            run.keepAll = true;
            run.keepBudget = request.compareBytes;
        }
        detail::MemoryWatch memory(
            detail::storagesBefore(*impl_->module, *instrumented.graph, prepared->inputs));
        run.memory = &memory;
        const auto start = std::chrono::steady_clock::now();
        const c10::IValue output =
            runInstrumented(instrumented, *impl_->module, prepared->inputs, run, prepared->device);
        report.runMs = detail::elapsedMs(start);
        run.memory = nullptr;
        report.memory = memory.finish(run.records);
        report.memory.note = "each storage a value made counts until TorchScript's interpreter "
                             "lets it go (seen when the next value is made)";
        if (second) {
            auto secondInputs = detail::prepareRun(*impl_->module, impl_->device, *method, *second);
            if (!secondInputs) {
                Error e = secondInputs.error();
                e.message = "the run to compare with: " + e.message;
                return e;
            }
            if (request.compareRun) {
                std::string inputs;
                for (const auto& d : secondInputs->descriptions) {
                    inputs += (inputs.empty() ? "" : ", ") + d;
                }
                secondName =
                    (inputs.empty() ? "no inputs" : inputs) + " on " + secondInputs->device.str();
                report.comparison = "the run with " + secondName;
            }
            TapRun other;
            other.bins = 1;
            other.against = &run.kept;
            runInstrumented(instrumented, *impl_->module, secondInputs->inputs, other,
                            secondInputs->device);
            for (const auto& [key, difference] : other.differences) {
                const auto at = run.index.find(key);
                if (at == run.index.end()) {
                    continue;
                }
                detail::copyComparison(difference, run.records[at->second]);
                run.records[at->second].comparedWith = secondName;
            }
            if (run.keepOverflow) {
                report.notes.push_back("the values of the first run took more than " +
                                       formatBytes(request.compareBytes) +
                                       ": later values were not compared");
            }
        }
        if (run.pinOverflow) {
            report.notes.push_back("pinned values beyond " + formatBytes(request.pinBytes) +
                                   " were not kept");
        }
        report.pinnedBytes = run.pinnedBytes;
        detail::finishReport(run, instrumented.model, instrumented.siteModules, reference.get(),
                             output, request, report);
    } catch (const std::exception& error) {
        Error e = detail::errorFromException(error, ErrorKind::Model);
        e.message = request.run.method + " failed: " + e.message;
        return e;
    }
    return report;
}

Expected<std::shared_ptr<const ModuleValues>> Session::moduleOutputs(const RunRequest& request) {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    auto method = detail::findMethod(*impl_->module, "", request.method);
    if (!method) {
        return method.error();
    }
    auto prepared = detail::prepareRun(*impl_->module, impl_->device, *method, request);
    if (!prepared) {
        return prepared.error();
    }
    try {
        const Instrumented instrumented = instrument(*impl_->module, *method);
        TapRun run;
        run.bins = 1;
        run.keepModuleOutputs = true;
        run.keepOperatorOutputs = true;
        const c10::IValue output =
            runInstrumented(instrumented, *impl_->module, prepared->inputs, run, prepared->device);
        auto values = std::make_shared<ModuleValues>();
        detail::keepInto(run, output, *values);
        values->model = impl_->path;
        return std::shared_ptr<const ModuleValues>(std::move(values));
    } catch (const std::exception& error) {
        Error e = detail::errorFromException(error, ErrorKind::Model);
        e.message = request.method + " failed: " + e.message;
        return e;
    }
}

} // namespace scriptscope
