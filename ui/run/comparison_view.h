// The Numerics workspace's Compare tab: the shown model and another one (any format: its
// TorchScript twin, another export, another version) run on the Run workspace's inputs and
// compared module output by module output. A table of every matched value (max |diff|, relative
// diff, cosine, SNR), how much matched, and the first divergence. Below it both models' diagrams
// side by side, each painted by the differences of its values; selecting a row, or a node in
// either diagram, selects the value in the table and in both diagrams.
#pragma once

#include <numerics_types.h>

#include <QWidget>

#include <array>
#include <memory>

class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSplitter;
class QTableWidget;

namespace scriptscope {

class ElidedLabel;
class GraphDiagram;
struct GraphModel;

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

    // The two diagrams: the shown model's and the one it is compared with.
    enum Side { ThisModel, OtherModel };

    explicit ComparisonView(QWidget* parent = nullptr);

    // A recording's report: its comparison with another model is shown, anything else clears.
    void setReport(const ActivationReport& report);
    void clear();
    // Why nothing can be compared here (empty: it can).
    void setUnavailable(const QString& why);
    double tolerance() const;

    // Selects the first divergence in the table and in both diagrams.
    void goToFirstDivergence();

    // A side's graph (the graph its records' nodes are of: a method's, inlined) under `key` (what
    // it was made for, so that it is asked for once), with the caption over it; or a message
    // where it cannot be drawn. clear() empties both.
    void setDiagram(Side side, const QString& key, std::shared_ptr<const GraphModel> graph,
                    const QString& caption);
    void setDiagramMessage(Side side, const QString& key, const QString& message);
    QString diagramKey(Side side) const { return keys_[side]; }

    // For tests and screenshots.
    QTableWidget* table() const { return table_; }
    QLabel* summary() const { return summary_; }
    QPushButton* chooseButton() const { return choose_; }
    QPushButton* firstDivergenceButton() const { return first_; }
    QDoubleSpinBox* toleranceSpinBox() const { return tolerance_; }
    GraphDiagram* diagram(Side side) const { return diagrams_[side]; }
    QSplitter* splitter() const { return splitter_; }
    // The record whose row is selected; -1: none.
    int selectedRecord() const;

Q_SIGNALS:
    // The person chose the model to compare with.
    void compareRequested(const QString& path);
    // The report's record to show in the Model workspace's diagram (a double-click on its row).
    void showRecord(int record);

protected:
    void changeEvent(QEvent* event) override;

private:
    void showOutputsOnly(const ActivationReport& report);
    void paintDiagrams();
    // Selects a record's row and its nodes in both diagrams (none for -1), without echoes.
    void selectRecord(int record, bool inTable);
    void nodeClicked(Side side, int node);

    ActivationReport report_; // what the table shows, drawn again in another theme
    QPushButton* choose_ = nullptr;
    QDoubleSpinBox* tolerance_ = nullptr;
    QPushButton* first_ = nullptr;
    QLabel* summary_ = nullptr;
    QTableWidget* table_ = nullptr;
    int firstRecord_ = -1;
    QSplitter* splitter_ = nullptr;
    std::array<GraphDiagram*, 2> diagrams_{};
    std::array<ElidedLabel*, 2> captions_{};
    std::array<QString, 2> keys_;
    bool selecting_ = false; // a selection under way: the diagrams' signals are its echoes
};

} // namespace scriptscope
