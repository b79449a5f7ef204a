// The tables of a run: its request and inputs, its result and profile, and the live sources.
#include "fields.h"
#include "protocol.h"

namespace scriptscope::protocol {
namespace fields {

void describe(Fields& f, ImagePreprocess& p) {
    f("width", p.width)("height", p.height)("rgb", p.rgb)("chw", p.channelsFirst);
    f("batch", p.batch)("dtype", p.dtype)("scale", p.scale)("mean", p.mean)("std", p.stddev);
    f("gray", p.grayscale);
}

void describe(Fields& f, InputSpec& spec) {
    f("kind", spec.kind)("shape", spec.shape)("dtype", spec.dtype)("path", spec.path);
    f("node", spec.node)("image", spec.image)("int", spec.intValue)("float", spec.floatValue);
    f("bool", spec.boolValue)("string", spec.stringValue)("ints", spec.intList);
    f("floats", spec.floatList)("seed", spec.seed);
    if (f.include(!spec.elements.empty())) {
        f("elements", spec.elements)("keys", spec.keys);
    }
}

void describe(Fields& f, RunRequest& r) {
    f("method", r.method)("inputs", r.inputs)("inputsFile", r.inputsFile)("device", r.device);
    f("warmup", r.warmup)("iterations", r.iterations)("saveOutputsPath", r.saveOutputsPath);
    f("previewValues", r.previewValues)("valuesLimit", r.valuesLimit)("profile", r.profile);
    f("etdumpPath", r.etdumpPath);
}

void describe(Fields& f, TimingStats& s) {
    f("count", s.count)("min", s.min)("p50", s.p50)("p90", s.p90)("p99", s.p99)("max", s.max);
    f("mean", s.mean)("stddev", s.stddev);
}

void describe(Fields& f, OutputValue& v) {
    f("kind", v.kind)("key", v.key)("shape", v.shape)("dtype", v.dtype)("device", v.device);
    f.row("stats", v.min, v.max, v.mean, v.stddev);
    f.row("counts", v.nanCount, v.infCount, v.numel);
    f("preview", v.preview);
    if (f.include(!v.values.empty())) {
        f("values", v.values);
    }
    f("text", v.text)("children", v.children);
}

void describe(Fields& f, ModuleTime& t) {
    f("path", t.path)("selfMs", t.selfMs)("totalMs", t.totalMs)("calls", t.calls);
}

void describe(Fields& f, OperatorTime& t) {
    f("name", t.name)("totalMs", t.totalMs)("selfMs", t.selfMs)("calls", t.calls);
}

void describe(Fields& f, RunProfile& p) {
    f("operatorMs", p.operatorMs)("wallMs", p.wallMs)("modules", p.modules);
    f("operators", p.operators)("shapes", p.valueShapes)("shapesError", p.shapesError);
    f("shapesMethod", p.shapesMethod)("nodeMs", p.nodeMs)("runs", p.runs);
}

void describe(Fields& f, ControlFlowRun& c) {
    f("node", c.node)("graphNode", c.graphNode)("kind", c.kind)("branch", c.branch);
    f("iterations", c.iterations);
}

void describe(Fields& f, RunResult& r) {
    f("model", r.model)("method", r.method)("device", r.device)("deviceName", r.deviceName);
    f("warmup", r.warmup)("synchronized", r.synchronized)("samples", r.samplesMs);
    f("stats", r.stats)("inputs", r.inputDescriptions)("output", r.output);
    f.present("profile", r.profiled, r.profile);
    if (f.include(!r.controlFlow.empty())) {
        f("controlFlow", r.controlFlow);
    }
}

void describe(Fields& f, SourceInfo& i) {
    f("kind", i.kind)("path", i.path)("description", i.description)("frames", i.frames);
    f("fps", i.fps)("width", i.width)("height", i.height)("files", i.files)("notes", i.notes);
}

void describe(Fields& f, FrameResult& r) {
    f("index", r.index)("name", r.name)("dropped", r.dropped)("end", r.end);
    f("width", r.width)("height", r.height)("bgr", r.bgr)("error", r.error);
    f("decode_ms", r.decodeMs);
    f.present("run", r.hasRun, r.run);
}

} // namespace fields

QCborMap toCbor(const RunRequest& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const RunResult& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const OutputValue& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const SourceInfo& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const FrameResult& value) {
    return fields::toMap(value);
}

RunRequest runRequestFromCbor(const QCborMap& map) {
    return fields::fromMap<RunRequest>(map);
}
RunResult runResultFromCbor(const QCborMap& map) {
    return fields::fromMap<RunResult>(map);
}
OutputValue outputFromCbor(const QCborMap& map) {
    return fields::fromMap<OutputValue>(map);
}
SourceInfo sourceInfoFromCbor(const QCborMap& map) {
    return fields::fromMap<SourceInfo>(map);
}

FrameResult frameResultFromCbor(const QCborMap& map) {
    FrameResult f = fields::fromMap<FrameResult>(map);
    // Pixels that do not fill the frame they claim are not drawn.
    if (f.width <= 0 || f.height <= 0 || f.width > 1 << 15 || f.height > 1 << 15 ||
        f.bgr.size() != size_t(f.width) * size_t(f.height) * 3) {
        f.bgr.clear();
        f.width = f.height = 0;
    }
    return f;
}

} // namespace scriptscope::protocol
