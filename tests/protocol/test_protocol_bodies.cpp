// The message bodies that test_protocol does not send: activations, passes, archive diffs, live
// sources and devices, every field set away from its default so that a field a table leaves out
// comes back wrong. Then the tables' reading rules on bodies no worker writes: numbers outside an
// enum, negative sizes, values of the wrong type, nesting without end.
#include "test_support.h"

#include <protocol.h>

#include <QCborValue>

#include <cmath>
#include <limits>

using namespace scriptscope;
using namespace scriptscope::protocol;

namespace {

// Through bytes, as a socket carries it.
QCborMap wire(const QCborMap& body) {
    const auto decoded = decode(encode(make(MessageType::Values, 1, body)));
    if (!decoded) {
        qFatal("%s", decoded.error().message.c_str());
    }
    return decoded.value().body;
}

RunRequest sampleRun() {
    RunRequest r;
    r.method = "embed";
    r.inputsFile = "inputs.pt";
    r.device = "cuda:0";
    r.warmup = 4;
    r.iterations = 7;
    r.saveOutputsPath = "out.pt";
    r.previewValues = 3;
    r.valuesLimit = 99;
    r.profile = true;
    InputSpec spec;
    spec.kind = InputSpec::Kind::Ones;
    spec.shape = {2, 3};
    r.inputs = {spec};
    return r;
}

bool sameRun(const RunRequest& a, const RunRequest& b) {
    return a.method == b.method && a.inputsFile == b.inputsFile && a.device == b.device &&
           a.warmup == b.warmup && a.iterations == b.iterations &&
           a.saveOutputsPath == b.saveOutputsPath && a.previewValues == b.previewValues &&
           a.valuesLimit == b.valuesLimit && a.profile == b.profile &&
           a.inputs.size() == b.inputs.size() && a.inputs[0].kind == b.inputs[0].kind &&
           a.inputs[0].shape == b.inputs[0].shape;
}

ActivationRecord sampleRecord(int node) {
    ActivationRecord x;
    x.node = node;
    x.occurrence = 1;
    x.output = 2;
    x.irLine = 17;
    x.value = "input.3";
    x.kind = "aten::conv2d";
    x.module = "features.0";
    x.moduleOutputs = {"features.0"};
    x.source = "net.py:12";
    x.sourceText = "x = self.conv(x)";
    x.shape = {1, 8, 4, 4};
    x.dtype = "float32";
    x.device = "cpu";
    x.numel = 128;
    x.min = -1.5;
    x.max = 2.5;
    x.mean = 0.25;
    x.stddev = 0.75;
    x.nanCount = 3;
    x.infCount = 1;
    x.histogramMin = -1.0;
    x.histogramMax = 2.0;
    x.histogram = {4, 0, 9};
    x.note = "note";
    x.compared = true;
    x.maxAbsDiff = 0.125;
    x.comparedWith = "cuda:0";
    x.compareNote = "shape differs";
    x.values = {1.0F, -2.0F};
    x.maxRelDiff = 0.5;
    x.cosine = 0.875;
    x.snrDb = 12.5;
    x.referenceNode = 7;
    x.bytes = 64;
    x.storageBytes = 128;
    x.madeAt = 2;
    x.lastUseAt = 5;
    return x;
}

} // namespace

class TestProtocolBodies : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void activationRequestRoundTrips() {
        ActivationRequest r;
        r.run = sampleRun();
        r.bins = 12;
        r.pinNodes = {3, 9};
        r.pinBytes = 1234;
        r.compareDevice = "cuda:1";
        r.compareRun = sampleRun();
        r.compareRun->method = "forward";
        r.referenceFile = "ref.pt";
        r.referenceModel = "model.pt";
        r.referenceOperatorLibraries = {"libops.so"};
        r.criterion.atol = 0.5;
        r.criterion.rtol = 0.25;
        r.criterion.minSnrDb = 12.5;
        r.criterion.minCosine = 0.75;
        r.compareBytes = 777;
        const ActivationRequest b = activationRequestFromCbor(wire(toCbor(r)));
        QVERIFY(sameRun(b.run, r.run));
        QCOMPARE(b.bins, 12);
        QCOMPARE(b.pinNodes, r.pinNodes);
        QCOMPARE(b.pinBytes, uint64_t(1234));
        QCOMPARE(b.compareDevice, r.compareDevice);
        QVERIFY(b.compareRun && sameRun(*b.compareRun, *r.compareRun));
        QCOMPARE(b.referenceFile, r.referenceFile);
        QCOMPARE(b.referenceModel, r.referenceModel);
        QCOMPARE(b.referenceOperatorLibraries, r.referenceOperatorLibraries);
        QCOMPARE(b.criterion.atol, 0.5);
        QCOMPARE(b.criterion.rtol, 0.25);
        QCOMPARE(b.criterion.minSnrDb, 12.5);
        QCOMPARE(b.criterion.minCosine, 0.75);
        QCOMPARE(b.compareBytes, uint64_t(777));

        r.compareRun.reset();
        QVERIFY(!activationRequestFromCbor(wire(toCbor(r))).compareRun);
    }

    void activationReportRoundTrips() {
        ActivationReport r;
        r.model = "m.pt";
        r.method = "forward";
        r.device = "cpu";
        r.records = {sampleRecord(-1), sampleRecord(4)};
        r.records[0].comparedWith.clear();
        r.records[0].values.clear();
        r.firstNonFinite = 1;
        r.firstNonFiniteInputs = {0};
        r.firstDifference = 0;
        r.comparison = "cuda:0";
        r.criterion.rtol = 0.01;
        r.comparedCount = 2;
        r.outputs.compared = true;
        r.outputs.agrees = false;
        r.outputs.structure = "{'out': T}";
        r.outputs.referenceStructure = "{'out': T}";
        r.outputs.firstDisagreeing = 0;
        r.outputs.worstSnrDb = -std::numeric_limits<double>::infinity();
        OutputLeafComparison leaf;
        leaf.where = "output['out']";
        leaf.shape = {1, 4};
        leaf.referenceShape = {1, 4};
        leaf.compared = true;
        leaf.difference.maxAbsDiff = 0.5;
        leaf.difference.maxRelDiff = 0.25;
        leaf.difference.cosine = 0.5;
        leaf.difference.snrDb = 3;
        leaf.difference.largestAt = 2;
        r.outputs.leaves = {leaf};
        r.unmatched = {"x"};
        r.notes = {"n"};
        r.runMs = 4.5;
        r.pinnedBytes = 8;
        r.output.kind = OutputValue::Kind::Int;
        r.output.text = "3";
        r.referenceCount = 4;
        r.memory.known = true;
        r.memory.liveBytes = {8, 24, 16};
        r.memory.peakStep = 1;
        r.memory.peakBytes = 24;
        r.memory.peakRecords = {0, 1};
        r.outputsOnly.why = "no program";
        r.outputsOnly.outputs.compared = true;
        r.outputsOnly.outputs.note = "output, flat index 3";
        r.outputsOnly.outputs.maxAbsDiff = 0.25;
        r.outputsOnly.p50Ms = 1.5;
        r.outputsOnly.otherP50Ms = 0.75;
        r.outputsOnly.runs = 20;
        const ActivationReport b = activationReportFromCbor(wire(toCbor(r)));
        QCOMPARE(b.outputsOnly.why, r.outputsOnly.why);
        QVERIFY(b.outputsOnly.outputs.compared);
        QCOMPARE(b.outputsOnly.outputs.note, r.outputsOnly.outputs.note);
        QCOMPARE(b.outputsOnly.outputs.maxAbsDiff, 0.25);
        QCOMPARE(b.outputsOnly.p50Ms, 1.5);
        QCOMPARE(b.outputsOnly.otherP50Ms, 0.75);
        QCOMPARE(b.outputsOnly.runs, 20);
        QCOMPARE(b.referenceCount, 4);
        QVERIFY(b.memory.known);
        QCOMPARE(b.memory.liveBytes, r.memory.liveBytes);
        QCOMPARE(b.memory.peakStep, 1);
        QCOMPARE(b.memory.peakBytes, uint64_t(24));
        QCOMPARE(b.memory.peakRecords, r.memory.peakRecords);
        QCOMPARE(b.model, r.model);
        QCOMPARE(b.method, r.method);
        QCOMPARE(b.device, r.device);
        QCOMPARE(b.records.size(), size_t(2));
        const ActivationRecord& x = b.records[1];
        const ActivationRecord& y = r.records[1];
        QCOMPARE(x.node, 4);
        QCOMPARE(x.occurrence, y.occurrence);
        QCOMPARE(x.output, y.output);
        QCOMPARE(x.irLine, y.irLine);
        QCOMPARE(x.value, y.value);
        QCOMPARE(x.kind, y.kind);
        QCOMPARE(x.module, y.module);
        QCOMPARE(x.moduleOutputs, y.moduleOutputs);
        QCOMPARE(x.source, y.source);
        QCOMPARE(x.sourceText, y.sourceText);
        QCOMPARE(x.shape, y.shape);
        QCOMPARE(x.dtype, y.dtype);
        QCOMPARE(x.device, y.device);
        QCOMPARE(x.numel, y.numel);
        QCOMPARE(x.min, y.min);
        QCOMPARE(x.max, y.max);
        QCOMPARE(x.mean, y.mean);
        QCOMPARE(x.stddev, y.stddev);
        QCOMPARE(x.nanCount, y.nanCount);
        QCOMPARE(x.infCount, y.infCount);
        QCOMPARE(x.histogramMin, y.histogramMin);
        QCOMPARE(x.histogramMax, y.histogramMax);
        QCOMPARE(x.histogram, y.histogram);
        QCOMPARE(x.note, y.note);
        QCOMPARE(x.compared, true);
        QCOMPARE(x.maxAbsDiff, y.maxAbsDiff);
        QCOMPARE(x.comparedWith, y.comparedWith);
        QCOMPARE(x.compareNote, y.compareNote);
        QCOMPARE(x.values, y.values);
        QCOMPARE(x.maxRelDiff, y.maxRelDiff);
        QCOMPARE(x.cosine, y.cosine);
        QCOMPARE(x.snrDb, y.snrDb);
        QCOMPARE(x.referenceNode, y.referenceNode);
        QCOMPARE(x.bytes, y.bytes);
        QCOMPARE(x.storageBytes, y.storageBytes);
        QCOMPARE(x.madeAt, y.madeAt);
        QCOMPARE(x.lastUseAt, y.lastUseAt);
        QCOMPARE(b.records[0].node, -1);
        QVERIFY(!b.records[0].compared);
        QVERIFY(b.records[0].values.empty());
        QCOMPARE(b.firstNonFinite, 1);
        QCOMPARE(b.firstNonFiniteInputs, r.firstNonFiniteInputs);
        QCOMPARE(b.firstDifference, 0);
        QCOMPARE(b.comparison, r.comparison);
        QCOMPARE(b.criterion.rtol, 0.01);
        QCOMPARE(b.comparedCount, 2);
        QVERIFY(b.outputs.compared && !b.outputs.agrees);
        QCOMPARE(b.outputs.structure, r.outputs.structure);
        QCOMPARE(b.outputs.referenceStructure, r.outputs.referenceStructure);
        QCOMPARE(b.outputs.firstDisagreeing, 0);
        QVERIFY(std::isinf(b.outputs.worstSnrDb) && b.outputs.worstSnrDb < 0);
        QCOMPARE(b.outputs.leaves.size(), size_t(1));
        QCOMPARE(b.outputs.leaves[0].where, leaf.where);
        QCOMPARE(b.outputs.leaves[0].shape, leaf.shape);
        QVERIFY(b.outputs.leaves[0].compared);
        QCOMPARE(b.outputs.leaves[0].difference.cosine, 0.5);
        QCOMPARE(b.outputs.leaves[0].difference.snrDb, 3.0);
        QCOMPARE(b.outputs.leaves[0].difference.largestAt, int64_t(2));
        QCOMPARE(b.unmatched, r.unmatched);
        QCOMPARE(b.notes, r.notes);
        QCOMPARE(b.runMs, r.runMs);
        QCOMPARE(b.pinnedBytes, uint64_t(8));
        QCOMPARE(b.output.kind, OutputValue::Kind::Int);
        QCOMPARE(b.output.text, r.output.text);

        // Indices that point past the records point at none.
        r.firstNonFinite = 5;
        r.firstDifference = -7;
        r.firstNonFiniteInputs = {1, 2, -1};
        r.memory.peakRecords = {1, 9};
        r.memory.peakStep = 3;
        const ActivationReport c = activationReportFromCbor(wire(toCbor(r)));
        QCOMPARE(c.memory.peakRecords, std::vector<int>{1});
        QCOMPARE(c.memory.peakStep, -1);
        QCOMPARE(c.firstNonFinite, -1);
        QCOMPARE(c.firstDifference, -1);
        QCOMPARE(c.firstNonFiniteInputs, std::vector<int>{1});
    }

    void optimizeRoundTrips() {
        OptimizeRequest q;
        q.passes = {"freeze", "fold"};
        q.run = sampleRun();
        q.savePath = "opt.pt";
        q.keepUnloadable = true;
        q.tolerance = 0.25;
        const OptimizeRequest qb = optimizeRequestFromCbor(wire(toCbor(q)));
        QCOMPARE(qb.passes, q.passes);
        QVERIFY(sameRun(qb.run, q.run));
        QCOMPARE(qb.savePath, q.savePath);
        QVERIFY(qb.keepUnloadable);
        QCOMPARE(qb.tolerance, 0.25);

        OptimizeResult r;
        r.method = "forward";
        r.applied = {"freeze"};
        r.graphBefore = "graph(a)";
        r.graphAfter = "graph(b)";
        r.graphDiff = {{DiffLine::Op::Removed, "a", 1, 0, 0}, {DiffLine::Op::Skipped, "", 0, 0, 4}};
        r.nodesBefore = 10;
        r.nodesAfter = 6;
        r.kinds = {{"aten::add", 3, 1}};
        r.timed = true;
        r.before.count = 5;
        r.before.p50 = 2.0;
        r.after.count = 5;
        r.after.stddev = 0.5;
        r.speedup = 1.5;
        r.outputsCompared = true;
        r.maxAbsDiff = 1e-6;
        r.compareNote = "c";
        r.modules = {{"features", 1e-7}};
        r.firstDifferentModule = "features";
        r.tolerance = 0.125;
        r.saved = "opt.pt";
        r.savedVerified = true;
        r.saveError = "e";
        r.notes = {"n"};
        const OptimizeResult b = optimizeResultFromCbor(wire(toCbor(r)));
        QCOMPARE(b.method, r.method);
        QCOMPARE(b.applied, r.applied);
        QCOMPARE(b.graphBefore, r.graphBefore);
        QCOMPARE(b.graphAfter, r.graphAfter);
        QCOMPARE(b.graphDiff.size(), size_t(2));
        QCOMPARE(b.graphDiff[0].op, DiffLine::Op::Removed);
        QCOMPARE(b.graphDiff[0].text, std::string("a"));
        QCOMPARE(b.graphDiff[0].lineA, 1);
        QCOMPARE(b.graphDiff[1].count, 4);
        QCOMPARE(b.nodesBefore, 10);
        QCOMPARE(b.nodesAfter, 6);
        QCOMPARE(b.kinds.size(), size_t(1));
        QCOMPARE(b.kinds[0].kind, std::string("aten::add"));
        QCOMPARE(b.kinds[0].before, 3);
        QCOMPARE(b.kinds[0].after, 1);
        QVERIFY(b.timed);
        QCOMPARE(b.before.count, size_t(5));
        QCOMPARE(b.before.p50, 2.0);
        QCOMPARE(b.after.stddev, 0.5);
        QCOMPARE(b.speedup, 1.5);
        QVERIFY(b.outputsCompared);
        QCOMPARE(b.maxAbsDiff, 1e-6);
        QCOMPARE(b.compareNote, r.compareNote);
        QCOMPARE(b.modules.size(), size_t(1));
        QCOMPARE(b.modules[0].module, std::string("features"));
        QCOMPARE(b.modules[0].maxAbsDiff, 1e-7);
        QCOMPARE(b.firstDifferentModule, r.firstDifferentModule);
        QCOMPARE(b.tolerance, 0.125);
        QCOMPARE(b.saved, r.saved);
        QVERIFY(b.savedVerified);
        QCOMPARE(b.saveError, r.saveError);
        QCOMPARE(b.notes, r.notes);
    }

    void archiveDiffRoundTrips() {
        ArchiveDiff d;
        d.pathA = "a.pt";
        d.pathB = "b.pt2";
        d.formatA = "TorchScript";
        d.formatB = "torch.export";
        d.treeAndTensorsOnly = true;
        d.identical = false;
        d.modules = {{"head", ModuleChange::Kind::Retyped, "A", "B"}};
        TensorChange t;
        t.name = "fc.weight";
        t.kind = TensorChange::Kind::Shape;
        t.buffer = true;
        t.shapeA = {2, 3};
        t.shapeB = {3, 2};
        t.dtypeA = "float32";
        t.dtypeB = "float16";
        t.maxAbsDiff = 0.5;
        t.differing = 4;
        t.numel = 6;
        d.tensors = {t};
        d.attributes = {{"", "scale", "1", "2"}};
        TextChange text;
        text.module = "head";
        text.method = "forward";
        text.what = "graph";
        text.lines = {{DiffLine::Op::Added, "+x", 0, 3, 0}};
        text.added = 1;
        text.removed = 2;
        d.texts = {text};
        d.extraFiles = {{"meta.json", "changed"}};
        d.tensorsCompared = 9;
        d.loadMsA = 1.5;
        d.loadMsB = 2.5;
        d.diffMs = 0.5;
        const ArchiveDiff b = archiveDiffFromCbor(wire(toCbor(d)));
        QCOMPARE(b.pathA, d.pathA);
        QCOMPARE(b.pathB, d.pathB);
        QCOMPARE(b.formatA, d.formatA);
        QCOMPARE(b.formatB, d.formatB);
        QVERIFY(b.treeAndTensorsOnly);
        QVERIFY(!b.identical);
        QCOMPARE(b.modules.size(), size_t(1));
        QCOMPARE(b.modules[0].kind, ModuleChange::Kind::Retyped);
        QCOMPARE(b.modules[0].typeB, std::string("B"));
        QCOMPARE(b.tensors.size(), size_t(1));
        QCOMPARE(b.tensors[0].name, t.name);
        QCOMPARE(b.tensors[0].kind, t.kind);
        QVERIFY(b.tensors[0].buffer);
        QCOMPARE(b.tensors[0].shapeA, t.shapeA);
        QCOMPARE(b.tensors[0].shapeB, t.shapeB);
        QCOMPARE(b.tensors[0].dtypeA, t.dtypeA);
        QCOMPARE(b.tensors[0].dtypeB, t.dtypeB);
        QCOMPARE(b.tensors[0].maxAbsDiff, t.maxAbsDiff);
        QCOMPARE(b.tensors[0].differing, t.differing);
        QCOMPARE(b.tensors[0].numel, t.numel);
        QCOMPARE(b.attributes.size(), size_t(1));
        QCOMPARE(b.attributes[0].valueB, std::string("2"));
        QCOMPARE(b.texts.size(), size_t(1));
        QCOMPARE(b.texts[0].what, text.what);
        QCOMPARE(b.texts[0].lines.size(), size_t(1));
        QCOMPARE(b.texts[0].lines[0].lineB, 3);
        QCOMPARE(b.texts[0].added, 1);
        QCOMPARE(b.texts[0].removed, 2);
        QCOMPARE(b.extraFiles.size(), size_t(1));
        QCOMPARE(b.extraFiles[0].change, std::string("changed"));
        QCOMPARE(b.tensorsCompared, 9);
        QCOMPARE(b.loadMsA, 1.5);
        QCOMPARE(b.loadMsB, 2.5);
        QCOMPARE(b.diffMs, 0.5);
    }

    void sourcesAndDevicesRoundTrip() {
        SourceInfo i;
        i.kind = SourceSpec::Kind::Folder;
        i.path = "/frames";
        i.description = "3 images";
        i.frames = 3;
        i.fps = 12.5;
        i.width = 4;
        i.height = 2;
        i.files = {"a.png"};
        i.notes = {"b.txt: not an image"};
        const SourceInfo ib = sourceInfoFromCbor(wire(toCbor(i)));
        QCOMPARE(ib.kind, SourceSpec::Kind::Folder);
        QCOMPARE(ib.path, i.path);
        QCOMPARE(ib.description, i.description);
        QCOMPARE(ib.frames, int64_t(3));
        QCOMPARE(ib.fps, 12.5);
        QCOMPARE(ib.width, 4);
        QCOMPARE(ib.height, 2);
        QCOMPARE(ib.files, i.files);
        QCOMPARE(ib.notes, i.notes);

        FrameResult f;
        f.index = 5;
        f.name = "a.png";
        f.dropped = 2;
        f.end = true;
        f.width = 2;
        f.height = 1;
        f.bgr = {1, 2, 3, 4, 5, 6};
        f.error = "e";
        f.decodeMs = 0.5;
        f.hasRun = true;
        f.run.method = "forward";
        f.run.stats.count = 2;
        const FrameResult fb = frameResultFromCbor(wire(toCbor(f)));
        QCOMPARE(fb.index, int64_t(5));
        QCOMPARE(fb.name, f.name);
        QCOMPARE(fb.dropped, int64_t(2));
        QVERIFY(fb.end);
        QCOMPARE(fb.width, 2);
        QCOMPARE(fb.height, 1);
        QCOMPARE(fb.bgr, f.bgr);
        QCOMPARE(fb.error, f.error);
        QCOMPARE(fb.decodeMs, 0.5);
        QVERIFY(fb.hasRun);
        QCOMPARE(fb.run.method, f.run.method);
        QCOMPARE(fb.run.stats.count, size_t(2));
        // Pixels that do not fill the frame they claim are dropped, with its size.
        f.width = 3;
        f.hasRun = false;
        const FrameResult fc = frameResultFromCbor(wire(toCbor(f)));
        QVERIFY(fc.bgr.empty());
        QCOMPARE(fc.width, 0);
        QVERIFY(!fc.hasRun);

        DeviceInfo d;
        d.id = "cuda:0";
        d.name = "H200";
        d.memoryBytes = uint64_t(1) << 40;
        d.available = false;
        d.reason = "driver too old";
        const DeviceInfo db = deviceFromCbor(wire(toCbor(d)));
        QCOMPARE(db.id, d.id);
        QCOMPARE(db.name, d.name);
        QCOMPARE(db.memoryBytes, d.memoryBytes);
        QVERIFY(!db.available);
        QCOMPARE(db.reason, d.reason);
    }

    void runProfileRoundTrips() {
        RunResult r;
        r.model = "m.pt";
        r.deviceName = "cpu (2 threads)";
        r.warmup = 2;
        r.inputDescriptions = {"f32[1, 3]"};
        r.profiled = true;
        r.profile.operatorMs = 3.5;
        r.profile.wallMs = 4.5;
        r.profile.modules = {{"features", 1.0, 2.0, 7}};
        r.profile.operators = {{"aten::conv2d", 2.0, 1.5, 3}};
        r.profile.valueShapes = {{"%x", "f32[1, 3]"}};
        r.profile.shapesError = "none";
        r.profile.shapesMethod = "forward";
        const RunResult b = runResultFromCbor(wire(toCbor(r)));
        QCOMPARE(b.model, r.model);
        QCOMPARE(b.deviceName, r.deviceName);
        QCOMPARE(b.warmup, 2);
        QCOMPARE(b.inputDescriptions, r.inputDescriptions);
        QVERIFY(b.profiled);
        QCOMPARE(b.profile.operatorMs, 3.5);
        QCOMPARE(b.profile.wallMs, 4.5);
        QCOMPARE(b.profile.modules.size(), size_t(1));
        QCOMPARE(b.profile.modules[0].path, std::string("features"));
        QCOMPARE(b.profile.modules[0].totalMs, 2.0);
        QCOMPARE(b.profile.modules[0].calls, int64_t(7));
        QCOMPARE(b.profile.operators.size(), size_t(1));
        QCOMPARE(b.profile.operators[0].selfMs, 1.5);
        QCOMPARE(b.profile.valueShapes, r.profile.valueShapes);
        QCOMPARE(b.profile.shapesError, r.profile.shapesError);
        QCOMPARE(b.profile.shapesMethod, r.profile.shapesMethod);
        r.profiled = false;
        QVERIFY(!runResultFromCbor(wire(toCbor(r))).profiled);
    }

    // What no worker writes reads as the defaults, never as garbage or a crash.
    void hostileBodiesReadAsDefaults() {
        QCborMap run;
        run.insert(QLatin1String("method"), 42);              // not a string
        run.insert(QLatin1String("valuesLimit"), -5);         // a negative size
        run.insert(QLatin1String("warmup"), qint64(1) << 40); // beyond an int
        run.insert(QLatin1String("profile"), QStringLiteral("yes"));
        QCborMap input;
        input.insert(QLatin1String("kind"), 1000); // past the last kind
        run.insert(QLatin1String("inputs"), QCborArray{input, QStringLiteral("not a map")});
        const RunRequest r = runRequestFromCbor(run);
        QCOMPARE(r.method, std::string("forward"));
        QCOMPARE(r.valuesLimit, size_t(0));
        QCOMPARE(r.warmup, std::numeric_limits<int>::max());
        QVERIFY(!r.profile);
        QCOMPARE(r.inputs.size(), size_t(2));
        QCOMPARE(r.inputs[0].kind, InputSpec::Kind::None);
        QCOMPARE(r.inputs[1].dtype, std::string("float32"));

        QCborMap error;
        error.insert(QLatin1String("kind"), -3);
        QCOMPARE(errorFromCbor(error).kind, ErrorKind::Internal);

        QCborMap diff;
        diff.insert(QLatin1String("modules"), QCborArray{QCborArray{QStringLiteral("m"), 9}});
        diff.insert(QLatin1String("ms"), QCborArray{1.5}); // shorter than the row
        const ArchiveDiff d = archiveDiffFromCbor(diff);
        QCOMPARE(d.modules.size(), size_t(1));
        QCOMPARE(d.modules[0].kind, ModuleChange::Kind::Added);
        QCOMPARE(d.loadMsA, 1.5);
        QCOMPARE(d.loadMsB, 0.0);

        // A value nested far deeper than any model's output is cut, not recursed into.
        QCborMap value;
        value.insert(QLatin1String("text"), QStringLiteral("leaf"));
        for (int i = 0; i < 500; ++i) {
            QCborMap parent;
            parent.insert(QLatin1String("children"), QCborArray{value});
            value = parent;
        }
        const OutputValue top = outputFromCbor(value);
        int depth = 0;
        for (const OutputValue* v = &top; !v->children.empty(); v = &v->children[0]) {
            ++depth;
        }
        QVERIFY(depth > 0 && depth < 100);

        // Floats whose bytes are not a whole number of floats are none.
        QCborMap output;
        output.insert(QLatin1String("values"), QByteArray(7, '\1'));
        QVERIFY(outputFromCbor(output).values.empty());
    }
};

QTEST_GUILESS_MAIN(TestProtocolBodies)
#include "test_protocol_bodies.moc"
