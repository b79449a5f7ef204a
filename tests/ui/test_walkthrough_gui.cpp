// The fourth walkthrough through the window, on a real worker: remembered operator libraries kept
// per LibTorch build, checked, named when they crash, listed and forgotten; outputs drawn as the
// task they are wherever they sit, NaN never shown as a number, image-like outputs drawn; the
// first run a single iteration with Run More; the shortcuts (F1, Esc, Ctrl+=, Ctrl+F in the drawn
// graph); the wheel over the Run panel; notices for reloads and failed opens.
#include "gui_test_support.h"
#include "other_libtorch.h"
#include "test_support.h"

#include <code_view.h>
#include <details_view.h>
#include <frame_player.h>
#include <graph_diagram.h>
#include <help_window.h>
#include <main_window.h>
#include <model_files.h>
#include <numerics_panel.h>
#include <operator_libraries.h>
#include <operator_libraries_dialog.h>
#include <output_panel.h>
#include <output_view.h>
#include <run_panel.h>
#include <timing_plot.h>
#include <worker_client.h>

#include <plot_style.h> // qcustomplot.h, with the keyword macros it needs

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScopeGuard>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::saveScreenshot;
using scriptscope::test::scaled;

namespace {

QString fx(const char* name) {
    return QString::fromStdString(fixture(name));
}

} // namespace

class TestWalkthroughGui : public QObject {
    Q_OBJECT

private:
    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;

    RunPanel* panel() const { return window_->runPanel(); }
    OutputPanel* outputs() const { return panel()->outputs(); }

    bool open(const QString& path) { return test::openModel(window_, path); }

    // One run of the Run workspace's settings; true when its result is shown.
    bool run() {
        QSignalSpy shown(panel(), &RunPanel::runShown);
        QSignalSpy failed(panel(), &RunPanel::runFailed);
        panel()->runOnce();
        if (!QTest::qWaitFor([&]() { return !shown.isEmpty() || !failed.isEmpty(); },
                             scaled(120000))) {
            qWarning() << "the run neither showed nor failed in time";
        }
        if (!failed.isEmpty()) {
            qWarning() << "run failed:" << failed.first().first().toString();
        }
        return !shown.isEmpty();
    }

    // The output tree's index whose path is `path` ("0", "2", "0.1").
    QModelIndex outputAt(const QString& path) const {
        QAbstractItemModel* model = outputs()->outputModel();
        std::function<QModelIndex(const QModelIndex&)> find = [&](const QModelIndex& parent) {
            for (int r = 0; r < model->rowCount(parent); ++r) {
                const QModelIndex i = model->index(r, 0, parent);
                if (i.data(OutputTreeModel::PathRole).toString() == path) {
                    return i;
                }
                if (const QModelIndex found = find(i); found.isValid()) {
                    return found;
                }
            }
            return QModelIndex();
        };
        return find({});
    }

    void selectOutput(const QString& path) {
        auto* tree = outputs()->findChild<QTreeView*>();
        QVERIFY(tree);
        const QModelIndex index = outputAt(path);
        QVERIFY2(index.isValid(), qPrintable(path));
        tree->setCurrentIndex(index);
    }

private Q_SLOTS:
    void init() {
        window_ = test::openTestWindow(this, &worker_);
        QVERIFY(QTest::qWaitForWindowExposed(window_));
    }

    void cleanup() {
        delete window_;
        window_ = nullptr;
        delete worker_;
        worker_ = nullptr;
    }

    // The blocker: a library remembered by the other build (settings shared by both, and the
    // list from before libraries were kept per build) must not keep this build from opening
    // anything. It is refused, named, offered to forget; the other build keeps its own list. In
    // the 2.x build the library is Debian's torchvision, as the user had it.
    void libraryOfTheOtherBuildDoesNotBreakThisOne() {
        const QString other = test::otherLibTorchsLibrary();
        QVERIFY2(QFile::exists(other), qPrintable(other));
        const QString otherKey = operator_libraries::settingsKeyFor(QStringLiteral("0.1.0"));
        QVERIFY(otherKey != operator_libraries::settingsKey());
        {
            QSettings settings;
            settings.setValue(QStringLiteral("operatorLibraries"), QStringList{other});
            settings.setValue(otherKey, QStringList{other});
        }
        QVERIFY(open(fx("compute.pt")));
        QTRY_VERIFY(!window_->libraryBannerText().isEmpty());
        QVERIFY2(
            window_->libraryBannerText().contains(QStringLiteral("built for another LibTorch")) &&
                window_->libraryBannerText().contains(other),
            qPrintable(window_->libraryBannerText()));
        saveScreenshot(window_, QStringLiteral("walkthrough-library-refused"));
        test::part<QPushButton>(window_, "forgetLibrary")->click();
        QVERIFY(window_->libraryBannerText().isEmpty());
        QVERIFY(!operator_libraries::remembered().contains(other));
        QCOMPARE(QSettings().value(otherKey).toStringList(), QStringList{other});
        // Opened again: nothing to refuse now.
        QVERIFY(open(fx("rich.pt")));
        QVERIFY(window_->libraryBannerText().isEmpty());
    }

    // A library that crashes in its own initialiser, which no check can see: the crash is blamed
    // on it, named, and one click forgets it; the model opens after that.
    void crashingLibraryIsNamedAndForgotten() {
        const QString crashing = QStringLiteral(SCRIPTSCOPE_TEST_CRASHING_LIBRARY);
        operator_libraries::remember(crashing);
        QSignalSpy error(window_, &MainWindow::errorShown);
        window_->openFile(fx("compute.pt"));
        QTRY_VERIFY_WITH_TIMEOUT(!error.isEmpty(), scaled(60000));
        const QString message = error.first().first().toString();
        QVERIFY2(message.contains(QStringLiteral("while loading the operator library")) &&
                     message.contains(crashing),
                 qPrintable(message));
        QVERIFY2(!message.contains(QStringLiteral("the archive is damaged")), qPrintable(message));
        QVERIFY(window_->libraryBannerText().contains(crashing));
        saveScreenshot(window_, QStringLiteral("walkthrough-library-crashed"));
        test::part<QPushButton>(window_, "forgetLibrary")->click();
        QVERIFY(operator_libraries::remembered().isEmpty());
        QVERIFY(open(fx("compute.pt")));
    }

    // A format added from outside, by a format library that SCRIPTSCOPE_FORMAT_LIBRARIES names
    // (tests/fixtures/libraries/toy_format.cpp): the worker names it, the File dialogs and the
    // start page offer it, and a toy model opens as its tree and code, with nothing in ui/ naming
    // it.
    void aFormatLibraryAddsAFormat() {
        cleanup();
        qputenv("SCRIPTSCOPE_FORMAT_LIBRARIES", SCRIPTSCOPE_TEST_TOY_FORMAT);
        const auto unset = qScopeGuard([] { qunsetenv("SCRIPTSCOPE_FORMAT_LIBRARIES"); });
        init();
        QTRY_VERIFY_WITH_TIMEOUT(
            modelFileDialogFilter().contains(QStringLiteral(";;Toy models (*.toy);;")),
            scaled(60000));
        QVERIFY2(modelFileDialogFilter().contains(QStringLiteral("*.pte *.toy)")),
                 qPrintable(modelFileDialogFilter()));
        auto* title = test::part<QLabel>(window_, "startTitle");
        QTRY_VERIFY(title->text().contains(QStringLiteral("a toy model (*.toy)")));
        saveScreenshot(window_, QStringLiteral("added-format-start"));
        QVERIFY(open(QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/tests/fixtures/toy/demo.toy")));
        QTreeView* tree = test::moduleTree(window_);
        tree->expandAll();
        QCOMPARE(test::modulePaths(tree),
                 (QStringList{QString(), QStringLiteral("body"), QStringLiteral("head")}));
        window_->selectModule(QString());
        QVERIFY2(test::codeText(window_).contains(QStringLiteral("return self.head(self.body(x))")),
                 qPrintable(test::codeText(window_)));
        saveScreenshot(window_, QStringLiteral("added-format-model"));
    }

    void librariesAreListedAndForgotten() {
        const QString crashing = QStringLiteral(SCRIPTSCOPE_TEST_CRASHING_LIBRARY);
        operator_libraries::remember(crashing);
        operator_libraries::remember(QStringLiteral("/nonexistent/libgone.so"));
        OperatorLibrariesDialog dialog(window_);
        QCOMPARE(dialog.list()->count(), 2);
        QVERIFY(dialog.list()->item(1)->text().contains(QStringLiteral("(missing)")));
        dialog.show();
        saveScreenshot(&dialog, QStringLiteral("walkthrough-operator-libraries"));
        dialog.list()->item(0)->setSelected(true);
        dialog.forgetSelected();
        QVERIFY(dialog.changed());
        QCOMPARE(operator_libraries::remembered(),
                 QStringList{QStringLiteral("/nonexistent/libgone.so")});
        QCOMPARE(dialog.list()->count(), 1);
    }

    // GoogLeNet's (logits, None, None): a classification on the Result page, the ImageNet
    // preset offered, a single first iteration with Run More beside Run.
    void tupleClassifierRunsAsAClassifier() {
        window_->showWorkspace(QStringLiteral("run"));
        QVERIFY(open(fx("tuple_classifier.pt")));
        QVERIFY(panel()->presetHint()->isVisibleTo(panel()));
        QCOMPARE(panel()->iterationsBox()->value(), 1);
        QCOMPARE(panel()->warmupBox()->value(), 0);
        saveScreenshot(window_, QStringLiteral("walkthrough-preset-hint"));
        test::part<QPushButton>(panel(), "usePreset")->click();
        QVERIFY(!panel()->presetHint()->isVisibleTo(panel()));
        QCOMPARE(test::part<QLineEdit>(panel(), "imageSize")->text(), QStringLiteral("224x224"));
        panel()->setInput(0, QStringLiteral("image"), fx("det_a.png"));
        QVERIFY(run());
        QVERIFY2(
            outputs()->taskSummary().startsWith(QStringLiteral("classification: 1000 classes")),
            qPrintable(outputs()->taskSummary()));
        QVERIFY(panel()->runMoreButton()->isVisibleTo(panel()));
        const QStringList overlay = outputs()->resultView()->overlay();
        QVERIFY2(
            overlay.join(QLatin1Char('|')).contains(QStringLiteral("1 iteration after 0 warm-ups")),
            qPrintable(overlay.join(QLatin1Char('|'))));
        saveScreenshot(window_, QStringLiteral("walkthrough-tuple-classifier"));
        QSignalSpy shown(panel(), &RunPanel::runShown);
        panel()->runMoreButton()->click();
        QVERIFY(shown.wait(scaled(120000)));
        QCOMPARE(panel()->lastResult()->samplesMs.size(), size_t{20});
        QVERIFY(!panel()->runMoreButton()->isVisibleTo(panel()));
        // The legend names the model.
        QCustomPlot* plot = panel()->timingPlot()->iterationsPlot();
        QVERIFY(plot->graph(plot->graphCount() - 1)
                    ->name()
                    .contains(QStringLiteral("tuple_classifier.pt")));
    }

    // Four NaN scores: "—" where statistics would be 0, a warning with the way to the first NaN,
    // no classification, and Top-k ranks none of them.
    void nanOutputsAreSaidToBeNaN() {
        window_->showWorkspace(QStringLiteral("run"));
        QVERIFY(open(fx("nan_classifier.pt")));
        panel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x8"));
        QVERIFY(run());
        OutputTreeModel* model = outputs()->outputModel();
        const QModelIndex root = outputAt(QString());
        const QModelIndex row = root.isValid() ? root : model->index(0, 0);
        QCOMPARE(
            model->index(row.row(), OutputTreeModel::MinColumn, row.parent()).data().toString(),
            QStringLiteral("\u2014"));
        QCOMPARE(
            model->index(row.row(), OutputTreeModel::MeanColumn, row.parent()).data().toString(),
            QStringLiteral("\u2014"));
        QVERIFY2(outputs()->nonFiniteWarning().contains(QStringLiteral("4 NaN")),
                 qPrintable(outputs()->nonFiniteWarning()));
        QVERIFY2(
            outputs()->taskSummary().startsWith(QStringLiteral("not drawn as a classification")),
            qPrintable(outputs()->taskSummary()));
        QCOMPARE(outputs()->topKModel()->rowCount(), 0);
        QVERIFY2(outputs()->topKNote().contains(QStringLiteral("NaN")),
                 qPrintable(outputs()->topKNote()));
        saveScreenshot(window_, QStringLiteral("walkthrough-nan"));
        // The warning's button finds where the first NaN was made.
        QSignalSpy recorded(window_->numericsPanel(), &NumericsPanel::activationsShown);
        test::part<QPushButton>(outputs(), "findFirstNonFinite")->click();
        QVERIFY(recorded.wait(scaled(120000)));
        QCOMPARE(window_->workspaces()->currentWidget(), window_->numericsPanel());
        QTRY_VERIFY(window_->numericsPanel()->findChild<QTableView*>(
                        QStringLiteral("activationTable")) != nullptr);
        saveScreenshot(window_, QStringLiteral("walkthrough-nan-first"));
    }

    // Outputs that are images but were not drawn: a segmenter's logits (argmax of its classes),
    // a flow's two channels (the colour wheel), and a reason where nothing can be drawn.
    void imageLikeOutputsAreDrawn() {
        window_->showWorkspace(QStringLiteral("run"));
        QVERIFY(open(fx("dict_segmenter.pt")));
        panel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x3x120x160"));
        QVERIFY(run());
        QVERIFY2(outputs()->taskSummary().startsWith(QStringLiteral("segmentation: 21 classes")),
                 qPrintable(outputs()->taskSummary()));
        selectOutput(QStringLiteral("0"));
        auto* channel = test::part<QComboBox>(outputs(), "imageChannel");
        QCOMPARE(channel->currentData().toString(), QStringLiteral("argmax"));
        QCOMPARE(channel->count(), 1 + 21);
        QCOMPARE(outputs()->imageView()->image().size(), QSize(160, 120));
        QVERIFY(outputs()->imageNote().isEmpty());
        outputs()->pages()->setCurrentIndex(1);
        saveScreenshot(window_, QStringLiteral("walkthrough-segmenter-argmax"));

        QVERIFY(open(fx("flow_model.pt")));
        panel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x3x96x128"));
        panel()->setInput(1, QStringLiteral("random"), QStringLiteral("1x3x96x128"));
        QVERIFY(run());
        QVERIFY2(outputs()->taskSummary().startsWith(QStringLiteral("optical flow: 128x96")),
                 qPrintable(outputs()->taskSummary()));
        saveScreenshot(window_, QStringLiteral("walkthrough-flow-result"));
        selectOutput(QStringLiteral("2"));
        QCOMPARE(channel->currentData().toString(), QStringLiteral("flow"));
        const QImage flow = outputs()->imageView()->image();
        QCOMPARE(flow.size(), QSize(128, 96));
        QVERIFY(flow.pixelColor(0, 0) != flow.pixelColor(127, 95));
        outputs()->pages()->setCurrentIndex(1);
        saveScreenshot(window_, QStringLiteral("walkthrough-flow-image"));

        QVERIFY(open(fx("nan_classifier.pt")));
        panel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x8"));
        QVERIFY(run());
        selectOutput(QString());
        outputs()->pages()->setCurrentIndex(1);
        QVERIFY2(outputs()->imageNote().contains(QStringLiteral("not image-like")),
                 qPrintable(outputs()->imageNote()));
    }

    // Esc cancels the run under way, wherever the focus is.
    void escapeCancels() {
        window_->showWorkspace(QStringLiteral("run"));
        QVERIFY(open(fx("flow_model.pt")));
        panel()->setInput(0, QStringLiteral("random"), QStringLiteral("1x3x96x128"));
        panel()->setInput(1, QStringLiteral("random"), QStringLiteral("1x3x96x128"));
        panel()->iterationsBox()->setValue(100000);
        QSignalSpy failed(panel(), &RunPanel::runFailed);
        panel()->runOnce();
        QTRY_VERIFY(window_->cancelAction()->isEnabled());
        panel()->methodBox()->setFocus();
        QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : window_,
                        Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), scaled(30000));
        QVERIFY2(failed.first().first().toString().startsWith(QStringLiteral("Cancelled")),
                 qPrintable(failed.first().first().toString()));
        QVERIFY(!window_->cancelAction()->isEnabled());
    }

    // F1 opens the shortcuts page, which lists the menus' shortcuts as bound; the README's
    // sections are pages of it.
    void helpShowsTheShortcuts() {
        QTest::keyClick(window_, Qt::Key_F1);
        QTRY_VERIFY(window_->helpWindow() && window_->helpWindow()->isVisible());
        HelpWindow* help = window_->helpWindow();
        QCOMPARE(help->currentPage(), HelpWindow::kShortcutsPage);
        QVERIFY2(help->pageText().contains(
                     QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText)),
                 qPrintable(help->pageText()));
        QVERIFY(help->pageText().contains(QStringLiteral("Cancel the load or run under way")));
        saveScreenshot(help, QStringLiteral("walkthrough-help-shortcuts"));
        QVERIFY(help->pages().contains(QStringLiteral("The CLI")));
        QVERIFY(help->showPage(QStringLiteral("The warp editor")));
        QVERIFY(help->pageText().contains(QStringLiteral("tunes a perspective warp")));
        saveScreenshot(help, QStringLiteral("walkthrough-help-guide"));
    }

    // Ctrl+= zooms the code, as Ctrl++ does; Ctrl+F in the drawn graph goes to its search box,
    // and letters typed over the picture search.
    void codeZoomAndDiagramSearchKeys() {
        QVERIFY(open(fx("rich.pt")));
        auto* code = window_->findChild<CodeView*>(QStringLiteral("code"));
        QVERIFY(code);
        window_->modelWorkspace()->showTab(
            window_->modelWorkspace()->tabNames().indexOf(QStringLiteral("Code")));
        code->editor()->setFocus();
        const qreal before = code->editor()->font().pointSizeF();
        QTest::keyClick(code->editor(), Qt::Key_Equal, Qt::ControlModifier);
        QTRY_VERIFY(code->editor()->font().pointSizeF() > before);

        auto* diagram = window_->modelWorkspace()->diagram();
        QVERIFY(diagram);
        window_->modelWorkspace()->showTab(
            window_->modelWorkspace()->tabNames().indexOf(QStringLiteral("Graph")));
        QWidget* canvas = diagram->canvas();
        canvas->setFocus();
        QTest::keyClick(canvas, Qt::Key_F, Qt::ControlModifier);
        auto* search = test::part<QLineEdit>(diagram, "diagramSearch");
        QTRY_VERIFY(search->hasFocus());
        canvas->setFocus();
        search->clear();
        QTest::keyClicks(canvas, QStringLiteral("li"));
        QCOMPARE(search->text(), QStringLiteral("li"));
    }

    // The wheel over the Run panel changes no control it passes: the Frames combo (which opens
    // a folder dialog) takes the focus from a click, not from the wheel.
    void wheelNeverChoosesAFrameSource() {
        window_->showWorkspace(QStringLiteral("run"));
        QVERIFY(open(fx("compute.pt")));
        QComboBox* sources = panel()->framePlayer()->sourceBox();
        QCOMPARE(sources->focusPolicy(), Qt::StrongFocus);
        for (QComboBox* box : panel()->findChildren<QComboBox*>()) {
            QVERIFY2(box->focusPolicy() != Qt::WheelFocus, qPrintable(box->objectName()));
        }
        window_->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window_));
        const int before = sources->currentIndex();
        QWheelEvent wheel(QPointF(5, 5), sources->mapToGlobal(QPointF(5, 5)), QPoint(),
                          QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(sources, &wheel);
        QVERIFY(!sources->hasFocus());
        QCOMPARE(sources->currentIndex(), before);
    }

    // Compute statistics shows its results in view, however narrow the details pane.
    void statisticsAreScrolledTo() {
        QVERIFY(open(fx("rich.pt")));
        window_->selectModule(QStringLiteral("features.1"));
        auto* details = test::part<QTreeView>(window_, "details");
        QSignalSpy shown(window_, &MainWindow::statisticsShown);
        QPushButton* compute = nullptr;
        for (QPushButton* b : window_->findChildren<QPushButton*>()) {
            if (b->text().remove(QLatin1Char('&')) == QStringLiteral("Compute statistics")) {
                compute = b;
            }
        }
        QVERIFY(compute && compute->isEnabled());
        details->setColumnWidth(0, 400);
        details->setColumnWidth(2, 400);
        compute->click();
        QVERIFY(shown.wait(scaled(60000)));
        const int x = details->header()->sectionViewportPosition(4);
        QVERIFY2(
            x >= 0 && x < details->viewport()->width(),
            qPrintable(
                QStringLiteral("statistics at %1 of %2").arg(x).arg(details->viewport()->width())));
    }

    // A failed open's message goes as the next open starts; a file saved again is reloaded, and
    // the status bar says so.
    void statusSaysWhatHappened() {
        QSignalSpy error(window_, &MainWindow::errorShown);
        window_->openFile(fx("text.pt"));
        QTRY_VERIFY_WITH_TIMEOUT(!error.isEmpty(), scaled(60000));
        QVERIFY(
            window_->statusBar()->currentMessage().startsWith(QStringLiteral("Could not open")));
        window_->openFile(fx("rich.pt"));
        QVERIFY(
            !window_->statusBar()->currentMessage().startsWith(QStringLiteral("Could not open")));
        QTRY_VERIFY_WITH_TIMEOUT(window_->currentFile() == fx("rich.pt"), scaled(60000));

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("model.pt"));
        QVERIFY(QFile::copy(fx("compute.pt"), path));
        QVERIFY(open(path));
        QSignalSpy shown(window_, &MainWindow::modelShown);
        {
            QFile::remove(path);
            QVERIFY(QFile::copy(fx("rich.pt"), path));
        }
        QVERIFY(shown.wait(scaled(60000)));
        QVERIFY2(window_->statusBar()->currentMessage().contains(
                     QStringLiteral("changed on disk and was reloaded")),
                 qPrintable(window_->statusBar()->currentMessage()));
    }

    // In the dark theme, the Run workspace's error text is on the window's own colour, not on a
    // white block.
    void darkThemeErrorText() {
        window_->showWorkspace(QStringLiteral("run"));
        QVERIFY(open(fx("compute.pt")));
        QAction* dark = nullptr;
        for (QAction* action : window_->findChildren<QAction*>()) {
            if (action->text().remove(QLatin1Char('&')) == QStringLiteral("Dark")) {
                dark = action;
            }
        }
        QVERIFY(dark);
        // The error first, in the light theme; then the theme changes under it.
        panel()->setInput(0, QStringLiteral("value"), QStringLiteral("banana"));
        QSignalSpy failed(panel(), &RunPanel::runFailed);
        panel()->runOnce();
        QVERIFY(!failed.isEmpty() || failed.wait(scaled(30000)));
        dark->trigger();
        QLabel* status = nullptr;
        for (QLabel* label : panel()->findChildren<QLabel*>()) {
            if (label->text() == panel()->statusText() && !label->text().isEmpty()) {
                status = label;
            }
        }
        QVERIFY(status);
        QApplication::processEvents();
        const QImage shown = status->parentWidget()->grab().toImage();
        const QColor corner = shown.pixelColor(shown.width() - 2, shown.height() - 2);
        QVERIFY2(corner.lightness() < 100, qPrintable(corner.name()));
        saveScreenshot(window_, QStringLiteral("walkthrough-run-error-dark"));
    }

    // Over the Run workspace, a missing operator's banner offers its library too.
    void runWorkspaceBannerOffersTheLibrary() {
        window_->showWorkspace(QStringLiteral("run"));
        QSignalSpy error(window_, &MainWindow::errorShown);
        window_->openFile(fx("missing_op.pt"));
        QTRY_VERIFY_WITH_TIMEOUT(!error.isEmpty(), scaled(60000));
        QVERIFY(!window_->openErrorBannerText().isEmpty());
        QVERIFY(test::part<QPushButton>(window_, "openBannerLibrary")->isVisibleTo(window_));
        saveScreenshot(window_, QStringLiteral("walkthrough-run-banner"));
    }
};

QTEST_MAIN(TestWalkthroughGui)
#include "test_walkthrough_gui.moc"
