// The timing plots (QCustomPlot): latency per iteration with one series per run, and the latest
// run's histogram with its p50, p90 and p99 marked. Exported as PNG or PDF.
#pragma once

#include "output_models.h"

#include <QWidget>

#include <cstddef>

class QCustomPlot;
class QCPLayoutGrid;
class QCPItemText;
class QCPTextElement;

namespace scriptscope {

class TimingPlot : public QWidget {
    Q_OBJECT

public:
    // The legend names this many latest runs and counts the earlier ones.
    static constexpr size_t kLegendRuns = 4;
    // Shorter than this, the plots show only their axes (no titles, legend or key).
    static constexpr int kCompactHeight = 160;

    explicit TimingPlot(QWidget* parent = nullptr);
    void setRuns(const std::vector<RunRecord>& runs);
    // A run's line in the legend: "#3 resnet50.pt · cpu · p50 12.40 ms".
    static QString legendName(const RunRecord& run);
    QCustomPlot* iterationsPlot() const { return iterations_; }
    QCustomPlot* histogramPlot() const { return histogram_; }
    bool compact() const { return compact_; }
    // Both plots side by side, as on screen.
    bool savePng(const QString& path);
    bool savePdf(const QString& path);

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void applyPalette();
    void setCompact(bool compact);
    void fitLegend();
    QCPItemText* inlineTitle(QCustomPlot* plot, const QString& text);
    void fitTicks();
    // The latency axis's top: headroom above the runs for the key (and, compact, the title
    // inside the axes).
    double latencyTop() const;
    bool compact_ = false;
    double runsTop_ = 0; // the slowest iteration of the runs the legend names
    QCPTextElement* iterationsTitle_ = nullptr;
    QCPTextElement* histogramTitle_ = nullptr;
    // The titles inside the axes while compact.
    QCPItemText* iterationsInlineTitle_ = nullptr;
    QCPItemText* histogramInlineTitle_ = nullptr;
    QCPLayoutGrid* legendRow_ = nullptr;
    QCustomPlot* iterations_ = nullptr;
    QCustomPlot* histogram_ = nullptr;
};

} // namespace scriptscope
