// Item models for the run workspace: the tree of what a method returned, the numbers of one
// tensor, the runs kept for comparison, and the profile's operators. Plain values in, no LibTorch.
#pragma once

#include <run_types.h>

#include <QAbstractItemModel>
#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace scriptscope {

// Tuples, lists and dicts as a tree; tensors with their statistics.
class OutputTreeModel : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column {
        NameColumn,
        ValueColumn, // "Tensor[1, 3, 224, 224] float32", or the scalar's text
        MinColumn,
        MaxColumn,
        MeanColumn,
        StdColumn,
        NanColumn,
        InfColumn,
        ColumnCount
    };
    enum Role { PathRole = Qt::UserRole + 1 }; // "0.1": indices from the root

    explicit OutputTreeModel(QObject* parent = nullptr);
    void setOutput(const OutputValue& output);
    const OutputValue& output() const { return root_; }
    // The value at an index (the root for an invalid one).
    const OutputValue* valueAt(const QModelIndex& index) const;
    // The first tensor in the tree, depth first: what a person wants to see first.
    QModelIndex firstTensor() const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Node {
        const OutputValue* value = nullptr;
        int parent = -1; // index into nodes_
        int row = 0;
        std::vector<int> children;
        QString path;
    };
    void build(const OutputValue& value, int parent, int row, const QString& path);
    const Node* nodeAt(const QModelIndex& index) const;

    OutputValue root_;
    std::vector<Node> nodes_; // nodes_[0] is the root, which has no index of its own
};

// One tensor's values as a table: the last dimension across, everything before it down.
class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    explicit TensorTableModel(QObject* parent = nullptr);
    void setTensor(const OutputValue* tensor);
    bool hasValues() const { return !values_.empty(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<float> values_;
    std::vector<int64_t> shape_;
    int rows_ = 0;
    int columns_ = 0;
};

// The k largest values of a vector, with labels where a labels file gave them.
class TopKModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { RankColumn, IndexColumn, LabelColumn, ValueColumn, ColumnCount };
    explicit TopKModel(QObject* parent = nullptr);
    void setValues(const std::vector<float>& values, int k, const QStringList& labels);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Entry {
        int index;
        float value;
        QString label;
    };
    std::vector<Entry> entries_;
};

// Every run of this session, kept for comparison in the timing plot.
struct RunRecord {
    int number = 0;
    QString label; // "cpu · 1 warm-up · 30 iterations"
    RunResult result;
};

class RunHistoryModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        RunColumn,
        ModelColumn,
        MethodColumn,
        DeviceColumn,
        IterationsColumn,
        P50Column,
        P90Column,
        P99Column,
        FpsColumn,
        ColumnCount
    };
    explicit RunHistoryModel(QObject* parent = nullptr);
    const RunRecord& add(const RunResult& result);
    // Replaces the last run's result (a playing source's one growing record, a sample per frame).
    const RunRecord& replaceLast(const RunResult& result, const QString& label);
    void clear();
    const std::vector<RunRecord>& runs() const { return runs_; }
    QString toCsv() const; // every sample of every run

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<RunRecord> runs_;
    int next_ = 1;
};

// The profile's operators, longest total first.
class OperatorProfileModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { NameColumn, CallsColumn, TotalColumn, SelfColumn, ShareColumn, ColumnCount };
    explicit OperatorProfileModel(QObject* parent = nullptr);
    void setProfile(const RunProfile& profile);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    RunProfile profile_;
};

} // namespace scriptscope
