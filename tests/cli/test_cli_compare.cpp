// scriptscope-cli compare and diff: the verdicts and their exit statuses (0 the same, 1 they
// differ, 7 could not compare), where they must pass and where they must fail, in text and JSON;
// and what the outputs they compare are: nested as Python returns them, saved so that plain
// torch.load reads them, drawn as their task.
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <string>
#include <utility>
#include <vector>

using scriptscope::test::fixture;
using scriptscope::test::readText;

namespace {

using Result = scriptscope::test::ProgramResult;

using scriptscope::test::cli;
using scriptscope::test::fx;

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

class TestCliCompare : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A model with no module tree, weights or values to match that still runs (an AOTInductor
    // package saved without its program; an ExecuTorch program): diff and compare give what it
    // does have, its outputs and timing on the same inputs, and say that nothing else matched.
    void comparedByOutputsWhereNothingElseMatches() {
        const std::string exported = SCRIPTSCOPE_EXPORTED_DIR;
        if (exported.empty() ||
            !QFile::exists(QString::fromStdString(exported + "/cell_aoti.pt2"))) {
            QSKIP("no AOTInductor package in this build (the 2.x build compiles one)");
        }
        const QString package = QString::fromStdString(exported + "/cell_aoti.pt2");
        const QString inputs = QString::fromStdString(exported + "/cell_aoti.inputs.pt");
        const auto diffed =
            cli({QStringLiteral("diff"), package, package, QStringLiteral("--inputs"), inputs,
                 QStringLiteral("--iterations"), QStringLiteral("3")});
        QVERIFY2(diffed.exitCode == 0, (diffed.out + diffed.err).c_str());
        QVERIFY2(diffed.out.find("Modules     not compared") != std::string::npos &&
                     diffed.out.find("max |diff|          0  max rel          0") !=
                         std::string::npos &&
                     diffed.out.find("Timing      p50") != std::string::npos,
                 diffed.out.c_str());
        const auto compared = cli({QStringLiteral("compare"), package, package,
                                   QStringLiteral("--inputs"), inputs, QStringLiteral("--json")});
        QVERIFY2(compared.exitCode == 0, (compared.out + compared.err).c_str());
        const auto report = nlohmann::json::parse(compared.out);
        QCOMPARE(report["matched_by"].get<std::string>(), std::string("outputs only"));
        QCOMPARE(report["outputs"]["leaves"][0]["max_abs_diff"].get<double>(), 0.0);
        QCOMPARE(report["verdict"].get<std::string>(), std::string("same"));
        QVERIFY(report["nodes_not_matched"].get<std::string>().find("AOTInductor") !=
                std::string::npos);
        // Nothing to run on: said, and not "the same": its own exit status.
        const auto unrun = cli({QStringLiteral("diff"), package, package});
        QCOMPARE(unrun.exitCode, 7);
        QVERIFY2(unrun.out.find("could not compare") != std::string::npos, unrun.out.c_str());
#if SCRIPTSCOPE_TEST_EXECUTORCH
        // A .pte against its export: the outputs of the portable kernels agree, the int8
        // copy's do not.
        const QString pte = QStringLiteral(SCRIPTSCOPE_PTE_DIR "/");
        for (const auto& [name, status] :
             {std::pair<const char*, int>{"cnn_portable.pte", 0}, {"cnn_int8_xnnpack.pte", 1}}) {
            const auto r = cli({QStringLiteral("diff"), pte + QLatin1String(name),
                                pte + QStringLiteral("cnn.pt2"), QStringLiteral("--inputs"),
                                pte + QStringLiteral("inputs.pt")});
            QVERIFY2(r.exitCode == status, (r.out + r.err).c_str());
            QVERIFY2(r.out.find("Outputs     T against T") != std::string::npos &&
                         r.out.find("max |diff|") != std::string::npos,
                     r.out.c_str());
        }
#endif
    }

    void diffExitStatus() {
        auto r = cli({QStringLiteral("diff"), fx("diff_base.pt"), fx("diff_same.pt")});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QVERIFY(r.out.find("The same") != std::string::npos);
        r = cli({QStringLiteral("diff"), fx("diff_base.pt"), fx("diff_weight.pt")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.out.find("fc.weight") != std::string::npos);
        r = cli({QStringLiteral("diff"), fx("diff_base.pt"), fx("diff_added.pt"),
                 QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 1);
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["modules"][0]["path"].get<std::string>(), std::string("extra"));
        QCOMPARE(j["modules"][0]["change"].get<std::string>(), std::string("added"));
        QVERIFY(!j["texts"].empty());
        r = cli({QStringLiteral("diff"), fx("diff_base.pt")});
        QCOMPARE(r.exitCode, 2);
        r = cli(
            {QStringLiteral("diff"), fx("diff_base.pt"), fx("diff_same.pt"), fx("diff_weight.pt")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.find("takes two files") != std::string::npos, r.err.c_str());
        r = cli({QStringLiteral("diff"), fx("diff_base.pt"), fx("no_such_file.pt")});
        QCOMPARE(r.exitCode, 1);
    }

    // compare: two models on the same inputs, to the first module output where they part ways
    // (exit status 1), of any format: a TorchScript archive against its export and back.
    void compareFindsTheFirstDivergence() {
        const QString inputs = fx("diff_base.inputs.pt");
        auto r = cli({QStringLiteral("compare"), fx("diff_base.pt"), fx("diff_retyped.pt"),
                      QStringLiteral("--inputs"), inputs});
        QVERIFY2(r.exitCode == 1, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("First divergence: act") != std::string::npos &&
                     r.out.find("Verdict     they differ") != std::string::npos,
                 r.out.c_str());
        r = cli({QStringLiteral("compare"), fx("diff_base.pt"), fx("diff_same.pt"),
                 QStringLiteral("--inputs"), inputs});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QVERIFY(r.out.find("Verdict     the same") != std::string::npos);
        const std::string saved = std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/";
        const QString twin = QString::fromStdString(saved + "traced_cnn.torch2.14.pt");
        const QString exported = QString::fromStdString(saved + "exported_cnn.torch2.14.pt2");
        // No inputs: both take the samples the .pt2 keeps.
        for (const auto& [a, b] : {std::pair{twin, exported}, std::pair{exported, twin}}) {
            r = cli({QStringLiteral("compare"), a, b, QStringLiteral("--json")});
            QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
            const auto j = nlohmann::json::parse(r.out);
            QCOMPARE(j["matched"].get<int>(), 3);
            QCOMPARE(j["matched_share"].get<double>(), 100.0);
            QVERIFY(j["first_divergence"].is_null());
            // conv, bn and fc, and the relu and the mean of its own forward by their order.
            QCOMPARE(j["operators_matched"].get<int>(), 2);
            QCOMPARE(j["values"].size(), size_t(5));
            QCOMPARE(j["values"][0]["module_outputs"][0].get<std::string>(), std::string("conv"));
            QVERIFY(j["values"][0]["cosine"].get<double>() > 0.999999);
        }
        r = cli({QStringLiteral("compare"), twin});
        QCOMPARE(r.exitCode, 2);
    }

    // Where the verdict must fail and where it must pass: a changed weight differs (exit 1),
    // the model against itself is the same (0), outputs of another structure cannot be compared
    // (7); the criterion is stated, loosened on request, and decides.
    void verdictsAndExitStatuses() {
        const QString reuse = fx("reuse.pt");
        const QString changed = fx("reuse_changed.pt");
        const QString inputs = fx("reuse.inputs.pt");
        auto r = cli({QStringLiteral("compare"), reuse, changed, QStringLiteral("--inputs"), inputs,
                      QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 1, (r.out + r.err).c_str());
        auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["verdict"].get<std::string>(), std::string("differ"));
        QCOMPARE(j["exit_status"].get<int>(), 1);
        QCOMPARE(j["criterion"]["rtol"].get<double>(), 1e-3);
        QCOMPARE(j["criterion"]["min_snr_db"].get<double>(), 40.0);
        QCOMPARE(j["criterion"]["min_cosine"].get<double>(), 0.9999);
        QCOMPARE(j["criterion"]["atol"].get<double>(), 0.0);
        // first_divergence is a row of `values`: mix's output, every row before it agrees.
        const size_t row = j["first_divergence"].get<size_t>();
        QVERIFY2(j["values"][row]["compared_with"].get<std::string>().rfind("mix in ", 0) == 0,
                 r.out.c_str());
        QVERIFY(!j["values"][row]["agrees"].get<bool>());
        for (size_t i = 0; i < row; ++i) {
            QVERIFY2(j["values"][i]["agrees"].get<bool>(),
                     j["values"][i]["compared_with"].get<std::string>().c_str());
        }
        QVERIFY(j["outputs"]["compared"].get<bool>());
        QVERIFY(!j["outputs"]["leaves"][0]["agrees"].get<bool>());
        QVERIFY(j["outputs"]["leaves"][0]["snr_db"].get<double>() < 40);

        r = cli({QStringLiteral("compare"), reuse, reuse, QStringLiteral("--inputs"), inputs});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("Verdict     the same") != std::string::npos, r.out.c_str());

        // (logits, hidden) against logits: nothing is claimed.
        r = cli({QStringLiteral("compare"), fx("reuse_pair.pt"), changed,
                 QStringLiteral("--inputs"), inputs, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 7, (r.out + r.err).c_str());
        j = nlohmann::json::parse(r.out);
        QCOMPARE(j["verdict"].get<std::string>(), std::string("could not compare"));
        QVERIFY(!j["outputs"]["compared"].get<bool>());
        QCOMPARE(j["outputs"]["structure"].get<std::string>(), std::string("(T, T)"));
        r = cli({QStringLiteral("compare"), fx("reuse_pair.pt"), changed,
                 QStringLiteral("--inputs"), inputs});
        QCOMPARE(r.exitCode, 7);
        QVERIFY2(r.out.find("Verdict     could not compare") != std::string::npos, r.out.c_str());

        // The same pair passes when the person says how far is the same: relative bounds, or an
        // absolute floor.
        r = cli({QStringLiteral("compare"), reuse, changed, QStringLiteral("--inputs"), inputs,
                 QStringLiteral("--rtol"), QStringLiteral("10"), QStringLiteral("--min-snr"),
                 QStringLiteral("-100"), QStringLiteral("--min-cosine"), QStringLiteral("-1"),
                 QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["criterion"]["rtol"].get<double>(), 10.0);
        r = cli({QStringLiteral("compare"), reuse, changed, QStringLiteral("--inputs"), inputs,
                 QStringLiteral("--atol"), QStringLiteral("100")});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        r = cli({QStringLiteral("compare"), reuse, changed, QStringLiteral("--inputs"), inputs,
                 QStringLiteral("--min-cosine"), QStringLiteral("2")});
        QCOMPARE(r.exitCode, 2);
    }

    // Every exit status is documented where a user reads it: --help and the man page.
    void exitStatusesAreDocumented() {
        for (const char* command : {"compare", "diff"}) {
            const auto help = cli({QString::fromLatin1(command), QStringLiteral("--help")});
            QCOMPARE(help.exitCode, 0);
            for (const char* words : {"0 the same", "1 they differ", "7 could not compare",
                                      "--rtol", "--min-snr", "--min-cosine", "--atol"}) {
                QVERIFY2(help.out.find(words) != std::string::npos,
                         (std::string(command) + ": " + words).c_str());
            }
        }
        const std::string man =
            readText(std::string(SCRIPTSCOPE_SOURCE_DIR) + "/packaging/scriptscope-cli.1");
        QVERIFY2(man.find("7 could not compare") != std::string::npos, "scriptscope-cli.1");
        QVERIFY2(man.find("\\-\\-min\\-snr") != std::string::npos, "scriptscope-cli.1");
    }

    // ExecuTorch programs (make_pte.py): MobileNetV3's export against its XNNPACK program is the
    // same in both orders, with the same outputs compared; its int8 program differs, in both
    // compare and diff (an absolute 1e-4 once called them "the same outputs"); another network
    // differs; a dict against one tensor cannot be compared.
    void programsInBothOrders() {
        const std::string built = SCRIPTSCOPE_PTE_DIR;
        if (built.empty() || !SCRIPTSCOPE_TEST_EXECUTORCH) {
            QSKIP("the .pte programs are made and run where the build has the pinned executorch");
        }
        const QString image = q(built + "/image.inputs.pt");
        const QString pt2 = q(built + "/mobilenet_v3_small.pt2");
        const QString pte = q(built + "/mobilenet_v3_small_xnnpack.pte");
        const QString int8 = q(built + "/mobilenet_v3_small_int8_xnnpack.pte");
        for (const auto& [a, b] : {std::pair{pt2, pte}, std::pair{pte, pt2}}) {
            const auto r = cli({QStringLiteral("compare"), a, b, QStringLiteral("--inputs"), image,
                                QStringLiteral("--json")});
            QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
            const auto j = nlohmann::json::parse(r.out);
            QCOMPARE(j["outputs"]["leaves"].size(), size_t(1));
            QVERIFY(j["outputs"]["leaves"][0]["agrees"].get<bool>());
        }
        for (const auto& [a, b] : {std::pair{pt2, int8}, std::pair{int8, pt2}}) {
            const auto r = cli({QStringLiteral("compare"), a, b, QStringLiteral("--inputs"), image,
                                QStringLiteral("--json")});
            QVERIFY2(r.exitCode == 1, (r.out + r.err).c_str());
            QVERIFY(!nlohmann::json::parse(r.out)["outputs"]["agrees"].get<bool>());
        }
        auto r = cli({QStringLiteral("diff"), int8, pt2, QStringLiteral("--inputs"), image});
        QVERIFY2(r.exitCode == 1, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("Verdict     they differ") != std::string::npos, r.out.c_str());
        r = cli({QStringLiteral("diff"), pte, pt2, QStringLiteral("--inputs"), image});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        r = cli({QStringLiteral("compare"), pte, q(built + "/shufflenet_v2.pt2"),
                 QStringLiteral("--inputs"), image});
        QVERIFY2(r.exitCode == 1, (r.out + r.err).c_str());
        r = cli({QStringLiteral("compare"), q(built + "/dict_outputs.pt2"), q(built + "/cnn.pt2"),
                 QStringLiteral("--inputs"), q(built + "/inputs.pt")});
        QVERIFY2(r.exitCode == 7, (r.out + r.err).c_str());
        r = cli({QStringLiteral("compare"), q(built + "/dict_outputs.pte"),
                 q(built + "/dict_outputs.pt2"), QStringLiteral("--inputs"),
                 q(built + "/inputs.pt"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["outputs"]["structure"].get<std::string>(),
                 std::string("{'out': T, 'aux': T}"));
    }

    // A segmenter's export returns {'out': ...}: run keeps the dict, --save-outputs writes one
    // that plain torch.load (weights_only) reads equal to ep.module()'s, and the result is drawn as
    // a segmentation.
    void exportsKeepTheirOutputs() {
        const std::string built = SCRIPTSCOPE_EXPORTED_DIR;
        if (built.empty()) {
            QSKIP("the 2.x programs are made where SCRIPTSCOPE_PYTHON has torch.export");
        }
        QTemporaryDir dir;
        const QString saved = dir.filePath(QStringLiteral("out.pt"));
        const auto r = cli({QStringLiteral("run"), q(built + "/deeplabv3.pt2"),
                            QStringLiteral("--inputs"), q(built + "/deeplabv3.inputs.pt"),
                            QStringLiteral("--iterations"), QStringLiteral("1"),
                            QStringLiteral("--save-outputs"), saved, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["output"]["kind"].get<std::string>(), std::string("dict"));
        QCOMPARE(j["interpreted"]["kind"].get<std::string>(), std::string("segmentation"));
        QProcess python;
        python.start(QStringLiteral(SCRIPTSCOPE_PYTHON),
                     {QStringLiteral("-c"),
                      QStringLiteral("import sys, torch\n"
                                     "got = torch.load(sys.argv[1])\n" // weights_only=True
                                     "want = torch.load(sys.argv[2])\n"
                                     "assert type(got) is dict and list(got) == ['out'], got\n"
                                     "assert torch.allclose(got['out'], want[0], 1e-4, 1e-5)\n"),
                      saved, q(built + "/deeplabv3.outputs.pt")});
        QVERIFY(python.waitForFinished(scriptscope::test::scaled(120000)));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
    }

    // Control flow in a .pt2 drawn as blocks of its node, and after a run, what it did: the
    // branch a torch.cond took, how many times a while_loop's body ran (the loop's own count).
    void controlFlowRuns() {
        const std::string saved =
            std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/exported/";
        auto r = cli({QStringLiteral("graph"), q(saved + "my_decision_gate.pt2"),
                      QStringLiteral("--format"), QStringLiteral("json"),
                      QStringLiteral("--expand"), QStringLiteral("all")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        auto g = nlohmann::json::parse(r.out);
        std::vector<std::string> blocks;
        for (const auto& group : g["groups"]) {
            if (group["kind"] == "block") {
                blocks.push_back(group["label"].get<std::string>());
                QCOMPARE(group["module"].get<std::string>(), std::string("dg"));
            }
        }
        QCOMPARE(blocks, (std::vector<std::string>{"true", "false"}));
        r = cli({QStringLiteral("run"), q(saved + "my_decision_gate.pt2"),
                 QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["control_flow"].size(), size_t(1));
        QCOMPARE(j["control_flow"][0]["kind"].get<std::string>(), std::string("cond"));
        QVERIFY(j["control_flow"][0]["graph_node"].get<int>() >= 0);
        // The gate keeps x when its sum is positive: the true branch, as the output's sign says.
        const std::string branch = j["control_flow"][0]["branch"].get<std::string>();
        QVERIFY(branch == "true" || branch == "false");
        r = cli({QStringLiteral("run"), q(saved + "while_loop.pt2"), QStringLiteral("--inputs"),
                 q(saved + "while_loop.inputs.pt"), QStringLiteral("--iterations"),
                 QStringLiteral("1"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        j = nlohmann::json::parse(r.out);
        QCOMPARE(j["control_flow"][0]["kind"].get<std::string>(), std::string("while_loop"));
        // The loop returns its own count of steps first.
        QCOMPARE(j["control_flow"][0]["iterations"].get<int64_t>(),
                 static_cast<int64_t>(j["output"]["items"][0]["preview"][0].get<double>()));
        r = cli({QStringLiteral("run"), q(saved + "while_loop.pt2"), QStringLiteral("--inputs"),
                 q(saved + "while_loop.inputs.pt"), QStringLiteral("--iterations"),
                 QStringLiteral("1")});
        QVERIFY2(r.out.find("Control flow while_loop (while_loop): its body ran") !=
                     std::string::npos,
                 r.out.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCliCompare)
#include "test_cli_compare.moc"
