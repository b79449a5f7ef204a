// The GUI <-> worker protocol without a GUI: every message round-trips, a wrong version or a
// malformed message is refused, and frames survive arriving in pieces.
#include "test_support.h"

#include <input_spec.h>
#include <protocol.h>

#include <QCborValue>

using namespace scriptscope;
using namespace scriptscope::protocol;

namespace {

TensorInfo plainTensor(const std::string& name, const std::vector<int64_t>& shape,
                       const std::string& dtype, uint64_t bytes, bool requiresGrad) {
    TensorInfo t;
    t.name = name;
    t.shape = shape;
    t.dtype = dtype;
    t.device = "cpu";
    t.bytes = bytes;
    t.requiresGrad = requiresGrad;
    return t;
}

ModelInfo sampleModel() {
    ModelInfo info;
    info.path = "/models/net.pt";
    info.probe.path = info.path;
    info.probe.kind = FileKind::TorchScript;
    info.probe.summary = "a TorchScript archive";
    info.probe.records = {{"net/data.pkl", 120, 120, 0, true, 0},
                          {"net/code/__torch__.py", 800, 300, 200, false, 8}};
    info.probe.version = 3;
    info.probe.versionText = "3";
    info.probe.maxSupportedVersion = 10;
    info.probe.extraFiles = {{"meta.json", "{\"a\": 1}"}};
    info.probe.operators = {{"aten::conv2d", true}, {"torchvision::nms", false}};
    info.probe.pickleGlobals = {"collections.OrderedDict"};
    ModuleInfo root;
    root.path = "";
    root.type = "__torch__.Net";
    root.parameters = {plainTensor("weight", {8, 3, 3, 3}, "float32", 864, true)};
    root.buffers = {plainTensor("steps", {}, "int64", 8, false)};
    root.attributes = {{"scale", "float", "0.5"}};
    MethodInfo forward;
    forward.name = "forward";
    forward.schema = "forward(__torch__.Net self, Tensor x) -> Tensor";
    forward.code = "def forward(self, x):\n  return x\n";
    forward.graph = "graph(%self : __torch__.Net,\n      %x.1 : Tensor):\n  return (%x.1)\n";
    forward.inputAnnotations = {"f32[1, 3, 8, 10]"};
    forward.setImageInput({1, 3, 8, 10});
    forward.sampleInputs = true;
    forward.memoryPlan.bufferBytes = {0, 4096};
    forward.memoryPlan.steps = {"aten::convolution.out", "aten::relu.out"};
    forward.memoryPlan.blocks = {{"v7", "f32[1, 8, 8, 8]", 1, 0, 2048, 0, 1},
                                 {"v0", "f32[1, 3, 8, 8]", 1, 2048, 768, -1, 0}};
    root.methods = {forward};
    root.children = {"head"};
    root.parameterCount = 216;
    root.parameterBytes = 864;
    root.totalParameterCount = 300;
    root.totalBytes = 1208;
    ModuleInfo head;
    head.path = "head";
    head.name = "head";
    head.type = "__torch__.torch.nn.modules.linear.Linear";
    info.modules = {root, head};
    info.inlinedForwardGraph = "graph(...)";
    info.parameterCount = 300;
    info.parameterBytes = 1200;
    info.bufferBytes = 8;
    info.methodCount = 2;
    info.torchVersion = "1.13.0";
    info.loadMilliseconds = 12.5;
    return info;
}

bool same(const TensorInfo& a, const TensorInfo& b) {
    return a.name == b.name && a.shape == b.shape && a.dtype == b.dtype && a.device == b.device &&
           a.bytes == b.bytes && a.requiresGrad == b.requiresGrad;
}

bool samePacking(const TensorInfo& a, const TensorInfo& b) {
    return same(a, b) && a.packed == b.packed && a.packedIn == b.packedIn &&
           a.qscheme == b.qscheme && a.scale == b.scale && a.zeroPoint == b.zeroPoint &&
           a.scales == b.scales && a.zeroPoints == b.zeroPoints && a.axis == b.axis;
}

// Every field of two specs, through their elements; why says where they differ.
bool sameSpec(const InputSpec& a, const InputSpec& b, const std::string& where, std::string& why) {
    const auto& p = a.image;
    const auto& q = b.image;
    const bool fields =
        a.kind == b.kind && a.shape == b.shape && a.dtype == b.dtype && a.path == b.path &&
        a.node == b.node && a.intValue == b.intValue && a.floatValue == b.floatValue &&
        a.boolValue == b.boolValue && a.stringValue == b.stringValue && a.intList == b.intList &&
        a.floatList == b.floatList && a.seed == b.seed && a.keys == b.keys && p.width == q.width &&
        p.height == q.height && p.rgb == q.rgb && p.channelsFirst == q.channelsFirst &&
        p.batch == q.batch && p.dtype == q.dtype && p.scale == q.scale && p.mean == q.mean &&
        p.stddev == q.stddev && p.grayscale == q.grayscale &&
        a.elements.size() == b.elements.size();
    if (!fields) {
        why = where + ": " + a.describe() + " came back as " + b.describe();
        return false;
    }
    for (size_t i = 0; i < a.elements.size(); ++i) {
        if (!sameSpec(a.elements[i], b.elements[i], where + "[" + std::to_string(i) + "]", why)) {
            return false;
        }
    }
    return true;
}

Message roundTrip(const Message& m) {
    FrameReader reader;
    const QByteArray bytes = frame(encode(m));
    // In pieces, as a socket delivers them.
    for (int i = 0; i < bytes.size(); i += 7) {
        reader.append(bytes.mid(i, 7));
    }
    const auto payload = reader.next();
    if (!payload) {
        qFatal("no frame");
    }
    const auto decoded = decode(*payload);
    if (!decoded) {
        qFatal("%s", decoded.error().message.c_str());
    }
    return decoded.value();
}

} // namespace

class TestProtocol : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyMessageRoundTrips_data() {
        QTest::addColumn<int>("type");
        for (int t = static_cast<int>(MessageType::Probe);
             t <= static_cast<int>(MessageType::Failure); ++t) {
            QTest::newRow(QByteArray::number(t).constData()) << t;
        }
    }

    void everyMessageRoundTrips() {
        QFETCH(int, type);
        QCborMap body;
        body.insert(QLatin1String("path"), QStringLiteral("/tmp/ünïcode model.pt"));
        body.insert(QLatin1String("inlined"), true);
        const Message m = make(static_cast<MessageType>(type), 42, body);
        QVERIFY(roundTrip(m) == m);
    }

    void modelInfoRoundTrips() {
        ModelInfo info = sampleModel();
        info.format = "torch.export";
        info.lacking[Capability::Run] = "no compiled model";
        info.lacking[Capability::Activations] = "TorchScript archives only";
        const ModelInfo back =
            modelInfoFromCbor(roundTrip(make(MessageType::ModelInfo, 1, toCbor(info))).body);
        QCOMPARE(back.path, info.path);
        QCOMPARE(back.format, info.format);
        QVERIFY(back.lacking == info.lacking);
        QCOMPARE(back.lacks(Capability::Run), std::string("no compiled model"));
        QVERIFY(back.lacks(Capability::Code).empty());
        QCOMPARE(back.probe.kind, info.probe.kind);
        QCOMPARE(back.probe.records.size(), size_t(2));
        QCOMPARE(back.probe.records[1].name, info.probe.records[1].name);
        QCOMPARE(back.probe.records[1].stored, false);
        QCOMPARE(back.probe.records[1].method, uint16_t(8));
        QCOMPARE(back.probe.extraFiles, info.probe.extraFiles);
        QCOMPARE(back.probe.operators[1].name, std::string("torchvision::nms"));
        QCOMPARE(back.probe.operators[1].registered, false);
        QCOMPARE(back.probe.pickleGlobals, info.probe.pickleGlobals);
        QCOMPARE(back.modules.size(), size_t(2));
        const ModuleInfo& root = back.modules[0];
        QVERIFY(same(root.parameters[0], info.modules[0].parameters[0]));
        QVERIFY(same(root.buffers[0], info.modules[0].buffers[0]));
        QCOMPARE(root.attributes[0].preview, std::string("0.5"));
        QCOMPARE(root.methods[0].code, info.modules[0].methods[0].code);
        QCOMPARE(root.methods[0].graph, info.modules[0].methods[0].graph);
        QCOMPARE(root.methods[0].schema, info.modules[0].methods[0].schema);
        QCOMPARE(root.methods[0].inputAnnotations, info.modules[0].methods[0].inputAnnotations);
        QCOMPARE(root.methods[0].sampleInputs, true);
        QCOMPARE(root.methods[0].imageWidth, 10);
        QCOMPARE(root.methods[0].imageHeight, 8);
        const MemoryPlan& plan = root.methods[0].memoryPlan;
        const MemoryPlan& sent = info.modules[0].methods[0].memoryPlan;
        QCOMPARE(plan.bufferBytes, sent.bufferBytes);
        QCOMPARE(plan.steps, sent.steps);
        QCOMPARE(plan.blocks.size(), sent.blocks.size());
        for (size_t i = 0; i < sent.blocks.size(); ++i) {
            const MemoryBlock& a = plan.blocks[i];
            const MemoryBlock& b = sent.blocks[i];
            QVERIFY(a.value == b.value && a.type == b.type && a.buffer == b.buffer &&
                    a.offset == b.offset && a.bytes == b.bytes && a.first == b.first &&
                    a.last == b.last);
        }
        QCOMPARE(root.children, info.modules[0].children);
        QCOMPARE(root.totalBytes, uint64_t(1208));
        QCOMPARE(back.modules[1].type, info.modules[1].type);
        QCOMPARE(back.inlinedForwardGraph, info.inlinedForwardGraph);
        QCOMPARE(back.parameterCount, info.parameterCount);
        QCOMPARE(back.loadMilliseconds, info.loadMilliseconds);
        QCOMPARE(back.torchVersion, info.torchVersion);
    }

    void runRequestAndResultRoundTrip() {
        RunRequest request;
        request.method = "embed";
        InputSpec image;
        image.kind = InputSpec::Kind::Image;
        image.path = "photo.png";
        image.image.width = 224;
        image.image.mean = {0.485, 0.456, 0.406};
        image.image.channelsFirst = false;
        InputSpec ints;
        ints.kind = InputSpec::Kind::IntList;
        ints.intList = {1, -2, 3};
        request.inputs = {image, ints};
        request.device = "cuda:1";
        request.warmup = 3;
        request.iterations = 50;
        const RunRequest back =
            runRequestFromCbor(roundTrip(make(MessageType::Run, 7, toCbor(request))).body);
        QCOMPARE(back.method, request.method);
        QCOMPARE(back.inputs.size(), size_t(2));
        QCOMPARE(back.inputs[0].describe(), image.describe());
        QCOMPARE(back.inputs[0].image.mean, image.image.mean);
        QCOMPARE(back.inputs[0].image.channelsFirst, false);
        QCOMPARE(back.inputs[1].intList, ints.intList);
        QCOMPARE(back.device, request.device);
        QCOMPARE(back.iterations, 50);

        RunResult result;
        result.method = "forward";
        result.device = "cuda:0";
        result.synchronized = true;
        result.samplesMs = {1.5, 2.25, 1.75};
        result.stats.count = 3;
        result.stats.p50 = 1.75;
        result.output.kind = OutputValue::Kind::Tuple;
        OutputValue tensor;
        tensor.kind = OutputValue::Kind::Tensor;
        tensor.key = "0";
        tensor.shape = {1, 1000};
        tensor.nanCount = 2;
        tensor.preview = {0.1, -0.2};
        result.output.children = {tensor};
        const RunResult r =
            runResultFromCbor(roundTrip(make(MessageType::RunResult, 7, toCbor(result))).body);
        QCOMPARE(r.samplesMs, result.samplesMs);
        QVERIFY(r.synchronized);
        QCOMPARE(r.stats.p50, 1.75);
        QCOMPARE(r.output.children.size(), size_t(1));
        QCOMPARE(r.output.children[0].shape, tensor.shape);
        QCOMPARE(r.output.children[0].nanCount, int64_t(2));
        QCOMPARE(r.output.children[0].preview, tensor.preview);
    }

    void graphModelRoundTrips() {
        GraphModel g;
        g.modulePath = "layer1";
        g.method = "forward";
        g.inlined = true;
        g.inputs = {{"x.1", "Tensor"}};
        g.outputs = {{"y", "(Tensor, int)"}};
        g.groups.push_back(
            {0, -1, GraphGroup::Kind::Module, "layer1", "Sequential", "layer1", 1234, -1, 0});
        g.groups.push_back(
            {1, 0, GraphGroup::Kind::Block, "layer1", "prim::If", "if: then", 0, 1, 0});
        GraphNode conv;
        conv.id = 0;
        conv.kind = "aten::conv2d";
        conv.module = "layer1.0.conv1";
        conv.schema = "aten::conv2d(Tensor input, Tensor weight, ...) -> Tensor";
        conv.source = "code/__torch__/torch/nn/modules/conv.py:23";
        conv.sourceLine = 23;
        conv.irLine = 7;
        conv.attributes = {{"weight", "64x3x7x7 float32 (layer1.0.conv1.weight)"}, {"groups", "1"}};
        conv.inputs = {{"x.1", "Tensor"}};
        conv.outputs = {{"input.3", "Tensor"}};
        GraphNode branch;
        branch.id = 1;
        branch.kind = "prim::If";
        branch.group = 0;
        GraphNode inside;
        inside.id = 2;
        inside.kind = "aten::relu";
        inside.group = 1;
        g.nodes = {conv, branch, inside};
        g.edges = {{-1, 0, 0, -1, "x.1", "Tensor", false},
                   {0, -1, 2, -1, "input.3", "Tensor", false},
                   {2, -1, 1, -1, "r", "Tensor", true},
                   {1, -1, -1, 0, "y", "(Tensor, int)", false}};
        const GraphModel back =
            graphModelFromCbor(roundTrip(make(MessageType::DiagramModel, 3, toCbor(g))).body);
        QCOMPARE(back.modulePath, g.modulePath);
        QVERIFY(back.inlined);
        QCOMPARE(back.inputs.at(0).name, std::string("x.1"));
        QCOMPARE(back.outputs.at(0).type, std::string("(Tensor, int)"));
        QCOMPARE(back.groups.size(), size_t(2));
        QCOMPARE(back.groups[1].kind, GraphGroup::Kind::Block);
        QCOMPARE(back.groups[1].owner, 1);
        QCOMPARE(back.groups[0].parameters, int64_t(1234));
        QCOMPARE(back.nodes.size(), size_t(3));
        QCOMPARE(back.nodes[0].attributes.at(0).value, conv.attributes[0].value);
        QCOMPARE(back.nodes[0].irLine, 7);
        QCOMPARE(back.nodes[0].sourceLine, 23);
        QCOMPARE(back.nodes[2].group, 1);
        QCOMPARE(back.edges.size(), size_t(4));
        QCOMPARE(back.edges[0].fromInput, 0);
        QVERIFY(back.edges[2].intoBlock);
        QCOMPARE(back.edges[3].toOutput, 0);
        // Damaged references are dropped or put under the root, never followed.
        GraphModel damagedGraph = g;
        damagedGraph.edges.push_back({7, -1, 0, -1, "v", "T", false});
        damagedGraph.edges.push_back({-1, 5, 0, -1, "v", "T", false});
        GraphNode bad = conv;
        bad.group = 99;
        damagedGraph.nodes.push_back(bad);
        GraphGroup loop = g.groups[1];
        loop.parent = 5; // a parent after the group itself
        loop.id = 2;
        damagedGraph.groups.push_back(loop);
        const GraphModel safe = graphModelFromCbor(toCbor(damagedGraph));
        QCOMPARE(safe.edges.size(), size_t(4));
        QCOMPARE(safe.nodes.back().group, 0);
        QCOMPARE(safe.groups.back().parent, 0);
        QCOMPARE(visibleGraph(safe, -1).items.size(), size_t(4));
        // The graph travels as a CBOR stream with its strings written once: the ports and edges
        // of type Tensor share one entry of the table.
        const QCborMap encoded = toCbor(g);
        const QByteArray strings = encoded.value(QLatin1String("strings")).toByteArray();
        QCOMPARE(strings.count(QByteArrayLiteral("\x66Tensor")), qsizetype(1)); // text(6) Tensor
        // A string index past the table reads as "".
        GraphModel pastTable = g;
        QCborMap shortTable = toCbor(pastTable);
        shortTable.insert(QLatin1String("strings"), QCborValue(QByteArray("\x80", 1))); // []
        const GraphModel noNames = graphModelFromCbor(shortTable);
        QCOMPARE(noNames.nodes.size(), size_t(3));
        QCOMPARE(noNames.nodes[0].kind, std::string());
        // A stream cut anywhere, or bytes that are no stream, give what was read before, never a
        // crash or a reference out of range.
        const QByteArray stream = encoded.value(QLatin1String("graph")).toByteArray();
        for (qsizetype cut = 0; cut < stream.size();
             cut += std::max<qsizetype>(1, stream.size() / 97)) {
            QCborMap truncated = encoded;
            truncated.insert(QLatin1String("graph"), QCborValue(stream.left(cut)));
            const GraphModel part = graphModelFromCbor(truncated);
            for (const GraphEdge& e : part.edges) {
                QVERIFY(e.from < static_cast<int>(part.nodes.size()));
                QVERIFY(e.to < static_cast<int>(part.nodes.size()));
            }
            for (const GraphNode& n : part.nodes) {
                QVERIFY(n.group >= 0 && n.group < static_cast<int>(part.groups.size()));
            }
            (void)visibleGraph(part, -1);
        }
        // A constant's bytes need not be UTF-8: they arrive as QString shows them, and the
        // rest of the graph with them.
        GraphModel binary = g;
        binary.nodes[0].attributes.push_back({"value", std::string("ab\xff\xfe", 4)});
        const GraphModel binaryBack = graphModelFromCbor(toCbor(binary));
        QCOMPARE(binaryBack.nodes.size(), size_t(3));
        QCOMPARE(binaryBack.edges.size(), g.edges.size());
        QCOMPARE(QString::fromStdString(binaryBack.nodes[0].attributes.back().value),
                 QString::fromUtf8("ab\xff\xfe", 4));
        QCborMap garbage = encoded;
        garbage.insert(QLatin1String("graph"), QCborValue(QByteArray(64, '\xff')));
        QVERIFY(graphModelFromCbor(garbage).nodes.empty());
    }

    void nestedInputSpecRoundTrips() {
        // A list of a dict of a tuple, with images that carry their own options, an empty list and
        // a key that is not ASCII.
        const auto parsed = parseInputSpec(
            "list:[dict:img=image:/data/ä b.png,batch=0,size=32x24,mean=0.5/0.4/0.3,std=0.2/0.2/"
            "0.2;pair=[tuple:image:b.png,preset=imagenet,order=bgr,layout=hwc;ints:1,-2];größe=["
            "list:]];[tuple:random:2x3:float64:7;floats:0.5,1.5;str:a b;true;none;3;2.5]");
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
        const InputSpec& spec = parsed.value();
        QCOMPARE(spec.elements.at(0).keys, (std::vector<std::string>{"img", "pair", "größe"}));
        QCOMPARE(spec.elements.at(0).elements.at(1).kind, InputSpec::Kind::Tuple);
        RunRequest request;
        request.inputs = {spec, parseInputSpec("dict:").value(), parseInputSpec("ones:2").value()};
        const RunRequest back =
            runRequestFromCbor(roundTrip(make(MessageType::Run, 9, toCbor(request))).body);
        QCOMPARE(back.inputs.size(), size_t(3));
        std::string why;
        for (size_t i = 0; i < request.inputs.size(); ++i) {
            QVERIFY2(sameSpec(request.inputs[i], back.inputs[i], "input " + std::to_string(i), why),
                     why.c_str());
        }
        QCOMPARE(back.inputs[0].describe(), spec.describe());
        QCOMPARE(back.inputs[1].kind, InputSpec::Kind::Dict);
    }

    void packedTensorInfoRoundTrips() {
        ModelInfo info = sampleModel();
        TensorInfo perChannel;
        perChannel.name = "weight";
        perChannel.shape = {3, 8, 3, 3};
        perChannel.dtype = "qint8";
        perChannel.device = "cpu";
        perChannel.bytes = 216;
        perChannel.packed = true;
        perChannel.packedIn = "_packed_params";
        perChannel.qscheme = "per_channel_affine";
        perChannel.scales = {0.0013593446929007769, 0.25, 1e-7};
        perChannel.zeroPoints = {0, 1, -2};
        perChannel.axis = 0;
        TensorInfo perTensor = perChannel;
        perTensor.name = "weight_ih";
        perTensor.shape = {48, 8};
        perTensor.packedIn = "param";
        perTensor.qscheme = "per_tensor_affine";
        perTensor.scale = 0.002240503905341029;
        perTensor.zeroPoint = 3;
        perTensor.scales.clear();
        perTensor.zeroPoints.clear();
        perTensor.axis = -1;
        TensorInfo bias;
        bias.name = "bias";
        bias.shape = {3};
        bias.dtype = "float32";
        bias.device = "cpu";
        bias.bytes = 12;
        bias.packed = true;
        bias.packedIn = "_packed_params";
        ModuleInfo conv;
        conv.path = "features.0.0";
        conv.name = "0";
        conv.type = "__torch__.torch.ao.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d";
        conv.parameters = {perChannel, bias, perTensor};
        conv.parameterCount = 216 + 3 + 384;
        info.modules.push_back(conv);
        const ModelInfo back =
            modelInfoFromCbor(roundTrip(make(MessageType::ModelInfo, 2, toCbor(info))).body);
        QCOMPARE(back.modules.size(), size_t(3));
        const ModuleInfo& m = back.modules[2];
        QCOMPARE(m.path, conv.path);
        QCOMPARE(m.parameterCount, conv.parameterCount);
        QCOMPARE(m.parameters.size(), size_t(3));
        for (size_t i = 0; i < 3; ++i) {
            QVERIFY2(samePacking(m.parameters[i], conv.parameters[i]),
                     conv.parameters[i].name.c_str());
        }
        // A plain parameter stays plain.
        const TensorInfo& plain = back.modules[0].parameters[0];
        QVERIFY(samePacking(plain, info.modules[0].parameters[0]));
        QCOMPARE(plain.packed, false);
        QVERIFY(plain.qscheme.empty());
        QCOMPARE(plain.axis, int64_t(-1));
    }

    void errorRoundTrips() {
        Error error(ErrorKind::MissingOperator, "needs torchvision::nms",
                    "Unknown builtin op: torchvision::nms.");
        error.operatorName = "torchvision::nms";
        const Error back =
            errorFromCbor(roundTrip(make(MessageType::Failure, 3, toCbor(error))).body);
        QCOMPARE(back.kind, error.kind);
        QCOMPARE(back.message, error.message);
        QCOMPARE(back.details, error.details);
        QCOMPARE(back.operatorName, error.operatorName);
    }

    void wrongVersionIsRefused() {
        QCborMap map;
        map.insert(QLatin1String("v"), kVersion + 1);
        map.insert(QLatin1String("type"), 1);
        map.insert(QLatin1String("id"), 1);
        map.insert(QLatin1String("body"), QCborMap());
        const auto decoded = decode(map.toCborValue().toCbor());
        QVERIFY(!decoded.ok());
        QVERIFY(decoded.error().message.find("different builds") != std::string::npos);
    }

    void malformedMessagesAreRefused_data() {
        QTest::addColumn<QByteArray>("bytes");
        const QByteArray good = encode(make(MessageType::Probe, 1));
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("not CBOR") << QByteArray("hello, worker");
        QTest::newRow("truncated") << good.left(good.size() - 3);
        QTest::newRow("trailing bytes") << good + QByteArray("\x01", 1);
        QTest::newRow("an array") << QCborValue(QCborArray{1, 2}).toCbor();
        QCborMap unknownType;
        unknownType.insert(QLatin1String("v"), kVersion);
        unknownType.insert(QLatin1String("type"), 999);
        unknownType.insert(QLatin1String("id"), 1);
        unknownType.insert(QLatin1String("body"), QCborMap());
        QTest::newRow("unknown type") << unknownType.toCborValue().toCbor();
        QCborMap noBody = unknownType;
        noBody.insert(QLatin1String("type"), 1);
        noBody.remove(QLatin1String("body"));
        QTest::newRow("no body") << noBody.toCborValue().toCbor();
    }

    void malformedMessagesAreRefused() {
        QFETCH(QByteArray, bytes);
        QVERIFY(!decode(bytes).ok());
    }

    void oversizedFrameIsRefused() {
        FrameReader reader;
        reader.append(QByteArray("\xff\xff\xff\xff", 4));
        QVERIFY(!reader.next());
        QVERIFY(reader.failed());
    }

    void framesInOneChunk() {
        FrameReader reader;
        reader.append(frame("a") + frame("bc") + frame("").left(2));
        QCOMPARE(reader.next().value(), QByteArray("a"));
        QCOMPARE(reader.next().value(), QByteArray("bc"));
        QVERIFY(!reader.next());
        reader.append(QByteArray(2, '\0'));
        QCOMPARE(reader.next().value(), QByteArray());
    }
};

QTEST_GUILESS_MAIN(TestProtocol)
#include "test_protocol.moc"
