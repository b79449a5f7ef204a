#pragma once
// An operator library built for the other LibTorch of this machine, as a user of both builds has
// one: for a build on PyTorch 2.x, Debian's torchvision (built for Debian's LibTorch 1.13, the
// library of the fourth walkthrough); for Debian's build the stand-in built by the tests (its
// libtorch_cpu is another release's), since the 2.x venv may not be there yet.
// Needs SCRIPTSCOPE_TEST_OTHER_LIBTORCH_LIBRARY (tests/CMakeLists.txt).

#include <QDir>
#include <QString>
#include <QStringList>

namespace scriptscope::test {

inline QString otherLibTorchsLibrary() {
    const bool debianBuild =
        QStringLiteral(SCRIPTSCOPE_TEST_LIBTORCH_VERSION).startsWith(QLatin1String("1."));
    if (!debianBuild) {
        const QString folder = QStringLiteral("/usr/lib/python3/dist-packages/torchvision");
        const QStringList found = QDir(folder).entryList({QStringLiteral("_C*.so")}, QDir::Files);
        if (!found.isEmpty()) {
            return folder + QLatin1Char('/') + found.first();
        }
    }
    return QStringLiteral(SCRIPTSCOPE_TEST_OTHER_LIBTORCH_LIBRARY);
}

} // namespace scriptscope::test
