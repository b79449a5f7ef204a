#include "operator_libraries.h"

#include <QRegularExpression>
#include <QSettings>

namespace scriptscope::operator_libraries {
namespace {

// The list before it was kept per build, shared by every build.
const QString kLegacyKey = QStringLiteral("operatorLibraries");

void store(const QStringList& libraries) {
    QSettings settings;
    settings.setValue(settingsKey(), libraries);
    settings.sync();
}

} // namespace

QString buildName() {
    return QStringLiteral(SCRIPTSCOPE_LIBTORCH_BUILD);
}

QString settingsKeyFor(const QString& build) {
    QString key = build;
    key.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9.]+")), QStringLiteral("-"));
    return QStringLiteral("operatorLibrariesByBuild/") + key;
}

QString settingsKey() {
    return settingsKeyFor(buildName());
}

QStringList remembered() {
    QSettings settings;
    if (!settings.contains(settingsKey()) && settings.contains(kLegacyKey)) {
        // Taken over once; the worker refuses (and names) what was built for the other LibTorch.
        const QStringList legacy = settings.value(kLegacyKey).toStringList();
        store(legacy);
        return legacy;
    }
    return settings.value(settingsKey()).toStringList();
}

void remember(const QString& path) {
    QStringList libraries = remembered();
    if (!libraries.contains(path)) {
        libraries << path;
        store(libraries);
    }
}

void forget(const QString& path) {
    QStringList libraries = remembered();
    if (libraries.removeAll(path) > 0) {
        store(libraries);
    }
}

} // namespace scriptscope::operator_libraries
