// How compare and diff say what they compared and what it came to: the criterion, the final
// outputs leaf by leaf, the verdict with its exit status, as text and as JSON.
#include "commands.h"

#include <format.h>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace scriptscope::cli {

int exitStatus(Verdict verdict) {
    switch (verdict) {
    case Verdict::Same:
        return kExitOk;
    case Verdict::Differ:
        return kExitError;
    case Verdict::CouldNotCompare:
        return kExitCouldNotCompare;
    }
    return kExitError;
}

nlohmann::json number(double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

std::string fixedText(double value, int precision) {
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    if (std::isnan(value)) {
        return "nan";
    }
    std::ostringstream out;
    out << std::fixed << std::setprecision(precision) << value;
    return out.str();
}

std::string generalText(double value) {
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    std::ostringstream out;
    out << std::setprecision(4) << value;
    return out.str();
}

nlohmann::json criterionJson(const Criterion& c) {
    return {{"atol", c.atol},
            {"rtol", c.rtol},
            {"min_snr_db", c.minSnrDb},
            {"min_cosine", c.minCosine},
            {"rule", "agrees when max_abs_diff <= atol, or max_rel_diff <= rtol and snr_db >= "
                     "min_snr_db and cosine >= min_cosine"}};
}

nlohmann::json differenceJson(double maxAbs, double maxRel, double cosine, double snr) {
    // Infinities as JSON can hold them: null (an infinite SNR is equality, an infinite max |diff|
    // a NaN against a number).
    return {{"max_abs_diff", number(maxAbs)},
            {"max_rel_diff", number(maxRel)},
            {"cosine", number(cosine)},
            {"snr_db", number(snr)}};
}

nlohmann::json outputComparisonJson(const OutputComparison& c) {
    nlohmann::json leaves = nlohmann::json::array();
    for (const OutputLeafComparison& l : c.leaves) {
        nlohmann::json j = {{"where", l.where},
                            {"shape", l.shape},
                            {"reference_shape", l.referenceShape},
                            {"compared", l.compared},
                            {"note", l.note}};
        if (l.compared) {
            j.update(differenceJson(l.difference.maxAbsDiff, l.difference.maxRelDiff,
                                    l.difference.cosine, l.difference.snrDb));
            j["agrees"] = l.agrees;
        }
        leaves.push_back(std::move(j));
    }
    return {{"compared", c.compared},
            {"agrees", c.agrees},
            {"note", c.note},
            {"structure", c.structure},
            {"reference_structure", c.referenceStructure},
            {"leaves", leaves}};
}

void printCriterion(const Criterion& c) {
    std::cout << "Criterion   " << describe(c) << "\n";
}

void printOutputComparison(const OutputComparison& c, const Criterion& criterion) {
    std::cout << "Outputs     " << (c.structure.empty() ? std::string("?") : c.structure)
              << " against " << (c.referenceStructure.empty() ? "?" : c.referenceStructure);
    if (!c.compared) {
        std::cout << ": not compared, " << c.note << "\n";
        return;
    }
    std::cout << "\n";
    for (const OutputLeafComparison& l : c.leaves) {
        std::cout << "  " << std::left << std::setw(22) << l.where << " " << std::setw(14)
                  << formatDims(l.shape) << std::right << " max |diff| " << std::setw(10)
                  << generalText(l.difference.maxAbsDiff) << "  max rel " << std::setw(10)
                  << generalText(l.difference.maxRelDiff) << "  cosine "
                  << fixedText(l.difference.cosine, 6) << "  SNR " << std::setw(6)
                  << fixedText(l.difference.snrDb, 1) << " dB  ";
        if (l.agrees) {
            std::cout << "agrees";
        } else {
            std::cout << "apart: " << failedMeasures(l.difference, criterion);
        }
        std::cout << "\n";
    }
}

void printVerdict(const ComparisonVerdict& v) {
    switch (v.verdict) {
    case Verdict::Same:
        std::cout << "Verdict     the same: " << v.why << ".\n";
        break;
    case Verdict::Differ:
        std::cout << "Verdict     they differ: " << v.why << ".\n";
        break;
    case Verdict::CouldNotCompare:
        std::cout << "Verdict     could not compare: " << v.why << ".\n";
        break;
    }
}

nlohmann::json verdictJson(const ComparisonVerdict& v) {
    return {{"verdict", toString(v.verdict)},
            {"verdict_reason", v.why},
            {"exit_status", exitStatus(v.verdict)}};
}

} // namespace scriptscope::cli
