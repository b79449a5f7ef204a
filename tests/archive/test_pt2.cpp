// torch.export archives (.pt2) read without LibTorch: archives that PyTorch 2.14 saved (both
// layouts, a dynamic batch dimension) against what Python sees in them, and hostile ones.
#include "test_support.h"

#include <pt2_reader.h>
#include <zip_reader.h>

#include "zip_fixtures.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace scriptscope;
using scriptscope::test::readText;
using namespace scriptscope::test;

namespace {

std::string savedBy(const std::string& name) {
    return std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/" + name;
}

// The notes as one line, for a failure's message (QVERIFY2 builds it even when the check passes).
std::string joined(const std::vector<std::string>& notes) {
    std::string out;
    for (const auto& note : notes) {
        out += (out.empty() ? "" : "; ") + note;
    }
    return out;
}

} // namespace

class TestPt2 : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    Pt2Archive readBytes(const std::string& bytes, const char* name) {
        const std::string path = dir_.filePath(QString::fromLatin1(name)).toStdString();
        std::ofstream(path, std::ios::binary) << bytes;
        return readPt2Archive(ZipReader(path));
    }

private Q_SLOTS:
    // What Python sees, from the reference the fixture script wrote with the same PyTorch: the
    // node list [(n.op, n.name, str(n.target), args)], the signature as printed, the range
    // constraints and every value's annotation.
    void matchesPython_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reference");
        QTest::addColumn<QString>("layout");
        QTest::newRow("2.8+ layout") << "exported_cnn.torch2.14.pt2"
                                     << "exported_cnn"
                                     << "pt2";
        QTest::newRow("dynamic batch") << "exported_dynamic.torch2.14.pt2"
                                       << "exported_dynamic"
                                       << "pt2";
        QTest::newRow("2.1-2.7 layout") << "exported_cnn_early.torch2.14.pt2"
                                        << "exported_cnn"
                                        << "serialized";
    }

    void matchesPython() {
        QFETCH(QString, file);
        QFETCH(QString, reference);
        QFETCH(QString, layout);
        const auto all =
            nlohmann::json::parse(readText(savedBy("exported.torch2.14.reference.json")));
        const auto& want = all[reference.toStdString()];
        const ZipReader zip(savedBy(file.toStdString()));
        QVERIFY(isPt2Archive(zip));
        const Pt2Archive archive = readPt2Archive(zip);
        QVERIFY2(archive.ok, archive.error.c_str());
        QVERIFY2(archive.layout.rfind(layout.toStdString(), 0) == 0, archive.layout.c_str());
        QCOMPARE(archive.schemaMajor, kPt2SchemaMajor);
        QCOMPARE(archive.schemaMinor, kPt2SchemaMinor);
        QVERIFY2(archive.notes.empty(), joined(archive.notes).c_str());
        QCOMPARE(archive.models.size(), size_t{1});
        const Pt2Model& model = archive.models.front();
        QVERIFY2(model.notes.empty(), joined(model.notes).c_str());
        // Nodes: the placeholders, the calls, the output.
        std::vector<std::vector<std::string>> nodes;
        for (const auto& input : model.graphInputs) {
            nodes.push_back({"placeholder", input, input});
        }
        for (const auto& node : model.nodes) {
            std::string target = node.target;
            if (target.rfind("torch.ops.", 0) == 0) {
                target = target.substr(10); // str(OpOverload) drops the module
            }
            std::vector<std::string> row{"call_function", node.name, target};
            for (const auto& argument : node.inputs) {
                if (!argument.keyword) {
                    row.push_back(argument.text);
                }
            }
            nodes.push_back(row);
        }
        std::string outputs = "[";
        for (size_t i = 0; i < model.graphOutputs.size(); ++i) {
            outputs += (i ? ", " : "") + model.graphOutputs[i];
        }
        nodes.push_back({"output", "output", "output", outputs + "]"});
        QCOMPARE(nodes.size(), want["nodes"].size());
        for (size_t i = 0; i < nodes.size(); ++i) {
            std::vector<std::string> python = {want["nodes"][i][0], want["nodes"][i][1],
                                               want["nodes"][i][2]};
            for (const auto& a : want["nodes"][i][3]) {
                python.push_back(a.get<std::string>());
            }
            QCOMPARE(nodes[i], python);
        }
        QCOMPARE(signatureLines(model), want["signature"].get<std::vector<std::string>>());
        const auto ranges = want["range_constraints"].get<std::map<std::string, std::string>>();
        const std::map<std::string, std::string> read(model.rangeConstraints.begin(),
                                                      model.rangeConstraints.end());
        QCOMPARE(read, ranges);
        for (const auto& [name, annotation] : want["values"].items()) {
            const auto found = model.tensors.find(name);
            QVERIFY2(found != model.tensors.end(), name.c_str());
            QCOMPARE(QString::fromStdString(found->second.text()),
                     QString::fromStdString(annotation.get<std::string>()));
        }
        // The module stacks: conv2d was called in the CNN's `conv`.
        bool placed = false;
        for (const auto& node : model.nodes) {
            if (node.name == "conv2d") {
                QCOMPARE(node.moduleStack.size(), size_t{2});
                QCOMPARE(node.moduleStack[1].path, std::string("conv"));
                QCOMPARE(node.moduleStack[1].type, std::string("torch.nn.modules.conv.Conv2d"));
                placed = true;
            }
        }
        QVERIFY(placed);
        if (layout == QLatin1String("pt2")) {
            // The weights: each in its record, with its shape.
            QCOMPARE(model.weights.size(), size_t{9});
            for (const auto& weight : model.weights) {
                QVERIFY2(!weight.record.empty(), weight.name.c_str());
                if (weight.name == "conv.weight") {
                    QCOMPARE(weight.meta.text(), std::string("f32[4, 3, 3, 3]"));
                    QVERIFY(weight.parameter);
                    QCOMPARE(weight.bytes, uint64_t{4 * 3 * 3 * 3 * 4});
                }
            }
            QVERIFY(model.sampleInputs);
        }
    }

    void pythonPrintsNumbersAndStrings() {
        // Through a node whose arguments are floats, strings, booleans and None.
        using nlohmann::json;
        const auto arg = [](const char* name, json value, int kind) {
            return json{{"name", name}, {"arg", std::move(value)}, {"kind", kind}};
        };
        const json node = {
            {"target", "t"},
            {"name", "n"},
            {"outputs", json::array()},
            {"inputs",
             {arg("a", {{"as_float", 1e-05}}, 1),
              arg("b", {{"as_floats", {0.1, 100000.0, 1e16, -0.0, 2.5}}}, 1),
              arg("c", {{"as_string", "it's"}}, 1), arg("d", {{"as_bools", {true, false}}}, 1),
              arg("e", {{"as_none", true}}, 2), arg("f", {{"as_scalar_type", 7}}, 2),
              arg("g", {{"as_device", {{"type", "cuda"}, {"index", 0}}}}, 2)}}};
        const std::string program =
            json{{"schema_version", {{"major", 8}, {"minor", 20}}},
                 {"graph_module",
                  {{"graph",
                    {{"inputs", json::array()},
                     {"outputs", json::array()},
                     {"tensor_values",
                      {{"v",
                        {{"dtype", 7},
                         {"sizes",
                          {{{"as_expr",
                             {{"expr_str", "Add(Integer(1), Mul(Integer(2), Symbol('s0', "
                                           "positive=True, integer=True)))"}}}},
                           {{"as_int", 3}}}}}}}},
                     {"nodes", {node}}}},
                   {"signature",
                    {{"input_specs", json::array()}, {"output_specs", json::array()}}}}}}
                .dump();
        const Pt2Archive archive = readBytes(
            storedZip({{"p/archive_format", "pt2"}, {"p/models/model.json", program}}), "n.pt2");
        QVERIFY(archive.ok);
        const auto& inputs = archive.models.at(0).nodes.at(0).inputs;
        std::vector<std::string> texts;
        for (const auto& input : inputs) {
            texts.push_back(input.text);
        }
        QCOMPARE(texts,
                 (std::vector<std::string>{"1e-05", "[0.1, 100000.0, 1e+16, -0.0, 2.5]", "\"it's\"",
                                           "[True, False]", "None", "torch.float32",
                                           "device(type='cuda', index=0)"}));
        QVERIFY(inputs[4].keyword && !inputs[3].keyword);
        // A symbolic size as str() prints sympy's expression.
        QCOMPARE(archive.models.at(0).tensors.at("v").text(), std::string("f32[2*s0 + 1, 3]"));
    }

    // Hostile archives: each is read as far as it goes, with a note that says why, and nothing
    // outside the archive is named as its content.
    void hostileArchives() {
        const auto good = recordsOf(savedBy("exported_cnn.torch2.14.pt2"));
        {
            auto records = good;
            std::string& model = recordNamed(records, "models/model.json");
            model.resize(model.size() / 2);
            const Pt2Archive archive = readBytes(storedZip(records), "truncated.pt2");
            QVERIFY(archive.ok);
            QVERIFY(archive.models.at(0).nodes.empty());
            QVERIFY(!archive.models.at(0).notes.empty());
            QVERIFY2(archive.models.at(0).notes.front().find("does not parse") != std::string::npos,
                     archive.models.at(0).notes.front().c_str());
        }
        {
            auto records = good;
            recordNamed(records, "models/model.json") = std::string(1000000, '[');
            const Pt2Archive archive = readBytes(storedZip(records), "bomb.pt2");
            QVERIFY(archive.ok);
            QVERIFY2(joined(archive.models.at(0).notes).find("nested more than") !=
                         std::string::npos,
                     joined(archive.models.at(0).notes).c_str());
        }
        {
            auto records = good;
            std::string& config = recordNamed(records, "model_weights_config.json");
            const auto at = config.find("weight_0");
            QVERIFY(at != std::string::npos);
            config.replace(at, 8, "../../../etc/passwd");
            const Pt2Archive archive = readBytes(storedZip(records), "escape.pt2");
            QVERIFY(archive.ok);
            const Pt2Model& model = archive.models.at(0);
            bool refused = false;
            for (const auto& weight : model.weights) {
                if (weight.name == "conv.weight") {
                    QVERIFY(weight.record.empty());
                    refused = true;
                }
            }
            QVERIFY(refused);
            QVERIFY(!model.notes.empty());
            QVERIFY2(joined(model.notes).find("not a file of the archive") != std::string::npos,
                     joined(model.notes).c_str());
            QCOMPARE(model.nodes.size(), size_t{5}); // the rest reads
        }
        {
            auto records = good;
            std::string& model = recordNamed(records, "models/model.json");
            const auto at = model.find("\"major\": 8");
            QVERIFY(at != std::string::npos);
            model.replace(at, 10, "\"major\": 99");
            const Pt2Archive archive = readBytes(storedZip(records), "future.pt2");
            QVERIFY(archive.ok);
            QCOMPARE(archive.schemaMajor, 99);
            QVERIFY(!archive.notes.empty());
            QVERIFY2(joined(archive.notes).find("newer than") != std::string::npos,
                     joined(archive.notes).c_str());
            QCOMPARE(archive.models.at(0).nodes.size(), size_t{5}); // shown as far as it reads
        }
        // Not a .pt2 at all.
        const Pt2Archive plain = readBytes(storedZip({{"a/b.txt", "x"}}), "plain.zip");
        QVERIFY(!plain.ok);
        QVERIFY(!isPt2Archive(ZipReader(dir_.filePath(QStringLiteral("plain.zip")).toStdString())));
    }
};

QTEST_GUILESS_MAIN(TestPt2)
#include "test_pt2.moc"
