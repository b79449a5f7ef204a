#include "operator_libraries_dialog.h"

#include "operator_libraries.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace scriptscope {

OperatorLibrariesDialog::OperatorLibrariesDialog(QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Operator Libraries"));
    auto* layout = new QVBoxLayout(this);
    auto* note = new QLabel(
        tr("Loaded into the worker before every model by this ScriptScope, built on LibTorch %1. "
           "A build on another LibTorch keeps a list of its own: a library built for one LibTorch "
           "cannot be loaded by another.")
            .arg(operator_libraries::buildName()),
        this);
    note->setWordWrap(true);
    layout->addWidget(note);
    list_ = new QListWidget(this);
    list_->setObjectName(QStringLiteral("operatorLibraryList"));
    list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    layout->addWidget(list_, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* add = buttons->addButton(tr("&Add…"), QDialogButtonBox::ActionRole);
    forget_ = buttons->addButton(tr("&Forget"), QDialogButtonBox::ActionRole);
    forget_->setObjectName(QStringLiteral("forgetOperatorLibrary"));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(add, &QPushButton::clicked, this, &OperatorLibrariesDialog::addRequested);
    connect(forget_, &QPushButton::clicked, this, &OperatorLibrariesDialog::forgetSelected);
    connect(list_, &QListWidget::itemSelectionChanged, this,
            [this]() { forget_->setEnabled(!list_->selectedItems().isEmpty()); });
    fill();
    resize(640, 320);
}

void OperatorLibrariesDialog::fill() {
    list_->clear();
    for (const QString& path : operator_libraries::remembered()) {
        auto* item = new QListWidgetItem(path, list_);
        if (!QFileInfo(path).isFile()) {
            item->setText(tr("%1 (missing)").arg(path));
            item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
        }
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
    }
    if (list_->count() == 0) {
        auto* item = new QListWidgetItem(tr("No operator library is remembered."), list_);
        item->setFlags(Qt::NoItemFlags);
    }
    forget_->setEnabled(false);
}

void OperatorLibrariesDialog::forgetSelected() {
    for (const QListWidgetItem* item : list_->selectedItems()) {
        operator_libraries::forget(item->data(Qt::UserRole).toString());
        changed_ = true;
    }
    fill();
}

} // namespace scriptscope
