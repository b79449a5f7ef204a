// The File dialogs' filter for models: every format's patterns, from the engine's one list
// (file_formats.h), so that no dialog offers fewer formats than the others.
#pragma once

#include <file_formats.h>

#include <QObject>
#include <QString>

namespace scriptscope {

inline QString modelFileDialogFilter() {
    return QString::fromStdString(modelFileFilter());
}

} // namespace scriptscope
