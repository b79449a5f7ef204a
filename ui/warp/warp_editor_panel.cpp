#include "warp_editor.h"

#include "image_canvas.h"
#include "image_io.h"
#include "problem_label.h"
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

// The side panel of the warp editor: handle mode, the matrix and its decomposition, presets,
// warp and view options, and what happens when a field is edited.
namespace scriptscope {

using namespace warp_detail;

QWidget* WarpEditor::buildPanel() {
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
    showOnLabel(matrixNote_, QString(), true);
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

    return panel;
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

void WarpEditor::showMatrixNote(const QString& text) {
    matrixNote_->setText(text);
    matrixNote_->setVisible(!text.isEmpty());
}

QString WarpEditor::matrixNote() const {
    return matrixNote_->isVisibleTo(this) ? matrixNote_->text() : QString();
}

void WarpEditor::setMessage(const QString& text, bool problem) {
    showOnLabel(message_, text, problem);
}

QString WarpEditor::message() const {
    return message_->text();
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

} // namespace scriptscope
