// compare: two models of any format (a .pt and its export, two exports, two versions of one
// archive) run on the same inputs and compared module output by module output, to the first
// place they part ways.
#include "commands.h"

#include <format.h>

#include <side_by_side.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>

namespace scriptscope::cli {
namespace {

// Infinities as JSON can hold them: null, with the sign kept in the text where it matters.
nlohmann::json number(double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

std::string fixed(double value, int precision) {
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    std::ostringstream out;
    out << std::fixed << std::setprecision(precision) << value;
    return out.str();
}

std::string general(double value) {
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    std::ostringstream out;
    out << std::setprecision(4) << value;
    return out.str();
}

nlohmann::json valueJson(const ActivationRecord& r, size_t index) {
    nlohmann::json j = {{"index", index},
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
        j["max_abs_diff"] = number(r.maxAbsDiff);
        j["max_rel_diff"] = number(r.maxRelDiff);
        j["cosine"] = number(r.cosine);
        j["snr_db"] = number(r.snrDb);
    } else {
        j["compare_note"] = r.compareNote;
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
// The nodes could not be matched: both models' outputs and p50s on the same inputs.
int compareOutputsOnly(const Options& o, const ActivationReport& r) {
    const OutputsOnly& s = r.outputsOnly;
    const bool diverges = !s.outputs.compared || s.outputs.maxAbsDiff > o.tolerance;
    if (o.json) {
        nlohmann::json j = {{"a", r.model},
                            {"b", o.positional.at(1)},
                            {"matched_by", "outputs only"},
                            {"nodes_not_matched", s.why},
                            {"tolerance", o.tolerance},
                            {"outputs_compared", s.outputs.compared},
                            {"outputs_note", s.outputs.note}};
        if (s.outputs.compared) {
            j["outputs_max_abs_diff"] = number(s.outputs.maxAbsDiff);
            j["p50_ms"] = {s.p50Ms, s.otherP50Ms};
            j["device"] = r.device;
        }
        std::cout << j.dump(2) << "\n";
        return diverges ? kExitError : kExitOk;
    }
    std::cout << r.model << " against " << o.positional.at(1)
              << ": the nodes could not be matched (" << s.why
              << "), so their outputs and timing are compared on the same inputs\n";
    if (!s.outputs.compared) {
        std::cout << "Outputs     " << s.outputs.note << "\n";
        return kExitError;
    }
    std::cout << "Outputs     max |diff| " << general(s.outputs.maxAbsDiff)
              << (s.outputs.maxAbsDiff > o.tolerance ? " (beyond " : " (within ") << o.tolerance
              << ")" << (s.outputs.note.empty() ? "" : ", at " + s.outputs.note) << "\n"
              << "Timing      p50 " << fixed(s.p50Ms, 3) << " ms against " << fixed(s.otherP50Ms, 3)
              << " ms, " << s.runs << " runs each on " << r.device << "\n";
    std::cout << (diverges ? "The outputs differ beyond " : "No divergence beyond ") << o.tolerance
              << ".\n";
    return diverges ? kExitError : kExitOk;
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
    request.tolerance = o.tolerance;
    auto result = activationsOrOutputs(**model, request);
    if (!result) {
        return fail(o, result.error());
    }
    if (!result->outputsOnly.why.empty()) {
        return compareOutputsOnly(o, *result);
    }
    const ActivationReport& r = *result;
    std::vector<size_t> compared;
    for (size_t i = 0; i < r.records.size(); ++i) {
        if (!r.records[i].comparedWith.empty()) {
            compared.push_back(i);
        }
    }
    const int matched = r.referenceCount - static_cast<int>(r.unmatched.size());
    const double share = r.referenceCount > 0 ? 100.0 * matched / r.referenceCount : 0;
    const bool diverges = r.firstDifference >= 0;
    if (o.json) {
        nlohmann::json values = nlohmann::json::array();
        for (const size_t i : compared) {
            values.push_back(valueJson(r.records[i], i));
        }
        nlohmann::json j = {
            {"a", r.model},
            {"b", o.positional.at(1)},
            {"method", r.method},
            {"device", r.device},
            {"matched_by",
             "module output, then export node name, then operator order in the module"},
            {"module_outputs_of_b", r.referenceCount},
            {"matched", matched},
            {"matched_share", share},
            {"operators_matched", r.operatorsMatched},
            {"compared", r.comparedCount},
            {"tolerance", r.tolerance},
            {"first_divergence", diverges
                                     ? valueJson(r.records[static_cast<size_t>(r.firstDifference)],
                                                 static_cast<size_t>(r.firstDifference))
                                     : nlohmann::json(nullptr)},
            {"values", values},
            {"unmatched", r.unmatched},
            {"notes", r.notes}};
        std::cout << j.dump(2) << "\n";
        return diverges ? kExitError : kExitOk;
    }
    std::cout << r.model << " against " << o.positional.at(1)
              << ", module output by module output and node by node (" << r.method << " on "
              << r.device << ")\n"
              << "Matched " << matched << " of the " << r.referenceCount
              << " module outputs of the second (" << fixed(share, 1) << "%)";
    if (r.operatorsMatched > 0) {
        std::cout << ", and " << r.operatorsMatched
                  << " more values inside modules, by node name or operator order";
    }
    std::cout << "; " << r.comparedCount << " values compared\n\n";
    std::cout << "    #  " << std::left << std::setw(30) << "module or %node of the second"
              << " " << std::setw(24) << "node"
              << " " << std::setw(14) << "shape" << std::right << std::setw(12) << "max |diff|"
              << std::setw(12) << "max rel" << std::setw(10) << "cosine" << std::setw(9) << "SNR dB"
              << "\n";
    for (const size_t i : compared) {
        const ActivationRecord& v = r.records[i];
        const bool first = static_cast<int>(i) == r.firstDifference;
        std::cout << (first ? ">" : " ") << std::setw(4) << i << "  " << std::left << std::setw(30)
                  << referenceModule(v) << " " << std::setw(24) << v.kind << " " << std::setw(14)
                  << formatDims(v.shape) << std::right;
        if (v.compared) {
            std::cout << std::setw(12) << general(v.maxAbsDiff) << std::setw(12)
                      << general(v.maxRelDiff) << std::setw(10) << fixed(v.cosine, 6)
                      << std::setw(9) << fixed(v.snrDb, 1);
        } else {
            std::cout << "  (" << v.compareNote << ")";
        }
        std::cout << "\n";
    }
    std::cout << "\n";
    if (diverges) {
        const ActivationRecord& d = r.records[static_cast<size_t>(r.firstDifference)];
        std::cout << "First divergence beyond " << r.tolerance << ": " << referenceModule(d)
                  << " (#" << r.firstDifference << ", " << d.kind << " %" << d.value
                  << "): max |diff| " << general(d.maxAbsDiff) << ", cosine " << fixed(d.cosine, 6)
                  << "\n";
    } else {
        std::cout << "No divergence beyond " << r.tolerance << ".\n";
    }
    if (!r.unmatched.empty()) {
        std::cout << "Module outputs of the second matched by none of the first:";
        for (const auto& name : r.unmatched) {
            std::cout << " " << name;
        }
        std::cout << "\n";
    }
    for (const auto& note : r.notes) {
        std::cout << "Note: " << note << "\n";
    }
    return diverges ? kExitError : kExitOk;
}

} // namespace scriptscope::cli
