#include "module_tree_model.h"

#include <format.h>

#include <QLocale>
#include <QPainter>

#include <algorithm>
#include <unordered_map>

namespace scriptscope {

QString shortTypeName(const std::string& qualified) {
    const auto dot = qualified.rfind('.');
    return QString::fromStdString(dot == std::string::npos ? qualified : qualified.substr(dot + 1));
}

ModuleTreeModel::ModuleTreeModel(QObject* parent)
    : QAbstractItemModel(parent) {}

void ModuleTreeModel::setModel(const ModelInfo& info) {
    beginResetModel();
    times_.clear();
    profiledMs_ = 0;
    modules_ = info.modules;
    nodes_.assign(modules_.size(), Node{});
    std::unordered_map<std::string, int> byPath;
    for (size_t i = 0; i < modules_.size(); ++i) {
        byPath[modules_[i].path] = static_cast<int>(i);
        nodes_[i].module = static_cast<int>(i);
    }
    for (size_t i = 0; i < modules_.size(); ++i) {
        for (const auto& childPath : modules_[i].children) {
            const auto found = byPath.find(childPath);
            if (found == byPath.end()) {
                continue;
            }
            Node& child = nodes_[static_cast<size_t>(found->second)];
            child.parent = static_cast<int>(i);
            child.row = static_cast<int>(nodes_[i].children.size());
            nodes_[i].children.push_back(found->second);
        }
    }
    endResetModel();
}

void ModuleTreeModel::clear() {
    beginResetModel();
    modules_.clear();
    nodes_.clear();
    endResetModel();
}

const ModuleInfo* ModuleTreeModel::module(const QModelIndex& index) const {
    if (!index.isValid() || index.internalId() >= nodes_.size()) {
        return nullptr;
    }
    return &modules_[index.internalId()];
}

QModelIndex ModuleTreeModel::indexOfPath(const QString& path) const {
    const std::string wanted = path.toStdString();
    for (size_t i = 0; i < modules_.size(); ++i) {
        if (modules_[i].path == wanted) {
            return createIndex(nodes_[i].row, 0, static_cast<quintptr>(i));
        }
    }
    return {};
}

QModelIndex ModuleTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) {
        return {};
    }
    if (!parent.isValid()) {
        // The root module is the only top-level row.
        return row == 0 && !nodes_.empty() ? createIndex(0, column, quintptr(0)) : QModelIndex();
    }
    const Node& node = nodes_[parent.internalId()];
    if (parent.column() != 0 || row >= static_cast<int>(node.children.size())) {
        return {};
    }
    return createIndex(row, column, static_cast<quintptr>(node.children[static_cast<size_t>(row)]));
}

QModelIndex ModuleTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) {
        return {};
    }
    const Node& node = nodes_[child.internalId()];
    if (node.parent < 0) {
        return {};
    }
    return createIndex(nodes_[static_cast<size_t>(node.parent)].row, 0,
                       static_cast<quintptr>(node.parent));
}

int ModuleTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) {
        return nodes_.empty() ? 0 : 1;
    }
    if (parent.column() != 0) {
        return 0;
    }
    return static_cast<int>(nodes_[parent.internalId()].children.size());
}

int ModuleTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant ModuleTreeModel::data(const QModelIndex& index, int role) const {
    const ModuleInfo* m = module(index);
    if (!m) {
        return {};
    }
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return m->path.empty() ? tr("(root)") : QString::fromStdString(m->name);
        case TypeColumn:
            return shortTypeName(m->type);
        case ParametersColumn:
            return QLocale().toString(static_cast<qulonglong>(m->totalParameterCount));
        case BytesColumn:
            return QString::fromStdString(formatBytes(m->totalBytes));
        case TimeColumn: {
            const auto found = times_.find(m->path);
            if (found == times_.end()) {
                return times_.empty() ? QVariant() : QVariant(QStringLiteral("–"));
            }
            return QStringLiteral("%1 ms  %2 %")
                .arg(found->second.totalMs, 0, 'f', 3)
                .arg(100.0 * found->second.totalMs / std::max(profiledMs_, 1e-12), 0, 'f', 1);
        }
        default:
            return {};
        }
    case ShareRole: {
        const auto found = times_.find(m->path);
        if (index.column() != TimeColumn || found == times_.end() || profiledMs_ <= 0) {
            return {};
        }
        return found->second.totalMs / profiledMs_;
    }
    case Qt::ToolTipRole:
        if (index.column() == TimeColumn) {
            const auto found = times_.find(m->path);
            if (found != times_.end()) {
                return tr("%1 ms with submodules, %2 ms in its own code, %3 operator calls")
                    .arg(found->second.totalMs, 0, 'f', 3)
                    .arg(found->second.selfMs, 0, 'f', 3)
                    .arg(found->second.calls);
            }
        }
        return QString::fromStdString(m->type);
    case Qt::TextAlignmentRole:
        return index.column() >= ParametersColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                  : QVariant();
    case PathRole:
        return QString::fromStdString(m->path);
    case TypeRole:
        return QString::fromStdString(m->type);
    default:
        return {};
    }
}

QVariant ModuleTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case NameColumn:
        return tr("Module");
    case TypeColumn:
        return tr("Type");
    case ParametersColumn:
        return tr("Parameters");
    case BytesColumn:
        return tr("Size");
    case TimeColumn:
        return tr("Time (profiled)");
    default:
        return {};
    }
}

void ModuleTreeModel::setProfile(const RunProfile& profile) {
    times_.clear();
    for (const ModuleTime& time : profile.modules) {
        times_[time.path] = time;
    }
    profiledMs_ = profile.operatorMs;
    if (!nodes_.empty()) {
        // Every row's Time cell changed.
        std::vector<QModelIndex> stack{QModelIndex()};
        while (!stack.empty()) {
            const QModelIndex parent = stack.back();
            stack.pop_back();
            const int rows = rowCount(parent);
            if (rows > 0) {
                Q_EMIT dataChanged(index(0, TimeColumn, parent),
                                   index(rows - 1, TimeColumn, parent));
                for (int r = 0; r < rows; ++r) {
                    stack.push_back(index(r, 0, parent));
                }
            }
        }
    }
}

void ShareBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                             const QModelIndex& index) const {
    const QVariant share = index.data(ModuleTreeModel::ShareRole);
    if (share.isValid()) {
        const double fraction = std::clamp(share.toDouble(), 0.0, 1.0);
        QRectF bar = QRectF(option.rect).adjusted(2, 3, -2, -3);
        bar.setWidth(bar.width() * fraction);
        painter->save();
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0xff, 0x8f, 0x00, 110));
        painter->drawRect(bar);
        painter->restore();
    }
    QStyledItemDelegate::paint(painter, option, index);
}

ModuleFilterModel::ModuleFilterModel(QObject* parent)
    : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true);
}

void ModuleFilterModel::setFilterText(const QString& text) {
    text_ = text.trimmed();
    invalidateFilter();
}

bool ModuleFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (text_.isEmpty()) {
        return true;
    }
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    for (const QVariant& field :
         {index.data(Qt::DisplayRole), index.data(ModuleTreeModel::PathRole),
          index.data(ModuleTreeModel::TypeRole),
          sourceModel()->index(sourceRow, ModuleTreeModel::TypeColumn, sourceParent).data()}) {
        if (field.toString().contains(text_, Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

} // namespace scriptscope
