#include "image_canvas.h"

#include <QDragEnterEvent>
#include <QGraphicsItem>
#include <QGraphicsPolygonItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QKeyEvent>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include <cmath>

namespace scriptscope {

// An image drawn into a scene rectangle: pixel-exact (no smoothing) from 1:1 up, so that pixels
// can be inspected, and smoothed when zoomed out, where nearest sampling would shimmer.
class PictureItem : public QGraphicsItem {
public:
    void setPicture(const QImage& image, QPointF topLeftPixel, double pixelSize) {
        prepareGeometryChange();
        image_ = image;
        pixelSize_ = pixelSize;
        // Pixel (0,0)'s centre at topLeftPixel: its square starts half a pixel before.
        rect_ = QRectF(topLeftPixel.x() - pixelSize / 2, topLeftPixel.y() - pixelSize / 2,
                       image.width() * pixelSize, image.height() * pixelSize);
        update();
    }
    void setClip(const QRectF& clip) {
        clip_ = clip;
        update();
    }
    const QImage& image() const { return image_; }
    QRectF imageRect() const { return rect_; }
    double pixelSize() const { return pixelSize_; }

    QRectF boundingRect() const override { return rect_; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override {
        if (image_.isNull()) {
            return;
        }
        const double scale = option->levelOfDetailFromTransform(painter->worldTransform());
        painter->setRenderHint(QPainter::SmoothPixmapTransform, scale * pixelSize_ < 1);
        if (!clip_.isNull()) {
            painter->setClipRect(clip_);
        }
        // Only the exposed part: drawing a 4K image into a small viewport must not scale all of it.
        const QRectF exposed = option->exposedRect.intersected(rect_);
        if (exposed.isEmpty()) {
            return;
        }
        const QRectF sourceRect((exposed.left() - rect_.left()) / pixelSize_,
                                (exposed.top() - rect_.top()) / pixelSize_,
                                exposed.width() / pixelSize_, exposed.height() / pixelSize_);
        painter->drawImage(exposed, image_, sourceRect);
    }

private:
    QImage image_;
    QRectF rect_;
    QRectF clip_;
    double pixelSize_ = 1;
};

// A corner handle: a fixed size on screen whatever the zoom.
class HandleItem : public QGraphicsItem {
public:
    static constexpr double kRadius = 7;

    explicit HandleItem(int index)
        : index_(index) {
        setFlag(ItemIgnoresTransformations);
        setZValue(10);
    }
    int index() const { return index_; }
    void setLook(bool selected, bool invalid) {
        selected_ = selected;
        invalid_ = invalid;
        update();
    }
    QRectF boundingRect() const override {
        return QRectF(-kRadius - 2, -kRadius - 2, 2 * kRadius + 4, 2 * kRadius + 4);
    }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        painter->setRenderHint(QPainter::Antialiasing);
        const QColor fill = invalid_
                                ? QColor(0xd6, 0x28, 0x28)
                                : (selected_ ? QColor(0xff, 0xc1, 0x07) : QColor(0x1e, 0x88, 0xe5));
        painter->setPen(QPen(Qt::white, 2));
        painter->setBrush(fill);
        painter->drawEllipse(QPointF(0, 0), kRadius, kRadius);
        painter->setPen(QPen(Qt::black, 1));
        painter->drawLine(QPointF(-2, 0), QPointF(2, 0));
        painter->drawLine(QPointF(0, -2), QPointF(0, 2));
    }

private:
    int index_;
    bool selected_ = false;
    bool invalid_ = false;
};

namespace {

// Room to pan far beyond the image in every direction.
constexpr double kSceneExtent = 1e6;

} // namespace

ImageCanvas::ImageCanvas(QWidget* parent)
    : QGraphicsView(parent)
    , scene_(new QGraphicsScene(this)) {
    scene_->setSceneRect(-kSceneExtent, -kSceneExtent, 2 * kSceneExtent, 2 * kSceneExtent);
    scene_->setItemIndexMethod(QGraphicsScene::NoIndex);
    setScene(scene_);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setTransformationAnchor(QGraphicsView::NoAnchor);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    setBackgroundBrush(QColor(0x3a, 0x3a, 0x3a));
    setMouseTracking(true);
    setAcceptDrops(true);
    setFocusPolicy(Qt::StrongFocus);

    picture_ = new PictureItem;
    scene_->addItem(picture_);
    comparison_ = new PictureItem;
    comparison_->setZValue(1);
    comparison_->hide();
    scene_->addItem(comparison_);
    frame_ = scene_->addRect(QRectF(), QPen(QColor(255, 255, 255, 200), 0, Qt::DashLine));
    frame_->setZValue(2);
    frame_->hide();
    outline_ = scene_->addPolygon(QPolygonF(), QPen(QColor(0x00, 0xe6, 0x76), 0));
    outline_->setZValue(3);
    outline_->hide();
    QPen outlinePen(QColor(0x00, 0xe6, 0x76));
    outlinePen.setCosmetic(true);
    outlinePen.setWidthF(1.5);
    outline_->setPen(outlinePen);
    for (int i = 0; i < 4; ++i) {
        handles_[static_cast<size_t>(i)] = new HandleItem(i);
        handles_[static_cast<size_t>(i)]->hide();
        scene_->addItem(handles_[static_cast<size_t>(i)]);
    }
}

ImageCanvas::~ImageCanvas() = default;

void ImageCanvas::setPicture(const QImage& image, QPointF topLeftPixel, double pixelSize) {
    picture_->setPicture(image, topLeftPixel, pixelSize);
}

QImage ImageCanvas::picture() const {
    return picture_->image();
}

std::optional<QColor> ImageCanvas::pixelAt(QPointF scenePos) const {
    const QImage& image = picture_->image();
    const QRectF rect = picture_->imageRect();
    if (image.isNull() || !rect.contains(scenePos)) {
        return std::nullopt;
    }
    const int x = static_cast<int>((scenePos.x() - rect.left()) / picture_->pixelSize());
    const int y = static_cast<int>((scenePos.y() - rect.top()) / picture_->pixelSize());
    if (!image.valid(x, y)) {
        return std::nullopt;
    }
    return image.pixelColor(x, y);
}

void ImageCanvas::setComparison(const QImage& image, Compare mode, double amount) {
    if (mode == Compare::Off || image.isNull()) {
        comparison_->hide();
        return;
    }
    comparison_->setPicture(image, QPointF(0, 0), 1);
    if (mode == Compare::Split) {
        // The source on the left of the split line, the warped image on the right.
        const QRectF full = comparison_->imageRect().united(picture_->imageRect());
        comparison_->setClip(
            QRectF(full.left(), full.top() - 1, full.width() * amount, full.height() + 2));
        comparison_->setOpacity(1);
    } else {
        comparison_->setClip({});
        comparison_->setOpacity(amount);
    }
    comparison_->show();
}

void ImageCanvas::setHandles(const std::optional<Quad>& quad, bool invalid) {
    handlesValid_ = quad.has_value();
    for (size_t i = 0; i < 4; ++i) {
        HandleItem* handle = handles_[i];
        if (quad) {
            handle->setPos((*quad)[i].x, (*quad)[i].y);
        }
        handle->setLook(static_cast<int>(i) == selected_, invalid);
        handle->setVisible(handlesVisible_ && handlesValid_);
    }
}

void ImageCanvas::setHandlesVisible(bool visible) {
    handlesVisible_ = visible;
    for (HandleItem* handle : handles_) {
        handle->setVisible(visible && handlesValid_);
    }
    if (!visible) {
        selected_ = -1;
    }
}

std::optional<Quad> ImageCanvas::handles() const {
    if (!handlesValid_ || !handlesVisible_) {
        return std::nullopt;
    }
    Quad quad{};
    for (size_t i = 0; i < 4; ++i) {
        quad[i] = Point{handles_[i]->pos().x(), handles_[i]->pos().y()};
    }
    return quad;
}

void ImageCanvas::selectHandle(int index) {
    selected_ = index;
    for (HandleItem* handle : handles_) {
        handle->setLook(handle->index() == index, false);
    }
}

void ImageCanvas::setOutline(const std::optional<Quad>& quad) {
    if (!quad) {
        outline_->hide();
        return;
    }
    QPolygonF polygon;
    for (const Point& p : *quad) {
        polygon << QPointF(p.x, p.y);
    }
    outline_->setPolygon(polygon);
    outline_->show();
}

void ImageCanvas::setFrame(const QRectF& frame) {
    frame_->setRect(frame);
    frame_->setVisible(!frame.isEmpty());
}

void ImageCanvas::setGrid(bool on, double spacing) {
    grid_ = on;
    gridSpacing_ = std::max(2.0, spacing);
    viewport()->update();
}

ViewMapping ImageCanvas::mapping() const {
    const QTransform t = viewportTransform();
    ViewMapping m;
    m.scale = t.m11();
    m.offsetX = t.dx();
    m.offsetY = t.dy();
    return m;
}

void ImageCanvas::setMapping(const ViewMapping& m) {
    setTransform(QTransform::fromScale(m.scale, m.scale));
    // centerOn works in whole scroll steps: put the scene point that belongs at the viewport's
    // centre there.
    const Point centre = m.toImage(Point{viewport()->width() / 2.0, viewport()->height() / 2.0});
    centerOn(centre.x, centre.y);
    Q_EMIT viewChanged();
}

void ImageCanvas::zoomAround(QPointF viewportPos, double factor) {
    ViewMapping m = mapping();
    m.zoomAround(Point{viewportPos.x(), viewportPos.y()}, factor);
    setMapping(m);
}

void ImageCanvas::fitRect(const QRectF& rect) {
    if (rect.isEmpty()) {
        return;
    }
    fitted_ = rect;
    ViewMapping m = ViewMapping::fit(rect.width(), rect.height(), viewport()->width(),
                                     viewport()->height(), 12);
    m.offsetX -= rect.left() * m.scale;
    m.offsetY -= rect.top() * m.scale;
    setMapping(m);
}

void ImageCanvas::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    if (!fitted_.isEmpty()) {
        fitRect(fitted_);
    }
}

void ImageCanvas::actualSize() {
    fitted_ = QRectF();
    zoomAround(QPointF(viewport()->width() / 2.0, viewport()->height() / 2.0),
               1.0 / mapping().scale);
}

QRectF ImageCanvas::visibleSceneRect() const {
    return mapToScene(viewport()->rect()).boundingRect();
}

bool ImageCanvas::event(QEvent* event) {
    // Tab and Shift+Tab go from handle to handle while there are handles. QWidget::event would
    // move the keyboard focus to the next widget (and QGraphicsView hand them to the scene)
    // before keyPressEvent saw them.
    if (event->type() == QEvent::KeyPress && handlesVisible_ && handlesValid_) {
        const auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Tab || key->key() == Qt::Key_Backtab) {
            const int step = key->key() == Qt::Key_Backtab ? 3 : 1;
            selectHandle(selected_ < 0 ? 0 : (selected_ + step) % 4);
            event->accept();
            return true;
        }
    }
    return QGraphicsView::event(event);
}

void ImageCanvas::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps != 0) {
        fitted_ = QRectF(); // the person chose a zoom
        zoomAround(event->position(), std::pow(1.25, steps));
    }
    event->accept();
}

int ImageCanvas::handleAt(QPoint viewportPos) const {
    if (!handlesVisible_ || !handlesValid_) {
        return -1;
    }
    int best = -1;
    double bestDistance = HandleItem::kRadius + 3;
    for (const HandleItem* handle : handles_) {
        const QPointF onScreen = mapFromScene(handle->pos());
        const double distance =
            std::hypot(onScreen.x() - viewportPos.x(), onScreen.y() - viewportPos.y());
        if (distance <= bestDistance) {
            bestDistance = distance;
            best = handle->index();
        }
    }
    return best;
}

void ImageCanvas::mousePressEvent(QMouseEvent* event) {
    const int index =
        event->button() == Qt::LeftButton ? handleAt(event->position().toPoint()) : -1;
    if (index < 0) {
        if (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton) {
            fitted_ = QRectF(); // a pan
        }
        QGraphicsView::mousePressEvent(event);
        return;
    }
    setFocus(Qt::MouseFocusReason);
    selectHandle(index);
    dragging_ = index;
    pressScene_ = mapToScene(event->position().toPoint());
    pressHandle_ = handles_[static_cast<size_t>(index)]->pos();
    Q_EMIT handlePressed(index);
    event->accept();
}

void ImageCanvas::mouseMoveEvent(QMouseEvent* event) {
    const QPointF scenePos = mapToScene(event->position().toPoint());
    Q_EMIT cursorMoved(scenePos);
    if (dragging_ < 0) {
        QGraphicsView::mouseMoveEvent(event);
        return;
    }
    QPointF delta = scenePos - pressScene_;
    if (event->modifiers() & Qt::ShiftModifier) {
        // Constrained to the axis the drag has moved along most.
        if (std::abs(delta.x()) >= std::abs(delta.y())) {
            delta.setY(0);
        } else {
            delta.setX(0);
        }
    }
    Q_EMIT handleDragged(dragging_, pressHandle_ + delta);
    event->accept();
}

void ImageCanvas::mouseReleaseEvent(QMouseEvent* event) {
    if (dragging_ < 0 || event->button() != Qt::LeftButton) {
        QGraphicsView::mouseReleaseEvent(event);
        return;
    }
    const int index = dragging_;
    dragging_ = -1;
    Q_EMIT handleReleased(index);
    event->accept();
}

void ImageCanvas::keyPressEvent(QKeyEvent* event) {
    const double step = (event->modifiers() & Qt::ShiftModifier) ? 10 : 1;
    QPointF delta;
    switch (event->key()) {
    case Qt::Key_Left:
        delta = QPointF(-step, 0);
        break;
    case Qt::Key_Right:
        delta = QPointF(step, 0);
        break;
    case Qt::Key_Up:
        delta = QPointF(0, -step);
        break;
    case Qt::Key_Down:
        delta = QPointF(0, step);
        break;
    default:
        break;
    }
    if (!delta.isNull() && selected_ >= 0 && handlesVisible_ && handlesValid_) {
        Q_EMIT handleNudged(selected_, delta);
        event->accept();
        return;
    }
    QGraphicsView::keyPressEvent(event);
}

void ImageCanvas::leaveEvent(QEvent* event) {
    Q_EMIT cursorLeft();
    QGraphicsView::leaveEvent(event);
}

void ImageCanvas::paintEvent(QPaintEvent* event) {
    QGraphicsView::paintEvent(event);
    if (!notice_.isEmpty()) {
        QPainter painter(viewport());
        painter.setRenderHint(QPainter::Antialiasing);
        const QRect area = viewport()->rect().adjusted(12, 8, -12, 0);
        QRect box = painter.fontMetrics().boundingRect(area, Qt::TextWordWrap, notice_);
        box = box.adjusted(-8, -5, 8, 5);
        box.moveTop(8);
        box.moveLeft(std::max(4, (viewport()->width() - box.width()) / 2));
        painter.setPen(Qt::NoPen);
        painter.setBrush(QColor(0xb7, 0x1c, 0x1c, 225));
        painter.drawRoundedRect(box, 6, 6);
        painter.setPen(Qt::white);
        painter.drawText(box.adjusted(8, 5, -8, -5), Qt::TextWordWrap | Qt::AlignCenter, notice_);
    }
    ++paintCount_;
    Q_EMIT painted();
}

void ImageCanvas::setNotice(const QString& text) {
    if (text != notice_) {
        notice_ = text;
        viewport()->update();
    }
}

void ImageCanvas::drawForeground(QPainter* painter, const QRectF& rect) {
    if (!grid_ || frame_->rect().isEmpty()) {
        return;
    }
    const QRectF area = frame_->rect().intersected(rect);
    const double scale = mapping().scale;
    // Keep lines at least 6 screen pixels apart.
    double spacing = gridSpacing_;
    while (spacing * scale < 6) {
        spacing *= 2;
    }
    QPen pen(QColor(255, 255, 255, 90));
    pen.setCosmetic(true);
    painter->setPen(pen);
    const QRectF f = frame_->rect();
    for (double x = f.left() + std::ceil((area.left() - f.left()) / spacing) * spacing;
         x <= area.right(); x += spacing) {
        painter->drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    }
    for (double y = f.top() + std::ceil((area.top() - f.top()) / spacing) * spacing;
         y <= area.bottom(); y += spacing) {
        painter->drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
    }
}

void ImageCanvas::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    Q_EMIT viewChanged();
}

void ImageCanvas::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) {
        event->acceptProposedAction();
    }
}

void ImageCanvas::dragMoveEvent(QDragMoveEvent* event) {
    if (event->mimeData()->hasUrls()) {
        event->acceptProposedAction();
    }
}

void ImageCanvas::dropEvent(QDropEvent* event) {
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile()) {
            paths << url.toLocalFile();
        }
    }
    if (!paths.isEmpty()) {
        Q_EMIT filesDropped(paths);
        event->acceptProposedAction();
    }
}

} // namespace scriptscope
