// File > Operator Libraries: the libraries this build loads before every model, to forget one or
// add another (operator_libraries.h keeps them).
#pragma once

#include <QDialog>

class QListWidget;
class QPushButton;

namespace scriptscope {

class OperatorLibrariesDialog : public QDialog {
    Q_OBJECT

public:
    explicit OperatorLibrariesDialog(QWidget* parent = nullptr);
    // Whether a library was forgotten.
    bool changed() const { return changed_; }
    QListWidget* list() const { return list_; }
    void forgetSelected();

Q_SIGNALS:
    // "Add…": the main window's file dialog chooses one (and reopens the model with it).
    void addRequested();

private:
    void fill();

    QListWidget* list_ = nullptr;
    QPushButton* forget_ = nullptr;
    bool changed_ = false;
};

} // namespace scriptscope
