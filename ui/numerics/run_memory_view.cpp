#include "run_memory_view.h"
#include "numerics_common.h"
#include "plot_style.h"

#include <format.h>

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace scriptscope {

using namespace numerics;

namespace {

// The unit the plot's axis counts in, for the largest value it shows.
std::pair<double, QString> unitFor(uint64_t largest) {
    if (largest >= (uint64_t{1} << 30)) {
        return {double(uint64_t{1} << 30), QStringLiteral("GiB")};
    }
    if (largest >= (uint64_t{1} << 20)) {
        return {double(uint64_t{1} << 20), QStringLiteral("MiB")};
    }
    if (largest >= (uint64_t{1} << 10)) {
        return {1024.0, QStringLiteral("KiB")};
    }
    return {1.0, QStringLiteral("bytes")};
}

} // namespace

RunMemoryView::RunMemoryView(QWidget* parent)
    : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    plot_ = new QCustomPlot(this);
    plot_->setObjectName(QStringLiteral("runMemoryPlot"));
    plot_->setMinimumHeight(200);
    plot_->xAxis->setLabel(tr("step of the run (node)"));
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(0, 0, new QCPTextElement(plot_, tr("Live bytes")));
    layout->addWidget(plot_, 1);
    auto* bar = new QHBoxLayout;
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("runMemorySummary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    showPeak_ = new QPushButton(tr("Show the peak's largest value in the graph"), this);
    bar->addWidget(summary_, 1);
    bar->addWidget(showPeak_, 0, Qt::AlignTop);
    layout->addLayout(bar);
    connect(showPeak_, &QPushButton::clicked, this, [this]() {
        if (largestAtPeak_ >= 0) {
            Q_EMIT showRecord(largestAtPeak_);
        }
    });
    clear();
    stylePlot(plot_, palette());
}

void RunMemoryView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        stylePlot(plot_, palette());
        if (report_.memory.known) {
            setReport(ActivationReport(report_)); // the fill and the label are the theme's
        }
    }
}

void RunMemoryView::clear(const QString& why) {
    report_ = {};
    plot_->clearPlottables();
    plot_->clearItems();
    plot_->replot();
    largestAtPeak_ = -1;
    showPeak_->setEnabled(false);
    summary_->setText(why.isEmpty() ? tr("Record every value (Activations) to see the bytes the "
                                         "run holds at each of its steps.")
                                    : why.toHtmlEscaped());
}

void RunMemoryView::setReport(const ActivationReport& report) {
    const MemoryTimeline& memory = report.memory;
    if (!memory.known || memory.liveBytes.empty()) {
        clear(memory.note.empty() ? QString() : tr("No timeline: %1").arg(q(memory.note)));
        return;
    }
    report_ = report;
    plot_->clearPlottables();
    plot_->clearItems();
    const auto [scale, unit] = unitFor(memory.peakBytes);
    QVector<double> x, y;
    for (size_t step = 0; step < memory.liveBytes.size(); ++step) {
        x << double(step);
        y << double(memory.liveBytes[step]) / scale;
    }
    auto* live = plot_->addGraph();
    live->setLineStyle(QCPGraph::lsStepCenter);
    live->setData(x, y, true);
    QColor fill = palette().color(QPalette::Highlight);
    live->setPen(QPen(fill, 1.5));
    fill.setAlpha(60);
    live->setBrush(fill);
    auto* peak = plot_->addGraph();
    peak->setLineStyle(QCPGraph::lsNone);
    peak->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, Qt::red, Qt::red, 8));
    peak->setData({double(memory.peakStep)}, {double(memory.peakBytes) / scale});
    auto* label = new QCPItemText(plot_);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    label->position->setCoords(double(memory.peakStep), double(memory.peakBytes) / scale);
    label->setText(tr(" peak %1").arg(q(formatBytes(memory.peakBytes))));
    label->setColor(palette().color(QPalette::WindowText));
    plot_->yAxis->setLabel(unit);
    plot_->xAxis->setLabel(memory.note.empty() ? tr("step of the run (node)")
                                               : tr("step of the run (value made)"));
    plot_->xAxis->setRange(-0.5, double(memory.liveBytes.size()) - 0.5);
    plot_->yAxis->setRange(0, std::max(1.0, double(memory.peakBytes) / scale * 1.15));
    plot_->replot();

    // The values that hold the peak, largest first.
    std::vector<int> holders = memory.peakRecords;
    std::sort(holders.begin(), holders.end(), [&report](int a, int b) {
        return report.records[size_t(a)].storageBytes > report.records[size_t(b)].storageBytes;
    });
    largestAtPeak_ = holders.empty() ? -1 : holders.front();
    QStringList held;
    for (size_t i = 0; i < holders.size() && i < 8; ++i) {
        const ActivationRecord& r = report.records[size_t(holders[i])];
        held << tr("#%1 %2 in %3 (%4)")
                    .arg(holders[i])
                    .arg(where(r).toHtmlEscaped(),
                         r.module.empty() ? tr("the root module") : q(r.module).toHtmlEscaped(),
                         q(formatBytes(r.storageBytes)));
    }
    if (holders.size() > 8) {
        held << tr("and %1 more").arg(holders.size() - 8);
    }
    QString how = memory.note.empty() ? tr("Each storage a value made counts from the node that "
                                           "made it to the last node that reads it (or a view of "
                                           "it)")
                                      : q(memory.note).toHtmlEscaped();
    how[0] = how[0].toUpper();
    summary_->setText(tr("<b>Peak: %1</b> at step %2 of %3, held by %4 values: %5.<br>%6; "
                         "inputs and weights are the caller's and are not counted.")
                          .arg(q(formatBytes(memory.peakBytes)))
                          .arg(memory.peakStep)
                          .arg(memory.liveBytes.size())
                          .arg(holders.size())
                          .arg(held.join(QStringLiteral("; ")), how));
    showPeak_->setEnabled(largestAtPeak_ >= 0);
}

} // namespace scriptscope
