// .pt2 archives run in C++: the model AOTInductor compiled into them, through LibTorch's package
// loader (PyTorch 2.x builds), against what the same package gives in Python; a plain exported
// program goes to the interpreter instead (test_interpreter).
#include "test_support.h"

#include <exported_runner.h>
#include <input_spec.h>
#include <session.h>

#include <nlohmann/json.hpp>

#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <string>

using namespace scriptscope;
using scriptscope::test::readText;

namespace {

std::string built(const std::string& name) {
    return std::string(SCRIPTSCOPE_EXPORTED_DIR) + "/" + name;
}

ExportedProgram openProgram(const std::string& path) {
    auto opened = ExportedProgram::open(path, probeArchive(path));
    if (!opened) {
        qFatal("%s: %s", path.c_str(), opened.error().message.c_str());
    }
    return std::move(opened).value();
}

// The package's output in C++ against Python's (NAME.outputs.json), within 1e-4.
void compareWithPython(const RunResult& result, const std::string& name) {
    const auto python = nlohmann::json::parse(readText(built(name + ".outputs.json")));
    QCOMPARE(result.output.shape, python["shape"].get<std::vector<int64_t>>());
    const auto values = python["values"].get<std::vector<double>>();
    QCOMPARE(result.output.values.size(), values.size());
    double worst = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        worst = std::max(worst, std::abs(double(result.output.values[i]) - values[i]));
    }
    QVERIFY2(worst < 1e-4, qPrintable(QStringLiteral("max |C++ - Python| = %1").arg(worst)));
    // Timing is compared side by side in one run by tests/benchmarks/bench_aoti.py, not here.
}

bool haveCompiledFixtures() {
    return ExportedRunner::supported() && std::string(SCRIPTSCOPE_EXPORTED_DIR).size() > 0 &&
           QFileInfo::exists(QString::fromStdString(built("resnet18_aoti.pt2")));
}

} // namespace

class TestCompiled : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Without a compiled model, the program's graph is interpreted (test_interpreter checks what
    // it computes).
    void plainProgramIsInterpreted() {
        const ExportedProgram program = openProgram(
            std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/exported/my_cell.pt2");
        QVERIFY(!program.compiled());
        ExportedRunner compiled;
        RunRequest request;
        request.inputs = {parseInputSpec("random:3x4").value(),
                          parseInputSpec("random:3x4").value()};
        const auto result = runExported(program, compiled, request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QVERIFY(compiled.opened());
        QVERIFY(compiled.interprets());
    }

    // ResNet-18 with its exported program and its compiled model in one archive: the tree and
    // graph from the program, the run from the compiled model, the numbers Python's.
    void runsTheCompiledModel() {
        if (!haveCompiledFixtures()) {
            QSKIP("needs a LibTorch with AOTInductor's package loader (PyTorch 2.x builds)");
        }
        const ExportedProgram program = openProgram(built("resnet18_aoti.pt2"));
        QVERIFY(program.hasProgram());
        QVERIFY(program.compiled());
        QCOMPARE(QString::fromStdString(program.compiled()->metadata.at("AOTI_DEVICE_KEY")),
                 QStringLiteral("cpu"));
        QVERIFY(program.info().findModule("layer4.1.conv2"));
        QVERIFY(program.graph("", "forward"));
        ExportedRunner compiled;
        RunRequest request;
        request.inputsFile = built("resnet18_aoti.inputs.pt");
        request.iterations = 20;
        request.valuesLimit = 1000;
        const auto result = runExported(program, compiled, request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QCOMPARE(result->samplesMs.size(), size_t{20});
        QCOMPARE(QString::fromStdString(result->deviceName), QStringLiteral("CPU"));
        compareWithPython(*result, "resnet18_aoti");
        // Compiled for the CPU, it runs only there.
        request.device = "cuda:0";
        const auto elsewhere = runExported(program, compiled, request);
        QVERIFY(!elsewhere);
        // Inputs that do not fit are the model's error, reported, and the model still runs.
        request.device = "cpu";
        request.inputsFile.clear();
        // The compiled code checks nothing itself: a smaller image would be read out of bounds.
        request.inputs = {parseInputSpec("random:1x3x2x2").value()};
        const auto wrong = runExported(program, compiled, request);
        QVERIFY(!wrong);
        QVERIFY2(wrong.error().message.find("1x3x2x2 float32") != std::string::npos &&
                     wrong.error().message.find("float32[1, 3, 224, 224]") != std::string::npos,
                 wrong.error().message.c_str());
        request.inputs = {parseInputSpec("random:1x3x224x224").value()};
        QVERIFY(runExported(program, compiled, request));
    }

    // "Is my export the same model?": the traced CNN and its export, saved by PyTorch 2.14 from
    // one module, are the same tree and the same tensors (both builds, nothing run).
    void sameModelAcrossFormats() {
        const std::string savedBy =
            std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/";
        Session session;
        QVERIFY(session.load(savedBy + "traced_cnn.torch2.14.pt"));
        const ExportedProgram program = openProgram(savedBy + "exported_cnn.torch2.14.pt2");
        const auto diff = session.diff(program);
        QVERIFY2(diff, diff ? "" : diff.error().message.c_str());
        for (const auto& m : diff->modules) {
            qWarning("module %s: %s / %s", m.path.c_str(), m.typeA.c_str(), m.typeB.c_str());
        }
        QVERIFY(diff->modules.empty());
        QVERIFY(diff->tensors.empty());
        QCOMPARE(diff->tensorsCompared, 9); // conv, bn (with its three buffers), fc
        QVERIFY(diff->identical);
        // Against another model: what differs is named.
        Session other;
        QVERIFY(other.load(savedBy + "gated_cell.torch2.14.pt"));
        const auto different = other.diff(program);
        QVERIFY(different);
        QVERIFY(!different->identical);
        QVERIFY(!different->modules.empty());
    }

    // The CLI's diff of a TorchScript archive and its compiled .pt2: exit 0 for the twin, 1 once
    // a parameter changed, the outputs compared within 1e-4 and the timings side by side.
    void diffRunsBothOnTheSameInputs() {
        if (!haveCompiledFixtures()) {
            QSKIP("needs a LibTorch with AOTInductor's package loader (PyTorch 2.x builds)");
        }
        const auto run = [](const QStringList& arguments) {
            QProcess cli;
            cli.start(QStringLiteral(SCRIPTSCOPE_CLI_PATH),
                      QStringList{QStringLiteral("diff")} + arguments +
                          QStringList{QStringLiteral("--iterations"), QStringLiteral("3"),
                                      QStringLiteral("--json")});
            cli.waitForFinished(300000);
            return std::make_pair(cli.exitCode(),
                                  nlohmann::json::parse(cli.readAllStandardOutput().toStdString()));
        };
        const QString package = QString::fromStdString(built("resnet18_aoti.pt2"));
        const auto diff = [&](const std::string& scripted) {
            return run({QString::fromStdString(built(scripted)), package,
                        QStringLiteral("--inputs"),
                        QString::fromStdString(built("resnet18_aoti.inputs.pt"))});
        };
        const auto [same, twin] = diff("resnet18_aoti.twin.pt");
        QCOMPARE(same, 0);
        QVERIFY(twin["same"].get<bool>());
        QVERIFY(twin["outputs_compared"].get<bool>());
        QVERIFY(twin["outputs_max_abs_diff"].get<double>() <= 1e-4);
        QCOMPARE(twin["tensors_compared"].get<int>(), 122);
        QCOMPARE(twin["p50_ms"].size(), size_t{2});
        const auto [differs, changed] = diff("resnet18_aoti.changed.pt");
        QCOMPARE(differs, 1);
        QCOMPARE(changed["tensors"].size(), size_t{1});
        QCOMPARE(changed["tensors"][0]["name"].get<std::string>(), std::string("fc.bias"));
        QVERIFY(changed["outputs_max_abs_diff"].get<double>() > 0.4);
        // No inputs given: both run on the archive's samples. The order given is kept: the .pt2
        // first is side A, and the bias it lacks the change of is still named.
        const auto [reversedCode, reversedJson] =
            run({package, QString::fromStdString(built("resnet18_aoti.changed.pt"))});
        QCOMPARE(reversedCode, 1);
        QCOMPARE(reversedJson["a"].get<std::string>(), package.toStdString());
        QVERIFY(reversedJson["outputs_compared"].get<bool>());
        QVERIFY(reversedJson["outputs_max_abs_diff"].get<double>() > 0.4);
        QCOMPARE(reversedJson["tensors"][0]["name"].get<std::string>(), std::string("fc.bias"));
    }

    // A .pt2 keeps the inputs it was exported with: a run given none takes them, a `sample` spec
    // one argument of them; the output is Python's on the same inputs.
    void runsOnTheArchivesSampleInputs() {
        if (!haveCompiledFixtures()) {
            QSKIP("needs a LibTorch with AOTInductor's package loader (PyTorch 2.x builds)");
        }
        const ExportedProgram program = openProgram(built("resnet18_aoti.pt2"));
        QVERIFY(program.info().modules[0].methods[0].sampleInputs);
        ExportedRunner compiled;
        RunRequest request;
        request.valuesLimit = 100;
        const auto all = runExported(program, compiled, request);
        QVERIFY2(all, all ? "" : all.error().message.c_str());
        QCOMPARE(all->inputDescriptions, std::vector<std::string>{"the archive's sample inputs"});
        compareWithPython(*all, "resnet18_aoti");
        request.inputs = {parseInputSpec("sample").value()};
        const auto one = runExported(program, compiled, request);
        QVERIFY2(one, one ? "" : one.error().message.c_str());
        compareWithPython(*one, "resnet18_aoti");
        request.inputs = {parseInputSpec("sample:3").value()};
        const auto missing = runExported(program, compiled, request);
        QVERIFY(!missing);
        QVERIFY2(missing.error().message.find("keeps 1 sample inputs") != std::string::npos,
                 missing.error().message.c_str());
        // The samples' arguments as a file a TorchScript twin takes.
        QTemporaryDir dir;
        const std::string file = dir.filePath(QStringLiteral("samples.pt")).toStdString();
        QVERIFY(!compiled.saveSampleInputs(file));
        Session twin;
        QVERIFY(twin.load(built("resnet18_aoti.twin.pt")));
        RunRequest scripted;
        scripted.inputsFile = file;
        scripted.valuesLimit = 100;
        const auto twinRun = twin.run(scripted);
        QVERIFY2(twinRun, twinRun ? "" : twinRun.error().message.c_str());
        compareWithPython(*twinRun, "resnet18_aoti");

        // A compiled model alone keeps none: the error says to give the inputs.
        const ExportedProgram alone = openProgram(built("cell_aoti.pt2"));
        QVERIFY(!alone.info().modules[0].methods[0].sampleInputs);
        ExportedRunner aloneCompiled;
        const auto none = runExported(alone, aloneCompiled, RunRequest{});
        QVERIFY(!none);
        QVERIFY2(none.error().message.find("keeps no sample inputs") != std::string::npos,
                 none.error().message.c_str());
    }

    // The compiled model alone (aoti_compile_and_package): no graph to show, the generated code
    // as its code, the inputs named as the wrapper names them; it runs.
    void compiledModelAlone() {
        if (!haveCompiledFixtures()) {
            QSKIP("needs a LibTorch with AOTInductor's package loader (PyTorch 2.x builds)");
        }
        const ExportedProgram program = openProgram(built("cell_aoti.pt2"));
        QVERIFY(!program.hasProgram());
        const ModelInfo& info = program.info();
        QCOMPARE(info.modules.size(), size_t{1});
        QCOMPARE(QString::fromStdString(info.modules[0].type),
                 QStringLiteral("AOTInductor package"));
        const MethodInfo& forward = info.modules[0].methods[0];
        QVERIFY2(forward.schema.rfind("forward(Tensor ", 0) == 0, forward.schema.c_str());
        QVERIFY(forward.schema.find(") -> Tensor") != std::string::npos);
        QVERIFY(forward.code.find("inputs_info_") != std::string::npos);
        const auto graph = program.graph("", "forward");
        QVERIFY(!graph);
        QVERIFY(graph.error().message.find("no graph") != std::string::npos);
        ExportedRunner compiled;
        RunRequest request;
        request.inputsFile = built("cell_aoti.inputs.pt");
        request.valuesLimit = 100;
        const auto result = runExported(program, compiled, request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        compareWithPython(*result, "cell_aoti");
    }
};

QTEST_GUILESS_MAIN(TestCompiled)
#include "test_compiled.moc"
