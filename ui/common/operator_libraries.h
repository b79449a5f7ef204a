// The operator libraries a person loaded (File > Load Operator Library, a missing operator's
// banner), remembered in the settings per LibTorch build: both builds share one settings file, and
// a library built for one LibTorch cannot be loaded by the other (its initialisers crash the
// worker). Each build keeps its own list; a list from before libraries were kept per build is
// taken over by each build once, and the worker checks every library before it loads it.
#pragma once

#include <QString>
#include <QStringList>

namespace scriptscope::operator_libraries {

// "2.14.1 (CUDA 13.0)", "1.13.0": the LibTorch this GUI's worker links, as the lists are keyed.
QString buildName();
// This build's list, in the order loaded.
QStringList remembered();
void remember(const QString& path);
void forget(const QString& path);
// The settings key of this build's list (for tests that write another build's).
QString settingsKey();
// The settings key of another build's list.
QString settingsKeyFor(const QString& buildName);

} // namespace scriptscope::operator_libraries
