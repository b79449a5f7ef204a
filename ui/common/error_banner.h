// The colours of a banner that says something went wrong (a file that would not open): the Model
// workspace's and the main window's look the same, in the light and the dark theme alike.
#pragma once

#include <QColor>
#include <QPalette>
#include <QWidget>

namespace scriptscope {

// Paints `box` (its background filled) and `text` dark red on pale red.
inline void paintAsErrorBanner(QWidget* box, QWidget* text) {
    box->setAutoFillBackground(true);
    QPalette palette = box->palette();
    palette.setColor(QPalette::Window, QColor(0xf8, 0xd7, 0xda));
    palette.setColor(QPalette::WindowText, QColor(0x58, 0x15, 0x1c));
    box->setPalette(palette);
    text->setPalette(palette);
}

} // namespace scriptscope
