// Real models through the GUI and the real worker, offscreen, as a new user meets them: a scripted
// torchvision detector fed a list of two images (its detections equal Python's), a quantized
// classifier's packed weights in the details, inputs that are not images starting empty, and the
// sequences in which state of the previous model must not show under the next one (filter,
// selection, details, code, outputs; runs named by model). Also the friction points: the filter
// on dotted paths and types, find's match count, wrapping, Ctrl+O after an error, top-k rows.
#include "gui_test_support.h"
#include "test_support.h"

#include <code_view.h>
#include <input_table.h>
#include <label_picker.h>
#include <main_window.h>
#include <module_tree_model.h>
#include <output_models.h>
#include <output_panel.h>
#include <output_view.h>
#include <run_panel.h>
#include <task_result.h>
#include <timing_plot.h>
#include <worker_client.h>

#include <nlohmann/json.hpp>

#include <plot_style.h> // qcustomplot.h, with the keyword macros it needs

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>
#include <QWheelEvent>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::readText;
using scriptscope::test::saveScreenshot;

namespace {

QString fx(const std::string& name) {
    return QString::fromStdString(fixture(name));
}

const OutputValue* child(const OutputValue& v, const std::string& key) {
    for (const auto& c : v.children) {
        if (c.key == key || c.key == "'" + key + "'") {
            return &c;
        }
    }
    return nullptr;
}

} // namespace

class TestRealModelsGui : public QObject {
    Q_OBJECT

private:
    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;
    RunPanel* panel_ = nullptr;

    bool open(const QString& path) { return scriptscope::test::openModel(window_, path); }

    bool run() {
        QSignalSpy shown(panel_, &RunPanel::runShown);
        QSignalSpy failed(panel_, &RunPanel::runFailed);
        panel_->runOnce();
        if (failed.isEmpty()) {
            [&]() {
                QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() || !failed.isEmpty(),
                                         scriptscope::test::scaled(180000));
            }();
        }
        if (!failed.isEmpty()) {
            qWarning() << "run failed:" << panel_->statusText();
        }
        return !shown.isEmpty();
    }

    // Every (name, dtype column) under the Parameters section of the details.
    QStringList parameterRows() const {
        QStringList rows;
        QStandardItem* parameters = scriptscope::test::detailsModel(window_)->item(0);
        for (int r = 0; parameters && r < parameters->rowCount(); ++r) {
            rows << parameters->child(r, 0)->text() + QLatin1Char('|') +
                        parameters->child(r, 2)->text();
        }
        return rows;
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        // The detector calls torchvision::nms: the person has loaded torchvision's library.
        const QString torchvision =
            QString::fromStdString(readText(fixture("torchvision_library.txt"))).trimmed();
        QVERIFY2(!torchvision.isEmpty(), "torchvision's operator library was not found");
        QSettings().setValue(QStringLiteral("operatorLibraries"), QStringList{torchvision});
        worker_ = new WorkerClient(this);
        worker_->setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
        window_ = new MainWindow(worker_);
        window_->resize(1280, 800);
        window_->show();
        panel_ = window_->runPanel();
    }

    void cleanupTestCase() { delete window_; }

    void noStateOfThePreviousModel() {
        QVERIFY(open(fx("rich.pt")));
        // Filter, select a module deep in the tree, look at its code.
        scriptscope::test::moduleFilter(window_)->setText(QStringLiteral("features.1"));
        window_->selectModule(QStringLiteral("features.1"));
        QVERIFY2(scriptscope::test::detailsModel(window_)->rowCount() > 0, "no details");
        const QString richCode = scriptscope::test::codeText(window_);
        QVERIFY(!richCode.isEmpty());
        // Another model: nothing of rich.pt remains.
        QVERIFY(open(fx("wrap_rnn.pt")));
        QVERIFY(scriptscope::test::moduleFilter(window_)->text().isEmpty());
        QVERIFY(scriptscope::test::moduleTree(window_)->model()->rowCount() > 0);
        const auto expected = nlohmann::json::parse(readText(fixture("wrap_rnn.expected.json")));
        QCOMPARE(scriptscope::test::codeText(window_).toStdString(),
                 expected["code"][":forward"].get<std::string>());
        QVERIFY(scriptscope::test::codeText(window_) != richCode);
        const auto& model = window_->model();
        QCOMPARE(QString::fromStdString(model.path), fx("wrap_rnn.pt"));
        // The details are the new root's.
        QCOMPARE(scriptscope::test::moduleTree(window_)
                     ->currentIndex()
                     .data(ModuleTreeModel::PathRole)
                     .toString(),
                 QString());
    }

    void runsCarryTheirModel() {
        QVERIFY(open(fx("mycell_scripted.pt")));
        window_->workspaces()->setCurrentWidget(panel_);
        // MyCell's x and h are no images: they start as empty shapes to type.
        InputTable* inputs = panel_->inputTable();
        QCOMPARE(inputs->source(0), QStringLiteral("random"));
        QCOMPARE(inputs->value(0), QString());
        QCOMPARE(inputs->source(1), QStringLiteral("random"));
        QSignalSpy failed(panel_, &RunPanel::runFailed);
        panel_->runOnce();
        QCOMPARE(failed.count(), 1);
        QVERIFY2(panel_->statusText().contains(QStringLiteral("'x'")) &&
                     panel_->statusText().contains(QStringLiteral("shape")),
                 qPrintable(panel_->statusText()));
        panel_->setInput(0, QStringLiteral("ones"), QStringLiteral("3x4"));
        panel_->setInput(1, QStringLiteral("zeros"), QStringLiteral("3x4"));
        panel_->iterationsBox()->setValue(2);
        QVERIFY(run());
        QVERIFY(panel_->lastResult().has_value());
        // A [3, 4] output: top-k of one row at a time, and the note says so.
        QVERIFY2(panel_->topKNote().contains(QStringLiteral("Row 0 of 3")),
                 qPrintable(panel_->topKNote()));
        QCOMPARE(panel_->topKModel()->rowCount(), 4);

        // Another model: the outputs go, the history keeps both runs with their model named.
        QVERIFY(open(fx("lstm.pt")));
        QVERIFY(!panel_->lastResult().has_value());
        QCOMPARE(panel_->outputModel()->rowCount(), 0);
        QCOMPARE(panel_->inputTable()->source(0), QStringLiteral("random"));
        panel_->setInput(0, QStringLiteral("random"), QStringLiteral("7x2x6"));
        QVERIFY(run());
        auto* history = panel_->historyModel();
        QCOMPARE(history->rowCount(), 2);
        QCOMPARE(history->index(0, RunHistoryModel::ModelColumn).data().toString(),
                 QStringLiteral("mycell_scripted.pt"));
        QCOMPARE(history->index(1, RunHistoryModel::ModelColumn).data().toString(),
                 QStringLiteral("lstm.pt"));
        QVERIFY(history->runs().back().label.contains(QStringLiteral("lstm.pt")));
        // A 3-D output is not ranked: the note says why instead of a blank tab.
        QVERIFY2(panel_->topKNote().contains(QStringLiteral("[7, 2, 3]")),
                 qPrintable(panel_->topKNote()));
    }

    void detectorTakesAListOfImages() {
        QVERIFY(open(fx("ssdlite.pt")));
        InputTable* inputs = panel_->inputTable();
        QCOMPARE(inputs->arguments().size(), size_t(2));
        // images: Tensor[] is built from element rows; targets defaults to None.
        QCOMPARE(inputs->source(0), QStringLiteral("elements"));
        QCOMPARE(inputs->source(1), QStringLiteral("default"));
        QCOMPARE(inputs->elementCount(0), 1);
        inputs->setElement(0, 0, QStringLiteral("image"), fx("det_a.png"));
        inputs->setElement(0, 1, QStringLiteral("image"), fx("det_b.png"));
        QCOMPARE(inputs->elementCount(0), 2);
        // Scrolling the Run panel with the wheel over the targets row's source leaves it as it
        // is (it once became "File (torch.save)", and the run failed).
        auto* targets = qobject_cast<QComboBox*>(inputs->table()->cellWidget(inputs->rowOf(1), 2));
        QVERIFY(targets);
        targets->clearFocus();
        for (int notch = 0; notch < 3; ++notch) {
            QWheelEvent event(QPointF(5, 5), targets->mapToGlobal(QPointF(5, 5)), QPoint(),
                              QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                              false);
            QApplication::sendEvent(targets, &event);
        }
        QCOMPARE(inputs->source(1), QStringLiteral("default"));
        saveScreenshot(window_, QStringLiteral("run-detector-inputs-after-scrolling"));
        // Python's preprocessing of the fixture: RGB, /255, CHW, no batch (the element's default).
        panel_->iterationsBox()->setValue(1);
        panel_->warmupBox()->setValue(0);
        QVERIFY(run());
        const RunResult& result = *panel_->lastResult();
        const auto expected = nlohmann::json::parse(readText(fixture("ssdlite.outputs.json")));
        // (losses, detections): one dict per image.
        QCOMPARE(result.output.kind, OutputValue::Kind::Tuple);
        QCOMPARE(result.output.children.size(), size_t(2));
        const OutputValue& detections = result.output.children[1];
        QCOMPARE(detections.children.size(), size_t(2));
        for (size_t i = 0; i < 2; ++i) {
            const auto& want = expected["images"][i];
            const OutputValue* boxes = child(detections.children[i], "boxes");
            const OutputValue* scores = child(detections.children[i], "scores");
            const OutputValue* labels = child(detections.children[i], "labels");
            QVERIFY(boxes && scores && labels);
            QCOMPARE(boxes->shape.front(), want["num_boxes"].get<int64_t>());
            for (size_t b = 0; b < want["scores"].size(); ++b) {
                QVERIFY(std::abs(static_cast<double>(scores->values[b]) -
                                 want["scores"][b].get<double>()) < 1e-5);
                QCOMPARE(static_cast<int64_t>(labels->values[b]), want["labels"][b].get<int64_t>());
                for (size_t c = 0; c < 4; ++c) {
                    QVERIFY(std::abs(static_cast<double>(boxes->values[b * 4 + c]) -
                                     want["boxes"][b][c].get<double>()) < 1e-3);
                }
            }
        }
        saveScreenshot(window_, QStringLiteral("run-detector"));
        // The Result page: the boxes drawn over det_a.png with COCO's names, at the threshold.
        OutputPanel* outputs = panel_->outputs();
        QCOMPARE(outputs->pages()->currentWidget(), outputs->resultView()->parentWidget());
        QVERIFY2(
            outputs->taskSummary().contains(QStringLiteral("detection: 600 objects in 2 images")),
            qPrintable(outputs->taskSummary()));
        QVERIFY(outputs->taskSummary().contains(QStringLiteral("names: COCO")));
        QCOMPARE(outputs->resultView()->image().size(), QSize(320, 240));
        const QImage drawnAtHalf = outputs->resultView()->image();
        outputs->setScoreThreshold(0.1);
        QVERIFY(outputs->resultView()->image() != drawnAtHalf); // more boxes drawn
        QTest::qWait(50);
        // At 1280 px the score slider and the names are on the Result page's bars, not behind
        // their » menus; the slider is there for detections only.
        auto* slider = outputs->findChild<QSlider*>(QStringLiteral("scoreThreshold"));
        QVERIFY(slider && slider->isVisible() && slider->width() > 60);
        QVERIFY(outputs->labelPicker()->isVisible() && outputs->labelPicker()->width() > 60);
        saveScreenshot(window_, QStringLiteral("run-detection-result"));
        // Drawn as values instead, remembered for this model.
        outputs->setTask(QStringLiteral("none"));
        QVERIFY(outputs->taskSummary().contains(QStringLiteral("task is set to none")));
        QVERIFY(QSettings().value(QStringLiteral("task/") + fx("ssdlite.pt")).toString() ==
                QStringLiteral("none"));
        outputs->setTask(QStringLiteral("auto"));
        // Removing an element leaves one image; an element that does not fit is named.
        inputs->setElement(0, 1, QStringLiteral("value"), QStringLiteral("3"));
        QSignalSpy failed(panel_, &RunPanel::runFailed);
        panel_->runOnce();
        QCOMPARE(failed.count(), 1);
        QVERIFY2(panel_->statusText().contains(QStringLiteral("'images', element 1")),
                 qPrintable(panel_->statusText()));
        inputs->removeElement(0, 1);
        QCOMPARE(inputs->elementCount(0), 1);
    }

    void noneWhereTheSchemaAllowsIt() {
        // None for an Optional[Tensor] argument, an element of List[Optional[Tensor]] and a
        // Dict[str, Optional[Tensor]] value: offered and taken, as the CLI's --input none is.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("optional.pt"));
        // TorchScript reads the class's source, so the script is a file.
        const QString script = dir.filePath(QStringLiteral("make_optional.py"));
        {
            QFile file(script);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(
                "import sys, torch\n"
                "from typing import Dict, List, Optional\n"
                "class M(torch.nn.Module):\n"
                "    def forward(self, x: torch.Tensor, extra: Optional[torch.Tensor],\n"
                "                items: List[Optional[torch.Tensor]],\n"
                "                table: Dict[str, Optional[torch.Tensor]]) -> torch.Tensor:\n"
                "        n = 0\n"
                "        if extra is None:\n"
                "            n += 1\n"
                "        for i in items:\n"
                "            if i is None:\n"
                "                n += 1\n"
                "        for v in table.values():\n"
                "            if v is None:\n"
                "                n += 1\n"
                "        return x + n\n"
                "torch.jit.script(M()).save(sys.argv[1])\n");
        }
        const auto made =
            scriptscope::test::runProgram(QStringLiteral(SCRIPTSCOPE_PYTHON), {script, path});
        QVERIFY2(made.exitCode == 0, made.err.c_str());
        QVERIFY(open(path));
        InputTable* inputs = panel_->inputTable();
        panel_->setInput(0, QStringLiteral("ones"), QStringLiteral("2"));
        panel_->setInput(1, QStringLiteral("none"));
        panel_->setInput(2, QStringLiteral("elements"));
        inputs->setElement(2, 0, QStringLiteral("none"));
        inputs->setElement(2, 1, QStringLiteral("ones"), QStringLiteral("2"));
        panel_->setInput(3, QStringLiteral("elements"));
        inputs->setElement(3, 0, QStringLiteral("none"), {}, QStringLiteral("a"));
        QCOMPARE(inputs->source(2, 0), QStringLiteral("none"));
        QCOMPARE(inputs->source(3, 0), QStringLiteral("none"));
        panel_->iterationsBox()->setValue(1);
        panel_->warmupBox()->setValue(0);
        QVERIFY2(run(), qPrintable(panel_->statusText()));
        // ones(2) + 3 Nones.
        const auto& preview = panel_->lastResult()->output.preview;
        QCOMPARE(preview, (std::vector<double>{4.0, 4.0}));
    }

    void segmentationDrawnOverTheImage() {
        QVERIFY(open(fx("segmenter.pt")));
        // Nothing of the detector's result shows under the segmenter, on any tab: Result (the
        // picture and its caption), Values, Image, Top-k, Compare.
        OutputPanel* before = panel_->outputs();
        QVERIFY(before->resultView()->image().isNull());
        QVERIFY2(before->taskSummary().startsWith(QStringLiteral("Run the model")),
                 qPrintable(before->taskSummary()));
        saveScreenshot(window_, QStringLiteral("run-result-after-model-switch"));
        QCOMPARE(before->outputModel()->rowCount(), 0);
        QCOMPARE(before->tableModel()->rowCount(), 0);
        QVERIFY(before->imageView()->image().isNull());
        QCOMPARE(before->topKModel()->rowCount(), 0);
        QVERIFY(before->topKNote().isEmpty());
        QVERIFY2(!before->comparisonText().contains(QStringLiteral("detection")),
                 qPrintable(before->comparisonText()));
        panel_->setInput(0, QStringLiteral("image"), fx("det_a.png"));
        panel_->iterationsBox()->setValue(1);
        panel_->warmupBox()->setValue(0);
        QVERIFY(run());
        OutputPanel* outputs = panel_->outputs();
        QVERIFY2(outputs->taskSummary().startsWith(QStringLiteral("segmentation: 21 classes")),
                 qPrintable(outputs->taskSummary()));
        QVERIFY(outputs->taskSummary().contains(QStringLiteral("Pascal VOC")));
        QCOMPARE(outputs->resultView()->image().size(), QSize(320, 240));
        // No score slider for a segmentation.
        QVERIFY(!outputs->findChild<QSlider*>(QStringLiteral("scoreThreshold"))->isVisible());
        QTest::qWait(50);
        saveScreenshot(window_, QStringLiteral("run-segmentation-result"));
    }

    // A classifier's run shows its result drawn as the task (the Result tab), not the Image tab's
    // empty area for a 1 x 1000 output; and a second run stays there.
    void aClassifierRunShowsTheResultTab() {
        QVERIFY(open(fx("quantized_mobilenet.pt")));
        panel_->setInput(0, QStringLiteral("image"), fx("det_a.png"));
        panel_->iterationsBox()->setValue(1);
        panel_->warmupBox()->setValue(0);
        OutputPanel* outputs = panel_->outputs();
        for (int runs = 0; runs < 2; ++runs) {
            QVERIFY2(run(), qPrintable(panel_->statusText()));
            QVERIFY2(outputs->taskSummary().startsWith(QStringLiteral("classification")),
                     qPrintable(outputs->taskSummary()));
            QCOMPARE(outputs->pages()->tabText(outputs->pages()->currentIndex()),
                     QStringLiteral("Result"));
        }
        // Chosen in the output tree by hand, a vector goes to its ranking.
        outputs->pages()->setCurrentIndex(1); // Image
        auto* tree = outputs->findChild<QTreeView*>();
        QVERIFY(tree);
        tree->setCurrentIndex({});
        tree->setCurrentIndex(outputs->outputModel()->firstTensor());
        QCOMPARE(outputs->pages()->tabText(outputs->pages()->currentIndex()),
                 QStringLiteral("Top-k"));
    }

    // One label set names the Result caption and the Top-k table, chosen on the Result bar.
    void oneLabelSetForResultAndTopK() {
        QVERIFY(open(fx("quantized_mobilenet.pt")));
        OutputPanel* outputs = panel_->outputs();
        QCOMPARE(outputs->labelPicker()->choice(), QStringLiteral("auto"));
        panel_->setInput(0, QStringLiteral("image"), fx("det_a.png"));
        panel_->iterationsBox()->setValue(1);
        panel_->warmupBox()->setValue(0);
        QVERIFY2(run(), qPrintable(panel_->statusText()));
        auto* tree = outputs->findChild<QTreeView*>();
        QVERIFY(tree);
        tree->setCurrentIndex(outputs->outputModel()->firstTensor());
        TopKModel* topK = outputs->topKModel();
        QCOMPARE(topK->rowCount(), 10);
        const auto names = [&]() {
            return topK->index(0, TopKModel::LabelColumn).data().toString();
        };
        // Auto: a 1 x 1000 output is named by ImageNet-1k, in both places, the same way.
        QVERIFY2(outputs->taskSummary().contains(QStringLiteral("names: ImageNet-1k")),
                 qPrintable(outputs->taskSummary()));
        QCOMPARE(outputs->labelsNote(), QStringLiteral("names: ImageNet-1k"));
        const int best = topK->index(0, TopKModel::IndexColumn).data().toInt();
        QCOMPARE(names(), QString::fromStdString(builtinLabels("imagenet")->nameOf(best)));
        // None: neither names anything.
        QVERIFY(outputs->labelPicker()->choose(QStringLiteral("none")));
        QVERIFY2(!outputs->taskSummary().contains(QStringLiteral("names:")),
                 qPrintable(outputs->taskSummary()));
        QVERIFY(names().isEmpty());
        QVERIFY(outputs->labelsNote().startsWith(QStringLiteral("No names")));
        // A file: both take it; and the choice is this model's, kept when it is opened again.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("mine.txt"));
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            for (int i = 0; i < 1000; ++i) {
                file.write(QStringLiteral("thing %1\n").arg(i).toUtf8());
            }
        }
        QVERIFY(outputs->loadLabels(path));
        QVERIFY2(outputs->taskSummary().contains(QStringLiteral("names: mine.txt")),
                 qPrintable(outputs->taskSummary()));
        QCOMPARE(outputs->labelsNote(), QStringLiteral("names: mine.txt"));
        QCOMPARE(names(), QStringLiteral("thing %1").arg(best));
        QVERIFY(open(fx("segmenter.pt")));
        QCOMPARE(outputs->labelPicker()->choice(), QStringLiteral("auto"));
        QVERIFY(open(fx("quantized_mobilenet.pt")));
        QCOMPARE(outputs->labelPicker()->choice(), QStringLiteral("file"));
        QVERIFY(outputs->labelPicker()->choose(QStringLiteral("auto")));
    }

    void quantizedWeightsAreShown() {
        QVERIFY(open(fx("quantized_mobilenet.pt")));
        QVERIFY(window_->model().parameterCount > 3000000);
        window_->workspaces()->setCurrentIndex(0);
        window_->selectModule(QStringLiteral("features.0.0"));
        const QStringList rows = parameterRows();
        QVERIFY2(rows.size() == 2, qPrintable(rows.join(QLatin1Char(';'))));
        QVERIFY2(rows[0].startsWith(QStringLiteral("weight|qint8, per channel (axis 0)")) &&
                     rows[0].endsWith(QStringLiteral("packed")),
                 qPrintable(rows[0]));
        QVERIFY2(rows[1].startsWith(QStringLiteral("bias|float32")), qPrintable(rows[1]));
        // Statistics on demand: of the dequantized values.
        QSignalSpy shown(window_, &MainWindow::statisticsShown);
        window_->modelWorkspace()->requestStatistics();
        QVERIFY(shown.wait(scriptscope::test::scaled(60000)));
        QStandardItem* parameters = scriptscope::test::detailsModel(window_)->item(0);
        QVERIFY2(parameters->child(0, 4)->text().contains(QStringLiteral("mean")),
                 qPrintable(parameters->child(0, 4)->text()));
        saveScreenshot(window_, QStringLiteral("quantized-details"));
    }

    void filterFindAndWrap() {
        QVERIFY(open(fx("rich.pt")));
        auto* tree = scriptscope::test::moduleTree(window_);
        auto visiblePaths = [&]() { return scriptscope::test::modulePaths(tree); };
        scriptscope::test::moduleFilter(window_)->setText(QStringLiteral("features.1"));
        QVERIFY2(visiblePaths().contains(QStringLiteral("features.1")),
                 qPrintable(visiblePaths().join(QLatin1Char(','))));
        QVERIFY(!visiblePaths().contains(QStringLiteral("features.0")));
        // The qualified type: torch.nn.modules.batchnorm matches the BatchNorm2d modules.
        scriptscope::test::moduleFilter(window_)->setText(QStringLiteral("modules.batchnorm"));
        QVERIFY2(visiblePaths().contains(QStringLiteral("features.1")),
                 qPrintable(visiblePaths().join(QLatin1Char(','))));
        scriptscope::test::moduleFilter(window_)->clear();
        window_->selectModule(QString());
        CodeView* graph = scriptscope::test::graphView(window_);
        QVERIFY(graph->find(QStringLiteral("aten::")));
        QVERIFY2(graph->findStatus().startsWith(QStringLiteral("1 of ")),
                 qPrintable(graph->findStatus()));
        QVERIFY(graph->find(QStringLiteral("aten::")));
        QVERIFY2(graph->findStatus().startsWith(QStringLiteral("2 of ")),
                 qPrintable(graph->findStatus()));
        QVERIFY(!graph->find(QStringLiteral("no such text")));
        QCOMPARE(graph->findStatus(), QStringLiteral("Not found"));
        auto* wrap = window_->findChild<QCheckBox*>(QStringLiteral("graphWrap"));
        QVERIFY(wrap);
        wrap->setChecked(true);
        QVERIFY(graph->lineWrap());
        wrap->setChecked(false);
        QVERIFY(!graph->lineWrap());
    }

    void layoutAtTheDefaultSize() {
        window_->resize(1280, 800);
        window_->workspaces()->setCurrentWidget(panel_);
        QApplication::processEvents();
        // Run is in view without scrolling, and the latency plot has room before any run.
        QPushButton* runButton = nullptr;
        for (auto* button : panel_->findChildren<QPushButton*>()) {
            if (button->text() == QStringLiteral("&Run")) {
                runButton = button;
            }
        }
        QVERIFY(runButton && runButton->isVisible());
        const QRect inWindow(runButton->mapTo(window_, QPoint(0, 0)), runButton->size());
        QVERIFY2(window_->rect().contains(inWindow), "the Run button is outside the window");
        QVERIFY(panel_->timingPlot()->height() >= 170);
        // Not only the widget: the plot's own axes get most of it (an empty legend once capped
        // them to a thumbnail).
        auto* plot = panel_->timingPlot()->iterationsPlot();
        plot->replot();
        QVERIFY2(plot->axisRect()->rect().width() > plot->width() / 2,
                 qPrintable(QStringLiteral("%1 of %2")
                                .arg(plot->axisRect()->rect().width())
                                .arg(plot->width())));
        // The whole window fits a 1920x1080 screen at QT_SCALE_FACTOR=2 (960x540 logical).
        const QSize least = window_->minimumSizeHint();
        QVERIFY2(
            least.width() <= 912 && least.height() <= 513,
            qPrintable(QStringLiteral("minimum %1x%2").arg(least.width()).arg(least.height())));
        // Never larger than the screen, whatever it is asked for.
        window_->placeOnScreen(QSize(5000, 4000));
        const QRect available = window_->screen()->availableGeometry();
        // It asks for no more than the screen has (it cannot be smaller than its minimum, which
        // the check above bounds; the offscreen screen is 800 wide).
        QVERIFY2(window_->width() <= std::max(available.width(), least.width()) + 40 &&
                     window_->height() <= std::max(available.height(), least.height()) + 40,
                 qPrintable(QStringLiteral("%1x%2 in %3x%4")
                                .arg(window_->width())
                                .arg(window_->height())
                                .arg(available.width())
                                .arg(available.height())));
        window_->resize(1280, 800);
    }

    // A window size saved at QT_SCALE_FACTOR=2 (785x480 on 1920x1080, a quarter of the screen at
    // scale 1) opens at the usual size; a size the person chose that fits is kept.
    void aWindowSizeSavedAtAnotherScaleIsNotKept() {
        const QSize usual(1280, 800), screen(1920, 1040);
        QCOMPARE(MainWindow::openingSize(QSize(785, 480), usual, screen), usual);
        QCOMPARE(MainWindow::openingSize(QSize(), usual, screen), usual);
        QCOMPARE(MainWindow::openingSize(QSize(1500, 900), usual, screen), QSize(1500, 900));
        QCOMPARE(MainWindow::openingSize(QSize(1000, 700), usual, screen), QSize(1000, 700));
        // Never larger than the screen: saved at scale 1, opened at scale 2 (960x540 logical).
        QCOMPARE(MainWindow::openingSize(QSize(1500, 900), usual, QSize(960, 520)),
                 QSize(912, 494));
        QCOMPARE(MainWindow::openingSize(QSize(), usual, QSize(960, 520)), QSize(912, 494));
    }

    void darkTheme() {
        QAction* dark = nullptr;
        for (QAction* action : window_->findChildren<QAction*>()) {
            if (action->text() == QStringLiteral("&Dark")) {
                dark = action;
            }
        }
        QVERIFY(dark);
        dark->trigger();
        const QPalette palette = QApplication::palette();
        QVERIFY(palette.color(QPalette::Window).lightness() < 80);
        // Disabled text is dimmer than enabled text, so disabled buttons look disabled.
        QVERIFY(palette.color(QPalette::Disabled, QPalette::ButtonText).lightness() <
                palette.color(QPalette::Active, QPalette::ButtonText).lightness() - 60);
        QApplication::processEvents();
        // The plots follow: a dark background, light labels.
        QCOMPARE(panel_->timingPlot()->iterationsPlot()->grab().toImage().pixelColor(3, 3),
                 palette.color(QPalette::Base));
        QVERIFY(panel_->timingPlot()->iterationsPlot()->xAxis->tickLabelColor().lightness() > 150);
        window_->workspaces()->setCurrentWidget(panel_);
        saveScreenshot(window_, QStringLiteral("run-dark"));
        for (QAction* action : window_->findChildren<QAction*>()) {
            if (action->text() == QStringLiteral("&Light")) {
                action->trigger();
            }
        }
        QApplication::processEvents();
        QCOMPARE(panel_->timingPlot()->iterationsPlot()->grab().toImage().pixelColor(3, 3),
                 QApplication::palette().color(QPalette::Base));
    }

    void ctrlOAfterAnError() {
        QSignalSpy error(window_, &MainWindow::errorShown);
        window_->openFile(fx("text.pt"));
        QVERIFY(error.wait(scriptscope::test::scaled(60000)));
        window_->activateWindow();
        QWidget* focus = QApplication::focusWidget();
        QVERIFY2(focus && focus->isVisible(), "no visible widget has the focus after the error");
        QAction* openAction = nullptr;
        for (QAction* action : window_->menuBar()->actions().first()->menu()->actions()) {
            if (action->shortcut() == QKeySequence(QKeySequence::Open)) {
                openAction = action;
            }
        }
        QVERIFY(openAction);
        QSignalSpy triggered(openAction, &QAction::triggered);
        // The open dialog is modal: close it as soon as it shows.
        QTimer closer;
        connect(&closer, &QTimer::timeout, this, []() {
            if (QWidget* dialog = QApplication::activeModalWidget()) {
                dialog->close();
            }
        });
        closer.start(100);
        QTest::keyClick(focus, Qt::Key_O, Qt::ControlModifier);
        QCOMPARE(triggered.count(), 1);
    }
};

QTEST_MAIN(TestRealModelsGui)
#include "test_real_models_gui.moc"
