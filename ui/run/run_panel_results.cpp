// The Run workspace's results: a run or a frame shown (outputs, the timing overlay, the history
// and plots, the profile), the model's page corners to the warp editor, and what tests read.
#include "run_panel.h"

#include "frame_player.h"
#include "output_panel.h"
#include "output_view.h"
#include "timing_plot.h"
#include "warp_editor.h"

#include <input_spec.h>
#include <stats.h>

#include <opencv2/core.hpp>

#include <QFileInfo>
#include <QLabel>
#include <QPushButton>

namespace scriptscope {

OutputTreeModel* RunPanel::outputModel() const {
    return outputs_->outputModel();
}

TensorTableModel* RunPanel::tableModel() const {
    return outputs_->tableModel();
}

TopKModel* RunPanel::topKModel() const {
    return outputs_->topKModel();
}

QString RunPanel::topKNote() const {
    return outputs_->topKNote();
}

OutputImageView* RunPanel::imageView() const {
    return outputs_->imageView();
}

const std::optional<RunResult>& RunPanel::keptResult() const {
    return outputs_->keptResult();
}

void RunPanel::keepResult() {
    outputs_->keepResult();
}

QString RunPanel::comparisonText() const {
    return outputs_->comparisonText();
}

QString RunPanel::framesLine() const {
    return tr("%1 fps shown · %2 dropped%3")
        .arg(player_->shownFps(), 0, 'f', 1)
        .arg(player_->droppedFrames())
        .arg(player_->recording() ? tr(" · ● recording") : QString());
}

QString RunPanel::rateText(double p50Ms) {
    if (p50Ms <= 0) {
        return tr("no timed iteration");
    }
    const double fps = 1000.0 / p50Ms;
    // Slow runs (a first run of a large model: 53 s) say so rather than "0.0 fps".
    if (fps < 1) {
        return tr("one run every %1 s at p50").arg(p50Ms / 1000.0, 0, 'f', p50Ms < 10000 ? 2 : 1);
    }
    return tr("%1 fps at p50").arg(fps, 0, 'f', fps < 10 ? 2 : 1);
}

QStringList RunPanel::timingOverlay(const RunResult& result) {
    const TimingStats& s = result.stats;
    const qsizetype n = static_cast<qsizetype>(result.samplesMs.size());
    const QString iterations = n == 1 ? tr("1 iteration") : tr("%1 iterations").arg(n);
    const QString warmup =
        result.warmup == 1 ? tr("1 warm-up") : tr("%1 warm-ups").arg(result.warmup);
    return {QStringLiteral("%1 · %2").arg(QString::fromStdString(result.device),
                                          QString::fromStdString(result.deviceName)),
            n == 1 ? tr("%1 ms").arg(s.p50, 0, 'f', 2)
                   : tr("p50 %1 ms   p90 %2 ms").arg(s.p50, 0, 'f', 2).arg(s.p90, 0, 'f', 2),
            rateText(s.p50),
            (result.synchronized ? tr("%1 after %2, synchronized") : tr("%1 after %2"))
                .arg(iterations, warmup)};
}

void RunPanel::showResult(const RunResult& result) {
    showingFrames_ = false;
    last_ = result;
    const RunRecord& record = history_->add(result);
    plot_->setRuns(history_->runs());
    const TimingStats& s = result.stats;
    const QStringList overlay = timingOverlay(result);
    // After a first, single iteration: the way to time it properly, beside Run.
    runMore_->setVisible(result.samplesMs.size() <= 1 && !continuous_);
    outputs_->imageView()->setOverlay(overlay);
    outputs_->resultView()->setOverlay(overlay);
    // The Result page draws over the run's image input (the first one, a list's first element).
    if (const InputSpec* spec = running_ ? firstImageInput(running_->inputs) : nullptr) {
        outputs_->setInputImage(QString::fromStdString(spec->path),
                                QSize(spec->image.width, spec->image.height));
    } else {
        outputs_->setInputImage({}, {});
    }
    outputs_->showResult(result);
    if (result.profiled) {
        profileModel_->setProfile(result.profile);
        if (result.device == "recorded") {
            profileSummary_->setText(
                tr("Recorded runs: the mean of %1, %2 ms end to end, %3 ms in %4 operator kinds. "
                   "The diagram on the Model tab shows each call's time.")
                    .arg(result.profile.runs)
                    .arg(result.profile.wallMs, 0, 'f', 3)
                    .arg(result.profile.operatorMs, 0, 'f', 3)
                    .arg(result.profile.operators.size()));
        } else {
            profileSummary_->setText(
                (result.profile.runs > 1
                     ? tr("Profiled runs: %1 traced, p50 %2 ms end to end, %3 ms in %4 "
                          "operator kinds (their mean); profiling added %5 (against the p50 of "
                          "the timed runs). The module tree on the Model tab shows each "
                          "module's share.")
                           .arg(result.profile.runs)
                     : tr("Profiled run: %1 ms end to end, %2 ms in %3 operator kinds; "
                          "profiling added %4 (against the p50 of the timed runs). The "
                          "module tree on the Model tab shows each module's share."))
                    .arg(result.profile.wallMs, 0, 'f', 2)
                    .arg(result.profile.operatorMs, 0, 'f', 2)
                    .arg(result.profile.operators.size())
                    .arg(s.p50 > 0 ? QStringLiteral("%1 %").arg(
                                         100.0 * (result.profile.wallMs / s.p50 - 1), 0, 'f', 0)
                                   : QStringLiteral("?")));
        }
        Q_EMIT profileReady(result.profile);
    }
    if (result.device == "recorded") {
        // Runs recorded elsewhere: their times and profile, no outputs (nothing ran here).
        showStatus(tr("Run %1: p50 %2 ms over the %3 runs the ETDump recorded (times and "
                      "profile only: nothing ran here, so there are no outputs)")
                       .arg(record.number)
                       .arg(s.p50, 0, 'f', 3)
                       .arg(result.profile.runs),
                   false);
    } else {
        showStatus(tr("Run %1: p50 %2 ms on %3")
                       .arg(record.number)
                       .arg(s.p50, 0, 'f', 3)
                       .arg(QString::fromStdString(result.device)),
                   false);
    }
    Q_EMIT runShown(result);
}

bool RunPanel::useModelCorners() {
    const auto& corners = outputs_->pageCorners();
    if (!warpEditor_ || corners.size() != 4) {
        return false;
    }
    // The corners are in pixels of the picture the model saw; the warp editor's image is the
    // frame it came from (put there) or the image file at its own size.
    const cv::Mat& frame = outputs_->inputFrame();
    if (!frame.empty()) {
        const QImage image(frame.data, frame.cols, frame.rows, static_cast<qsizetype>(frame.step),
                           QImage::Format_BGR888);
        warpEditor_->setImage(image.copy());
    }
    const cv::Mat& drawn = outputs_->renderedFrame();
    const QImage& source = warpEditor_->sourceImage();
    const double sx = drawn.cols > 0 && !source.isNull() ? double(source.width()) / drawn.cols : 1;
    const double sy = drawn.rows > 0 && !source.isNull() ? double(source.height()) / drawn.rows : 1;
    Quad quad;
    for (size_t i = 0; i < 4; ++i) {
        quad[i] = Point{corners[i].first * sx, corners[i].second * sy};
    }
    const QSize page = outputs_->pageSize().isEmpty() ? QSize(200, 280) : outputs_->pageSize();
    if (!warpEditor_->placeSourceQuad(quad, page.width(), page.height(),
                                      tr("Use the Model's Corners"))) {
        showStatus(tr("The model's corners cannot be a warp: %1").arg(warpEditor_->message()),
                   true);
        return false;
    }
    showStatus(tr("The warp editor's handles are on the model's corners (Warp workspace): drag "
                  "them to compare, and run classify_page with the warp input to see the kind"),
               false);
    Q_EMIT modelCornersUsed();
    return true;
}

void RunPanel::showFrame(const FrameResult& frame) {
    showingFrames_ = true;
    const RunResult& result = frame.run;
    last_ = result;
    const double ms = result.samplesMs.empty() ? 0 : result.samplesMs.front();
    if (!liveRecord_ || liveRun_.model != result.model || liveRun_.device != result.device ||
        liveRun_.method != result.method) {
        liveRun_ = result;
        liveRun_.output = {};
        liveRun_.samplesMs.clear();
        history_->add(liveRun_);
        liveRecord_ = true;
    }
    liveRun_.samplesMs.push_back(ms);
    constexpr size_t kKeptSamples = 20000;
    if (liveRun_.samplesMs.size() > kKeptSamples) {
        liveRun_.samplesMs.erase(liveRun_.samplesMs.begin());
    }
    liveRun_.stats = computeStats(liveRun_.samplesMs);
    const QString source = QFileInfo(player_->source()).fileName();
    history_->replaceLast(liveRun_,
                          tr("%1 · %2 · %3 frames of %4")
                              .arg(QFileInfo(QString::fromStdString(result.model)).fileName(),
                                   QString::fromStdString(result.device))
                              .arg(liveRun_.samplesMs.size())
                              .arg(source.isEmpty() ? player_->source() : source));
    plot_->setRuns(history_->runs());
    const TimingStats& s = liveRun_.stats;
    const SourceInfo& info = player_->info();
    const QString frameText = info.frames > 0
                                  ? tr("frame %1/%2").arg(frame.index + 1).arg(info.frames)
                                  : tr("frame %1").arg(frame.index + 1);
    const QStringList overlay = {
        QStringLiteral("%1 · %2").arg(QString::fromStdString(result.device),
                                      QString::fromStdString(result.deviceName)),
        tr("%1 · this frame %2 ms · p50 %3 ms")
            .arg(frameText)
            .arg(ms, 0, 'f', 2)
            .arg(s.p50, 0, 'f', 2),
        framesLine()};
    outputs_->imageView()->setOverlay(overlay);
    outputs_->resultView()->setOverlay(overlay);
    QString why;
    const auto request = buildRequest(&why);
    const InputSpec* spec = request ? firstImageInput(request->inputs) : nullptr;
    const cv::Mat bgr(frame.height, frame.width, CV_8UC3,
                      const_cast<unsigned char*>(frame.bgr.data()));
    outputs_->setInputFrame(bgr, spec ? QSize(spec->image.width, spec->image.height) : QSize());
    outputs_->showResult(result);
    if (player_->recording()) {
        player_->record(outputs_->renderedFrame().empty() ? bgr : outputs_->renderedFrame(),
                        frame.dropped);
    }
    showStatus(tr("%1 (%2): %3 ms on %4")
                   .arg(QString::fromStdString(frame.name), frameText)
                   .arg(ms, 0, 'f', 2)
                   .arg(QString::fromStdString(result.device)),
               false);
    Q_EMIT runShown(result);
}

} // namespace scriptscope
