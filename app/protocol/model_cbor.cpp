// The tables of what a model is: the archive probe, the module tree, devices, errors.
#include "fields.h"
#include "protocol.h"

namespace scriptscope::protocol {
namespace fields {

void describe(Fields& f, ArchiveRecord& r) {
    f("name", r.name)("size", r.size)("compressedSize", r.compressedSize)("offset", r.offset);
    f("stored", r.stored)("method", r.method);
}

void describe(Fields& f, OperatorUse& op) {
    f("name", op.name)("registered", op.registered);
}

void describe(Fields& f, StorageInfo& s) {
    f("record", s.record)("dtype", s.dtype)("location", s.location)("numel", s.numel);
    f("declaredBytes", s.declaredBytes)("storedBytes", s.storedBytes)("present", s.present);
}

void describe(Fields& f, ProbeResult& p) {
    f("path", p.path)("fileSize", p.fileSize)("kind", p.kind)("summary", p.summary);
    f("archiveName", p.archiveName)("records", p.records)("version", p.version);
    f("versionText", p.versionText)("maxSupportedVersion", p.maxSupportedVersion);
    f("extraFiles", p.extraFiles)("operators", p.operators)("pickleGlobals", p.pickleGlobals);
    f("producer", p.producer)("codeFiles", p.codeFiles)("storages", p.storages);
    f("tensors", p.tensors)("damage", p.damage)("notes", p.notes)("addedFormat", p.addedFormat);
}

void describe(Fields& f, FileFormatPatterns& format) {
    f("name", format.name)("one", format.one)("patterns", format.patterns);
    f("mimeType", format.mimeType);
}

void describe(Fields& f, TensorInfo& t) {
    f("name", t.name)("shape", t.shape)("dtype", t.dtype)("device", t.device)("bytes", t.bytes);
    f("grad", t.requiresGrad);
    // Quantization travels only with the tensors that have it.
    if (f.include(t.packed || !t.qscheme.empty())) {
        f("packed", t.packed)("packedIn", t.packedIn)("qscheme", t.qscheme)("scale", t.scale);
        f("zeroPoint", t.zeroPoint)("scales", t.scales)("zeroPoints", t.zeroPoints);
        f("axis", t.axis);
    }
}

void describe(Fields& f, AttributeInfo& a) {
    f("name", a.name)("type", a.type)("preview", a.preview);
}

void describe(Fields& f, MemoryBlock& b) {
    f("value", b.value)("type", b.type)("buffer", b.buffer)("offset", b.offset);
    f("bytes", b.bytes)("first", b.first)("last", b.last);
}

void describe(Fields& f, MemoryPlan& plan) {
    f("buffers", plan.bufferBytes)("steps", plan.steps)("blocks", plan.blocks);
}

void describe(Fields& f, MethodInfo& m) {
    f("name", m.name)("schema", m.schema)("code", m.code)("graph", m.graph);
    f("inputAnnotations", m.inputAnnotations)("sampleInputs", m.sampleInputs);
    f("imageWidth", m.imageWidth)("imageHeight", m.imageHeight)("memoryPlan", m.memoryPlan);
}

void describe(Fields& f, ModuleInfo& m) {
    f("path", m.path)("name", m.name)("type", m.type)("parameters", m.parameters);
    f("buffers", m.buffers)("attributes", m.attributes)("methods", m.methods);
    f("children", m.children)("parameterCount", m.parameterCount);
    f("parameterBytes", m.parameterBytes)("totalParameterCount", m.totalParameterCount);
    f("totalBytes", m.totalBytes);
}

void describe(Fields& f, ModelInfo& info) {
    f("path", info.path)("format", info.format)("probe", info.probe)("modules", info.modules);
    f("inlined", info.inlinedForwardGraph)("parameterCount", info.parameterCount);
    f("parameterBytes", info.parameterBytes)("bufferBytes", info.bufferBytes);
    f("methodCount", info.methodCount)("torchVersion", info.torchVersion);
    f("loadMilliseconds", info.loadMilliseconds)("refusedLibraries", info.refusedLibraries);
    f("lacking", info.lacking);
}

void describe(Fields& f, DeviceInfo& d) {
    f("id", d.id)("name", d.name)("memory", d.memoryBytes)("available", d.available);
    f("reason", d.reason);
}

void describe(Fields& f, Error& e) {
    f("kind", e.kind)("message", e.message)("details", e.details)("operator", e.operatorName);
    f("library", e.library);
}

} // namespace fields

QCborMap toCbor(const ProbeResult& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const ModelInfo& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const DeviceInfo& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const FileFormatPatterns& value) {
    return fields::toMap(value);
}
QCborMap toCbor(const Error& value) {
    return fields::toMap(value);
}

ProbeResult probeResultFromCbor(const QCborMap& map) {
    return fields::fromMap<ProbeResult>(map);
}
ModelInfo modelInfoFromCbor(const QCborMap& map) {
    return fields::fromMap<ModelInfo>(map);
}
DeviceInfo deviceFromCbor(const QCborMap& map) {
    return fields::fromMap<DeviceInfo>(map);
}
FileFormatPatterns fileFormatFromCbor(const QCborMap& map) {
    return fields::fromMap<FileFormatPatterns>(map);
}
Error errorFromCbor(const QCborMap& map) {
    return fields::fromMap<Error>(map);
}

} // namespace scriptscope::protocol
