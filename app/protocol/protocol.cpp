#include "protocol.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <QCborArray>
#include <QCborStreamReader>
#include <QCborValue>
#include <QtEndian>

namespace scriptscope::protocol {
namespace {

// Short keys keep frames small; these names are the protocol.
QCborValue text(const std::string& s) {
    return QString::fromStdString(s);
}
std::string text(const QCborMap& map, const char* key) {
    return map.value(QLatin1String(key)).toString().toStdString();
}
qint64 integer(const QCborMap& map, const char* key) {
    return map.value(QLatin1String(key)).toInteger();
}
double real(const QCborMap& map, const char* key) {
    return map.value(QLatin1String(key)).toDouble();
}
bool boolean(const QCborMap& map, const char* key) {
    return map.value(QLatin1String(key)).toBool();
}
QCborArray array(const QCborMap& map, const char* key) {
    return map.value(QLatin1String(key)).toArray();
}
QCborMap submap(const QCborMap& map, const char* key) {
    return map.value(QLatin1String(key)).toMap();
}
void put(QCborMap& map, const char* key, const QCborValue& value) {
    map.insert(QLatin1String(key), value);
}

QCborArray numbers(const std::vector<int64_t>& values) {
    QCborArray array;
    for (const int64_t v : values) {
        array.append(QCborValue(qint64(v)));
    }
    return array;
}

QCborArray numbers(const std::vector<double>& values) {
    QCborArray array;
    for (const double v : values) {
        array.append(QCborValue(v));
    }
    return array;
}

std::vector<int64_t> int64s(const QCborArray& array) {
    std::vector<int64_t> values;
    for (const auto& v : array) {
        values.push_back(v.toInteger());
    }
    return values;
}

std::vector<double> doubles(const QCborArray& array) {
    std::vector<double> values;
    for (const auto& v : array) {
        values.push_back(v.toDouble());
    }
    return values;
}

QCborArray strings(const std::vector<std::string>& values) {
    QCborArray array;
    for (const auto& v : values) {
        array.append(text(v));
    }
    return array;
}

std::vector<std::string> strings(const QCborArray& array) {
    std::vector<std::string> values;
    for (const auto& v : array) {
        values.push_back(v.toString().toStdString());
    }
    return values;
}

// Raw float32 values as bytes (native order: both ends are this machine), and back; a length
// that is not a whole number of floats is refused (empty).
QByteArray floatBytes(const std::vector<float>& values) {
    return QByteArray(reinterpret_cast<const char*>(values.data()),
                      static_cast<qsizetype>(values.size() * sizeof(float)));
}
std::vector<float> floatsFromBytes(const QByteArray& bytes) {
    std::vector<float> values;
    if (!bytes.isEmpty() && bytes.size() % static_cast<qsizetype>(sizeof(float)) == 0) {
        values.resize(static_cast<size_t>(bytes.size()) / sizeof(float));
        std::memcpy(values.data(), bytes.constData(), static_cast<size_t>(bytes.size()));
    }
    return values;
}

QCborMap toCbor(const TensorInfo& t) {
    QCborMap m;
    put(m, "name", text(t.name));
    put(m, "shape", numbers(t.shape));
    put(m, "dtype", text(t.dtype));
    put(m, "device", text(t.device));
    put(m, "bytes", qint64(t.bytes));
    put(m, "grad", t.requiresGrad);
    if (t.packed || !t.qscheme.empty()) {
        put(m, "packed", t.packed);
        put(m, "packedIn", text(t.packedIn));
        put(m, "qscheme", text(t.qscheme));
        put(m, "scale", t.scale);
        put(m, "zeroPoint", qint64(t.zeroPoint));
        put(m, "scales", numbers(t.scales));
        put(m, "zeroPoints", numbers(t.zeroPoints));
        put(m, "axis", qint64(t.axis));
    }
    return m;
}

TensorInfo tensorInfoFromCbor(const QCborMap& m) {
    TensorInfo t;
    t.name = text(m, "name");
    t.shape = int64s(array(m, "shape"));
    t.dtype = text(m, "dtype");
    t.device = text(m, "device");
    t.bytes = static_cast<uint64_t>(integer(m, "bytes"));
    t.requiresGrad = boolean(m, "grad");
    if (m.contains(QStringLiteral("packed"))) {
        t.packed = boolean(m, "packed");
        t.packedIn = text(m, "packedIn");
        t.qscheme = text(m, "qscheme");
        t.scale = real(m, "scale");
        t.zeroPoint = integer(m, "zeroPoint");
        t.scales = doubles(array(m, "scales"));
        t.zeroPoints = int64s(array(m, "zeroPoints"));
        t.axis = integer(m, "axis");
    }
    return t;
}

QCborArray tensorList(const std::vector<TensorInfo>& tensors) {
    QCborArray array;
    for (const auto& t : tensors) {
        array.append(toCbor(t));
    }
    return array;
}

std::vector<TensorInfo> tensorList(const QCborArray& array) {
    std::vector<TensorInfo> tensors;
    for (const auto& v : array) {
        tensors.push_back(tensorInfoFromCbor(v.toMap()));
    }
    return tensors;
}

QCborMap toCbor(const MemoryPlan& plan) {
    QCborMap m;
    put(m, "buffers", numbers(plan.bufferBytes));
    put(m, "steps", strings(plan.steps));
    QCborArray blocks;
    for (const MemoryBlock& b : plan.blocks) {
        blocks.append(QCborArray{text(b.value), text(b.type), b.buffer, qint64(b.offset),
                                 qint64(b.bytes), b.first, b.last});
    }
    put(m, "blocks", blocks);
    return m;
}

MemoryPlan memoryPlanFromCbor(const QCborMap& m) {
    MemoryPlan plan;
    plan.bufferBytes = int64s(array(m, "buffers"));
    plan.steps = strings(array(m, "steps"));
    for (const auto& v : array(m, "blocks")) {
        const auto a = v.toArray();
        MemoryBlock b;
        b.value = a.at(0).toString().toStdString();
        b.type = a.at(1).toString().toStdString();
        b.buffer = static_cast<int>(a.at(2).toInteger());
        b.offset = static_cast<uint64_t>(a.at(3).toInteger());
        b.bytes = static_cast<uint64_t>(a.at(4).toInteger());
        b.first = static_cast<int>(a.at(5).toInteger());
        b.last = static_cast<int>(a.at(6).toInteger());
        plan.blocks.push_back(std::move(b));
    }
    return plan;
}

QCborMap toCbor(const ModuleInfo& module) {
    QCborMap m;
    put(m, "path", text(module.path));
    put(m, "name", text(module.name));
    put(m, "type", text(module.type));
    put(m, "parameters", tensorList(module.parameters));
    put(m, "buffers", tensorList(module.buffers));
    QCborArray attributes;
    for (const auto& a : module.attributes) {
        attributes.append(QCborArray{text(a.name), text(a.type), text(a.preview)});
    }
    put(m, "attributes", attributes);
    QCborArray methods;
    for (const auto& method : module.methods) {
        methods.append(QCborArray{text(method.name), text(method.schema), text(method.code),
                                  text(method.graph), strings(method.inputAnnotations),
                                  method.sampleInputs, toCbor(method.memoryPlan)});
    }
    put(m, "methods", methods);
    put(m, "children", strings(module.children));
    put(m, "parameterCount", qint64(module.parameterCount));
    put(m, "parameterBytes", qint64(module.parameterBytes));
    put(m, "totalParameterCount", qint64(module.totalParameterCount));
    put(m, "totalBytes", qint64(module.totalBytes));
    return m;
}

ModuleInfo moduleInfoFromCbor(const QCborMap& m) {
    ModuleInfo module;
    module.path = text(m, "path");
    module.name = text(m, "name");
    module.type = text(m, "type");
    module.parameters = tensorList(array(m, "parameters"));
    module.buffers = tensorList(array(m, "buffers"));
    for (const auto& v : array(m, "attributes")) {
        const auto a = v.toArray();
        module.attributes.push_back({a.at(0).toString().toStdString(),
                                     a.at(1).toString().toStdString(),
                                     a.at(2).toString().toStdString()});
    }
    for (const auto& v : array(m, "methods")) {
        const auto a = v.toArray();
        module.methods.push_back(
            {a.at(0).toString().toStdString(), a.at(1).toString().toStdString(),
             a.at(2).toString().toStdString(), a.at(3).toString().toStdString(),
             strings(a.at(4).toArray()), a.at(5).toBool(), memoryPlanFromCbor(a.at(6).toMap())});
    }
    module.children = strings(array(m, "children"));
    module.parameterCount = static_cast<uint64_t>(integer(m, "parameterCount"));
    module.parameterBytes = static_cast<uint64_t>(integer(m, "parameterBytes"));
    module.totalParameterCount = static_cast<uint64_t>(integer(m, "totalParameterCount"));
    module.totalBytes = static_cast<uint64_t>(integer(m, "totalBytes"));
    return module;
}

QCborMap toCbor(const InputSpec& spec) {
    QCborMap m;
    put(m, "kind", static_cast<int>(spec.kind));
    put(m, "shape", numbers(spec.shape));
    put(m, "dtype", text(spec.dtype));
    put(m, "path", text(spec.path));
    put(m, "node", text(spec.node));
    const ImagePreprocess& p = spec.image;
    QCborMap image;
    put(image, "width", p.width);
    put(image, "height", p.height);
    put(image, "rgb", p.rgb);
    put(image, "chw", p.channelsFirst);
    put(image, "batch", p.batch);
    put(image, "dtype", text(p.dtype));
    put(image, "scale", p.scale);
    put(image, "mean", numbers(p.mean));
    put(image, "std", numbers(p.stddev));
    put(image, "gray", p.grayscale);
    put(m, "image", image);
    put(m, "int", qint64(spec.intValue));
    put(m, "float", spec.floatValue);
    put(m, "bool", spec.boolValue);
    put(m, "string", text(spec.stringValue));
    put(m, "ints", numbers(spec.intList));
    put(m, "floats", numbers(spec.floatList));
    put(m, "seed", qint64(spec.seed));
    if (!spec.elements.empty()) {
        QCborArray elements;
        for (const auto& element : spec.elements) {
            elements.append(toCbor(element));
        }
        put(m, "elements", elements);
        put(m, "keys", strings(spec.keys));
    }
    return m;
}

// Containers nest; a hostile message cannot recurse without bound.
constexpr int kMaxSpecDepth = 32;

InputSpec inputSpecFromCbor(const QCborMap& m, int depth = 0) {
    InputSpec spec;
    spec.kind = static_cast<InputSpec::Kind>(integer(m, "kind"));
    spec.shape = int64s(array(m, "shape"));
    spec.dtype = text(m, "dtype");
    spec.path = text(m, "path");
    spec.node = text(m, "node");
    const QCborMap image = submap(m, "image");
    ImagePreprocess& p = spec.image;
    p.width = static_cast<int>(integer(image, "width"));
    p.height = static_cast<int>(integer(image, "height"));
    p.rgb = boolean(image, "rgb");
    p.channelsFirst = boolean(image, "chw");
    p.batch = boolean(image, "batch");
    p.dtype = text(image, "dtype");
    p.scale = real(image, "scale");
    p.mean = doubles(array(image, "mean"));
    p.stddev = doubles(array(image, "std"));
    p.grayscale = boolean(image, "gray");
    spec.intValue = integer(m, "int");
    spec.floatValue = real(m, "float");
    spec.boolValue = boolean(m, "bool");
    spec.stringValue = text(m, "string");
    spec.intList = int64s(array(m, "ints"));
    spec.floatList = doubles(array(m, "floats"));
    spec.seed = static_cast<uint64_t>(integer(m, "seed"));
    if (depth < kMaxSpecDepth) {
        for (const auto& v : array(m, "elements")) {
            spec.elements.push_back(inputSpecFromCbor(v.toMap(), depth + 1));
        }
        spec.keys = strings(array(m, "keys"));
    }
    return spec;
}

OutputValue outputAt(const QCborMap& m, int depth) {
    OutputValue v;
    v.kind = static_cast<OutputValue::Kind>(integer(m, "kind"));
    v.key = text(m, "key");
    v.shape = int64s(array(m, "shape"));
    v.dtype = text(m, "dtype");
    v.device = text(m, "device");
    const auto stats = array(m, "stats");
    v.min = stats.at(0).toDouble();
    v.max = stats.at(1).toDouble();
    v.mean = stats.at(2).toDouble();
    v.stddev = stats.at(3).toDouble();
    const auto counts = array(m, "counts");
    v.nanCount = counts.at(0).toInteger();
    v.infCount = counts.at(1).toInteger();
    v.numel = counts.at(2).toInteger();
    v.preview = doubles(array(m, "preview"));
    v.values = floatsFromBytes(m.value(QStringLiteral("values")).toByteArray());
    v.text = text(m, "text");
    if (depth < 64) { // a hostile message cannot recurse without bound
        for (const auto& child : array(m, "children")) {
            v.children.push_back(outputAt(child.toMap(), depth + 1));
        }
    }
    return v;
}

} // namespace

QCborMap toCbor(const OutputValue& v) {
    QCborMap m;
    put(m, "kind", static_cast<int>(v.kind));
    put(m, "key", text(v.key));
    put(m, "shape", numbers(v.shape));
    put(m, "dtype", text(v.dtype));
    put(m, "device", text(v.device));
    put(m, "stats", QCborArray{v.min, v.max, v.mean, v.stddev});
    put(m, "counts", QCborArray{qint64(v.nanCount), qint64(v.infCount), qint64(v.numel)});
    put(m, "preview", numbers(v.preview));
    if (!v.values.empty()) {
        put(m, "values", floatBytes(v.values));
    }
    put(m, "text", text(v.text));
    QCborArray children;
    for (const auto& child : v.children) {
        children.append(toCbor(child));
    }
    put(m, "children", children);
    return m;
}

OutputValue outputFromCbor(const QCborMap& map) {
    return outputAt(map, 0);
}

QCborMap toCbor(const DeviceInfo& d) {
    QCborMap m;
    put(m, "id", text(d.id));
    put(m, "name", text(d.name));
    put(m, "memory", qint64(d.memoryBytes));
    put(m, "available", d.available);
    put(m, "reason", text(d.reason));
    return m;
}

DeviceInfo deviceFromCbor(const QCborMap& m) {
    DeviceInfo d;
    d.id = text(m, "id");
    d.name = text(m, "name");
    d.memoryBytes = static_cast<uint64_t>(integer(m, "memory"));
    d.available = boolean(m, "available");
    d.reason = text(m, "reason");
    return d;
}

QByteArray encode(const Message& message) {
    QCborMap map;
    put(map, "v", kVersion);
    put(map, "type", static_cast<int>(message.type));
    put(map, "id", qint64(message.id));
    put(map, "body", message.body);
    return map.toCborValue().toCbor();
}

Expected<Message> decode(const QByteArray& bytes) {
    QCborStreamReader reader(bytes);
    const QCborValue value = QCborValue::fromCbor(reader);
    if (reader.lastError() != QCborError::NoError) {
        return Error(ErrorKind::Internal,
                     "malformed message: " + reader.lastError().toString().toStdString());
    }
    if (reader.currentOffset() != bytes.size()) {
        return Error(ErrorKind::Internal, "malformed message: bytes after the message");
    }
    if (!value.isMap()) {
        return Error(ErrorKind::Internal, "malformed message: not a map");
    }
    const QCborMap map = value.toMap();
    const QCborValue version = map.value(QLatin1String("v"));
    if (!version.isInteger() || version.toInteger() != kVersion) {
        return Error(ErrorKind::Internal,
                     "protocol version " + std::to_string(version.toInteger()) +
                         " is not this program's version " + std::to_string(kVersion) +
                         ": the worker and the GUI come from different builds");
    }
    const QCborValue type = map.value(QLatin1String("type"));
    if (!type.isInteger() || type.toInteger() < static_cast<int>(MessageType::Probe) ||
        type.toInteger() > static_cast<int>(kLastMessageType)) {
        return Error(ErrorKind::Internal, "malformed message: unknown type");
    }
    const QCborValue id = map.value(QLatin1String("id"));
    const QCborValue body = map.value(QLatin1String("body"));
    if (!id.isInteger() || !body.isMap()) {
        return Error(ErrorKind::Internal, "malformed message: no id or body");
    }
    return Message{static_cast<MessageType>(type.toInteger()), static_cast<quint64>(id.toInteger()),
                   body.toMap()};
}

QByteArray frame(const QByteArray& payload) {
    QByteArray bytes(4, '\0');
    qToBigEndian(static_cast<quint32>(payload.size()), bytes.data());
    return bytes + payload;
}

bool FrameReader::inFrame() const {
    return !failed_ && !buffer_.isEmpty() &&
           (buffer_.size() < 4 ||
            buffer_.size() < 4 + qFromBigEndian<quint32>(buffer_.constData()));
}

std::optional<QByteArray> FrameReader::next() {
    if (failed_ || buffer_.size() < 4) {
        return std::nullopt;
    }
    const qint64 length = qFromBigEndian<quint32>(buffer_.constData());
    if (length > kMaxFrameBytes) {
        failed_ = true;
        return std::nullopt;
    }
    if (buffer_.size() < 4 + length) {
        return std::nullopt;
    }
    QByteArray payload = buffer_.mid(4, length);
    buffer_.remove(0, 4 + length);
    return payload;
}

Message make(MessageType type, quint64 id, QCborMap body) {
    return Message{type, id, std::move(body)};
}

QCborMap toCbor(const ProbeResult& p) {
    QCborMap m;
    put(m, "path", text(p.path));
    put(m, "fileSize", qint64(p.fileSize));
    put(m, "kind", static_cast<int>(p.kind));
    put(m, "summary", text(p.summary));
    put(m, "archiveName", text(p.archiveName));
    QCborArray records;
    for (const auto& r : p.records) {
        records.append(QCborArray{text(r.name), qint64(r.size), qint64(r.compressedSize),
                                  qint64(r.offset), r.stored, int(r.method)});
    }
    put(m, "records", records);
    put(m, "version", qint64(p.version));
    put(m, "versionText", text(p.versionText));
    put(m, "maxSupportedVersion", qint64(p.maxSupportedVersion));
    QCborMap extra;
    for (const auto& [name, content] : p.extraFiles) {
        extra.insert(QString::fromStdString(name), text(content));
    }
    put(m, "extraFiles", extra);
    QCborArray operators;
    for (const auto& op : p.operators) {
        operators.append(QCborArray{text(op.name), op.registered});
    }
    put(m, "operators", operators);
    put(m, "pickleGlobals", strings(p.pickleGlobals));
    put(m, "producer", text(p.producer));
    QCborMap code;
    for (const auto& [name, content] : p.codeFiles) {
        code.insert(QString::fromStdString(name), text(content));
    }
    put(m, "codeFiles", code);
    QCborArray storages;
    for (const auto& s : p.storages) {
        storages.append(QCborArray{text(s.record), text(s.dtype), text(s.location), qint64(s.numel),
                                   qint64(s.declaredBytes), qint64(s.storedBytes), s.present});
    }
    put(m, "storages", storages);
    put(m, "tensors", strings(p.tensors));
    put(m, "damage", text(p.damage));
    put(m, "notes", strings(p.notes));
    return m;
}

ProbeResult probeResultFromCbor(const QCborMap& m) {
    ProbeResult p;
    p.path = text(m, "path");
    p.fileSize = static_cast<uint64_t>(integer(m, "fileSize"));
    p.kind = static_cast<FileKind>(integer(m, "kind"));
    p.summary = text(m, "summary");
    p.archiveName = text(m, "archiveName");
    for (const auto& v : array(m, "records")) {
        const auto a = v.toArray();
        ArchiveRecord r;
        r.name = a.at(0).toString().toStdString();
        r.size = static_cast<uint64_t>(a.at(1).toInteger());
        r.compressedSize = static_cast<uint64_t>(a.at(2).toInteger());
        r.offset = static_cast<uint64_t>(a.at(3).toInteger());
        r.stored = a.at(4).toBool();
        r.method = static_cast<uint16_t>(a.at(5).toInteger());
        p.records.push_back(r);
    }
    p.version = integer(m, "version");
    p.versionText = text(m, "versionText");
    p.maxSupportedVersion = integer(m, "maxSupportedVersion");
    const QCborMap extra = submap(m, "extraFiles");
    for (auto it = extra.begin(); it != extra.end(); ++it) {
        p.extraFiles[it.key().toString().toStdString()] = it.value().toString().toStdString();
    }
    for (const auto& v : array(m, "operators")) {
        const auto a = v.toArray();
        p.operators.push_back({a.at(0).toString().toStdString(), a.at(1).toBool()});
    }
    p.pickleGlobals = strings(array(m, "pickleGlobals"));
    const QCborMap code = submap(m, "codeFiles");
    for (auto it = code.begin(); it != code.end(); ++it) {
        p.codeFiles[it.key().toString().toStdString()] = it.value().toString().toStdString();
    }
    for (const auto& v : array(m, "storages")) {
        const auto a = v.toArray();
        StorageInfo s;
        s.record = a.at(0).toString().toStdString();
        s.dtype = a.at(1).toString().toStdString();
        s.location = a.at(2).toString().toStdString();
        s.numel = a.at(3).toInteger();
        s.declaredBytes = static_cast<uint64_t>(a.at(4).toInteger());
        s.storedBytes = static_cast<uint64_t>(a.at(5).toInteger());
        s.present = a.at(6).toBool();
        p.storages.push_back(s);
    }
    p.tensors = strings(array(m, "tensors"));
    p.damage = text(m, "damage");
    p.notes = strings(array(m, "notes"));
    p.producer = text(m, "producer");
    return p;
}

QCborMap toCbor(const ModelInfo& info) {
    QCborMap m;
    put(m, "path", text(info.path));
    put(m, "format", text(info.format));
    put(m, "probe", toCbor(info.probe));
    QCborArray modules;
    for (const auto& module : info.modules) {
        modules.append(toCbor(module));
    }
    put(m, "modules", modules);
    put(m, "inlined", text(info.inlinedForwardGraph));
    put(m, "parameterCount", qint64(info.parameterCount));
    put(m, "parameterBytes", qint64(info.parameterBytes));
    put(m, "bufferBytes", qint64(info.bufferBytes));
    put(m, "methodCount", qint64(info.methodCount));
    put(m, "torchVersion", text(info.torchVersion));
    put(m, "loadMilliseconds", info.loadMilliseconds);
    QCborArray refused;
    for (const auto& [library, why] : info.refusedLibraries) {
        refused.append(QCborArray{text(library), text(why)});
    }
    put(m, "refusedLibraries", refused);
    QCborMap lacking;
    for (const auto& [capability, why] : info.lacking) {
        lacking.insert(QLatin1String(toString(capability)), text(why));
    }
    put(m, "lacking", lacking);
    return m;
}

ModelInfo modelInfoFromCbor(const QCborMap& m) {
    ModelInfo info;
    info.path = text(m, "path");
    info.format = text(m, "format");
    info.probe = probeResultFromCbor(submap(m, "probe"));
    for (const auto& v : array(m, "modules")) {
        info.modules.push_back(moduleInfoFromCbor(v.toMap()));
    }
    info.inlinedForwardGraph = text(m, "inlined");
    info.parameterCount = static_cast<uint64_t>(integer(m, "parameterCount"));
    info.parameterBytes = static_cast<uint64_t>(integer(m, "parameterBytes"));
    info.bufferBytes = static_cast<uint64_t>(integer(m, "bufferBytes"));
    info.methodCount = static_cast<uint64_t>(integer(m, "methodCount"));
    info.torchVersion = text(m, "torchVersion");
    info.loadMilliseconds = real(m, "loadMilliseconds");
    for (const auto& v : array(m, "refusedLibraries")) {
        const QCborArray pair = v.toArray();
        info.refusedLibraries.emplace_back(pair.at(0).toString().toStdString(),
                                           pair.at(1).toString().toStdString());
    }
    const QCborMap lacking = submap(m, "lacking");
    for (auto it = lacking.begin(); it != lacking.end(); ++it) {
        // A name this side does not know (a newer worker's) is nothing it could offer anyway.
        const Capability capability = capabilityFromString(it.key().toString().toStdString());
        if (capability != Capability::Count) {
            info.lacking[capability] = it.value().toString().toStdString();
        }
    }
    return info;
}

QCborMap toCbor(const RunRequest& r) {
    QCborMap m;
    put(m, "method", text(r.method));
    QCborArray inputs;
    for (const auto& spec : r.inputs) {
        inputs.append(toCbor(spec));
    }
    put(m, "inputs", inputs);
    put(m, "inputsFile", text(r.inputsFile));
    put(m, "device", text(r.device));
    put(m, "warmup", r.warmup);
    put(m, "iterations", r.iterations);
    put(m, "saveOutputsPath", text(r.saveOutputsPath));
    put(m, "previewValues", qint64(r.previewValues));
    put(m, "valuesLimit", qint64(r.valuesLimit));
    put(m, "profile", r.profile);
    return m;
}

RunRequest runRequestFromCbor(const QCborMap& m) {
    RunRequest r;
    r.method = text(m, "method");
    for (const auto& v : array(m, "inputs")) {
        r.inputs.push_back(inputSpecFromCbor(v.toMap()));
    }
    r.inputsFile = text(m, "inputsFile");
    r.device = text(m, "device");
    r.warmup = static_cast<int>(integer(m, "warmup"));
    r.iterations = static_cast<int>(integer(m, "iterations"));
    r.saveOutputsPath = text(m, "saveOutputsPath");
    r.previewValues = static_cast<size_t>(integer(m, "previewValues"));
    r.valuesLimit = static_cast<size_t>(std::max<qint64>(0, integer(m, "valuesLimit")));
    r.profile = m.value(QStringLiteral("profile")).toBool(false);
    return r;
}

QCborMap toCbor(const RunResult& r) {
    QCborMap m;
    put(m, "model", text(r.model));
    put(m, "method", text(r.method));
    put(m, "device", text(r.device));
    put(m, "deviceName", text(r.deviceName));
    put(m, "warmup", r.warmup);
    put(m, "synchronized", r.synchronized);
    put(m, "samples", numbers(r.samplesMs));
    const TimingStats& s = r.stats;
    put(m, "stats",
        QCborArray{qint64(s.count), s.min, s.p50, s.p90, s.p99, s.max, s.mean, s.stddev});
    put(m, "inputs", strings(r.inputDescriptions));
    put(m, "output", toCbor(r.output));
    if (r.profiled) {
        QCborArray modules, operators;
        for (const auto& module : r.profile.modules) {
            modules.append(
                QCborArray{text(module.path), module.selfMs, module.totalMs, qint64(module.calls)});
        }
        for (const auto& op : r.profile.operators) {
            operators.append(QCborArray{text(op.name), op.totalMs, op.selfMs, qint64(op.calls)});
        }
        QCborArray shapes;
        for (const auto& [value, shape] : r.profile.valueShapes) {
            shapes.append(QCborArray{text(value), text(shape)});
        }
        put(m, "profile",
            QCborMap{{QStringLiteral("operatorMs"), r.profile.operatorMs},
                     {QStringLiteral("wallMs"), r.profile.wallMs},
                     {QStringLiteral("modules"), modules},
                     {QStringLiteral("operators"), operators},
                     {QStringLiteral("shapes"), shapes},
                     {QStringLiteral("shapesError"), text(r.profile.shapesError)},
                     {QStringLiteral("shapesMethod"), text(r.profile.shapesMethod)}});
    }
    return m;
}

RunResult runResultFromCbor(const QCborMap& m) {
    RunResult r;
    r.model = text(m, "model");
    r.method = text(m, "method");
    r.device = text(m, "device");
    r.deviceName = text(m, "deviceName");
    r.warmup = static_cast<int>(integer(m, "warmup"));
    r.synchronized = boolean(m, "synchronized");
    r.samplesMs = doubles(array(m, "samples"));
    const auto s = array(m, "stats");
    r.stats.count = static_cast<size_t>(s.at(0).toInteger());
    r.stats.min = s.at(1).toDouble();
    r.stats.p50 = s.at(2).toDouble();
    r.stats.p90 = s.at(3).toDouble();
    r.stats.p99 = s.at(4).toDouble();
    r.stats.max = s.at(5).toDouble();
    r.stats.mean = s.at(6).toDouble();
    r.stats.stddev = s.at(7).toDouble();
    r.inputDescriptions = strings(array(m, "inputs"));
    r.output = outputFromCbor(submap(m, "output"));
    if (m.contains(QStringLiteral("profile"))) {
        const QCborMap p = submap(m, "profile");
        r.profiled = true;
        r.profile.operatorMs = real(p, "operatorMs");
        r.profile.wallMs = real(p, "wallMs");
        for (const auto& entry : array(p, "modules")) {
            const QCborArray e = entry.toArray();
            r.profile.modules.push_back({e.at(0).toString().toStdString(), e.at(1).toDouble(),
                                         e.at(2).toDouble(), e.at(3).toInteger()});
        }
        for (const auto& entry : array(p, "operators")) {
            const QCborArray e = entry.toArray();
            r.profile.operators.push_back({e.at(0).toString().toStdString(), e.at(1).toDouble(),
                                           e.at(2).toDouble(), e.at(3).toInteger()});
        }
        for (const auto& entry : array(p, "shapes")) {
            const QCborArray e = entry.toArray();
            r.profile.valueShapes[e.at(0).toString().toStdString()] =
                e.at(1).toString().toStdString();
        }
        r.profile.shapesError = text(p, "shapesError");
        r.profile.shapesMethod = text(p, "shapesMethod");
    }
    return r;
}

QCborMap toCbor(const Error& e) {
    QCborMap m;
    put(m, "kind", static_cast<int>(e.kind));
    put(m, "message", text(e.message));
    put(m, "details", text(e.details));
    put(m, "operator", text(e.operatorName));
    put(m, "library", text(e.library));
    return m;
}

Error errorFromCbor(const QCborMap& m) {
    Error e(static_cast<ErrorKind>(integer(m, "kind")), text(m, "message"), text(m, "details"));
    e.operatorName = text(m, "operator");
    e.library = text(m, "library");
    return e;
}

// ---- Numerics: activations, passes, diffs ----

namespace {

QCborArray diffLinesCbor(const std::vector<DiffLine>& lines) {
    QCborArray a;
    for (const auto& l : lines) {
        a.append(QCborArray{static_cast<int>(l.op), text(l.text), l.lineA, l.lineB, l.count});
    }
    return a;
}

std::vector<DiffLine> diffLinesFromCbor(const QCborArray& a) {
    std::vector<DiffLine> lines;
    for (const auto& v : a) {
        const QCborArray x = v.toArray();
        DiffLine l;
        const auto op = x.at(0).toInteger();
        l.op = op >= 0 && op <= 3 ? static_cast<DiffLine::Op>(op) : DiffLine::Op::Same;
        l.text = x.at(1).toString().toStdString();
        l.lineA = static_cast<int>(x.at(2).toInteger());
        l.lineB = static_cast<int>(x.at(3).toInteger());
        l.count = static_cast<int>(x.at(4).toInteger());
        lines.push_back(std::move(l));
    }
    return lines;
}

QCborArray timing(const TimingStats& s) {
    return QCborArray{qint64(s.count), s.min, s.p50, s.p90, s.p99, s.max, s.mean, s.stddev};
}

TimingStats timingFromCbor(const QCborArray& a) {
    TimingStats s;
    s.count = static_cast<size_t>(std::max<qint64>(0, a.at(0).toInteger()));
    s.min = a.at(1).toDouble();
    s.p50 = a.at(2).toDouble();
    s.p90 = a.at(3).toDouble();
    s.p99 = a.at(4).toDouble();
    s.max = a.at(5).toDouble();
    s.mean = a.at(6).toDouble();
    s.stddev = a.at(7).toDouble();
    return s;
}

QCborArray ints(const std::vector<int>& values) {
    QCborArray a;
    for (const int v : values) {
        a.append(v);
    }
    return a;
}

std::vector<int> intsFromCbor(const QCborArray& a) {
    std::vector<int> values;
    for (const auto& v : a) {
        values.push_back(static_cast<int>(v.toInteger()));
    }
    return values;
}

} // namespace

QCborMap toCbor(const ActivationRequest& r) {
    QCborMap m;
    put(m, "run", toCbor(r.run));
    put(m, "bins", r.bins);
    put(m, "pinNodes", ints(r.pinNodes));
    put(m, "pinBytes", qint64(r.pinBytes));
    put(m, "compareDevice", text(r.compareDevice));
    if (r.compareRun) {
        put(m, "compareRun", toCbor(*r.compareRun));
    }
    put(m, "referenceFile", text(r.referenceFile));
    put(m, "referenceModel", text(r.referenceModel));
    put(m, "referenceLibraries", strings(r.referenceOperatorLibraries));
    put(m, "tolerance", r.tolerance);
    put(m, "compareBytes", qint64(r.compareBytes));
    return m;
}

ActivationRequest activationRequestFromCbor(const QCborMap& m) {
    ActivationRequest r;
    r.run = runRequestFromCbor(submap(m, "run"));
    r.bins = static_cast<int>(integer(m, "bins"));
    r.pinNodes = intsFromCbor(array(m, "pinNodes"));
    r.pinBytes = static_cast<uint64_t>(std::max<qint64>(0, integer(m, "pinBytes")));
    r.compareDevice = text(m, "compareDevice");
    if (m.contains(QLatin1String("compareRun"))) {
        r.compareRun = runRequestFromCbor(submap(m, "compareRun"));
    }
    r.referenceFile = text(m, "referenceFile");
    r.referenceModel = text(m, "referenceModel");
    r.referenceOperatorLibraries = strings(array(m, "referenceLibraries"));
    r.tolerance = real(m, "tolerance");
    r.compareBytes = static_cast<uint64_t>(std::max<qint64>(0, integer(m, "compareBytes")));
    return r;
}

QCborMap toCbor(const ActivationReport& r) {
    QCborMap m;
    put(m, "model", text(r.model));
    put(m, "method", text(r.method));
    put(m, "device", text(r.device));
    QCborArray records;
    for (const auto& x : r.records) {
        QCborMap c;
        put(c, "at", QCborArray{x.node, x.occurrence, x.output, x.irLine});
        put(c, "value", text(x.value));
        put(c, "kind", text(x.kind));
        put(c, "module", text(x.module));
        put(c, "outputs", strings(x.moduleOutputs));
        put(c, "source", text(x.source));
        put(c, "sourceText", text(x.sourceText));
        put(c, "shape", numbers(x.shape));
        put(c, "dtype", text(x.dtype));
        put(c, "device", text(x.device));
        put(c, "stats", QCborArray{x.min, x.max, x.mean, x.stddev, x.histogramMin, x.histogramMax});
        put(c, "counts", QCborArray{qint64(x.numel), qint64(x.nanCount), qint64(x.infCount)});
        put(c, "histogram", numbers(x.histogram));
        put(c, "note", text(x.note));
        if (!x.comparedWith.empty()) {
            put(c, "compare",
                QCborArray{x.compared, x.maxAbsDiff, text(x.comparedWith), text(x.compareNote)});
        }
        if (!x.values.empty()) {
            put(c, "values", floatBytes(x.values));
        }
        records.append(c);
    }
    put(m, "records", records);
    put(m, "first", QCborArray{r.firstNonFinite, r.firstDifference});
    put(m, "firstInputs", ints(r.firstNonFiniteInputs));
    put(m, "comparison", text(r.comparison));
    put(m, "tolerance", r.tolerance);
    put(m, "compared", r.comparedCount);
    put(m, "unmatched", strings(r.unmatched));
    put(m, "notes", strings(r.notes));
    put(m, "runMs", r.runMs);
    put(m, "pinnedBytes", qint64(r.pinnedBytes));
    put(m, "output", toCbor(r.output));
    return m;
}

ActivationReport activationReportFromCbor(const QCborMap& m) {
    ActivationReport r;
    r.model = text(m, "model");
    r.method = text(m, "method");
    r.device = text(m, "device");
    for (const auto& v : array(m, "records")) {
        const QCborMap c = v.toMap();
        ActivationRecord x;
        const auto at = array(c, "at");
        x.node = static_cast<int>(at.at(0).toInteger(-1));
        x.occurrence = static_cast<int>(at.at(1).toInteger());
        x.output = static_cast<int>(at.at(2).toInteger());
        x.irLine = static_cast<int>(at.at(3).toInteger());
        x.value = text(c, "value");
        x.kind = text(c, "kind");
        x.module = text(c, "module");
        x.moduleOutputs = strings(array(c, "outputs"));
        x.source = text(c, "source");
        x.sourceText = text(c, "sourceText");
        x.shape = int64s(array(c, "shape"));
        x.dtype = text(c, "dtype");
        x.device = text(c, "device");
        const auto stats = array(c, "stats");
        x.min = stats.at(0).toDouble();
        x.max = stats.at(1).toDouble();
        x.mean = stats.at(2).toDouble();
        x.stddev = stats.at(3).toDouble();
        x.histogramMin = stats.at(4).toDouble();
        x.histogramMax = stats.at(5).toDouble();
        const auto counts = array(c, "counts");
        x.numel = counts.at(0).toInteger();
        x.nanCount = counts.at(1).toInteger();
        x.infCount = counts.at(2).toInteger();
        x.histogram = int64s(array(c, "histogram"));
        x.note = text(c, "note");
        const auto compare = array(c, "compare");
        if (!compare.isEmpty()) {
            x.compared = compare.at(0).toBool();
            x.maxAbsDiff = compare.at(1).toDouble();
            x.comparedWith = compare.at(2).toString().toStdString();
            x.compareNote = compare.at(3).toString().toStdString();
        }
        x.values = floatsFromBytes(c.value(QStringLiteral("values")).toByteArray());
        r.records.push_back(std::move(x));
    }
    const auto count = static_cast<int>(r.records.size());
    auto index = [count](qint64 i) { return i >= 0 && i < count ? static_cast<int>(i) : -1; };
    const auto first = array(m, "first");
    r.firstNonFinite = index(first.at(0).toInteger(-1));
    r.firstDifference = index(first.at(1).toInteger(-1));
    for (const int i : intsFromCbor(array(m, "firstInputs"))) {
        if (index(i) >= 0) {
            r.firstNonFiniteInputs.push_back(i);
        }
    }
    r.comparison = text(m, "comparison");
    r.tolerance = real(m, "tolerance");
    r.comparedCount = static_cast<int>(integer(m, "compared"));
    r.unmatched = strings(array(m, "unmatched"));
    r.notes = strings(array(m, "notes"));
    r.runMs = real(m, "runMs");
    r.pinnedBytes = static_cast<uint64_t>(std::max<qint64>(0, integer(m, "pinnedBytes")));
    r.output = outputFromCbor(submap(m, "output"));
    return r;
}

QCborMap toCbor(const OptimizeRequest& r) {
    QCborMap m;
    put(m, "passes", strings(r.passes));
    put(m, "run", toCbor(r.run));
    put(m, "savePath", text(r.savePath));
    put(m, "keepUnloadable", r.keepUnloadable);
    put(m, "tolerance", r.tolerance);
    return m;
}

OptimizeRequest optimizeRequestFromCbor(const QCborMap& m) {
    OptimizeRequest r;
    r.passes = strings(array(m, "passes"));
    r.run = runRequestFromCbor(submap(m, "run"));
    r.savePath = text(m, "savePath");
    r.keepUnloadable = boolean(m, "keepUnloadable");
    r.tolerance = real(m, "tolerance");
    return r;
}

QCborMap toCbor(const OptimizeResult& r) {
    QCborMap m;
    put(m, "method", text(r.method));
    put(m, "applied", strings(r.applied));
    put(m, "before", text(r.graphBefore));
    put(m, "after", text(r.graphAfter));
    put(m, "diff", diffLinesCbor(r.graphDiff));
    put(m, "nodes", QCborArray{r.nodesBefore, r.nodesAfter});
    QCborArray kinds;
    for (const auto& k : r.kinds) {
        kinds.append(QCborArray{text(k.kind), k.before, k.after});
    }
    put(m, "kinds", kinds);
    put(m, "timed", r.timed);
    put(m, "timeBefore", timing(r.before));
    put(m, "timeAfter", timing(r.after));
    put(m, "speedup", r.speedup);
    put(m, "outputsCompared", r.outputsCompared);
    put(m, "maxAbsDiff", r.maxAbsDiff);
    put(m, "compareNote", text(r.compareNote));
    QCborArray modules;
    for (const auto& d : r.modules) {
        modules.append(QCborArray{text(d.module), d.maxAbsDiff});
    }
    put(m, "modules", modules);
    put(m, "firstDifferent", text(r.firstDifferentModule));
    put(m, "tolerance", r.tolerance);
    put(m, "saved", text(r.saved));
    put(m, "savedVerified", r.savedVerified);
    put(m, "saveError", text(r.saveError));
    put(m, "notes", strings(r.notes));
    return m;
}

OptimizeResult optimizeResultFromCbor(const QCborMap& m) {
    OptimizeResult r;
    r.method = text(m, "method");
    r.applied = strings(array(m, "applied"));
    r.graphBefore = text(m, "before");
    r.graphAfter = text(m, "after");
    r.graphDiff = diffLinesFromCbor(array(m, "diff"));
    const auto nodes = array(m, "nodes");
    r.nodesBefore = static_cast<int>(nodes.at(0).toInteger());
    r.nodesAfter = static_cast<int>(nodes.at(1).toInteger());
    for (const auto& v : array(m, "kinds")) {
        const QCborArray k = v.toArray();
        r.kinds.push_back({k.at(0).toString().toStdString(), static_cast<int>(k.at(1).toInteger()),
                           static_cast<int>(k.at(2).toInteger())});
    }
    r.timed = boolean(m, "timed");
    r.before = timingFromCbor(array(m, "timeBefore"));
    r.after = timingFromCbor(array(m, "timeAfter"));
    r.speedup = real(m, "speedup");
    r.outputsCompared = boolean(m, "outputsCompared");
    r.maxAbsDiff = real(m, "maxAbsDiff");
    r.compareNote = text(m, "compareNote");
    for (const auto& v : array(m, "modules")) {
        const QCborArray d = v.toArray();
        r.modules.push_back({d.at(0).toString().toStdString(), d.at(1).toDouble()});
    }
    r.firstDifferentModule = text(m, "firstDifferent");
    r.tolerance = real(m, "tolerance");
    r.saved = text(m, "saved");
    r.savedVerified = boolean(m, "savedVerified");
    r.saveError = text(m, "saveError");
    r.notes = strings(array(m, "notes"));
    return r;
}

QCborMap toCbor(const ArchiveDiff& d) {
    QCborMap m;
    put(m, "a", text(d.pathA));
    put(m, "b", text(d.pathB));
    put(m, "identical", d.identical);
    QCborArray modules, tensors, attributes, texts, extras;
    for (const auto& x : d.modules) {
        modules.append(
            QCborArray{text(x.path), static_cast<int>(x.kind), text(x.typeA), text(x.typeB)});
    }
    for (const auto& t : d.tensors) {
        tensors.append(QCborArray{
            text(t.name), static_cast<int>(t.kind), t.buffer, numbers(t.shapeA), numbers(t.shapeB),
            text(t.dtypeA), text(t.dtypeB), t.maxAbsDiff, qint64(t.differing), qint64(t.numel)});
    }
    for (const auto& a : d.attributes) {
        attributes.append(QCborArray{text(a.module), text(a.name), text(a.valueA), text(a.valueB)});
    }
    for (const auto& t : d.texts) {
        texts.append(QCborArray{text(t.module), text(t.method), text(t.what),
                                diffLinesCbor(t.lines), t.added, t.removed});
    }
    for (const auto& e : d.extraFiles) {
        extras.append(QCborArray{text(e.name), text(e.change)});
    }
    put(m, "modules", modules);
    put(m, "tensors", tensors);
    put(m, "attributes", attributes);
    put(m, "texts", texts);
    put(m, "extras", extras);
    put(m, "compared", d.tensorsCompared);
    put(m, "ms", QCborArray{d.loadMsA, d.loadMsB, d.diffMs});
    return m;
}

ArchiveDiff archiveDiffFromCbor(const QCborMap& m) {
    ArchiveDiff d;
    d.pathA = text(m, "a");
    d.pathB = text(m, "b");
    d.identical = boolean(m, "identical");
    for (const auto& v : array(m, "modules")) {
        const QCborArray x = v.toArray();
        const auto kind = x.at(1).toInteger();
        d.modules.push_back({x.at(0).toString().toStdString(),
                             kind >= 0 && kind <= 2 ? static_cast<ModuleChange::Kind>(kind)
                                                    : ModuleChange::Kind::Added,
                             x.at(2).toString().toStdString(), x.at(3).toString().toStdString()});
    }
    for (const auto& v : array(m, "tensors")) {
        const QCborArray x = v.toArray();
        TensorChange t;
        t.name = x.at(0).toString().toStdString();
        const auto kind = x.at(1).toInteger();
        t.kind = kind >= 0 && kind <= 4 ? static_cast<TensorChange::Kind>(kind)
                                        : TensorChange::Kind::Values;
        t.buffer = x.at(2).toBool();
        t.shapeA = int64s(x.at(3).toArray());
        t.shapeB = int64s(x.at(4).toArray());
        t.dtypeA = x.at(5).toString().toStdString();
        t.dtypeB = x.at(6).toString().toStdString();
        t.maxAbsDiff = x.at(7).toDouble();
        t.differing = x.at(8).toInteger();
        t.numel = x.at(9).toInteger();
        d.tensors.push_back(std::move(t));
    }
    for (const auto& v : array(m, "attributes")) {
        const QCborArray x = v.toArray();
        d.attributes.push_back({x.at(0).toString().toStdString(), x.at(1).toString().toStdString(),
                                x.at(2).toString().toStdString(),
                                x.at(3).toString().toStdString()});
    }
    for (const auto& v : array(m, "texts")) {
        const QCborArray x = v.toArray();
        TextChange t;
        t.module = x.at(0).toString().toStdString();
        t.method = x.at(1).toString().toStdString();
        t.what = x.at(2).toString().toStdString();
        t.lines = diffLinesFromCbor(x.at(3).toArray());
        t.added = static_cast<int>(x.at(4).toInteger());
        t.removed = static_cast<int>(x.at(5).toInteger());
        d.texts.push_back(std::move(t));
    }
    for (const auto& v : array(m, "extras")) {
        const QCborArray x = v.toArray();
        d.extraFiles.push_back(
            {x.at(0).toString().toStdString(), x.at(1).toString().toStdString()});
    }
    d.tensorsCompared = static_cast<int>(integer(m, "compared"));
    const auto ms = array(m, "ms");
    d.loadMsA = ms.at(0).toDouble();
    d.loadMsB = ms.at(1).toDouble();
    d.diffMs = ms.at(2).toDouble();
    return d;
}

QCborMap toCbor(const SourceInfo& i) {
    QCborMap m;
    put(m, "kind", static_cast<int>(i.kind));
    put(m, "path", text(i.path));
    put(m, "description", text(i.description));
    put(m, "frames", qint64(i.frames));
    put(m, "fps", i.fps);
    put(m, "width", i.width);
    put(m, "height", i.height);
    put(m, "files", strings(i.files));
    put(m, "notes", strings(i.notes));
    return m;
}

SourceInfo sourceInfoFromCbor(const QCborMap& m) {
    SourceInfo i;
    const auto kind = integer(m, "kind");
    i.kind = kind == 0   ? SourceSpec::Kind::Folder
             : kind == 2 ? SourceSpec::Kind::Camera
                         : SourceSpec::Kind::Video;
    i.path = text(m, "path");
    i.description = text(m, "description");
    i.frames = integer(m, "frames");
    i.fps = real(m, "fps");
    i.width = static_cast<int>(integer(m, "width"));
    i.height = static_cast<int>(integer(m, "height"));
    i.files = strings(array(m, "files"));
    i.notes = strings(array(m, "notes"));
    return i;
}

QCborMap toCbor(const FrameResult& f) {
    QCborMap m;
    put(m, "index", qint64(f.index));
    put(m, "name", text(f.name));
    put(m, "dropped", qint64(f.dropped));
    put(m, "end", f.end);
    put(m, "width", f.width);
    put(m, "height", f.height);
    // The frame's BGR pixels as they are: one copy into the message, none on the way.
    put(m, "bgr",
        QByteArray::fromRawData(reinterpret_cast<const char*>(f.bgr.data()),
                                static_cast<qsizetype>(f.bgr.size())));
    put(m, "error", text(f.error));
    put(m, "decode_ms", f.decodeMs);
    if (f.hasRun) {
        put(m, "run", toCbor(f.run));
    }
    return m;
}

FrameResult frameResultFromCbor(const QCborMap& m) {
    FrameResult f;
    f.index = integer(m, "index");
    f.name = text(m, "name");
    f.dropped = integer(m, "dropped");
    f.end = boolean(m, "end");
    f.width = static_cast<int>(integer(m, "width"));
    f.height = static_cast<int>(integer(m, "height"));
    const QByteArray bytes = m.value(QLatin1String("bgr")).toByteArray();
    if (f.width > 0 && f.height > 0 && f.width <= 1 << 15 && f.height <= 1 << 15 &&
        bytes.size() == qsizetype(f.width) * f.height * 3) {
        f.bgr.assign(bytes.constBegin(), bytes.constEnd());
    } else {
        f.width = f.height = 0;
    }
    f.error = text(m, "error");
    f.decodeMs = real(m, "decode_ms");
    if (m.contains(QLatin1String("run"))) {
        f.hasRun = true;
        f.run = runResultFromCbor(submap(m, "run"));
    }
    return f;
}

} // namespace scriptscope::protocol
