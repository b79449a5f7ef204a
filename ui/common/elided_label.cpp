#include "elided_label.h"

#include <QEvent>
#include <QFontMetrics>

namespace scriptscope {

ElidedLabel::ElidedLabel(QWidget* parent, Qt::TextElideMode mode)
    : QLabel(parent)
    , mode_(mode) {
    setTextFormat(Qt::PlainText);
    // Its full width when there is room, down to "…" when there is not.
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
    full_ = text;
    elide();
    updateGeometry();
}

QSize ElidedLabel::minimumSizeHint() const {
    // Room for "…" and a little: the layout may squeeze the label that far.
    const QFontMetrics metrics(font());
    return {metrics.horizontalAdvance(QStringLiteral("M\u2026")), metrics.height()};
}

QSize ElidedLabel::sizeHint() const {
    const QFontMetrics metrics(font());
    return {metrics.horizontalAdvance(full_) + 2 * margin() + 4, metrics.height()};
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    elide();
}

void ElidedLabel::changeEvent(QEvent* event) {
    QLabel::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        elide();
    }
}

void ElidedLabel::elide() {
    const QString shown =
        fontMetrics().elidedText(full_, mode_, std::max(0, contentsRect().width()));
    if (shown != text()) {
        setText(shown);
    }
    setToolTip(shown == full_ ? QString() : full_);
}

} // namespace scriptscope
