// Small helpers the inspector's views share for their QStandardItemModel tables.
#pragma once

#include <QHeaderView>
#include <QStandardItemModel>
#include <QStringList>
#include <QTreeView>

#include <string>

namespace scriptscope::inspector {

inline QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// One read-only row; each cell's text is also its tooltip (columns are often cut).
inline QList<QStandardItem*> readOnlyRow(const QStringList& texts) {
    QList<QStandardItem*> items;
    for (const auto& text : texts) {
        auto* item = new QStandardItem(text);
        item->setEditable(false);
        item->setToolTip(text);
        items << item;
    }
    return items;
}

// A flat, sortable table view of a model.
inline QTreeView* flatTable(QStandardItemModel* model, QWidget* parent) {
    auto* view = new QTreeView(parent);
    view->setModel(model);
    view->setRootIsDecorated(false);
    view->setUniformRowHeights(true);
    view->setAlternatingRowColors(true);
    view->setSortingEnabled(true);
    view->header()->setStretchLastSection(true);
    return view;
}

} // namespace scriptscope::inspector
