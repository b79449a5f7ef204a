#include "output_panel.h"

#include "error_banner.h"
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
#include <QFrame>
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

#include <cmath>
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

    // Above the pages: a warning while the output holds NaN or Inf, with the way to where the
    // first one was made.
    auto* pagesBox = new QWidget(this);
    auto* pagesLayout = new QVBoxLayout(pagesBox);
    pagesLayout->setContentsMargins(0, 0, 0, 0);
    pagesLayout->setSpacing(0);
    nonFinite_ = new QFrame(pagesBox);
    nonFinite_->setObjectName(QStringLiteral("nonFiniteBanner"));
    auto* nonFiniteLayout = new QHBoxLayout(nonFinite_);
    nonFiniteLayout->setContentsMargins(8, 4, 8, 4);
    nonFiniteText_ = new QLabel(nonFinite_);
    nonFiniteText_->setWordWrap(true);
    paintAsErrorBanner(nonFinite_, nonFiniteText_);
    auto* findFirst = new QPushButton(tr("Find the First NaN"), nonFinite_);
    findFirst->setObjectName(QStringLiteral("findFirstNonFinite"));
    findFirst->setToolTip(tr("Records every value of the run in the Numerics workspace and "
                             "selects the first operator whose output held NaN or Inf"));
    connect(findFirst, &QPushButton::clicked, this, [this]() { Q_EMIT firstNonFiniteRequested(); });
    nonFiniteLayout->addWidget(nonFiniteText_, 1);
    nonFiniteLayout->addWidget(findFirst);
    nonFinite_->hide();
    pagesLayout->addWidget(nonFinite_);
    outputPages_ = new QTabWidget(pagesBox);
    pagesLayout->addWidget(outputPages_, 1);
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
    task_->addItem(tr("Optical flow"), QStringLiteral("flow"));
    task_->addItem(tr("None"), QStringLiteral("none"));
    task_->setToolTip(tr("What the output is; Auto recognises torchvision's detections, "
                         "N x C x H x W segmentations, optical flows (a list of N x 2 x H x W) "
                         "and N x K scores, wherever they sit in the output (remembered per "
                         "model)"));
    threshold_ = new QSlider(Qt::Horizontal, resultPage);
    threshold_->setObjectName(QStringLiteral("scoreThreshold"));
    threshold_->setRange(0, 100);
    threshold_->setValue(50);
    threshold_->setMaximumWidth(140);
    threshold_->setToolTip(tr("Detections are drawn from this score"));
    thresholdText_ = new QLabel(resultPage);
    // The task first: a narrow window (QT_SCALE_FACTOR=2) moves the bar's last items into its »
    // menu, and the task is what every result needs. The demo's action follows, shown for a
    // page only.
    resultBar->addWidget(new QLabel(tr("Task "), resultPage));
    resultBar->addWidget(task_);
    resultBar->addSeparator();
    useCorners_ = resultBar->addAction(tr("Corners to Warp Editor"));
    useCorners_->setObjectName(QStringLiteral("useModelCorners"));
    useCorners_->setToolTip(tr(
        "Use the model's corners: the warp editor's handles go on the page's corners as the model "
        "found them, so its warp can be compared with one tuned by hand"));
    useCorners_->setEnabled(false);
    useCorners_->setVisible(false);
    connect(useCorners_, &QAction::triggered, this, [this]() { Q_EMIT useCornersRequested(); });
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
    channel_->setObjectName(QStringLiteral("imageChannel"));
    // Room for its longest entry ("Flow (colour wheel)"), whatever it held first.
    channel_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    channel_->setMinimumContentsLength(19);
    batch_ = new QSpinBox(imagePage);
    batch_->setObjectName(QStringLiteral("imageBatch"));
    batch_->setPrefix(tr("Item "));
    batch_->setToolTip(tr("Which item of the batch (the first dimension) is drawn"));
    imageBar->addWidget(new QLabel(tr("Channel"), imagePage));
    imageBar->addWidget(channel_);
    batchAction_ = imageBar->addWidget(batch_);
    batchAction_->setVisible(false);
    imageBar->addWidget(colormap_);
    imageBar->addWidget(range_);
    imageBar->addWidget(overlay_);
    imageBar->addWidget(saveView);
    imageView_ = new OutputImageView(imagePage);
    imageNote_ = new QLabel(imagePage);
    imageNote_->setObjectName(QStringLiteral("imageNote"));
    imageNote_->setWordWrap(true);
    imageNote_->hide();
    imageLayout->addWidget(imageBar);
    imageLayout->addWidget(imageNote_);
    imageLayout->addWidget(imageView_, 1);
    outputPages_->addTab(resultPage, tr("Result"));
    outputPages_->addTab(imagePage, tr("Image"));
    connect(channel_, &QComboBox::activated, this,
            [this]() { chosenChannel_ = channel_->currentData().toString(); });
    for (QComboBox* box : {channel_, colormap_, range_}) {
        connect(box, &QComboBox::activated, this,
                [this]() { showOutput(outputTree_->currentIndex()); });
    }
    connect(batch_, &QSpinBox::valueChanged, this,
            [this]() { showOutput(outputTree_->currentIndex()); });
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
    addWidget(pagesBox);
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
    const std::string nonFinite = nonFiniteSummary(result.output);
    // Short, so that a small window keeps its pages: the rest is in the tooltip.
    nonFiniteText_->setText(
        nonFinite.empty()
            ? QString()
            : tr("<b>Not finite:</b> %1.").arg(QString::fromStdString(nonFinite).toHtmlEscaped()));
    nonFinite_->setToolTip(tr("Statistics are over the finite values; scores that are not "
                              "finite are not interpreted as a task."));
    nonFinite_->setVisible(!nonFinite.empty());
    // The task first: whether the output is interpreted decides the tab showOutput picks.
    showTask();
    runArriving_ = true;
    outputTree_->setCurrentIndex(select);
    showOutput(select);
    runArriving_ = false;
}

void OutputPanel::clear(const std::string& modelPath) {
    modelPath_ = modelPath;
    last_.reset();
    nonFinite_->hide();
    nonFiniteText_->clear();
    chosenChannel_.clear();
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

QString OutputPanel::nonFiniteWarning() const {
    return nonFinite_->isVisibleTo(this) ? nonFiniteText_->text() : QString();
}

QString OutputPanel::imageNote() const {
    return imageNote_->isVisibleTo(imagePage_) ? imageNote_->text() : QString();
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
        {
            // The view a person chose stays while it fits the next output; else the one that
            // suits its channels (colour, flow, the classes' argmax).
            const QString wanted = chosenChannel_;
            const QSignalBlocker blocker(channel_);
            channel_->clear();
            if (layout.isImage()) {
                for (const ChannelView view : channelViews(layout)) {
                    switch (view) {
                    case ChannelView::Colour:
                        channel_->addItem(tr("Colour"), QStringLiteral("colour"));
                        break;
                    case ChannelView::Flow:
                        channel_->addItem(tr("Flow (colour wheel)"), QStringLiteral("flow"));
                        break;
                    case ChannelView::Argmax:
                        channel_->addItem(tr("Argmax, %1 classes").arg(layout.channels),
                                          QStringLiteral("argmax"));
                        break;
                    case ChannelView::Channel:
                        for (int c = 0; c < layout.channels; ++c) {
                            channel_->addItem(tr("Channel %1").arg(c),
                                              QStringLiteral("channel:%1").arg(c));
                        }
                        break;
                    }
                }
                channel_->setCurrentIndex(std::max(0, channel_->findData(wanted)));
            }
            const QSignalBlocker batchBlocker(batch_);
            batch_->setRange(0, std::max(0, layout.batch - 1));
            batchAction_->setVisible(layout.isImage() && layout.batch > 1);
        }
        TensorImageOptions options;
        const QString view = channel_->currentData().toString();
        options.view = view == QLatin1String("colour")   ? ChannelView::Colour
                       : view == QLatin1String("flow")   ? ChannelView::Flow
                       : view == QLatin1String("argmax") ? ChannelView::Argmax
                                                         : ChannelView::Channel;
        options.channel = view.startsWith(QLatin1String("channel:")) ? view.mid(8).toInt() : 0;
        options.batch = batch_->value();
        options.colormap = static_cast<Colormap>(colormap_->currentIndex());
        const QString range = range_->currentData().toString();
        options.autoRange = range == QLatin1String("auto");
        if (!options.autoRange) {
            options.low = range.section(QLatin1Char(':'), 0, 0).toDouble();
            options.high = range.section(QLatin1Char(':'), 1, 1).toDouble();
        }
        image = tensorToImage(*value, options);
        // Colormap and range mean something for one channel only.
        colormap_->setEnabled(options.view == ChannelView::Channel);
        range_->setEnabled(options.view == ChannelView::Channel ||
                           options.view == ChannelView::Colour);
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
        // NaN is ranked nowhere: the note says how many were left out.
        const auto leftOut = [this](const std::vector<float>& ranked) {
            const auto nan =
                std::count_if(ranked.begin(), ranked.end(), [](float v) { return std::isnan(v); });
            return nan == 0 ? QString()
                   : nan == static_cast<std::ptrdiff_t>(ranked.size())
                       ? tr(" Every value is NaN: nothing is ranked.")
                       : tr(" %1 NaN values are not ranked.").arg(nan);
        };
        if (vector) {
            topKModel_->setValues(value->values, 10, topKNames(value->values.size()));
            topKNote_->setText(leftOut(value->values).trimmed());
        } else if (rows) {
            const auto width = static_cast<size_t>(value->shape[1]);
            const auto first =
                value->values.begin() +
                static_cast<std::ptrdiff_t>(width * static_cast<size_t>(topKRow_->value()));
            const std::vector<float> row(first, first + static_cast<std::ptrdiff_t>(width));
            topKModel_->setValues(row, 10, topKNames(width));
            topKNote_->setText(tr("Row %1 of %2 (choose the row on the right).")
                                   .arg(topKRow_->value())
                                   .arg(value->shape[0]) +
                               leftOut(row));
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
    const QString why = value ? whyNotDrawn(*value, valuesLimit_) : tr("Select an output.");
    imageNote_->setText(why);
    imageNote_->setVisible(!why.isEmpty());
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
