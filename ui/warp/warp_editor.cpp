#include "warp_editor.h"

#include "image_canvas.h"
#include "image_io.h"
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

namespace {

const char* const kDecompositionNames[8] = {"tx", "ty",    "rotation (°)", "sx",
                                            "sy", "shear", "px",           "py"};

double& decompositionField(Decomposition& d, size_t index) {
    switch (index) {
    case 0:
        return d.tx;
    case 1:
        return d.ty;
    case 2:
        return d.rotationDegrees;
    case 3:
        return d.sx;
    case 4:
        return d.sy;
    case 5:
        return d.shear;
    case 6:
        return d.px;
    default:
        return d.py;
    }
}

QString formatNumber(double v) {
    if (v == 0) {
        return QStringLiteral("0");
    }
    return QString::number(v, 'g', 8);
}

void markField(QLineEdit* field, bool bad, const QString& why = {}) {
    field->setStyleSheet(bad ? QStringLiteral("QLineEdit { background: #f8d7da; color: #58151c; }")
                             : QString());
    field->setToolTip(why);
}

QComboBox* makeCombo(QWidget* parent, std::initializer_list<std::pair<QString, QString>> entries) {
    auto* combo = new QComboBox(parent);
    for (const auto& [label, key] : entries) {
        combo->addItem(label, key);
    }
    return combo;
}

} // namespace

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

    // The side panel: mode, matrix, decomposition, presets, options, view.
    auto* panel = new QWidget;
    auto* panelLayout = new QVBoxLayout(panel);
    auto* modeBox = new QGroupBox(tr("Handles"), panel);
    auto* modeLayout = new QVBoxLayout(modeBox);
    mode_ = new QButtonGroup(this);
    auto* moveCorners = new QRadioButton(tr("Move the image's corners"), modeBox);
    moveCorners->setToolTip(tr("Drag where the image's four corners go in the output"));
    auto* placeSource = new QRadioButton(tr("Place source points (rectify)"), modeBox);
    placeSource->setToolTip(
        tr("Put the handles on the source's four corners of a document or plane (top-left, "
           "top-right, bottom-right, bottom-left): the output shows it straightened"));
    mode_->addButton(moveCorners, static_cast<int>(WarpMode::MoveCorners));
    mode_->addButton(placeSource, static_cast<int>(WarpMode::PlaceSource));
    moveCorners->setChecked(true);
    modeLayout->addWidget(moveCorners);
    modeLayout->addWidget(placeSource);
    auto* hint = new QLabel(tr("Shift: along one axis · arrows: nudge 1 px (Shift: 10) · Tab: next "
                               "handle · wheel: zoom · drag the background: pan"),
                            modeBox);
    hint->setWordWrap(true);
    hint->setStyleSheet(QStringLiteral("color: palette(mid);"));
    modeLayout->addWidget(hint);
    panelLayout->addWidget(modeBox);
    connect(mode_, &QButtonGroup::idClicked, this, [this](int id) {
        WarpState next = state_;
        next.mode = static_cast<WarpMode>(id);
        applyState(next, tr("Change handle mode"));
    });

    auto* matrixBox = new QGroupBox(tr("Matrix (source → output pixels)"), panel);
    auto* matrixGrid = new QGridLayout(matrixBox);
    for (size_t i = 0; i < 9; ++i) {
        auto* field = new QLineEdit(matrixBox);
        field->setObjectName(QStringLiteral("h%1%2").arg(i / 3 + 1).arg(i % 3 + 1));
        field->setValidator(new QDoubleValidator(field));
        field->setAlignment(Qt::AlignRight);
        field->setMinimumWidth(80);
        matrixGrid->addWidget(field, static_cast<int>(i / 3), static_cast<int>(i % 3));
        matrixFields_[i] = field;
        connect(field, &QLineEdit::editingFinished, this,
                [this, i]() { matrixEdited(static_cast<int>(i)); });
    }
    auto* matrixButtons = new QHBoxLayout;
    auto* presets = new QPushButton(tr("Presets"), matrixBox);
    auto* presetMenu = new QMenu(presets);
    auto addPreset = [this, presetMenu](const QString& text, auto make) {
        connect(presetMenu->addAction(text), &QAction::triggered, this,
                [this, text, make]() { setMatrix(make(source_.width(), source_.height()), text); });
    };
    addPreset(tr("Identity"), [](int, int) { return identityHomography(); });
    addPreset(tr("Rotate 90° clockwise"),
              [](int w, int h) { return rotationAboutCentre(90, w, h); });
    addPreset(tr("Rotate 90° anticlockwise"),
              [](int w, int h) { return rotationAboutCentre(-90, w, h); });
    addPreset(tr("Rotate 15°"), [](int w, int h) { return rotationAboutCentre(15, w, h); });
    addPreset(tr("Rotate 180°"), [](int w, int h) { return rotationAboutCentre(180, w, h); });
    addPreset(tr("Flip horizontally"), [](int w, int) { return flipHorizontal(w); });
    addPreset(tr("Flip vertically"), [](int, int h) { return flipVertical(h); });
    addPreset(tr("Keystone (top narrower)"), [](int w, int h) { return keystone(0.3, w, h); });
    addPreset(tr("Keystone (bottom narrower)"), [](int w, int h) { return keystone(-0.3, w, h); });
    presets->setMenu(presetMenu);
    auto* invert = new QPushButton(tr("Invert"), matrixBox);
    auto* normalize = new QPushButton(tr("Normalize"), matrixBox);
    normalize->setToolTip(tr("Scale the matrix so that h33 = 1 (the same warp)"));
    auto* reset = new QPushButton(tr("Reset"), matrixBox);
    reset->setToolTip(tr("Identity matrix and default options"));
    matrixButtons->addWidget(presets);
    matrixButtons->addWidget(invert);
    matrixButtons->addWidget(normalize);
    matrixButtons->addWidget(reset);
    matrixGrid->addLayout(matrixButtons, 3, 0, 1, 3);
    // Why a typed entry was refused, next to the entry (not only in its tooltip).
    matrixNote_ = new QLabel(matrixBox);
    matrixNote_->setObjectName(QStringLiteral("matrixNote"));
    matrixNote_->setWordWrap(true);
    matrixNote_->setStyleSheet(QStringLiteral("color: #c62828; font-weight: bold;"));
    matrixNote_->hide();
    matrixGrid->addWidget(matrixNote_, 4, 0, 1, 3);
    panelLayout->addWidget(matrixBox);
    connect(invert, &QPushButton::clicked, this, [this]() {
        if (const auto inverse = inverted(state_.matrix)) {
            setMatrix(*inverse, tr("Invert matrix"));
        } else {
            setMessage(tr("Not inverted: the matrix is singular"), true);
        }
    });
    connect(normalize, &QPushButton::clicked, this, [this]() {
        if (const auto n = normalized(state_.matrix)) {
            setMatrix(*n, tr("Normalize matrix"));
        } else {
            setMessage(tr("Not normalized: h33 is zero"), true);
        }
    });
    connect(reset, &QPushButton::clicked, this, [this]() {
        WarpState fresh;
        fresh.mode = state_.mode;
        fresh.outputWidth = source_.width();
        fresh.outputHeight = source_.height();
        applyState(fresh, tr("Reset"));
    });

    auto* decompositionBox = new QGroupBox(tr("Decomposition  T · R · Shear · Scale · P"), panel);
    decompositionBox->setToolTip(
        tr("H = T(tx, ty) · R(rotation) · [1 shear; 0 1] · diag(sx, sy) · P(px, py), with h33 = 1. "
           "Edit any value: the matrix is composed from them."));
    auto* decompositionGrid = new QGridLayout(decompositionBox);
    for (size_t i = 0; i < 8; ++i) {
        auto* field = new QLineEdit(decompositionBox);
        field->setObjectName(
            QString::fromLatin1(kDecompositionNames[i]).section(QLatin1Char(' '), 0, 0));
        field->setValidator(new QDoubleValidator(field));
        field->setAlignment(Qt::AlignRight);
        const int row = static_cast<int>(i / 2), column = static_cast<int>(i % 2) * 2;
        decompositionGrid->addWidget(
            new QLabel(QString::fromUtf8(kDecompositionNames[i]), decompositionBox), row, column);
        decompositionGrid->addWidget(field, row, column + 1);
        decompositionFields_[i] = field;
        connect(field, &QLineEdit::editingFinished, this, [this]() { decompositionEdited(); });
    }
    panelLayout->addWidget(decompositionBox);

    auto* optionsBox = new QGroupBox(tr("Warp options"), panel);
    auto* optionsForm = new QFormLayout(optionsBox);
    interpolation_ = makeCombo(optionsBox, {{tr("Nearest"), QStringLiteral("nearest")},
                                            {tr("Linear"), QStringLiteral("linear")},
                                            {tr("Cubic"), QStringLiteral("cubic")},
                                            {tr("Lanczos (8x8)"), QStringLiteral("lanczos4")}});
    border_ = makeCombo(optionsBox, {{tr("Constant"), QStringLiteral("constant")},
                                     {tr("Replicate"), QStringLiteral("replicate")},
                                     {tr("Reflect"), QStringLiteral("reflect")},
                                     {tr("Reflect 101"), QStringLiteral("reflect101")},
                                     {tr("Wrap"), QStringLiteral("wrap")}});
    borderValue_ = new QSpinBox(optionsBox);
    borderValue_->setRange(0, 255);
    borderValue_->setToolTip(tr("The value of pixels outside the source, for the constant border"));
    outputSize_ = makeCombo(optionsBox, {{tr("Source size"), QStringLiteral("source")},
                                         {tr("Fit the warped quad"), QStringLiteral("fit")},
                                         {tr("Custom"), QStringLiteral("custom")}});
    outputWidth_ = new QSpinBox(optionsBox);
    outputHeight_ = new QSpinBox(optionsBox);
    for (QSpinBox* spin : {outputWidth_, outputHeight_}) {
        spin->setRange(2, 1 << 15);
        spin->setSuffix(tr(" px"));
        spin->setKeyboardTracking(false);
    }
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(outputWidth_);
    sizeRow->addWidget(new QLabel(QStringLiteral("×"), optionsBox));
    sizeRow->addWidget(outputHeight_);
    optionsForm->addRow(tr("Interpolation"), interpolation_);
    optionsForm->addRow(tr("Border"), border_);
    optionsForm->addRow(tr("Border value"), borderValue_);
    optionsForm->addRow(tr("Output size"), outputSize_);
    optionsForm->addRow(QString(), sizeRow);
    panelLayout->addWidget(optionsBox);
    for (QComboBox* combo : {interpolation_, border_, outputSize_}) {
        connect(combo, &QComboBox::activated, this, [this]() { optionsEdited(); });
    }
    for (QSpinBox* spin : {borderValue_, outputWidth_, outputHeight_}) {
        connect(spin, &QSpinBox::valueChanged, this, [this]() { optionsEdited(); });
    }

    auto* viewBox = new QGroupBox(tr("View"), panel);
    auto* viewForm = new QFormLayout(viewBox);
    grid_ = new QCheckBox(tr("Grid on the output"), viewBox);
    outline_ = new QCheckBox(tr("Quad outlines"), viewBox);
    outline_->setChecked(true);
    compare_ = makeCombo(viewBox, {{tr("Off"), QStringLiteral("off")},
                                   {tr("Before/after split"), QStringLiteral("split")},
                                   {tr("Blend with the source"), QStringLiteral("blend")}});
    compareAmount_ = new QSlider(Qt::Horizontal, viewBox);
    compareAmount_->setRange(0, 100);
    compareAmount_->setValue(50);
    viewForm->addRow(grid_);
    viewForm->addRow(outline_);
    viewForm->addRow(tr("Compare"), compare_);
    viewForm->addRow(tr("Split / opacity"), compareAmount_);
    panelLayout->addWidget(viewBox);
    for (QCheckBox* box : {grid_, outline_}) {
        connect(box, &QCheckBox::toggled, this, [this]() {
            updateOverlays();
            Q_EMIT sessionChanged();
        });
    }
    connect(compare_, &QComboBox::currentIndexChanged, this, [this]() {
        updateOverlays();
        Q_EMIT sessionChanged();
    });
    connect(compareAmount_, &QSlider::valueChanged, this, [this]() {
        updateOverlays();
        Q_EMIT sessionChanged();
    });

    message_ = new QLabel(panel);
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->setObjectName(QStringLiteral("warpMessage"));
    panelLayout->addWidget(message_);
    timing_ = new QLabel(panel);
    timing_->setStyleSheet(QStringLiteral("color: palette(mid);"));
    panelLayout->addWidget(timing_);
    panelLayout->addStretch(1);

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
        connect(view, &ImageCanvas::handlePressed, this, [this]() { dragging_ = true; });
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

void WarpEditor::updateFields(const WarpState& state) {
    for (size_t i = 0; i < 9; ++i) {
        if (!matrixFields_[i]->hasFocus() || dragging_) {
            matrixFields_[i]->setText(formatNumber(state.matrix[i]));
        }
        markField(matrixFields_[i], false);
    }
    showMatrixNote(QString());
    const auto d = decompose(state.matrix);
    for (size_t i = 0; i < 8; ++i) {
        QLineEdit* field = decompositionFields_[i];
        field->setEnabled(d.ok());
        if (d.ok()) {
            Decomposition copy = *d;
            field->setText(formatNumber(decompositionField(copy, i)));
            markField(field, false);
        } else {
            field->clear();
            field->setToolTip(QString::fromStdString(d.error().message));
        }
    }
    const QSignalBlocker b1(mode_), b2(interpolation_), b3(border_), b4(borderValue_),
        b5(outputSize_), b6(outputWidth_), b7(outputHeight_);
    mode_->button(static_cast<int>(state.mode))->setChecked(true);
    interpolation_->setCurrentIndex(
        interpolation_->findData(QLatin1String(my_ops::toString(state.interpolation))));
    border_->setCurrentIndex(border_->findData(QLatin1String(my_ops::toString(state.border))));
    borderValue_->setValue(static_cast<int>(std::lround(state.borderValue)));
    borderValue_->setEnabled(state.border == my_ops::BorderMode::Constant);
    outputSize_->setCurrentIndex(static_cast<int>(state.outputSize));
    const OutputFrame frame = outputFrame(state, source_.width(), source_.height());
    const bool custom = state.outputSize == OutputSize::Custom;
    outputWidth_->setValue(custom ? state.outputWidth : std::max(2, frame.width));
    outputHeight_->setValue(custom ? state.outputHeight : std::max(2, frame.height));
    outputWidth_->setEnabled(custom);
    outputHeight_->setEnabled(custom);
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

void WarpEditor::showMatrixNote(const QString& text) {
    matrixNote_->setText(text);
    matrixNote_->setVisible(!text.isEmpty());
}

QString WarpEditor::matrixNote() const {
    return matrixNote_->isVisibleTo(this) ? matrixNote_->text() : QString();
}

void WarpEditor::setMessage(const QString& text, bool problem) {
    message_->setText(text);
    message_->setStyleSheet(problem ? QStringLiteral("color: #c62828; font-weight: bold;")
                                    : QString());
}

QString WarpEditor::message() const {
    return message_->text();
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
        setMessage(tr("Not applied: %1").arg(QString::fromStdString(next.error().message)), true);
        return;
    }
    view->setHandles(quad, false);
    view->selectHandle(index);
    setMessage({}, false);
    display(*next, false);
}

void WarpEditor::finishDrag() {
    dragging_ = false;
    const bool refused = message_->text().startsWith(tr("Not applied"));
    if (shownState_ != state_) {
        const QString text = message_->text();
        applyState(shownState_, tr("Drag corner"));
        if (refused) {
            setMessage(text, true); // the last position was refused: say so after snapping back
        }
    } else {
        display(state_, true);
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

void WarpEditor::matrixEdited(int index) {
    QLineEdit* field = matrixFields_[static_cast<size_t>(index)];
    bool ok = false;
    const double value = QLocale().toDouble(field->text(), &ok);
    const double plain = ok ? value : field->text().toDouble(&ok);
    if (!ok || !std::isfinite(plain)) {
        markField(field, true, tr("Not a number"));
        setMessage(tr("Not applied: '%1' is not a number").arg(field->text()), true);
        showMatrixNote(tr("%1: '%2' is not a number").arg(field->objectName(), field->text()));
        return;
    }
    if (formatNumber(plain) == formatNumber(state_.matrix[static_cast<size_t>(index)])) {
        markField(field, false);
        return; // focus left the field without a change
    }
    Homography next = state_.matrix;
    next[static_cast<size_t>(index)] = plain;
    if (auto problem = homographyProblem(next, source_.width(), source_.height())) {
        markField(field, true, QString::fromStdString(*problem));
        setMessage(tr("Not applied: %1").arg(QString::fromStdString(*problem)), true);
        showMatrixNote(
            tr("%1 = %2 not applied: %3")
                .arg(field->objectName(), field->text(), QString::fromStdString(*problem)));
        return;
    }
    setMatrix(next, tr("Edit h%1%2").arg(index / 3 + 1).arg(index % 3 + 1));
}

void WarpEditor::decompositionEdited() {
    auto current = decompose(state_.matrix);
    if (!current) {
        return;
    }
    Decomposition d = *current;
    QString changed;
    for (size_t i = 0; i < 8; ++i) {
        QLineEdit* field = decompositionFields_[i];
        bool ok = false;
        double value = QLocale().toDouble(field->text(), &ok);
        if (!ok) {
            value = field->text().toDouble(&ok);
        }
        if (!ok || !std::isfinite(value)) {
            markField(field, true, tr("Not a number"));
            showMatrixNote(tr("'%1' is not a number").arg(field->text()));
            return;
        }
        double& target = decompositionField(d, i);
        // Only fields whose text changed: the others keep their exact values, so that the
        // composition gives back the matrix except for what was edited.
        if (formatNumber(value) != formatNumber(target)) {
            target = value;
            changed = QString::fromUtf8(kDecompositionNames[i]);
        }
    }
    if (changed.isEmpty()) {
        return;
    }
    const Homography next = compose(d);
    if (auto problem = homographyProblem(next, source_.width(), source_.height())) {
        setMessage(tr("Not applied: %1").arg(QString::fromStdString(*problem)), true);
        updateFields(state_);
        showMatrixNote(tr("%1 not applied: %2").arg(changed, QString::fromStdString(*problem)));
        return;
    }
    setMatrix(next, tr("Edit %1").arg(changed));
}

void WarpEditor::optionsEdited() {
    WarpState next = state_;
    next.interpolation = my_ops::Interpolation(interpolation_->currentIndex());
    next.border = my_ops::BorderMode(border_->currentIndex());
    next.borderValue = borderValue_->value();
    next.outputSize = static_cast<OutputSize>(outputSize_->currentIndex());
    if (next.outputSize == OutputSize::Custom) {
        next.outputWidth = outputWidth_->value();
        next.outputHeight = outputHeight_->value();
    }
    if (next.mode == WarpMode::PlaceSource && next.outputSize != state_.outputSize) {
        // Keep the source points where they are: recompute the matrix for the new output size.
        if (const auto quad = handleQuad(state_, source_.width(), source_.height())) {
            if (auto moved = withHandles(next, *quad, source_.width(), source_.height())) {
                next = *moved;
            }
        }
    }
    applyState(next, tr("Change warp options"));
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
