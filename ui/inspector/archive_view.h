// The Archive tab of the Model workspace: what the archive holds, read without running it:
// records, serialization version, the operators its code calls, extra files.
#pragma once

#include <model_info.h>

#include <QSplitter>

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QStandardItemModel;
class QTreeView;

namespace scriptscope {

class ArchiveView : public QSplitter {
    Q_OBJECT

public:
    explicit ArchiveView(const QFont& codeFont, QWidget* parent = nullptr);
    void setProbe(const ProbeResult& probe);

private:
    ProbeResult probe_;
    QLabel* archiveSummary_ = nullptr;
    QTreeView* records_ = nullptr;
    QStandardItemModel* recordsModel_ = nullptr;
    QTreeView* operators_ = nullptr;
    QStandardItemModel* operatorsModel_ = nullptr;
    QListWidget* extraFiles_ = nullptr;
    QPlainTextEdit* extraContent_ = nullptr;
};

} // namespace scriptscope
