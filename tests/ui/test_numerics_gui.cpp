// The Numerics workspace through the GUI and the real worker: recording every value finds the
// first NaN where make_numerics.py put it, marks its row, shows it in the graph (node selected,
// its IR line current) and paints the graph by NaN count; the table filters and sorts; a
// comparison with values saved from Python names the module that differs; passes on a copy give
// counts and a side-by-side diff and a copy that is saved and opens; the diff names an added
// module; and none of it shows under the next model. Screenshots of each, light and dark.
#include "gui_test_support.h"
#include "test_support.h"

#include <code_view.h>
#include <comparison_view.h>
#include <graph_diagram.h>
#include <main_window.h>

#include <model_workspace.h>
#include <numerics_panel.h>
#include <plot_style.h>
#include <run_memory_view.h>
#include <run_panel.h>
#include <worker_client.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QToolButton>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStyleFactory>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTreeWidget>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::saveScreenshot;

namespace {

QString fx(const std::string& name) {
    return QString::fromStdString(fixture(name));
}

} // namespace

class TestNumericsGui : public QObject {
    Q_OBJECT

private:
    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;
    NumericsPanel* panel_ = nullptr;

    bool open(const QString& path) { return scriptscope::test::openModel(window_, path); }

    bool record() {
        QSignalSpy shown(panel_, &NumericsPanel::activationsShown);
        QSignalSpy failed(panel_, &NumericsPanel::failedWith);
        panel_->recordActivations();
        const bool answered =
            QTest::qWaitFor([&]() { return !shown.isEmpty() || !failed.isEmpty(); }, 120000);
        if (!failed.isEmpty()) {
            qWarning() << "recording failed:" << failed.first().first().toString();
        }
        return answered && !shown.isEmpty();
    }

    void showNumerics(int tab) {
        window_->showWorkspace(QStringLiteral("numerics"));
        panel_->tabs()->setCurrentIndex(tab);
    }

private Q_SLOTS:
    void initTestCase() {
        window_ = scriptscope::test::openTestWindow(this, &worker_);
        panel_ = window_->numericsPanel();
    }

    void cleanupTestCase() { delete window_; }

    // What the open model lacks is not offered, with why; the next model that has it offers it.
    // A plain .pt2 records its values through the interpreter (on the samples it keeps); its
    // passes are TorchScript's only, and an ExecuTorch program runs only where ExecuTorch does.
    void whatAModelLacksIsNotOffered() {
        QVERIFY(open(QStringLiteral(SCRIPTSCOPE_SOURCE_DIR
                                    "/tests/fixtures/saved_by/pte/cnn_portable.pte")));
        showNumerics(0);
        // Its values are recorded where the build runs ExecuTorch programs; passes never apply.
        QVERIFY(!panel_->applyButton()->isEnabled());
        QVERIFY(!panel_->applyButton()->toolTip().isEmpty());
        if (SCRIPTSCOPE_TEST_EXECUTORCH) {
            QVERIFY(panel_->recordButton()->isEnabled());
        } else {
            QVERIFY(!panel_->recordButton()->isEnabled());
            QVERIFY(!panel_->recordButton()->toolTip().isEmpty());
            QVERIFY(
                panel_->activationStatus()->text().contains(QStringLiteral("Not for this model")));
        }
        QVERIFY(open(QStringLiteral(SCRIPTSCOPE_SOURCE_DIR
                                    "/tests/fixtures/saved_by/exported_cnn.torch2.14.pt2")));
        QVERIFY(!panel_->activationStatus()->text().contains(QStringLiteral("Not for this model")));
        QVERIFY(panel_->recordButton()->isEnabled());
        QVERIFY(!panel_->applyButton()->isEnabled());
        QVERIFY2(
            panel_->applyButton()->toolTip().contains(QStringLiteral("TorchScript archives only")),
            qPrintable(panel_->applyButton()->toolTip()));
        QVERIFY(record());
        const ActivationReport& report = panel_->activationModel()->report();
        QCOMPARE(report.records.size(), size_t(6)); // the input and five nodes
        QCOMPARE(report.records[1].module, std::string("conv"));
        QCOMPARE(report.firstNonFinite, -1);
        QVERIFY(open(fx("nan_nested.pt")));
        QVERIFY(!panel_->activationStatus()->text().contains(QStringLiteral("Not for this model")));
        for (QPushButton* button : {panel_->recordButton(), panel_->applyButton()}) {
            QVERIFY(button->isEnabled());
            QVERIFY(!button->toolTip().contains(QStringLiteral("TorchScript archives only")));
        }
    }

    void firstNaNFoundMarkedAndShownInTheGraph() {
        QVERIFY(open(fx("nan_nested.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("3x4"));
        showNumerics(0);
        QVERIFY(record());
        const ActivationReport& report = panel_->activationModel()->report();
        QVERIFY(report.firstNonFinite >= 0);
        const auto& bad = report.records[static_cast<size_t>(report.firstNonFinite)];
        QCOMPARE(bad.kind, std::string("aten::log"));
        QCOMPARE(bad.module, std::string("body.inner"));
        // The row is current and marked, and the status names it.
        const QModelIndex current =
            panel_->activationProxy()->mapToSource(panel_->activationTable()->currentIndex());
        QCOMPARE(current.row(), report.firstNonFinite);
        QVERIFY(current.data(ActivationTableModel::NonFiniteRole).toBool());
        QVERIFY(current.data(Qt::BackgroundRole).value<QColor>().isValid());
        QVERIFY2(panel_->activationStatus()->text().contains(QStringLiteral("body.inner")),
                 qPrintable(panel_->activationStatus()->text()));
        QTest::qWait(100); // the layout settles first
        saveScreenshot(window_, QStringLiteral("numerics-first-nan"));

        // Only NaN / Inf: every row left is non-finite, the first among them.
        panel_->nonFiniteOnly()->setChecked(true);
        const int rows = panel_->activationProxy()->rowCount();
        QVERIFY(rows > 0 && rows < static_cast<int>(report.records.size()));
        for (int r = 0; r < rows; ++r) {
            QVERIFY(panel_->activationProxy()
                        ->index(r, 0)
                        .data(ActivationTableModel::NonFiniteRole)
                        .toBool());
        }
        panel_->nonFiniteOnly()->setChecked(false);
        // Sorting by NaN count puts the most NaNs first.
        panel_->activationTable()->sortByColumn(ActivationTableModel::NanColumn,
                                                Qt::DescendingOrder);
        const qlonglong top = panel_->activationProxy()
                                  ->index(0, ActivationTableModel::NanColumn)
                                  .data(ActivationTableModel::SortRole)
                                  .toLongLong();
        for (const auto& r : report.records) {
            QVERIFY(r.nanCount <= top);
        }
        panel_->activationTable()->sortByColumn(ActivationTableModel::IndexColumn,
                                                Qt::AscendingOrder);
        // The filter by module.
        panel_->activationFilter()->setText(QStringLiteral("body.inner"));
        for (int r = 0; r < panel_->activationProxy()->rowCount(); ++r) {
            QVERIFY(panel_->activationProxy()
                        ->index(r, ActivationTableModel::ModuleColumn)
                        .data()
                        .toString()
                        .startsWith(QStringLiteral("body.inner")));
        }
        panel_->activationFilter()->clear();

        // Painted by NaN count, then shown in the graph: the Model workspace, the node selected,
        // its IR line current.
        panel_->paintBox()->setCurrentIndex(
            panel_->paintBox()->findData(QStringLiteral("nonfinite")));
        panel_->showRecordInGraph(report.firstNonFinite);
        GraphDiagram* diagram = window_->modelWorkspace()->diagram();
        QVERIFY(QTest::qWaitFor([&]() { return diagram->selectedNode() == bad.node; }, 60000));
        QCOMPARE(window_->workspaces()->currentWidget(),
                 static_cast<QWidget*>(window_->modelWorkspace()));
        QVERIFY(QTest::qWaitFor([&]() { return diagram->picture() && !diagram->layoutPending(); },
                                60000));
        QCOMPARE(diagram->overlayName(), QStringLiteral("NaN + Inf count"));
        QCOMPARE(window_->modelWorkspace()->graphText()->editor()->textCursor().blockNumber() + 1,
                 bad.irLine);
        QTest::qWait(100); // the layout settles first
        saveScreenshot(window_, QStringLiteral("numerics-first-nan-graph"));
    }

    void comparedWithValuesSavedFromPython() {
        QVERIFY(open(fx("stats_model.pt")));
        // Another model: nothing of the last one shows.
        QCOMPARE(panel_->activationModel()->rowCount(), 0);
        QVERIFY(window_->modelWorkspace()->diagram()->overlayName().isEmpty());
        // The input the fixture script ran the eager model on, as one tensor file.
        QTemporaryDir dir;
        const QString input = dir.filePath(QStringLiteral("x.pt"));
        QProcess python;
        python.start(QStringLiteral(SCRIPTSCOPE_PYTHON),
                     {QStringLiteral("-c"),
                      QStringLiteral("import sys, torch; torch.save(torch.load(sys.argv[1])[0], "
                                     "sys.argv[2])"),
                      fx("stats_model.inputs.pt"), input});
        QVERIFY(python.waitForFinished(scriptscope::test::scaled(120000)) &&
                python.exitCode() == 0);
        window_->runPanel()->setInput(0, QStringLiteral("file"), input);
        panel_->setComparison(QStringLiteral("device"), QStringLiteral("cpu"));
        showNumerics(0);
        QVERIFY(record());
        const ActivationReport& report = panel_->activationModel()->report();
        QCOMPARE(report.comparedCount, static_cast<int>(report.records.size()));
        QCOMPARE(report.firstDifference, -1);
        // Python's values: equal; Python's with features.3 changed: features.3 named.
        panel_->setComparison(QStringLiteral("file"), fx("stats_model.activations.pt"));
        QVERIFY(record());
        QCOMPARE(panel_->activationModel()->report().firstDifference, -1);
        QVERIFY(panel_->activationModel()->report().comparedCount >= 9);
        panel_->setComparison(QStringLiteral("file"), fx("stats_model.activations_perturbed.pt"));
        QVERIFY(record());
        const ActivationReport& against = panel_->activationModel()->report();
        QVERIFY(against.firstDifference >= 0);
        QCOMPARE(against.records[static_cast<size_t>(against.firstDifference)].module,
                 std::string("features.3"));
        QVERIFY(panel_->activationStatus()->text().contains(QStringLiteral("the first apart")));
        // The first difference is current, and the histogram shows it.
        const QModelIndex current =
            panel_->activationProxy()->mapToSource(panel_->activationTable()->currentIndex());
        QCOMPARE(current.row(), against.firstDifference);
        panel_->paintBox()->setCurrentIndex(panel_->paintBox()->findData(QStringLiteral("diff")));
        QTest::qWait(100); // the layout settles first
        saveScreenshot(window_, QStringLiteral("numerics-compared"));
    }

    void comparedWithOtherInputs() {
        QVERIFY(open(fx("stats_model.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("ones"), QStringLiteral("1x3x32x32"));
        showNumerics(0);
        // Keep the inputs (as the Compare box's entry does), change them, record.
        QString why;
        const auto kept = window_->runPanel()->buildRequest(&why);
        QVERIFY2(kept, qPrintable(why));
        panel_->keepInputs(*kept);
        panel_->setComparison(QStringLiteral("inputs"), QStringLiteral("ones"));
        window_->runPanel()->setInput(0, QStringLiteral("zeros"), QStringLiteral("1x3x32x32"));
        QVERIFY(record());
        const ActivationReport& report = panel_->activationModel()->report();
        QVERIFY(report.firstDifference >= 0);
        // The first node that differs (the input itself is the change, not its effect).
        QCOMPARE(report.records[static_cast<size_t>(report.firstDifference)].module,
                 std::string("features.0"));
        QVERIFY(report.records.front().compared);
        QVERIFY(report.records.front().maxAbsDiff == 1.0);
    }

    void passesOnACopy() {
        QVERIFY(open(fx("stats_model.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x3x32x32"));
        showNumerics(1);
        QListWidget* passes = panel_->passList();
        for (int i = 0; i < passes->count(); ++i) {
            const QString name = passes->item(i)->data(Qt::UserRole).toString();
            passes->item(i)->setCheckState(name == QLatin1String("freeze") ||
                                                   name == QLatin1String("fold-conv-bn")
                                               ? Qt::Checked
                                               : Qt::Unchecked);
        }
        QSignalSpy shown(panel_, &NumericsPanel::passesShown);
        panel_->applyPasses();
        QVERIFY(QTest::qWaitFor([&]() { return !shown.isEmpty(); }, 120000));
        const OptimizeResult& r = panel_->optimizeResult();
        QVERIFY(r.timed);
        QVERIFY(r.maxAbsDiff < 1e-5);
        QVERIFY(r.nodesAfter < r.nodesBefore);
        QVERIFY(panel_->kindTable()->rowCount() > 0);
        QVERIFY(panel_->passSummary()->text().contains(QStringLiteral("\u00d7")));
        // Side by side: both sides have the same number of lines (aligned).
        QCOMPARE(panel_->graphBefore()->document()->blockCount(),
                 panel_->graphAfter()->document()->blockCount());
        QVERIFY(panel_->graphAfter()->toPlainText().contains(QStringLiteral("weight_fused_bn")));
        QTest::qWait(100); // the layout settles first
        saveScreenshot(window_, QStringLiteral("numerics-passes"));
        // Saved where the person wants it, and it opens as a model.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("frozen.pt"));
        QString why;
        QVERIFY2(panel_->saveOptimisedCopy(path, &why), qPrintable(why));
        QVERIFY(open(path));
        QCOMPARE(panel_->optimizeResult().applied.size(), size_t{0}); // cleared for the new model
        // Off the copy before its folder goes (a deleted open model would be reloaded).
        QVERIFY(open(fx("stats_model.pt")));
    }

    void diffOfArchives() {
        QVERIFY(open(fx("diff_base.pt")));
        showNumerics(2);
        QSignalSpy shown(panel_, &NumericsPanel::diffShown);
        panel_->compareWith(fx("diff_added.pt"));
        QVERIFY(QTest::qWaitFor([&]() { return !shown.isEmpty(); }, 60000));
        const ArchiveDiff& d = panel_->archiveDiff();
        QVERIFY(!d.identical);
        QCOMPARE(d.modules.size(), size_t{1});
        QCOMPARE(d.modules[0].path, std::string("extra"));
        QTreeWidget* tree = panel_->diffTree();
        QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("Modules"));
        QCOMPARE(tree->topLevelItem(0)->child(0)->text(0), QStringLiteral("extra"));
        // The first text change is shown, its added lines marked.
        QVERIFY(panel_->diffText()->toPlainText().contains(QStringLiteral("+ ")));
        QVERIFY(!panel_->diffText()->extraSelections().isEmpty());
        QTest::qWait(100); // the layout settles first
        saveScreenshot(window_, QStringLiteral("numerics-diff"));
        // The same archive: identical.
        shown.clear();
        panel_->compareWith(fx("diff_same.pt"));
        QVERIFY(QTest::qWaitFor([&]() { return !shown.isEmpty(); }, 60000));
        QVERIFY(panel_->archiveDiff().identical);
        QVERIFY(panel_->diffSummary()->text().contains(QStringLiteral("The same")));
        // A file that is not an archive: a message, and the panel still works.
        QSignalSpy failed(panel_, &NumericsPanel::failedWith);
        panel_->compareWith(fx("nan_nested.inputs.pt"));
        QVERIFY(QTest::qWaitFor([&]() { return !failed.isEmpty(); }, 60000));
        QVERIFY(panel_->diffSummary()->text().contains(QStringLiteral("Cannot compare")));
    }

    // The Compare tab: the TorchScript archive against its export, every module output matched
    // and none apart; against a copy whose activation differs, the first divergence is that
    // module, selected in the table and in both models' diagrams side by side on request, each
    // painted by its differences. A node picked in one diagram selects its row and its
    // counterpart in the other.
    void comparedWithAnotherModel() {
        const QString saved = QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/saved_by/");
        QVERIFY(open(saved + QStringLiteral("traced_cnn.torch2.14.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x3x8x8"));
        showNumerics(3);
        ComparisonView* view = panel_->comparisonView();
        QVERIFY(view->chooseButton()->isEnabled());
        QSignalSpy shown(panel_, &NumericsPanel::activationsShown);
        Q_EMIT view->compareRequested(saved + QStringLiteral("exported_cnn.torch2.14.pt2"));
        QVERIFY(shown.wait(120000));
        // The three modules, and the relu and the mean of its own forward by their order.
        QCOMPARE(view->table()->rowCount(), 5);
        QVERIFY2(view->summary()->text().contains(QStringLiteral("matched 3 of its 3")),
                 qPrintable(view->summary()->text()));
        QVERIFY(view->summary()->text().contains(QStringLiteral("No divergence")));
        QVERIFY2(view->verdictLabel()->text().contains(QStringLiteral("The same")),
                 qPrintable(view->verdictLabel()->text()));
        QVERIFY(!view->unmatchedButton()->isVisible());
        QVERIFY(!view->firstDivergenceButton()->isEnabled());
        GraphDiagram* mine = view->diagram(ComparisonView::ThisModel);
        GraphDiagram* theirs = view->diagram(ComparisonView::OtherModel);
        const auto drawn = [&]() {
            return mine->hasGraph() && theirs->hasGraph() && mine->picture() && theirs->picture() &&
                   !mine->layoutPending() && !theirs->layoutPending();
        };
        QTRY_VERIFY_WITH_TIMEOUT(drawn(), scriptscope::test::scaled(60000));
        QCOMPARE(theirs->graph().method, std::string("forward"));
        // Every compared value names the node of the export that made its counterpart.
        const ActivationReport& matched = panel_->activationModel()->report();
        for (const ActivationRecord& r : matched.records) {
            if (!r.comparedWith.empty()) {
                QVERIFY2(r.referenceNode >= 0 &&
                             r.referenceNode < static_cast<int>(theirs->graph().nodes.size()),
                         r.comparedWith.c_str());
            }
        }
        // The export's relu, picked in its diagram: the twin's relu row and node.
        int relu = -1;
        for (const GraphNode& n : theirs->graph().nodes) {
            if (n.kind.find("relu") != std::string::npos) {
                relu = n.id;
            }
        }
        QVERIFY(relu >= 0);
        theirs->selectNode(relu);
        const int picked = view->selectedRecord();
        QVERIFY(picked >= 0);
        const ActivationRecord& twin = matched.records[static_cast<size_t>(picked)];
        QCOMPARE(twin.referenceNode, relu);
        QVERIFY2(twin.kind.find("relu") != std::string::npos, twin.kind.c_str());
        QCOMPARE(mine->selectedNode(), twin.node);
        saveScreenshot(window_, QStringLiteral("numerics-compare-export"));

        QVERIFY(open(fx("diff_base.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x1x8x8"));
        showNumerics(3);
        QCOMPARE(view->table()->rowCount(), 0); // the last model's comparison is gone
        Q_EMIT view->compareRequested(fx("diff_retyped.pt"));
        QVERIFY(shown.wait(120000));
        QVERIFY(view->firstDivergenceButton()->isEnabled());
        QVERIFY2(view->summary()->text().contains(QStringLiteral("First divergence")) &&
                     view->summary()->text().contains(QStringLiteral("act")),
                 qPrintable(view->summary()->text()));
        // The other model's diagram is of diff_retyped.pt now, drawn again.
        QTRY_VERIFY_WITH_TIMEOUT(drawn(), scriptscope::test::scaled(60000));
        QVERIFY(view->diagramKey(ComparisonView::OtherModel).contains(QStringLiteral("retyped")));
        view->goToFirstDivergence();
        const int row = view->table()->currentRow();
        QVERIFY(row >= 0);
        QCOMPARE(view->table()->item(row, ComparisonView::ModuleColumn)->text(),
                 QStringLiteral("act"));
        // Selected in both diagrams, and both painted by the differences from there on.
        const ActivationReport& apart = panel_->activationModel()->report();
        const ActivationRecord& first = apart.records[static_cast<size_t>(apart.firstDifference)];
        QCOMPARE(mine->selectedNode(), first.node);
        QCOMPARE(theirs->selectedNode(), first.referenceNode);
        QCOMPARE(QString::fromStdString(
                     theirs->graph().nodes[static_cast<size_t>(first.referenceNode)].kind),
                 QStringLiteral("aten::tanh")); // diff_retyped.pt's act is a Tanh
        QVERIFY(mine->valueOverlay().nodes.count(first.node));
        QVERIFY(theirs->valueOverlay().nodes.count(first.referenceNode));
        QCOMPARE(theirs->overlayName(), QStringLiteral("max |diff|"));
        for (const ActivationRecord& r : apart.records) { // conv's output: equal, not painted
            if (r.compared && r.node >= 0 && r.maxAbsDiff == 0) {
                QVERIFY(!mine->valueOverlay().nodes.count(r.node));
            }
        }
        showNumerics(3);
        QTRY_VERIFY_WITH_TIMEOUT(drawn(), scriptscope::test::scaled(60000)); // revealed
        saveScreenshot(window_, QStringLiteral("numerics-compare-divergence"));
        const QPalette light = QApplication::palette();
        QApplication::setPalette(scriptscope::test::darkPalette());
        QCOMPARE(view->selectedRecord(), apart.firstDifference); // kept in another theme
        saveScreenshot(window_, QStringLiteral("numerics-compare-divergence-dark"));
        QApplication::setPalette(light);
    }

    // The Compare tab never stays blank: outputs of another structure (the verdict says why,
    // the values inside are still listed), a file that is no model (the reason in the verdict),
    // the other model's unmatched module outputs behind their count.
    void compareSaysWhyItCannot() {
        QVERIFY(open(fx("reuse.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("file"), fx("reuse.tokens.pt"));
        showNumerics(3);
        ComparisonView* view = panel_->comparisonView();
        QSignalSpy shown(panel_, &NumericsPanel::activationsShown);
        Q_EMIT view->compareRequested(fx("reuse_pair.pt"));
        QVERIFY(shown.wait(120000));
        QVERIFY2(view->verdictLabel()->text().contains(QStringLiteral("Could not compare")) &&
                     view->verdictLabel()->text().contains(QStringLiteral("structures differ")),
                 qPrintable(view->verdictLabel()->text()));
        QVERIFY(view->table()->rowCount() > 0);
        QVERIFY(view->summary()->text().contains(QStringLiteral("Outputs not compared")));
        saveScreenshot(window_, QStringLiteral("numerics-compare-cannot"));
        // A file that is no model: refused, and said where the comparison would be.
        QSignalSpy failed(panel_, &NumericsPanel::failedWith);
        Q_EMIT view->compareRequested(
            QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/make_numerics.py"));
        QVERIFY(failed.wait(120000));
        QVERIFY2(view->verdictLabel()->isVisible() || !view->verdictLabel()->isHidden(),
                 "the verdict is shown");
        QVERIFY2(view->verdictLabel()->text().contains(QStringLiteral("Could not compare")),
                 qPrintable(view->verdictLabel()->text()));
        QVERIFY2(view->summary()->text().contains(QStringLiteral("could not be made")),
                 qPrintable(view->summary()->text()));
        QCOMPARE(view->table()->rowCount(), 0);
        // A model with a module more (diff_added.pt's extra): its output waits behind a count,
        // the list opens on request.
        QVERIFY(open(fx("diff_base.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x1x8x8"));
        showNumerics(3);
        Q_EMIT view->compareRequested(fx("diff_added.pt"));
        QVERIFY(shown.wait(120000));
        QVERIFY(!view->unmatchedButton()->isHidden());
        QVERIFY2(view->unmatchedButton()->text().startsWith(QStringLiteral("1 module output")),
                 qPrintable(view->unmatchedButton()->text()));
        QVERIFY(view->unmatchedList()->isHidden());
        view->unmatchedButton()->click();
        QVERIFY(!view->unmatchedList()->isHidden());
        QVERIFY(view->unmatchedList()->toPlainText().contains(QStringLiteral("extra")));
    }

    // An AOTInductor package saved without its program shows no values: compared with another
    // model (here itself) by its outputs and p50s on the same inputs, and the tab says why.
    void comparedByOutputsAlone() {
        const QString package = QStringLiteral(SCRIPTSCOPE_EXPORTED_DIR "/cell_aoti.pt2");
        if (QByteArray(SCRIPTSCOPE_EXPORTED_DIR).isEmpty() || !QFileInfo::exists(package)) {
            QSKIP("no AOTInductor package in this build (the 2.x build compiles one)");
        }
        QVERIFY(open(package));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("3x4"));
        showNumerics(3);
        ComparisonView* view = panel_->comparisonView();
        QVERIFY(!panel_->recordButton()->isEnabled()); // nothing inside it can be seen
        QVERIFY(view->chooseButton()->isEnabled());    // but it runs
        QSignalSpy shown(panel_, &NumericsPanel::activationsShown);
        Q_EMIT view->compareRequested(package);
        QVERIFY(shown.wait(120000));
        const QString summary = view->summary()->text();
        QVERIFY2(summary.contains(QStringLiteral("no node could be matched")) &&
                     summary.contains(QStringLiteral("AOTInductor")) &&
                     summary.contains(QStringLiteral("max |diff| 0,")) &&
                     summary.contains(QStringLiteral("agrees")) &&
                     summary.contains(QStringLiteral("Timing")),
                 qPrintable(summary));
        QCOMPARE(view->table()->rowCount(), 0);
        QVERIFY(!view->firstDivergenceButton()->isEnabled());
        QVERIFY(!view->diagram(ComparisonView::ThisModel)->hasGraph());
        QCOMPARE(panel_->activationModel()->rowCount(), 0);
        saveScreenshot(window_, QStringLiteral("numerics-compare-outputs-only"));
    }

    // The Memory tab: a .pt2's recorded run, the bytes it holds at each step and its peak.
    void memoryOfAProgram() {
        QVERIFY(open(QStringLiteral(SCRIPTSCOPE_SOURCE_DIR
                                    "/tests/fixtures/saved_by/exported_cnn.torch2.14.pt2")));
        showNumerics(0);
        QVERIFY(record());
        showNumerics(4);
        RunMemoryView* view = panel_->memoryView();
        QVERIFY2(view->summary()->text().contains(QStringLiteral("Peak: 2.0 KiB")),
                 qPrintable(view->summary()->text()));
        QCOMPARE(view->plot()->graphCount(), 2);
        QCOMPARE(view->plot()->graph(0)->dataCount(), 5);
        saveScreenshot(window_, QStringLiteral("numerics-memory"));
        const QPalette light = QApplication::palette();
        QApplication::setPalette(scriptscope::test::darkPalette());
        saveScreenshot(window_, QStringLiteral("numerics-memory-dark"));
        QApplication::setPalette(light);
        // A TorchScript run has one too, its storages followed until the interpreter lets them
        // go; nothing of the program's stays.
        QVERIFY(open(fx("profile_net.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("64x512"));
        showNumerics(0);
        QVERIFY(record());
        const QString summary = view->summary()->text();
        QVERIFY2(summary.contains(QStringLiteral("Peak: ")) &&
                     !summary.contains(QStringLiteral("Peak: 2.0 KiB")) &&
                     summary.contains(QStringLiteral("TorchScript's interpreter lets it go")),
                 qPrintable(summary));
        QCOMPARE(view->plot()->graph(0)->dataCount(),
                 int(panel_->activationModel()->report().memory.liveBytes.size()));
        showNumerics(4);
        saveScreenshot(window_, QStringLiteral("numerics-memory-torchscript"));
    }

    void darkTheme() {
        const QPalette light = QApplication::palette();
        QApplication::setPalette(scriptscope::test::darkPalette());
        QVERIFY(open(fx("nan_nested.pt")));
        window_->runPanel()->setInput(0, QStringLiteral("random"), QStringLiteral("3x4"));
        showNumerics(0);
        QVERIFY(record());
        QVERIFY(panel_->activationModel()->rowCount() > 0);
        QVERIFY(panel_->activationModel()->report().firstNonFinite >= 0);
        QTest::qWait(100); // the layout settles first
        saveScreenshot(window_, QStringLiteral("numerics-first-nan-dark"));
        QApplication::setPalette(light);
    }
};

QTEST_MAIN(TestNumericsGui)
#include "test_numerics_gui.moc"
