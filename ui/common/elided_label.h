// A one-line label that never cuts its text mid-word: what does not fit ends in "…", and the
// tooltip holds the whole text. For the status bar, where the window's width decides what fits.
#pragma once

#include <QLabel>

namespace scriptscope {

class ElidedLabel : public QLabel {
    Q_OBJECT

public:
    explicit ElidedLabel(QWidget* parent = nullptr, Qt::TextElideMode mode = Qt::ElideRight);

    // The whole text; text() is what is shown.
    void setFullText(const QString& text);
    QString fullText() const { return full_; }

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void elide();

    QString full_;
    Qt::TextElideMode mode_;
};

} // namespace scriptscope
