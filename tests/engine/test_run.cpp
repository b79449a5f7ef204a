// Running methods: outputs equal Python's for the same inputs, inputs are built and checked
// against the schema, devices are refused with a reason, and the statistics are right.
#include "test_support.h"

#include <input_spec.h>
#include <session.h>
#include <stats.h>
#include <torch_values.h> // detail::loadValueFile: strides and offsets, which OutputValue omits

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>

using namespace scriptscope;
using scriptscope::test::cudaExpected;
using scriptscope::test::fixture;

namespace {

c10::IValue loadValue(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    return torch::jit::pickle_load(bytes);
}

// Compares two values of any structure; tensors with a float tolerance (relative 1e-5, absolute
// atol).
bool sameValue(const c10::IValue& a, const c10::IValue& b, std::string& why, double atol = 1e-6) {
    if (a.isTensor() && b.isTensor()) {
        const auto& x = a.toTensor();
        const auto& y = b.toTensor();
        if (x.sizes() != y.sizes() || x.scalar_type() != y.scalar_type()) {
            why = "tensor shape or dtype differs";
            return false;
        }
        if (!torch::allclose(x.to(torch::kFloat64), y.to(torch::kFloat64), 1e-5, atol)) {
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
            if (!sameValue(ea[i], eb[i], why, atol)) {
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
            if (!db.contains(entry.key()) ||
                !sameValue(entry.value(), db.at(entry.key()), why, atol)) {
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

nlohmann::ordered_json readJson(const std::string& path) {
    return nlohmann::ordered_json::parse(scriptscope::test::readText(path));
}

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return text + "]";
}

// A value read from a torch.save file against its description in values.expected.json (what
// make_real_models.py's describe() wrote from Python's own view of it).
bool matchesDescription(const c10::IValue& v, const nlohmann::ordered_json& d,
                        const std::string& where, std::string& why) {
    const std::string type = d.at("type").get<std::string>();
    auto fail = [&](const std::string& what) {
        why = where + ": " + what;
        return false;
    };
    if (type == "tensor") {
        if (!v.isTensor()) {
            return fail("not a tensor but " + v.tagKind());
        }
        const auto& t = v.toTensor();
        const auto shape = d.at("shape").get<std::vector<int64_t>>();
        if (t.sizes().vec() != shape) {
            return fail("shape " + shapeText(t.sizes().vec()) + ", not " + shapeText(shape));
        }
        if (scriptscope::detail::dtypeName(t.scalar_type()) != d.at("dtype").get<std::string>()) {
            return fail("dtype " + scriptscope::detail::dtypeName(t.scalar_type()));
        }
        if (t.strides().vec() != d.at("strides").get<std::vector<int64_t>>()) {
            return fail("strides " + shapeText(t.strides().vec()));
        }
        if (t.storage_offset() != d.at("storage_offset").get<int64_t>()) {
            return fail("storage offset " + std::to_string(t.storage_offset()));
        }
        const auto storageNumel = static_cast<int64_t>(t.storage().nbytes()) / t.element_size();
        if (storageNumel != d.at("storage_numel").get<int64_t>()) {
            return fail("storage of " + std::to_string(storageNumel) + " elements");
        }
        if (t.is_contiguous() != d.at("contiguous").get<bool>()) {
            return fail("contiguity differs");
        }
        const auto values = t.to(torch::kFloat64).contiguous().reshape({-1});
        const auto want = d.at("values").get<std::vector<double>>();
        if (values.numel() != static_cast<int64_t>(want.size())) {
            return fail("number of values differs");
        }
        for (size_t i = 0; i < want.size(); ++i) {
            // Every fixture value is exact in its dtype.
            if (values[static_cast<int64_t>(i)].item<double>() != want[i]) {
                return fail("value " + std::to_string(i) + " differs");
            }
        }
        return true;
    }
    if (type == "bool") {
        return v.isBool() && v.toBool() == d.at("value").get<bool>() ? true : fail("not that bool");
    }
    if (type == "int") {
        return v.isInt() && v.toInt() == d.at("value").get<int64_t>() ? true : fail("not that int");
    }
    if (type == "float") {
        return v.isDouble() && v.toDouble() == d.at("value").get<double>() ? true
                                                                           : fail("not that float");
    }
    if (type == "str") {
        return v.isString() && v.toStringRef() == d.at("value").get<std::string>()
                   ? true
                   : fail("not that str");
    }
    if (type == "none") {
        return v.isNone() ? true : fail("not None");
    }
    if (type == "list" || type == "tuple") {
        if (type == "list" ? !v.isList() : !v.isTuple()) {
            return fail("not a " + type + " but " + v.tagKind());
        }
        const auto items = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
        const auto& want = d.at("items");
        if (items.size() != want.size()) {
            return fail(std::to_string(items.size()) + " items, not " +
                        std::to_string(want.size()));
        }
        for (size_t i = 0; i < items.size(); ++i) {
            if (!matchesDescription(items[i], want[i], where + "[" + std::to_string(i) + "]",
                                    why)) {
                return false;
            }
        }
        return true;
    }
    if (type == "dict") {
        if (!v.isGenericDict()) {
            return fail("not a dict but " + v.tagKind());
        }
        const auto dict = v.toGenericDict();
        const auto& want = d.at("entries");
        if (dict.size() != want.size()) {
            return fail(std::to_string(dict.size()) + " entries");
        }
        auto expected = want.begin(); // in Python's insertion order
        for (const auto& entry : dict) {
            if (!entry.key().isString() || entry.key().toStringRef() != expected.key()) {
                return fail("keys differ or are out of order at '" + expected.key() + "'");
            }
            if (!matchesDescription(entry.value(), expected.value(),
                                    where + "['" + expected.key() + "']", why)) {
                return false;
            }
            ++expected;
        }
        return true;
    }
    return fail("unknown type " + type);
}

// The same description against what a run returned (the public OutputValue).
bool outputMatchesDescription(const OutputValue& o, const nlohmann::ordered_json& d,
                              const std::string& where, std::string& why) {
    const std::string type = d.at("type").get<std::string>();
    auto fail = [&](const std::string& what) {
        why = where + ": " + what + " (got " + o.text + ")";
        return false;
    };
    if (type == "tensor") {
        if (o.kind != OutputValue::Kind::Tensor) {
            return fail("not a tensor");
        }
        if (o.shape != d.at("shape").get<std::vector<int64_t>>() ||
            o.dtype != d.at("dtype").get<std::string>()) {
            return fail("shape or dtype differs");
        }
        std::vector<float> want;
        for (const double x : d.at("values").get<std::vector<double>>()) {
            want.push_back(static_cast<float>(x));
        }
        return o.values == want ? true : fail("values differ");
    }
    if (type == "bool") {
        return o.kind == OutputValue::Kind::Bool &&
                       o.text == (d.at("value").get<bool>() ? "True" : "False")
                   ? true
                   : fail("not that bool");
    }
    if (type == "int") {
        return o.kind == OutputValue::Kind::Int &&
                       o.text == std::to_string(d.at("value").get<int64_t>())
                   ? true
                   : fail("not that int");
    }
    if (type == "float") {
        return o.kind == OutputValue::Kind::Float &&
                       std::stod(o.text) == d.at("value").get<double>()
                   ? true
                   : fail("not that float");
    }
    if (type == "str") {
        return o.kind == OutputValue::Kind::String && o.text == d.at("value").get<std::string>()
                   ? true
                   : fail("not that str");
    }
    if (type == "none") {
        return o.kind == OutputValue::Kind::None ? true : fail("not None");
    }
    if (type == "list" || type == "tuple" || type == "dict") {
        const auto kind = type == "list"    ? OutputValue::Kind::List
                          : type == "tuple" ? OutputValue::Kind::Tuple
                                            : OutputValue::Kind::Dict;
        const auto& want = d.at(type == "dict" ? "entries" : "items");
        if (o.kind != kind || o.children.size() != want.size()) {
            return fail("not a " + type + " of " + std::to_string(want.size()));
        }
        size_t i = 0;
        for (auto e = want.begin(); e != want.end(); ++e, ++i) {
            const std::string key = type == "dict" ? "'" + e.key() + "'" : std::to_string(i);
            if (o.children[i].key != key) {
                return fail("child " + std::to_string(i) + " is under " + o.children[i].key);
            }
            if (!outputMatchesDescription(o.children[i], e.value(), where + "[" + key + "]", why)) {
                return false;
            }
        }
        return true;
    }
    return fail("unknown type " + type);
}

// A TorchScript module compiled here from source and saved, for argument types no fixture has.
std::string inlineModel(const QTemporaryDir& dir, const std::string& name,
                        const std::string& source) {
    torch::jit::Module module("__torch__." + name);
    module.define(source);
    const std::string path = dir.path().toStdString() + "/" + name + ".pt";
    module.save(path);
    return path;
}

// Sources of the inline models, by name.
const std::map<std::string, std::string>& inlineSources() {
    static const std::map<std::string, std::string> sources{
        {"identity", "def forward(self, x: Any) -> Any:\n    return x\n"},
        {"pair", "def forward(self, pair: Tuple[Tensor, Tensor]) -> Tensor:\n"
                 "    return pair[0] + pair[1]\n"},
        {"scores", "def forward(self, scores: Dict[str, Tensor]) -> Tensor:\n"
                   "    return scores['a'] - scores['b'] * 2\n"},
        {"tensors", "def forward(self, xs: List[Tensor]) -> Tensor:\n"
                    "    return torch.stack(xs).sum(0)\n"},
        {"nested", "def forward(self, items: List[Dict[str, Tuple[Tensor, int]]]) -> Tensor:\n"
                   "    total = torch.zeros(1)\n"
                   "    for item in items:\n"
                   "        for key in item.keys():\n"
                   "            total = total + item[key][0].sum() * item[key][1]\n"
                   "    return total\n"},
    };
    return sources;
}

// A fixture's path, or the path of an inline model ("inline:NAME") written into dir.
std::string modelPath(const QString& model, const QTemporaryDir& dir) {
    const std::string name = model.toStdString();
    if (name.rfind("inline:", 0) == 0) {
        const std::string inlineName = name.substr(7);
        return inlineModel(dir, inlineName, inlineSources().at(inlineName));
    }
    return fixture(name + ".pt");
}

std::string detectorImages() {
    return "list:image:" + fixture("det_a.png") + ",batch=0;image:" + fixture("det_b.png") +
           ",batch=0";
}

} // namespace

class TestRun : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void outputsMatchPython_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("tolerance"); // absolute, besides a relative 1e-5
        for (const char* name :
             {"mycell_traced", "decision_gate", "mycell_scripted", "rnn_loop", "wrap_rnn",
              "compute", "rectifier", "rich", "extra_files", "structured", "lstm",
              "transformer_encoder", "attention", "demo_resaved"}) {
            QTest::newRow(name) << QString::fromLatin1(name) << 1e-6;
        }
        // Quantized kernels may round differently from the ones Python ran.
        QTest::newRow("quantized_mobilenet") << QStringLiteral("quantized_mobilenet") << 1e-4;
        QTest::newRow("dynamic_quantized") << QStringLiteral("dynamic_quantized") << 1e-4;
    }

    void outputsMatchPython() {
        QFETCH(QString, name);
        QFETCH(double, tolerance);
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
                           loadValue(fixture(base + ".outputs.pt")), why, tolerance),
                 why.c_str());
    }

    void archivesSavedByOtherVersions_data() {
        // tests/fixtures/saved_by/: archives that Debian's PyTorch 1.13 and PyPI's 2.x saved
        // (make_saved_by.py), with what that PyTorch computed. Every build opens them and computes
        // the same, except where an archive calls an operator this LibTorch does not have.
        QTest::addColumn<QString>("base");
        const QDir dir(QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/saved_by"));
        int rows = 0;
        for (const auto& file : dir.entryList({QStringLiteral("*.pt")}, QDir::Files)) {
            if (file.endsWith(QLatin1String(".inputs.pt")) ||
                file.endsWith(QLatin1String(".outputs.pt"))) {
                continue;
            }
            const QString base = dir.filePath(file.chopped(3));
            QTest::newRow(file.toUtf8().constData()) << base;
            ++rows;
        }
        QVERIFY2(rows >= 10, "tests/fixtures/saved_by holds too few archives");
    }

    void archivesSavedByOtherVersions() {
        QFETCH(QString, base);
        const std::string path = base.toStdString();
        // "attention.torch2.14": the PyTorch that saved it.
        const QString savedBy = base.section(QLatin1String(".torch"), -1);
        const bool savedByTwo = savedBy.section(QLatin1Char('.'), 0, 0).toInt() >= 2;
        const bool libtorchTwo = std::stoi(libtorchVersion()) >= 2;
        Session session;
        const auto model = session.load(path + ".pt");
        if (base.contains(QLatin1String("/attention.")) && savedByTwo && !libtorchTwo) {
            QVERIFY(!model.ok());
            QCOMPARE(model.error().kind, ErrorKind::NeedsNewerLibTorch);
            const std::string& message = model.error().message;
            QVERIFY2(message.find("calls aten::scaled_dot_product_attention, which LibTorch " +
                                  libtorchVersion() + " does not have") != std::string::npos,
                     message.c_str());
            QVERIFY2(message.find("built on PyTorch \u2265 2.0") != std::string::npos,
                     message.c_str());
            return;
        }
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().message.c_str());
        QTemporaryDir dir;
        RunRequest request;
        request.inputsFile = path + ".inputs.pt";
        request.saveOutputsPath = dir.path().toStdString() + "/out.pt";
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        const auto want = scriptscope::detail::loadValueFile(path + ".outputs.pt");
        QVERIFY2(want.ok(), want.ok() ? "" : want.error().message.c_str());
        std::string why;
        QVERIFY2(sameValue(loadValue(request.saveOutputsPath), *want, why, 1e-5), why.c_str());
    }

    void savedValuesReadBack_data() {
        // One row per value_*.pt in the fixtures and per file values.expected.json describes: a
        // file on one side only fails its row.
        QTest::addColumn<QString>("file");
        const auto described = readJson(fixture("values.expected.json"));
        std::set<std::string> files;
        for (auto it = described.begin(); it != described.end(); ++it) {
            files.insert(it.key());
        }
        const QDir fixtures(QString::fromStdString(fixture("")));
        for (const auto& file : fixtures.entryList({QStringLiteral("value_*.pt")}, QDir::Files)) {
            files.insert(file.toStdString());
        }
        if (described.size() < 20) {
            qFatal("values.expected.json describes only %zu values", described.size());
        }
        for (const auto& file : files) {
            QTest::newRow(file.c_str()) << QString::fromStdString(file);
        }
    }

    void savedValuesReadBack() {
        QFETCH(QString, file);
        const std::string name = file.toStdString();
        const auto described = readJson(fixture("values.expected.json"));
        QVERIFY2(described.contains(name), "not described in values.expected.json");
        const auto& want = described[name];
        QVERIFY2(QFile::exists(QString::fromStdString(fixture(name))), "missing fixture");
        // As a run's argument: through an identity model taking Any, back as an OutputValue.
        QTemporaryDir dir;
        Session session;
        QVERIFY(session.load(inlineModel(dir, "Identity", inlineSources().at("identity"))).ok());
        RunRequest request;
        request.inputs.push_back(parseInputSpec("file:" + fixture(name)).value());
        request.warmup = 0;
        request.iterations = 1;
        request.valuesLimit = 1000;
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        std::string why;
        QVERIFY2(outputMatchesDescription(result->output, want, "value", why), why.c_str());
        // Directly: strides, storage offsets and storage sizes as Python saved them.
        const auto value = scriptscope::detail::loadValueFile(fixture(name));
        QVERIFY2(value.ok(), value.ok() ? "" : value.error().message.c_str());
        QVERIFY2(matchesDescription(*value, want, "value", why), why.c_str());
    }

    void packedParametersMatchPython_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("static, per-channel conv and linear")
            << QStringLiteral("quantized_mobilenet");
        QTest::newRow("dynamic, linear and LSTM cells") << QStringLiteral("dynamic_quantized");
    }

    void packedParametersMatchPython() {
        QFETCH(QString, name);
        const std::string base = name.toStdString();
        const auto entries = readJson(fixture(base + ".packed.json"));
        QVERIFY(entries.is_array() && !entries.empty());
        Session session;
        LoadOptions options;
        options.includeCode = false;
        const auto info = session.load(fixture(base + ".pt"), options);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().message.c_str());

        std::map<std::string, uint64_t> packedNumel; // by module path
        uint64_t packedTotal = 0;
        for (const auto& entry : entries) {
            const std::string modulePath = entry["module"].get<std::string>();
            const std::string tensorName = entry["name"].get<std::string>();
            const std::string where =
                modulePath + "." + entry["attribute"].get<std::string>() + " " + tensorName;
            const ModuleInfo* module = info->findModule(modulePath);
            QVERIFY2(module, ("no module " + modulePath).c_str());
            const TensorInfo* found = nullptr;
            for (const auto& t : module->parameters) {
                if (t.packed && t.name == tensorName &&
                    t.packedIn == entry["attribute"].get<std::string>()) {
                    found = &t;
                }
            }
            QVERIFY2(found, ("no packed parameter " + where).c_str());
            const auto shape = entry["shape"].get<std::vector<int64_t>>();
            QVERIFY2(found->shape == shape, (where + ": shape " + shapeText(found->shape)).c_str());
            QCOMPARE(found->dtype, entry["dtype"].get<std::string>());
            uint64_t numel = 1;
            for (const auto d : shape) {
                numel *= static_cast<uint64_t>(d);
            }
            QCOMPARE(found->bytes, numel * (found->dtype == "qint8" ? 1 : 4));
            packedNumel[modulePath] += numel;
            packedTotal += numel;

            const auto stats = session.tensorStatistics(modulePath);
            QVERIFY(stats.ok());
            const OutputValue* stat = nullptr;
            for (const auto& s : *stats) {
                if (s.key == tensorName) {
                    stat = &s;
                }
            }
            QVERIFY2(stat, (where + ": no statistics").c_str());
            QCOMPARE(stat->numel, static_cast<int64_t>(numel));
            const double n = static_cast<double>(numel);

            if (!entry.contains("qscheme")) { // a float bias
                QVERIFY(found->qscheme.empty());
                const double sum = entry["sum"].get<double>();
                QVERIFY2(std::abs(stat->mean * n - sum) <= 1e-6 * (1 + std::abs(sum)),
                         (where + ": sum " + std::to_string(stat->mean * n)).c_str());
                for (const double v : entry["first"].get<std::vector<double>>()) {
                    QVERIFY(v >= stat->min && v <= stat->max);
                }
                continue;
            }
            const std::string qscheme = entry["qscheme"].get<std::string>();
            QCOMPARE(found->qscheme, qscheme);
            auto close = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
            if (qscheme == "per_tensor_affine") {
                const double scale = entry["scale"].get<double>();
                const int64_t zeroPoint = entry["zero_point"].get<int64_t>();
                QVERIFY2(close(found->scale, scale), (where + ": scale").c_str());
                QCOMPARE(found->zeroPoint, zeroPoint);
                QCOMPARE(found->axis, int64_t(-1));
                QVERIFY(found->scales.empty() && found->zeroPoints.empty());
                // The statistics are of the dequantized values: scale * (q - zero point).
                const double sum =
                    scale * (entry["int_sum"].get<double>() - static_cast<double>(zeroPoint) * n);
                QVERIFY2(std::abs(stat->mean * n - sum) <= 1e-4 * (1 + std::abs(sum)),
                         (where + ": dequantized sum " + std::to_string(stat->mean * n) + " vs " +
                          std::to_string(sum))
                             .c_str());
            } else {
                QCOMPARE(qscheme, std::string("per_channel_affine"));
                const auto scales = entry["scales"].get<std::vector<double>>();
                QCOMPARE(found->scales.size(), scales.size());
                for (size_t i = 0; i < scales.size(); ++i) {
                    QVERIFY2(close(found->scales[i], scales[i]),
                             (where + ": scale " + std::to_string(i)).c_str());
                }
                QCOMPARE(found->zeroPoints, entry["zero_points"].get<std::vector<int64_t>>());
                QCOMPARE(found->axis, entry["axis"].get<int64_t>());
                QCOMPARE(static_cast<int64_t>(scales.size()), shape[size_t(found->axis)]);
            }
        }

        // Nothing packed that Python does not list, and the totals count the packed weights.
        size_t packedCount = 0;
        uint64_t ownTotal = 0;
        for (const auto& module : info->modules) {
            uint64_t own = 0;
            for (const auto& t : module.parameters) {
                packedCount += t.packed ? 1 : 0;
                uint64_t numel = 1;
                for (const auto d : t.shape) {
                    numel *= static_cast<uint64_t>(d);
                }
                own += numel;
            }
            QCOMPARE(module.parameterCount, own);
            ownTotal += own;
            if (packedNumel.count(module.path)) {
                QVERIFY(module.parameterCount >= packedNumel[module.path]);
                QVERIFY(module.parameterCount > 0);
                QVERIFY(module.totalParameterCount >= module.parameterCount);
            }
        }
        QCOMPARE(packedCount, entries.size());
        QCOMPARE(info->parameterCount, ownTotal);
        QVERIFY(info->parameterCount >= packedTotal);
        QVERIFY(info->parameterCount > 0);
        QCOMPARE(info->modules[0].totalParameterCount, info->parameterCount);
    }

    void structuredInputsReachTheModel_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("inputs");
        QTest::addColumn<QVector<double>>("preview");
        QTest::newRow("tuple") << QStringLiteral("inline:pair")
                               << QStringList{QStringLiteral("tuple:ones:2;ones:2")}
                               << QVector<double>{2, 2};
        QTest::newRow("dict") << QStringLiteral("inline:scores")
                              << QStringList{QStringLiteral("dict:b=ones:3;a=zeros:3")}
                              << QVector<double>{-2, -2, -2};
        QTest::newRow("list of an int tensor and a float one")
            << QStringLiteral("inline:tensors")
            << QStringList{QStringLiteral("list:ones:2:int64;ones:2")} << QVector<double>{2, 2};
        QTest::newRow("list from a file")
            << QStringLiteral("inline:tensors")
            << QStringList{QString::fromStdString("file:" + fixture("value_list1.pt"))}
            << QVector<double>{1, 2, 3, 4, 5, 6};
        QTest::newRow("list of dict of tuple, nested with []")
            << QStringLiteral("inline:nested")
            << QStringList{QStringLiteral("list:[dict:a=[tuple:ones:2;3];b=[tuple:ones:1;2]];"
                                          "[dict:c=[tuple:ones:4;1]]")}
            << QVector<double>{12};
    }

    void structuredInputsReachTheModel() {
        QFETCH(QString, model);
        QFETCH(QStringList, inputs);
        QFETCH(QVector<double>, preview);
        QTemporaryDir dir;
        Session session;
        QVERIFY(session.load(modelPath(model, dir)).ok());
        RunRequest request;
        for (const auto& spec : inputs) {
            const auto parsed = parseInputSpec(spec.toStdString());
            QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
            request.inputs.push_back(parsed.value());
        }
        request.warmup = 0;
        request.iterations = 1;
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QCOMPARE(result->output.preview, std::vector<double>(preview.begin(), preview.end()));
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
        request.inputs.push_back(parseInputSpec("random:256x512").value());
        request.iterations = 3;
        request.profile = true;
        // The times are wall-clock: on a busy machine the scheduler can stop the process in the
        // middle of any call and charge its wait to it. What is attributed where is checked on
        // every profiled run; the shares on the steadiest of up to three (the one whose linear
        // calls have the largest share: a pause can only lower it).
        std::optional<RunProfile> steadiest;
        for (int attempt = 0; attempt < 3; ++attempt) {
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
            QVERIFY(std::abs(byPath[""].totalMs - p.operatorMs) <
                    1e-9 * std::max(1.0, p.operatorMs));
            const auto share = [](const RunProfile& profile) {
                for (const auto& m : profile.modules) {
                    if (m.path == "heavy.linear") {
                        return m.totalMs / std::max(1e-9, profile.operatorMs);
                    }
                }
                return 0.0;
            };
            if (!steadiest || share(p) > share(*steadiest)) {
                steadiest = p;
            }
            if (share(p) > 0.9) {
                break;
            }
        }
        const RunProfile& p = *steadiest;
        std::map<std::string, ModuleTime> byPath;
        for (const auto& m : p.modules) {
            byPath[m.path] = m;
        }
        // Twenty 256x512x512 products against twenty tanh and one addition.
        QVERIFY2(byPath["heavy"].totalMs > 0.8 * p.operatorMs,
                 qPrintable(QString::number(byPath["heavy"].totalMs / p.operatorMs)));
        QVERIFY2(byPath["heavy.linear"].totalMs > 0.5 * p.operatorMs,
                 qPrintable(QString::number(byPath["heavy.linear"].totalMs / p.operatorMs)));
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

    // A permuted view's statistics are read where it lies (it covers one dense span once): the
    // same as its input's, which it permutes; a slice, which does not, is read from a copy.
    void statisticsOfViews() {
        QTemporaryDir dir;
        const std::string path =
            inlineModel(dir, "Views",
                        "def forward(self, x: Tensor) -> Tuple[Tensor, Tensor]:\n"
                        "    return x.permute(2, 0, 1).relu(), x[:, 1:3].contiguous()\n");
        Session session;
        QVERIFY(session.load(path).ok());
        ActivationRequest request;
        request.run.inputs.push_back(parseInputSpec("random:3x4x5").value());
        request.bins = 8;
        const auto report = session.activations(request);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const ActivationRecord* input = nullptr;
        const ActivationRecord* permuted = nullptr;
        const ActivationRecord* slice = nullptr;
        for (const ActivationRecord& r : report->records) {
            if (r.node < 0) {
                input = &r;
            } else if (r.kind == "aten::permute") {
                permuted = &r;
            } else if (r.kind == "aten::slice" && r.shape == std::vector<int64_t>{3, 2, 5}) {
                slice = &r;
            }
        }
        QVERIFY(input && permuted && slice);
        QCOMPARE(permuted->shape, (std::vector<int64_t>{5, 3, 4}));
        QCOMPARE(permuted->min, input->min);
        QCOMPARE(permuted->max, input->max);
        QVERIFY(std::abs(permuted->mean - input->mean) < 1e-6);
        QVERIFY(std::abs(permuted->stddev - input->stddev) < 1e-6);
        QCOMPARE(permuted->histogram, input->histogram);
        // The slice's own values: those of x[:, 1:3], taken again here.
        const at::Tensor x = torch::randn(
            {3, 4, 5}, at::detail::createCPUGenerator(parseInputSpec("random:3x4x5")->seed));
        const at::Tensor expected = x.slice(1, 1, 3);
        QCOMPARE(slice->min, expected.min().item<double>());
        QCOMPARE(slice->max, expected.max().item<double>());
        QVERIFY(std::abs(slice->mean - expected.mean().item<double>()) < 1e-6);
        QCOMPARE(slice->numel, int64_t(30));
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
        request.inputs.push_back(parseInputSpec("random:3x4:float32:7").value());
        request.previewValues = 12;
        const auto onCpu = session.run(request);
        QVERIFY(onCpu.ok());
        QVERIFY(!onCpu->synchronized); // nothing to wait for on the CPU
        request.device = "cuda";
        const auto result = session.run(request);
        QCOMPARE(torch::cuda::is_available(), cudaExpected());
        if (cudaExpected()) {
            QVERIFY(devices[1].available);
            QCOMPARE(devices[1].id, std::string("cuda:0"));
            QVERIFY2(!devices[1].name.empty() && devices[1].name != "CUDA device 0",
                     devices[1].name.c_str());
            QVERIFY(devices[1].memoryBytes > (uint64_t(1) << 28));
            QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
            QCOMPARE(result->device, std::string("cuda:0"));
            // The timing waited for the kernels, and the numbers equal the CPU's.
            QVERIFY(result->synchronized);
            QCOMPARE(result->output.preview.size(), onCpu->output.preview.size());
            for (size_t i = 0; i < onCpu->output.preview.size(); ++i) {
                QVERIFY(std::abs(result->output.preview[i] - onCpu->output.preview[i]) < 1e-5);
            }
            request.device = "cuda:" + std::to_string(torch::cuda::device_count());
            QVERIFY(!session.run(request).ok());
        } else {
            // This machine: the reason is said in words, and a run on CUDA is refused with it.
            QVERIFY(!devices[1].available);
            QVERIFY(!devices[1].reason.empty());
            // A CUDA build without a GPU says so, not that CUDA is missing from LibTorch.
            QVERIFY2(devices[1].reason.find(SCRIPTSCOPE_TEST_CUDA_BUILD
                                                ? "LibTorch has CUDA, but no CUDA device is usable"
                                                : "was built without CUDA") != std::string::npos,
                     devices[1].reason.c_str());
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

    void preprocessingEqualsPython() {
        // Each image option on three images (PNG, JPEG, grayscale), against the same
        // preprocessing done with OpenCV and NumPy in the fixture script: every value.
        const auto cases =
            nlohmann::json::parse(scriptscope::test::readText(fixture("preprocess.cases.json")));
        const auto expected = loadValue(fixture("preprocess.expected.pt")).toListRef().vec();
        QCOMPARE(expected.size(), cases.size());
        QVERIFY(cases.size() >= 12);
        for (size_t i = 0; i < cases.size(); ++i) {
            const std::string options = cases[i]["options"].get<std::string>();
            const std::string spec = "image:" + fixture(cases[i]["image"].get<std::string>()) +
                                     (options.empty() ? "" : "," + options);
            const auto parsed = parseInputSpec(spec);
            QVERIFY2(parsed.ok(), spec.c_str());
            const auto built = scriptscope::detail::buildInput(parsed.value());
            QVERIFY2(built.ok(), built.ok() ? spec.c_str() : built.error().message.c_str());
            const torch::Tensor ours = built->toTensor();
            const torch::Tensor python = expected[i].toTensor();
            const std::string what = options.empty() ? std::string("defaults") : options;
            QVERIFY2(ours.sizes() == python.sizes(), what.c_str());
            QVERIFY2(ours.scalar_type() == python.scalar_type(), what.c_str());
            const double difference =
                (ours.to(torch::kFloat64) - python.to(torch::kFloat64)).abs().max().item<double>();
            QVERIFY2(difference <= 1e-6,
                     (what + ": differs by " + std::to_string(difference)).c_str());
        }
    }

    void imagenetPresetRuns() {
        // The preset's size reaches the tensor: 1x3x224x224 from a 160x120 image.
        Session session;
        QVERIFY(session.load(fixture("decision_gate.pt")).ok());
        RunRequest request;
        request.inputs.push_back(
            parseInputSpec("image:" + fixture("warp_source.png") + ",preset=imagenet").value());
        request.warmup = 0;
        request.iterations = 1;
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QCOMPARE(result->output.shape, (std::vector<int64_t>{1, 3, 224, 224}));
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
        // Registers torchvision's operators in this process; keep this and the detector's tests
        // below the last tests using a Session.
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

    // The detector needs torchvision's operators too; the tests below load its library again
    // (dlopen of a loaded library is a no-op).

    void detectorMatchesPython_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("inputsFile");
        QTest::newRow("images as a list spec")
            << QString::fromStdString(detectorImages()) << QString();
        QTest::newRow("--inputs holding a list")
            << QString() << QString::fromStdString(fixture("ssdlite.inputs.pt"));
    }

    void detectorMatchesPython() {
        QFETCH(QString, spec);
        QFETCH(QString, inputsFile);
        Session session;
        QVERIFY(!session.loadOperatorLibrary(
            scriptscope::test::readText(fixture("torchvision_library.txt"))));
        LoadOptions options;
        options.includeCode = false;
        const auto info = session.load(fixture("ssdlite.pt"), options);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().message.c_str());
        QTemporaryDir dir;
        RunRequest request;
        if (!spec.isEmpty()) {
            const auto parsed = parseInputSpec(spec.toStdString());
            QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
            request.inputs.push_back(parsed.value());
        }
        request.inputsFile = inputsFile.toStdString();
        request.saveOutputsPath = dir.path().toStdString() + "/out.pt";
        request.warmup = 0;
        request.iterations = 1;
        request.previewValues = 5;
        const auto result = session.run(request);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        // (losses, detections): boxes, scores and labels of both images equal Python's.
        std::string why;
        QVERIFY2(sameValue(loadValue(request.saveOutputsPath),
                           loadValue(fixture("ssdlite.outputs.pt")), why, 1e-5),
                 why.c_str());
        const auto summary = readJson(fixture("ssdlite.outputs.json"));
        const OutputValue& out = result->output;
        QCOMPARE(out.kind, OutputValue::Kind::Tuple);
        QCOMPARE(out.children.size(), size_t(2));
        QCOMPARE(out.children[0].children.size(), summary["losses"].size());
        const auto& detections = out.children[1];
        QCOMPARE(detections.kind, OutputValue::Kind::List);
        QCOMPARE(detections.children.size(), summary["images"].size());
        for (size_t i = 0; i < detections.children.size(); ++i) {
            const auto& image = summary["images"][i];
            std::map<std::string, const OutputValue*> byKey;
            for (const auto& child : detections.children[i].children) {
                byKey[child.key] = &child;
            }
            QVERIFY(byKey.count("'boxes'") && byKey.count("'scores'") && byKey.count("'labels'"));
            const auto boxes = image["num_boxes"].get<int64_t>();
            QVERIFY(boxes > 0);
            QCOMPARE(byKey["'boxes'"]->shape, (std::vector<int64_t>{boxes, 4}));
            QCOMPARE(byKey["'labels'"]->dtype, std::string("int64"));
            const auto scores = image["scores"].get<std::vector<double>>();
            QCOMPARE(byKey["'scores'"]->preview.size(), scores.size());
            for (size_t k = 0; k < scores.size(); ++k) {
                QVERIFY(std::abs(byKey["'scores'"]->preview[k] - scores[k]) <= 1e-6);
            }
            QCOMPARE(byKey["'labels'"]->preview, image["labels"].get<std::vector<double>>());
        }
    }

    void structuredInputsAreChecked_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("inputs");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("List[Tensor] given an int element")
            << QStringLiteral("ssdlite") << QStringList{QStringLiteral("list:random:3x64x64;1")}
            << QStringLiteral("argument 'images' (1 of forward(images: List[Tensor], targets: "
                              "Optional[List[Dict[str, Tensor]]])) expects List[Tensor], but "
                              "images[1] is int, not Tensor");
        QTest::newRow("a dict value of the wrong type names its key")
            << QStringLiteral("ssdlite")
            << QStringList{QStringLiteral("list:random:3x64x64"),
                           QStringLiteral("list:[dict:boxes=ones:1x4;labels=3]")}
            << QStringLiteral("argument 'targets' (2 of forward(images: List[Tensor], targets: "
                              "Optional[List[Dict[str, Tensor]]])) expects "
                              "Optional[List[Dict[str, Tensor]]], but targets[0]['labels'] is "
                              "int, not Tensor");
        QTest::newRow("a list read from a file")
            << QStringLiteral("inline:tensors")
            << QStringList{QString::fromStdString("file:" + fixture("value_int_list.pt"))}
            << QStringLiteral("expects List[Tensor], but xs[0] is int, not Tensor");
        QTest::newRow("a dict read from a file")
            << QStringLiteral("inline:scores")
            << QStringList{QString::fromStdString("file:" + fixture("value_nested_dict.pt"))}
            << QStringLiteral("expects Dict[str, Tensor], but scores['images'] is List[Tensor], "
                              "not Tensor");
        QTest::newRow("a tuple too short")
            << QStringLiteral("inline:pair") << QStringList{QStringLiteral("tuple:ones:2")}
            << QStringLiteral("expects Tuple[Tensor, Tensor], but the input is Tuple[Tensor], not "
                              "Tuple[Tensor, Tensor] (1 element, it takes 2)");
        QTest::newRow("a tuple too long")
            << QStringLiteral("inline:pair")
            << QStringList{QStringLiteral("tuple:ones:2;ones:2;ones:2")}
            << QStringLiteral("(3 elements, it takes 2)");
        QTest::newRow("a tuple element of the wrong type")
            << QStringLiteral("inline:pair") << QStringList{QStringLiteral("tuple:ones:2;2.5")}
            << QStringLiteral("but pair[1] is float, not Tensor");
        QTest::newRow("deep inside")
            << QStringLiteral("inline:nested")
            << QStringList{QStringLiteral(
                   "list:[dict:a=[tuple:ones:2;3]];[dict:b=[tuple:ones:2;x]]")}
            << QStringLiteral("not an input spec");
        QTest::newRow("deep inside, a wrong type")
            << QStringLiteral("inline:nested")
            << QStringList{QStringLiteral(
                   "list:[dict:a=[tuple:ones:2;3]];[dict:b=[tuple:ones:2;1.5]]")}
            << QStringLiteral("but items[1]['b'][1] is float, not int");
    }

    void structuredInputsAreChecked() {
        QFETCH(QString, model);
        QFETCH(QStringList, inputs);
        QFETCH(QString, messagePart);
        QTemporaryDir dir;
        Session session;
        QVERIFY(!session.loadOperatorLibrary(
            scriptscope::test::readText(fixture("torchvision_library.txt"))));
        LoadOptions options;
        options.includeCode = false;
        QVERIFY(session.load(modelPath(model, dir), options).ok());
        RunRequest request;
        std::string message;
        for (const auto& spec : inputs) {
            const auto parsed = parseInputSpec(spec.toStdString());
            if (!parsed) {
                message = parsed.error().message; // a spec that does not parse: said as such
                break;
            }
            request.inputs.push_back(parsed.value());
        }
        if (message.empty()) {
            const auto result = session.run(request);
            QVERIFY(!result.ok());
            QCOMPARE(result.error().kind, ErrorKind::Input);
            message = result.error().message;
        }
        QVERIFY2(message.find(messagePart.toStdString()) != std::string::npos, message.c_str());
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
        QTest::newRow("sample") << QStringLiteral("sample") << true
                                << QStringLiteral("the archive's sample input");
        QTest::newRow("sample 1") << QStringLiteral("sample:1") << true
                                  << QStringLiteral("the archive's sample input 1");
        QTest::newRow("bad sample") << QStringLiteral("sample:x") << false << QString();
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

    void containerSpecs_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("expected"); // describe() when valid, part of the message if not
        auto good = [](const char* name, const char* text, const char* description) {
            QTest::newRow(name) << QString::fromLatin1(text) << true
                                << QString::fromLatin1(description);
        };
        auto bad = [](const char* name, const char* text, const char* messagePart) {
            QTest::newRow(name) << QString::fromLatin1(text) << false
                                << QString::fromLatin1(messagePart);
        };
        good("list", "list:random:2;ones:3", "[random 2 float32, ones 3 float32]");
        good("list of one", "list:3", "[int 3]");
        good("empty list", "list:", "[]");
        good("tuple", "tuple:ones:2;2.5;str:a", "(ones 2 float32, float 2.5, str 'a')");
        good("tuple of one", "tuple:true", "(true,)");
        good("empty tuple", "tuple:", "()");
        good("dict", "dict:a=ones:2;b=none", "{a: ones 2 float32, b: None}");
        good("empty dict", "dict:", "{}");
        good("nested list", "list:[list:random:2;random:3];random:4",
             "[[random 2 float32, random 3 float32], random 4 float32]");
        good("dict of nested", "dict:x=[tuple:1;[list:2;3]];y=ints:1,2",
             "{x: (int 1, [int 2, int 3]), y: int list of 2}");
        good("images with their own options", "list:image:a.png,batch=0;image:b.png,size=8x8",
             "[image a.png, image b.png]");
        good("list of dict of tuple with images",
             "list:[dict:img=image:a.png,batch=0;pair=[tuple:image:b.png;3]];none",
             "[{img: image a.png, pair: (image b.png, int 3)}, None]");
        good("brackets around a whole element", "list:[random:2];[3]", "[random 2 float32, int 3]");
        good("three deep", "list:[list:[list:1]]", "[[[int 1]]]");
        bad("unbalanced [", "list:[list:1;2", "'list:[list:1;2': a '[' without its ']'");
        bad("unbalanced ]", "list:1];2", "'list:1];2': a ']' without its '['");
        bad("unbalanced inside a dict", "dict:a=[tuple:1", "a '[' without its ']'");
        bad("dict entry without a key", "dict:=ones:2",
            "'dict:=ones:2': dict entries are KEY=SPEC, got '=ones:2'");
        bad("dict entry without =", "dict:a=1;ones:2", "dict entries are KEY=SPEC, got 'ones:2'");
        bad("empty element", "list:1;;2", "'list:1;;2': an empty element");
        bad("empty last element", "tuple:1;", "an empty element");
        bad("empty brackets", "list:[];1", "an empty element");
        bad("a bad element is named", "list:1;banana",
            "list element 1: 'banana' is not an input spec");
        bad("a bad dict entry is named", "dict:a=1;b=random:1xx3", "dict entry 'b': 'random:1xx3'");
        bad("nested names", "list:[tuple:1;zeros:2:complex]",
            "list element 0: tuple element 1: 'zeros:2:complex': unknown dtype 'complex'");
        bad("bad image option in an element", "list:image:a.png,size=big",
            "list element 0: image option 'size=big' is not valid");
        bad("no colon", "list", "'list' is not an input spec");
        bad("too deep",
            "list:[list:[list:[list:[list:[list:[list:[list:[list:[list:[list:[list:[list:[list:"
            "[list:[list:[list:[list:1]]]]]]]]]]]]]]]]]",
            "nested too deeply");
    }

    void containerSpecs() {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(QString, expected);
        const auto spec = parseInputSpec(text.toStdString());
        QVERIFY2(spec.ok() == valid,
                 spec.ok() ? spec->describe().c_str() : spec.error().message.c_str());
        if (valid) {
            QCOMPARE(QString::fromStdString(spec->describe()), expected);
        } else {
            QCOMPARE(spec.error().kind, ErrorKind::Input);
            QVERIFY2(spec.error().message.find(expected.toStdString()) != std::string::npos,
                     spec.error().message.c_str());
        }
    }

    void containerSpecStructure() {
        const auto spec = parseInputSpec(
            "list:[dict:img=image:a.png,batch=0,size=32x24;pair=[tuple:image:b.png,preset="
            "imagenet;ints:1,2]];[list:]");
        QVERIFY2(spec.ok(), spec.ok() ? "" : spec.error().message.c_str());
        QCOMPARE(spec->kind, InputSpec::Kind::List);
        QCOMPARE(spec->elements.size(), size_t(2));
        QVERIFY(spec->keys.empty());
        const InputSpec& dict = spec->elements[0];
        QCOMPARE(dict.kind, InputSpec::Kind::Dict);
        QCOMPARE(dict.keys, (std::vector<std::string>{"img", "pair"}));
        QCOMPARE(dict.elements.size(), size_t(2));
        const InputSpec& img = dict.elements[0];
        QCOMPARE(img.kind, InputSpec::Kind::Image);
        QCOMPARE(img.path, std::string("a.png"));
        QCOMPARE(img.image.batch, false);
        QCOMPARE(img.image.width, 32);
        QCOMPARE(img.image.height, 24);
        QVERIFY(img.image.mean.empty());
        const InputSpec& pair = dict.elements[1];
        QCOMPARE(pair.kind, InputSpec::Kind::Tuple);
        QCOMPARE(pair.elements.size(), size_t(2));
        // The preset belongs to its own element only.
        QCOMPARE(pair.elements[0].image.width, kImageNetSize);
        QCOMPARE(pair.elements[0].image.mean.size(), size_t(3));
        QCOMPARE(pair.elements[0].image.batch, true);
        QCOMPARE(pair.elements[1].intList, (std::vector<int64_t>{1, 2}));
        QCOMPARE(spec->elements[1].kind, InputSpec::Kind::List);
        QVERIFY(spec->elements[1].elements.empty());
    }

    void imagenetPresetSize_data() {
        QTest::addColumn<QString>("options");
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::addColumn<bool>("normalized");
        QTest::newRow("preset alone") << QStringLiteral(",preset=imagenet") << 224 << 224 << true;
        QTest::newRow("size after the preset")
            << QStringLiteral(",preset=imagenet,size=32x24") << 32 << 24 << true;
        QTest::newRow("size before the preset")
            << QStringLiteral(",size=32x24,preset=imagenet") << 32 << 24 << true;
        QTest::newRow("size alone") << QStringLiteral(",size=32x24") << 32 << 24 << false;
        QTest::newRow("neither") << QString() << 0 << 0 << false;
    }

    void imagenetPresetSize() {
        QFETCH(QString, options);
        QFETCH(int, width);
        QFETCH(int, height);
        QFETCH(bool, normalized);
        for (const std::string prefix : {"image:", "list:image:"}) { // alone and in a container
            const auto parsed = parseInputSpec(prefix + "a.png" + options.toStdString());
            QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
            const InputSpec& spec =
                parsed->kind == InputSpec::Kind::List ? parsed->elements.at(0) : *parsed;
            QCOMPARE(spec.image.width, width);
            QCOMPARE(spec.image.height, height);
            QCOMPARE(spec.image.mean.size(), normalized ? size_t(3) : size_t(0));
            QCOMPARE(spec.image.stddev.size(), normalized ? size_t(3) : size_t(0));
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
