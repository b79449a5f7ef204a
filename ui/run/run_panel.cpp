#include "run_panel.h"

#include "capability.h"
#include "frame_player.h"
#include "input_table.h"
#include "output_panel.h"
#include "output_view.h"
#include "problem_label.h"
#include "timing_plot.h"
#include "warp_editor.h"
#include "worker_client.h"

#include <format.h>
#include <input_spec.h>
#include <protocol.h>
#include <stats.h>
#include <task_result.h>

#include <opencv2/core.hpp>

#include <QCborValue>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
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
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace scriptscope {
namespace {

// Up to this many elements per tensor come back whole, for images, tables and comparisons.
constexpr size_t kValuesLimit = 16u << 20;

// A model with 2-D convolutions takes images: its x or input argument starts as the photo.
bool takesImages(const ModelInfo& model) {
    for (const ModuleInfo& m : model.modules) {
        if (m.type.find("Conv2d") != std::string::npos ||
            m.type.find("ConvReLU2d") != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

RunPanel::RunPanel(WorkerClient* worker, WarpEditor* warpEditor, QWidget* parent)
    : QWidget(parent)
    , worker_(worker)
    , warpEditor_(warpEditor) {
    buildUi();
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
            if (inputs_->usesWarp()) {
                runOnce();
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

    QWidget* settingsPanel = buildSettingsPanel();
    QWidget* side = buildSide(splitter, settingsPanel);
    QSplitter* results = buildResults(splitter);
    splitter->addWidget(side);
    splitter->addWidget(results);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({560, 720});
}

QWidget* RunPanel::buildSettingsPanel() {
    // Settings.
    auto* settingsPanel = new QWidget;
    auto* settingsLayout = new QVBoxLayout(settingsPanel);
    settingsLayout->addWidget(buildTargetBox(settingsPanel));
    settingsLayout->addWidget(buildInputsBox(settingsPanel));
    settingsLayout->addWidget(buildFramePlayer(settingsPanel));
    settingsLayout->addWidget(buildImageBox(settingsPanel));
    settingsLayout->addWidget(buildTimingBox(settingsPanel));
    settingsLayout->addStretch(1);
    return settingsPanel;
}

QGroupBox* RunPanel::buildTargetBox(QWidget* parent) {
    auto* target = new QGroupBox(tr("Run"), parent);
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
    connect(method_, &QComboBox::currentIndexChanged, this, [this]() { fillInputs(); });
    return target;
}

QGroupBox* RunPanel::buildInputsBox(QWidget* parent) {
    auto* inputsBox = new QGroupBox(tr("Inputs (one per argument)"), parent);
    auto* inputsLayout = new QVBoxLayout(inputsBox);
    inputs_ = new InputTable(warpEditor_, inputsBox);
    inputsLayout->addWidget(inputs_);
    auto* hint = new QLabel(tr("Shapes like 1x3x224x224[:dtype[:seed]]; values like 3, 0.5, true, "
                               "str:text, ints:1,2; lists, tuples and dicts take a row per "
                               "element (+ adds one)"),
                            inputsBox);
    hint->setWordWrap(true);
    hint->setStyleSheet(QStringLiteral("color: palette(mid);"));
    inputsLayout->addWidget(hint);
    return inputsBox;
}

FramePlayer* RunPanel::buildFramePlayer(QWidget* parent) {
    player_ = new FramePlayer(
        worker_, [this](QString* why) { return buildRequest(why); }, parent);
    connect(player_, &FramePlayer::frameShown, this,
            [this](const FrameResult& frame) { showFrame(frame); });
    connect(player_, &FramePlayer::problem, this,
            [this](const QString& why) { showStatus(why, true); });
    connect(player_, &FramePlayer::playingChanged, this, [this](bool playing) {
        if (playing) {
            setContinuous(false);
            liveRecord_ = false; // each play gets its own record in the history
        }
        cancel_->setEnabled(playing || request_ != 0);
        // The end of a video counts the frames dropped after the last one shown: the overlay
        // says the same count as the player's label.
        const QStringList overlay = outputs_->imageView()->overlay();
        if (!playing && showingFrames_ && !overlay.isEmpty()) {
            QStringList updated = overlay;
            updated.back() = framesLine();
            outputs_->imageView()->setOverlay(updated);
            outputs_->resultView()->setOverlay(updated);
        }
    });
    return player_;
}

QGroupBox* RunPanel::buildImageBox(QWidget* parent) {
    auto* imageBox = new QGroupBox(tr("Image preprocessing"), parent);
    auto* imageForm = new QFormLayout(imageBox);
    imageSize_ = new QLineEdit(imageBox);
    imageSize_->setObjectName(QStringLiteral("imageSize"));
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
    imagenetPreset_ = new QPushButton(tr("ImageNet"), imageBox);
    imagenetPreset_->setToolTip(
        tr("224x224, RGB, CHW, 1/255, mean 0.485/0.456/0.406, std 0.229/0.224/0.225"));
    connect(imagenetPreset_, &QPushButton::clicked, this, [this]() {
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
    imageForm->addRow(tr("Preset"), imagenetPreset_);
    return imageBox;
}

QGroupBox* RunPanel::buildTimingBox(QWidget* parent) {
    auto* timingBox = new QGroupBox(tr("Timing"), parent);
    auto* timingForm = new QFormLayout(timingBox);
    warmup_ = new QSpinBox(timingBox);
    warmup_->setRange(0, 10000);
    warmup_->setValue(kUsualWarmup);
    iterations_ = new QSpinBox(timingBox);
    iterations_->setRange(1, 100000);
    iterations_->setValue(kUsualIterations);
    profile_ = new QCheckBox(tr("Profile one more run per module"), timingBox);
    profile_->setToolTip(tr("Times every operator call of one extra run (RecordFunction) and gives "
                            "each module its share; the timed iterations run without it"));
    live_ = new QCheckBox(tr("Live: run again when the warp matrix changes"), timingBox);
    timingForm->addRow(tr("Warm-up"), warmup_);
    timingForm->addRow(tr("Iterations"), iterations_);
    timingForm->addRow(profile_);
    timingForm->addRow(live_);
    return timingBox;
}

QWidget* RunPanel::buildSide(QSplitter* splitter, QWidget* settingsPanel) {
    // The buttons and the status stay in view below the scrolling settings (at 1280x800 the
    // settings are taller than the window).
    auto* side = new QWidget(splitter);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    QHBoxLayout* buttons = buildButtons(side);
    status_ = new QLabel(side);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    sideLayout->addWidget(buildPresetHint(side));

    auto* settingsScroll = new QScrollArea(side);
    settingsScroll->setWidget(settingsPanel);
    settingsScroll->setWidgetResizable(true);
    settingsScroll->setFrameShape(QFrame::NoFrame);
    side->setMinimumWidth(300);
    auto* statusScroll = new QScrollArea(side);
    statusScroll->setWidget(status_);
    statusScroll->setWidgetResizable(true);
    statusScroll->setFrameShape(QFrame::NoFrame);
    statusScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    statusScroll->setMaximumHeight(status_->fontMetrics().lineSpacing() * 7);
    sideLayout->addWidget(settingsScroll, 1);
    sideLayout->addLayout(buttons);
    sideLayout->addWidget(statusScroll);
    return side;
}

QHBoxLayout* RunPanel::buildButtons(QWidget* side) {
    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(tr("&Run"), side);
    run_->setDefault(true);
    runContinuously_ = new QPushButton(tr("Run &continuously"), side);
    runContinuously_->setCheckable(true);
    cancel_ = new QPushButton(tr("Cancel"), side);
    cancel_->setEnabled(false);
    runMore_ = new QPushButton(tr("Run &More"), side);
    runMore_->setObjectName(QStringLiteral("runMore"));
    runMore_->setToolTip(tr("Time it as usual: %1 warm-ups, then %2 timed iterations")
                             .arg(kUsualWarmup)
                             .arg(kUsualIterations));
    runMore_->hide();
    connect(runMore_, &QPushButton::clicked, this, [this]() {
        useUsualTiming();
        runOnce();
    });
    openEtdump_ = new QPushButton(tr("Open &ETDump…"), side);
    openEtdump_->setObjectName(QStringLiteral("openEtdump"));
    openEtdump_->setToolTip(tr("The runs ExecuTorch's event tracer recorded of this program "
                               "elsewhere (a phone, a board): their times and profile, drawn "
                               "as a run's"));
    openEtdump_->hide();
    connect(openEtdump_, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this,
            tr("Open an ETDump of %1")
                .arg(QFileInfo(QString::fromStdString(model_.path)).fileName()),
            QString(), tr("ETDump files (*.etdp *.etdump);;All files (*)"));
        if (!path.isEmpty()) {
            openRecordedRuns(path);
        }
    });
    buttons->addWidget(run_);
    buttons->addWidget(runMore_);
    buttons->addWidget(openEtdump_);
    buttons->addWidget(runContinuously_);
    buttons->addWidget(cancel_);
    connect(run_, &QPushButton::clicked, this, [this]() { runOnce(); });
    connect(runContinuously_, &QPushButton::toggled, this, [this](bool on) { setContinuous(on); });
    connect(cancel_, &QPushButton::clicked, this, [this]() { cancel(); });
    return buttons;
}

QFrame* RunPanel::buildPresetHint(QWidget* side) {
    // A model that looks like an ImageNet classifier is offered the preset above the settings (it
    // is below the fold at 1280x800): unnormalised 640x480 photos are not what it was trained on.
    presetHint_ = new QFrame(side);
    presetHint_->setObjectName(QStringLiteral("presetHint"));
    presetHint_->setFrameShape(QFrame::StyledPanel);
    auto* hintLayout = new QHBoxLayout(presetHint_);
    hintLayout->setContentsMargins(6, 4, 6, 4);
    auto* hintText = new QLabel(tr("This looks like an ImageNet classifier (3 input channels, "
                                   "1000 classes): it expects 224x224 images, normalised."),
                                presetHint_);
    hintText->setWordWrap(true);
    auto* usePreset = new QPushButton(tr("Use ImageNet Preset"), presetHint_);
    usePreset->setObjectName(QStringLiteral("usePreset"));
    auto* noPreset = new QToolButton(presetHint_);
    noPreset->setText(QStringLiteral("\u00d7"));
    noPreset->setToolTip(tr("Keep the images as they are"));
    noPreset->setAutoRaise(true);
    hintLayout->addWidget(hintText, 1);
    hintLayout->addWidget(usePreset);
    hintLayout->addWidget(noPreset);
    presetHint_->hide();
    connect(usePreset, &QPushButton::clicked, this, [this, imagenet = imagenetPreset_]() {
        imagenet->click();
        presetHint_->hide();
        showStatus(tr("ImageNet preprocessing: 224x224, RGB, mean 0.485/0.456/0.406, std "
                      "0.229/0.224/0.225"),
                   false);
    });
    connect(noPreset, &QToolButton::clicked, presetHint_, &QWidget::hide);
    return presetHint_;
}

QSplitter* RunPanel::buildResults(QSplitter* splitter) {
    // Results.
    auto* results = new QSplitter(Qt::Vertical, splitter);
    buildOutputs(results);
    auto* bottom = new QTabWidget(results);
    bottom->addTab(buildTimingPage(bottom), tr("Timing"));
    bottom->addTab(buildProfilePage(bottom), tr("Profile"));

    results->addWidget(outputs_);
    results->addWidget(bottom);
    results->setStretchFactor(0, 1);
    results->setStretchFactor(1, 1);
    results->setChildrenCollapsible(false);
    results->setSizes({380, 380}); // the latency plot gets room before any run
    return results;
}

OutputPanel* RunPanel::buildOutputs(QWidget* parent) {
    outputs_ = new OutputPanel(parent);
    outputs_->setValuesLimit(kValuesLimit);
    connect(outputs_, &OutputPanel::problem, this,
            [this](const QString& why) { showStatus(why, true); });
    connect(outputs_, &OutputPanel::useCornersRequested, this, [this]() { useModelCorners(); });
    connect(outputs_, &OutputPanel::firstNonFiniteRequested, this,
            &RunPanel::firstNonFiniteRequested);
    return outputs_;
}

QWidget* RunPanel::buildTimingPage(QWidget* parent) {
    auto* timingPage = new QWidget(parent);
    auto* timingLayout = new QVBoxLayout(timingPage);
    plot_ = new TimingPlot(timingPage);
    history_ = new RunHistoryModel(this);
    auto* historyView = new QTableView(timingPage);
    historyView->setModel(history_);
    historyView->verticalHeader()->hide();
    historyView->horizontalHeader()->setStretchLastSection(true);
    // Its header is wider than the default section ("Warm-up + timed" was cut at both ends).
    historyView->horizontalHeader()->setSectionResizeMode(RunHistoryModel::IterationsColumn,
                                                          QHeaderView::ResizeToContents);
    historyView->setMinimumHeight(40);
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
    plot_->setMinimumHeight(90);
    auto* timingSplit = new QSplitter(Qt::Vertical, timingPage);
    timingSplit->addWidget(plot_);
    timingSplit->addWidget(historyView);
    timingSplit->setStretchFactor(0, 3);
    timingSplit->setStretchFactor(1, 1);
    timingSplit->setChildrenCollapsible(false);
    timingLayout->addWidget(timingSplit, 1);
    timingLayout->addLayout(plotBar);
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
    return timingPage;
}

QWidget* RunPanel::buildProfilePage(QWidget* parent) {
    auto* profilePage = new QWidget(parent);
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
    return profilePage;
}

void RunPanel::clearResults() {
    showingFrames_ = false;
    // What belongs to the previous model goes; the run history stays, each run with its model.
    // A playing source stops (it stays open: the next model may be shown the same video).
    player_->setPlaying(false);
    liveRecord_ = false;
    last_.reset();
    running_.reset();
    outputs_->clear(model_.path);
    // The archive's own class names (an extra file labels.txt), for the Result page.
    outputs_->setArchiveLabels(labelsFromExtraFiles(model_.probe.extraFiles));
    profileModel_->setProfile(RunProfile{});
    profileSummary_->setText(tr("Tick \"Profile\" and run: every operator call is timed and the "
                                "module tree (Model tab) gets a time column."));
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

QString RunPanel::exportedImageSize() const {
    const MethodInfo* method = currentMethod();
    if (!method || method->imageWidth <= 0 || method->imageHeight <= 0) {
        return {};
    }
    return QStringLiteral("%1x%2").arg(method->imageWidth).arg(method->imageHeight);
}

void RunPanel::fillInputs() {
    const MethodInfo* method = currentMethod();
    inputs_->setArguments(method ? schemaArguments(method->schema) : std::vector<SchemaArgument>{},
                          takesImages(model_), method && method->sampleInputs);
}

void RunPanel::setInput(int argument, const QString& source, const QString& value) {
    inputs_->setInput(argument, source, value);
}

QTableWidget* RunPanel::inputsTable() const {
    return inputs_->table();
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
    request.profile = profile_->isChecked() && profile_->isEnabled();
    request.valuesLimit = kValuesLimit;
    auto specs = inputs_->specs(imageOptions(), why);
    if (!specs) {
        return std::nullopt;
    }
    request.inputs = std::move(*specs);
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
    running_ = *request;
    liveRecord_ = false;
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

void RunPanel::openRecordedRuns(const QString& etdump) {
    if (model_.modules.empty() || request_ != 0) {
        return;
    }
    RunRequest request;
    request.method = method_->currentText().toStdString();
    request.etdumpPath = etdump.toStdString();
    request.valuesLimit = kValuesLimit;
    running_ = request;
    liveRecord_ = false;
    request_ = worker_->run(request);
    cancel_->setEnabled(true);
    run_->setEnabled(false);
    showStatus(tr("Reading the runs %1 recorded of %2…")
                   .arg(QFileInfo(etdump).fileName(), QString::fromStdString(request.method)),
               false);
}

void RunPanel::cancel() {
    setContinuous(false);
    const bool frameInFlight = player_->busy();
    player_->setPlaying(false);
    if (request_ != 0 || frameInFlight) {
        worker_->cancel(); // ends the worker: a frame that hangs stops here too
    }
}

void RunPanel::showStatus(const QString& text, bool problem) {
    showOnLabel(status_, text, problem);
    if (request_ == 0) {
        cancel_->setEnabled(player_->playing()); // Cancel also stops a playing source
        offer(run_, model_, Capability::Run);
        offer(runContinuously_, model_, Capability::Run);
    }
}

QString RunPanel::statusText() const {
    return status_->text();
}

void RunPanel::setDemoVideo(const QString& path) {
    player_->setDemoVideo(path);
}

} // namespace scriptscope
