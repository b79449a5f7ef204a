#include "timing_plot.h"

#include <stats.h>

#include <QFileInfo>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>

#include "plot_style.h"

#include <algorithm>

namespace scriptscope {
namespace {

QColor seriesColor(int i) {
    static const QColor colors[] = {QColor(0x1e, 0x88, 0xe5), QColor(0xe5, 0x39, 0x35),
                                    QColor(0x43, 0xa0, 0x47), QColor(0xfb, 0x8c, 0x00),
                                    QColor(0x8e, 0x24, 0xaa), QColor(0x00, 0x89, 0x7b)};
    return colors[i % 6];
}

// The percentile lines and their key in the theme's colours.
void styleItems(QCustomPlot* plot, const QPalette& p) {
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) {
            text->setColor(p.color(QPalette::Text));
            text->setBrush(p.color(QPalette::Base));
        } else if (auto* line = qobject_cast<QCPItemStraightLine*>(plot->item(i))) {
            QPen pen = line->pen();
            pen.setColor(p.color(QPalette::Text));
            line->setPen(pen);
        }
    }
}

void styleAxes(QCustomPlot* plot, const QString& x, const QString& y) {
    plot->xAxis->setLabel(x);
    plot->yAxis->setLabel(y);
    // Few ticks: numbers that never run together, at QT_SCALE_FACTOR=2 either.
    plot->xAxis->ticker()->setTickCount(4);
    plot->yAxis->ticker()->setTickCount(4);
    plot->setMinimumHeight(90);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

} // namespace

TimingPlot::TimingPlot(QWidget* parent)
    : QWidget(parent)
    , iterations_(new QCustomPlot(this))
    , histogram_(new QCustomPlot(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(iterations_, 3);
    layout->addWidget(histogram_, 2);
    styleAxes(iterations_, tr("iteration"), tr("latency (ms)"));
    styleAxes(histogram_, tr("latency (ms)"), tr("iterations"));
    iterationsTitle_ = new QCPTextElement(iterations_, tr("Latency per iteration"));
    histogramTitle_ = new QCPTextElement(histogram_, tr("Latest run"));
    iterations_->plotLayout()->insertRow(0);
    iterations_->plotLayout()->addElement(0, 0, iterationsTitle_);
    histogram_->plotLayout()->insertRow(0);
    histogram_->plotLayout()->addElement(0, 0, histogramTitle_);
    // The legend below the plot, in columns, so that many runs never cover the data.
    iterations_->legend->setVisible(true);
    iterations_->legend->setFont(QFont(font().family(), 8));
    auto* legendRow = new QCPLayoutGrid;
    legendRow_ = legendRow;
    iterations_->plotLayout()->addElement(2, 0, legendRow);
    iterations_->plotLayout()->setRowStretchFactor(2, 0.001);
    legendRow->setMargins(QMargins(5, 0, 5, 5));
    legendRow->addElement(0, 0, iterations_->legend);
    // An empty element beside the legend: an empty (or short) legend's small maximum size would
    // otherwise cap the whole column, squeezing the plot to a thumbnail before any run.
    legendRow->addElement(0, 1, new QCPLayoutElement(iterations_));
    legendRow->setColumnStretchFactor(0, 0.001);
    iterations_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    iterations_->legend->setWrap(2);
    iterations_->legend->setBorderPen(Qt::NoPen);
    iterationsInlineTitle_ = inlineTitle(iterations_, iterationsTitle_->text());
    histogramInlineTitle_ = inlineTitle(histogram_, histogramTitle_->text());
    applyPalette();
}

QCPItemText* TimingPlot::inlineTitle(QCustomPlot* plot, const QString& text) {
    auto* title = new QCPItemText(plot);
    title->setObjectName(QStringLiteral("inlineTitle"));
    title->position->setType(QCPItemPosition::ptAxisRectRatio);
    title->position->setCoords(0.01, 0.02);
    title->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    title->setText(text);
    QFont font(this->font().family(), 8);
    font.setBold(true);
    title->setFont(font);
    title->setVisible(false);
    return title;
}

void TimingPlot::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    setCompact(height() < kCompactHeight);
    fitLegend();
    fitTicks();
}

void TimingPlot::fitTicks() {
    // Tick labels a narrow plot (a small window, QT_SCALE_FACTOR=2) has room for, never touching:
    // the widest label of each axis, with a gap, per tick.
    for (QCustomPlot* plot : {iterations_, histogram_}) {
        const QFontMetrics metrics(plot->xAxis->tickLabelFont());
        const QCPRange range = plot->xAxis->range();
        const int label =
            std::max(metrics.horizontalAdvance(QString::number(range.upper, 'g', 4)),
                     metrics.horizontalAdvance(QString::number(range.lower, 'g', 4))) +
            metrics.horizontalAdvance(QStringLiteral("00"));
        const int width = std::max(1, plot->axisRect()->width());
        plot->xAxis->ticker()->setTickCount(std::clamp(width / std::max(1, label) - 1, 1, 4));
    }
}

void TimingPlot::setCompact(bool compact) {
    // A short plot (a small window, QT_SCALE_FACTOR=2) keeps its axes readable: the titles, the
    // legend and the percentile key leave the layout until there is room again.
    if (compact == compact_) {
        return;
    }
    compact_ = compact;
    QCPLayoutGrid* layout = iterations_->plotLayout();
    if (compact) {
        layout->take(iterationsTitle_);
        layout->take(legendRow_);
        layout->simplify();
        histogram_->plotLayout()->take(histogramTitle_);
        histogram_->plotLayout()->simplify();
    } else {
        layout->insertRow(0);
        layout->addElement(0, 0, iterationsTitle_);
        layout->addElement(2, 0, legendRow_);
        layout->setRowStretchFactor(2, 0.001);
        histogram_->plotLayout()->insertRow(0);
        histogram_->plotLayout()->addElement(0, 0, histogramTitle_);
    }
    iterationsTitle_->setVisible(!compact);
    histogramTitle_->setVisible(!compact);
    legendRow_->setVisible(!compact);
    for (int i = 0; i < histogram_->itemCount(); ++i) {
        if (auto* key = qobject_cast<QCPItemText*>(histogram_->item(i));
            key && key != histogramInlineTitle_) {
            key->setVisible(!compact);
        }
    }
    // The titles stay, small, inside the axes' top corner: they cost no height there, and the
    // latency axis makes room above the runs for them.
    iterationsInlineTitle_->setVisible(compact);
    histogramInlineTitle_->setVisible(compact);
    if (iterations_->graphCount() > 0) {
        iterations_->yAxis->setRangeUpper(latencyTop());
    }
    iterations_->replot();
    histogram_->replot();
}

double TimingPlot::latencyTop() const {
    return runsTop_ > 0 ? runsTop_ * (compact_ ? 1.4 : 1.15) : 1;
}

void TimingPlot::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
    }
}

void TimingPlot::applyPalette() {
    // The plots follow the window's theme (QCustomPlot paints white on its own).
    const QPalette p = palette();
    const QColor background = p.color(QPalette::Base);
    const QColor text = p.color(QPalette::Text);
    for (QCustomPlot* plot : {iterations_, histogram_}) {
        stylePlot(plot, p);
        plot->legend->setBrush(background);
        plot->legend->setTextColor(text);
        styleItems(plot, p);
        plot->replot();
    }
}

QString TimingPlot::legendName(const RunRecord& run) {
    // The model's file name, elided in the middle past 24 characters: the history table beside
    // has the whole label.
    QString model = QFileInfo(QString::fromStdString(run.result.model)).fileName();
    if (model.size() > 24) {
        model = model.left(11) + QStringLiteral("\u2026") + model.right(12);
    }
    return QStringLiteral("#%1 %2%3 · p50 %4 ms")
        .arg(run.number)
        .arg(model.isEmpty() ? QString() : model + QStringLiteral(" · "),
             QString::fromStdString(run.result.device))
        .arg(run.result.stats.p50, 0, 'f', 2);
}

void TimingPlot::fitLegend() {
    // As many columns as the widest name leaves room for: one name is never cut.
    const QFontMetrics metrics(iterations_->legend->font());
    int widest = 0;
    for (int i = 0; i < iterations_->legend->itemCount(); ++i) {
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(iterations_->legend->item(i))) {
            widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()));
        }
    }
    const int perName = widest + iterations_->legend->iconSize().width() + 24;
    const int columns = std::clamp(perName > 0 ? (iterations_->width() - 10) / perName : 2, 1, 2);
    if (iterations_->legend->wrap() != columns) {
        iterations_->legend->setWrap(columns);
    }
}

void TimingPlot::setRuns(const std::vector<RunRecord>& runs) {
    iterations_->clearGraphs();
    double maxY = 0;
    int maxX = 1;
    // Every run is drawn; the legend names the latest ones and counts the rest, so that it never
    // squeezes the plot (16 runs once left it 20 px). The latency axis is scaled to the named
    // runs: a slow first run (a 53 s one) must not flatten the later ones, and it is still drawn,
    // paler, where it reaches into the plot.
    const size_t named = std::min(runs.size(), kLegendRuns);
    const size_t earlier = runs.size() - named;
    bool clipped = false;
    for (size_t r = 0; r < runs.size(); ++r) {
        const auto& samples = runs[r].result.samplesMs;
        QVector<double> x, y;
        for (size_t i = 0; i < samples.size(); ++i) {
            x.push_back(static_cast<double>(i + 1));
            y.push_back(samples[i]);
            if (r >= earlier) {
                maxY = std::max(maxY, samples[i]);
            }
        }
        maxX = std::max(maxX, static_cast<int>(samples.size()));
        QCPGraph* graph = iterations_->addGraph();
        graph->setData(x, y, true);
        graph->setName(legendName(runs[r]));
        QColor colour = seriesColor(static_cast<int>(r));
        if (r < earlier) {
            colour.setAlpha(110); // earlier runs stay for comparison, quieter
            graph->removeFromLegend();
        }
        graph->setPen(QPen(colour, 1.5));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    }
    for (size_t r = 0; r < earlier; ++r) {
        const auto& samples = runs[r].result.samplesMs;
        clipped = clipped || std::any_of(samples.begin(), samples.end(),
                                         [&](double v) { return v > maxY * 1.15; });
    }
    if (earlier > 0) {
        // A legend line without a series: how many runs it does not name.
        QCPGraph* more = iterations_->addGraph();
        more->setPen(Qt::NoPen);
        const QString above = clipped ? tr(", some above the plot") : QString();
        more->setName(earlier == 1 ? tr("and 1 earlier run (paler%1)").arg(above)
                                   : tr("and %1 earlier runs (paler%2)").arg(earlier).arg(above));
    }
    iterations_->xAxis->setRange(0.5, maxX + 0.5);
    runsTop_ = maxY;
    iterations_->yAxis->setRange(0, latencyTop());
    iterations_->legend->setVisible(!runs.empty());
    fitLegend();

    histogram_->clearPlottables();
    histogram_->clearItems();
    histogramInlineTitle_ = inlineTitle(histogram_, histogramTitle_->text());
    histogramInlineTitle_->setVisible(compact_);
    if (!runs.empty()) {
        const RunResult& last = runs.back().result;
        const Histogram bins = histogram(last.samplesMs, 20);
        QVector<double> keys, values;
        const double width = bins.binWidth > 0 ? bins.binWidth : 1;
        for (size_t i = 0; i < bins.counts.size(); ++i) {
            keys.push_back(bins.lower + (static_cast<double>(i) + 0.5) * width);
            values.push_back(static_cast<double>(bins.counts[i]));
        }
        auto* bars = new QCPBars(histogram_->xAxis, histogram_->yAxis);
        bars->setData(keys, values, true);
        bars->setWidth(width);
        bars->setBrush(seriesColor(static_cast<int>(runs.size()) - 1).lighter(140));
        bars->setPen(QPen(seriesColor(static_cast<int>(runs.size()) - 1)));
        double maxCount = 1;
        for (double v : values) {
            maxCount = std::max(maxCount, v);
        }
        const struct {
            const char* name;
            double value;
            Qt::PenStyle style;
        } markers[] = {{"p50", last.stats.p50, Qt::SolidLine},
                       {"p90", last.stats.p90, Qt::DashLine},
                       {"p99", last.stats.p99, Qt::DotLine}};
        // The lines carry no text (close percentiles once put their labels on top of each
        // other): one key in the plot's corner says which line is which.
        QStringList key;
        const char* const strokes[] = {"\u2014", "- -", "\u00b7\u00b7\u00b7"};
        int stroke = 0;
        for (const auto& marker : markers) {
            auto* line = new QCPItemStraightLine(histogram_);
            line->point1->setCoords(marker.value, 0);
            line->point2->setCoords(marker.value, 1);
            line->setPen(QPen(histogram_->xAxis->basePen().color(), 1.2, marker.style));
            key << QStringLiteral("%1 %2 %3 ms")
                       .arg(QString::fromUtf8(strokes[stroke++]), QLatin1String(marker.name))
                       .arg(marker.value, 0, 'f', 2);
        }
        auto* label = new QCPItemText(histogram_);
        label->setObjectName(QStringLiteral("percentiles"));
        label->position->setType(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(0.98, 0.02);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        label->setTextAlignment(Qt::AlignLeft);
        label->setText(key.join(QLatin1Char('\n')));
        label->setFont(QFont(font().family(), 8));
        label->setPadding(QMargins(3, 1, 3, 1));
        label->setVisible(!compact_);
        styleItems(histogram_, palette());
        const double low = bins.lower;
        const double high = bins.lower + width * static_cast<double>(bins.counts.size());
        const double pad = std::max((high - low) * 0.1, 1e-3);
        histogram_->xAxis->setRange(low - pad, std::max(high, last.stats.p99) + 3 * pad);
        // Room above the bars for the key.
        histogram_->yAxis->setRange(0, maxCount * 1.6);
    }
    fitTicks();
    iterations_->replot();
    histogram_->replot();
}

bool TimingPlot::savePng(const QString& path) {
    return grab().save(path, "PNG");
}

bool TimingPlot::savePdf(const QString& path) {
    // Vector output: each plot paints itself into its half of the page.
    QPdfWriter writer(path);
    writer.setPageSize(QPageSize(QSizeF(width(), height()), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setResolution(72);
    QCPPainter painter;
    if (!painter.begin(&writer)) {
        return false;
    }
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    iterations_->toPainter(&painter, iterations_->width(), iterations_->height());
    painter.translate(histogram_->x(), 0);
    histogram_->toPainter(&painter, histogram_->width(), histogram_->height());
    painter.end();
    return true;
}

} // namespace scriptscope
