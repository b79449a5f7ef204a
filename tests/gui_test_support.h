// For the GUI tests: screenshots of what they show, saved to build/screenshots/ to be looked at
// (scripts/update-screenshots.sh copies the README's to docs/).
#pragma once

#include <QDir>
#include <QString>
#include <QTest>
#include <QWidget>

namespace scriptscope::test {

inline void saveScreenshot(QWidget* widget, const QString& name) {
    const QString folder = QStringLiteral(SCRIPTSCOPE_SCREENSHOT_DIR);
    QDir().mkpath(folder);
    QVERIFY(widget->grab().save(folder + QLatin1Char('/') + name + QStringLiteral(".png")));
}

} // namespace scriptscope::test
