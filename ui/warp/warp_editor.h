// The homography editor: drag the corners of a quad (or place four points on the source), type the
// matrix or its decomposition, and see the warp by the project's my_ops::warp_perspective, live.
#pragma once

#include "warp_state.h"

#include <QImage>
#include <QJsonObject>
#include <QWidget>

#include <array>

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSlider;
class QSpinBox;
class QToolBar;
class QUndoStack;

namespace scriptscope {

class ImageCanvas;
class WarpRenderer;
struct WarpResult;

class WarpEditor : public QWidget {
    Q_OBJECT

public:
    explicit WarpEditor(QWidget* parent = nullptr);
    ~WarpEditor() override;

    // Loads an image (PNG, JPEG, BMP, TIFF, ...); on failure shows why and keeps the current one.
    bool openImage(const QString& path);
    void setImage(const QImage& image, const QString& path = {});
    const QImage& sourceImage() const { return source_; }
    QString imagePath() const { return imagePath_; }

    const WarpState& state() const { return state_; }
    const Homography& matrix() const { return state_.matrix; }
    // An undoable change; refused (with the reason shown) when the matrix cannot warp the image.
    bool applyState(const WarpState& state, const QString& undoText);
    bool setMatrix(const Homography& matrix, const QString& undoText = {});

    // Rectifies a quad of the source: the handles go on its corners (top-left, top-right,
    // bottom-right, bottom-left, in source pixels), which map to the corners of a width x height
    // output. Undoable; refused (with the reason shown) for a quad that cannot be a warp's.
    bool placeSourceQuad(const Quad& corners, int width, int height, const QString& undoText);

    bool loadMatrix(const QString& path);
    bool saveMatrix(const QString& path);
    // Writes the warped image at full resolution (when the render is done: asynchronous).
    void exportImage(const QString& path);

    // The editor's session: image path, state and view options. Restoring a session whose image is
    // gone falls back to `fallbackImage`, saying so.
    QJsonObject session() const;
    void restoreSession(const QJsonObject& session, const QString& fallbackImage);

    QUndoStack* undoStack() const { return undo_; }
    ImageCanvas* sourceView() const { return sourceView_; }
    ImageCanvas* outputView() const { return outputView_; }
    QString message() const;
    // Why the last typed matrix or decomposition entry was refused; empty once one applies.
    QString matrixNote() const;
    // The last full-resolution render of the current state (null while one is pending).
    QImage fullResolutionImage() const;
    bool isFullResolutionCurrent() const;
    // Renders are numbered; a drag step asks for a preview and the canvas shows it when done.
    quint64 lastRequestedRender() const { return requested_; }
    quint64 shownRender() const { return shown_; }
    void fitViews();

Q_SIGNALS:
    // A committed change (not each step of a drag).
    void stateChanged();
    void matrixChanged(const scriptscope::Homography& matrix);
    void dragFinished();
    void imageChanged(const QString& path);
    void sessionChanged();
    void fullResolutionReady();
    void previewShown(quint64 render);

private:
    friend class WarpStateCommand;
    void buildUi();
    QWidget* buildPanel(); // warp_editor_panel.cpp
    void setCommitted(const WarpState& state);
    void display(const WarpState& state, bool fullResolution);
    void requestRender(bool fullResolution);
    void onRendered(const WarpResult& result);
    void updateFields(const WarpState& state);
    void updateOverlays();
    void setMessage(const QString& text, bool problem);
    void showMatrixNote(const QString& text);
    void dragHandle(int index, QPointF position);
    void finishDrag();
    void nudgeHandle(int index, QPointF delta);
    void matrixEdited(int index);
    void decompositionEdited();
    void optionsEdited();
    void showPixel(ImageCanvas* view, QPointF scenePos);
    ImageCanvas* handleView() const;
    void copyText(const QString& text, const QString& what);

    QImage source_;
    QString imagePath_;
    WarpState state_;      // committed
    WarpState shownState_; // what the views show: state_, or a drag step not yet committed
    bool dragging_ = false;
    quint64 requested_ = 0;
    quint64 shown_ = 0;
    quint64 fullRender_ = 0; // the render id of the full-resolution image below
    quint64 fullWanted_ = 0; // the render id a full-resolution image of state_ will have
    QImage fullImage_;
    QString pendingExport_;
    bool restoring_ = false;

    WarpRenderer* renderer_ = nullptr;
    QUndoStack* undo_ = nullptr;
    ImageCanvas* sourceView_ = nullptr;
    ImageCanvas* outputView_ = nullptr;
    QToolBar* toolbar_ = nullptr;
    QLabel* message_ = nullptr;
    QLabel* matrixNote_ = nullptr;
    QSize sourceSize_;
    QLabel* pixel_ = nullptr;
    QLabel* timing_ = nullptr;
    QButtonGroup* mode_ = nullptr;
    std::array<QLineEdit*, 9> matrixFields_{};
    std::array<QLineEdit*, 8> decompositionFields_{};
    QComboBox* interpolation_ = nullptr;
    QComboBox* border_ = nullptr;
    QSpinBox* borderValue_ = nullptr;
    QComboBox* outputSize_ = nullptr;
    QSpinBox* outputWidth_ = nullptr;
    QSpinBox* outputHeight_ = nullptr;
    QCheckBox* grid_ = nullptr;
    QCheckBox* outline_ = nullptr;
    QComboBox* compare_ = nullptr;
    QSlider* compareAmount_ = nullptr;
};

} // namespace scriptscope
