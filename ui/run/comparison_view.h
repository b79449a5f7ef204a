// The Numerics workspace's Compare tab: the shown model and another one (any format: its
// TorchScript twin, another export, another version) run on the Run workspace's inputs and
// compared module output by module output. A table of every matched value (max |diff|, relative
// diff, cosine, SNR), how much matched, and the first divergence, which is selected in the table
// and in the Model workspace's diagram on request.
#pragma once

#include <numerics_types.h>

#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace scriptscope {

class ComparisonView : public QWidget {
    Q_OBJECT

public:
    enum Column {
        IndexColumn,
        ModuleColumn,
        NodeColumn,
        ShapeColumn,
        AbsColumn,
        RelColumn,
        CosineColumn,
        SnrColumn,
        ColumnCount
    };

    explicit ComparisonView(QWidget* parent = nullptr);

    // A recording's report: its comparison with another model is shown, anything else clears.
    void setReport(const ActivationReport& report);
    void clear();
    // Why nothing can be compared here (empty: it can).
    void setUnavailable(const QString& why);
    double tolerance() const;

    // Selects the first divergence in the table and asks for it in the diagram.
    void goToFirstDivergence();

    // For tests and screenshots.
    QTableWidget* table() const { return table_; }
    QLabel* summary() const { return summary_; }
    QPushButton* chooseButton() const { return choose_; }
    QPushButton* firstDivergenceButton() const { return first_; }
    QDoubleSpinBox* toleranceSpinBox() const { return tolerance_; }

Q_SIGNALS:
    // The person chose the model to compare with.
    void compareRequested(const QString& path);
    // The report's record to show in the Model workspace's diagram.
    void showRecord(int record);

protected:
    void changeEvent(QEvent* event) override;

private:
    ActivationReport report_; // what the table shows, drawn again in another theme
    QPushButton* choose_ = nullptr;
    QDoubleSpinBox* tolerance_ = nullptr;
    QPushButton* first_ = nullptr;
    QLabel* summary_ = nullptr;
    QTableWidget* table_ = nullptr;
    int firstRow_ = -1;
    int firstRecord_ = -1;
};

} // namespace scriptscope
