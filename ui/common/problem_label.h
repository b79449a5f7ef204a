// Text colours on labels, taken from a palette, never a style sheet: a label given a style sheet
// kept the palette it had then, and after a switch to the dark theme showed its text on a white
// block.
#pragma once

#include <QColor>
#include <QFont>
#include <QLabel>
#include <QPalette>

namespace scriptscope {

// `colour` for the label's text; an invalid colour gives it the parent's, and so the theme's.
inline void setTextColour(QLabel* label, const QColor& colour) {
    if (colour.isValid()) {
        QPalette palette = label->palette();
        palette.setColor(QPalette::WindowText, colour);
        label->setPalette(palette);
    } else {
        label->setPalette(QPalette());
    }
}

// A label that says either how things stand or, in bold red, what went wrong.
inline void showOnLabel(QLabel* label, const QString& text, bool problem) {
    label->setText(text);
    QFont font = label->font();
    font.setBold(problem);
    label->setFont(font);
    setTextColour(label, problem ? QColor(0xc6, 0x28, 0x28) : QColor());
}

} // namespace scriptscope
