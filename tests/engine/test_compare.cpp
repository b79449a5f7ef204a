// Two models of any format compared on the same inputs, module output by module output, through
// the registry as the worker and the CLI reach them; and a plain .pt2's activations, which the
// interpreter records as the TorchScript tap does. The committed CNN and its TorchScript twin
// (tests/fixtures/saved_by, both builds) are compared as they are, and with one weight of the
// export changed in its archive.
#include "test_support.h"

#include "../archive/zip_fixtures.h"

#include <model.h>

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace scriptscope;
using namespace scriptscope::test;

namespace {

std::string savedBy(const std::string& name) {
    return std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/" + name;
}

const std::string kTwin = savedBy("traced_cnn.torch2.14.pt");
const std::string kExport = savedBy("exported_cnn.torch2.14.pt2");
const std::string kInputs = savedBy("traced_cnn.torch2.14.inputs.pt");

std::unique_ptr<Model> open(const std::string& path) {
    auto model = openModel(path);
    if (!model) {
        qFatal("%s: %s", path.c_str(), model.error().message.c_str());
    }
    return std::move(model).value();
}

// The export with the float32 weight `name` (its state-dict name) changed by `edit`, at `path`.
std::string exportWithWeight(const std::string& path, const std::string& name,
                             const std::function<void(float*, size_t)>& edit) {
    auto records = recordsOf(kExport);
    const auto config = nlohmann::json::parse(recordNamed(records, "model_weights_config.json"));
    const std::string file = config["config"][name]["path_name"].get<std::string>();
    std::string& bytes = recordNamed(records, "data/weights/" + file);
    std::vector<float> values(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
    edit(values.data(), values.size());
    std::memcpy(bytes.data(), values.data(), values.size() * sizeof(float));
    std::ofstream(path, std::ios::binary) << storedZip(records);
    return path;
}

void addToEach(float* values, size_t n, float delta) {
    for (size_t i = 0; i < n; ++i) {
        values[i] += delta;
    }
}

// `a`'s values compared with the module outputs of `b` on the CNN's inputs (none: the samples
// the .pt2 keeps).
Expected<ActivationReport> compare(const std::string& a, const std::string& b, bool inputs = true,
                                   const Criterion& criterion = Criterion()) {
    auto model = open(a);
    ActivationRequest request;
    if (inputs) {
        request.run.inputsFile = kInputs;
    }
    request.referenceModel = b;
    request.criterion = criterion;
    return model->activations(request);
}

const ActivationRecord& firstDivergence(const ActivationReport& report) {
    return report.records.at(static_cast<size_t>(report.firstDifference));
}

} // namespace

class TestCompare : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    std::string temp(const char* name) {
        return dir_.filePath(QString::fromLatin1(name)).toStdString();
    }

private Q_SLOTS:
    // Every tensor the program's graph makes, by the diagram's node ids, with its module; the
    // first NaN with the values its node read.
    void programActivations() {
        auto model = open(kExport);
        QVERIFY(model->info().lacks(Capability::Activations).empty());
        ActivationRequest request;
        request.run.inputsFile = kInputs;
        const auto report = model->activations(request);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const auto graph = model->graphModel("", "forward", true);
        QVERIFY(graph);
        // The input, then one value per drawn node, in the order they ran.
        QCOMPARE(report->records.size(), graph->nodes.size() + 1);
        QCOMPARE(report->records[0].kind, std::string("input"));
        for (size_t i = 1; i < report->records.size(); ++i) {
            const ActivationRecord& r = report->records[i];
            QCOMPARE(r.node, static_cast<int>(i - 1));
            QCOMPARE(r.kind, graph->nodes[i - 1].kind);
        }
        QCOMPARE(report->records[1].module, std::string("conv"));
        QCOMPARE(report->records[1].moduleOutputs, std::vector<std::string>{"conv"});
        QCOMPARE(report->records.back().moduleOutputs, std::vector<std::string>{"fc"});
        QCOMPARE(report->firstNonFinite, -1);
        QCOMPARE(report->output.shape, (std::vector<int64_t>{1, 2}));

        // A NaN in the BatchNorm's weight: its output is the first value that is not finite,
        // and the convolution's output is what it read.
        auto broken = open(exportWithWeight(temp("nan.pt2"), "bn.weight",
                                            [](float* v, size_t) { v[0] = std::nanf(""); }));
        const auto nan = broken->activations(request);
        QVERIFY2(nan, nan ? "" : nan.error().message.c_str());
        QVERIFY(nan->firstNonFinite > 0);
        const ActivationRecord& bad = nan->records[static_cast<size_t>(nan->firstNonFinite)];
        QCOMPARE(bad.module, std::string("bn"));
        QVERIFY(bad.nanCount > 0);
        QCOMPARE(nan->firstNonFiniteInputs.size(), size_t(1));
        QCOMPARE(nan->records[static_cast<size_t>(nan->firstNonFiniteInputs[0])].module,
                 std::string("conv"));
    }

    // The TorchScript twin against its export, and the export against the twin (its sample
    // inputs taken for both): every module output matched, none apart.
    void twinsAgree() {
        for (const bool fromPt : {true, false}) {
            const auto report = fromPt ? compare(kTwin, kExport) : compare(kExport, kTwin, false);
            QVERIFY2(report, report ? "" : report.error().message.c_str());
            QCOMPARE(report->referenceCount, 3);
            QVERIFY(report->unmatched.empty());
            // conv, bn and fc at their boundaries; the relu and the mean of the model's own
            // forward by their order in it (TorchScript and torch.export name nodes apart).
            QCOMPARE(report->operatorsMatched, 2);
            QCOMPARE(report->comparedCount, 5);
            QCOMPARE(report->firstDifference, -1);
            for (const auto& r : report->records) {
                if (r.compared) {
                    QVERIFY(r.maxAbsDiff <= 1e-5);
                    QVERIFY(r.cosine > 0.999999);
                    QVERIFY(r.snrDb > 100);
                }
            }
        }
    }

    // One Linear's weights changed by 1e-2 in the export: that Linear's output is the first
    // divergence; a change in the first convolution is found there, before the layers it
    // reaches.
    void firstDivergenceIsTheChangedModule() {
        const std::string fc = exportWithWeight(temp("fc.pt2"), "fc.weight",
                                                [](float* v, size_t n) { addToEach(v, n, 1e-2f); });
        const auto linear = compare(kTwin, fc);
        QVERIFY2(linear, linear ? "" : linear.error().message.c_str());
        QVERIFY(linear->firstDifference >= 0);
        const ActivationRecord& changed = firstDivergence(*linear);
        QCOMPARE(changed.moduleOutputs, std::vector<std::string>{"fc"});
        QVERIFY(changed.maxAbsDiff > 1e-3 && changed.maxAbsDiff < 1e-1);
        QVERIFY(changed.maxRelDiff > 0 && changed.cosine < 1 && std::isfinite(changed.snrDb));

        const std::string conv = exportWithWeight(
            temp("conv.pt2"), "conv.weight", [](float* v, size_t n) { addToEach(v, n, 1e-2f); });
        for (const bool fromPt : {true, false}) {
            const auto report = fromPt ? compare(kTwin, conv) : compare(conv, kTwin);
            QVERIFY2(report, report ? "" : report.error().message.c_str());
            QVERIFY(report->firstDifference >= 0);
            QCOMPARE(firstDivergence(*report).moduleOutputs, std::vector<std::string>{"conv"});
            // Everything after it differs too: bn, the relu, the mean and fc.
            int beyond = 0;
            for (const auto& r : report->records) {
                beyond += r.compared && r.maxAbsDiff > 1e-4;
            }
            QCOMPARE(beyond, 5);
        }
    }

    // The memory of a run: each storage a value made, alive from its step to the last step that
    // reads it (a program's) or until the interpreter lets it go (TorchScript's); the timeline's
    // peak is the sum of the values alive there.
    void memoryTimeline_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("inputs");
        QTest::addColumn<qulonglong>("peak");
        // conv's and bn's outputs (1x4x8x8 float32) while bn runs.
        QTest::newRow("cnn") << QString::fromStdString(kExport) << QString() << qulonglong(2048);
        QTest::newRow("lstm") << QString::fromStdString(savedBy("exported/lstm.pt2")) << QString()
                              << qulonglong(0);
        QTest::newRow("cond") << QString::fromStdString(savedBy("exported/my_decision_gate.pt2"))
                              << QString() << qulonglong(0);
        // Its TorchScript twin holds the same two while its batch_norm runs.
        QTest::newRow("twin") << QString::fromStdString(kTwin) << QString::fromStdString(kInputs)
                              << qulonglong(2048);
    }

    void memoryTimeline() {
        QFETCH(QString, file);
        QFETCH(QString, inputs);
        QFETCH(qulonglong, peak);
        auto model = open(file.toStdString());
        ActivationRequest request;
        request.run.inputsFile = inputs.toStdString();
        const auto report = model->activations(request);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const MemoryTimeline& memory = report->memory;
        QVERIFY(memory.known);
        QVERIFY(!memory.liveBytes.empty());
        std::vector<uint64_t> live(memory.liveBytes.size(), 0);
        uint64_t values = 0;
        for (const ActivationRecord& r : report->records) {
            QVERIFY(r.storageBytes == 0 || r.madeAt >= 0);
            QVERIFY(r.storageBytes == 0 || r.lastUseAt >= r.madeAt);
            values += r.bytes;
            for (int step = r.madeAt;
                 r.storageBytes > 0 && step <= r.lastUseAt && step < static_cast<int>(live.size());
                 ++step) {
                live[static_cast<size_t>(step)] += r.storageBytes;
            }
        }
        QVERIFY(values > 0);
        QCOMPARE(memory.liveBytes, live);
        QCOMPARE(memory.peakBytes, *std::max_element(live.begin(), live.end()));
        QCOMPARE(memory.liveBytes[static_cast<size_t>(memory.peakStep)], memory.peakBytes);
        uint64_t held = 0;
        for (const int i : memory.peakRecords) {
            held += report->records[static_cast<size_t>(i)].storageBytes;
        }
        QCOMPARE(held, memory.peakBytes);
        if (peak > 0) {
            QCOMPARE(memory.peakBytes, uint64_t(peak));
        }
    }

    // Real models, exported by the 2.x build's PyTorch (make_exported.py): ResNet-50's TorchScript
    // twin against its export matches nearly every module output and none diverges at 1e-4; a
    // bfloat16 cast inserted before one block is found at that block.
    void realExports() {
        const std::string built = SCRIPTSCOPE_EXPORTED_DIR;
        if (built.empty()) {
            QSKIP("the 2.x programs are made where SCRIPTSCOPE_PYTHON has torch.export");
        }
        auto twin = open(built + "/resnet50.twin.pt");
        ActivationRequest request;
        request.run.inputsFile = built + "/resnet50.inputs.pt";
        request.referenceModel = built + "/resnet50.pt2";
        const auto resnet = twin->activations(request);
        QVERIFY2(resnet, resnet ? "" : resnet.error().message.c_str());
        const int matched = resnet->referenceCount - static_cast<int>(resnet->unmatched.size());
        QVERIFY2(
            resnet->referenceCount > 100 && matched >= 0.95 * resnet->referenceCount,
            (std::to_string(matched) + " of " + std::to_string(resnet->referenceCount)).c_str());
        QVERIFY2(resnet->firstDifference < 0,
                 resnet->firstDifference < 0 ? "" : firstDivergence(*resnet).comparedWith.c_str());

        auto cast = open(built + "/blocks_bf16.pt2");
        ActivationRequest blocks;
        blocks.run.inputsFile = built + "/blocks_bf16.inputs.pt";
        blocks.referenceModel = built + "/blocks.pt2";
        const auto report = cast->activations(blocks);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        QVERIFY(report->firstDifference >= 0);
        const std::string& where = firstDivergence(*report).comparedWith;
        QVERIFY2(where.rfind("blocks.1", 0) == 0, where.c_str());
    }

    // What cannot be compared says why: a reference that does not open, a compiled package's
    // values (it runs as one call).
    void refusalsSayWhy() {
        const auto missing = compare(kTwin, temp("none.pt2"));
        QVERIFY(!missing);
        QVERIFY2(missing.error().message.find("none.pt2") != std::string::npos,
                 missing.error().message.c_str());
        auto model = open(kExport);
        ActivationRequest request;
        request.compareDevice = "cpu";
        const auto device = model->activations(request);
        QVERIFY(!device);
        QCOMPARE(device.error().kind, ErrorKind::Input);
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "test_compare.moc"
