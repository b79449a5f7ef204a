// The safe preview: what an archive holds, read without torch::jit::load — records, code files as
// text, tensor storages and shapes, extra files, operators — for files a person does not want to
// execute. The reading is done by the worker (sandboxed, with its limits) with the project's own
// bounds-checked zip and pickle readers.
#pragma once

#include <model_info.h>

#include <QDialog>

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QStandardItemModel;

namespace scriptscope {

class CodeView;

class SafePreview : public QDialog {
    Q_OBJECT

public:
    explicit SafePreview(QWidget* parent = nullptr);
    void showProbe(const ProbeResult& probe);
    QString summaryText() const;
    QStringList codeFileNames() const;
    QStandardItemModel* storagesModel() const { return storages_; }

private:
    QLabel* summary_ = nullptr;
    QListWidget* codeFiles_ = nullptr;
    CodeView* code_ = nullptr;
    QStandardItemModel* storages_ = nullptr;
    QPlainTextEdit* tensors_ = nullptr;
    QStandardItemModel* records_ = nullptr;
    QListWidget* extraFiles_ = nullptr;
    QPlainTextEdit* extra_ = nullptr;
    ProbeResult probe_;
};

} // namespace scriptscope
