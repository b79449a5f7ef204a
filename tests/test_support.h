// Shared helpers for the tests: fixture paths and file reading.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>

#include <string>

namespace scriptscope::test {

inline std::string fixture(const std::string& name) {
    return std::string(SCRIPTSCOPE_FIXTURES_DIR) + "/" + name;
}

inline std::string readText(const std::string& path) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly)) {
        // A missing fixture fails the test; it never skips it.
        qFatal("missing fixture %s", path.c_str());
    }
    return file.readAll().toStdString();
}

} // namespace scriptscope::test
