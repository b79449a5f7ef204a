// Scrolling a panel must not change what it holds: a wheel turned over a combo box, spin box or
// slider inside a scroll area goes to the scroll area unless that control has the keyboard focus
// (clicked or tabbed to). Without this, scrolling the Run panel past a detector's `targets` row
// silently turned its source from Default into a file, and the next run failed; and scrolling past
// the Frames combo chose "Image folder…" and opened a folder dialog. Such controls take the focus
// from a click or Tab, never from the wheel (their Qt::WheelFocus becomes Qt::StrongFocus).
#pragma once

#include <QObject>

class QWidget;

namespace scriptscope {

class WheelGuard : public QObject {
    Q_OBJECT

public:
    // Installs one guard on the application (once, however often it is called).
    static void install();

    // The control a wheel event over `target` would change, when it must not: a combo box, spin
    // box or slider (not a scroll bar) without focus, inside a scroll area; else nullptr.
    static QWidget* guardedControl(QWidget* target);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    using QObject::QObject;
};

} // namespace scriptscope
