// ExecuTorch programs run through the GUI and the real worker, offscreen (a build with
// ExecuTorch): a run with its timing drawn and its profile per instruction, the diagram coloured
// by each call's time, runs recorded elsewhere (an ETDump) opened over their program, a dump of
// another program refused, and nothing of it left under the next model.
#include "gui_test_support.h"
#include "test_support.h"

#include <comparison_view.h>
#include <graph_diagram.h>
#include <input_table.h>
#include <main_window.h>
#include <model_workspace.h>
#include <numerics_panel.h>
#include <output_models.h>
#include <run_panel.h>
#include <worker_client.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>

using namespace scriptscope;
using scriptscope::test::saveScreenshot;

namespace {

QString built(const char* name) {
    return QStringLiteral(SCRIPTSCOPE_PTE_DIR "/") + QLatin1String(name);
}

} // namespace

class TestExecuTorchGui : public QObject {
    Q_OBJECT

    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;
    RunPanel* panel_ = nullptr;

    bool open(const QString& path) { return scriptscope::test::openModel(window_, path); }

    // Waits for the run the panel sent; false (and the status said) when it failed.
    bool waitForRun(QSignalSpy& shown, QSignalSpy& failed) {
        if (failed.isEmpty()) {
            [&]() {
                QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() || !failed.isEmpty(),
                                         scriptscope::test::scaled(120000));
            }();
        }
        if (!failed.isEmpty()) {
            qWarning() << "run failed:" << panel_->statusText();
        }
        return !shown.isEmpty();
    }

    bool run() {
        QSignalSpy shown(panel_, &RunPanel::runShown);
        QSignalSpy failed(panel_, &RunPanel::runFailed);
        panel_->runOnce();
        return waitForRun(shown, failed);
    }

    GraphDiagram* shownDiagram() {
        window_->workspaces()->setCurrentWidget(window_->modelWorkspace());
        QTabWidget* tabs = scriptscope::test::inspectorTabs(window_);
        tabs->setCurrentIndex(
            window_->modelWorkspace()->tabNames().indexOf(QStringLiteral("Graph")));
        auto* diagram = scriptscope::test::part<GraphDiagram>(window_, "diagram");
        [&]() {
            QTRY_VERIFY_WITH_TIMEOUT(diagram->hasGraph() && diagram->picture() &&
                                         !diagram->layoutPending(),
                                     scriptscope::test::scaled(60000));
        }();
        return diagram;
    }

private Q_SLOTS:
    void initTestCase() {
        if (std::string(SCRIPTSCOPE_PTE_DIR).empty()) {
            QSKIP("this build's Python has no executorch: no programs were made to run");
        }
        window_ = scriptscope::test::openTestWindow(this, &worker_);
        panel_ = window_->runPanel();
    }

    void cleanupTestCase() { delete window_; }

    // A run of the XNNPACK program on the input its plan describes, timed and profiled: the
    // timing names ExecuTorch, the profile has the delegate and its operators.
    void runsAProgramWithItsProfile() {
        QVERIFY(open(built("cnn_xnnpack.pte")));
        window_->workspaces()->setCurrentWidget(panel_);
        QVERIFY(panel_->runButton()->isEnabled());
        auto* openEtdump = scriptscope::test::part<QPushButton>(window_, "openEtdump");
        QVERIFY(openEtdump->isVisible());
        // The plan's input: random, of the shape and dtype the program takes.
        QCOMPARE(panel_->inputTable()->source(0), QStringLiteral("sample"));
        // Images for it are made the size its plan gives (the engine's, not an annotation read).
        QCOMPARE(scriptscope::test::part<QLineEdit>(panel_, "imageSize")->text(),
                 QStringLiteral("32x32"));
        panel_->iterationsBox()->setValue(20);
        panel_->profileBox()->setChecked(true);
        QVERIFY(run());
        const RunResult& result = *panel_->lastResult();
        QVERIFY(result.deviceName.find("ExecuTorch") != std::string::npos);
        QCOMPARE(result.samplesMs.size(), size_t(20));
        QVERIFY(result.inputDescriptions.front().find("f32[1, 3, 32, 32]") != std::string::npos);
        QVERIFY(result.profiled);
        QVERIFY(panel_->profileModel()->rowCount() >= 4);
        QVERIFY(RunPanel::timingOverlay(result).front().contains(QStringLiteral("ExecuTorch")));
        saveScreenshot(window_, QStringLiteral("pte-run"));

        // The diagram: every call coloured by its own time in the profiled run.
        GraphDiagram* diagram = shownDiagram();
        QVERIFY(diagram->hasProfile());
        saveScreenshot(window_, QStringLiteral("pte-profile-diagram"));
        const QPalette light = QApplication::palette();
        QApplication::setPalette(scriptscope::test::darkPalette());
        saveScreenshot(window_, QStringLiteral("pte-profile-diagram-dark"));
        QApplication::setPalette(light);
    }

    // Runs recorded elsewhere: three runs of the portable program, read over it.
    void opensRunsRecordedElsewhere() {
        QVERIFY(open(built("cnn_portable.pte")));
        window_->workspaces()->setCurrentWidget(panel_);
        QSignalSpy shown(panel_, &RunPanel::runShown);
        QSignalSpy failed(panel_, &RunPanel::runFailed);
        panel_->openRecordedRuns(built("cnn_portable.etdp"));
        QVERIFY(waitForRun(shown, failed));
        const RunResult& result = *panel_->lastResult();
        QCOMPARE(result.samplesMs.size(), size_t(3));
        QCOMPARE(result.profile.runs, int64_t(3));
        QCOMPARE(result.device, std::string("recorded"));
        QVERIFY(panel_->profileModel()->rowCount() >= 5);
        saveScreenshot(window_, QStringLiteral("pte-recorded-runs"));

        // A dump of another program is refused, and says so.
        QVERIFY(open(built("two_methods.pte")));
        window_->workspaces()->setCurrentWidget(panel_);
        panel_->methodBox()->setCurrentText(QStringLiteral("encode"));
        QSignalSpy shown2(panel_, &RunPanel::runShown);
        QSignalSpy failed2(panel_, &RunPanel::runFailed);
        panel_->openRecordedRuns(built("cnn_portable.etdp"));
        QVERIFY(!waitForRun(shown2, failed2));
        QVERIFY2(panel_->statusText().contains(QStringLiteral("another program")),
                 qPrintable(panel_->statusText()));
        // And the program still runs after it.
        QVERIFY(run());
        QCOMPARE(panel_->lastResult()->method, std::string("encode"));
    }

    // The int8 XNNPACK copy against the float export it was lowered from, in the Compare tab:
    // matched by the ETRecord beside it, the first divergence at the first quantized delegate's
    // output (the export's relu_1), selected in the table and the diagram.
    void comparesTheQuantizedCopyWithItsExport() {
        QVERIFY(open(built("cnn_int8_xnnpack.pte")));
        NumericsPanel* numerics = window_->numericsPanel();
        window_->showWorkspace(QStringLiteral("numerics"));
        numerics->tabs()->setCurrentIndex(3);
        ComparisonView* view = numerics->comparisonView();
        QVERIFY(view->chooseButton()->isEnabled());
        QSignalSpy shown(numerics, &NumericsPanel::activationsShown);
        Q_EMIT view->compareRequested(built("cnn.pt2"));
        QVERIFY(shown.wait(120000));
        QVERIFY2(view->summary()->text().contains(QStringLiteral("First divergence")) &&
                     view->summary()->text().contains(QStringLiteral("%relu_1")),
                 qPrintable(view->summary()->text()));
        QVERIFY2(view->verdictLabel()->text().contains(QStringLiteral("They differ")),
                 qPrintable(view->verdictLabel()->text()));
        view->goToFirstDivergence();
        const int row = view->table()->currentRow();
        QVERIFY(row >= 0);
        QCOMPARE(view->table()->item(row, ComparisonView::ModuleColumn)->text(),
                 QStringLiteral("%relu_1"));
        // Side by side: the program's first delegate call and the export's relu_1.
        GraphDiagram* program = view->diagram(ComparisonView::ThisModel);
        GraphDiagram* exported = view->diagram(ComparisonView::OtherModel);
        QTRY_VERIFY_WITH_TIMEOUT(program->hasGraph() && exported->hasGraph(),
                                 scriptscope::test::scaled(60000));
        QTRY_COMPARE_WITH_TIMEOUT(program->selectedNode(), 0, scriptscope::test::scaled(10000));
        const int relu1 = exported->selectedNode();
        QVERIFY(relu1 >= 0);
        QCOMPARE(exported->graph().nodes[static_cast<size_t>(relu1)].outputs.front().name,
                 std::string("relu_1"));
        QVERIFY(program->valueOverlay().nodes.count(0)); // painted: an ExecuTorch method's graph
        QTRY_VERIFY_WITH_TIMEOUT(!program->overlayName().isEmpty(),
                                 scriptscope::test::scaled(10000));
        window_->showWorkspace(QStringLiteral("numerics"));
        saveScreenshot(window_, QStringLiteral("pte-compare-quantized"));
        // And in the Model workspace's diagram on a double-click: the first delegate's call.
        Q_EMIT view->showRecord(view->selectedRecord());
        auto* diagram = scriptscope::test::part<GraphDiagram>(window_, "diagram");
        QTRY_VERIFY_WITH_TIMEOUT(diagram->hasGraph() && diagram->picture() &&
                                     !diagram->layoutPending(),
                                 scriptscope::test::scaled(60000));
        QTRY_COMPARE_WITH_TIMEOUT(diagram->selectedNode(), 0, scriptscope::test::scaled(10000));
        // A program has no inlined graph: forward's own, its method named, the box left alone.
        auto* method = scriptscope::test::part<QComboBox>(window_, "graphMethod");
        QCOMPARE(method->currentText(), QStringLiteral("forward"));
        QVERIFY(method->isEnabled());
        QVERIFY(!scriptscope::test::part<QCheckBox>(window_, "inlinedGraph")->isChecked());
        saveScreenshot(window_, QStringLiteral("pte-compare-quantized-diagram"));
        window_->showWorkspace(QStringLiteral("numerics"));
        const QPalette light = QApplication::palette();
        QApplication::setPalette(scriptscope::test::darkPalette());
        saveScreenshot(window_, QStringLiteral("pte-compare-quantized-dark"));
        QApplication::setPalette(light);
    }

    // The next model, a TorchScript archive: no result, no profile, no ETDump button.
    void nothingOfItUnderTheNextModel() {
        QVERIFY(open(QString::fromStdString(scriptscope::test::fixture("mycell_scripted.pt"))));
        QVERIFY(!panel_->lastResult().has_value());
        QCOMPARE(panel_->profileModel()->rowCount(), 0);
        QVERIFY(!scriptscope::test::part<QPushButton>(window_, "openEtdump")->isVisible());
    }
};

QTEST_MAIN(TestExecuTorchGui)
#include "test_executorch_gui.moc"
