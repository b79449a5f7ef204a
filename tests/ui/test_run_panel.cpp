// The run workspace through the real worker, offscreen: inputs from the demo's schema (its image
// and the warp editor's matrix), a run whose outputs equal the CLI's for the same inputs, the
// timing overlay and plots, a profile that fills the module tree, the kept-result comparison, Live
// and continuous runs, schema mismatches named before running, and the device list's reason for
// having no CUDA. Every model is checked with QAbstractItemModelTester. Saves screenshots.
#include "gui_test_support.h"
#include "test_support.h"

#include <input_table.h>
#include <label_picker.h>
#include <main_window.h>
#include <matrix_io.h>
#include <module_tree_model.h>
#include <output_models.h>
#include <output_panel.h>
#include <output_view.h>
#include <run_panel.h>
#include <schema.h>
#include <stats.h>
#include <timing_plot.h>
#include <warp_editor.h>
#include <wheel_guard.h>
#include <worker_client.h>

#include <nlohmann/json.hpp>
#include <plot_style.h> // qcustomplot.h, with the keyword macros it needs

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QWheelEvent>

#include <algorithm>
#include <limits>

using namespace scriptscope;
using scriptscope::test::cudaExpected;
using scriptscope::test::saveScreenshot;

Q_DECLARE_METATYPE(std::vector<scriptscope::SchemaArgument>)

namespace {

const QString kResources = QStringLiteral(SCRIPTSCOPE_RESOURCES_DIR);

} // namespace

class TestRunPanel : public QObject {
    Q_OBJECT

private:
    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;
    RunPanel* panel_ = nullptr;

    bool runAndWait(int timeoutMs = 120000) {
        QSignalSpy shown(panel_, &RunPanel::runShown);
        QSignalSpy failed(panel_, &RunPanel::runFailed);
        panel_->runOnce();
        if (!failed.isEmpty()) {
            qWarning() << "run refused:" << panel_->statusText();
            return false;
        }
        // Returns as soon as either signal came (the worker answers), not after a fixed wait.
        const bool answered =
            QTest::qWaitFor([&]() { return !shown.isEmpty() || !failed.isEmpty(); }, timeoutMs);
        if (!answered) {
            qWarning() << "no answer in" << timeoutMs << "ms:" << panel_->statusText();
        }
        if (!failed.isEmpty()) {
            qWarning() << "run failed:" << panel_->statusText();
        }
        return !shown.isEmpty();
    }

private Q_SLOTS:
    void schemaArguments_data() {
        QTest::addColumn<QString>("schema");
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QStringList>("types");
        QTest::newRow("demo") << QStringLiteral("forward(__torch__.DocumentClassifier self, Tensor "
                                                "image, Tensor warp) -> ((Tensor, Tensor))")
                              << QStringList{QStringLiteral("image"), QStringLiteral("warp")}
                              << QStringList{QStringLiteral("Tensor"), QStringLiteral("Tensor")};
        QTest::newRow("defaults and nesting")
            << QStringLiteral("f(__torch__.M self, Dict[str, Tensor] d, int k=5, float[] w=[1., "
                              "2.], str s=\"a,b\") -> Tensor")
            << QStringList{QStringLiteral("d"), QStringLiteral("k"), QStringLiteral("w"),
                           QStringLiteral("s")}
            << QStringList{QStringLiteral("Dict[str, Tensor]"), QStringLiteral("int"),
                           QStringLiteral("float[]"), QStringLiteral("str")};
        QTest::newRow("no self") << QStringLiteral("compute(Tensor x, Tensor y) -> Tensor")
                                 << QStringList{QStringLiteral("x"), QStringLiteral("y")}
                                 << QStringList{QStringLiteral("Tensor"), QStringLiteral("Tensor")};
        QTest::newRow("no arguments")
            << QStringLiteral("forward(__torch__.M self) -> int") << QStringList{} << QStringList{};
        QTest::newRow("broken") << QStringLiteral("forward(") << QStringList{} << QStringList{};
    }
    void schemaArguments() {
        QFETCH(QString, schema);
        QFETCH(QStringList, names);
        QFETCH(QStringList, types);
        const auto arguments = scriptscope::schemaArguments(schema.toStdString());
        QCOMPARE(static_cast<int>(arguments.size()), names.size());
        for (int i = 0; i < names.size(); ++i) {
            QCOMPARE(QString::fromStdString(arguments[static_cast<size_t>(i)].name), names[i]);
            QCOMPARE(QString::fromStdString(arguments[static_cast<size_t>(i)].type), types[i]);
        }
        if (names.size() == 4) {
            QVERIFY(arguments[1].hasDefault);
            QCOMPARE(arguments[1].defaultValue, std::string("5"));
            QCOMPARE(arguments[3].defaultValue, std::string("\"a,b\""));
            const TypeShape floats = parseTypeShape(arguments[2].type);
            QCOMPARE(floats.kind, TypeShape::Kind::List);
            QCOMPARE(floats.elements.front().kind, TypeShape::Kind::Float);
        }
    }

    void typeShapes_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("structure");
        // Both spellings LibTorch uses: schema text and annotations.
        QTest::newRow("tensor") << QStringLiteral("Tensor") << QStringLiteral("T");
        QTest::newRow("schema list") << QStringLiteral("Tensor[]") << QStringLiteral("L(T)");
        QTest::newRow("annotation list")
            << QStringLiteral("List[Tensor]") << QStringLiteral("L(T)");
        QTest::newRow("sized list") << QStringLiteral("int[2]") << QStringLiteral("L(i)");
        QTest::newRow("optional") << QStringLiteral("Tensor?") << QStringLiteral("O(T)");
        QTest::newRow("optional annotation")
            << QStringLiteral("Optional[List[float]]") << QStringLiteral("O(L(f))");
        QTest::newRow("detector targets")
            << QStringLiteral("Dict(str, Tensor)[]?") << QStringLiteral("O(L(D(s,T)))");
        QTest::newRow("dict annotation")
            << QStringLiteral("Dict[str, List[int]]") << QStringLiteral("D(s,L(i))");
        QTest::newRow("schema tuple") << QStringLiteral("(int, float)") << QStringLiteral("U(i,f)");
        QTest::newRow("tuple annotation")
            << QStringLiteral("Tuple[Tensor, Tuple[bool, str]]") << QStringLiteral("U(T,U(b,s))");
        QTest::newRow("class") << QStringLiteral("__torch__.Point") << QStringLiteral("?");
        QTest::newRow("empty") << QString() << QStringLiteral("?");
    }
    void typeShapes() {
        QFETCH(QString, type);
        QFETCH(QString, structure);
        std::function<QString(const TypeShape&)> show = [&](const TypeShape& t) {
            static const char* const letters = "TifbsLUDO?";
            QString text(QLatin1Char(letters[static_cast<int>(t.kind)]));
            if (!t.elements.empty()) {
                QStringList inner;
                for (const auto& e : t.elements) {
                    inner << show(e);
                }
                text += QLatin1Char('(') + inner.join(QLatin1Char(',')) + QLatin1Char(')');
            }
            return text;
        };
        QCOMPARE(show(parseTypeShape(type.toStdString())), structure);
    }

    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        qputenv("SCRIPTSCOPE_TEST_SECRET", "hunter2"); // must not reach the worker
        QFile::remove(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                      QStringLiteral("/kept-result.cbor"));
        worker_ = new WorkerClient(this);
        worker_->setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
        window_ = new MainWindow(worker_);
        window_->resize(1500, 950);
        window_->restoreWarpSession(kResources + QStringLiteral("/demo.png"));
        window_->show();
        QSignalSpy shown(window_, &MainWindow::modelShown);
        window_->openFile(kResources + QStringLiteral("/demo_model.pt"));
        QVERIFY(shown.wait(scriptscope::test::scaled(120000)));
        panel_ = window_->runPanel();
        window_->workspaces()->setCurrentWidget(panel_);
        // The demo's warp, as a person would load it in the warp editor; the demo's classify_page
        // rectifies with it (forward finds the page's corners itself: test_frames_gui).
        QVERIFY(window_->warpEditor()->loadMatrix(kResources + QStringLiteral("/demo_warp.npy")));
        panel_->methodBox()->setCurrentIndex(
            panel_->methodBox()->findText(QStringLiteral("classify_page")));
    }

    void cleanupTestCase() { delete window_; }

    void workerIsSandboxed() {
        // The status bar marks archives as untrusted code and says what the worker may not do.
        QTRY_VERIFY_WITH_TIMEOUT(scriptscope::test::sandboxText(window_).startsWith(
                                     QStringLiteral("Untrusted code · sandboxed")),
                                 30000);
        QVERIFY(scriptscope::test::sandboxText(window_).contains(QStringLiteral("no network")));
        // The worker's environment has none of the GUI's secrets; HOME is its scratch folder.
        const qint64 pid = worker_->workerProcessId();
        QVERIFY(pid > 0);
        QFile environment(QStringLiteral("/proc/%1/environ").arg(pid));
        QVERIFY(environment.open(QIODevice::ReadOnly));
        const QList<QByteArray> variables = environment.readAll().split('\0');
        bool scratchHome = false;
        for (const QByteArray& variable : variables) {
            QVERIFY2(!variable.startsWith("SCRIPTSCOPE_TEST_SECRET="), variable.constData());
            scratchHome = scratchHome || (variable.startsWith("HOME=") &&
                                          variable.contains("scriptscope-worker-"));
        }
        QVERIFY(scratchHome);
    }

    void inputsFollowTheSchema() {
        // The demo's forward takes the photo (and finds the page itself); classify_page takes
        // the photo and a warp: the warp editor's.
        auto source = [&](int row) {
            return qobject_cast<QComboBox*>(panel_->inputsTable()->cellWidget(row, 2))
                ->currentData()
                .toString();
        };
        auto choose = [&](const char* method) {
            panel_->methodBox()->setCurrentIndex(
                panel_->methodBox()->findText(QLatin1String(method)));
        };
        QCOMPARE(panel_->methodBox()->currentText(), QStringLiteral("classify_page"));
        choose("forward");
        QCOMPARE(panel_->inputsTable()->rowCount(), 1);
        QCOMPARE(source(0), QStringLiteral("image"));
        QVERIFY(panel_->methodBox()->findText(QStringLiteral("kind_name")) >= 0);
        choose("classify_page");
        QCOMPARE(panel_->inputsTable()->rowCount(), 2);
        QCOMPARE(source(0), QStringLiteral("image"));
        QCOMPARE(source(1), QStringLiteral("warp"));
        // Another method gets its own rows.
        choose("kind_name");
        QCOMPARE(panel_->inputsTable()->rowCount(), 1);
        QCOMPARE(source(0), QStringLiteral("value"));
        choose("classify_page");
        QCOMPARE(panel_->inputsTable()->rowCount(), 2);
    }

    void wheelOverAnUnfocusedControlChangesNothing() {
        // Scrolling the Run panel over the input table must not change a row's source.
        auto wheel = [](QWidget* target) {
            QWheelEvent event(QPointF(5, 5), target->mapToGlobal(QPointF(5, 5)), QPoint(),
                              QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                              false);
            QApplication::sendEvent(target, &event);
        };
        auto* combo = qobject_cast<QComboBox*>(
            panel_->inputsTable()->cellWidget(panel_->inputsTable()->rowCount() - 1, 2));
        QVERIFY(combo && combo->count() > 1);
        combo->clearFocus();
        QCOMPARE(scriptscope::WheelGuard::guardedControl(combo), combo);
        const int before = combo->currentIndex();
        const int argument = panel_->inputTable()->arguments().size() > 1 ? 1 : 0;
        const QString sources = panel_->inputTable()->source(argument);
        wheel(combo);
        wheel(combo);
        QCOMPARE(combo->currentIndex(), before);
        QCOMPARE(panel_->inputTable()->source(argument), sources);
        // The same wheel event does change a combo box outside a scroll area (a toolbar's): the
        // guard, not the event, is what keeps the row as it was.
        QComboBox free;
        free.addItems({QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")});
        free.show();
        QVERIFY(!scriptscope::WheelGuard::guardedControl(&free));
        wheel(&free);
        QVERIFY(free.currentIndex() != 0);
    }

    void deviceListIsHonestAboutCuda() {
        QTRY_VERIFY_WITH_TIMEOUT(panel_->deviceBox()->count() >= 2,
                                 scriptscope::test::scaled(30000));
        QCOMPARE(panel_->deviceBox()->itemData(0).toString(), QStringLiteral("cpu"));
        auto* model = qobject_cast<QStandardItemModel*>(panel_->deviceBox()->model());
        QVERIFY(model->item(0)->isEnabled());
        const QString id = panel_->deviceBox()->itemData(1).toString();
        const QString label = panel_->deviceBox()->itemText(1);
        if (!cudaExpected()) {
            // No CUDA here: the entry is there, disabled, and the note and tooltip say why.
            QCOMPARE(id, QStringLiteral("cuda"));
            QVERIFY(!model->item(1)->isEnabled());
            const QString reason = panel_->deviceBox()->itemData(1, Qt::ToolTipRole).toString();
            QVERIFY2(reason.size() > 20, qPrintable(reason));
            QVERIFY2(panel_->deviceNote().contains(reason), qPrintable(panel_->deviceNote()));
            return;
        }
        // CUDA here: cuda:0 is selectable and named with its memory; a run on it equals the
        // CPU's and says that its timing was synchronized.
        QCOMPARE(id, QStringLiteral("cuda:0"));
        QVERIFY(model->item(1)->isEnabled());
        QVERIFY2(label.contains(QStringLiteral(" GiB")), qPrintable(label));
        QVERIFY(panel_->deviceNote().isEmpty());
        panel_->iterationsBox()->setValue(3);
        QVERIFY(runAndWait());
        const RunResult onCpu = *panel_->lastResult();
        panel_->deviceBox()->setCurrentIndex(1);
        QVERIFY(runAndWait());
        const RunResult onCuda = *panel_->lastResult();
        QCOMPARE(QString::fromStdString(onCuda.device), QStringLiteral("cuda:0"));
        QVERIFY(onCuda.synchronized && !onCpu.synchronized);
        QVERIFY(panel_->imageView()
                    ->overlay()
                    .join(QLatin1Char(' '))
                    .contains(QStringLiteral("synchronized")));
        const auto& a = onCpu.output.children.at(1).preview;
        const auto& b = onCuda.output.children.at(1).preview;
        QCOMPARE(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            QVERIFY(std::abs(a[i] - b[i]) < 1e-4);
        }
        panel_->deviceBox()->setCurrentIndex(0);
    }

    void mismatchIsNamedBeforeRunning() {
        panel_->setInput(1, QStringLiteral("value"), QStringLiteral("3"));
        QSignalSpy failed(panel_, &RunPanel::runFailed);
        panel_->runOnce();
        QCOMPARE(failed.count(), 1);
        QVERIFY2(panel_->statusText().contains(QStringLiteral("'warp'")),
                 qPrintable(panel_->statusText()));
        panel_->setInput(1, QStringLiteral("random"), QStringLiteral("2x2x2x2x"));
        panel_->runOnce();
        QVERIFY(panel_->statusText().contains(QStringLiteral("'warp'")));
        // A shape the worker refuses (the warp must be 3x3) comes back with the operator's words.
        panel_->setInput(1, QStringLiteral("random"), QStringLiteral("4x4"));
        QVERIFY(!runAndWait());
        QVERIFY2(panel_->statusText().contains(QStringLiteral("3x3")),
                 qPrintable(panel_->statusText()));
        panel_->setInput(1, QStringLiteral("warp"));
    }

    void runShowsOutputsTimingAndProfile() {
        panel_->iterationsBox()->setValue(6);
        panel_->warmupBox()->setValue(1);
        panel_->profileBox()->setChecked(true);
        QVERIFY(runAndWait());
        const RunResult& result = *panel_->lastResult();
        QCOMPARE(result.samplesMs.size(), size_t(6));
        QCOMPARE(panel_->historyModel()->rowCount(), 1);
        // The demo returns (page, probabilities): the page is drawn as an image.
        QCOMPARE(panel_->outputModel()->rowCount(), 2);
        QCOMPARE(panel_->imageView()->image().size(), QSize(200, 280));
        QVERIFY(panel_->imageView()->overlayVisible());
        QVERIFY(
            panel_->imageView()->overlay().join(QLatin1Char(' ')).contains(QStringLiteral("p50")));
        // The overlay is in the exported view.
        const QImage withOverlay = panel_->imageView()->render();
        panel_->imageView()->setOverlayVisible(false);
        QVERIFY(panel_->imageView()->render() != withOverlay);
        panel_->imageView()->setOverlayVisible(true);
        // The profile reached the module tree: shares of the root's children add up.
        QVERIFY(result.profiled);
        QVERIFY(panel_->profileModel()->rowCount() > 0);
        auto* tree = scriptscope::test::moduleTree(window_);
        auto* model = tree->model();
        const QModelIndex root = model->index(0, ModuleTreeModel::TimeColumn);
        QVERIFY(std::abs(root.data(ModuleTreeModel::ShareRole).toDouble() - 1.0) < 1e-9);
        double sum = 0;
        for (const auto& m : result.profile.modules) {
            sum += m.selfMs;
        }
        QVERIFY(std::abs(sum - result.profile.operatorMs) < 1e-6);
        QAbstractItemModelTester outputTester(
            panel_->outputModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester tableTester(
            panel_->tableModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester topKTester(panel_->topKModel(),
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester historyTester(
            panel_->historyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester profileTester(
            panel_->profileModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester treeTester(model,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        saveScreenshot(window_, QStringLiteral("run-panel"));
        window_->workspaces()->setCurrentIndex(0);
        saveScreenshot(window_, QStringLiteral("module-profile"));
        window_->workspaces()->setCurrentWidget(panel_);
    }

    void outputsEqualTheClis() {
        // The same inputs through scriptscope-cli: the same engine gives the same numbers.
        QTemporaryDir dir;
        const QString matrix = dir.filePath(QStringLiteral("warp.npy"));
        QVERIFY(!writeMatrixFile(matrix.toStdString(), window_->warpEditor()->matrix()));
        QProcess cli;
        cli.start(QStringLiteral(SCRIPTSCOPE_CLI_PATH),
                  {QStringLiteral("run"), kResources + QStringLiteral("/demo_model.pt"),
                   QStringLiteral("--method"), QStringLiteral("classify_page"),
                   QStringLiteral("--input"),
                   QStringLiteral("image:") + kResources + QStringLiteral("/demo.png"),
                   QStringLiteral("--input"), QStringLiteral("matrix:") + matrix,
                   QStringLiteral("--iters"), QStringLiteral("2"), QStringLiteral("--json")});
        QVERIFY(cli.waitForFinished(scriptscope::test::scaled(120000)));
        QCOMPARE(cli.exitCode(), 0);
        const auto json = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
        const OutputValue& gui = panel_->lastResult()->output;
        for (size_t i = 0; i < 2; ++i) {
            const auto& c = json["output"]["items"][i];
            QCOMPARE(c["min"].get<double>(), gui.children[i].min);
            QCOMPARE(c["max"].get<double>(), gui.children[i].max);
            QCOMPARE(c["mean"].get<double>(), gui.children[i].mean);
        }
    }

    void topKWithALabelsFile() {
        QVERIFY(panel_->lastResult().has_value());
        QTreeView* outputs = nullptr;
        for (auto* tree : panel_->findChildren<QTreeView*>()) {
            if (tree->model() == panel_->outputModel()) {
                outputs = tree;
            }
        }
        QVERIFY(outputs);
        // The demo's second output: the class probabilities, 1 x K.
        outputs->setCurrentIndex(panel_->outputModel()->index(1, 0));
        const OutputValue& probabilities = panel_->lastResult()->output.children.at(1);
        const auto& values = probabilities.values;
        QVERIFY(values.size() >= 3);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("labels.txt"));
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            for (size_t i = 0; i < values.size(); ++i) {
                file.write(QStringLiteral("class %1 é\r\n").arg(i).toUtf8()); // Windows endings
            }
            file.write("\n\n");
        }
        QVERIFY(panel_->outputs()->loadLabels(path));
        QCOMPARE(panel_->outputs()->labelsNote(), QStringLiteral("names: labels.txt"));
        QCOMPARE(panel_->outputs()->labelPicker()->choice(), QStringLiteral("file"));
        QCOMPARE(panel_->outputs()->labelPicker()->currentText(),
                 QStringLiteral("labels.txt (%1 names)").arg(values.size()));
        TopKModel* topK = panel_->topKModel();
        QCOMPARE(topK->rowCount(), static_cast<int>(std::min<size_t>(10, values.size())));
        const double largest = double(*std::max_element(values.begin(), values.end()));
        double previous = std::numeric_limits<double>::infinity();
        for (int row = 0; row < topK->rowCount(); ++row) {
            const int index = topK->index(row, TopKModel::IndexColumn).data().toInt();
            QCOMPARE(topK->index(row, TopKModel::LabelColumn).data().toString(),
                     QStringLiteral("class %1 é").arg(index));
            const double value = topK->index(row, TopKModel::ValueColumn).data().toDouble();
            QVERIFY(std::abs(value - double(values.at(static_cast<size_t>(index)))) < 1e-5);
            QVERIFY(value <= previous);
            previous = value;
        }
        QVERIFY(std::abs(topK->index(0, TopKModel::ValueColumn).data().toDouble() - largest) <
                1e-5);
        // A file that cannot be read keeps the labels and says why.
        QVERIFY(!panel_->outputs()->loadLabels(dir.filePath(QStringLiteral("missing.txt"))));
        QVERIFY(panel_->outputs()->labelsNote().contains(QStringLiteral("missing.txt")));
        QCOMPARE(topK->index(0, TopKModel::LabelColumn).data().toString().left(6),
                 QStringLiteral("class "));
        // Back to Auto: the demo's own names (its labels.txt, the kinds of page); None: none.
        QVERIFY(panel_->outputs()->labelPicker()->choose(QStringLiteral("auto")));
        QCOMPARE(panel_->outputs()->labelsNote(),
                 QStringLiteral("names: the archive's labels.txt"));
        QVERIFY(!topK->index(0, TopKModel::LabelColumn)
                     .data()
                     .toString()
                     .startsWith(QStringLiteral("class ")));
        QVERIFY(panel_->outputs()->labelPicker()->choose(QStringLiteral("none")));
        QVERIFY(topK->index(0, TopKModel::LabelColumn).data().toString().isEmpty());
        QVERIFY2(panel_->outputs()->labelsNote().startsWith(QStringLiteral("No names")),
                 qPrintable(panel_->outputs()->labelsNote()));
        QVERIFY(panel_->outputs()->labelPicker()->choose(QStringLiteral("auto")));
        outputs->setCurrentIndex(panel_->outputModel()->index(0, 0));
    }

    void keptResultIsCompared() {
        panel_->keepResult();
        {
            // Kept across a restart (or a crash of the GUI), like the open model.
            RunPanel restarted(worker_, nullptr);
            QVERIFY(restarted.keptResult().has_value());
            QCOMPARE(restarted.keptResult()->output.children.size(), size_t(2));
            QCOMPARE(restarted.keptResult()->output.children[0].values,
                     panel_->lastResult()->output.children[0].values);
            QCOMPARE(MainWindow::lastSessionModel(),
                     QFileInfo(kResources + QStringLiteral("/demo_model.pt")).absoluteFilePath());
        }
        panel_->profileBox()->setChecked(false);
        QVERIFY(runAndWait());
        QVERIFY2(panel_->comparisonText().contains(QStringLiteral("max |difference| 0")),
                 qPrintable(panel_->comparisonText()));
        // A different warp gives a different page.
        Homography h = window_->warpEditor()->matrix();
        h[2] += 7;
        QVERIFY(window_->warpEditor()->setMatrix(h));
        QVERIFY(runAndWait());
        QVERIFY2(panel_->comparisonText().contains(QStringLiteral("max |difference|")) &&
                     !panel_->comparisonText().contains(QStringLiteral("max |difference| 0,")),
                 qPrintable(panel_->comparisonText()));
        QCOMPARE(panel_->historyModel()->rowCount(), 3);
    }

    void liveRunsWhenTheMatrixChanges() {
        panel_->liveBox()->setChecked(true);
        QSignalSpy shown(panel_, &RunPanel::runShown);
        Homography h = window_->warpEditor()->matrix();
        h[5] += 3;
        QVERIFY(window_->warpEditor()->setMatrix(h));
        QVERIFY(shown.wait(scriptscope::test::scaled(120000)));
        panel_->liveBox()->setChecked(false);
    }

    void continuousRunsUntilCancelled() {
        QSignalSpy shown(panel_, &RunPanel::runShown);
        panel_->setContinuous(true);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 3, scriptscope::test::scaled(120000));
        panel_->cancel();
        QVERIFY(!panel_->continuous());
        // Once the worker is idle no further run is queued: delivering what is pending starts none.
        QTRY_VERIFY_WITH_TIMEOUT(!worker_->busy(), scriptscope::test::scaled(60000));
        const int runs = panel_->historyModel()->rowCount();
        QCoreApplication::processEvents();
        QVERIFY(!worker_->busy());
        QCOMPARE(panel_->historyModel()->rowCount(), runs);
    }

    // 16 runs: the legend names the latest few and counts the rest, the plot keeps its room,
    // and the histogram's percentiles are one key that no line label overlaps.
    void plotsWithManyRuns() {
        TimingPlot plot;
        plot.resize(700, 260);
        plot.show();
        std::vector<RunRecord> runs;
        for (int r = 0; r < 16; ++r) {
            RunRecord record;
            record.number = r + 1;
            record.label =
                QStringLiteral("#%1 mnasnet_scripted.pt · cpu · 1 warm-up · 30 iterations")
                    .arg(r + 1);
            record.result.device = "cpu";
            for (int i = 0; i < 30; ++i) {
                record.result.samplesMs.push_back(10.0 + r * 0.1 + (i % 7) * 0.05);
            }
            record.result.stats = computeStats(record.result.samplesMs);
            runs.push_back(record);
        }
        plot.setRuns(runs);
        QCustomPlot* iterations = plot.iterationsPlot();
        iterations->replot();
        QCOMPARE(iterations->graphCount(), 17); // 16 runs and the "earlier runs" line
        int named = 0;
        bool counted = false;
        for (int i = 0; i < iterations->legend->itemCount(); ++i) {
            auto* item = qobject_cast<QCPPlottableLegendItem*>(iterations->legend->item(i));
            named += item ? 1 : 0; // a removed item may leave an empty cell
            counted = counted || (item && item->plottable()->name() ==
                                              QStringLiteral("and 12 earlier runs (paler)"));
        }
        QCOMPARE(named, int(TimingPlot::kLegendRuns) + 1);
        QVERIFY(counted);
        QVERIFY2(iterations->axisRect()->rect().height() > iterations->height() / 3,
                 qPrintable(QStringLiteral("axes %1 px of %2")
                                .arg(iterations->axisRect()->rect().height())
                                .arg(iterations->height())));
        QCustomPlot* histogram = plot.histogramPlot();
        int keys = 0;
        for (int i = 0; i < histogram->itemCount(); ++i) {
            auto* text = qobject_cast<QCPItemText*>(histogram->item(i));
            if (text && text->objectName() != QStringLiteral("inlineTitle")) {
                ++keys;
                QVERIFY(text->text().contains(QStringLiteral("p50")) &&
                        text->text().contains(QStringLiteral("p90")) &&
                        text->text().contains(QStringLiteral("p99")));
            }
        }
        QCOMPARE(keys, 1);
        QCOMPARE(iterations->xAxis->ticker()->tickCount(), 4);
        saveScreenshot(&plot, QStringLiteral("timing-plot-16-runs"));
        {
            // Dark: the same plot on the dark theme's window colours (the style follows).
            QPalette dark = plot.palette();
            dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
            dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
            dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
            dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
            const QPalette light = plot.palette();
            plot.setPalette(dark);
            QApplication::processEvents();
            QVERIFY(iterations->grab().toImage().pixelColor(3, 3).lightness() < 80);
            saveScreenshot(&plot, QStringLiteral("timing-plot-16-runs-dark"));
            plot.setPalette(light);
            QApplication::processEvents();
        }
        // Short (a 960x540 window at QT_SCALE_FACTOR=2 leaves it 150 px): only the axes, which
        // keep most of the height; tall again, titles, legend and key come back.
        plot.resize(700, 150);
        QTRY_VERIFY(plot.compact());
        iterations->replot();
        // Their titles stay, inside the axes.
        for (QCustomPlot* p : {iterations, histogram}) {
            bool titled = false;
            for (int i = 0; i < p->itemCount(); ++i) {
                auto* text = qobject_cast<QCPItemText*>(p->item(i));
                titled = titled || (text && text->objectName() == QStringLiteral("inlineTitle") &&
                                    text->visible() && !text->text().isEmpty());
            }
            QVERIFY(titled);
        }
        QVERIFY2(
            iterations->axisRect()->rect().height() > 60,
            qPrintable(
                QStringLiteral("axes %1 px of 150").arg(iterations->axisRect()->rect().height())));
        saveScreenshot(&plot, QStringLiteral("timing-plot-short"));
        plot.resize(700, 260);
        QTRY_VERIFY(!plot.compact());
        iterations->replot();
        QVERIFY(iterations->legend->visible() && iterations->legend->realVisibility());
        QVERIFY(iterations->axisRect()->rect().height() > iterations->height() / 3);
    }

    void plotAndSamplesExport() {
        QTemporaryDir dir;
        TimingPlot* plot = panel_->timingPlot();
        QVERIFY(plot->savePng(dir.filePath(QStringLiteral("t.png"))));
        QVERIFY(plot->savePdf(dir.filePath(QStringLiteral("t.pdf"))));
        QVERIFY(QFileInfo(dir.filePath(QStringLiteral("t.pdf"))).size() > 1000);
        QVERIFY(!QImage(dir.filePath(QStringLiteral("t.png"))).isNull());
        const QString csv = panel_->historyModel()->toCsv();
        size_t samples = 0;
        for (const auto& run : panel_->historyModel()->runs()) {
            samples += run.result.samplesMs.size();
        }
        QCOMPARE(static_cast<size_t>(csv.count(QLatin1Char('\n'))), samples + 1);
        saveScreenshot(plot, QStringLiteral("timing-plot"));
    }

    void tensorImagesAndDifferences() {
        OutputValue t;
        t.kind = OutputValue::Kind::Tensor;
        t.shape = {1, 3, 4, 5};
        t.numel = 60;
        t.values.resize(60);
        for (size_t i = 0; i < 60; ++i) {
            t.values[i] = static_cast<float>(i) / 59.0F;
        }
        t.min = 0;
        t.max = 1;
        const ImageLayout layout = imageLayout(t);
        QVERIFY(layout.isImage() && layout.channels == 3 && layout.width == 5);
        TensorImageOptions options;
        const QImage colour = tensorToImage(t, options);
        QCOMPARE(colour.size(), QSize(5, 4));
        QCOMPARE(qRed(colour.pixel(0, 0)), 0);
        QCOMPARE(qBlue(colour.pixel(4, 3)), 255);
        options.view = ChannelView::Channel;
        options.channel = 1;
        QCOMPARE(qRed(tensorToImage(t, options).pixel(0, 0)),
                 static_cast<int>(std::lround(20 / 59.0 * 255)));
        OutputValue u = t;
        u.values[7] += 0.5F;
        const Difference d = compareTensors(u, t);
        QVERIFY(d.comparable);
        QVERIFY(std::abs(d.maxAbs - 0.5) < 1e-6);
        QCOMPARE(d.image.size(), QSize(5, 4));
        u.shape = {60};
        QVERIFY(!compareTensors(u, t).comparable);
        // Not images: vectors and tiny matrices.
        OutputValue v;
        v.kind = OutputValue::Kind::Tensor;
        v.shape = {1, 5};
        QVERIFY(!imageLayout(v).isImage());
    }

    // A .pt2 that keeps its example inputs starts with them as its inputs, and runs: a plain
    // exported program through the interpreter of its graph, with its profile.
    void exportedProgramsStartWithTheirSamples() {
        const auto source = [&](int row) {
            return qobject_cast<QComboBox*>(panel_->inputsTable()->cellWidget(row, 2))
                ->currentData()
                .toString();
        };
        QSignalSpy shown(window_, &MainWindow::modelShown);
        window_->openFile(QStringLiteral(SCRIPTSCOPE_SOURCE_DIR) +
                          QStringLiteral("/tests/fixtures/saved_by/exported/lstm.pt2"));
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QTRY_COMPARE(panel_->inputsTable()->rowCount(), 1);
        QTRY_COMPARE(source(0), QStringLiteral("sample"));
        QVERIFY(panel_->runButton()->isEnabled());
        QVERIFY(panel_->profileBox()->isEnabled());
        panel_->profileBox()->setChecked(true);
        QVERIFY(runAndWait());
        QCOMPARE(panel_->lastResult()->inputDescriptions,
                 std::vector<std::string>{"the archive's sample input 0"});
        QCOMPARE(panel_->lastResult()->output.children.size(), size_t(2));
        QVERIFY(panel_->lastResult()->profiled);
        saveScreenshot(window_, QStringLiteral("pt2-run"));
        const QString package =
            QStringLiteral(SCRIPTSCOPE_EXPORTED_DIR) + QStringLiteral("/resnet18_aoti.pt2");
        if (std::atoi(SCRIPTSCOPE_TEST_LIBTORCH_VERSION) >= 2 && QFileInfo::exists(package)) {
            window_->openFile(package);
            QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
            QTRY_COMPARE(source(0), QStringLiteral("sample"));
            panel_->iterationsBox()->setValue(2);
            QVERIFY(runAndWait());
            QCOMPARE(panel_->lastResult()->inputDescriptions,
                     std::vector<std::string>{"the archive's sample input 0"});
            QCOMPARE(panel_->lastResult()->output.shape, (std::vector<int64_t>{1, 10}));
        }
        // The next model runs: nothing of the last one's refusal stays.
        window_->openFile(kResources + QStringLiteral("/demo_model.pt"));
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QTRY_VERIFY(panel_->runButton()->isEnabled());
        QVERIFY(panel_->profileBox()->isEnabled());
        QVERIFY(!panel_->runButton()->toolTip().contains(QStringLiteral("compiled model")));
    }

    void runSettingsAreRememberedPerModel() {
        const QString demo = kResources + QStringLiteral("/demo_model.pt");
        panel_->iterationsBox()->setValue(7);
        panel_->warmupBox()->setValue(3);
        panel_->profileBox()->setChecked(true);
        // Another model: its own settings (the defaults), not the demo's.
        QSignalSpy shown(window_, &MainWindow::modelShown);
        window_->openFile(QString::fromStdString(scriptscope::test::fixture("decision_gate.pt")));
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QTRY_COMPARE(panel_->methodBox()->currentText(), QStringLiteral("forward"));
        // A model never run: a single iteration first (Run More times it as usual).
        QCOMPARE(panel_->iterationsBox()->value(), 1);
        QCOMPARE(panel_->warmupBox()->value(), 0);
        QVERIFY(!panel_->profileBox()->isChecked());
        panel_->iterationsBox()->setValue(4);
        // Back to the demo: what was set for it comes back, and the other model keeps its own.
        window_->openFile(demo);
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QTRY_COMPARE(panel_->iterationsBox()->value(), 7);
        QCOMPARE(panel_->warmupBox()->value(), 3);
        QVERIFY(panel_->profileBox()->isChecked());
        QCOMPARE(panel_->inputsTable()->rowCount(), 2);
        window_->openFile(QString::fromStdString(scriptscope::test::fixture("decision_gate.pt")));
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QTRY_COMPARE(panel_->iterationsBox()->value(), 4);
        window_->openFile(demo);
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QTRY_COMPARE(panel_->inputsTable()->rowCount(), 2);
        panel_->profileBox()->setChecked(false);
    }
};

QTEST_MAIN(TestRunPanel)
#include "test_run_panel.moc"
