// scriptscope-cli as a user runs it: outputs equal PyTorch's printouts, exit codes and one-line
// messages for every failure, isolation from crashes, hangs and runaway memory, and warps equal to
// cv2.warpPerspective's.
#include "test_support.h"

#include <file_formats.h>
#include <process_limits.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using scriptscope::test::cudaExpected;
using scriptscope::test::fixture;
using scriptscope::test::readText;

namespace {

using Result = scriptscope::test::ProgramResult;
using scriptscope::test::cli;
using scriptscope::test::fx;
using scriptscope::test::runProgram;

double maxPixelDifference(const std::string& a, const std::string& b) {
    const cv::Mat x = cv::imread(a, cv::IMREAD_UNCHANGED);
    const cv::Mat y = cv::imread(b, cv::IMREAD_UNCHANGED);
    if (x.empty() || y.empty() || x.size() != y.size() || x.type() != y.type()) {
        return -1;
    }
    return cv::norm(x, y, cv::NORM_INF);
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // CTest runs this executable twice, each time with half of the functions
    // (SCRIPTSCOPE_TEST_PART=1: those before crashIsIsolated, 2: the rest), so that the halves run
    // side by side: each function starts the CLI many times, which is slow under the sanitizers.
    // Without the variable every function runs.
    void init() {
        const QByteArray part = qgetenv("SCRIPTSCOPE_TEST_PART");
        if (part.isEmpty()) {
            return;
        }
        const QByteArray name = QByteArray(QTest::currentTestFunction()) + "()";
        const bool firstHalf = metaObject()->indexOfMethod(name.constData()) <
                               metaObject()->indexOfMethod("crashIsIsolated()");
        if (firstHalf != (part == "1")) {
            QSKIP("run by the other half of test_cli (SCRIPTSCOPE_TEST_PART)");
        }
    }

    void versionAndHelp() {
        const auto version = cli({QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.rfind("scriptscope-cli ", 0) == 0);
        QVERIFY(version.out.find("\nLibTorch ") != std::string::npos);
        QVERIFY(version.out.find("\nOpenCV ") != std::string::npos);
        QVERIFY(version.out.find("\nQt 6.") != std::string::npos);
        // A bug report says whether CUDA was compiled in, and why it is not usable here.
        const bool cudaBuild = SCRIPTSCOPE_TEST_CUDA_BUILD;
        QVERIFY2(version.out.find(cudaBuild ? "\nCUDA: compiled in (CUDA "
                                            : "\nCUDA: not compiled in") != std::string::npos,
                 version.out.c_str());
        if (cudaBuild) {
            QVERIFY2(version.out.find("; available: ") != std::string::npos ||
                         version.out.find("; not available: ") != std::string::npos,
                     version.out.c_str());
        }
        const auto help = cli({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.find("Exit status") != std::string::npos);
    }

    void usageErrors_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::newRow("nothing") << QStringList{};
        QTest::newRow("unknown command")
            << QStringList{QStringLiteral("explode"), fx("compute.pt")};
        QTest::newRow("unknown option")
            << QStringList{QStringLiteral("tree"), fx("compute.pt"), QStringLiteral("--colour")};
        QTest::newRow("no file") << QStringList{QStringLiteral("tree")};
        QTest::newRow("two files")
            << QStringList{QStringLiteral("tree"), fx("compute.pt"), fx("rich.pt")};
        QTest::newRow("bad input spec")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--input"),
                           QStringLiteral("banana")};
        QTest::newRow("bad container spec: unbalanced [")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--input"),
                           QStringLiteral("list:[ones:2;ones:3")};
        QTest::newRow("bad container spec: dict entry without a key")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--input"),
                           QStringLiteral("dict:ones:2")};
        QTest::newRow("bad container spec: empty element")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--input"),
                           QStringLiteral("tuple:ones:2;;ones:3")};
        QTest::newRow("bad container spec: bad element")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--input"),
                           QStringLiteral("list:ones:2;banana")};
        QTest::newRow("bad iterations")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--iters"),
                           QStringLiteral("0")};
        QTest::newRow("value missing")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--device")};
        QTest::newRow("warp without output")
            << QStringList{QStringLiteral("warp"), fx("warp_source.png"),
                           QStringLiteral("--corners"), QStringLiteral("0,0,1,0,1,1,0,1")};
        QTest::newRow("warp with both") << QStringList{
            QStringLiteral("warp"),      fx("warp_source.png"),      QStringLiteral("-o"),
            QStringLiteral("x.png"),     QStringLiteral("--matrix"), fx("homography.xml"),
            QStringLiteral("--corners"), QStringLiteral("1")};
        QTest::newRow("warp with neither")
            << QStringList{QStringLiteral("warp"), fx("warp_source.png"), QStringLiteral("-o"),
                           QStringLiteral("x.png")};
        QTest::newRow("warp with bad corners") << QStringList{
            QStringLiteral("warp"),  fx("warp_source.png"),       QStringLiteral("-o"),
            QStringLiteral("x.png"), QStringLiteral("--corners"), QStringLiteral("1,2,3")};
        QTest::newRow("warp with bad size") << QStringList{
            QStringLiteral("warp"),   fx("warp_source.png"),      QStringLiteral("-o"),
            QStringLiteral("x.png"),  QStringLiteral("--matrix"), fx("homography.xml"),
            QStringLiteral("--size"), QStringLiteral("640")};
        QTest::newRow("bad border value") << QStringList{
            QStringLiteral("warp"),           fx("warp_source.png"),      QStringLiteral("-o"),
            QStringLiteral("x.png"),          QStringLiteral("--matrix"), fx("homography.xml"),
            QStringLiteral("--border-value"), QStringLiteral("grey")};
        QTest::newRow("no command") << QStringList{QStringLiteral("--verbose")};
        QTest::newRow("unknown option before the command")
            << QStringList{QStringLiteral("--colour"), QStringLiteral("tree"), fx("compute.pt")};
        QTest::newRow("option of another command")
            << QStringList{QStringLiteral("code"), fx("compute.pt"), QStringLiteral("--json")};
        QTest::newRow("devices with a file")
            << QStringList{QStringLiteral("devices"), fx("compute.pt")};
        QTest::newRow("negative warmup")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--warmup"),
                           QStringLiteral("-1")};
        QTest::newRow("fractional iterations")
            << QStringList{QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--iterations"),
                           QStringLiteral("2.5")};
        QTest::newRow("timeout not positive")
            << QStringList{QStringLiteral("tree"), fx("compute.pt"), QStringLiteral("--timeout"),
                           QStringLiteral("0")};
        QTest::newRow("timeout not a number")
            << QStringList{QStringLiteral("--timeout"), QStringLiteral("soon"),
                           QStringLiteral("tree"), fx("compute.pt")};
        QTest::newRow("memory limit too low")
            << QStringList{QStringLiteral("tree"), fx("compute.pt"),
                           QStringLiteral("--memory-limit"), QStringLiteral("10")};
        QTest::newRow("double dash")
            << QStringList{QStringLiteral("tree"), QStringLiteral("--"), fx("compute.pt")};
    }

    void usageErrors() {
        QFETCH(QStringList, arguments);
        const auto r = cli(arguments);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(!r.err.empty());
        QVERIFY(r.out.empty());
        if (arguments.isEmpty()) { // the whole help, as for --help but on stderr
            QVERIFY2(r.err.find("Exit status") != std::string::npos, r.err.c_str());
            return;
        }
        // One line: "scriptscope-cli: MESSAGE (see scriptscope-cli [COMMAND] --help)".
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        QVERIFY2(r.err.rfind("scriptscope-cli: ", 0) == 0, r.err.c_str());
        QVERIFY2(r.err.find("--help)\n") != std::string::npos, r.err.c_str());
    }

    void commandHelp_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QStringList>("names"); // options, and the file it takes
        QTest::newRow("info") << QStringLiteral("info")
                              << QStringList{QStringLiteral("MODEL"), QStringLiteral("--show-code"),
                                             QStringLiteral("--json")};
        QTest::newRow("tree") << QStringLiteral("tree")
                              << QStringList{QStringLiteral("MODEL"), QStringLiteral("--json")};
        QTest::newRow("code") << QStringLiteral("code")
                              << QStringList{QStringLiteral("MODEL"), QStringLiteral("--module"),
                                             QStringLiteral("--method")};
        QTest::newRow("graph") << QStringLiteral("graph")
                               << QStringList{QStringLiteral("MODEL"), QStringLiteral("--module"),
                                              QStringLiteral("--method"),
                                              QStringLiteral("--inlined")};
        QTest::newRow("run") << QStringLiteral("run")
                             << QStringList{QStringLiteral("MODEL"),
                                            QStringLiteral("--method"),
                                            QStringLiteral("--input"),
                                            QStringLiteral("--inputs"),
                                            QStringLiteral("--device"),
                                            QStringLiteral("--warmup"),
                                            QStringLiteral("--iters,--iterations"),
                                            QStringLiteral("--json"),
                                            QStringLiteral("--save-outputs"),
                                            QStringLiteral("--profile"),
                                            QStringLiteral("list:SPEC;SPEC"),
                                            QStringLiteral("tuple:SPEC;SPEC"),
                                            QStringLiteral("dict:KEY=SPEC;KEY=SPEC")};
        QTest::newRow("warp") << QStringLiteral("warp")
                              << QStringList{QStringLiteral("IMAGE"),
                                             QStringLiteral("--matrix"),
                                             QStringLiteral("--matrix-node"),
                                             QStringLiteral("--corners"),
                                             QStringLiteral("-o,--output"),
                                             QStringLiteral("--size"),
                                             QStringLiteral("--interp,--interpolation"),
                                             QStringLiteral("--border"),
                                             QStringLiteral("--border-value"),
                                             QStringLiteral("--inverse")};
        QTest::newRow("devices") << QStringLiteral("devices")
                                 << QStringList{QStringLiteral("--json")};
    }

    void commandHelp() {
        QFETCH(QString, command);
        QFETCH(QStringList, names);
        const auto r = cli({command, QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.empty(), r.err.c_str());
        const std::string usageLine = "Usage: scriptscope-cli " + command.toStdString();
        QVERIFY2(r.out.find(usageLine) != std::string::npos, r.out.c_str());
        // The global options are named too, since they may follow the command.
        names << QStringLiteral("--op-library") << QStringLiteral("--timeout")
              << QStringLiteral("--memory-limit") << QStringLiteral("--in-process")
              << QStringLiteral("--verbose");
        for (const QString& name : names) {
            QVERIFY2(r.out.find(name.toStdString()) != std::string::npos,
                     (name.toStdString() + " not in:\n" + r.out).c_str());
        }
        QVERIFY(r.out.find("--supervised") == std::string::npos); // for the parent's child only
        // A command that takes any model names every format's files, from the formats' one list;
        // optimize's passes are TorchScript's.
        if (command == QLatin1String("tree") || command == QLatin1String("run") ||
            command == QLatin1String("activations") || command == QLatin1String("info")) {
            QVERIFY2(r.out.find(scriptscope::modelFileKinds()) != std::string::npos, r.out.c_str());
        }
        // The top-level help lists the command.
        const auto top = cli({QStringLiteral("--help")});
        QVERIFY(top.out.find("  " + command.toStdString() + " ") != std::string::npos);
    }

    void globalOptionsBeforeOrAfterTheCommand() {
        const QStringList missingLibrary{QStringLiteral("--op-library"), fx("libnope.so")};
        for (const QStringList& arguments :
             {missingLibrary + QStringList{QStringLiteral("tree"), fx("rich.pt")},
              QStringList{QStringLiteral("tree"), fx("rich.pt")} + missingLibrary}) {
            const auto r = cli(arguments);
            QCOMPARE(r.exitCode, 6); // an operator library's own status
            QVERIFY2(r.err.find("cannot load the operator library") != std::string::npos,
                     r.err.c_str());
        }
        const auto before = cli({QStringLiteral("--in-process"), QStringLiteral("--verbose"),
                                 QStringLiteral("--timeout"), QStringLiteral("60"),
                                 QStringLiteral("tree"), fx("compute.pt")});
        QVERIFY2(before.exitCode == 0, before.err.c_str());
        QVERIFY(before.out.find("__torch__.PlaceholderModule") != std::string::npos);
        const auto version = cli({QStringLiteral("tree"), QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.rfind("scriptscope-cli ", 0) == 0);
    }

    void treeJsonMatchesPyTorch_data() {
        QTest::addColumn<QString>("name");
        for (const char* name :
             {"mycell_traced", "mycell_scripted", "wrap_rnn", "compute", "rich", "extra_files"}) {
            QTest::newRow(name) << QString::fromLatin1(name);
        }
    }

    void treeJsonMatchesPyTorch() {
        QFETCH(QString, name);
        const auto r = cli({QStringLiteral("tree"),
                            QString::fromStdString(fixture(name.toStdString() + ".pt")),
                            QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const auto got = nlohmann::json::parse(r.out)["modules"];
        const auto want = nlohmann::json::parse(
            readText(fixture(name.toStdString() + ".expected.json")))["modules"];
        QCOMPARE(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
            for (const char* key : {"path", "type", "parameters", "buffers", "methods"}) {
                QVERIFY2(
                    got[i][key] == want[i][key],
                    (std::string(key) + ": " + got[i][key].dump() + " vs " + want[i][key].dump())
                        .c_str());
            }
            // Attributes: the names in PyTorch's order, and the values as Python prints them
            // (rich has floats, strings, lists, a dict, a tuple and an Optional).
            const auto& gotAttributes = got[i]["attributes"];
            const auto& wantAttributes = want[i]["attributes"];
            QCOMPARE(gotAttributes.size(), wantAttributes.size());
            for (size_t a = 0; a < gotAttributes.size(); ++a) {
                QCOMPARE(gotAttributes[a]["name"].get<std::string>(),
                         wantAttributes[a]["name"].get<std::string>());
                if (!wantAttributes[a]["value"].is_null()) {
                    QCOMPARE(gotAttributes[a]["value"].get<std::string>(),
                             wantAttributes[a]["value"].get<std::string>());
                }
            }
        }
        if (name == QStringLiteral("rich")) {
            QVERIFY(want[0]["attributes"].size() >= 9); // the fixture does have attributes
        }
    }

    void codeAndGraphMatchPyTorch_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("module");
        QTest::addColumn<QString>("method");
        QTest::newRow("compute forward")
            << QStringLiteral("compute") << QString() << QStringLiteral("forward");
        QTest::newRow("wrap_rnn loop.cell")
            << QStringLiteral("wrap_rnn") << QStringLiteral("loop.cell")
            << QStringLiteral("forward");
        QTest::newRow("wrap_rnn loop.cell.dg")
            << QStringLiteral("wrap_rnn") << QStringLiteral("loop.cell.dg")
            << QStringLiteral("forward");
        QTest::newRow("rich describe")
            << QStringLiteral("rich") << QString() << QStringLiteral("describe");
        QTest::newRow("rich features.0 _conv_forward")
            << QStringLiteral("rich") << QStringLiteral("features.0")
            << QStringLiteral("_conv_forward");
    }

    void codeAndGraphMatchPyTorch() {
        QFETCH(QString, name);
        QFETCH(QString, module);
        QFETCH(QString, method);
        const QString model = QString::fromStdString(fixture(name.toStdString() + ".pt"));
        const auto expected =
            nlohmann::json::parse(readText(fixture(name.toStdString() + ".expected.json")));
        const std::string key = module.toStdString() + ":" + method.toStdString();
        QStringList selection;
        if (!module.isEmpty()) {
            selection << QStringLiteral("--module") << module;
        }
        selection << QStringLiteral("--method") << method;
        const auto code = cli(QStringList{QStringLiteral("code"), model} + selection);
        QCOMPARE(code.exitCode, 0);
        QCOMPARE(code.out, expected["code"][key].get<std::string>() + "\n"); // as Python's print()
        const auto graph = cli(QStringList{QStringLiteral("graph"), model} + selection);
        QCOMPARE(graph.exitCode, 0);
        QCOMPARE(graph.out, expected["graph"][key].get<std::string>() + "\n");
    }

    void inlinedGraph() {
        const auto r =
            cli({QStringLiteral("graph"), fx("wrap_rnn.pt"), QStringLiteral("--inlined")});
        QCOMPARE(r.exitCode, 0);
        const auto expected = nlohmann::json::parse(readText(fixture("wrap_rnn.expected.json")));
        QCOMPARE(r.out, expected["inlined"].get<std::string>() + "\n");
    }

    void info() {
        const auto r = cli({QStringLiteral("info"), fx("compute.pt")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.find("my_ops::warp_perspective") != std::string::npos);
        const auto j =
            cli({QStringLiteral("info"), fx("extra_files.pt"), QStringLiteral("--json")});
        QCOMPARE(j.exitCode, 0);
        const auto json = nlohmann::json::parse(j.out);
        QCOMPARE(json["kind"].get<std::string>(), std::string("torchscript"));
        QCOMPARE(json["extra_files"]["notes.txt"].get<std::string>(),
                 std::string("Exported for the ScriptScope tests.\n"));
        QCOMPARE(json["version"].get<int>(), 3);
        // A torch.export archive: described from its graph, without running anything; the other
        // commands open it, so it is no error (exit 0).
        const QString pt2 = QStringLiteral(SCRIPTSCOPE_SOURCE_DIR
                                           "/tests/fixtures/saved_by/exported_cnn.torch2.14.pt2");
        const auto e = cli({QStringLiteral("info"), pt2});
        QCOMPARE(e.exitCode, 0);
        QVERIFY2(e.out.find("    p_conv_weight: PARAMETER target='conv.weight'") !=
                         std::string::npos &&
                     e.out.find("Model       model (PyTorch 2.14") != std::string::npos,
                 e.out.c_str());
        const auto ej = cli({QStringLiteral("info"), pt2, QStringLiteral("--json")});
        const auto exported = nlohmann::json::parse(ej.out)["exported_program"];
        QCOMPARE(exported["schema"].get<std::string>(), std::string("8.20"));
        QCOMPARE(exported["models"][0]["nodes"].size(), size_t{5});
        QCOMPARE(exported["models"][0]["nodes"][0]["target"].get<std::string>(),
                 std::string("torch.ops.aten.conv2d.default"));
        QCOMPARE(exported["models"][0]["nodes"][0]["module"].get<std::string>(),
                 std::string("conv"));
    }

    void badFilesExitOneWithOneLine_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("messagePart");
        const char* const cases[][2] = {
            {"missing.pt", "no such file"},
            {"empty.pt", "empty file"},
            {"text.pt", "text file"},
            {"random.bin", "not a TorchScript archive"},
            {"plain.zip", "not a PyTorch file"},
            {"two_folders.zip", "one top folder"},
            {"state_dict.pt", "state_dict"},
            {"eager_model.pt", "eager model"},
            {"legacy.pt", "legacy"},
            {"model.onnx", "ONNX"},
            {"mobile_flatbuffer.ptl", "flatbuffer"},
            {"truncated.pt", "truncated"},
            {"version_newer.pt", "newer"},
            {"version_text.pt", "not a number"},
            {"version_overflow.pt", "not a number"},
            {"missing_op.pt", "scriptscope_missing::negate"},
            {"newer_aten_op.pt", "aten::neg_from_the_future"},
            // Damage the probe finds before LibTorch would read past a record (or crash):
            {"no_data.pt", "data/0 is missing"},
            {"no_code.pt", "the code of __torch__.MyCell (code/__torch__.py) is missing"},
            {"short_tensor_data.pt", "holds 4 bytes"},
            {"truncated_pickle.pt", "data.pkl is damaged"},
            {"stack_underflow.pt", "data.pkl is damaged"},
        };
        for (const auto& c : cases) {
            for (const char* command : {"info", "tree"}) {
                QTest::newRow((std::string(command) + " " + c[0]).c_str())
                    << QString::fromLatin1(command) << QString::fromLatin1(c[0])
                    << QString::fromLatin1(c[1]);
            }
        }
    }

    void damagedContentIsFoundByLoading_data() {
        // info reads structure only; what is wrong inside these shows when the archive is loaded.
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("bad_code") << QStringLiteral("bad_code.pt")
                                  << QStringLiteral("code/__torch__.py, line");
    }

    void damagedContentIsFoundByLoading() {
        QFETCH(QString, file);
        QFETCH(QString, messagePart);
        const QString path = QString::fromStdString(fixture(file.toStdString()));
        const auto info = cli({QStringLiteral("info"), path});
        QCOMPARE(info.exitCode, 0);
        QVERIFY(info.out.find("torchscript") != std::string::npos);
        const auto tree = cli({QStringLiteral("tree"), path});
        QCOMPARE(tree.exitCode, 1);
        QVERIFY2(tree.err.find(messagePart.toStdString()) != std::string::npos, tree.err.c_str());
        QCOMPARE(std::count(tree.err.begin(), tree.err.end(), '\n'), 1L);
    }

    void badFilesExitOneWithOneLine() {
        QFETCH(QString, command);
        QFETCH(QString, file);
        QFETCH(QString, messagePart);
        const auto r = cli({command, QString::fromStdString(fixture(file.toStdString()))});
        // An archive that calls an operator from a newer PyTorch has an exit status of its own.
        const bool newer =
            command == QStringLiteral("tree") && file == QStringLiteral("newer_aten_op.pt");
        QCOMPARE(r.exitCode, newer ? 5 : 1);
        const std::string& text = command == QStringLiteral("info") ? r.out : r.err;
        QVERIFY2(text.find(messagePart.toStdString()) != std::string::npos, text.c_str());
        if (command == QStringLiteral("tree")) {
            QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
            QVERIFY(r.out.empty());
        }
    }

    void crashIsIsolated() {
        // crash.pt overflows the stack of LibTorch 1.13's TorchScript parser (SIGSEGV).
        const auto r = cli({QStringLiteral("tree"), fx("crash.pt")});
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.find("crashed the worker process with SIGSEGV") != std::string::npos,
                 r.err.c_str());
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
    }

    void hangIsStopped() {
        // hang.pt's __setstate__ never returns.
        const auto r = cli({QStringLiteral("tree"), fx("hang.pt"), QStringLiteral("--timeout"),
                            QStringLiteral("3")},
                           60000);
        QCOMPARE(r.exitCode, 4);
        QVERIFY2(r.err.find("timed out after 3 s") != std::string::npos, r.err.c_str());
    }

    void memoryLimit() {
        // hog.pt's __setstate__ allocates 64 MiB at a time without end.
        const auto r = cli({QStringLiteral("tree"), fx("hog.pt"), QStringLiteral("--memory-limit"),
                            QStringLiteral("1500")},
                           120000);
        if (scriptscope::memoryLimitKind() == scriptscope::MemoryLimitKind::Sanitizer) {
            // The asan preset: the limit is an RSS limit in ASAN_OPTIONS, and AddressSanitizer
            // ends the process when `new` fails instead of throwing, so the cause is not named.
            QVERIFY(r.exitCode != 0);
            QVERIFY(!r.err.empty());
            qInfo("sanitizer build: the memory limit ended the child (%s)", r.err.c_str());
            return;
        }
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.find(scriptscope::addressSpaceLimitSupported()
                                ? "(memory limit 1.5 GiB; --memory-limit MB changes it)"
                                : "hit the memory limit of 1.5 GiB") != std::string::npos,
                 r.err.c_str());
    }

    void inProcessWorks() {
        const auto r =
            cli({QStringLiteral("tree"), fx("compute.pt"), QStringLiteral("--in-process")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.find("__torch__.PlaceholderModule") != std::string::npos);
    }

    void runJsonAndSavedOutputs() {
        QTemporaryDir dir;
        const QString saved = dir.path() + QStringLiteral("/out.pt");
        const auto r = cli({QStringLiteral("run"), fx("compute.pt"), QStringLiteral("--inputs"),
                            fx("compute.inputs.pt"), QStringLiteral("--warmup"),
                            QStringLiteral("2"), QStringLiteral("--iters"), QStringLiteral("7"),
                            QStringLiteral("--json"), QStringLiteral("--save-outputs"), saved});
        QCOMPARE(r.exitCode, 0);
        const auto json = nlohmann::json::parse(r.out);
        QCOMPARE(json["samples_ms"].size(), size_t(7));
        QCOMPARE(json["warmup"].get<int>(), 2);
        QVERIFY(json["output"]["shape"] == nlohmann::json::parse("[8, 5]"));
        const auto& stats = json["stats_ms"];
        QVERIFY(stats["min"].get<double>() <= stats["p50"].get<double>());
        QVERIFY(stats["p50"].get<double>() <= stats["p90"].get<double>());
        QVERIFY(stats["p99"].get<double>() <= stats["max"].get<double>());
        // Python's torch.load reads what --save-outputs wrote, and it equals Python's own result.
        const auto check = runProgram(
            QStringLiteral(SCRIPTSCOPE_PYTHON),
            {QStringLiteral("-c"),
             QStringLiteral(
                 "import sys, torch; a = torch.load(sys.argv[1]); b = torch.load(sys.argv[2]); "
                 "print(tuple(a.shape), torch.allclose(a, b))"),
             saved, fx("compute.outputs.pt")});
        QCOMPARE(check.exitCode, 0);
        QCOMPARE(check.out, std::string("(8, 5) True\n"));
    }

    void detectorRunSavesOutputsPythonReads() {
        // A scripted torchvision SSDlite on two images given as a list: what --save-outputs wrote
        // equals what the same archive returned in Python, box for box.
        QTemporaryDir dir;
        const QString saved = dir.path() + QStringLiteral("/detections.pt");
        const QString spec = QStringLiteral("list:image:") + fx("det_a.png") +
                             QStringLiteral(",batch=0;image:") + fx("det_b.png") +
                             QStringLiteral(",batch=0");
        const QString library =
            QString::fromStdString(readText(fixture("torchvision_library.txt")));
        const auto r = cli({QStringLiteral("run"), fx("ssdlite.pt"), QStringLiteral("--op-library"),
                            library, QStringLiteral("--input"), spec, QStringLiteral("--warmup"),
                            QStringLiteral("0"), QStringLiteral("--iters"), QStringLiteral("1"),
                            QStringLiteral("--save-outputs"), saved});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto check = runProgram(
            QStringLiteral(SCRIPTSCOPE_PYTHON),
            {QStringLiteral("-c"),
             QStringLiteral(
                 "import sys, torch\n"
                 "a = torch.load(sys.argv[1]); b = torch.load(sys.argv[2])\n"
                 "ok = isinstance(a, tuple) and len(a) == 2 and a[0] == b[0] and "
                 "len(a[1]) == len(b[1])\n"
                 "for x, y in zip(a[1], b[1]):\n"
                 "    ok = ok and sorted(x) == sorted(y) and all(x[k].dtype == y[k].dtype and "
                 "x[k].shape == y[k].shape and torch.allclose(x[k].double(), y[k].double(), "
                 "rtol=0, atol=1e-5) for k in y)\n"
                 "print(len(a[1]), sorted(a[1][0]), [int(d['boxes'].shape[0]) > 0 for d in a[1]], "
                 "ok)\n"),
             saved, fx("ssdlite.outputs.pt")});
        QVERIFY2(check.exitCode == 0, check.err.c_str());
        QCOMPARE(check.out, std::string("2 ['boxes', 'labels', 'scores'] [True, True] True\n"));
    }

    void treeJsonListsPackedWeights_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("quantized_mobilenet") << QStringLiteral("quantized_mobilenet");
        QTest::newRow("dynamic_quantized") << QStringLiteral("dynamic_quantized");
    }

    void treeJsonListsPackedWeights() {
        QFETCH(QString, name);
        const std::string base = name.toStdString();
        const auto r = cli({QStringLiteral("tree"), QString::fromStdString(fixture(base + ".pt")),
                            QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto modules = nlohmann::json::parse(r.out)["modules"];
        const auto entries = nlohmann::json::parse(readText(fixture(base + ".packed.json")));
        QVERIFY(entries.is_array() && !entries.empty());
        auto close = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
        for (const auto& entry : entries) {
            const std::string where =
                entry["module"].get<std::string>() + " " + entry["name"].get<std::string>();
            const nlohmann::json* found = nullptr;
            for (const auto& module : modules) {
                if (module["path"] != entry["module"]) {
                    continue;
                }
                for (const auto& p : module["parameters"]) {
                    if (p["name"] == entry["name"] &&
                        p.value("packed_in", "") == entry["attribute"]) {
                        found = &p;
                    }
                }
            }
            QVERIFY2(found, ("no packed parameter " + where).c_str());
            const auto& p = *found;
            QVERIFY2(p.value("packed", false), (where + ": " + p.dump()).c_str());
            QVERIFY2(p["shape"] == entry["shape"], (where + ": " + p.dump()).c_str());
            QVERIFY2(p["dtype"] == entry["dtype"], (where + ": " + p.dump()).c_str());
            if (!entry.contains("qscheme")) { // a float bias
                QVERIFY2(!p.contains("qscheme"), (where + ": " + p.dump()).c_str());
                continue;
            }
            QVERIFY2(p["qscheme"] == entry["qscheme"], (where + ": " + p.dump()).c_str());
            if (entry["qscheme"] == "per_tensor_affine") {
                QVERIFY2(close(p["scale"].get<double>(), entry["scale"].get<double>()),
                         (where + ": " + p.dump()).c_str());
                QVERIFY2(p["zero_point"] == entry["zero_point"], (where + ": " + p.dump()).c_str());
                QVERIFY(!p.contains("scales") && !p.contains("axis"));
            } else {
                const auto got = p["scales"].get<std::vector<double>>();
                const auto want = entry["scales"].get<std::vector<double>>();
                QCOMPARE(got.size(), want.size());
                for (size_t i = 0; i < want.size(); ++i) {
                    QVERIFY2(close(got[i], want[i]),
                             (where + ": scale " + std::to_string(i)).c_str());
                }
                QVERIFY2(p["zero_points"] == entry["zero_points"], where.c_str());
                QVERIFY2(p["axis"] == entry["axis"], where.c_str());
                QVERIFY(!p.contains("scale"));
            }
        }
        size_t packed = 0;
        for (const auto& module : modules) {
            for (const auto& p : module["parameters"]) {
                packed += p.value("packed", false) ? 1 : 0;
            }
        }
        QCOMPARE(packed, entries.size());
    }

    void infoDescribesSavedValues_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("summaryPart");
        QTest::newRow("list of one tensor")
            << QStringLiteral("value_list1.pt")
            << QStringLiteral("a torch.save file holding a list of 1 tensor");
        QTest::newRow("the detector's inputs")
            << QStringLiteral("ssdlite.inputs.pt") << QStringLiteral("list of 2 tensors");
        QTest::newRow("a tensor") << QStringLiteral("value_t_int64.pt")
                                  << QStringLiteral("a tensor int64[3, 2] saved with torch.save");
        QTest::newRow("nested dict")
            << QStringLiteral("value_nested_dict.pt")
            << QStringLiteral("dict of 2 ('images': list of 2 tensors, 'meta': dict of 1");
        QTest::newRow("empty list")
            << QStringLiteral("value_empty_list.pt") << QStringLiteral("empty list");
    }

    void infoDescribesSavedValues() {
        QFETCH(QString, file);
        QFETCH(QString, summaryPart);
        const auto r =
            cli({QStringLiteral("info"), QString::fromStdString(fixture(file.toStdString()))});
        // Described on stdout; the status is 1 as for every file that is not a model to open.
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.find(summaryPart.toStdString()) != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("usable as an input") != std::string::npos, r.out.c_str());
    }

    void savedOnCudaLoadsOnTheCpuWithANote() {
        const auto info = cli({QStringLiteral("info"), fx("saved_on_cuda.pt")});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(info.out.find("saved on cuda:0") != std::string::npos, info.out.c_str());
        QCOMPARE(cli({QStringLiteral("tree"), fx("saved_on_cuda.pt")}).exitCode, 0);
    }

    void safePreviewShowsCodeAndTensors() {
        // Nothing is executed: even the archive that crashes LibTorch's loader is read.
        const auto info =
            cli({QStringLiteral("info"), fx("crash.pt"), QStringLiteral("--show-code")});
        QVERIFY2(info.out.find("# ---- code/__torch__.py") != std::string::npos, info.out.c_str());
        QVERIFY(info.out.find("def forward") != std::string::npos);
        const auto json =
            cli({QStringLiteral("info"), fx("mycell_traced.pt"), QStringLiteral("--json")});
        QCOMPARE(json.exitCode, 0);
        const auto j = nlohmann::json::parse(json.out);
        QCOMPARE(j["storages"].size(), size_t(2));
        QCOMPARE(j["storages"][0]["dtype"].get<std::string>(), std::string("float32"));
        QCOMPARE(j["tensors"][0].get<std::string>(),
                 std::string("data.pkl: float32[4, 4] from data/0"));
        QVERIFY(j["code_files"].contains("code/__torch__.py"));
        QVERIFY(j["damage"].get<std::string>().empty());
    }

    void runErrors_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("raises") << QStringList{QStringLiteral("run"), fx("raises.pt"),
                                               QStringLiteral("--input"), QStringLiteral("ones:2")}
                                << QStringLiteral("the model refuses this input");
        QTest::newRow("input count")
            << QStringList{QStringLiteral("run"), fx("mycell_traced.pt"), QStringLiteral("--input"),
                           QStringLiteral("ones:3x4")}
            << QStringLiteral("takes 2");
        QTest::newRow("no method")
            << QStringList{QStringLiteral("run"), fx("rich.pt"), QStringLiteral("--method"),
                           QStringLiteral("predict")}
            << QStringLiteral("no method 'predict'");
        QTest::newRow("missing inputs file")
            << QStringList{QStringLiteral("run"), fx("rich.pt"), QStringLiteral("--inputs"),
                           fx("none.pt")}
            << QStringLiteral("cannot open");
        QTest::newRow("hard-coded CUDA")
            << QStringList{QStringLiteral("run"), fx("hardcoded_cuda.pt"),
                           QStringLiteral("--input"), QStringLiteral("ones:2")}
            << QStringLiteral("the model's code uses CUDA");
    }

    void runErrors() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, messagePart);
        const auto r = cli(arguments);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.find(messagePart.toStdString()) != std::string::npos, r.err.c_str());
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
    }

    void operatorLibraryOption() {
        const QString library =
            QString::fromStdString(readText(fixture("torchvision_library.txt")));
        const auto without = cli({QStringLiteral("tree"), fx("torchvision_nms.pt")});
        QCOMPARE(without.exitCode, 1);
        QVERIFY2(without.err.find("torchvision::nms") != std::string::npos, without.err.c_str());
        QVERIFY(without.err.find(library.toStdString()) != std::string::npos);
        const auto with = cli({QStringLiteral("run"), fx("torchvision_nms.pt"),
                               QStringLiteral("--inputs"), fx("torchvision_nms.inputs.pt"),
                               QStringLiteral("--op-library"), library, QStringLiteral("--json")});
        QVERIFY2(with.exitCode == 0, with.err.c_str());
        QVERIFY(nlohmann::json::parse(with.out)["output"]["preview"] ==
                nlohmann::json::parse("[0.0, 2.0]"));
        const auto info = cli({QStringLiteral("info"), fx("torchvision_nms.pt"),
                               QStringLiteral("--op-library"), library});
        QCOMPARE(info.exitCode, 0);
        QVERIFY(info.out.find("torchvision::nms") != std::string::npos);
    }

    void graphJsonMatchesPyTorch_data() {
        QTest::addColumn<QString>("name");
        for (const char* name :
             {"mycell_traced", "mycell_scripted", "wrap_rnn", "rich", "lstm", "ssdlite",
              "quantized_mobilenet", "dynamic_quantized", "transformer_encoder", "attention"}) {
            QTest::newRow(name) << QString::fromLatin1(name);
        }
    }
    void graphJsonMatchesPyTorch() {
        // Every operator node of the inlined forward, depth first through blocks, with the
        // module its call stack gives: as Python walks model.inlined_graph (without constants
        // and prim::GetAttr).
        QFETCH(QString, name);
        const auto expected =
            nlohmann::json::parse(readText(fixture(name.toStdString() + ".expected.json")));
        const auto& want = expected["inlined_nodes"];
        // PyTorch's call stack names a module reached through a container without a frame of its
        // own by its last part (`for layer in self.layers` calls "0"); the diagram names it as
        // named_modules() does ("layers.0"): the one child of the path so far that holds it.
        std::set<std::string> paths;
        for (const auto& m : expected["modules"]) {
            paths.insert(m["path"].get<std::string>());
        }
        const auto join = [](const std::string& a, const std::string& b) {
            return a.empty() ? b : a + "." + b;
        };
        const auto named = [&](const std::string& stack) {
            std::string path;
            for (const QString& part :
                 QString::fromStdString(stack).split(QLatin1Char('.'), Qt::SkipEmptyParts)) {
                std::string next = join(path, part.toStdString());
                if (!paths.count(next)) {
                    std::vector<std::string> holders;
                    for (const std::string& child : paths) {
                        const bool isChild = child.size() > path.size() &&
                                             child.rfind(path.empty() ? "" : path + ".", 0) == 0 &&
                                             child.find('.', path.empty() ? 0 : path.size() + 1) ==
                                                 std::string::npos;
                        if (isChild && paths.count(join(child, part.toStdString()))) {
                            holders.push_back(join(child, part.toStdString()));
                        }
                    }
                    if (holders.size() == 1) {
                        next = holders.front();
                    }
                }
                path = next;
            }
            return path;
        };
        // Where the stack alone leaves it open (SSDlite's backbone holds features.0 and
        // extra.0; PyTorch 1.13 cuts some stacks short), the diagram tells by the module's class:
        // a module path whose parts take the stack's in order, ending alike.
        std::string rootCode = "code/" + expected["modules"][0]["type"].get<std::string>();
        rootCode = rootCode.substr(0, rootCode.rfind('.'));
        std::replace(rootCode.begin(), rootCode.end(), '.', '/');
        const auto sameModule = [&](const std::string& got, const std::string& stack,
                                    const std::string& source) {
            const std::string resolved = named(stack);
            if (got == resolved) {
                return true;
            }
            if (stack.empty()) { // a stack cut down to a module's call of its own method
                return paths.count(got) && source.rfind(rootCode + ".py", 0) != 0;
            }
            if (paths.count(resolved) || !paths.count(got)) {
                return false;
            }
            const QStringList wanted = QString::fromStdString(stack).split(QLatin1Char('.'));
            const QStringList parts = QString::fromStdString(got).split(QLatin1Char('.'));
            int at = 0;
            for (const QString& part : parts) {
                at += at < wanted.size() && part == wanted[at] ? 1 : 0;
            }
            return at == wanted.size() && parts.last() == wanted.last();
        };
        QStringList arguments{QStringLiteral("graph"),
                              QString::fromStdString(fixture(name.toStdString() + ".pt")),
                              QStringLiteral("--inlined"),
                              QStringLiteral("--format"),
                              QStringLiteral("json"),
                              QStringLiteral("--expand"),
                              QStringLiteral("all")};
        if (name == QStringLiteral("ssdlite")) { // torchvision's nms
            arguments << QStringLiteral("--op-library")
                      << QString::fromStdString(readText(fixture("torchvision_library.txt")));
        }
        const auto r = cli(arguments);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto graph = nlohmann::json::parse(r.out);
        const auto& nodes = graph["nodes"];
        QCOMPARE(nodes.size(), want.size());
        QVERIFY(!want.empty());
        std::set<std::string> ids, groups;
        for (const auto& g : graph["groups"]) {
            groups.insert(g["id"].get<std::string>());
        }
        for (size_t i = 0; i < nodes.size(); ++i) {
            const std::string what = std::to_string(i) + ": " + nodes[i].dump().substr(0, 300);
            QVERIFY2(nodes[i]["kind"] == want[i][0], what.c_str());
            QVERIFY2(sameModule(nodes[i]["module"].get<std::string>(),
                                want[i][1].get<std::string>(),
                                nodes[i]["source"].get<std::string>()),
                     (what + " vs " + want[i].dump()).c_str());
            QVERIFY2(groups.count(nodes[i]["group"].get<std::string>()), what.c_str());
            ids.insert(nodes[i]["id"].get<std::string>());
        }
        // Every group's parent is a group, every edge joins nodes (or the graph's ends).
        for (const auto& g : graph["groups"]) {
            QVERIFY(g["parent"].is_null() || groups.count(g["parent"].get<std::string>()));
            QCOMPARE(g["collapsed"].get<bool>(), false);
        }
        QVERIFY(!graph["edges"].empty());
        for (const auto& e : graph["edges"]) {
            const auto from = e["from"].get<std::string>(), to = e["to"].get<std::string>();
            QVERIFY2(ids.count(from) || from.rfind("input:", 0) == 0, e.dump().c_str());
            QVERIFY2(ids.count(to) || to.rfind("output:", 0) == 0, e.dump().c_str());
        }
        // No node is a constant or a GetAttr: those are the attributes of the nodes using them.
        for (const auto& n : nodes) {
            QVERIFY(n["kind"] != "prim::Constant" && n["kind"] != "prim::GetAttr");
        }
    }

    void graphGroupsByModuleAndFunction() {
        // Every group stands for something in the model: a module (or an object attribute, such
        // as SSD's box_coder), a block, or a call of a free function. Nodes PyTorch 1.13 gives no
        // call stack, or a short one, are drawn where their code says: the root's own code in
        // the root, a function's control flow in that function's group.
        for (const char* name : {"transformer_encoder", "ssdlite"}) {
            const auto expected =
                nlohmann::json::parse(readText(fixture(std::string(name) + ".expected.json")));
            std::set<std::string> modules;
            for (const auto& m : expected["modules"]) {
                modules.insert(m["path"].get<std::string>());
                for (const auto& a : m["attributes"]) {
                    if (a["value"].is_null()) { // an object
                        const auto path = m["path"].get<std::string>();
                        modules.insert((path.empty() ? "" : path + ".") +
                                       a["name"].get<std::string>());
                    }
                }
            }
            QStringList arguments{
                QStringLiteral("graph"),
                QString::fromStdString(fixture(std::string(name) + ".pt")),
                QStringLiteral("--inlined"),
                QStringLiteral("--format"),
                QStringLiteral("json"),
                QStringLiteral("--expand"),
                QStringLiteral("all"),
                QStringLiteral("--op-library"),
                QString::fromStdString(readText(fixture("torchvision_library.txt")))};
            const auto r = cli(arguments);
            QVERIFY2(r.exitCode == 0, r.err.c_str());
            const auto graph = nlohmann::json::parse(r.out);
            std::map<std::string, nlohmann::json> groups;
            for (const auto& g : graph["groups"]) {
                groups[g["id"].get<std::string>()] = g;
            }
            std::map<std::string, int> nodesIn; // every node counted in each group around it
            std::map<std::string, std::vector<nlohmann::json>> direct;
            for (const auto& n : graph["nodes"]) {
                direct[n["group"].get<std::string>()].push_back(n);
                for (auto at = n["group"]; !at.is_null();
                     at = groups[at.get<std::string>()]["parent"]) {
                    ++nodesIn[at.get<std::string>()];
                }
            }
            int functions = 0;
            for (const auto& [id, g] : groups) {
                const std::string what = std::string(name) + " " + g.dump();
                if (g["kind"] == "module") {
                    QVERIFY2(modules.count(g["module"].get<std::string>()), what.c_str());
                }
                if (g["kind"] != "function") {
                    continue;
                }
                ++functions;
                const auto label = g["label"].get<std::string>();
                QVERIFY2(label.size() > 2 && label.substr(label.size() - 2) == "()", what.c_str());
                QVERIFY2(nodesIn[id] >= 3, what.c_str()); // smaller calls are drawn in place
                // What a function group holds directly is mostly that function's code (the
                // rest: the calls in it too small for a group of their own).
                std::string file = g["type"].get<std::string>();
                std::replace(file.begin(), file.end(), '.', '/');
                size_t own = 0, known = 0;
                for (const auto& n : direct[id]) {
                    const auto source = n["source"].get<std::string>();
                    known += !source.empty();
                    own += source.find("/" + file) != std::string::npos;
                }
                QVERIFY2(2 * own >= known, what.c_str());
            }
            QVERIFY2(functions > 0, name);
            if (std::string(name) == "ssdlite") {
                // F.batch_norm's `if training:` (no call stack under PyTorch 1.13) is in the
                // batch_norm() call of the BatchNorm2d that made it.
                int checked = 0;
                for (const auto& n : graph["nodes"]) {
                    if (n["source_text"] != "if training:" ||
                        n["source"].get<std::string>().find("/torch/nn/functional.py") ==
                            std::string::npos) {
                        continue;
                    }
                    const auto& call = groups[n["group"].get<std::string>()];
                    QVERIFY2(call["kind"] == "function" && call["label"] == "batch_norm()" &&
                                 call["type"] == "torch.nn.functional",
                             (n.dump() + " in " + call.dump()).c_str());
                    auto at = call["parent"];
                    while (groups[at.get<std::string>()]["kind"] != "module") {
                        at = groups[at.get<std::string>()]["parent"];
                    }
                    QCOMPARE(groups[at.get<std::string>()]["type"].get<std::string>(),
                             std::string("BatchNorm2d"));
                    ++checked;
                }
                QVERIFY(checked > 50);
            }
            if (std::string(name) == "transformer_encoder") {
                // The encoder's own checks read layers.0's attributes, but are its code: they stay
                // in the root, and the two layers are alike.
                for (const auto& n : graph["nodes"]) {
                    for (auto at = n["group"]; !at.is_null();
                         at = groups[at.get<std::string>()]["parent"]) {
                        const auto& g = groups[at.get<std::string>()];
                        if (g["kind"] == "module" && g["module"] == "layers.0") {
                            QVERIFY2(n["module"].get<std::string>().rfind("layers.0", 0) == 0,
                                     n.dump().c_str());
                        }
                    }
                }
                int marked = 0, attention = 0;
                for (const auto& [id, g] : groups) {
                    if (g["module"] == "layers.0" || g["module"] == "layers.1") {
                        marked += g["kind"] == "module" && g["repeats"] == 2 ? 1 : 0;
                    }
                    if (g["label"] == "multi_head_attention_forward()") {
                        QCOMPARE(g["type"].get<std::string>(), std::string("torch.nn.functional"));
                        QVERIFY(g["module"] == "layers.0.self_attn" ||
                                g["module"] == "layers.1.self_attn");
                        ++attention;
                    }
                }
                QCOMPARE(marked, 2);
                QVERIFY(attention >= 2);
            }
        }
    }

    void graphCollapsesAndWritesDot() {
        // rich at the default expansion: the root's children (features, head) are boxes with
        // their type and parameter count; what is inside them is not listed.
        QTemporaryDir dir;
        const QString json = dir.filePath(QStringLiteral("rich.json"));
        const auto r =
            cli({QStringLiteral("graph"), fx("rich.pt"), QStringLiteral("--inlined"),
                 QStringLiteral("--format"), QStringLiteral("json"), QStringLiteral("-o"), json});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QVERIFY(r.out.empty());
        const auto graph = nlohmann::json::parse(readText(json.toStdString()));
        std::map<std::string, nlohmann::json> collapsed;
        for (const auto& g : graph["groups"]) {
            if (g["collapsed"].get<bool>()) {
                collapsed[g["module"].get<std::string>()] = g;
            }
        }
        QVERIFY2(collapsed.count("features") && collapsed.count("head"),
                 graph["groups"].dump().c_str());
        QCOMPARE(collapsed["features"]["type"].get<std::string>(), std::string("Sequential"));
        QCOMPARE(collapsed["head"]["parameters"].get<int64_t>(), int64_t(10 * 8 + 10));
        for (const auto& n : graph["nodes"]) {
            const auto module = n["module"].get<std::string>();
            QVERIFY2(module.rfind("features", 0) != 0 && module.rfind("head", 0) != 0,
                     n.dump().c_str());
        }
        // The folded attributes name the parameter: aten::linear is inside head, so at --expand
        // all its weight shows on the node.
        const auto all = cli({QStringLiteral("graph"), fx("rich.pt"), QStringLiteral("--inlined"),
                              QStringLiteral("--format"), QStringLiteral("json"),
                              QStringLiteral("--expand"), QStringLiteral("all")});
        bool weight = false;
        const auto allJson = nlohmann::json::parse(all.out); // alive through the loop
        for (const auto& n : allJson["nodes"]) {
            if (n["kind"] == "aten::linear") {
                for (const auto& a : n["attributes"]) {
                    weight = weight ||
                             (a["name"] == "weight" && a["value"] == "10x8 float32 (head.weight)");
                }
            }
        }
        QVERIFY2(weight, (all.err + all.out.substr(0, 2000)).c_str());
        // DOT: a digraph with one cluster per open group, braces balanced.
        const auto dot = cli({QStringLiteral("graph"), fx("rich.pt"), QStringLiteral("--inlined"),
                              QStringLiteral("--format"), QStringLiteral("dot"),
                              QStringLiteral("--expand"), QStringLiteral("all")});
        QVERIFY2(dot.exitCode == 0, dot.err.c_str());
        QVERIFY(dot.out.rfind("digraph ", 0) == 0);
        QCOMPARE(std::count(dot.out.begin(), dot.out.end(), '{'),
                 std::count(dot.out.begin(), dot.out.end(), '}'));
        QVERIFY(dot.out.find("subgraph cluster_") != std::string::npos);
        QVERIFY(dot.out.find("label=\"features · Sequential\"") != std::string::npos);
        // SVG: laid out (Graphviz, and the simple layout), one element per node, each named.
        size_t operatorNodes = allJson["nodes"].size();
        for (const char* layout : {"graphviz", "simple"}) {
            const auto svg = cli(
                {QStringLiteral("graph"), fx("rich.pt"), QStringLiteral("--inlined"),
                 QStringLiteral("--format"), QStringLiteral("svg"), QStringLiteral("--expand"),
                 QStringLiteral("all"), QStringLiteral("--layout"), QString::fromLatin1(layout)});
            QVERIFY2(svg.exitCode == 0 && svg.err.empty(), svg.err.c_str());
            QVERIFY(svg.out.rfind("<?xml", 0) == 0);
            size_t nodes = 0;
            for (size_t at = svg.out.find("class=\"node\""); at != std::string::npos;
                 at = svg.out.find("class=\"node\"", at + 1)) {
                ++nodes;
            }
            QCOMPARE(nodes, operatorNodes);
            QVERIFY(svg.out.find(">aten::linear<") != std::string::npos);
        }
        // Bad expansions are usage errors; the IR text stays the default format.
        QCOMPARE(cli({QStringLiteral("graph"), fx("rich.pt"), QStringLiteral("--format"),
                      QStringLiteral("json"), QStringLiteral("--expand"), QStringLiteral("-1")})
                     .exitCode,
                 2);
        QCOMPARE(cli({QStringLiteral("graph"), fx("rich.pt"), QStringLiteral("--format"),
                      QStringLiteral("svgz")})
                     .exitCode,
                 2);
        QVERIFY(cli({QStringLiteral("graph"), fx("rich.pt")}).out.rfind("graph(", 0) == 0);
        const QString ir = dir.filePath(QStringLiteral("rich.ir"));
        QCOMPARE(cli({QStringLiteral("graph"), fx("rich.pt"), QStringLiteral("-o"), ir}).exitCode,
                 0);
        QVERIFY(readText(ir.toStdString()).rfind("graph(", 0) == 0);
    }

    void runProfile() {
        // --profile: one more run records every operator; the modules' self times add up to the
        // operators' time, and the text names each module with its share.
        const QStringList run{QStringLiteral("run"),      fx("wrap_rnn.pt"),
                              QStringLiteral("--inputs"), fx("wrap_rnn.inputs.pt"),
                              QStringLiteral("--iters"),  QStringLiteral("2"),
                              QStringLiteral("--profile")};
        const auto json = cli(run + QStringList{QStringLiteral("--json")});
        QVERIFY2(json.exitCode == 0, json.err.c_str());
        const auto profile = nlohmann::json::parse(json.out)["profile"];
        QVERIFY(profile["wall_ms"].get<double>() > 0);
        std::set<std::string> paths;
        double selfSum = 0;
        for (const auto& module : profile["modules"]) {
            paths.insert(module["path"].get<std::string>());
            selfSum += module["self_ms"].get<double>();
            QVERIFY(module["total_ms"].get<double>() >= module["self_ms"].get<double>() - 1e-9);
        }
        QVERIFY2(paths.count("") && paths.count("loop") && paths.count("loop.cell"),
                 profile["modules"].dump().c_str());
        QVERIFY(std::abs(selfSum - profile["operator_ms"].get<double>()) < 1e-6);
        QVERIFY(!profile["operators"].empty());
        bool linear = false;
        for (const auto& op : profile["operators"]) {
            linear = linear || op["name"].get<std::string>() == "aten::linear";
            QVERIFY(op["calls"].get<int64_t>() >= 1);
        }
        QVERIFY2(linear, profile["operators"].dump().c_str()); // the cell's nn.Linear
        const auto text = cli(run);
        QVERIFY2(text.exitCode == 0, text.err.c_str());
        QVERIFY2(text.out.find("Profile (one run: ") != std::string::npos, text.out.c_str());
        QVERIFY(text.out.find("loop.cell") != std::string::npos);
        // Without --profile there is none.
        const auto plain =
            cli({QStringLiteral("run"), fx("wrap_rnn.pt"), QStringLiteral("--inputs"),
                 fx("wrap_rnn.inputs.pt"), QStringLiteral("--json")});
        QVERIFY(!nlohmann::json::parse(plain.out).contains("profile"));
    }

    // An ExecuTorch program: runs recorded elsewhere (an ETDump) are read in every build, as a
    // run with the mean profile; where the build links ExecuTorch's runtime the program runs and
    // is profiled by its own event tracer, and elsewhere the run says what is missing.
    void executorchRunsAndRecordedRuns() {
        const QString pte =
            QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/saved_by/pte/cnn_xnnpack.pte");
        const QString etdump =
            QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/saved_by/pte/cnn_xnnpack.etdp");
        const auto recorded = cli({QStringLiteral("run"), pte, QStringLiteral("--etdump"), etdump,
                                   QStringLiteral("--json")});
        QVERIFY2(recorded.exitCode == 0, recorded.err.c_str());
        const auto json = nlohmann::json::parse(recorded.out);
        QCOMPARE(json["samples_ms"].size(), size_t(3));
        QCOMPARE(json["profile"]["runs"].get<int>(), 3);
        std::set<std::string> operators;
        for (const auto& op : json["profile"]["operators"]) {
            operators.insert(op["name"].get<std::string>());
        }
        QVERIFY2(operators.count("delegate::XnnpackBackend") &&
                     operators.count("XnnpackBackend: Convolution (NHWC, F32) IGEMM"),
                 json["profile"].dump().c_str());
        const auto text = cli({QStringLiteral("run"), pte, QStringLiteral("--etdump"), etdump});
        QVERIFY2(text.out.find("Profile (the mean of 3 runs") != std::string::npos,
                 text.out.c_str());
        // A dump is an ExecuTorch program's: a TorchScript archive refuses it.
        const auto other =
            cli({QStringLiteral("run"), fx("wrap_rnn.pt"), QStringLiteral("--etdump"), etdump});
        QVERIFY(other.exitCode != 0);
        QVERIFY2(other.err.find("ETDump") != std::string::npos, other.err.c_str());

        const auto version = cli({QStringLiteral("--version")});
        const auto run = cli(
            {QStringLiteral("run"), pte, QStringLiteral("--profile"), QStringLiteral("--json")});
        if (SCRIPTSCOPE_TEST_EXECUTORCH) {
            QVERIFY2(version.out.find("\nExecuTorch 1.") != std::string::npos, version.out.c_str());
            QVERIFY2(run.exitCode == 0, run.err.c_str());
            const auto ran = nlohmann::json::parse(run.out);
            QVERIFY(ran["device_name"].get<std::string>().find("ExecuTorch") != std::string::npos);
            QVERIFY(!ran["profile"]["operators"].empty());
            QVERIFY2(run.err.find("cpuinfo") == std::string::npos, run.err.c_str()); // its log kept
            // The int8 copy against the float export it was lowered from: exit status 1, the
            // first divergence at the first quantized delegate's output, the export's relu_1
            // (first_divergence: the row of `values` it is).
            const QString built = QStringLiteral(SCRIPTSCOPE_PTE_DIR "/");
            const auto compared =
                cli({QStringLiteral("compare"), built + QStringLiteral("cnn_int8_xnnpack.pte"),
                     built + QStringLiteral("cnn.pt2"), QStringLiteral("--inputs"),
                     built + QStringLiteral("inputs.pt"), QStringLiteral("--json")});
            QCOMPARE(compared.exitCode, 1);
            const auto report = nlohmann::json::parse(compared.out);
            QCOMPARE(report["verdict"].get<std::string>(), std::string("differ"));
            const auto& first = report["values"].at(report["first_divergence"].get<size_t>());
            QVERIFY2(first["compared_with"].get<std::string>().rfind("%relu_1 in ", 0) == 0,
                     compared.out.c_str());
            QVERIFY(!first["agrees"].get<bool>());
            QCOMPARE(report["operators_matched"].get<int>(), 2);
            const auto portable =
                cli({QStringLiteral("compare"), built + QStringLiteral("cnn_portable.pte"),
                     built + QStringLiteral("cnn.pt2"), QStringLiteral("--inputs"),
                     built + QStringLiteral("inputs.pt")});
            QVERIFY2(portable.exitCode == 0, portable.out.c_str());
            QVERIFY2(portable.out.find("matched 3 of the 3") != std::string::npos &&
                         portable.out.find("and 3 more values inside modules") != std::string::npos,
                     portable.out.c_str());
        } else {
            QVERIFY2(version.out.find("\nExecuTorch: not linked") != std::string::npos,
                     version.out.c_str());
            QVERIFY(run.exitCode != 0);
            QVERIFY2(run.err.find("no ExecuTorch runtime") != std::string::npos, run.err.c_str());
        }
    }

    void verboseShowsTheTraceback() {
        // An exception raised in the model's code: one line by default, PyTorch's TorchScript
        // traceback with --verbose (before or after the command).
        const QStringList run{QStringLiteral("run"), fx("raises.pt"), QStringLiteral("--input"),
                              QStringLiteral("ones:2")};
        const auto brief = cli(run);
        QCOMPARE(brief.exitCode, 1);
        QCOMPARE(std::count(brief.err.begin(), brief.err.end(), '\n'), std::ptrdiff_t(1));
        QVERIFY(brief.err.find("Traceback of TorchScript") == std::string::npos);
        for (const QStringList& arguments : {run + QStringList{QStringLiteral("--verbose")},
                                             QStringList{QStringLiteral("--verbose")} + run}) {
            const auto verbose = cli(arguments);
            QCOMPARE(verbose.exitCode, 1);
            QVERIFY2(verbose.err.find("Traceback of TorchScript") != std::string::npos,
                     verbose.err.c_str());
            QVERIFY(std::count(verbose.err.begin(), verbose.err.end(), '\n') > 3);
        }
    }

    void cudaIsExplainedOrUsed() {
        const auto devices = cli({QStringLiteral("devices"), QStringLiteral("--json")});
        QCOMPARE(devices.exitCode, 0);
        const auto json = nlohmann::json::parse(devices.out)["devices"];
        QCOMPARE(json[0]["id"].get<std::string>(), std::string("cpu"));
        auto run = [&](const QString& device) {
            return cli({QStringLiteral("run"), fx("decision_gate.pt"), QStringLiteral("--input"),
                        QStringLiteral("random:3x4:float32:3"), QStringLiteral("--device"), device,
                        QStringLiteral("--iterations"), QStringLiteral("3"),
                        QStringLiteral("--json")});
        };
        const auto onCpu = run(QStringLiteral("cpu"));
        QVERIFY2(onCpu.exitCode == 0, onCpu.err.c_str());
        QCOMPARE(nlohmann::json::parse(onCpu.out)["synchronized"].get<bool>(), false);
        const auto onCuda = run(QStringLiteral("cuda"));
        QCOMPARE(json[1]["available"].get<bool>(), cudaExpected());
        if (!cudaExpected()) {
            // No CUDA here: the reason is listed, and a run on CUDA is refused with it.
            const auto reason = json[1]["reason"].get<std::string>();
            QVERIFY(reason.size() > 20);
            QCOMPARE(onCuda.exitCode, 1);
            QVERIFY2(onCuda.err.find(reason) != std::string::npos, onCuda.err.c_str());
            return;
        }
        // CUDA here: named with its memory, and a run equals the CPU's, its timing synchronized.
        QCOMPARE(json[1]["id"].get<std::string>(), std::string("cuda:0"));
        QVERIFY(!json[1]["name"].get<std::string>().empty());
        QVERIFY(json[1]["memory_bytes"].get<uint64_t>() > (uint64_t(1) << 28));
        QVERIFY2(onCuda.exitCode == 0, onCuda.err.c_str());
        const auto cpuJson = nlohmann::json::parse(onCpu.out),
                   cudaJson = nlohmann::json::parse(onCuda.out);
        QCOMPARE(cudaJson["device"].get<std::string>(), std::string("cuda:0"));
        QCOMPARE(cudaJson["synchronized"].get<bool>(), true);
        const auto a = cpuJson["output"]["preview"].get<std::vector<double>>();
        const auto b = cudaJson["output"]["preview"].get<std::vector<double>>();
        QCOMPARE(a.size(), b.size());
        QVERIFY(!a.empty());
        for (size_t i = 0; i < a.size(); ++i) {
            QVERIFY(std::abs(a[i] - b[i]) < 1e-4);
        }
    }

    void warpEqualsOpenCv_data() {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("expected");
        QTest::newRow("json, linear")
            << QStringList{QStringLiteral("--matrix"), fx("homography.expected.json")}
            << QStringLiteral("warp_expected_linear.png");
        QTest::newRow("npy") << QStringList{QStringLiteral("--matrix"), fx("homography_f64.npy")}
                             << QStringLiteral("warp_expected_linear.png");
        QTest::newRow("xml") << QStringList{QStringLiteral("--matrix"), fx("homography.xml")}
                             << QStringLiteral("warp_expected_linear.png");
        QTest::newRow("yml by node")
            << QStringList{QStringLiteral("--matrix"), fx("homography.yml"),
                           QStringLiteral("--matrix-node"), QStringLiteral("warp")}
            << QStringLiteral("warp_expected_linear.png");
        QTest::newRow("cubic replicate 200x100")
            << QStringList{QStringLiteral("--matrix"), fx("homography.xml"),
                           QStringLiteral("--interp"), QStringLiteral("cubic"),
                           QStringLiteral("--border"), QStringLiteral("replicate"),
                           QStringLiteral("--size"),   QStringLiteral("200x100")}
            << QStringLiteral("warp_expected_cubic_replicate_200x100.png");
        QTest::newRow("inverse nearest")
            << QStringList{QStringLiteral("--matrix"), fx("homography.xml"),
                           QStringLiteral("--inverse"), QStringLiteral("--interp"),
                           QStringLiteral("nearest")}
            << QStringLiteral("warp_expected_inverse_nearest.png");
        QTest::newRow("corners") << QStringList{QStringLiteral("--corners"),
                                                QString::fromStdString(
                                                    readText(fixture("warp_corners.txt")))}
                                 << QStringLiteral("warp_expected_corners.png");
    }

    void warpEqualsOpenCv() {
        QFETCH(QStringList, options);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString output = dir.path() + QStringLiteral("/warped.png");
        const auto r = cli(QStringList{QStringLiteral("warp"), fx("warp_source.png"),
                                       QStringLiteral("-o"), output} +
                           options);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QCOMPARE(maxPixelDifference(output.toStdString(), fixture(expected.toStdString())), 0.0);
    }

    void warpErrors_data() {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("missing image")
            << QStringList{fx("nope.png"), QStringLiteral("--matrix"), fx("homography.xml")}
            << QStringLiteral("cannot read the image");
        QTest::newRow("not a matrix")
            << QStringList{fx("warp_source.png"), QStringLiteral("--matrix"), fx("text.pt")}
            << QStringLiteral("not valid JSON");
        QTest::newRow("self-intersecting corners")
            << QStringList{fx("warp_source.png"), QStringLiteral("--corners"),
                           QStringLiteral("0,0,100,100,100,0,0,100")}
            << QStringLiteral("self-intersecting");
        QTest::newRow("bad interpolation")
            << QStringList{fx("warp_source.png"), QStringLiteral("--matrix"), fx("homography.xml"),
                           QStringLiteral("--interp"), QStringLiteral("smooth")}
            << QStringLiteral("unknown interpolation 'smooth'");
    }

    void warpErrors() {
        QFETCH(QStringList, options);
        QFETCH(QString, messagePart);
        QTemporaryDir dir;
        const auto r = cli(QStringList{QStringLiteral("warp"), QStringLiteral("-o"),
                                       dir.path() + QStringLiteral("/o.png")} +
                           options);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.find(messagePart.toStdString()) != std::string::npos, r.err.c_str());
    }

    void singularMatrixFile() {
        QTemporaryDir dir;
        const QString matrix = dir.path() + QStringLiteral("/singular.json");
        QFile file(matrix);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("[[1, 2, 3], [2, 4, 6], [0, 0, 1]]");
        file.close();
        const auto r =
            cli({QStringLiteral("warp"), fx("warp_source.png"), QStringLiteral("--matrix"), matrix,
                 QStringLiteral("-o"), dir.path() + QStringLiteral("/o.png")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.find("singular") != std::string::npos, r.err.c_str());
    }

    void activationsFirstNonFinite() {
        // The text names the operator kind and the module path; JSON has the node's inputs.
        auto r =
            cli({QStringLiteral("activations"), fx("nan_nested.pt"), QStringLiteral("--inputs"),
                 fx("nan_nested.inputs.pt"), QStringLiteral("--first-nonfinite")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QVERIFY2(r.out.find("aten::log in body.inner") != std::string::npos, r.out.c_str());
        r = cli({QStringLiteral("activations"), fx("nan_loop.pt"), QStringLiteral("--inputs"),
                 fx("nan_loop.inputs.pt"), QStringLiteral("--first-nonfinite"),
                 QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["first_nonfinite"]["kind"].get<std::string>(), std::string("aten::sqrt"));
        QCOMPARE(j["first_nonfinite"]["occurrence"].get<int>(), 3);
        QCOMPARE(j["first_nonfinite_inputs"].size(), size_t{1});
        QVERIFY(!j.contains("records"));
        // Every value, with the run options of run.
        r = cli({QStringLiteral("activations"), fx("inplace.pt"), QStringLiteral("--input"),
                 QStringLiteral("random:2x5"), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const auto all = nlohmann::json::parse(r.out);
        QCOMPARE(all["records"].size(), size_t{4});
        QVERIFY(all["first_nonfinite"].is_null());
        // Its memory: mul's 40 bytes, relu_ on the same storage (not counted again), and add's
        // beside them; the input is the caller's.
        QCOMPARE(all["memory"]["live_bytes"].get<std::vector<uint64_t>>(),
                 (std::vector<uint64_t>{0, 40, 40, 80}));
        QCOMPARE(all["memory"]["peak_bytes"].get<uint64_t>(), uint64_t{80});
        QCOMPARE(all["records"][2]["memory"]["storage_bytes"].get<uint64_t>(), uint64_t{0});
        r = cli({QStringLiteral("activations"), fx("inplace.pt"), QStringLiteral("--input"),
                 QStringLiteral("random:2x5")});
        QVERIFY(r.out.find("No NaN or Inf") != std::string::npos);
        // Compared with values saved from Python: the first module that differs is named.
        r = cli({QStringLiteral("activations"), fx("stats_model.pt"), QStringLiteral("--inputs"),
                 fx("stats_model.inputs.pt"), QStringLiteral("--reference"),
                 fx("stats_model.activations_perturbed.pt")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.find("aten::conv2d in features.3") != std::string::npos, r.out.c_str());
        // Usage: one comparison at a time; a bad input is exit 1 with one line.
        r = cli({QStringLiteral("activations"), fx("stats_model.pt"), QStringLiteral("--reference"),
                 fx("stats_model.activations.pt"), QStringLiteral("--compare-device"),
                 QStringLiteral("cpu")});
        QCOMPARE(r.exitCode, 2);
        r = cli({QStringLiteral("activations"), fx("stats_model.pt"), QStringLiteral("--input"),
                 QStringLiteral("random:1x2")});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
    }

    void optimizeWritesAnArchive() {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("frozen.pt"));
        auto r =
            cli({QStringLiteral("optimize"), fx("stats_model.pt"), QStringLiteral("--freeze"),
                 QStringLiteral("--pass"), QStringLiteral("fold-conv-bn"),
                 QStringLiteral("--inputs"), fx("stats_model.inputs.pt"), QStringLiteral("--iters"),
                 QStringLiteral("3"), QStringLiteral("-o"), out, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto j = nlohmann::json::parse(r.out);
        QVERIFY(j["nodes_after"].get<int>() < j["nodes_before"].get<int>());
        QVERIFY(j["max_abs_diff"].get<double>() < 1e-5);
        QVERIFY(j["speedup"].get<double>() > 0);
        QCOMPARE(j["saved"].get<std::string>(), out.toStdString());
        // The archive it wrote is a model this tool (and Python: test_numerics) loads.
        r = cli({QStringLiteral("run"), out, QStringLiteral("--inputs"),
                 fx("stats_model.inputs.pt"), QStringLiteral("--iters"), QStringLiteral("1")});
        QCOMPARE(r.exitCode, 0);
        // --for-inference: the copy written loads back and runs (checked before "Saved").
        const QString inference = dir.filePath(QStringLiteral("inference.pt"));
        r = cli({QStringLiteral("optimize"), fx("stats_model.pt"), QStringLiteral("--freeze"),
                 QStringLiteral("--for-inference"), QStringLiteral("--inputs"),
                 fx("stats_model.inputs.pt"), QStringLiteral("-o"), inference});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QVERIFY2(r.out.find("(loaded back and run once)") != std::string::npos, r.out.c_str());
        r = cli({QStringLiteral("run"), inference, QStringLiteral("--inputs"),
                 fx("stats_model.inputs.pt"), QStringLiteral("--iters"), QStringLiteral("1")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        // A copy that cannot be written: exit status 1 and why, no "Saved".
        r = cli({QStringLiteral("optimize"), fx("stats_model.pt"), QStringLiteral("--freeze"),
                 QStringLiteral("-o"), dir.filePath(QStringLiteral("no/such/folder/x.pt"))});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.find("cannot save") != std::string::npos, r.err.c_str());
        QVERIFY(r.out.find("Saved") == std::string::npos);
        r = cli({QStringLiteral("optimize"), fx("mutating.pt"), QStringLiteral("--freeze")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.find("freeze failed") != std::string::npos, r.err.c_str());
        r = cli({QStringLiteral("optimize"), fx("stats_model.pt")});
        QCOMPARE(r.exitCode, 2);
        r = cli({QStringLiteral("optimize"), fx("stats_model.pt"), QStringLiteral("--pass"),
                 QStringLiteral("nonsense")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.find("fold-conv-bn") != std::string::npos);
    }

    void renderDetection() {
        // SSDlite on its two images: the boxes interpreted with COCO names, drawn over the first.
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("det.png"));
        const QString images = QStringLiteral("list:image:%1,batch=0;image:%2,batch=0")
                                   .arg(fx("det_a.png"), fx("det_b.png"));
        const QString library =
            QString::fromStdString(readText(fixture("torchvision_library.txt"))).trimmed();
        auto r =
            cli({QStringLiteral("--op-library"), library, QStringLiteral("run"), fx("ssdlite.pt"),
                 QStringLiteral("--input"), images, QStringLiteral("--iters"), QStringLiteral("1"),
                 QStringLiteral("--render"), png, QStringLiteral("--score-threshold"),
                 QStringLiteral("0.1"), QStringLiteral("--json")},
                300000);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto j = nlohmann::json::parse(r.out);
        const auto& task = j["interpreted"];
        QCOMPARE(task["kind"].get<std::string>(), std::string("detection"));
        QCOMPARE(task["labels"].get<std::string>(), std::string("COCO"));
        const auto expected = nlohmann::json::parse(readText(fixture("ssdlite.outputs.json")));
        const std::string cocoText =
            readText(std::string(SCRIPTSCOPE_SOURCE_DIR) + "/resources/labels/coco.txt");
        std::vector<std::string> coco;
        std::istringstream lines(cocoText);
        for (std::string line; std::getline(lines, line);) {
            coco.push_back(line);
        }
        QCOMPARE(task["detections"].size(), size_t{2});
        for (size_t i = 0; i < 2; ++i) {
            const auto& want = expected["images"][i];
            const auto& got = task["detections"][i];
            QCOMPARE(got.size(), want["num_boxes"].get<size_t>());
            for (size_t k = 0; k < 5; ++k) {
                for (size_t c = 0; c < 4; ++c) {
                    QVERIFY(std::abs(got[k]["box"][c].get<double>() -
                                     want["boxes"][k][c].get<double>()) < 1e-2);
                }
                const auto label = want["labels"][k].get<size_t>();
                QCOMPARE(got[k]["label"].get<size_t>(), label);
                QCOMPARE(got[k]["name"].get<std::string>(), coco[label]);
            }
        }
        // The picture: det_a's size, drawn on (boxes in their class colours).
        const cv::Mat drawn = cv::imread(png.toStdString(), cv::IMREAD_COLOR);
        const cv::Mat source = cv::imread(fixture("det_a.png"), cv::IMREAD_COLOR);
        QCOMPARE(drawn.cols, source.cols);
        QCOMPARE(drawn.rows, source.rows);
        QVERIFY(cv::norm(drawn, source, cv::NORM_L1) > 1000);
        // Text: the boxes above the threshold with their names.
        r = cli({QStringLiteral("--op-library"), library, QStringLiteral("run"), fx("ssdlite.pt"),
                 QStringLiteral("--input"), images, QStringLiteral("--iters"), QStringLiteral("1"),
                 QStringLiteral("--task"), QStringLiteral("detection")},
                300000);
        QVERIFY2(r.out.find("Task        detection: 600 objects in 2 images (the output's [1]) "
                            "(names: COCO)") != std::string::npos,
                 r.out.c_str());
    }

    void renderSegmentationAndClassification() {
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("seg.png"));
        // The segmenter on det_a.png, preprocessed as the fixture script did: Python's classes.
        auto r =
            cli({QStringLiteral("run"), fx("segmenter.pt"), QStringLiteral("--input"),
                 QStringLiteral("image:") + fx("det_a.png"), QStringLiteral("--iters"),
                 QStringLiteral("1"), QStringLiteral("--render"), png, QStringLiteral("--json")},
                300000);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto task = nlohmann::json::parse(r.out)["interpreted"];
        const auto expected = nlohmann::json::parse(readText(fixture("segmenter.outputs.json")));
        QCOMPARE(task["kind"].get<std::string>(), std::string("segmentation"));
        QCOMPARE(task["labels"].get<std::string>(), std::string("Pascal VOC"));
        QVERIFY(task["size"] == expected["size"]);
        QCOMPARE(task["classes_present"].size(), expected["classes_present"].size());
        for (size_t i = 0; i < task["classes_present"].size(); ++i) {
            QCOMPARE(task["classes_present"][i]["class"].get<int>(),
                     expected["classes_present"][i][0].get<int>());
            QCOMPARE(task["classes_present"][i]["pixels"].get<int64_t>(),
                     expected["classes_present"][i][1].get<int64_t>());
        }
        QCOMPARE(task["classes_present"][0]["name"].get<std::string>(), std::string("sofa"));
        QCOMPARE(cv::imread(png.toStdString()).cols, 320);
        // A classifier: ImageNet's names, softmax applied and said.
        r = cli({QStringLiteral("run"), fx("quantized_mobilenet.pt"), QStringLiteral("--input"),
                 QStringLiteral("image:") + fx("det_a.png") + QStringLiteral(",preset=imagenet"),
                 QStringLiteral("--iters"), QStringLiteral("1"), QStringLiteral("--json"),
                 QStringLiteral("--top-k"), QStringLiteral("3")});
        QCOMPARE(r.exitCode, 0);
        const auto cls = nlohmann::json::parse(r.out)["interpreted"];
        QCOMPARE(cls["kind"].get<std::string>(), std::string("classification"));
        QCOMPARE(cls["labels"].get<std::string>(), std::string("ImageNet-1k"));
        QCOMPARE(cls["top_k"].size(), size_t{3});
        const std::string imagenet =
            readText(std::string(SCRIPTSCOPE_SOURCE_DIR) + "/resources/labels/imagenet.txt");
        std::vector<std::string> names;
        std::istringstream lines(imagenet);
        for (std::string line; std::getline(lines, line);) {
            names.push_back(line);
        }
        QCOMPARE(names.size(), size_t{1000});
        for (const auto& e : cls["top_k"]) {
            QCOMPARE(e["name"].get<std::string>(), names[e["index"].get<size_t>()]);
        }
        // A labels file of one's own.
        const QString labels = dir.filePath(QStringLiteral("labels.txt"));
        {
            std::ofstream file(labels.toStdString());
            for (int i = 0; i < 1000; ++i) {
                file << "kind " << i << "\n";
            }
        }
        r = cli({QStringLiteral("run"), fx("quantized_mobilenet.pt"), QStringLiteral("--input"),
                 QStringLiteral("image:") + fx("det_a.png") + QStringLiteral(",preset=imagenet"),
                 QStringLiteral("--iters"), QStringLiteral("1"), QStringLiteral("--labels"),
                 labels});
        QVERIFY2(r.out.find("(names: labels.txt)") != std::string::npos, r.out.c_str());
        // No image to draw on; a task that does not fit.
        r = cli({QStringLiteral("run"), fx("quantized_mobilenet.pt"), QStringLiteral("--input"),
                 QStringLiteral("random:1x3x224x224"), QStringLiteral("--render"), png});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.find("image input") != std::string::npos);
        r = cli({QStringLiteral("run"), fx("quantized_mobilenet.pt"), QStringLiteral("--input"),
                 QStringLiteral("random:1x3x224x224"), QStringLiteral("--task"),
                 QStringLiteral("detection"), QStringLiteral("--iters"), QStringLiteral("1")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.find("not a detection") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
