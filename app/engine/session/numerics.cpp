// Where numbers go wrong: every value one run computes (the value tap, value_tap.h), its first NaN
// or Inf, and a second run or another model compared value by value.
#include "session.h"
#include "session_internal.h"
#include "stats.h"
#include "torch_values.h"
#include "value_tap.h"

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
using detail::maxAbsDifference;
using detail::OccurrenceKey;
using detail::placedModule;
using detail::runInstrumented;
using detail::shapeText;
using detail::TapRun;
using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// A dict of module paths to tensors (torch.save in Python), for comparing with.
Expected<std::map<std::string, at::Tensor>> referenceTensors(const std::string& path) {
    auto value = detail::loadValueFile(path);
    if (!value) {
        return value.error();
    }
    if (!value->isGenericDict()) {
        return Error{ErrorKind::Input, "'" + path +
                                           "' does not hold a dict from module paths to tensors "
                                           "(torch.save({name: tensor, ...}))"};
    }
    std::map<std::string, at::Tensor> tensors;
    for (const auto& entry : value->toGenericDict()) {
        if (entry.key().isString() && entry.value().isTensor()) {
            tensors.emplace(entry.key().toStringRef(), entry.value().toTensor());
        }
    }
    if (tensors.empty()) {
        return Error{ErrorKind::Input, "'" + path + "' holds no string -> tensor entries"};
    }
    return tensors;
}

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
    report.tolerance = request.tolerance;
    const int compareModes =
        (request.compareDevice.empty() ? 0 : 1) + (request.compareRun ? 1 : 0) +
        (request.referenceFile.empty() ? 0 : 1) + (request.referenceModel.empty() ? 0 : 1);
    if (compareModes > 1) {
        return Error{ErrorKind::Input,
                     "compare with one thing at a time: a device, other inputs, a file of "
                     "values or a model"};
    }
    try {
        Instrumented instrumented = instrument(*impl_->module, *method);
        const std::set<int> pins(request.pinNodes.begin(), request.pinNodes.end());
        for (auto& site : instrumented.sites) {
            site.pinned = pins.count(site.node) > 0;
        }
        // References by module path: from a file, or from another model's run.
        std::map<std::string, at::Tensor> references;
        std::string referenceWhere;
        if (!request.referenceFile.empty()) {
            auto loaded = referenceTensors(request.referenceFile);
            if (!loaded) {
                return loaded.error();
            }
            references = std::move(loaded).value();
            referenceWhere = request.referenceFile;
            report.comparison = "values saved in " + request.referenceFile;
        }
        if (!request.referenceModel.empty()) {
            Session other;
            // Already loaded with the open model (the CLI's --op-library, the GUI's remembered
            // ones); one refused then (built for another LibTorch) was said then, and is no
            // reason to refuse the comparison: the reference names an operator it lacks.
            for (const auto& library : request.referenceOperatorLibraries) {
                (void)other.loadOperatorLibrary(library);
            }
            LoadOptions options;
            options.includeCode = false;
            auto fromReference = [&](Error error) {
                error.message = request.referenceModel + ": " + error.message;
                return error;
            };
            if (auto loaded = other.load(request.referenceModel, options); !loaded) {
                return fromReference(loaded.error());
            }
            auto otherMethod = detail::findMethod(*other.impl_->module, "", request.run.method);
            if (!otherMethod) {
                return fromReference(otherMethod.error());
            }
            auto otherInputs = detail::prepareRun(*other.impl_->module, other.impl_->device,
                                                  *otherMethod, request.run);
            if (!otherInputs) {
                return fromReference(otherInputs.error());
            }
            const Instrumented theirs = instrument(*other.impl_->module, *otherMethod);
            TapRun run;
            run.bins = 1;
            run.keepModuleOutputs = true;
            try {
                runInstrumented(theirs, *other.impl_->module, otherInputs->inputs, run,
                                otherInputs->device);
            } catch (const std::exception& error) {
                Error e = detail::errorFromException(error, ErrorKind::Model);
                e.message = request.run.method + " failed: " + e.message;
                return fromReference(e);
            }
            references = std::move(run.moduleOutputs);
            referenceWhere = request.referenceModel;
            report.comparison = "the module outputs of " + request.referenceModel;
        }
        if (!references.empty()) {
            std::set<std::string> matched;
            for (size_t s = 0; s < instrumented.sites.size(); ++s) {
                // A value that is the output of several modules (a Sequential and its last
                // child) is compared with the innermost one's reference; the others are the same
                // value in Python too.
                for (const auto& path : instrumented.siteModules[s]) {
                    const auto found = references.find(path);
                    if (found == references.end()) {
                        continue;
                    }
                    matched.insert(path);
                    if (!instrumented.sites[s].reference.defined() ||
                        path.size() > instrumented.sites[s].referenceName.find(" in ")) {
                        instrumented.sites[s].reference = found->second.to(prepared->device);
                        instrumented.sites[s].referenceName = path + " in " + referenceWhere;
                    }
                }
            }
            for (const auto& [name, tensor] : references) {
                if (!matched.count(name)) {
                    report.unmatched.push_back(name);
                }
            }
        }
        TapRun run;
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
        const auto start = std::chrono::steady_clock::now();
        const c10::IValue output =
            runInstrumented(instrumented, *impl_->module, prepared->inputs, run, prepared->device);
        report.runMs = detail::elapsedMs(start);
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
                auto& record = run.records[at->second];
                record.comparedWith = secondName;
                if (difference.second.empty()) {
                    record.compared = true;
                    record.maxAbsDiff = difference.first;
                } else {
                    record.compareNote = difference.second;
                }
            }
            if (run.keepOverflow) {
                report.notes.push_back("the values of the first run took more than " +
                                       formatBytes(request.compareBytes) +
                                       ": later values were not compared");
            }
        }
        // A module output compared with a saved value: only its last occurrence is what a forward
        // hook would have kept.
        if (!references.empty()) {
            std::map<int, size_t> last;
            for (size_t i = 0; i < run.records.size(); ++i) {
                if (!run.records[i].comparedWith.empty()) {
                    const auto site = std::find_if(run.index.begin(), run.index.end(),
                                                   [&](const auto& e) { return e.second == i; });
                    if (site != run.index.end()) {
                        if (auto previous = last.find(site->first.first); previous != last.end()) {
                            auto& earlier = run.records[previous->second];
                            earlier.compared = false;
                            earlier.maxAbsDiff = 0;
                            earlier.comparedWith.clear();
                            earlier.compareNote.clear();
                        }
                        last[site->first.first] = i;
                    }
                }
            }
        }
        if (run.pinOverflow) {
            report.notes.push_back("pinned values beyond " + formatBytes(request.pinBytes) +
                                   " were not kept");
        }
        report.pinnedBytes = run.pinnedBytes;
        // Attribution: the graph model's node facts on every record.
        std::map<OccurrenceKey, size_t> bySite = run.index;
        for (const auto& [key, index] : bySite) {
            auto& record = run.records[index];
            record.moduleOutputs = instrumented.siteModules[static_cast<size_t>(key.first)];
            if (record.node < 0) {
                record.kind = "input";
                continue;
            }
            const GraphNode& node = instrumented.model.nodes[static_cast<size_t>(record.node)];
            record.kind = node.kind;
            record.module = placedModule(instrumented.model, node);
            record.source = node.source;
            record.sourceText = node.sourceText;
            record.irLine = node.irLine;
        }
        report.records = std::move(run.records);
        for (size_t i = 0; i < report.records.size(); ++i) {
            const auto& record = report.records[i];
            if (report.firstNonFinite < 0 && record.nonFinite()) {
                report.firstNonFinite = static_cast<int>(i);
            }
            if (record.compared) {
                ++report.comparedCount;
                // The first node: an input that differs is the change itself, not its effect.
                if (report.firstDifference < 0 && record.node >= 0 &&
                    record.maxAbsDiff > request.tolerance) {
                    report.firstDifference = static_cast<int>(i);
                }
            }
        }
        // The values the first non-finite node read: the latest record of each input value.
        if (report.firstNonFinite >= 0) {
            const auto& bad = report.records[static_cast<size_t>(report.firstNonFinite)];
            if (bad.node >= 0) {
                for (const auto& port :
                     instrumented.model.nodes[static_cast<size_t>(bad.node)].inputs) {
                    for (int i = report.firstNonFinite - 1; i >= 0; --i) {
                        if (report.records[static_cast<size_t>(i)].value == port.name) {
                            auto& found = report.firstNonFiniteInputs;
                            if (std::find(found.begin(), found.end(), i) == found.end()) {
                                found.push_back(i);
                            }
                            break;
                        }
                    }
                }
            }
        }
        report.output = detail::describeOutput(output, request.run.previewValues);
    } catch (const std::exception& error) {
        Error e = detail::errorFromException(error, ErrorKind::Model);
        e.message = request.run.method + " failed: " + e.message;
        return e;
    }
    return report;
}

} // namespace scriptscope
