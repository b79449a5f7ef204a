// Loading and inspecting: the module tree, every method's .code and graph, and the inlined forward
// graph equal what PyTorch itself prints for the same archive (make_fixtures.py wrote that down).
#include "test_support.h"

#include <session.h>

#include <nlohmann/json.hpp>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::readText;

namespace {

const char* const kGoodFixtures[] = {
    "mycell_traced", "decision_gate", "mycell_scripted", "rnn_loop", "wrap_rnn", "compute",
    "rectifier", "rich", "extra_files", "structured",
    // Real modules (make_real_models.py): attention is where PyTorch versions differ most.
    "lstm", "transformer_encoder", "attention",
    // The bundled demo (saved by 1.13 in resources/), saved again by the build's PyTorch.
    "demo_resaved"};

} // namespace

class TestInspect : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void matchesPyTorch_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : kGoodFixtures) {
            QTest::newRow(name) << QString::fromLatin1(name);
        }
    }

    void matchesPyTorch() {
        QFETCH(QString, name);
        const std::string base = name.toStdString();
        const auto expected = nlohmann::json::parse(readText(fixture(base + ".expected.json")));
        Session session;
        LoadOptions options;
        options.includeInlinedGraph = true;
        const auto model = session.load(fixture(base + ".pt"), options);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().message.c_str());
        QCOMPARE(model->modules.size(), expected["modules"].size());
        size_t index = 0;
        for (const auto& want : expected["modules"]) {
            const ModuleInfo& got = model->modules[index++];
            QCOMPARE(got.path, want["path"].get<std::string>());
            QCOMPARE(got.type, want["type"].get<std::string>());
            std::vector<std::string> methods;
            for (const auto& m : got.methods) {
                methods.push_back(m.name);
            }
            QCOMPARE(methods, want["methods"].get<std::vector<std::string>>());
            auto compareTensors = [](const std::vector<TensorInfo>& tensors,
                                     const nlohmann::json& reference) {
                QCOMPARE(tensors.size(), reference.size());
                for (size_t i = 0; i < tensors.size(); ++i) {
                    QCOMPARE(tensors[i].name, reference[i]["name"].get<std::string>());
                    QCOMPARE(tensors[i].shape, reference[i]["shape"].get<std::vector<int64_t>>());
                    QCOMPARE(tensors[i].dtype, reference[i]["dtype"].get<std::string>());
                    QCOMPARE(tensors[i].bytes, reference[i]["bytes"].get<uint64_t>());
                }
            };
            compareTensors(got.parameters, want["parameters"]);
            compareTensors(got.buffers, want["buffers"]);
            for (const auto& method : got.methods) {
                const std::string key = got.path + ":" + method.name;
                QCOMPARE(method.code, expected["code"][key].get<std::string>());
                QCOMPARE(method.graph, expected["graph"][key].get<std::string>());
                QVERIFY2(method.schema.rfind(method.name + "(", 0) == 0, method.schema.c_str());
                // The Session answers the same text on request.
                QCOMPARE(session.code(got.path, method.name).value(), method.code);
                QCOMPARE(session.graph(got.path, method.name, false).value(), method.graph);
            }
        }
        QCOMPARE(test::withoutWarnIds(model->inlinedForwardGraph),
                 test::withoutWarnIds(expected["inlined"].get<std::string>()));
        QCOMPARE(session.graph("", "forward", true).value(), model->inlinedForwardGraph);
    }

    void inlinedGraphOnlyWhenAsked() {
        Session session;
        const auto model = session.load(fixture("wrap_rnn.pt"));
        QVERIFY(model.ok());
        QVERIFY(model->inlinedForwardGraph.empty());
        QVERIFY(session.graph("", "forward", true).value().find("prim::Loop") != std::string::npos);
    }

    void totals() {
        Session session;
        const auto model = session.load(fixture("rich.pt"));
        QVERIFY(model.ok());
        // Conv2d(3, 8, 3): 216 + 8, BatchNorm2d(8): 16, Linear(8, 10): 80 + 10.
        QCOMPARE(model->parameterCount, uint64_t(216 + 8 + 16 + 80 + 10));
        QCOMPARE(model->parameterBytes, model->parameterCount * 4);
        QCOMPARE(model->modules[0].totalParameterCount, model->parameterCount);
        const ModuleInfo* features = model->findModule("features");
        QVERIFY(features);
        QCOMPARE(features->totalParameterCount, uint64_t(216 + 8 + 16));
        QCOMPARE(features->children.size(), size_t(4));
        QCOMPARE(model->modules[0].children, (std::vector<std::string>{"features", "head"}));
        QVERIFY(model->bufferBytes >= 10 * 4 + 3 * 8);
    }

    void attributesWithTypesAndValues() {
        Session session;
        const auto model = session.load(fixture("rich.pt"));
        QVERIFY(model.ok());
        std::map<std::string, std::pair<std::string, std::string>> attributes;
        for (const auto& a : model->modules[0].attributes) {
            attributes[a.name] = {a.type, a.preview};
        }
        const std::map<std::string, std::pair<std::string, std::string>> expected = {
            {"scale", {"float", "0.5"}},
            {"label", {"str", "'rich model'"}},
            {"sizes", {"List[int]", "[1, 2, 3]"}},
            {"table", {"Dict[str, int]", "{'a': 1, 'b': 2}"}},
            {"enabled", {"bool", "True"}},
            {"pair", {"Tuple[int, float]", "(7, 2.5)"}},
            {"maybe", {"Optional[Tensor]", "None"}},
            {"training", {"bool", "False"}},
        };
        for (const auto& [name, value] : expected) {
            QVERIFY2(attributes.count(name), name.c_str());
            QCOMPARE(attributes[name], value);
        }
        // Parameters, buffers and submodules are listed as such, not as attributes.
        QVERIFY(!attributes.count("offset"));
        QVERIFY(!attributes.count("features"));
    }

    void schemas() {
        Session session;
        const auto model = session.load(fixture("rich.pt"));
        QVERIFY(model.ok());
        std::string describe;
        for (const auto& m : model->modules[0].methods) {
            if (m.name == "describe") {
                describe = m.schema;
            }
        }
        QCOMPARE(describe,
                 std::string("describe(__torch__.Rich self, str prefix, int repeat=1) -> str"));
    }

    void unknownModuleOrMethodIsNamed() {
        Session session;
        QVERIFY(session.load(fixture("wrap_rnn.pt")).ok());
        const auto noModule = session.code("loop.nope", "forward");
        QVERIFY(!noModule.ok());
        QCOMPARE(noModule.error().kind, ErrorKind::Input);
        QVERIFY(noModule.error().message.find("loop.cell") !=
                std::string::npos); // lists what exists
        const auto noMethod = session.graph("loop", "backward", false);
        QVERIFY(!noMethod.ok());
        QVERIFY(noMethod.error().message.find("has no method 'backward'; it has: forward") !=
                std::string::npos);
    }

    void badArchivesGiveErrors_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("messagePart");
        auto row = [](const char* file, ErrorKind kind, const std::string& part) {
            QTest::newRow(file) << QString::fromLatin1(file) << static_cast<int>(kind)
                                << QString::fromStdString(part);
        };
        row("missing.pt", ErrorKind::File, "no such file");
        row("", ErrorKind::File, "a directory");
        row("empty.pt", ErrorKind::Format, "empty file");
        row("text.pt", ErrorKind::Format, "text file");
        row("random.bin", ErrorKind::Format, "not a TorchScript archive");
        row("plain.zip", ErrorKind::Format, "not a PyTorch file");
        row("two_folders.zip", ErrorKind::Format, "not in one top folder");
        row("state_dict.pt", ErrorKind::Format, "state_dict");
        row("eager_model.pt", ErrorKind::Format, "pickled eager model");
        row("legacy.pt", ErrorKind::Format, "legacy");
        row("model.onnx", ErrorKind::Format, "ONNX");
        row("mobile_flatbuffer.ptl", ErrorKind::Format, "flatbuffer");
        row("truncated.pt", ErrorKind::Format, "truncated");
        row("version_newer.pt", ErrorKind::Version, "reads versions up to");
        row("version_text.pt", ErrorKind::Format, "'three', not a number");
        row("version_overflow.pt", ErrorKind::Format, "not a number");
        row("missing_op.pt", ErrorKind::MissingOperator, "scriptscope_missing::negate");
        row("newer_aten_op.pt", ErrorKind::NeedsNewerLibTorch,
            "aten::neg_from_the_future, which LibTorch " + libtorchVersion() +
                " does not have; it was probably saved by a newer PyTorch");
        row("no_code.pt", ErrorKind::Format, "(code/__torch__.py) is missing");
        row("no_data.pt", ErrorKind::Format, "data/0");
        row("bad_code.pt", ErrorKind::Format, "code/__torch__.py, line");
        row("truncated_pickle.pt", ErrorKind::Format, "data.pkl is damaged");
        row("short_tensor_data.pt", ErrorKind::Format, "holds 4 bytes");
        row("stack_underflow.pt", ErrorKind::Format, "data.pkl is damaged");
    }

    void badArchivesGiveErrors() {
        QFETCH(QString, file);
        QFETCH(int, kind);
        QFETCH(QString, messagePart);
        Session session;
        const auto model = session.load(fixture(file.toStdString()));
        QVERIFY(!model.ok());
        QVERIFY2(model.error().message.find(messagePart.toStdString()) != std::string::npos,
                 model.error().message.c_str());
        QCOMPARE(toString(model.error().kind), toString(static_cast<ErrorKind>(kind)));
        QVERIFY(model.error().message.find('\n') == std::string::npos); // one line
        QVERIFY(!session.loaded());
    }

    void missingOperatorNamesIt() {
        Session session;
        const auto model = session.load(fixture("missing_op.pt"));
        QVERIFY(!model.ok());
        QCOMPARE(model.error().operatorName, std::string("scriptscope_missing::negate"));
        QVERIFY(model.error().message.find("--op-library") != std::string::npos);
    }

    void missingTorchvisionOperatorSaysWhereItIs() {
        Session session;
        const auto model = session.load(fixture("torchvision_nms.pt"));
        QVERIFY(!model.ok());
        QCOMPARE(model.error().kind, ErrorKind::MissingOperator);
        QCOMPARE(model.error().operatorName, std::string("torchvision::nms"));
        // The library is installed here (python3-torchvision): the message gives its path.
        QVERIFY2(model.error().message.find(readText(fixture("torchvision_library.txt"))) !=
                     std::string::npos,
                 model.error().message.c_str());
    }

    void operatorLibraryErrors() {
        Session session;
        const auto error = session.loadOperatorLibrary(fixture("no-such-library.so"));
        QVERIFY(error.has_value());
        QCOMPARE(error->kind, ErrorKind::OperatorLibrary);
        QVERIFY(error->message.find("no-such-library.so") != std::string::npos);
        QCOMPARE(error->library, fixture("no-such-library.so"));
    }
};

QTEST_GUILESS_MAIN(TestInspect)
#include "test_inspect.moc"
