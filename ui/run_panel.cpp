#include "run_panel.h"

#include "output_view.h"
#include "timing_plot.h"
#include "warp_editor.h"
#include "worker_client.h"

#include <input_spec.h>
#include <protocol.h>

#include <QCborValue>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace scriptscope {
namespace {

enum InputColumn {
    ArgumentColumn,
    TypeColumn,
    SourceColumn,
    ValueColumn,
    BrowseColumn,
    InputColumnCount
};

const std::pair<const char*, const char*> kSources[] = {
    {"image", "Image"}, {"warp", "Warp matrix"}, {"random", "Random"},
    {"zeros", "Zeros"}, {"ones", "Ones"},        {"file", "File (torch.save)"},
    {"value", "Value"}, {"none", "None"},        {"default", "Default"},
};

// Up to this many elements per tensor come back whole, for images, tables and comparisons.
constexpr size_t kValuesLimit = 16u << 20;

QString defaultSource(const SchemaArgument& argument) {
    const QString name = QString::fromStdString(argument.name).toLower();
    switch (argumentClass(argument.type)) {
    case ArgumentClass::Tensor:
        if (name.contains(QLatin1String("warp")) || name.contains(QLatin1String("homograph")) ||
            name.contains(QLatin1String("matrix"))) {
            return QStringLiteral("warp");
        }
        if (name.contains(QLatin1String("im")) || name == QLatin1String("x") ||
            name.contains(QLatin1String("input")) || name.contains(QLatin1String("pixel"))) {
            return QStringLiteral("image");
        }
        return QStringLiteral("random");
    case ArgumentClass::Optional:
        return argument.hasDefault ? QStringLiteral("default") : QStringLiteral("none");
    default:
        return argument.hasDefault ? QStringLiteral("default") : QStringLiteral("value");
    }
}

QString defaultValue(const SchemaArgument& argument, const QString& source) {
    if (source == QLatin1String("random") || source == QLatin1String("zeros") ||
        source == QLatin1String("ones")) {
        return QStringLiteral("1x3x224x224");
    }
    if (source != QLatin1String("value")) {
        return {};
    }
    switch (argumentClass(argument.type)) {
    case ArgumentClass::Int:
        return QStringLiteral("0");
    case ArgumentClass::Float:
        return QStringLiteral("0.0");
    case ArgumentClass::Bool:
        return QStringLiteral("false");
    case ArgumentClass::String:
        return QStringLiteral("str:");
    case ArgumentClass::IntList:
        return QStringLiteral("ints:1,2");
    case ArgumentClass::FloatList:
        return QStringLiteral("floats:0.5,1.0");
    default:
        return {};
    }
}

// Whether a value of `kind` fits an argument of class `wanted`; the worker checks the rest.
bool fits(ArgumentClass wanted, InputSpec::Kind kind) {
    using K = InputSpec::Kind;
    const bool tensor = kind == K::Random || kind == K::Zeros || kind == K::Ones ||
                        kind == K::Image || kind == K::Matrix || kind == K::File;
    switch (wanted) {
    case ArgumentClass::Tensor:
        return tensor;
    case ArgumentClass::Int:
        return kind == K::Int || kind == K::File;
    case ArgumentClass::Float:
        return kind == K::Float || kind == K::Int || kind == K::File;
    case ArgumentClass::Bool:
        return kind == K::Bool || kind == K::File;
    case ArgumentClass::String:
        return kind == K::String || kind == K::File;
    case ArgumentClass::IntList:
        return kind == K::IntList || kind == K::File;
    case ArgumentClass::FloatList:
        return kind == K::FloatList || kind == K::IntList || kind == K::File;
    case ArgumentClass::Optional:
    case ArgumentClass::Other:
        return true;
    }
    return true;
}

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

QString settingsKey(const QString& modelPath) {
    return QStringLiteral("run/models/") +
           QString::fromLatin1(modelPath.toUtf8().toBase64(QByteArray::Base64UrlEncoding));
}

} // namespace

RunPanel::RunPanel(WorkerClient* worker, WarpEditor* warpEditor, QWidget* parent)
    : QWidget(parent)
    , worker_(worker)
    , warpEditor_(warpEditor) {
    buildUi();
    restoreKeptResult();
    connect(worker_, &WorkerClient::devicesKnown, this,
            [this](const std::vector<DeviceInfo>& devices) { showDevices(devices); });
    connect(worker_, &WorkerClient::runFinished, this, [this](quint64 id, const RunResult& result) {
        if (id != request_) {
            return;
        }
        request_ = 0;
        showResult(result);
        if (continuous_) {
            QTimer::singleShot(0, this, [this]() {
                if (continuous_) {
                    runOnce();
                }
            });
        }
    });
    connect(worker_, &WorkerClient::failed, this, [this](quint64 id, const Error& error) {
        if (id != request_) {
            return;
        }
        request_ = 0;
        setContinuous(false); // a demo loop stops at the first error
        const QString message = QString::fromStdString(error.message);
        showStatus(message, true);
        Q_EMIT runFailed(message);
    });
    if (warpEditor_) {
        // Live: each committed change of the matrix (the end of a drag, a typed value) runs again.
        connect(warpEditor_, &WarpEditor::stateChanged, this, [this]() {
            if (!live_->isChecked() || model_.modules.empty() || request_ != 0) {
                return;
            }
            for (int row = 0; row < inputs_->rowCount(); ++row) {
                auto* source = qobject_cast<QComboBox*>(inputs_->cellWidget(row, SourceColumn));
                if (source && source->currentData().toString() == QLatin1String("warp")) {
                    runOnce();
                    return;
                }
            }
        });
    }
}

RunPanel::~RunPanel() = default;

void RunPanel::buildUi() {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    layout->addWidget(splitter);

    // Settings.
    auto* settingsPanel = new QWidget;
    auto* settingsLayout = new QVBoxLayout(settingsPanel);
    auto* target = new QGroupBox(tr("Run"), settingsPanel);
    auto* targetForm = new QFormLayout(target);
    method_ = new QComboBox(target);
    device_ = new QComboBox(target);
    device_->addItem(tr("CPU"), QStringLiteral("cpu"));
    deviceNote_ = new QLabel(target);
    deviceNote_->setWordWrap(true);
    deviceNote_->setStyleSheet(QStringLiteral("color: palette(mid);"));
    targetForm->addRow(tr("Method"), method_);
    targetForm->addRow(tr("Device"), device_);
    targetForm->addRow(deviceNote_);
    settingsLayout->addWidget(target);
    connect(method_, &QComboBox::currentIndexChanged, this, [this]() { fillInputs(); });

    auto* inputsBox = new QGroupBox(tr("Inputs (one per argument)"), settingsPanel);
    auto* inputsLayout = new QVBoxLayout(inputsBox);
    inputs_ = new QTableWidget(0, InputColumnCount, inputsBox);
    inputs_->setHorizontalHeaderLabels(
        {tr("Argument"), tr("Type"), tr("Source"), tr("Value"), QString()});
    inputs_->verticalHeader()->hide();
    inputs_->horizontalHeader()->setSectionResizeMode(ValueColumn, QHeaderView::Stretch);
    inputs_->horizontalHeader()->setSectionResizeMode(ArgumentColumn,
                                                      QHeaderView::ResizeToContents);
    inputs_->horizontalHeader()->setSectionResizeMode(TypeColumn, QHeaderView::ResizeToContents);
    inputs_->horizontalHeader()->setSectionResizeMode(SourceColumn, QHeaderView::ResizeToContents);
    inputs_->horizontalHeader()->setSectionResizeMode(BrowseColumn, QHeaderView::ResizeToContents);
    inputs_->setMinimumHeight(120);
    inputsLayout->addWidget(inputs_);
    auto* hint = new QLabel(tr("Shapes like 1x3x224x224[:dtype[:seed]]; values like 3, 0.5, true, "
                               "str:text, ints:1,2, floats:0.5,1"),
                            inputsBox);
    hint->setWordWrap(true);
    hint->setStyleSheet(QStringLiteral("color: palette(mid);"));
    inputsLayout->addWidget(hint);
    settingsLayout->addWidget(inputsBox);

    auto* imageBox = new QGroupBox(tr("Image preprocessing"), settingsPanel);
    auto* imageForm = new QFormLayout(imageBox);
    imageSize_ = new QLineEdit(imageBox);
    imageSize_->setPlaceholderText(tr("keep (or WxH, e.g. 224x224)"));
    imageOrder_ = new QComboBox(imageBox);
    imageOrder_->addItem(QStringLiteral("RGB"), QStringLiteral("rgb"));
    imageOrder_->addItem(QStringLiteral("BGR"), QStringLiteral("bgr"));
    imageLayout_ = new QComboBox(imageBox);
    imageLayout_->addItem(QStringLiteral("CHW"), QStringLiteral("chw"));
    imageLayout_->addItem(QStringLiteral("HWC"), QStringLiteral("hwc"));
    imageBatch_ = new QCheckBox(tr("Leading batch dimension"), imageBox);
    imageBatch_->setChecked(true);
    imageDtype_ = new QComboBox(imageBox);
    for (const char* dtype : {"float32", "float64", "float16", "uint8"}) {
        imageDtype_->addItem(QLatin1String(dtype), QLatin1String(dtype));
    }
    imageScale_ = new QLineEdit(QStringLiteral("1/255"), imageBox);
    imageMean_ = new QLineEdit(imageBox);
    imageMean_->setPlaceholderText(tr("none (or a/b/c)"));
    imageStd_ = new QLineEdit(imageBox);
    imageStd_->setPlaceholderText(tr("none (or a/b/c)"));
    auto* imagenet = new QPushButton(tr("ImageNet"), imageBox);
    imagenet->setToolTip(
        tr("224x224, RGB, CHW, 1/255, mean 0.485/0.456/0.406, std 0.229/0.224/0.225"));
    connect(imagenet, &QPushButton::clicked, this, [this]() {
        imageSize_->setText(QStringLiteral("224x224"));
        imageOrder_->setCurrentIndex(0);
        imageLayout_->setCurrentIndex(0);
        imageBatch_->setChecked(true);
        imageDtype_->setCurrentIndex(0);
        imageScale_->setText(QStringLiteral("1/255"));
        imageMean_->setText(QStringLiteral("0.485/0.456/0.406"));
        imageStd_->setText(QStringLiteral("0.229/0.224/0.225"));
    });
    auto* orderRow = new QHBoxLayout;
    orderRow->addWidget(imageOrder_);
    orderRow->addWidget(imageLayout_);
    orderRow->addWidget(imageDtype_);
    imageForm->addRow(tr("Size"), imageSize_);
    imageForm->addRow(tr("Order, layout, dtype"), orderRow);
    imageForm->addRow(imageBatch_);
    imageForm->addRow(tr("Scale"), imageScale_);
    imageForm->addRow(tr("Mean"), imageMean_);
    imageForm->addRow(tr("Std"), imageStd_);
    imageForm->addRow(tr("Preset"), imagenet);
    settingsLayout->addWidget(imageBox);

    auto* timingBox = new QGroupBox(tr("Timing"), settingsPanel);
    auto* timingForm = new QFormLayout(timingBox);
    warmup_ = new QSpinBox(timingBox);
    warmup_->setRange(0, 10000);
    warmup_->setValue(2);
    iterations_ = new QSpinBox(timingBox);
    iterations_->setRange(1, 100000);
    iterations_->setValue(20);
    profile_ = new QCheckBox(tr("Profile one more run per module"), timingBox);
    profile_->setToolTip(tr("Times every operator call of one extra run (RecordFunction) and gives "
                            "each module its share; the timed iterations run without it"));
    live_ = new QCheckBox(tr("Live: run again when the warp matrix changes"), timingBox);
    timingForm->addRow(tr("Warm-up"), warmup_);
    timingForm->addRow(tr("Iterations"), iterations_);
    timingForm->addRow(profile_);
    timingForm->addRow(live_);
    settingsLayout->addWidget(timingBox);

    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(tr("&Run"), settingsPanel);
    run_->setDefault(true);
    runContinuously_ = new QPushButton(tr("Run &continuously"), settingsPanel);
    runContinuously_->setCheckable(true);
    cancel_ = new QPushButton(tr("Cancel"), settingsPanel);
    cancel_->setEnabled(false);
    buttons->addWidget(run_);
    buttons->addWidget(runContinuously_);
    buttons->addWidget(cancel_);
    settingsLayout->addLayout(buttons);
    status_ = new QLabel(settingsPanel);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    settingsLayout->addWidget(status_);
    settingsLayout->addStretch(1);
    connect(run_, &QPushButton::clicked, this, [this]() { runOnce(); });
    connect(runContinuously_, &QPushButton::toggled, this, [this](bool on) { setContinuous(on); });
    connect(cancel_, &QPushButton::clicked, this, [this]() { cancel(); });

    auto* settingsScroll = new QScrollArea(splitter);
    settingsScroll->setWidget(settingsPanel);
    settingsScroll->setWidgetResizable(true);
    settingsScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    settingsScroll->setMinimumWidth(460);

    // Results.
    auto* results = new QSplitter(Qt::Vertical, splitter);
    auto* outputs = new QSplitter(Qt::Horizontal, results);
    outputModel_ = new OutputTreeModel(this);
    outputTree_ = new QTreeView(outputs);
    outputTree_->setModel(outputModel_);
    outputTree_->setUniformRowHeights(true);
    outputTree_->setAlternatingRowColors(true);
    outputTree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    connect(outputTree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& index) { showOutput(index); });

    outputPages_ = new QTabWidget(outputs);
    auto* imagePage = new QWidget(outputPages_);
    auto* imageLayout = new QVBoxLayout(imagePage);
    auto* imageBar = new QHBoxLayout;
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
    imageBar->addStretch(1);
    imageBar->addWidget(saveView);
    imageView_ = new OutputImageView(imagePage);
    imageLayout->addLayout(imageBar);
    imageLayout->addWidget(imageView_, 1);
    outputPages_->addTab(imagePage, tr("Image"));
    for (QComboBox* box : {channel_, colormap_, range_}) {
        connect(box, &QComboBox::activated, this,
                [this]() { showOutput(outputTree_->currentIndex()); });
    }
    connect(overlay_, &QCheckBox::toggled, imageView_, &OutputImageView::setOverlayVisible);
    connect(saveView, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save View"), QStringLiteral("output.png"), tr("PNG image (*.png)"));
        if (!path.isEmpty() && !imageView_->render().save(path)) {
            showStatus(tr("Cannot write %1").arg(path), true);
        }
    });

    auto* topKPage = new QWidget(outputPages_);
    auto* topKLayout = new QVBoxLayout(topKPage);
    auto* labelsBar = new QHBoxLayout;
    auto* labels = new QPushButton(tr("Labels File…"), topKPage);
    labels->setToolTip(tr("A text file with one label per line, in index order"));
    labelsNote_ = new QLabel(tr("No labels"), topKPage);
    labelsBar->addWidget(labels);
    labelsBar->addWidget(labelsNote_, 1);
    topKModel_ = new TopKModel(this);
    topK_ = new QTableView(topKPage);
    topK_->setModel(topKModel_);
    topK_->verticalHeader()->hide();
    topK_->horizontalHeader()->setStretchLastSection(true);
    topKLayout->addLayout(labelsBar);
    topKLayout->addWidget(topK_);
    outputPages_->addTab(topKPage, tr("Top-k"));
    connect(labels, &QPushButton::clicked, this, [this]() {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Labels"), {}, tr("Text (*.txt);;All files (*)"));
        QFile file(path);
        if (path.isEmpty() || !file.open(QIODevice::ReadOnly | QIODevice::Text)) {
            return;
        }
        labels_ = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
        while (!labels_.isEmpty() && labels_.last().trimmed().isEmpty()) {
            labels_.removeLast();
        }
        labelsNote_->setText(
            tr("%1 labels from %2").arg(labels_.size()).arg(QFileInfo(path).fileName()));
        showOutput(outputTree_->currentIndex());
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
    outputs->addWidget(outputTree_);
    outputs->addWidget(outputPages_);
    outputs->setStretchFactor(1, 2);

    auto* bottom = new QTabWidget(results);
    auto* timingPage = new QWidget(bottom);
    auto* timingLayout = new QVBoxLayout(timingPage);
    plot_ = new TimingPlot(timingPage);
    history_ = new RunHistoryModel(this);
    auto* historyView = new QTableView(timingPage);
    historyView->setModel(history_);
    historyView->verticalHeader()->hide();
    historyView->horizontalHeader()->setStretchLastSection(true);
    historyView->setMaximumHeight(110);
    auto* plotBar = new QHBoxLayout;
    auto* png = new QPushButton(tr("Export PNG…"), timingPage);
    auto* pdf = new QPushButton(tr("Export PDF…"), timingPage);
    auto* csv = new QPushButton(tr("Export Samples (CSV)…"), timingPage);
    auto* clear = new QPushButton(tr("Clear Runs"), timingPage);
    plotBar->addWidget(png);
    plotBar->addWidget(pdf);
    plotBar->addWidget(csv);
    plotBar->addStretch(1);
    plotBar->addWidget(clear);
    timingLayout->addWidget(plot_, 1);
    timingLayout->addWidget(historyView);
    timingLayout->addLayout(plotBar);
    bottom->addTab(timingPage, tr("Timing"));
    connect(png, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Plot"), QStringLiteral("timing.png"), tr("PNG (*.png)"));
        if (!path.isEmpty() && !plot_->savePng(path)) {
            showStatus(tr("Cannot write %1").arg(path), true);
        }
    });
    connect(pdf, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Plot"), QStringLiteral("timing.pdf"), tr("PDF (*.pdf)"));
        if (!path.isEmpty() && !plot_->savePdf(path)) {
            showStatus(tr("Cannot write %1").arg(path), true);
        }
    });
    connect(csv, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Samples"), QStringLiteral("timing.csv"), tr("CSV (*.csv)"));
        QFile file(path);
        if (path.isEmpty()) {
            return;
        }
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text) ||
            file.write(history_->toCsv().toUtf8()) < 0) {
            showStatus(tr("Cannot write %1").arg(path), true);
        }
    });
    connect(clear, &QPushButton::clicked, this, [this]() {
        history_->clear();
        plot_->setRuns(history_->runs());
    });

    auto* profilePage = new QWidget(bottom);
    auto* profileLayout = new QVBoxLayout(profilePage);
    profileSummary_ =
        new QLabel(tr("Tick \"Profile\" and run: every operator call is timed and the "
                      "module tree (Model tab) gets a time column."),
                   profilePage);
    profileSummary_->setWordWrap(true);
    profileModel_ = new OperatorProfileModel(this);
    auto* profileProxy = new QSortFilterProxyModel(this);
    profileProxy->setSourceModel(profileModel_);
    profileProxy->setSortRole(Qt::UserRole);
    auto* profileView = new QTableView(profilePage);
    profileView->setModel(profileProxy);
    profileView->setSortingEnabled(true);
    profileView->sortByColumn(OperatorProfileModel::TotalColumn, Qt::DescendingOrder);
    profileView->verticalHeader()->hide();
    profileView->horizontalHeader()->setSectionResizeMode(OperatorProfileModel::NameColumn,
                                                          QHeaderView::Stretch);
    profileLayout->addWidget(profileSummary_);
    profileLayout->addWidget(profileView, 1);
    bottom->addTab(profilePage, tr("Profile"));

    results->addWidget(outputs);
    results->addWidget(bottom);
    results->setStretchFactor(0, 3);
    results->setStretchFactor(1, 2);
    splitter->addWidget(settingsScroll);
    splitter->addWidget(results);
    splitter->setStretchFactor(1, 1);
}

void RunPanel::showDevices(const std::vector<DeviceInfo>& devices) {
    devices_ = devices;
    const QString current = device_->currentData().toString();
    device_->clear();
    QStringList unavailable;
    for (const DeviceInfo& d : devices) {
        QString label = QString::fromStdString(d.id == "cpu" ? std::string("CPU") : d.id);
        if (!d.name.empty() && d.id != "cpu") {
            label += QStringLiteral(" · ") + QString::fromStdString(d.name);
        }
        if (d.memoryBytes > 0) {
            label += QStringLiteral(" · %1 GiB")
                         .arg(static_cast<double>(d.memoryBytes) / (1u << 30), 0, 'f', 1);
        }
        device_->addItem(label, QString::fromStdString(d.id));
        if (!d.available) {
            // Shown, but not selectable, with the reason.
            const int row = device_->count() - 1;
            device_->setItemData(row, QString::fromStdString(d.reason), Qt::ToolTipRole);
            if (auto* model = qobject_cast<QStandardItemModel*>(device_->model())) {
                model->item(row)->setEnabled(false);
            }
            unavailable << QString::fromStdString(d.reason);
        }
    }
    const int restore = device_->findData(current);
    device_->setCurrentIndex(restore >= 0 ? restore : 0);
    deviceNote_->setText(unavailable.isEmpty()
                             ? QString()
                             : tr("CUDA: %1").arg(unavailable.join(QStringLiteral("; "))));
}

QString RunPanel::deviceNote() const {
    return deviceNote_->text();
}

void RunPanel::setModel(const ModelInfo& model) {
    if (!model_.modules.empty() && model.path == model_.path) {
        model_ = model;
        return; // a reload keeps what the person set
    }
    saveSettings();
    model_ = model;
    const QJsonObject saved =
        QJsonDocument::fromJson(
            QSettings().value(settingsKey(QString::fromStdString(model.path))).toString().toUtf8())
            .object();
    fillMethods();
    if (!saved.isEmpty()) {
        const int method = method_->findText(saved.value(QStringLiteral("method")).toString());
        if (method >= 0) {
            method_->setCurrentIndex(method);
        }
        const int device = device_->findData(saved.value(QStringLiteral("device")).toString());
        if (device >= 0) {
            device_->setCurrentIndex(device);
        }
        warmup_->setValue(saved.value(QStringLiteral("warmup")).toInt(warmup_->value()));
        iterations_->setValue(
            saved.value(QStringLiteral("iterations")).toInt(iterations_->value()));
        profile_->setChecked(saved.value(QStringLiteral("profile")).toBool(false));
        const QJsonObject image = saved.value(QStringLiteral("image")).toObject();
        imageSize_->setText(image.value(QStringLiteral("size")).toString());
        imageOrder_->setCurrentIndex(
            std::max(0, imageOrder_->findData(image.value(QStringLiteral("order")).toString())));
        imageLayout_->setCurrentIndex(
            std::max(0, imageLayout_->findData(image.value(QStringLiteral("layout")).toString())));
        imageBatch_->setChecked(image.value(QStringLiteral("batch")).toBool(true));
        imageDtype_->setCurrentIndex(
            std::max(0, imageDtype_->findData(image.value(QStringLiteral("dtype")).toString())));
        imageScale_->setText(
            image.value(QStringLiteral("scale")).toString(QStringLiteral("1/255")));
        imageMean_->setText(image.value(QStringLiteral("mean")).toString());
        imageStd_->setText(image.value(QStringLiteral("std")).toString());
        const QJsonArray rows = saved.value(QStringLiteral("inputs")).toArray();
        if (rows.size() == inputs_->rowCount()) {
            for (int row = 0; row < rows.size(); ++row) {
                const QJsonObject r = rows.at(row).toObject();
                setInput(row, r.value(QStringLiteral("source")).toString(),
                         r.value(QStringLiteral("value")).toString());
            }
        }
    }
    showStatus(tr("Ready to run %1").arg(QFileInfo(QString::fromStdString(model.path)).fileName()),
               false);
}

void RunPanel::fillMethods() {
    const QSignalBlocker blocker(method_);
    method_->clear();
    if (!model_.modules.empty()) {
        for (const MethodInfo& m : model_.modules.front().methods) {
            method_->addItem(QString::fromStdString(m.name));
        }
        const int forward = method_->findText(QStringLiteral("forward"));
        method_->setCurrentIndex(std::max(0, forward));
    }
    fillInputs();
}

const MethodInfo* RunPanel::currentMethod() const {
    if (model_.modules.empty()) {
        return nullptr;
    }
    for (const MethodInfo& m : model_.modules.front().methods) {
        if (QString::fromStdString(m.name) == method_->currentText()) {
            return &m;
        }
    }
    return nullptr;
}

void RunPanel::fillInputs() {
    const MethodInfo* method = currentMethod();
    arguments_ = method ? schemaArguments(method->schema) : std::vector<SchemaArgument>{};
    inputs_->setRowCount(0);
    inputs_->setRowCount(static_cast<int>(arguments_.size()));
    for (int row = 0; row < static_cast<int>(arguments_.size()); ++row) {
        const SchemaArgument& argument = arguments_[static_cast<size_t>(row)];
        auto* name = new QTableWidgetItem(QString::fromStdString(argument.name));
        name->setFlags(Qt::ItemIsEnabled);
        auto* type = new QTableWidgetItem(
            QString::fromStdString(argument.type) +
            (argument.hasDefault
                 ? QStringLiteral(" = ") + QString::fromStdString(argument.defaultValue)
                 : QString()));
        type->setFlags(Qt::ItemIsEnabled);
        inputs_->setItem(row, ArgumentColumn, name);
        inputs_->setItem(row, TypeColumn, type);
        auto* source = new QComboBox(inputs_);
        for (const auto& [key, label] : kSources) {
            if (QLatin1String(key) == QLatin1String("default") && !argument.hasDefault) {
                continue;
            }
            source->addItem(tr(label), QLatin1String(key));
            if (QLatin1String(key) == QLatin1String("image")) {
                source->setItemData(source->count() - 1, tr("The warp editor's image, or a file"),
                                    Qt::ToolTipRole);
            } else if (QLatin1String(key) == QLatin1String("warp")) {
                source->setItemData(source->count() - 1,
                                    tr("The warp editor's current 3x3 matrix (float32)"),
                                    Qt::ToolTipRole);
            }
        }
        auto* value = new QLineEdit(inputs_);
        auto* browse = new QToolButton(inputs_);
        browse->setText(QStringLiteral("…"));
        browse->setToolTip(tr("Choose a file"));
        inputs_->setCellWidget(row, SourceColumn, source);
        inputs_->setCellWidget(row, ValueColumn, value);
        inputs_->setCellWidget(row, BrowseColumn, browse);
        connect(source, &QComboBox::activated, this, [this, row, source]() {
            setInput(row, source->currentData().toString(),
                     defaultValue(arguments_[static_cast<size_t>(row)],
                                  source->currentData().toString()));
        });
        connect(browse, &QToolButton::clicked, this, [this, row]() {
            const QString path = QFileDialog::getOpenFileName(
                this, tr("Input for %1")
                          .arg(QString::fromStdString(arguments_[static_cast<size_t>(row)].name)));
            if (!path.isEmpty()) {
                auto* box = qobject_cast<QComboBox*>(inputs_->cellWidget(row, SourceColumn));
                const QString chosen = box->currentData().toString();
                setInput(row, chosen == QLatin1String("image") ? chosen : QStringLiteral("file"),
                         path);
            }
        });
        const QString initial = defaultSource(argument);
        setInput(row, initial, defaultValue(argument, initial));
    }
}

void RunPanel::setInput(int row, const QString& source, const QString& value) {
    auto* box = qobject_cast<QComboBox*>(inputs_->cellWidget(row, SourceColumn));
    auto* edit = qobject_cast<QLineEdit*>(inputs_->cellWidget(row, ValueColumn));
    auto* browse = inputs_->cellWidget(row, BrowseColumn);
    if (!box || !edit) {
        return;
    }
    const int index = box->findData(source);
    box->setCurrentIndex(std::max(0, index));
    const QString key = box->currentData().toString();
    edit->setText(value);
    edit->setEnabled(key != QLatin1String("warp") && key != QLatin1String("none") &&
                     key != QLatin1String("default"));
    browse->setEnabled(key == QLatin1String("image") || key == QLatin1String("file"));
    if (key == QLatin1String("image")) {
        edit->setPlaceholderText(warpEditor_ && !warpEditor_->imagePath().isEmpty()
                                     ? QFileInfo(warpEditor_->imagePath()).fileName()
                                     : tr("an image file"));
        edit->setToolTip(tr("Empty: the warp editor's image"));
    } else if (key == QLatin1String("warp")) {
        edit->setPlaceholderText(tr("the warp editor's current 3x3 matrix"));
    } else if (key == QLatin1String("file")) {
        edit->setPlaceholderText(tr("a file written by torch.save"));
    } else if (key == QLatin1String("value")) {
        edit->setPlaceholderText(tr("3, 0.5, true, str:text, ints:1,2"));
    } else {
        edit->setPlaceholderText(tr("shape, e.g. 1x3x224x224[:dtype[:seed]]"));
    }
}

QString RunPanel::imageOptions() const {
    QString options;
    const QString size = imageSize_->text().trimmed();
    if (!size.isEmpty()) {
        options += QStringLiteral(",size=") + size;
    }
    options += QStringLiteral(",order=") + imageOrder_->currentData().toString();
    options += QStringLiteral(",layout=") + imageLayout_->currentData().toString();
    options += QStringLiteral(",batch=") +
               (imageBatch_->isChecked() ? QLatin1Char('1') : QLatin1Char('0'));
    options += QStringLiteral(",dtype=") + imageDtype_->currentData().toString();
    const QString scale = imageScale_->text().trimmed();
    if (!scale.isEmpty()) {
        options += QStringLiteral(",scale=") + scale;
    }
    if (!imageMean_->text().trimmed().isEmpty()) {
        options += QStringLiteral(",mean=") + imageMean_->text().trimmed();
    }
    if (!imageStd_->text().trimmed().isEmpty()) {
        options += QStringLiteral(",std=") + imageStd_->text().trimmed();
    }
    return options;
}

std::optional<RunRequest> RunPanel::buildRequest(QString* why) const {
    auto fail = [why](const QString& message) -> std::optional<RunRequest> {
        if (why) {
            *why = message;
        }
        return std::nullopt;
    };
    if (model_.modules.empty()) {
        return fail(tr("Open a model first"));
    }
    RunRequest request;
    request.method = method_->currentText().toStdString();
    request.device = device_->currentData().toString().toStdString();
    request.warmup = warmup_->value();
    request.iterations = iterations_->value();
    request.profile = profile_->isChecked();
    request.valuesLimit = kValuesLimit;
    int firstDefault = -1;
    for (int row = 0; row < inputs_->rowCount(); ++row) {
        const SchemaArgument& argument = arguments_[static_cast<size_t>(row)];
        const QString name = QString::fromStdString(argument.name);
        const QString source = qobject_cast<QComboBox*>(inputs_->cellWidget(row, SourceColumn))
                                   ->currentData()
                                   .toString();
        const QString text =
            qobject_cast<QLineEdit*>(inputs_->cellWidget(row, ValueColumn))->text().trimmed();
        if (source == QLatin1String("default")) {
            firstDefault = firstDefault < 0 ? row : firstDefault;
            continue;
        }
        if (firstDefault >= 0) {
            return fail(tr("Argument '%1' is set, but '%2' before it uses its default: inputs are "
                           "positional, so set '%2' too")
                            .arg(name, QString::fromStdString(
                                           arguments_[static_cast<size_t>(firstDefault)].name)));
        }
        InputSpec spec;
        if (source == QLatin1String("warp")) {
            if (!warpEditor_) {
                return fail(tr("Argument '%1': there is no warp editor").arg(name));
            }
            spec.kind = InputSpec::Kind::Matrix;
            const Homography& h = warpEditor_->matrix();
            spec.floatList.assign(h.begin(), h.end());
        } else if (source == QLatin1String("none")) {
            spec.kind = InputSpec::Kind::None;
        } else {
            QString specText;
            if (source == QLatin1String("image")) {
                const QString path =
                    text.isEmpty() && warpEditor_ ? warpEditor_->imagePath() : text;
                if (path.isEmpty()) {
                    return fail(tr("Argument '%1': the warp editor's image has no file; open one "
                                   "there or give a path")
                                    .arg(name));
                }
                specText = QStringLiteral("image:") + path + imageOptions();
            } else if (source == QLatin1String("file")) {
                specText = QStringLiteral("file:") + text;
            } else if (source == QLatin1String("value")) {
                specText = text;
            } else {
                specText = source + QLatin1Char(':') + text;
            }
            auto parsed = parseInputSpec(specText.toStdString());
            if (!parsed) {
                return fail(tr("Argument '%1': %2")
                                .arg(name, QString::fromStdString(parsed.error().message)));
            }
            spec = *parsed;
        }
        if (!fits(argumentClass(argument.type), spec.kind)) {
            return fail(tr("Argument '%1' is %2, but the input is %3")
                            .arg(name, QString::fromStdString(argument.type),
                                 QString::fromStdString(spec.describe())));
        }
        request.inputs.push_back(std::move(spec));
    }
    return request;
}

void RunPanel::runOnce() {
    QString why;
    const auto request = buildRequest(&why);
    if (!request) {
        setContinuous(false);
        showStatus(why, true);
        Q_EMIT runFailed(why);
        return;
    }
    saveSettings();
    request_ = worker_->run(*request);
    cancel_->setEnabled(true);
    run_->setEnabled(false);
    showStatus(tr("Running %1 on %2: %3 warm-up, %4 iterations%5…")
                   .arg(QString::fromStdString(request->method), device_->currentText())
                   .arg(request->warmup)
                   .arg(request->iterations)
                   .arg(request->profile ? tr(", then one profiled run") : QString()),
               false);
}

void RunPanel::setContinuous(bool on) {
    continuous_ = on;
    if (runContinuously_->isChecked() != on) {
        const QSignalBlocker blocker(runContinuously_);
        runContinuously_->setChecked(on);
    }
    if (on && request_ == 0) {
        runOnce();
    }
}

void RunPanel::cancel() {
    setContinuous(false);
    if (request_ != 0) {
        worker_->cancel();
    }
}

void RunPanel::showStatus(const QString& text, bool problem) {
    status_->setText(text);
    status_->setStyleSheet(problem ? QStringLiteral("color: #c62828; font-weight: bold;")
                                   : QString());
    if (request_ == 0) {
        cancel_->setEnabled(false);
        run_->setEnabled(true);
    }
}

QString RunPanel::statusText() const {
    return status_->text();
}

void RunPanel::showResult(const RunResult& result) {
    last_ = result;
    const RunRecord& record = history_->add(result);
    plot_->setRuns(history_->runs());
    const TimingStats& s = result.stats;
    imageView_->setOverlay(
        {QStringLiteral("%1 · %2").arg(QString::fromStdString(result.device),
                                       QString::fromStdString(result.deviceName)),
         tr("p50 %1 ms   p90 %2 ms").arg(s.p50, 0, 'f', 2).arg(s.p90, 0, 'f', 2),
         tr("%1 fps at p50").arg(s.p50 > 0 ? 1000.0 / s.p50 : 0.0, 0, 'f', 1),
         tr("%1 iterations after %2 warm-up").arg(result.samplesMs.size()).arg(result.warmup)});
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
    outputTree_->setCurrentIndex(select);
    showOutput(select);
    if (result.profiled) {
        profileModel_->setProfile(result.profile);
        profileSummary_->setText(
            tr("Profiled run: %1 ms end to end, %2 ms in %3 operator kinds; "
               "profiling added %4 (against the p50 of the timed runs). The "
               "module tree on the Model tab shows each module's share.")
                .arg(result.profile.wallMs, 0, 'f', 2)
                .arg(result.profile.operatorMs, 0, 'f', 2)
                .arg(result.profile.operators.size())
                .arg(s.p50 > 0 ? QStringLiteral("%1 %").arg(
                                     100.0 * (result.profile.wallMs / s.p50 - 1), 0, 'f', 0)
                               : QStringLiteral("?")));
        Q_EMIT profileReady(result.profile);
    }
    showStatus(tr("Run %1: p50 %2 ms on %3")
                   .arg(record.number)
                   .arg(s.p50, 0, 'f', 3)
                   .arg(QString::fromStdString(result.device)),
               false);
    Q_EMIT runShown(result);
}

void RunPanel::showOutput(const QModelIndex& index) {
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
        // Vectors: the top k.
        const int64_t longest =
            value->shape.empty() ? 1 : *std::max_element(value->shape.begin(), value->shape.end());
        if (!value->values.empty() && value->numel == longest && value->numel > 1) {
            topKModel_->setValues(value->values, 10, labels_);
            if (!layout.isImage()) {
                outputPages_->setCurrentIndex(1);
            }
        } else {
            topKModel_->setValues({}, 0, {});
        }
        if (layout.isImage()) {
            outputPages_->setCurrentIndex(0);
        } else if (!(value->numel == longest && value->numel > 1) &&
                   outputPages_->currentIndex() < 2) {
            outputPages_->setCurrentIndex(2);
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
                compareText_->setText(tr("Against the kept result (%1): max |difference| %2, max "
                                         "relative difference %3")
                                          .arg(QString::fromStdString(kept_->device))
                                          .arg(d.maxAbs, 0, 'g', 4)
                                          .arg(d.maxRel, 0, 'g', 4));
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

void RunPanel::restoreKeptResult() {
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

void RunPanel::keepResult() {
    if (!last_) {
        compareText_->setText(tr("Run first, then keep the result."));
        return;
    }
    kept_ = last_;
    QDir().mkpath(QFileInfo(keptResultPath()).absolutePath());
    QSaveFile file(keptResultPath());
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(QCborValue(protocol::toCbor(*kept_)).toCbor()) < 0 || !file.commit()) {
        showStatus(tr("The kept result could not be saved for the next session"), true);
    }
    compareText_->setText(
        tr("Kept the result of %1 on %2: the next runs show their difference.")
            .arg(QString::fromStdString(kept_->method), QString::fromStdString(kept_->device)));
    differenceView_->setImage({});
}

QString RunPanel::comparisonText() const {
    return compareText_->text();
}

QJsonObject RunPanel::settings() const {
    QJsonArray rows;
    for (int row = 0; row < inputs_->rowCount(); ++row) {
        rows.append(
            QJsonObject{{QStringLiteral("source"),
                         qobject_cast<QComboBox*>(inputs_->cellWidget(row, SourceColumn))
                             ->currentData()
                             .toString()},
                        {QStringLiteral("value"),
                         qobject_cast<QLineEdit*>(inputs_->cellWidget(row, ValueColumn))->text()}});
    }
    return {
        {QStringLiteral("method"), method_->currentText()},
        {QStringLiteral("device"), device_->currentData().toString()},
        {QStringLiteral("warmup"), warmup_->value()},
        {QStringLiteral("iterations"), iterations_->value()},
        {QStringLiteral("profile"), profile_->isChecked()},
        {QStringLiteral("inputs"), rows},
        {QStringLiteral("image"),
         QJsonObject{{QStringLiteral("size"), imageSize_->text()},
                     {QStringLiteral("order"), imageOrder_->currentData().toString()},
                     {QStringLiteral("layout"), imageLayout_->currentData().toString()},
                     {QStringLiteral("batch"), imageBatch_->isChecked()},
                     {QStringLiteral("dtype"), imageDtype_->currentData().toString()},
                     {QStringLiteral("scale"), imageScale_->text()},
                     {QStringLiteral("mean"), imageMean_->text()},
                     {QStringLiteral("std"), imageStd_->text()}}},
    };
}

void RunPanel::saveSettings() const {
    if (model_.modules.empty()) {
        return;
    }
    QSettings settings;
    settings.setValue(
        settingsKey(QString::fromStdString(model_.path)),
        QString::fromUtf8(QJsonDocument(this->settings()).toJson(QJsonDocument::Compact)));
}

} // namespace scriptscope
