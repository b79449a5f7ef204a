// scriptscope-cli diff: two archives of one format (modules, tensors, attributes, code, graphs,
// extra files), or a model and its twin in another format, a TorchScript archive and its export
// (modules, tensors, and on the same inputs the outputs and timings).
#include "commands.h"

#include <engine.h>
#include <format.h>
#include <side_by_side.h>
#include <text_diff.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace scriptscope::cli {

namespace {

// One line per module added, removed or of another type.
void printModuleChanges(const std::vector<ModuleChange>& modules) {
    for (const auto& m : modules) {
        std::cout << "  " << std::left << std::setw(8) << toString(m.kind) << std::right << " "
                  << (m.path.empty() ? "(root)" : m.path) << "  "
                  << (m.kind == ModuleChange::Kind::Retyped ? m.typeA + " -> " + m.typeB
                      : m.typeA.empty()                     ? m.typeB
                                                            : m.typeA)
                  << "\n";
    }
}

nlohmann::json moduleChangesJson(const std::vector<ModuleChange>& modules) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& m : modules) {
        out.push_back({{"path", m.path},
                       {"change", toString(m.kind)},
                       {"type_a", m.typeA},
                       {"type_b", m.typeB}});
    }
    return out;
}

// A parameter or buffer that differs: by how much, or its shapes, dtypes, or the side it is on.
void printTensorChange(const TensorChange& t) {
    std::cout << "  " << std::left << std::setw(8) << toString(t.kind) << std::right << " "
              << t.name;
    switch (t.kind) {
    case TensorChange::Kind::Values:
        std::cout << "  max |diff| " << t.maxAbsDiff << " in " << t.differing << " of " << t.numel
                  << " values";
        break;
    case TensorChange::Kind::Shape:
        std::cout << "  " << formatDims(t.shapeA) << " -> " << formatDims(t.shapeB);
        break;
    case TensorChange::Kind::Dtype:
        std::cout << "  " << t.dtypeA << " -> " << t.dtypeB;
        break;
    case TensorChange::Kind::Added:
        std::cout << "  " << formatDims(t.shapeB) << " " << t.dtypeB;
        break;
    case TensorChange::Kind::Removed:
        std::cout << "  " << formatDims(t.shapeA) << " " << t.dtypeA;
        break;
    }
    std::cout << "\n";
}

// A model against its twin in another format (a TorchScript archive and its export): the trees
// and tensors as compared, then both run on the same inputs, their outputs and timings. Where a
// side has no tree or weights to compare (`structureNote` says why: an AOTInductor package saved
// without its program, an ExecuTorch program), the outputs and timings alone. The outputs decide
// as compare's do: not compared, nothing is claimed.
int commandDiffTwins(const Options& o, Model& a, Model& b, const ArchiveDiff& d,
                     const std::string& structureNote = {}) {
    auto sideBySide = runSideBySide(o.run, a, b, o.criterion);
    if (!sideBySide) {
        return fail(o, sideBySide.error());
    }
    const std::optional<RunResult>& runA = sideBySide->runA;
    const std::optional<RunResult>& runB = sideBySide->runB;
    const OutputComparison& outputs = sideBySide->outputs;
    const bool structure = structureNote.empty();
    ComparisonVerdict verdict;
    if (structure && !d.identical) {
        verdict = {Verdict::Differ,
                   "their " + std::string(d.modules.empty() ? "tensors" : "modules") + " differ"};
    } else if (!outputs.compared) {
        verdict = {
            Verdict::CouldNotCompare,
            (outputs.note.empty() ? std::string("the outputs were not compared") : outputs.note) +
                (structure ? "" : "; the structure could not be compared either")};
    } else if (!outputs.agrees) {
        const OutputLeafComparison& leaf =
            outputs.leaves.at(static_cast<size_t>(std::max(outputs.firstDisagreeing, 0)));
        verdict = {Verdict::Differ,
                   leaf.where + " is apart: " + failedMeasures(leaf.difference, o.criterion)};
    } else {
        verdict = {Verdict::Same, structure ? "the same modules and tensors, and outputs that agree"
                                            : "outputs that agree (the structure could not be "
                                              "compared)"};
    }
    if (o.json) {
        const nlohmann::json modules = moduleChangesJson(d.modules);
        nlohmann::json tensors = nlohmann::json::array();
        for (const auto& t : d.tensors) {
            tensors.push_back({{"name", t.name},
                               {"change", toString(t.kind)},
                               {"max_abs_diff", t.maxAbsDiff},
                               {"differing", t.differing},
                               {"shape_a", t.shapeA},
                               {"shape_b", t.shapeB}});
        }
        nlohmann::json j = {{"a", d.pathA},
                            {"b", d.pathB},
                            {"same", verdict.verdict == Verdict::Same},
                            {"modules", modules},
                            {"tensors", tensors},
                            {"tensors_compared", d.tensorsCompared},
                            {"criterion", criterionJson(o.criterion)},
                            {"outputs", outputComparisonJson(outputs)}};
        j.update(verdictJson(verdict));
        if (!structure) {
            j["structure_note"] = structureNote;
        }
        // The summary fields scripts read before `outputs` (kept).
        j["outputs_compared"] = outputs.compared;
        j["outputs_note"] = outputs.note;
        if (outputs.compared) {
            j["outputs_max_abs_diff"] = number(outputs.maxAbsDiff);
            j["p50_ms"] = {runA->stats.p50, runB->stats.p50};
        }
        std::cout << j.dump(2) << "\n";
        return exitStatus(verdict.verdict);
    }
    std::cout << "--- " << d.pathA << " (" << d.formatA << ")\n+++ " << d.pathB << " (" << d.formatB
              << ")\n";
    if (!structure) {
        std::cout << "Modules     not compared: " << structureNote << "\n"
                  << "Tensors     not compared\n";
    } else {
        std::cout << "Modules     " << (d.modules.empty() ? "the same tree" : "differ") << "\n";
        printModuleChanges(d.modules);
        std::cout << "Tensors     " << d.tensorsCompared << " parameters and buffers compared, "
                  << (d.tensors.empty() ? "all equal"
                                        : std::to_string(d.tensors.size()) + " differ")
                  << "\n";
    }
    for (const auto& t : d.tensors) {
        printTensorChange(t);
    }
    printCriterion(o.criterion);
    printOutputComparison(outputs, o.criterion);
    if (outputs.compared) {
        std::cout << std::fixed << std::setprecision(3) << "Timing      p50 " << runA->stats.p50
                  << " ms (" << d.formatA << ") against " << runB->stats.p50 << " ms (" << d.formatB
                  << "), " << runA->samplesMs.size() << " runs each on " << runA->device << "\n"
                  << std::defaultfloat;
    }
    printVerdict(verdict);
    return exitStatus(verdict.verdict);
}

} // namespace

int commandDiff(const Options& o) {
    auto a = openModelAt(o, 0, false);
    if (!a) {
        return fail(o, a.error());
    }
    auto b = openModelAt(o, 1, false);
    if (!b) {
        return fail(o, b.error());
    }
    // A side with no module tree or weights to compare that still runs (an AOTInductor package
    // saved without its program, an ExecuTorch program): what it does have, its outputs and
    // timing on the same inputs.
    for (const Model* side : {a->get(), b->get()}) {
        const std::string why = side->info().lacks(Capability::Diff);
        if (!why.empty() && side->info().lacks(Capability::Run).empty()) {
            ArchiveDiff d;
            d.pathA = (*a)->info().path;
            d.pathB = (*b)->info().path;
            d.formatA = (*a)->info().format;
            d.formatB = (*b)->info().format;
            d.treeAndTensorsOnly = true;
            return commandDiffTwins(o, **a, **b, d, "'" + side->info().path + "': " + why);
        }
    }
    auto result = diffModels(**a, **b);
    if (!result) {
        return fail(o, result.error());
    }
    if (result->treeAndTensorsOnly) {
        return commandDiffTwins(o, **a, **b, *result);
    }
    const ArchiveDiff& d = *result;
    if (o.json) {
        const nlohmann::json modules = moduleChangesJson(d.modules);
        nlohmann::json tensors = nlohmann::json::array(), attributes = nlohmann::json::array(),
                       texts = nlohmann::json::array(), extras = nlohmann::json::array();
        for (const auto& t : d.tensors) {
            nlohmann::json j = {{"name", t.name},      {"change", toString(t.kind)},
                                {"buffer", t.buffer},  {"shape_a", t.shapeA},
                                {"shape_b", t.shapeB}, {"dtype_a", t.dtypeA},
                                {"dtype_b", t.dtypeB}};
            if (t.kind == TensorChange::Kind::Values) {
                j["max_abs_diff"] = t.maxAbsDiff;
                j["differing"] = t.differing;
                j["numel"] = t.numel;
            }
            tensors.push_back(j);
        }
        for (const auto& at : d.attributes) {
            attributes.push_back(
                {{"module", at.module}, {"name", at.name}, {"a", at.valueA}, {"b", at.valueB}});
        }
        for (const auto& t : d.texts) {
            texts.push_back({{"module", t.module},
                             {"method", t.method},
                             {"what", t.what},
                             {"added", t.added},
                             {"removed", t.removed},
                             {"diff", unifiedText(t.lines)}});
        }
        for (const auto& e : d.extraFiles) {
            extras.push_back({{"name", e.name}, {"change", e.change}});
        }
        std::cout << nlohmann::json({{"a", d.pathA},
                                     {"b", d.pathB},
                                     {"identical", d.identical},
                                     {"verdict", d.identical ? "same" : "differ"},
                                     {"modules", modules},
                                     {"tensors", tensors},
                                     {"tensors_compared", d.tensorsCompared},
                                     {"attributes", attributes},
                                     {"texts", texts},
                                     {"extra_files", extras}})
                         .dump(2)
                  << "\n";
        return d.identical ? kExitOk : kExitError;
    }
    if (d.identical) {
        std::cout << "The same: " << d.tensorsCompared
                  << " parameters and buffers, every module, attribute, method's code and graph, "
                     "and the extra files.\n";
        return kExitOk;
    }
    std::cout << "--- " << d.pathA << "\n+++ " << d.pathB << "\n";
    if (!d.modules.empty()) {
        std::cout << "\nModules\n";
        printModuleChanges(d.modules);
    }
    if (!d.tensors.empty()) {
        std::cout << "\nParameters and buffers (" << d.tensorsCompared << " compared)\n";
        for (const auto& t : d.tensors) {
            printTensorChange(t);
        }
    }
    if (!d.attributes.empty()) {
        std::cout << "\nAttributes\n";
        for (const auto& at : d.attributes) {
            std::cout << "  " << (at.module.empty() ? std::string() : at.module + ".") << at.name
                      << ": " << (at.valueA.empty() ? "(none)" : at.valueA) << " -> "
                      << (at.valueB.empty() ? "(none)" : at.valueB) << "\n";
        }
    }
    for (const auto& t : d.texts) {
        std::cout << "\n"
                  << (t.module.empty() ? "(root)" : t.module) << "." << t.method << " " << t.what
                  << " (+" << t.added << " -" << t.removed << ")\n"
                  << unifiedText(t.lines);
    }
    if (!d.extraFiles.empty()) {
        std::cout << "\nExtra files\n";
        for (const auto& e : d.extraFiles) {
            std::cout << "  " << std::left << std::setw(8) << e.change << std::right << " "
                      << e.name << "\n";
        }
    }
    return kExitError;
}

} // namespace scriptscope::cli
