#include "warp_editor.h"

#include "image_canvas.h"
#include "image_io.h"
#include "warp_editor_internal.h"
#include "warp_renderer.h"

#include <matrix_io.h>

#include <QAction>
#include <QApplication>
#include <QButtonGroup>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleValidator>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>

#include <cmath>

// The warp editor's files: images in, matrix files in and out, the warped image exported, the
// matrix copied as code, and the session that survives a restart.
namespace scriptscope {

using namespace warp_detail;

bool WarpEditor::openImage(const QString& path) {
    auto image = loadImage(path);
    if (!image) {
        setMessage(tr("Image not opened: %1").arg(QString::fromStdString(image.error().message)),
                   true);
        return false;
    }
    setImage(*image, QFileInfo(path).absoluteFilePath());
    return true;
}

void WarpEditor::setImage(const QImage& image, const QString& path) {
    source_ = image.convertToFormat(QImage::Format_RGBA8888);
    imagePath_ = path;
    const QSize previous = sourceSize_;
    sourceSize_ = source_.size();
    sourceView_->setPicture(source_);
    QString sizeNote;
    if (state_.outputSize == OutputSize::Custom && previous.isValid() &&
        previous != source_.size() && !restoring_) {
        // A custom size chosen for another image would crop this one: start from its own size.
        state_.outputSize = OutputSize::Source;
        sizeNote = tr(" The custom output size %1 x %2 was for the previous image: the output "
                      "is this image's size now.")
                       .arg(state_.outputWidth)
                       .arg(state_.outputHeight);
    }
    if (state_.outputSize != OutputSize::Custom) {
        state_.outputWidth = source_.width();
        state_.outputHeight = source_.height();
    }
    // A matrix tuned for another image may not suit this one: keep it when it still warps.
    if (homographyProblem(state_.matrix, source_.width(), source_.height())) {
        WarpState fresh = state_;
        fresh.matrix = identityHomography();
        state_ = fresh;
        undo_->clear();
    }
    setMessage(tr("%1: %2 x %3 pixels")
                       .arg(path.isEmpty() ? tr("Image") : QFileInfo(path).fileName())
                       .arg(source_.width())
                       .arg(source_.height()) +
                   sizeNote,
               false);
    display(state_, true);
    fitViews();
    Q_EMIT imageChanged(path);
    if (!restoring_) {
        Q_EMIT sessionChanged();
    }
}

bool WarpEditor::loadMatrix(const QString& path) {
    const auto matrix = readMatrixFile(QFile::encodeName(path).toStdString());
    if (!matrix) {
        setMessage(tr("Matrix not loaded: %1").arg(QString::fromStdString(matrix.error().message)),
                   true);
        return false;
    }
    if (!setMatrix(*matrix, tr("Load %1").arg(QFileInfo(path).fileName()))) {
        return false;
    }
    setMessage(tr("Loaded %1").arg(QFileInfo(path).fileName()), false);
    return true;
}

bool WarpEditor::saveMatrix(const QString& path) {
    if (auto error = writeMatrixFile(QFile::encodeName(path).toStdString(), state_.matrix)) {
        setMessage(tr("Matrix not saved: %1").arg(QString::fromStdString(error->message)), true);
        return false;
    }
    setMessage(tr("Saved %1").arg(QFileInfo(path).fileName()), false);
    return true;
}

void WarpEditor::exportImage(const QString& path) {
    if (!isFullResolutionCurrent()) {
        pendingExport_ = path;
        display(state_, true);
        setMessage(tr("Rendering %1 at full resolution…").arg(QFileInfo(path).fileName()), false);
        return;
    }
    if (auto error = saveImage(fullImage_, path)) {
        setMessage(tr("Not exported: %1").arg(QString::fromStdString(error->message)), true);
        return;
    }
    setMessage(tr("Exported %1 (%2 x %3)")
                   .arg(QFileInfo(path).fileName())
                   .arg(fullImage_.width())
                   .arg(fullImage_.height()),
               false);
}

void WarpEditor::copyText(const QString& text, const QString& what) {
    QApplication::clipboard()->setText(text);
    setMessage(tr("Copied the matrix as a %1").arg(what), false);
}

void WarpEditor::fitViews() {
    if (source_.isNull()) {
        return;
    }
    sourceView_->fitRect(QRectF(-0.5, -0.5, source_.width(), source_.height()));
    const OutputFrame frame = outputFrame(state_, source_.width(), source_.height());
    QRectF rect(frame.left - 0.5, frame.top - 0.5, frame.width, frame.height);
    if (const auto corners = mappedCorners(state_.matrix, source_.width(), source_.height())) {
        for (const Point& p : *corners) {
            rect = rect.united(QRectF(p.x - 1, p.y - 1, 2, 2));
        }
    }
    outputView_->fitRect(rect);
}

QJsonObject WarpEditor::session() const {
    return {
        {QStringLiteral("image"), imagePath_},
        {QStringLiteral("state"), state_.toJson()},
        {QStringLiteral("grid"), grid_->isChecked()},
        {QStringLiteral("outlines"), outline_->isChecked()},
        {QStringLiteral("compare"), compare_->currentData().toString()},
        {QStringLiteral("compareAmount"), compareAmount_->value()},
    };
}

void WarpEditor::restoreSession(const QJsonObject& session, const QString& fallbackImage) {
    restoring_ = true;
    const QString image = session.value(QStringLiteral("image")).toString();
    QString note;
    if (image.isEmpty() || !openImage(image)) {
        if (!image.isEmpty()) {
            note =
                tr("The last image, %1, could not be opened; showing the demo image.").arg(image);
        }
        openImage(fallbackImage);
    }
    grid_->setChecked(session.value(QStringLiteral("grid")).toBool(false));
    outline_->setChecked(session.value(QStringLiteral("outlines")).toBool(true));
    const int compare = compare_->findData(session.value(QStringLiteral("compare")).toString());
    compare_->setCurrentIndex(std::max(0, compare));
    compareAmount_->setValue(session.value(QStringLiteral("compareAmount")).toInt(50));
    const WarpState state = WarpState::fromJson(session.value(QStringLiteral("state")).toObject());
    if (!source_.isNull() && !homographyProblem(state.matrix, source_.width(), source_.height())) {
        state_ = state;
        display(state_, true);
        fitViews();
    }
    undo_->clear();
    restoring_ = false;
    if (!note.isEmpty()) {
        setMessage(note, true);
    }
}

} // namespace scriptscope
