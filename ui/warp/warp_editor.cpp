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

namespace scriptscope {

using namespace warp_detail;

// One undoable change of the editor's state; a whole drag is one of these.
class WarpStateCommand : public QUndoCommand {
public:
    WarpStateCommand(WarpEditor* editor, WarpState before, WarpState after, const QString& text)
        : QUndoCommand(text)
        , editor_(editor)
        , before_(std::move(before))
        , after_(std::move(after)) {}
    void undo() override { editor_->setCommitted(before_); }
    void redo() override { editor_->setCommitted(after_); }

private:
    WarpEditor* editor_;
    WarpState before_;
    WarpState after_;
};

WarpEditor::WarpEditor(QWidget* parent)
    : QWidget(parent)
    , renderer_(new WarpRenderer(this))
    , undo_(new QUndoStack(this)) {
    buildUi();
    connect(renderer_, &WarpRenderer::rendered, this, &WarpEditor::onRendered,
            Qt::QueuedConnection);
}

WarpEditor::~WarpEditor() = default;

void WarpEditor::buildUi() {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);

    toolbar_ = new QToolBar(this);
    toolbar_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    auto addAction = [this](const QString& text, const QKeySequence& key, auto slot) {
        QAction* action = toolbar_->addAction(text);
        if (!key.isEmpty()) {
            action->setShortcut(key);
            action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        }
        connect(action, &QAction::triggered, this, slot);
        return action;
    };
    addAction(tr("Open Image…"), QKeySequence(), [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open Image"), QFileInfo(imagePath_).absolutePath(), imageFileFilter());
        if (!path.isEmpty()) {
            openImage(path);
        }
    });
    const QString matrixFilter =
        tr("Homography (*.json *.npy *.xml *.yml *.yaml);;JSON (*.json);;NumPy (*.npy);;"
           "OpenCV FileStorage (*.xml *.yml *.yaml)");
    addAction(tr("Load Matrix…"), QKeySequence(), [this, matrixFilter]() {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Load Homography"), QString(), matrixFilter);
        if (!path.isEmpty()) {
            loadMatrix(path);
        }
    });
    addAction(tr("Save Matrix…"), QKeySequence(), [this, matrixFilter]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save Homography"), QStringLiteral("homography.json"), matrixFilter);
        if (!path.isEmpty()) {
            saveMatrix(path);
        }
    });
    auto* copyButton = new QToolButton(toolbar_);
    copyButton->setText(tr("Copy As"));
    copyButton->setPopupMode(QToolButton::InstantPopup);
    auto* copyMenu = new QMenu(copyButton);
    connect(copyMenu->addAction(tr("Python / NumPy")), &QAction::triggered, this,
            [this]() { copyText(matrixAsNumpy(state_.matrix), tr("NumPy literal")); });
    connect(copyMenu->addAction(tr("C++ (cv::Matx33d)")), &QAction::triggered, this,
            [this]() { copyText(matrixAsCpp(state_.matrix), tr("C++ literal")); });
    copyButton->setMenu(copyMenu);
    toolbar_->addWidget(copyButton);
    addAction(tr("Export Warped Image…"), QKeySequence(), [this]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Warped Image"), QStringLiteral("warped.png"), imageFileFilter());
        if (!path.isEmpty()) {
            exportImage(path);
        }
    });
    toolbar_->addSeparator();
    QAction* undoAction = undo_->createUndoAction(this, tr("Undo"));
    undoAction->setShortcut(QKeySequence::Undo);
    undoAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    QAction* redoAction = undo_->createRedoAction(this, tr("Redo"));
    redoAction->setShortcut(QKeySequence::Redo);
    redoAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    toolbar_->addAction(undoAction);
    toolbar_->addAction(redoAction);
    QWidget::addAction(undoAction);
    QWidget::addAction(redoAction);
    toolbar_->addSeparator();
    addAction(tr("Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), [this]() { fitViews(); });
    addAction(tr("1:1"), QKeySequence(Qt::CTRL | Qt::Key_1), [this]() {
        sourceView_->actualSize();
        outputView_->actualSize();
    });
    layout->addWidget(toolbar_);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    auto* views = new QSplitter(Qt::Horizontal, splitter);
    auto makeViewPane = [views](const QString& title, ImageCanvas*& canvas) {
        auto* pane = new QWidget(views);
        auto* paneLayout = new QVBoxLayout(pane);
        paneLayout->setContentsMargins(2, 2, 2, 2);
        paneLayout->setSpacing(2);
        auto* label = new QLabel(title, pane);
        label->setStyleSheet(QStringLiteral("font-weight: bold;"));
        canvas = new ImageCanvas(pane);
        paneLayout->addWidget(label);
        paneLayout->addWidget(canvas, 1);
        views->addWidget(pane);
    };
    makeViewPane(tr("Source"), sourceView_);
    makeViewPane(tr("Output (my_ops::warp_perspective)"), outputView_);
    sourceView_->setObjectName(QStringLiteral("warpSourceView"));
    outputView_->setObjectName(QStringLiteral("warpOutputView"));

    QWidget* panel = buildPanel();

    auto* scroll = new QScrollArea(splitter);
    scroll->setWidget(panel);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(panel->sizeHint().width() + 24);
    splitter->addWidget(views);
    splitter->addWidget(scroll);
    splitter->setStretchFactor(0, 1);
    layout->addWidget(splitter, 1);

    pixel_ = new QLabel(this);
    pixel_->setContentsMargins(6, 2, 6, 2);
    pixel_->setObjectName(QStringLiteral("warpPixel"));
    layout->addWidget(pixel_);

    for (ImageCanvas* view : {sourceView_, outputView_}) {
        connect(view, &ImageCanvas::handlePressed, this, [this, view]() {
            dragging_ = true;
            view->setNotice({});
        });
        connect(view, &ImageCanvas::handleDragged, this, &WarpEditor::dragHandle);
        connect(view, &ImageCanvas::handleReleased, this, [this]() { finishDrag(); });
        connect(view, &ImageCanvas::handleNudged, this, &WarpEditor::nudgeHandle);
        connect(view, &ImageCanvas::cursorMoved, this,
                [this, view](QPointF p) { showPixel(view, p); });
        connect(view, &ImageCanvas::cursorLeft, pixel_, &QLabel::clear);
        connect(view, &ImageCanvas::filesDropped, this, [this](const QStringList& paths) {
            const QString& path = paths.first();
            const QString suffix = QFileInfo(path).suffix().toLower();
            if (QStringList{QStringLiteral("json"), QStringLiteral("npy"), QStringLiteral("xml"),
                            QStringLiteral("yml"), QStringLiteral("yaml")}
                    .contains(suffix)) {
                loadMatrix(path);
            } else {
                openImage(path);
            }
        });
    }
    updateFields(state_);
}

bool WarpEditor::placeSourceQuad(const Quad& corners, int width, int height,
                                 const QString& undoText) {
    if (width <= 0 || height <= 0) {
        return false;
    }
    const auto matrix = homographyBetween(corners, imageCorners(width, height));
    if (!matrix) {
        setMessage(tr("Not applied: %1").arg(QString::fromStdString(matrix.error().message)), true);
        return false;
    }
    WarpState next = state_;
    next.matrix = *matrix;
    next.mode = WarpMode::PlaceSource;
    next.outputSize = OutputSize::Custom;
    next.outputWidth = width;
    next.outputHeight = height;
    return applyState(next, undoText); // a custom size: the page's, not fitted from the view
}

bool WarpEditor::applyState(const WarpState& wanted, const QString& undoText) {
    if (source_.isNull()) {
        setMessage(tr("Open an image first"), true);
        return false;
    }
    WarpState next = wanted;
    if (next.mode == WarpMode::PlaceSource && next.outputSize == OutputSize::Fit &&
        (state_.mode != WarpMode::PlaceSource || state_.outputSize != OutputSize::Fit)) {
        // Rectifying into a fitted output starts from the output as it is now, so that switching
        // modes does not move the picture; later drags fit the output to the source points.
        WarpState before = next;
        before.mode = state_.mode;
        before.outputSize = state_.outputSize;
        const OutputFrame frame = outputFrame(before, source_.width(), source_.height());
        if (!frame.isEmpty()) {
            next.outputWidth = frame.width;
            next.outputHeight = frame.height;
            if (state_.mode == WarpMode::MoveCorners) {
                next.matrix = frame.renderMatrix(next.matrix);
            }
        }
    }
    if (auto problem = homographyProblem(next.matrix, source_.width(), source_.height())) {
        setMessage(tr("Not applied: %1").arg(QString::fromStdString(*problem)), true);
        display(state_, true);
        return false;
    }
    if (next == state_) {
        display(state_, true);
        return true;
    }
    undo_->push(new WarpStateCommand(this, state_, next, undoText));
    return true;
}

bool WarpEditor::setMatrix(const Homography& matrix, const QString& undoText) {
    WarpState next = state_;
    next.matrix = matrix;
    return applyState(next, undoText.isEmpty() ? tr("Set matrix") : undoText);
}

void WarpEditor::setCommitted(const WarpState& state) {
    state_ = state;
    setMessage({}, false);
    display(state_, true);
    Q_EMIT stateChanged();
    Q_EMIT matrixChanged(state_.matrix);
    Q_EMIT sessionChanged();
}

void WarpEditor::display(const WarpState& state, bool fullResolution) {
    shownState_ = state;
    updateFields(state);
    updateOverlays();
    requestRender(fullResolution);
}

ImageCanvas* WarpEditor::handleView() const {
    return shownState_.mode == WarpMode::MoveCorners ? outputView_ : sourceView_;
}

void WarpEditor::updateOverlays() {
    if (source_.isNull()) {
        return;
    }
    const int w = source_.width(), h = source_.height();
    const OutputFrame frame = outputFrame(shownState_, w, h);
    const QRectF frameRect(frame.left - 0.5, frame.top - 0.5, frame.width, frame.height);
    outputView_->setFrame(frameRect);
    const bool outlines = outline_->isChecked();
    // On the output: where the image's corners went. On the source: what the output frame shows.
    outputView_->setOutline(outlines ? mappedCorners(shownState_.matrix, w, h) : std::nullopt);
    sourceView_->setOutline(outlines ? frameOnSource(shownState_, w, h) : std::nullopt);
    const bool moveCorners = shownState_.mode == WarpMode::MoveCorners;
    outputView_->setHandlesVisible(moveCorners);
    sourceView_->setHandlesVisible(!moveCorners);
    if (!dragging_) {
        handleView()->setHandles(handleQuad(shownState_, w, h));
    }
    outputView_->setGrid(grid_->isChecked(), std::max(8.0, std::round(std::max(w, h) / 16.0)));
    const auto compare = static_cast<ImageCanvas::Compare>(compare_->currentIndex());
    outputView_->setComparison(source_, compare, compareAmount_->value() / 100.0);
}

void WarpEditor::requestRender(bool fullResolution) {
    if (source_.isNull()) {
        return;
    }
    const OutputFrame frame = outputFrame(shownState_, source_.width(), source_.height());
    if (frame.isEmpty()) {
        return;
    }
    WarpJob job;
    job.id = ++requested_;
    job.source = source_;
    job.options.interpolation = shownState_.interpolation;
    job.options.border = shownState_.border;
    job.options.border_value = shownState_.borderValue;
    job.fullResolution = fullResolution;
    if (fullResolution) {
        job.matrix = frame.renderMatrix(shownState_.matrix);
        job.size = QSize(frame.width, frame.height);
        job.origin = QPointF(frame.left, frame.top);
        job.pixelSize = 1;
        fullWanted_ = job.id;
    } else {
        // Only what is on screen, at the screen's resolution (never finer than the output's
        // pixels): a drag costs the viewport's pixels, not the output's.
        const QRectF frameRect(frame.left - 0.5, frame.top - 0.5, frame.width, frame.height);
        const QRectF visible = outputView_->visibleSceneRect().intersected(frameRect);
        if (visible.isEmpty()) {
            return;
        }
        const double pixel = std::max(1.0, 1.0 / outputView_->mapping().scale);
        // Pixel centres of the preview: on the output's own pixel centres at 1:1 and beyond.
        double x0 = visible.left() + pixel / 2, y0 = visible.top() + pixel / 2;
        if (pixel == 1.0) {
            x0 = std::ceil(visible.left());
            y0 = std::ceil(visible.top());
        }
        const int width = std::max(1, static_cast<int>(std::ceil((visible.right() - x0) / pixel)));
        const int height =
            std::max(1, static_cast<int>(std::ceil((visible.bottom() - y0) / pixel)));
        job.matrix = multiply({1 / pixel, 0, -x0 / pixel, 0, 1 / pixel, -y0 / pixel, 0, 0, 1},
                              shownState_.matrix);
        job.size = QSize(width, height);
        job.origin = QPointF(x0, y0);
        job.pixelSize = pixel;
    }
    renderer_->request(std::move(job));
}

void WarpEditor::onRendered(const WarpResult& result) {
    if (result.id < shown_) {
        return; // an older render finished after a newer one
    }
    if (!result.error.isEmpty()) {
        setMessage(tr("The operator refused: %1").arg(result.error), true);
        return;
    }
    shown_ = result.id;
    outputView_->setPicture(result.image, result.origin, result.pixelSize);
    timing_->setText(tr("%1 %2 x %3 in %4 ms")
                         .arg(result.fullResolution ? tr("Full resolution") : tr("Preview"))
                         .arg(result.image.width())
                         .arg(result.image.height())
                         .arg(result.milliseconds, 0, 'f', 1));
    if (result.fullResolution && result.id == fullWanted_) {
        fullImage_ = result.image;
        fullRender_ = result.id;
        if (!pendingExport_.isEmpty()) {
            const QString path = std::exchange(pendingExport_, QString());
            exportImage(path);
        }
        Q_EMIT fullResolutionReady();
    }
    Q_EMIT previewShown(result.id);
}

QImage WarpEditor::fullResolutionImage() const {
    return isFullResolutionCurrent() ? fullImage_ : QImage();
}

bool WarpEditor::isFullResolutionCurrent() const {
    return fullRender_ != 0 && fullRender_ == fullWanted_ && shownState_ == state_ && !dragging_;
}

void WarpEditor::dragHandle(int index, QPointF position) {
    dragging_ = true;
    ImageCanvas* view = handleView();
    auto quad = handleQuad(state_, source_.width(), source_.height());
    if (!quad) {
        return;
    }
    // The other handles stay where the last valid step left them.
    if (const auto shown = handleQuad(shownState_, source_.width(), source_.height())) {
        quad = shown;
    }
    (*quad)[static_cast<size_t>(index)] = Point{position.x(), position.y()};
    auto next = withHandles(shownState_, *quad, source_.width(), source_.height());
    if (!next) {
        view->setHandles(quad, true);
        const QString why = QString::fromStdString(next.error().message);
        setMessage(tr("Not applied: %1").arg(why), true);
        // Over the picture, where the person is looking (the panel may be out of view).
        view->setNotice(tr("Not applied: %1").arg(why));
        return;
    }
    view->setHandles(quad, false);
    view->selectHandle(index);
    view->setNotice({});
    setMessage({}, false);
    display(*next, false);
}

void WarpEditor::finishDrag() {
    dragging_ = false;
    const bool refused = message_->text().startsWith(tr("Not applied"));
    const QString text = message_->text();
    if (shownState_ != state_) {
        applyState(shownState_, tr("Drag corner"));
    } else {
        display(state_, true);
    }
    if (refused) {
        // The corner goes back to its last position that could warp: said, with the reason,
        // in the panel and over the picture (until the next drag).
        const QString why = text.mid(tr("Not applied: ").size());
        setMessage(text, true);
        handleView()->setNotice(tr("Back to the last corner that warps: %1").arg(why));
    }
    Q_EMIT dragFinished();
}

void WarpEditor::nudgeHandle(int index, QPointF delta) {
    auto quad = handleQuad(state_, source_.width(), source_.height());
    if (!quad) {
        return;
    }
    auto& p = (*quad)[static_cast<size_t>(index)];
    p.x += delta.x();
    p.y += delta.y();
    auto next = withHandles(state_, *quad, source_.width(), source_.height());
    if (!next) {
        setMessage(tr("Not applied: %1").arg(QString::fromStdString(next.error().message)), true);
        return;
    }
    applyState(*next, tr("Nudge corner"));
    handleView()->selectHandle(index);
}

void WarpEditor::showPixel(ImageCanvas* view, QPointF scenePos) {
    const auto color = view->pixelAt(scenePos);
    const QString where = view == sourceView_ ? tr("Source") : tr("Output");
    const int x = static_cast<int>(std::floor(scenePos.x() + 0.5));
    const int y = static_cast<int>(std::floor(scenePos.y() + 0.5));
    if (!color) {
        pixel_->setText(tr("%1  x %2, y %3").arg(where).arg(x).arg(y));
        return;
    }
    pixel_->setText(tr("%1  x %2, y %3   R %4  G %5  B %6  A %7")
                        .arg(where)
                        .arg(x)
                        .arg(y)
                        .arg(color->red())
                        .arg(color->green())
                        .arg(color->blue())
                        .arg(color->alpha()));
}

} // namespace scriptscope
