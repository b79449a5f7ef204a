#include "verdict.h"

#include <format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace scriptscope {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string general(double value) {
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    std::ostringstream out;
    out << value;
    return out.str();
}

std::string fixed(double value, int digits) {
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    std::ostringstream out;
    out.setf(std::ios::fixed);
    out.precision(digits);
    out << value;
    return out.str();
}

} // namespace

std::string describe(const Criterion& c) {
    std::string text = "max rel <= " + general(c.rtol) + ", SNR >= " + general(c.minSnrDb) +
                       " dB, cosine >= " + general(c.minCosine);
    if (c.atol > 0) {
        text += ", or max |diff| <= " + general(c.atol);
    }
    return text;
}

ValueDifference measure(const float* value, const float* reference, size_t n) {
    ValueDifference d;
    d.snrDb = kInf;
    double largestRef = 0, finiteLargest = 0;
    double dot = 0, normA = 0, normB = 0, signal = 0, noise = 0;
    bool anyFinite = false, allSame = true;
    for (size_t i = 0; i < n; ++i) {
        const double a = value[i];
        const double b = reference[i];
        double diff;
        if (a == b || (std::isnan(a) && std::isnan(b))) {
            diff = 0;
        } else {
            diff = std::isnan(a) || std::isnan(b) ? kInf : std::abs(a - b);
            allSame = false;
        }
        if (diff > d.maxAbsDiff) {
            d.maxAbsDiff = diff;
            d.largestAt = static_cast<int64_t>(i);
        }
        if (std::isfinite(a) && std::isfinite(b)) {
            anyFinite = true;
            largestRef = std::max(largestRef, std::abs(b));
            finiteLargest = std::max(finiteLargest, std::abs(a - b));
            dot += a * b;
            normA += a * a;
            normB += b * b;
            signal += b * b;
            noise += (a - b) * (a - b);
        }
    }
    if (allSame) {
        return d; // equal: cosine 1, SNR infinite, no relative difference
    }
    if (!anyFinite) {
        d.maxRelDiff = kInf;
        d.cosine = 0;
        d.snrDb = -kInf;
        return d;
    }
    d.maxRelDiff = !std::isfinite(d.maxAbsDiff) ? kInf
                   : largestRef > 0             ? finiteLargest / largestRef
                                                : kInf;
    const double norms = std::sqrt(normA) * std::sqrt(normB);
    d.cosine = norms > 0 ? dot / norms : (normA == normB ? 1.0 : 0.0);
    d.snrDb = noise == 0 ? kInf : signal == 0 ? -kInf : 10 * std::log10(signal / noise);
    if (!std::isfinite(d.maxAbsDiff)) {
        // A NaN or an Inf on one side only: no signal-to-noise ratio makes that agree.
        d.snrDb = -kInf;
    }
    return d;
}

bool agrees(double maxAbsDiff, double maxRelDiff, double cosine, double snrDb, const Criterion& c) {
    if (maxAbsDiff == 0 || maxAbsDiff <= c.atol) {
        return true;
    }
    return maxRelDiff <= c.rtol && snrDb >= c.minSnrDb && cosine >= c.minCosine;
}

bool agrees(const ValueDifference& d, const Criterion& c) {
    return agrees(d.maxAbsDiff, d.maxRelDiff, d.cosine, d.snrDb, c);
}

std::string failedMeasures(const ValueDifference& d, const Criterion& c) {
    if (agrees(d, c)) {
        return {};
    }
    std::vector<std::string> failed;
    if (!(d.maxRelDiff <= c.rtol)) {
        failed.push_back("max rel " + general(d.maxRelDiff) + " > " + general(c.rtol));
    }
    if (!(d.snrDb >= c.minSnrDb)) {
        failed.push_back("SNR " + fixed(d.snrDb, 1) + " dB < " + general(c.minSnrDb) + " dB");
    }
    if (!(d.cosine >= c.minCosine)) {
        failed.push_back("cosine " + fixed(d.cosine, 6) + " < " + general(c.minCosine));
    }
    std::string text;
    for (const std::string& f : failed) {
        text += (text.empty() ? "" : ", ") + f;
    }
    return text;
}

const char* toString(Verdict verdict) {
    switch (verdict) {
    case Verdict::Same:
        return "same";
    case Verdict::Differ:
        return "differ";
    case Verdict::CouldNotCompare:
        return "could not compare";
    }
    return "?";
}

namespace {

bool sequence(OutputValue::Kind kind) {
    return kind == OutputValue::Kind::Tuple || kind == OutputValue::Kind::List;
}

bool scalar(OutputValue::Kind kind) {
    return kind == OutputValue::Kind::Int || kind == OutputValue::Kind::Float ||
           kind == OutputValue::Kind::Bool;
}

// A dict's key as its OutputValue holds it: Python's repr() ("'out'", "0").
std::string keyText(const OutputValue& child) {
    return child.key;
}

// Where a value sits under its parent, as Python indexes it.
std::string childPath(const std::string& parent, const OutputValue& container,
                      const OutputValue& child, size_t index) {
    return parent + "[" +
           (container.kind == OutputValue::Kind::Dict ? keyText(child) : std::to_string(index)) +
           "]";
}

struct Walk {
    const Criterion& criterion;
    OutputComparison& out;

    // False (and out.note) where the structures part.
    bool visit(const OutputValue& a, const OutputValue& b, const std::string& where) {
        const bool bothSequences = sequence(a.kind) && sequence(b.kind);
        const bool bothNumbers = scalar(a.kind) && scalar(b.kind);
        if (a.kind != b.kind && !bothSequences && !bothNumbers) {
            out.note = where + " is " + structureText(a) + " against " + structureText(b);
            return false;
        }
        switch (a.kind) {
        case OutputValue::Kind::Tensor:
            leaf(a, b, where);
            return true;
        case OutputValue::Kind::Int:
        case OutputValue::Kind::Float:
        case OutputValue::Kind::Bool:
            number(a, b, where);
            return true;
        case OutputValue::Kind::Tuple:
        case OutputValue::Kind::List:
        case OutputValue::Kind::Dict:
            return children(a, b, where);
        case OutputValue::Kind::String:
        case OutputValue::Kind::Other:
        case OutputValue::Kind::None:
            if (a.text != b.text && a.kind == OutputValue::Kind::String) {
                OutputLeafComparison l;
                l.where = where;
                l.compared = true;
                l.note = "'" + a.text + "' against '" + b.text + "'";
                l.difference.maxAbsDiff = kInf;
                out.leaves.push_back(std::move(l));
            }
            return true;
        }
        return true;
    }

    bool children(const OutputValue& a, const OutputValue& b, const std::string& where) {
        if (a.children.size() != b.children.size()) {
            out.note = where + " holds " + std::to_string(a.children.size()) + " values against " +
                       std::to_string(b.children.size());
            return false;
        }
        for (size_t i = 0; i < a.children.size(); ++i) {
            const OutputValue& x = a.children[i];
            const OutputValue& y = b.children[i];
            if (a.kind == OutputValue::Kind::Dict && x.key != y.key) {
                // A dict's keys by name, in any order: pytree keeps insertion order, and two
                // exports of one model insert alike; a key missing is a different structure.
                const auto found =
                    std::find_if(b.children.begin(), b.children.end(),
                                 [&x](const OutputValue& c) { return c.key == x.key; });
                if (found == b.children.end()) {
                    out.note = where + " has the key " + keyText(x) + ", the reference has not";
                    return false;
                }
                if (!visit(x, *found, childPath(where, a, x, i))) {
                    return false;
                }
                continue;
            }
            if (!visit(x, y, childPath(where, a, x, i))) {
                return false;
            }
        }
        return true;
    }

    void leaf(const OutputValue& a, const OutputValue& b, const std::string& where) {
        OutputLeafComparison l;
        l.where = where;
        l.shape = a.shape;
        l.referenceShape = b.shape;
        if (a.shape != b.shape) {
            l.note = "shape " + formatDims(a.shape) + " against " + formatDims(b.shape);
        } else if (static_cast<int64_t>(a.values.size()) != a.numel ||
                   static_cast<int64_t>(b.values.size()) != b.numel) {
            l.note = "its " + formatCount(std::max(a.numel, b.numel)) +
                     " values are more than a comparison keeps";
        } else {
            l.compared = true;
            l.difference = measure(a.values.data(), b.values.data(), a.values.size());
            l.agrees = agrees(l.difference, criterion);
            if (l.difference.largestAt >= 0) {
                l.note = "largest |diff| at flat index " + std::to_string(l.difference.largestAt);
            }
        }
        out.leaves.push_back(std::move(l));
    }

    void number(const OutputValue& a, const OutputValue& b, const std::string& where) {
        OutputLeafComparison l;
        l.where = where;
        char* end = nullptr;
        const float x = std::strtof(a.text.c_str(), &end);
        const bool readA = end && *end == '\0' && !a.text.empty();
        const float y = std::strtof(b.text.c_str(), &end);
        const bool readB = end && *end == '\0' && !b.text.empty();
        if (!readA || !readB) {
            l.compared = true;
            l.agrees = a.text == b.text;
            l.difference.maxAbsDiff = l.agrees ? 0 : kInf;
            l.note = a.text + " against " + b.text;
        } else {
            l.compared = true;
            l.difference = measure(&x, &y, 1);
            l.agrees = agrees(l.difference, criterion);
            l.note = a.text + " against " + b.text;
        }
        out.leaves.push_back(std::move(l));
    }
};

} // namespace

std::string structureText(const OutputValue& v) {
    switch (v.kind) {
    case OutputValue::Kind::Tensor:
        return "T";
    case OutputValue::Kind::Int:
        return "int";
    case OutputValue::Kind::Float:
        return "float";
    case OutputValue::Kind::Bool:
        return "bool";
    case OutputValue::Kind::String:
        return "str";
    case OutputValue::Kind::None:
        return "None";
    case OutputValue::Kind::Other:
        return v.text.empty() ? std::string("?") : v.text;
    case OutputValue::Kind::Tuple:
    case OutputValue::Kind::List:
    case OutputValue::Kind::Dict: {
        const bool dict = v.kind == OutputValue::Kind::Dict;
        std::string text = dict ? "{" : v.kind == OutputValue::Kind::Tuple ? "(" : "[";
        for (size_t i = 0; i < v.children.size(); ++i) {
            text += (i ? ", " : "") + (dict ? keyText(v.children[i]) + ": " : std::string()) +
                    structureText(v.children[i]);
        }
        if (v.kind == OutputValue::Kind::Tuple && v.children.size() == 1) {
            text += ",";
        }
        return text + (dict ? "}" : v.kind == OutputValue::Kind::Tuple ? ")" : "]");
    }
    }
    return "?";
}

OutputComparison compareOutputs(const OutputValue& value, const OutputValue& reference,
                                const Criterion& criterion) {
    OutputComparison out;
    out.structure = structureText(value);
    out.referenceStructure = structureText(reference);
    Walk walk{criterion, out};
    if (!walk.visit(value, reference, "output")) {
        out.leaves.clear();
        out.note = "the outputs' structures differ: " + out.note;
        return out;
    }
    if (out.leaves.empty()) {
        out.note = "the outputs hold no tensor or number to compare";
        return out;
    }
    out.compared = true;
    out.agrees = true;
    out.worstSnrDb = kInf;
    for (size_t i = 0; i < out.leaves.size(); ++i) {
        const OutputLeafComparison& l = out.leaves[i];
        if (!l.compared) {
            out.compared = false;
            out.agrees = false;
            out.note = l.where + ": " + l.note;
            return out;
        }
        out.maxAbsDiff = std::max(out.maxAbsDiff, l.difference.maxAbsDiff);
        out.worstSnrDb = std::min(out.worstSnrDb, l.difference.snrDb);
        out.worstCosine = std::min(out.worstCosine, l.difference.cosine);
        if (!l.agrees && out.firstDisagreeing < 0) {
            out.firstDisagreeing = static_cast<int>(i);
            out.agrees = false;
        }
    }
    return out;
}

} // namespace scriptscope
