// compare: two models of any format (a .pt and its export, an export and its .pte, two exports,
// two versions of one archive) run on the same inputs: their final outputs compared, then every
// value inside that can be matched, to the first place they part ways; a verdict with its
// evidence.
#include "commands.h"

#include <format.h>

#include <side_by_side.h>

#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace scriptscope::cli {
namespace {

nlohmann::json valueJson(const ActivationRecord& r, size_t record, const Criterion& criterion) {
    nlohmann::json j = {{"record", record},
                        {"node", r.node},
                        {"kind", r.kind},
                        {"value", r.value},
                        {"module", r.module},
                        {"module_outputs", r.moduleOutputs},
                        {"compared_with", r.comparedWith},
                        {"reference_node", r.referenceNode},
                        {"shape", r.shape},
                        {"dtype", r.dtype},
                        {"compared", r.compared}};
    if (r.compared) {
        j.update(differenceJson(r.maxAbsDiff, r.maxRelDiff, r.cosine, r.snrDb));
        j["agrees"] = agrees(r.maxAbsDiff, r.maxRelDiff, r.cosine, r.snrDb, criterion);
    }
    if (!r.compared || !r.compareNote.empty()) {
        j["compare_note"] = r.compareNote; // why not, or how (element by element)
    }
    return j;
}

// The module (or %node) a compared value stands for: the reference's name without " in FILE".
std::string referenceModule(const ActivationRecord& r) {
    const size_t in = r.comparedWith.find(" in ");
    return in == std::string::npos ? r.comparedWith : r.comparedWith.substr(0, in);
}

// Two models whose values cannot be matched (a side's run is one call with nothing inside to see:
// an AOTInductor package, above all one saved without its program): what they do have, their
// outputs and timing on the same inputs, and why the nodes could not be matched.
int compareOutputsOnly(const Options& o, const ActivationReport& r) {
    const OutputsOnly& s = r.outputsOnly;
    const ComparisonVerdict verdict = verdictOf(r);
    if (o.json) {
        nlohmann::json j = {{"a", r.model},
                            {"b", o.positional.at(1)},
                            {"matched_by", "outputs only"},
                            {"nodes_not_matched", s.why},
                            {"criterion", criterionJson(r.criterion)},
                            {"outputs", outputComparisonJson(s.outputs)}};
        j.update(verdictJson(verdict));
        // The summary fields scripts read before `outputs` (kept).
        j["outputs_compared"] = s.outputs.compared;
        j["outputs_note"] = s.outputs.note;
        if (s.outputs.compared) {
            j["outputs_max_abs_diff"] = number(s.outputs.maxAbsDiff);
            j["p50_ms"] = {s.p50Ms, s.otherP50Ms};
            j["device"] = r.device;
        }
        std::cout << j.dump(2) << "\n";
        return exitStatus(verdict.verdict);
    }
    std::cout << r.model << " against " << o.positional.at(1)
              << ": the nodes could not be matched (" << s.why
              << "), so their outputs and timing are compared on the same inputs\n";
    printCriterion(r.criterion);
    printOutputComparison(s.outputs, r.criterion);
    if (s.outputs.compared) {
        std::cout << "Timing      p50 " << fixedText(s.p50Ms, 3) << " ms against "
                  << fixedText(s.otherP50Ms, 3) << " ms, " << s.runs << " runs each on " << r.device
                  << "\n";
    }
    printVerdict(verdict);
    return exitStatus(verdict.verdict);
}

void printValues(const ActivationReport& r, const std::vector<size_t>& rows, int firstRow) {
    std::cout << "  row      #  " << std::left << std::setw(30) << "module or %node of B"
              << " " << std::setw(24) << "node"
              << " " << std::setw(14) << "shape" << std::right << std::setw(12) << "max |diff|"
              << std::setw(12) << "max rel" << std::setw(10) << "cosine" << std::setw(9) << "SNR dB"
              << "\n";
    for (size_t row = 0; row < rows.size(); ++row) {
        const size_t i = rows[row];
        const ActivationRecord& v = r.records[i];
        const bool apart = v.compared && !agrees(differenceOf(v), r.criterion);
        std::cout << (static_cast<int>(row) == firstRow ? ">"
                      : apart                           ? "!"
                                                        : " ")
                  << std::setw(4) << row << std::setw(7) << i << "  " << std::left << std::setw(30)
                  << referenceModule(v) << " " << std::setw(24) << v.kind << " " << std::setw(14)
                  << formatDims(v.shape) << std::right;
        if (v.compared) {
            std::cout << std::setw(12) << generalText(v.maxAbsDiff) << std::setw(12)
                      << generalText(v.maxRelDiff) << std::setw(10) << fixedText(v.cosine, 6)
                      << std::setw(9) << fixedText(v.snrDb, 1);
        } else {
            std::cout << "  (" << v.compareNote << ")";
        }
        std::cout << "\n";
    }
}

} // namespace

int commandCompare(const Options& o) {
    auto model = openModelAt(o, 0, false);
    if (!model) {
        return fail(o, model.error());
    }
    ActivationRequest request;
    request.run = o.run;
    request.bins = 1;
    request.referenceModel = o.positional.at(1);
    request.referenceOperatorLibraries = o.opLibraries;
    request.criterion = o.criterion;
    auto result = activationsOrOutputs(**model, request);
    if (!result) {
        return fail(o, result.error());
    }
    if (!result->outputsOnly.why.empty()) {
        return compareOutputsOnly(o, *result);
    }
    const ActivationReport& r = *result;
    const ComparisonVerdict verdict = verdictOf(r);
    // The rows: every value matched with one of B, in the order A ran.
    std::vector<size_t> rows;
    int firstRow = -1;
    for (size_t i = 0; i < r.records.size(); ++i) {
        if (!r.records[i].comparedWith.empty()) {
            if (static_cast<int>(i) == r.firstDifference) {
                firstRow = static_cast<int>(rows.size());
            }
            rows.push_back(i);
        }
    }
    const int matched = r.referenceCount - static_cast<int>(r.unmatched.size());
    const double share = r.referenceCount > 0 ? 100.0 * matched / r.referenceCount : 0;
    if (o.json) {
        nlohmann::json values = nlohmann::json::array();
        for (const size_t i : rows) {
            values.push_back(valueJson(r.records[i], i, r.criterion));
        }
        nlohmann::json j = {
            {"a", r.model},
            {"b", o.positional.at(1)},
            {"method", r.method},
            {"device", r.device},
            {"criterion", criterionJson(r.criterion)},
            {"outputs", outputComparisonJson(r.outputs)},
            {"matched_by", "module output call by call, then export node name, then operator "
                           "order in the module"},
            {"module_outputs_of_b", r.referenceCount},
            {"matched", matched},
            {"matched_share", share},
            {"operators_matched", r.operatorsMatched},
            {"compared", r.comparedCount},
            {"first_divergence", firstRow >= 0 ? nlohmann::json(firstRow) : nlohmann::json()},
            {"values", values},
            {"unmatched", r.unmatched},
            {"notes", r.notes}};
        j.update(verdictJson(verdict));
        std::cout << j.dump(2) << "\n";
        return exitStatus(verdict.verdict);
    }
    std::cout << "A " << r.model << "\nB " << o.positional.at(1) << " (the reference)\n"
              << r.method << " on " << r.device << ", the same inputs\n\n";
    printCriterion(r.criterion);
    printOutputComparison(r.outputs, r.criterion);
    std::cout << "Inside      matched " << matched << " of the " << r.referenceCount
              << " module outputs (calls) of B (" << fixedText(share, 1) << "%)";
    if (r.operatorsMatched > 0) {
        std::cout << ", and " << r.operatorsMatched
                  << " more values inside modules, by node name or operator order";
    }
    std::cout << "; " << r.comparedCount << " values compared\n";
    if (!rows.empty()) {
        std::cout << "\n";
        printValues(r, rows, firstRow);
    }
    std::cout << "\n";
    if (firstRow >= 0) {
        const ActivationRecord& d = r.records[static_cast<size_t>(r.firstDifference)];
        std::cout << "First divergence: " << referenceModule(d) << " (row " << firstRow << ", #"
                  << r.firstDifference << ", " << d.kind << " %" << d.value
                  << "): " << failedMeasures(differenceOf(d), r.criterion) << "\n";
    }
    if (!r.unmatched.empty()) {
        std::cout << "Module outputs of B matched by none of A (" << r.unmatched.size() << "):";
        for (const auto& name : r.unmatched) {
            std::cout << " " << name;
        }
        std::cout << "\n";
    }
    for (const auto& note : r.notes) {
        std::cout << "Note: " << note << "\n";
    }
    printVerdict(verdict);
    return exitStatus(verdict.verdict);
}

} // namespace scriptscope::cli
