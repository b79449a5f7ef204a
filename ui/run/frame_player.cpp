#include "frame_player.h"

#include "worker_client.h"

#include <frame_source.h>

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>

#include <opencv2/core.hpp>

#include <functional>

namespace scriptscope {

namespace {

const char* const kChooseFolder = "choose-folder";
const char* const kChooseVideo = "choose-video";

// The first image input, looking into containers (a detector's list of images).
InputSpec* firstImage(std::vector<InputSpec>& specs) {
    for (auto& spec : specs) {
        if (spec.kind == InputSpec::Kind::Image) {
            return &spec;
        }
        if (InputSpec* inner = firstImage(spec.elements)) {
            return inner;
        }
    }
    return nullptr;
}

} // namespace

std::optional<RunRequest> frameRequest(const RunRequest& request, QString* why) {
    RunRequest framed = request;
    InputSpec* image = firstImage(framed.inputs);
    if (!image) {
        if (why) {
            *why = QObject::tr("The frames go to an image input: set an argument (or a list's "
                               "element) to Image first; its preprocessing applies to each frame.");
        }
        return std::nullopt;
    }
    image->path = kFrameImagePath;
    // One timed run per frame: the latency plot gets a sample per frame.
    framed.warmup = 0;
    framed.iterations = 1;
    framed.profile = false;
    return framed;
}

FramePlayer::FramePlayer(WorkerClient* worker, RequestBuilder build, QWidget* parent)
    : QGroupBox(tr("Frames: image folder, video, camera"), parent)
    , worker_(worker)
    , build_(std::move(build)) {
    auto* layout = new QVBoxLayout(this);
    sourceBox_ = new QComboBox(this);
    sourceBox_->setToolTip(tr("Run the model on each frame: the first image input takes them"));
    description_ = new QLabel(this);
    description_->setWordWrap(true);
    description_->setStyleSheet(QStringLiteral("color: palette(mid);"));
    auto* buttons = new QHBoxLayout;
    previous_ =
        new QPushButton(style()->standardIcon(QStyle::SP_MediaSkipBackward), QString(), this);
    previous_->setToolTip(tr("Previous frame"));
    play_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Play"), this);
    play_->setCheckable(true);
    next_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaSkipForward), QString(), this);
    next_->setToolTip(tr("Next frame"));
    record_ = new QPushButton(tr("● Record…"), this);
    record_->setCheckable(true);
    record_->setToolTip(tr("Write the frames as drawn on the Result page to a video file"));
    buttons->addWidget(previous_);
    buttons->addWidget(play_, 1);
    buttons->addWidget(next_);
    buttons->addWidget(record_);
    auto* form = new QFormLayout;
    interval_ = new QSpinBox(this);
    interval_->setRange(0, 60000);
    interval_->setSingleStep(100);
    interval_->setValue(QSettings().value(QStringLiteral("frames/interval"), 500).toInt());
    interval_->setSuffix(tr(" ms"));
    interval_->setToolTip(tr("A folder plays one image per interval (after the run); a video "
                             "plays at its own frame rate"));
    form->addRow(tr("Folder interval"), interval_);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(sourceBox_);
    layout->addWidget(description_);
    layout->addLayout(buttons);
    layout->addLayout(form);
    layout->addWidget(status_);
    folderTimer_ = new QTimer(this);
    folderTimer_->setSingleShot(true);
    connect(folderTimer_, &QTimer::timeout, this, [this]() {
        if (playing_) {
            requestFrame(index_ + 1, false, false);
        }
    });
    fillSources();
    connect(sourceBox_, &QComboBox::activated, this, [this](int row) { onSourceChosen(row); });
    connect(previous_, &QPushButton::clicked, this, [this]() { step(-1); });
    connect(next_, &QPushButton::clicked, this, [this]() { step(1); });
    connect(play_, &QPushButton::toggled, this, [this](bool on) { setPlaying(on); });
    connect(interval_, &QSpinBox::valueChanged, this,
            [](int value) { QSettings().setValue(QStringLiteral("frames/interval"), value); });
    connect(record_, &QPushButton::toggled, this, [this](bool on) {
        if (!on) {
            stopRecording();
            return;
        }
        if (recording()) {
            return;
        }
        const QString path = QFileDialog::getSaveFileName(this, tr("Record the Annotated Frames"),
                                                          QStringLiteral("recording.mp4"),
                                                          tr("Video (*.mp4 *.avi *.mkv)"));
        QString why;
        if (path.isEmpty() || !startRecording(path, &why)) {
            const QSignalBlocker blocker(record_);
            record_->setChecked(false);
            if (!why.isEmpty()) {
                Q_EMIT problem(why);
            }
        }
    });
    connect(worker_, &WorkerClient::sourceOpened, this, [this](quint64 id, const SourceInfo& info) {
        if (id != openRequest_) {
            return;
        }
        openRequest_ = 0;
        info_ = info;
        QString text = QString::fromStdString(info.description);
        for (const auto& note : info.notes) {
            text += QStringLiteral("\n") + QString::fromStdString(note);
        }
        description_->setText(text);
        index_ = -1;
        updateButtons();
        Q_EMIT sourceChanged();
        requestFrame(0, false, false);
    });
    connect(worker_, &WorkerClient::frameReady, this,
            [this](quint64 id, const FrameResult& frame) { onFrame(id, frame); });
    connect(worker_, &WorkerClient::failed, this, [this](quint64 id, const Error& error) {
        if (id != openRequest_ && id != frameRequest_) {
            return;
        }
        const bool opening = id == openRequest_;
        openRequest_ = frameRequest_ = 0;
        setPlaying(false);
        lastError_ = QString::fromStdString(error.message);
        if (opening) {
            source_.clear();
            info_ = {};
            description_->setText(lastError_);
            sourceBox_->setCurrentIndex(0);
            Q_EMIT sourceChanged();
        }
        updateStatus();
        updateButtons();
        Q_EMIT problem(lastError_);
    });
    clock_.start();
    updateButtons();
    updateStatus();
}

FramePlayer::~FramePlayer() = default;

void FramePlayer::fillSources() {
    const QSignalBlocker blocker(sourceBox_);
    sourceBox_->clear();
    sourceBox_->addItem(tr("None: run on the inputs above"), QString());
    sourceBox_->addItem(tr("Image folder…"), QLatin1String(kChooseFolder));
    sourceBox_->addItem(tr("Video file…"), QLatin1String(kChooseVideo));
    if (!demoVideo_.isEmpty()) {
        sourceBox_->addItem(tr("Demo video (%1)").arg(QFileInfo(demoVideo_).fileName()),
                            demoVideo_);
    }
    const auto cameras = listCameras();
    for (const auto& camera : cameras) {
        sourceBox_->addItem(
            tr("Camera %1: %2")
                .arg(camera.index)
                .arg(QString::fromStdString(camera.name.empty() ? camera.device : camera.name)),
            QStringLiteral("camera:%1").arg(camera.index));
    }
    if (cameras.empty()) {
        sourceBox_->addItem(tr("Camera: none found"), QStringLiteral("camera:0"));
        sourceBox_->setItemData(sourceBox_->count() - 1, QString::fromStdString(noCameraMessage()),
                                Qt::ToolTipRole);
    }
    if (!source_.isEmpty()) {
        const int row = sourceBox_->findData(source_);
        if (row >= 0) {
            sourceBox_->setCurrentIndex(row);
        } else {
            sourceBox_->addItem(QFileInfo(source_).fileName(), source_);
            sourceBox_->setCurrentIndex(sourceBox_->count() - 1);
        }
    }
}

void FramePlayer::setDemoVideo(const QString& path) {
    demoVideo_ = path;
    fillSources();
}

void FramePlayer::onSourceChosen(int row) {
    const QString item = sourceBox_->itemData(row).toString();
    if (item.isEmpty()) {
        closeSource();
        return;
    }
    QString chosen = item;
    QSettings settings;
    if (item == QLatin1String(kChooseFolder)) {
        chosen = QFileDialog::getExistingDirectory(
            this, tr("Image Folder"),
            settings.value(QStringLiteral("frames/lastFolder")).toString());
        if (!chosen.isEmpty()) {
            settings.setValue(QStringLiteral("frames/lastFolder"), chosen);
        }
    } else if (item == QLatin1String(kChooseVideo)) {
        chosen = QFileDialog::getOpenFileName(
            this, tr("Video File"), settings.value(QStringLiteral("frames/lastVideo")).toString(),
            tr("Videos (*.mp4 *.avi *.mkv *.mov *.webm *.m4v *.mpg *.mpeg);;All files (*)"));
        if (!chosen.isEmpty()) {
            settings.setValue(QStringLiteral("frames/lastVideo"), chosen);
        }
    } else if (item.startsWith(QLatin1String("camera:")) && listCameras().empty()) {
        lastError_ = QString::fromStdString(noCameraMessage());
        description_->setText(lastError_);
        sourceBox_->setCurrentIndex(0);
        closeSource();
        Q_EMIT problem(lastError_);
        return;
    }
    if (chosen.isEmpty()) {
        fillSources(); // back to what was chosen before
        return;
    }
    openSource(chosen);
}

void FramePlayer::openSource(const QString& source) {
    setPlaying(false);
    source_ = source;
    info_ = {};
    index_ = -1;
    shown_ = dropped_ = errors_ = 0;
    shownAt_.clear();
    lastError_.clear();
    description_->setText(tr("Opening %1…").arg(source));
    fillSources();
    frameRequest_ = 0;
    openRequest_ = worker_->openSource(source);
    updateButtons();
    updateStatus();
}

void FramePlayer::closeSource() {
    setPlaying(false);
    stopRecording();
    source_.clear();
    info_ = {};
    index_ = -1;
    openRequest_ = frameRequest_ = 0;
    description_->setText(tr("Choose a folder, a video or a camera: each frame goes to the first "
                             "image input, and the result is drawn on it."));
    fillSources();
    updateButtons();
    updateStatus();
    Q_EMIT sourceChanged();
}

void FramePlayer::step(int delta) {
    if (!active()) {
        return;
    }
    setPlaying(false);
    qint64 index = std::max<qint64>(0, index_ + delta);
    if (info_.frames > 0) {
        index = std::min<qint64>(index, info_.frames - 1);
    }
    requestFrame(index, false, false);
}

void FramePlayer::showFrame(qint64 index) {
    if (active()) {
        requestFrame(index, false, false);
    }
}

void FramePlayer::setInterval(int milliseconds) {
    interval_->setValue(milliseconds);
}

void FramePlayer::setPlaying(bool on) {
    if (on && !active()) {
        on = false;
    }
    const bool changed = on != playing_;
    playing_ = on;
    if (play_->isChecked() != on) {
        const QSignalBlocker blocker(play_);
        play_->setChecked(on);
    }
    play_->setIcon(style()->standardIcon(on ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    play_->setText(on ? tr("Pause") : tr("Play"));
    if (!on) {
        folderTimer_->stop();
    }
    if (on && changed) {
        shownAt_.clear();
        restartClock_ = true;
        qint64 next = index_ + 1;
        if (info_.frames > 0 && next >= info_.frames) {
            next = 0; // from the start again
        }
        if (frameRequest_ == 0 && openRequest_ == 0) {
            requestFrame(next, info_.kind != SourceSpec::Kind::Folder, true);
        }
    }
    updateButtons();
    if (changed) {
        Q_EMIT playingChanged(on);
    }
}

void FramePlayer::requestFrame(qint64 index, bool live, bool restart) {
    QString why;
    const auto request = build_ ? build_(&why) : std::nullopt;
    const auto framed = request ? frameRequest(*request, &why) : std::nullopt;
    if (!framed) {
        setPlaying(false);
        lastError_ = why;
        updateStatus();
        Q_EMIT problem(why);
        return;
    }
    frameRequest_ = worker_->runFrame(source_, index, live, restart || restartClock_, *framed);
    restartClock_ = false;
    updateStatus();
}

void FramePlayer::onFrame(quint64 id, const FrameResult& frame) {
    if (id != frameRequest_) {
        return;
    }
    frameRequest_ = 0;
    if (frame.end) {
        dropped_ += frame.dropped;
        // Frames dropped after the last one shown: the recording holds that one for as long, so
        // that it lasts as long as the stream, however slow the model was.
        if (sink_ && !lastRecorded_.empty() && frame.dropped > 0) {
            record(lastRecorded_, frame.dropped - 1);
        }
        if (info_.frames < 0 || frame.index < info_.frames) {
            info_.frames = frame.index; // a video's count was an estimate
        }
        setPlaying(false);
        lastError_ = frame.error.empty() ? QString() : QString::fromStdString(frame.error);
        updateStatus();
        return;
    }
    index_ = frame.index;
    dropped_ += frame.dropped;
    if (!frame.error.empty()) {
        // An unreadable image or a frame that does not run: said, and the rest still plays.
        ++errors_;
        lastError_ = QString::fromStdString(
            (frame.name.empty() ? "frame " + std::to_string(frame.index + 1) : frame.name) + ": " +
            frame.error);
        Q_EMIT problem(lastError_);
    } else {
        lastError_.clear();
    }
    // The next frame is asked for before this one is drawn: the worker decodes and runs it
    // while the window draws (one request in flight, so the newest frame still wins).
    if (playing_) {
        if (info_.kind == SourceSpec::Kind::Folder) {
            if (info_.frames > 0 && index_ + 1 >= info_.frames) {
                setPlaying(false);
            } else {
                folderTimer_->start(interval_->value());
            }
        } else {
            requestFrame(index_ + 1, true, false);
        }
    }
    if (frame.hasRun && frame.width > 0) {
        ++shown_;
        shownAt_.push_back(clock_.elapsed());
        while (shownAt_.size() > 30) {
            shownAt_.pop_front();
        }
        Q_EMIT frameShown(frame);
    }
    updateStatus();
    updateButtons();
}

bool FramePlayer::startRecording(const QString& path, QString* why) {
    double fps = info_.fps;
    if (info_.kind == SourceSpec::Kind::Folder || fps <= 0) {
        fps = interval_->value() > 0 ? std::clamp(1000.0 / interval_->value(), 1.0, 60.0) : 10.0;
    }
    auto sink = FrameSink::open(path.toStdString(), fps);
    if (!sink) {
        if (why) {
            *why = QString::fromStdString(sink.error().message);
        }
        return false;
    }
    sink_ = std::move(sink).value();
    recordPath_ = path;
    recorded_ = 0;
    lastRecorded_.release();
    if (!record_->isChecked()) {
        const QSignalBlocker blocker(record_);
        record_->setChecked(true);
    }
    record_->setText(tr("■ Stop recording"));
    updateStatus();
    return true;
}

void FramePlayer::stopRecording() {
    if (sink_) {
        sink_->close();
        sink_.reset();
    }
    if (record_->isChecked()) {
        const QSignalBlocker blocker(record_);
        record_->setChecked(false);
    }
    record_->setText(tr("● Record…"));
    updateStatus();
}

void FramePlayer::record(const cv::Mat& bgr, qint64 dropped) {
    if (!sink_ || bgr.empty()) {
        return;
    }
    // A frame shown in place of dropped ones is written for as long as it was shown.
    const qint64 copies =
        info_.kind == SourceSpec::Kind::Folder ? 1 : 1 + std::min<qint64>(dropped, 120);
    for (qint64 i = 0; i < copies; ++i) {
        if (auto error = sink_->write(bgr, {})) {
            const QString message = QString::fromStdString(error->message);
            stopRecording();
            Q_EMIT problem(message);
            return;
        }
        ++recorded_;
    }
    if (bgr.data != lastRecorded_.data) {
        bgr.copyTo(lastRecorded_);
    }
    updateStatus();
}

double FramePlayer::shownFps() const {
    if (shownAt_.size() < 2) {
        return 0;
    }
    const double span = static_cast<double>(shownAt_.back() - shownAt_.front());
    return span > 0 ? 1000.0 * static_cast<double>(shownAt_.size() - 1) / span : 0;
}

QString FramePlayer::statusText() const {
    return status_->text();
}

void FramePlayer::updateStatus() {
    if (!active()) {
        status_->setText(lastError_);
        return;
    }
    QStringList parts;
    if (index_ >= 0) {
        parts << (info_.frames > 0 ? tr("Frame %1 of %2").arg(index_ + 1).arg(info_.frames)
                                   : tr("Frame %1").arg(index_ + 1));
    }
    if (playing_ || shown_ > 1) {
        parts << tr("%1 fps shown").arg(shownFps(), 0, 'f', 1);
        parts << (dropped_ == 1 ? tr("1 frame dropped") : tr("%1 frames dropped").arg(dropped_));
    }
    if (errors_ > 0) {
        parts << (errors_ == 1 ? tr("1 frame unreadable")
                               : tr("%1 frames unreadable").arg(errors_));
    }
    if (sink_) {
        parts << tr("recording %1 frames to %2")
                     .arg(recorded_)
                     .arg(QFileInfo(recordPath_).fileName());
    }
    QString text = parts.join(QStringLiteral(" · "));
    if (!lastError_.isEmpty()) {
        text += QStringLiteral("\n") + lastError_;
    }
    status_->setText(text);
}

void FramePlayer::updateButtons() {
    const bool ready = active() && openRequest_ == 0;
    previous_->setEnabled(ready && index_ > 0);
    next_->setEnabled(ready && (info_.frames < 0 || index_ + 1 < info_.frames));
    play_->setEnabled(ready);
    record_->setEnabled(ready || recording());
    interval_->setEnabled(!active() || info_.kind == SourceSpec::Kind::Folder);
}

} // namespace scriptscope
