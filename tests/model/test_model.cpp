// One model interface for every format: the registry opens each file with the format that claims
// it, probes it once, and says what a model lacks, in the words its refusals use. Committed files
// and the build's own fixtures: both builds run it.
#include "test_support.h"

#include <input_spec.h>
#include <model.h>
#include <session.h>

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

using namespace scriptscope;
using scriptscope::test::fixture;

namespace {

std::string savedBy(const std::string& name) {
    return std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/" + name;
}

std::unique_ptr<Model> open(const std::string& path, const OpenOptions& options = {}) {
    auto opened = openModel(path, options);
    if (!opened) {
        qFatal("%s: %s", path.c_str(), opened.error().message.c_str());
    }
    return std::move(opened).value();
}

// Where a row of formats.json says its file is.
std::string tablePath(const nlohmann::json& row) {
    const std::string in = row.at("in").get<std::string>();
    const std::string file = row.at("file").get<std::string>();
    if (in == "source") {
        return std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/" + file;
    }
    if (in == "exported") {
        return std::string(SCRIPTSCOPE_EXPORTED_DIR) + "/" + file;
    }
    if (in == "none") {
        return "/no/such/folder/" + file;
    }
    return fixture(file);
}

} // namespace

class TestModel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A TorchScript archive: LibTorch's session behind the interface, lacking only what is an
    // ExecuTorch program's (runs recorded elsewhere), and refusing an ETDump with why.
    void opensTorchScript() {
        const auto model = open(fixture("rich.pt"));
        QCOMPARE(model->info().format, std::string("TorchScript"));
        QCOMPARE(model->info().lacking.size(), size_t{1});
        QVERIFY(!model->info().lacks(Capability::RecordedProfile).empty());
        RunRequest recorded;
        recorded.etdumpPath = "/tmp/run.etdp";
        const auto refused = model->run(recorded);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find(model->info().lacks(Capability::RecordedProfile)) !=
                     std::string::npos,
                 refused.error().message.c_str());
        QVERIFY(!model->info().modules.empty());
        QVERIFY(!openable(probeArchive(fixture("rich.pt"))));
        const auto code = model->code("", "forward");
        QVERIFY2(code, code ? "" : code.error().message.c_str());
        QVERIFY(code->find("def forward") != std::string::npos);
        const auto graph = model->graphModel("", "forward", true);
        QVERIFY2(graph, graph ? "" : graph.error().message.c_str());
        QVERIFY(!graph->nodes.empty());
        RunRequest request;
        request.inputs = {*parseInputSpec("random:2x3x16x16")};
        const auto run = model->run(request);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        // Nothing beyond the probe to say for info.
        QVERIFY(fileDetails(probeArchive(fixture("rich.pt"))).key.empty());
    }

    // A plain torch.export program: read, drawn and run (its graph interpreted) in either build,
    // and what it cannot do is said once, in ModelInfo, and again by each call it lacks.
    void opensAnExportedProgramAndSaysWhatItLacks() {
        const std::string path = savedBy("exported_cnn.torch2.14.pt2");
        const auto model = open(path);
        const ModelInfo& info = model->info();
        QCOMPARE(info.format, std::string("torch.export"));
        QVERIFY(info.lacks(Capability::Run).empty());
        QVERIFY(info.lacks(Capability::Profile).empty());
        QVERIFY(info.lacks(Capability::Activations).empty()); // the interpreter records them
        for (const Capability c : {Capability::Statistics, Capability::Optimize}) {
            QVERIFY2(!info.lacks(c).empty(), toString(c));
        }
        QVERIFY(info.lacks(Capability::Diff).empty()); // against its TorchScript twin
        QVERIFY(model->graph("", "forward", false));
        QVERIFY(model->graphModel("", "forward", false));
        const auto run = model->run(RunRequest{}); // on the archive's sample inputs
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        const auto activations = model->activations(ActivationRequest{});
        QVERIFY2(activations, activations ? "" : activations.error().message.c_str());
        const auto statistics = model->tensorStatistics("");
        QVERIFY(!statistics);
        QVERIFY(statistics.error().message.find(info.lacks(Capability::Statistics)) !=
                std::string::npos);
        QVERIFY(!model->optimize(OptimizeRequest{}));
        QVERIFY(!model->saveSampleInputs(QDir::tempPath().toStdString() + "/samples.pt"));
        // info: a .pt2 opens, so it is no error; its details are the format's.
        const ProbeResult probe = probeArchive(path);
        QVERIFY(!openable(probe));
        const FileDetails details = fileDetails(probe);
        QCOMPARE(details.key, std::string("exported_program"));
        QVERIFY(details.text.find("operator calls") != std::string::npos);
        QVERIFY(details.json.find("\"models\"") != std::string::npos);
    }

    // An ExecuTorch program: its methods with their delegates as the tree, its instructions as
    // code and graph text, its calls drawn with each delegate as a group, and its memory plan.
    void opensAnExecuTorchProgram() {
        const std::string path =
            std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/pte/cnn_xnnpack.pte";
        const auto model = open(path);
        const ModelInfo& info = model->info();
        QCOMPARE(info.format, std::string("ExecuTorch"));
        QCOMPARE(info.probe.kind, FileKind::ExecuTorch);
        std::vector<std::string> paths;
        for (const ModuleInfo& module : info.modules) {
            paths.push_back(module.path);
        }
        // With the ETRecord beside it, the model's own modules too (where its profile's times
        // and a comparison's modules are).
        QCOMPARE(paths, (std::vector<std::string>{"", "forward", "forward.delegate_0",
                                                  "forward.delegate_1", "forward.conv1",
                                                  "forward.conv2", "forward.fc"}));
        QCOMPARE(info.modules[2].type, std::string("XnnpackBackend"));
        QCOMPARE(info.modules[4].type, std::string("torch.nn.modules.conv.Conv2d"));
        QCOMPARE(info.modules[1].children,
                 (std::vector<std::string>{"forward.delegate_0", "forward.delegate_1",
                                           "forward.conv1", "forward.conv2", "forward.fc"}));
        QCOMPARE(info.methodCount, uint64_t(1));
#ifdef SCRIPTSCOPE_HAS_EXECUTORCH
        // This build links ExecuTorch's runtime: the program runs on the input its plan gives.
        QVERIFY(info.lacks(Capability::Run).empty());
        const auto run = model->run(RunRequest{});
        QVERIFY2(run, run ? "" : run.error().message.c_str());
#else
        // It says what runs it instead.
        QVERIFY(info.lacks(Capability::Run).find("load_program") != std::string::npos);
        QVERIFY(!model->run(RunRequest{}));
#endif

        const auto graph = model->graphModel("", "forward", false);
        QVERIFY2(graph, graph ? "" : graph.error().message.c_str());
        std::vector<std::string> kinds;
        for (const GraphNode& node : graph->nodes) {
            kinds.push_back(node.kind);
        }
        QCOMPARE(kinds, (std::vector<std::string>{"delegate::XnnpackBackend", "aten::mean.out",
                                                  "delegate::XnnpackBackend"}));
        QCOMPARE(graph->groups.size(), size_t(3)); // the method, and each delegate
        QCOMPARE(graph->groups[1].type, std::string("XnnpackBackend"));
        QCOMPARE(graph->nodes[0].group, 1);
        QCOMPARE(graph->nodes[2].group, 2);
        // input -> delegate 0 -> mean -> delegate 1 -> output, each edge a value.
        std::vector<std::string> edges;
        for (const GraphEdge& edge : graph->edges) {
            edges.push_back(std::to_string(edge.from) + ">" + std::to_string(edge.to) + " " +
                            edge.value + " " + edge.type);
        }
        QCOMPARE(edges,
                 (std::vector<std::string>{"-1>0 v0 f32[1, 3, 32, 32]", "0>1 v1 f32[1, 16, 15, 15]",
                                           "1>2 v2 f32[1, 16]", "2>-1 v8 f32[1, 10]"}));
        // mean's dims and keepdim are its attributes, read through the int list's values.
        QCOMPARE(graph->nodes[1].attributes.at(0).value, std::string("[2, 3]"));

        const MemoryPlan& memory = info.modules[0].methods.at(0).memoryPlan;
        QCOMPARE(memory.bufferBytes, (std::vector<int64_t>{0, 26752}));
        QCOMPARE(memory.steps.size(), size_t(3));
        QCOMPARE(memory.blocks.size(), size_t(4));
        for (const MemoryBlock& block : memory.blocks) {
            QVERIFY(block.offset + block.bytes <= 26752u);
            QVERIFY(block.first <= block.last);
        }
        QCOMPARE(memory.blocks.front().first, -1); // the input, there before the first call
        QCOMPARE(memory.blocks.back().last, 3);    // the output, kept to the end

        const auto portable = open(std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                   "/tests/fixtures/saved_by/pte/cnn_portable.pte");
        const auto code = portable->code("forward", "forward");
        QVERIFY(code);
        QVERIFY2(code->find("    v7 = aten::convolution.out(v6, v0, v1, [1, 1], [1, 1], [1, 1], "
                            "False, [0, 0], 1, out=v7)\n") != std::string::npos,
                 code->c_str());
        QCOMPARE(portable->graphModel("", "forward", false)->nodes.size(), size_t(7));
        QCOMPARE(portable->info().modules.at(1).parameters.size(), size_t(6));
        const FileDetails details = fileDetails(probeArchive(path));
        QCOMPARE(details.key, std::string("executorch"));
        QVERIFY(details.text.find("delegate 1: XnnpackBackend") != std::string::npos);
    }

    // The table of formats (formats.json, as Netron's test/models.json): every fixture opens as
    // the format it names, lacking what it says and running where it says, or is refused with its
    // error's kind and words.
    void theFormatTable_data() {
        QTest::addColumn<int>("row");
        const auto table = nlohmann::json::parse(scriptscope::test::readText(
            std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/model/formats.json"));
        const auto& files = table.at("files");
        for (size_t i = 0; i < files.size(); ++i) {
            QTest::newRow(files[i].at("file").get<std::string>().c_str()) << int(i);
        }
    }

    void theFormatTable() {
        QFETCH(int, row);
        const auto table = nlohmann::json::parse(scriptscope::test::readText(
            std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/model/formats.json"));
        const nlohmann::json& entry = table.at("files").at(static_cast<size_t>(row));
        if (entry.value("needs", "") == "libtorch2" &&
            std::atoi(SCRIPTSCOPE_TEST_LIBTORCH_VERSION) < 2) {
            QSKIP("made and run by the PyTorch 2.x build only");
        }
        const std::string path = tablePath(entry);
        auto opened = openModel(path);
        if (entry.contains("error")) {
            QVERIFY2(!opened, path.c_str());
            QCOMPARE(std::string(toString(opened.error().kind)),
                     entry.at("error").get<std::string>());
            QVERIFY2(opened.error().message.find(entry.at("message").get<std::string>()) !=
                         std::string::npos,
                     opened.error().message.c_str());
            QVERIFY(openable(probeArchive(path)));
            return;
        }
        QVERIFY2(opened, opened ? "" : opened.error().message.c_str());
        Model& model = **opened;
        QCOMPARE(model.info().format, entry.at("format").get<std::string>());
        std::set<std::string> lacks;
        for (const auto& [capability, why] : model.info().lacking) {
            QVERIFY2(!why.empty(), toString(capability));
            lacks.insert(toString(capability));
        }
        auto expected = entry.at("lacks").get<std::set<std::string>>();
#ifndef SCRIPTSCOPE_HAS_EXECUTORCH
        // What only a build that links ExecuTorch's runtime has.
        for (const std::string& capability :
             entry.value("lacks_without_executorch", std::vector<std::string>{})) {
            expected.insert(capability);
        }
#endif
        QCOMPARE(lacks, expected);
        QVERIFY(!openable(probeArchive(path)));
        if (entry.contains("runs")) {
            RunRequest request;
            const std::string spec = entry.at("runs").get<std::string>();
            if (spec != "sample") { // none given: the archive's sample inputs
                request.inputs = {parseInputSpec(spec).value()};
            }
            const auto run = model.run(request);
            QVERIFY2(run, run ? "" : run.error().message.c_str());
            QVERIFY(!run->samplesMs.empty());
        } else if (!model.info().lacks(Capability::Run).empty()) {
            const auto run = model.run(RunRequest{});
            QVERIFY(!run);
            QVERIFY(run.error().message.find(model.info().lacks(Capability::Run)) !=
                    std::string::npos);
        }
    }

    // The image size the Run workspace starts from is the engine's, read from the first input's
    // recorded shape: a batch of one- or three-channel images of a static size, and nothing else.
    void anImageInputIsAStaticBatchOfImages() {
        MethodInfo method;
        method.setImageInput({1, 3, 224, 160});
        QCOMPARE(method.imageWidth, 160);
        QCOMPARE(method.imageHeight, 224);
        method.setImageInput({-1, 1, 28, 28}); // a symbolic batch is still a batch of images
        QCOMPARE(method.imageWidth, 28);
        const std::vector<std::vector<int64_t>> others = {
            {1, 4, 8, 8}, {1, 3, -1, 8}, {1, 3, 8, 0}, {3, 8, 8}, {1, 3, 8, 8, 1}, {}};
        for (const std::vector<int64_t>& sizes : others) {
            method.setImageInput(sizes);
            QCOMPARE(method.imageWidth, 0);
            QCOMPARE(method.imageHeight, 0);
        }
        const auto exported = open(savedBy("exported_cnn.torch2.14.pt2")); // x: f32[1, 3, 8, 8]
        const MethodInfo& forward = exported->info().modules.front().methods.front();
        QCOMPARE(forward.imageWidth, 8);
        QCOMPARE(forward.imageHeight, 8);
        const auto program =
            open(std::string(SCRIPTSCOPE_SOURCE_DIR) +
                 "/tests/fixtures/saved_by/pte/cnn_xnnpack.pte"); // f32[1, 3, 32, 32]
        const MethodInfo& programForward = program->info().modules.front().methods.front();
        QCOMPARE(programForward.imageWidth, 32);
        QCOMPARE(programForward.imageHeight, 32);
        const auto scripted = open(savedBy("attention.torch1.13.pt")); // takes any shape
        for (const ModuleInfo& module : scripted->info().modules) {
            for (const MethodInfo& m : module.methods) {
                QCOMPARE(m.imageWidth, 0);
            }
        }
    }

    // Capability names are the protocol's and the JSON's, both ways.
    void capabilityNamesRoundTrip() {
        for (int i = 0; i < static_cast<int>(Capability::Count); ++i) {
            const auto c = static_cast<Capability>(i);
            QVERIFY(*toString(c));
            QCOMPARE(capabilityFromString(toString(c)), c);
        }
        QCOMPARE(capabilityFromString("teleport"), Capability::Count);
    }

    // What no format claims is refused with what the probe found, of the error kind it is.
    void refusesWhatNoFormatOpens() {
        const auto missing = openModel("/no/such/model.pt");
        QVERIFY(!missing);
        QCOMPARE(missing.error().kind, ErrorKind::File);
        const auto stateDict = openModel(fixture("state_dict.pt"));
        QVERIFY(!stateDict);
        QCOMPARE(stateDict.error().kind, ErrorKind::Format);
        QVERIFY(stateDict.error().message.find("state_dict.pt") != std::string::npos);
        QVERIFY(openable(probeArchive(fixture("state_dict.pt"))));
        QTemporaryDir dir;
        const std::string text = dir.filePath(QStringLiteral("notes.pt")).toStdString();
        std::ofstream(text) << "not a model\n";
        const auto notModel = openModel(text);
        QVERIFY(!notModel);
        QCOMPARE(notModel.error().kind, ErrorKind::Format);
    }

    // Two models of one format compare in full; two exported programs are not compared yet, and
    // the error names both formats.
    void diffsThroughTheRegistry() {
        const auto a = open(fixture("rich.pt"), {});
        const auto b = open(fixture("rich.pt"), {});
        const auto same = diffModels(*a, *b);
        QVERIFY2(same, same ? "" : same.error().message.c_str());
        QVERIFY(same->identical);
        QVERIFY(!same->treeAndTensorsOnly);
        QCOMPARE(same->formatA, std::string("TorchScript"));
        const auto x = open(savedBy("exported_cnn.torch2.14.pt2"));
        const auto y = open(savedBy("exported_dynamic.torch2.14.pt2"));
        const auto exported = diffModels(*x, *y);
        QVERIFY(!exported);
        QCOMPARE(exported.error().kind, ErrorKind::Input);
        QVERIFY(exported.error().message.find("torch.export") != std::string::npos);
    }

    // A model that fails to open leaves nothing behind: the next one opens as if first.
    void aFailedOpenDoesNotSpoilTheNext() {
        QVERIFY(!openModel(fixture("state_dict.pt")));
        const auto model = open(savedBy("exported_cnn.torch2.14.pt2"));
        QCOMPARE(model->info().format, std::string("torch.export"));
        const auto scripted = open(fixture("rich.pt"));
        QVERIFY(scripted->info().lacks(Capability::Run).empty());
        QVERIFY(scripted->info().lacks(Capability::Statistics).empty());
    }
};

QTEST_GUILESS_MAIN(TestModel)
#include "test_model.moc"
