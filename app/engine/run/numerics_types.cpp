#include "numerics_types.h"

#include <algorithm>
#include <utility>

namespace scriptscope {

namespace {

// Added becomes removed and the other way round; other kinds stay.
template <typename Kind>
Kind flipped(Kind kind) {
    return kind == Kind::Added ? Kind::Removed : kind == Kind::Removed ? Kind::Added : kind;
}

} // namespace

ArchiveDiff reversed(ArchiveDiff diff) {
    std::swap(diff.pathA, diff.pathB);
    std::swap(diff.formatA, diff.formatB);
    std::swap(diff.loadMsA, diff.loadMsB);
    for (ModuleChange& m : diff.modules) {
        m.kind = flipped(m.kind);
        std::swap(m.typeA, m.typeB);
    }
    for (TensorChange& t : diff.tensors) {
        t.kind = flipped(t.kind);
        std::swap(t.shapeA, t.shapeB);
        std::swap(t.dtypeA, t.dtypeB);
    }
    for (AttributeChange& a : diff.attributes) {
        std::swap(a.valueA, a.valueB);
    }
    for (TextChange& text : diff.texts) {
        std::swap(text.added, text.removed);
        for (DiffLine& line : text.lines) {
            line.op = flipped(line.op);
            std::swap(line.lineA, line.lineB);
        }
    }
    for (ExtraFileChange& file : diff.extraFiles) {
        file.change = file.change == "added"     ? "removed"
                      : file.change == "removed" ? "added"
                                                 : file.change;
    }
    return diff;
}

ValueDifference differenceOf(const ActivationRecord& r) {
    ValueDifference d;
    d.maxAbsDiff = r.maxAbsDiff;
    d.maxRelDiff = r.maxRelDiff;
    d.cosine = r.cosine;
    d.snrDb = r.snrDb;
    return d;
}

ComparisonVerdict verdictOf(const ActivationReport& report) {
    ComparisonVerdict v;
    const bool outputsOnly = !report.outputsOnly.why.empty();
    const OutputComparison& outputs = outputsOnly ? report.outputsOnly.outputs : report.outputs;
    // Compared with a model: its final outputs were (or could not be) compared.
    const bool withModel = outputsOnly || !outputs.structure.empty() || !outputs.note.empty();
    if (withModel && !outputs.compared) {
        v.verdict = Verdict::CouldNotCompare;
        v.why = outputs.note.empty() ? "the outputs were not compared" : outputs.note;
        return v;
    }
    if (!withModel && report.comparedCount == 0) {
        v.verdict = Verdict::CouldNotCompare;
        v.why = report.comparison.empty() ? "nothing was compared"
                                          : "no value matched " + report.comparison;
        return v;
    }
    std::string outputsApart;
    if (withModel && !outputs.agrees) {
        const OutputLeafComparison& leaf =
            outputs.leaves.at(static_cast<size_t>(std::max(outputs.firstDisagreeing, 0)));
        outputsApart =
            leaf.where + " is apart (" + failedMeasures(leaf.difference, report.criterion) + ")";
    }
    if (report.firstDifference >= 0 &&
        static_cast<size_t>(report.firstDifference) < report.records.size()) {
        const ActivationRecord& r = report.records[static_cast<size_t>(report.firstDifference)];
        const size_t in = r.comparedWith.find(" in ");
        v.verdict = Verdict::Differ;
        v.why = "the first value apart is " +
                (in == std::string::npos ? r.comparedWith : r.comparedWith.substr(0, in)) + " (" +
                failedMeasures(differenceOf(r), report.criterion) + ")" +
                (!withModel             ? std::string()
                 : outputsApart.empty() ? std::string("; the outputs agree")
                                        : "; " + outputsApart);
        return v;
    }
    if (!outputsApart.empty()) {
        v.verdict = Verdict::Differ;
        v.why = outputsApart;
        return v;
    }
    v.verdict = Verdict::Same;
    v.why = !withModel ? "every compared value agrees"
            : report.comparedCount > 0
                ? "the outputs and all " + std::to_string(report.comparedCount) +
                      " values matched inside agree"
                : "the outputs agree (nothing inside was matched)";
    return v;
}

const char* toString(ModuleChange::Kind kind) {
    switch (kind) {
    case ModuleChange::Kind::Added:
        return "added";
    case ModuleChange::Kind::Removed:
        return "removed";
    case ModuleChange::Kind::Retyped:
        return "retyped";
    }
    return "?";
}

const char* toString(TensorChange::Kind kind) {
    switch (kind) {
    case TensorChange::Kind::Added:
        return "added";
    case TensorChange::Kind::Removed:
        return "removed";
    case TensorChange::Kind::Values:
        return "values";
    case TensorChange::Kind::Shape:
        return "shape";
    case TensorChange::Kind::Dtype:
        return "dtype";
    }
    return "?";
}

const std::vector<PassInfo>& availablePasses() {
    static const std::vector<PassInfo> passes = {
        {"freeze", "torch.jit.freeze: inline every call, fold parameters and attributes into "
                   "constants (needs eval mode)"},
        {"optimize-for-inference",
         "torch.jit.optimize_for_inference: freeze, then fold and fuse for inference (MKLDNN "
         "where this LibTorch has it)"},
        {"fold-conv-bn", "fold BatchNorm into the convolution before it"},
        {"constant-propagation", "compute what depends only on constants"},
        {"dead-code-elimination", "remove nodes whose results nobody uses"},
        {"common-subexpression-elimination", "compute identical expressions once"},
        {"peephole", "local simplifications (x + 0, redundant shape queries, ...)"},
        {"remove-dropout", "remove dropout (the model must be in eval mode)"},
        {"fuse-linear", "turn matmul + add (and addmm) into aten::linear"},
    };
    return passes;
}

} // namespace scriptscope
