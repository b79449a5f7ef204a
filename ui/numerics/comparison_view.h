// The Numerics workspace's Compare tab: the shown model and another one (any format: its
// TorchScript twin, its export, its .pte, another version) run on the Run workspace's inputs and
// compared: the verdict first (the same, they differ, could not compare, and why), the final
// outputs leaf by leaf, then a table of every value matched inside (max |diff|, relative diff,
// cosine, SNR), how much matched and the first divergence. Below it both models' diagrams side by
// side, each painted by the differences of its values; selecting a row, or a node in either
// diagram, selects the value in the table and in both diagrams. It never stays blank: nothing
// matched, nothing compared and a refused model each say so.
#pragma once

#include <numerics_types.h>

#include <QWidget>

#include <array>
#include <memory>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSplitter;
class QTableWidget;
class QToolButton;

namespace scriptscope {

namespace numerics {
class CriterionBox;
}
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

    // A recording's report: its comparison with another model (or a file, a device) is shown;
    // one that compared with nothing clears.
    void setReport(const ActivationReport& report);
    // The comparison asked for could not be made: the other model refused, the run failed.
    void showFailure(const QString& otherModel, const QString& message);
    void clear();
    // Why nothing can be compared here (empty: it can).
    void setUnavailable(const QString& why);
    Criterion criterion() const;

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
    QLabel* verdictLabel() const { return verdict_; }
    QLabel* summary() const { return summary_; }
    QPushButton* chooseButton() const { return choose_; }
    QPushButton* firstDivergenceButton() const { return first_; }
    numerics::CriterionBox* criterionBox() const { return criterion_; }
    // The unmatched module outputs, behind their count.
    QToolButton* unmatchedButton() const { return unmatchedToggle_; }
    QPlainTextEdit* unmatchedList() const { return unmatched_; }
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
    void showVerdict(const ComparisonVerdict& verdict);
    void showUnmatched(const std::vector<std::string>& names);
    void fillTable(const ActivationReport& report);
    void paintDiagrams();
    // Selects a record's row and its nodes in both diagrams (none for -1), without echoes.
    void selectRecord(int record, bool inTable);
    void nodeClicked(Side side, int node);

    ActivationReport report_; // what the table shows, drawn again in another theme
    QPushButton* choose_ = nullptr;
    numerics::CriterionBox* criterion_ = nullptr;
    QPushButton* first_ = nullptr;
    QLabel* verdict_ = nullptr;
    QLabel* summary_ = nullptr;
    QToolButton* unmatchedToggle_ = nullptr;
    QPlainTextEdit* unmatched_ = nullptr;
    QTableWidget* table_ = nullptr;
    int firstRecord_ = -1;
    QSplitter* splitter_ = nullptr;
    std::array<GraphDiagram*, 2> diagrams_{};
    std::array<ElidedLabel*, 2> captions_{};
    std::array<QString, 2> keys_;
    bool selecting_ = false; // a selection under way: the diagrams' signals are its echoes
};

} // namespace scriptscope
