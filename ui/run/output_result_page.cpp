// The Run workspace's Result page: the output interpreted as its task (task_result.h) and drawn
// by the engine's renderer over the image the model saw, with the task, names and score controls.
#include "output_panel.h"

#include "label_picker.h"
#include "output_view.h"

#include <task_render.h>
#include <task_result.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QAction>
#include <QBoxLayout>
#include <QComboBox>
#include <QLabel>
#include <QSettings>
#include <QSlider>
#include <QTabWidget>
#include <QToolBar>

namespace scriptscope {

void OutputPanel::arrangeControls() {
    const int needed = namesBar_->sizeHint().width() + scoreBar_->sizeHint().width();
    controlsRow_->setDirection(resultPage_->contentsRect().width() >= needed + 24
                                   ? QBoxLayout::LeftToRight
                                   : QBoxLayout::TopToBottom);
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
        useCorners_->setVisible(false);
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
    useCorners_->setVisible(result.kind == TaskKind::Page);
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
    QSize drawnFrom = inputSize_;
    if (image.empty() && result.kind == TaskKind::Flow) {
        // A flow is its own picture: drawn at its size when no image input is there to match.
        image = cv::Mat(result.height, result.width, CV_8UC3, cv::Scalar(0, 0, 0));
        drawnFrom = QSize(result.width, result.height);
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
    render.inputWidth = drawnFrom.width();
    render.inputHeight = drawnFrom.height();
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

} // namespace scriptscope
