// What the diagram's files share: small conversions and the scales at which the diagram draws less.
#pragma once

#include <graph_layout.h>

#include <QRectF>
#include <QString>

#include <algorithm>
#include <string>
#include <vector>

namespace scriptscope::diagram_ui {

inline QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// A group by its module path ("layers.3"), or by its label where it has none (the root).
inline QString groupName(const GraphGroup& g) {
    return q(g.module.empty() ? g.label : g.module);
}

// "1 item", "3 items": the count and the word, singular or plural.
inline QString counted(qsizetype n, const QString& one, const QString& many) {
    return n == 1 ? QString(QStringLiteral("1 ") + one)
                  : QString(QString::number(n) + QLatin1Char(' ') + many);
}

inline LayoutRect bounds(const std::vector<LayoutPoint>& points) {
    double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
    for (const LayoutPoint& p : points) {
        x0 = std::min(x0, p.x);
        y0 = std::min(y0, p.y);
        x1 = std::max(x1, p.x);
        y1 = std::max(y1, p.y);
    }
    return points.empty() ? LayoutRect{} : LayoutRect{x0, y0, x1 - x0, y1 - y0};
}

inline QRectF qrect(const LayoutRect& r) {
    return {r.x, r.y, r.width, r.height};
}

// Below this scale text is not drawn (it would be a few pixels high); below the next, items are
// plain rectangles and edges straight lines.
constexpr double kTextScale = 0.4;
constexpr double kDetailScale = 0.15;

} // namespace scriptscope::diagram_ui
