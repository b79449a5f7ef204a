// The inspector through the real worker, offscreen: the tree, code and graph shown equal what
// PyTorch prints; bad files give the right message and keep the model shown before; a worker crash
// leaves the window intact and the next open works; a re-exported file reloads by itself.
// Saves screenshots of the main views to the build folder (screenshots/), to be looked at.
#include "gui_test_support.h"
#include "test_support.h"

#include <code_view.h>
#include <elided_label.h>
#include <file_formats.h>
#include <graph_diagram.h>
#include <main_window.h>
#include <module_tree_model.h>
#include <process_limits.h>
#include <run_panel.h>
#include <safe_preview.h>
#include <warp_editor.h>
#include <worker_client.h>

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>
#include <QUrl>
#include <QWheelEvent>

#include <functional>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::readText;
using scriptscope::test::saveScreenshot;

namespace {

QString fx(const char* name) {
    return QString::fromStdString(fixture(name));
}

// The menu bar's action whose text, without its mnemonic, is `text`.
QAction* menuAction(const QMainWindow* window, const QString& text) {
    for (QAction* menu : window->menuBar()->actions()) {
        if (!menu->menu()) {
            continue;
        }
        for (QAction* action : menu->menu()->actions()) {
            if (QString(action->text()).remove(QLatin1Char('&')) == text) {
                return action;
            }
        }
    }
    return nullptr;
}

// Whether every module with children is expanded (or, `expanded` false, none is).
bool allExpanded(const QTreeView* tree, bool expanded) {
    std::function<bool(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int r = 0; r < tree->model()->rowCount(parent); ++r) {
            const QModelIndex index = tree->model()->index(r, 0, parent);
            if (tree->model()->rowCount(index) > 0 &&
                (tree->isExpanded(index) != expanded || !walk(index))) {
                return false;
            }
        }
        return true;
    };
    return walk({});
}

// The action of `widget` (not of a menu) that has `keys` as its shortcut.
QAction* shortcutAction(const QWidget* widget, const QKeySequence& keys) {
    for (QAction* action : widget->actions()) {
        if (action->shortcut() == keys) {
            return action;
        }
    }
    return nullptr;
}

} // namespace

class TestGui : public QObject {
    Q_OBJECT

private:
    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;

    bool open(const QString& path, bool expectModel = true) {
        QSignalSpy shown(window_, &MainWindow::modelShown);
        QSignalSpy error(window_, &MainWindow::errorShown);
        window_->openFile(path);
        if (expectModel) {
            return shown.wait(scriptscope::test::scaled(60000)) || !shown.isEmpty();
        }
        return error.wait(scriptscope::test::scaled(60000)) || !error.isEmpty();
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        worker_ = new WorkerClient(this);
        worker_->setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
        window_ = new MainWindow(worker_);
        window_->resize(scriptscope::test::screenshotSize());
        window_->show();
    }

    void cleanupTestCase() { delete window_; }

    // Before any model, the start page says what can be opened: every format, from the formats'
    // one list (as the open dialog's filter).
    void startPageNamesEveryFormat() {
        QString text;
        for (const QLabel* label : window_->findChildren<QLabel*>()) {
            text += label->text();
        }
        for (const scriptscope::FileFormatPatterns& format : scriptscope::modelFileFormats()) {
            QVERIFY2(text.contains(QString::fromStdString(format.one)), format.one.c_str());
            QVERIFY2(text.contains(QString::fromStdString(format.patterns.front())),
                     format.patterns.front().c_str());
        }
        saveScreenshot(window_, QStringLiteral("start-page"));
    }

    void moduleTreeModelIsAProperModel() {
        QSignalSpy shown(window_, &MainWindow::modelShown);
        ModuleTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(open(fx("rich.pt")));
        model.setModel(window_->model());
        QCOMPARE(model.rowCount(), 1);
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(model.rowCount(root), 2);
        const QModelIndex features = model.index(0, 0, root);
        QCOMPARE(features.data(ModuleTreeModel::PathRole).toString(), QStringLiteral("features"));
        QCOMPARE(model.rowCount(features), 4);
        QCOMPARE(model.index(1, ModuleTreeModel::TypeColumn, features).data().toString(),
                 QStringLiteral("BatchNorm2d"));
        QCOMPARE(model.parent(model.index(1, 0, features)), features);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void showsWhatPyTorchPrints() {
        QVERIFY(open(fx("wrap_rnn.pt")));
        const auto expected = nlohmann::json::parse(readText(fixture("wrap_rnn.expected.json")));
        // The tree: every module of named_modules(), in a tree.
        QTreeView* tree = scriptscope::test::moduleTree(window_);
        tree->expandAll();
        const QStringList paths = scriptscope::test::modulePaths(tree);
        QStringList expectedPaths;
        for (const auto& m : expected["modules"]) {
            expectedPaths << QString::fromStdString(m["path"].get<std::string>());
        }
        QCOMPARE(paths, expectedPaths);
        // Code and graph of the selected module.
        window_->selectModule(QStringLiteral("loop.cell"));
        QCOMPARE(scriptscope::test::codeText(window_).toStdString(),
                 expected["code"]["loop.cell:forward"].get<std::string>());
        QCOMPARE(scriptscope::test::graphText(window_).toStdString(),
                 expected["graph"]["loop.cell:forward"].get<std::string>());
        scriptscope::test::inspectorTabs(window_)->setCurrentIndex(1);
        saveScreenshot(window_, QStringLiteral("code-view"));
        scriptscope::test::inspectorTabs(window_)->setCurrentIndex(2);
        saveScreenshot(window_, QStringLiteral("graph-view"));
        scriptscope::test::inspectorTabs(window_)->setCurrentIndex(0);
        saveScreenshot(window_, QStringLiteral("details-view"));
    }

    // An ExecuTorch program in the Model workspace: its methods and delegates as the tree, its
    // instructions as code and graph text, the drawn calls, and the memory plan in a tab that
    // the next model (a TorchScript archive, without one) does not show.
    void opensAnExecuTorchProgram() {
        const QString pte = QStringLiteral(SCRIPTSCOPE_SOURCE_DIR) +
                            QStringLiteral("/tests/fixtures/saved_by/pte/");
        QVERIFY(open(pte + QStringLiteral("cnn_xnnpack.pte")));
        QTreeView* tree = scriptscope::test::moduleTree(window_);
        tree->expandAll();
        QCOMPARE(
            scriptscope::test::modulePaths(tree),
            (QStringList{QString(), QStringLiteral("forward"), QStringLiteral("forward.delegate_0"),
                         QStringLiteral("forward.delegate_1"), QStringLiteral("forward.conv1"),
                         QStringLiteral("forward.conv2"), QStringLiteral("forward.fc")}));
        window_->selectModule(QStringLiteral("forward"));
        QVERIFY(scriptscope::test::codeText(window_).contains(
            QStringLiteral("v1 = delegate::XnnpackBackend(v0, out=v1)")));
        QVERIFY(scriptscope::test::graphText(window_).contains(
            QStringLiteral("1: kernel aten::mean.out [1, 5, 6, 7, 2, 2]")));
        QTabWidget* tabs = scriptscope::test::inspectorTabs(window_);
        const int memoryTab =
            window_->modelWorkspace()->tabNames().indexOf(QStringLiteral("Memory"));
        QVERIFY(memoryTab >= 0);
        QVERIFY(tabs->isTabVisible(memoryTab));
        auto* inlined = scriptscope::test::part<QCheckBox>(window_, "inlinedGraph");
        QVERIFY(!inlined->isEnabled());
        QVERIFY(inlined->toolTip().contains(QStringLiteral("flat list of instructions")));

        tabs->setCurrentIndex(
            window_->modelWorkspace()->tabNames().indexOf(QStringLiteral("Graph")));
        auto* diagram = scriptscope::test::part<GraphDiagram>(window_, "diagram");
        QVERIFY(QTest::qWaitFor(
            [&]() {
                return diagram->hasGraph() && diagram->picture() && !diagram->layoutPending();
            },
            scriptscope::test::scaled(60000)));
        saveScreenshot(window_, QStringLiteral("pte-graph-view"));
        tabs->setCurrentIndex(memoryTab);
        auto* summary = scriptscope::test::part<QLabel>(window_, "memorySummary");
        QVERIFY2(summary->text().startsWith(QStringLiteral("4 planned tensors")),
                 qPrintable(summary->text()));
        saveScreenshot(window_, QStringLiteral("pte-memory-view"));
        const QPalette light = QApplication::palette();
        QApplication::setPalette(scriptscope::test::darkPalette());
        QVERIFY(open(pte + QStringLiteral("two_methods.pte")));
        window_->selectModule(QStringLiteral("forward"));
        tabs->setCurrentIndex(memoryTab);
        saveScreenshot(window_, QStringLiteral("pte-memory-view-dark"));
        tabs->setCurrentIndex(
            window_->modelWorkspace()->tabNames().indexOf(QStringLiteral("Graph")));
        QVERIFY(QTest::qWaitFor(
            [&]() {
                return diagram->hasGraph() && diagram->picture() && !diagram->layoutPending();
            },
            scriptscope::test::scaled(60000)));
        saveScreenshot(window_, QStringLiteral("pte-graph-view-dark"));
        QApplication::setPalette(light);

        // The next model: no Memory tab, and its own inlined graph back.
        QVERIFY(open(fx("rich.pt")));
        QVERIFY(!tabs->isTabVisible(memoryTab));
        QVERIFY(inlined->isEnabled());
        QVERIFY(tabs->currentIndex() != memoryTab);
    }

    void valueHighlighting() {
        // Clicking %x.1 in a graph marks its definition and every use.
        CodeView view(CodeHighlighter::Language::GraphIr);
        const auto expected = nlohmann::json::parse(readText(fixture("compute.expected.json")));
        const QString graph =
            QString::fromStdString(expected["graph"][":forward"].get<std::string>());
        view.setText(graph);
        view.editor()->highlightValue(QStringLiteral("%x.1"));
        const auto selections = view.editor()->extraSelections();
        // %x.1 is a graph input used by two selects and the warp; %x0.1 must not count.
        QCOMPARE(selections.size(), static_cast<int>(graph.count(
                                        QRegularExpression(QStringLiteral(R"(%x\.1(?![\w.]))")))));
        QVERIFY(selections.size() >= 3);
        QCOMPARE(selections.first().format.fontWeight(), int(QFont::Bold)); // the definition
        QVERIFY(view.find(QStringLiteral("my_ops::warp_perspective")));
        QCOMPARE(view.editor()->textCursor().selectedText(),
                 QStringLiteral("my_ops::warp_perspective"));
        QVERIFY(!view.find(QStringLiteral("no such text")));
    }

    void viewModelsAreProperModels() {
        QAbstractItemModelTester details(scriptscope::test::detailsModel(window_),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester records(scriptscope::test::recordsModel(window_),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester operators(scriptscope::test::operatorsModel(window_),
                                           QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(open(fx("rich.pt")));
        window_->selectModule(QStringLiteral("features.1"));
        QVERIFY(open(fx("extra_files.pt")));
        QVERIFY(scriptscope::test::recordsModel(window_)->rowCount() > 5);
        QCOMPARE(scriptscope::test::operatorsModel(window_)->rowCount(), 1);
    }

    void statisticsOnDemand() {
        QVERIFY(open(fx("rich.pt")));
        window_->selectModule(QStringLiteral("features.1")); // BatchNorm2d: 2 parameters, 3 buffers
        QSignalSpy shown(window_, &MainWindow::statisticsShown);
        window_->modelWorkspace()->requestStatistics();
        QVERIFY(shown.wait(scriptscope::test::scaled(30000)));
        const QStandardItem* parameters = scriptscope::test::detailsModel(window_)->item(0);
        QCOMPARE(parameters->rowCount(), 2);
        // BatchNorm2d's weight starts at ones, its bias at zeros.
        QCOMPARE(parameters->child(0, 0)->text(), QStringLiteral("weight"));
        QCOMPARE(parameters->child(0, 4)->text(), QStringLiteral("min 1  max 1  mean 1  std 0"));
        QCOMPARE(parameters->child(1, 4)->text(), QStringLiteral("min 0  max 0  mean 0  std 0"));
        const QStandardItem* buffers = scriptscope::test::detailsModel(window_)->item(1);
        QCOMPARE(buffers->child(1, 0)->text(), QStringLiteral("running_var"));
        QCOMPARE(buffers->child(1, 4)->text(), QStringLiteral("min 1  max 1  mean 1  std 0"));
        scriptscope::test::inspectorTabs(window_)->setCurrentIndex(0);
        saveScreenshot(window_, QStringLiteral("details-statistics"));
    }

    void devicesInTheStatusBar() {
        QVERIFY(open(fx("compute.pt")));
        QVERIFY2(scriptscope::test::runtimeText(window_).startsWith(QStringLiteral("LibTorch ")),
                 qPrintable(scriptscope::test::runtimeText(window_)));
        QVERIFY(scriptscope::test::runtimeText(window_).contains(QStringLiteral("CPU")));
        // Help > About names what the worker was built with, for bug reports.
        const QString about = window_->aboutText();
        QVERIFY2(about.contains(QStringLiteral("LibTorch " SCRIPTSCOPE_TEST_LIBTORCH_VERSION)),
                 qPrintable(about));
        QVERIFY2(about.contains(SCRIPTSCOPE_TEST_CUDA_BUILD
                                    ? QStringLiteral("CUDA: compiled in")
                                    : QStringLiteral("CUDA: not compiled in")),
                 qPrintable(about));
        QVERIFY(about.contains(QStringLiteral("OpenCV 4.")));
        QVERIFY(about.contains(QStringLiteral("Qt 6.")));
    }

    void offersTorchvisionsLibrary() {
        QVERIFY(open(fx("torchvision_nms.pt"), false));
        QVERIFY(scriptscope::test::errorText(window_).contains(QStringLiteral("torchvision::nms")));
        // python3-torchvision is installed here: the window offers its library by name.
        const QString library =
            QString::fromStdString(readText(fixture("torchvision_library.txt")));
        QCOMPARE(scriptscope::test::bannerActionText(window_),
                 QStringLiteral("Load ") + QFileInfo(library).fileName());
    }

    void archiveView() {
        QVERIFY(open(fx("extra_files.pt")));
        scriptscope::test::inspectorTabs(window_)->setCurrentIndex(3);
        saveScreenshot(window_, QStringLiteral("archive-view"));
        scriptscope::test::inspectorTabs(window_)->setCurrentIndex(0);
        QCOMPARE(window_->model().probe.extraFiles.size(), size_t(2));
    }

    void badFilesKeepTheModelShown_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("state_dict")
            << QStringLiteral("state_dict.pt") << QStringLiteral("state_dict");
        QTest::newRow("text") << QStringLiteral("text.pt") << QStringLiteral("text file");
        QTest::newRow("truncated") << QStringLiteral("truncated.pt") << QStringLiteral("truncated");
        QTest::newRow("missing operator")
            << QStringLiteral("missing_op.pt") << QStringLiteral("scriptscope_missing::negate");
        QTest::newRow("newer version")
            << QStringLiteral("version_newer.pt") << QStringLiteral("reads versions up to");
        QTest::newRow("loader crash") << QStringLiteral("crash.pt") << QStringLiteral("crashed");
        const char* const more[][2] = {
            {"missing.pt", "no such file"},
            {".", "a directory"},
            {"empty.pt", "empty file"},
            {"random.bin", "not a TorchScript archive"},
            {"model.onnx", "ONNX"},
            {"plain.zip", "not a PyTorch file"},
            {"two_folders.zip", "one top folder"},
            {"eager_model.pt", "eager model"},
            {"legacy.pt", "legacy"},
            {"mobile_flatbuffer.ptl", "flatbuffer"},
            {"version_text.pt", "not a number"},
            {"version_overflow.pt", "not a number"},
            {"newer_aten_op.pt", "aten::neg_from_the_future"},
            {"no_code.pt", "(code/__torch__.py) is missing"},
            {"no_data.pt", "data/0 is missing"},
            {"bad_code.pt", "code/__torch__.py, line"},
            {"truncated_pickle.pt", "data.pkl is damaged"},
            {"short_tensor_data.pt", "holds 4 bytes"},
            {"stack_underflow.pt", "data.pkl is damaged"},
        };
        for (const auto& c : more) {
            QTest::newRow(c[0]) << QString::fromLatin1(c[0]) << QString::fromLatin1(c[1]);
        }
    }

    void aFailedOpenShowsWhereverThePersonIs() {
        // In the Run workspace, Ctrl+O on a damaged file: the status bar and a banner over the Run
        // workspace say so (the Model workspace's banner is not in view).
        QVERIFY(open(fx("compute.pt")));
        QVERIFY(window_->showWorkspace(QStringLiteral("run")));
        QVERIFY(open(fx("truncated.pt"), false));
        const QString status = window_->statusBar()->currentMessage();
        QVERIFY2(status.startsWith(QStringLiteral("Could not open truncated.pt: ")) &&
                     status.contains(QStringLiteral("truncated")),
                 qPrintable(status));
        // At 1280 px the message is longer than the room: it ends in "…", never mid-word, and the
        // tooltip has all of it.
        QVERIFY2(status.endsWith(QChar(0x2026)), qPrintable(status));
        QVERIFY(window_->statusBar()->toolTip().contains(QStringLiteral("directory is missing")));
        const QString banner = window_->openErrorBannerText();
        QVERIFY2(banner.contains(QStringLiteral("truncated.pt")) &&
                     banner.contains(QStringLiteral("Still showing compute.pt")),
                 qPrintable(banner));
        saveScreenshot(window_, QStringLiteral("run-failed-open"));
        // The Model workspace has its own banner; the next model clears both.
        QVERIFY(window_->showWorkspace(QStringLiteral("model")));
        QVERIFY(window_->openErrorBannerText().isEmpty());
        QVERIFY(window_->showWorkspace(QStringLiteral("run")));
        QVERIFY(open(fx("random.bin"), false));
        QVERIFY(!window_->openErrorBannerText().isEmpty());
        QVERIFY(open(fx("mycell_traced.pt")));
        QVERIFY(window_->openErrorBannerText().isEmpty());
        QVERIFY(window_->statusBar()->currentMessage().isEmpty());
        // A model's notes go with it too: the next model does not show them.
        QVERIFY(open(fx("saved_on_cuda.pt")));
        QVERIFY2(window_->statusBar()->currentMessage().contains(QStringLiteral("saved on")),
                 qPrintable(window_->statusBar()->currentMessage()));
        QVERIFY(open(fx("mycell_traced.pt")));
        QVERIFY2(window_->statusBar()->currentMessage().isEmpty(),
                 qPrintable(window_->statusBar()->currentMessage()));
        QVERIFY(window_->showWorkspace(QStringLiteral("model")));
    }

    // The status bar never cuts a word: a narrow window elides the path in the middle with "…",
    // the tooltip holds the whole text, and a wide one shows it all.
    void statusBarElidesWithATooltip() {
        QVERIFY(open(fx("mycell_scripted.pt")));
        auto* file = window_->findChild<ElidedLabel*>(QStringLiteral("fileStatus"));
        QVERIFY(file);
        QVERIFY(file->fullText().contains(QStringLiteral("mycell_scripted.pt (")));
        const QString whole = file->fullText();
        file->resize(120, file->height());
        QVERIFY2(file->text().contains(QChar(0x2026)), qPrintable(file->text()));
        QVERIFY(file->text().endsWith(QStringLiteral(")")));
        QCOMPARE(file->toolTip(), whole);
        file->resize(file->fontMetrics().horizontalAdvance(whole) + 40, file->height());
        QCOMPARE(file->text(), whole);
        QVERIFY(file->toolTip().isEmpty());
        auto* model = window_->findChild<ElidedLabel*>(QStringLiteral("modelStatus"));
        QVERIFY(model && model->fullText().contains(QStringLiteral("modules")));
        // At 1280 px both have room: the model's summary is on screen, whole.
        QTRY_VERIFY2(
            model->isVisible() && model->text() == model->fullText(),
            qPrintable(QStringLiteral("%1 px: '%2'").arg(model->width()).arg(model->text())));
    }

    void archiveOfANewerPyTorch() {
        // A scripted nn.MultiheadAttention saved by PyTorch 2.14 calls
        // aten::scaled_dot_product_attention: LibTorch 1.13 says what would open it and shows what
        // it can read without running anything; a 2.x build opens it.
        const QString path = QStringLiteral(SCRIPTSCOPE_SOURCE_DIR
                                            "/tests/fixtures/saved_by/attention.torch2.14.pt");
        QSignalSpy preview(window_, &MainWindow::previewShown);
        if (QStringLiteral(SCRIPTSCOPE_TEST_LIBTORCH_VERSION).startsWith(QLatin1String("1."))) {
            QVERIFY(open(path, false));
            const QString error = scriptscope::test::errorText(window_);
            QVERIFY2(error.contains(QStringLiteral("aten::scaled_dot_product_attention")) &&
                         error.contains(QStringLiteral("built on PyTorch \u2265 2.0")),
                     qPrintable(error));
            QTRY_VERIFY_WITH_TIMEOUT(!preview.isEmpty(), scriptscope::test::scaled(60000));
            QVERIFY2(window_->safePreview()
                         ->codeFileNames()
                         .join(QLatin1Char(' '))
                         .contains(QStringLiteral("code/__torch__/")),
                     qPrintable(window_->safePreview()->codeFileNames().join(QLatin1Char(' '))));
            window_->safePreview()->resize(1000, 600);
            saveScreenshot(window_->safePreview(), QStringLiteral("newer-pytorch-preview"));
            window_->safePreview()->close();
        } else {
            QVERIFY(open(path));
            QCOMPARE(window_->model().modules.size(), size_t(3));
        }
    }

    void previewWithoutRunning() {
        // The archive that crashes LibTorch's loader is read without loading it: its code shows.
        QSignalSpy shown(window_, &MainWindow::previewShown);
        window_->previewWithoutRunning(fx("crash.pt"));
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QVERIFY(
            window_->safePreview()->codeFileNames().contains(QStringLiteral("code/__torch__.py")));
        window_->previewWithoutRunning(fx("short_tensor_data.pt"));
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QVERIFY2(window_->safePreview()->summaryText().contains(QStringLiteral("Damaged")),
                 qPrintable(window_->safePreview()->summaryText()));
        QCOMPARE(window_->safePreview()->storagesModel()->rowCount(), 2);
        window_->safePreview()->resize(1000, 600);
        saveScreenshot(window_->safePreview(), QStringLiteral("safe-preview"));
        window_->safePreview()->close();
    }

    void mutatedArchivesEndInAMessage() {
        // A sample of the mutated archives (test_mutations takes all of them through the engine):
        // each ends in the model shown or a message, and the window keeps working.
        const QDir dir(QStringLiteral(SCRIPTSCOPE_FIXTURES_DIR "/mutations"));
        const QStringList names = dir.entryList({QStringLiteral("*.pt")}, QDir::Files, QDir::Name);
        QVERIFY(names.size() >= 300);
        for (int i = 0; i < names.size(); i += 30) {
            QSignalSpy shown(window_, &MainWindow::modelShown);
            QSignalSpy error(window_, &MainWindow::errorShown);
            window_->openFile(dir.filePath(names[i]));
            QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() || !error.isEmpty(),
                                     scriptscope::test::scaled(60000));
            if (!error.isEmpty()) {
                QVERIFY2(!scriptscope::test::errorText(window_).isEmpty(), qPrintable(names[i]));
            }
        }
        QVERIFY(open(fx("mycell_traced.pt")));
    }

    void runErrorsAreShown() {
        // A model that raises: its own message, the model kept.
        QVERIFY(open(fx("raises.pt")));
        RunPanel* panel = window_->runPanel();
        panel->setInput(0, QStringLiteral("ones"), QStringLiteral("2"));
        QSignalSpy failed(panel, &RunPanel::runFailed);
        panel->runOnce();
        QVERIFY(failed.wait(scriptscope::test::scaled(60000)));
        QVERIFY2(panel->statusText().contains(QStringLiteral("refuses this input")),
                 qPrintable(panel->statusText()));
        // A shape the model cannot take: LibTorch's message, then the next run works.
        QVERIFY(open(fx("mycell_traced.pt")));
        panel->setInput(0, QStringLiteral("ones"), QStringLiteral("3x5"));
        panel->setInput(1, QStringLiteral("ones"), QStringLiteral("3x4"));
        panel->runOnce();
        QVERIFY(failed.wait(scriptscope::test::scaled(60000)));
        QSignalSpy shown(panel, &RunPanel::runShown);
        panel->setInput(0, QStringLiteral("ones"), QStringLiteral("3x4"));
        panel->runOnce();
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QVERIFY(window_->currentFile().endsWith(QStringLiteral("mycell_traced.pt")));
    }

    void hardCodedCudaIsExplained() {
        QVERIFY(open(fx("hardcoded_cuda.pt")));
        RunPanel* panel = window_->runPanel();
        panel->setInput(0, QStringLiteral("ones"), QStringLiteral("2"));
        QSignalSpy failed(panel, &RunPanel::runFailed);
        panel->runOnce();
        QVERIFY(failed.wait(scriptscope::test::scaled(60000)));
        QVERIFY2(panel->statusText().contains(QStringLiteral("uses CUDA")),
                 qPrintable(panel->statusText()));
        QVERIFY(window_->currentFile().endsWith(QStringLiteral("hardcoded_cuda.pt")));
    }

    void savedOnCudaShowsANote() {
        QVERIFY(open(fx("saved_on_cuda.pt")));
        QVERIFY(window_->model().probe.notes.size() == 1);
        QVERIFY(QString::fromStdString(window_->model().probe.notes.front())
                    .contains(QStringLiteral("cuda:0")));
    }

    void badFilesKeepTheModelShown() {
        QFETCH(QString, file);
        QFETCH(QString, messagePart);
        QVERIFY(open(fx("compute.pt")));
        const QString shownBefore = window_->currentFile();
        const QString codeBefore = scriptscope::test::codeText(window_);
        QVERIFY(open(QString::fromStdString(fixture(file.toStdString())), false));
        QVERIFY2(scriptscope::test::errorText(window_).contains(messagePart),
                 qPrintable(scriptscope::test::errorText(window_)));
        QCOMPARE(window_->currentFile(), shownBefore);
        QCOMPARE(scriptscope::test::codeText(window_), codeBefore);
        if (file == QStringLiteral("crash.pt")) {
            saveScreenshot(window_, QStringLiteral("worker-crash-message"));
        }
        // The next open works (after a crash, with a new worker).
        QVERIFY(open(fx("mycell_traced.pt")));
        QVERIFY(scriptscope::test::errorText(window_).isEmpty());
    }

    void newWorkerKnowsTheShownModel() {
        // After a crash the next worker has no model; questions about the shown model still work.
        QVERIFY(open(fx("wrap_rnn.pt")));
        QVERIFY(open(fx("crash.pt"), false));
        QSignalSpy text(worker_, &WorkerClient::textReady);
        const quint64 id = worker_->graph(QString(), QStringLiteral("forward"), true);
        QVERIFY(text.wait(scriptscope::test::scaled(60000)));
        QCOMPARE(text.first().at(0).toULongLong(), id);
        const auto expected = nlohmann::json::parse(readText(fixture("wrap_rnn.expected.json")));
        QCOMPARE(text.first().at(1).toString().toStdString(),
                 expected["inlined"].get<std::string>());
    }

    void newerRequestReplacesAQueuedOne() {
        QVERIFY(open(fx("rich.pt")));
        QSignalSpy statistics(worker_, &WorkerClient::statisticsReady);
        QSignalSpy failures(worker_, &WorkerClient::failed);
        worker_->graph(QString(), QStringLiteral("forward"), true); // runs
        worker_->statistics(QStringLiteral("features.0"));          // queued, then replaced
        const quint64 last = worker_->statistics(QStringLiteral("head"));
        QTRY_COMPARE_WITH_TIMEOUT(statistics.size(), 1, scriptscope::test::scaled(60000));
        QCOMPARE(statistics.first().at(0).toULongLong(), last);
        QCOMPARE(failures.size(), 0);
        QTRY_VERIFY(!worker_->busy());
    }

    void recentFiles() {
        QVERIFY(open(fx("decision_gate.pt")));
        QVERIFY(open(fx("mycell_traced.pt")));
        const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
        QCOMPARE(recent.value(0), QFileInfo(fx("mycell_traced.pt")).absoluteFilePath());
        QCOMPARE(recent.value(1), QFileInfo(fx("decision_gate.pt")).absoluteFilePath());
        QCOMPARE(recent.count(recent.value(0)), 1); // no duplicates
    }

    void hangIsStoppedByTheTimeLimit() {
        QVERIFY(open(fx("compute.pt")));
        worker_->setLoadTimeout(3000);
        QVERIFY(open(fx("hang.pt"), false)); // its __setstate__ never returns
        worker_->setLoadTimeout(120000);
        QVERIFY2(scriptscope::test::errorText(window_).contains(
                     QStringLiteral("did not finish within 3 s")),
                 qPrintable(scriptscope::test::errorText(window_)));
        QVERIFY(window_->currentFile().endsWith(QStringLiteral("compute.pt")));
        QVERIFY(open(fx("mycell_traced.pt")));
    }

    void memoryLimit() {
        QVERIFY(open(fx("compute.pt")));
        const qint64 defaultLimit = worker_->memoryLimitMb();
        QVERIFY(defaultLimit > 0); // a share of physical memory by default
        worker_->setMemoryLimitMb(1500);
        worker_->stop();
        QVERIFY(open(fx("hog.pt"), false)); // allocates 64 MiB at a time while loading
        if (scriptscope::memoryLimitKind() != scriptscope::MemoryLimitKind::Sanitizer) {
            // RLIMIT_AS, or (a CUDA build) the resident memory watched: the limit is named.
            QVERIFY2(scriptscope::test::errorText(window_).contains(
                         QStringLiteral("memory limit of 1.5 GiB")),
                     qPrintable(scriptscope::test::errorText(window_)));
        } else {
            // The asan preset: AddressSanitizer ends the worker when `new` fails at the RSS limit.
            QVERIFY2(scriptscope::test::errorText(window_).contains(QStringLiteral("worker")),
                     qPrintable(scriptscope::test::errorText(window_)));
        }
        QVERIFY(window_->currentFile().endsWith(QStringLiteral("compute.pt")));
        worker_->setMemoryLimitMb(defaultLimit);
        worker_->stop();
        QVERIFY(open(fx("mycell_traced.pt")));
    }

    void cancelEndsTheWork() {
        QSignalSpy error(window_, &MainWindow::errorShown);
        window_->openFile(fx("hang.pt"));
        QVERIFY(worker_->busy());
        QTimer::singleShot(500, worker_, &WorkerClient::cancel);
        QVERIFY(error.wait(scriptscope::test::scaled(30000)));
        QVERIFY2(
            scriptscope::test::errorText(window_).startsWith(QStringLiteral("Cancelled loading")),
            qPrintable(scriptscope::test::errorText(window_)));
        QVERIFY(!worker_->busy());
        QVERIFY(open(fx("compute.pt")));
    }

    void expandAndCollapseAll() {
        QVERIFY(open(fx("rich.pt")));
        QTreeView* tree = scriptscope::test::moduleTree(window_);
        QAction* expand = menuAction(window_, QStringLiteral("Expand All"));
        QAction* collapse = menuAction(window_, QStringLiteral("Collapse All"));
        QVERIFY(expand && collapse);
        QCOMPARE(expand->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Plus));
        collapse->trigger();
        QVERIFY(allExpanded(tree, false));
        QVERIFY(!tree->isExpanded(tree->model()->index(0, 0)));
        expand->trigger();
        QVERIFY(allExpanded(tree, true));
        // Every module is in view: features, its four children and head under the root.
        QCOMPARE(scriptscope::test::modulePaths(tree).size(), 7);
        collapse->trigger();
        QVERIFY(allExpanded(tree, false));
        expand->trigger();
    }

    // A 100,000-line text is shown in slices, one per turn of the event loop (the benchmark
    // times them): text() is all of it at once, the cursor stays at the start, and a newer text
    // replaces one still arriving.
    void longTextsArriveInSlices() {
        CodeView view(CodeHighlighter::Language::GraphIr);
        view.resize(600, 400);
        view.show();
        QString text;
        for (int i = 0; i < 100000; ++i) {
            text += QStringLiteral("  %%x.%1 : Tensor = aten::add(%%a.%1, %%b.%1, %%c)\n").arg(i);
        }
        QSignalSpy loaded(&view, &CodeView::textLoaded);
        view.setText(text);
        QVERIFY(!view.loaded());
        QVERIFY(view.editor()->document()->blockCount() < 100000);
        QCOMPARE(view.text(), text);
        // Replaced while it arrives: only the newer text ends up shown.
        view.setText(QStringLiteral("short"));
        QVERIFY(view.loaded());
        QCOMPARE(view.editor()->toPlainText(), QStringLiteral("short"));
        view.setText(text);
        int turns = 0;
        while (!view.loaded()) {
            QCoreApplication::processEvents();
            ++turns;
        }
        QVERIFY(turns > 1);
        QCOMPARE(view.editor()->toPlainText(), text);
        QCOMPARE(view.editor()->textCursor().position(), 0);
        QCOMPARE(loaded.count(), 2);
    }

    void codeZoomAndFindPrevious() {
        QVERIFY(open(fx("rich.pt")));
        window_->selectModule(QString());
        CodeView* code = scriptscope::test::codeView(window_);
        CodeEditor* editor = code->editor();
        const qreal base = editor->font().pointSizeF();
        const int marginBefore = editor->lineNumberAreaWidth();
        QAction* zoomIn = shortcutAction(code, QKeySequence::ZoomIn);
        QAction* zoomOut = shortcutAction(code, QKeySequence::ZoomOut);
        QAction* reset = shortcutAction(code, QKeySequence(Qt::CTRL | Qt::Key_0));
        QVERIFY(zoomIn && zoomOut && reset);
        zoomIn->trigger();
        zoomIn->trigger();
        QVERIFY2(editor->font().pointSizeF() > base, qPrintable(editor->font().toString()));
        // The line numbers grow with the text.
        QVERIFY(editor->lineNumberAreaWidth() > marginBefore);
        zoomOut->trigger();
        QVERIFY(editor->font().pointSizeF() > base);
        reset->trigger();
        QCOMPARE(editor->font().pointSizeF(), base);
        // Ctrl + wheel zooms too; the wheel alone scrolls and keeps the size.
        const QPointF at(20, 20);
        QWheelEvent ctrlWheel(at, editor->viewport()->mapToGlobal(at), {}, {0, 120}, Qt::NoButton,
                              Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(editor->viewport(), &ctrlWheel);
        QVERIFY(editor->font().pointSizeF() > base);
        reset->trigger();
        QWheelEvent wheel(at, editor->viewport()->mapToGlobal(at), {}, {0, -120}, Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(editor->viewport(), &wheel);
        QCOMPARE(editor->font().pointSizeF(), base);
        // Find next then previous: back to the first match.
        QVERIFY(code->find(QStringLiteral("self")));
        QVERIFY(code->find(QStringLiteral("self")));
        QVERIFY(code->findStatus().startsWith(QStringLiteral("2 of ")));
        QVERIFY(code->find(QStringLiteral("self"), true));
        QVERIFY2(code->findStatus().startsWith(QStringLiteral("1 of ")),
                 qPrintable(code->findStatus()));
    }

    void reloadWithF5() {
        QVERIFY(open(fx("wrap_rnn.pt")));
        window_->selectModule(QStringLiteral("loop.cell"));
        QAction* reload = menuAction(window_, QStringLiteral("Reload"));
        QVERIFY(reload);
        QCOMPARE(reload->shortcut(), QKeySequence(QKeySequence::Refresh));
        QSignalSpy shown(window_, &MainWindow::modelShown);
        reload->trigger();
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QCOMPARE(QString::fromStdString(window_->model().path), fx("wrap_rnn.pt"));
        QCOMPARE(scriptscope::test::moduleTree(window_)
                     ->currentIndex()
                     .data(ModuleTreeModel::PathRole)
                     .toString(),
                 QStringLiteral("loop.cell"));
    }

    void dropOpensModelsAndImages() {
        auto drop = [&](const QList<QUrl>& urls) {
            QMimeData data;
            data.setUrls(urls);
            QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &data, Qt::LeftButton,
                                  Qt::NoModifier);
            QApplication::sendEvent(window_, &enter);
            if (!enter.isAccepted()) {
                return false;
            }
            QDropEvent dropped(QPointF(100, 100), Qt::CopyAction, &data, Qt::LeftButton,
                               Qt::NoModifier);
            QApplication::sendEvent(window_, &dropped);
            return dropped.isAccepted();
        };
        QVERIFY(window_->acceptDrops()); // so that a real drag reaches the handlers sent to here
        // A model opens in the Model workspace.
        QSignalSpy shown(window_, &MainWindow::modelShown);
        QVERIFY(drop({QUrl::fromLocalFile(fx("mycell_scripted.pt"))}));
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QCOMPARE(QString::fromStdString(window_->model().path), fx("mycell_scripted.pt"));
        // An image goes to the warp editor, TIFF included.
        QVERIFY(drop({QUrl::fromLocalFile(fx("warp_source.tif"))}));
        QCOMPARE(window_->workspaces()->currentWidget(), window_->warpEditor());
        QCOMPARE(window_->warpEditor()->imagePath(), fx("warp_source.tif"));
        QCOMPARE(window_->warpEditor()->sourceImage().size(), QSize(160, 120));
        // Text without a file is not taken.
        QMimeData text;
        text.setText(QStringLiteral("hello"));
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(window_, &enter);
        QVERIFY(!enter.isAccepted());
        window_->workspaces()->setCurrentIndex(0);
    }

    void reloadsWhenTheFileChanges() {
        QTemporaryDir dir;
        const QString path = dir.path() + QStringLiteral("/model.pt");
        QVERIFY(QFile::copy(fx("mycell_traced.pt"), path));
        QVERIFY(open(path));
        window_->selectModule(QStringLiteral("linear"));
        QCOMPARE(window_->model().modules.size(), size_t(2));
        // Re-export: another model at the same path.
        QSignalSpy shown(window_, &MainWindow::modelShown);
        QFile::remove(path);
        QVERIFY(QFile::copy(fx("mycell_scripted.pt"), path));
        QVERIFY(shown.wait(scriptscope::test::scaled(30000)));
        QCOMPARE(window_->model().modules.size(), size_t(3));
        // The selected module is kept where it still exists.
        QCOMPARE(scriptscope::test::moduleTree(window_)
                     ->currentIndex()
                     .data(ModuleTreeModel::PathRole)
                     .toString(),
                 QStringLiteral("linear"));
    }
};

QTEST_MAIN(TestGui)
#include "test_gui.moc"
