// torch.export programs shown as Python shows them, without LibTorch: print(exported_program),
// str(exported_program.graph) and the graph's node list, byte for byte against what PyTorch itself
// printed for the same archives (tests/fixtures/make_exported.py), and the module tree and diagram
// rebuilt from the nodes' module stacks.
#include "test_support.h"

#include <exported_program.h>
#include <graph_model.h>

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

using namespace scriptscope;
using scriptscope::test::readText;

namespace {

// The folders with an exported.reference.json: the small models committed with the sources (every
// build), and the full set the build made when its PyTorch has torch.export.
std::vector<std::string> referenceFolders() {
    std::vector<std::string> folders = {std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                        "/tests/fixtures/saved_by/exported"};
    const std::string built = SCRIPTSCOPE_EXPORTED_DIR;
    if (!built.empty()) {
        folders.push_back(built);
    }
    return folders;
}

ExportedProgram openProgram(const std::string& path) {
    ProbeResult probe;
    probe.path = path;
    probe.kind = FileKind::ExportedProgram;
    auto opened = ExportedProgram::open(path, probe);
    if (!opened) {
        qFatal("%s: %s", path.c_str(), opened.error().message.c_str());
    }
    return std::move(opened).value();
}

// Python's [text(a) for a in n.args]: values by name, lists and tuples in brackets, others repr().
std::vector<std::string> positional(const FxNode& node) {
    std::vector<std::string> args;
    for (const FxArgument& argument : node.args) {
        if (!argument.keyword.empty()) {
            continue;
        }
        std::string text = argument.repr;
        if (node.op == "output") { // a tuple: "(a,)" is [a] there
            text = "[" + text.substr(1, text.size() - 2) + "]";
            if (text.size() > 2 && text[text.size() - 2] == ',') {
                text.erase(text.size() - 2, 1);
            }
        }
        args.push_back(text);
    }
    return args;
}

} // namespace

class TestExported : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void printoutsAreFaithful_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("name");
        for (const std::string& folder : referenceFolders()) {
            const auto reference =
                nlohmann::json::parse(readText(folder + "/exported.reference.json"));
            for (const auto& [name, model] : reference["models"].items()) {
                QTest::newRow((folder.substr(folder.rfind('/') + 1) + ": " + name).c_str())
                    << QString::fromStdString(folder) << QString::fromStdString(name);
            }
        }
    }

    void printoutsAreFaithful() {
        QFETCH(QString, folder);
        QFETCH(QString, name);
        const auto reference = nlohmann::json::parse(readText(
            folder.toStdString() + "/exported.reference.json"))["models"][name.toStdString()];
        const ExportedProgram program =
            openProgram(folder.toStdString() + "/" + name.toStdString() + ".pt2");
        // print(exported_program) and str(exported_program.graph), byte for byte.
        QCOMPARE(QString::fromStdString(*program.code("", "forward")),
                 QString::fromStdString(reference["printout"].get<std::string>()));
        QCOMPARE(QString::fromStdString(*program.graph("", "forward")),
                 QString::fromStdString(reference["graph"].get<std::string>()));
        // [(n.op, n.name, str(n.target), args) for n in graph.nodes]
        const std::vector<FxNode> nodes = fxNodes(program.program());
        QCOMPARE(nodes.size(), reference["nodes"].size());
        for (size_t i = 0; i < nodes.size(); ++i) {
            const auto& want = reference["nodes"][i];
            QCOMPARE(QString::fromStdString(nodes[i].op), QString::fromStdString(want[0]));
            QCOMPARE(QString::fromStdString(nodes[i].name), QString::fromStdString(want[1]));
            QCOMPARE(QString::fromStdString(nodes[i].target), QString::fromStdString(want[2]));
            QCOMPARE(positional(nodes[i]), want[3].get<std::vector<std::string>>());
        }
        // Every module a node's stack names is in the tree, with its type.
        for (const auto& [path, type] : reference["modules"].items()) {
            const ModuleInfo* module = program.info().findModule(path);
            QVERIFY2(module, path.c_str());
            QCOMPARE(QString::fromStdString(module->type), QString::fromStdString(type));
        }
    }

    // The module tree carries the parameters and buffers under their modules, with their sizes.
    void moduleTreeHasTheStateDict() {
        const ExportedProgram program = openProgram(referenceFolders().front() + "/counter.pt2");
        const ModelInfo& info = program.info();
        QCOMPARE(info.modules.size(), size_t{2});
        QCOMPARE(QString::fromStdString(info.modules[0].type), QStringLiteral("__main__.Counter"));
        QCOMPARE(info.modules[0].buffers.size(), size_t{2});
        QCOMPARE(QString::fromStdString(info.modules[0].buffers[0].name), QStringLiteral("calls"));
        QCOMPARE(QString::fromStdString(info.modules[0].buffers[0].dtype), QStringLiteral("int64"));
        const ModuleInfo* linear = info.findModule("linear");
        QVERIFY(linear);
        QCOMPARE(linear->parameters.size(), size_t{2});
        QCOMPARE(linear->parameters[0].shape, (std::vector<int64_t>{2, 4}));
        QCOMPARE(linear->parameters[0].bytes, uint64_t{32});
        QCOMPARE(info.parameterCount, uint64_t{10});
        QCOMPARE(info.modules[0].totalParameterCount, uint64_t{10});
        QCOMPARE(info.bufferBytes, uint64_t{16});
        QCOMPARE(info.methodCount, uint64_t{1});
        QCOMPARE(QString::fromStdString(info.modules[0].methods[0].schema),
                 QStringLiteral("forward(Tensor x) -> Tensor"));
        // Exported as it is, the buffers are mutated in place; made functional, the mutated buffers
        // are the graph's outputs, and the signature says so.
        QVERIFY(program.code("", "forward")->find("torch.ops.aten.add_.Tensor(b_calls, 1)") !=
                std::string::npos);
        const ExportedProgram functional =
            openProgram(referenceFolders().front() + "/counter_functional.pt2");
        QVERIFY(functional.code("", "forward")->find("BUFFER_MUTATION target='calls'") !=
                std::string::npos);
        // Submodules have no methods of their own: asking for one says why.
        const auto code = program.code("linear", "forward");
        QVERIFY(!code);
        QVERIFY(code.error().message.find("inlined") != std::string::npos);
    }

    // The diagram: operators grouped by module, parameters folded into their users, shapes from
    // the archive on every edge, drawn without running anything.
    void diagramGroupsByModule() {
        const ExportedProgram program =
            openProgram(referenceFolders().front() + "/transformer_encoder.pt2");
        const auto graph = program.graphModel("", "forward");
        QVERIFY(graph);
        std::set<std::string> groups;
        for (const GraphGroup& group : graph->groups) {
            groups.insert(group.module);
            if (group.id > 0) {
                QVERIFY(group.parent >= 0 && group.parent < group.id);
                QCOMPARE(group.depth, graph->groups[static_cast<size_t>(group.parent)].depth + 1);
            }
        }
        QVERIFY(groups.count("layers.0"));
        QVERIFY(groups.count("layers.1.self_attn"));
        // The ModuleList is never called, so no node's stack names it: its layers sit at the root.
        QCOMPARE(QString::fromStdString(graph->groups[1].type),
                 QStringLiteral("TransformerEncoderLayer"));
        QCOMPARE(QString::fromStdString(graph->groups[1].label), QStringLiteral("layers.0"));
        QCOMPARE(graph->inputs.size(), size_t{1});
        QCOMPARE(QString::fromStdString(graph->inputs[0].type), QStringLiteral("f32[2, 5, 32]"));
        for (const GraphEdge& edge : graph->edges) {
            QVERIFY2(!edge.type.empty(), edge.value.c_str());
            QVERIFY(edge.from >= 0 || edge.fromInput >= 0);
        }
        bool foldedWeight = false;
        for (const GraphNode& node : graph->nodes) {
            QVERIFY(node.kind.find("::") != std::string::npos);
            for (const GraphAttribute& attribute : node.attributes) {
                foldedWeight =
                    foldedWeight || attribute.value == "64x32 float32 (layers.0.linear1.weight)";
            }
            QVERIFY(node.irLine > 1);
        }
        QVERIFY(foldedWeight);
        // Collapsed to the first level, the two layers are two boxes.
        const VisibleGraph collapsed = visibleGraph(*graph, 1);
        int boxes = 0;
        for (const VisibleItem& item : collapsed.items) {
            boxes += item.isGroup ? 1 : 0;
        }
        QVERIFY(boxes >= 2);
    }
};

QTEST_GUILESS_MAIN(TestExported)
#include "test_exported.moc"
