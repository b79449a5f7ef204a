// What a new user stumbled on in the fourth walkthrough, through scriptscope-cli: an operator
// library built for another LibTorch (refused and named, with an exit status of its own), outputs
// interpreted wherever the tensor sits (a classifier's tuple, a segmenter's dict, a flow model's
// list), NaN never shown as a number, damaged archives' verdict first, outputs saved so that plain
// torch.load reads them, and diffs blind to aten::warn's process-wide ids.
#include "other_libtorch.h"
#include "test_support.h"

#include <flow_colour.h>
#include <library_check.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>

using scriptscope::test::fixture;
using scriptscope::test::otherLibTorchsLibrary;
using scriptscope::test::readText;

namespace {

using Result = scriptscope::test::ProgramResult;

using scriptscope::test::cli;
using scriptscope::test::fx;

nlohmann::json runJson(const QStringList& arguments, Result* raw = nullptr) {
    const Result r =
        cli(QStringList{QStringLiteral("run")} + arguments + QStringList{QStringLiteral("--json")});
    if (raw) {
        *raw = r;
    }
    if (r.exitCode != 0) {
        qWarning("%s", r.err.c_str());
        return {};
    }
    return nlohmann::json::parse(r.out);
}

QStringList inputsOf(const char* model) {
    return {
        fx(model),
        QStringLiteral("--inputs"),
        fx((std::string(model).substr(0, std::string(model).size() - 3) + ".inputs.pt").c_str()),
        QStringLiteral("--iters"),
        QStringLiteral("1"),
        QStringLiteral("--warmup"),
        QStringLiteral("0")};
}

} // namespace

class TestWalkthroughCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The blocker: a library built for another LibTorch crashed every load with SIGBUS. It is
    // refused before it is loaded, named, with exit status 6, and the model is not blamed.
    void libraryOfAnotherLibTorchIsRefused() {
        const QString library = otherLibTorchsLibrary();
        QVERIFY2(QFile::exists(library), qPrintable(library));
        for (const char* command : {"info", "tree", "run"}) {
            const Result r = cli({QString::fromLatin1(command), fx("compute.pt"),
                                  QStringLiteral("--op-library"), library});
            QCOMPARE(r.exitCode, 6);
            QVERIFY2(r.err.find("cannot load the operator library '" + library.toStdString() +
                                "'") != std::string::npos,
                     r.err.c_str());
            QVERIFY2(r.err.find("built for another LibTorch") != std::string::npos, r.err.c_str());
            QVERIFY2(r.err.find("SIGBUS") == std::string::npos, r.err.c_str());
        }
    }

    void missingLibraryHasItsOwnStatus() {
        const Result r =
            cli({QStringLiteral("tree"), fx("compute.pt"), QStringLiteral("--op-library"),
                 QStringLiteral("/nonexistent/libgone.so")});
        QCOMPARE(r.exitCode, 6);
        QVERIFY2(r.err.find("'/nonexistent/libgone.so'") != std::string::npos, r.err.c_str());
    }

    // A library nothing in its file gives away, crashing in its own initialiser: the crash is
    // blamed on it (loaded alone, it crashes again), not on the archive.
    void crashingLibraryIsNamed() {
        const QString library = QStringLiteral(SCRIPTSCOPE_TEST_CRASHING_LIBRARY);
        const Result r = cli(
            {QStringLiteral("info"), fx("compute.pt"), QStringLiteral("--op-library"), library});
        QCOMPARE(r.exitCode, 6);
        QVERIFY2(r.err.find("while loading the operator library '" + library.toStdString() + "'") !=
                     std::string::npos,
                 r.err.c_str());
        QVERIFY2(r.err.find("SIGBUS") != std::string::npos, r.err.c_str());
    }

    // The check itself: this build's own operator library passes; the other LibTorch's does
    // not, and the reason names the library it needs.
    void checkReadsTheLibrary() {
        const auto facts = scriptscope::readSharedObjectFile(
            QStringLiteral(SCRIPTSCOPE_TEST_OTHER_LIBTORCH_LIBRARY).toStdString());
        QVERIFY(facts.ok());
        QVERIFY(std::find(facts->needed.begin(), facts->needed.end(), "libtorch_cpu.so.0.1") !=
                facts->needed.end());
        QVERIFY(std::find(facts->undefined.begin(), facts->undefined.end(),
                          "scriptscope_other_libtorch_marker") != facts->undefined.end());
        QCOMPARE(*scriptscope::libtorchSonameRelease("libtorch_cpu.so.1.13"), std::string(".1.13"));
        QCOMPARE(*scriptscope::libtorchSonameRelease("libc10.so"), std::string());
        QVERIFY(!scriptscope::libtorchSonameRelease("libtorchvision.so"));
        QVERIFY(!scriptscope::libtorchSonameRelease("libc10x.so"));
        // Not ELF, and a truncated ELF header: refused with a reason, never read past the end.
        QTemporaryDir dir;
        const QString text = dir.filePath(QStringLiteral("text.so"));
        {
            QFile file(text);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("not a library");
        }
        const auto notElf = scriptscope::readSharedObjectFile(text.toStdString());
        QVERIFY(!notElf.ok());
        QVERIFY2(notElf.error().message.find("ELF") != std::string::npos,
                 notElf.error().message.c_str());
        const std::string real =
            readText(QStringLiteral(SCRIPTSCOPE_TEST_CRASHING_LIBRARY).toStdString());
        for (const size_t keep : {size_t{20}, size_t{64}, real.size() / 2}) {
            const std::string cut = real.substr(0, keep);
            const scriptscope::ByteReader read = [&](uint64_t offset,
                                                     uint64_t size) -> std::optional<std::string> {
                if (offset > cut.size() || size > cut.size() - offset) {
                    return std::nullopt;
                }
                return cut.substr(offset, size);
            };
            const auto facts2 = scriptscope::readSharedObject(read, cut.size());
            QVERIFY2(!facts2.ok(), std::to_string(keep).c_str());
        }
    }

    // A format added from outside, by a format library that SCRIPTSCOPE_FORMAT_LIBRARIES names
    // (tests/fixtures/libraries/toy_format.cpp): info, tree and code show it with nothing in
    // app/cli naming it, a run is refused with why, a file its reader cannot read says so, and
    // without the library the file is text again.
    void aFormatLibraryAddsAFormat() {
        const QString toy = QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/toy/demo.toy");
        const QString broken =
            QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/toy/broken.toy");
        const auto has = [](const Result& r, const std::string& text) {
            return r.out.find(text) != std::string::npos || r.err.find(text) != std::string::npos;
        };
        const Result before = cli({QStringLiteral("info"), toy});
        QVERIFY2(has(before, "Kind        text"), before.out.c_str());
        QVERIFY(before.exitCode != 0);
        QVERIFY(cli({QStringLiteral("tree"), toy}).exitCode != 0);

        const auto unset = qScopeGuard([] { qunsetenv("SCRIPTSCOPE_FORMAT_LIBRARIES"); });
        qputenv("SCRIPTSCOPE_FORMAT_LIBRARIES", "/no/such/libtoy.so");
        const Result missing = cli({QStringLiteral("info"), toy});
        QVERIFY2(has(missing, "Kind        text"), missing.out.c_str());
        QVERIFY2(has(missing, "SCRIPTSCOPE_FORMAT_LIBRARIES names /no/such/libtoy.so, which was "
                              "not loaded"),
                 missing.out.c_str());

        // Named after one that is missing: the missing one is passed over.
        qputenv("SCRIPTSCOPE_FORMAT_LIBRARIES", "/no/such/libtoy.so:" SCRIPTSCOPE_TEST_TOY_FORMAT);
        const Result info = cli({QStringLiteral("info"), toy});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(has(info, "Kind        added-format"), info.out.c_str());
        QVERIFY2(has(info, "a toy model, read by the format library " SCRIPTSCOPE_TEST_TOY_FORMAT),
                 info.out.c_str());
        const Result tree = cli({QStringLiteral("tree"), toy});
        QCOMPARE(tree.exitCode, 0);
        // body: 4x3 + 4 parameters; head: 2x4 and an int64 buffer; counted by ScriptScope.
        QVERIFY2(has(tree, "(root)  Toy  24 parameters, 104 B"), tree.out.c_str());
        QVERIFY2(has(tree, "  body  ToyBody  16 parameters, 64 B"), tree.out.c_str());
        QVERIFY2(has(tree, "  head  ToyHead  8 parameters, 40 B"), tree.out.c_str());
        const Result json = cli({QStringLiteral("tree"), toy, QStringLiteral("--json")});
        QCOMPARE(json.exitCode, 0);
        const auto j = nlohmann::json::parse(json.out);
        QCOMPARE(j.at("modules").size(), size_t{3});
        QCOMPARE(j.at("parameter_count").get<int>(), 24);
        const Result code = cli({QStringLiteral("code"), toy});
        QCOMPARE(code.exitCode, 0);
        QVERIFY2(has(code, "return self.head(self.body(x))"), code.out.c_str());
        const Result graph = cli({QStringLiteral("graph"), toy});
        QVERIFY2(has(graph, "graph(%self : Toy,"), graph.out.c_str());

        const Result run = cli({QStringLiteral("run"), toy});
        QVERIFY(run.exitCode != 0);
        QVERIFY2(has(run, "which describes them: ScriptScope does not run them"), run.err.c_str());
        const Result unreadable = cli({QStringLiteral("tree"), broken});
        QVERIFY(unreadable.exitCode != 0);
        QVERIFY2(has(unreadable, "is a toy model that " SCRIPTSCOPE_TEST_TOY_FORMAT
                                 " cannot read: line 3 starts with 'layer'"),
                 unreadable.err.c_str());
        // ScriptScope's own formats are still its own: a TorchScript archive is not asked.
        const Result own = cli({QStringLiteral("info"), fx("compute.pt")});
        QVERIFY2(has(own, "Kind        torchscript"), own.out.c_str());
    }

    // GoogLeNet returns (logits, None, None): a classification, found in the tuple, by Auto and
    // when forced, in text and JSON.
    void tupleClassifierIsAClassification() {
        const auto expected = nlohmann::json::parse(readText(fixture("walkthrough.expected.json")));
        for (const char* task : {"auto", "classification"}) {
            const auto j =
                runJson(inputsOf("tuple_classifier.pt") +
                        QStringList{QStringLiteral("--task"), QString::fromLatin1(task)});
            QCOMPARE(QString::fromStdString(j["interpreted"]["kind"]),
                     QStringLiteral("classification"));
            QCOMPARE(QString::fromStdString(j["interpreted"]["where"]), QStringLiteral("[0]"));
            QCOMPARE(j["interpreted"]["top_k"][0]["index"].get<int>(),
                     expected["tuple_classifier"]["top"].get<int>());
            QCOMPARE(QString::fromStdString(j["interpreted"]["labels"]),
                     QStringLiteral("ImageNet-1k"));
        }
        const Result text =
            cli(QStringList{QStringLiteral("run")} + inputsOf("tuple_classifier.pt") +
                QStringList{QStringLiteral("--task"), QStringLiteral("classification")});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.find("classification: 1000 classes") != std::string::npos,
                 text.out.c_str());
    }

    // A segmenter's {"out", "aux"}: the out logits, whose argmax is PyTorch's.
    void segmenterDictIsASegmentation() {
        const auto expected = nlohmann::json::parse(readText(fixture("walkthrough.expected.json")));
        const auto j = runJson(inputsOf("dict_segmenter.pt"));
        QCOMPARE(QString::fromStdString(j["interpreted"]["kind"]), QStringLiteral("segmentation"));
        QCOMPARE(QString::fromStdString(j["interpreted"]["where"]), QStringLiteral("['out']"));
        const auto& present = j["interpreted"]["classes_present"];
        const auto& want = expected["dict_segmenter"]["classes_present"];
        QCOMPARE(present.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(present[i]["class"].get<int>(), want[i][0].get<int>());
            QCOMPARE(present[i]["pixels"].get<int64_t>(), want[i][1].get<int64_t>());
        }
    }

    // RAFT's list of flow estimates: an optical flow (the last estimate), not a 2-class
    // segmentation; its longest vector is PyTorch's.
    void flowListIsAFlow() {
        const auto expected = nlohmann::json::parse(readText(fixture("walkthrough.expected.json")));
        const auto j = runJson(inputsOf("flow_model.pt"));
        QCOMPARE(QString::fromStdString(j["interpreted"]["kind"]), QStringLiteral("flow"));
        QCOMPARE(QString::fromStdString(j["interpreted"]["where"]), QStringLiteral("[2]"));
        QVERIFY(std::abs(j["interpreted"]["max_norm"].get<double>() -
                         expected["flow_model"]["max_norm"].get<double>()) < 1e-4);
    }

    // The flow's colours are torchvision.utils.flow_to_image's, pixel for pixel (within one step
    // of rounding).
    void flowColoursAreTorchvisions() {
        const std::string bytes = readText(fixture("flow_field.bin"));
        const int width = 128, height = 96;
        QCOMPARE(bytes.size(), size_t(2 * width * height * 4));
        std::vector<float> field(static_cast<size_t>(2 * width * height));
        std::memcpy(field.data(), bytes.data(), bytes.size());
        const scriptscope::FlowPicture picture =
            scriptscope::flowToRgb(field.data(), field.data() + width * height, width, height);
        const cv::Mat wheel = cv::imread(fixture("flow_field.png"), cv::IMREAD_COLOR);
        QCOMPARE(wheel.cols, width);
        QCOMPARE(wheel.rows, height);
        int worst = 0;
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) {
                const cv::Vec3b bgr = wheel.at<cv::Vec3b>(y, x);
                const uint8_t* rgb = picture.rgb.data() + (static_cast<size_t>(y) * width + x) * 3;
                for (int c = 0; c < 3; ++c) {
                    worst = std::max(worst, std::abs(int(rgb[c]) - int(bgr[2 - c])));
                }
            }
        }
        QVERIFY2(worst <= 1, qPrintable(QStringLiteral("largest difference %1").arg(worst)));
    }

    // Four NaN scores: no statistics shown as 0, a warning naming them, and no classification.
    void nanIsNeverAScore() {
        Result raw;
        const auto j = runJson(inputsOf("nan_classifier.pt"), &raw);
        QVERIFY(j["output"]["min"].is_null());
        QVERIFY(j["output"]["mean"].is_null());
        QCOMPARE(j["output"]["nan"].get<int>(), 4);
        QCOMPARE(QString::fromStdString(j["interpreted"]["kind"]), QStringLiteral("none"));
        QVERIFY2(j["interpreted"]["summary"].get<std::string>().find("4 NaN") != std::string::npos,
                 j["interpreted"]["summary"].get<std::string>().c_str());
        QCOMPARE(j["non_finite"].size(), size_t(1));
        QCOMPARE(j["non_finite"][0]["nan"].get<int>(), 4);
        const Result text = cli(QStringList{QStringLiteral("run")} + inputsOf("nan_classifier.pt"));
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.find("min 0") == std::string::npos, text.out.c_str());
        QVERIFY2(text.out.find("no finite value") != std::string::npos, text.out.c_str());
        QVERIFY2(text.out.find("Not finite  the output holds 4 NaN") != std::string::npos,
                 text.out.c_str());
    }

    // Every kind of list a method returns, saved and read back by plain torch.load (from PyTorch
    // 2.6 on, its default weights_only=True refuses torch.jit._pickle.build_tensorlist and the
    // like), equal to what the method returns in Python.
    void savedListsLoadInPlainTorchLoad() {
        QTemporaryDir dir;
        for (const char* method : {"forward", "ints", "floats", "bools", "nested"}) {
            const QString saved = dir.filePath(QString::fromLatin1(method) + QStringLiteral(".pt"));
            const Result r =
                cli(QStringList{QStringLiteral("run")} + inputsOf("list_outputs.pt") +
                    QStringList{QStringLiteral("--method"), QString::fromLatin1(method),
                                QStringLiteral("--save-outputs"), saved});
            QVERIFY2(r.exitCode == 0, r.err.c_str());
            QProcess python;
            python.start(
                QStringLiteral(SCRIPTSCOPE_PYTHON),
                {QStringLiteral("-c"),
                 QStringLiteral("import sys, torch\n"
                                "got = torch.load(sys.argv[1])\n"
                                "want = torch.load(sys.argv[2], weights_only=False)\n"
                                "def same(a, b):\n"
                                "    if isinstance(b, torch.Tensor):\n"
                                "        return isinstance(a, torch.Tensor) and torch.equal(a, b)\n"
                                "    if isinstance(b, (list, tuple)):\n"
                                "        return type(a) is list and len(a) == len(b) and "
                                "all(same(x, y) for x, y in zip(a, b))\n"
                                "    if isinstance(b, dict):\n"
                                "        return type(a) is dict and a.keys() == b.keys() and "
                                "all(same(a[k], b[k]) for k in b)\n"
                                "    return type(a) is type(b) and a == b\n"
                                "sys.exit(0 if same(got, want) else 1)\n"),
                 saved, fx((std::string("list_outputs.") + method + ".outputs.pt").c_str())});
            QVERIFY(python.waitForFinished(scriptscope::test::scaled(120000)));
            QVERIFY2(python.exitCode() == 0,
                     qPrintable(QString::fromLatin1(method) + QStringLiteral(": ") +
                                QString::fromUtf8(python.readAllStandardError())));
        }
    }

    // The archive's verdict leads: the Summary line of a damaged archive says DAMAGED, and the
    // damage comes before the records.
    void damagedVerdictComesFirst() {
        const Result r = cli({QStringLiteral("info"), fx("truncated_pickle.pt")});
        const auto summary = r.out.find("Summary     ");
        QVERIFY(summary != std::string::npos);
        const std::string line = r.out.substr(summary, r.out.find('\n', summary) - summary);
        QVERIFY2(line.find("DAMAGED") != std::string::npos &&
                     line.find("data.pkl is damaged") != std::string::npos,
                 line.c_str());
        const auto damaged = r.out.find("DAMAGED     ");
        const auto records = r.out.find("Records     ");
        QVERIFY(damaged != std::string::npos);
        QVERIFY2(records == std::string::npos || damaged < records, r.out.c_str());
    }

    // A .pte cut short: info says what is damaged, as a run does (the segment that ends past the
    // file), in its Summary, its DAMAGED line and its JSON, and exits 1.
    void damagedProgramSaysWhat() {
        const QString cut =
            QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/saved_by/pte/cut_short.pte");
        Result r = cli({QStringLiteral("info"), cut});
        QCOMPARE(r.exitCode, 1);
        const auto summary = r.out.find("Summary     ");
        QVERIFY(summary != std::string::npos);
        const std::string line = r.out.substr(summary, r.out.find('\n', summary) - summary);
        QVERIFY2(line.find("DAMAGED") != std::string::npos, line.c_str());
        QVERIFY2(r.out.find("DAMAGED     ") != std::string::npos &&
                     r.out.find("ends past its") != std::string::npos,
                 r.out.c_str());
        r = cli({QStringLiteral("info"), cut, QStringLiteral("--json")});
        const auto j = nlohmann::json::parse(r.out);
        QVERIFY2(j["damage"].get<std::string>().find("segment") != std::string::npos,
                 r.out.c_str());
    }

    // aten::warn's warn_id counts the warnings a process compiles: two loads of one archive
    // differ there only, and that is no change.
    void warnIdsAreNoChange() {
        const Result r = cli({QStringLiteral("diff"), fx("tuple_classifier.pt"),
                              fx("tuple_classifier_again.pt"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QVERIFY2(j["texts"].empty(), r.out.c_str());
    }
};

QTEST_GUILESS_MAIN(TestWalkthroughCli)
#include "test_walkthrough_cli.moc"
