// The canvas the diagram is painted on: pan and zoom, the minimap, mouse and keyboard.
#include "diagram_support.h"
#include "graph_diagram.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace scriptscope {

using namespace diagram_ui;

// ---------------------------------------------------------------------------------------------
// The canvas

DiagramCanvas::DiagramCanvas(GraphDiagram* diagram)
    : QWidget(diagram)
    , diagram_(diagram) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
    setAutoFillBackground(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QPointF DiagramCanvas::toScene(const QPointF& p) const {
    return origin_ + p / scale_;
}
QPointF DiagramCanvas::toView(const QPointF& p) const {
    return (p - origin_) * scale_;
}

LayoutRect DiagramCanvas::visibleScene() const {
    return {origin_.x(), origin_.y(), width() / scale_, height() / scale_};
}

void DiagramCanvas::setScale(double scale, const QPointF& anchor) {
    // Out to the whole picture, however large: zoomed out, groups are drawn as summary boxes.
    double whole = 0.01;
    if (const DiagramPicture* pic = diagram_->picture();
        pic && pic->layout.width > 0 && pic->layout.height > 0) {
        whole =
            std::min(whole, std::min(width() / pic->layout.width, height() / pic->layout.height));
    }
    scale = std::clamp(scale, whole, 4.0);
    const QPointF sceneAnchor = toScene(anchor);
    scale_ = scale;
    origin_ = sceneAnchor - anchor / scale_;
    update();
}

void DiagramCanvas::fit() {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic || pic->layout.width <= 0 || width() <= 0) {
        return;
    }
    const double sx = width() / pic->layout.width, sy = height() / pic->layout.height;
    // Fit, but never so small that nothing can be read when the graph is tall: then the top.
    scale_ = std::clamp(std::min(sx, sy), 0.01, 1.0);
    if (std::min(sx, sy) < 0.25) {
        scale_ = std::clamp(sx, 0.25, 1.0);
        origin_ = {pic->layout.width / 2 - width() / scale_ / 2, 0};
    } else {
        origin_ = {pic->layout.width / 2 - width() / scale_ / 2,
                   pic->layout.height / 2 - height() / scale_ / 2};
    }
    update();
}

void DiagramCanvas::centreOn(const LayoutRect& r) {
    if (scale_ < kTextScale) {
        scale_ = 0.8;
    }
    origin_ =
        QPointF(r.x + r.width / 2, r.y + r.height / 2) - QPointF(width(), height()) / scale_ / 2;
    update();
}

void DiagramCanvas::showRect(const LayoutRect& r) {
    if (r.width <= 0 || r.height <= 0 || width() <= 0 || height() <= 0) {
        return;
    }
    scale_ = std::clamp(std::min(width() / r.width, height() / r.height) * 0.95, 0.01, 1.0);
    origin_ =
        QPointF(r.x + r.width / 2, r.y + r.height / 2) - QPointF(width(), height()) / scale_ / 2;
    update();
}

void DiagramCanvas::panBy(double dx, double dy) {
    origin_ += QPointF(dx, dy) / scale_;
    update();
}

void DiagramCanvas::pictureChanged() {
    minimap_ = QImage();
    update();
}

int DiagramCanvas::itemAt(const QPointF& view) const {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic) {
        return -1;
    }
    const QPointF s = toScene(view);
    const LayoutPoint p{s.x(), s.y()};
    for (const auto& e : pic->index.query({p.x, p.y, 0, 0})) {
        if (e.kind == DiagramIndex::Item &&
            pic->layout.items[static_cast<size_t>(e.index)].contains(p)) {
            return e.index;
        }
    }
    return -1;
}

int DiagramCanvas::clusterAt(const QPointF& view) const {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic) {
        return -1;
    }
    const QPointF s = toScene(view);
    const LayoutPoint p{s.x(), s.y()};
    int found = -1;
    for (const DiagramCluster& c : pic->layout.clusters) { // outer first: the last is innermost
        if (c.group > 0 && c.rect.contains(p)) {
            found = c.group;
        }
    }
    return found;
}

QRectF DiagramCanvas::minimapRect() const {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic || pic->layout.width <= 0) {
        return {};
    }
    const double side = std::min(180.0, std::min(width(), height()) / 3.0);
    const double s = side / std::max(pic->layout.width, pic->layout.height);
    const double w = std::max(24.0, pic->layout.width * s),
                 h = std::max(24.0, pic->layout.height * s);
    return {width() - w - 8, height() - h - 8, w, h};
}

void DiagramCanvas::renderMinimap() {
    const DiagramPicture* pic = diagram_->picture();
    const QRectF r = minimapRect();
    if (!pic || r.isEmpty()) {
        return;
    }
    minimap_ = QImage(r.size().toSize() * devicePixelRatioF(), QImage::Format_ARGB32_Premultiplied);
    minimap_.setDevicePixelRatio(devicePixelRatioF());
    minimap_.fill(Qt::transparent);
    QPainter p(&minimap_);
    const double s = r.width() / pic->layout.width;
    p.scale(s, r.height() / pic->layout.height);
    const QColor mark = palette().color(QPalette::Text);
    p.setPen(Qt::NoPen);
    for (const DiagramCluster& c : pic->layout.clusters) {
        if (c.group > 0) {
            QColor fill = palette().color(QPalette::Highlight);
            fill.setAlpha(40);
            p.setBrush(fill);
            p.drawRect(qrect(c.rect));
        }
    }
    QColor item = mark;
    item.setAlpha(150);
    p.setBrush(item);
    for (const LayoutRect& rect : pic->layout.items) {
        p.drawRect(qrect(rect));
    }
}

void DiagramCanvas::paintMinimap(QPainter& p) {
    const DiagramPicture* pic = diagram_->picture();
    const QRectF r = minimapRect();
    if (!pic || r.isEmpty()) {
        return;
    }
    const LayoutRect v = visibleScene();
    if (v.x <= 0 && v.y <= 0 && v.x + v.width >= pic->layout.width &&
        v.y + v.height >= pic->layout.height) {
        return; // everything is in view: no minimap needed
    }
    if (minimap_.isNull() || minimap_.size() != (r.size().toSize() * devicePixelRatioF())) {
        renderMinimap();
    }
    QColor back = palette().color(QPalette::Window);
    back.setAlpha(225);
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.setBrush(back);
    p.drawRect(r);
    p.drawImage(r.topLeft(), minimap_);
    const double sx = r.width() / pic->layout.width, sy = r.height() / pic->layout.height;
    const QRectF view = QRectF(r.x() + v.x * sx, r.y() + v.y * sy, v.width * sx, v.height * sy)
                            .intersected(r.adjusted(-1, -1, 1, 1));
    p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(view);
}

void DiagramCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const DiagramPicture* pic = diagram_->picture();
    if (!pic) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter,
                   diagram_->hasGraph() ? tr("Laying out the diagram\u2026")
                                        : diagram_->statusText());
        return;
    }
    p.save();
    p.scale(scale_, scale_);
    p.translate(-origin_);
    diagram_->paint(p, visibleScene(), scale_);
    p.restore();
    if (diagram_->layoutPending()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, 6, -8, -6), Qt::AlignTop | Qt::AlignRight,
                   tr("Laying out\u2026"));
    }
    if (diagram_->hasProfile()) { // the legend
        const QRectF legend(8, 8, 170, 34);
        QColor back = palette().color(QPalette::Window);
        back.setAlpha(230);
        p.setPen(QPen(palette().color(QPalette::Mid), 1));
        p.setBrush(back);
        p.drawRect(legend);
        QLinearGradient gradient(legend.left() + 8, 0, legend.right() - 8, 0);
        gradient.setColorAt(0, diagram_->heatColour(0));
        gradient.setColorAt(1, diagram_->heatColour(1));
        p.setBrush(gradient);
        p.setPen(Qt::NoPen);
        p.drawRect(QRectF(legend.left() + 8, legend.top() + 6, legend.width() - 16, 8));
        QFont f = font();
        f.setPixelSize(9);
        p.setFont(f);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(legend.left() + 8, legend.top() + 15, legend.width() - 16, 16),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   diagram_->overlayName().isEmpty()
                       ? tr("time of the profiled run: 0 \u2192 most")
                       : tr("%1: 0 \u2192 most").arg(diagram_->overlayName()));
    }
    paintMinimap(p);
}

void DiagramCanvas::wheelEvent(QWheelEvent* event) {
    const QPoint delta = event->angleDelta();
    if (event->modifiers() & Qt::ControlModifier) {
        setScale(scale_ * std::pow(1.0015, delta.y()), event->position());
    } else if (event->modifiers() & Qt::ShiftModifier) {
        panBy(-delta.y(), 0);
    } else {
        panBy(-delta.x(), -delta.y());
    }
    event->accept();
}

void DiagramCanvas::mousePressEvent(QMouseEvent* event) {
    setFocus();
    if (event->button() != Qt::LeftButton) {
        return;
    }
    if (minimapRect().contains(event->position()) && diagram_->picture()) {
        minimapDrag_ = true;
        mouseMoveEvent(event);
        return;
    }
    pressAt_ = event->position().toPoint();
    pressOrigin_ = origin_;
    dragging_ = false;
}

void DiagramCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton)) {
        return;
    }
    if (minimapDrag_) {
        const DiagramPicture* pic = diagram_->picture();
        const QRectF r = minimapRect();
        if (!pic || r.isEmpty()) { // the picture went (another graph) while dragging
            minimapDrag_ = false;
            return;
        }
        const double sx = pic->layout.width / r.width(), sy = pic->layout.height / r.height();
        const QPointF at = (event->position() - r.topLeft());
        origin_ = QPointF(at.x() * sx, at.y() * sy) - QPointF(width(), height()) / scale_ / 2;
        update();
        return;
    }
    const QPoint moved = event->position().toPoint() - pressAt_;
    if (!dragging_ && moved.manhattanLength() < QApplication::startDragDistance()) {
        return;
    }
    dragging_ = true;
    setCursor(Qt::ClosedHandCursor);
    origin_ = pressOrigin_ - QPointF(moved) / scale_;
    update();
}

void DiagramCanvas::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        return;
    }
    unsetCursor();
    if (minimapDrag_) {
        minimapDrag_ = false;
        return;
    }
    if (!dragging_) {
        const int item = itemAt(event->position());
        diagram_->clickedItem(item);
        Q_EMIT diagram_->nodeSelected(diagram_->selectedNode());
    }
    dragging_ = false;
}

void DiagramCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
    const int item = itemAt(event->position());
    if (item >= 0) {
        diagram_->itemActivated(item);
        return;
    }
    diagram_->clusterActivated(clusterAt(event->position()));
}

void DiagramCanvas::keyPressEvent(QKeyEvent* event) {
    const double step = 60;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        setScale(scale_ * 1.25, QPointF(width(), height()) / 2);
        break;
    case Qt::Key_Minus:
        setScale(scale_ / 1.25, QPointF(width(), height()) / 2);
        break;
    case Qt::Key_0:
        fit();
        break;
    case Qt::Key_F:
        if (event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) {
            QWidget::keyPressEvent(event);
        } else {
            fit();
        }
        break;
    case Qt::Key_Left:
        panBy(-step, 0);
        break;
    case Qt::Key_Right:
        panBy(step, 0);
        break;
    case Qt::Key_Up:
        panBy(0, -step);
        break;
    case Qt::Key_Down:
        panBy(0, step);
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        diagram_->itemActivated(diagram_->selectedItem_);
        break;
    default:
        // A letter, digit or symbol typed over the picture starts a search with it.
        if (!event->text().isEmpty() && event->text().at(0).isPrint() &&
            !(event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))) {
            diagram_->focusSearch(event->text());
            return;
        }
        QWidget::keyPressEvent(event);
    }
}

void DiagramCanvas::contextMenuEvent(QContextMenuEvent* event) {
    diagram_->contextMenuAt(event->globalPos(), itemAt(event->pos()));
}

void DiagramCanvas::resizeEvent(QResizeEvent*) {
    minimap_ = QImage();
}

void DiagramCanvas::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        minimap_ = QImage(); // drawn in the old theme's colours
    }
    QWidget::changeEvent(event);
}

} // namespace scriptscope
