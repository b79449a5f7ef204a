// The module hierarchy of a loaded model as a tree: name, type, parameter count, bytes.
#pragma once

#include <model_info.h>

#include <QAbstractItemModel>

#include <vector>

namespace scriptscope {

class ModuleTreeModel : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column { NameColumn, TypeColumn, ParametersColumn, BytesColumn, ColumnCount };
    enum Role {
        PathRole = Qt::UserRole + 1, // the module's dotted path ("" for the root)
        TypeRole,                    // the full qualified type name
    };

    explicit ModuleTreeModel(QObject* parent = nullptr);

    void setModel(const ModelInfo& info);
    void clear();
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
};

// "__torch__.torch.nn.modules.conv.___torch_mangle_13.Conv2d" -> "Conv2d"
QString shortTypeName(const std::string& qualified);

} // namespace scriptscope
