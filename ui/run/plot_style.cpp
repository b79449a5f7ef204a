#include "plot_style.h"

namespace scriptscope {

void stylePlot(QCustomPlot* plot, const QPalette& palette) {
    const QColor text = palette.color(QPalette::Text);
    QColor grid = palette.color(QPalette::Mid);
    grid.setAlpha(110);
    plot->setBackground(palette.color(QPalette::Base));
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
        axis->grid()->setSubGridPen(Qt::NoPen);
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i))) {
            title->setTextColor(text);
        }
    }
    plot->replot();
}

} // namespace scriptscope
