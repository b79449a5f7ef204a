#include "output_models.h"

#include <QFileInfo>

#include <QLocale>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace scriptscope {
namespace {

QString number(double v) {
    return QString::number(v, 'g', 6);
}

QString ms(double v) {
    return QString::number(v, 'f', v < 10 ? 3 : 2);
}

} // namespace

// ---- OutputTreeModel

OutputTreeModel::OutputTreeModel(QObject* parent)
    : QAbstractItemModel(parent) {
    setOutput({});
}

void OutputTreeModel::setOutput(const OutputValue& output) {
    beginResetModel();
    root_ = output;
    nodes_.clear();
    // A single value shows as one row; a tuple, list or dict shows its elements.
    const bool container = root_.kind == OutputValue::Kind::Tuple ||
                           root_.kind == OutputValue::Kind::List ||
                           root_.kind == OutputValue::Kind::Dict;
    nodes_.push_back(Node{&root_, -1, 0, {}, QString()});
    if (container) {
        for (size_t i = 0; i < root_.children.size(); ++i) {
            build(root_.children[i], 0, static_cast<int>(i), QString::number(i));
        }
    } else if (root_.kind != OutputValue::Kind::None || !root_.text.empty()) {
        build(root_, 0, 0, QString());
    }
    endResetModel();
}

void OutputTreeModel::build(const OutputValue& value, int parent, int row, const QString& path) {
    const int self = static_cast<int>(nodes_.size());
    nodes_.push_back(Node{&value, parent, row, {}, path});
    nodes_[static_cast<size_t>(parent)].children.push_back(self);
    for (size_t i = 0; i < value.children.size(); ++i) {
        build(value.children[i], self, static_cast<int>(i),
              path.isEmpty() ? QString::number(i) : path + QLatin1Char('.') + QString::number(i));
    }
}

const OutputTreeModel::Node* OutputTreeModel::nodeAt(const QModelIndex& index) const {
    if (!index.isValid()) {
        return &nodes_[0];
    }
    const auto id = static_cast<size_t>(index.internalId());
    return id < nodes_.size() ? &nodes_[id] : nullptr;
}

const OutputValue* OutputTreeModel::valueAt(const QModelIndex& index) const {
    const Node* node = nodeAt(index);
    return node ? node->value : nullptr;
}

QModelIndex OutputTreeModel::firstTensor() const {
    for (size_t i = 1; i < nodes_.size(); ++i) {
        if (nodes_[i].value->kind == OutputValue::Kind::Tensor) {
            return createIndex(nodes_[i].row, 0, static_cast<quintptr>(i));
        }
    }
    return nodes_.size() > 1 ? createIndex(nodes_[1].row, 0, quintptr(1)) : QModelIndex();
}

QModelIndex OutputTreeModel::index(int row, int column, const QModelIndex& parent) const {
    const Node* node = nodeAt(parent);
    if (!node || row < 0 || column < 0 || column >= ColumnCount ||
        row >= static_cast<int>(node->children.size()) ||
        (parent.isValid() && parent.column() != 0)) {
        return {};
    }
    return createIndex(row, column,
                       static_cast<quintptr>(node->children[static_cast<size_t>(row)]));
}

QModelIndex OutputTreeModel::parent(const QModelIndex& child) const {
    const Node* node = nodeAt(child);
    if (!child.isValid() || !node || node->parent <= 0) {
        return {};
    }
    const Node& parentNode = nodes_[static_cast<size_t>(node->parent)];
    return createIndex(parentNode.row, 0, static_cast<quintptr>(node->parent));
}

int OutputTreeModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() && parent.column() != 0) {
        return 0;
    }
    const Node* node = nodeAt(parent);
    return node ? static_cast<int>(node->children.size()) : 0;
}

int OutputTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant OutputTreeModel::data(const QModelIndex& index, int role) const {
    const Node* node = nodeAt(index);
    if (!index.isValid() || !node) {
        return {};
    }
    const OutputValue& v = *node->value;
    const bool tensor = v.kind == OutputValue::Kind::Tensor && v.numel > 0;
    if (role == PathRole) {
        return node->path;
    }
    if (role == Qt::TextAlignmentRole && index.column() >= MinColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) {
        return {};
    }
    // Statistics are over the finite values: with none, there are none ("—", not 0).
    const bool anyFinite = tensor && v.numel > v.nanCount + v.infCount;
    switch (static_cast<Column>(index.column())) {
    case NameColumn:
        return v.key.empty() ? QStringLiteral("output") : QString::fromStdString(v.key);
    case ValueColumn:
        return QString::fromStdString(v.text);
    case MinColumn:
        return anyFinite ? number(v.min) : tensor ? QStringLiteral("\u2014") : QVariant();
    case MaxColumn:
        return anyFinite ? number(v.max) : tensor ? QStringLiteral("\u2014") : QVariant();
    case MeanColumn:
        return anyFinite ? number(v.mean) : tensor ? QStringLiteral("\u2014") : QVariant();
    case StdColumn:
        return anyFinite ? number(v.stddev) : tensor ? QStringLiteral("\u2014") : QVariant();
    case NanColumn:
        return tensor ? QVariant(qint64(v.nanCount)) : QVariant();
    case InfColumn:
        return tensor ? QVariant(qint64(v.infCount)) : QVariant();
    case ColumnCount:
        break;
    }
    return {};
}

QVariant OutputTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char* const names[] = {"Output", "Value", "Min", "Max",
                                        "Mean",   "Std",   "NaN", "Inf"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

// ---- TensorTableModel

TensorTableModel::TensorTableModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void TensorTableModel::setTensor(const OutputValue* tensor) {
    beginResetModel();
    values_.clear();
    shape_.clear();
    rows_ = columns_ = 0;
    if (tensor && tensor->kind == OutputValue::Kind::Tensor && !tensor->values.empty()) {
        values_ = tensor->values;
        shape_ = tensor->shape;
        const int64_t last = shape_.empty() ? 1 : std::max<int64_t>(1, shape_.back());
        columns_ = static_cast<int>(std::min<int64_t>(last, 100000));
        rows_ = static_cast<int>(static_cast<int64_t>(values_.size()) / std::max<int64_t>(1, last));
    }
    endResetModel();
}

int TensorTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : rows_;
}

int TensorTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : columns_;
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_ || index.column() >= columns_) {
        return {};
    }
    const size_t at =
        static_cast<size_t>(index.row()) * static_cast<size_t>(shape_.empty() ? 1 : shape_.back()) +
        static_cast<size_t>(index.column());
    if (at >= values_.size()) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        return QString::number(static_cast<double>(values_[at]), 'g', 6);
    }
    if (role == Qt::TextAlignmentRole) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole) {
        return {};
    }
    if (orientation == Qt::Horizontal) {
        return section;
    }
    // The row's index over the leading dimensions: "[0, 2, 5]".
    QStringList parts;
    int64_t rest = section;
    for (int d = static_cast<int>(shape_.size()) - 2; d >= 0; --d) {
        const int64_t size = std::max<int64_t>(1, shape_[static_cast<size_t>(d)]);
        parts.prepend(QString::number(rest % size));
        rest /= size;
    }
    return parts.isEmpty() ? QString::number(section)
                           : QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

// ---- TopKModel

TopKModel::TopKModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void TopKModel::setValues(const std::vector<float>& values, int k, const QStringList& labels) {
    beginResetModel();
    entries_.clear();
    // NaN ranks nowhere: only finite values (and infinities) are ranked.
    std::vector<int> order;
    order.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        if (!std::isnan(values[i])) {
            order.push_back(static_cast<int>(i));
        }
    }
    const size_t count = std::min(order.size(), static_cast<size_t>(std::max(0, k)));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count),
                      order.end(), [&](int a, int b) {
                          return values[static_cast<size_t>(a)] > values[static_cast<size_t>(b)];
                      });
    for (size_t i = 0; i < count; ++i) {
        const int at = order[i];
        entries_.push_back(
            {at, values[static_cast<size_t>(at)], at < labels.size() ? labels.at(at) : QString()});
    }
    endResetModel();
}

int TopKModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int TopKModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TopKModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || role != Qt::DisplayRole) {
        return {};
    }
    const Entry& e = entries_[static_cast<size_t>(index.row())];
    switch (static_cast<Column>(index.column())) {
    case RankColumn:
        return index.row() + 1;
    case IndexColumn:
        return e.index;
    case LabelColumn:
        return e.label;
    case ValueColumn:
        return QString::number(static_cast<double>(e.value), 'g', 6);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TopKModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char* const names[] = {"#", "Index", "Label", "Value"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

// ---- RunHistoryModel

RunHistoryModel::RunHistoryModel(QObject* parent)
    : QAbstractTableModel(parent) {}

const RunRecord& RunHistoryModel::add(const RunResult& result) {
    const int row = static_cast<int>(runs_.size());
    beginInsertRows({}, row, row);
    RunRecord record;
    record.number = next_++;
    record.result = result;
    record.label = tr("#%1 %2 · %3 · %4 warm-up · %5 iterations")
                       .arg(record.number)
                       .arg(QFileInfo(QString::fromStdString(result.model)).fileName(),
                            QString::fromStdString(result.device))
                       .arg(result.warmup)
                       .arg(result.samplesMs.size());
    runs_.push_back(std::move(record));
    endInsertRows();
    return runs_.back();
}

const RunRecord& RunHistoryModel::replaceLast(const RunResult& result, const QString& label) {
    if (runs_.empty()) {
        add(result);
    }
    RunRecord& record = runs_.back();
    record.result = result;
    record.label = tr("#%1 %2").arg(record.number).arg(label);
    const int row = static_cast<int>(runs_.size()) - 1;
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    return record;
}

void RunHistoryModel::clear() {
    beginResetModel();
    runs_.clear();
    endResetModel();
}

QString RunHistoryModel::toCsv() const {
    QString csv = QStringLiteral("run,model,method,device,iteration,milliseconds\n");
    for (const RunRecord& run : runs_) {
        for (size_t i = 0; i < run.result.samplesMs.size(); ++i) {
            csv += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
                       .arg(run.number)
                       .arg(QFileInfo(QString::fromStdString(run.result.model)).fileName(),
                            QString::fromStdString(run.result.method),
                            QString::fromStdString(run.result.device))
                       .arg(i + 1)
                       .arg(run.result.samplesMs[i], 0, 'f', 6);
        }
    }
    return csv;
}

int RunHistoryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunHistoryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunHistoryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    if (role == Qt::TextAlignmentRole && index.column() >= IterationsColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    const RunRecord& run = runs_[static_cast<size_t>(index.row())];
    if (role == Qt::ToolTipRole && index.column() == ModelColumn) {
        return QString::fromStdString(run.result.model);
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    const TimingStats& s = run.result.stats;
    switch (static_cast<Column>(index.column())) {
    case RunColumn:
        return run.number;
    case ModelColumn:
        return QFileInfo(QString::fromStdString(run.result.model)).fileName();
    case MethodColumn:
        return QString::fromStdString(run.result.method);
    case DeviceColumn:
        return QString::fromStdString(run.result.device);
    case IterationsColumn:
        return QStringLiteral("%1 + %2").arg(run.result.warmup).arg(run.result.samplesMs.size());
    case P50Column:
        return ms(s.p50);
    case P90Column:
        return ms(s.p90);
    case P99Column:
        return ms(s.p99);
    case FpsColumn:
        return s.p50 > 0 ? QString::number(1000.0 / s.p50, 'f', 1) : QString();
    case ColumnCount:
        break;
    }
    return {};
}

QVariant RunHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char* const names[] = {"Run",    "Model",  "Method", "Device", "Warm-up + timed",
                                        "p50 ms", "p90 ms", "p99 ms", "fps"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

// ---- OperatorProfileModel

OperatorProfileModel::OperatorProfileModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void OperatorProfileModel::setProfile(const RunProfile& profile) {
    beginResetModel();
    profile_ = profile;
    endResetModel();
}

int OperatorProfileModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(profile_.operators.size());
}

int OperatorProfileModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant OperatorProfileModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    if (role == Qt::TextAlignmentRole && index.column() != NameColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    const OperatorTime& op = profile_.operators[static_cast<size_t>(index.row())];
    if (role == Qt::UserRole) { // for sorting: the number itself
        switch (static_cast<Column>(index.column())) {
        case CallsColumn:
            return qint64(op.calls);
        case TotalColumn:
        case ShareColumn:
            return op.totalMs;
        case SelfColumn:
            return op.selfMs;
        default:
            return QString::fromStdString(op.name);
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (static_cast<Column>(index.column())) {
    case NameColumn:
        return QString::fromStdString(op.name);
    case CallsColumn:
        return qint64(op.calls);
    case TotalColumn:
        return ms(op.totalMs);
    case SelfColumn:
        return ms(op.selfMs);
    case ShareColumn:
        return profile_.operatorMs > 0
                   ? QStringLiteral("%1 %").arg(100.0 * op.selfMs / profile_.operatorMs, 0, 'f', 1)
                   : QString();
    case ColumnCount:
        break;
    }
    return {};
}

QVariant OperatorProfileModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char* const names[] = {"Operator", "Calls", "Total ms", "Self ms", "Self share"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

} // namespace scriptscope
