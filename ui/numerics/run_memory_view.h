// The Numerics workspace's Memory tab: the bytes one recorded run holds, step by step (each
// storage a value made, from the node that made it to its last reader), drawn as a plot with the
// peak marked, and the values that hold the peak.
#pragma once

#include <numerics_types.h>

#include <QWidget>

class QCustomPlot;
class QLabel;
class QPushButton;

namespace scriptscope {

class RunMemoryView : public QWidget {
    Q_OBJECT

public:
    explicit RunMemoryView(QWidget* parent = nullptr);

    void setReport(const ActivationReport& report);
    void clear(const QString& why = {});

    // For tests and screenshots.
    QCustomPlot* plot() const { return plot_; }
    QLabel* summary() const { return summary_; }

Q_SIGNALS:
    // The report's record to show in the Model workspace's diagram.
    void showRecord(int record);

protected:
    void changeEvent(QEvent* event) override;

private:
    ActivationReport report_; // what the plot shows, drawn again in another theme
    QCustomPlot* plot_ = nullptr;
    QLabel* summary_ = nullptr;
    QPushButton* showPeak_ = nullptr;
    int largestAtPeak_ = -1;
};

} // namespace scriptscope
