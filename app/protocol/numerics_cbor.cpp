// The tables of the numerics: activations and their comparison, passes, archive diffs.
#include "fields.h"
#include "protocol.h"

namespace scriptscope::protocol {
namespace fields {

void describe(Fields& f, DiffLine& l) {
    f("op", l.op)("text", l.text)("lineA", l.lineA)("lineB", l.lineB)("count", l.count);
}

void describe(Fields& f, Criterion& c) {
    f.row("c", c.atol, c.rtol, c.minSnrDb, c.minCosine);
}

void describe(Fields& f, ValueDifference& d) {
    f.row("d", d.maxAbsDiff, d.maxRelDiff, d.cosine, d.snrDb, d.largestAt);
}

void describe(Fields& f, OutputLeafComparison& l) {
    f("where", l.where)("shape", l.shape)("referenceShape", l.referenceShape);
    f("compared", l.compared)("note", l.note)("difference", l.difference)("agrees", l.agrees);
}

void describe(Fields& f, ActivationRequest& r) {
    f("run", r.run)("bins", r.bins)("pinNodes", r.pinNodes)("pinBytes", r.pinBytes);
    f("compareDevice", r.compareDevice)("compareRun", r.compareRun);
    f("referenceFile", r.referenceFile)("referenceModel", r.referenceModel);
    f("referenceLibraries", r.referenceOperatorLibraries)("criterion", r.criterion);
    f("compareBytes", r.compareBytes);
}

void describe(Fields& f, ActivationRecord& x) {
    f.row("at", x.node, x.occurrence, x.output, x.irLine);
    f("value", x.value)("kind", x.kind)("module", x.module)("outputs", x.moduleOutputs);
    f("source", x.source)("sourceText", x.sourceText)("shape", x.shape)("dtype", x.dtype);
    f("device", x.device);
    f.row("stats", x.min, x.max, x.mean, x.stddev, x.histogramMin, x.histogramMax);
    f.row("counts", x.numel, x.nanCount, x.infCount);
    f("histogram", x.histogram)("note", x.note);
    if (f.include(!x.comparedWith.empty())) {
        f.row("compare", x.compared, x.maxAbsDiff, x.comparedWith, x.compareNote, x.maxRelDiff,
              x.cosine, x.snrDb, x.referenceNode);
    }
    if (f.include(!x.values.empty())) {
        f("values", x.values);
    }
    if (f.include(x.madeAt >= 0 || x.bytes > 0)) {
        f.row("memory", x.bytes, x.storageBytes, x.madeAt, x.lastUseAt);
    }
}

void describe(Fields& f, MemoryTimeline& m) {
    f("known", m.known)("note", m.note)("live", m.liveBytes);
    f.row("peak", m.peakStep, m.peakBytes)("peakRecords", m.peakRecords);
}

void describe(Fields& f, OutputComparison& c) {
    f("compared", c.compared)("note", c.note)("structure", c.structure);
    f("referenceStructure", c.referenceStructure)("leaves", c.leaves)("agrees", c.agrees);
    f.row("worst", c.maxAbsDiff, c.worstSnrDb, c.worstCosine, c.firstDisagreeing);
}

void describe(Fields& f, OutputsOnly& o) {
    f("why", o.why)("outputs", o.outputs)("p50", o.p50Ms)("otherP50", o.otherP50Ms);
    f("runs", o.runs);
}

void describe(Fields& f, ActivationReport& r) {
    f("model", r.model)("method", r.method)("device", r.device)("records", r.records);
    f.row("first", r.firstNonFinite, r.firstDifference);
    f("firstInputs", r.firstNonFiniteInputs)("comparison", r.comparison);
    f("criterion", r.criterion)("compared", r.comparedCount)("unmatched", r.unmatched);
    f("outputs", r.outputs);
    f("references", r.referenceCount)("operators", r.operatorsMatched)("memory", r.memory);
    f("notes", r.notes)("runMs", r.runMs)("pinnedBytes", r.pinnedBytes)("output", r.output);
    if (f.include(!r.outputsOnly.why.empty())) {
        f("outputsOnly", r.outputsOnly);
    }
}

void describe(Fields& f, OptimizeRequest& r) {
    f("passes", r.passes)("run", r.run)("savePath", r.savePath);
    f("keepUnloadable", r.keepUnloadable)("tolerance", r.tolerance);
}

void describe(Fields& f, KindCount& k) {
    f("kind", k.kind)("before", k.before)("after", k.after);
}

void describe(Fields& f, OptimizeResult::ModuleDelta& d) {
    f("module", d.module)("maxAbsDiff", d.maxAbsDiff);
}

void describe(Fields& f, OptimizeResult& r) {
    f("method", r.method)("applied", r.applied)("before", r.graphBefore);
    f("after", r.graphAfter)("diff", r.graphDiff);
    f.row("nodes", r.nodesBefore, r.nodesAfter);
    f("kinds", r.kinds)("timed", r.timed)("timeBefore", r.before)("timeAfter", r.after);
    f("speedup", r.speedup)("outputsCompared", r.outputsCompared)("maxAbsDiff", r.maxAbsDiff);
    f("compareNote", r.compareNote)("modules", r.modules);
    f("firstDifferent", r.firstDifferentModule)("tolerance", r.tolerance)("saved", r.saved);
    f("savedVerified", r.savedVerified)("saveError", r.saveError)("notes", r.notes);
}

void describe(Fields& f, ModuleChange& c) {
    f("path", c.path)("kind", c.kind)("typeA", c.typeA)("typeB", c.typeB);
}

void describe(Fields& f, TensorChange& t) {
    f("name", t.name)("kind", t.kind)("buffer", t.buffer)("shapeA", t.shapeA);
    f("shapeB", t.shapeB)("dtypeA", t.dtypeA)("dtypeB", t.dtypeB)("maxAbsDiff", t.maxAbsDiff);
    f("differing", t.differing)("numel", t.numel);
}

void describe(Fields& f, AttributeChange& a) {
    f("module", a.module)("name", a.name)("valueA", a.valueA)("valueB", a.valueB);
}

void describe(Fields& f, TextChange& t) {
    f("module", t.module)("method", t.method)("what", t.what)("lines", t.lines);
    f("added", t.added)("removed", t.removed);
}

void describe(Fields& f, ExtraFileChange& e) {
    f("name", e.name)("change", e.change);
}

void describe(Fields& f, ArchiveDiff& d) {
    f("a", d.pathA)("b", d.pathB)("formatA", d.formatA)("formatB", d.formatB);
    f("treeOnly", d.treeAndTensorsOnly)("identical", d.identical)("modules", d.modules);
    f("tensors", d.tensors)("attributes", d.attributes)("texts", d.texts);
    f("extras", d.extraFiles)("compared", d.tensorsCompared);
    f.row("ms", d.loadMsA, d.loadMsB, d.diffMs);
}

} // namespace fields

QCborMap toCbor(const ActivationRequest& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const ActivationReport& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const OptimizeRequest& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const OptimizeResult& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const ArchiveDiff& value) {
    return fields::toMap(value);
}

ActivationRequest activationRequestFromCbor(const QCborMap& map) {
    return fields::fromMap<ActivationRequest>(map);
}
OptimizeRequest optimizeRequestFromCbor(const QCborMap& map) {
    return fields::fromMap<OptimizeRequest>(map);
}
OptimizeResult optimizeResultFromCbor(const QCborMap& map) {
    return fields::fromMap<OptimizeResult>(map);
}
ArchiveDiff archiveDiffFromCbor(const QCborMap& map) {
    return fields::fromMap<ArchiveDiff>(map);
}

ActivationReport activationReportFromCbor(const QCborMap& map) {
    ActivationReport r = fields::fromMap<ActivationReport>(map);
    // Indices into the records point at one, or at none.
    const auto count = static_cast<int>(r.records.size());
    const auto inRange = [count](int i) { return i >= 0 && i < count; };
    if (!inRange(r.firstNonFinite)) {
        r.firstNonFinite = -1;
    }
    if (!inRange(r.firstDifference)) {
        r.firstDifference = -1;
    }
    r.firstNonFiniteInputs.erase(std::remove_if(r.firstNonFiniteInputs.begin(),
                                                r.firstNonFiniteInputs.end(),
                                                [&](int i) { return !inRange(i); }),
                                 r.firstNonFiniteInputs.end());
    auto& peak = r.memory.peakRecords;
    peak.erase(std::remove_if(peak.begin(), peak.end(), [&](int i) { return !inRange(i); }),
               peak.end());
    if (r.memory.peakStep >= static_cast<int>(r.memory.liveBytes.size())) {
        r.memory.peakStep = -1;
    }
    return r;
}

} // namespace scriptscope::protocol
