// A label that says either how things stand or, in bold red, what went wrong. Its colour is a
// palette colour, never a style sheet: a label given a style sheet kept the palette it had then,
// and after a switch to the dark theme showed its error on a white block.
#pragma once

#include <QColor>
#include <QFont>
#include <QLabel>
#include <QPalette>

namespace scriptscope {

inline void showOnLabel(QLabel* label, const QString& text, bool problem) {
    label->setText(text);
    QFont font = label->font();
    font.setBold(problem);
    label->setFont(font);
    if (problem) {
        QPalette palette = label->palette();
        palette.setColor(QPalette::WindowText, QColor(0xc6, 0x28, 0x28));
        label->setPalette(palette);
    } else {
        label->setPalette(QPalette()); // the parent's again, and so the theme's
    }
}

} // namespace scriptscope
