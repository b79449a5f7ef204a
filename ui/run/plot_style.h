// QCustomPlot for the Run and Numerics workspaces: its header (which uses Qt's keyword macros,
// turned off in this project by QT_NO_KEYWORDS: LibTorch has members named slots()), and the
// plots' colours from the window's theme (QCustomPlot paints white on its own).
#pragma once

#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef emit
#undef foreach

namespace scriptscope {

// Background, axes, grid and titles of `plot` from `palette`; replots.
void stylePlot(QCustomPlot* plot, const QPalette& palette);

} // namespace scriptscope
