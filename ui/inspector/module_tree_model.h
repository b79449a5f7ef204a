// The module hierarchy of a loaded model as a tree: name, type, parameter count, bytes.
#pragma once

#include <model_info.h>

#include <QAbstractItemModel>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>

#include <run_types.h>

#include <unordered_map>

#include <vector>

namespace scriptscope {

class ModuleTreeModel : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column { NameColumn, TypeColumn, ParametersColumn, BytesColumn, TimeColumn, ColumnCount };
    enum Role {
        PathRole = Qt::UserRole + 1, // the module's dotted path ("" for the root)
        TypeRole,                    // the full qualified type name
        ShareRole,                   // the module's share of the profiled time, 0..1 (or null)
    };

    explicit ModuleTreeModel(QObject* parent = nullptr);

    void setModel(const ModelInfo& info);
    void clear();
    // Time per module from a profiled run (the Time column); cleared by setModel().
    void setProfile(const RunProfile& profile);
    bool hasProfile() const { return !times_.empty(); }
    const ModuleInfo* module(const QModelIndex& index) const;
    QModelIndex indexOfPath(const QString& path) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Node {
        int module = -1; // index into modules_
        int parent = -1; // index into nodes_, -1 for the root
        int row = 0;     // position among its parent's children
        std::vector<int> children;
    };
    std::vector<ModuleInfo> modules_;
    std::vector<Node> nodes_; // nodes_[i].module == i
    std::unordered_map<std::string, ModuleTime> times_;
    double profiledMs_ = 0;
};

// The module filter: a module matches when the text is part of its name, its dotted path
// ("features.0.0"), its short type or its qualified type ("torch.nn.modules.conv"), ignoring
// case; its ancestors stay to show where it is.
class ModuleFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit ModuleFilterModel(QObject* parent = nullptr);
    void setFilterText(const QString& text);
    const QString& filterText() const { return text_; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString text_;
};

// Draws a cell's ShareRole as a bar behind its text (the module tree's Time column).
class ShareBarDelegate : public QStyledItemDelegate {
    Q_OBJECT

public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
};

// "__torch__.torch.nn.modules.conv.___torch_mangle_13.Conv2d" -> "Conv2d"
QString shortTypeName(const std::string& qualified);

} // namespace scriptscope
