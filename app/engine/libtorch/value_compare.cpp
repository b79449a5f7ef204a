// What every format's activations share (value_tap.h): the references a run's values are compared
// with (a file of module outputs, another model's run), the comparison itself, and the report made
// of a tap's records.
#include "engine_internal.h"
#include "stats.h"
#include "torch_values.h"
#include "value_tap.h"
#include "verdict.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace scriptscope {

namespace detail {

// A dict of module paths to tensors (torch.save in Python), for comparing with.
Expected<std::map<std::string, at::Tensor>> referenceTensors(const std::string& path) {
    auto value = loadValueFile(path);
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

Status prepareRecording(const ActivationRequest& request, std::vector<Site>& sites,
                        const std::vector<std::vector<std::string>>& siteModules,
                        ActivationReport& report, std::shared_ptr<const ModuleValues>& reference) {
    const std::set<int> pins(request.pinNodes.begin(), request.pinNodes.end());
    for (Site& site : sites) {
        site.pinned = pins.count(site.node) > 0;
    }
    report.criterion = request.criterion;
    if (!request.referenceFile.empty()) {
        // Values saved in a file are module outputs only, each the last call's (a forward hook's).
        auto loaded = referenceTensors(request.referenceFile);
        if (!loaded) {
            return loaded.error();
        }
        auto fromFile = std::make_shared<ModuleValues>();
        for (auto& [path, tensor] : *loaded) {
            fromFile->outputs[path].push_back(ModuleCall{tensor.detach().to(at::kCPU), -1});
        }
        fromFile->lastCallOnly = true;
        fromFile->model = request.referenceFile;
        report.comparison = "values saved in " + request.referenceFile;
        reference = std::move(fromFile);
    } else if (request.referenceValues) {
        reference = request.referenceValues;
        report.comparison = "the module outputs of " + reference->model;
        if (reference->operatorOverflow) {
            report.notes.push_back("the operator outputs of " + reference->model +
                                   " beyond 1 GiB were not kept: later operators are "
                                   "compared at module outputs only");
        }
        if (reference->outputOverflow) {
            report.notes.push_back("the module outputs of " + reference->model +
                                   " beyond 2 GiB were not kept: later calls are not compared");
        }
    } else {
        reference.reset();
        return std::nullopt;
    }
    attachReferences(sites, siteModules, *reference, report);
    return std::nullopt;
}

namespace {

int nodeOf(const std::map<std::string, int>& nodes, const std::string& name) {
    const auto found = nodes.find(name);
    return found == nodes.end() ? -1 : found->second;
}

} // namespace

void attachReferences(std::vector<Site>& sites,
                      const std::vector<std::vector<std::string>>& siteModules,
                      const ModuleValues& reference, ActivationReport& report) {
    const std::string& where = reference.model;
    // Sites that are an output of a module the reference has outputs of are matched call by
    // call during the run (recordValue); the rest by name or by place.
    std::vector<bool> byCall(sites.size(), false);
    for (size_t s = 0; s < sites.size() && s < siteModules.size(); ++s) {
        for (const auto& path : siteModules[s]) {
            byCall[s] = byCall[s] || reference.outputs.count(path) > 0;
        }
    }
    // Inside a module, or where a module's output is not one value of both (a fused delegate),
    // the export's own node names: two exports of one model name their nodes alike, and a .pte
    // knows the node each call was lowered from.
    std::set<std::string> byName;
    for (size_t s = 0; s < sites.size(); ++s) {
        Site& site = sites[s];
        if (byCall[s]) {
            continue;
        }
        for (const std::string& name : site.operators) {
            const auto found = reference.operatorOutputs.find(name);
            if (found == reference.operatorOutputs.end() || !byName.insert(name).second) {
                continue;
            }
            site.reference = found->second;
            site.referenceName = "%" + name + " in " + where;
            site.referenceNode = nodeOf(reference.operatorNodes, name);
            ++report.operatorsMatched;
            break;
        }
    }
    // Then by the order of the operators inside each module, where both run the same ones in
    // the same order (a decomposed or fused operator makes the orders differ: that module is left
    // to its boundary). A TorchScript archive and its export have no node names in common.
    std::map<std::string, std::vector<size_t>> placed; // module -> its sites, in order
    for (size_t s = 0; s < sites.size(); ++s) {
        if (!sites[s].op.empty()) {
            placed[sites[s].module].push_back(s);
        }
    }
    for (const auto& [module, mine] : placed) {
        const auto theirs = reference.moduleOperators.find(module);
        if (theirs == reference.moduleOperators.end() || theirs->second.size() != mine.size()) {
            continue;
        }
        bool same = true;
        for (size_t i = 0; i < mine.size() && same; ++i) {
            same = sites[mine[i]].op == theirs->second[i].op;
        }
        if (!same) {
            continue;
        }
        std::map<std::string, int> seen;
        for (size_t i = 0; i < mine.size(); ++i) {
            Site& site = sites[mine[i]];
            const int nth = ++seen[site.op];
            if (site.reference.defined() || byCall[mine[i]]) {
                continue;
            }
            site.reference = theirs->second[i].value;
            site.referenceNode = theirs->second[i].node;
            site.referenceName = (module.empty() ? std::string("(root)") : module) + "/" + site.op +
                                 "#" + std::to_string(nth) + " in " + where;
            ++report.operatorsMatched;
        }
    }
}

void copyComparison(const ActivationRecord& from, ActivationRecord& to) {
    to.compared = from.compared;
    to.maxAbsDiff = from.maxAbsDiff;
    to.maxRelDiff = from.maxRelDiff;
    to.cosine = from.cosine;
    to.snrDb = from.snrDb;
    to.compareNote = from.compareNote;
}

void finishReport(TapRun& run, const GraphModel& model,
                  const std::vector<std::vector<std::string>>& siteModules,
                  const ModuleValues* reference, const c10::IValue& output,
                  const ActivationRequest& request, ActivationReport& report) {
    report.criterion = request.criterion;
    // A site's own reference (a node's name, an operator's place in its module) is one value: only
    // the site's last occurrence is compared with it (what the reference kept).
    std::map<int, size_t> last; // site -> its last record compared through its own reference
    for (const auto& [key, index] : run.index) {
        if (run.siteCompared.count(index)) {
            const auto previous = last.find(key.first);
            if (previous == last.end() || previous->second < index) {
                last[key.first] = index;
            }
        }
    }
    for (const auto& [key, index] : run.index) {
        const auto kept = last.find(key.first);
        if (run.siteCompared.count(index) && kept != last.end() && kept->second != index) {
            copyComparison(ActivationRecord(), run.records[index]);
            run.records[index].comparedWith.clear();
            run.records[index].referenceNode = -1;
        }
    }
    // The reference's module outputs (each call of each module) that no value matched.
    if (reference) {
        for (const auto& [path, calls] : reference->outputs) {
            const size_t count = reference->lastCallOnly ? 1 : calls.size();
            for (size_t k = 0; k < count; ++k) {
                ++report.referenceCount;
                if (!run.matchedCalls.count({path, static_cast<int>(k)})) {
                    report.unmatched.push_back(count > 1
                                                   ? path + " (call " + std::to_string(k + 1) +
                                                         " of " + std::to_string(count) + ")"
                                                   : path);
                }
            }
        }
    }
    if (reference && !reference->lastCallOnly && report.operatorsMatched == 0 &&
        run.matchedCalls.empty()) {
        report.notes.push_back(
            report.referenceCount > 0
                ? "no value inside matched one of the " + std::to_string(report.referenceCount) +
                      " module outputs of " + reference->model +
                      ": only the final outputs are compared (two different networks, or "
                      "modules named apart?)"
                : reference->model +
                      " shows no values inside (a delegate runs it whole, or no ETRecord names "
                      "its modules): only the final outputs are compared");
    }
    // Attribution: the graph model's node facts on every record.
    for (const auto& [key, index] : run.index) {
        auto& record = run.records[index];
        if (static_cast<size_t>(key.first) < siteModules.size()) {
            record.moduleOutputs = siteModules[static_cast<size_t>(key.first)];
        }
        if (record.node < 0) {
            record.kind = "input";
            continue;
        }
        const GraphNode& node = model.nodes[static_cast<size_t>(record.node)];
        record.kind = node.kind;
        record.module = placedModule(model, node);
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
                !agrees(record.maxAbsDiff, record.maxRelDiff, record.cosine, record.snrDb,
                        request.criterion)) {
                report.firstDifference = static_cast<int>(i);
            }
        }
    }
    // The values the first non-finite node read: the latest record of each input value.
    if (report.firstNonFinite >= 0) {
        const auto& bad = report.records[static_cast<size_t>(report.firstNonFinite)];
        if (bad.node >= 0) {
            for (const auto& port : model.nodes[static_cast<size_t>(bad.node)].inputs) {
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
    // The final outputs, whatever matched inside: what every comparison with a model claims.
    if (reference && reference->hasFinalOutput) {
        report.outputs = compareOutputs(describeOutput(output, 0, kComparedOutputValues),
                                        reference->finalOutput, request.criterion);
    }
    report.output = describeOutput(output, request.run.previewValues);
}

// ---- Matching a run's values with a reference's, and measuring them ----

// The reference's output of the same call of the innermost module whose output this value is
// (the k-th value that is an output of its path against the reference's k-th), compared into
// `r`; false where the reference has none for it.
bool compareWithModuleCall(TapRun& run, size_t site, const at::Tensor& tensor, bool dense,
                           ActivationRecord& r) {
    if (site >= run.siteModules.size() || run.siteModules[site].empty()) {
        return false;
    }
    const ModuleValues* reference = run.reference;
    const std::string* chosen = nullptr;
    const ModuleCall* call = nullptr;
    int chosenIndex = 0;
    size_t calls = 0;
    for (const std::string& path : run.siteModules[site]) {
        const int index = run.moduleCalls[path]++; // counted whether or not it is compared
        if (!reference) {
            continue;
        }
        const auto found = reference->outputs.find(path);
        if (found == reference->outputs.end() || found->second.empty()) {
            continue;
        }
        const size_t at = reference->lastCallOnly ? 0 : static_cast<size_t>(index);
        if (!dense || at >= found->second.size() || !found->second[at].value.defined()) {
            continue; // a value without data is counted, not compared
        }
        // Every module this value is the output of has this call matched (a Sequential and its
        // last child); the innermost one's value is the one compared.
        run.matchedCalls.emplace(path, static_cast<int>(at));
        if (!chosen || path.size() > chosen->size()) {
            chosen = &path;
            call = &found->second[at];
            chosenIndex = static_cast<int>(at);
            calls = found->second.size();
        }
    }
    if (!chosen) {
        return false;
    }
    if (reference->lastCallOnly) {
        // A forward hook kept the last call's: only the last value of this path compares.
        const auto previous = run.lastCallRecord.find(*chosen);
        if (previous != run.lastCallRecord.end() && previous->second < run.records.size()) {
            ActivationRecord& earlier = run.records[previous->second];
            copyComparison(ActivationRecord(), earlier);
            earlier.comparedWith.clear();
            earlier.referenceNode = -1;
        }
        run.lastCallRecord[*chosen] = run.records.size();
    }
    r.comparedWith = *chosen +
                     (calls > 1 ? " (call " + std::to_string(chosenIndex + 1) + " of " +
                                      std::to_string(calls) + ")"
                                : std::string()) +
                     " in " + reference->model;
    r.referenceNode = call->node;
    compareInto(r, tensor, call->value);
    return true;
}

void keepInto(TapRun& run, const c10::IValue& output, ModuleValues& values) {
    values.outputs = std::move(run.moduleOutputs);
    values.outputOverflow = run.moduleOverflow;
    values.operatorOutputs = std::move(run.operatorOutputs);
    values.operatorNodes = std::move(run.operatorNodes);
    values.finalOutput = describeOutput(output, 8, kComparedOutputValues);
    values.hasFinalOutput = true;
    for (auto& [module, placed] : run.moduleOperators) {
        auto& sequence = values.moduleOperators[module];
        for (auto& [site, value] : placed) {
            sequence.push_back(std::move(value));
        }
    }
    values.operatorOverflow = run.operatorOverflow;
}

// max |a - b|, NaN against NaN and equal infinities counting as equal, NaN against a number as
// infinitely far. Nullopt when the shapes differ.
std::optional<double> maxAbsDifference(const at::Tensor& a, const at::Tensor& b) {
    if (a.sizes() != b.sizes()) {
        return std::nullopt;
    }
    if (a.numel() == 0) {
        return 0.0;
    }
    const at::Tensor x = a.to(at::kDouble);
    const at::Tensor y = b.to(x.device()).to(at::kDouble);
    at::Tensor d = (x - y).abs();
    d = at::where(x == y, at::zeros_like(d), d);
    d = at::where(x.isnan() & y.isnan(), at::zeros_like(d), d);
    d = at::nan_to_num(d, std::numeric_limits<double>::infinity());
    return d.max().item<double>();
}

bool compareInto(ActivationRecord& r, const at::Tensor& value, const at::Tensor& reference) {
    const bool reshaped = value.sizes() != reference.sizes();
    if (reshaped && value.numel() != reference.numel()) {
        r.compared = false;
        r.compareNote = "shape " + shapeText(value.sizes()) + ", the reference's " +
                        shapeText(reference.sizes());
        return false;
    }
    // Of other shapes but as many elements: a view of the same values (a .pte's Linear reads its
    // input as 10x8 where the export keeps 2x5x8), compared element by element in order.
    r.compareNote = reshaped ? "shape " + shapeText(value.sizes()) + ", the reference's " +
                                   shapeText(reference.sizes()) + ": compared element by element"
                             : std::string();
    // Both as float32 on the CPU, measured as verdict.h defines it (the outputs' comparison
    // measures the same way).
    const at::Tensor x = floatCopy(value);
    const at::Tensor y = reference.scalar_type() == at::kFloat && reference.is_contiguous() &&
                                 reference.device().is_cpu()
                             ? reference
                             : floatCopy(reference);
    const ValueDifference d =
        measure(x.data_ptr<float>(), y.data_ptr<float>(), static_cast<size_t>(x.numel()));
    r.compared = true;
    r.maxAbsDiff = d.maxAbsDiff;
    r.maxRelDiff = d.maxRelDiff;
    r.cosine = d.cosine;
    r.snrDb = d.snrDb;
    return true;
}

} // namespace detail

} // namespace scriptscope
