#include "wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QScrollBar>
#include <QWheelEvent>

namespace scriptscope {

void WheelGuard::install() {
    static WheelGuard* guard = nullptr;
    if (!guard && qApp) {
        guard = new WheelGuard(qApp);
        qApp->installEventFilter(guard);
    }
}

QWidget* WheelGuard::guardedControl(QWidget* target) {
    // The event reaches the control itself or a part of it (a spin box's line edit).
    QWidget* control = nullptr;
    for (QWidget* w = target; w && !control; w = w->parentWidget()) {
        if (qobject_cast<QScrollBar*>(w)) {
            return nullptr;
        }
        if (qobject_cast<QComboBox*>(w) || qobject_cast<QAbstractSpinBox*>(w) ||
            qobject_cast<QAbstractSlider*>(w)) {
            control = w;
        }
        if (w->isWindow()) {
            break;
        }
    }
    if (!control || control->hasFocus()) {
        return nullptr;
    }
    for (QWidget* w = control->parentWidget(); w; w = w->parentWidget()) {
        if (qobject_cast<QAbstractScrollArea*>(w)) {
            return control;
        }
        if (w->isWindow()) {
            break;
        }
    }
    return nullptr;
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
    // Combo boxes and spin boxes take the focus from the wheel itself (Qt::WheelFocus), before
    // any event filter sees the wheel: in an active window the guard below would then always
    // find them focused. They take it from a click or Tab instead, as the guard expects.
    if (event->type() == QEvent::Polish && watched->isWidgetType()) {
        auto* widget = static_cast<QWidget*>(watched);
        if (widget->focusPolicy() == Qt::WheelFocus &&
            (qobject_cast<QComboBox*>(widget) || qobject_cast<QAbstractSpinBox*>(widget) ||
             qobject_cast<QAbstractSlider*>(widget))) {
            widget->setFocusPolicy(Qt::StrongFocus);
        }
    }
    if (event->type() == QEvent::Wheel && watched->isWidgetType() &&
        guardedControl(static_cast<QWidget*>(watched))) {
        // Not accepted: QApplication hands the wheel on to the parents, so the scroll area
        // scrolls, and the control never sees it.
        event->ignore();
        return true;
    }
    return QObject::eventFilter(watched, event);
}

} // namespace scriptscope
