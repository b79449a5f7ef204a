// The Numerics workspace: where the numbers go wrong.
//   Activations  every value one run computes (the Run workspace's method, inputs and device), a
//                table to filter and sort by any statistic with non-finite rows marked, the
//                selected value's histogram, the first NaN or Inf (shown in the graph, the IR and
//                the code), comparisons with another device, values saved from Python or another
//                archive, and the graph painted by a chosen statistic;
//   Passes       optimisation passes on a copy: node counts per kind, the graph before and after
//                side by side, timing and max |diff| of the outputs, the copy saved as an archive;
//   Compare      the shown model against another one, module output by module output, to the
//                first divergence (comparison_view.h);
//   Memory       the bytes the recorded run holds, step by step (run_memory_view.h);
//   Diff         the shown archive against another one.
// Everything belongs to the model shown: another model clears it.
#pragma once

#include <model_info.h>
#include <numerics_types.h>

#include <QAbstractTableModel>
#include <QWidget>

#include <array>
#include <optional>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTableWidget;
class QTabWidget;
class QTreeWidget;

namespace scriptscope {

namespace numerics {
class CriterionBox;
}
class ComparisonView;
class RunMemoryView;
class ModelWorkspace;
class RunPanel;
class WorkerClient;
struct Error;

// One row per recorded value, in execution order. Sorting by any column sorts by its number
// (SortRole).
class ActivationTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        IndexColumn,
        NodeColumn,
        ModuleColumn,
        ShapeColumn,
        DiffColumn, // beside the shape: what a comparison is about (hidden without one)
        MinColumn,
        MaxColumn,
        MeanColumn,
        StdColumn,
        NanColumn,
        InfColumn,
        DtypeColumn,
        ColumnCount
    };
    enum Role { SortRole = Qt::UserRole, RecordRole, NonFiniteRole };

    using QAbstractTableModel::QAbstractTableModel;
    void setReport(const ActivationReport& report);
    const ActivationReport& report() const { return report_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    ActivationReport report_;
};

class NumericsPanel : public QWidget {
    Q_OBJECT

public:
    NumericsPanel(WorkerClient* worker, RunPanel* run, ModelWorkspace* workspace,
                  QWidget* parent = nullptr);
    ~NumericsPanel() override;

    // The model the window shows; another one clears every result.
    void setModel(const ModelInfo& model, bool otherModel);

    void recordActivations();
    void applyPasses();
    void compareWith(const QString& path);
    // Selects the first non-finite value (and shows it in the Model workspace's graph).
    void showFirstNonFinite();
    // Records the Run workspace's run and then selects its first non-finite value (the Run
    // workspace's "Find the First NaN").
    void findFirstNonFinite();
    void showRecordInGraph(int record);

    // For tests and screenshots.
    QTabWidget* tabs() const { return tabs_; }
    QTableView* activationTable() const { return table_; }
    ActivationTableModel* activationModel() const { return model_; }
    QSortFilterProxyModel* activationProxy() const { return proxy_; }
    QLineEdit* activationFilter() const { return filter_; }
    QCheckBox* nonFiniteOnly() const { return nonFiniteOnly_; }
    QComboBox* compareBox() const { return compare_; }
    QComboBox* paintBox() const { return paint_; }
    QCustomPlot* histogram() const { return histogram_; }
    QLabel* activationStatus() const { return status_; }
    QListWidget* passList() const { return passes_; }
    QTableWidget* kindTable() const { return kinds_; }
    QPlainTextEdit* graphBefore() const { return before_; }
    QPlainTextEdit* graphAfter() const { return after_; }
    QLabel* passSummary() const { return passSummary_; }
    QPushButton* saveCopyButton() const { return saveCopy_; }
    QPushButton* recordButton() const { return record_; }
    QPushButton* applyButton() const { return apply_; }
    ComparisonView* comparisonView() const { return comparison_; }
    RunMemoryView* memoryView() const { return memory_; }
    QTreeWidget* diffTree() const { return diffTree_; }
    QPlainTextEdit* diffText() const { return diffText_; }
    QLabel* diffSummary() const { return diffSummary_; }
    const OptimizeResult& optimizeResult() const { return optimizeResult_; }
    const ArchiveDiff& archiveDiff() const { return diff_; }
    // Where the worker wrote the optimised copy (in its scratch folder), until saved elsewhere.
    QString optimisedCopy() const { return optimisedCopy_; }
    bool saveOptimisedCopy(const QString& path, QString* why);

    // Set by the Compare box's entries that ask for a path or device (tests set them directly);
    // "inputs" compares with `kept`, a request of the Run workspace's kept earlier.
    void setComparison(const QString& kind, const QString& target);
    void keepInputs(const RunRequest& kept) { keptRun_ = kept; }

Q_SIGNALS:
    void activationsShown();
    void passesShown();
    void diffShown();
    void failedWith(const QString& message);
    void showModelWorkspace();

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyPlotPalette();
    QWidget* buildActivations();
    QWidget* buildPasses();
    QWidget* buildDiff();
    void showReport(const ActivationReport& report);
    void showSelected();
    void updatePaint();
    void showPasses(const OptimizeResult& result);
    void showDiff(const ArchiveDiff& diff);
    void showDiffItem();
    void fail(quint64 id, const Error& error);
    void clearAll();
    // Both models' diagrams for the Compare tab, each asked for once per model and method.
    void requestComparedDiagrams(const ActivationReport& report);

    WorkerClient* worker_;
    RunPanel* run_;
    ModelWorkspace* workspace_;
    ModelInfo modelInfo_;
    quint64 activationRequest_ = 0;
    quint64 optimizeRequest_ = 0;
    quint64 diffRequest_ = 0;
    std::array<quint64, 2> diagramRequests_{}; // per ComparisonView::Side
    std::array<QString, 2> diagramKeys_;       // what each asked for
    QString recordedReference_;                // the model the recording under way compares with
    QString compareKind_;                      // "", "device", "file", "model"
    QString compareTarget_;             // the device, file or archive; the kept inputs, described
    std::optional<RunRequest> keptRun_; // "inputs": the Run workspace's request when kept

    QTabWidget* tabs_ = nullptr;
    // Activations
    QPushButton* record_ = nullptr;
    QComboBox* compare_ = nullptr;
    numerics::CriterionBox* criterion_ = nullptr;
    QLineEdit* filter_ = nullptr;
    QCheckBox* nonFiniteOnly_ = nullptr;
    QPushButton* firstNonFinite_ = nullptr;
    bool selectFirstNonFinite_ = false; // when the recording under way arrives
    QPushButton* firstDifference_ = nullptr;
    QPushButton* inGraph_ = nullptr;
    QComboBox* paint_ = nullptr;
    QLabel* status_ = nullptr;
    QTableView* table_ = nullptr;
    ActivationTableModel* model_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    QCustomPlot* histogram_ = nullptr;
    QLabel* details_ = nullptr;
    ComparisonView* comparison_ = nullptr;
    RunMemoryView* memory_ = nullptr;
    // Passes
    QListWidget* passes_ = nullptr;
    QPushButton* apply_ = nullptr;
    QPushButton* saveCopy_ = nullptr;
    QLabel* passSummary_ = nullptr;
    QTableWidget* kinds_ = nullptr;
    QPlainTextEdit* before_ = nullptr;
    QPlainTextEdit* after_ = nullptr;
    OptimizeResult optimizeResult_;
    QString optimisedCopy_;
    // Diff
    QPushButton* diffOpen_ = nullptr;
    QLabel* diffSummary_ = nullptr;
    QTreeWidget* diffTree_ = nullptr;
    QPlainTextEdit* diffText_ = nullptr;
    ArchiveDiff diff_;
};

} // namespace scriptscope
