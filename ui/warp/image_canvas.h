// A zoomable, pannable image view (QGraphicsView) with the warp editor's overlays: four corner
// handles, a quad outline, the output frame, a grid, and a second picture for before/after
// comparison. Scene coordinates are image pixel coordinates with pixel centres on integers.
#pragma once

#include <homography.h>

#include <QGraphicsView>
#include <QImage>

#include <array>
#include <optional>

class QGraphicsPolygonItem;
class QGraphicsRectItem;

namespace scriptscope {

class PictureItem;
class HandleItem;

class ImageCanvas : public QGraphicsView {
    Q_OBJECT

public:
    enum class Compare { Off, Split, Blend };

    explicit ImageCanvas(QWidget* parent = nullptr);
    ~ImageCanvas() override;

    // The main picture: `image` drawn so that its pixel (0,0) is centred on `topLeftPixel`, with
    // `pixelSize` scene units per image pixel (1 for full resolution, less for a coarse preview).
    void setPicture(const QImage& image, QPointF topLeftPixel = {}, double pixelSize = 1);
    QImage picture() const;
    // The picture's pixel under a scene point; nullopt outside it.
    std::optional<QColor> pixelAt(QPointF scenePos) const;
    // A second picture shown beside (split) or through (blend) the main one.
    void setComparison(const QImage& image, Compare mode, double amount);

    // Handles at the quad's corners; `invalid` marks them red (a position that is not applied).
    void setHandles(const std::optional<Quad>& quad, bool invalid = false);
    void setHandlesVisible(bool visible);
    std::optional<Quad> handles() const;
    int selectedHandle() const { return selected_; }
    void selectHandle(int index);
    // The quad drawn as an outline (no handles).
    void setOutline(const std::optional<Quad>& quad);
    // The output's extent, drawn dashed.
    void setFrame(const QRectF& frame);
    void setGrid(bool on, double spacing = 32);

    // Zoom and pan as a plain mapping: viewport = scene * scale + offset.
    ViewMapping mapping() const;
    void setMapping(const ViewMapping& mapping);
    void zoomAround(QPointF viewportPos, double factor);
    // Fits the rectangle into the view, and keeps it fitted as the view resizes until the person
    // zooms or pans.
    void fitRect(const QRectF& rect);
    void actualSize(); // 1:1 about the viewport's centre
    // The part of `rect` that is on screen, in scene coordinates.
    QRectF visibleSceneRect() const;

    quint64 paintCount() const { return paintCount_; }
    // A sentence over the top of the view, where the person is looking (why a drag is refused);
    // empty: none.
    void setNotice(const QString& text);
    QString notice() const { return notice_; }

Q_SIGNALS:
    void handlePressed(int index);
    // The handle's wanted position (Shift already applied); the owner decides whether it moves.
    void handleDragged(int index, QPointF scenePos);
    void handleReleased(int index);
    void handleNudged(int index, QPointF delta);
    void cursorMoved(QPointF scenePos);
    void cursorLeft();
    void viewChanged();
    void painted();
    void filesDropped(const QStringList& paths);

protected:
    bool event(QEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;
    void scrollContentsBy(int dx, int dy) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    int handleAt(QPoint viewportPos) const;

    QGraphicsScene* scene_ = nullptr;
    PictureItem* picture_ = nullptr;
    PictureItem* comparison_ = nullptr;
    QGraphicsPolygonItem* outline_ = nullptr;
    QGraphicsRectItem* frame_ = nullptr;
    std::array<HandleItem*, 4> handles_{};
    bool handlesVisible_ = true;
    bool handlesValid_ = false;
    int selected_ = -1;
    int dragging_ = -1;
    QPointF pressScene_;
    QPointF pressHandle_;
    bool grid_ = false;
    double gridSpacing_ = 32;
    quint64 paintCount_ = 0;
    QString notice_;
    QRectF fitted_; // while not empty, resizing keeps this rectangle fitted
};

} // namespace scriptscope
