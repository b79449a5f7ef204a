// activations and optimize: where the numbers go wrong, what passes change.
#include "commands.h"

#include <engine.h>
#include <format.h>
#include <frame_source.h>
#include <graph_layout.h>
#include <input_spec.h>
#include <matrix_io.h>
#include <process_limits.h>
#include <stats.h>
#include <task_render.h>
#include <task_result.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace scriptscope::cli {
namespace {

nlohmann::json recordJson(const ActivationRecord& r, size_t index) {
    nlohmann::json j = {
        {"index", index},
        {"node", r.node},
        {"occurrence", r.occurrence},
        {"output", r.output},
        {"value", r.value},
        {"kind", r.kind},
        {"module", r.module},
        {"module_outputs", r.moduleOutputs},
        {"source", r.source},
        {"ir_line", r.irLine},
        {"shape", r.shape},
        {"dtype", r.dtype},
        {"device", r.device},
        {"numel", r.numel},
        {"min", r.min},
        {"max", r.max},
        {"mean", r.mean},
        {"std", r.stddev},
        {"nan", r.nanCount},
        {"inf", r.infCount},
        {"histogram", {{"min", r.histogramMin}, {"max", r.histogramMax}, {"counts", r.histogram}}}};
    if (!r.note.empty()) {
        j["note"] = r.note;
    }
    if (r.madeAt >= 0 || r.bytes > 0) {
        j["memory"] = {{"bytes", r.bytes},
                       {"storage_bytes", r.storageBytes},
                       {"made_at", r.madeAt},
                       {"last_use_at", r.lastUseAt}};
    }
    if (!r.comparedWith.empty()) {
        j["compared_with"] = r.comparedWith;
        j["compared"] = r.compared;
        if (r.compared) {
            j["max_abs_diff"] = r.maxAbsDiff;
        }
        if (!r.compareNote.empty()) {
            j["compare_note"] = r.compareNote;
        }
    }
    return j;
}

void printRecord(const ActivationRecord& r, size_t index, bool compared) {
    const std::string where =
        r.kind == "input" ? std::string("input ") + r.value
                          : r.kind + (r.occurrence ? " #" + std::to_string(r.occurrence) : "");
    std::cout << std::setw(5) << index << "  " << std::left << std::setw(34) << where << " "
              << std::setw(22) << (r.module.empty() ? "(root)" : r.module) << " " << std::setw(16)
              << (r.note.empty() ? formatDims(r.shape) : "-") << std::right;
    if (r.note.empty() && r.numel > 0 && r.nanCount + r.infCount == r.numel) {
        std::cout << std::setw(48) << "(no finite value)" << std::setw(7) << r.nanCount
                  << std::setw(7) << r.infCount;
    } else if (r.note.empty()) {
        std::cout << std::setw(12) << r.min << std::setw(12) << r.max << std::setw(12) << r.mean
                  << std::setw(12) << r.stddev << std::setw(7) << r.nanCount << std::setw(7)
                  << r.infCount;
    } else {
        std::cout << "  " << r.note;
    }
    if (compared) {
        if (r.compared) {
            std::cout << std::setw(12) << r.maxAbsDiff;
        } else if (!r.compareNote.empty()) {
            std::cout << "  (" << r.compareNote << ")";
        }
    }
    std::cout << "\n";
}

// optimize -o: a copy that could not be written, or does not load back or run, is an error (exit
// status 1), not a file handed over with "Saved".
int saveFailed(const Options& o, const OptimizeResult& r) {
    if (r.saveError.empty()) {
        return kExitOk;
    }
    std::cerr << kProgram << ": " << r.saveError
              << (o.keepUnloadable ? " (kept, as --keep-unloadable asks)"
                                   : " (not kept; --keep-unloadable keeps it)")
              << "\n";
    return kExitError;
}

} // namespace

int commandActivations(const Options& o) {
    auto opened = openModelAt(o, 0, false);
    if (!opened) {
        return fail(o, opened.error());
    }
    Model& model = **opened;
    ActivationRequest request;
    request.run = o.run;
    request.bins = o.bins;
    request.compareDevice = o.compareDevice;
    request.compareRun = o.compareRun;
    request.referenceFile = o.referenceFile;
    request.referenceModel = o.compareModel;
    request.referenceOperatorLibraries = o.opLibraries;
    request.criterion = o.criterion;
    auto result = model.activations(request);
    if (!result) {
        return fail(o, result.error());
    }
    const ActivationReport& r = *result;
    const bool compared = !r.comparison.empty();
    auto describe = [&](int index) -> nlohmann::json {
        if (index < 0) {
            return nullptr;
        }
        return recordJson(r.records[static_cast<size_t>(index)], static_cast<size_t>(index));
    };
    if (o.json) {
        nlohmann::json j = {{"method", r.method},
                            {"device", r.device},
                            {"values", r.records.size()},
                            {"run_ms", r.runMs},
                            {"first_nonfinite", describe(r.firstNonFinite)},
                            {"notes", r.notes}};
        nlohmann::json inputs = nlohmann::json::array();
        for (const int i : r.firstNonFiniteInputs) {
            inputs.push_back(describe(i));
        }
        j["first_nonfinite_inputs"] = inputs;
        if (r.memory.known) {
            j["memory"] = {{"live_bytes", r.memory.liveBytes},
                           {"peak_step", r.memory.peakStep},
                           {"peak_bytes", r.memory.peakBytes},
                           {"peak_values", r.memory.peakRecords}};
            if (!r.memory.note.empty()) {
                j["memory"]["note"] = r.memory.note;
            }
        } else {
            j["memory"] = {{"note", r.memory.note}};
        }
        if (compared) {
            const ComparisonVerdict verdict = verdictOf(r);
            j["comparison"] = {{"with", r.comparison},
                               {"criterion", criterionJson(r.criterion)},
                               {"verdict", toString(verdict.verdict)},
                               {"verdict_reason", verdict.why},
                               {"compared", r.comparedCount},
                               {"first_difference", describe(r.firstDifference)},
                               {"unmatched", r.unmatched}};
        }
        if (!o.firstNonFinite) {
            nlohmann::json records = nlohmann::json::array();
            for (size_t i = 0; i < r.records.size(); ++i) {
                records.push_back(recordJson(r.records[i], i));
            }
            j["records"] = records;
            j["output"] = outputJson(r.output);
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << std::setprecision(5);
    auto header = [&]() {
        std::cout << "    #  " << std::left << std::setw(34) << "node"
                  << " " << std::setw(22) << "module"
                  << " " << std::setw(16) << "shape" << std::right << std::setw(12) << "min"
                  << std::setw(12) << "max" << std::setw(12) << "mean" << std::setw(12) << "std"
                  << std::setw(7) << "NaN" << std::setw(7) << "Inf"
                  << (compared ? "   max |diff|" : "") << "\n";
    };
    auto where = [&](const ActivationRecord& rec) {
        return rec.kind +
               (rec.occurrence ? " (occurrence " + std::to_string(rec.occurrence) + ")" : "") +
               " in " + (rec.module.empty() ? std::string("the root module") : rec.module) +
               (rec.source.empty() ? "" : ", " + rec.source) +
               (rec.irLine ? ", inlined graph line " + std::to_string(rec.irLine) : "");
    };
    if (o.firstNonFinite) {
        if (r.firstNonFinite < 0) {
            std::cout << "No NaN or Inf in any of the " << r.records.size() << " values "
                      << r.method << " computed.\n";
            return kExitOk;
        }
        const auto& bad = r.records[static_cast<size_t>(r.firstNonFinite)];
        std::cout << "First non-finite value: %" << bad.value << " from " << where(bad) << "\n";
        if (!bad.sourceText.empty()) {
            std::cout << "  code: " << bad.sourceText << "\n";
        }
        std::cout << "\n";
        header();
        printRecord(bad, static_cast<size_t>(r.firstNonFinite), compared);
        if (!r.firstNonFiniteInputs.empty()) {
            std::cout << "Its inputs:\n";
            for (const int i : r.firstNonFiniteInputs) {
                printRecord(r.records[static_cast<size_t>(i)], static_cast<size_t>(i), compared);
            }
        }
        return kExitOk;
    }
    std::cout << r.records.size() << " values from " << r.method << " on " << r.device << " ("
              << std::fixed << std::setprecision(1) << r.runMs << " ms with statistics)\n"
              << std::defaultfloat << std::setprecision(5);
    header();
    for (size_t i = 0; i < r.records.size(); ++i) {
        printRecord(r.records[i], i, compared);
    }
    std::cout << "\n";
    if (r.firstNonFinite >= 0) {
        const auto& bad = r.records[static_cast<size_t>(r.firstNonFinite)];
        std::cout << "First non-finite value: #" << r.firstNonFinite << " %" << bad.value
                  << " from " << where(bad) << "\n";
    } else {
        std::cout << "No NaN or Inf.\n";
    }
    if (r.memory.known && r.memory.peakStep >= 0) {
        std::cout << "Memory: a peak of " << formatBytes(r.memory.peakBytes) << " at step "
                  << r.memory.peakStep << " of " << r.memory.liveBytes.size() << ", held by";
        for (const int i : r.memory.peakRecords) {
            const auto& v = r.records[static_cast<size_t>(i)];
            std::cout << " #" << i << " (" << formatBytes(v.storageBytes) << ")";
        }
        std::cout << "\n";
    }
    if (compared) {
        std::cout << "Compared with " << r.comparison << ": " << r.comparedCount << " values";
        if (r.firstDifference >= 0) {
            const auto& d = r.records[static_cast<size_t>(r.firstDifference)];
            const ValueDifference difference = differenceOf(d);
            std::cout << "; the first apart (" << scriptscope::describe(r.criterion) << ") is #"
                      << r.firstDifference << " %" << d.value << " from " << where(d) << ": "
                      << failedMeasures(difference, r.criterion) << "\n";
        } else {
            std::cout << ", all agree (" << scriptscope::describe(r.criterion) << ")\n";
        }
        if (!r.unmatched.empty()) {
            std::cout << "Matched no module output:";
            for (const auto& name : r.unmatched) {
                std::cout << " " << name;
            }
            std::cout << "\n";
        }
    }
    for (const auto& note : r.notes) {
        std::cout << "Note: " << note << "\n";
    }
    return kExitOk;
}

int commandOptimize(const Options& o) {
    auto opened = openModelAt(o, 0, false);
    if (!opened) {
        return fail(o, opened.error());
    }
    Model& model = **opened;
    OptimizeRequest request;
    if (o.freeze) {
        request.passes.push_back("freeze");
    }
    if (o.forInference) {
        request.passes.push_back("optimize-for-inference");
    }
    request.passes.insert(request.passes.end(), o.passes.begin(), o.passes.end());
    request.run = o.run;
    request.savePath = o.output;
    request.keepUnloadable = o.keepUnloadable;
    auto result = model.optimize(request);
    if (!result) {
        return fail(o, result.error());
    }
    const OptimizeResult& r = *result;
    if (o.json) {
        nlohmann::json kinds = nlohmann::json::array();
        for (const auto& k : r.kinds) {
            kinds.push_back({{"kind", k.kind}, {"before", k.before}, {"after", k.after}});
        }
        nlohmann::json j = {
            {"method", r.method},
            {"passes", r.applied},
            {"nodes_before", r.nodesBefore},
            {"nodes_after", r.nodesAfter},
            {"kinds", kinds},
            {"timed", r.timed},
            {"notes", r.notes},
            {"saved", r.saved.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.saved)},
            {"saved_verified", r.savedVerified},
            {"save_error",
             r.saveError.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.saveError)}};
        if (r.timed) {
            j["before_ms"] = statsJson(r.before);
            j["after_ms"] = statsJson(r.after);
            j["speedup"] = r.speedup;
        }
        nlohmann::json modules = nlohmann::json::array();
        for (const auto& m : r.modules) {
            modules.push_back({{"module", m.module}, {"max_abs_diff", m.maxAbsDiff}});
        }
        j["modules"] = modules;
        j["first_different_module"] = r.firstDifferentModule.empty()
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(r.firstDifferentModule);
        j["outputs_compared"] = r.outputsCompared;
        if (r.outputsCompared) {
            j["max_abs_diff"] = r.maxAbsDiff;
        }
        if (!r.compareNote.empty()) {
            j["compare_note"] = r.compareNote;
        }
        std::cout << j.dump(2) << "\n";
        return saveFailed(o, r);
    }
    std::cout << "Passes      ";
    for (size_t i = 0; i < r.applied.size(); ++i) {
        std::cout << (i ? ", " : "") << r.applied[i];
    }
    std::cout << "\nNodes       " << r.nodesBefore << " -> " << r.nodesAfter << "\n\n"
              << "  before   after  kind\n";
    for (const auto& k : r.kinds) {
        if (k.before != k.after) {
            std::cout << std::setw(8) << k.before << std::setw(8) << k.after << "  " << k.kind
                      << "\n";
        }
    }
    int unchanged = 0;
    for (const auto& k : r.kinds) {
        unchanged += k.before == k.after ? 1 : 0;
    }
    if (unchanged) {
        std::cout << "  (" << unchanged << " kind" << (unchanged == 1 ? "" : "s")
                  << " with the same count left out; --json has all)\n";
    }
    std::cout << "\n";
    if (r.timed) {
        std::cout << std::fixed << std::setprecision(3) << "Before      p50 " << r.before.p50
                  << " ms (min " << r.before.min << ", " << r.before.count << " runs)\n"
                  << "After       p50 " << r.after.p50 << " ms (min " << r.after.min << ")\n"
                  << std::setprecision(2) << "Speed-up    " << r.speedup << "x\n"
                  << std::defaultfloat << std::setprecision(6);
    }
    if (r.outputsCompared) {
        std::cout << "Outputs     max |diff| " << r.maxAbsDiff << "\n";
    } else if (!r.compareNote.empty()) {
        std::cout << "Outputs     not compared: " << r.compareNote << "\n";
    }
    if (!r.modules.empty()) {
        std::cout << "Modules     " << r.modules.size() << " outputs compared; ";
        if (r.firstDifferentModule.empty()) {
            std::cout << "all within " << r.tolerance << "\n";
        } else {
            for (const auto& m : r.modules) {
                if (m.module == r.firstDifferentModule) {
                    std::cout << "the first beyond " << r.tolerance << ": " << m.module
                              << " (max |diff| " << m.maxAbsDiff << ")\n";
                }
            }
        }
    }
    if (!r.saved.empty()) {
        std::cout << "Saved       " << r.saved
                  << (r.savedVerified ? (r.timed ? " (loaded back and run once)" : " (loaded back)")
                                      : "")
                  << "\n";
    }
    for (const auto& note : r.notes) {
        std::cout << "Note: " << note << "\n";
    }
    return saveFailed(o, r);
}

} // namespace scriptscope::cli
