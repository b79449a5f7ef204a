// Running methods: outputs equal Python's for the same inputs, inputs are built and checked
// against the schema, devices are refused with a reason, and the statistics are right.
#include "test_support.h"

#include <engine.h>
#include <input_spec.h>
#include <stats.h>

#include <QTemporaryDir>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <fstream>
#include <map>

using namespace scriptscope;
using scriptscope::test::fixture;

namespace {

c10::IValue loadValue(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    return torch::jit::pickle_load(bytes);
}

// Compares two values of any structure; tensors with a float tolerance.
bool sameValue(const c10::IValue& a, const c10::IValue& b, std::string& why) {
    if (a.isTensor() && b.isTensor()) {
        const auto& x = a.toTensor();
        const auto& y = b.toTensor();
        if (x.sizes() != y.sizes() || x.scalar_type() != y.scalar_type()) {
            why = "tensor shape or dtype differs";
            return false;
        }
        if (!torch::allclose(x.to(torch::kFloat64), y.to(torch::kFloat64), 1e-5, 1e-6)) {
            why = "tensor values differ by " + std::to_string((x - y).abs().max().item<double>());
            return false;
        }
        return true;
    }
    if ((a.isTuple() && b.isTuple()) || (a.isList() && b.isList())) {
        const auto ea = a.isTuple() ? a.toTupleRef().elements().vec() : a.toListRef().vec();
        const auto eb = b.isTuple() ? b.toTupleRef().elements().vec() : b.toListRef().vec();
        if (ea.size() != eb.size()) {
            why = "lengths differ";
            return false;
        }
        for (size_t i = 0; i < ea.size(); ++i) {
            if (!sameValue(ea[i], eb[i], why)) {
                return false;
            }
        }
        return true;
    }
    if (a.isGenericDict() && b.isGenericDict()) {
        const auto da = a.toGenericDict();
        const auto db = b.toGenericDict();
        if (da.size() != db.size()) {
            why = "dict sizes differ";
            return false;
        }
        for (const auto& entry : da) {
            if (!db.contains(entry.key()) || !sameValue(entry.value(), db.at(entry.key()), why)) {
                why = "dict entry differs: " + why;
                return false;
            }
        }
        return true;
    }
    if (a == b) {
        return true;
    }
    why = "values differ";
    return false;
}

} // namespace

class TestRun : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void outputsMatchPython_data() {
        QTest::addColumn<QString>("name");
        for (const char* name :
             {"mycell_traced", "decision_gate", "mycell_scripted", "rnn_loop", "wrap_rnn",
              "compute", "rectifier", "rich", "extra_files", "structured"}) {
            QTest::newRow(name) << QString::fromLatin1(name);
        }
    }

    void outputsMatchPython() {
        QFETCH(QString, name);
        const std::string base = name.toStdString();
        QTemporaryDir dir;
        Session session;
        QVERIFY(session.load(fixture(base + ".pt")).ok());
        RunRequest request;
        request.inputsFile = fixture(base + ".inputs.pt");
        request.saveOutputsPath = dir.path().toStdString() + "/out.pt";
        request.warmup = 1;
        request.iterations = 3;
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QCOMPARE(result->samplesMs.size(), size_t(3));
        std::string why;
        QVERIFY2(sameValue(loadValue(request.saveOutputsPath),
                           loadValue(fixture(base + ".outputs.pt")), why),
                 why.c_str());
    }

    void structuredOutputTree() {
        Session session;
        QVERIFY(session.load(fixture("structured.pt")).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("ones:2x3").value());
        const auto result = session.run(request);
        QVERIFY(result.ok());
        const OutputValue& out = result->output;
        QCOMPARE(out.kind, OutputValue::Kind::Tuple);
        QCOMPARE(out.children.size(), size_t(7));
        QCOMPARE(out.children[0].kind, OutputValue::Kind::Tensor);
        QCOMPARE(out.children[0].shape, (std::vector<int64_t>{2, 3}));
        QCOMPARE(out.children[0].min, 2.0);
        QCOMPARE(out.children[0].mean, 2.0);
        QCOMPARE(out.children[1].kind, OutputValue::Kind::List);
        QCOMPARE(out.children[2].kind, OutputValue::Kind::Dict);
        QCOMPARE(out.children[2].children[0].key, std::string("'sum'"));
        QCOMPARE(out.children[2].children[0].max, 6.0);
        QCOMPARE(out.children[3].text, std::string("3"));
        QCOMPARE(out.children[4].text, std::string("1.5"));
        QCOMPARE(out.children[5].text, std::string("True"));
        QCOMPARE(out.children[6].kind, OutputValue::Kind::None);
    }

    void profileAttributesTimeToModules() {
        Session session;
        QVERIFY(session.load(fixture("profile_net.pt")).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("random:64x512").value());
        request.iterations = 3;
        request.profile = true;
        const auto result = session.run(request);
        QVERIFY(result.ok());
        QVERIFY(result->profiled);
        const RunProfile& p = result->profile;
        std::map<std::string, ModuleTime> byPath;
        double selfSum = 0;
        for (const auto& m : p.modules) {
            byPath[m.path] = m;
            selfSum += m.selfMs;
        }
        for (const char* path : {"", "heavy", "heavy.linear", "light"}) {
            QVERIFY2(byPath.count(path), path);
        }
        // The shares add up: every top-level operator call is in exactly one module.
        QVERIFY(std::abs(selfSum - p.operatorMs) < 1e-9 * std::max(1.0, p.operatorMs));
        QVERIFY(std::abs(byPath[""].totalMs - p.operatorMs) < 1e-9 * std::max(1.0, p.operatorMs));
        // Twenty 64x512x512 products against one addition.
        QVERIFY2(byPath["heavy"].totalMs > 0.8 * p.operatorMs,
                 qPrintable(QString::number(byPath["heavy"].totalMs / p.operatorMs)));
        QVERIFY(byPath["heavy.linear"].totalMs > 0.5 * p.operatorMs);
        QCOMPARE(byPath["heavy.linear"].calls, int64_t(20));
        QCOMPARE(byPath["light"].calls, int64_t(1));
        QVERIFY(byPath["heavy"].totalMs >= byPath["heavy.linear"].totalMs);
        QVERIFY(p.wallMs >= p.operatorMs * 0.99);
        // The operators: linear called twenty times, the longest first.
        QVERIFY(!p.operators.empty());
        bool linearSeen = false;
        for (size_t i = 0; i < p.operators.size(); ++i) {
            if (i > 0) {
                QVERIFY(p.operators[i - 1].totalMs >= p.operators[i].totalMs);
            }
            if (p.operators[i].name == "aten::linear") {
                linearSeen = true;
                QCOMPARE(p.operators[i].calls, int64_t(20));
                QVERIFY(p.operators[i].selfMs <= p.operators[i].totalMs);
            }
        }
        QVERIFY(linearSeen);
        // A plain run carries no profile.
        request.profile = false;
        QVERIFY(!session.run(request)->profiled);
    }

    void outputValuesComeBackWhole() {
        Session session;
        QVERIFY(session.load(fixture("structured.pt")).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("ones:2x3").value());
        request.valuesLimit = 6;
        const auto result = session.run(request);
        QVERIFY(result.ok());
        // x * 2 of ones: six values of 2, float32, row-major.
        QCOMPARE(result->output.children[0].values, std::vector<float>(6, 2.0F));
        request.valuesLimit = 5; // over the limit: statistics only
        QVERIFY(session.run(request)->output.children[0].values.empty());
    }

    void matrixInputFromValues() {
        InputSpec spec;
        spec.kind = InputSpec::Kind::Matrix;
        spec.floatList = {1, 0, 2, 0, 1, 3, 0, 0, 1};
        Session session;
        QVERIFY(session.load(fixture("structured.pt")).ok());
        RunRequest request;
        request.inputs.push_back(spec);
        request.valuesLimit = 100;
        const auto result = session.run(request);
        QVERIFY(result.ok());
        QCOMPARE(result->output.children[0].shape, (std::vector<int64_t>{3, 3}));
        QCOMPARE(result->output.children[0].values[2], 4.0F);
        spec.floatList.pop_back();
        request.inputs = {spec};
        QVERIFY(!session.run(request).ok());
    }

    void tensorStatisticsCountNanAndInf() {
        Session session;
        QVERIFY(session.load(fixture("decision_gate.pt")).ok());
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/x.pt";
        auto x = torch::tensor({1.0f, std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(), 3.0f});
        const auto bytes = torch::jit::pickle_save(x);
        std::ofstream(path, std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        RunRequest request;
        request.inputs.push_back(parseInputSpec("file:" + path).value());
        const auto result = session.run(request);
        QVERIFY(result.ok());
        QCOMPARE(result->output.nanCount, int64_t(1));
        QCOMPARE(result->output.infCount, int64_t(1));
        QCOMPARE(result->output.numel, int64_t(4));
    }

    void inputsAreCheckedAgainstTheSchema_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("inputs");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("too few")
            << QStringLiteral("mycell_traced") << QStringList{QStringLiteral("random:3x4")}
            << QStringLiteral("1 input(s) given, but forward(x: Tensor, h: Tensor) takes 2");
        QTest::newRow("too many") << QStringLiteral("decision_gate")
                                  << QStringList{QStringLiteral("random:3x4"),
                                                 QStringLiteral("random:3x4")}
                                  << QStringLiteral("takes 1");
        QTest::newRow("wrong type")
            << QStringLiteral("mycell_traced")
            << QStringList{QStringLiteral("random:3x4"), QStringLiteral("3.5")}
            << QStringLiteral("argument 'h' (2 of forward(x: Tensor, h: Tensor)) expects Tensor, "
                              "but the input is float");
        QTest::newRow("wrong shape raises in the model")
            << QStringLiteral("mycell_traced")
            << QStringList{QStringLiteral("random:3x5"), QStringLiteral("random:3x4")}
            << QStringLiteral("forward failed: RuntimeError");
    }

    void inputsAreCheckedAgainstTheSchema() {
        QFETCH(QString, model);
        QFETCH(QStringList, inputs);
        QFETCH(QString, messagePart);
        Session session;
        QVERIFY(session.load(fixture(model.toStdString() + ".pt")).ok());
        RunRequest request;
        for (const auto& spec : inputs) {
            request.inputs.push_back(parseInputSpec(spec.toStdString()).value());
        }
        const auto result = session.run(request);
        QVERIFY(!result.ok());
        QVERIFY2(result.error().message.find(messagePart.toStdString()) != std::string::npos,
                 result.error().message.c_str());
    }

    void defaultsMayBeOmitted() {
        Session session;
        QVERIFY(session.load(fixture("rich.pt")).ok());
        RunRequest request;
        request.method = "describe";
        request.inputs.push_back(parseInputSpec("str:hi ").value());
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QCOMPARE(result->output.text, std::string("hi 1 rich model"));
        request.inputs.push_back(parseInputSpec("4").value());
        QCOMPARE(session.run(request)->output.text, std::string("hi 4 rich model"));
    }

    void modelThatRaises() {
        Session session;
        QVERIFY(session.load(fixture("raises.pt")).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("ones:2").value());
        const auto result = session.run(request);
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, ErrorKind::Model);
        QCOMPARE(
            result.error().message,
            std::string("forward failed: builtins.RuntimeError: the model refuses this input"));
        QVERIFY(result.error().details.find("Traceback of TorchScript") != std::string::npos);
    }

    void unknownMethod() {
        Session session;
        QVERIFY(session.load(fixture("rich.pt")).ok());
        RunRequest request;
        request.method = "predict";
        const auto result = session.run(request);
        QVERIFY(!result.ok());
        QVERIFY(result.error().message.find(
                    "no method 'predict'; it has: forward, describe, embed") != std::string::npos);
    }

    void devices() {
        const auto devices = listDevices();
        QVERIFY(devices.size() >= 2);
        QCOMPARE(devices[0].id, std::string("cpu"));
        Session session;
        QVERIFY(session.load(fixture("decision_gate.pt")).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("ones:3x4").value());
        request.device = "cuda";
        const auto result = session.run(request);
        if (torch::cuda::is_available()) {
            QVERIFY(devices[1].available);
            QCOMPARE(devices[1].id, std::string("cuda:0"));
            QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
            QCOMPARE(result->device, std::string("cuda:0"));
            request.device = "cuda:" + std::to_string(torch::cuda::device_count());
            QVERIFY(!session.run(request).ok());
        } else {
            // This machine: the reason is said in words, and a run on CUDA is refused with it.
            QVERIFY(!devices[1].available);
            QVERIFY(!devices[1].reason.empty());
            QVERIFY(!result.ok());
            QCOMPARE(result.error().kind, ErrorKind::Device);
            QVERIFY2(result.error().message.find(devices[1].reason) != std::string::npos,
                     result.error().message.c_str());
        }
        request.device = "tpu";
        QCOMPARE(session.run(request).error().kind, ErrorKind::Device);
    }

    void seededRandomInputsRepeat() {
        Session session;
        QVERIFY(session.load(fixture("decision_gate.pt")).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("random:3x4:float32:7").value());
        const auto first = session.run(request);
        const auto second = session.run(request);
        QVERIFY(first.ok() && second.ok());
        QCOMPARE(first->output.preview, second->output.preview);
    }

    void imageInputs() {
        Session session;
        QVERIFY(session.load(fixture("decision_gate.pt")).ok()); // returns x or -x: shows the input
        RunRequest request;
        request.previewValues = 3;
        // Raw bytes as OpenCV reads them: B = x*255//159 at row 0, so the first pixels are 0, 1, 3.
        request.inputs.push_back(
            parseInputSpec("image:" + fixture("warp_source.png") +
                           ",order=bgr,layout=chw,batch=0,dtype=float32,scale=1")
                .value());
        auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QCOMPARE(result->output.shape, (std::vector<int64_t>{3, 120, 160}));
        QCOMPARE(result->output.preview, (std::vector<double>{0, 1, 3}));
        request.inputs[0] =
            parseInputSpec("image:" + fixture("warp_source.png") + ",size=32x24,preset=imagenet")
                .value();
        result = session.run(request);
        QVERIFY(result.ok());
        QCOMPARE(result->output.shape, (std::vector<int64_t>{1, 3, 24, 32}));
        QCOMPARE(result->output.dtype, std::string("float32"));
        request.inputs[0] = parseInputSpec("image:" + fixture("no-such.png")).value();
        QCOMPARE(session.run(request).error().kind, ErrorKind::File);
    }

    void matrixInput() {
        // The demo-style model: a 3x3 warp argument from a matrix file.
        Session session;
        QVERIFY(session.load(fixture("rectifier.pt")).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("random:1x3x32x40").value());
        request.inputs.push_back(
            parseInputSpec("matrix:" + fixture("homography.yml") + "#warp").value());
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QCOMPARE(result->output.shape, (std::vector<int64_t>{1, 4, 32, 40}));
        QCOMPARE(result->inputDescriptions[1], "matrix " + fixture("homography.yml") + "#warp");
    }

    void torchvisionOperatorsFromTheirLibrary() {
        // Registers torchvision's operators in this process; keep this the last test using a
        // Session.
        Session session;
        QVERIFY(!session.loadOperatorLibrary(
            scriptscope::test::readText(fixture("torchvision_library.txt"))));
        QVERIFY(session.load(fixture("torchvision_nms.pt")).ok());
        QTemporaryDir dir;
        RunRequest request;
        request.inputsFile = fixture("torchvision_nms.inputs.pt");
        request.saveOutputsPath = dir.path().toStdString() + "/out.pt";
        QVERIFY(session.run(request).ok());
        std::string why;
        QVERIFY2(sameValue(loadValue(request.saveOutputsPath),
                           loadValue(fixture("torchvision_nms.outputs.pt")), why),
                 why.c_str());
    }

    void inputSpecs_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("description");
        QTest::newRow("random") << QStringLiteral("random:1x3x224x224") << true
                                << QStringLiteral("random 1x3x224x224 float32");
        QTest::newRow("zeros int64")
            << QStringLiteral("zeros:2x3:int64") << true << QStringLiteral("zeros 2x3 int64");
        QTest::newRow("ones") << QStringLiteral("ones:4") << true
                              << QStringLiteral("ones 4 float32");
        QTest::newRow("int") << QStringLiteral("3") << true << QStringLiteral("int 3");
        QTest::newRow("float") << QStringLiteral("3.5") << true << QStringLiteral("float 3.5");
        QTest::newRow("bool") << QStringLiteral("true") << true << QStringLiteral("true");
        QTest::newRow("none") << QStringLiteral("none") << true << QStringLiteral("None");
        QTest::newRow("str") << QStringLiteral("str:a,b") << true << QStringLiteral("str 'a,b'");
        QTest::newRow("ints") << QStringLiteral("ints:1,2,3") << true
                              << QStringLiteral("int list of 3");
        QTest::newRow("image") << QStringLiteral("image:a.png,size=224x224,preset=imagenet") << true
                               << QStringLiteral("image a.png");
        QTest::newRow("file") << QStringLiteral("file:x.pt") << true << QStringLiteral("file x.pt");
        QTest::newRow("matrix") << QStringLiteral("matrix:h.yml#warp") << true
                                << QStringLiteral("matrix h.yml#warp");
        QTest::newRow("bad shape") << QStringLiteral("random:1xx3") << false << QString();
        QTest::newRow("bad dtype") << QStringLiteral("zeros:2:complex") << false << QString();
        QTest::newRow("bad image option")
            << QStringLiteral("image:a.png,size=big") << false << QString();
        QTest::newRow("word") << QStringLiteral("banana") << false << QString();
        QTest::newRow("empty file") << QStringLiteral("file:") << false << QString();
    }

    void inputSpecs() {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(QString, description);
        const auto spec = parseInputSpec(text.toStdString());
        QCOMPARE(spec.ok(), valid);
        if (valid) {
            QCOMPARE(QString::fromStdString(spec->describe()), description);
        } else {
            QCOMPARE(spec.error().kind, ErrorKind::Input);
        }
    }

    void percentiles_data() {
        // Expected values are NumPy's np.percentile (linear interpolation).
        QTest::addColumn<QVector<double>>("samples");
        QTest::addColumn<double>("q");
        QTest::addColumn<double>("expected");
        QTest::newRow("single") << QVector<double>{5} << 90.0 << 5.0;
        QTest::newRow("median odd") << QVector<double>{3, 1, 2} << 50.0 << 2.0;
        QTest::newRow("median even") << QVector<double>{4, 1, 3, 2} << 50.0 << 2.5;
        QTest::newRow("p90 of 1..10")
            << QVector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} << 90.0 << 9.1;
        QTest::newRow("p99 of 1..10")
            << QVector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} << 99.0 << 9.91;
        QTest::newRow("p0") << QVector<double>{7, 3, 9} << 0.0 << 3.0;
        QTest::newRow("p100") << QVector<double>{7, 3, 9} << 100.0 << 9.0;
    }

    void percentiles() {
        QFETCH(QVector<double>, samples);
        QFETCH(double, q);
        QFETCH(double, expected);
        QVERIFY(qAbs(percentile(std::vector<double>(samples.begin(), samples.end()), q) -
                     expected) < 1e-12);
    }

    void statsAndHistogram() {
        const std::vector<double> samples{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        const auto stats = computeStats(samples);
        QCOMPARE(stats.count, size_t(10));
        QCOMPARE(stats.min, 1.0);
        QCOMPARE(stats.max, 10.0);
        QCOMPARE(stats.mean, 5.5);
        QVERIFY(qAbs(stats.stddev - 2.8722813232690143) < 1e-12); // np.std
        const auto h = histogram(samples, 3);
        QCOMPARE(h.counts, (std::vector<size_t>{3, 3, 4})); // np.histogram(range(1, 11), 3)
        QCOMPARE(h.lower, 1.0);
        QCOMPARE(h.binWidth, 3.0);
        QCOMPARE(histogram({2, 2, 2}, 4).counts, (std::vector<size_t>{3, 0, 0, 0}));
        QCOMPARE(computeStats({}).count, size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestRun)
#include "test_run.moc"
