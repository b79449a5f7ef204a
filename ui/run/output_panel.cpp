#include "output_panel.h"

#include "label_picker.h"
#include "output_view.h"

#include <format.h>
#include <protocol.h>
#include <task_render.h>
#include <task_result.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QAction>
#include <QBoxLayout>
#include <QCborValue>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

#include <functional>

namespace scriptscope {
namespace {

const OutputValue* valueAtPath(const OutputValue& root, const QString& path) {
    const OutputValue* value = &root;
    if (path.isEmpty()) {
        return value;
    }
    for (const QString& part : path.split(QLatin1Char('.'))) {
        const int i = part.toInt();
        if (i < 0 || i >= static_cast<int>(value->children.size())) {
            return nullptr;
        }
        value = &value->children[static_cast<size_t>(i)];
    }
    return value;
}

} // namespace

OutputPanel::OutputPanel(QWidget* parent)
    : QSplitter(Qt::Horizontal, parent) {
    outputModel_ = new OutputTreeModel(this);
    outputTree_ = new QTreeView(this);
    outputTree_->setModel(outputModel_);
    outputTree_->setUniformRowHeights(true);
    outputTree_->setAlternatingRowColors(true);
    outputTree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    connect(outputTree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& index) { showOutput(index); });

    outputPages_ = new QTabWidget(this);
    // The Result page: the output drawn as its task over the image input.
    auto* resultPage = new QWidget(outputPages_);
    auto* resultLayout = new QVBoxLayout(resultPage);
    auto* resultBar = new QToolBar(resultPage);
    task_ = new QComboBox(resultPage);
    task_->setObjectName(QStringLiteral("resultTask"));
    task_->addItem(tr("Auto"), QStringLiteral("auto"));
    task_->addItem(tr("Detection"), QStringLiteral("detection"));
    task_->addItem(tr("Segmentation"), QStringLiteral("segmentation"));
    task_->addItem(tr("Classification"), QStringLiteral("classification"));
    task_->addItem(tr("Page"), QStringLiteral("page"));
    task_->addItem(tr("None"), QStringLiteral("none"));
    task_->setToolTip(tr("What the output is; Auto recognises torchvision's detections, "
                         "N x C x H x W segmentations and N x K scores (remembered per model)"));
    threshold_ = new QSlider(Qt::Horizontal, resultPage);
    threshold_->setObjectName(QStringLiteral("scoreThreshold"));
    threshold_->setRange(0, 100);
    threshold_->setValue(50);
    threshold_->setMaximumWidth(140);
    threshold_->setToolTip(tr("Detections are drawn from this score"));
    thresholdText_ = new QLabel(resultPage);
    // The demo's key action first: a narrow window moves the bar's last items into its » menu.
    useCorners_ = resultBar->addAction(tr("Corners to Warp Editor"));
    useCorners_->setObjectName(QStringLiteral("useModelCorners"));
    useCorners_->setToolTip(tr(
        "Use the model's corners: the warp editor's handles go on the page's corners as the model "
        "found them, so its warp can be compared with one tuned by hand"));
    useCorners_->setEnabled(false);
    connect(useCorners_, &QAction::triggered, this, [this]() { Q_EMIT useCornersRequested(); });
    resultBar->addSeparator();
    resultBar->addWidget(new QLabel(tr("Task "), resultPage));
    resultBar->addWidget(task_);
    // A second row, so that the Result pane of a 1280 px window holds them all: the names, and the
    // score slider while the result is a detection's, side by side or (a narrow pane, as at
    // QT_SCALE_FACTOR=2) one above the other, never hidden in a » menu.
    namesBar_ = new QToolBar(resultPage);
    labelPicker_ = new LabelPicker(resultPage);
    namesBar_->addWidget(new QLabel(tr("Names "), resultPage));
    namesBar_->addWidget(labelPicker_);
    scoreBar_ = new QToolBar(resultPage);
    scoreBar_->addWidget(new QLabel(tr("Score \u2265 "), resultPage));
    scoreBar_->addWidget(threshold_);
    scoreBar_->addWidget(thresholdText_);
    scoreBar_->setVisible(false);
    controlsRow_ = new QBoxLayout(QBoxLayout::LeftToRight);
    controlsRow_->setSpacing(0);
    controlsRow_->addWidget(namesBar_);
    controlsRow_->addWidget(scoreBar_);
    resultPage_ = resultPage;
    resultPage->installEventFilter(this);
    taskSummary_ = new QLabel(resultPage);
    taskSummary_->setObjectName(QStringLiteral("taskSummary"));
    taskSummary_->setWordWrap(true);
    resultView_ = new OutputImageView(resultPage);
    resultView_->setObjectName(QStringLiteral("resultView"));
    resultView_->setOverlayAtBottom(true);
    resultLayout->addWidget(resultBar);
    resultLayout->addLayout(controlsRow_);
    resultLayout->addWidget(taskSummary_);
    resultLayout->addWidget(resultView_, 1);
    connect(task_, &QComboBox::activated, this, [this]() {
        if (!modelPath_.empty()) {
            QSettings().setValue(QStringLiteral("task/") + QString::fromStdString(modelPath_),
                                 task_->currentData().toString());
        }
        showTask();
    });
    connect(threshold_, &QSlider::valueChanged, this, [this]() { showTask(); });
    connect(labelPicker_, &LabelPicker::labelsChanged, this, [this]() {
        showTask();
        showOutput(outputTree_->currentIndex());
    });
    connect(labelPicker_, &LabelPicker::problem, this, &OutputPanel::problem);

    auto* imagePage = new QWidget(outputPages_);
    imagePage_ = imagePage;
    auto* imageLayout = new QVBoxLayout(imagePage);
    // A tool bar: on a narrow window (QT_SCALE_FACTOR=2) what does not fit goes into its » menu.
    auto* imageBar = new QToolBar(imagePage);
    imageBar->setIconSize(QSize(16, 16));
    channel_ = new QComboBox(imagePage);
    colormap_ = new QComboBox(imagePage);
    colormap_->addItems({tr("Gray"), tr("Viridis"), tr("Jet")});
    range_ = new QComboBox(imagePage);
    range_->addItem(tr("Auto range"), QStringLiteral("auto"));
    range_->addItem(QStringLiteral("0 … 1"), QStringLiteral("0:1"));
    range_->addItem(QStringLiteral("-1 … 1"), QStringLiteral("-1:1"));
    range_->addItem(QStringLiteral("0 … 255"), QStringLiteral("0:255"));
    overlay_ = new QCheckBox(tr("Timing overlay"), imagePage);
    overlay_->setChecked(true);
    auto* saveView = new QPushButton(tr("Save View…"), imagePage);
    imageBar->addWidget(new QLabel(tr("Channel"), imagePage));
    imageBar->addWidget(channel_);
    imageBar->addWidget(colormap_);
    imageBar->addWidget(range_);
    imageBar->addWidget(overlay_);
    imageBar->addWidget(saveView);
    imageView_ = new OutputImageView(imagePage);
    imageLayout->addWidget(imageBar);
    imageLayout->addWidget(imageView_, 1);
    outputPages_->addTab(resultPage, tr("Result"));
    outputPages_->addTab(imagePage, tr("Image"));
    for (QComboBox* box : {channel_, colormap_, range_}) {
        connect(box, &QComboBox::activated, this,
                [this]() { showOutput(outputTree_->currentIndex()); });
    }
    connect(overlay_, &QCheckBox::toggled, imageView_, &OutputImageView::setOverlayVisible);
    connect(overlay_, &QCheckBox::toggled, resultView_, &OutputImageView::setOverlayVisible);
    connect(saveView, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save View"), QStringLiteral("output.png"), tr("PNG image (*.png)"));
        if (!path.isEmpty() && !imageView_->render().save(path)) {
            Q_EMIT problem(tr("Cannot write %1").arg(path));
        }
    });

    auto* topKPage = new QWidget(outputPages_);
    auto* topKLayout = new QVBoxLayout(topKPage);
    auto* labelsBar = new QHBoxLayout;
    auto* labels = new QPushButton(tr("Labels File…"), topKPage);
    labels->setToolTip(tr("A text file with one label per line, in index order: the names of the "
                          "Result page and of this table (the Result bar's Names picker)"));
    labelsNote_ = new QLabel(topKPage);
    labelsNote_->setObjectName(QStringLiteral("topKLabels"));
    topKRow_ = new QSpinBox(topKPage);
    topKRow_->setPrefix(tr("Row "));
    topKRow_->setToolTip(tr("Which row of an N x K output the top k are taken from"));
    topKRow_->setEnabled(false);
    labelsBar->addWidget(labels);
    labelsBar->addWidget(labelsNote_, 1);
    labelsBar->addWidget(topKRow_);
    topKNote_ = new QLabel(topKPage);
    topKNote_->setWordWrap(true);
    topKModel_ = new TopKModel(this);
    topK_ = new QTableView(topKPage);
    topK_->setModel(topKModel_);
    topK_->verticalHeader()->hide();
    topK_->horizontalHeader()->setStretchLastSection(true);
    topKLayout->addLayout(labelsBar);
    topKLayout->addWidget(topKNote_);
    topKLayout->addWidget(topK_);
    connect(topKRow_, &QSpinBox::valueChanged, this,
            [this]() { showOutput(outputTree_->currentIndex()); });
    outputPages_->addTab(topKPage, tr("Top-k"));
    topKPage_ = topKPage;
    connect(labels, &QPushButton::clicked, this, [this]() {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Labels"), {}, tr("Text (*.txt);;All files (*)"));
        if (!path.isEmpty()) {
            loadLabels(path);
        }
    });

    tableModel_ = new TensorTableModel(this);
    table_ = new QTableView(outputPages_);
    table_->setModel(tableModel_);
    outputPages_->addTab(table_, tr("Values"));

    auto* comparePage = new QWidget(outputPages_);
    auto* compareLayout = new QVBoxLayout(comparePage);
    auto* keep = new QPushButton(tr("Keep This Result"), comparePage);
    keep->setToolTip(tr("The next runs show their difference to this one (e.g. CPU against CUDA, "
                        "or before and after a warp change)"));
    compareText_ = new QLabel(tr("Keep a result to compare the next ones with it."), comparePage);
    compareText_->setWordWrap(true);
    compareText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    differenceView_ = new OutputImageView(comparePage);
    compareLayout->addWidget(keep);
    compareLayout->addWidget(compareText_);
    compareLayout->addWidget(differenceView_, 1);
    outputPages_->addTab(comparePage, tr("Compare"));
    connect(keep, &QPushButton::clicked, this, [this]() { keepResult(); });
    addWidget(outputTree_);
    addWidget(outputPages_);
    setStretchFactor(1, 2);
    outputTree_->setMinimumWidth(120);

    restoreKeptResult();
}

void OutputPanel::resizeEvent(QResizeEvent* event) {
    QSplitter::resizeEvent(event);
    shareWidth();
}

void OutputPanel::showEvent(QShowEvent* event) {
    QSplitter::showEvent(event);
    shareWidth();
}

void OutputPanel::shareWidth() {
    // First shown: a third for the tree, two for the pages, whatever the tree's contents would
    // like (its columns sized to their contents took most of a narrow window, as at
    // QT_SCALE_FACTOR=2). Later the person's dragging stands.
    if (!sized_ && width() > 0 && isVisible()) {
        sized_ = true;
        setSizes({width() / 3, width() - width() / 3});
    }
}

bool OutputPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == resultPage_ && event->type() == QEvent::Resize) {
        arrangeControls();
    }
    return QSplitter::eventFilter(watched, event);
}

void OutputPanel::arrangeControls() {
    const int needed = namesBar_->sizeHint().width() + scoreBar_->sizeHint().width();
    controlsRow_->setDirection(resultPage_->contentsRect().width() >= needed + 24
                                   ? QBoxLayout::LeftToRight
                                   : QBoxLayout::TopToBottom);
}

bool OutputPanel::loadLabels(const QString& path) {
    QString why;
    if (!labelPicker_->loadFile(path, &why)) {
        labelsNote_->setText(why);
        return false;
    }
    return true;
}

QStringList OutputPanel::topKNames(size_t classes) {
    QStringList names;
    const LabelSet* labels = labelPicker_->namesFor(classes);
    if (!labels) {
        labelsNote_->setText(tr("No names: choose a set with Names on the Result tab, or a file"));
        return names;
    }
    labelsNote_->setText(tr("names: %1").arg(QString::fromStdString(labels->name)));
    for (const std::string& name : labels->names) {
        names << QString::fromStdString(name);
    }
    return names;
}

QString OutputPanel::labelsNote() const {
    return labelsNote_->text();
}

void OutputPanel::showResult(const RunResult& result) {
    last_ = result;
    const QString selected = outputTree_->currentIndex().data(OutputTreeModel::PathRole).toString();
    outputModel_->setOutput(result.output);
    outputTree_->expandAll();
    // Keep the selection on the same output across runs.
    QModelIndex select = outputModel_->firstTensor();
    if (!selected.isEmpty()) {
        std::function<QModelIndex(const QModelIndex&)> find =
            [&](const QModelIndex& parent) -> QModelIndex {
            for (int r = 0; r < outputModel_->rowCount(parent); ++r) {
                const QModelIndex i = outputModel_->index(r, 0, parent);
                if (i.data(OutputTreeModel::PathRole).toString() == selected) {
                    return i;
                }
                if (const QModelIndex found = find(i); found.isValid()) {
                    return found;
                }
            }
            return {};
        };
        if (const QModelIndex found = find({}); found.isValid()) {
            select = found;
        }
    }
    // The task first: whether the output is interpreted decides the tab showOutput picks.
    showTask();
    runArriving_ = true;
    outputTree_->setCurrentIndex(select);
    showOutput(select);
    runArriving_ = false;
}

void OutputPanel::setInputImage(const QString& path, const QSize& size) {
    inputImage_ = path;
    inputFrame_.release();
    inputSize_ = size;
}

void OutputPanel::setInputFrame(const cv::Mat& bgr, const QSize& size) {
    inputImage_.clear();
    inputFrame_ = bgr.clone();
    inputSize_ = size;
}

void OutputPanel::setArchiveLabels(const LabelSet& labels) {
    labelPicker_->showModel(modelPath_, labels);
    showTask();
}

void OutputPanel::setTask(const QString& task) {
    task_->setCurrentIndex(std::max(0, task_->findData(task)));
    if (!modelPath_.empty()) {
        QSettings().setValue(QStringLiteral("task/") + QString::fromStdString(modelPath_), task);
    }
    showTask();
}

QString OutputPanel::task() const {
    return task_->currentData().toString();
}

void OutputPanel::setScoreThreshold(double threshold) {
    threshold_->setValue(static_cast<int>(std::lround(threshold * 100)));
}

QString OutputPanel::taskSummary() const {
    return taskSummary_->text();
}

void OutputPanel::showTask() {
    thresholdText_->setText(QStringLiteral("%1").arg(threshold_->value() / 100.0, 0, 'f', 2));
    if (!last_) {
        interpreted_ = false;
        taskSummary_->setText(tr("Run the model: a detector's boxes, a segmentation or a "
                                 "classifier's top-k are drawn here over the image input."));
        resultView_->setImage({});
        pageCorners_.clear();
        useCorners_->setEnabled(false);
        scoreBar_->setVisible(false);
        return;
    }
    TaskOptions options = labelPicker_->taskOptions();
    taskKindFromName(task_->currentData().toString().toStdString(), options.kind);
    const TaskResult result = interpretOutput(last_->output, options);
    interpreted_ = result.kind != TaskKind::None;
    threshold_->setEnabled(result.kind == TaskKind::Detection);
    scoreBar_->setVisible(result.kind == TaskKind::Detection);
    arrangeControls();
    pageCorners_ =
        result.kind == TaskKind::Page ? result.corners : std::vector<std::pair<double, double>>();
    pageSize_ = QSize(result.pageWidth, result.pageHeight);
    useCorners_->setEnabled(pageCorners_.size() == 4);
    QString summary = QString::fromStdString(result.summary);
    if (!result.labelSet.empty()) {
        summary += tr(" \u00b7 names: %1").arg(QString::fromStdString(result.labelSet));
    }
    if (result.kind == TaskKind::Detection && !result.detections.empty()) {
        size_t shown = 0;
        for (const auto& o : result.detections.front()) {
            shown += o.score >= threshold_->value() / 100.0 ? 1 : 0;
        }
        summary += tr(" \u00b7 %1 drawn at this score").arg(shown);
    }
    // The photo or frame at its own size, drawn on by the engine's renderer (as the CLI's
    // --render).
    cv::Mat image;
    rendered_.release();
    if (!inputImage_.isEmpty() || !inputFrame_.empty()) {
        image = inputFrame_.empty() ? cv::imread(inputImage_.toStdString(), cv::IMREAD_COLOR)
                                    : inputFrame_;
    }
    if (!image.empty() && inputSize_.width() > 0 && inputSize_.height() > 0) {
        for (auto& [x, y] : pageCorners_) { // in pixels of the picture drawn over
            x *= double(image.cols) / inputSize_.width();
            y *= double(image.rows) / inputSize_.height();
        }
    }
    if (image.empty()) {
        if (result.kind != TaskKind::None) {
            summary += tr(" \u00b7 give an image input to see it drawn");
        }
        taskSummary_->setText(summary);
        resultView_->setImage({});
        return;
    }
    RenderOptions render;
    render.scoreThreshold = threshold_->value() / 100.0;
    // The source at its own size (what Record writes, as the CLI's --render): the result is
    // scaled from the size the preprocessing resized it to.
    render.inputWidth = inputSize_.width();
    render.inputHeight = inputSize_.height();
    cv::Mat drawn;
    try {
        rendered_ = renderTask(image, result, render);
        cv::cvtColor(rendered_, drawn, cv::COLOR_BGR2RGB);
    } catch (const cv::Exception& error) {
        rendered_.release();
        taskSummary_->setText(
            summary + tr(" \u00b7 cannot draw it: %1").arg(QString::fromStdString(error.msg)));
        resultView_->setImage({});
        return;
    }
    const QImage picture(drawn.data, drawn.cols, drawn.rows, static_cast<qsizetype>(drawn.step),
                         QImage::Format_RGB888);
    resultView_->setImage(picture.copy());
    taskSummary_->setText(summary);
    // The first recognised result of a model shows this page.
    if (!taskShownForModel_ && result.kind != TaskKind::None) {
        taskShownForModel_ = true;
        outputPages_->setCurrentWidget(resultView_->parentWidget());
    }
}

void OutputPanel::clear(const std::string& modelPath) {
    modelPath_ = modelPath;
    last_.reset();
    taskShownForModel_ = false;
    labelPicker_->showModel(modelPath, LabelSet{});
    pageCorners_.clear();
    useCorners_->setEnabled(false);
    inputImage_.clear();
    inputFrame_.release();
    rendered_.release();
    task_->setCurrentIndex(std::max(
        0, task_->findData(QSettings()
                               .value(QStringLiteral("task/") + QString::fromStdString(modelPath),
                                      QStringLiteral("auto"))
                               .toString())));
    resultView_->setImage({});
    resultView_->setOverlay({});
    outputModel_->setOutput(OutputValue{});
    tableModel_->setTensor(nullptr);
    topKModel_->setValues({}, 0, {});
    topKNote_->clear();
    labelsNote_->clear();
    imageView_->setImage({});
    imageView_->setOverlay({});
    differenceView_->setImage({});
    if (kept_) {
        const bool other = !kept_->model.empty() && kept_->model != modelPath_;
        compareText_->setText(
            other ? tr("Kept: a result of another model (%1, %2 on %3). The next runs of this "
                       "model are compared with it where the outputs match.")
                        .arg(QFileInfo(QString::fromStdString(kept_->model)).fileName(),
                             QString::fromStdString(kept_->method),
                             QString::fromStdString(kept_->device))
                  : tr("Kept: %1 on %2. The next runs show their difference.")
                        .arg(QString::fromStdString(kept_->method),
                             QString::fromStdString(kept_->device)));
    } else {
        compareText_->setText(tr("Keep a result to compare the next ones with it."));
    }
    showTask(); // the Result tab's caption is the last run's: now there is none
}

QString OutputPanel::topKNote() const {
    return topKNote_->text();
}

void OutputPanel::showOutput(const QModelIndex& index) {
    const OutputValue* value = index.isValid() ? outputModel_->valueAt(index) : nullptr;
    const bool tensor = value && value->kind == OutputValue::Kind::Tensor;
    tableModel_->setTensor(tensor ? value : nullptr);
    // Image
    QImage image;
    if (tensor) {
        const ImageLayout layout = imageLayout(*value);
        const int wanted = channel_->currentIndex();
        {
            const QSignalBlocker blocker(channel_);
            channel_->clear();
            if (layout.isImage()) {
                if (layout.channels >= 3) {
                    channel_->addItem(tr("Colour"));
                }
                for (int c = 0; c < layout.channels; ++c) {
                    channel_->addItem(tr("Channel %1").arg(c));
                }
                channel_->setCurrentIndex(std::clamp(wanted, 0, channel_->count() - 1));
            }
        }
        TensorImageOptions options;
        const int offset = layout.channels >= 3 ? 1 : 0;
        options.channel = channel_->currentIndex() - offset;
        if (layout.channels < 3) {
            options.channel = std::max(0, options.channel);
        }
        options.colormap = static_cast<Colormap>(colormap_->currentIndex());
        const QString range = range_->currentData().toString();
        options.autoRange = range == QLatin1String("auto");
        if (!options.autoRange) {
            options.low = range.section(QLatin1Char(':'), 0, 0).toDouble();
            options.high = range.section(QLatin1Char(':'), 1, 1).toDouble();
        }
        image = tensorToImage(*value, options);
        // Vectors, and one row of an N x K output: the top k.
        const int64_t longest =
            value->shape.empty() ? 1 : *std::max_element(value->shape.begin(), value->shape.end());
        const bool vector = !value->values.empty() && value->numel == longest && value->numel > 1;
        const bool rows = !value->values.empty() && value->shape.size() == 2 &&
                          value->shape[0] > 1 && value->shape[1] > 1;
        {
            const QSignalBlocker blocker(topKRow_);
            topKRow_->setEnabled(rows);
            topKRow_->setRange(0, rows ? static_cast<int>(value->shape[0]) - 1 : 0);
        }
        if (vector) {
            topKModel_->setValues(value->values, 10, topKNames(value->values.size()));
            topKNote_->clear();
        } else if (rows) {
            const auto width = static_cast<size_t>(value->shape[1]);
            const auto first =
                value->values.begin() +
                static_cast<std::ptrdiff_t>(width * static_cast<size_t>(topKRow_->value()));
            topKModel_->setValues(
                std::vector<float>(first, first + static_cast<std::ptrdiff_t>(width)), 10,
                topKNames(width));
            topKNote_->setText(tr("Row %1 of %2 (choose the row on the right).")
                                   .arg(topKRow_->value())
                                   .arg(value->shape[0]));
        } else {
            topKModel_->setValues({}, 0, {});
            labelsNote_->clear();
            topKNote_->setText(
                value->values.empty()
                    ? tr("This output has too many values to rank here.")
                    : tr("Top-k ranks a vector or one row of an N x K output; this output is %1.")
                          .arg(QString::fromStdString(formatShape(value->shape))));
        }
        // The tab that shows this output best: the picture for an image, the ranking for a
        // vector, the numbers otherwise; a run's output drawn as its task stays on Result.
        QWidget* const current = outputPages_->currentWidget();
        const bool picture = current == resultView_->parentWidget() || current == imagePage_;
        if (runArriving_ && interpreted_) {
            if (picture) {
                outputPages_->setCurrentWidget(resultView_->parentWidget());
            }
        } else if (layout.isImage()) {
            outputPages_->setCurrentWidget(imagePage_);
        } else if (vector) {
            outputPages_->setCurrentWidget(topKPage_);
        } else if (!rows && picture) {
            outputPages_->setCurrentWidget(table_);
        }
    }
    imageView_->setImage(image);
    // Compare with the kept result.
    if (kept_ && value) {
        const QString path = index.data(OutputTreeModel::PathRole).toString();
        const OutputValue* other =
            valueAtPath(kept_->output.kind == OutputValue::Kind::Tuple ||
                                kept_->output.kind == OutputValue::Kind::List ||
                                kept_->output.kind == OutputValue::Kind::Dict
                            ? kept_->output
                            : kept_->output,
                        path);
        if (!other) {
            compareText_->setText(tr("The kept result has no output '%1'").arg(path));
            differenceView_->setImage({});
        } else {
            const Difference d = compareTensors(*value, *other);
            if (!d.comparable) {
                compareText_->setText(tr("Not compared: %1").arg(d.why));
            } else {
                const bool otherModel = !kept_->model.empty() && kept_->model != modelPath_;
                compareText_->setText(
                    tr("Against the kept result (%1%4): max |difference| %2, max "
                       "relative difference %3")
                        .arg(QString::fromStdString(kept_->device))
                        .arg(d.maxAbs, 0, 'g', 4)
                        .arg(d.maxRel, 0, 'g', 4)
                        .arg(otherModel ? tr(", of another model: %1")
                                              .arg(QFileInfo(QString::fromStdString(kept_->model))
                                                       .fileName())
                                        : QString()));
            }
            differenceView_->setImage(d.image);
        }
    }
}

namespace {

// The kept result outlives the window (a restart, or a crash of the GUI): it is written in the
// protocol's encoding.
QString keptResultPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/kept-result.cbor");
}

} // namespace

void OutputPanel::restoreKeptResult() {
    QFile file(keptResultPath());
    if (!file.open(QIODevice::ReadOnly)) {
        return;
    }
    const QCborValue value = QCborValue::fromCbor(file.readAll());
    if (!value.isMap()) {
        return;
    }
    kept_ = protocol::runResultFromCbor(value.toMap());
    compareText_->setText(
        tr("Kept from the last session: %1 on %2. The next runs show their difference.")
            .arg(QString::fromStdString(kept_->method), QString::fromStdString(kept_->device)));
}

void OutputPanel::keepResult() {
    if (!last_) {
        compareText_->setText(tr("Run first, then keep the result."));
        return;
    }
    kept_ = last_;
    QDir().mkpath(QFileInfo(keptResultPath()).absolutePath());
    QSaveFile file(keptResultPath());
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(QCborValue(protocol::toCbor(*kept_)).toCbor()) < 0 || !file.commit()) {
        Q_EMIT problem(tr("The kept result could not be saved for the next session"));
    }
    compareText_->setText(
        tr("Kept the result of %1 on %2: the next runs show their difference.")
            .arg(QString::fromStdString(kept_->method), QString::fromStdString(kept_->device)));
    differenceView_->setImage({});
}

QString OutputPanel::comparisonText() const {
    return compareText_->text();
}

} // namespace scriptscope
